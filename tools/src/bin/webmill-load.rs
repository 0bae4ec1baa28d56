//! `webmill-load`: a load generator for `webmill serve`, to measure what
//! the server sustains (issue 24).
//!
//! Opens `--clients` keep-alive HTTP/1.1 connections to a server on the
//! loopback interface, each sending GET requests for the given targets in
//! turn, back to back, for `--seconds` (or `--requests` in all); a
//! connection the server closes is opened again. Prints one JSON object:
//! clients, seconds, requests, errors (a status other than 200, or a
//! connection failure), requests per second, and the latency percentiles
//! p50, p90, p99 and max in milliseconds (from the request's first byte
//! written to its response's last byte read).
//!
//! Refuses any address but a loopback one: it is for measuring a server on
//! this machine, not for loading others.
//!
//! ```text
//! webmill serve --port 8080 JOB &
//! webmill-load --addr 127.0.0.1:8080 --clients 16 --seconds 20 '/search?q=vec' '/search?q=string+iter' /doc/3
//! ```

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

/// Load a local `webmill serve` and report throughput and latency.
#[derive(Parser, Debug)]
#[command(name = "webmill-load", version, max_term_width = 100)]
struct Args {
    /// The server's address (loopback only)
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Concurrent connections, each with one request in flight
    #[arg(long, default_value_t = 16)]
    clients: usize,
    /// Stop after this many seconds
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Stop after this many requests in all (0: no limit)
    #[arg(long, default_value_t = 0)]
    requests: u64,
    /// Request targets (path and query), used in turn
    #[arg(required = true)]
    targets: Vec<String>,
}

/// One client's measurements: latencies in microseconds, errors.
#[derive(Default)]
struct Tally {
    latencies: Vec<u64>,
    errors: u64,
}

/// A keep-alive connection that reads responses by their Content-Length.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Conn {
            stream,
            buf: Vec::with_capacity(1 << 16),
        })
    }

    /// Sends one request and reads its response; returns its status and
    /// whether the server keeps the connection.
    fn get(&mut self, target: &str) -> std::io::Result<(u16, bool)> {
        let req = format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        self.stream.write_all(req.as_bytes())?;
        self.buf.clear();
        let mut chunk = [0u8; 1 << 16];
        let head_end = loop {
            if let Some(p) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&self.buf[..head_end]).to_ascii_lowercase();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| std::io::Error::other("a response without Content-Length"))?;
        let keep = !head.contains("connection: close");
        while self.buf.len() < head_end + length {
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
        Ok((status, keep))
    }
}

fn client(args: &Args, id: usize, end: Instant, budget: &std::sync::atomic::AtomicU64) -> Tally {
    use std::sync::atomic::Ordering;
    let mut t = Tally::default();
    let mut conn: Option<Conn> = None;
    let mut i = id;
    while Instant::now() < end {
        if args.requests > 0 && budget.fetch_sub(1, Ordering::Relaxed) == 0 {
            budget.store(0, Ordering::Relaxed);
            break;
        }
        let target = &args.targets[i % args.targets.len()];
        i += 1;
        let start = Instant::now();
        let c = match conn.take().map_or_else(|| Conn::open(args.addr), Ok) {
            Ok(c) => c,
            Err(_) => {
                t.errors += 1;
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let mut c = c;
        match c.get(target) {
            Ok((status, keep)) => {
                t.latencies.push(start.elapsed().as_micros() as u64);
                if status != 200 {
                    t.errors += 1;
                }
                if keep {
                    conn = Some(c);
                }
            }
            Err(_) => t.errors += 1,
        }
    }
    t
}

fn main() -> ExitCode {
    let args = Args::parse();
    if !args.addr.ip().is_loopback() {
        eprintln!(
            "webmill-load: {} is not a loopback address; it only loads a server on this machine",
            args.addr
        );
        return ExitCode::from(2);
    }
    let Ok(span) = Duration::try_from_secs_f64(args.seconds) else {
        eprintln!("webmill-load: --seconds must be a positive number");
        return ExitCode::from(2);
    };
    let budget = std::sync::atomic::AtomicU64::new(args.requests);
    let start = Instant::now();
    let end = start + span;
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..args.clients.max(1))
            .map(|id| {
                let (args, budget) = (&args, &budget);
                s.spawn(move || client(args, id, end, budget))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let mut lat: Vec<u64> = tallies
        .iter()
        .flat_map(|t| t.latencies.iter().copied())
        .collect();
    lat.sort_unstable();
    let errors: u64 = tallies.iter().map(|t| t.errors).sum();
    let pct = |p: f64| {
        if lat.is_empty() {
            0.0
        } else {
            let i = ((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1;
            lat[i] as f64 / 1000.0
        }
    };
    let report = serde_json::json!({
        "clients": args.clients,
        "seconds": (seconds * 100.0).round() / 100.0,
        "requests": lat.len(),
        "errors": errors,
        "per_second": ((lat.len() as f64 / seconds) * 10.0).round() / 10.0,
        "p50_ms": pct(0.50),
        "p90_ms": pct(0.90),
        "p99_ms": pct(0.99),
        "max_ms": lat.last().map_or(0.0, |&m| m as f64 / 1000.0),
    });
    println!("{report}");
    ExitCode::SUCCESS
}

//! `webmill serve`: a search page for a job in the browser.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::Global;

/// Serve a job as a local web page: search it, open a document's page (its
/// links in and out with their anchor text, PageRank, near-duplicates and
/// cached text), and see its figures and plots.
///
/// Pages: / (the query box), /search?q=WORDS&page=N, /doc/DOCID,
/// /doc/DOCID/raw, /stats. The job is read without its lock, so a job
/// another command is writing, or a read-only copy, can be served: each
/// request reads one generation of the job, whole, and when a writer has
/// published a new one and finished, the server switches to it between
/// requests. Listens on 127.0.0.1 only unless --bind says otherwise; stop
/// it with Ctrl-C.
///
/// Limits: a client has --header-timeout to send a request's headers; a
/// connection without a request for --idle-timeout is closed; at most
/// --max-connections are served at once (further ones wait to be
/// accepted); a query's matching stops after --query-time and its page
/// says the answer is partial.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (searching needs `webmill index`; documents and stats
    /// are served without it)
    job: PathBuf,
    /// TCP port (0: any free port, printed at start)
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address to listen on; 0.0.0.0 serves every network the machine is on
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    bind: IpAddr,
    /// Connections served at once; more wait to be accepted
    #[arg(long, default_value_t = 256, value_name = "N")]
    max_connections: usize,
    /// Seconds a query may spend matching; a slower one answers with what
    /// it found by then, marked as partial
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
    query_time: f64,
    /// Seconds a client has to send a request's headers
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    header_timeout: f64,
    /// Seconds a connection may stay open without a request
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    idle_timeout: f64,
}

/// A positive number of seconds given to `flag`.
fn seconds(flag: &str, s: f64) -> webmill::Result<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            webmill::Error::usage(format!(
                "{flag} must be a positive number of seconds, not {s}"
            ))
        })
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let addr = SocketAddr::new(args.bind, args.port);
    let job = args.job.clone();
    let limits = crate::serve::Limits {
        threads: g.threads_opt(),
        max_connections: args.max_connections,
        query_time: seconds("--query-time", args.query_time)?,
        header_timeout: seconds("--header-timeout", args.header_timeout)?,
        idle_timeout: seconds("--idle-timeout", args.idle_timeout)?,
        verbose: !g.quiet(),
        ..crate::serve::Limits::default()
    };
    crate::serve::serve(&args.job, addr, limits, |local| {
        // The first line of stdout is the address, for people and scripts.
        println!("serving {} at http://{local}/", job.display());
        let _ = std::io::stdout().flush();
        if !g.quiet() {
            eprintln!("Ctrl-C stops the server.");
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

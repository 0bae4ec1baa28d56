//! `webmill-hostile`: writes the hostile inputs of issue 14, so that `webmill
//! ingest` can be measured (and tested) on what the real web sends.
//!
//! # What it writes (into `--out DIR`)
//!
//! | file | what it holds |
//! |---|---|
//! | `links.warc` | one HTML page with `--links` links (`<a href=/pN>aN</a>`, 20–30 bytes each) |
//! | `bomb.warc` | one response whose body is `Content-Encoding: gzip` of `--bomb` bytes of spaces (a gzip bomb: 2 GiB inflate from ~2 MB) |
//! | `big.warc` | one response of `--big` bytes of HTML (words and links) |
//! | `mixed.warc` | the bomb, the big record, two records with wrong `Content-Length`s (one too short, one far too long), a record without one, and `--pages` normal pages, interleaved |
//! | `longurl.warc` | pages whose target URIs are 10 KB and 100 KB long, one page linking to a 10 KB and a 100 KB URL, and a normal page |
//! | `names/` | `a\xff.html` and `a\xfe.html` (names that differ only in invalid UTF-8 bytes), `ok.html`, a symbolic link to `ok.html`, a symbolic link to a directory, a dangling symbolic link, and a FIFO `pipe.html` |
//!
//! Every normal page is `http://normal.example/pN.html`, with a title `Page N`
//! and a link to the next one, so a test can count them. The files are plain
//! WARC 1.0 (no digests); the output depends only on the flags.
//!
//! ```text
//! webmill-hostile --out /tmp/hostile            # the issue's sizes (2.4 GB of disk)
//! webmill-hostile --out /tmp/h --links 100000 --bomb 256M --big 32M   # CI sizes
//! webmill ingest --mem 64M --out /tmp/job /tmp/hostile/mixed.warc
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use flate2::write::GzEncoder;
use flate2::Compression;

/// Write hostile WARC files and an input directory with odd entries (issue 14).
#[derive(Parser, Debug)]
#[command(name = "webmill-hostile", version, max_term_width = 100)]
struct Args {
    /// Output directory (created)
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Links on the page of links.warc
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    links: u64,
    /// Bytes of spaces the gzip bomb inflates to (K, M, G suffixes)
    #[arg(long, value_name = "BYTES", default_value = "2G", value_parser = parse_size)]
    bomb: u64,
    /// Bytes of the big record's HTML body (K, M, G suffixes)
    #[arg(long, value_name = "BYTES", default_value = "300M", value_parser = parse_size)]
    big: u64,
    /// Normal pages in mixed.warc
    #[arg(long, value_name = "N", default_value_t = 50)]
    pages: u64,
    /// Write only these files (links, bomb, big, mixed, longurl, names); all by default
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    webmill::resources::parse_bytes(s).map_err(|e| e.to_string())
}

/// Writes one WARC `response` record whose HTTP message is `head` (status
/// line and header fields, without the empty line) followed by the body that
/// `body` writes (`body_len` bytes). `content_length` overrides the true
/// length (to write a wrong one); `None` writes none at all.
fn response(
    out: &mut dyn Write,
    uri: &str,
    head: &str,
    body_len: u64,
    content_length: Option<Option<u64>>,
    body: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let http_head = format!("{head}\r\n\r\n");
    let true_len = http_head.len() as u64 + body_len;
    write!(
        out,
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-02-29T12:00:00Z\r\nContent-Type: application/http; msgtype=response\r\n"
    )?;
    match content_length {
        None => write!(out, "Content-Length: {true_len}\r\n")?,
        Some(Some(n)) => write!(out, "Content-Length: {n}\r\n")?,
        Some(None) => {}
    }
    out.write_all(b"\r\n")?;
    out.write_all(http_head.as_bytes())?;
    body(out)?;
    out.write_all(b"\r\n\r\n")
}

/// An HTML page held in memory, as a response record.
fn page(out: &mut dyn Write, uri: &str, html: &[u8]) -> io::Result<()> {
    response(
        out,
        uri,
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8",
        html.len() as u64,
        None,
        &mut |o| o.write_all(html),
    )
}

fn normal_page(out: &mut dyn Write, n: u64) -> io::Result<()> {
    let html = format!(
        "<html><head><title>Page {n}</title></head><body><h1>Normal page {n}</h1><p>Some words about page number {n}.</p><a href=\"/p{}.html\">next</a></body></html>",
        n + 1
    );
    page(
        out,
        &format!("http://normal.example/p{n}.html"),
        html.as_bytes(),
    )
}

/// The page with `n` links.
fn links_page(out: &mut dyn Write, n: u64) -> io::Result<()> {
    let mut html = Vec::with_capacity(n as usize * 24 + 100);
    html.extend_from_slice(b"<html><head><title>Many links</title></head><body>");
    for i in 0..n {
        write!(html, "<a href=/p{i}>a{i}</a>")?;
    }
    html.extend_from_slice(b"</body></html>");
    page(out, "http://links.example/", &html)
}

/// `n` bytes of spaces, gzip-compressed.
fn bomb_body(n: u64) -> io::Result<Vec<u8>> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::best());
    gz.write_all(b"<html><head><title>Bomb</title></head><body>")?;
    let spaces = vec![b' '; 1 << 20];
    let mut left = n;
    while left > 0 {
        let k = left.min(spaces.len() as u64) as usize;
        gz.write_all(&spaces[..k])?;
        left -= k as u64;
    }
    gz.finish()
}

fn bomb(out: &mut dyn Write, body: &[u8]) -> io::Result<()> {
    response(
        out,
        "http://bomb.example/",
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip",
        body.len() as u64,
        None,
        &mut |o| o.write_all(body),
    )
}

/// A page of `n` bytes of words and links, streamed.
fn big(out: &mut dyn Write, n: u64) -> io::Result<()> {
    let unit = b"<p>lorem ipsum dolor sit amet <a href=/big/x>consectetur</a> adipiscing</p>\n";
    response(
        out,
        "http://big.example/",
        "HTTP/1.1 200 OK\r\nContent-Type: text/html",
        n,
        None,
        &mut |o| {
            let mut left = n;
            while left > 0 {
                let k = left.min(unit.len() as u64) as usize;
                o.write_all(&unit[..k])?;
                left -= k as u64;
            }
            Ok(())
        },
    )
}

fn mixed(out: &mut dyn Write, args: &Args, bomb_gz: &[u8]) -> io::Result<()> {
    let mut n = 0u64;
    let mut normal = |out: &mut dyn Write, k: u64| -> io::Result<()> {
        for _ in 0..k {
            normal_page(out, n)?;
            n += 1;
        }
        Ok(())
    };
    let tenth = args.pages / 10;
    normal(out, tenth)?;
    bomb(out, bomb_gz)?;
    normal(out, tenth)?;
    big(out, args.big)?;
    normal(out, tenth)?;
    // Records whose WARC Content-Length is wrong (`None`: missing), each
    // around the same small page.
    let html = b"<html><title>Short</title><body>too short a length</body></html>";
    let bad_length = |out: &mut dyn Write, name: &str, length: Option<u64>| {
        response(
            out,
            &format!("http://bad.example/{name}"),
            "HTTP/1.1 200 OK\r\nContent-Type: text/html",
            html.len() as u64,
            Some(length),
            &mut |o| o.write_all(html),
        )
    };
    // Too short: the block ends inside the HTML, the rest is junk.
    bad_length(out, "short", Some(40))?;
    normal(out, tenth)?;
    bad_length(out, "none", None)?;
    normal(out, tenth)?;
    // 2^64 - 1.
    bad_length(out, "huge", Some(u64::MAX))?;
    let rest = args.pages - 5 * tenth;
    // Far beyond the file's end, before the last pages: the reader must find
    // them inside what it took for the block.
    bad_length(out, "long", Some(1 << 40))?;
    normal(out, rest)
}

fn longurl(out: &mut dyn Write) -> io::Result<()> {
    for len in [10_000usize, 100_000] {
        let uri = format!("http://long.example/{}", "x".repeat(len));
        page(
            out,
            &uri,
            format!("<title>Long URL of {len} bytes</title>a page").as_bytes(),
        )?;
    }
    let html = format!(
        "<title>Links to long URLs</title><a href=/{}>ten</a><a href=/{}>hundred</a>",
        "y".repeat(10_000),
        "z".repeat(100_000)
    );
    page(out, "http://long.example/links", html.as_bytes())?;
    normal_page(out, 0)
}

#[cfg(unix)]
fn names(dir: &Path) -> anyhow::Result<()> {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    std::fs::create_dir_all(dir.join("sub"))?;
    let html = |t: &str| format!("<title>{t}</title><p>{t}</p>");
    std::fs::write(dir.join(OsStr::from_bytes(b"a\xff.html")), html("ff"))?;
    std::fs::write(dir.join(OsStr::from_bytes(b"a\xfe.html")), html("fe"))?;
    std::fs::write(dir.join("ok.html"), html("ok"))?;
    std::fs::write(dir.join("sub/inner.html"), html("inner"))?;
    let link = |target: &str, name: &str| -> anyhow::Result<()> {
        let p = dir.join(name);
        let _ = std::fs::remove_file(&p);
        std::os::unix::fs::symlink(target, &p).with_context(|| p.display().to_string())
    };
    link("ok.html", "link-to-ok.html")?;
    link("sub", "link-to-dir")?;
    link("missing.html", "dangling.html")?;
    let fifo = dir.join("pipe.html");
    let _ = std::fs::remove_file(&fifo);
    let status = std::process::Command::new("mkfifo").arg(&fifo).status()?;
    anyhow::ensure!(status.success(), "mkfifo {} failed", fifo.display());
    Ok(())
}

#[cfg(not(unix))]
fn names(_dir: &Path) -> anyhow::Result<()> {
    anyhow::bail!("names/ needs a Unix file system")
}

fn write_file(path: &Path, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> anyhow::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path)?);
    f(&mut w).with_context(|| path.display().to_string())?;
    w.flush()?;
    Ok(())
}

fn run(args: &Args) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.out)?;
    let want = |name: &str| args.only.is_empty() || args.only.iter().any(|o| o == name);
    let bomb_gz = if want("bomb") || want("mixed") {
        bomb_body(args.bomb)?
    } else {
        Vec::new()
    };
    if want("links") {
        write_file(&args.out.join("links.warc"), |o| links_page(o, args.links))?;
    }
    if want("bomb") {
        write_file(&args.out.join("bomb.warc"), |o| bomb(o, &bomb_gz))?;
    }
    if want("big") {
        write_file(&args.out.join("big.warc"), |o| big(o, args.big))?;
    }
    if want("mixed") {
        write_file(&args.out.join("mixed.warc"), |o| mixed(o, args, &bomb_gz))?;
    }
    if want("longurl") {
        write_file(&args.out.join("longurl.warc"), longurl)?;
    }
    if want("names") {
        names(&args.out.join("names"))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("webmill-hostile: {e:#}");
            ExitCode::FAILURE
        }
    }
}

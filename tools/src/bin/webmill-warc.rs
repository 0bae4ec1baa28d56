//! `webmill-warc`: a WARC 1.0 file made from a directory of files served under
//! a base URL, so that `webmill ingest` can be measured (and tested) on the same
//! pages as a directory input and as a crawl.
//!
//! # What it writes
//!
//! First a `warcinfo` record (software, format, base URL). Then, for every
//! file under the directory, in byte order of the relative paths (symbolic
//! links to files are followed, to directories not, as `webmill ingest` lists
//! directories), one `response` record and no `request` record:
//!
//! ```text
//! WARC/1.0
//! WARC-Type: response
//! WARC-Record-ID: <urn:uuid:…>          name-based (version 5) UUID of the type, URI and date
//! WARC-Warcinfo-ID: <urn:uuid:…>        the warcinfo record's ID
//! WARC-Date: 2024-02-29T12:00:00Z        the file's mtime (default) or --date
//! WARC-Target-URI: BASE + relative path  percent-encoded outside RFC 3986's pchar set
//! Content-Type: application/http; msgtype=response
//! WARC-Payload-Digest: sha1:BASE32       of the file's bytes   (unless --no-digests)
//! WARC-Block-Digest: sha1:BASE32         of the HTTP message   (unless --no-digests)
//! Content-Length: N
//!
//! HTTP/1.1 200 OK
//! Content-Type: text/html                by extension (application/octet-stream if unknown)
//! Content-Length: M
//! Last-Modified: Thu, 29 Feb 2024 12:00:00 GMT   (only when dates come from mtimes)
//!
//! <the file's M bytes>
//! ```
//!
//! The HTTP header carries no charset: as for a directory input, the page's
//! own `<meta charset>` (or UTF-8) decides.
//!
//! # WET (`--wet`)
//!
//! With `--wet`, only the HTML files are written, each as a `conversion`
//! record in Common Crawl's WET layout (after the same `warcinfo` record):
//!
//! ```text
//! WARC/1.0
//! WARC-Type: conversion
//! WARC-Target-URI: BASE + relative path
//! WARC-Date: as above
//! WARC-Record-ID: <urn:uuid:…>                      of ("conversion", URI, date)
//! WARC-Refers-To: <urn:uuid:…>                      the response record's ID in the WARC of the same files
//! WARC-Block-Digest: sha1:BASE32                    of the text (unless --no-digests)
//! WARC-Identified-Content-Language: LANG            the page's <html lang>, when it has one
//! Content-Type: text/plain
//! Content-Length: N
//!
//! <the page's visible text, UTF-8: the title, then a line per block element>
//! ```
//!
//! The text converter is this tool's own (`visible_text`): Common Crawl's
//! extractor differs in details (and writes ISO 639-3 language codes from
//! a language detector); the record layout is theirs. See `formats/wet.md`.
//!
//! # WAT (`--wat`)
//!
//! With `--wat`, every file is written as a `metadata` record in Common
//! Crawl's WAT layout: JSON describing the `response` record the same flags
//! write without `--wat` (after a `metadata` record describing the
//! `warcinfo` one):
//!
//! ```text
//! WARC/1.0
//! WARC-Type: metadata
//! WARC-Target-URI: BASE + relative path
//! WARC-Date: as above
//! WARC-Record-ID: <urn:uuid:…>                      of ("metadata", URI, date)
//! WARC-Refers-To: <urn:uuid:…>                      the response record's ID
//! WARC-Block-Digest: sha1:BASE32                    of the JSON (unless --no-digests)
//! Content-Type: application/json
//! Content-Length: N
//!
//! {"Container": {…}, "Envelope": {"Format": "WARC", "WARC-Header-Metadata": {…},
//!   "Payload-Metadata": {"Actual-Content-Type": …, "HTTP-Response-Metadata": {
//!     "Response-Message": {…}, "Headers": {…}, "Entity-Length": …,
//!     "HTML-Metadata": {"Head": {"Title", "Base", "Metas"}, "Links": […]}}}}}
//! ```
//!
//! `HTML-Metadata` (HTML files only) is what webmill's own HTML extractor
//! finds in the page: its title, `<base href>`, `<meta http-equiv=refresh>`
//! (in `Metas`), and its links as `A@/href` (with `text`), `AREA@/href`
//! (with `alt`), `FRAME@/src` and `IFRAME@/src`. Common Crawl's extractor
//! also lists images, scripts, style sheets and forms; webmill reads none of
//! those as links. See `formats/wat.md`.
//!
//! # Compression
//!
//! `--gzip record` (the default for a name ending in `.gz`) writes one gzip
//! member per record, as Common Crawl and Heritrix ship them, so that a reader
//! can seek to any record; `--gzip file` one member for the whole file (what
//! `gzip file.warc` gives); `--gzip none` a plain WARC (the default otherwise).
//! Records are built and compressed in parallel in batches and written in
//! order.
//!
//! # Determinism
//!
//! The bytes depend only on the files, their mtimes (unless `--date` fixes the
//! date), the flags and the base URL: record IDs are UUIDs derived from the
//! record's type, target URI and date (RFC 4122 version 5, URL namespace), gzip
//! headers carry no time or file name, and the thread count does not matter.
//! The output is written under a temporary name and renamed when complete.
//!
//! ```text
//! webmill-warc --base http://rust-doc.example/ -o rust-doc.warc.gz \
//!     /usr/share/doc/rust-doc/html
//! warcio check rust-doc.warc.gz          # digests verified by an independent reader
//! webmill ingest --out job rust-doc.warc.gz
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Instant, UNIX_EPOCH};

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use flate2::write::GzEncoder;
use flate2::Compression;
use rayon::prelude::*;

/// Write a WARC 1.0 file of `response` records from a directory of files.
///
/// Every file under DIR (sorted by relative path) becomes a `response` record
/// with an HTTP/1.1 200 header (Content-Type by extension, Content-Length),
/// WARC-Target-URI = --base + its relative path, WARC-Date from its mtime (or
/// --date), a deterministic urn:uuid record ID and SHA-1 digests. The output
/// depends only on the inputs and flags.
#[derive(Parser, Debug)]
#[command(name = "webmill-warc", version, max_term_width = 100)]
struct Args {
    /// Directory whose files are written as responses
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Base URL the directory is served at (http or https); a file's URL is
    /// this plus its relative path
    #[arg(long, value_name = "URL")]
    base: String,
    /// Output WARC file
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Compression: one gzip member per record, one for the whole file, or
    /// none [default: record if FILE ends in .gz, else none]
    #[arg(long, value_enum, value_name = "MODE")]
    gzip: Option<GzipMode>,
    /// gzip compression level, 1 (fast) to 9 (small)
    #[arg(long, default_value_t = 6, value_name = "1-9",
          value_parser = clap::value_parser!(u32).range(1..=9))]
    level: u32,
    /// WARC-Date of every record, as YYYY-MM-DDThh:mm:ssZ [default: each
    /// file's modification time, also sent as Last-Modified]
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    date: Option<String>,
    /// Only files with an HTML extension (.html, .htm, .xhtml, .shtml), not the
    /// style sheets, scripts and images beside them
    #[arg(long)]
    html_only: bool,
    /// Leave out WARC-Payload-Digest and WARC-Block-Digest
    #[arg(long)]
    no_digests: bool,
    /// Write a WET file instead: a `conversion` record (Common Crawl's
    /// layout) with the visible text of each HTML file, no responses
    #[arg(long, conflicts_with = "wat")]
    wet: bool,
    /// Write a WAT file instead: a `metadata` record (Common Crawl's
    /// layout) with the JSON of each file's response, its title and links
    /// for HTML files
    #[arg(long)]
    wat: bool,
    /// Worker threads [default: all cores]
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// No summary on standard error
    #[arg(short, long)]
    quiet: bool,
}

/// How the WARC is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum GzipMode {
    /// One gzip member per record (Common Crawl style)
    Record,
    /// One gzip member for the whole file
    File,
    /// Plain WARC
    None,
}

/// Files read, built and compressed together before being written in order.
const BATCH_FILES: usize = 64;
/// File name extensions sent as HTML (as `webmill ingest` reads them).
const HTML_EXTENSIONS: [&str; 4] = ["html", "htm", "xhtml", "shtml"];

// ---------------------------------------------------------------------------
// SHA-1 (FIPS 180-4), for the digests and the name-based UUIDs.

/// A streaming SHA-1.
struct Sha1 {
    h: [u32; 5],
    block: [u8; 64],
    filled: usize,
    total: u64,
}

impl Sha1 {
    fn new() -> Sha1 {
        Sha1 {
            h: [
                0x6745_2301,
                0xefcd_ab89,
                0x98ba_dcfe,
                0x1032_5476,
                0xc3d2_e1f0,
            ],
            block: [0; 64],
            filled: 0,
            total: 0,
        }
    }

    fn update(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        while !data.is_empty() {
            let take = (64 - self.filled).min(data.len());
            self.block[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled == 64 {
                let block = self.block;
                self.compress(&block);
                self.filled = 0;
            }
        }
    }

    fn compress(&mut self, block: &[u8; 64]) {
        let mut w = [0u32; 80];
        for (t, c) in block.chunks_exact(4).enumerate() {
            w[t] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        for t in 16..80 {
            w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = self.h;
        for (t, wt) in w.iter().enumerate() {
            let (f, k) = match t / 20 {
                0 => ((b & c) | (!b & d), 0x5a82_7999),
                1 => (b ^ c ^ d, 0x6ed9_eba1),
                2 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
                _ => (b ^ c ^ d, 0xca62_c1d6),
            };
            let tmp = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wt);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = tmp;
        }
        for (h, v) in self.h.iter_mut().zip([a, b, c, d, e]) {
            *h = h.wrapping_add(v);
        }
    }

    fn finish(mut self) -> [u8; 20] {
        let bits = self.total.wrapping_mul(8);
        self.update(&[0x80]);
        while self.filled != 56 {
            self.update(&[0]);
        }
        self.update(&bits.to_be_bytes());
        let mut out = [0u8; 20];
        for (o, h) in out.chunks_exact_mut(4).zip(self.h) {
            o.copy_from_slice(&h.to_be_bytes());
        }
        out
    }
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut s = Sha1::new();
    for p in parts {
        s.update(p);
    }
    s.finish()
}

/// RFC 4648 base32 (upper case, no padding: 20 bytes are exactly 32 digits),
/// as WARC digests are written.
fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    let (mut acc, mut bits) = (0u64, 0u32);
    for &b in bytes {
        acc = (acc << 8) | b as u64;
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((acc >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((acc << (5 - bits)) & 31) as usize] as char);
    }
    out
}

fn digest(parts: &[&[u8]]) -> String {
    format!("sha1:{}", base32(&sha1(parts)))
}

/// A name-based UUID (RFC 4122 version 5: SHA-1 in the URL namespace) as a
/// WARC record ID.
fn record_id(name: &str) -> String {
    const URL_NAMESPACE: [u8; 16] = [
        0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30,
        0xc8,
    ];
    let h = sha1(&[&URL_NAMESPACE, name.as_bytes()]);
    let mut u = [0u8; 16];
    u.copy_from_slice(&h[..16]);
    u[6] = (u[6] & 0x0f) | 0x50;
    u[8] = (u[8] & 0x3f) | 0x80;
    let hex: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "<urn:uuid:{}-{}-{}-{}-{}>",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

// ---------------------------------------------------------------------------
// Dates

/// (year, month, day) of a count of days since 1970-01-01 (proleptic
/// Gregorian; H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A Unix time as a WARC date (`2024-02-29T12:00:00Z`) and an HTTP date
/// (`Thu, 29 Feb 2024 12:00:00 GMT`).
fn dates(unix: i64) -> (String, String) {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (secs / 3600, secs / 60 % 60, secs % 60);
    (
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z"),
        format!(
            "{}, {d:02} {} {y:04} {hh:02}:{mm:02}:{ss:02} GMT",
            DAYS[days.rem_euclid(7) as usize],
            MONTHS[(m - 1) as usize]
        ),
    )
}

fn parse_date(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
    let ok = b.len() == 20
        && digits.iter().all(|&i| b[i].is_ascii_digit())
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z';
    if ok {
        Ok(s.to_string())
    } else {
        Err(format!("{s}: expected a UTC date as YYYY-MM-DDThh:mm:ssZ"))
    }
}

// ---------------------------------------------------------------------------
// WET: conversion records (--wet)

/// Elements whose content is not text a reader sees.
const HIDDEN: [&str; 5] = ["script", "style", "noscript", "template", "head"];
/// Elements that end a line of text.
const BLOCKS: [&str; 30] = [
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "td",
    "th",
    "table",
    "pre",
    "blockquote",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "dd",
    "dt",
    "dl",
    "hr",
    "title",
    "body",
    "main",
];

/// The visible text of an HTML page, as a WET record holds it: the title
/// first, then the text of the body, a line per block element (paragraphs,
/// list items, headings, table cells…), whitespace collapsed within a line,
/// empty lines dropped; the content of `script`, `style`, `noscript` and
/// `template` left out; character references decoded (the named ones of
/// HTML's basic set and every numeric one). The bytes are read as UTF-8
/// (invalid sequences replaced).
fn visible_text(html: &[u8]) -> (String, Option<String>) {
    let html = String::from_utf8_lossy(html);
    let s = html.as_bytes();
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut hidden: Option<String> = None;
    let mut title: Option<String> = None;
    let mut in_title = false;
    let mut lang = None;
    let mut i = 0;
    let mut text_start = 0;
    let flush_text =
        |from: usize, to: usize, line: &mut String, title: &mut Option<String>, in_title: bool| {
            let decoded = decode_refs(&html[from..to]);
            if in_title {
                title.get_or_insert_with(String::new).push_str(&decoded);
            } else {
                line.push_str(&decoded);
            }
        };
    while i < s.len() {
        if s[i] != b'<' {
            i += 1;
            continue;
        }
        // A tag, a comment or a declaration.
        if hidden.is_none() {
            flush_text(text_start, i, &mut line, &mut title, in_title);
        }
        let end = if html[i..].starts_with("<!--") {
            html[i + 4..].find("-->").map_or(s.len(), |e| i + 4 + e + 3)
        } else {
            html[i..].find('>').map_or(s.len(), |e| i + e + 1)
        };
        let tag = &html[i + 1..end.saturating_sub(1).max(i + 1)];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        match &hidden {
            Some(h) if closing && *h == name => hidden = None,
            Some(_) => {}
            None => {
                if name == "title" {
                    in_title = !closing;
                } else if HIDDEN.contains(&name.as_str()) && !closing && name != "head" {
                    hidden = Some(name.clone());
                }
                if name == "html" && !closing && lang.is_none() {
                    lang = attribute(tag, "lang");
                }
                if BLOCKS.contains(&name.as_str()) {
                    push_line(&mut lines, &mut line);
                }
            }
        }
        i = end;
        text_start = end;
    }
    if hidden.is_none() {
        flush_text(text_start, s.len(), &mut line, &mut title, in_title);
    }
    push_line(&mut lines, &mut line);
    let mut text = String::new();
    if let Some(t) = title {
        let t = collapse(&t);
        if !t.is_empty() {
            text.push_str(&t);
            text.push('\n');
        }
    }
    for l in lines {
        text.push_str(&l);
        text.push('\n');
    }
    (text, lang)
}

/// Appends `line`, whitespace collapsed, to `lines` unless it is empty.
fn push_line(lines: &mut Vec<String>, line: &mut String) {
    let l = collapse(line);
    if !l.is_empty() {
        lines.push(l);
    }
    line.clear();
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The value of attribute `name` in a start tag's text, if present.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let at = lower.find(&format!(" {name}="))? + name.len() + 2;
    let rest = &tag[at..];
    let v = match rest.chars().next()? {
        q @ ('"' | '\'') => rest[1..].split(q).next()?,
        _ => rest.split(|c: char| c.is_whitespace() || c == '>').next()?,
    };
    Some(v.trim().to_string()).filter(|v| !v.is_empty())
}

/// Decodes the character references of `s`: numeric ones and the basic
/// named set; anything else stays as written.
fn decode_refs(s: &str) -> String {
    const NAMED: [(&str, char); 8] = [
        ("amp", '&'),
        ("lt", '<'),
        ("gt", '>'),
        ("quot", '"'),
        ("apos", '\''),
        ("nbsp", ' '),
        ("copy", '©'),
        ("mdash", '—'),
    ];
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(a) = rest.find('&') {
        out.push_str(&rest[..a]);
        rest = &rest[a..];
        let end = rest[1..].find(';').map(|e| e + 1).filter(|&e| e <= 12);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = if let Some(num) = name.strip_prefix('#') {
                let n = match num.strip_prefix(['x', 'X']) {
                    Some(h) => u32::from_str_radix(h, 16).ok(),
                    None => num.parse().ok(),
                };
                n.and_then(char::from_u32)
            } else {
                NAMED.iter().find(|(n, _)| *n == name).map(|&(_, c)| c)
            };
            c.map(|c| (c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `conversion` record of one HTML file (Common Crawl's WET layout, see
/// the module docs), compressed as a member of its own in `record` mode.
/// Returns (bytes to write, text bytes).
fn conversion(plan: &Plan, rel: &Path) -> anyhow::Result<(Vec<u8>, u64)> {
    let path = plan.dir.join(rel);
    let body = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let date = record_date(plan, &path)?.0;
    let uri = target_uri(plan.base, rel);
    let (text, lang) = visible_text(&body);
    let refers_to = record_id(&format!("response\n{uri}\n{date}"));
    let id = record_id(&format!("conversion\n{uri}\n{date}"));
    let r = derived_record(
        plan,
        "conversion",
        &[
            ("WARC-Target-URI", Some(&uri)),
            ("WARC-Date", Some(&date)),
            ("WARC-Record-ID", Some(&id)),
            ("WARC-Refers-To", Some(&refers_to)),
        ],
        &[("WARC-Identified-Content-Language", lang.as_deref())],
        "text/plain",
        text.as_bytes(),
    );
    Ok((compress_member(r, plan)?, text.len() as u64))
}

/// A record derived from another (WET `conversion`, WAT `metadata`):
/// `WARC/1.0`, its type, the `fields` given, the block digest (unless
/// `--no-digests`), the `extra` fields given, its Content-Type and
/// Content-Length, the block, `CRLF CRLF`.
fn derived_record(
    plan: &Plan,
    kind: &str,
    fields: &[(&str, Option<&str>)],
    extra: &[(&str, Option<&str>)],
    content_type: &str,
    block: &[u8],
) -> Vec<u8> {
    let mut r = Vec::with_capacity(block.len() + 512);
    let mut line = |name: &str, value: &str| {
        r.extend_from_slice(name.as_bytes());
        r.extend_from_slice(b": ");
        r.extend_from_slice(value.as_bytes());
        r.extend_from_slice(b"\r\n");
    };
    line("WARC/1.0\r\nWARC-Type", kind);
    for (name, value) in fields {
        if let Some(v) = value {
            line(name, v);
        }
    }
    if plan.digests {
        line("WARC-Block-Digest", &digest(&[block]));
    }
    for (name, value) in extra {
        if let Some(v) = value {
            line(name, v);
        }
    }
    line("Content-Type", content_type);
    line("Content-Length", &block.len().to_string());
    r.extend_from_slice(b"\r\n");
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

// ---------------------------------------------------------------------------
// WAT: metadata records (--wat)

/// A WAT `metadata` record describing the record `refers_to` of `uri`
/// (Common Crawl's layout, see the module docs): header and JSON block.
fn wat_record(
    plan: &Plan,
    uri: Option<&str>,
    date: &str,
    refers_to: &str,
    json: &serde_json::Value,
) -> Vec<u8> {
    let block = json.to_string();
    let id = record_id(&format!(
        "metadata\n{}\n{date}\n{refers_to}",
        uri.unwrap_or("")
    ));
    derived_record(
        plan,
        "metadata",
        &[
            ("WARC-Target-URI", uri),
            ("WARC-Date", Some(date)),
            ("WARC-Record-ID", Some(&id)),
            ("WARC-Refers-To", Some(refers_to)),
        ],
        &[],
        "application/json",
        block.as_bytes(),
    )
}

/// `Container`: where the described record lies (the WARC file of the same
/// files; offsets are not known here and left out).
fn wat_container(plan: &Plan) -> serde_json::Value {
    serde_json::json!({
        "Filename": plan.warc_name,
        "Compressed": plan.gzip != GzipMode::None,
    })
}

/// The WAT record of the `warcinfo` record: only counted by readers.
fn wat_of_warcinfo(plan: &Plan, info: &RecordHead, len: usize) -> Vec<u8> {
    let json = serde_json::json!({
        "Container": wat_container(plan),
        "Envelope": {
            "Format": "WARC",
            "WARC-Header-Metadata": {
                "WARC-Type": "warcinfo",
                "WARC-Record-ID": info.id,
                "WARC-Date": info.date,
                "Content-Type": info.content_type,
                "Content-Length": len.to_string(),
            },
            "Payload-Metadata": {"Actual-Content-Type": info.content_type},
        },
    });
    wat_record(plan, None, info.date, info.id, &json)
}

/// The `HTML-Metadata` of an HTML page, by webmill's HTML extractor;
/// `None` when the extractor refuses the bytes (binary).
fn html_metadata(body: &[u8]) -> Option<serde_json::Value> {
    use webmill::ingest::html::{Extractor, LinkKind};
    let mut ex = Extractor::new();
    let page = ex.extract(body, None).ok()?;
    let mut head = serde_json::Map::new();
    head.insert("Title".into(), page.title.clone().into());
    if let Some(b) = &page.base_href {
        head.insert("Base".into(), b.clone().into());
    }
    let mut metas = Vec::new();
    let mut links = Vec::new();
    for l in &page.links {
        let (path, text_key) = match l.kind {
            LinkKind::A => ("A@/href", "text"),
            LinkKind::Area => ("AREA@/href", "alt"),
            LinkKind::Frame => ("FRAME@/src", ""),
            LinkKind::Iframe => ("IFRAME@/src", ""),
            LinkKind::MetaRefresh => {
                metas.push(serde_json::json!({
                    "http-equiv": "refresh",
                    "content": format!("0; url={}", l.href),
                }));
                continue;
            }
        };
        let mut link = serde_json::Map::new();
        link.insert("path".into(), path.into());
        link.insert("url".into(), l.href.clone().into());
        if !text_key.is_empty() && !l.anchor.is_empty() {
            link.insert(text_key.into(), l.anchor.clone().into());
        }
        links.push(serde_json::Value::Object(link));
    }
    if !metas.is_empty() {
        head.insert("Metas".into(), metas.into());
    }
    Some(serde_json::json!({"Head": head, "Links": links}))
}

/// The WAT `metadata` record of one file's `response` record, compressed
/// as a member of its own in `record` mode. Returns (bytes to write, JSON
/// bytes).
fn wat_metadata(plan: &Plan, rel: &Path) -> anyhow::Result<(Vec<u8>, u64)> {
    let path = plan.dir.join(rel);
    let body = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let (date, last_modified) = record_date(plan, &path)?;
    let uri = target_uri(plan.base, rel);
    let refers_to = record_id(&format!("response\n{uri}\n{date}"));
    let mut headers = serde_json::json!({
        "Content-Type": content_type(rel),
        "Content-Length": body.len().to_string(),
    });
    if let Some(lm) = last_modified {
        headers["Last-Modified"] = lm.into();
    }
    let mut http = serde_json::json!({
        "Response-Message": {"Version": "HTTP/1.1", "Status": "200", "Reason": "OK"},
        "Headers": headers,
        "Entity-Length": body.len().to_string(),
    });
    if plan.digests {
        http["Entity-Digest"] = digest(&[&body]).into();
    }
    if is_html(rel) {
        if let Some(meta) = html_metadata(&body) {
            http["HTML-Metadata"] = meta;
        }
    }
    let json = serde_json::json!({
        "Container": wat_container(plan),
        "Envelope": {
            "Format": "WARC",
            "WARC-Header-Metadata": {
                "WARC-Type": "response",
                "WARC-Target-URI": uri,
                "WARC-Date": date,
                "WARC-Record-ID": refers_to,
                "Content-Type": "application/http; msgtype=response",
            },
            "Payload-Metadata": {
                "Actual-Content-Type": "application/http; msgtype=response",
                "HTTP-Response-Metadata": http,
            },
        },
    });
    let r = wat_record(plan, Some(&uri), &date, &refers_to, &json);
    let n = r.len() as u64;
    Ok((compress_member(r, plan)?, n))
}

// ---------------------------------------------------------------------------
// Files and URLs

fn extension(rel: &Path) -> String {
    rel.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

fn is_html(rel: &Path) -> bool {
    HTML_EXTENSIONS.contains(&extension(rel).as_str())
}

/// The media type a web server would send for a file name.
fn content_type(rel: &Path) -> &'static str {
    match extension(rel).as_str() {
        "html" | "htm" | "shtml" => "text/html",
        "xhtml" => "application/xhtml+xml",
        "css" => "text/css",
        "js" | "mjs" => "text/javascript",
        "json" | "map" => "application/json",
        "txt" | "md" => "text/plain",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "ico" => "image/vnd.microsoft.icon",
        "webp" => "image/webp",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        "otf" => "font/otf",
        "pdf" => "application/pdf",
        "gz" => "application/gzip",
        _ => "application/octet-stream",
    }
}

/// `base` + the relative path, every byte outside RFC 3986's `pchar` set
/// (unreserved, sub-delims, `:` and `@`) percent-encoded.
fn target_uri(base: &str, rel: &Path) -> String {
    let mut uri = base.to_string();
    for (i, c) in rel.components().enumerate() {
        if i > 0 {
            uri.push('/');
        }
        for &b in c.as_os_str().as_encoded_bytes() {
            let keep = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b);
            if keep {
                uri.push(b as char);
            } else {
                uri.push_str(&format!("%{b:02X}"));
            }
        }
    }
    uri
}

// ---------------------------------------------------------------------------
// Records

/// Everything about a record but its block.
struct RecordHead<'a> {
    kind: &'a str,
    id: &'a str,
    warcinfo_id: Option<&'a str>,
    /// `WARC-Filename` (warcinfo records).
    filename: Option<&'a str>,
    date: &'a str,
    target_uri: Option<&'a str>,
    content_type: &'a str,
    /// (payload digest, block digest).
    digests: Option<(String, String)>,
}

/// A whole record: header, block (`parts` concatenated), `CRLF CRLF`.
fn record(head: &RecordHead, parts: &[&[u8]]) -> Vec<u8> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut r = Vec::with_capacity(len + 512);
    let mut line = |name: &str, value: &str| {
        r.extend_from_slice(name.as_bytes());
        r.extend_from_slice(b": ");
        r.extend_from_slice(value.as_bytes());
        r.extend_from_slice(b"\r\n");
    };
    line("WARC/1.0\r\nWARC-Type", head.kind);
    line("WARC-Record-ID", head.id);
    if let Some(w) = head.warcinfo_id {
        line("WARC-Warcinfo-ID", w);
    }
    if let Some(f) = head.filename {
        line("WARC-Filename", f);
    }
    line("WARC-Date", head.date);
    if let Some(u) = head.target_uri {
        line("WARC-Target-URI", u);
    }
    line("Content-Type", head.content_type);
    if let Some((payload, block)) = &head.digests {
        line("WARC-Payload-Digest", payload);
        line("WARC-Block-Digest", block);
    }
    line("Content-Length", &len.to_string());
    r.extend_from_slice(b"\r\n");
    for p in parts {
        r.extend_from_slice(p);
    }
    r.extend_from_slice(b"\r\n\r\n");
    r
}

/// Settings shared by every record.
struct Plan<'a> {
    dir: &'a Path,
    base: &'a str,
    date: Option<&'a str>,
    digests: bool,
    warcinfo_id: &'a str,
    gzip: GzipMode,
    level: u32,
    /// The name of the WARC file of the same files (for WAT's `Container`).
    warc_name: &'a str,
}

/// The `response` record of one file, compressed as a member of its own in
/// `record` mode. Returns (bytes to write, payload bytes).
fn response(plan: &Plan, rel: &Path) -> anyhow::Result<(Vec<u8>, u64)> {
    let path = plan.dir.join(rel);
    let body = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let (date, last_modified) = record_date(plan, &path)?;
    let uri = target_uri(plan.base, rel);
    let mut http = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
        content_type(rel),
        body.len()
    );
    if let Some(lm) = last_modified {
        http.push_str(&format!("Last-Modified: {lm}\r\n"));
    }
    http.push_str("\r\n");
    let digests = plan.digests.then(|| {
        (
            digest(&[&body]),
            digest(&[http.as_bytes(), body.as_slice()]),
        )
    });
    let id = record_id(&format!("response\n{uri}\n{date}"));
    let head = RecordHead {
        kind: "response",
        id: &id,
        warcinfo_id: Some(plan.warcinfo_id),
        filename: None,
        date: &date,
        target_uri: Some(&uri),
        content_type: "application/http; msgtype=response",
        digests,
    };
    let bytes = record(&head, &[http.as_bytes(), &body]);
    Ok((compress_member(bytes, plan)?, body.len() as u64))
}

/// A file's record date (`--date`, or its mtime) and, from its mtime, its
/// HTTP `Last-Modified`.
fn record_date(plan: &Plan, path: &Path) -> anyhow::Result<(String, Option<String>)> {
    Ok(match plan.date {
        Some(d) => (d.to_string(), None),
        None => {
            let mtime = std::fs::metadata(path)
                .and_then(|m| m.modified())
                .with_context(|| format!("no modification time for {}", path.display()))?;
            let unix = match mtime.duration_since(UNIX_EPOCH) {
                Ok(d) => d.as_secs() as i64,
                Err(e) => -(e.duration().as_secs() as i64),
            };
            let (w, h) = dates(unix);
            (w, Some(h))
        }
    })
}

/// In `record` mode, `bytes` as one gzip member; otherwise unchanged.
fn compress_member(bytes: Vec<u8>, plan: &Plan) -> io::Result<Vec<u8>> {
    if plan.gzip != GzipMode::Record {
        return Ok(bytes);
    }
    let mut gz = GzEncoder::new(
        Vec::with_capacity(bytes.len() / 3 + 64),
        Compression::new(plan.level),
    );
    gz.write_all(&bytes)?;
    gz.finish()
}

/// The output stream: plain, or one gzip member for the whole file.
enum Sink {
    Plain(BufWriter<File>),
    Gzip(GzEncoder<BufWriter<File>>),
}

impl Sink {
    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.write_all(b),
            Sink::Gzip(w) => w.write_all(b),
        }
    }

    fn finish(self) -> io::Result<File> {
        let mut w = match self {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.finish()?,
        };
        w.flush()?;
        w.into_inner().map_err(|e| e.into_error())
    }
}

/// What was written.
struct Summary {
    records: u64,
    html: u64,
    payload_bytes: u64,
    out_bytes: u64,
}

fn write_warc(args: &Args, gzip: GzipMode, tmp: &Path) -> anyhow::Result<Summary> {
    let dir = &args.dir;
    if !dir.is_dir() {
        bail!("{}: not a directory", dir.display());
    }
    let mut base = args.base.clone();
    if !(base.starts_with("http://") || base.starts_with("https://")) || base.contains(' ') {
        bail!("--base {base}: expected an http:// or https:// URL");
    }
    if !base.ends_with('/') {
        base.push('/');
    }
    let mut files = webmill::ingest::list_files(dir)?;
    if args.html_only || args.wet {
        files.retain(|f| is_html(f));
    }
    let fixed_date = args.date.clone();
    let info_date = fixed_date.clone().unwrap_or_else(|| {
        // The newest file's date: deterministic, and no later than any crawl.
        let newest = files
            .iter()
            .filter_map(|f| {
                std::fs::metadata(dir.join(f))
                    .and_then(|m| m.modified())
                    .ok()
            })
            .max()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64);
        dates(newest).0
    });
    let filename = args
        .output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A WAT file describes the WARC of the same files: its warcinfo (and so
    // its records' WARC-Warcinfo-ID) is that WARC's, by that file's name
    // (`X.warc.wat.gz` describes `X.warc.gz`).
    let warc_name = if args.wat {
        filename.replacen(".wat", "", 1)
    } else {
        filename.clone()
    };
    let warcinfo_id = record_id(&format!("warcinfo\n{base}\n{info_date}\n{warc_name}"));
    let plan = Plan {
        dir,
        base: &base,
        date: fixed_date.as_deref(),
        digests: !args.no_digests,
        warcinfo_id: &warcinfo_id,
        gzip,
        level: args.level,
        warc_name: &warc_name,
    };

    let file = File::create(tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let buf = BufWriter::with_capacity(1 << 20, file);
    let mut sink = match gzip {
        GzipMode::File => Sink::Gzip(GzEncoder::new(buf, Compression::new(args.level))),
        _ => Sink::Plain(buf),
    };
    let fields = format!(
        "software: webmill-warc/{}\r\nformat: WARC File Format 1.0\r\nconformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.0/\r\ndescription: the files of a directory served under {base}\r\n",
        env!("CARGO_PKG_VERSION")
    );
    let info_head = RecordHead {
        kind: "warcinfo",
        id: &warcinfo_id,
        warcinfo_id: None,
        filename: Some(warc_name.as_str()).filter(|f| !f.is_empty()),
        date: &info_date,
        target_uri: None,
        content_type: "application/warc-fields",
        digests: None,
    };
    let info = if args.wat {
        wat_of_warcinfo(&plan, &info_head, fields.len())
    } else {
        record(&info_head, &[fields.as_bytes()])
    };
    sink.write_all(&compress_member(info, &plan)?)?;
    let mut summary = Summary {
        records: 1,
        html: 0,
        payload_bytes: 0,
        out_bytes: 0,
    };
    for batch in files.chunks(BATCH_FILES) {
        let built: Vec<anyhow::Result<(Vec<u8>, u64)>> = batch
            .par_iter()
            .map(|rel| {
                if args.wet {
                    conversion(&plan, rel)
                } else if args.wat {
                    wat_metadata(&plan, rel)
                } else {
                    response(&plan, rel)
                }
            })
            .collect();
        for (rel, r) in batch.iter().zip(built) {
            let (bytes, payload) = r?;
            sink.write_all(&bytes)
                .with_context(|| format!("cannot write {}", tmp.display()))?;
            summary.records += 1;
            summary.html += u64::from(is_html(rel));
            summary.payload_bytes += payload;
        }
    }
    let file = sink
        .finish()
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    file.sync_all()
        .with_context(|| format!("cannot sync {}", tmp.display()))?;
    summary.out_bytes = file.metadata().map_or(0, |m| m.len());
    Ok(summary)
}

fn run(args: &Args) -> anyhow::Result<()> {
    if let Some(n) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
            .context("cannot start the worker threads")?;
    }
    let gzip = args.gzip.unwrap_or_else(|| {
        if args.output.extension().is_some_and(|e| e == "gz") {
            GzipMode::Record
        } else {
            GzipMode::None
        }
    });
    let started = Instant::now();
    let mut tmp = args.output.clone().into_os_string();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    let summary = match write_warc(args, gzip, &tmp) {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, &args.output)
        .with_context(|| format!("cannot rename {} to its final name", tmp.display()))?;
    if !args.quiet {
        eprintln!(
            "webmill-warc: {} records ({} HTML) from {}: {:.1} MB of payload -> {} ({:.1} MB, gzip {:?}) in {:.1} s",
            summary.records,
            summary.html,
            args.dir.display(),
            summary.payload_bytes as f64 / 1e6,
            args.output.display(),
            summary.out_bytes as f64 / 1e6,
            gzip,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("webmill-warc: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn sha1_matches_the_fips_examples() {
        assert_eq!(
            hex(&sha1(&[b"abc"])),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(&sha1(&[b""])),
            "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
        assert_eq!(
            hex(&sha1(&[
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            ])),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        // A million a's, fed in uneven pieces.
        let a = vec![b'a'; 1_000_000];
        let mut s = Sha1::new();
        for piece in a.chunks(997) {
            s.update(piece);
        }
        assert_eq!(hex(&s.finish()), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    }

    #[test]
    fn base32_and_uuid_follow_their_rfcs() {
        // RFC 4648 section 10 test vectors (padding left out).
        for (i, o) in [
            ("", ""),
            ("f", "MY"),
            ("fo", "MZXQ"),
            ("foo", "MZXW6"),
            ("foob", "MZXW6YQ"),
            ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI"),
        ] {
            assert_eq!(base32(i.as_bytes()), o);
        }
        // Python: uuid.uuid5(uuid.NAMESPACE_URL, "http://example.com/")
        assert_eq!(
            record_id("http://example.com/"),
            "<urn:uuid:0a300ee9-f9e4-5697-a51a-efc7fafaba67>"
        );
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(dates(0).0, "1970-01-01T00:00:00Z");
        assert_eq!(dates(0).1, "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(dates(951_782_400).0, "2000-02-29T00:00:00Z");
        assert_eq!(dates(1_709_208_000).1, "Thu, 29 Feb 2024 12:00:00 GMT");
        assert_eq!(dates(-1).0, "1969-12-31T23:59:59Z");
        assert!(parse_date("2024-02-29T12:00:00Z").is_ok());
        assert!(parse_date("2024-02-29 12:00:00").is_err());
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(
            target_uri("http://h/d/", Path::new("std/macro.env!.html")),
            "http://h/d/std/macro.env!.html"
        );
        assert_eq!(
            target_uri("http://h/", Path::new("a b/é#?.html")),
            "http://h/a%20b/%C3%A9%23%3F.html"
        );
    }
}

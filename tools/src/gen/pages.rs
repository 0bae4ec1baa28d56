//! `webmill-gen --format warc`: the graph's nodes as HTML pages in a WARC
//! file, so that every stage (ingest, resolve, pagerank, index, dedup) can be
//! measured on one web-like corpus of any size.
//!
//! Node `d` of host `h` is `http://hH.example/pD.html`. Its page holds a
//! title (its first three words), a heading, a paragraph of running text and
//! its out-links as a list, each with two words of anchor text:
//!
//! Its words, and whether it copies another page's (a planted
//! near-duplicate: the source's words with a few replaced), are the text model
//! of `text.rs` with the page's node as the doc; its links stay its own (they
//! follow the graph), so a copy's token stream differs from its source's by
//! the edits and the anchor words.
//!
//! Records are WARC/1.0 `response` records with an HTTP/1.1 200 header; with
//! `--gzip` each record is its own gzip member (Common Crawl style, level 1).

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

use super::text::{Stream, TextModel};

/// Stream purpose of the anchor words (the text model uses 1 to 3).
const ANCHOR: u64 = 4;

/// Two anchor words for the link from `d` to `t`.
pub fn anchor(model: &TextModel, seed: u64, d: u64, t: u64) -> [u32; 2] {
    let mut s = Stream::new(seed, d ^ t.rotate_left(32), ANCHOR);
    [model.word(&mut s), model.word(&mut s)]
}

fn words(model: &TextModel, ws: &[u32], out: &mut Vec<u8>) {
    for (i, &w) in ws.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(model.spelled[w as usize].as_bytes());
    }
}

/// The URL of `node` on host `host`.
pub fn url(host: u64, node: u64, out: &mut Vec<u8>) {
    let _ = write!(out, "http://h{host}.example/p{node}.html");
}

/// Appends page `node`'s HTML: its words, and links to `targets` (each with
/// its host); `seed` keys the anchor words.
pub fn html(model: &TextModel, seed: u64, node: u64, targets: &[(u64, u64)], out: &mut Vec<u8>) {
    let (ws, _) = model.page(node);
    let head = &ws[..ws.len().min(3)];
    out.extend_from_slice(b"<!DOCTYPE html><html><head><title>");
    words(model, head, out);
    out.extend_from_slice(b"</title></head><body><h1>");
    words(model, head, out);
    out.extend_from_slice(b"</h1><p>");
    words(model, &ws, out);
    out.extend_from_slice(b"</p><ul>");
    for &(h, t) in targets {
        out.extend_from_slice(b"<li><a href=\"");
        url(h, t, out);
        out.extend_from_slice(b"\">");
        words(model, &anchor(model, seed, node, t), out);
        out.extend_from_slice(b"</a></li>");
    }
    out.extend_from_slice(b"</ul></body></html>");
}

/// Appends a WARC `response` record for `uri` whose HTTP body is `body`;
/// with `gzip`, as its own gzip member.
pub fn record(uri: &[u8], body: &[u8], gzip: bool, scratch: &mut Vec<u8>, out: &mut Vec<u8>) {
    const HTTP: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n";
    scratch.clear();
    scratch.extend_from_slice(b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: ");
    scratch.extend_from_slice(uri);
    let _ = write!(
        scratch,
        "\r\nWARC-Date: 2024-02-29T12:00:00Z\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        HTTP.len() + body.len()
    );
    scratch.extend_from_slice(HTTP);
    scratch.extend_from_slice(body);
    scratch.extend_from_slice(b"\r\n\r\n");
    if gzip {
        let mut gz = GzEncoder::new(std::mem::take(out), Compression::fast());
        let _ = gz.write_all(scratch);
        *out = gz.finish().unwrap_or_default();
    } else {
        out.extend_from_slice(scratch);
    }
}

/// The `warcinfo` record that starts the file.
pub fn warcinfo(description: &str, gzip: bool) -> Vec<u8> {
    let body = format!(
        "software: webmill-gen\r\nformat: WARC File Format 1.0\r\ndescription: {description}\r\n"
    );
    let mut rec = format!(
        "WARC/1.0\r\nWARC-Type: warcinfo\r\nWARC-Date: 2024-02-29T12:00:00Z\r\nContent-Type: application/warc-fields\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if gzip {
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        let _ = gz.write_all(&rec);
        rec = gz.finish().unwrap_or_default();
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::TextArgs;

    #[test]
    fn a_copy_shares_its_sources_text_not_its_links() {
        let args = TextArgs {
            words: (50, 60),
            vocab: 1000,
            dup_fraction: 0.3,
            max_edits_pct: 0,
        };
        let m = TextModel::new(7, 1000, &args);
        let (d, s) = (0..1000)
            .find_map(|d| m.page(d).1.map(|(s, _)| (d, s)))
            .unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        html(&m, 7, d, &[(0, 1)], &mut a);
        html(&m, 7, s, &[(0, 1)], &mut b);
        let text = |h: &[u8]| {
            let h = String::from_utf8(h.to_vec()).unwrap();
            h[h.find("<p>").unwrap()..h.find("</p>").unwrap()].to_string()
        };
        assert_eq!(text(&a), text(&b), "max edits 0: exact copies");
        assert!(String::from_utf8(a)
            .unwrap()
            .contains("href=\"http://h0.example/p1.html\""));
    }
}

//! `webmill-gen --format warc`: the graph's nodes as HTML pages in a WARC
//! file, so that every stage (ingest, resolve, pagerank, index, dedup) can be
//! measured on one web-like corpus of any size.
//!
//! Node `d` of host `h` is `http://hH.example/pD.html`. Its page holds a
//! title (its first three words), a heading, a paragraph of running text and
//! its out-links as a list, each with two words of anchor text:
//!
//! * **Words** follow a Zipf law (`P(rank r) ∝ 1/r`) over `--vocab` words
//!   spelled in base 26 (`a`, `b`, …, `aa`, …); a page has `--words MIN..MAX`
//!   of them, uniform; they are drawn from the node's own stream, so a page's
//!   text is a pure function of `(seed, node)`.
//! * **Near-duplicates**: with probability `--dup-fraction` a page is a copy
//!   of a source page `s` drawn uniformly (unless `s` is itself a copy: no
//!   chains): `s`'s text with `m` words replaced, `m` uniform in
//!   `0..=--max-edits-pct`% of its length. Its links stay its own (they follow
//!   the graph), so a copy's token stream differs from its source's by the
//!   edits and the anchor words.
//!
//! Records are WARC/1.0 `response` records with an HTTP/1.1 200 header; with
//! `--gzip` each record is its own gzip member (Common Crawl style, level 1).

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

/// The text half of the model: Zipf words, planted copies.
pub struct TextModel {
    cdf: Vec<f64>,
    min_words: u64,
    max_words: u64,
    dup_fraction: f64,
    max_edits_pct: u64,
    seed: u64,
    n: u64,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A splitmix64 stream keyed by (seed, node, purpose).
struct Stream(u64);

impl Stream {
    fn new(seed: u64, d: u64, purpose: u64) -> Stream {
        Stream(mix(seed ^ 0x5445_5854 ^ mix(d.wrapping_add(purpose << 56))))
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl TextModel {
    /// The model for `n` pages.
    pub fn new(
        n: u64,
        seed: u64,
        words: (u64, u64),
        vocab: u64,
        dup_fraction: f64,
        max_edits_pct: u64,
    ) -> TextModel {
        let mut cdf = Vec::with_capacity(vocab as usize);
        let mut sum = 0.0;
        for r in 1..=vocab.max(1) {
            sum += 1.0 / r as f64;
            cdf.push(sum);
        }
        for c in &mut cdf {
            *c /= sum;
        }
        TextModel {
            cdf,
            min_words: words.0.max(1),
            max_words: words.1.max(words.0.max(1)),
            dup_fraction,
            max_edits_pct,
            seed,
            n,
        }
    }

    fn word(&self, s: &mut Stream) -> u32 {
        let u = s.unit();
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1) as u32
    }

    fn is_copy(&self, d: u64) -> Option<u64> {
        let mut s = Stream::new(self.seed, d, 1);
        if s.unit() >= self.dup_fraction {
            return None;
        }
        let src = s.below(self.n);
        let mut t = Stream::new(self.seed, src, 1);
        (src != d && t.unit() >= self.dup_fraction).then_some(src)
    }

    fn base_words(&self, d: u64, out: &mut Vec<u32>) {
        let mut s = Stream::new(self.seed, d, 2);
        let len = self.min_words + s.below(self.max_words - self.min_words + 1);
        out.clear();
        out.extend((0..len).map(|_| self.word(&mut s)));
    }

    /// The words (ranks) of page `d`; returns its source if it is a copy.
    pub fn page_words(&self, d: u64, out: &mut Vec<u32>) -> Option<u64> {
        match self.is_copy(d) {
            None => {
                self.base_words(d, out);
                None
            }
            Some(src) => {
                self.base_words(src, out);
                let mut s = Stream::new(self.seed, d, 3);
                let len = out.len() as u64;
                let edits = s.below(len * self.max_edits_pct / 100 + 1);
                for _ in 0..edits {
                    let at = s.below(len) as usize;
                    out[at] = self.word(&mut s);
                }
                Some(src)
            }
        }
    }

    /// Two anchor words for the link from `d` to `t`.
    pub fn anchor(&self, d: u64, t: u64) -> [u32; 2] {
        let mut s = Stream::new(self.seed, d ^ t.rotate_left(32), 4);
        [self.word(&mut s), self.word(&mut s)]
    }
}

/// Appends word `rank` spelled in base 26.
pub fn spell(mut rank: u32, out: &mut Vec<u8>) {
    let mut buf = [0u8; 8];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'a' + (rank % 26) as u8;
        rank /= 26;
        if rank == 0 {
            break;
        }
        rank -= 1;
    }
    out.extend_from_slice(&buf[i..]);
}

fn words(ws: &[u32], out: &mut Vec<u8>) {
    for (i, &w) in ws.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        spell(w, out);
    }
}

/// The URL of `node` on host `host`.
pub fn url(host: u64, node: u64, out: &mut Vec<u8>) {
    let _ = write!(out, "http://h{host}.example/p{node}.html");
}

/// Appends page `node`'s HTML: its words, and links to `targets` (each with
/// its host).
pub fn html(
    model: &TextModel,
    node: u64,
    targets: &[(u64, u64)],
    ws: &mut Vec<u32>,
    out: &mut Vec<u8>,
) {
    model.page_words(node, ws);
    out.extend_from_slice(b"<!DOCTYPE html><html><head><title>");
    words(&ws[..ws.len().min(3)], out);
    out.extend_from_slice(b"</title></head><body><h1>");
    words(&ws[..ws.len().min(3)], out);
    out.extend_from_slice(b"</h1><p>");
    words(ws, out);
    out.extend_from_slice(b"</p><ul>");
    for &(h, t) in targets {
        out.extend_from_slice(b"<li><a href=\"");
        url(h, t, out);
        out.extend_from_slice(b"\">");
        words(&model.anchor(node, t), out);
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

    #[test]
    fn spelling_is_bijective_on_small_ranks() {
        let mut seen = std::collections::BTreeSet::new();
        for r in 0..2000 {
            let mut w = Vec::new();
            spell(r, &mut w);
            assert!(seen.insert(w));
        }
        let mut w = Vec::new();
        spell(26, &mut w);
        assert_eq!(w, b"aa");
    }

    #[test]
    fn copies_share_their_sources_words() {
        let m = TextModel::new(1000, 7, (50, 60), 1000, 0.3, 0);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let copies: Vec<(u64, u64)> = (0..1000)
            .filter_map(|d| m.page_words(d, &mut a).map(|s| (d, s)))
            .collect();
        assert!(copies.len() > 150 && copies.len() < 300, "{}", copies.len());
        for (d, s) in copies {
            m.page_words(d, &mut a);
            assert_eq!(m.page_words(s, &mut b), None);
            assert_eq!(a, b, "max edits 0: exact copies");
        }
    }
}

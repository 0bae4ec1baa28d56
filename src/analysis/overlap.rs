//! The relative size of two crawls by capture–recapture (IIR §19.5).
//!
//! Draw a page uniformly from crawl A and test whether B holds it, and vice
//! versa: the fractions `x` (of A in B) and `y` (of B in A) satisfy
//! `x·|A| = |A ∩ B| = y·|B|`, so `|A| / |B| = y / x`. IIR presents this for
//! two search engines' indexes, where neither size is known and sampling is
//! the hard part; here both collections are webmill jobs, so the estimate
//! can be checked against the exact ratio and intersection.
//!
//! # The computation
//!
//! A crawl's pages are the crawled docs of its URL table (`urls.wm`,
//! fingerprint → docID, sorted by fingerprint): the table also holds link
//! targets never fetched, which no index would contain. One bit per doc
//! (the doc table's crawled flag, [`NodeBits`]) filters it into the sorted
//! stream of the crawl's distinct page fingerprints.
//!
//! 1. **Sample** (one pass over each stream): the `s` fingerprints of
//!    smallest `splitmix64(fingerprint ⊕ seed)` — a uniform sample without
//!    replacement, the same for the same seed on any machine — and the
//!    stream's size.
//! 2. **Join** (one merged pass over both streams): the samples, sorted by
//!    fingerprint, are walked beside the two streams, so each sampled page is
//!    tested for membership in the other crawl by a sort–merge join, never by
//!    lookups; the same walk counts `|A ∩ B|` exactly.
//! 3. **Estimate**: `y/x` with a confidence interval from the delta method
//!    on `ln(y/x) = ln y − ln x`: `Var ln x ≈ (1 − x) / (s_A·x) · (N_A − s_A) /
//!    (N_A − 1)` (sampling without replacement from `N_A` pages), the same for
//!    `y`, the two samples independent. A sample of the whole crawl has no
//!    variance: the interval closes on the exact ratio.
//!
//! Pages are identified by their 64-bit URL fingerprint; two distinct URLs
//! collide with probability about `N²/2⁶⁵` (10⁻⁷ for 10⁶ pages), ignored.
//!
//! # Biases (IIR §19.5) and which are removed
//!
//! * *Non-uniform sampling* (random queries favour long documents and the
//!   ranking's favourites; random IP addresses, small hosts; random walks,
//!   well-linked pages): removed — the sample is uniform over each crawl's
//!   table.
//! * *The checking phase* (conjunctive queries the other engine mishandles,
//!   refusals, time-outs): removed — membership is exact fingerprint equality.
//! * *Independence of the two collections*: not needed for the ratio, only
//!   for extrapolating to the size of the Web — `x·|A| = y·|B|` holds for any
//!   two sets; what the tool measures is exactly `|A ∩ B|` relative to each.
//! * *Duplicates* (the same content under several URLs, IIR §19.6): not
//!   removed — a page B holds under another URL counts as missing from B.
//!   Run `webmill dedup` to see how much of each crawl that is.
//! * *Different URL normalisation*: partly removed — both crawls' URLs went
//!   through webmill's normalisation (case of scheme and host, default
//!   ports, fragments, percent-encoding), but URLs that differ otherwise
//!   (`www.` or not, `http` vs `https`, `index.html` vs `/`, session ids) are
//!   different pages to it.

use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::nodeset::NodeBits;
use crate::docs::DocTable;
use crate::error::{Error, Result};
use crate::ingest::urltable::UrlTable;
use crate::progress::{Reporter, Unit};

/// Sample size per crawl by default.
pub const DEFAULT_SAMPLE: u64 = 1000;
/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// One crawl: its URL table and doc table.
#[derive(Clone, Debug)]
pub struct Crawl {
    /// `urls.wm`.
    pub urls: PathBuf,
    /// `docs.wm`.
    pub docs: PathBuf,
}

/// What to compute.
#[derive(Clone, Debug)]
pub struct OverlapOptions {
    /// Pages sampled from each crawl (all when it has fewer).
    pub sample: u64,
    /// Seed of the sample.
    pub seed: u64,
}

impl Default for OverlapOptions {
    fn default() -> OverlapOptions {
        OverlapOptions {
            sample: DEFAULT_SAMPLE,
            seed: 0,
        }
    }
}

/// The estimate and the truth.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overlap {
    /// Pages sampled from A (and from B).
    pub sample_a: u64,
    /// Pages sampled from B.
    pub sample_b: u64,
    /// Of A's sample, the pages B holds.
    pub a_in_b: u64,
    /// Of B's sample, the pages A holds.
    pub b_in_a: u64,
    /// `x`: the estimated share of A in B.
    pub x: f64,
    /// `y`: the estimated share of B in A.
    pub y: f64,
    /// `y / x`, the estimate of `|A| / |B|` (`None` when a sample met nothing).
    pub estimate: Option<f64>,
    /// Lower end of the 95% interval.
    pub ci_low: Option<f64>,
    /// Upper end.
    pub ci_high: Option<f64>,
    /// Pages of A (crawled docs, distinct URL fingerprints).
    pub pages_a: u64,
    /// Pages of B.
    pub pages_b: u64,
    /// Pages in both.
    pub both: u64,
    /// `|A| / |B|`, exactly.
    pub exact: f64,
}

/// A crawl's distinct crawled fingerprints in increasing order.
struct PageStream<'a> {
    table: &'a UrlTable,
    crawled: &'a NodeBits,
    block: usize,
    pairs: Vec<(u64, u64)>,
    pos: usize,
    last: Option<u64>,
    raw: (Vec<u8>, Vec<u8>),
}

impl<'a> PageStream<'a> {
    fn new(table: &'a UrlTable, crawled: &'a NodeBits) -> PageStream<'a> {
        PageStream {
            table,
            crawled,
            block: 0,
            pairs: Vec::new(),
            pos: 0,
            last: None,
            raw: (Vec::new(), Vec::new()),
        }
    }

    fn next_page(&mut self) -> Result<Option<u64>> {
        loop {
            while self.pos < self.pairs.len() {
                let (fp, doc) = self.pairs[self.pos];
                self.pos += 1;
                if self.last == Some(fp) {
                    continue;
                }
                if doc >= self.crawled.nodes() {
                    return Err(Error::corrupt(
                        self.table.container().path(),
                        format!("block {}", self.block - 1),
                        0,
                        format!(
                            "docID {doc} beyond the doc table's {} docs",
                            self.crawled.nodes()
                        ),
                    ));
                }
                if self.crawled.get(doc) {
                    if self.last.is_some_and(|l| l > fp) {
                        return Err(Error::corrupt(
                            self.table.container().path(),
                            format!("block {}", self.block - 1),
                            0,
                            "fingerprints out of order",
                        ));
                    }
                    self.last = Some(fp);
                    return Ok(Some(fp));
                }
            }
            let c = self.table.container();
            if self.block == c.blocks().len() {
                return Ok(None);
            }
            c.read_block_into(self.block, &mut self.raw.0, &mut self.raw.1)?;
            self.block += 1;
            self.pairs.clear();
            for p in self.raw.1.chunks_exact(16) {
                let mut a = [0u8; 8];
                let mut b = [0u8; 8];
                a.copy_from_slice(&p[..8]);
                b.copy_from_slice(&p[8..]);
                self.pairs
                    .push((u64::from_le_bytes(a), u64::from_le_bytes(b)));
            }
            self.pos = 0;
        }
    }
}

/// The sampling key of a fingerprint.
fn sample_key(fp: u64, seed: u64) -> u64 {
    super::mix64(fp ^ seed)
}

/// The crawled flags of a doc table, one bit per doc.
fn crawled_bits(docs: &Path) -> Result<NodeBits> {
    let t = DocTable::open(docs)?;
    let mut bits = NodeBits::new(t.len());
    for d in t.iter() {
        let (id, doc) = d?;
        if doc.crawled {
            bits.insert(id);
        }
    }
    Ok(bits)
}

/// Pass 1: the stream's size and its `s` pages of smallest sampling key,
/// sorted by fingerprint.
fn sample(stream: &mut PageStream<'_>, s: u64, seed: u64) -> Result<(u64, Vec<u64>)> {
    let mut heap: BinaryHeap<(u64, u64)> = BinaryHeap::new();
    let mut n = 0u64;
    while let Some(fp) = stream.next_page()? {
        n += 1;
        let k = (sample_key(fp, seed), fp);
        if (heap.len() as u64) < s {
            heap.push(k);
        } else if heap.peek().is_some_and(|&top| k < top) {
            heap.pop();
            heap.push(k);
        }
    }
    let mut fps: Vec<u64> = heap.into_iter().map(|(_, fp)| fp).collect();
    fps.sort_unstable();
    Ok((n, fps))
}

/// Variance of `ln p̂` for a share `p̂` measured on `s` of `n` items drawn
/// without replacement (delta method).
fn log_share_variance(p: f64, s: u64, n: u64) -> f64 {
    let fpc = if n > 1 {
        (n - s) as f64 / (n - 1) as f64
    } else {
        0.0
    };
    (1.0 - p) / (s as f64 * p) * fpc
}

/// Estimates `|A| / |B|` from uniform samples of each crawl (see the module
/// doc) and counts the exact overlap, within `budget` bytes (one bit per
/// doc of each crawl and 16 bytes per sampled page).
pub fn overlap(
    a: &Crawl,
    b: &Crawl,
    budget: u64,
    reporter: &dyn Reporter,
    opts: &OverlapOptions,
) -> Result<Overlap> {
    let (ta, tb) = (UrlTable::open(&a.urls)?, UrlTable::open(&b.urls)?);
    let docs = |p: &Path| DocTable::open(p).map(|t| t.len());
    let need = NodeBits::bytes_for(docs(&a.docs)?)
        + NodeBits::bytes_for(docs(&b.docs)?)
        + 2 * 16 * opts.sample;
    if need > budget {
        return Err(Error::budget(
            "overlap: a bit per doc of both crawls and the two samples",
            need,
            budget,
        ));
    }
    let task = reporter.task("overlap", Some(3), Unit::Steps);
    let (ca, cb) = (crawled_bits(&a.docs)?, crawled_bits(&b.docs)?);
    let (na, sa) = sample(&mut PageStream::new(&ta, &ca), opts.sample, opts.seed)?;
    task.inc(1);
    // B's sample uses another key, so that two copies of one crawl are not
    // sampled identically.
    let (nb, sb) = sample(
        &mut PageStream::new(&tb, &cb),
        opts.sample,
        opts.seed ^ 0x5bd1_e995,
    )?;
    task.inc(1);
    // Pass 2: A and B merged, both samples beside them.
    let (mut pa, mut pb) = (PageStream::new(&ta, &ca), PageStream::new(&tb, &cb));
    let (mut xa, mut xb) = (pa.next_page()?, pb.next_page()?);
    let (mut ia, mut ib) = (0usize, 0usize);
    let (mut both, mut a_in_b, mut b_in_a) = (0u64, 0u64, 0u64);
    while xa.is_some() || xb.is_some() {
        let f = match (xa, xb) {
            (Some(p), Some(q)) => p.min(q),
            (Some(p), None) => p,
            (None, Some(q)) => q,
            (None, None) => break,
        };
        let (in_a, in_b) = (xa == Some(f), xb == Some(f));
        if in_a && in_b {
            both += 1;
        }
        while ia < sa.len() && sa[ia] <= f {
            if sa[ia] == f && in_b {
                a_in_b += 1;
            }
            ia += 1;
        }
        while ib < sb.len() && sb[ib] <= f {
            if sb[ib] == f && in_a {
                b_in_a += 1;
            }
            ib += 1;
        }
        if in_a {
            xa = pa.next_page()?;
        }
        if in_b {
            xb = pb.next_page()?;
        }
    }
    task.inc(1);
    let (sa, sb) = (sa.len() as u64, sb.len() as u64);
    let x = a_in_b as f64 / sa.max(1) as f64;
    let y = b_in_a as f64 / sb.max(1) as f64;
    let (estimate, ci_low, ci_high) = if a_in_b > 0 && b_in_a > 0 {
        let e = y / x;
        let sd = (log_share_variance(x, sa, na) + log_share_variance(y, sb, nb)).sqrt();
        (
            Some(e),
            Some(e * (-Z95 * sd).exp()),
            Some(e * (Z95 * sd).exp()),
        )
    } else {
        (None, None, None)
    };
    Ok(Overlap {
        sample_a: sa,
        sample_b: sb,
        a_in_b,
        b_in_a,
        x,
        y,
        estimate,
        ci_low,
        ci_high,
        pages_a: na,
        pages_b: nb,
        both,
        exact: na as f64 / nb.max(1) as f64,
    })
}

impl Overlap {
    /// The report as a table.
    pub fn table(&self) -> String {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
        format!(
            "sample            {} from A, {} from B\n\
             x = A in B        {}/{} = {:.4}   (exact {:.4})\n\
             y = B in A        {}/{} = {:.4}   (exact {:.4})\n\
             |A|/|B| ≈ y/x     {}   95% interval [{}, {}]\n\
             |A|/|B| exact     {:.4}   ({} / {} pages, {} in both)\n",
            self.sample_a,
            self.sample_b,
            self.a_in_b,
            self.sample_a,
            self.x,
            self.both as f64 / self.pages_a.max(1) as f64,
            self.b_in_a,
            self.sample_b,
            self.y,
            self.both as f64 / self.pages_b.max(1) as f64,
            f(self.estimate),
            f(self.ci_low),
            f(self.ci_high),
            self.exact,
            self.pages_a,
            self.pages_b,
            self.both
        )
    }
}

#[cfg(test)]
mod tests;

//! The near-duplicate report as Henzinger gives it (*Combinatorial
//! Algorithms for Web Search Engines*, §3, after Henzinger 2006): for each
//! algorithm side by side (Alg. B vs Alg. C, and min-hash), the distribution
//! of the number of near-duplicates `N(u)` of a page on log–log axes with its
//! same-host and cross-host parts, and the precision on a labelled sample of
//! reported pairs, overall, per similarity bin and per host class (her finding:
//! both algorithms are poor on same-site pairs and good on cross-site ones,
//! and Alg. C wins overall because fewer of its pairs are same-site).
//!
//! # The computation, per algorithm (out of core)
//!
//! 1. **Hosts** (two sort–merge joins): the pair file (`pairs-ALG.wm`, sorted
//!    by `a`) is walked beside the doc table to attach `a`'s host; the pairs,
//!    sorted by `b` with the external sort, are walked beside it again to
//!    attach `b`'s host. A pair is *same-host* when the two hosts are equal.
//! 2. **`N(u)`**: both ends of every pair, with the pair's host class, go
//!    through a sort by docID; a walk counts each page's near-duplicates in
//!    all, on its host and on other hosts, into three histograms (`N` →
//!    pages), never a per-page array.
//! 3. **Labelled sample**: during the second join, per bin of the similarity
//!    the pair file records (the algorithm's own estimate: equal
//!    supershingles, bits or min-values), the `S` pairs of smallest
//!    `splitmix64(a ⊕ b·φ ⊕ seed)` are kept (a stratified uniform sample).
//!    Their pages' token streams are read in one pass and each pair is
//!    judged by the exact Jaccard coefficient of its `k`-word shingle sets
//!    ([`shingle_set`], [`jaccard`], the same fingerprints as the sketches):
//!    correct when it reaches the threshold. A bin's precision is its
//!    sample's share of correct pairs; the overall and per-host-class
//!    precisions weight each (bin, class) cell by its number of pairs.
//!
//! The judge is the same for every algorithm (by default 10-word shingles and
//! 0.8, Alg. B's shingle length and `dedup-eval`'s target for it), so the
//! columns compare; Henzinger's evaluation judged by hand.

use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::mix64;

use crate::dedup::files::for_each_pair;
use crate::dedup::shingle::{jaccard, shingle_set};
use crate::docs::DocTable;
use crate::error::{Error, Result};
use crate::plot::{loglog_plot_svg, Series, SeriesStyle};
use crate::progress::SharedReporter;
use crate::sort::{Combine, ExternalSorter, SortConfig};

/// Default pairs judged per similarity bin.
pub const DEFAULT_SAMPLE_PER_BIN: usize = 50;
/// Default judge: shingle length.
pub const DEFAULT_JUDGE_SHINGLE: usize = 10;
/// Default judge: Jaccard threshold.
pub const DEFAULT_JUDGE_THRESHOLD: f64 = 0.8;
/// Similarity bins of the pair file's estimate: `[lo, hi)`, the last `[1, 1]`.
pub const BIN_EDGES: [f64; 6] = [0.0, 0.8, 0.9, 0.95, 0.99, 1.0];

/// One algorithm's input.
#[derive(Clone, Debug)]
pub struct AlgPairs {
    /// The algorithm's name (`broder`, `charikar`, …).
    pub name: String,
    /// Its `pairs-ALG.wm`.
    pub pairs: PathBuf,
}

/// How to report.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Pairs judged per similarity bin.
    pub sample_per_bin: usize,
    /// Shingle length of the judge.
    pub judge_shingle: usize,
    /// Jaccard coefficient a judged pair must reach.
    pub judge_threshold: f64,
    /// Seed of the sample.
    pub seed: u64,
}

impl Default for ReportOptions {
    fn default() -> ReportOptions {
        ReportOptions {
            sample_per_bin: DEFAULT_SAMPLE_PER_BIN,
            judge_shingle: DEFAULT_JUDGE_SHINGLE,
            judge_threshold: DEFAULT_JUDGE_THRESHOLD,
            seed: 0,
        }
    }
}

/// Precision of one (bin or class) cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Cell {
    /// Reported pairs in the cell.
    pub pairs: u64,
    /// Of them, judged.
    pub judged: u64,
    /// Of the judged, correct.
    pub correct: u64,
}

impl Cell {
    /// `correct / judged`.
    pub fn precision(&self) -> Option<f64> {
        (self.judged > 0).then(|| self.correct as f64 / self.judged as f64)
    }
}

/// One similarity bin.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BinPrecision {
    /// The bin as text.
    pub label: String,
    /// Same-host pairs.
    pub same_host: Cell,
    /// Cross-host pairs.
    pub cross_host: Cell,
}

/// One algorithm's report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AlgReport {
    /// The algorithm.
    pub name: String,
    /// Reported pairs.
    pub pairs: u64,
    /// Of them, on one host.
    pub same_host_pairs: u64,
    /// Pages with at least one near-duplicate.
    pub pages: u64,
    /// `N` → pages with `N` near-duplicates.
    pub n_all: BTreeMap<u64, u64>,
    /// `N` → pages with `N` near-duplicates on their own host (N ≥ 1).
    pub n_same_host: BTreeMap<u64, u64>,
    /// `N` → pages with `N` near-duplicates on other hosts (N ≥ 1).
    pub n_cross_host: BTreeMap<u64, u64>,
    /// Precision per similarity bin.
    pub bins: Vec<BinPrecision>,
    /// Weighted precision over all pairs.
    pub precision: Option<f64>,
    /// Weighted precision over same-host pairs.
    pub precision_same_host: Option<f64>,
    /// Weighted precision over cross-host pairs.
    pub precision_cross_host: Option<f64>,
}

fn bin_of(sim: f64) -> usize {
    let last = BIN_EDGES.len() - 1;
    if sim >= 1.0 {
        return last - 1;
    }
    BIN_EDGES[1..last].partition_point(|&e| e <= sim)
}

/// Walks a docID-ordered stream of queries beside the doc table: the host of
/// each asked docID (asked in non-decreasing order).
struct HostWalk<'a> {
    docs: Box<dyn Iterator<Item = Result<(u64, crate::docs::Doc)>> + 'a>,
    current: Option<(u64, u64)>,
    path: PathBuf,
}

impl<'a> HostWalk<'a> {
    fn new(t: &'a DocTable) -> HostWalk<'a> {
        HostWalk {
            docs: Box::new(t.iter()),
            current: None,
            path: t.container().path().to_path_buf(),
        }
    }

    fn host(&mut self, doc: u64) -> Result<u64> {
        loop {
            if let Some((id, host)) = self.current {
                if id == doc {
                    return Ok(host);
                }
                if id > doc {
                    return Err(Error::internal("host walk asked out of order"));
                }
            }
            match self.docs.next() {
                Some(r) => {
                    let (id, d) = r?;
                    self.current = Some((id, d.host));
                }
                None => {
                    return Err(Error::corrupt(
                        &self.path,
                        "doc table",
                        0,
                        format!("docID {doc} of a pair is not in the doc table"),
                    ))
                }
            }
        }
    }
}

/// A sampled pair: (key, a, b, bin, same host).
type Sampled = (u64, u64, u64, usize, bool);

/// Everything but the judging for one algorithm; the sample is returned.
fn count_alg(
    alg: &AlgPairs,
    docs: &DocTable,
    tmp: &Path,
    budget: u64,
    reporter: &SharedReporter,
    opts: &ReportOptions,
) -> Result<(AlgReport, Vec<Sampled>, Vec<[u64; 2]>)> {
    let cfg = |name: &str| {
        SortConfig::new(tmp.join(format!("{}-{name}", alg.name)), budget / 2)
            .label(format!("dedup-report {}: {name}", alg.name))
            .reporter(Arc::clone(reporter))
    };
    // Join 1: a's host; sort by b.
    let mut by_b = ExternalSorter::<(u64, u64, u64, u32)>::new(cfg("by-b"), Combine::None)?;
    {
        let mut walk = HostWalk::new(docs);
        for_each_pair(&alg.pairs, |a, b, sim| {
            let ha = walk.host(a)?;
            by_b.push((b, a, ha, sim.to_bits()))
        })?;
    }
    let mut sorted = by_b.finish()?;
    // Join 2: b's host; endpoints to the per-doc sort; the sample.
    let mut ends = ExternalSorter::<(u64, u32)>::new(cfg("ends"), Combine::None)?;
    let bins = BIN_EDGES.len() - 1;
    let mut cells = vec![[0u64; 2]; bins];
    let mut heaps: Vec<BinaryHeap<Sampled>> = vec![BinaryHeap::new(); bins];
    let (mut pairs, mut same_pairs) = (0u64, 0u64);
    {
        let mut walk = HostWalk::new(docs);
        while let Some((b, a, ha, sim)) = sorted.next_record()? {
            let same = walk.host(b)? == ha;
            pairs += 1;
            same_pairs += same as u64;
            ends.push((a, same as u32))?;
            ends.push((b, same as u32))?;
            let bin = bin_of(f32::from_bits(sim) as f64);
            cells[bin][same as usize] += 1;
            let key = mix64(a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ opts.seed);
            let h = &mut heaps[bin];
            if h.len() < opts.sample_per_bin {
                h.push((key, a, b, bin, same));
            } else if h.peek().is_some_and(|t| key < t.0) {
                h.pop();
                h.push((key, a, b, bin, same));
            }
        }
    }
    drop(sorted);
    // N(u): walk the endpoints grouped by doc.
    let mut sorted = ends.finish()?;
    let (mut n_all, mut n_same, mut n_cross) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let mut current: Option<(u64, u64, u64)> = None;
    let mut close = |c: (u64, u64, u64)| {
        let (_, s, x) = c;
        *n_all.entry(s + x).or_insert(0u64) += 1;
        if s > 0 {
            *n_same.entry(s).or_insert(0u64) += 1;
        }
        if x > 0 {
            *n_cross.entry(x).or_insert(0u64) += 1;
        }
    };
    while let Some((doc, same)) = sorted.next_record()? {
        match &mut current {
            Some((d, s, x)) if *d == doc => {
                if same == 1 {
                    *s += 1
                } else {
                    *x += 1
                }
            }
            _ => {
                if let Some(c) = current.take() {
                    close(c);
                }
                current = Some((doc, (same == 1) as u64, (same == 0) as u64));
            }
        }
    }
    if let Some(c) = current {
        close(c);
    }
    drop(sorted);
    let pages = n_all.values().sum();
    let sample: Vec<Sampled> = heaps.into_iter().flat_map(|h| h.into_vec()).collect();
    let report = AlgReport {
        name: alg.name.clone(),
        pairs,
        same_host_pairs: same_pairs,
        pages,
        n_all,
        n_same_host: n_same,
        n_cross_host: n_cross,
        bins: Vec::new(),
        precision: None,
        precision_same_host: None,
        precision_cross_host: None,
    };
    Ok((
        report,
        sample,
        cells.into_iter().map(|c| [c[0], c[1]]).collect(),
    ))
}

/// The report for each algorithm of `algs` (see the module doc): `docs`
/// is the job's doc table, `for_each_text` calls its argument with every
/// doc's (docID, space-separated words); sorts under `tmp` within `budget`.
pub fn dedup_report(
    algs: &[AlgPairs],
    docs: &Path,
    for_each_text: impl FnOnce(&mut dyn FnMut(u64, &str) -> Result<()>) -> Result<()>,
    tmp: &Path,
    budget: u64,
    reporter: &SharedReporter,
    opts: &ReportOptions,
) -> Result<Vec<AlgReport>> {
    let table = DocTable::open(docs)?;
    let mut reports = Vec::new();
    let mut samples = Vec::new();
    let mut cells = Vec::new();
    for alg in algs {
        let (r, s, c) = count_alg(alg, &table, tmp, budget, reporter, opts)?;
        reports.push(r);
        samples.push(s);
        cells.push(c);
    }
    // One pass over the token streams for every sampled page.
    let wanted: HashSet<u64> = samples
        .iter()
        .flatten()
        .flat_map(|&(_, a, b, _, _)| [a, b])
        .collect();
    let mut sets: HashMap<u64, Vec<u64>> = HashMap::new();
    let k = opts.judge_shingle;
    for_each_text(&mut |doc, words| {
        if wanted.contains(&doc) {
            let set = shingle_set(words.split(' ').filter(|w| !w.is_empty()), k)?;
            sets.insert(doc, set);
        }
        Ok(())
    })?;
    let empty = Vec::new();
    let bins = BIN_EDGES.len() - 1;
    for ((r, sample), cell_counts) in reports.iter_mut().zip(&samples).zip(&cells) {
        let mut judged = vec![[Cell::default(), Cell::default()]; bins];
        for (b, c) in cell_counts.iter().enumerate() {
            judged[b][0].pairs = c[0];
            judged[b][1].pairs = c[1];
        }
        for &(_, a, b, bin, same) in sample {
            let j = jaccard(
                sets.get(&a).unwrap_or(&empty),
                sets.get(&b).unwrap_or(&empty),
            );
            let cell = &mut judged[bin][same as usize];
            cell.judged += 1;
            cell.correct += (j >= opts.judge_threshold - 1e-12) as u64;
        }
        // Weighted precision over a set of cells: Σ pairs·precision / Σ pairs
        // over the cells that have a judged sample.
        let weighted = |cells: &mut dyn Iterator<Item = &Cell>| {
            let (mut num, mut den) = (0.0, 0.0);
            for c in cells {
                if let Some(p) = c.precision() {
                    num += c.pairs as f64 * p;
                    den += c.pairs as f64;
                }
            }
            (den > 0.0).then(|| num / den)
        };
        r.precision = weighted(&mut judged.iter().flatten());
        r.precision_same_host = weighted(&mut judged.iter().map(|c| &c[1]));
        r.precision_cross_host = weighted(&mut judged.iter().map(|c| &c[0]));
        r.bins = judged
            .into_iter()
            .enumerate()
            .map(|(b, [cross, same])| BinPrecision {
                label: if b + 1 == bins {
                    format!("[{:.2}, 1]", BIN_EDGES[b])
                } else {
                    format!("[{:.2}, {:.2})", BIN_EDGES[b], BIN_EDGES[b + 1])
                },
                same_host: same,
                cross_host: cross,
            })
            .collect();
    }
    crate::sort::remove_sort_dir(tmp)?;
    Ok(reports)
}

/// Henzinger's comparison as a table: per algorithm the pairs, the
/// same-host share and the precisions; then per similarity bin.
pub fn table(reports: &[AlgReport], opts: &ReportOptions) -> String {
    let p = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.3}"));
    let mut s = format!(
        "judge: exact Jaccard of {}-word shingles ≥ {}; up to {} pairs judged per bin and algorithm\n",
        opts.judge_shingle, opts.judge_threshold, opts.sample_per_bin
    );
    s.push_str(&format!(
        "{:<10}{:>10}{:>10}{:>11}{:>11}{:>11}{:>11}\n",
        "alg", "pairs", "pages", "same-host", "precision", "same-host", "cross-host"
    ));
    for r in reports {
        s.push_str(&format!(
            "{:<10}{:>10}{:>10}{:>10.1}%{:>11}{:>11}{:>11}\n",
            r.name,
            r.pairs,
            r.pages,
            100.0 * r.same_host_pairs as f64 / r.pairs.max(1) as f64,
            p(r.precision),
            p(r.precision_same_host),
            p(r.precision_cross_host)
        ));
    }
    s.push_str("\nprecision per bin of the algorithm's own similarity (judged/pairs, same-host | cross-host)\n");
    for r in reports {
        for b in &r.bins {
            if b.same_host.pairs + b.cross_host.pairs == 0 {
                continue;
            }
            let c = |c: &Cell| format!("{:>6} {:>4}/{:<6}", p(c.precision()), c.judged, c.pairs);
            s.push_str(&format!(
                "{:<10}{:<14}{}  |  {}\n",
                r.name,
                b.label,
                c(&b.same_host),
                c(&b.cross_host)
            ));
        }
    }
    s
}

/// The distributions of `N(u)` on log–log axes, the algorithms side by side:
/// per algorithm one colour, all near-duplicates as a line with dots, the
/// same-host and cross-host parts dashed and dotted.
pub fn plot_svg(reports: &[AlgReport], title: &str) -> String {
    const COLOURS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];
    let pts = |m: &BTreeMap<u64, u64>| m.iter().map(|(&n, &c)| (n as f64, c as f64)).collect();
    let mut series = Vec::new();
    for (r, colour) in reports.iter().zip(COLOURS.iter().cycle()) {
        let share = 100.0 * r.same_host_pairs as f64 / r.pairs.max(1) as f64;
        series.push(Series {
            label: format!("{}: all, {share:.0}% same-host", r.name),
            color: colour.to_string(),
            style: SeriesStyle::LineDots,
            points: pts(&r.n_all),
        });
        series.push(Series {
            label: format!("{}: same-host only", r.name),
            color: colour.to_string(),
            style: SeriesStyle::Dashed,
            points: pts(&r.n_same_host),
        });
        series.push(Series {
            label: format!("{}: cross-host only", r.name),
            color: colour.to_string(),
            style: SeriesStyle::Dots,
            points: pts(&r.n_cross_host),
        });
    }
    // Not drawn: keeps counts of 1 off the x axis, and widens the x axis
    // three decades past the largest N so the legend has room on the right.
    let max_n = reports
        .iter()
        .filter_map(|r| r.n_all.keys().next_back())
        .max()
        .copied()
        .unwrap_or(1);
    series.push(Series {
        label: String::new(),
        color: "none".into(),
        style: SeriesStyle::Dots,
        points: vec![(1.0, 0.1), (max_n as f64 * 1000.0, 0.1)],
    });
    loglog_plot_svg(
        title,
        "N(u): near-duplicates of a page",
        "pages with N(u) near-duplicates",
        &series,
    )
}

#[cfg(test)]
mod tests;

//! Evaluation of a near-duplicate run against exact similarities
//! (`webmill dedup-eval`).
//!
//! A sketch only *estimates* a similarity, so an algorithm reports a pair with
//! a probability that depends on the pair's true similarity — the curves of
//! [`theory`](super::theory). This module measures that curve on a job:
//!
//! 1. **Sample.** The `N` docs (2,000 by default; all when the job has fewer)
//!    whose `xxh3_64(docID as u64 little-endian)` are smallest, among the docs
//!    with a token stream — and, for the sketching algorithms, a non-empty one:
//!    an empty page has no sketch (see [`super`]), so it cannot be reported and
//!    is left out. The choice depends only on the docIDs, so it is the same on
//!    every run and every machine. The sample's token streams are read in one
//!    pass over `text.wm` (a bounded max-heap keeps the `N` smallest hashes);
//!    `N` is small, so the sample lives in memory.
//! 2. **Truth.** For every pair of the sample, the exact similarity the
//!    algorithm estimates, with its parameters from the stage's record in
//!    `job.json`: the Jaccard coefficient of the `k`-word shingle sets (the same
//!    Rabin fingerprints as the sketches; `k` = 4 for min-hash and 10 for Alg. B by
//!    default) for `broder` and `minhash`, the cosine of the term-frequency
//!    vectors (words identified by their fingerprints, as Alg. C's token vectors
//!    are) for `charikar`, and equality of the token sequences (1 or 0) for
//!    `exact`. The `N(N−1)/2` pairs are enumerated in parallel (rayon) and only
//!    counted: memory stays linear in `N`.
//! 3. **Reported.** The stage's pair file is streamed; the pairs with both ends
//!    in the sample are kept (a hash set; at most a few per sampled doc).
//! 4. **Bins.** Pairs are binned by true similarity (`[0, 0.5)`, `[0.5, 0.6)`, …,
//!    `[0.95, 1)`, `[1]` for Jaccard; finer near 1 for cosine, where Alg. C's
//!    curve lives). Per bin: the pairs, the reported ones, the detection rate, and
//!    the theoretical probability averaged over the bin's pairs, with the
//!    expected number of reported pairs and the z-score of the difference
//!    (`(reported − Σp) / √Σp(1−p)`: pairs reported independently).
//! 5. **Summary.** Recall on the pairs of similarity ≥ 0.9 and precision: the
//!    reported pairs whose true similarity reaches the algorithm's *target*
//!    ([`default_target`]) over all reported pairs of the sample.
//!
//! # The theoretical curves
//!
//! * `minhash`: a pair is reported when it becomes a candidate (one of the 20
//!   band keys of 10 entries equal) **and** passes verification (at least
//!   `⌈threshold · 200⌉` of the 200 entries equal). The two events are not
//!   independent — a fully equal band contributes 10 equal entries — so they are
//!   not multiplied: under the model of entries equal independently with
//!   probability `J`, the bands' equal-entry counts are independent
//!   `Binomial(10, J)`, and a dynamic programme over the bands, on the state
//!   (equal entries so far, some band fully equal), gives the joint probability
//!   exactly ([`minhash_detection_probability`]). It lies below both the banding
//!   S-curve ([`banding_probability`]) and CS124's curve
//!   ([`minhash_probability`]).
//! * `broder`: [`broder_probability`] (≥ 2 of 6 supershingles equal);
//!   `charikar`: [`charikar_probability`] (≥ 372 of 384 bits); `exact`: 1 for
//!   equal token sequences, 0 otherwise (a 64-bit fingerprint collision aside).
//! * With `--verify exact` (stage parameter `"verify": "exact"`), `minhash` and
//!   `broder` keep a candidate when the exact Jaccard coefficient of its shingle
//!   sets — the very similarity measured here — reaches the threshold: the curve
//!   is the candidate curve ([`banding_probability`] for min-hash,
//!   [`broder_probability`] for Alg. B) for `J ≥ threshold`, and 0 below it; the
//!   default precision target is the threshold, so precision is 1 by
//!   construction.
//!
//! Curves are tabulated once on a grid of 10,001 points and interpolated
//! linearly (error far below the sampling noise of any bin).
//!
//! Limits of the comparison: groups of docs sharing a key beyond the stage's
//! `max_group` are linked to their first doc only, so pairs inside such a group
//! may be missing from the pair file by design (the stage's `capped_groups`
//! figure, printed with the report); and the curves assume the entries of two
//! sketches agree independently, which is what the measured rates test.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fmt::Write as _;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::broder::BRODER_SHINGLE_LEN;
use super::files::for_each_pair;
use super::minhash::{DEFAULT_BANDS, DEFAULT_ROWS, MINHASH_LEN, MINHASH_SHINGLE_LEN};
use super::shingle::{exact_fingerprint, word_fingerprints, Shingler};
use super::stage::Dedup;
use super::theory::{
    banding_probability, broder_probability, charikar_probability, minhash_probability,
};
use super::Alg;
use crate::error::{Error, Result};
use crate::job::{JobFile, JobView, StageId};

/// Default sample size.
pub const DEFAULT_SAMPLE: usize = 2000;
/// Recall is measured on the pairs at or above this similarity.
pub const RECALL_AT: f64 = 0.9;
/// Bin edges for Jaccard coefficients (`broder`, `minhash`, `exact`): bins
/// `[e_i, e_{i+1})`, then `[1]`.
pub const JACCARD_EDGES: [f64; 10] = [0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0];
/// Bin edges for cosines (`charikar`): Alg. C's curve rises between 0.98 and 1.
pub const COSINE_EDGES: [f64; 11] = [
    0.0, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 1.0,
];
/// Points of the tabulated theoretical curves.
const GRID: usize = 10_000;

/// The precision target of an algorithm: a reported pair counts as correct when
/// its true similarity reaches it.
///
/// * `minhash`: its threshold (0.8 by default): the similarity it is asked to find.
/// * `broder`: Jaccard 0.8 of 10-shingles, where Alg. B's curve is 2.6%: a pair
///   below it is reported only by chance.
/// * `charikar`: cosine 0.98, where Alg. C's curve is 0.5% (its 50% point is
///   cosine 0.995, 372 of 384 bits).
/// * `exact`: 1 (equal token sequences).
pub fn default_target(alg: Alg, minhash_threshold: f64) -> f64 {
    match alg {
        Alg::MinHash => minhash_threshold,
        Alg::Broder => 0.8,
        Alg::Charikar => 0.98,
        Alg::Exact => 1.0,
    }
}

/// The probability that min-hash reports a pair of Jaccard coefficient `s`:
/// some band of `rows` entries (of `bands`) fully equal **and** at least
/// `⌈threshold · n⌉` of the `n` entries equal, each entry equal independently
/// with probability `s`. The entries beyond `bands · rows` (if any) count
/// towards the threshold only. Exact, by a dynamic programme over the bands.
pub fn minhash_detection_probability(
    s: f64,
    bands: usize,
    rows: usize,
    n: usize,
    threshold: f64,
) -> f64 {
    let s = s.clamp(0.0, 1.0);
    let need = (threshold.clamp(0.0, 1.0) * n as f64 - 1e-9)
        .ceil()
        .max(0.0) as usize;
    let banded = (bands * rows).min(n);
    let bands = banded / rows.max(1);
    if bands == 0 {
        return 0.0;
    }
    if s >= 1.0 {
        return 1.0;
    }
    let binom = |m: usize| -> Vec<f64> {
        // P(X = x), X ~ Binomial(m, s), by the recurrence on x.
        let mut out = Vec::with_capacity(m + 1);
        let mut c = 1f64; // C(m, x)
        for x in 0..=m {
            out.push(c * s.powi(x as i32) * (1.0 - s).powi((m - x) as i32));
            c = c * (m - x) as f64 / (x + 1) as f64;
        }
        out
    };
    let band = binom(rows);
    // dist[flag][t]: t equal entries so far; flag = some band fully equal.
    let mut dist = [vec![0f64; n + 1], vec![0f64; n + 1]];
    dist[0][0] = 1.0;
    let mut top = 0;
    for _ in 0..bands {
        let mut next = [vec![0f64; n + 1], vec![0f64; n + 1]];
        for (flag, row) in dist.iter().enumerate() {
            for (t, &p) in row.iter().enumerate().take(top + 1) {
                if p == 0.0 {
                    continue;
                }
                for (x, &q) in band.iter().enumerate() {
                    let f = if x == rows { 1 } else { flag };
                    next[f][t + x] += p * q;
                }
            }
        }
        dist = next;
        top += rows;
    }
    let rest = n - bands * rows;
    let tail = binom(rest);
    // P(flag ∧ T + R ≥ need), R ~ Binomial(rest, s).
    let mut total = 0.0;
    for (t, &p) in dist[1].iter().enumerate().take(top + 1) {
        if p == 0.0 {
            continue;
        }
        let r_need = need.saturating_sub(t);
        let q: f64 = tail.iter().skip(r_need).sum();
        total += p * q;
    }
    total.clamp(0.0, 1.0)
}

/// What `dedup-eval` compares and against which curve, from the stage's
/// parameters.
#[derive(Clone, Debug, Serialize)]
pub struct EvalSetup {
    /// The algorithm.
    pub algorithm: String,
    /// The true similarity measured.
    pub similarity: String,
    /// Shingle length in words (broder, minhash).
    pub shingle: Option<usize>,
    /// Min-hash threshold; with exact verification, the Jaccard coefficient a
    /// broder or minhash pair must reach.
    pub threshold: Option<f64>,
    /// How candidates were verified (`"sketch"` or `"exact"`; broder and
    /// minhash).
    pub verify: Option<String>,
    /// The theoretical curve, in words.
    pub theory: String,
    /// The precision target.
    pub target: f64,
    /// Recall is measured on pairs at or above this similarity.
    pub recall_at: f64,
}

/// One similarity bin of the report.
#[derive(Clone, Debug, Serialize)]
pub struct BinReport {
    /// Lower edge (inclusive).
    pub lo: f64,
    /// Upper edge (exclusive, except for the last bin `[1, 1]`).
    pub hi: f64,
    /// The bin as text, e.g. `[0.80, 0.85)`.
    pub label: String,
    /// Sample pairs whose true similarity falls in the bin.
    pub pairs: u64,
    /// Of those, the pairs in the algorithm's pair file.
    pub reported: u64,
    /// `reported / pairs` (`None` for an empty bin).
    pub rate: Option<f64>,
    /// The theoretical detection probability averaged over the bin's pairs.
    pub theory: Option<f64>,
    /// The expected number of reported pairs, `Σ p`.
    pub expected: f64,
    /// `(reported − Σp) / √Σp(1−p)`, `None` when the variance is 0.
    pub z: Option<f64>,
    /// The mean true similarity of the bin's pairs.
    pub mean_similarity: Option<f64>,
}

/// The result of an evaluation.
#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    /// What was compared.
    pub setup: EvalSetup,
    /// Docs with a token stream (non-empty for the sketching algorithms).
    pub docs: u64,
    /// Docs with an empty token stream left out (sketching algorithms).
    pub empty_docs: u64,
    /// Docs in the sample.
    pub sample: u64,
    /// Pairs of the sample, `n(n−1)/2`.
    pub pairs: u64,
    /// Pairs of the whole pair file.
    pub reported_total: u64,
    /// Pairs of the pair file with both ends in the sample.
    pub reported: u64,
    /// The stage's capped groups (pairs inside them may be missing by design).
    pub capped_groups: u64,
    /// The bins.
    pub bins: Vec<BinReport>,
    /// Sample pairs with similarity ≥ `recall_at`.
    pub relevant: u64,
    /// Of those, the reported ones.
    pub relevant_reported: u64,
    /// `relevant_reported / relevant`.
    pub recall: Option<f64>,
    /// The expected recall on those pairs (mean theoretical probability).
    pub expected_recall: Option<f64>,
    /// Reported pairs whose true similarity reaches the target.
    pub reported_on_target: u64,
    /// `reported_on_target / reported`.
    pub precision: Option<f64>,
    /// The precision the curve predicts on this sample: `Σ p` over the pairs
    /// at or above the target over `Σ p` over all pairs. A curve that rises
    /// at the target (min-hash's) reports pairs just below it by design.
    pub expected_precision: Option<f64>,
    /// Seconds the evaluation took.
    pub seconds: f64,
}

/// How to evaluate.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// The algorithm whose finished `dedup-ALG` stage is evaluated.
    pub alg: Alg,
    /// Sample size (all docs when the job has fewer).
    pub sample: usize,
    /// Precision target; `None`: [`default_target`].
    pub target: Option<f64>,
}

impl EvalOptions {
    /// The default sample for `alg`.
    pub fn new(alg: Alg) -> EvalOptions {
        EvalOptions {
            alg,
            sample: DEFAULT_SAMPLE,
            target: None,
        }
    }
}

/// The measure of true similarity.
#[derive(Clone, Copy, Debug)]
enum Measure {
    Jaccard(usize),
    Cosine,
    Equal,
}

/// A sampled doc, ready for pairwise comparison.
enum Profile {
    /// Sorted, distinct shingle fingerprints.
    Shingles(Vec<u64>),
    /// Sorted (word fingerprint, count), and the squared norm.
    Terms(Vec<(u64, u32)>, f64),
    /// Exact fingerprint and the normalized token sequence.
    Tokens(u64, String),
}

/// A theoretical curve, tabulated; 0 below `floor` (exact verification's
/// threshold, a step that interpolation would blur).
struct Curve {
    step: bool,
    table: Vec<f64>,
    floor: Option<f64>,
}

impl Curve {
    /// `f` tabulated, 0 below `floor` (less 1e-12, the tolerance of the stage
    /// and of the precision target).
    fn with_floor(f: impl Fn(f64) -> f64 + Sync, floor: Option<f64>) -> Curve {
        Curve {
            floor,
            ..Curve::new(f, false)
        }
    }

    fn new(f: impl Fn(f64) -> f64 + Sync, step: bool) -> Curve {
        let table = if step {
            Vec::new()
        } else {
            (0..=GRID)
                .into_par_iter()
                .map(|i| f(i as f64 / GRID as f64))
                .collect()
        };
        Curve {
            step,
            table,
            floor: None,
        }
    }

    #[inline]
    fn at(&self, s: f64) -> f64 {
        if self.floor.is_some_and(|t| s < t - 1e-12) {
            return 0.0;
        }
        if self.step {
            return if s >= 1.0 { 1.0 } else { 0.0 };
        }
        let x = s.clamp(0.0, 1.0) * GRID as f64;
        let i = (x.floor() as usize).min(GRID - 1);
        let f = x - i as f64;
        self.table[i] * (1.0 - f) + self.table[i + 1] * f
    }
}

/// Per-bin sums.
#[derive(Clone, Copy, Default)]
struct BinAcc {
    pairs: u64,
    reported: u64,
    sum_s: f64,
    sum_p: f64,
    sum_var: f64,
}

#[derive(Clone, Default)]
struct Acc {
    bins: Vec<BinAcc>,
    relevant: u64,
    relevant_reported: u64,
    relevant_p: f64,
    reported: u64,
    reported_on_target: u64,
    p_total: f64,
    p_on_target: f64,
}

impl Acc {
    fn new(bins: usize) -> Acc {
        Acc {
            bins: vec![BinAcc::default(); bins],
            ..Acc::default()
        }
    }

    fn merge(mut self, o: Acc) -> Acc {
        for (a, b) in self.bins.iter_mut().zip(&o.bins) {
            a.pairs += b.pairs;
            a.reported += b.reported;
            a.sum_s += b.sum_s;
            a.sum_p += b.sum_p;
            a.sum_var += b.sum_var;
        }
        self.relevant += o.relevant;
        self.relevant_reported += o.relevant_reported;
        self.relevant_p += o.relevant_p;
        self.reported += o.reported;
        self.reported_on_target += o.reported_on_target;
        self.p_total += o.p_total;
        self.p_on_target += o.p_on_target;
        self
    }
}

/// The size of the intersection of two sorted, distinct sets; gallops through
/// the larger one when the sizes are far apart.
fn intersection(a: &[u64], b: &[u64]) -> usize {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if small.is_empty() {
        return 0;
    }
    if large.len() / small.len() >= 16 {
        let mut rest = large;
        let mut n = 0;
        for &x in small {
            // Exponential search for x in rest.
            let mut hi = 1;
            while hi < rest.len() && rest[hi] < x {
                hi *= 2;
            }
            let lo = hi / 2;
            let hi = hi.min(rest.len());
            let pos = lo + rest[lo..hi].partition_point(|&y| y < x);
            if pos < rest.len() && rest[pos] == x {
                n += 1;
                rest = &rest[pos + 1..];
            } else {
                rest = &rest[pos..];
            }
            if rest.is_empty() {
                break;
            }
        }
        return n;
    }
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        n += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    n
}

fn similarity(a: &Profile, b: &Profile) -> f64 {
    match (a, b) {
        (Profile::Shingles(x), Profile::Shingles(y)) => {
            let common = intersection(x, y);
            let union = x.len() + y.len() - common;
            if union == 0 {
                1.0
            } else {
                common as f64 / union as f64
            }
        }
        (Profile::Terms(x, nx), Profile::Terms(y, ny)) => {
            if *nx == 0.0 || *ny == 0.0 {
                return if *nx == *ny { 1.0 } else { 0.0 };
            }
            let (mut i, mut j, mut dot) = (0, 0, 0f64);
            while i < x.len() && j < y.len() {
                match x[i].0.cmp(&y[j].0) {
                    std::cmp::Ordering::Less => i += 1,
                    std::cmp::Ordering::Greater => j += 1,
                    std::cmp::Ordering::Equal => {
                        dot += f64::from(x[i].1) * f64::from(y[j].1);
                        i += 1;
                        j += 1;
                    }
                }
            }
            let c = dot / (nx * ny).sqrt();
            if c >= 1.0 - 1e-12 {
                1.0
            } else {
                c
            }
        }
        (Profile::Tokens(fa, wa), Profile::Tokens(fb, wb)) if fa == fb && wa == wb => 1.0,
        _ => 0.0,
    }
}

fn profile(measure: Measure, words: &str, shingler: Option<&Shingler>) -> Profile {
    let tokens = || words.split(' ').filter(|w| !w.is_empty());
    match measure {
        Measure::Jaccard(_) => {
            let mut fps = Vec::new();
            word_fingerprints(tokens(), &mut fps);
            let mut set = Vec::new();
            if let Some(sh) = shingler {
                sh.set_into(&fps, &mut set);
            }
            set.shrink_to_fit();
            Profile::Shingles(set)
        }
        Measure::Cosine => {
            let mut fps = Vec::new();
            word_fingerprints(tokens(), &mut fps);
            fps.sort_unstable();
            let mut terms: Vec<(u64, u32)> = Vec::new();
            for fp in fps {
                match terms.last_mut() {
                    Some((f, c)) if *f == fp => *c += 1,
                    _ => terms.push((fp, 1)),
                }
            }
            let norm = terms
                .iter()
                .map(|&(_, c)| f64::from(c) * f64::from(c))
                .sum();
            terms.shrink_to_fit();
            Profile::Terms(terms, norm)
        }
        Measure::Equal => {
            let normalized: Vec<&str> = tokens().collect();
            Profile::Tokens(exact_fingerprint(tokens()), normalized.join(" "))
        }
    }
}

/// Bin edges and label format for a measure.
fn edges(measure: Measure) -> &'static [f64] {
    match measure {
        Measure::Cosine => &COSINE_EDGES,
        _ => &JACCARD_EDGES,
    }
}

/// Index of the bin of `s`: `[e_i, e_{i+1})`, the last bin `[1]`.
#[inline]
fn bin_of(edges: &[f64], s: f64) -> usize {
    if s >= 1.0 {
        return edges.len() - 1;
    }
    edges.partition_point(|&e| e <= s).saturating_sub(1)
}

/// Evaluates the finished `dedup-ALG` stage of `job` on a sample of its docs.
pub fn evaluate(job: &JobView, opts: &EvalOptions) -> Result<EvalReport> {
    let started = Instant::now();
    let alg = opts.alg;
    if opts.sample < 2 {
        return Err(Error::usage(format!(
            "--sample must be at least 2 docs, got {}",
            opts.sample
        )));
    }
    let stage = StageId::Dedup(alg);
    let rec = job.require(stage)?;
    let params: super::stage::DedupParams =
        serde_json::from_value(rec.params.clone()).map_err(|e| {
            Error::corrupt(
                job.dir().join("job.json"),
                format!("parameters of {stage}"),
                0,
                e.to_string(),
            )
        })?;
    let capped_groups = job.figures::<Dedup>(stage)?.map_or(0, |f| f.capped_groups);
    let shingle = match alg {
        Alg::Broder | Alg::MinHash => Some(params.shingle.unwrap_or(if alg == Alg::Broder {
            BRODER_SHINGLE_LEN
        } else {
            MINHASH_SHINGLE_LEN
        })),
        _ => None,
    };
    let verify = params.verify.clone();
    let exact_verify = verify.as_deref() == Some("exact");
    let threshold = (alg == Alg::MinHash || exact_verify).then(|| {
        params
            .threshold
            .unwrap_or(super::minhash::MINHASH_THRESHOLD)
    });
    let target = opts.target.unwrap_or_else(|| match threshold {
        Some(t) if exact_verify => t,
        _ => default_target(alg, threshold.unwrap_or(0.8)),
    });
    if !(target > 0.0 && target <= 1.0) {
        return Err(Error::usage(format!(
            "--target must be in (0, 1], got {target}"
        )));
    }
    let measure = match alg {
        Alg::Exact => Measure::Equal,
        Alg::Charikar => Measure::Cosine,
        Alg::Broder | Alg::MinHash => Measure::Jaccard(shingle.unwrap_or(MINHASH_SHINGLE_LEN)),
    };
    let floor = threshold.filter(|_| exact_verify);
    let (similarity_name, theory_name, curve) = match (alg, measure) {
        (Alg::MinHash, Measure::Jaccard(k)) if exact_verify => (
            format!("Jaccard of {k}-word shingle sets"),
            format!(
                "P(one of {DEFAULT_BANDS} bands of {DEFAULT_ROWS} entries equal) = 1 − (1 − J^{DEFAULT_ROWS})^{DEFAULT_BANDS} for J ≥ {t}, 0 below (exact verification)",
                t = threshold.unwrap_or(0.8)
            ),
            Curve::with_floor(
                |s| banding_probability(s, DEFAULT_BANDS, DEFAULT_ROWS),
                floor,
            ),
        ),
        (Alg::Broder, Measure::Jaccard(k)) if exact_verify => (
            format!("Jaccard of {k}-word shingle sets"),
            format!(
                "P(≥ 2 of 6 supershingles of 14 min-values equal) = 1 − (1−J^14)^6 − 6 J^14 (1−J^14)^5 for J ≥ {t}, 0 below (exact verification)",
                t = threshold.unwrap_or(0.8)
            ),
            Curve::with_floor(broder_probability, floor),
        ),
        (Alg::MinHash, Measure::Jaccard(k)) => {
            let t = threshold.unwrap_or(0.8);
            let need = (t * MINHASH_LEN as f64 - 1e-9).ceil();
            (
                format!("Jaccard of {k}-word shingle sets"),
                format!(
                    "P(one of {DEFAULT_BANDS} bands of {DEFAULT_ROWS} entries equal AND ≥ {need} of {MINHASH_LEN} entries equal), entries equal independently with probability J (exact joint probability)"
                ),
                Curve::new(
                    move |s| {
                        minhash_detection_probability(
                            s,
                            DEFAULT_BANDS,
                            DEFAULT_ROWS,
                            MINHASH_LEN,
                            t,
                        )
                    },
                    false,
                ),
            )
        }
        (_, Measure::Jaccard(k)) => (
            format!("Jaccard of {k}-word shingle sets"),
            "P(≥ 2 of 6 supershingles of 14 min-values equal) = 1 − (1−J^14)^6 − 6 J^14 (1−J^14)^5"
                .to_string(),
            Curve::new(broder_probability, false),
        ),
        (_, Measure::Cosine) => (
            "cosine of term-frequency vectors".to_string(),
            "P(Binomial(384, 1 − arccos(cos)/π) ≥ 372)".to_string(),
            Curve::new(charikar_probability, false),
        ),
        (_, Measure::Equal) => (
            "equality of token sequences (1 or 0)".to_string(),
            "1 for equal token sequences, 0 otherwise".to_string(),
            Curve::new(|s| s, true),
        ),
    };

    // 1. The sample: the N smallest xxh3(docID), in one pass.
    let skip_empty = alg != Alg::Exact;
    let mut heap: BinaryHeap<(u64, u64, String)> = BinaryHeap::new();
    let (mut docs, mut empty_docs) = (0u64, 0u64);
    let (text, pagedoc) = (job.file(JobFile::Text)?, job.file(JobFile::PageDoc)?);
    crate::ingest::text::for_each_page_text(&text, &pagedoc, |_, doc, words| {
        if skip_empty && words.split(' ').all(|w| w.is_empty()) {
            empty_docs += 1;
            return Ok(());
        }
        docs += 1;
        let h = xxhash_rust::xxh3::xxh3_64(&doc.to_le_bytes());
        if heap.len() < opts.sample {
            heap.push((h, doc, words.to_string()));
        } else if heap.peek().is_some_and(|top| (h, doc) < (top.0, top.1)) {
            heap.pop();
            heap.push((h, doc, words.to_string()));
        }
        Ok(())
    })?;
    let mut sample: Vec<(u64, String)> = heap.into_iter().map(|(_, d, w)| (d, w)).collect();
    sample.sort_unstable_by_key(|(d, _)| *d);
    let n = sample.len();
    let index: HashMap<u64, u32> = sample
        .iter()
        .enumerate()
        .map(|(i, (d, _))| (*d, i as u32))
        .collect();

    // 2. Profiles, in parallel.
    let shingler = match measure {
        Measure::Jaccard(k) => Some(Shingler::new(k)?),
        _ => None,
    };
    let profiles: Vec<Profile> = sample
        .par_iter()
        .map(|(_, w)| profile(measure, w, shingler.as_ref()))
        .collect();
    drop(sample);

    // 3. Reported pairs inside the sample.
    let mut reported: HashSet<u64> = HashSet::new();
    let mut reported_total = 0u64;
    for_each_pair(&job.file(JobFile::Pairs(alg))?, |a, b, _| {
        reported_total += 1;
        if let (Some(&i), Some(&j)) = (index.get(&a), index.get(&b)) {
            let (i, j) = if i < j { (i, j) } else { (j, i) };
            reported.insert(u64::from(i) << 32 | u64::from(j));
        }
        Ok(())
    })?;

    // 4. All pairs, in parallel, counted only.
    let edges = edges(measure);
    let nbins = edges.len();
    let acc = (0..n)
        .into_par_iter()
        .fold(
            || Acc::new(nbins),
            |mut acc, i| {
                let pi = &profiles[i];
                for (j, pj) in profiles.iter().enumerate().skip(i + 1) {
                    let s = similarity(pi, pj);
                    let p = curve.at(s);
                    let hit = reported.contains(&((i as u64) << 32 | j as u64));
                    let b = &mut acc.bins[bin_of(edges, s)];
                    b.pairs += 1;
                    b.reported += u64::from(hit);
                    b.sum_s += s;
                    b.sum_p += p;
                    b.sum_var += p * (1.0 - p);
                    if s >= RECALL_AT {
                        acc.relevant += 1;
                        acc.relevant_reported += u64::from(hit);
                        acc.relevant_p += p;
                    }
                    let on_target = s >= target - 1e-12;
                    acc.p_total += p;
                    if on_target {
                        acc.p_on_target += p;
                    }
                    if hit {
                        acc.reported += 1;
                        acc.reported_on_target += u64::from(on_target);
                    }
                }
                acc
            },
        )
        .reduce(|| Acc::new(nbins), Acc::merge);
    debug_assert_eq!(acc.reported, reported.len() as u64);

    let label = |i: usize| {
        if i + 1 == nbins {
            return "[1]".to_string();
        }
        let two = |x: f64| ((x * 100.0).round() / 100.0 - x).abs() < 1e-9;
        let prec = if two(edges[i]) && two(edges[i + 1]) {
            2
        } else {
            3
        };
        format!("[{:.prec$}, {:.prec$})", edges[i], edges[i + 1])
    };
    let bins = acc
        .bins
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let some = b.pairs > 0;
            BinReport {
                lo: edges[i],
                hi: if i + 1 == nbins { 1.0 } else { edges[i + 1] },
                label: label(i),
                pairs: b.pairs,
                reported: b.reported,
                rate: some.then(|| b.reported as f64 / b.pairs as f64),
                theory: some.then(|| b.sum_p / b.pairs as f64),
                expected: b.sum_p,
                z: (b.sum_var > 1e-12).then(|| (b.reported as f64 - b.sum_p) / b.sum_var.sqrt()),
                mean_similarity: some.then(|| b.sum_s / b.pairs as f64),
            }
        })
        .collect();
    let ratio = |x: u64, y: u64| (y > 0).then(|| x as f64 / y as f64);
    Ok(EvalReport {
        setup: EvalSetup {
            algorithm: alg.name().to_string(),
            similarity: similarity_name,
            shingle,
            threshold,
            verify,
            theory: theory_name,
            target,
            recall_at: RECALL_AT,
        },
        docs,
        empty_docs,
        sample: n as u64,
        pairs: (n as u64) * (n as u64).saturating_sub(1) / 2,
        reported_total,
        reported: reported.len() as u64,
        capped_groups,
        bins,
        relevant: acc.relevant,
        relevant_reported: acc.relevant_reported,
        recall: ratio(acc.relevant_reported, acc.relevant),
        expected_recall: (acc.relevant > 0).then(|| acc.relevant_p / acc.relevant as f64),
        reported_on_target: acc.reported_on_target,
        precision: ratio(acc.reported_on_target, acc.reported),
        expected_precision: (acc.p_total > 0.0).then(|| acc.p_on_target / acc.p_total),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The theoretical detection probability of `report`'s algorithm at true
/// similarity `s`, with its parameters (untabulated).
pub fn theory_at(setup: &EvalSetup, s: f64) -> f64 {
    if setup.verify.as_deref() == Some("exact") {
        let t = setup.threshold.unwrap_or(0.8);
        if s < t - 1e-12 {
            return 0.0;
        }
        match setup.algorithm.as_str() {
            "minhash" => return banding_probability(s, DEFAULT_BANDS, DEFAULT_ROWS),
            "broder" => return broder_probability(s),
            _ => {}
        }
    }
    match setup.algorithm.as_str() {
        "minhash" => minhash_detection_probability(
            s,
            DEFAULT_BANDS,
            DEFAULT_ROWS,
            MINHASH_LEN,
            setup.threshold.unwrap_or(0.8),
        ),
        "broder" => broder_probability(s),
        "charikar" => charikar_probability(s),
        _ => {
            if s >= 1.0 {
                1.0
            } else {
                0.0
            }
        }
    }
}

impl EvalReport {
    /// The report as a text table with its summary lines.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let s = &self.setup;
        let _ = writeln!(
            out,
            "dedup-eval {}: {} of {} docs sampled (smallest xxh3 of docID{}), {} pairs; {} pairs reported in all, {} inside the sample",
            s.algorithm,
            self.sample,
            self.docs,
            if self.empty_docs > 0 {
                format!("; {} empty docs left out", self.empty_docs)
            } else {
                String::new()
            },
            self.pairs,
            self.reported_total,
            self.reported
        );
        let _ = writeln!(out, "similarity: {}", s.similarity);
        if let Some(v) = &s.verify {
            let _ = writeln!(out, "verification: {v}");
        }
        let _ = writeln!(out, "theory: {}", s.theory);
        let _ = writeln!(
            out,
            "{:<16} {:>12} {:>9} {:>8} {:>8} {:>10} {:>7}",
            "bin", "pairs", "reported", "rate", "theory", "expected", "z"
        );
        let f = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.4}"));
        for b in &self.bins {
            let _ = writeln!(
                out,
                "{:<16} {:>12} {:>9} {:>8} {:>8} {:>10.1} {:>7}",
                b.label,
                b.pairs,
                b.reported,
                f(b.rate),
                f(b.theory),
                b.expected,
                b.z.map_or("-".to_string(), |z| format!("{z:+.2}"))
            );
        }
        let _ = writeln!(
            out,
            "recall on pairs with similarity ≥ {}: {} of {} = {} (theory {})",
            s.recall_at,
            self.relevant_reported,
            self.relevant,
            f(self.recall),
            f(self.expected_recall)
        );
        let _ = writeln!(
            out,
            "precision (reported pairs with similarity ≥ {}): {} of {} = {} (theory {})",
            s.target,
            self.reported_on_target,
            self.reported,
            f(self.precision),
            f(self.expected_precision)
        );
        if self.capped_groups > 0 {
            let _ = writeln!(
                out,
                "note: the stage capped {} groups (pairs inside them are linked to the group's first doc only)",
                self.capped_groups
            );
        }
        let _ = writeln!(out, "evaluated in {:.1} s", self.seconds);
        out
    }

    /// An SVG of the measured detection rate per bin (at the bin's mean
    /// similarity) against the theoretical curve and its per-bin average.
    pub fn plot_svg(&self) -> String {
        // The first bin is a catch-all: start the x axis at the second edge.
        let x0 = self.bins.get(1).map_or(0.0, |b| b.lo);
        let curve: Vec<(f64, f64)> = (0..=400)
            .map(|i| {
                let x = x0 + (1.0 - x0) * i as f64 / 400.0;
                (x, theory_at(&self.setup, x))
            })
            .collect();
        let pick = |v: fn(&BinReport) -> Option<f64>| -> Vec<(f64, f64)> {
            self.bins
                .iter()
                .filter(|b| b.lo >= x0)
                .filter_map(|b| Some((b.mean_similarity?, v(b)?)))
                .collect()
        };
        let measured = pick(|b| b.rate);
        let averaged = pick(|b| b.theory);
        use crate::plot::SeriesStyle;
        crate::plot::series_plot_svg(
            &format!(
                "dedup-eval {}: detection rate per bin ({} docs, {} pairs)",
                self.setup.algorithm, self.sample, self.pairs
            ),
            &self.setup.similarity,
            "P(reported)",
            &[
                crate::plot::Series {
                    label: "theory".into(),
                    color: "#1f77b4".into(),
                    style: SeriesStyle::Line,
                    points: curve,
                },
                crate::plot::Series {
                    label: "theory, bin average".into(),
                    color: "#2ca02c".into(),
                    style: SeriesStyle::LineDots,
                    points: averaged,
                },
                crate::plot::Series {
                    label: "measured".into(),
                    color: "#d62728".into(),
                    style: SeriesStyle::LineDots,
                    points: measured,
                },
            ],
            (x0, 1.0),
            (0.0, 1.0),
        )
    }
}

/// The S-curve and CS124's curve, for reference next to the min-hash curve.
pub fn minhash_bounds(s: f64, threshold: f64) -> (f64, f64) {
    (
        banding_probability(s, DEFAULT_BANDS, DEFAULT_ROWS),
        minhash_probability(s, threshold, MINHASH_LEN),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joint_minhash_probability_by_simulation() {
        // Monte Carlo with a splitmix64 stream: entries equal with probability s.
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for &s in &[0.7, 0.75, 0.8, 0.85, 0.9] {
            let trials = 20_000;
            let mut hits = 0;
            for _ in 0..trials {
                let eq: Vec<bool> = (0..200)
                    .map(|_| (next() >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - s)
                    .collect();
                let band = eq.chunks(10).any(|c| c.iter().all(|&e| e));
                let total = eq.iter().filter(|&&e| e).count();
                hits += usize::from(band && total >= 160);
            }
            let p = minhash_detection_probability(s, 20, 10, 200, 0.8);
            let m = hits as f64 / trials as f64;
            let sd = (p * (1.0 - p) / trials as f64).sqrt();
            assert!((m - p).abs() <= 4.0 * sd + 1e-3, "s={s}: {m} vs {p}");
            let (band, cs) = minhash_bounds(s, 0.8);
            assert!(p <= band + 1e-12 && p <= cs + 1e-12);
        }
    }

    #[test]
    fn joint_minhash_probability_limits() {
        assert_eq!(minhash_detection_probability(1.0, 20, 10, 200, 0.8), 1.0);
        assert_eq!(minhash_detection_probability(0.0, 20, 10, 200, 0.8), 0.0);
        // Threshold 0: the banding curve alone.
        for s in [0.3, 0.6, 0.8] {
            let a = minhash_detection_probability(s, 20, 10, 200, 0.0);
            assert!((a - banding_probability(s, 20, 10)).abs() < 1e-12);
        }
        // One band of all entries: s^200 whatever the threshold.
        let a = minhash_detection_probability(0.99, 1, 200, 200, 0.8);
        assert!((a - 0.99f64.powi(200)).abs() < 1e-12);
        // Unbanded entries count towards the threshold only: 16 bands of 12
        // leave 8 entries.
        let a = minhash_detection_probability(0.9, 16, 12, 200, 0.0);
        assert!((a - banding_probability(0.9, 16, 12)).abs() < 1e-12);
    }

    #[test]
    fn intersection_counts_both_ways() {
        let a: Vec<u64> = (0..1000).map(|i| i * 3).collect();
        let b: Vec<u64> = (0..40).map(|i| i * 7).collect();
        let naive = b.iter().filter(|x| a.contains(x)).count();
        assert_eq!(intersection(&a, &b), naive);
        assert_eq!(intersection(&b, &a), naive);
        assert_eq!(
            intersection(&a[..50], &b),
            b.iter().filter(|x| a[..50].contains(x)).count()
        );
        assert_eq!(intersection(&[], &a), 0);
        assert_eq!(intersection(&a, &a), a.len());
    }

    #[test]
    fn bins_are_half_open_with_a_bin_for_one() {
        let e = &JACCARD_EDGES;
        assert_eq!(bin_of(e, 0.0), 0);
        assert_eq!(bin_of(e, 0.4999), 0);
        assert_eq!(bin_of(e, 0.5), 1);
        assert_eq!(bin_of(e, 0.9), 7);
        assert_eq!(bin_of(e, 0.99999), 8);
        assert_eq!(bin_of(e, 1.0), 9);
        let c = &COSINE_EDGES;
        assert_eq!(bin_of(c, 0.9995), 9);
        assert_eq!(bin_of(c, 1.0), 10);
    }

    #[test]
    fn tabulated_curves_are_close_to_the_functions() {
        let c = Curve::new(charikar_probability, false);
        for i in 0..=1000 {
            let s = 0.95 + 0.05 * i as f64 / 1000.0;
            assert!((c.at(s) - charikar_probability(s)).abs() < 2e-3, "{s}");
        }
        let m = Curve::new(
            |s| minhash_detection_probability(s, 20, 10, 200, 0.8),
            false,
        );
        for s in [0.5, 0.7, 0.77, 0.8, 0.83, 0.9] {
            let want = minhash_detection_probability(s, 20, 10, 200, 0.8);
            assert!((m.at(s) - want).abs() < 1e-4, "{s}");
        }
    }
}

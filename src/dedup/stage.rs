//! The near-duplicate stage: sketches → sorted keys → candidate pairs →
//! verified pairs → union-find clusters, one manifest stage per algorithm
//! (`dedup-exact`, `dedup-broder`, `dedup-charikar`, `dedup-minhash`).
//!
//! 1. **Sketch** (one parallel pass over the token streams, for every chosen
//!    algorithm at once): each page's words are fingerprinted once, sketched by
//!    each algorithm, and its *keys* — the exact fingerprint, the 15
//!    megashingles, the 13 subsketches, the min-hash band keys — go to one
//!    external sort per algorithm as `(key, docID)`; the whole sketch goes to
//!    another, by docID.
//! 2. **Group**: equal keys are adjacent in the sorted stream; each group of
//!    docs sharing a key yields its pairs `(a, b)`, `a < b`. A group larger than
//!    `max_group` (boilerplate shared by thousands of pages) is not expanded
//!    quadratically: each member is paired with the group's first doc only,
//!    which keeps the clusters right, and the group is counted as capped.
//!    Candidates go through a deduplicating sort.
//! 3. **Verify** (not for exact): the sketches, sorted by docID, are written
//!    to `sketches-ALG.wm`; the candidates sorted by `a` are walked beside it
//!    (attaching `a`'s sketch), sorted by `b` and walked beside it again: each
//!    pair meets both sketches by sort–merge joins, never by lookups. A pair
//!    is kept when the algorithm says similar (Alg. B: ≥ 2 equal
//!    supershingles; Alg. C: ≥ 372 of 384 equal bits; min-hash: ≥ threshold of
//!    equal entries), with its similarity estimate.
//!
//!    With [`Verify::Exact`] (broder and minhash), the sketch pass also keeps
//!    each page's **shingle set** — the sorted, distinct 64-bit Rabin
//!    fingerprints of its `k`-word shingles, exactly [`shingle_set`] — beside
//!    its sketch in `sketches-ALG.wm`. The sets travel through the same two
//!    joins (the by-b sort carries `a`'s set as it carries its sketch), and a
//!    candidate is kept when the exact Jaccard coefficient of the two sets (a
//!    merge of two sorted lists) reaches `--threshold`; the pair file records
//!    that coefficient. Candidates are unchanged, so exact verification removes
//!    the sketch's false positives (precision 1 against the exact Jaccard) but
//!    cannot add pairs the keys missed (recall is the candidate curve's). The
//!    cost is 8 bytes per distinct shingle per page in the sketch sort and
//!    file, and per candidate pair in the by-b sort. Why 64 bits: the sets are
//!    then exactly the reference sets of [`shingle_set`] and `dedup-eval`, so
//!    the decision agrees with the evaluation by construction; the Rabin
//!    fingerprints of two distinct shingles collide with probability about
//!    2^-64 (an `n`-shingle and an `m`-shingle page share a false shingle with
//!    probability `nm/2^64`, 5·10^-14 for 1000 × 1000). 32-bit keys would halve
//!    the bytes but false shared shingles would then turn up at `nm/2^32`,
//!    2·10^-4 per such pair — small, but the verdict would no longer be the
//!    reference's.
//! 4. **Cluster**: union-find over the pairs; clusters (id = smallest docID)
//!    with their members sorted, and a keep-list: one doc per cluster, the
//!    highest PageRank when the job has ranks, else the smallest docID.
//!
//! Every step's sorts live under the stage's temporary directory and resume
//! after a crash like every webmill sort; the outputs are byte-identical
//! whatever the thread count or the interruptions.

use std::path::Path;

use rayon::prelude::*;
use serde_json::json;

use crate::dedup::broder::{BroderSketcher, MIN_VALUES};
use crate::dedup::charikar::{CharikarSketch, CharikarSketcher, CHARIKAR_BITS};
use crate::dedup::minhash::{MinHasher, MINHASH_LEN};
#[cfg(doc)]
use crate::dedup::shingle::shingle_set;
use crate::dedup::shingle::{exact_fingerprint, word_fingerprints, Scratch, Shingler};
use crate::docs::DocTable;
use crate::error::{Error, Result};
use crate::graph::import::DOCS_FILE;
use crate::ingest::pagefile::{get_bytes, get_u64, PageFile, PageFileWriter};
use crate::job::{Begin, Figures, Job, Settings, StageRecord};
use crate::progress::Unit;
use crate::sort::{Combine, ExternalSorter, SortConfig, Sorted};
use crate::varint;

/// Kind of the sketch files: per docID, its host and its sketch bytes, and
/// with [`Verify::Exact`] its shingle set (see [`SketchRecord`]).
pub const SKETCH_KIND: &str = "sketches";
/// Kind of the pair files: keyed by the first docID, `varint b − a` and the
/// similarity as `f32` little-endian.
pub const PAIRS_KIND: &str = "pairs";
/// Kind of the cluster files: keyed by cluster id (its smallest docID),
/// `varint docID`, `u8 keep`.
pub const CLUSTERS_KIND: &str = "clusters";

/// A near-duplicate algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Alg {
    /// Equal token sequences.
    Exact,
    /// Broder's megashingles (Henzinger's Alg. B).
    Broder,
    /// Charikar's random projections (Henzinger's Alg. C).
    Charikar,
    /// Min-hash with banding (IIR ch. 19).
    MinHash,
}

impl Alg {
    /// All algorithms.
    pub const ALL: [Alg; 4] = [Alg::Exact, Alg::Broder, Alg::Charikar, Alg::MinHash];

    /// Its name on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Alg::Exact => "exact",
            Alg::Broder => "broder",
            Alg::Charikar => "charikar",
            Alg::MinHash => "minhash",
        }
    }

    /// Parses a name.
    pub fn parse(s: &str) -> Result<Alg> {
        Alg::ALL.into_iter().find(|a| a.name() == s).ok_or_else(|| {
            Error::usage(format!(
                "unknown algorithm {s:?} (exact, broder, charikar, minhash)"
            ))
        })
    }

    /// Its stage name.
    pub fn stage(self) -> String {
        format!("dedup-{}", self.name())
    }

    /// Its pair file.
    pub fn pairs_file(self) -> String {
        format!("pairs-{}.wm", self.name())
    }

    /// Its plot of the number of near-duplicates per page (log-log SVG).
    pub fn plot_file(self) -> String {
        format!("dedup-{}-per-page.svg", self.name())
    }

    /// Its cluster file.
    pub fn clusters_file(self) -> String {
        format!("clusters-{}.wm", self.name())
    }

    /// Its sketch file.
    pub fn sketch_file(self) -> String {
        format!("sketches-{}.wm", self.name())
    }
}

/// How candidate pairs are verified (broder and minhash).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Verify {
    /// By the sketches: the algorithm's own test on the two sketches (Alg. B:
    /// ≥ 2 equal supershingles; min-hash: ≥ `threshold` equal entries); the pair
    /// file records the sketch's similarity estimate.
    #[default]
    Sketch,
    /// By the exact Jaccard coefficient of the two pages' shingle sets, kept
    /// beside the sketches: similar when it reaches `threshold`; the pair file
    /// records it. Not defined for charikar (whose similarity is the sketch's
    /// bit agreement); exact needs no verification.
    Exact,
}

impl Verify {
    /// Its name on the command line and in the stage parameters.
    pub fn name(self) -> &'static str {
        match self {
            Verify::Sketch => "sketch",
            Verify::Exact => "exact",
        }
    }

    /// Parses a name.
    pub fn parse(s: &str) -> Result<Verify> {
        match s {
            "sketch" => Ok(Verify::Sketch),
            "exact" => Ok(Verify::Exact),
            _ => Err(Error::usage(format!(
                "unknown verification {s:?} (sketch, exact)"
            ))),
        }
    }
}

/// How to find near-duplicates.
#[derive(Clone, Debug)]
pub struct DedupOptions {
    /// Algorithms to run.
    pub algs: Vec<Alg>,
    /// Shingle length in words for broder and minhash (default 10 and 4).
    pub shingle: Option<usize>,
    /// Min-hash: fraction of equal entries for a pair to be similar; with
    /// [`Verify::Exact`], the exact Jaccard coefficient a broder or minhash
    /// pair must reach.
    pub threshold: f64,
    /// Groups sharing a key larger than this are linked to their first doc only.
    pub max_group: u64,
    /// How broder and minhash verify their candidates.
    pub verify: Verify,
}

impl Default for DedupOptions {
    fn default() -> Self {
        DedupOptions {
            algs: vec![Alg::MinHash],
            shingle: None,
            threshold: crate::dedup::minhash::MINHASH_THRESHOLD,
            max_group: 1000,
            verify: Verify::Sketch,
        }
    }
}

/// What one algorithm's run ended with.
pub enum DedupOutcome {
    /// It ran (or resumed) and finished.
    Done(StageRecord),
    /// It had finished before with the same parameters.
    AlreadyDone(StageRecord),
}

/// The sketchers of the chosen algorithms.
struct Sketchers {
    broder: Option<BroderSketcher>,
    charikar: Option<CharikarSketcher>,
    minhash: Option<MinHasher>,
    threshold: f64,
    /// With [`Verify::Exact`]: the shinglers of broder's and minhash's sets.
    broder_sets: Option<Shingler>,
    minhash_sets: Option<Shingler>,
}

/// One page's keys and sketch-file record tail for one algorithm.
#[derive(Default)]
struct AlgOut {
    keys: Vec<u64>,
    /// `bytes(sketch)`, then `bytes(shingle set)` with [`Verify::Exact`]; empty
    /// when the page has no sketch.
    record: Vec<u8>,
}

/// Per-thread buffers.
#[derive(Default)]
struct Buffers {
    fps: Vec<u64>,
    scratch: Scratch,
    sketch: Vec<u8>,
    set: Vec<u64>,
}

/// One record of a sketch file (`sketches-ALG.wm`), borrowed from its block.
///
/// Payload: `varint host`, `varint n ‖ n bytes` sketch, and — in a file whose
/// metadata has `"shingle_set": k` (written with [`Verify::Exact`]) —
/// `varint 8m ‖ m × u64 LE`, the page's `k`-word shingle set: the sorted,
/// distinct Rabin fingerprints of [`shingle_set`].
#[derive(Clone, Copy, Debug)]
pub struct SketchRecord<'a> {
    /// The docID.
    pub doc: u64,
    /// The doc's host number (from the doc table).
    pub host: u64,
    /// The sketch bytes (the algorithm's sketch, little-endian values).
    pub sketch: &'a [u8],
    /// The shingle set as `u64` little-endian values, strictly increasing;
    /// `None` in a file written without [`Verify::Exact`].
    pub shingles: Option<&'a [u8]>,
}

impl SketchRecord<'_> {
    /// The shingle set as numbers.
    pub fn shingle_set(&self) -> Option<Vec<u64>> {
        self.shingles.map(|s| {
            s.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect()
        })
    }
}

/// Reads one sketch-file payload; `with_set`: the file holds shingle sets,
/// checked to be whole `u64`s in strictly increasing order when `check`.
fn parse_sketch<'a>(
    doc: u64,
    input: &mut &'a [u8],
    with_set: bool,
    check: bool,
) -> Result<SketchRecord<'a>> {
    let host = get_u64(input, "host")?;
    let sketch = get_bytes(input, "sketch")?;
    let set = if with_set {
        let set = get_bytes(input, "shingle set")?;
        if check && set.len() % 8 != 0 {
            return Err(Error::record(format!(
                "shingle set of {} bytes: expected a multiple of 8",
                set.len()
            )));
        }
        if check
            && set
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .try_fold(None, |prev: Option<u64>, x| match prev {
                    Some(p) if p >= x => Err(()),
                    _ => Ok(Some(x)),
                })
                .is_err()
        {
            return Err(Error::record("shingle set not strictly increasing"));
        }
        Some(set)
    } else {
        None
    };
    Ok(SketchRecord {
        doc,
        host,
        sketch,
        shingles: set,
    })
}

/// The shingle length of the sets in a sketch file, from its metadata
/// (`None`: no sets).
fn file_shingle_set(file: &PageFile) -> Option<u64> {
    file.container().meta()["shingle_set"].as_u64()
}

/// Reads a sketch file: calls `f` for every record, in docID order.
pub fn for_each_sketch(
    path: &Path,
    mut f: impl FnMut(SketchRecord<'_>) -> Result<()>,
) -> Result<()> {
    let file = PageFile::open(path, SKETCH_KIND)?;
    let with_set = file_shingle_set(&file).is_some();
    file.for_each(|doc, input| f(parse_sketch(doc, input, with_set, true)?))
}

/// The exact Jaccard coefficient of two sets of `u64` little-endian values,
/// each strictly increasing (a merge); 1.0 for two empty sets, as
/// [`crate::dedup::shingle::jaccard`].
fn jaccard_le(a: &[u8], b: &[u8]) -> f64 {
    let get =
        |s: &[u8], i: usize| u64::from_le_bytes(s[8 * i..8 * i + 8].try_into().expect("8 bytes"));
    let (n, m) = (a.len() / 8, b.len() / 8);
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < n && j < m {
        let (x, y) = (get(a, i), get(b, j));
        common += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    let union = n + m - common;
    if union == 0 {
        1.0
    } else {
        common as f64 / union as f64
    }
}

impl Sketchers {
    fn new(opts: &DedupOptions) -> Result<Sketchers> {
        let has = |a| opts.algs.contains(&a);
        // The shingle sets kept for exact verification (`default_k` unless
        // --shingle says otherwise).
        let sets = |a, default_k| -> Result<Option<Shingler>> {
            (opts.verify == Verify::Exact && has(a))
                .then(|| Shingler::new(opts.shingle.unwrap_or(default_k)))
                .transpose()
        };
        Ok(Sketchers {
            broder: if has(Alg::Broder) {
                Some(match opts.shingle {
                    Some(k) => BroderSketcher::with_params(k, crate::dedup::broder::BRODER_SEED)?,
                    None => BroderSketcher::new(),
                })
            } else {
                None
            },
            charikar: has(Alg::Charikar).then(CharikarSketcher::new),
            minhash: if has(Alg::MinHash) {
                Some(match opts.shingle {
                    Some(k) => MinHasher::with_params(k, crate::dedup::minhash::MINHASH_SEED)?,
                    None => MinHasher::new(),
                })
            } else {
                None
            },
            threshold: opts.threshold,
            broder_sets: sets(Alg::Broder, crate::dedup::broder::BRODER_SHINGLE_LEN)?,
            minhash_sets: sets(Alg::MinHash, crate::dedup::minhash::MINHASH_SHINGLE_LEN)?,
        })
    }

    /// The shinger of `alg`'s exact sets, if it verifies exactly.
    fn set_shingler(&self, alg: Alg) -> Option<&Shingler> {
        match alg {
            Alg::Broder => self.broder_sets.as_ref(),
            Alg::MinHash => self.minhash_sets.as_ref(),
            _ => None,
        }
    }

    /// Sketches one page for every algorithm in `algs`.
    fn sketch(&self, algs: &[Alg], words: &str, b: &mut Buffers) -> Vec<AlgOut> {
        let tokens = || words.split(' ').filter(|w| !w.is_empty());
        word_fingerprints(tokens(), &mut b.fps);
        algs.iter()
            .map(|&alg| {
                let mut out = AlgOut::default();
                b.sketch.clear();
                match alg {
                    Alg::Exact => {
                        let fp = exact_fingerprint(tokens());
                        out.keys.push(fp);
                        b.sketch.extend_from_slice(&fp.to_le_bytes());
                    }
                    Alg::Broder => {
                        let s = self.broder.as_ref().expect("broder sketcher");
                        if let Some(sk) = s.sketch_fingerprints(&b.fps, &mut b.scratch) {
                            out.keys.extend_from_slice(&sk.megashingles);
                            for v in sk.min_values {
                                b.sketch.extend_from_slice(&v.to_le_bytes());
                            }
                        }
                    }
                    Alg::Charikar => {
                        let s = self.charikar.as_ref().expect("charikar sketcher");
                        if let Some(sk) = s.sketch_fingerprints(&b.fps, &mut b.scratch) {
                            out.keys.extend(
                                crate::dedup::charikar::subsketches(&sk)
                                    .iter()
                                    .map(|p| p.key()),
                            );
                            for w in sk.0 {
                                b.sketch.extend_from_slice(&w.to_le_bytes());
                            }
                        }
                    }
                    Alg::MinHash => {
                        let s = self.minhash.as_ref().expect("minhash sketcher");
                        if let Some(sk) = s.sketch_fingerprints(&b.fps, &mut b.scratch) {
                            out.keys.extend(s.bands(&sk).map(|(_, k)| k));
                            for v in sk.0 {
                                b.sketch.extend_from_slice(&v.to_le_bytes());
                            }
                        }
                    }
                }
                if !b.sketch.is_empty() {
                    varint::put_bytes(&mut out.record, &b.sketch);
                    if let Some(shingler) = self.set_shingler(alg) {
                        // The set of shingle_set(): sorted, distinct.
                        shingler.set_into(&b.fps, &mut b.set);
                        varint::put(&mut out.record, 8 * b.set.len() as u64);
                        out.record.reserve(8 * b.set.len());
                        for v in &b.set {
                            out.record.extend_from_slice(&v.to_le_bytes());
                        }
                    }
                }
                out
            })
            .collect()
    }

    /// Verifies a candidate pair from its two sketch-file records (sketch,
    /// shingle set): the similarity, or `None` when the pair is not similar.
    /// With shingle sets (broder and minhash under [`Verify::Exact`]): their
    /// exact Jaccard coefficient, similar when it reaches the threshold.
    fn verify(
        &self,
        alg: Alg,
        (a, set_a): (&[u8], Option<&[u8]>),
        (b, set_b): (&[u8], Option<&[u8]>),
    ) -> Option<f32> {
        if let (Some(x), Some(y)) = (set_a, set_b) {
            let j = jaccard_le(x, y);
            // The same tolerance as dedup-eval's precision target.
            return (j >= self.threshold - 1e-12).then_some(j as f32);
        }
        // Min-values are stored little-endian at the sketchers' width (the
        // sketch length tells it).
        let equal_values = |n: usize| {
            let w = (a.len() / n).max(1);
            a.chunks_exact(w)
                .zip(b.chunks_exact(w))
                .take(n)
                .filter(|(x, y)| x == y)
                .count()
        };
        match alg {
            Alg::Exact => (a == b).then_some(1.0),
            Alg::Broder => {
                // ≥ 2 equal supershingles: runs of 14 equal min-values.
                let run = MIN_VALUES / crate::dedup::broder::SUPERSHINGLES;
                let equal_runs = a
                    .chunks_exact(a.len() / MIN_VALUES * run)
                    .zip(b.chunks_exact(a.len() / MIN_VALUES * run))
                    .filter(|(x, y)| x == y)
                    .count();
                (equal_runs >= 2).then(|| equal_values(MIN_VALUES) as f32 / MIN_VALUES as f32)
            }
            Alg::Charikar => {
                let words = |s: &[u8]| {
                    let mut w = [0u64; CHARIKAR_BITS / 64];
                    for (d, c) in w.iter_mut().zip(s.chunks_exact(8)) {
                        *d = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                    }
                    CharikarSketch(w)
                };
                let agree = words(a).agreeing_bits(&words(b));
                (agree >= crate::dedup::charikar::CHARIKAR_THRESHOLD)
                    .then_some(agree as f32 / CHARIKAR_BITS as f32)
            }
            Alg::MinHash => {
                let eq = equal_values(MINHASH_LEN) as f64 / MINHASH_LEN as f64;
                (eq >= self.threshold - 1e-12).then_some(eq as f32)
            }
        }
    }
}

fn sort_cfg(tmp: &Path, name: &str, budget: u64, s: &Settings) -> SortConfig {
    s.sort_config(tmp, "dedup", name, budget.max(1 << 16))
}

fn params(alg: Alg, opts: &DedupOptions, text_checksum: &str) -> serde_json::Value {
    let shingle = match alg {
        Alg::Broder => Some(
            opts.shingle
                .unwrap_or(crate::dedup::broder::BRODER_SHINGLE_LEN),
        ),
        Alg::MinHash => Some(
            opts.shingle
                .unwrap_or(crate::dedup::minhash::MINHASH_SHINGLE_LEN),
        ),
        _ => None,
    };
    let exact = opts.verify == Verify::Exact && alg == Alg::Broder;
    let mut p = json!({
        "shingle": shingle,
        "threshold": (alg == Alg::MinHash || exact).then_some(opts.threshold),
        "max_group": opts.max_group,
        "text": text_checksum,
    });
    // Only the algorithms that can verify either way name it (the others'
    // parameters stay those of jobs made before `verify` existed).
    if matches!(alg, Alg::Broder | Alg::MinHash) {
        p["verify"] = json!(opts.verify.name());
    }
    p
}

/// Runs (or resumes, or skips) near-duplicate detection for `opts.algs`.
pub fn dedup(job: &mut Job, opts: &DedupOptions, s: &Settings) -> Result<Vec<(Alg, DedupOutcome)>> {
    if opts.algs.is_empty() {
        return Err(Error::usage("dedup needs at least one --alg"));
    }
    if !(opts.threshold > 0.0 && opts.threshold <= 1.0) {
        return Err(Error::usage(format!(
            "--threshold must be in (0, 1], got {}",
            opts.threshold
        )));
    }
    if opts.max_group < 2 {
        return Err(Error::usage("--max-group must be at least 2"));
    }
    if opts.verify == Verify::Exact && opts.algs.contains(&Alg::Charikar) {
        return Err(Error::usage(
            "--verify exact is defined for broder and minhash (exact Jaccard of shingle sets), not for charikar, whose similarity is its sketch's bit agreement: run charikar in a separate `webmill dedup` without --verify exact",
        ));
    }
    let graph = crate::graph::graph_stage(job)?;
    if graph != crate::ingest::resolve::STAGE {
        return Err(Error::job(
            job.dir(),
            "near-duplicates need pages: this job was made by import-graph, not ingest",
        ));
    }
    let text_checksum = job
        .finished_stage(crate::ingest::STAGE)?
        .outputs
        .iter()
        .find(|o| o.path == crate::ingest::TEXT_FILE)
        .map(|o| o.checksum.clone())
        .unwrap_or_default();
    let mut algs: Vec<Alg> = opts.algs.clone();
    algs.sort();
    algs.dedup();
    let mut results = Vec::new();
    let mut run = Vec::new();
    for &alg in &algs {
        let outputs = [alg.sketch_file(), alg.pairs_file(), alg.clusters_file()];
        let outs: Vec<&str> = outputs.iter().map(String::as_str).collect();
        match job.begin(
            &alg.stage(),
            params(alg, opts, &text_checksum),
            &[crate::ingest::resolve::STAGE],
            &outs,
            s.force,
        )? {
            Begin::Skip(rec) => results.push((alg, DedupOutcome::AlreadyDone(rec))),
            Begin::Run { .. } => run.push(alg),
        }
    }
    if run.is_empty() {
        return Ok(results);
    }
    let sketchers = Sketchers::new(opts)?;
    // Budget: the sketch pass holds two sorts per algorithm.
    let share = 1.0 / (2 * run.len()) as f64;
    let tmp_of = |alg: Alg| job.tmp_dir(&alg.stage());
    let mut key_sorts = Vec::new();
    let mut sketch_sorts = Vec::new();
    for &alg in &run {
        key_sorts.push(ExternalSorter::<(u64, u64)>::new(
            sort_cfg(&tmp_of(alg), "keys", s.share(share), s),
            Combine::Dedup,
        )?);
        sketch_sorts.push(ExternalSorter::<(u64, Vec<u8>)>::new(
            sort_cfg(&tmp_of(alg), "sketches", s.share(share), s),
            Combine::None,
        )?);
    }
    let complete = key_sorts.iter().all(|k| k.input_complete())
        && sketch_sorts.iter().all(|k| k.input_complete());
    let mut docs_sketched = 0u64;
    if !complete {
        docs_sketched = sketch_pass(job, &run, &sketchers, &mut key_sorts, &mut sketch_sorts, s)?;
    }
    for ((alg, keys), sketches) in run.iter().zip(key_sorts).zip(sketch_sorts) {
        let rec = finish_alg(
            job,
            *alg,
            opts,
            &sketchers,
            keys,
            sketches,
            docs_sketched,
            s,
        )?;
        results.push((*alg, DedupOutcome::Done(rec)));
    }
    results.sort_by_key(|(a, _)| *a);
    Ok(results)
}

/// Step 1: one parallel pass over the token streams.
fn sketch_pass(
    job: &Job,
    algs: &[Alg],
    sketchers: &Sketchers,
    key_sorts: &mut [ExternalSorter<(u64, u64)>],
    sketch_sorts: &mut [ExternalSorter<(u64, Vec<u8>)>],
    s: &Settings,
) -> Result<u64> {
    let pages = PageFile::open(
        job.path(crate::ingest::TEXT_FILE),
        crate::ingest::records::TEXT_KIND,
    )?;
    let task = s
        .reporter
        .task("dedup: sketching", Some(pages.records()), Unit::Records);
    const BATCH_DOCS: usize = 1024;
    const BATCH_BYTES: usize = 16 << 20;
    let mut batch: Vec<(u64, String)> = Vec::with_capacity(BATCH_DOCS);
    let mut bytes = 0usize;
    let mut n = 0u64;
    let mut flush = |batch: &mut Vec<(u64, String)>| -> Result<()> {
        let outs: Vec<Vec<AlgOut>> = batch
            .par_iter()
            .map_init(Buffers::default, |b, (_, words)| {
                sketchers.sketch(algs, words, b)
            })
            .collect();
        for ((doc, _), per_alg) in batch.iter().zip(outs) {
            for (i, out) in per_alg.into_iter().enumerate() {
                for k in out.keys {
                    key_sorts[i].push((k, *doc))?;
                }
                if !out.record.is_empty() {
                    sketch_sorts[i].push((*doc, out.record))?;
                }
            }
        }
        n += batch.len() as u64;
        task.set_position(n);
        batch.clear();
        Ok(())
    };
    crate::ingest::text::for_each_page_text(job, |_, doc, words| {
        bytes += words.len();
        batch.push((doc, words.to_string()));
        if batch.len() >= BATCH_DOCS || bytes >= BATCH_BYTES {
            flush(&mut batch)?;
            bytes = 0;
        }
        Ok(())
    })?;
    flush(&mut batch)?;
    Ok(n)
}

/// Counts of one algorithm's run.
#[derive(Default)]
struct GroupCounts {
    groups: u64,
    capped: u64,
    candidates: u64,
}

/// Step 2: candidate pairs from groups of equal keys.
fn group_pairs(
    mut keys: Sorted<(u64, u64)>,
    max_group: u64,
    out: &mut ExternalSorter<(u64, u64)>,
) -> Result<GroupCounts> {
    let mut c = GroupCounts::default();
    let mut group: Vec<u64> = Vec::new();
    let mut current: Option<u64> = None;
    fn emit(
        group: &mut Vec<u64>,
        c: &mut GroupCounts,
        max_group: u64,
        out: &mut ExternalSorter<(u64, u64)>,
    ) -> Result<()> {
        if group.len() >= 2 {
            c.groups += 1;
            if group.len() as u64 > max_group {
                c.capped += 1;
                for &d in &group[1..] {
                    out.push((group[0], d))?;
                    c.candidates += 1;
                }
            } else {
                for i in 0..group.len() {
                    for j in i + 1..group.len() {
                        out.push((group[i], group[j]))?;
                        c.candidates += 1;
                    }
                }
            }
        }
        group.clear();
        Ok(())
    }
    while let Some((key, doc)) = keys.next_record()? {
        if current != Some(key) {
            emit(&mut group, &mut c, max_group, out)?;
            current = Some(key);
        }
        // Keys come sorted by (key, doc): the group is in docID order, and a
        // doc appears once per key (dedup).
        if group.len() as u64 <= max_group {
            group.push(doc);
        } else {
            // Past the cap: link to the first doc straight away, keep memory flat.
            out.push((group[0], doc))?;
            c.candidates += 1;
        }
    }
    emit(&mut group, &mut c, max_group, out)?;
    Ok(c)
}

/// A sequential reader of a sketch file, for merge joins.
struct DocCursor<'a> {
    file: &'a PageFile,
    with_set: bool,
    block: usize,
    buf: (Vec<u8>, Vec<u8>),
    pending: std::collections::VecDeque<(u64, Vec<u8>)>,
}

impl<'a> DocCursor<'a> {
    fn new(file: &'a PageFile) -> DocCursor<'a> {
        DocCursor {
            file,
            with_set: file_shingle_set(file).is_some(),
            block: 0,
            buf: (Vec::new(), Vec::new()),
            pending: Default::default(),
        }
    }

    /// The payload of `doc` (docs asked in increasing order), if present.
    fn seek(&mut self, doc: u64) -> Result<Option<&[u8]>> {
        loop {
            match self.pending.front() {
                Some((d, _)) if *d < doc => {
                    self.pending.pop_front();
                }
                Some((d, _)) if *d == doc => {
                    return Ok(self.pending.front().map(|(_, p)| p.as_slice()));
                }
                Some(_) => return Ok(None),
                None => {
                    if self.block == self.file.container().blocks().len() {
                        return Ok(None);
                    }
                    let (pending, with_set) = (&mut self.pending, self.with_set);
                    self.file
                        .visit_block(self.block, &mut self.buf, |d, input| {
                            // Copy exactly this record's payload (records are
                            // self-delimiting: host, sketch, [shingle set]).
                            let start = *input;
                            parse_sketch(d, input, with_set, true)?;
                            pending.push_back((d, start[..start.len() - input.len()].to_vec()));
                            Ok(())
                        })?;
                    self.block += 1;
                }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn finish_alg(
    job: &mut Job,
    alg: Alg,
    opts: &DedupOptions,
    sketchers: &Sketchers,
    keys: ExternalSorter<(u64, u64)>,
    sketches: ExternalSorter<(u64, Vec<u8>)>,
    docs_sketched: u64,
    s: &Settings,
) -> Result<StageRecord> {
    let tmp = job.tmp_dir(&alg.stage());
    let docs = DocTable::open(job.path(DOCS_FILE))?;
    // Sketch file, by docID, with each doc's host.
    let sketch_path = job.path(&alg.sketch_file());
    if PageFile::open(&sketch_path, SKETCH_KIND).is_err() {
        let mut sorted = sketches.finish()?;
        let mut w = PageFileWriter::create(&sketch_path, SKETCH_KIND, 256 << 10, 3)?;
        let mut doc_iter = docs.iter();
        let mut payload = Vec::new();
        let mut n = 0u64;
        while let Some((doc, sketch)) = sorted.next_record()? {
            let host = loop {
                match doc_iter.next() {
                    Some(r) => {
                        let (id, d) = r?;
                        if id == doc {
                            break d.host;
                        }
                    }
                    None => {
                        return Err(Error::internal(format!("docID {doc} not in the doc table")))
                    }
                }
            };
            // The sorted record is the payload's tail: sketch [, shingle set].
            payload.clear();
            varint::put(&mut payload, host);
            payload.extend_from_slice(&sketch);
            w.push(doc, &payload)?;
            n += 1;
        }
        let mut meta = json!({"algorithm": alg.name(), "docs": n});
        if let Some(sh) = sketchers.set_shingler(alg) {
            meta["shingle_set"] = json!(sh.k());
        }
        w.finish(&meta)?;
    } else {
        drop(sketches);
    }
    let sketch_file = PageFile::open(&sketch_path, SKETCH_KIND)?;
    if file_shingle_set(&sketch_file).map(|k| k as usize)
        != sketchers.set_shingler(alg).map(Shingler::k)
    {
        return Err(Error::usage_at(
            &sketch_path,
            format!(
                "its shingle sets do not match --verify {}; rerun with --force",
                if sketchers.set_shingler(alg).is_some() {
                    "exact"
                } else {
                    "sketch"
                }
            ),
        ));
    }

    // Candidates.
    let mut cands = ExternalSorter::<(u64, u64)>::new(
        sort_cfg(&tmp, "candidates", s.share(0.4), s),
        Combine::Dedup,
    )?;
    let mut gc = GroupCounts::default();
    if !cands.input_complete() {
        let mut keys = keys;
        keys.set_merge_budget(s.share(0.1));
        gc = group_pairs(keys.finish()?, opts.max_group, &mut cands)?;
        crate::publish::write_atomic(
            tmp.join("groups.json"),
            json!({"groups": gc.groups, "capped": gc.capped, "candidates": gc.candidates})
                .to_string()
                .as_bytes(),
        )?;
    } else if let Ok(b) = std::fs::read(tmp.join("groups.json")) {
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap_or_default();
        gc.groups = v["groups"].as_u64().unwrap_or(0);
        gc.capped = v["capped"].as_u64().unwrap_or(0);
        gc.candidates = v["candidates"].as_u64().unwrap_or(0);
    }
    cands.set_merge_budget(s.share(0.1));

    // Verify by two merge joins: attach a's sketch, then meet b's.
    let mut by_b = ExternalSorter::<(u64, u64, Vec<u8>)>::new(
        sort_cfg(&tmp, "by-b", s.share(0.4), s),
        Combine::None,
    )?;
    if !by_b.input_complete() {
        let mut sorted = cands.finish()?;
        let mut cur = DocCursor::new(&sketch_file);
        while let Some((a, b)) = sorted.next_record()? {
            let Some(p) = cur.seek(a)? else { continue };
            by_b.push((b, a, p.to_vec()))?;
        }
    }
    by_b.set_merge_budget(s.share(0.1));
    let mut pairs = ExternalSorter::<(u64, u64, u32)>::new(
        sort_cfg(&tmp, "pairs", s.share(0.3), s),
        Combine::None,
    )?;
    let mut same_host = 0u64;
    let mut verified = 0u64;
    {
        let mut sorted = by_b.finish()?;
        let mut cur = DocCursor::new(&sketch_file);
        let with_set = cur.with_set;
        while let Some((b, a, pa)) = sorted.next_record()? {
            let Some(pb) = cur.seek(b)? else { continue };
            // Both records were checked when the cursor read them.
            let ra = parse_sketch(a, &mut pa.as_slice(), with_set, false)?;
            let rb = parse_sketch(b, &mut &pb[..], with_set, false)?;
            let (ha, hb) = (ra.host, rb.host);
            if let Some(sim) =
                sketchers.verify(alg, (ra.sketch, ra.shingles), (rb.sketch, rb.shingles))
            {
                pairs.push((a, b, sim.to_bits()))?;
                verified += 1;
                same_host += u64::from(ha == hb);
            }
        }
    }
    // Pairs file; union-find as they stream by.
    let mut sorted = pairs.finish()?;
    let mut w = PageFileWriter::create(job.path(&alg.pairs_file()), PAIRS_KIND, 256 << 10, 3)?;
    let mut uf = UnionFind::new(docs.len(), s.mem / 2)?;
    let mut per_doc = vec![0u32; docs.len() as usize];
    let mut payload = Vec::new();
    let mut n_pairs = 0u64;
    while let Some((a, b, sim)) = sorted.next_record()? {
        payload.clear();
        varint::put(&mut payload, b - a);
        payload.extend_from_slice(&sim.to_le_bytes());
        w.push(a, &payload)?;
        uf.union(a, b);
        per_doc[a as usize] += 1;
        per_doc[b as usize] += 1;
        n_pairs += 1;
    }
    w.finish(&json!({"algorithm": alg.name(), "pairs": n_pairs}))?;
    // Distribution of near-duplicates per page (Henzinger's plot).
    let mut dist: std::collections::BTreeMap<u64, u64> = Default::default();
    for &k in per_doc.iter().filter(|&&k| k > 0) {
        *dist.entry(u64::from(k)).or_default() += 1;
    }
    drop(per_doc);

    // Clusters.
    let ranks = crate::rank::RankVector::open(job.path(crate::rank::RANKS_FILE)).ok();
    let clusters = uf.clusters();
    let mut w =
        PageFileWriter::create(job.path(&alg.clusters_file()), CLUSTERS_KIND, 256 << 10, 3)?;
    let mut sizes: Vec<(u64, u64)> = Vec::new();
    let mut in_clusters = 0u64;
    for members in &clusters {
        let keep = match &ranks {
            Some(r) => {
                let mut rr = r.reader();
                let mut best = (f64::NEG_INFINITY, members[0]);
                for &m in members {
                    let v = rr.get(m)?;
                    if v > best.0 {
                        best = (v, m);
                    }
                }
                best.1
            }
            None => members[0],
        };
        for &m in members {
            payload.clear();
            varint::put(&mut payload, m);
            payload.push(u8::from(m == keep));
            w.push(members[0], &payload)?;
        }
        in_clusters += members.len() as u64;
        sizes.push((members.len() as u64, members[0]));
    }
    w.finish(&json!({"algorithm": alg.name(), "clusters": clusters.len(), "docs": in_clusters}))?;
    sizes.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    let mut largest = Vec::new();
    for &(size, id) in sizes.iter().take(10) {
        let url = docs.get(id)?.map(|d| d.url).unwrap_or_default();
        largest.push(json!({"cluster": id, "size": size, "example": url}));
    }
    let plot_path = job.path(&alg.plot_file());
    write_distribution_plot(&plot_path, alg, &dist)?;

    let mut figures = Figures {
        records: n_pairs,
        ..Figures::default()
    };
    let extra = json!({
        "verify": matches!(alg, Alg::Broder | Alg::MinHash).then(|| opts.verify.name()),
        "sketch_file_bytes": sketch_file.container().size(),
        "docs_sketched": docs_sketched,
        "groups": gc.groups,
        "capped_groups": gc.capped,
        "candidates": gc.candidates,
        "verified": verified,
        "pairs": n_pairs,
        "same_host_pairs": same_host,
        "cross_host_pairs": n_pairs - same_host.min(n_pairs),
        "clusters": clusters.len(),
        "docs_in_clusters": in_clusters,
        "largest_clusters": largest,
        "near_duplicates_per_page": dist.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "plot": plot_path.file_name().map(|f| f.to_string_lossy().into_owned()),
    });
    if let serde_json::Value::Object(map) = extra {
        figures.extra = map;
    }
    let outputs = [alg.sketch_file(), alg.pairs_file(), alg.clusters_file()];
    let outs: Vec<&str> = outputs.iter().map(String::as_str).collect();
    job.finish(&alg.stage(), &outs, figures)
}

fn write_distribution_plot(
    path: &Path,
    alg: Alg,
    dist: &std::collections::BTreeMap<u64, u64>,
) -> Result<()> {
    // log₁₀ on x by hand; the plot puts y on a log scale.
    let points: Vec<(f64, f64)> = dist
        .iter()
        .map(|(&k, &v)| ((k as f64).log10(), v as f64))
        .collect();
    let svg = crate::plot::line_plot_svg(
        &format!("Near-duplicates per page ({}), log-log", alg.name()),
        "log10(number of near-duplicates of a page)",
        "pages",
        &points,
        true,
    );
    crate::publish::write_atomic(path, svg.as_bytes())
}

/// Union-find over docIDs with path halving and union by size, in an array of
/// the job's docs: 8 bytes per doc, which must fit in the budget.
struct UnionFind {
    parent: Vec<u32>,
    wide: Vec<u64>,
    size: std::collections::HashMap<u64, u32>,
}

impl UnionFind {
    fn new(n: u64, budget: u64) -> Result<UnionFind> {
        let need = n.saturating_mul(if n < u32::MAX as u64 { 4 } else { 8 });
        if need > budget {
            return Err(Error::budget(
                format!("union-find over {n} docs"),
                need,
                budget,
            ));
        }
        Ok(if n < u32::MAX as u64 {
            UnionFind {
                parent: (0..n as u32).collect(),
                wide: Vec::new(),
                size: Default::default(),
            }
        } else {
            UnionFind {
                parent: Vec::new(),
                wide: (0..n).collect(),
                size: Default::default(),
            }
        })
    }

    fn get(&self, i: u64) -> u64 {
        if self.wide.is_empty() {
            u64::from(self.parent[i as usize])
        } else {
            self.wide[i as usize]
        }
    }

    fn set(&mut self, i: u64, p: u64) {
        if self.wide.is_empty() {
            self.parent[i as usize] = p as u32;
        } else {
            self.wide[i as usize] = p;
        }
    }

    fn find(&mut self, mut i: u64) -> u64 {
        while self.get(i) != i {
            let gp = self.get(self.get(i));
            self.set(i, gp);
            i = gp;
        }
        i
    }

    /// Joins the sets of `a` and `b`; the smaller docID becomes the root, so
    /// roots are the clusters' smallest members.
    fn union(&mut self, a: u64, b: u64) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.set(hi, lo);
            let s = self.size.remove(&hi).unwrap_or(1);
            *self.size.entry(lo).or_insert(1) += s;
        }
    }

    /// The clusters of two or more docs, each sorted, ordered by smallest member.
    fn clusters(&mut self) -> Vec<Vec<u64>> {
        let roots: Vec<u64> = self.size.keys().copied().collect();
        let mut map: std::collections::HashMap<u64, Vec<u64>> =
            roots.iter().map(|&r| (r, Vec::new())).collect();
        let n = if self.wide.is_empty() {
            self.parent.len() as u64
        } else {
            self.wide.len() as u64
        };
        for i in 0..n {
            let r = self.find(i);
            if let Some(v) = map.get_mut(&r) {
                v.push(i);
            }
        }
        let mut out: Vec<Vec<u64>> = map.into_values().filter(|v| v.len() >= 2).collect();
        out.sort_by_key(|v| v[0]);
        out
    }
}

/// Reads a pair file: calls `f(a, b, similarity)` in order.
pub fn for_each_pair(path: &Path, mut f: impl FnMut(u64, u64, f32) -> Result<()>) -> Result<()> {
    let file = PageFile::open(path, PAIRS_KIND)?;
    file.for_each(|a, input| {
        let d = get_u64(input, "pair")?;
        let (sim, rest) = input
            .split_first_chunk::<4>()
            .ok_or_else(|| Error::record("pair similarity cut"))?;
        *input = rest;
        let sim = f32::from_le_bytes(*sim);
        let b = a
            .checked_add(d)
            .filter(|&b| b > a)
            .ok_or_else(|| Error::record(format!("pair ({a}, {a} + {d}) is not a < b")))?;
        if !(0.0..=1.0).contains(&sim) {
            return Err(Error::record(format!(
                "pair ({a}, {b}): similarity {sim} outside [0, 1]"
            )));
        }
        f(a, b, sim)
    })
}

/// Reads a cluster file: calls `f(cluster, doc, keep)` in order.
pub fn for_each_cluster_member(
    path: &Path,
    mut f: impl FnMut(u64, u64, bool) -> Result<()>,
) -> Result<()> {
    let file = PageFile::open(path, CLUSTERS_KIND)?;
    file.for_each(|c, input| {
        let d = get_u64(input, "member")?;
        let (&keep, rest) = input
            .split_first()
            .ok_or_else(|| Error::record("keep flag cut"))?;
        *input = rest;
        if d < c || keep > 1 {
            return Err(Error::record(format!(
                "cluster {c}: member {d} with keep flag {keep} (members are ≥ the cluster id, flags 0 or 1)"
            )));
        }
        f(c, d, keep == 1)
    })
}

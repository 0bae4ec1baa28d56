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
//!    highest PageRank, or without ranks the doc met first in the input
//!    ([`cluster`](super::cluster)). The ranks are an optional input: dedup
//!    runs after `pagerank` when both run, needs none (text without links
//!    has no PageRank), and ranks that appear or change later drop the
//!    clusters made without them or with the old ones.
//!
//! Every step's sorts live under the stage's temporary directory and resume
//! after a crash like every webmill sort; the outputs are byte-identical
//! whatever the thread count or the interruptions.

//!
//! Each algorithm is a stage of its own ([`Dedup`]), so that its results are
//! skipped, resumed or recomputed on their own; [`dedup`] begins the ones that
//! must run together and feeds them from one sketch pass.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::container::pagefile::{PageFile, PageFileWriter};
use crate::dedup::candidates::{group_pairs, GroupCounts};
use crate::dedup::cluster::{write_clusters, Keep, PairDocs};
use crate::dedup::files::{
    for_each_pair, parse_sketch, PairWriter, SketchCursor, SketchParams, SKETCHES,
};
pub use crate::dedup::options::{DedupOptions, Verify};
#[cfg(doc)]
use crate::dedup::shingle::shingle_set;
use crate::dedup::sketchers::{AlgOut, Buffers, Sketchers};
use crate::dedup::Alg;
use crate::docs::DocTable;
use crate::error::{Error, Result};
use crate::job::{
    phase, share, Begun, Figure, FigureList, How, Job, JobFile, Outcome, Phase, Published,
    Settings, Stage, StageContext, StageId,
};
use crate::progress::Unit;
use crate::rank::RankVector;
use crate::sort::{Combine, ExternalSorter};
use crate::units::thousands;
use crate::varint;

/// The parameters a `dedup-ALG` stage records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DedupParams {
    /// Shingle length (broder, minhash).
    pub shingle: Option<usize>,
    /// Threshold (minhash; broder with exact verification).
    pub threshold: Option<f64>,
    /// Group cap.
    pub max_group: u64,
    /// Verification (broder, minhash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<String>,
}

/// One of the largest clusters, for the summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LargestCluster {
    /// Its id (smallest docID).
    pub cluster: u64,
    /// Members.
    pub size: u64,
    /// The URL of its first member.
    pub example: String,
}

/// What a `dedup-ALG` stage measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DedupFigures {
    /// How candidates were verified (broder and minhash).
    pub verify: Option<String>,
    /// Bytes of the sketch file.
    pub sketch_file_bytes: u64,
    /// Pages sketched.
    pub docs_sketched: u64,
    /// Groups of docs sharing a key.
    pub groups: u64,
    /// Groups over the cap.
    pub capped_groups: u64,
    /// Candidate pairs.
    pub candidates: u64,
    /// Candidates that passed verification.
    pub verified: u64,
    /// Pairs published.
    pub pairs: u64,
    /// Pairs on one host.
    pub same_host_pairs: u64,
    /// Pairs across hosts.
    pub cross_host_pairs: u64,
    /// Clusters.
    pub clusters: u64,
    /// Docs in clusters.
    pub docs_in_clusters: u64,
    /// The ten largest clusters.
    pub largest_clusters: Vec<LargestCluster>,
    /// (number of near-duplicates k, pages with k) for k ≥ 1.
    pub near_duplicates_per_page: Vec<(u64, u64)>,
    /// The per-page plot's file name.
    pub plot: String,
    /// Which doc of a cluster is kept (`highest PageRank`, or without ranks
    /// `first in input order`).
    #[serde(default)]
    pub keep: String,
}

/// The `dedup-ALG` stage of one algorithm.
pub struct Dedup {
    /// The algorithm.
    pub alg: Alg,
    /// The options (shared by the algorithms of one command).
    pub opts: DedupOptions,
}

/// What holds memory at the same time in a `dedup-ALG` stage: a sort from
/// its first record until it is finished, then its merge until it is dropped
/// (at its whole share unless it has a merge share of its own). The sketch
/// pass's two sorts split their shares with the other algorithms run in the
/// same pass; those wait on disk ([`ExternalSorter::park`]) while one
/// algorithm finishes.
const SHARES: &[Phase] = &[
    phase(
        "sketch pass, then the sketch file",
        &[share("keys", 0.5), share("sketches", 0.5)],
    ),
    phase(
        "candidates",
        &[share("keys merge", 0.1), share("candidates", 0.4)],
    ),
    phase(
        "join a's sketch",
        &[share("candidates merge", 0.1), share("by-b", 0.4)],
    ),
    phase("verify", &[share("by-b merge", 0.1), share("pairs", 0.3)]),
    phase(
        "pairs file and pair ends",
        &[share("pairs", 0.3), share("pair-ends", 0.3)],
    ),
    phase(
        "docs in pairs",
        &[share("pair-ends merge", 0.1), share("union-find", 0.8)],
    ),
];

impl Stage for Dedup {
    type Params = DedupParams;
    type Figures = DedupFigures;

    fn id(&self) -> StageId {
        StageId::Dedup(self.alg)
    }

    fn params(&self) -> Result<DedupParams> {
        check_options(&self.opts)?;
        let (alg, opts) = (self.alg, &self.opts);
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
        Ok(DedupParams {
            shingle,
            threshold: (alg == Alg::MinHash || exact).then_some(opts.threshold),
            max_group: opts.max_group,
            verify: matches!(alg, Alg::Broder | Alg::MinHash).then(|| opts.verify.name().into()),
        })
    }

    fn inputs(&self) -> Vec<JobFile> {
        vec![JobFile::Text, JobFile::PageDoc, JobFile::Docs]
    }

    fn optional_inputs(&self) -> Vec<JobFile> {
        vec![JobFile::Ranks]
    }

    fn outputs(&self) -> Vec<JobFile> {
        let a = self.alg;
        vec![
            JobFile::Sketches(a),
            JobFile::Pairs(a),
            JobFile::Clusters(a),
            JobFile::DedupPlot(a),
        ]
    }

    fn records(f: &DedupFigures) -> u64 {
        f.pairs
    }

    fn shares(&self) -> &'static [Phase] {
        SHARES
    }

    fn work_group(&self) -> Option<&'static str> {
        Some("dedup: one sketch pass")
    }

    fn run_together(
        &self,
        ids: &[StageId],
        job: &mut Job,
        settings: &Settings,
    ) -> Result<Vec<(StageId, How, Published)>> {
        let algs = ids
            .iter()
            .map(|id| match id {
                StageId::Dedup(a) => Ok(*a),
                other => Err(Error::internal(format!(
                    "{other} does not share the near-duplicate stages' sketch pass"
                ))),
            })
            .collect::<Result<Vec<Alg>>>()?;
        let opts = DedupOptions {
            algs,
            ..self.opts.clone()
        };
        Ok(dedup(job, &opts, settings)?
            .into_iter()
            .map(|(alg, o)| (StageId::Dedup(alg), How::of(&o), o.record().clone()))
            .collect())
    }

    fn headline(&self, f: &DedupFigures) -> String {
        format!(
            "{} pairs in {} clusters",
            thousands(f.pairs),
            thousands(f.clusters)
        )
    }

    fn stats(&self, f: &DedupFigures) -> Vec<Figure> {
        let alg = self.alg.name();
        FigureList::new()
            .group("Stages")
            .count(
                format!("dedup_{alg}_pairs"),
                format!("{alg} pairs"),
                f.pairs,
            )
            .count(
                format!("dedup_{alg}_clusters"),
                format!("{alg} clusters"),
                f.clusters,
            )
            .count(
                format!("dedup_{alg}_docs_in_clusters"),
                format!("{alg} docs in clusters"),
                f.docs_in_clusters,
            )
            .build()
    }

    fn run(&self, cx: &mut StageContext) -> Result<DedupFigures> {
        let sketchers = Sketchers::new(&self.opts)?;
        let mut sorts = sketch_pass(&[(self, &*cx)], &sketchers)?;
        let (keys, sketches) = sorts.pop().ok_or_else(|| Error::internal("no sorts"))?;
        finish_alg(self, cx, &sketchers, keys, sketches)
    }
}

pub(crate) fn check_options(opts: &DedupOptions) -> Result<()> {
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
    Ok(())
}

/// Runs (or resumes, or skips) near-duplicate detection for `opts.algs`: the
/// algorithms that must run share one sketch pass, then each publishes.
pub fn dedup(
    job: &mut Job,
    opts: &DedupOptions,
    s: &Settings,
) -> Result<Vec<(Alg, Outcome<DedupFigures>)>> {
    if opts.algs.is_empty() {
        return Err(Error::usage("dedup needs at least one --alg"));
    }
    check_options(opts)?;
    let mut algs: Vec<Alg> = opts.algs.clone();
    algs.sort();
    algs.dedup();
    let stages: Vec<Dedup> = algs
        .iter()
        .map(|&alg| Dedup {
            alg,
            opts: opts.clone(),
        })
        .collect();
    let mut results = Vec::new();
    let mut running = Vec::new();
    for st in &stages {
        match job.begin(st, s)? {
            Begun::Skipped(o) => results.push((st.alg, o)),
            Begun::Run(cx) => running.push((st, cx)),
        }
    }
    if running.is_empty() {
        return Ok(results);
    }
    let sketchers = Sketchers::new(opts)?;
    let parts: Vec<(&Dedup, &StageContext)> = running.iter().map(|(st, cx)| (*st, cx)).collect();
    let mut sorts = sketch_pass(&parts, &sketchers)?;
    // The algorithms finish one at a time: the others' sorts wait on disk.
    for (keys, sketches) in sorts.iter_mut().skip(1) {
        keys.park()?;
        sketches.park()?;
    }
    for ((st, cx), (keys, sketches)) in running.into_iter().zip(sorts) {
        let figures = finish_alg(st, &cx, &sketchers, keys, sketches)?;
        results.push((st.alg, job.publish(st, cx, figures)?));
    }
    results.sort_by_key(|(a, _)| *a);
    Ok(results)
}

/// A stage's two sketch-pass sorts: `(key, docID)` and `(docID, record)`.
type SketchSorts = (ExternalSorter<(u64, u64)>, ExternalSorter<(u64, Vec<u8>)>);

/// Checkpoint of the sketch pass: how many pages it sketched.
const SKETCHED: &str = "sketched";

/// Step 1: one parallel pass over the token streams for every stage in
/// `parts` (skipped for the stages whose sorts an interrupted attempt
/// completed; all of them must then be).
fn sketch_pass(
    parts: &[(&Dedup, &StageContext)],
    sketchers: &Sketchers,
) -> Result<Vec<SketchSorts>> {
    // Budget: the pass holds two sorts per algorithm, each splitting its
    // share with the other algorithms'.
    let ways = parts.len();
    let mut key_sorts = Vec::new();
    let mut sketch_sorts = Vec::new();
    for (_, cx) in parts {
        let keys = cx.sort_config_part("keys", "keys", ways)?;
        key_sorts.push(ExternalSorter::<(u64, u64)>::new(keys, Combine::Dedup)?);
        let sketches = cx.sort_config_part("sketches", "sketches", ways)?;
        sketch_sorts.push(ExternalSorter::<(u64, Vec<u8>)>::new(
            sketches,
            Combine::None,
        )?);
    }
    let complete = key_sorts.iter().all(|k| k.input_complete())
        && sketch_sorts.iter().all(|k| k.input_complete())
        && parts
            .iter()
            .map(|(_, cx)| cx.checkpoint::<u64>(SKETCHED))
            .collect::<Result<Vec<_>>>()?
            .iter()
            .all(Option::is_some);
    if complete {
        return Ok(key_sorts.into_iter().zip(sketch_sorts).collect());
    }
    let algs: Vec<Alg> = parts.iter().map(|(st, _)| st.alg).collect();
    let cx = parts[0].1;
    let text = cx.input(JobFile::Text)?;
    let pagedoc = cx.input(JobFile::PageDoc)?;
    let pages = PageFile::open(text, &crate::ingest::records::TEXT)?;
    let task = cx.task("sketching", Some(pages.records()), Unit::Records);
    drop(pages);
    let n = sketch_pages(
        text,
        pagedoc,
        0..u64::MAX,
        sketchers,
        &algs,
        |doc, per_alg| {
            for (i, out) in per_alg.into_iter().enumerate() {
                for k in out.keys {
                    key_sorts[i].push((k, doc))?;
                }
                if !out.record.is_empty() {
                    sketch_sorts[i].push((doc, out.record))?;
                }
            }
            Ok(())
        },
        |n| task.set_position(n),
    )?;
    for (_, cx) in parts {
        cx.save_checkpoint(SKETCHED, &n)?;
    }
    Ok(key_sorts.into_iter().zip(sketch_sorts).collect())
}

/// Sketches the pages of `pages` (their docs' own captures) for `algs`,
/// a batch at a time in parallel: `emit(doc, outputs)` in page order, one
/// output per algorithm; `progress(pages so far)` after each batch.
/// Returns the pages sketched.
pub(crate) fn sketch_pages(
    text: &std::path::Path,
    pagedoc: &std::path::Path,
    pages: std::ops::Range<u64>,
    sketchers: &Sketchers,
    algs: &[Alg],
    mut emit: impl FnMut(u64, Vec<AlgOut>) -> Result<()>,
    progress: impl Fn(u64),
) -> Result<u64> {
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
            emit(*doc, per_alg)?;
        }
        n += batch.len() as u64;
        progress(n);
        batch.clear();
        Ok(())
    };
    crate::ingest::text::for_each_page_text_in(text, pagedoc, pages, |_, doc, words| {
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

/// Writes a sketch file (`sketches-ALG.wm`) from records pushed by
/// increasing docID, each doc's host joined from the doc table by one walk.
pub(crate) struct SketchFileWriter<'a> {
    w: PageFileWriter,
    docs: Box<dyn Iterator<Item = Result<(u64, crate::docs::Doc)>> + 'a>,
    alg: Alg,
    payload: Vec<u8>,
    n: u64,
}

impl<'a> SketchFileWriter<'a> {
    /// Starts the sketch file of `alg` at `path`, its sets of `set_k`-word
    /// shingles (if any), the hosts from `docs`.
    pub(crate) fn create(
        path: &std::path::Path,
        alg: Alg,
        set_k: Option<u64>,
        docs: &'a DocTable,
    ) -> Result<SketchFileWriter<'a>> {
        let params = SketchParams {
            algorithm: alg.name().into(),
            shingle_set: set_k,
        };
        let header = serde_json::to_value(&params).map_err(|e| Error::internal(e.to_string()))?;
        Ok(SketchFileWriter {
            w: PageFileWriter::with_params(path, &SKETCHES, &header, 256 << 10, 3)?,
            docs: Box::new(docs.iter()),
            alg,
            payload: Vec::new(),
            n: 0,
        })
    }

    /// Appends `doc`'s record (`bytes(sketch)` [`bytes(shingle set)`]);
    /// docs strictly increasing, each in the doc table.
    pub(crate) fn push(&mut self, doc: u64, sketch: &[u8]) -> Result<()> {
        let host = loop {
            match self.docs.next() {
                Some(r) => {
                    let (id, d) = r?;
                    if id == doc {
                        break d.host;
                    }
                }
                None => {
                    return Err(Error::internal(format!(
                        "docID {doc} not in the doc table (or not above the previous one)"
                    )))
                }
            }
        };
        // The record is the payload's tail: sketch [, shingle set].
        self.payload.clear();
        varint::put(&mut self.payload, host);
        self.payload.extend_from_slice(sketch);
        self.n += 1;
        self.w.push(doc, &self.payload)
    }

    /// Publishes the file.
    pub(crate) fn finish(self) -> Result<u64> {
        self.w
            .finish(&json!({"algorithm": self.alg.name(), "docs": self.n}))?;
        Ok(self.n)
    }
}

/// Checkpoint of the grouping's counts.
const GROUPS: &str = "groups";

/// Steps 2–4 for one algorithm: the sketch file, candidates, verification,
/// pairs, clusters, the per-page plot.
fn finish_alg(
    st: &Dedup,
    cx: &StageContext,
    sketchers: &Sketchers,
    keys: ExternalSorter<(u64, u64)>,
    sketches: ExternalSorter<(u64, Vec<u8>)>,
) -> Result<DedupFigures> {
    let (alg, opts) = (st.alg, &st.opts);
    let docs = DocTable::open(cx.input(JobFile::Docs)?)?;
    let docs_sketched: u64 = cx.checkpoint(SKETCHED)?.unwrap_or(0);
    let set_k = sketchers.set_shingler(alg).map(|sh| sh.k() as u64);
    // Sketch file, by docID, with each doc's host.
    let sketch_path = cx.output(JobFile::Sketches(alg))?;
    if !cx.output_done(JobFile::Sketches(alg))? {
        let mut sorted = sketches.finish()?;
        let mut w = SketchFileWriter::create(&sketch_path, alg, set_k, &docs)?;
        while let Some((doc, sketch)) = sorted.next_record()? {
            w.push(doc, &sketch)?;
        }
        w.finish()?;
    } else {
        drop(sketches);
    }
    let (sketch_file, params) = crate::dedup::files::open_sketches(&sketch_path)?;
    if params.shingle_set != set_k {
        return Err(Error::internal(format!(
            "{}: its shingle sets do not match the stage's --verify",
            sketch_path.display()
        )));
    }

    // Candidates.
    let mut cands = cx.sorter::<(u64, u64)>("candidates", Combine::Dedup)?;
    let gc = if !cands.input_complete() {
        let mut keys = keys;
        keys.set_merge_budget(cx.budget().bytes("keys merge")?);
        let gc = group_pairs(keys.finish()?, opts.max_group, &mut cands)?;
        cx.save_checkpoint(GROUPS, &gc)?;
        gc
    } else {
        drop(keys);
        cx.checkpoint::<GroupCounts>(GROUPS)?
            .ok_or_else(|| Error::internal("the candidates' group counts are missing"))?
    };
    cands.set_merge_budget(cx.budget().bytes("candidates merge")?);

    // Verify by two merge joins: attach a's sketch, then meet b's.
    let mut by_b = cx.sorter::<(u64, u64, Vec<u8>)>("by-b", Combine::None)?;
    if !by_b.input_complete() {
        let mut sorted = cands.finish()?;
        let mut cur = SketchCursor::new(&sketch_file, &params);
        while let Some((a, b)) = sorted.next_record()? {
            let Some(p) = cur.seek(a)? else { continue };
            by_b.push((b, a, p.to_vec()))?;
        }
    } else {
        drop(cands);
    }
    by_b.set_merge_budget(cx.budget().bytes("by-b merge")?);
    let mut pairs = cx.sorter::<(u64, u64, u32)>("pairs", Combine::None)?;
    let mut same_host = 0u64;
    let mut verified = 0u64;
    {
        let mut sorted = by_b.finish()?;
        let mut cur = SketchCursor::new(&sketch_file, &params);
        let with_set = cur.with_set;
        while let Some((b, a, pa)) = sorted.next_record()? {
            let Some(pb) = cur.seek(b)? else { continue };
            // Both records were checked when the cursor read them.
            let ra = parse_sketch(a, &mut pa.as_slice(), with_set, false)?;
            let rb = parse_sketch(b, &mut &pb[..], with_set, false)?;
            if let Some(sim) =
                sketchers.verify(alg, (ra.sketch, ra.shingles), (rb.sketch, rb.shingles))
            {
                pairs.push((a, b, sim.to_bits()))?;
                verified += 1;
                same_host += u64::from(ra.host == rb.host);
            }
        }
    }
    // The pairs file, and both ends of every pair into a sort that counts
    // each doc's pairs.
    let mut sorted = pairs.finish()?;
    let pairs_path = cx.output(JobFile::Pairs(alg))?;
    let mut w = PairWriter::create(&pairs_path)?;
    let mut ends = cx.sorter::<(u64, u64)>("pair-ends", Combine::sum())?;
    while let Some((a, b, sim)) = sorted.next_record()? {
        w.push(a, b, f32::from_bits(sim))?;
        ends.push((a, 1))?;
        ends.push((b, 1))?;
    }
    let n_pairs = w.finish(alg.name())?;
    drop(sorted);
    // The docs in pairs with their counts: the distribution of
    // near-duplicates per page (Henzinger's plot), and what union-find runs
    // over — memory per doc in a pair, not per doc of the job.
    ends.set_merge_budget(cx.budget().bytes("pair-ends merge")?);
    let ranks = cx
        .optional_input(JobFile::Ranks)?
        .map(RankVector::open)
        .transpose()?;
    let mut in_pairs = DocsInPairs::new(cx, ranks.is_some(), 0)?;
    let mut counted = ends.finish()?;
    while let Some((doc, k)) = counted.next_record()? {
        in_pairs.push(doc, k);
    }
    drop(counted);
    let mut uf = in_pairs.union_find()?;
    for_each_pair(&pairs_path, |a, b, _| uf.union(a, b))?;
    let tail = ClusterTail::write(cx, alg, &docs, &mut uf, ranks.as_ref())?;
    plot(cx, alg, &in_pairs.dist)?;

    Ok(DedupFigures {
        verify: matches!(alg, Alg::Broder | Alg::MinHash).then(|| opts.verify.name().into()),
        sketch_file_bytes: sketch_file.container().size(),
        docs_sketched,
        groups: gc.groups,
        capped_groups: gc.capped,
        candidates: gc.candidates,
        verified,
        pairs: n_pairs,
        same_host_pairs: same_host,
        cross_host_pairs: n_pairs - same_host.min(n_pairs),
        clusters: tail.clusters,
        docs_in_clusters: tail.docs,
        largest_clusters: tail.largest,
        near_duplicates_per_page: in_pairs.dist.into_iter().collect(),
        plot: JobFile::DedupPlot(alg).name(),
        keep: tail.keep.into(),
    })
}

/// The docs in pairs, pushed in docID order with their pair counts: the
/// distribution of near-duplicates per page and the union-find's docs,
/// within the stage's union-find share of memory.
pub(crate) struct DocsInPairs {
    docs: Vec<u64>,
    /// (near-duplicates k, pages with k).
    pub(crate) dist: BTreeMap<u64, u64>,
    n: u64,
    per_doc: u64,
    limit: u64,
    mem: u64,
}

impl DocsInPairs {
    /// For a stage with or without ranks (without, each doc also holds its
    /// page number), `extra` more bytes held per doc by the caller.
    pub(crate) fn new(cx: &StageContext, ranks: bool, extra: u64) -> Result<DocsInPairs> {
        let per_doc =
            PairDocs::BYTES_PER_DOC + extra + if ranks { 0 } else { PairDocs::BYTES_PER_KEY };
        Ok(DocsInPairs {
            docs: Vec::new(),
            dist: BTreeMap::new(),
            n: 0,
            per_doc,
            limit: cx.budget().bytes("union-find")?,
            mem: cx.settings().mem,
        })
    }

    /// `doc`, in `k` pairs (docs by increasing docID); whether it is held
    /// (`false` once they no longer fit: [`DocsInPairs::union_find`] then
    /// fails).
    pub(crate) fn push(&mut self, doc: u64, k: u64) -> bool {
        self.n += 1;
        *self.dist.entry(k).or_default() += 1;
        let held = self.n * self.per_doc <= self.limit;
        if held {
            self.docs.push(doc);
        }
        held
    }

    /// The union-find over the docs, or the budget's error when they do not
    /// fit.
    pub(crate) fn union_find(&mut self) -> Result<PairDocs> {
        let need = self.n * self.per_doc;
        if need > self.limit {
            // Said in terms of --mem, of which clustering may use `limit`.
            let mem_needed =
                (u128::from(need) * u128::from(self.mem)).div_ceil(u128::from(self.limit.max(1)));
            return Err(Error::budget(
                format!(
                    "clustering the {} docs in near-duplicate pairs (union-find)",
                    self.n
                ),
                u64::try_from(mem_needed).unwrap_or(u64::MAX),
                self.mem,
            ));
        }
        PairDocs::new(std::mem::take(&mut self.docs))
    }
}

/// What step 4 wrote after the union-find: the cluster file and the plot.
pub(crate) struct ClusterTail {
    pub(crate) clusters: u64,
    pub(crate) docs: u64,
    pub(crate) largest: Vec<LargestCluster>,
    pub(crate) keep: &'static str,
}

impl ClusterTail {
    /// Writes the clusters of `uf`, keeping the highest-ranked doc of each,
    /// or without ranks the one met first in the input (its page number,
    /// from one walk through the doc table), and the per-page plot of
    /// `dist`.
    pub(crate) fn write(
        cx: &StageContext,
        alg: Alg,
        docs: &DocTable,
        uf: &mut PairDocs,
        ranks: Option<&RankVector>,
    ) -> Result<ClusterTail> {
        let keep = match ranks {
            Some(r) => Keep::Rank(r),
            None => {
                let mut walk = docs.walk();
                let mut pages = Vec::with_capacity(uf.docs().len());
                for &d in uf.docs() {
                    pages.push(walk.get(d)?.page.unwrap_or(u64::MAX));
                }
                uf.set_keys(pages)?;
                Keep::FirstInInput
            }
        };
        let clusters = write_clusters(uf, &keep, alg, &cx.output(JobFile::Clusters(alg))?)?;
        let mut largest = Vec::new();
        for &(size, id) in clusters.by_size.iter().take(10) {
            let example = docs.get(id)?.map(|d| d.url).unwrap_or_default();
            largest.push(LargestCluster {
                cluster: id,
                size,
                example,
            });
        }
        Ok(ClusterTail {
            clusters: clusters.clusters,
            docs: clusters.docs,
            largest,
            keep: keep.name(),
        })
    }
}

/// Writes the per-page plot of `alg`'s stage.
pub(crate) fn plot(cx: &StageContext, alg: Alg, dist: &BTreeMap<u64, u64>) -> Result<()> {
    write_distribution_plot(&cx.output(JobFile::DedupPlot(alg))?, alg, dist)
}

fn write_distribution_plot(
    path: &std::path::Path,
    alg: Alg,
    dist: &BTreeMap<u64, u64>,
) -> Result<()> {
    let points: Vec<(u64, u64)> = dist.iter().map(|(&k, &v)| (k, v)).collect();
    let svg = crate::plot::distribution_svg(
        &format!("Near-duplicates per page ({})", alg.name()),
        "near-duplicates of a page",
        "pages",
        &points,
    );
    crate::publish::write_atomic(path, svg.as_bytes())
}

//! The index: Brin & Page's lexicon, forward barrels, sorter and inverted
//! barrels (*The Anatomy of a Large-Scale Hypertextual Web Search Engine*,
//! §4.2.4–4.2.7 and §4.4), built out of core: the `index` stage.
//!
//! ```text
//! text.wm + pagedoc.wm ─┐  pass 1: hits per word, in bounded chunks ─► sort (words, sum) ─►
//! docs.wm + anchors.wm ─┘          plan: wordIDs by descending hits, barrel cuts, term dictionary
//!                          pass 2: each document's hits ─► forward barrels fwd-BBB.wm (tmp)
//! forward barrel b ─► sort (wordID, docID) ─► index/full-BBB.wm + index/short-BBB.wm
//!                                              + lexicon entries of b (tmp)        [per barrel]
//! term dictionary + entries ─► index/lexicon.wm
//! ```
//!
//! * [`hit`] — the two-byte hits; [`bitpack`] — the integer codec;
//! * [`indexer`] — documents → hits (page text: plain hits; URL, title and
//!   anchor texts: fancy hits of the document the link points to);
//! * [`lexicon`] — the vocabulary sort, wordIDs, barrel cuts, the lexicon file;
//! * [`forward`] — forward barrels; [`sorter`] — one barrel's sort;
//! * [`postings`], [`inverted`] — postings blocks and the inverted barrels,
//!   with the cursor a searcher uses (`next`, `seek`, hits).
//!
//! # Resume
//!
//! Every step leaves a checkpoint in the stage's temporary directory: the
//! vocabulary sort's runs (input complete), the plan and term dictionary, the
//! forward barrels with a completion marker, and per barrel its published
//! files and lexicon part (a barrel whose sort was interrupted resumes from
//! the runs it wrote). Pass 1 and the forward pass start over when they were
//! interrupted mid-way (each is one read of the input). Every output is a
//! function of the input and the barrel count alone — not of the budget, the
//! thread count or interruptions.

pub mod bitpack;
pub mod forward;
pub mod hit;
pub mod indexer;
pub mod inverted;
pub mod lexicon;
pub mod postings;
pub mod sorter;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::json;

use crate::error::{Error, IoContext, Result};
use crate::job::{Begin, Figures, Job, Settings, StageRecord};
use crate::progress::{SharedReporter, Unit};
use crate::sort::{ExternalSorter, SortConfig};
pub use indexer::Sources;
pub use inverted::{Barrel, BarrelSet, DoclistCursor, Location};
pub use lexicon::{Lexicon, TermInfo};

/// Name of the stage.
pub const STAGE: &str = "index";
/// The directory of the index files in a job.
pub const INDEX_DIR: &str = "index";
/// The lexicon, relative to the job.
pub const LEXICON_FILE: &str = "index/lexicon.wm";
/// Default number of barrels (the paper's 64).
pub const DEFAULT_BARRELS: u32 = 64;
/// Most barrels allowed.
pub const MAX_BARRELS: u32 = 4096;

/// The file of barrel `b` of `set`, relative to the job.
pub fn barrel_file(set: BarrelSet, b: usize) -> String {
    format!("{INDEX_DIR}/{}-{b:03}.wm", set.name())
}

/// Index parameters.
#[derive(Clone, Debug)]
pub struct IndexOptions {
    /// Barrels the wordID range is cut into.
    pub barrels: u32,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            barrels: DEFAULT_BARRELS,
        }
    }
}

/// What a build made, for figures and reports.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct IndexSummary {
    /// Distinct words.
    pub words: u32,
    /// Hits counted in pass 1.
    pub hits: u64,
    /// Pass 2's figures.
    pub forward: indexer::ForwardStats,
    /// Postings in the full and short barrels.
    pub postings: (u64, u64),
    /// Plain and fancy hits in the full barrels.
    pub full_hits: (u64, u64),
    /// Plain and fancy hits in the short barrels.
    pub short_hits: (u64, u64),
    /// Bytes of the lexicon.
    pub lexicon_bytes: u64,
    /// Bytes of the term dictionary inside it.
    pub fst_bytes: u64,
    /// Bytes of the full and short barrels.
    pub barrel_bytes: (u64, u64),
    /// Sort runs written by the barrel sorts.
    pub runs: usize,
    /// Barrels sorted in parallel.
    pub parallel_barrels: usize,
    /// Largest barrel's share of the hits.
    pub max_barrel_share: f64,
    /// Seconds per step: vocabulary, plan, forward, sort, lexicon.
    pub seconds: [f64; 5],
}

/// Builds the index from `sources` into `out` (lexicon and barrels, see
/// [`barrel_file`] for the names, relative to `out`'s parent … here directly
/// `out/lexicon.wm`, `out/full-BBB.wm`, `out/short-BBB.wm`), with its
/// checkpoints in `tmp`, under `budget` bytes. Resumes from what `tmp` and
/// `out` hold.
pub fn build(
    sources: &Sources,
    out: &Path,
    tmp: &Path,
    barrels: u32,
    budget: u64,
    reporter: &SharedReporter,
) -> Result<IndexSummary> {
    if barrels == 0 || barrels > MAX_BARRELS {
        return Err(Error::usage(format!(
            "--barrels must be in 1..={MAX_BARRELS}, got {barrels}"
        )));
    }
    std::fs::create_dir_all(out).at(out)?;
    std::fs::create_dir_all(tmp).at(tmp)?;
    let mut summary = IndexSummary::default();
    let plan_path = tmp.join("plan.json");
    let fst_path = tmp.join("terms.fst");

    // Pass 1 and the plan.
    let mut t = Instant::now();
    let plan = match lexicon::WordPlan::load(&plan_path)
        .filter(|p| p.barrels() == barrels as usize && fst_path.exists())
    {
        Some(p) => p,
        None => {
            let vocab_dir = tmp.join("vocabulary");
            let cfg = |b: u64| {
                SortConfig::new(&vocab_dir, b)
                    .label("index: vocabulary")
                    .reporter(std::sync::Arc::clone(reporter))
                    .persist(true)
            };
            let mut sorter = ExternalSorter::new(cfg(budget / 3), lexicon::vocabulary_combine())?;
            if !sorter.input_complete() {
                drop(sorter);
                crate::sort::remove_sort_dir(&vocab_dir)?;
                sorter = ExternalSorter::new(cfg(budget / 3), lexicon::vocabulary_combine())?;
                indexer::count_vocabulary(sources, &mut sorter, budget / 4, reporter)?;
            }
            crate::sort::memory::release_freed_heap();
            let sorted = sorter.finish()?;
            summary.seconds[0] = t.elapsed().as_secs_f64();
            t = Instant::now();
            let plan = lexicon::plan_words(
                sorted, barrels, tmp, budget, reporter, &fst_path, &plan_path,
            )?;
            crate::sort::remove_sort_dir(&vocab_dir)?;
            summary.seconds[1] = t.elapsed().as_secs_f64();
            plan
        }
    };
    summary.words = plan.words;
    summary.hits = plan.hits;
    summary.max_barrel_share =
        plan.barrel_hits.iter().copied().max().unwrap_or(0) as f64 / plan.hits.max(1) as f64;

    // Pass 2: forward barrels.
    t = Instant::now();
    let fwd_dir = tmp.join("forward");
    let marker = tmp.join("forward.json");
    let done = |b: usize| {
        out.join(file_name(BarrelSet::Full, b)).exists()
            && out.join(file_name(BarrelSet::Short, b)).exists()
            && sorter::read_part(&part_path(tmp, b)).is_some()
    };
    let all_done = (0..plan.barrels()).all(done);
    summary.forward = match std::fs::read(&marker)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
    {
        Some(stats) => stats,
        None if all_done => indexer::ForwardStats::default(),
        None => {
            crate::sort::remove_sort_dir(&fwd_dir)?;
            std::fs::create_dir_all(&fwd_dir).at(&fwd_dir)?;
            let ids = indexer::WordIds::new(lexicon::open_fst_file(&fst_path)?, budget / 4);
            let block_bytes = (budget / 4 / u64::from(barrels)).clamp(4 << 10, 256 << 10) as usize;
            let stats =
                indexer::write_forward(sources, &ids, &plan, &fwd_dir, block_bytes, reporter)?;
            drop(ids);
            crate::sort::memory::release_freed_heap();
            let bytes = serde_json::to_vec(&stats).map_err(|e| Error::internal(e.to_string()))?;
            crate::publish::write_atomic(&marker, &bytes)?;
            stats
        }
    };
    summary.seconds[2] = t.elapsed().as_secs_f64();

    // The sorter, barrels in parallel when the budget allows (at least
    // 16 MiB each).
    t = Instant::now();
    let todo: Vec<usize> = (0..plan.barrels()).filter(|&b| !done(b)).collect();
    let parallel = rayon::current_num_threads()
        .min((budget / (16 << 20)).max(1) as usize)
        .min(todo.len())
        .max(1);
    summary.parallel_barrels = parallel;
    let per_barrel = budget / parallel as u64;
    let task = reporter.task(
        "index: sorting barrels",
        Some(plan.barrels() as u64),
        Unit::Steps,
    );
    task.set_position((plan.barrels() - todo.len()) as u64);
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let runs = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..parallel {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                if k >= todo.len() || failure.lock().map(|f| f.is_some()).unwrap_or(true) {
                    return;
                }
                let b = todo[k];
                let result = sorter::sort_barrel(
                    &indexer::forward_path(&fwd_dir, b),
                    &tmp.join(format!("sort-{b:03}")),
                    per_barrel,
                    reporter,
                    &out.join(file_name(BarrelSet::Full, b)),
                    &out.join(file_name(BarrelSet::Short, b)),
                )
                .and_then(|s| {
                    runs.fetch_add(s.runs, Ordering::SeqCst);
                    sorter::write_part(
                        &part_path(tmp, b),
                        b as u32,
                        plan.firsts[b],
                        plan.firsts[b + 1],
                        &s.entries,
                    )?;
                    crate::publish::failpoint("index.barrel_done")?;
                    crate::sort::remove_sort_dir(&tmp.join(format!("sort-{b:03}")))?;
                    let f = indexer::forward_path(&fwd_dir, b);
                    std::fs::remove_file(&f).at(&f)
                });
                match result {
                    Ok(()) => task.inc(1),
                    Err(e) => {
                        if let Ok(mut f) = failure.lock() {
                            f.get_or_insert(e);
                        }
                        return;
                    }
                }
            });
        }
    });
    drop(task);
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    summary.runs = runs.into_inner();
    summary.seconds[3] = t.elapsed().as_secs_f64();

    // The lexicon.
    t = Instant::now();
    let fst = std::fs::read(&fst_path).at(&fst_path)?;
    summary.fst_bytes = fst.len() as u64;
    let mut w = lexicon::LexiconWriter::create(out.join("lexicon.wm"), &fst, &plan)?;
    drop(fst);
    for b in 0..plan.barrels() {
        let entries = sorter::read_part(&part_path(tmp, b))
            .ok_or_else(|| Error::internal(format!("lexicon part of barrel {b} is missing")))?;
        w.push_encoded(&entries)?;
    }
    summary.lexicon_bytes = w.finish()?;
    for b in 0..plan.barrels() {
        for set in [BarrelSet::Full, BarrelSet::Short] {
            let barrel = Barrel::open(out.join(file_name(set, b)))?;
            let c = barrel.container();
            let m = c.meta();
            let get = |k: &str| m[k].as_u64().unwrap_or(0);
            match set {
                BarrelSet::Full => {
                    summary.postings.0 += get("postings");
                    summary.full_hits.0 += get("plain_hits");
                    summary.full_hits.1 += get("fancy_hits");
                    summary.barrel_bytes.0 += c.size();
                }
                BarrelSet::Short => {
                    summary.postings.1 += get("postings");
                    summary.short_hits.0 += get("plain_hits");
                    summary.short_hits.1 += get("fancy_hits");
                    summary.barrel_bytes.1 += c.size();
                }
            }
        }
    }
    summary.seconds[4] = t.elapsed().as_secs_f64();
    Ok(summary)
}

fn file_name(set: BarrelSet, b: usize) -> String {
    format!("{}-{b:03}.wm", set.name())
}

fn part_path(tmp: &Path, b: usize) -> PathBuf {
    tmp.join(format!("lexicon-part-{b:03}.wm"))
}

/// How the stage ended.
#[derive(Debug)]
pub enum IndexOutcome {
    /// Finished earlier with the same parameters.
    AlreadyDone(StageRecord),
    /// Ran (possibly resumed) and finished.
    Done {
        /// The manifest record.
        record: StageRecord,
        /// Whether an interrupted run was resumed.
        resumed: bool,
        /// What the build made.
        summary: Box<IndexSummary>,
    },
}

/// Runs (or resumes, or skips) the `index` stage on a job that has been
/// ingested and resolved.
pub fn build_index(job: &mut Job, opts: &IndexOptions, s: &Settings) -> Result<IndexOutcome> {
    let ingest = job.finished_stage(crate::ingest::STAGE)?.clone();
    let resolve = job.finished_stage(crate::ingest::resolve::STAGE)?.clone();
    let checksum = |rec: &StageRecord, file: &str| {
        rec.outputs
            .iter()
            .find(|o| o.path == file)
            .map(|o| o.checksum.clone())
    };
    use crate::graph::import::DOCS_FILE;
    use crate::ingest::resolve::{ANCHORS_FILE, PAGEDOC_FILE};
    use crate::ingest::TEXT_FILE;
    let params = json!({
        "barrels": opts.barrels,
        "text": checksum(&ingest, TEXT_FILE),
        "docs": checksum(&resolve, DOCS_FILE),
        "pagedoc": checksum(&resolve, PAGEDOC_FILE),
        "anchors": checksum(&resolve, ANCHORS_FILE),
    });
    let mut outputs = vec![LEXICON_FILE.to_string()];
    for b in 0..opts.barrels as usize {
        outputs.push(barrel_file(BarrelSet::Full, b));
        outputs.push(barrel_file(BarrelSet::Short, b));
    }
    let output_refs: Vec<&str> = outputs.iter().map(String::as_str).collect();
    let resumed = match job.begin(
        STAGE,
        params,
        &[crate::ingest::STAGE, crate::ingest::resolve::STAGE],
        &output_refs,
        s.force,
    )? {
        Begin::Skip(rec) => return Ok(IndexOutcome::AlreadyDone(rec)),
        Begin::Run { resumed } => resumed,
    };
    if resumed {
        s.reporter.note(&format!(
            "{STAGE}: resuming an interrupted run from its checkpoints in {}",
            job.tmp_dir(STAGE).display()
        ));
    }
    let sources = Sources {
        text: job.path(TEXT_FILE),
        pagedoc: job.path(PAGEDOC_FILE),
        docs: job.path(DOCS_FILE),
        anchors: job.path(ANCHORS_FILE),
    };
    let summary = build(
        &sources,
        &job.path(INDEX_DIR),
        &job.tmp_dir(STAGE),
        opts.barrels,
        s.mem,
        &s.reporter,
    )?;
    let mut figures = Figures {
        records: summary.postings.0,
        ..Figures::default()
    };
    if let serde_json::Value::Object(m) =
        serde_json::to_value(&summary).map_err(|e| Error::internal(e.to_string()))?
    {
        figures.extra = m;
    }
    let record = job.finish(STAGE, &output_refs, figures)?;
    Ok(IndexOutcome::Done {
        record,
        resumed,
        summary: Box::new(summary),
    })
}

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
pub mod ciff;
pub mod fieldlens;
pub mod forward;
pub mod hit;
pub mod indexer;
pub mod inverted;
pub mod lexicon;
pub mod postings;
pub mod sorter;
pub mod stem;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::error::{Error, IoContext, Result};
use crate::job::{Job, JobFile, Outcome, Settings, Stage, StageContext, StageId};
use crate::progress::{SharedReporter, Unit};
use crate::sort::{ExternalSorter, SortConfig};
pub use indexer::Sources;
pub use inverted::{Barrel, BarrelSet, DoclistCursor, Location};
pub use lexicon::{Lexicon, TermInfo};
pub use stem::Stem;

/// Default number of barrels (the paper's 64).
pub const DEFAULT_BARRELS: u32 = 64;
/// Most barrels allowed.
pub const MAX_BARRELS: u32 = crate::job::files::MAX_BARRELS as u32;

/// The job file of barrel `b` of `set`.
pub fn barrel_file(set: BarrelSet, b: usize) -> JobFile {
    match set {
        BarrelSet::Full => JobFile::FullBarrel(b as u16),
        BarrelSet::Short => JobFile::ShortBarrel(b as u16),
    }
}

/// Index parameters.
#[derive(Clone, Debug)]
pub struct IndexOptions {
    /// Barrels the wordID range is cut into.
    pub barrels: u32,
    /// How words are stemmed.
    pub stem: Stem,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            barrels: DEFAULT_BARRELS,
            stem: Stem::default(),
        }
    }
}

/// What a build made, for figures and reports.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
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
    opts: &IndexOptions,
    budget: u64,
    reporter: &SharedReporter,
) -> Result<IndexSummary> {
    let (barrels, stem) = (opts.barrels, opts.stem);
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
                indexer::count_vocabulary(sources, stem, &mut sorter, budget / 4, reporter)?;
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
            && sorter::part_is_complete(&part_path(tmp, b))
    };
    let lengths_path = out.join("fieldlens.wm");
    let all_done = (0..plan.barrels()).all(done) && lengths_path.exists();
    summary.forward = match std::fs::read(&marker)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
    {
        Some(stats) => stats,
        None if all_done => indexer::ForwardStats::default(),
        None => {
            crate::sort::remove_sort_dir(&fwd_dir)?;
            std::fs::create_dir_all(&fwd_dir).at(&fwd_dir)?;
            let lengths_dir = tmp.join("field-lengths");
            crate::sort::remove_sort_dir(&lengths_dir)?;
            let mut lengths = ExternalSorter::new(
                SortConfig::new(&lengths_dir, budget / 4)
                    .label("index: field lengths")
                    .reporter(std::sync::Arc::clone(reporter)),
                crate::sort::Combine::sum(),
            )?;
            let ids = indexer::WordIds::new(lexicon::open_fst_file(&fst_path)?, budget / 4);
            let block_bytes = (budget / 4 / u64::from(barrels)).clamp(4 << 10, 256 << 10) as usize;
            let stats = indexer::write_forward(
                sources,
                stem,
                &ids,
                &plan,
                &fwd_dir,
                block_bytes,
                reporter,
                &mut lengths,
            )?;
            drop(ids);
            let docs = crate::docs::DocTable::open(&sources.docs)?.len();
            fieldlens::write_sorted(lengths.finish()?, docs, &lengths_path)?;
            crate::sort::remove_sort_dir(&lengths_dir)?;
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
                    &part_path(tmp, b),
                )
                .and_then(|s| {
                    runs.fetch_add(s.runs, Ordering::SeqCst);
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
    let mut w = lexicon::LexiconWriter::create(out.join("lexicon.wm"), &fst, &plan, stem)?;
    drop(fst);
    for b in 0..plan.barrels() {
        sorter::for_each_part_block(&part_path(tmp, b), |entries| w.push_encoded(entries))?;
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

/// The parameters the index records.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IndexParams {
    /// Barrels the wordID range is cut into.
    pub barrels: u32,
    /// How words are stemmed (absent: none, as before the option existed).
    #[serde(default, skip_serializing_if = "is_no_stem")]
    pub stem: Stem,
}

fn is_no_stem(s: &Stem) -> bool {
    *s == Stem::None
}

/// The `index` stage: the lexicon and the inverted barrels of an ingested
/// job, with anchor text as hits of the pages it points to.
pub struct Index {
    /// Its options.
    pub opts: IndexOptions,
}

impl Stage for Index {
    type Params = IndexParams;
    type Figures = IndexSummary;

    fn id(&self) -> StageId {
        StageId::Index
    }

    fn params(&self) -> Result<IndexParams> {
        let b = self.opts.barrels;
        if b == 0 || b > MAX_BARRELS {
            return Err(Error::usage(format!(
                "--barrels must be between 1 and {MAX_BARRELS}, got {b}"
            )));
        }
        Ok(IndexParams {
            barrels: b,
            stem: self.opts.stem,
        })
    }

    fn inputs(&self) -> Vec<JobFile> {
        vec![
            JobFile::Text,
            JobFile::PageDoc,
            JobFile::Docs,
            JobFile::Anchors,
        ]
    }

    fn outputs(&self) -> Vec<JobFile> {
        let mut v = vec![JobFile::Lexicon, JobFile::FieldLengths];
        for b in 0..self.opts.barrels as usize {
            v.push(barrel_file(BarrelSet::Full, b));
            v.push(barrel_file(BarrelSet::Short, b));
        }
        v
    }

    fn records(f: &IndexSummary) -> u64 {
        f.postings.0
    }

    fn run(&self, cx: &mut StageContext) -> Result<IndexSummary> {
        let sources = Sources {
            text: cx.input(JobFile::Text)?.to_path_buf(),
            pagedoc: cx.input(JobFile::PageDoc)?.to_path_buf(),
            docs: cx.input(JobFile::Docs)?.to_path_buf(),
            anchors: cx.input(JobFile::Anchors)?.to_path_buf(),
        };
        let lexicon = cx.output(JobFile::Lexicon)?;
        let out = lexicon
            .parent()
            .ok_or_else(|| Error::internal("the lexicon's path has no directory"))?;
        build(
            &sources,
            out,
            cx.tmp(),
            &self.opts,
            cx.mem(),
            &cx.settings().reporter,
        )
    }
}

/// Runs (or resumes, or skips) the `index` stage on a job that has been
/// ingested and resolved.
pub fn build_index(
    job: &mut Job,
    opts: &IndexOptions,
    s: &Settings,
) -> Result<Outcome<IndexSummary>> {
    job.run(&Index { opts: opts.clone() }, s)
}

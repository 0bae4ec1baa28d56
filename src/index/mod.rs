//! The index: Brin & Page's lexicon, forward barrels, sorter and inverted
//! barrels (*The Anatomy of a Large-Scale Hypertextual Web Search Engine*,
//! §4.2.4–4.2.7 and §4.4), built out of core: the `index` stage.
//!
//! ```text
//! text.wm + pagedoc.wm ─┐  pass 1: hits per word, in bounded chunks ─► sort (words, sum) ─►
//! docs.wm + anchors.wm ─┘          (+ each never-crawled page's anchor title ─► index/titles.wm)
//!                                  plan: wordIDs by descending hits, barrel cuts, term dictionary
//!                          pass 2: each document's hits ─► forward barrels fwd-BBB.wm (tmp)
//!                                  (the units pass 1 carried tokenized in memory; the rest read again)
//! forward barrel b ─► sort (wordID, docID) ─► index/full-BBB.wm
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
//!   with the cursor a searcher uses (`next`, `seek`, hits);
//! * [`titles`] — the title a result shows for a page never crawled.
//!
//! # Resume
//!
//! Every step leaves a checkpoint in the stage's temporary directory, through
//! its [`StageContext`]: the vocabulary sort's runs (input complete), the
//! term dictionary and the `plan` checkpoint, the forward barrels and the
//! `forward` checkpoint (a damaged checkpoint is an error, as for every
//! stage), and per barrel its written outputs and lexicon part (a barrel whose sort was interrupted resumes from
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
pub mod shards;
pub mod sizes;
pub mod sorter;
pub mod stem;
pub mod textsplit;
pub mod titles;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::error::{Error, IoContext, Result};
use crate::job::{
    phase, share, Figure, FigureList, Job, JobFile, Outcome, Phase, Settings, Stage, StageContext,
    StageId,
};
use crate::progress::Unit;
use crate::sort::ExternalSorter;
use crate::units::thousands;
pub use indexer::Sources;
pub use inverted::{Barrel, BarrelSet, BlockAt, DoclistCursor, Location, PostingAt};
pub use lexicon::{Lexicon, TermInfo};
pub use stem::Stem;

/// Default number of barrels (the paper's 64).
pub const DEFAULT_BARRELS: u32 = 64;
/// Most barrels allowed.
pub const MAX_BARRELS: u32 = crate::job::files::MAX_BARRELS as u32;

/// The job file of barrel `b`.
pub fn barrel_file(b: usize) -> JobFile {
    JobFile::FullBarrel(b as u16)
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
    /// Postings, and of them those with a title or anchor hit of their
    /// word (the short doclists').
    pub postings: (u64, u64),
    /// Plain and fancy hits in the full barrels.
    pub full_hits: (u64, u64),
    /// Bytes of the lexicon.
    pub lexicon_bytes: u64,
    /// Bytes of the term dictionary inside it.
    pub fst_bytes: u64,
    /// Bytes of the barrels.
    #[serde(default)]
    pub full_bytes: u64,
    /// Sort runs written by the barrel sorts.
    pub runs: usize,
    /// Barrels sorted in parallel.
    pub parallel_barrels: usize,
    /// Largest barrel's share of the hits.
    pub max_barrel_share: f64,
    /// Seconds per step: vocabulary, plan, forward, sort, lexicon.
    pub seconds: [f64; 5],
    /// Units of the input pass 1 carried tokenized into the forward pass
    /// (those that fit its budget's share; none when pass 1 ran in an
    /// earlier attempt).
    #[serde(default)]
    pub carried_units: usize,
    /// The field lengths the block bounds need fit the budget's share for
    /// them (otherwise they are read from the file, a block at a time).
    #[serde(default)]
    pub block_bounds_in_memory: bool,
}

/// What the barrels' block bounds are computed from: the default BM25 and
/// BM25F weights and the field lengths at `path`, every document's norms
/// computed once when they fit in `budget` bytes, else read from the file a
/// block at a time (the same bounds, more slowly).
fn impacts(path: &Path, budget: u64) -> Result<Option<inverted::Impacts>> {
    let f = fieldlens::FieldLengths::open(path)?;
    let params = inverted::BoundParams::default_weights(Some(f.averages()));
    Ok(Some(inverted::Impacts::within(params, f, budget)?))
}

/// What holds memory at the same time in `index`: pass 1's vocabulary sort
/// beside its per-chunk word counts; the plan's by-hits sort fed by the
/// vocabulary's merge, then its merge beside the by-bytes sort; the forward
/// pass's word → wordID table, barrel block buffers and sort of (docID,
/// field) hit counts; the barrel sorts, which split theirs between the
/// barrels sorted in parallel. The units pass 1 carries tokenized into
/// the forward pass are held from pass 1 to the end of the forward pass.
const SHARES: &[Phase] = &[
    phase(
        "pass 1: the vocabulary",
        &[
            share("vocabulary", 1.0 / 3.0),
            share("vocabulary chunks", 1.0 / 4.0),
            share("carried units", 1.0 / 6.0),
        ],
    ),
    phase(
        "plan: words by hits",
        &[
            share("vocabulary", 1.0 / 3.0),
            share("words-by-hits", 1.0 / 2.0),
            share("carried units", 1.0 / 6.0),
        ],
    ),
    phase(
        "plan: words by bytes",
        &[
            share("words-by-hits merge", 1.0 / 4.0),
            share("words-by-bytes", 1.0 / 2.0),
            share("carried units", 1.0 / 6.0),
        ],
    ),
    phase(
        "pass 2: forward barrels",
        &[
            share("word ids", 1.0 / 4.0),
            share("forward blocks", 1.0 / 4.0),
            share("field-lengths", 1.0 / 4.0),
            share("carried units", 1.0 / 6.0),
        ],
    ),
    phase(
        "barrel sorts",
        &[
            share("barrels", 3.0 / 4.0),
            share("field-lengths table", 1.0 / 4.0),
        ],
    ),
];

/// Builds the index from the stage's inputs into its outputs (the anchor
/// titles, written by pass 1 from the anchors its units read — or, on a
/// resume after pass 1 that does not find them written, by their own
/// sequential pass over the doc table and the anchors — the lexicon, the
/// field lengths and the barrels, named by [`JobFile`]),
/// with its checkpoints and sorts in the context's temporary directory
/// under its budget. Resumes from what an interrupted attempt left there.
pub fn build(cx: &StageContext, opts: &IndexOptions) -> Result<IndexSummary> {
    let titles = if cx.output_done(JobFile::AnchorTitles)? {
        None
    } else {
        Some(cx.output(JobFile::AnchorTitles)?)
    };
    build_part(cx, opts, None, Until::End, titles.as_deref())
}

/// Writes the anchor titles to `path` in their own pass over the doc table
/// and the anchors (when pass 1, which writes them beside its count, ran
/// in an earlier attempt).
fn write_titles(cx: &StageContext, path: &Path) -> Result<()> {
    let docs = crate::docs::DocTable::open(cx.input(JobFile::Docs)?)?;
    let anchors = crate::container::pagefile::PageFile::open(
        cx.input(JobFile::Anchors)?,
        &crate::ingest::records::ANCHORS,
    )?;
    titles::write(&docs, &anchors, path)?;
    Ok(())
}

/// How far [`build_part`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Until {
    /// Pass 1, the plan and the forward pass (with the field lengths): a
    /// shard's first step, before the collection's statistics are known.
    Forward,
    /// The whole build (resuming from a forward pass already done).
    End,
}

/// [`build`] of the documents `docs_range` only (`None`: all), as far as
/// `until`: a shard of a document-partitioned index ([`shards`]). With
/// `titles`, also writes the anchor titles there (of all documents: only
/// with `docs_range` `None`).
pub(crate) fn build_part(
    cx: &StageContext,
    opts: &IndexOptions,
    docs_range: Option<std::ops::Range<u64>>,
    until: Until,
    titles_path: Option<&Path>,
) -> Result<IndexSummary> {
    if titles_path.is_some() && docs_range.is_some() {
        return Err(Error::internal("anchor titles of a shard's documents"));
    }
    let (barrels, stem) = (opts.barrels, opts.stem);
    if barrels == 0 || barrels > MAX_BARRELS {
        return Err(Error::usage(format!(
            "--barrels must be in 1..={MAX_BARRELS}, got {barrels}"
        )));
    }
    let sources = Sources {
        text: cx.input(JobFile::Text)?.to_path_buf(),
        pagedoc: cx.input(JobFile::PageDoc)?.to_path_buf(),
        docs: cx.input(JobFile::Docs)?.to_path_buf(),
        anchors: cx.input(JobFile::Anchors)?.to_path_buf(),
        docs_range,
    };
    let reporter = &cx.settings().reporter;
    let tmp = cx.tmp();
    let mut summary = IndexSummary::default();
    let fst_path = tmp.join("terms.fst");

    // Pass 1 and the plan.
    let mut t = Instant::now();
    // The units pass 1 keeps tokenized for the forward pass (none when
    // pass 1 ran in an earlier attempt).
    let mut carried = indexer::Carried::default();
    let mut titles_written = false;
    let saved = cx
        .checkpoint::<lexicon::WordPlan>("plan")?
        .filter(|p| p.barrels() == barrels as usize && fst_path.exists());
    let plan = match saved {
        Some(p) => p,
        None => {
            let vocabulary = || {
                ExternalSorter::new(
                    cx.sort_config("vocabulary")?.persist(true),
                    lexicon::vocabulary_combine(),
                )
            };
            let mut sorter = vocabulary()?;
            if !sorter.input_complete() {
                drop(sorter);
                crate::sort::remove_sort_dir(&tmp.join("vocabulary"))?;
                sorter = vocabulary()?;
                let mut titles_writer = match titles_path {
                    Some(path) => Some(titles::TitlesWriter::create(
                        path,
                        crate::docs::DocTable::open(&sources.docs)?.len(),
                    )?),
                    None => None,
                };
                carried = indexer::count_vocabulary(
                    &sources,
                    stem,
                    &mut sorter,
                    cx.budget().bytes("vocabulary chunks")?,
                    cx.budget().bytes("carried units")?,
                    reporter,
                    titles_writer.as_mut(),
                )?
                .1;
                if let Some(w) = titles_writer {
                    w.finish()?;
                    titles_written = true;
                }
                summary.carried_units = carried.units();
            }
            crate::sort::memory::release_freed_heap();
            let sorted = sorter.finish()?;
            summary.seconds[0] = t.elapsed().as_secs_f64();
            t = Instant::now();
            let plan = lexicon::plan_words(
                sorted,
                barrels,
                [
                    cx.sort_config("words-by-hits")?,
                    cx.sort_config("words-by-bytes")?,
                ],
                cx.budget().bytes("words-by-hits merge")?,
                &fst_path,
            )?;
            cx.save_checkpoint("plan", &plan)?;
            crate::sort::remove_sort_dir(&tmp.join("vocabulary"))?;
            summary.seconds[1] = t.elapsed().as_secs_f64();
            plan
        }
    };
    if let (Some(path), false) = (titles_path, titles_written) {
        write_titles(cx, path)?;
    }
    summary.words = plan.words;
    summary.hits = plan.hits;
    summary.max_barrel_share =
        plan.barrel_hits.iter().copied().max().unwrap_or(0) as f64 / plan.hits.max(1) as f64;

    // Pass 2: forward barrels.
    t = Instant::now();
    let fwd_dir = tmp.join("forward");
    let done = |b: usize| -> Result<bool> {
        Ok(cx.output_done(barrel_file(b))? && sorter::part_is_complete(&part_path(tmp, b)))
    };
    let mut todo = Vec::new();
    for b in 0..plan.barrels() {
        if !done(b)? {
            todo.push(b);
        }
    }
    summary.forward = match cx.checkpoint::<indexer::ForwardStats>("forward")? {
        Some(stats) => stats,
        None if todo.is_empty() && cx.output_done(JobFile::FieldLengths)? => {
            indexer::ForwardStats::default()
        }
        None => {
            crate::sort::remove_sort_dir(&fwd_dir)?;
            std::fs::create_dir_all(&fwd_dir).at(&fwd_dir)?;
            let ids = indexer::WordIds::new(
                lexicon::open_fst_file(&fst_path)?,
                cx.budget().bytes("word ids")?,
            );
            let block_bytes = (cx.budget().bytes("forward blocks")? / u64::from(barrels))
                .clamp(4 << 10, 256 << 10) as usize;
            let mut lengths = ExternalSorter::new(
                cx.sort_config("field-lengths")?,
                crate::sort::Combine::sum(),
            )?;
            let stats = indexer::write_forward(
                &sources,
                stem,
                &ids,
                &plan,
                &fwd_dir,
                block_bytes,
                reporter,
                &mut lengths,
                std::mem::take(&mut carried),
            )?;
            drop(ids);
            let docs = crate::docs::DocTable::open(&sources.docs)?.len();
            fieldlens::write_sorted(lengths.finish()?, docs, &cx.output(JobFile::FieldLengths)?)?;
            crate::sort::remove_sort_dir(&tmp.join("field-lengths"))?;
            crate::sort::memory::release_freed_heap();
            cx.save_checkpoint("forward", &stats)?;
            stats
        }
    };
    drop(carried);
    summary.seconds[2] = t.elapsed().as_secs_f64();
    if until == Until::Forward {
        return Ok(summary);
    }

    // The sorter, barrels in parallel when the budget allows (at least
    // 16 MiB each).
    t = Instant::now();
    let budget = cx.budget().bytes("barrels")?;
    let parallel = rayon::current_num_threads()
        .min((budget / (16 << 20)).max(1) as usize)
        .min(todo.len())
        .max(1);
    summary.parallel_barrels = parallel;
    let task = cx.task("sorting barrels", Some(plan.barrels() as u64), Unit::Steps);
    task.set_position((plan.barrels() - todo.len()) as u64);
    let impacts = if todo.is_empty() {
        None
    } else {
        impacts(
            &cx.output(JobFile::FieldLengths)?,
            cx.budget().bytes("field-lengths table")?,
        )?
    };
    summary.block_bounds_in_memory = impacts.as_ref().is_some_and(|i| i.in_memory());
    // Largest forward barrel first, so that a large one (the long tail's
    // last barrel: 2.4 MB of rust-doc's 64, the mean 0.3 MB) does not
    // start last while the other threads have nothing left to do.
    todo.sort_by_key(|&b| {
        let f = indexer::forward_path(&fwd_dir, b);
        std::cmp::Reverse(std::fs::metadata(&f).map_or(0, |m| m.len()))
    });
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let runs = AtomicUsize::new(0);
    // The sorting threads are the pool's: a barrel's sort in memory spreads
    // its buckets on the pool (`block_radix`), which from a pool thread runs
    // them on that thread unless another is idle and steals them, where a
    // thread of its own would hand each barrel's sort to the pool and sleep
    // until it was done (two wake-ups a barrel, and twice as many threads
    // wanting the cores as there are).
    rayon::scope(|scope| {
        for _ in 0..parallel {
            scope.spawn(|_| {
                let mut scratch = sorter::SortScratch::default();
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    if k >= todo.len() || failure.lock().map(|f| f.is_some()).unwrap_or(true) {
                        return;
                    }
                    let b = todo[k];
                    let sort_name = format!("sort-{b:03}");
                    let result = (|| {
                        let s = sorter::sort_barrel(
                            &indexer::forward_path(&fwd_dir, b),
                            cx.sort_config_part(&sort_name, "barrels", parallel)?,
                            &cx.output(barrel_file(b))?,
                            &part_path(tmp, b),
                            impacts.as_ref(),
                            &mut scratch,
                        )?;
                        runs.fetch_add(s.runs, Ordering::SeqCst);
                        crate::publish::failpoint("index.barrel_done")?;
                        crate::sort::remove_sort_dir(&tmp.join(&sort_name))?;
                        let f = indexer::forward_path(&fwd_dir, b);
                        std::fs::remove_file(&f).at(&f)
                    })();
                    match result {
                        Ok(()) => task.inc(1),
                        Err(e) => {
                            if let Ok(mut f) = failure.lock() {
                                f.get_or_insert(e);
                            }
                            return;
                        }
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
    let mut w = lexicon::LexiconWriter::create(cx.output(JobFile::Lexicon)?, &fst, &plan, stem)?;
    drop(fst);
    for b in 0..plan.barrels() {
        sorter::for_each_part_block(&part_path(tmp, b), |entries| w.push_encoded(entries))?;
    }
    summary.lexicon_bytes = w.finish()?;
    let lex = Lexicon::open(cx.output(JobFile::Lexicon)?)?;
    summary.postings.1 = lex.container().meta()["short_postings"]
        .as_u64()
        .unwrap_or(0);
    for b in 0..plan.barrels() {
        let barrel = Barrel::open(cx.output(barrel_file(b))?)?;
        let c = barrel.container();
        let m = c.meta();
        let get = |k: &str| m[k].as_u64().unwrap_or(0);
        summary.postings.0 += get("postings");
        summary.full_hits.0 += get("plain_hits");
        summary.full_hits.1 += get("fancy_hits");
        summary.full_bytes += c.size();
    }
    summary.seconds[4] = t.elapsed().as_secs_f64();
    Ok(summary)
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
        let mut v = vec![
            JobFile::Lexicon,
            JobFile::FieldLengths,
            JobFile::AnchorTitles,
        ];
        for b in 0..self.opts.barrels as usize {
            v.push(barrel_file(b));
        }
        v
    }

    fn records(f: &IndexSummary) -> u64 {
        f.postings.0
    }

    fn shares(&self) -> &'static [Phase] {
        SHARES
    }

    fn headline(&self, f: &IndexSummary) -> String {
        format!(
            "{} words, {} postings",
            thousands(u64::from(f.words)),
            thousands(f.postings.0)
        )
    }

    fn stats(&self, f: &IndexSummary) -> Vec<Figure> {
        FigureList::new()
            .group("Stages")
            .count("index_words", "index words", u64::from(f.words))
            .count("index_postings", "index postings", f.postings.0)
            .bytes(
                "index_bytes",
                "index (lexicon, barrels)",
                f.lexicon_bytes + f.full_bytes,
            )
            .build()
    }

    fn run(&self, cx: &mut StageContext) -> Result<IndexSummary> {
        build(cx, &self.opts)
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

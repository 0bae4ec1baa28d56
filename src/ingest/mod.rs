//! Ingest: web dumps (WARC files, directories of HTML) into the page list, the
//! token streams, the repository and the raw links; then the URL resolver
//! ([`resolve`]) turns them into docIDs, the link graph and the anchors.
//!
//! # Units, segments, checkpoints
//!
//! The inputs are cut into *units*, each of an input kind ([`source`]: its
//! units, how it reads items, its typed resume point, its skips): a WARC file
//! is one unit; a directory is listed (recursively, in byte order of the
//! relative paths) and cut into units of [`IngestOptions::segment_records`]
//! files. Units are processed in parallel (rayon), each by one reader with the
//! pages of a batch processed in parallel. A unit writes *segments*: every
//! `segment_records` input records it publishes four page files (`pages`,
//! `text`, `repo`, `links`, see
//! [`crate::container::pagefile`]) in the stage's temporary
//! directory; the `pages` file, written last, carries in its footer where the
//! reader stopped (the kind's resume point) and what was counted and skipped.
//! Those are the checkpoints: after `kill -9`, a unit restarts after its last
//! published segment, and a half-written segment is never seen (files are
//! published atomically).
//!
//! When every unit is done, segments are joined in input order into
//! `pages.wm`, `text.wm`, `repository.wm` and `links.wm` by copying their
//! compressed blocks ([`crate::container::pagefile::concat`]), page numbers shifted so that they
//! count pages across all inputs. The outputs depend only on the inputs and
//! `segment_records`, never on the thread count or on interruptions.

pub mod dir;
pub mod exchange;
pub mod html;
pub mod limits;
pub mod page;
pub mod records;
pub mod resolve;
pub mod resolve_from;
pub mod source;
pub mod text;
/// URL normalization lives in [`crate::url`] (shared with `import-graph`).
pub use crate::url;
pub mod urltable;
pub mod warc;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::container::pagefile::{self, PageFileWriter};
use crate::error::{Error, IoContext, Result};
use crate::ingest::dir::{list_dir, DirEntry};
use crate::ingest::html::Extractor;
use crate::ingest::limits::{RecordGate, RecordLimits};
use crate::ingest::page::{Fetched, MetaPage, PageOut, TextPage};
use crate::ingest::source::html_dir::{is_html_name, HtmlFiles};
pub use crate::ingest::source::jsonl::DocFields;
use crate::ingest::source::jsonl::{is_jsonl_name, JsonlFile};
use crate::ingest::source::parquet::{is_parquet_name, ParquetFile};
use crate::ingest::source::warc::{is_archive_name, is_wet_name, WarcFile};
pub use crate::ingest::source::Counts;
use crate::ingest::source::{Content, InputKind, Item, Next, ReadContext, Reader};
use crate::input::{SkipEntry, SkipWriter, KEEP_SKIPS};
use crate::job::{
    phase, share, Amount, Budget, Figure, FigureList, Job, JobFile, Outcome, Phase, Settings,
    Stage, StageContext, StageId,
};
use crate::progress::{Task, Unit as ProgressUnit};
use crate::resources::format_bytes;
use crate::units::thousands;

/// Raw bytes of a page-file block.
const BLOCK_BYTES: usize = 256 << 10;

/// One input as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputSpec {
    /// A WARC file (plain or gzip).
    Warc(PathBuf),
    /// A JSONL document set (plain, gzip or zstd), by its name
    /// ([`is_jsonl_name`]).
    Jsonl(PathBuf),
    /// A Parquet document set, by its name ([`is_parquet_name`]).
    Parquet(PathBuf),
    /// A directory of HTML files, with the base URL its files are served at.
    Dir {
        /// The directory.
        dir: PathBuf,
        /// The base URL (ends with `/`).
        base: String,
    },
}

impl InputSpec {
    /// Parses `FILE`, `DIR` or `BASE_URL=DIR`; `default_base` is used for a
    /// plain directory (`None`: `file://` + its absolute path).
    pub fn parse(arg: &str, default_base: Option<&str>) -> Result<InputSpec> {
        let (base, path) = match arg.split_once("=") {
            Some((b, p)) if b.contains("://") => (Some(b.to_string()), PathBuf::from(p)),
            _ => (None, PathBuf::from(arg)),
        };
        let meta = std::fs::metadata(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::usage_at(
                &path,
                "input not found (an INPUT is a WARC, ARC, WET or WAT file, a JSONL or Parquet document set, a directory of HTML, WARC, JSONL and Parquet files, or BASE_URL=DIR)",
            ),
            _ => Error::io(&path, e),
        })?;
        if meta.is_file() {
            if base.is_some() {
                return Err(Error::usage(format!(
                    "{arg}: a base URL applies to a directory, not a file"
                )));
            }
            if is_jsonl_name(&path) {
                return Ok(InputSpec::Jsonl(path));
            }
            if is_parquet_name(&path) {
                return Ok(InputSpec::Parquet(path));
            }
            return Ok(InputSpec::Warc(path));
        }
        let abs = std::fs::canonicalize(&path).at(&path)?;
        let base = match base.or_else(|| default_base.map(str::to_string)) {
            Some(b) => b,
            None => ::url::Url::from_directory_path(&abs)
                .map_err(|_| Error::usage(format!("{}: cannot make a file URL", abs.display())))?
                .to_string(),
        };
        let mut base = url::normalize(&base)
            .ok_or_else(|| Error::usage(format!("{base}: not an http(s) or file URL")))?;
        if !base.ends_with('/') {
            base.push('/');
        }
        Ok(InputSpec::Dir { dir: abs, base })
    }
}

impl InputSpec {
    /// Can this input hold links? Not when its pages can only come from WET
    /// files (by name, [`is_wet_name`]): text without markup.
    pub fn may_hold_links(&self) -> Result<bool> {
        Ok(match self {
            InputSpec::Warc(p) => !is_wet_name(p),
            InputSpec::Jsonl(_) | InputSpec::Parquet(_) => false,
            InputSpec::Dir { dir, .. } => list_dir(dir)?.iter().any(|e| {
                e.skip.is_none()
                    && (is_html_name(&e.rel) || (is_archive_name(&e.rel) && !is_wet_name(&e.rel)))
            }),
        })
    }

    /// Appends this input's units, in order: a WARC file is one unit; a
    /// directory's entries are taken in byte order of their relative paths,
    /// each archive (by its name, [`is_archive_name`]) one unit, exactly as if
    /// it were given on its own, and the runs of other entries between them
    /// cut into units of `segment_records` entries. Returns how many
    /// archives and other entries a directory held.
    fn units(
        &self,
        segment_records: u64,
        fields: &DocFields,
        units: &mut Vec<Box<dyn AnyUnit>>,
    ) -> Result<(u64, u64)> {
        match self {
            InputSpec::Warc(p) => {
                units.push(Box::new(WarcFile::new(p)));
                Ok((1, 0))
            }
            InputSpec::Jsonl(p) => {
                units.push(Box::new(JsonlFile::new(p, fields)));
                Ok((1, 0))
            }
            InputSpec::Parquet(p) => {
                units.push(Box::new(ParquetFile::new(p, fields)?));
                Ok((1, 0))
            }
            InputSpec::Dir { dir, base } => {
                let base =
                    ::url::Url::parse(base).map_err(|e| Error::usage(format!("{base}: {e}")))?;
                let (mut archives, mut others) = (0, 0);
                let mut run = Vec::new();
                let flush = |run: &mut Vec<DirEntry>, units: &mut Vec<Box<dyn AnyUnit>>| {
                    for chunk in run.chunks(segment_records as usize) {
                        units.push(Box::new(HtmlFiles::new(dir, &base, chunk.to_vec())));
                    }
                    run.clear();
                };
                for entry in list_dir(dir)? {
                    if entry.skip.is_none() && is_archive_name(&entry.rel) {
                        flush(&mut run, units);
                        units.push(Box::new(WarcFile::new(&dir.join(&entry.rel))));
                        archives += 1;
                    } else if entry.skip.is_none() && is_jsonl_name(&entry.rel) {
                        flush(&mut run, units);
                        units.push(Box::new(JsonlFile::new(&dir.join(&entry.rel), fields)));
                        archives += 1;
                    } else if entry.skip.is_none() && is_parquet_name(&entry.rel) {
                        flush(&mut run, units);
                        units.push(Box::new(ParquetFile::new(&dir.join(&entry.rel), fields)?));
                        archives += 1;
                    } else {
                        others += 1;
                        run.push(entry);
                    }
                }
                flush(&mut run, units);
                Ok((archives, others))
            }
        }
    }
}

/// How to ingest.
#[derive(Clone, Debug)]
pub struct IngestOptions {
    /// The inputs, in order (their order numbers the pages).
    pub inputs: Vec<InputSpec>,
    /// Records (WARC records, or files of a directory) per segment: the
    /// checkpoint interval.
    pub segment_records: u64,
    /// Largest WARC record read; bigger ones are skipped and reported.
    pub max_record_bytes: u64,
    /// The fields of JSONL records.
    pub fields: DocFields,
    /// Segments made elsewhere, by [`ingest_unit`] (the tasks of a
    /// distributed ingest): directories holding `unit-NNNNNN/` directories. A
    /// unit whose segments are found there is not read again (what is left of
    /// it, if its last segment is not its end, is read here). Not a
    /// parameter: the outputs are the same either way.
    pub segments_from: Vec<PathBuf>,
}

impl IngestOptions {
    /// Is an input a JSONL document set, or a directory holding one?
    pub fn has_document_sets(&self) -> Result<bool> {
        for i in &self.inputs {
            let has = match i {
                InputSpec::Jsonl(_) | InputSpec::Parquet(_) => true,
                InputSpec::Warc(_) => false,
                InputSpec::Dir { dir, .. } => list_dir(dir)?.iter().any(|e| {
                    e.skip.is_none() && (is_jsonl_name(&e.rel) || is_parquet_name(&e.rel))
                }),
            };
            if has {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Can the inputs hold links (see [`InputSpec::may_hold_links`])?
    pub fn may_hold_links(&self) -> Result<bool> {
        for i in &self.inputs {
            if i.may_hold_links()? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            inputs: Vec::new(),
            segment_records: 10_000,
            max_record_bytes: 64 << 20,
            fields: DocFields::default(),
            segments_from: Vec::new(),
        }
    }
}

/// Footer metadata of a segment's `pages` file: its checkpoint. `R` is the
/// unit's typed resume point ([`InputKind::Resume`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SegmentMeta<R> {
    /// Where the next segment of the unit starts; `None` when the unit is done.
    next: Option<R>,
    counts: Counts,
    skips: Vec<String>,
    /// The first skip of bad input (what `--strict` fails on).
    #[serde(default)]
    bad: Option<String>,
}

/// An input as the stage records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InputParam {
    /// A WARC file: its absolute path and size.
    Warc {
        /// Absolute path.
        warc: String,
        /// Size in bytes.
        bytes: u64,
    },
    /// A JSONL document set: its absolute path and size.
    Jsonl {
        /// Absolute path.
        jsonl: String,
        /// Size in bytes.
        bytes: u64,
    },
    /// A Parquet document set: its absolute path and size.
    Parquet {
        /// Absolute path.
        parquet: String,
        /// Size in bytes.
        bytes: u64,
    },
    /// A directory and its base URL.
    Dir {
        /// Absolute path.
        dir: String,
        /// Base URL.
        base: String,
    },
}

/// An input file as [`InputParam`] records it: its absolute path and size.
fn file_param(p: &Path) -> Result<(String, u64)> {
    let meta = std::fs::metadata(p).at(p)?;
    let abs = std::fs::canonicalize(p).at(p)?;
    Ok((abs.to_string_lossy().into_owned(), meta.len()))
}

/// The parameters `ingest` records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IngestParams {
    /// The inputs, in order.
    pub inputs: Vec<InputParam>,
    /// Records per segment.
    pub segment_records: u64,
    /// Largest WARC record read.
    pub max_record_bytes: u64,
    /// The per-record limit `--mem` allows (see [`limits`]): of a bigger
    /// record or decoded body, only this much is kept.
    #[serde(default)]
    pub record_bytes: u64,
    /// Most links kept from one page (see [`limits`]).
    #[serde(default)]
    pub links_per_page: u64,
    /// The fields of JSONL records, when an input is a document set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<DocFields>,
}

/// What `ingest` measured: the sum of its segments' counts (skips and cuts by
/// kind among them), the input size, and the first skips with their file and
/// offset (all of them are in the skip report, [`JobFile::Skips`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IngestFigures {
    /// What was counted.
    #[serde(flatten)]
    pub counts: Counts,
    /// Bytes of input (WARC files and HTML files).
    pub input_bytes: u64,
    /// The first skipped records or files, each with where it was.
    pub first_skips: Vec<String>,
}

/// The `ingest` stage.
pub struct Ingest {
    /// What to ingest.
    pub opts: IngestOptions,
    /// The memory budget (it sets the per-record limits, a parameter).
    pub mem: u64,
}

/// What holds memory at the same time in `ingest`: the units' batches of
/// bodies and their parsed pages (one unit per thread), and the one big
/// record let through the gate, whose working set is about 8 times its
/// block: the per-record limit is this share's eighth, 1/16 of the budget
/// (see [`limits`]). The segment writers' block buffers are fixed (256 KiB a
/// file), outside the budget.
const SHARES: &[Phase] = &[phase(
    "read and parse",
    &[share("batches", 1.0 / 8.0), share(BIG_RECORD, 1.0 / 2.0)],
)];

/// The share of ingest's budget that one big record may take.
const BIG_RECORD: &str = "big record";

/// The ingest stage's budget under `mem` bytes (the one its context hands
/// out; also a shard's task's, and what `export dataset` reads the inputs
/// again with).
pub fn stage_budget(mem: u64) -> Result<Budget> {
    Budget::new(StageId::Ingest, mem, SHARES)
}

/// The per-record limits `budget` (ingest's) allows when `threads` units
/// read at once: from its `big record` share.
pub fn record_limits(budget: &Budget, threads: usize) -> Result<RecordLimits> {
    Ok(RecordLimits::from_share(budget.bytes(BIG_RECORD)?, threads))
}

impl Stage for Ingest {
    type Params = IngestParams;
    type Figures = IngestFigures;

    fn id(&self) -> StageId {
        StageId::Ingest
    }

    fn params(&self) -> Result<IngestParams> {
        let opts = &self.opts;
        if opts.inputs.is_empty() {
            return Err(Error::usage("ingest needs at least one input"));
        }
        if opts.segment_records == 0 {
            return Err(Error::usage("segment size must be at least 1 record"));
        }
        let mut inputs = Vec::new();
        for i in &opts.inputs {
            inputs.push(match i {
                InputSpec::Warc(p) => {
                    let (warc, bytes) = file_param(p)?;
                    InputParam::Warc { warc, bytes }
                }
                InputSpec::Jsonl(p) => {
                    let (jsonl, bytes) = file_param(p)?;
                    InputParam::Jsonl { jsonl, bytes }
                }
                InputSpec::Parquet(p) => {
                    let (parquet, bytes) = file_param(p)?;
                    InputParam::Parquet { parquet, bytes }
                }
                InputSpec::Dir { dir, base } => InputParam::Dir {
                    dir: dir.to_string_lossy().into_owned(),
                    base: base.clone(),
                },
            });
        }
        let limits = record_limits(&stage_budget(self.mem)?, 1)?;
        Ok(IngestParams {
            inputs,
            segment_records: opts.segment_records,
            max_record_bytes: opts.max_record_bytes,
            record_bytes: limits.record_bytes,
            links_per_page: limits.links as u64,
            fields: opts.has_document_sets()?.then(|| opts.fields.clone()),
        })
    }

    fn inputs(&self) -> Vec<JobFile> {
        Vec::new()
    }

    fn outputs(&self) -> Vec<JobFile> {
        vec![
            JobFile::Pages,
            JobFile::Text,
            JobFile::Repository,
            JobFile::Links,
            JobFile::Skips(StageId::Ingest),
        ]
    }

    fn records(f: &IngestFigures) -> u64 {
        f.counts.pages
    }

    fn shares(&self) -> &'static [Phase] {
        SHARES
    }

    fn headline(&self, f: &IngestFigures) -> String {
        format!(
            "{} pages, {} links",
            thousands(f.counts.pages),
            thousands(f.counts.links)
        )
    }

    fn stats(&self, f: &IngestFigures) -> Vec<Figure> {
        let c = &f.counts;
        FigureList::new()
            .group("Input")
            .bytes("input_bytes", "input read", f.input_bytes)
            .add("records", "WARC records", Amount::Counts(c.records.clone()))
            .count("files", "HTML files", c.files)
            .count("other_files", "other files (not read)", c.other_files)
            .count("skipped", "skipped records or lines", c.skipped)
            .group("Pages")
            .bytes("html_bytes", "HTML", c.html_bytes)
            .count("not_html", "responses not HTML", c.not_html)
            .count("error_status", "error statuses", c.error_status)
            .count("redirects", "redirects", c.redirects)
            .count("dropped_links", "links dropped", c.dropped_links)
            .build()
    }

    fn run(&self, cx: &mut StageContext) -> Result<IngestFigures> {
        run_ingest(&self.opts, cx)
    }
}

/// Lists a directory's files recursively, as paths relative to `dir` in byte
/// order (the order ingest numbers a directory's pages in); symbolic links to
/// files are followed, to directories not. (The entries that are not read
/// are in [`list_dir`].)
pub fn list_files(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(list_dir(dir)?
        .into_iter()
        .filter(|e| e.skip.is_none())
        .map(|e| e.rel)
        .collect())
}

/// The error for inputs without a single HTML page.
fn nothing_ingested(opts: &IngestOptions, c: &Counts, skips: &[String]) -> Error {
    let inputs: Vec<PathBuf> = opts
        .inputs
        .iter()
        .map(|i| match i {
            InputSpec::Warc(p)
            | InputSpec::Jsonl(p)
            | InputSpec::Parquet(p)
            | InputSpec::Dir { dir: p, .. } => p.clone(),
        })
        .collect();
    crate::input::nothing_usable(
        &inputs,
        "WARC or ARC files holding HTTP responses with HTML pages, WET and WAT files, JSONL and Parquet document sets, or directories of .html/.htm files",
        &format!(
            "{} WARC records, {} HTML files, {} other files, {} responses not HTML, {} skipped",
            c.records.values().sum::<u64>(),
            c.files,
            c.other_files,
            c.not_html,
            c.skipped
        ),
        skips,
    )
}

/// Runs (or resumes, or skips) the ingest of `opts.inputs` into `job`.
pub fn ingest(job: &mut Job, opts: &IngestOptions, s: &Settings) -> Result<Outcome<IngestFigures>> {
    job.run(
        &Ingest {
            opts: opts.clone(),
            mem: s.mem,
        },
        s,
    )
}

/// How the units of `opts` are read under `s` with the stage's `budget`:
/// its `batches` share for the pages gathered before parsing, its `big
/// record` share for the per-record limits.
fn read_context<'a>(
    opts: &IngestOptions,
    s: &'a Settings,
    budget: &Budget,
) -> Result<ReadContext<'a>> {
    Ok(ReadContext {
        max_record_bytes: opts.max_record_bytes,
        settings: s,
        limits: record_limits(budget, rayon::current_num_threads())?,
        gate: RecordGate::new(),
        batch_bytes: batch_limit(budget.bytes("batches")?),
    })
}

fn run_ingest(opts: &IngestOptions, cx: &StageContext) -> Result<IngestFigures> {
    let s = cx.settings();
    let seg_dir = cx.tmp().join("segments");
    std::fs::create_dir_all(&seg_dir).at(&seg_dir)?;
    let ctx = read_context(opts, s, cx.budget())?;
    let limits = &ctx.limits;
    if opts.max_record_bytes > limits.record_bytes {
        cx.note(&format!(
            "--max-record-bytes {} is more than one record may take under --mem {} ({}, 1/16 of the budget): a record or decoded body over {} is kept cut to its first {} (each cut listed in the skip report); records over {} are skipped",
            format_bytes(opts.max_record_bytes),
            format_bytes(s.mem),
            format_bytes(limits.record_bytes),
            format_bytes(limits.record_bytes),
            format_bytes(limits.record_bytes),
            format_bytes(opts.max_record_bytes),
        ));
    }

    let units = list_units(opts, &mut |note| cx.note(note))?;
    for from in &opts.segments_from {
        import_segments(from, &seg_dir, units.len())?;
    }
    let total_bytes: u64 = units.iter().map(|u| u.bytes()).sum();
    let task = cx.task("reading", Some(total_bytes), ProgressUnit::Bytes);
    let progress = Progress {
        task,
        done: AtomicU64::new(0),
    };
    let strict_failure: Mutex<Option<Error>> = Mutex::new(None);
    // Each unit returns its segment files in order.
    let results: Vec<Result<Vec<PathBuf>>> = units
        .par_iter()
        .enumerate()
        .map(|(u, unit)| {
            let r = unit.run(u, &seg_dir, opts.segment_records, &ctx, &progress);
            if s.strict {
                if let Ok(segs) = &r {
                    if let Some(skip) = first_skip(segs)? {
                        let mut f = strict_failure.lock().unwrap_or_else(|e| e.into_inner());
                        f.get_or_insert(Error::damaged(
                            None,
                            format!("{skip} (--strict: bad input is an error)"),
                        ));
                    }
                }
            }
            r
        })
        .collect();
    progress.task.set_position(total_bytes);
    let mut segments = Vec::new();
    for r in results {
        segments.extend(r?);
    }
    if let Some(e) = strict_failure
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
    {
        return Err(e);
    }

    // Join the segments in order.
    let mut counts = Counts::default();
    let mut skips = Vec::new();
    let mut skip_parts = Vec::with_capacity(segments.len());
    let mut parts = Vec::with_capacity(segments.len());
    let mut base = 0u64;
    for seg in &segments {
        let meta: AnySegmentMeta = segment_meta(seg)?;
        counts.add(&meta.counts);
        for sk in meta.skips {
            if skips.len() < KEEP_SKIPS {
                skips.push(sk);
            }
        }
        parts.push((seg.clone(), base));
        skip_parts.push((segment_file(seg, SKIPS_TAG), base));
        base += meta.counts.pages;
    }
    if counts.pages == 0 {
        return Err(nothing_ingested(opts, &counts, &skips));
    }
    pagefile::concat(
        &skip_parts,
        &crate::input::SKIPS,
        &cx.output(JobFile::Skips(StageId::Ingest))?,
        &json!({ "skips": counts.skipped + counts.cut }),
    )?;
    for (file, kind) in [
        (JobFile::Links, &records::LINKS),
        (JobFile::Text, &records::TEXT),
        (JobFile::Repository, &records::REPO),
        (JobFile::Pages, &records::PAGES),
    ] {
        let kind_parts: Vec<(PathBuf, u64)> = parts
            .iter()
            .map(|(p, b)| (segment_file(p, kind.tag), *b))
            .collect();
        pagefile::concat(
            &kind_parts,
            kind,
            &cx.output(file)?,
            &json!({ "pages": base }),
        )?;
    }
    Ok(IngestFigures {
        counts,
        input_bytes: total_bytes,
        first_skips: skips,
    })
}

/// The units `opts.inputs` are cut into, in input order; `note` hears of a
/// directory holding both archives and other entries.
fn list_units(opts: &IngestOptions, note: &mut dyn FnMut(&str)) -> Result<Vec<Box<dyn AnyUnit>>> {
    let mut units: Vec<Box<dyn AnyUnit>> = Vec::new();
    for input in &opts.inputs {
        let (archives, others) = input.units(opts.segment_records, &opts.fields, &mut units)?;
        if let (InputSpec::Dir { dir, .. }, true) = (input, archives > 0 && others > 0) {
            note(&format!(
                "{}: {archives} archives (WARC/ARC/WET/WAT) or document sets (JSONL, Parquet) and {others} other entries (HTML pages, other files); both are read, each archive as if it were given on its own",
                dir.display()
            ));
        }
    }
    Ok(units)
}

/// One unit of an ingest, as a distributed ingest hands it out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitPlan {
    /// Its number: units are numbered in input order from 0.
    pub unit: usize,
    /// Bytes of input it reads.
    pub bytes: u64,
}

/// The units `opts.inputs` are cut into, in input order: the tasks of a
/// distributed ingest ([`ingest_unit`] runs one).
pub fn plan_units(opts: &IngestOptions) -> Result<Vec<UnitPlan>> {
    Ok(list_units(opts, &mut |_| {})?
        .iter()
        .enumerate()
        .map(|(unit, u)| UnitPlan {
            unit,
            bytes: u.bytes(),
        })
        .collect())
}

/// What one [`ingest_unit`] task did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnitReport {
    /// The unit.
    pub unit: usize,
    /// Its segments.
    pub segments: u64,
    /// What they count (skips among them).
    pub counts: Counts,
    /// The first skips, with file and offset.
    pub first_skips: Vec<String>,
    /// Whether this attempt published the unit (`false`: another attempt
    /// had, and this one's files were discarded).
    pub published: bool,
}

/// The directory [`ingest_unit`] publishes unit `unit`'s segments in.
fn unit_dir(out: &Path, unit: usize) -> PathBuf {
    out.join(format!("unit-{unit:06}"))
}

/// Ingests unit `unit` of `opts` alone into `out/unit-NNNNNN/`: the same
/// segments the `ingest` stage writes for it (they depend only on the inputs,
/// `segment_records` and the budget's per-record limit, so `mem` must be the
/// job's). One task of a distributed ingest: it writes under an attempt
/// directory of its own and publishes it by one rename, the first attempt to
/// finish winning, so a retried or duplicated task is harmless. The `ingest`
/// stage then takes the segments with [`IngestOptions::segments_from`].
pub fn ingest_unit(
    opts: &IngestOptions,
    s: &Settings,
    unit: usize,
    out: &Path,
) -> Result<UnitReport> {
    let units = list_units(opts, &mut |_| {})?;
    let Some(u) = units.get(unit) else {
        return Err(Error::usage(format!(
            "unit {unit} does not exist: the inputs make {} unit{} (0 to {})",
            units.len(),
            if units.len() == 1 { "" } else { "s" },
            units.len().saturating_sub(1)
        )));
    };
    std::fs::create_dir_all(out).at(out)?;
    let target = unit_dir(out, unit);
    let attempt = out.join(format!(
        ".attempt-{unit:06}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    if !target.exists() {
        std::fs::create_dir_all(&attempt).at(&attempt)?;
        // A shard's task has the stage's budget and shares.
        let ctx = read_context(opts, s, &stage_budget(s.mem)?)?;
        let progress = Progress {
            task: s
                .reporter
                .task("reading", Some(u.bytes()), ProgressUnit::Bytes),
            done: AtomicU64::new(0),
        };
        let run = u
            .run(unit, &attempt, opts.segment_records, &ctx, &progress)
            // The exchange tables the global steps shuffle, beside them.
            .and_then(|segs| exchange::write_unit_tables(&attempt, unit, &segs));
        progress.task.set_position(u.bytes());
        if let Err(e) = run {
            let _ = std::fs::remove_dir_all(&attempt);
            return Err(e);
        }
        crate::publish::sync_dir(&attempt)?;
    }
    // First rename wins: a directory is renamed over only an empty one.
    let published = !target.exists() && std::fs::rename(&attempt, &target).is_ok();
    if attempt.exists() {
        std::fs::remove_dir_all(&attempt).at(&attempt)?;
    }
    crate::publish::sync_dir(out)?;
    let (segs, next) = published_segments::<IgnoredAny>(&target, unit)?;
    if !matches!(next, Some(None)) {
        return Err(Error::damaged(
            Some(&target),
            format!("unit {unit}: its published segments do not end the unit"),
        ));
    }
    let mut report = UnitReport {
        unit,
        segments: segs.len() as u64,
        published,
        ..UnitReport::default()
    };
    for seg in &segs {
        let meta: AnySegmentMeta = segment_meta(seg)?;
        report.counts.add(&meta.counts);
        for sk in meta.skips {
            if report.first_skips.len() < KEEP_SKIPS {
                report.first_skips.push(sk);
            }
        }
    }
    Ok(report)
}

/// Takes the segments [`ingest_unit`] published under `from` into the
/// stage's `seg_dir`, for each of the `units` that has none there yet; each
/// segment's `pages` file (its checkpoint) comes last, so a kill halfway
/// leaves a unit that resumes after its last whole segment.
fn import_segments(from: &Path, seg_dir: &Path, units: usize) -> Result<()> {
    for unit in 0..units {
        let dir = unit_dir(from, unit);
        if !dir.is_dir() || segment_path(seg_dir, unit, 0).exists() {
            continue;
        }
        for seg in 0.. {
            let pages = segment_path(&dir, unit, seg);
            if !pages.exists() {
                break;
            }
            for tag in [
                records::LINKS.tag,
                records::TEXT.tag,
                records::REPO.tag,
                SKIPS_TAG,
                records::PAGES.tag,
            ] {
                let src = segment_file(&pages, tag);
                let dst = seg_dir.join(src.file_name().unwrap_or_default());
                let tmp = crate::publish::partial_path(&dst);
                // A hard link when both are on one file system, else a copy.
                let _ = std::fs::remove_file(&tmp);
                if std::fs::hard_link(&src, &tmp).is_err() {
                    std::fs::copy(&src, &tmp).at(&src)?;
                }
                std::fs::rename(&tmp, &dst).at(&dst)?;
            }
        }
    }
    Ok(())
}

struct Progress {
    task: Box<dyn Task>,
    done: AtomicU64,
}

impl Progress {
    fn add(&self, bytes: u64) {
        let v = self.done.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.task.set_position(v);
    }
}

/// The path of a segment's file of `kind`, from its `pages` file path.
fn segment_file(pages: &Path, kind: &str) -> PathBuf {
    let name = pages
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .replace(".pages.wm", &format!(".{kind}.wm"))
        })
        .unwrap_or_default();
    pages.with_file_name(name)
}

fn segment_path(dir: &Path, unit: usize, seg: u64) -> PathBuf {
    dir.join(format!("{unit:06}-{seg:06}.pages.wm"))
}

fn segment_meta<R: DeserializeOwned>(pages: &Path) -> Result<SegmentMeta<R>> {
    records::PAGES.open(pages)?.meta_as()
}

/// A segment's checkpoint without its resume point (whatever its unit's kind).
type AnySegmentMeta = SegmentMeta<IgnoredAny>;

fn first_skip(segs: &[PathBuf]) -> Result<Option<String>> {
    for s in segs {
        if let Some(sk) = segment_meta::<IgnoredAny>(s)?.bad {
            return Ok(Some(sk));
        }
    }
    Ok(None)
}

/// The tag of a segment's skip report file.
const SKIPS_TAG: &str = "skips";

/// The four writers of one segment, plus what it counted.
struct Segment {
    pages: PageFileWriter,
    text: PageFileWriter,
    repo: PageFileWriter,
    links: PageFileWriter,
    report: SkipWriter,
    path: PathBuf,
    counts: Counts,
    skips: Vec<String>,
    bad: Option<String>,
}

impl Segment {
    fn create(path: PathBuf) -> Result<Segment> {
        let mk = |kind: &crate::container::FileKind, level: i32| {
            let mut w =
                PageFileWriter::create(segment_file(&path, kind.tag), kind, BLOCK_BYTES, level)?;
            w.set_durable(false);
            Ok::<_, Error>(w)
        };
        let mut report = SkipWriter::create(segment_file(&path, SKIPS_TAG))?;
        report.set_durable(false);
        Ok(Segment {
            links: mk(&records::LINKS, 3)?,
            text: mk(&records::TEXT, 3)?,
            repo: mk(&records::REPO, 3)?,
            pages: mk(&records::PAGES, 3)?,
            report,
            path,
            counts: Counts::default(),
            skips: Vec::new(),
            bad: None,
        })
    }

    /// Lists `entry` in the skip report: a record or file not kept (before
    /// the next page), or a cut of the page just pushed.
    fn skip(&mut self, entry: &SkipEntry) -> Result<()> {
        let key = if entry.kind.is_cut() {
            self.counts.cut += 1;
            self.counts.pages.saturating_sub(1)
        } else {
            self.counts.skipped += 1;
            self.counts.pages
        };
        *self.counts.skips.entry(entry.kind).or_default() += 1;
        if self.skips.len() < KEEP_SKIPS {
            self.skips.push(entry.to_string());
        }
        if self.bad.is_none() && !entry.kind.is_policy() {
            self.bad = Some(entry.to_string());
        }
        self.report.push(key, entry)
    }

    fn push(&mut self, out: PageOut) -> Result<()> {
        let page = self.counts.pages;
        self.pages.push(page, &out.page)?;
        if let Some(t) = &out.text {
            self.text.push(page, t)?;
        }
        self.repo.push(page, &out.repo)?;
        for l in &out.links {
            self.links.push(page, l)?;
        }
        self.counts.pages += 1;
        self.counts.html_bytes += out.body_bytes;
        self.counts.links += out.links.len() as u64;
        self.counts.dropped_links += out.dropped_links;
        Ok(())
    }

    /// Publishes the segment: the `pages` file last, with the checkpoint.
    fn finish<R: Serialize>(self, next: Option<R>) -> Result<PathBuf> {
        let meta = SegmentMeta {
            next,
            counts: self.counts,
            skips: self.skips,
            bad: self.bad,
        };
        let meta = serde_json::to_value(&meta).map_err(|e| Error::internal(e.to_string()))?;
        self.links.finish(&json!({}))?;
        self.text.finish(&json!({}))?;
        self.repo.finish(&json!({}))?;
        self.report.finish()?;
        crate::publish::failpoint("ingest.segment")?;
        self.pages.finish(&meta)?;
        crate::publish::failpoint("ingest.segment_written")?;
        Ok(self.path)
    }
}

/// The segments a unit already published: their paths, and where to go on.
/// `Ok(None)` for the position means the unit is done.
fn published_segments<R: DeserializeOwned>(
    dir: &Path,
    unit: usize,
) -> Result<(Vec<PathBuf>, Option<Option<R>>)> {
    let mut segs = Vec::new();
    let mut next = None;
    loop {
        let p = segment_path(dir, unit, segs.len() as u64);
        if !p.exists() {
            break;
        }
        let meta = match segment_meta::<R>(&p) {
            Ok(m) => m,
            // A damaged checkpoint is redone.
            Err(_) => break,
        };
        let done = meta.next.is_none();
        next = Some(meta.next);
        segs.push(p);
        if done {
            break;
        }
    }
    Ok((segs, next))
}

/// A unit of any input kind, as the stage schedules it.
trait AnyUnit: Send + Sync {
    /// Bytes of input.
    fn bytes(&self) -> u64;
    /// Reads the unit (or what is left of it) into segments of
    /// `segment_records` records: the segments' `pages` files, in order.
    fn run(
        &self,
        unit: usize,
        seg_dir: &Path,
        segment_records: u64,
        cx: &ReadContext,
        progress: &Progress,
    ) -> Result<Vec<PathBuf>>;
}

impl<K: InputKind> AnyUnit for K {
    fn bytes(&self) -> u64 {
        InputKind::bytes(self)
    }

    fn run(
        &self,
        unit: usize,
        seg_dir: &Path,
        segment_records: u64,
        cx: &ReadContext,
        progress: &Progress,
    ) -> Result<Vec<PathBuf>> {
        let (mut segs, next) = published_segments::<K::Resume>(seg_dir, unit)?;
        let at = match next {
            Some(None) => {
                progress.add(InputKind::bytes(self));
                return Ok(segs);
            }
            Some(Some(at)) => Some(at),
            None => None,
        };
        let mut reader = self.open(at, cx)?;
        let mut reported = reader.bytes_read();
        progress.add(reported);
        loop {
            let mut seg = Segment::create(segment_path(seg_dir, unit, segs.len() as u64))?;
            let mut batch = Vec::new();
            let mut n = 0u64;
            let mut at_end = false;
            while n < segment_records {
                let item = match reader.next(&mut seg.counts)? {
                    Next::End => {
                        at_end = true;
                        break;
                    }
                    Next::Counted => None,
                    Next::Item(item) => Some(item),
                };
                n += 1;
                let now = reader.bytes_read();
                progress.add(now.saturating_sub(reported));
                reported = now;
                batch.extend(item);
                if batch_due(&batch, cx.batch_bytes) {
                    process_batch(&mut batch, &mut seg, &cx.limits)?;
                }
            }
            process_batch(&mut batch, &mut seg, &cx.limits)?;
            at_end |= reader.at_end();
            let next = (!at_end).then(|| reader.resume_point());
            segs.push(seg.finish(next)?);
            if at_end {
                return Ok(segs);
            }
        }
    }
}

/// Bytes of bodies gathered before a batch is parsed in parallel.
const BATCH_BYTES: usize = 16 << 20;
const BATCH_PAGES: usize = 256;

/// Body bytes a unit gathers before parsing them: 16 MiB, less when the budget
/// is small, so that the units in flight (one per thread) and their parsed
/// pages stay within `batches` bytes, the stage's share. (A bigger record
/// goes alone, through the gate: see [`limits`].)
fn batch_limit(batches: u64) -> usize {
    let threads = rayon::current_num_threads().max(1) as u64;
    ((batches / threads) as usize).clamp(64 << 10, BATCH_BYTES)
}

/// Is the batch due: full, or holding a big record (which must not wait,
/// and whose unit must not run parallel iterators while it holds the gate)?
fn batch_due(batch: &[Item], batch_bytes: usize) -> bool {
    batch.len() >= BATCH_PAGES
        || batch.last().is_some_and(Item::holds_permit)
        || batch.iter().map(Item::body_len).sum::<usize>() >= batch_bytes
}

/// Processes one item: a page by its content (HTML through the extractor),
/// a skip as it is.
fn process_one(ex: &mut Extractor, item: &Item) -> std::result::Result<PageOut, SkipEntry> {
    let p = match item {
        Item::Page(p) => p,
        Item::Skip(s) => return Err(s.clone()),
    };
    let out = match &p.content {
        Content::Html {
            content_type,
            charset,
            body,
        } => page::process(
            ex,
            &Fetched {
                url: &p.url,
                status: p.status,
                date: &p.date,
                content_type,
                charset: charset.as_deref(),
                body,
                location: p.location.as_deref(),
            },
        ),
        Content::Text {
            content_type,
            title,
            text,
        } => Ok(page::text(&TextPage {
            url: &p.url,
            date: &p.date,
            title,
            content_type,
            text,
        })),
        Content::Meta(m) => page::metadata(&MetaPage {
            url: &p.url,
            status: p.status,
            date: &p.date,
            content_type: &m.content_type,
            title: &m.title,
            base: m.base.as_deref(),
            location: p.location.as_deref(),
            links: &m.links,
            hrefs_dropped: m.hrefs_dropped,
        }),
    };
    out.map_err(|e| SkipEntry::new(e.kind, p.file.clone(), p.place.clone(), e.reason))
}

fn process_batch(batch: &mut Vec<Item>, seg: &mut Segment, limits: &RecordLimits) -> Result<()> {
    let extractor = || {
        let mut ex = Extractor::new();
        ex.set_max_links(limits.links);
        ex
    };
    let outs: Vec<std::result::Result<PageOut, SkipEntry>> = if batch.iter().any(Item::holds_permit)
    {
        // Holding the gate: no parallel iterator (see `limits`).
        let mut ex = extractor();
        batch
            .iter()
            .map(|item| process_one(&mut ex, item))
            .collect()
    } else {
        batch.par_iter().map_init(extractor, process_one).collect()
    };
    for (item, out) in batch.iter().zip(outs) {
        match (item, out) {
            (Item::Page(p), Ok(mut out)) => {
                if p.location.is_some() {
                    seg.counts.redirects += 1;
                }
                match p.content {
                    Content::Text { .. } => seg.counts.text_pages += 1,
                    Content::Meta(_) => seg.counts.meta_pages += 1,
                    Content::Html { .. } => {}
                }
                let page_cuts = std::mem::take(&mut out.cuts);
                seg.push(out)?;
                for (kind, detail) in p.cuts.iter().chain(&page_cuts) {
                    seg.skip(&SkipEntry::new(
                        *kind,
                        p.file.clone(),
                        p.place.clone(),
                        detail.clone(),
                    ))?;
                }
            }
            (_, Err(skip)) => seg.skip(&skip)?,
            (Item::Skip(_), Ok(_)) => unreachable!("skips never produce a page"),
        }
    }
    batch.clear();
    Ok(())
}

//! Ingest: web dumps (WARC files, directories of HTML) into the page list, the
//! token streams, the repository and the raw links; then the URL resolver
//! ([`resolve`]) turns them into docIDs, the link graph and the anchors.
//!
//! # Units, segments, checkpoints
//!
//! The inputs are cut into *units*: a WARC file is one unit; a directory is
//! listed (recursively, in byte order of the relative paths) and cut into units
//! of [`IngestOptions::segment_records`] files. Units are processed in
//! parallel (rayon), each by one reader with the pages of a batch parsed in
//! parallel. A unit writes *segments*: every `segment_records` input records
//! it publishes four page files (`pages`, `text`, `repo`, `links`, see
//! [`pagefile`]) in the stage's temporary directory; the `pages` file, written
//! last, carries in its footer where the reader stopped (a WARC resume point)
//! and what was counted and skipped. Those are the checkpoints: after `kill
//! -9`, a unit restarts after its last published segment, and a half-written
//! segment is never seen (files are published atomically).
//!
//! When every unit is done, segments are joined in input order into
//! `pages.wm`, `text.wm`, `repository.wm` and `links.wm` by copying their
//! compressed blocks ([`pagefile::concat`]), page numbers shifted so that they
//! count pages across all inputs. The outputs depend only on the inputs and
//! `segment_records`, never on the thread count or on interruptions.

pub mod dir;
pub mod html;
pub mod limits;
pub mod page;
pub mod pagefile;
pub mod records;
pub mod resolve;
pub mod text;
/// URL normalization lives in [`crate::url`] (shared with `import-graph`).
pub use crate::url;
pub mod urltable;
pub mod warc;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{Error, IoContext, Result};
use crate::ingest::dir::{file_url, list_dir, DirEntry};
use crate::ingest::html::Extractor;
use crate::ingest::limits::{Permit, RecordGate, RecordLimits};
use crate::ingest::page::{Cuts, Fetched, PageOut};
use crate::ingest::pagefile::PageFileWriter;
use crate::ingest::url::UrlVerdict;
use crate::input::{SkipCounts, SkipEntry, SkipKind, SkipWriter, KEEP_SKIPS};
use crate::job::{Job, JobFile, Outcome, Settings, Stage, StageContext, StageId};
use crate::progress::{Task, Unit as ProgressUnit};
use crate::resources::format_bytes;

/// File name extensions read as HTML in directory inputs.
const HTML_EXTENSIONS: [&str; 4] = ["html", "htm", "xhtml", "shtml"];
/// Raw bytes of a page-file block.
const BLOCK_BYTES: usize = 256 << 10;

/// One input as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputSpec {
    /// A WARC file (plain or gzip).
    Warc(PathBuf),
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
                "input not found (an INPUT is a WARC or ARC file, a directory of HTML files, or BASE_URL=DIR)",
            ),
            _ => Error::io(&path, e),
        })?;
        if meta.is_file() {
            if base.is_some() {
                return Err(Error::usage(format!(
                    "{arg}: a base URL applies to a directory, not a file"
                )));
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
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            inputs: Vec::new(),
            segment_records: 10_000,
            max_record_bytes: 64 << 20,
        }
    }
}

/// What was counted in a segment (and, summed, in the whole ingest).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counts {
    /// WARC records read, by type.
    pub records: std::collections::BTreeMap<String, u64>,
    /// Files read from directories.
    pub files: u64,
    /// Files in directories that are not HTML by name (not read).
    pub other_files: u64,
    /// Pages kept.
    pub pages: u64,
    /// HTML bytes of the pages kept.
    pub html_bytes: u64,
    /// Responses that are not HTML by content type (images, scripts…).
    pub not_html: u64,
    /// Records whose target is not an http(s) or file URL (crawler logs).
    pub not_web: u64,
    /// Responses with an error status (4xx, 5xx, 1xx).
    pub error_status: u64,
    /// Redirects (kept as pages whose one link is the redirect).
    pub redirects: u64,
    /// Links kept.
    pub links: u64,
    /// Links dropped (other schemes, unparsable).
    pub dropped_links: u64,
    /// Records or files that did not become a page (each listed in the skip
    /// report).
    pub skipped: u64,
    /// Pages kept with a part cut (each listed in the skip report).
    #[serde(default)]
    pub cut: u64,
    /// Skips and cuts by kind.
    #[serde(default)]
    pub skips: SkipCounts,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        for (k, v) in &o.records {
            *self.records.entry(k.clone()).or_default() += v;
        }
        self.files += o.files;
        self.other_files += o.other_files;
        self.pages += o.pages;
        self.html_bytes += o.html_bytes;
        self.not_html += o.not_html;
        self.not_web += o.not_web;
        self.error_status += o.error_status;
        self.redirects += o.redirects;
        self.links += o.links;
        self.dropped_links += o.dropped_links;
        self.skipped += o.skipped;
        self.cut += o.cut;
        for (k, v) in &o.skips {
            *self.skips.entry(*k).or_default() += v;
        }
    }
}

/// Footer metadata of a segment's `pages` file: its checkpoint.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SegmentMeta {
    /// Where the next segment of the unit starts; `None` when the unit is done.
    next: Option<serde_json::Value>,
    counts: Counts,
    skips: Vec<String>,
    /// The first skip of bad input (what `--strict` fails on).
    #[serde(default)]
    bad: Option<String>,
}

/// A unit of work.
enum Work {
    Warc(PathBuf),
    Files {
        dir: PathBuf,
        base: ::url::Url,
        files: Vec<DirEntry>,
    },
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
    /// A directory and its base URL.
    Dir {
        /// Absolute path.
        dir: String,
        /// Base URL.
        base: String,
    },
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
                    let meta = std::fs::metadata(p).at(p)?;
                    let abs = std::fs::canonicalize(p).at(p)?;
                    InputParam::Warc {
                        warc: abs.to_string_lossy().into_owned(),
                        bytes: meta.len(),
                    }
                }
                InputSpec::Dir { dir, base } => InputParam::Dir {
                    dir: dir.to_string_lossy().into_owned(),
                    base: base.clone(),
                },
            });
        }
        let limits = RecordLimits::from_budget(self.mem, 1);
        Ok(IngestParams {
            inputs,
            segment_records: opts.segment_records,
            max_record_bytes: opts.max_record_bytes,
            record_bytes: limits.record_bytes,
            links_per_page: limits.links as u64,
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
            InputSpec::Warc(p) | InputSpec::Dir { dir: p, .. } => p.clone(),
        })
        .collect();
    crate::input::nothing_usable(
        &inputs,
        "WARC or ARC files holding HTTP responses with HTML pages, or directories of .html/.htm files",
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

fn is_html_name(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| HTML_EXTENSIONS.iter().any(|h| e.eq_ignore_ascii_case(h)))
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

fn run_ingest(opts: &IngestOptions, cx: &StageContext) -> Result<IngestFigures> {
    let s = cx.settings();
    let seg_dir = cx.tmp().join("segments");
    std::fs::create_dir_all(&seg_dir).at(&seg_dir)?;
    let limits = RecordLimits::from_budget(s.mem, rayon::current_num_threads());
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
    let ctx = UnitContext {
        opts,
        seg_dir: &seg_dir,
        settings: s,
        limits,
        gate: RecordGate::new(),
    };

    // The units, in input order.
    let mut units = Vec::new();
    let mut total_bytes = 0u64;
    for input in &opts.inputs {
        match input {
            InputSpec::Warc(p) => {
                total_bytes += std::fs::metadata(p).map_or(0, |m| m.len());
                units.push(Work::Warc(p.clone()));
            }
            InputSpec::Dir { dir, base } => {
                let base =
                    ::url::Url::parse(base).map_err(|e| Error::usage(format!("{base}: {e}")))?;
                let files = list_dir(dir)?;
                for chunk in files.chunks(opts.segment_records as usize) {
                    for f in chunk.iter().filter(|f| f.skip.is_none()) {
                        total_bytes += std::fs::metadata(dir.join(&f.rel)).map_or(0, |m| m.len());
                    }
                    units.push(Work::Files {
                        dir: dir.clone(),
                        base: base.clone(),
                        files: chunk.to_vec(),
                    });
                }
            }
        }
    }
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
        .map(|(u, work)| {
            let r = match work {
                Work::Warc(p) => warc_unit(u, p, &ctx, &progress),
                Work::Files { dir, base, files } => {
                    files_unit(u, dir, base, files, &ctx, &progress)
                }
            };
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
        let meta = segment_meta(seg)?;
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

fn segment_meta(pages: &Path) -> Result<SegmentMeta> {
    records::PAGES.open(pages)?.meta_as()
}

fn first_skip(segs: &[PathBuf]) -> Result<Option<String>> {
    for s in segs {
        if let Some(sk) = segment_meta(s)?.bad {
            return Ok(Some(sk));
        }
    }
    Ok(None)
}

/// The tag of a segment's skip report file.
const SKIPS_TAG: &str = "skips";

/// What every unit of one ingest shares.
struct UnitContext<'a> {
    opts: &'a IngestOptions,
    seg_dir: &'a Path,
    settings: &'a Settings,
    limits: RecordLimits,
    gate: Arc<RecordGate>,
}

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
    fn finish(self, next: Option<serde_json::Value>) -> Result<PathBuf> {
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
fn published_segments(
    dir: &Path,
    unit: usize,
) -> Result<(Vec<PathBuf>, Option<Option<serde_json::Value>>)> {
    let mut segs = Vec::new();
    let mut next = None;
    loop {
        let p = segment_path(dir, unit, segs.len() as u64);
        if !p.exists() {
            break;
        }
        let meta = match segment_meta(&p) {
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

/// A page ready to be processed in parallel with others of its batch.
enum Item {
    Page {
        url: String,
        status: u16,
        date: String,
        content_type: String,
        charset: Option<String>,
        body: Vec<u8>,
        location: Option<String>,
        /// Where it came from, for reports.
        file: PathBuf,
        place: String,
        /// What was cut before it was parsed (block, body).
        cuts: Cuts,
        /// Held while a big record is in memory.
        permit: Option<Permit>,
    },
    Skip(SkipEntry),
}

impl Item {
    fn body_len(&self) -> usize {
        match self {
            Item::Page { body, .. } => body.len(),
            Item::Skip(_) => 0,
        }
    }

    fn holds_permit(&self) -> bool {
        matches!(
            self,
            Item::Page {
                permit: Some(_),
                ..
            }
        )
    }
}

/// Bytes of bodies gathered before a batch is parsed in parallel.
const BATCH_BYTES: usize = 16 << 20;
const BATCH_PAGES: usize = 256;

/// Body bytes a unit gathers before parsing them: 16 MiB, less when the budget
/// is small, so that the units in flight (one per thread) and their parsed
/// pages stay a fraction of `--mem`. (A bigger record goes alone, through the
/// gate: see [`limits`].)
fn batch_limit(s: &Settings) -> usize {
    let threads = rayon::current_num_threads().max(1) as u64;
    ((s.mem / 8 / threads) as usize).clamp(64 << 10, BATCH_BYTES)
}

/// Is the batch due: full, or holding a big record (which must not wait,
/// and whose unit must not run parallel iterators while it holds the gate)?
fn batch_due(batch: &[Item], s: &Settings) -> bool {
    batch.len() >= BATCH_PAGES
        || batch.last().is_some_and(Item::holds_permit)
        || batch.iter().map(Item::body_len).sum::<usize>() >= batch_limit(s)
}

fn process_one(ex: &mut Extractor, item: &Item) -> std::result::Result<PageOut, SkipEntry> {
    match item {
        Item::Page {
            url,
            status,
            date,
            content_type,
            charset,
            body,
            location,
            file,
            place,
            ..
        } => page::process(
            ex,
            &Fetched {
                url,
                status: *status,
                date,
                content_type,
                charset: charset.as_deref(),
                body,
                location: location.as_deref(),
            },
        )
        .map_err(|e| SkipEntry::new(e.kind, file.clone(), place.clone(), e.reason)),
        Item::Skip(s) => Err(s.clone()),
    }
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
            (
                Item::Page {
                    location,
                    file,
                    place,
                    cuts,
                    ..
                },
                Ok(mut out),
            ) => {
                if location.is_some() {
                    seg.counts.redirects += 1;
                }
                let page_cuts = std::mem::take(&mut out.cuts);
                seg.push(out)?;
                for (kind, detail) in cuts.iter().chain(&page_cuts) {
                    seg.skip(&SkipEntry::new(
                        *kind,
                        file.clone(),
                        place.clone(),
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

/// Reads at most `limits.record_bytes` of a directory file (through the gate
/// when big): its bytes, what was cut, the permit.
fn read_file(path: &Path, ctx: &UnitContext) -> std::io::Result<(Vec<u8>, Cuts, Option<Permit>)> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let keep = len.min(ctx.limits.record_bytes);
    let permit = (keep > ctx.limits.gate_bytes).then(|| ctx.gate.enter());
    let mut body = Vec::with_capacity(keep as usize);
    file.take(ctx.limits.record_bytes + 1)
        .read_to_end(&mut body)?;
    let mut cuts = Vec::new();
    if body.len() as u64 > ctx.limits.record_bytes {
        body.truncate(ctx.limits.record_bytes as usize);
        cuts.push((
            SkipKind::BlockCut,
            cut_detail("file", len, &ctx.limits, ctx.settings),
        ));
    }
    Ok((body, cuts, permit))
}

/// Says what a block cut kept.
fn cut_detail(what: &str, len: u64, limits: &RecordLimits, s: &Settings) -> String {
    format!(
        "{what} of {len} bytes read only up to its first {} bytes: the per-record limit under --mem {}",
        limits.record_bytes,
        format_bytes(s.mem)
    )
}

/// A directory unit: one segment.
fn files_unit(
    unit: usize,
    dir: &Path,
    base: &::url::Url,
    files: &[DirEntry],
    ctx: &UnitContext,
    progress: &Progress,
) -> Result<Vec<PathBuf>> {
    let (segs, next) = published_segments(ctx.seg_dir, unit)?;
    let size = |f: &DirEntry| {
        if f.skip.is_some() {
            0
        } else {
            std::fs::metadata(dir.join(&f.rel)).map_or(0, |m| m.len())
        }
    };
    if next.is_some() {
        progress.add(files.iter().map(size).sum());
        return Ok(segs);
    }
    let mut seg = Segment::create(segment_path(ctx.seg_dir, unit, 0))?;
    let mut batch = Vec::new();
    for entry in files {
        let path = dir.join(&entry.rel);
        let skip = |kind: SkipKind, detail: String| {
            Item::Skip(SkipEntry::new(kind, path.clone(), String::new(), detail))
        };
        let item = if let Some((kind, detail)) = &entry.skip {
            skip(*kind, detail.clone())
        } else if !is_html_name(&entry.rel) {
            seg.counts.other_files += 1;
            progress.add(size(entry));
            skip(
                SkipKind::OtherFile,
                format!(
                    "not read: its name does not end in .{}",
                    HTML_EXTENSIONS.join(", .")
                ),
            )
        } else {
            seg.counts.files += 1;
            match file_url(base, &entry.rel) {
                UrlVerdict::NotWeb => skip(
                    SkipKind::NotWeb,
                    format!("no URL can be made for it under {base}"),
                ),
                UrlVerdict::TooLong(n) => skip(
                    SkipKind::UrlTooLong,
                    format!(
                        "its URL would have {n} bytes, more than {}",
                        url::MAX_URL_BYTES
                    ),
                ),
                UrlVerdict::Kept(url) => match read_file(&path, ctx) {
                    Err(e) => skip(SkipKind::Unreadable, format!("cannot read: {e}")),
                    Ok((body, cuts, permit)) => {
                        progress.add(size(entry));
                        Item::Page {
                            url,
                            status: 0,
                            date: String::new(),
                            content_type: "text/html".into(),
                            charset: None,
                            body,
                            location: None,
                            file: path.clone(),
                            place: "offset 0".into(),
                            cuts,
                            permit,
                        }
                    }
                },
            }
        };
        batch.push(item);
        if batch_due(&batch, ctx.settings) {
            process_batch(&mut batch, &mut seg, &ctx.limits)?;
        }
    }
    process_batch(&mut batch, &mut seg, &ctx.limits)?;
    Ok(vec![seg.finish(None)?])
}

/// Media types read as HTML.
fn is_html_type(media: &str) -> bool {
    let m = media.trim().to_ascii_lowercase();
    m.is_empty() || m == "text/html" || m == "application/xhtml+xml" || m == "text/xhtml"
}

/// A WARC unit: segments of `segment_records` records.
fn warc_unit(
    unit: usize,
    path: &Path,
    ctx: &UnitContext,
    progress: &Progress,
) -> Result<Vec<PathBuf>> {
    let opts = ctx.opts;
    let (mut segs, next) = published_segments(ctx.seg_dir, unit)?;
    let wopts = warc::WarcOptions {
        max_record_bytes: opts.max_record_bytes,
        keep_block_bytes: ctx.limits.record_bytes,
    };
    let mut reader = match &next {
        Some(None) => {
            progress.add(std::fs::metadata(path).map_or(0, |m| m.len()));
            return Ok(segs);
        }
        Some(Some(pos)) => {
            let pos: warc::ResumePoint = serde_json::from_value(pos.clone()).map_err(|e| {
                Error::corrupt(&segs[segs.len() - 1], "checkpoint", 0, e.to_string())
            })?;
            warc::WarcReader::open_at(path, &pos, &wopts)?
        }
        None => warc::WarcReader::open(path, &wopts)?,
    };
    reader.set_gate(ctx.limits.gate_bytes, Arc::clone(&ctx.gate));
    let mut reported = reader.bytes_read();
    progress.add(reported);
    loop {
        let mut seg = Segment::create(segment_path(ctx.seg_dir, unit, segs.len() as u64))?;
        let mut batch = Vec::new();
        let mut n = 0u64;
        let mut at_end = false;
        while n < opts.segment_records {
            let Some(ev) = reader.next_event()? else {
                at_end = true;
                break;
            };
            n += 1;
            let now = reader.bytes_read();
            progress.add(now.saturating_sub(reported));
            reported = now;
            match ev {
                warc::WarcEvent::Skip { skip, .. } => batch.push(Item::Skip(skip.into())),
                warc::WarcEvent::Record(rec) => {
                    if let Some(item) = warc_item(path, rec, ctx, &mut seg.counts) {
                        batch.push(item);
                    }
                }
            }
            if batch_due(&batch, ctx.settings) {
                process_batch(&mut batch, &mut seg, &ctx.limits)?;
            }
        }
        process_batch(&mut batch, &mut seg, &ctx.limits)?;
        let next = if at_end {
            None
        } else {
            Some(
                serde_json::to_value(reader.resume_point())
                    .map_err(|e| Error::internal(e.to_string()))?,
            )
        };
        segs.push(seg.finish(next)?);
        if at_end {
            return Ok(segs);
        }
    }
}

/// Where an HTTP body lies: in the record's block, or decoded apart.
enum BodyAt {
    Block(usize, usize),
    Decoded(Vec<u8>),
}

/// The parts of a response a page needs, owned (so that the record's block
/// can become the body without a copy).
struct Response {
    status: u16,
    location: Option<String>,
    media: String,
    content_type: String,
    charset: Option<String>,
    body: BodyAt,
    body_cut: bool,
}

/// Takes a record's HTTP response apart with its body cut at `max`; `None`
/// when the record holds no document (requests, metadata, DNS).
fn response(rec: &warc::WarcRecord, max: u64) -> Option<std::result::Result<Response, String>> {
    let resp = match rec.http_response(max)? {
        Ok(r) => r,
        Err(e) => return Some(Err(e)),
    };
    let location = resp.header("location").map(str::to_string);
    let media = resp.media_type().unwrap_or_default();
    let content_type = resp.content_type().unwrap_or("").to_string();
    let charset = resp.charset().map(str::to_string);
    let body = match resp.body {
        std::borrow::Cow::Borrowed(b) => {
            let start = b.as_ptr() as usize - rec.block.as_ptr() as usize;
            BodyAt::Block(start, start + b.len())
        }
        std::borrow::Cow::Owned(v) => BodyAt::Decoded(v),
    };
    Some(Ok(Response {
        status: resp.status,
        location,
        media,
        content_type,
        charset,
        body,
        body_cut: resp.body_cut,
    }))
}

/// What a WARC record becomes: a page to parse, a skip, or only a count
/// (records that hold no document: requests, metadata, warcinfo, DNS).
fn warc_item(
    path: &Path,
    mut rec: warc::WarcRecord,
    ctx: &UnitContext,
    counts: &mut Counts,
) -> Option<Item> {
    let limits = &ctx.limits;
    let place = rec.pos.to_string();
    let skip = |kind: SkipKind, detail: String| {
        Some(Item::Skip(SkipEntry::new(
            kind,
            path,
            place.clone(),
            detail,
        )))
    };
    *counts
        .records
        .entry(rec.kind.as_str().to_string())
        .or_default() += 1;
    // A body that decodes beyond the gate's threshold is decoded again
    // holding the gate, up to the per-record limit.
    let mut permit = rec.permit.take();
    let first = if permit.is_some() {
        limits.record_bytes
    } else {
        limits.gate_bytes
    };
    let mut resp = match response(&rec, first)? {
        Ok(r) => r,
        Err(e) => return skip(SkipKind::BadHttp, format!("bad HTTP response: {e}")),
    };
    if resp.body_cut && permit.is_none() && first < limits.record_bytes {
        drop(resp);
        permit = Some(ctx.gate.enter());
        resp = match response(&rec, limits.record_bytes)? {
            Ok(r) => r,
            Err(e) => return skip(SkipKind::BadHttp, format!("bad HTTP response: {e}")),
        };
    }
    let Some(target) = rec.target_uri() else {
        return skip(
            SkipKind::NoTarget,
            format!("{} record without WARC-Target-URI", rec.kind.as_str()),
        );
    };
    let url = match url::normalize_checked(target) {
        UrlVerdict::Kept(u) => u,
        UrlVerdict::TooLong(n) => {
            return skip(
                SkipKind::UrlTooLong,
                format!(
                    "its URL has {n} bytes, more than {} (starts {:?})",
                    url::MAX_URL_BYTES,
                    crate::input::shown(target.as_bytes())
                ),
            )
        }
        // wget and wpull store their logs as `resource` records under
        // `metadata://` or `urn:` URIs: not web pages, not damage.
        UrlVerdict::NotWeb => {
            counts.not_web += 1;
            return skip(
                SkipKind::NotWeb,
                format!(
                    "target {:?} is not an http(s) or file URL",
                    crate::input::shown(target.as_bytes())
                ),
            );
        }
    };
    let status = resp.status;
    let redirect = (300..400).contains(&status) && resp.location.is_some();
    if !redirect {
        if !(200..300).contains(&status) {
            counts.error_status += 1;
            return skip(SkipKind::ErrorStatus, format!("HTTP status {status}"));
        }
        if !is_html_type(&resp.media) {
            counts.not_html += 1;
            return skip(
                SkipKind::NotHtml,
                format!("media type {:?} is not HTML", resp.media),
            );
        }
    }
    let mut cuts = Vec::new();
    if rec.is_cut() {
        cuts.push((
            SkipKind::BlockCut,
            cut_detail("record block", rec.length, limits, ctx.settings),
        ));
    }
    if resp.body_cut {
        cuts.push((
            SkipKind::BodyCut,
            format!(
                "body decoded only up to its first {} bytes (it is longer): the per-record limit under --mem {}",
                limits.record_bytes,
                format_bytes(ctx.settings.mem)
            ),
        ));
    }
    let date = rec.date().unwrap_or("").to_string();
    let body = if redirect {
        Vec::new()
    } else {
        match std::mem::replace(&mut resp.body, BodyAt::Decoded(Vec::new())) {
            BodyAt::Decoded(v) => v,
            // The block becomes the body: no copy of a big record.
            BodyAt::Block(start, end) => {
                let mut block = std::mem::take(&mut rec.block);
                block.copy_within(start..end, 0);
                block.truncate(end - start);
                block
            }
        }
    };
    Some(Item::Page {
        url,
        status,
        date,
        content_type: resp.content_type,
        charset: resp.charset,
        body,
        location: if redirect { resp.location } else { None },
        file: path.to_path_buf(),
        place,
        cuts,
        permit,
    })
}

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

pub mod html;
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
use std::sync::Mutex;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{Error, IoContext, Result};
use crate::ingest::html::Extractor;
use crate::ingest::page::{Fetched, PageOut};
use crate::ingest::pagefile::PageFileWriter;
use crate::input::KEEP_SKIPS;
use crate::job::{Job, JobFile, Outcome, Settings, Stage, StageContext, StageId};
use crate::progress::{Task, Unit as ProgressUnit};

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
    /// Records or files skipped as bad input (each reported).
    pub skipped: u64,
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
    }
}

/// Footer metadata of a segment's `pages` file: its checkpoint.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SegmentMeta {
    /// Where the next segment of the unit starts; `None` when the unit is done.
    next: Option<serde_json::Value>,
    counts: Counts,
    skips: Vec<String>,
}

/// A unit of work.
enum Work {
    Warc(PathBuf),
    Files {
        dir: PathBuf,
        base: ::url::Url,
        files: Vec<PathBuf>,
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
}

/// What `ingest` measured: the sum of its segments' counts, the input size,
/// and the first skips with their file and offset.
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
        Ok(IngestParams {
            inputs,
            segment_records: opts.segment_records,
            max_record_bytes: opts.max_record_bytes,
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
/// files are followed, to directories not.
pub fn list_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let full = dir.join(&rel);
        let mut entries = Vec::new();
        for e in std::fs::read_dir(&full).at(&full)? {
            let e = e.at(&full)?;
            entries.push(e);
        }
        for e in entries {
            let ft = e.file_type().at(e.path())?;
            let r = rel.join(e.file_name());
            if ft.is_dir() {
                stack.push(r);
            } else if ft.is_file() || (ft.is_symlink() && e.path().is_file()) {
                out.push(r);
            }
        }
    }
    out.sort_by(|a, b| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    });
    Ok(out)
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

/// A file's URL under `base`: its relative path, each component
/// percent-encoded where a URL path needs it.
fn file_url(base: &::url::Url, rel: &Path) -> Option<String> {
    let mut path = String::new();
    for (i, c) in rel.components().enumerate() {
        if i > 0 {
            path.push('/');
        }
        let s = c.as_os_str().to_string_lossy();
        for ch in s.chars() {
            match ch {
                '%' => path.push_str("%25"),
                '#' => path.push_str("%23"),
                '?' => path.push_str("%3F"),
                '\\' => path.push_str("%5C"),
                c => path.push(c),
            }
        }
    }
    url::resolve(base, &path)
}

/// Runs (or resumes, or skips) the ingest of `opts.inputs` into `job`.
pub fn ingest(job: &mut Job, opts: &IngestOptions, s: &Settings) -> Result<Outcome<IngestFigures>> {
    job.run(&Ingest { opts: opts.clone() }, s)
}

fn run_ingest(opts: &IngestOptions, cx: &StageContext) -> Result<IngestFigures> {
    let s = cx.settings();
    let seg_dir = cx.tmp().join("segments");
    std::fs::create_dir_all(&seg_dir).at(&seg_dir)?;

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
                let files = list_files(dir)?;
                for chunk in files.chunks(opts.segment_records as usize) {
                    for f in chunk {
                        total_bytes += std::fs::metadata(dir.join(f)).map_or(0, |m| m.len());
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
                Work::Warc(p) => warc_unit(u, p, opts, &seg_dir, &progress, s),
                Work::Files { dir, base, files } => {
                    files_unit(u, dir, base, files, &seg_dir, &progress, s)
                }
            };
            if s.strict {
                if let Ok(segs) = &r {
                    if let Some(skip) = first_skip(segs)? {
                        let mut f = strict_failure.lock().unwrap_or_else(|e| e.into_inner());
                        f.get_or_insert(Error::usage(format!(
                            "{skip} (--strict: bad input is an error)"
                        )));
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
        base += meta.counts.pages;
    }
    if counts.pages == 0 {
        return Err(nothing_ingested(opts, &counts, &skips));
    }
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
        if let Some(sk) = segment_meta(s)?.skips.into_iter().next() {
            return Ok(Some(sk));
        }
    }
    Ok(None)
}

/// The four writers of one segment, plus what it counted.
struct Segment {
    pages: PageFileWriter,
    text: PageFileWriter,
    repo: PageFileWriter,
    links: PageFileWriter,
    path: PathBuf,
    counts: Counts,
    skips: Vec<String>,
}

impl Segment {
    fn create(path: PathBuf) -> Result<Segment> {
        let mk = |kind: &crate::container::FileKind, level: i32| {
            let mut w =
                PageFileWriter::create(segment_file(&path, kind.tag), kind, BLOCK_BYTES, level)?;
            w.set_durable(false);
            Ok::<_, Error>(w)
        };
        Ok(Segment {
            links: mk(&records::LINKS, 3)?,
            text: mk(&records::TEXT, 3)?,
            repo: mk(&records::REPO, 3)?,
            pages: mk(&records::PAGES, 3)?,
            path,
            counts: Counts::default(),
            skips: Vec::new(),
        })
    }

    fn skip(&mut self, skip: String) {
        self.counts.skipped += 1;
        if self.skips.len() < KEEP_SKIPS {
            self.skips.push(skip);
        }
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
        };
        let meta = serde_json::to_value(&meta).map_err(|e| Error::internal(e.to_string()))?;
        self.links.finish(&json!({}))?;
        self.text.finish(&json!({}))?;
        self.repo.finish(&json!({}))?;
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
        place: String,
    },
    Skip(String),
}

/// Bytes of bodies gathered before a batch is parsed in parallel.
const BATCH_BYTES: usize = 16 << 20;
const BATCH_PAGES: usize = 256;

/// Body bytes a unit gathers before parsing them: 16 MiB, less when the budget
/// is small, so that the units in flight (one per thread) and their parsed
/// pages stay a fraction of `--mem`. (A single record over this is still read
/// whole, up to `--max-record-bytes`.)
fn batch_limit(s: &Settings) -> usize {
    let threads = rayon::current_num_threads().max(1) as u64;
    ((s.mem / 4 / threads) as usize).clamp(256 << 10, BATCH_BYTES)
}

fn process_batch(batch: &mut Vec<Item>, seg: &mut Segment) -> Result<()> {
    let outs: Vec<std::result::Result<PageOut, String>> = batch
        .par_iter()
        .map_init(Extractor::new, |ex, item| match item {
            Item::Page {
                url,
                status,
                date,
                content_type,
                charset,
                body,
                location,
                place,
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
            .map_err(|e| format!("{place}: {}", e.0)),
            Item::Skip(s) => Err(s.clone()),
        })
        .collect();
    for (item, out) in batch.iter().zip(outs) {
        match (item, out) {
            (Item::Page { location, .. }, Ok(out)) => {
                if location.is_some() {
                    seg.counts.redirects += 1;
                }
                seg.push(out)?
            }
            (_, Err(skip)) => seg.skip(skip),
            (Item::Skip(_), Ok(_)) => unreachable!("skips never produce a page"),
        }
    }
    batch.clear();
    Ok(())
}

fn batch_bytes(batch: &[Item]) -> usize {
    batch
        .iter()
        .map(|i| match i {
            Item::Page { body, .. } => body.len(),
            Item::Skip(_) => 0,
        })
        .sum()
}

/// A directory unit: one segment.
fn files_unit(
    unit: usize,
    dir: &Path,
    base: &::url::Url,
    files: &[PathBuf],
    seg_dir: &Path,
    progress: &Progress,
    s: &Settings,
) -> Result<Vec<PathBuf>> {
    let (segs, next) = published_segments(seg_dir, unit)?;
    if next.is_some() {
        progress.add(
            files
                .iter()
                .map(|f| std::fs::metadata(dir.join(f)).map_or(0, |m| m.len()))
                .sum(),
        );
        return Ok(segs);
    }
    let mut seg = Segment::create(segment_path(seg_dir, unit, 0))?;
    let mut batch = Vec::new();
    for rel in files {
        let path = dir.join(rel);
        if !is_html_name(rel) {
            seg.counts.other_files += 1;
            progress.add(std::fs::metadata(&path).map_or(0, |m| m.len()));
            continue;
        }
        seg.counts.files += 1;
        let place = path.display().to_string();
        let item = match std::fs::read(&path) {
            Err(e) => Item::Skip(format!("{place}: cannot read: {e}")),
            Ok(body) => {
                progress.add(body.len() as u64);
                match file_url(base, rel) {
                    None => Item::Skip(format!("{place}: no URL can be made for it under {base}")),
                    Some(url) => Item::Page {
                        url,
                        status: 0,
                        date: String::new(),
                        content_type: "text/html".into(),
                        charset: None,
                        body,
                        location: None,
                        place: format!("{place}: offset 0"),
                    },
                }
            }
        };
        batch.push(item);
        if batch.len() >= BATCH_PAGES || batch_bytes(&batch) >= batch_limit(s) {
            process_batch(&mut batch, &mut seg)?;
        }
    }
    process_batch(&mut batch, &mut seg)?;
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
    opts: &IngestOptions,
    seg_dir: &Path,
    progress: &Progress,
    s: &Settings,
) -> Result<Vec<PathBuf>> {
    let (mut segs, next) = published_segments(seg_dir, unit)?;
    let wopts = warc::WarcOptions {
        max_record_bytes: opts.max_record_bytes,
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
    let mut reported = reader.bytes_read();
    progress.add(reported);
    loop {
        let mut seg = Segment::create(segment_path(seg_dir, unit, segs.len() as u64))?;
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
                warc::WarcEvent::Skip { skip, .. } => batch.push(Item::Skip(skip.to_string())),
                warc::WarcEvent::Record(rec) => {
                    if let Some(item) = warc_item(path, rec, opts, &mut seg.counts) {
                        batch.push(item);
                    }
                }
            }
            if batch.len() >= BATCH_PAGES || batch_bytes(&batch) >= batch_limit(s) {
                process_batch(&mut batch, &mut seg)?;
            }
        }
        process_batch(&mut batch, &mut seg)?;
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

/// What a WARC record becomes: a page to parse, a skip, or only a count.
fn warc_item(
    path: &Path,
    rec: warc::WarcRecord,
    opts: &IngestOptions,
    counts: &mut Counts,
) -> Option<Item> {
    let place = format!("{}: {}", path.display(), rec.pos);
    *counts
        .records
        .entry(rec.kind.as_str().to_string())
        .or_default() += 1;
    let resp = match rec.http_response(opts.max_record_bytes)? {
        Ok(r) => r,
        Err(e) => return Some(Item::Skip(format!("{place}: bad HTTP response: {e}"))),
    };
    let Some(target) = rec.target_uri() else {
        return Some(Item::Skip(format!(
            "{place}: {} record without WARC-Target-URI",
            rec.kind.as_str()
        )));
    };
    let Some(url) = url::normalize(target) else {
        // wget and wpull store their logs as `resource` records under
        // `metadata://` or `urn:` URIs: not web pages, not damage.
        counts.not_web += 1;
        return None;
    };
    let status = resp.status;
    let location = resp.header("location").map(str::to_string);
    let redirect = (300..400).contains(&status) && location.is_some();
    if !redirect {
        if !(200..300).contains(&status) {
            counts.error_status += 1;
            return None;
        }
        if !is_html_type(&resp.media_type().unwrap_or_default()) {
            counts.not_html += 1;
            return None;
        }
    }
    Some(Item::Page {
        url,
        status,
        date: rec.date().unwrap_or("").to_string(),
        content_type: resp.content_type().unwrap_or("").to_string(),
        charset: resp.charset().map(str::to_string),
        body: if redirect {
            Vec::new()
        } else {
            resp.body.into_owned()
        },
        location: if redirect { location } else { None },
        place,
    })
}

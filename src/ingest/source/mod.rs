//! Input kinds: what ingest reads, behind one trait.
//!
//! An input (a WARC file, a directory of HTML files) is cut into *units*,
//! each read from start to end by one [`Reader`]. [`InputKind`] is what a
//! unit of one kind is: its size (for progress), its typed [`InputKind::Resume`]
//! point (stored in each segment's checkpoint, so that a unit killed mid-way
//! restarts after its last published segment), and how it is opened at the
//! start or at such a point. A reader hands out one [`Next`] per input record:
//! an [`Item`] (a page to process, or a [`SkipEntry`] saying why a record or
//! file is not kept, with its file and place), a record that only counts
//! (requests, metadata), or the end. The stage (`ingest/mod.rs`) schedules
//! the units, batches their items, processes the pages in parallel and
//! writes the segments; it knows no input kind.
//!
//! A page's [`Content`] says what it holds: HTML (parsed by
//! [`crate::ingest::page::process`]), or text already (a WET conversion
//! record; tokenized by [`crate::ingest::page::text`], no links), or a
//! title and links without a body (a WAT metadata record, [`wat`];
//! resolved by [`crate::ingest::page::metadata`]).
//!
//! The kinds, each in its own module: [`warc`] (WARC, ARC, WET and WAT files: one
//! unit per file, resumed at a [`crate::ingest::warc::ResumePoint`]),
//! [`html_dir`] (directories of HTML files: units of consecutive files,
//! resumed at a file index) and [`jsonl`] (JSONL document sets, plain, gzip
//! or zstd: one unit per file, resumed at a line's uncompressed offset) and
//! [`parquet`] (Parquet document sets: one unit per file, read a row group
//! at a time, resumed at a row).

pub mod html_dir;
pub mod jsonl;
pub mod parquet;
pub mod warc;
pub mod wat;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::ingest::limits::{Permit, RecordGate, RecordLimits};
use crate::input::{SkipCounts, SkipEntry, SkipKind};
use crate::job::Settings;
use crate::resources::format_bytes;
use crate::url::{self, UrlVerdict};

pub use crate::ingest::page::Cuts;

/// One unit of an input kind: what one reader reads from start to end.
pub trait InputKind: Send + Sync {
    /// Where a reader of this unit stands between two records.
    type Resume: Serialize + DeserializeOwned + Send;
    /// The reader of this unit.
    type Reader<'a>: Reader<Resume = Self::Resume>
    where
        Self: 'a;

    /// Bytes of input this unit reads (for progress and the figures).
    fn bytes(&self) -> u64;

    /// Opens a reader at the start (`at` = `None`) or at a resume point an
    /// earlier reader of this unit gave.
    fn open<'a>(
        &'a self,
        at: Option<Self::Resume>,
        cx: &'a ReadContext<'a>,
    ) -> Result<Self::Reader<'a>>;
}

/// Reads the records of one unit in order.
pub trait Reader {
    /// The unit's resume point.
    type Resume;

    /// The next input record (`counts` takes what it counted); `Err` only for
    /// errors that stop the whole stage (I/O on the input itself).
    fn next(&mut self, counts: &mut Counts) -> Result<Next>;

    /// Where a new reader goes on after the records handed out so far.
    fn resume_point(&self) -> Self::Resume;

    /// Input bytes read so far (progress).
    fn bytes_read(&self) -> u64;

    /// `true` when nothing follows (known without reading further), so that
    /// no empty segment is written after the last record.
    fn at_end(&self) -> bool {
        false
    }
}

/// What a reader found next.
pub enum Next {
    /// A page to process, or a skip.
    Item(Item),
    /// A record that holds no document (a request, metadata, warcinfo): counted
    /// only.
    Counted,
    /// The unit is read.
    End,
}

/// What every unit of one ingest shares.
pub struct ReadContext<'a> {
    /// Largest archive record read.
    pub max_record_bytes: u64,
    /// The run's settings (budget, strictness).
    pub settings: &'a Settings,
    /// Per-record limits from the budget.
    pub limits: RecordLimits,
    /// Lets one big record at a time through.
    pub gate: Arc<RecordGate>,
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
    /// HTML (or text) bytes of the pages kept.
    pub html_bytes: u64,
    /// Pages kept that were text already (WET conversion records).
    #[serde(default)]
    pub text_pages: u64,
    /// Pages kept that were known by their metadata only (WAT records).
    #[serde(default)]
    pub meta_pages: u64,
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
    /// Adds `o` to these counts.
    pub fn add(&mut self, o: &Counts) {
        for (k, v) in &o.records {
            *self.records.entry(k.clone()).or_default() += v;
        }
        self.files += o.files;
        self.other_files += o.other_files;
        self.pages += o.pages;
        self.html_bytes += o.html_bytes;
        self.text_pages += o.text_pages;
        self.meta_pages += o.meta_pages;
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

/// One input record on its way to the page files.
pub enum Item {
    /// A page to process (in parallel with the others of its batch).
    Page(Box<PageItem>),
    /// A record or file not kept.
    Skip(SkipEntry),
}

impl Item {
    /// A skip of a record or file at `file`, `place`.
    pub fn skip(kind: SkipKind, file: &Path, place: &str, detail: String) -> Item {
        Item::Skip(SkipEntry::new(kind, file, place.to_string(), detail))
    }

    /// Bytes of the page's content held in memory.
    pub fn body_len(&self) -> usize {
        match self {
            Item::Page(p) => p.content.len(),
            Item::Skip(_) => 0,
        }
    }

    /// Does the item hold the gate (a big record in memory)?
    pub fn holds_permit(&self) -> bool {
        matches!(self, Item::Page(p) if p.permit.is_some())
    }
}

/// A page as read, before processing.
pub struct PageItem {
    /// The normalized URL.
    pub url: String,
    /// HTTP status, 0 for a file from a directory.
    pub status: u16,
    /// Capture date (WARC-Date), or empty.
    pub date: String,
    /// `Location` of a redirect, if any.
    pub location: Option<String>,
    /// What the page holds.
    pub content: Content,
    /// Where it came from, for reports.
    pub file: PathBuf,
    /// Where in the file (`offset N`).
    pub place: String,
    /// What was cut before it was processed (block, body).
    pub cuts: Cuts,
    /// Held while a big record is in memory.
    pub permit: Option<Permit>,
}

/// What a page holds.
pub enum Content {
    /// An HTML body, parsed by [`crate::ingest::page::process`].
    Html {
        /// The Content-Type (or a type guessed from the file name).
        content_type: String,
        /// The charset parameter of the HTTP Content-Type, if any.
        charset: Option<String>,
        /// The body.
        body: Vec<u8>,
    },
    /// Text without markup (a WET `conversion` record, a document of a
    /// JSONL set): tokenized as it is
    /// by [`crate::ingest::page::text`], never through the HTML extractor.
    Text {
        /// The media type kept in the repository (`text/plain`).
        content_type: String,
        /// The title, when the input gives one (else empty).
        title: String,
        /// The text, UTF-8 (invalid bytes are replaced when tokenized).
        text: Vec<u8>,
    },
    /// A page known by its metadata only (a WAT `metadata` record): title
    /// and links, no body; processed by [`crate::ingest::page::metadata`].
    Meta(Box<MetaContent>),
}

/// What a WAT record tells of a page (see [`wat`]).
pub struct MetaContent {
    /// The HTTP Content-Type of the response.
    pub content_type: String,
    /// The title.
    pub title: String,
    /// `<base href>`, if any.
    pub base: Option<String>,
    /// The links kept, in page order.
    pub links: Vec<crate::ingest::page::RawLink>,
    /// Hrefs dropped for their length.
    pub hrefs_dropped: u64,
}

impl Content {
    /// Bytes held.
    pub fn len(&self) -> usize {
        match self {
            Content::Html { body, .. } => body.len(),
            Content::Text { text, .. } => text.len(),
            Content::Meta(m) => {
                m.title.len()
                    + m.links
                        .iter()
                        .map(|l| l.href.len() + l.anchor.len())
                        .sum::<usize>()
            }
        }
    }

    /// Holds nothing?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Says what a block cut kept.
pub fn cut_detail(what: &str, len: u64, limits: &RecordLimits, s: &Settings) -> String {
    format!(
        "{what} of {len} bytes read only up to its first {} bytes: the per-record limit under --mem {}",
        limits.record_bytes,
        format_bytes(s.mem)
    )
}

/// Media types read as HTML.
pub fn is_html_type(media: &str) -> bool {
    let m = media.trim().to_ascii_lowercase();
    m.is_empty() || m == "text/html" || m == "application/xhtml+xml" || m == "text/xhtml"
}

/// `target` normalized, or the skip saying why there is none to keep (a
/// `what` record without a target, one that is not a web URL, or too long).
pub fn checked_url(
    path: &Path,
    target: Option<&str>,
    what: &str,
    place: &str,
    counts: &mut Counts,
) -> std::result::Result<String, Item> {
    let skip = |kind: SkipKind, detail: String| Item::skip(kind, path, place, detail);
    let Some(target) = target else {
        return Err(skip(
            SkipKind::NoTarget,
            format!("{what} record without WARC-Target-URI"),
        ));
    };
    match url::normalize_checked(target) {
        UrlVerdict::Kept(u) => Ok(u),
        UrlVerdict::TooLong(n) => Err(skip(
            SkipKind::UrlTooLong,
            format!(
                "its URL has {n} bytes, more than {} (starts {:?})",
                url::MAX_URL_BYTES,
                crate::input::shown(target.as_bytes())
            ),
        )),
        // wget and wpull store their logs as `resource` records under
        // `metadata://` or `urn:` URIs: not web pages, not damage.
        UrlVerdict::NotWeb => {
            counts.not_web += 1;
            Err(skip(
                SkipKind::NotWeb,
                format!(
                    "target {:?} is not an http(s) or file URL",
                    crate::input::shown(target.as_bytes())
                ),
            ))
        }
    }
}

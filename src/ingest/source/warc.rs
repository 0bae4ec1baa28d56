//! WARC and ARC files as an input kind: one unit per file (given on its own,
//! or found in a directory by its name, [`is_archive_name`]), read by
//! [`crate::ingest::warc::WarcReader`] and resumed at its
//! [`ResumePoint`]. A `response` record becomes an HTML page (or a redirect,
//! or a skip: error status, not HTML, no target, bad HTTP); a `conversion`
//! record (WET) a page that is text already; a `metadata` record of
//! `application/json` (WAT) a page known by its title and links
//! ([`super::wat`]); every other record only counts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Result;
use crate::ingest::source::{
    checked_url, cut_detail, is_html_type, Content, Counts, InputKind, Item, Next, PageItem,
    ReadContext, Reader,
};
use crate::ingest::warc::{
    self, ArchiveFormat, RecordType, ResumePoint, WarcEvent, WarcOptions, WarcPosition, WarcReader,
    WarcRecord,
};
use crate::input::SkipKind;
use crate::resources::format_bytes;

/// Name endings of the files a directory input reads as archives (compared
/// without case): WARC, ARC, WET and WAT (Common Crawl's `*.warc.wet.gz`
/// and `*.warc.wat.gz`).
pub const ARCHIVE_SUFFIXES: [&str; 8] = [
    ".warc", ".warc.gz", ".arc", ".arc.gz", ".wet", ".wet.gz", ".wat", ".wat.gz",
];

/// Is `p` a WET file (extracted text only, no links) by its name?
pub fn is_wet_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name.ends_with(".wet") || name.ends_with(".wet.gz")
}

/// Is `p` a WARC or ARC file by its name?
pub fn is_archive_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    ARCHIVE_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// One WARC or ARC file (plain or gzip).
pub struct WarcFile {
    path: PathBuf,
    bytes: u64,
}

impl WarcFile {
    /// The unit of the file at `path`.
    pub fn new(path: &Path) -> WarcFile {
        WarcFile {
            path: path.to_path_buf(),
            bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
        }
    }
}

impl InputKind for WarcFile {
    type Resume = ResumePoint;
    type Reader<'a> = WarcItems<'a>;

    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn open<'a>(
        &'a self,
        at: Option<ResumePoint>,
        cx: &'a ReadContext<'a>,
    ) -> Result<WarcItems<'a>> {
        let wopts = WarcOptions {
            max_record_bytes: cx.max_record_bytes,
            keep_block_bytes: cx.limits.record_bytes,
        };
        let mut reader = match at {
            Some(pos) => WarcReader::open_at(&self.path, &pos, &wopts)?,
            None => WarcReader::open(&self.path, &wopts)?,
        };
        reader.set_gate(cx.limits.gate_bytes, Arc::clone(&cx.gate));
        Ok(WarcItems {
            path: &self.path,
            reader,
            cx,
            last: None,
        })
    }
}

/// The items of one WARC file.
pub struct WarcItems<'a> {
    path: &'a Path,
    reader: WarcReader,
    cx: &'a ReadContext<'a>,
    /// Where the last record read starts.
    last: Option<WarcPosition>,
}

impl WarcItems<'_> {
    /// Where the record the last item came from starts (`export dataset`
    /// copies it whole from there).
    pub fn last_record_at(&self) -> Option<WarcPosition> {
        self.last
    }

    /// Whether the file is gzip, and whether it is WARC or ARC.
    pub fn archive(&self) -> (bool, ArchiveFormat) {
        (self.reader.is_gzip(), self.reader.format())
    }
}

impl Reader for WarcItems<'_> {
    type Resume = ResumePoint;

    fn next(&mut self, counts: &mut Counts) -> Result<Next> {
        Ok(match self.reader.next_event()? {
            None => Next::End,
            Some(WarcEvent::Skip { skip, .. }) => Next::Item(Item::Skip(skip.into())),
            Some(WarcEvent::Record(rec)) => {
                self.last = Some(rec.pos);
                match warc_item(self.path, rec, self.cx, counts) {
                    Some(item) => Next::Item(item),
                    None => Next::Counted,
                }
            }
        })
    }

    fn resume_point(&self) -> ResumePoint {
        self.reader.resume_point()
    }

    fn bytes_read(&self) -> u64 {
        self.reader.bytes_read()
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
fn response(rec: &WarcRecord, max: u64) -> Option<std::result::Result<Response, String>> {
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

/// A record's normalized `WARC-Target-URI`, or the skip saying why there is
/// none to keep.
fn target_url(
    path: &Path,
    rec: &WarcRecord,
    place: &str,
    counts: &mut Counts,
) -> std::result::Result<String, Item> {
    checked_url(path, rec.target_uri(), rec.kind.as_str(), place, counts)
}

/// A `conversion` record (Common Crawl's WET: the extracted text of a
/// page, `Content-Type: text/plain`): a page that is text already, with the
/// record's target URI and date, no links. A conversion of another media
/// type is a skip.
fn conversion_item(
    path: &Path,
    mut rec: WarcRecord,
    ctx: &ReadContext,
    counts: &mut Counts,
) -> Item {
    let place = rec.pos.to_string();
    let url = match target_url(path, &rec, &place, counts) {
        Ok(u) => u,
        Err(item) => return item,
    };
    let media = rec
        .content_type()
        .and_then(warc::media_type)
        .unwrap_or_default();
    if !media.is_empty() && !media.starts_with("text/") {
        counts.not_html += 1;
        return Item::skip(
            SkipKind::NotHtml,
            path,
            &place,
            format!("conversion record of media type {media:?}, not text"),
        );
    }
    let mut cuts = Vec::new();
    if rec.is_cut() {
        cuts.push((
            SkipKind::BlockCut,
            cut_detail("record block", rec.length, &ctx.limits, ctx.settings),
        ));
    }
    Item::Page(Box::new(PageItem {
        url,
        status: 0,
        date: rec.date().unwrap_or("").to_string(),
        location: None,
        content: Content::Text {
            content_type: "text/plain".into(),
            title: String::new(),
            text: std::mem::take(&mut rec.block),
        },
        file: path.to_path_buf(),
        place,
        cuts,
        permit: rec.permit.take(),
    }))
}

/// What a WARC record becomes: a page to parse, a skip, or only a count
/// (records that hold no document: requests, metadata, warcinfo, DNS).
fn warc_item(
    path: &Path,
    mut rec: WarcRecord,
    ctx: &ReadContext,
    counts: &mut Counts,
) -> Option<Item> {
    let limits = &ctx.limits;
    let place = rec.pos.to_string();
    let skip = |kind: SkipKind, detail: String| Some(Item::skip(kind, path, &place, detail));
    *counts
        .records
        .entry(rec.kind.as_str().to_string())
        .or_default() += 1;
    if rec.kind == RecordType::Conversion {
        return Some(conversion_item(path, rec, ctx, counts));
    }
    if rec.kind == RecordType::Metadata && super::wat::is_wat_record(&rec) {
        return super::wat::wat_item(path, rec, ctx, counts);
    }
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
    let url = match target_url(path, &rec, &place, counts) {
        Ok(u) => u,
        Err(item) => return Some(item),
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
    Some(Item::Page(Box::new(PageItem {
        url,
        status,
        date,
        location: if redirect { resp.location } else { None },
        content: Content::Html {
            content_type: resp.content_type,
            charset: resp.charset,
            body,
        },
        file: path.to_path_buf(),
        place,
        cuts,
        permit,
    })))
}

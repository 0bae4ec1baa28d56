//! JSONL document sets as an input kind (FineWeb, Dolma, RedPajama, the C4
//! family): one JSON object per line, plain, gzip or zstd (by content, not
//! by name), one unit per file, streamed line by line (never loaded whole)
//! and resumed at a line's uncompressed offset.
//!
//! Each object is a page that is text already ([`Content::Text`]): its text
//! from [`DocFields::text`], its URL from [`DocFields::url`] when the object
//! has one (normalized as every URL), otherwise `file://` + the file's
//! absolute path + `/` + the percent-encoded [`DocFields::id`] (or `line-N`
//! without an id). A field name may be a dotted path into nested objects
//! (`metadata.url`). A line that is not a JSON object, or has no string
//! text field, is a skip (`bad-line`) naming the file, the line and its
//! offset; a line longer than the per-record limit is a skip
//! (`line-too-long`); a compressed stream that breaks (truncated gzip or
//! zstd) is a skip (`damaged`) and ends the file, the lines before it kept.
//! A page's date is the object's `date`, `timestamp` or `added` string
//! (FineWeb, C4, Dolma), when it has one.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
use crate::ingest::source::{
    Content, Counts, InputKind, Item, Next, PageItem, ReadContext, Reader,
};
use crate::input::{open_maybe_gzip, SkipKind};
use crate::url::{self, UrlVerdict};

/// Name endings of the files read as JSONL (compared without case; in a
/// directory input, by name; given on their own, these names too).
pub const JSONL_SUFFIXES: [&str; 8] = [
    ".jsonl",
    ".jsonl.gz",
    ".jsonl.zst",
    ".ndjson",
    ".ndjson.gz",
    ".ndjson.zst",
    ".json.gz",
    ".json.zst",
];

/// Is `p` a JSONL file by its name?
pub fn is_jsonl_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    JSONL_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// The fields of a document set's records (the `--text-field`, `--id-field`
/// and `--url-field` flags). The defaults fit FineWeb and Dolma.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocFields {
    /// The text.
    pub text: String,
    /// A document id (for a URL when there is none).
    pub id: String,
    /// The URL.
    pub url: String,
}

impl Default for DocFields {
    fn default() -> DocFields {
        DocFields {
            text: "text".into(),
            id: "id".into(),
            url: "url".into(),
        }
    }
}

/// Where a reader of a JSONL file stands: the next line's number (from 1)
/// and its offset in the uncompressed stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinePosition {
    /// The next line's number, from 1.
    pub line: u64,
    /// Its offset in the uncompressed stream.
    pub offset: u64,
}

/// One JSONL file.
pub struct JsonlFile {
    path: PathBuf,
    bytes: u64,
    fields: DocFields,
    /// `file://` + the absolute path: the base of the URLs made from ids.
    base: Option<::url::Url>,
}

impl JsonlFile {
    /// The unit of the file at `path`, its records read by `fields`.
    pub fn new(path: &Path, fields: &DocFields) -> JsonlFile {
        JsonlFile {
            path: path.to_path_buf(),
            bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
            fields: fields.clone(),
            base: std::fs::canonicalize(path)
                .ok()
                .and_then(|abs| ::url::Url::from_file_path(abs).ok()),
        }
    }
}

impl InputKind for JsonlFile {
    type Resume = LinePosition;
    type Reader<'a> = JsonlItems<'a>;

    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn open<'a>(
        &'a self,
        at: Option<LinePosition>,
        cx: &'a ReadContext<'a>,
    ) -> Result<JsonlItems<'a>> {
        let count = Arc::new(AtomicU64::new(0));
        let mut stream = open_maybe_gzip(&self.path, Arc::clone(&count))?;
        let pos = at.unwrap_or(LinePosition { line: 1, offset: 0 });
        // Resuming: the uncompressed bytes before the position are read again
        // and dropped.
        let skipped = std::io::copy(&mut (&mut stream).take(pos.offset), &mut std::io::sink())
            .at(&self.path)?;
        if skipped != pos.offset {
            return Err(Error::corrupt(
                &self.path,
                "resume point",
                pos.offset,
                "the file is shorter than when the checkpoint was written",
            ));
        }
        Ok(JsonlItems {
            unit: self,
            stream,
            count,
            pos,
            line: Vec::new(),
            done: false,
            cx,
        })
    }
}

/// The items of one JSONL file.
pub struct JsonlItems<'a> {
    unit: &'a JsonlFile,
    stream: Box<dyn BufRead + Send>,
    count: Arc<AtomicU64>,
    pos: LinePosition,
    line: Vec<u8>,
    done: bool,
    cx: &'a ReadContext<'a>,
}

/// Reads one line into `buf` (without its line end), keeping at most `max`
/// bytes: (bytes consumed, whole line kept); `Ok(None)` at the end.
fn read_line(
    r: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<(u64, bool)>> {
    buf.clear();
    let mut consumed = 0u64;
    let mut whole = true;
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return Ok((consumed > 0).then_some((consumed, whole)));
        }
        let (take, end) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let data = &chunk[..if end { take - 1 } else { take }];
        let room = max.saturating_sub(buf.len());
        if data.len() > room {
            whole = false;
        }
        buf.extend_from_slice(&data[..data.len().min(room)]);
        r.consume(take);
        consumed += take as u64;
        if end {
            return Ok(Some((consumed, whole)));
        }
    }
}

/// The value at a dotted path (`metadata.url`) of a JSON object.
fn field<'v>(v: &'v serde_json::Value, path: &str) -> Option<&'v serde_json::Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

impl Reader for JsonlItems<'_> {
    type Resume = LinePosition;

    fn next(&mut self, _counts: &mut Counts) -> Result<Next> {
        if self.done {
            return Ok(Next::End);
        }
        let path = &self.unit.path;
        let at = self.pos;
        let place = format!("line {} (offset {})", at.line, at.offset);
        let skip =
            |kind: SkipKind, detail: String| Next::Item(Item::skip(kind, path, &place, detail));
        let max = self.cx.limits.record_bytes as usize;
        let (consumed, whole) = match read_line(&mut *self.stream, &mut self.line, max) {
            Ok(Some(r)) => r,
            Ok(None) => {
                self.done = true;
                return Ok(Next::End);
            }
            Err(e) => {
                // A broken compressed stream: what follows cannot be found.
                self.done = true;
                return Ok(skip(
                    SkipKind::Damaged,
                    format!("cannot read on ({e}); the rest of the file is lost"),
                ));
            }
        };
        self.pos = LinePosition {
            line: at.line + 1,
            offset: at.offset + consumed,
        };
        if !whole {
            return Ok(skip(
                SkipKind::LineTooLong,
                format!(
                    "a line of {consumed} bytes, longer than the per-record limit of {max} bytes under this --mem"
                ),
            ));
        }
        let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Next::Counted);
        }
        let doc: serde_json::Value = match serde_json::from_slice(line) {
            Ok(v @ serde_json::Value::Object(_)) => v,
            Ok(_) => return Ok(skip(SkipKind::BadLine, "not a JSON object".into())),
            Err(e) => return Ok(skip(SkipKind::BadLine, format!("bad JSON: {e}"))),
        };
        let fields = &self.unit.fields;
        let Some(text) = field(&doc, &fields.text).and_then(|t| t.as_str()) else {
            return Ok(skip(
                SkipKind::BadLine,
                format!("no string field {:?} (--text-field)", fields.text),
            ));
        };
        let id = match field(&doc, &fields.id) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(v @ serde_json::Value::Number(_)) => Some(v.to_string()),
            _ => None,
        };
        let date = ["date", "timestamp", "added"]
            .iter()
            .find_map(|k| doc.get(*k).and_then(|d| d.as_str()))
            .unwrap_or("");
        Ok(document_page(
            &self.unit.base,
            DocRecord {
                path,
                place,
                url: field(&doc, &fields.url).and_then(|u| u.as_str()),
                id: id.unwrap_or_else(|| format!("line-{}", at.line)),
                date,
                text: text.as_bytes().to_vec(),
            },
        ))
    }

    fn resume_point(&self) -> LinePosition {
        self.pos
    }

    fn bytes_read(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    fn at_end(&self) -> bool {
        self.done
    }
}

impl JsonlItems<'_> {
    /// The bytes of the line read last, without its `\n` (a `\r` before
    /// it kept): a record as it is in the file.
    pub fn last_line(&self) -> &[u8] {
        &self.line
    }
}

/// One record of a document set, as read.
pub(super) struct DocRecord<'r> {
    /// The set's file.
    pub path: &'r Path,
    /// Where in it.
    pub place: String,
    /// The URL field, if the record has one.
    pub url: Option<&'r str>,
    /// The id (or `line-N`, `row-N` without one): the URL's last segment
    /// when there is no URL.
    pub id: String,
    /// The date, or empty.
    pub date: &'r str,
    /// The text.
    pub text: Vec<u8>,
}

/// A document set's record as a page that is text already: its URL
/// normalized (a skip when it is too long or not a web URL), or made of
/// `base` and its id.
pub(super) fn document_page(base: &Option<::url::Url>, r: DocRecord<'_>) -> Next {
    let skip =
        |kind: SkipKind, detail: String| Next::Item(Item::skip(kind, r.path, &r.place, detail));
    let url = match r.url {
        Some(u) => match url::normalize_checked(u) {
            UrlVerdict::Kept(u) => u,
            UrlVerdict::TooLong(n) => {
                return skip(
                    SkipKind::UrlTooLong,
                    format!("its URL has {n} bytes, more than {}", url::MAX_URL_BYTES),
                )
            }
            UrlVerdict::NotWeb => {
                return skip(
                    SkipKind::NotWeb,
                    format!(
                        "URL {:?} is not an http(s) or file URL",
                        crate::input::shown(u.as_bytes())
                    ),
                )
            }
        },
        None => match document_url(base.as_ref(), &r.id) {
            Some(u) => u,
            None => {
                return skip(
                    SkipKind::NotWeb,
                    format!("no URL can be made for id {:?}", r.id),
                )
            }
        },
    };
    Next::Item(Item::Page(Box::new(PageItem {
        url,
        status: 0,
        date: r.date.to_string(),
        location: None,
        content: Content::Text {
            content_type: "text/plain".into(),
            title: String::new(),
            text: r.text,
        },
        file: r.path.to_path_buf(),
        place: r.place,
        cuts: Vec::new(),
        permit: None,
    })))
}

/// The URL of a document without one: `file://` + the set's absolute path
/// + `/` + the id, percent-encoded.
fn document_url(base: Option<&::url::Url>, id: &str) -> Option<String> {
    let mut u = base?.clone();
    u.path_segments_mut().ok()?.push(id);
    match url::normalize_checked(u.as_str()) {
        UrlVerdict::Kept(u) => Some(u),
        _ => None,
    }
}

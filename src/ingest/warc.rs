//! Reading WARC files (and old ARC files) as found in the wild.
//!
//! [`WarcReader`] streams the records of one file and turns every problem it
//! meets into a [`WarcEvent::Skip`] naming the file, the byte position and the
//! reason, then carries on with the next readable record. It never panics on bad
//! input and never drops a valid record because of damage elsewhere in the file.
//! [`parse_http_response`] takes a `response` record's block apart (status,
//! headers, body with chunked transfer coding and gzip/deflate content coding
//! undone).
//!
//! # Inputs
//!
//! The compression is detected from the first bytes, never from the name:
//!
//! - **plain**: `WARC/1.0` (or 1.1, 0.17, 0.18) records one after another;
//! - **gzip, one member per record** (the usual `.warc.gz`, Common Crawl style);
//! - **gzip, one member for the whole file** (or a few members holding many
//!   records each; members are read one after another, a record may even span
//!   members, as in BGZF).
//!
//! A WARC record is a version line, header fields (`Name: value`, names compared
//! without case, continuation lines starting with a space or tab appended to the
//! previous value), an empty line, a block of exactly `Content-Length` bytes,
//! then `CRLF CRLF`. Line ends may be `CRLF`, bare `LF` or even `CR CR LF`; any
//! run of CR/LF bytes between records is accepted.
//!
//! ARC files (the Internet Archive's format before WARC, plain or gzip) are read
//! too: each ARC record is a header line `URL IP-address date content-type
//! length` (version 1; version 2's ten fields are understood as well) followed by
//! `length` bytes. They come out as WARC-like records with synthesized WARC
//! headers: the `filedesc://` version block as a `warcinfo` record, an HTTP
//! capture as a `response`, anything else (DNS lookups, raw files) as a
//! `resource` with the ARC content type. An ARC file is recognised by its first
//! line.
//!
//! # Positions
//!
//! A [`WarcPosition`] is `(offset, skip)`: `offset` is a byte offset in the
//! file; for a gzip file it is the start of a gzip member, and `skip` counts the
//! uncompressed bytes of that member before the position. In a plain file and at
//! the start of a member `skip` is 0, so a record of a per-record gzip file is at
//! `(compressed offset of its member, 0)`, and a record inside a whole-file gzip
//! at `(0, uncompressed offset)`. Every record carries its position, every skip
//! the position of the damage, and [`WarcReader::resume_point`] gives the
//! position after the last event: [`WarcReader::open_at`] on it continues with
//! exactly the events that would have followed (re-decompressing `skip` bytes
//! when that is not 0). Positions print as `offset N`, or `offset N (gzip
//! member) + S uncompressed bytes`.
//!
//! # Damage and resynchronization
//!
//! | what                                   | what happens |
//! |----------------------------------------|--------------|
//! | bytes that are not a record            | one skip; reading goes on at the next WARC version line (`WARC/1.0` and its line end; found anywhere, as junk need not end with a line end), in an ARC file also at the next line shaped like an ARC header, or at the start of the next gzip member |
//! | bad version line, no valid `Content-Length`, header over 1 MiB | the record is skipped; resync as above from after the bad part |
//! | block shorter than `Content-Length` at the end of the file | the record is skipped; the reader goes back to the start of its block and looks for a record start inside it (so a wrong, huge `Content-Length` in a plain file loses one record, not the rest of the file) |
//! | a gzip member ends inside a record and the next member starts a record | the record is skipped, reading goes on with the next member |
//! | block larger than [`WarcOptions::max_record_bytes`] | its bytes are read and dropped without being buffered; one skip |
//! | record not followed by `CRLF CRLF` | the record is kept (as other readers do); what follows is skipped as junk up to the next record |
//! | bytes between gzip members that are not a member, bad gzip header, corrupt deflate data, truncated member, CRC mismatch | one skip naming the member; reading goes on at the next `1f 8b 08` magic after the member's start, or ends. Records already read from the member are kept; the record being read is lost |
//!
//! Bytes are handed out as soon as they are inflated, before the member's CRC
//! is checked at its end: a record read from a member that then fails its CRC
//! is kept, and the skip that follows names the member. A gzip file that starts
//! with junk is still taken for gzip when its first 64 KiB hold a gzip magic and
//! no WARC version line. `next_event` returns `Err` only for I/O errors on the
//! file itself.
//!
//! # Memory
//!
//! Two 256 KiB buffers, a record's header (at most 1 MiB) and its block (at
//! most `max_record_bytes`, 64 MiB by default). A decoded HTTP body is bounded
//! by the `max_bytes` given to [`parse_http_response`].

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flate2::{Crc, Decompress, FlushDecompress, Status};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::input::Skip;

/// Size of the buffer of compressed (or plain) file bytes.
const INPUT_BYTES: usize = 256 * 1024;
/// Size of the window of decompressed bytes.
const WINDOW_BYTES: usize = 256 * 1024;
/// The window is compacted when less than this is free at its end.
const MIN_ROOM: usize = 64 * 1024;
/// Longest accepted WARC header (version line and fields).
const MAX_HEADER_BYTES: usize = 1 << 20;
/// Longest accepted version line.
const MAX_VERSION_LINE: usize = 64;
/// Longest ARC header line.
const MAX_ARC_LINE: usize = 8 * 1024;
/// Longest gzip header file name or comment.
const MAX_GZIP_NAME: usize = 64 * 1024;
/// The first bytes of a gzip member: ID1, ID2, CM = deflate.
const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// How a [`WarcReader`] treats its input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarcOptions {
    /// Records whose block is larger than this are skipped without being
    /// buffered (default 64 MiB).
    pub max_record_bytes: u64,
}

impl Default for WarcOptions {
    fn default() -> Self {
        WarcOptions {
            max_record_bytes: 64 << 20,
        }
    }
}

/// A place in a WARC file: a byte offset, and for gzip files the uncompressed
/// bytes to skip in the member starting there (see the module doc).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct WarcPosition {
    /// Byte offset in the file (for gzip files, where a gzip member starts).
    pub offset: u64,
    /// Uncompressed bytes of that member before the position (0 for plain files
    /// and at member starts).
    pub skip: u64,
}

/// Where a new reader continues: the position after an event.
pub type ResumePoint = WarcPosition;

impl std::fmt::Display for WarcPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.skip == 0 {
            write!(f, "offset {}", self.offset)
        } else {
            write!(
                f,
                "offset {} (gzip member) + {} uncompressed bytes",
                self.offset, self.skip
            )
        }
    }
}

/// The `WARC-Type` of a record.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RecordType {
    /// Information about the file or the crawl (also an ARC file's version block).
    Warcinfo,
    /// A full response from a server (usually an HTTP response).
    Response,
    /// A resource without protocol envelope (a file, or a DNS answer).
    Resource,
    /// The request sent.
    Request,
    /// Metadata about another record.
    Metadata,
    /// A revisit: the content was seen before (see `WARC-Refers-To-*`).
    Revisit,
    /// An alternative version of another record's content.
    Conversion,
    /// A segment of a record split across files.
    Continuation,
    /// Any other value (kept as written), or an empty string when missing.
    Other(String),
}

impl RecordType {
    /// The type named by a `WARC-Type` value (compared without case).
    pub fn from_name(name: &str) -> RecordType {
        let name = name.trim();
        const KNOWN: [(&str, RecordType); 8] = [
            ("warcinfo", RecordType::Warcinfo),
            ("response", RecordType::Response),
            ("resource", RecordType::Resource),
            ("request", RecordType::Request),
            ("metadata", RecordType::Metadata),
            ("revisit", RecordType::Revisit),
            ("conversion", RecordType::Conversion),
            ("continuation", RecordType::Continuation),
        ];
        for (known, kind) in KNOWN {
            if name.eq_ignore_ascii_case(known) {
                return kind;
            }
        }
        RecordType::Other(name.to_string())
    }

    /// The lowercase `WARC-Type` value.
    pub fn as_str(&self) -> &str {
        match self {
            RecordType::Warcinfo => "warcinfo",
            RecordType::Response => "response",
            RecordType::Resource => "resource",
            RecordType::Request => "request",
            RecordType::Metadata => "metadata",
            RecordType::Revisit => "revisit",
            RecordType::Conversion => "conversion",
            RecordType::Continuation => "continuation",
            RecordType::Other(s) => s,
        }
    }
}

/// One record of a WARC (or ARC) file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarcRecord {
    /// Where the record starts (see [`WarcPosition`]).
    pub pos: WarcPosition,
    /// Its `WARC-Type`.
    pub kind: RecordType,
    /// The version line, e.g. `WARC/1.0`; `ARC/1` or `ARC/2` for ARC records.
    pub version: String,
    /// Header fields in file order, names as written (look them up with
    /// [`WarcRecord::header`]). ARC records get synthesized WARC fields.
    pub headers: Vec<(String, String)>,
    /// The block: exactly `Content-Length` bytes.
    pub block: Vec<u8>,
}

impl WarcRecord {
    /// The value of the first header field called `name` (any case), trimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `WARC-Target-URI`, without the `<>` some writers put around it.
    pub fn target_uri(&self) -> Option<&str> {
        self.header("WARC-Target-URI").map(strip_angle_brackets)
    }

    /// `WARC-Date` (ISO 8601, e.g. `2014-01-03T03:03:21Z`).
    pub fn date(&self) -> Option<&str> {
        self.header("WARC-Date")
    }

    /// `WARC-Record-ID` (e.g. `<urn:uuid:...>`).
    pub fn record_id(&self) -> Option<&str> {
        self.header("WARC-Record-ID")
    }

    /// `Content-Type` of the block (e.g. `application/http; msgtype=response`).
    pub fn content_type(&self) -> Option<&str> {
        self.header("Content-Type")
    }

    /// `WARC-Refers-To-Target-URI` (revisit records), without `<>`.
    pub fn refers_to_target_uri(&self) -> Option<&str> {
        self.header("WARC-Refers-To-Target-URI")
            .map(strip_angle_brackets)
    }

    /// The document this record holds, as an HTTP response:
    /// - a `response` record whose block is an HTTP response: the block parsed
    ///   by [`parse_http_response`] (errors are the parser's);
    /// - a `resource` record: status 200, the record's `Content-Type` as the
    ///   only header, the block as the body;
    /// - anything else (requests, DNS responses, metadata...): `None`.
    pub fn http_response(
        &self,
        max_bytes: u64,
    ) -> Option<std::result::Result<HttpResponse<'_>, String>> {
        match self.kind {
            RecordType::Response => {
                let start = self
                    .block
                    .iter()
                    .position(|&b| b != b'\r' && b != b'\n')
                    .unwrap_or(self.block.len());
                if starts_with_http(&self.block[start..]) {
                    Some(parse_http_response(&self.block, max_bytes))
                } else {
                    None
                }
            }
            RecordType::Resource => Some(Ok(HttpResponse::from_resource(
                self.content_type(),
                &self.block,
            ))),
            _ => None,
        }
    }
}

fn strip_angle_brackets(s: &str) -> &str {
    let s = s.trim();
    s.strip_prefix('<')
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(s)
        .trim()
}

/// What [`WarcReader::next_event`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WarcEvent {
    /// A complete record.
    Record(WarcRecord),
    /// Something unreadable that was skipped: `at` is where the damage (or the
    /// lost record) starts, `skip` names the file, the same position as text,
    /// and the reason (which tells where reading resumed).
    Skip {
        /// Where the skipped part starts.
        at: WarcPosition,
        /// File, location and reason, for the user.
        skip: Skip,
    },
}

/// Is this a WARC or an ARC file?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// WARC (any version).
    Warc,
    /// ARC, version 1 or 2.
    Arc {
        /// The version from the `filedesc://` block (1 when absent).
        version: u8,
    },
}

/// A streaming reader of one WARC (or ARC) file, plain or gzip.
///
/// ```no_run
/// use webmill::ingest::warc::{WarcEvent, WarcOptions, WarcReader};
/// # fn main() -> webmill::Result<()> {
/// let mut reader = WarcReader::open("crawl.warc.gz".as_ref(), &WarcOptions::default())?;
/// while let Some(event) = reader.next_event()? {
///     match event {
///         WarcEvent::Record(rec) => println!("{} {:?}", rec.pos, rec.target_uri()),
///         WarcEvent::Skip { skip, .. } => eprintln!("{skip}"),
///     }
/// }
/// # Ok(()) }
/// ```
pub struct WarcReader {
    path: PathBuf,
    opts: WarcOptions,
    stream: Stream,
    format: ArchiveFormat,
    /// A problem met after the last event (while looking past it), reported next.
    pending: Option<Problem>,
    resume: WarcPosition,
}

impl WarcReader {
    /// Opens `path` at its start.
    pub fn open(path: &Path, opts: &WarcOptions) -> Result<WarcReader> {
        WarcReader::open_at(path, &WarcPosition::default(), opts)
    }

    /// Opens `path` at `pos`, a [`WarcReader::resume_point`] of an earlier reader
    /// of the same file: the events that follow are those the earlier reader
    /// gave after that point.
    pub fn open_at(path: &Path, pos: &ResumePoint, opts: &WarcOptions) -> Result<WarcReader> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let counter = Arc::new(AtomicU64::new(0));
        let mut input = Input::new(file, counter);
        let gzip = detect_gzip(&mut input).map_err(|e| Error::io(path, e))?;
        let mut stream = Stream::new(input, gzip);
        let format = match sniff_format(&mut stream) {
            Ok(f) => f,
            Err(Stop::Io(e)) => return Err(Error::io(path, e)),
            Err(Stop::Problem(_)) => ArchiveFormat::Warc,
        };
        let bad_pos = |detail: String| Error::Input {
            path: path.to_path_buf(),
            location: pos.to_string(),
            detail,
        };
        if !gzip && pos.skip != 0 {
            return Err(bad_pos(
                "resume point has uncompressed bytes to skip, but the file is not gzip (has the file changed?)".into(),
            ));
        }
        match stream.seek_to(*pos) {
            Ok(true) => {}
            Ok(false) => {
                return Err(bad_pos(
                    "resume point lies beyond the data (has the file changed?)".into(),
                ))
            }
            Err(Stop::Io(e)) => return Err(Error::io(path, e)),
            Err(Stop::Problem(p)) => {
                return Err(bad_pos(format!(
                    "cannot resume here: {} (has the file changed?)",
                    p.reason
                )))
            }
        }
        Ok(WarcReader {
            path: path.to_path_buf(),
            opts: opts.clone(),
            stream,
            format,
            pending: None,
            resume: *pos,
        })
    }

    /// The next record or skip; `None` at the end of the file. `Err` only for an
    /// I/O error on the file.
    pub fn next_event(&mut self) -> Result<Option<WarcEvent>> {
        match self.next_inner() {
            Ok(ev) => Ok(ev),
            Err(e) => Err(Error::io(&self.path, e)),
        }
    }

    /// The position after the last event returned (the file's start before the
    /// first): give it to [`WarcReader::open_at`] to continue from there.
    pub fn resume_point(&self) -> ResumePoint {
        self.resume
    }

    /// How far into the file (in file bytes, compressed for gzip) the reader has
    /// read so far, for progress display.
    pub fn bytes_read(&self) -> u64 {
        self.stream.input.counter.load(Ordering::Relaxed)
    }

    /// The shared counter behind [`WarcReader::bytes_read`], for a progress
    /// thread.
    pub fn progress_counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.stream.input.counter)
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.stream.gzip
    }

    /// WARC or ARC.
    pub fn format(&self) -> ArchiveFormat {
        self.format
    }

    fn next_inner(&mut self) -> io::Result<Option<WarcEvent>> {
        let event = match self.pending.take() {
            Some(p) => Some(self.skip_event(p.at, p.reason)),
            None => self.read_event()?,
        };
        // Where a new reader would resume if looking past the event meets
        // damage: just before it, so that the damage is reported again.
        let mut before = None;
        if matches!(event, Some(WarcEvent::Record(_))) {
            // Eat the CRLF CRLF after the block (within its gzip member).
            loop {
                let here = self.stream.position();
                match self.stream.ensure(1) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(Stop::Io(e)) => return Err(e),
                    Err(Stop::Problem(p)) => {
                        self.pending = Some(p);
                        before = Some(here);
                        break;
                    }
                }
                match self.stream.window().first() {
                    Some(b'\r' | b'\n') => self.stream.consume(1),
                    _ => break,
                }
            }
        }
        // Look one step ahead so that the resume point after the last record of
        // a gzip member is the next member's start, not the end of this one.
        if self.pending.is_none() && self.stream.window().is_empty() {
            let here = self.stream.position();
            match self.stream.fill_unit() {
                Ok(_) => {}
                Err(Stop::Io(e)) => return Err(e),
                Err(Stop::Problem(p)) => {
                    self.pending = Some(p);
                    before = Some(here);
                }
            }
        }
        self.resume = before.unwrap_or_else(|| self.stream.position());
        Ok(event)
    }

    fn skip_event(&self, at: WarcPosition, reason: String) -> WarcEvent {
        WarcEvent::Skip {
            at,
            skip: Skip {
                path: self.path.clone(),
                location: at.to_string(),
                reason,
            },
        }
    }

    /// Skips blank lines, then reads one record (or skips one damaged part).
    fn read_event(&mut self) -> io::Result<Option<WarcEvent>> {
        match self.skip_blank() {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(Stop::Io(e)) => return Err(e),
            Err(Stop::Problem(p)) => return Ok(Some(self.skip_event(p.at, p.reason))),
        }
        let at = self.stream.position();
        let start = match self.record_start(true) {
            Ok(s) => s,
            Err(Stop::Io(e)) => return Err(e),
            Err(Stop::Problem(p)) => return Ok(Some(self.skip_event(p.at, p.reason))),
        };
        let result = match start {
            Some(RecordStart::Warc) => self.read_warc(at),
            Some(RecordStart::Arc) => self.read_arc(at),
            None => return self.skip_junk(at).map(Some),
        };
        match result {
            Ok(ev) => Ok(Some(ev)),
            Err(Stop::Io(e)) => Err(e),
            Err(Stop::Problem(p)) => Ok(Some(
                self.skip_event(at, format!("record lost: {}", p.reason)),
            )),
        }
    }

    /// Consumes CR/LF bytes, crossing gzip members; false at the end of the file.
    fn skip_blank(&mut self) -> std::result::Result<bool, Stop> {
        loop {
            if !self.more_any()? {
                return Ok(false);
            }
            let w = self.stream.window();
            let n = w.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
            if n < w.len() {
                self.stream.consume(n);
                return Ok(true);
            }
            self.stream.consume(n);
        }
    }

    /// Makes the window non-empty, crossing gzip members; false at the end.
    fn more_any(&mut self) -> std::result::Result<bool, Stop> {
        loop {
            if !self.stream.window().is_empty() {
                return Ok(true);
            }
            if self.stream.fill_unit()? {
                continue;
            }
            if !self.stream.next_member()? {
                return Ok(false);
            }
        }
    }

    /// Makes the window non-empty for a record being read. A gzip member that
    /// ends inside a record and is followed by a member starting a new record
    /// ends the record ([`More::NextRecord`]).
    fn more_in_record(&mut self) -> std::result::Result<More, Stop> {
        loop {
            if !self.stream.window().is_empty() {
                return Ok(More::Data);
            }
            if self.stream.fill_unit()? {
                continue;
            }
            if !self.stream.next_member()? {
                return Ok(More::Eof);
            }
            if self.record_start(true)?.is_some() {
                return Ok(More::NextRecord);
            }
        }
    }

    /// Does a record start at the window's start? Looks ahead within the unit.
    /// ARC header lines count only at a line start.
    fn record_start(&mut self, line_start: bool) -> std::result::Result<Option<RecordStart>, Stop> {
        self.stream.ensure(MAX_VERSION_LINE + 2)?;
        if is_version_line(self.stream.window()) {
            return Ok(Some(RecordStart::Warc));
        }
        if let (ArchiveFormat::Arc { .. }, true) = (self.format, line_start) {
            self.stream.ensure(MAX_ARC_LINE)?;
            let w = self.stream.window();
            if let Some(end) = w.iter().position(|&b| b == b'\n') {
                if looks_like_arc_header(&w[..end]) {
                    return Ok(Some(RecordStart::Arc));
                }
            }
        }
        Ok(None)
    }

    /// Reads a line (without its line end and trailing CRs) into `out`.
    fn read_line(&mut self, out: &mut Vec<u8>, max: usize) -> std::result::Result<Line, Stop> {
        out.clear();
        loop {
            match self.more_in_record()? {
                More::Data => {}
                end => return Ok(Line::End(end)),
            }
            let w = self.stream.window();
            match w.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    if out.len() + i > max {
                        return Ok(Line::TooLong);
                    }
                    out.extend_from_slice(&w[..i]);
                    self.stream.consume(i + 1);
                    while out.last() == Some(&b'\r') {
                        out.pop();
                    }
                    return Ok(Line::Complete);
                }
                None => {
                    if out.len() + w.len() > max {
                        return Ok(Line::TooLong);
                    }
                    out.extend_from_slice(w);
                    let n = w.len();
                    self.stream.consume(n);
                }
            }
        }
    }

    /// Reads `len` bytes of a block into `into`, or drops them when `into` is
    /// `None`.
    fn read_block(
        &mut self,
        mut into: Option<&mut Vec<u8>>,
        len: u64,
    ) -> std::result::Result<Block, Stop> {
        let mut left = len;
        while left > 0 {
            match self.more_in_record()? {
                More::Data => {}
                end => return Ok(Block::Short(end, len - left)),
            }
            let w = self.stream.window();
            let n = (w.len() as u64).min(left) as usize;
            if let Some(v) = into.as_deref_mut() {
                v.extend_from_slice(&w[..n]);
            }
            self.stream.consume(n);
            left -= n as u64;
        }
        Ok(Block::Complete)
    }

    /// Scans for the next record start: a WARC version line anywhere (junk
    /// need not end with a line end), or in an ARC file an ARC header line at a
    /// line start. `line_start` says whether the current position starts a
    /// line. False at the end of the file.
    fn scan_for_record(&mut self, line_start: bool) -> std::result::Result<bool, Stop> {
        let arc = matches!(self.format, ArchiveFormat::Arc { .. });
        let mut at_line_start = line_start;
        loop {
            if self.stream.window().is_empty() {
                if self.stream.fill_unit()? {
                    continue;
                }
                if !self.stream.next_member()? {
                    return Ok(false);
                }
                at_line_start = true;
                continue;
            }
            if self.record_start(at_line_start)?.is_some() {
                return Ok(true);
            }
            // On to the next candidate: a 'W', or in an ARC file a line start.
            let w = self.stream.window();
            let next = w
                .iter()
                .enumerate()
                .position(|(i, &b)| (arc && b == b'\n') || (i > 0 && b == b'W'));
            match next {
                Some(i) if w[i] == b'\n' => {
                    self.stream.consume(i + 1);
                    at_line_start = true;
                }
                Some(i) => {
                    at_line_start = w[i - 1] == b'\n';
                    self.stream.consume(i);
                }
                None => {
                    at_line_start = w.last() == Some(&b'\n');
                    let n = w.len();
                    self.stream.consume(n);
                }
            }
        }
    }

    /// Text telling where a resync ended, for skip reasons.
    fn resync_note(&mut self, scan: std::result::Result<bool, Stop>) -> io::Result<String> {
        match scan {
            Ok(true) => Ok(format!("; resumed at {}", self.stream.position())),
            Ok(false) => Ok("; nothing readable follows".to_string()),
            Err(Stop::Io(e)) => Err(e),
            Err(Stop::Problem(p)) => Ok(format!("; then: {}", p.reason)),
        }
    }

    /// Skips bytes that do not start a record, up to the next record start.
    fn skip_junk(&mut self, at: WarcPosition) -> io::Result<WarcEvent> {
        let scan = self.scan_for_record(true);
        let to = self.stream.position();
        let what = match span(self.stream.gzip, at, to) {
            Some(n) if scan.as_ref().is_ok_and(|&found| found) => {
                format!("{n} bytes that are not a WARC record")
            }
            _ => "data that is not a WARC record".to_string(),
        };
        let note = self.resync_note(scan)?;
        Ok(self.skip_event(
            at,
            format!("{what} (junk, or a wrong Content-Length before it){note}"),
        ))
    }

    /// A record with a bad header: skip it and resync from where the reader is.
    fn bad_record(
        &mut self,
        at: WarcPosition,
        reason: String,
        line_start: bool,
    ) -> std::result::Result<WarcEvent, Stop> {
        let scan = self.scan_for_record(line_start);
        let note = self.resync_note(scan)?;
        Ok(self.skip_event(at, format!("record skipped: {reason}{note}")))
    }

    /// A record cut short by the end of the file or of its gzip member.
    fn cut_short(&mut self, at: WarcPosition, end: More, part: &str) -> WarcEvent {
        let reason = match end {
            More::NextRecord => format!(
                "record cut short in its {part}: its gzip member ends and the next one, at {}, starts a new record",
                self.stream.position()
            ),
            _ => format!("record cut short in its {part}: the file ends"),
        };
        self.skip_event(at, reason)
    }

    fn read_warc(&mut self, at: WarcPosition) -> std::result::Result<WarcEvent, Stop> {
        let mut line = Vec::new();
        match self.read_line(&mut line, MAX_VERSION_LINE)? {
            Line::Complete => {}
            Line::TooLong => return self.bad_record(at, "version line is too long".into(), false),
            Line::End(end) => return Ok(self.cut_short(at, end, "version line")),
        }
        let version = String::from_utf8_lossy(&line).trim().to_string();
        if !valid_version(&version) {
            return self.bad_record(at, format!("bad version line {version:?}"), true);
        }
        let mut headers: Vec<(String, String)> = Vec::new();
        let mut budget = MAX_HEADER_BYTES;
        loop {
            match self.read_line(&mut line, budget)? {
                Line::Complete => {}
                Line::TooLong => {
                    return self.bad_record(
                        at,
                        format!("header is longer than {MAX_HEADER_BYTES} bytes"),
                        false,
                    )
                }
                Line::End(end) => return Ok(self.cut_short(at, end, "header")),
            }
            budget = budget.saturating_sub(line.len() + 1);
            if line.is_empty() {
                break;
            }
            if line[0] == b' ' || line[0] == b'\t' {
                if let Some((_, value)) = headers.last_mut() {
                    let more = String::from_utf8_lossy(&line);
                    value.push(' ');
                    value.push_str(more.trim());
                }
                continue;
            }
            // A line without a colon is not a field; it is ignored.
            if let Some(colon) = line.iter().position(|&b| b == b':') {
                let name = String::from_utf8_lossy(&line[..colon]).trim().to_string();
                let value = String::from_utf8_lossy(&line[colon + 1..])
                    .trim()
                    .to_string();
                headers.push((name, value));
            }
        }
        let length = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("Content-Length"))
            .map(|(_, v)| v.clone());
        let length = match length.as_deref().map(parse_decimal) {
            Some(Some(n)) => n,
            Some(None) => {
                let v = length.unwrap_or_default();
                return self.bad_record(at, format!("invalid Content-Length {v:?}"), true);
            }
            None => return self.bad_record(at, "no Content-Length field".into(), true),
        };
        let block = match self.read_record_block(at, length)? {
            Ok(block) => block,
            Err(skip) => return Ok(skip),
        };
        let kind = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("WARC-Type"))
            .map(|(_, v)| RecordType::from_name(v))
            .unwrap_or(RecordType::Other(String::new()));
        Ok(WarcEvent::Record(WarcRecord {
            pos: at,
            kind,
            version,
            headers,
            block,
        }))
    }

    /// Reads the block of a record starting at `at`; a skip event when it cannot.
    fn read_record_block(
        &mut self,
        at: WarcPosition,
        length: u64,
    ) -> std::result::Result<std::result::Result<Vec<u8>, WarcEvent>, Stop> {
        let cap = self.opts.max_record_bytes;
        let oversize = length > cap;
        let block_start = self.stream.position();
        let mut block = Vec::new();
        let outcome = if oversize {
            self.read_block(None, length)?
        } else {
            // At most max_record_bytes; untouched pages cost nothing.
            let _ = block.try_reserve_exact(usize::try_from(length).unwrap_or(usize::MAX));
            self.read_block(Some(&mut block), length)?
        };
        match outcome {
            Block::Complete if oversize => Ok(Err(self.skip_event(
                at,
                format!(
                    "record skipped: its block of {length} bytes is larger than max_record_bytes ({cap})"
                ),
            ))),
            Block::Complete => Ok(Ok(block)),
            Block::Short(More::NextRecord, got) => Ok(Err(self.skip_event(
                at,
                format!(
                    "record cut short: Content-Length is {length} but its gzip member ends after {got} bytes of the block; the next member, at {}, starts a new record",
                    self.stream.position()
                ),
            ))),
            Block::Short(_, got) => {
                // Truncated, or a wrong Content-Length: look for records inside
                // what was taken for the block.
                drop(block);
                let note = match self.stream.seek_to(block_start) {
                    Ok(true) => {
                        let scan = self.scan_for_record(true);
                        match scan {
                            Ok(true) => format!(
                                "; a record starts inside it, at {}: reading on from there",
                                self.stream.position()
                            ),
                            other => self.resync_note(other)?,
                        }
                    }
                    Ok(false) => String::new(),
                    Err(e) => self.resync_note(Err(e))?,
                };
                Ok(Err(self.skip_event(
                    at,
                    format!(
                        "record truncated: Content-Length is {length} but the file ends after {got} bytes of the block{note}"
                    ),
                )))
            }
        }
    }

    fn read_arc(&mut self, at: WarcPosition) -> std::result::Result<WarcEvent, Stop> {
        let mut line = Vec::new();
        match self.read_line(&mut line, MAX_ARC_LINE)? {
            Line::Complete => {}
            Line::TooLong => {
                return self.bad_record(at, "ARC header line is too long".into(), false)
            }
            Line::End(end) => return Ok(self.cut_short(at, end, "ARC header line")),
        }
        let version = match self.format {
            ArchiveFormat::Arc { version } => version,
            ArchiveFormat::Warc => 1,
        };
        let header = match ArcHeader::parse(&line, version) {
            Ok(h) => h,
            Err(reason) => return self.bad_record(at, reason, true),
        };
        let block = match self.read_record_block(at, header.length)? {
            Ok(block) => block,
            Err(skip) => return Ok(skip),
        };
        Ok(WarcEvent::Record(header.into_record(at, version, block)))
    }
}

impl Iterator for WarcReader {
    type Item = Result<WarcEvent>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_event().transpose()
    }
}

/// The number of bytes between two positions, when they are in the same unit.
fn span(gzip: bool, from: WarcPosition, to: WarcPosition) -> Option<u64> {
    if !gzip {
        to.offset.checked_sub(from.offset)
    } else if from.offset == to.offset {
        to.skip.checked_sub(from.skip)
    } else {
        None
    }
}

/// Does `w` start with a whole version line: `WARC/` digits `.` digits, then
/// optional spaces, tabs or CRs, then LF?
fn is_version_line(w: &[u8]) -> bool {
    let Some(rest) = w.strip_prefix(b"WARC/") else {
        return false;
    };
    let major = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if major == 0 || rest.get(major) != Some(&b'.') {
        return false;
    }
    let rest = &rest[major + 1..];
    let minor = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if minor == 0 {
        return false;
    }
    let rest = &rest[minor..];
    let pad = rest
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t' || b == b'\r')
        .count();
    rest.get(pad) == Some(&b'\n')
}

/// `WARC/` digits `.` digits.
fn valid_version(v: &str) -> bool {
    let Some(rest) = v.strip_prefix("WARC/") else {
        return false;
    };
    let mut parts = rest.splitn(2, '.');
    let major = parts.next().unwrap_or("");
    let minor = parts.next().unwrap_or("");
    !major.is_empty()
        && !minor.is_empty()
        && major.bytes().all(|b| b.is_ascii_digit())
        && minor.bytes().all(|b| b.is_ascii_digit())
}

/// A decimal number with optional surrounding whitespace.
fn parse_decimal(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecordStart {
    Warc,
    Arc,
}

/// Why more bytes of a record could not be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum More {
    Data,
    Eof,
    NextRecord,
}

enum Line {
    Complete,
    TooLong,
    End(More),
}

enum Block {
    Complete,
    Short(More, u64),
}

/// Damage found in the file: where, and a reason that says where reading resumed.
#[derive(Debug)]
struct Problem {
    at: WarcPosition,
    reason: String,
}

/// Why the decompressed stream stopped: I/O error (fatal) or damage (skipped).
enum Stop {
    Io(io::Error),
    Problem(Problem),
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Io(e)
    }
}

// ---------------------------------------------------------------------------
// ARC

/// A parsed ARC header line.
struct ArcHeader {
    url: String,
    ip: String,
    date: String,
    content_type: String,
    length: u64,
}

/// Is this line shaped like an ARC header (five or more fields, a URL first,
/// the length last)? The length need not be valid.
fn looks_like_arc_header(line: &[u8]) -> bool {
    let text = String::from_utf8_lossy(line);
    let fields: Vec<&str> = text.split_ascii_whitespace().collect();
    fields.len() >= 5
        && fields[0].contains(':')
        && fields[0]
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
}

impl ArcHeader {
    fn parse(line: &[u8], version: u8) -> std::result::Result<ArcHeader, String> {
        let text = String::from_utf8_lossy(line);
        let fields: Vec<&str> = text.split_ascii_whitespace().collect();
        if !looks_like_arc_header(line) {
            return Err(format!("bad ARC header line {:?}", truncate(&text, 200)));
        }
        let n = fields.len();
        let last = fields[n - 1];
        let length = parse_decimal(last)
            .ok_or_else(|| format!("ARC header line has an invalid length {last:?}"))?;
        // Fields counted from the right, so a URL with spaces stays whole.
        let (url_end, ip, date, ct) = if version == 2 && n >= 10 {
            (n - 9, fields[n - 9], fields[n - 8], fields[n - 7])
        } else {
            (n - 4, fields[n - 4], fields[n - 3], fields[n - 2])
        };
        Ok(ArcHeader {
            url: fields[..url_end].join(" "),
            ip: ip.to_string(),
            date: date.to_string(),
            content_type: ct.to_string(),
            length,
        })
    }

    fn into_record(self, at: WarcPosition, version: u8, block: Vec<u8>) -> WarcRecord {
        let (kind, content_type) = if self.url.starts_with("filedesc:") {
            (RecordType::Warcinfo, self.content_type)
        } else if self.url.starts_with("http") && starts_with_http(&block) {
            (
                RecordType::Response,
                "application/http; msgtype=response".to_string(),
            )
        } else {
            (RecordType::Resource, self.content_type)
        };
        let headers = vec![
            ("WARC-Type".to_string(), kind.as_str().to_string()),
            ("WARC-Target-URI".to_string(), self.url),
            ("WARC-Date".to_string(), arc_date_to_iso(&self.date)),
            ("WARC-IP-Address".to_string(), self.ip),
            ("Content-Type".to_string(), content_type),
            ("Content-Length".to_string(), block.len().to_string()),
        ];
        WarcRecord {
            pos: at,
            kind,
            version: format!("ARC/{version}"),
            headers,
            block,
        }
    }
}

/// `20140216050221` (or longer) as `2014-02-16T05:02:21Z`; other text unchanged.
fn arc_date_to_iso(d: &str) -> String {
    let b = d.as_bytes();
    if b.len() >= 14 && b.iter().all(|c| c.is_ascii_digit()) {
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            &d[0..4],
            &d[4..6],
            &d[6..8],
            &d[8..10],
            &d[10..12],
            &d[12..14]
        )
    } else {
        d.to_string()
    }
}

fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Is the file gzip? Yes when it starts with the gzip magic; also when it
/// starts with junk but its first 64 KiB hold a gzip magic and no WARC version
/// line (the junk is then reported as bytes between members).
fn detect_gzip(input: &mut Input) -> io::Result<bool> {
    let n = input.ensure(64 * 1024)?;
    let head = &input.avail()[..n];
    if head.starts_with(&GZIP_MAGIC[..2]) {
        return Ok(true);
    }
    let has_magic = head
        .windows(4)
        .any(|w| w[..3] == GZIP_MAGIC && w[3] & 0xe0 == 0);
    let has_version = head
        .windows(6)
        .any(|w| w.starts_with(b"WARC/") && w[5].is_ascii_digit());
    let looks_arc = head.starts_with(b"filedesc:");
    Ok(has_magic && !has_version && !looks_arc)
}

/// Tells WARC from ARC by the first line of the file (ARC version from the
/// `filedesc://` block). Leaves the stream anywhere: the caller seeks after.
fn sniff_format(stream: &mut Stream) -> std::result::Result<ArchiveFormat, Stop> {
    // Skip leading blank lines.
    loop {
        if stream.window().is_empty() {
            if stream.fill_unit()? {
                continue;
            }
            if !stream.next_member()? {
                return Ok(ArchiveFormat::Warc);
            }
            continue;
        }
        let w = stream.window();
        let n = w.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
        stream.consume(n);
        if !stream.window().is_empty() {
            break;
        }
    }
    stream.ensure(MAX_ARC_LINE)?;
    let w = stream.window();
    let Some(end) = w.iter().position(|&b| b == b'\n') else {
        return Ok(ArchiveFormat::Warc);
    };
    if !looks_like_arc_header(&w[..end]) {
        return Ok(ArchiveFormat::Warc);
    }
    let mut version = 1;
    if w.starts_with(b"filedesc:") {
        // The version block's first line: "1 0 name" or "2 0 name".
        let rest = &w[end + 1..];
        if rest.first() == Some(&b'2') && rest.get(1).is_some_and(|b| b.is_ascii_whitespace()) {
            version = 2;
        }
    }
    Ok(ArchiveFormat::Arc { version })
}

// ---------------------------------------------------------------------------
// File input and decompression

/// The file, buffered, with the offset of the next unread byte.
struct Input {
    file: File,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    pos: u64,
    /// How far into the file has been read (shared, for progress).
    counter: Arc<AtomicU64>,
}

impl Input {
    fn new(file: File, counter: Arc<AtomicU64>) -> Input {
        Input {
            file,
            buf: vec![0; INPUT_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            pos: 0,
            counter,
        }
    }

    fn avail(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.end - self.start);
        self.start += n;
        self.pos += n as u64;
    }

    /// Reads more of the file after what is buffered; false at end of file.
    fn refill(&mut self) -> io::Result<bool> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            return Ok(true);
        }
        loop {
            match self.file.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    self.counter
                        .store(self.pos + self.end as u64, Ordering::Relaxed);
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Buffers at least `n` bytes (at most the buffer size) unless the file ends.
    fn ensure(&mut self, n: usize) -> io::Result<usize> {
        let n = n.min(self.buf.len());
        while self.end - self.start < n {
            if !self.refill()? {
                break;
            }
        }
        Ok(self.end - self.start)
    }

    /// Moves to file offset `off`.
    fn goto(&mut self, off: u64) -> io::Result<()> {
        let buffered = (self.end - self.start) as u64;
        if off >= self.pos && off - self.pos <= buffered {
            self.consume((off - self.pos) as usize);
        } else {
            self.file.seek(SeekFrom::Start(off))?;
            self.start = 0;
            self.end = 0;
            self.pos = off;
            self.counter.store(off, Ordering::Relaxed);
        }
        Ok(())
    }
}

enum GzipHeader {
    Member,
    Eof,
    NotGzip,
    Bad(&'static str),
}

/// Reads a gzip member header (RFC 1952) at the input's position.
fn read_gzip_header(input: &mut Input) -> io::Result<GzipHeader> {
    let n = input.ensure(10)?;
    if n == 0 {
        return Ok(GzipHeader::Eof);
    }
    let a = input.avail();
    if n < 3 || a[..3] != GZIP_MAGIC {
        return Ok(GzipHeader::NotGzip);
    }
    if n < 10 {
        return Ok(GzipHeader::Bad("the file ends inside a gzip header"));
    }
    let flags = a[3];
    if flags & 0xe0 != 0 {
        return Ok(GzipHeader::Bad("reserved flag bits are set in its header"));
    }
    input.consume(10);
    if flags & 0x04 != 0 {
        if input.ensure(2)? < 2 {
            return Ok(GzipHeader::Bad("the file ends inside a gzip header"));
        }
        let a = input.avail();
        let xlen = u16::from_le_bytes([a[0], a[1]]) as usize;
        input.consume(2);
        if input.ensure(xlen)? < xlen {
            return Ok(GzipHeader::Bad("the file ends inside a gzip header"));
        }
        input.consume(xlen);
    }
    for flag in [0x08u8, 0x10] {
        if flags & flag == 0 {
            continue;
        }
        let mut seen = 0usize;
        loop {
            if input.avail().is_empty() && !input.refill()? {
                return Ok(GzipHeader::Bad("the file ends inside a gzip header"));
            }
            let a = input.avail();
            if let Some(i) = a.iter().position(|&b| b == 0) {
                input.consume(i + 1);
                break;
            }
            seen += a.len();
            let all = a.len();
            input.consume(all);
            if seen > MAX_GZIP_NAME {
                return Ok(GzipHeader::Bad("its header's name or comment is too long"));
            }
        }
    }
    if flags & 0x02 != 0 {
        if input.ensure(2)? < 2 {
            return Ok(GzipHeader::Bad("the file ends inside a gzip header"));
        }
        input.consume(2);
    }
    Ok(GzipHeader::Member)
}

/// Moves the input to the next `1f 8b 08` (with valid flags) at or after
/// `from`; false (input at end of file) when there is none.
fn scan_magic(input: &mut Input, from: u64) -> io::Result<bool> {
    input.goto(from)?;
    loop {
        let n = input.ensure(4)?;
        if n < 4 {
            input.consume(n);
            return Ok(false);
        }
        let a = input.avail();
        let mut i = 0;
        let mut found = None;
        while i + 4 <= a.len() {
            match a[i..a.len() - 3].iter().position(|&b| b == GZIP_MAGIC[0]) {
                None => break,
                Some(j) => {
                    let k = i + j;
                    if a[k + 1] == GZIP_MAGIC[1]
                        && a[k + 2] == GZIP_MAGIC[2]
                        && a[k + 3] & 0xe0 == 0
                    {
                        found = Some(k);
                        break;
                    }
                    i = k + 1;
                }
            }
        }
        match found {
            Some(k) => {
                input.consume(k);
                return Ok(true);
            }
            None => {
                let keep = 3;
                let n = a.len() - keep;
                input.consume(n);
                if !input.refill()? {
                    let rest = input.avail().len();
                    input.consume(rest);
                    return Ok(false);
                }
            }
        }
    }
}

/// The gzip member being decompressed.
struct Member {
    start: u64,
    crc: Crc,
    /// Uncompressed bytes produced so far.
    out: u64,
    /// The deflate stream has ended; the trailer is still to be checked.
    ended: bool,
    /// Inflate failed after producing bytes that were served first.
    failed: Option<String>,
}

/// What the unit the window draws from is.
enum Unit {
    /// The whole (uncompressed) file.
    Plain { eof: bool },
    /// No member is open: the input stands at the next member's header.
    Between,
    /// Inside a gzip member.
    Member(Box<Member>),
}

enum MemberStep {
    Data,
    End,
    Fail(String),
}

/// The uncompressed bytes of the file, through a window that never holds bytes
/// of two gzip members at once (so every byte has a [`WarcPosition`]).
struct Stream {
    input: Input,
    gzip: bool,
    win: Box<[u8]>,
    ws: usize,
    we: usize,
    /// Plain: file offset of `win[ws]`. Gzip: start of the current member.
    base: u64,
    /// Gzip: uncompressed offset of `win[ws]` in the current member.
    within: u64,
    unit: Unit,
    /// The inflater, reset for each member (its state is ~40 KB).
    inflate: Decompress,
}

impl Stream {
    fn new(input: Input, gzip: bool) -> Stream {
        Stream {
            input,
            gzip,
            win: vec![0; WINDOW_BYTES].into_boxed_slice(),
            ws: 0,
            we: 0,
            base: 0,
            within: 0,
            unit: if gzip {
                Unit::Between
            } else {
                Unit::Plain { eof: false }
            },
            inflate: Decompress::new(false),
        }
    }

    fn window(&self) -> &[u8] {
        &self.win[self.ws..self.we]
    }

    fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.we - self.ws);
        self.ws += n;
        if self.gzip {
            self.within += n as u64;
        } else {
            self.base += n as u64;
        }
    }

    /// The position of the next unconsumed byte.
    fn position(&self) -> WarcPosition {
        if !self.gzip {
            WarcPosition {
                offset: self.base,
                skip: 0,
            }
        } else if self.ws == self.we && matches!(self.unit, Unit::Between) {
            WarcPosition {
                offset: self.input.pos,
                skip: 0,
            }
        } else {
            WarcPosition {
                offset: self.base,
                skip: self.within,
            }
        }
    }

    /// Buffers at least `n` bytes of the current unit (fewer if it ends first).
    fn ensure(&mut self, n: usize) -> std::result::Result<usize, Stop> {
        let n = n.min(WINDOW_BYTES - MIN_ROOM);
        while self.we - self.ws < n {
            if !self.fill_unit()? {
                break;
            }
        }
        Ok(self.we - self.ws)
    }

    fn make_room(&mut self) {
        if self.ws == self.we {
            self.ws = 0;
            self.we = 0;
        } else if self.ws > 0 && self.win.len() - self.we < MIN_ROOM {
            self.win.copy_within(self.ws..self.we, 0);
            self.we -= self.ws;
            self.ws = 0;
        }
    }

    /// Adds bytes of the current unit to the window; false when the unit has no
    /// more (then a gzip stream stands between members).
    fn fill_unit(&mut self) -> std::result::Result<bool, Stop> {
        self.make_room();
        if self.we == self.win.len() {
            return Ok(true);
        }
        let step = match &mut self.unit {
            Unit::Between => return Ok(false),
            Unit::Plain { eof } => {
                if *eof {
                    return Ok(false);
                }
                if self.input.avail().is_empty() && !self.input.refill()? {
                    *eof = true;
                    return Ok(false);
                }
                let a = self.input.avail();
                let n = a.len().min(self.win.len() - self.we);
                self.win[self.we..self.we + n].copy_from_slice(&a[..n]);
                self.we += n;
                self.input.consume(n);
                return Ok(true);
            }
            Unit::Member(m) => inflate_more(
                &mut self.input,
                m,
                &mut self.inflate,
                &mut self.win,
                &mut self.we,
            )?,
        };
        match step {
            MemberStep::Data => Ok(true),
            MemberStep::End => {
                self.unit = Unit::Between;
                Ok(false)
            }
            MemberStep::Fail(what) => Err(Stop::Problem(self.fail_member(&what)?)),
        }
    }

    /// Gives up the current member after damage: moves to the next gzip magic
    /// after its start.
    fn fail_member(&mut self, what: &str) -> io::Result<Problem> {
        let (start, out) = match &self.unit {
            Unit::Member(m) => (m.start, m.out),
            _ => (self.input.pos, 0),
        };
        let found = scan_magic(&mut self.input, start + 1)?;
        self.unit = Unit::Between;
        self.ws = 0;
        self.we = 0;
        let next = if found {
            format!(
                "; resumed at the next gzip member, offset {}",
                self.input.pos
            )
        } else {
            "; no gzip member follows".to_string()
        };
        Ok(Problem {
            at: WarcPosition {
                offset: start,
                skip: 0,
            },
            reason: format!(
                "gzip member at offset {start} {what} ({out} bytes decompressed){next}"
            ),
        })
    }

    /// Opens the gzip member at the input's position; false at end of file.
    /// Only when the window is empty and no member is open.
    fn next_member(&mut self) -> std::result::Result<bool, Stop> {
        if !self.gzip || !matches!(self.unit, Unit::Between) {
            return Ok(false);
        }
        debug_assert!(self.ws == self.we);
        let start = self.input.pos;
        let (resync_from, what) = match read_gzip_header(&mut self.input)? {
            GzipHeader::Eof => return Ok(false),
            GzipHeader::Member => {
                self.inflate.reset(false);
                self.unit = Unit::Member(Box::new(Member {
                    start,
                    crc: Crc::new(),
                    out: 0,
                    ended: false,
                    failed: None,
                }));
                self.base = start;
                self.within = 0;
                self.ws = 0;
                self.we = 0;
                return Ok(true);
            }
            GzipHeader::NotGzip => (start, None),
            GzipHeader::Bad(what) => (start + 1, Some(what)),
        };
        let found = scan_magic(&mut self.input, resync_from)?;
        let end = self.input.pos;
        let next = if found {
            format!("; resumed at the next gzip member, offset {end}")
        } else {
            " (up to the end of the file)".to_string()
        };
        let reason = match what {
            None => format!("{} bytes that are not a gzip member{next}", end - start),
            Some(what) => format!("bad gzip member at offset {start}: {what}{next}"),
        };
        Err(Stop::Problem(Problem {
            at: WarcPosition {
                offset: start,
                skip: 0,
            },
            reason,
        }))
    }

    /// Moves to `pos` (re-decompressing `pos.skip` bytes of its member); false
    /// when the data ends before it.
    fn seek_to(&mut self, pos: WarcPosition) -> std::result::Result<bool, Stop> {
        self.ws = 0;
        self.we = 0;
        self.input.goto(pos.offset)?;
        if !self.gzip {
            self.base = pos.offset;
            self.unit = Unit::Plain { eof: false };
            return Ok(pos.skip == 0);
        }
        self.unit = Unit::Between;
        if pos.skip == 0 {
            return Ok(true);
        }
        if !self.next_member()? {
            return Ok(false);
        }
        let mut left = pos.skip;
        while left > 0 {
            if self.ws == self.we && !self.fill_unit()? {
                return Ok(false);
            }
            let n = ((self.we - self.ws) as u64).min(left) as usize;
            self.consume(n);
            left -= n as u64;
        }
        Ok(true)
    }
}

/// Inflates more of member `m` into `win[*we..]`.
fn inflate_more(
    input: &mut Input,
    m: &mut Member,
    inflate: &mut Decompress,
    win: &mut [u8],
    we: &mut usize,
) -> io::Result<MemberStep> {
    if let Some(what) = m.failed.take() {
        return Ok(MemberStep::Fail(what));
    }
    loop {
        if m.ended {
            if input.ensure(8)? < 8 {
                return Ok(MemberStep::Fail(
                    "is truncated: the file ends inside its trailer".into(),
                ));
            }
            let t = input.avail();
            let stored_crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
            let stored_len = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
            if stored_crc != m.crc.sum() {
                return Ok(MemberStep::Fail(format!(
                    "fails its CRC check (stored {stored_crc:08x}, computed {:08x})",
                    m.crc.sum()
                )));
            }
            if stored_len != m.out as u32 {
                return Ok(MemberStep::Fail(format!(
                    "has a wrong length in its trailer ({stored_len})"
                )));
            }
            input.consume(8);
            return Ok(MemberStep::End);
        }
        if input.avail().is_empty() && !input.refill()? {
            return Ok(MemberStep::Fail(
                "is truncated: the file ends inside its compressed data".into(),
            ));
        }
        let (in0, out0) = (inflate.total_in(), inflate.total_out());
        let res = inflate.decompress(input.avail(), &mut win[*we..], FlushDecompress::None);
        let used = (inflate.total_in() - in0) as usize;
        let made = ((inflate.total_out() - out0) as usize).min(win.len() - *we);
        input.consume(used.min(input.avail().len()));
        m.crc.update(&win[*we..*we + made]);
        *we += made;
        m.out += made as u64;
        match res {
            Ok(Status::StreamEnd) => {
                m.ended = true;
                if made > 0 {
                    return Ok(MemberStep::Data);
                }
            }
            Ok(_) => {
                if made > 0 {
                    return Ok(MemberStep::Data);
                }
                if used == 0 {
                    let had = input.avail().len();
                    if !input.refill()? {
                        return Ok(MemberStep::Fail(
                            "is truncated: the file ends inside its compressed data".into(),
                        ));
                    }
                    if input.avail().len() == had {
                        return Ok(MemberStep::Fail(
                            "has corrupt deflate data (no progress)".into(),
                        ));
                    }
                }
            }
            Err(e) => {
                let what = format!("has corrupt deflate data ({e})");
                if made > 0 {
                    m.failed = Some(what);
                    return Ok(MemberStep::Data);
                }
                return Ok(MemberStep::Fail(what));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// HTTP

/// An HTTP response taken apart (from a `response` record's block).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse<'a> {
    /// The protocol, e.g. `HTTP/1.1`.
    pub version: Cow<'a, str>,
    /// The status code (e.g. 200).
    pub status: u16,
    /// The reason phrase, possibly empty.
    pub reason: Cow<'a, str>,
    /// Header fields in order, names as written; folded lines are joined.
    pub headers: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    /// The body, with chunked transfer coding and gzip/deflate content coding
    /// undone.
    pub body: Cow<'a, [u8]>,
    /// Set when the body could not be decoded fully (corrupt or truncated
    /// chunks or compressed data, output over `max_bytes`, unknown coding):
    /// `body` then holds what could be had.
    pub body_note: Option<String>,
}

impl<'a> HttpResponse<'a> {
    /// A `resource` record seen as a response: status 200, `Content-Type` as
    /// the only header, the block as body.
    pub fn from_resource(content_type: Option<&'a str>, block: &'a [u8]) -> HttpResponse<'a> {
        HttpResponse {
            version: Cow::Borrowed(""),
            status: 200,
            reason: Cow::Borrowed(""),
            headers: content_type
                .map(|ct| (Cow::Borrowed("Content-Type"), Cow::Borrowed(ct)))
                .into_iter()
                .collect(),
            body: Cow::Borrowed(block),
            body_note: None,
        }
    }

    /// The value of the first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }

    /// The `Content-Type` header.
    pub fn content_type(&self) -> Option<&str> {
        self.header("Content-Type")
    }

    /// The media type of `Content-Type`, lowercase, without parameters
    /// (e.g. `text/html`).
    pub fn media_type(&self) -> Option<String> {
        self.content_type().and_then(media_type)
    }

    /// The `charset` parameter of `Content-Type`, without quotes.
    pub fn charset(&self) -> Option<&str> {
        self.content_type().and_then(charset_param)
    }
}

/// The media type of a `Content-Type` value, lowercase and without parameters;
/// `None` when empty.
pub fn media_type(content_type: &str) -> Option<String> {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if essence.is_empty() {
        None
    } else {
        Some(essence.to_ascii_lowercase())
    }
}

/// The `charset` parameter of a `Content-Type` value, without quotes.
pub fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        (!value.is_empty()).then_some(value)
    })
}

/// Does the data start like an HTTP status line (`HTTP`, any case, then the
/// version: `HTTP/1.1`, and the mangled `HTTPX/1.1` or `http/1.0` seen in
/// captures)?
fn starts_with_http(data: &[u8]) -> bool {
    data.len() >= 5 && data[..4].eq_ignore_ascii_case(b"HTTP")
}

/// Splits off one line (up to LF, trailing CRs dropped); the rest follows.
fn split_line(data: &[u8]) -> (&[u8], &[u8]) {
    let (mut line, rest) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[data.len()..]),
    };
    while let [head @ .., b'\r'] = line {
        line = head;
    }
    (line, rest)
}

/// Parses an HTTP response (status line, headers, body) from a WARC block.
///
/// Tolerates what crawlers store: a missing reason phrase, a mangled protocol
/// name (`HTTPX/1.1`, `http/1.0`), bare LF (or
/// CR CR LF) line ends, a block that ends inside the headers (empty body),
/// folded header lines, lines without a colon (ignored). The body is de-chunked
/// when `Transfer-Encoding` says `chunked` and looks chunked (some writers
/// store it de-chunked but keep the header), and decoded when
/// `Content-Encoding` is `gzip`, `x-gzip` or `deflate` and the data is
/// compressed; decoded output is cut at `max_bytes`. Problems with the body
/// are reported in [`HttpResponse::body_note`], not as errors. Errors: no
/// status line.
pub fn parse_http_response(
    block: &[u8],
    max_bytes: u64,
) -> std::result::Result<HttpResponse<'_>, String> {
    let start = block
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(block.len());
    let (status_line, mut rest) = split_line(&block[start..]);
    if !starts_with_http(status_line) {
        let shown = String::from_utf8_lossy(&status_line[..status_line.len().min(60)]).into_owned();
        return Err(format!("not an HTTP response: status line {shown:?}"));
    }
    let status_text = String::from_utf8_lossy(status_line);
    let (version, after) = match status_text.split_once([' ', '\t']) {
        Some((v, a)) => (v.to_string(), a.trim_start()),
        None => (status_text.to_string(), ""),
    };
    let digits: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
    let status: u16 = match digits.parse() {
        Ok(s) if digits.len() == 3 => s,
        _ => {
            return Err(format!(
                "bad HTTP status line {:?}",
                truncate(&status_text, 80)
            ))
        }
    };
    let reason = after[digits.len()..].trim().to_string();
    let mut headers: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
    loop {
        if rest.is_empty() {
            break;
        }
        let (line, next) = split_line(rest);
        rest = next;
        if line.is_empty() {
            break;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            if let Some((_, value)) = headers.last_mut() {
                let more = String::from_utf8_lossy(line);
                let joined = format!("{} {}", value, more.trim());
                *value = Cow::Owned(joined);
            }
            continue;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let name = trim_cow(String::from_utf8_lossy(&line[..colon]));
        let value = trim_cow(String::from_utf8_lossy(&line[colon + 1..]));
        headers.push((name, value));
    }
    let mut resp = HttpResponse {
        version: Cow::Owned(version),
        status,
        reason: Cow::Owned(reason),
        headers,
        body: Cow::Borrowed(rest),
        body_note: None,
    };
    let chunked = resp
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("Transfer-Encoding"))
        .any(|(_, v)| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        if let Some((body, note)) = dechunk(rest) {
            resp.body = Cow::Owned(body);
            resp.body_note = note;
        }
    }
    let codings: Vec<String> = resp
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("Content-Encoding"))
        .flat_map(|(_, v)| {
            v.split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    // Codings apply in order, so they are undone from the last.
    for coding in codings.iter().rev() {
        match decode_content(&resp.body, coding, max_bytes) {
            Decoded::Done(body, note) => {
                resp.body = Cow::Owned(body);
                if note.is_some() {
                    resp.body_note = note;
                }
            }
            Decoded::NotEncoded => {}
            Decoded::Unsupported => {
                resp.body_note = Some(format!(
                    "unsupported Content-Encoding {coding:?}: body left encoded"
                ));
                break;
            }
        }
    }
    if resp.body.len() as u64 > max_bytes {
        let cut = max_bytes as usize;
        resp.body = match resp.body {
            Cow::Borrowed(b) => Cow::Borrowed(&b[..cut]),
            Cow::Owned(mut v) => {
                v.truncate(cut);
                Cow::Owned(v)
            }
        };
        resp.body_note = Some(format!("body cut at max_bytes ({max_bytes})"));
    }
    Ok(resp)
}

fn trim_cow(s: Cow<'_, str>) -> Cow<'_, str> {
    match s {
        Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
        Cow::Owned(o) => Cow::Owned(o.trim().to_string()),
    }
}

/// Undoes chunked transfer coding; `None` when the data does not start like a
/// chunked body (then it is taken as already de-chunked).
fn dechunk(mut data: &[u8]) -> Option<(Vec<u8>, Option<String>)> {
    let mut out = Vec::with_capacity(data.len());
    let mut first = true;
    loop {
        let (line, rest) = split_line(data);
        let size_text = String::from_utf8_lossy(line);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = if size_text.is_empty() || size_text.len() > 15 {
            None
        } else {
            usize::from_str_radix(size_text, 16).ok()
        };
        let Some(size) = size else {
            if first {
                return None;
            }
            if line.is_empty() && rest.is_empty() {
                return Some((out, Some("chunked body ends without its last chunk".into())));
            }
            return Some((
                out,
                Some("malformed chunk size line: body cut there".into()),
            ));
        };
        first = false;
        if size == 0 {
            return Some((out, None));
        }
        if rest.len() < size {
            out.extend_from_slice(rest);
            return Some((out, Some("chunked body is truncated".into())));
        }
        out.extend_from_slice(&rest[..size]);
        data = &rest[size..];
        // The CRLF after the chunk data (tolerate LF only, or nothing).
        if let Some(after) = data.strip_prefix(b"\r\n") {
            data = after;
        } else if let Some(after) = data.strip_prefix(b"\n") {
            data = after;
        }
    }
}

enum Decoded {
    Done(Vec<u8>, Option<String>),
    NotEncoded,
    Unsupported,
}

fn decode_content(body: &[u8], coding: &str, max_bytes: u64) -> Decoded {
    fn run<R: Read>(mut decoder: R, max_bytes: u64) -> (Vec<u8>, Option<String>) {
        let mut out = Vec::new();
        let result = (&mut decoder)
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut out);
        let mut note = None;
        if let Err(e) = result {
            note = Some(format!(
                "compressed body is corrupt or truncated ({e}): kept the {} bytes decoded",
                out.len()
            ));
        }
        if out.len() as u64 > max_bytes {
            out.truncate(max_bytes as usize);
            note = Some(format!("decoded body cut at max_bytes ({max_bytes})"));
        }
        (out, note)
    }
    match coding {
        "gzip" | "x-gzip" => {
            if !body.starts_with(&GZIP_MAGIC[..2]) {
                return Decoded::NotEncoded;
            }
            let (out, note) = run(flate2::read::MultiGzDecoder::new(body), max_bytes);
            Decoded::Done(out, note)
        }
        "deflate" => {
            // RFC 9110 says zlib, but many servers send raw deflate.
            let zlib = body.len() >= 2
                && body[0] & 0x0f == 8
                && (u16::from(body[0]) << 8 | u16::from(body[1])) % 31 == 0;
            let (out, note) = if zlib {
                run(flate2::read::ZlibDecoder::new(body), max_bytes)
            } else {
                run(flate2::read::DeflateDecoder::new(body), max_bytes)
            };
            if out.is_empty() && note.is_some() {
                return Decoded::NotEncoded;
            }
            Decoded::Done(out, note)
        }
        _ => Decoded::Unsupported,
    }
}

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
//!
//! # Layout
//!
//! This file holds the reader ([`WarcReader`]: record starts, blocks, damage
//! and resync, resume points); the submodules hold the rest:
//!
//! - `stream`: the file's decompressed bytes through one window: the buffered
//!   file, gzip member headers and trailers, inflating member by member, and
//!   the resync at the next member after damage (a plain file goes through the
//!   same window);
//! - `record`: [`WarcRecord`] and [`RecordType`], the version line and the
//!   header fields of a WARC record;
//! - `arc`: ARC header lines, ARC records as WARC-like records, telling ARC
//!   from WARC;
//! - `http`: [`parse_http_response`] and [`HttpResponse`] (status line,
//!   headers, chunked transfer coding, content coding).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::ingest::limits::RecordGate;
use crate::input::{Skip, SkipKind};

mod arc;
mod http;
mod record;
mod stream;

pub use http::{charset_param, media_type, parse_http_response, HttpResponse};
pub use record::{RecordType, WarcRecord};

use arc::{looks_like_arc_header, sniff_format, MAX_ARC_LINE};
use record::{is_version_line, MAX_VERSION_LINE};
use stream::{detect_gzip, Input, Problem, Stop, Stream};

/// How a [`WarcReader`] treats its input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarcOptions {
    /// Records whose block is larger than this are skipped without being
    /// buffered (default 64 MiB).
    pub max_record_bytes: u64,
    /// Of a block up to `max_record_bytes`, the first bytes read into memory;
    /// the rest is read and dropped, and the record says so
    /// ([`WarcRecord::is_cut`]). Unlimited by default.
    #[serde(default = "unlimited")]
    pub keep_block_bytes: u64,
}

fn unlimited() -> u64 {
    u64::MAX
}

impl Default for WarcOptions {
    fn default() -> Self {
        WarcOptions {
            max_record_bytes: 64 << 20,
            keep_block_bytes: u64::MAX,
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
    /// Blocks over this size take the gate before they are read.
    gate: Option<(u64, Arc<RecordGate>)>,
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
            gate: None,
        })
    }

    /// Makes the reader take `gate` before it reads a block longer than
    /// `threshold` bytes into memory; the record holds the permit
    /// ([`WarcRecord::permit`]) until it is dropped. So readers of several
    /// files in parallel hold at most one big record at a time (see
    /// [`crate::ingest::limits`]).
    pub fn set_gate(&mut self, threshold: u64, gate: Arc<RecordGate>) {
        self.gate = Some((threshold, gate));
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
        self.skip_event_of(SkipKind::Damaged, at, reason)
    }

    fn skip_event_of(&self, kind: SkipKind, at: WarcPosition, reason: String) -> WarcEvent {
        WarcEvent::Skip {
            at,
            skip: Skip {
                path: self.path.clone(),
                location: at.to_string(),
                kind,
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

    /// Reads `len` bytes of a block, the first `keep` of them into `into`;
    /// the others are dropped.
    fn read_block(
        &mut self,
        into: &mut Vec<u8>,
        len: u64,
        keep: u64,
    ) -> std::result::Result<BlockRead, Stop> {
        let mut left = len;
        while left > 0 {
            match self.more_in_record()? {
                More::Data => {}
                end => return Ok(BlockRead::Short(end, len - left)),
            }
            let w = self.stream.window();
            let n = (w.len() as u64).min(left) as usize;
            let room = keep.saturating_sub(into.len() as u64).min(n as u64) as usize;
            into.extend_from_slice(&w[..room]);
            self.stream.consume(n);
            left -= n as u64;
        }
        Ok(BlockRead::Complete)
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
        // Every skip moves on: if nothing of the record was read, step over
        // its first byte, so the resync cannot find the same start again.
        let mut line_start = line_start;
        if self.stream.position() == at {
            self.stream.ensure(1)?;
            if !self.stream.window().is_empty() {
                self.stream.consume(1);
                line_start = false;
            }
        }
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

    /// Reads the block of a record starting at `at`; a skip event when it cannot.
    fn read_record_block(
        &mut self,
        at: WarcPosition,
        length: u64,
    ) -> std::result::Result<std::result::Result<record::Block, WarcEvent>, Stop> {
        let cap = self.opts.max_record_bytes;
        let oversize = length > cap;
        let block_start = self.stream.position();
        let mut block = Vec::new();
        let keep = if oversize {
            0
        } else {
            length.min(self.opts.keep_block_bytes)
        };
        let permit = match &self.gate {
            Some((threshold, gate)) if keep > *threshold => Some(gate.enter()),
            _ => None,
        };
        // At most keep_block_bytes; untouched pages cost nothing.
        let _ = block.try_reserve_exact(usize::try_from(keep).unwrap_or(usize::MAX));
        let outcome = self.read_block(&mut block, length, keep)?;
        match outcome {
            BlockRead::Complete if oversize => Ok(Err(self.skip_event_of(
                SkipKind::TooLarge,
                at,
                format!(
                    "record skipped: its block of {length} bytes is larger than max_record_bytes ({cap})"
                ),
            ))),
            BlockRead::Complete => Ok(Ok(record::Block {
                data: block,
                length,
                permit,
            })),
            BlockRead::Short(More::NextRecord, got) => Ok(Err(self.skip_event(
                at,
                format!(
                    "record cut short: Content-Length is {length} but its gzip member ends after {got} bytes of the block; the next member, at {}, starts a new record",
                    self.stream.position()
                ),
            ))),
            BlockRead::Short(_, got) => {
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

enum BlockRead {
    Complete,
    Short(More, u64),
}

/// `s` cut to at most `max` bytes, at a character boundary.
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

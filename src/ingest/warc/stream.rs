//! The uncompressed bytes of a WARC file, through one window.
//!
//! [`Input`] buffers the file and knows the offset of each byte. [`Stream`]
//! serves the uncompressed bytes through a window that never holds bytes of
//! two gzip members at once, so every byte has a [`WarcPosition`]: a plain file
//! is copied through; a gzip file is read member by member (RFC 1952 headers,
//! raw deflate, CRC and length checked in the trailer). Damage in a member (a
//! bad header, corrupt deflate data, a truncated member, a CRC mismatch) or
//! bytes between members that are not a member become a [`Problem`], and the
//! stream resyncs at the next gzip magic after the member's start; see the
//! [module docs](super), `# Damage and resynchronization`.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flate2::{Crc, Decompress, FlushDecompress, Status};

use super::WarcPosition;

/// Size of the buffer of compressed (or plain) file bytes.
const INPUT_BYTES: usize = 256 * 1024;
/// Size of the window of decompressed bytes.
const WINDOW_BYTES: usize = 256 * 1024;
/// The window is compacted when less than this is free at its end.
const MIN_ROOM: usize = 64 * 1024;
/// Longest gzip header file name or comment.
const MAX_GZIP_NAME: usize = 64 * 1024;
/// The first bytes of a gzip member: ID1, ID2, CM = deflate.
pub(super) const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// Damage found in the file: where, and a reason that says where reading resumed.
#[derive(Debug)]
pub(super) struct Problem {
    pub(super) at: WarcPosition,
    pub(super) reason: String,
}

/// Why the decompressed stream stopped: I/O error (fatal) or damage (skipped).
pub(super) enum Stop {
    Io(io::Error),
    Problem(Problem),
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Io(e)
    }
}

/// Is the file gzip? Yes when it starts with the gzip magic; also when it
/// starts with junk but its first 64 KiB hold a gzip magic and no WARC version
/// line (the junk is then reported as bytes between members).
pub(super) fn detect_gzip(input: &mut Input) -> io::Result<bool> {
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

/// The file, buffered, with the offset of the next unread byte.
pub(super) struct Input {
    file: File,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    pos: u64,
    /// How far into the file has been read (shared, for progress).
    pub(super) counter: Arc<AtomicU64>,
}

impl Input {
    pub(super) fn new(file: File, counter: Arc<AtomicU64>) -> Input {
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
pub(super) struct Stream {
    pub(super) input: Input,
    pub(super) gzip: bool,
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
    pub(super) fn new(input: Input, gzip: bool) -> Stream {
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

    pub(super) fn window(&self) -> &[u8] {
        &self.win[self.ws..self.we]
    }

    pub(super) fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.we - self.ws);
        self.ws += n;
        if self.gzip {
            self.within += n as u64;
        } else {
            self.base += n as u64;
        }
    }

    /// The position of the next unconsumed byte.
    pub(super) fn position(&self) -> WarcPosition {
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
    pub(super) fn ensure(&mut self, n: usize) -> std::result::Result<usize, Stop> {
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
    pub(super) fn fill_unit(&mut self) -> std::result::Result<bool, Stop> {
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
    pub(super) fn next_member(&mut self) -> std::result::Result<bool, Stop> {
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
    pub(super) fn seek_to(&mut self, pos: WarcPosition) -> std::result::Result<bool, Stop> {
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

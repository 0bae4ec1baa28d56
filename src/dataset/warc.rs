//! WARC records copied whole from their input file, for `export dataset`.
//!
//! [`RawRecords`] copies the record starting at a [`WarcPosition`] (where
//! ingest's reader met it) to the dataset being written, in its input's
//! compression style as far as the output allows ([`copy`](RawRecords::copy)):
//!
//! | input | output gzip (the first WARC input is gzip) | output plain |
//! |---|---|---|
//! | gzip, one member per record | the member, byte for byte | the member's bytes, decompressed |
//! | gzip, a member holding several records | the record's bytes, as a gzip member of its own | the record's bytes |
//! | plain | the record's bytes, as a gzip member of its own | the record's bytes |
//!
//! A record's bytes are its version line and header up to the empty line,
//! its block of `Content-Length` bytes, and the run of CR and LF bytes after
//! it (the `CRLF CRLF` that ends a record), at most four. A per-record gzip
//! member holds exactly those bytes (and perhaps more CR/LF), so it is copied
//! as it is.
//!
//! Memory: a record's header (at most 1 MiB) and 64 KiB buffers; blocks are
//! streamed, never held. A whole-file gzip input is decompressed once, its
//! records in order (positions only grow).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use flate2::bufread::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use crate::error::{Error, IoContext, Result};
use crate::ingest::warc::WarcPosition;

/// Longest header read (as ingest's reader).
const MAX_HEADER: usize = 1 << 20;

/// The records of one WARC file, by position.
pub struct RawRecords {
    path: PathBuf,
    gzip: bool,
    /// The member being read, open at `(offset, decoded)`.
    open: Option<(u64, u64, Member)>,
}

/// A gzip member's inflated bytes, buffered.
type Member = BufReader<GzDecoder<BufReader<File>>>;

impl RawRecords {
    /// The records of `path` (`gzip` as ingest's reader found it).
    pub fn new(path: &Path, gzip: bool) -> RawRecords {
        RawRecords {
            path: path.to_path_buf(),
            gzip,
            open: None,
        }
    }

    /// Copies the record at `at` to `out`, gzip (one member a record) when
    /// `gzip_out` (see the module docs).
    pub fn copy(&mut self, at: WarcPosition, out: &mut dyn Write, gzip_out: bool) -> Result<()> {
        if !self.gzip {
            let mut r = self.file_at(at.offset)?;
            return self.decoded(&mut r, at, out, gzip_out).map(|_| ());
        }
        if at.skip == 0 && gzip_out {
            // One member, one record? Then the member itself.
            let mut dec =
                BufReader::with_capacity(64 << 10, GzDecoder::new(self.file_at(at.offset)?));
            self.decoded(&mut dec, at, &mut io::sink(), false)?;
            if self.rest_is_crlf(&mut dec)? {
                let end = consumed(dec.into_inner().into_inner()).at(&self.path)?;
                let mut raw = self.file_at(at.offset)?.take(end - at.offset);
                io::copy(&mut raw, out).at("the dataset")?;
                return Ok(());
            }
        }
        let reuse = matches!(&self.open, Some((o, d, _)) if *o == at.offset && *d <= at.skip);
        if !reuse {
            let dec = GzDecoder::new(self.file_at(at.offset)?);
            self.open = Some((at.offset, 0, BufReader::with_capacity(64 << 10, dec)));
        }
        let Some((_, decoded, mut dec)) = self.open.take() else {
            unreachable!("opened above")
        };
        let ahead = at.skip - decoded;
        let skipped = io::copy(&mut (&mut dec).take(ahead), &mut io::sink()).at(&self.path)?;
        if skipped < ahead {
            return Err(self.changed(at, "the gzip member ends before it"));
        }
        let len = self.decoded(&mut dec, at, out, gzip_out)?;
        self.open = Some((at.offset, at.skip + len, dec));
        Ok(())
    }

    /// `path` read from `offset`.
    fn file_at(&self, offset: u64) -> Result<BufReader<File>> {
        let mut f = File::open(&self.path).at(&self.path)?;
        f.seek(SeekFrom::Start(offset)).at(&self.path)?;
        Ok(BufReader::with_capacity(64 << 10, f))
    }

    /// Copies the record `r` starts with to `out` (a gzip member of its own
    /// when `gzip_out`); returns its length.
    fn decoded(
        &self,
        r: &mut dyn BufRead,
        at: WarcPosition,
        out: &mut dyn Write,
        gzip_out: bool,
    ) -> Result<u64> {
        if gzip_out {
            let mut gz = GzEncoder::new(out, Compression::default());
            let n = self.record(r, at, &mut gz)?;
            gz.finish().at("the dataset")?;
            Ok(n)
        } else {
            self.record(r, at, out)
        }
    }

    /// Copies one record (header, block, the CR/LF run after it) from `r`
    /// to `out`; returns its length.
    fn record(&self, r: &mut dyn BufRead, at: WarcPosition, out: &mut dyn Write) -> Result<u64> {
        let mut header = Vec::new();
        let mut length = None;
        loop {
            let start = header.len();
            let n = r
                .take((MAX_HEADER - start) as u64)
                .read_until(b'\n', &mut header)
                .at(&self.path)?;
            if n == 0 || header.len() >= MAX_HEADER {
                return Err(self.changed(at, "no complete WARC header there"));
            }
            let line = trim_line_end(&header[start..]);
            if start == 0 {
                if !line.starts_with(b"WARC/") {
                    return Err(self.changed(at, "no WARC record starts there"));
                }
                continue;
            }
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = std::str::from_utf8(line)
                .ok()
                .and_then(|l| l.split_once(':'))
            {
                if name.trim().eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<u64>().ok();
                }
            }
        }
        let length = length.ok_or_else(|| self.changed(at, "the record has no Content-Length"))?;
        out.write_all(&header).at("the dataset")?;
        let block = io::copy(&mut r.take(length), out).at("the dataset")?;
        if block < length {
            return Err(self.changed(at, "the record's block is cut short"));
        }
        let mut trailer = 0;
        while trailer < 4 {
            let buf = r.fill_buf().at(&self.path)?;
            match buf.first() {
                Some(&b) if b == b'\r' || b == b'\n' => {
                    out.write_all(&[b]).at("the dataset")?;
                    r.consume(1);
                    trailer += 1;
                }
                _ => break,
            }
        }
        Ok(header.len() as u64 + length + trailer)
    }

    /// Reads the rest of a member: `true` when it holds only CR and LF.
    fn rest_is_crlf(&self, r: &mut dyn BufRead) -> Result<bool> {
        let mut only = true;
        loop {
            let buf = r.fill_buf().at(&self.path)?;
            if buf.is_empty() {
                return Ok(only);
            }
            only &= buf.iter().all(|&b| b == b'\r' || b == b'\n');
            let n = buf.len();
            r.consume(n);
        }
    }

    fn changed(&self, at: WarcPosition, what: &str) -> Error {
        Error::Input {
            path: self.path.clone(),
            location: at.to_string(),
            detail: format!(
                "{what}, where ingest read a record (the input changed since it was ingested)"
            ),
        }
    }
}

/// Where a buffered reader of a file stands (what it consumed).
fn consumed(mut r: BufReader<File>) -> io::Result<u64> {
    let buffered = r.buffer().len() as u64;
    Ok(r.get_mut().stream_position()? - buffered)
}

/// `line` without its line end (LF, CRLF, or CR CR LF).
fn trim_line_end(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., b'\r' | b'\n'] = line {
        line = rest;
    }
    line
}

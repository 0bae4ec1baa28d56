//! Reading SNAP-style edge lists.
//!
//! One arc per line: two unsigned integer node ids separated by a tab or
//! spaces; lines starting with `#` or `%` are comments; blank lines are
//! ignored; further fields on a line are ignored. Files may be plain or gzip
//! (detected by content, not by name; concatenated gzip members are read
//! through). A line that is not an arc is counted and reported with its file and
//! line number, and skipped; a gzip stream that is cut or corrupt ends that file
//! with a report naming the compressed byte offset, keeping every arc before it.
//! A line longer than [`MAX_LINE_BYTES`] is skipped and reported too.
//!
//! The line loop, [`for_each_line`], and its reports ([`ReadReport`], [`Skip`])
//! are shared by the other text formats of `import-graph`: edge lists of named
//! nodes ([`super::names`]) and Common Crawl graphs ([`super::cc`]).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, IoContext, Result};

/// Something that was skipped, with where it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// The input file.
    pub path: PathBuf,
    /// Where in it ("line 12", "compressed offset 4096").
    pub location: String,
    /// What was wrong.
    pub reason: String,
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.path.display(),
            self.location,
            self.reason
        )
    }
}

/// What reading the inputs found.
#[derive(Clone, Debug, Default)]
pub struct ReadReport {
    /// Lines read (all of them, comments included).
    pub lines: u64,
    /// Arcs delivered (for a vertices file, vertices): the lines used.
    pub arcs: u64,
    /// Bytes of input files read (compressed size for gzip).
    pub bytes: u64,
    /// How many lines or streams were skipped.
    pub skipped: u64,
    /// The first skips, for the report.
    pub first_skips: Vec<Skip>,
}

/// How many skips a [`ReadReport`] keeps for the report (all are counted).
pub const KEEP_SKIPS: usize = 20;

impl ReadReport {
    fn skip(&mut self, skip: Skip, strict: bool) -> Result<()> {
        if strict {
            return Err(Error::Input {
                path: skip.path,
                location: skip.location,
                detail: format!(
                    "{} (--strict turns skipped input into a failure)",
                    skip.reason
                ),
            });
        }
        self.skipped += 1;
        if self.first_skips.len() < KEEP_SKIPS {
            self.first_skips.push(skip);
        }
        Ok(())
    }
}

/// Counts bytes read through it into a shared counter (for progress).
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Opens a plain or gzip file for line reading; `counter` receives bytes read
/// from the file itself.
pub fn open_maybe_gzip(path: &Path, counter: Arc<AtomicU64>) -> Result<Box<dyn BufRead + Send>> {
    let mut file = File::open(path).at(path)?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).at(path)?;
    use std::io::Seek;
    file.rewind().at(path)?;
    let counting = Counting {
        inner: file,
        count: counter,
    };
    if n == 2 && magic == [0x1f, 0x8b] {
        let gz = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, counting));
        Ok(Box::new(BufReader::with_capacity(1 << 16, gz)))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 16, counting)))
    }
}

/// Parses an unsigned decimal integer (no sign, no spaces); `None` if it is not one
/// or does not fit in a `u64`.
#[inline]
pub fn parse_u64(field: &[u8]) -> Option<u64> {
    if field.is_empty() || field.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in field {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Splits a line into its first two fields separated by tabs or spaces.
#[inline]
pub fn two_fields(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let is_sep = |b: &u8| *b == b'\t' || *b == b' ';
    let mut fields = line.split(is_sep).filter(|f| !f.is_empty());
    Some((fields.next()?, fields.next()?))
}

/// Longest line read, in bytes, its end included; a longer line is skipped and
/// reported (so that a file without line ends cannot exhaust memory).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What a format's parser made of one line (see [`for_each_line`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineVerdict {
    /// The line held a record (an arc, a vertex), which was delivered.
    Used,
    /// A comment or a blank line.
    Ignored,
    /// Not a record: the line is skipped and reported with this reason (a
    /// failure under `strict`).
    Bad(String),
}

/// Shows the start of a bad line in a report.
pub fn shown(text: &[u8]) -> String {
    String::from_utf8_lossy(&text[..text.len().min(60)]).into_owned()
}

/// The line-reading loop shared by the text formats: reads `paths` in order
/// (plain or gzip, see [`open_maybe_gzip`]) and calls `line(file index, text)`
/// for each line, `text` without its `\n` or `\r\n` end. Lines longer than
/// [`MAX_LINE_BYTES`] and the verdicts [`LineVerdict::Bad`] are skipped and
/// reported as `FILE: line N: reason` (errors under `strict`); an unreadable
/// stream (a cut or corrupt gzip) ends its file with a report. `bytes_read`
/// is advanced as input bytes are consumed. The report's `arcs` counts the
/// lines judged [`LineVerdict::Used`].
pub fn for_each_line(
    paths: &[PathBuf],
    strict: bool,
    bytes_read: Arc<AtomicU64>,
    mut line: impl FnMut(usize, &[u8]) -> Result<LineVerdict>,
) -> Result<ReadReport> {
    let mut report = ReadReport::default();
    let mut buf = Vec::with_capacity(256);
    for (file, path) in paths.iter().enumerate() {
        let file_counter = Arc::new(AtomicU64::new(0));
        let mut reader = open_maybe_gzip(path, Arc::clone(&file_counter))?;
        let mut line_no = 0u64;
        let mut last_seen = 0u64;
        loop {
            buf.clear();
            let mut read = (&mut reader)
                .take(MAX_LINE_BYTES as u64)
                .read_until(b'\n', &mut buf);
            let too_long =
                matches!(read, Ok(n) if n == MAX_LINE_BYTES && buf.last() != Some(&b'\n'));
            if too_long {
                // Throw the rest of the line away.
                if let Err(e) = reader.skip_until(b'\n') {
                    read = Err(e);
                }
            }
            let now = file_counter.load(Ordering::Relaxed);
            bytes_read.fetch_add(now - last_seen, Ordering::Relaxed);
            last_seen = now;
            match read {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    report.skip(
                        Skip {
                            path: path.clone(),
                            location: format!("after line {line_no}, near compressed offset {now}"),
                            reason: format!(
                                "unreadable input ({e}); the {line_no} lines before it were kept, the rest of the file is skipped"
                            ),
                        },
                        strict,
                    )?;
                    break;
                }
            }
            line_no += 1;
            report.lines += 1;
            let verdict = if too_long {
                LineVerdict::Bad(format!(
                    "line longer than {} bytes, starting {:?}",
                    MAX_LINE_BYTES,
                    shown(&buf)
                ))
            } else {
                let text = buf.strip_suffix(b"\n").unwrap_or(&buf);
                let text = text.strip_suffix(b"\r").unwrap_or(text);
                line(file, text)?
            };
            match verdict {
                LineVerdict::Used => report.arcs += 1,
                LineVerdict::Ignored => {}
                LineVerdict::Bad(reason) => report.skip(
                    Skip {
                        path: path.clone(),
                        location: format!("line {line_no}"),
                        reason,
                    },
                    strict,
                )?,
            }
        }
        report.bytes += last_seen;
    }
    Ok(report)
}

/// Parses one line of a SNAP edge list into an arc; a comment or blank line is
/// `Err(LineVerdict::Ignored)`, anything else `Err(LineVerdict::Bad(reason))`.
pub fn parse_snap_line(text: &[u8]) -> Result<(u64, u64), LineVerdict> {
    let trimmed = text.trim_ascii_start();
    if trimmed.is_empty() || trimmed[0] == b'#' || trimmed[0] == b'%' {
        return Err(LineVerdict::Ignored);
    }
    match two_fields(trimmed).and_then(|(a, b)| Some((parse_u64(a)?, parse_u64(b)?))) {
        Some(arc) => Ok(arc),
        None => Err(LineVerdict::Bad(format!(
            "expected two unsigned node ids separated by a tab or spaces, found {:?}",
            shown(text)
        ))),
    }
}

/// Reads the arcs of SNAP edge lists `paths` in order, calling `arc(src, dst)`
/// for each. `bytes_read` is advanced as input bytes are consumed.
pub fn read_arcs(
    paths: &[PathBuf],
    strict: bool,
    bytes_read: Arc<AtomicU64>,
    mut arc: impl FnMut(u64, u64) -> Result<()>,
) -> Result<ReadReport> {
    for_each_line(paths, strict, bytes_read, |_, text| {
        match parse_snap_line(text) {
            Ok((s, d)) => {
                arc(s, d)?;
                Ok(LineVerdict::Used)
            }
            Err(verdict) => Ok(verdict),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read(paths: &[PathBuf], strict: bool) -> Result<(Vec<(u64, u64)>, ReadReport)> {
        let mut arcs = Vec::new();
        let r = read_arcs(paths, strict, Arc::new(AtomicU64::new(0)), |s, d| {
            arcs.push((s, d));
            Ok(())
        })?;
        Ok((arcs, r))
    }

    #[test]
    fn plain_gzip_comments_and_junk() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.txt");
        std::fs::write(
            &plain,
            "# c\n% c\n1\t2\n3 4 extra\n\n  5   6\r\nbad line\n7\t-1\n99999999999999999999999\t1\n",
        )
        .unwrap();
        let gz = dir.path().join("b.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(b"8\t9\n10\t11\n").unwrap();
        let mut bytes = enc.finish().unwrap();
        // A second gzip member is read too.
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(b"12\t13\n").unwrap();
        bytes.extend(enc.finish().unwrap());
        std::fs::write(&gz, &bytes).unwrap();
        let (arcs, r) = read(&[plain.clone(), gz.clone()], false).unwrap();
        assert_eq!(
            arcs,
            vec![(1, 2), (3, 4), (5, 6), (8, 9), (10, 11), (12, 13)]
        );
        assert_eq!(r.skipped, 3);
        assert!(
            r.first_skips[0].to_string().contains("a.txt: line 7"),
            "{}",
            r.first_skips[0]
        );
        let err = read(&[plain], true).unwrap_err();
        assert!(err.to_string().contains("line 7"), "{err}");

        // A cut gzip keeps what came before and says where it broke.
        let cut = dir.path().join("cut.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        for i in 0..20000u64 {
            writeln!(enc, "{i}\t{}", i * 7 % 1000).unwrap();
        }
        let full = enc.finish().unwrap();
        std::fs::write(&cut, &full[..full.len() / 2]).unwrap();
        let (arcs, r) = read(&[cut], false).unwrap();
        assert!(arcs.len() > 1000 && arcs.len() < 20000);
        assert_eq!(
            arcs[..10],
            (0..10u64).map(|i| (i, i * 7 % 1000)).collect::<Vec<_>>()[..]
        );
        assert_eq!(r.skipped, 1);
        assert!(
            r.first_skips[0].to_string().contains("cut.gz"),
            "{}",
            r.first_skips[0]
        );
    }
}

//! The line loop of the text input formats, and the field parsers they share.
//!
//! [`for_each_line`] reads files in order (plain or gzip, see
//! [`open_maybe_gzip`]) and hands each line to the format's parser, which
//! answers with a [`LineVerdict`]. Lines are bounded by [`MAX_LINE_BYTES`], so a
//! file without line ends cannot exhaust memory; bad lines and unreadable
//! streams are skipped and reported ([`super::skip`]). SNAP edge lists
//! ([`crate::graph::snap`]), edge lists of named nodes ([`crate::graph::names`])
//! and Common Crawl graphs ([`crate::graph::cc`]) are read through it.

use std::io::{BufRead, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::gzip::open_maybe_gzip;
use super::skip::{ReadReport, Skip, SkipKind};
use crate::error::Result;

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
    /// A record naming a node the graph does not define: skipped and
    /// reported like [`LineVerdict::Bad`].
    Unknown(String),
    /// Longer than [`MAX_LINE_BYTES`] (given by the loop, never by a parser).
    TooLong(String),
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
                            kind: SkipKind::Damaged,
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
                LineVerdict::TooLong(format!(
                    "line longer than {} bytes, starting {:?}",
                    MAX_LINE_BYTES,
                    shown(&buf)
                ))
            } else {
                let text = buf.strip_suffix(b"\n").unwrap_or(&buf);
                let text = text.strip_suffix(b"\r").unwrap_or(text);
                line(file, text)?
            };
            let (kind, reason) = match verdict {
                LineVerdict::Used => {
                    report.arcs += 1;
                    continue;
                }
                LineVerdict::Ignored => continue,
                LineVerdict::Bad(reason) => (SkipKind::BadLine, reason),
                LineVerdict::TooLong(reason) => (SkipKind::LineTooLong, reason),
                LineVerdict::Unknown(reason) => (SkipKind::UnknownNode, reason),
            };
            report.skip(
                Skip {
                    path: path.clone(),
                    location: format!("line {line_no}"),
                    kind,
                    reason,
                },
                strict,
            )?;
        }
        report.bytes += last_seen;
    }
    Ok(report)
}

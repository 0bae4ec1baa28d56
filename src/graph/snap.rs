//! Reading SNAP-style edge lists.
//!
//! One arc per line: two unsigned integer node ids separated by a tab or
//! spaces; lines starting with `#` or `%` are comments; blank lines are
//! ignored; further fields on a line are ignored. Files may be plain or gzip
//! (detected by content, not by name; concatenated gzip members are read
//! through). A line that is not an arc is counted and reported with its file and
//! line number, and skipped; a gzip stream that is cut or corrupt ends that file
//! with a report naming the compressed byte offset, keeping every arc before it.
//! A line longer than [`MAX_LINE_BYTES`](crate::input::MAX_LINE_BYTES) is
//! skipped and reported too.
//!
//! The line loop and its reports are [`crate::input`]'s ([`for_each_line`],
//! [`ReadReport`]), shared with the other text formats of `import-graph`: edge
//! lists of named nodes ([`super::names`]) and Common Crawl graphs
//! ([`super::cc`]), which also reads its edges files with [`parse_snap_line`].

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::error::Result;
use crate::input::{for_each_line, parse_u64, shown, two_fields, LineVerdict, ReadReport};

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

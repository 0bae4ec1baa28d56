//! Common Crawl's host- and domain-level web graphs (`import-graph --format cc`).
//!
//! Common Crawl publishes each graph as text files, usually gzip:
//!
//! - a **vertices** file, one vertex per line: `id<TAB>reversed_name`, e.g.
//!   `0<TAB>com.example` or `7<TAB>com.example.www`, sometimes with further
//!   columns (the domain graph adds the number of hosts), which are ignored.
//!   The ids are `0, 1, 2, …` in line order, which is also the byte order of the
//!   reversed names;
//! - one or more **edges** files, one arc per line: `src_id<TAB>dst_id`, read
//!   like SNAP edge lists ([`super::snap`]).
//!
//! The vertex ids are already dense and sorted, so they *are* the docIDs: no
//! sort is needed to number the nodes, and the vertices file is streamed
//! straight into the doc table. A vertex's doc-table name is its host (or
//! domain) name the usual way round, `www.example.com` ([`host_name`]; the
//! reversed form is that name's labels reversed, so nothing is lost).
//!
//! Ids must increase from line to line. A line whose id does not (a duplicate or
//! one out of order) is skipped and reported like any bad line; a jump leaves
//! the ids in between without a vertex line (a bad line skipped before, say):
//! they still get docIDs, with an empty name and `crawled` false, so the other
//! vertices keep their ids. A jump of more than [`MAX_ID_GAP`] ids is taken
//! for a damaged line and skipped. An arc naming an id at or beyond the end of
//! the vertex ids is skipped and reported (the edges do not belong to these
//! vertices).

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::snap::parse_snap_line;
use crate::error::{Error, Result};
use crate::input::{for_each_line, open_maybe_gzip, parse_u64, shown, LineVerdict, ReadReport};

/// The largest jump between consecutive vertex ids taken as ids without a
/// vertex line; a larger one is reported as a damaged line.
pub const MAX_ID_GAP: u64 = 1 << 20;

/// The host name whose labels `reversed` holds in reverse order
/// (`com.example.www` → `www.example.com`), appended to `out`. Reversing the
/// labels again gives back the input.
pub fn host_name(reversed: &str, out: &mut String) {
    for (i, label) in reversed.rsplit('.').enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(label);
    }
}

/// Parses a vertex line into `(id, reversed name)`; comments (`#`) and blank
/// lines are `Err(LineVerdict::Ignored)`.
pub fn parse_vertex_line(text: &[u8]) -> std::result::Result<(u64, &str), LineVerdict> {
    let trimmed = text.trim_ascii_start();
    if trimmed.is_empty() || trimmed[0] == b'#' {
        return Err(LineVerdict::Ignored);
    }
    let is_sep = |b: &u8| *b == b'\t' || *b == b' ';
    let mut fields = trimmed.split(is_sep).filter(|f| !f.is_empty());
    let (Some(id), Some(name)) = (fields.next(), fields.next()) else {
        return Err(LineVerdict::Bad(format!(
            "expected `id<TAB>reversed.host.name`, found {:?}",
            shown(text)
        )));
    };
    let Some(id) = parse_u64(id) else {
        return Err(LineVerdict::Bad(format!(
            "the vertex id is not an unsigned integer, found {:?}",
            shown(text)
        )));
    };
    match std::str::from_utf8(name) {
        Ok(name) => Ok((id, name)),
        Err(_) => Err(LineVerdict::Bad(format!(
            "the vertex name is not UTF-8, found {:?}",
            shown(text)
        ))),
    }
}

/// Reads a vertices file, calling `vertex(id, reversed name)` for each vertex,
/// ids strictly increasing (lines breaking that order are skipped and
/// reported; see the [module docs](self)).
pub fn read_vertices(
    path: &Path,
    strict: bool,
    bytes_read: Arc<AtomicU64>,
    mut vertex: impl FnMut(u64, &str) -> Result<()>,
) -> Result<ReadReport> {
    let mut next: u64 = 0;
    for_each_line(&[path.to_path_buf()], strict, bytes_read, |_, text| {
        let (id, name) = match parse_vertex_line(text) {
            Ok(v) => v,
            Err(verdict) => return Ok(verdict),
        };
        if id < next {
            return Ok(LineVerdict::Bad(format!(
                "vertex id {id} after id {}: ids must increase from line to line",
                next - 1
            )));
        }
        if id - next > MAX_ID_GAP {
            return Ok(LineVerdict::Bad(format!(
                "vertex id {id} jumps more than {MAX_ID_GAP} ids past the expected {next}"
            )));
        }
        next = id + 1;
        vertex(id, name)?;
        Ok(LineVerdict::Used)
    })
}

/// Reads edges files, calling `arc(src, dst)` for each arc whose ids are both
/// below `vertices`; arcs naming other ids are skipped and reported.
pub fn read_edges(
    paths: &[PathBuf],
    vertices: u64,
    strict: bool,
    bytes_read: Arc<AtomicU64>,
    mut arc: impl FnMut(u64, u64) -> Result<()>,
) -> Result<ReadReport> {
    for_each_line(paths, strict, bytes_read, |_, text| {
        match parse_snap_line(text) {
            Ok((s, d)) => {
                let beyond = if s >= vertices { s } else { d };
                if beyond >= vertices {
                    return Ok(LineVerdict::Unknown(format!(
                        "arc names vertex id {beyond}, but the vertices file has ids 0..{vertices} only"
                    )));
                }
                arc(s, d)?;
                Ok(LineVerdict::Used)
            }
            Err(verdict) => Ok(verdict),
        }
    })
}

/// What the first record line of a file looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sniffed {
    /// `id<TAB>name` with a name that is not a number.
    Vertices,
    /// Two numbers.
    Edges,
    /// Neither, or no record line in the first lines.
    Unknown,
}

/// Looks at the first record line (within the first 100 lines) of `path`, to
/// catch a vertices and an edges file given in the wrong places. Returns the
/// guess and the line number it was made on.
pub fn sniff(path: &Path) -> Result<(Sniffed, u64)> {
    let mut reader = open_maybe_gzip(path, Arc::new(AtomicU64::new(0)))?;
    let mut line = Vec::new();
    for line_no in 1..=100u64 {
        line.clear();
        let n = match (&mut reader).take(1 << 16).read_until(b'\n', &mut line) {
            Ok(n) => n,
            // Unreadable: let the real read report it where it happens.
            Err(_) => return Ok((Sniffed::Unknown, line_no)),
        };
        if n == 0 {
            break;
        }
        let text = line.trim_ascii();
        if text.is_empty() || text[0] == b'#' || text[0] == b'%' {
            continue;
        }
        let is_sep = |b: &u8| *b == b'\t' || *b == b' ';
        let mut fields = text.split(is_sep).filter(|f| !f.is_empty());
        let guess = match (fields.next().map(parse_u64), fields.next()) {
            (Some(Some(_)), Some(second)) if parse_u64(second).is_some() => Sniffed::Edges,
            (Some(Some(_)), Some(_)) => Sniffed::Vertices,
            _ => Sniffed::Unknown,
        };
        return Ok((guess, line_no));
    }
    Ok((Sniffed::Unknown, 0))
}

/// Checks that `vertices` looks like a vertices file and each of `edges` like
/// an edges file (a wrong order on the command line fails here, before any
/// work, rather than as millions of skipped lines).
pub fn check_roles(vertices: &Path, edges: &[PathBuf]) -> Result<()> {
    let wrong = |path: &Path, line: u64, detail: &str| {
        Error::Input {
        path: path.to_path_buf(),
        location: format!("line {line}"),
        detail: format!(
            "{detail}; --format cc takes the vertices file (`id<TAB>reversed.host.name`) first, then the edges files (`src_id<TAB>dst_id`)"
        ),
    }
    };
    if let (Sniffed::Edges, line) = sniff(vertices)? {
        return Err(wrong(
            vertices,
            line,
            "given as the vertices file, but it looks like an edges file",
        ));
    }
    for path in edges {
        if let (Sniffed::Vertices, line) = sniff(path)? {
            return Err(wrong(
                path,
                line,
                "given as an edges file, but it looks like a vertices file",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_unreverse_and_roundtrip() {
        let mut s = String::new();
        host_name("com.example.www", &mut s);
        assert_eq!(s, "www.example.com");
        for rev in ["com", "uk.co.bbc", "a..b", ".x", "4.3.2.1", ""] {
            let mut once = String::new();
            host_name(rev, &mut once);
            let mut twice = String::new();
            host_name(&once, &mut twice);
            assert_eq!(twice, rev);
        }
    }

    #[test]
    fn vertices_in_order_gaps_and_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let v = dir.path().join("v.txt");
        std::fs::write(
            &v,
            b"0\tcom.a\n1\tcom.b\t12\n1\tcom.dup\nx\tcom.c\n3\tcom.d\n4\n\
             9999999999\tcom.far\n5\tcom.\xff\n6 com.e\n",
        )
        .unwrap();
        let mut got = Vec::new();
        let r = read_vertices(&v, false, Arc::new(AtomicU64::new(0)), |id, name| {
            got.push((id, name.to_string()));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            got,
            [(0, "com.a"), (1, "com.b"), (3, "com.d"), (6, "com.e")]
                .map(|(i, n)| (i, n.to_string()))
                .to_vec()
        );
        assert_eq!(r.skipped, 5);
        let lines: Vec<String> = r.first_skips.iter().map(|s| s.location.clone()).collect();
        assert_eq!(lines, ["line 3", "line 4", "line 6", "line 7", "line 8"]);
        assert!(read_vertices(&v, true, Arc::new(AtomicU64::new(0)), |_, _| Ok(())).is_err());
    }

    #[test]
    fn edges_beyond_the_vertices_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let e = dir.path().join("e.txt");
        std::fs::write(&e, "0\t1\n1\t5\n5\t1\n2\t2\nbad\n").unwrap();
        let mut got = Vec::new();
        let r = read_edges(
            std::slice::from_ref(&e),
            3,
            false,
            Arc::new(AtomicU64::new(0)),
            |s, d| {
                got.push((s, d));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(got, [(0, 1), (2, 2)]);
        assert_eq!(r.skipped, 3);
        assert!(r.first_skips[0]
            .to_string()
            .contains("e.txt: line 2: arc names vertex id 5"));
    }

    #[test]
    fn roles_are_checked_by_content() {
        let dir = tempfile::tempdir().unwrap();
        let v = dir.path().join("v");
        let e = dir.path().join("e");
        std::fs::write(&v, "0\tcom.a\n1\tcom.b\n").unwrap();
        std::fs::write(&e, "# header\n0\t1\n").unwrap();
        assert_eq!(sniff(&v).unwrap(), (Sniffed::Vertices, 1));
        assert_eq!(sniff(&e).unwrap(), (Sniffed::Edges, 2));
        check_roles(&v, std::slice::from_ref(&e)).unwrap();
        let err = check_roles(&e, std::slice::from_ref(&v)).unwrap_err();
        assert!(
            err.to_string().contains("looks like an edges file"),
            "{err}"
        );
        let err = check_roles(&v, std::slice::from_ref(&v)).unwrap_err();
        assert!(
            err.to_string().contains("looks like a vertices file"),
            "{err}"
        );
    }
}

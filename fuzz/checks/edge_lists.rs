//! Every edge-list reader (SNAP, named-node TSV, Common Crawl vertices and
//! edges) on arbitrary bytes, plain or gzip: never panics; every line is
//! used, ignored or skipped, and a damaged stream counts as one skip of its
//! own (the lines before the damage stay used).

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use webmill::graph::{cc, names, snap};
use webmill::input::{ReadReport, SkipKind};

/// Lines used + lines skipped ≤ lines read, and at most one damaged stream
/// (the one file) besides them.
fn accounted(r: &ReadReport, slack: u64) {
    let streams = r.by_kind.get(&SkipKind::Damaged).copied().unwrap_or(0);
    assert!(streams <= 1, "{streams} damaged streams in one file");
    assert!(
        r.arcs + r.skipped - streams <= r.lines + slack,
        "{} used + {} skipped ({streams} streams) of {} lines",
        r.arcs,
        r.skipped,
        r.lines
    );
}

/// The check: panics on a violated property, returns on anything else.
pub fn check(data: &[u8]) {
    let dir = std::env::temp_dir().join(format!("webmill-fuzz-edges-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("input.txt");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let paths = [path.clone()];
    let counter = || Arc::new(AtomicU64::new(0));
    if let Ok(r) = snap::read_arcs(&paths, false, counter(), |_, _| Ok(())) {
        accounted(&r, 0);
    }
    if let Ok(r) = names::read_named_arcs(&paths, false, counter(), |_, _| Ok(())) {
        accounted(&r, 0);
    }
    let mut vertices = 0;
    if let Ok(r) = cc::read_vertices(&path, false, counter(), |_, _| {
        vertices += 1;
        Ok(())
    }) {
        accounted(&r, 1);
    }
    let _ = cc::read_edges(&paths, vertices, false, counter(), |s, d| {
        assert!(s < vertices && d < vertices);
        Ok(())
    });
}

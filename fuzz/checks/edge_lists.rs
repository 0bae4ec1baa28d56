//! Every edge-list reader (SNAP, named-node TSV, Common Crawl vertices and
//! edges) on arbitrary bytes, plain or gzip: never panics; every line is
//! used, ignored or skipped.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use webmill::graph::{cc, names, snap};

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
        assert!(r.arcs + r.skipped <= r.lines);
    }
    if let Ok(r) = names::read_named_arcs(&paths, false, counter(), |_, _| Ok(())) {
        assert!(r.arcs + r.skipped <= r.lines);
    }
    let mut vertices = 0;
    if let Ok(r) = cc::read_vertices(&path, false, counter(), |_, _| {
        vertices += 1;
        Ok(())
    }) {
        assert!(r.arcs + r.skipped <= r.lines + 1);
    }
    let _ = cc::read_edges(&paths, vertices, false, counter(), |s, d| {
        assert!(s < vertices && d < vertices);
        Ok(())
    });
}

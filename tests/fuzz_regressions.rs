//! The fuzz targets' checks (`fuzz/checks/`) on stable Rust: every input a
//! fuzzer once crashed on (`fuzz/regressions/TARGET/`, one file per crash,
//! minimized) is replayed here, so each crash stays a regression test.
//!
//! With `WEBMILL_FUZZ_CORPUS=DIR` set, each target also replays every file of
//! `DIR/TARGET/` (e.g. `fuzz/corpus`, after `python3 fuzz/seed-corpora.py` or
//! a fuzzing run): the same checks as `cargo +nightly fuzz run`, without
//! libFuzzer's mutation, for a machine without nightly.

use std::path::{Path, PathBuf};

#[path = "../fuzz/checks/edge_lists.rs"]
mod edge_lists;
#[path = "../fuzz/checks/file_kinds.rs"]
mod file_kinds;
#[path = "../fuzz/checks/html_extract.rs"]
mod html_extract;
#[path = "../fuzz/checks/http_response.rs"]
mod http_response;
#[path = "../fuzz/checks/url_normalize.rs"]
mod url_normalize;
#[path = "../fuzz/checks/warc_reader.rs"]
mod warc_reader;

/// The files of `dir`, sorted (none if it is not there).
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Replays the regressions of `target` (and the corpus, if asked) through
/// `check`; returns how many inputs it ran.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = inputs(&root.join("fuzz/regressions").join(target));
    if let Some(corpus) = std::env::var_os("WEBMILL_FUZZ_CORPUS") {
        files.extend(inputs(&Path::new(&corpus).join(target)));
    }
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{target}: {} fails its check", f.display());
    }
    files.len()
}

#[test]
fn warc_reader_regressions() {
    replay("warc_reader", warc_reader::check);
}

#[test]
fn http_response_regressions() {
    replay("http_response", http_response::check);
}

#[test]
fn html_extract_regressions() {
    replay("html_extract", html_extract::check);
}

#[test]
fn url_normalize_regressions() {
    replay("url_normalize", url_normalize::check);
}

#[test]
fn edge_lists_regressions() {
    replay("edge_lists", edge_lists::check);
}

#[test]
fn file_kinds_regressions() {
    replay("file_kinds", file_kinds::check);
}

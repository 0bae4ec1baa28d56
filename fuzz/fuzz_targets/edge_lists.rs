//! Every edge-list reader (SNAP, named-node TSV, Common Crawl vertices and
//! edges) on arbitrary bytes, plain or gzip: never panics; every line is
//! used, ignored or skipped.
//!
//! The check itself is `fuzz/checks/edge_lists.rs`, shared with the stable replay
//! of `tests/fuzz_regressions.rs`.
#![no_main]

#[path = "../checks/edge_lists.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));

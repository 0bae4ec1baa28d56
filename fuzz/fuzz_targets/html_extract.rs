//! The HTML extractor on arbitrary bodies, with and without a header
//! charset and a link limit: never panics; one flag byte per word, at most
//! the limit of links, words and anchors within their documented caps.
//!
//! The check itself is `fuzz/checks/html_extract.rs`, shared with the stable replay
//! of `tests/fuzz_regressions.rs`.
#![no_main]

#[path = "../checks/html_extract.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));

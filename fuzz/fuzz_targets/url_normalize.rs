//! URL normalization, resolution and sort keys on arbitrary strings: a kept
//! URL is within the limit, normalizing it again gives it back, and its sort
//! key gives the URL back.
//!
//! The check itself is `fuzz/checks/url_normalize.rs`, shared with the stable replay
//! of `tests/fuzz_regressions.rs`.
#![no_main]

#[path = "../checks/url_normalize.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));

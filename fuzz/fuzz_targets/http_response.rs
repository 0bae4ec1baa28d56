//! The HTTP response parser (status line, headers, chunked bodies, gzip and
//! deflate content coding) on arbitrary blocks: never panics, never returns
//! a body over its limit.
//!
//! The check itself is `fuzz/checks/http_response.rs`, shared with the stable replay
//! of `tests/fuzz_regressions.rs`.
#![no_main]

#[path = "../checks/http_response.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));

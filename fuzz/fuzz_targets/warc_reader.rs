//! The WARC/ARC reader on arbitrary bytes (plain or gzip, whatever they
//! hold): every event until the end, each record's HTTP response, and a
//! second reader resumed at each resume point must give the same events.
//!
//! The check itself is `fuzz/checks/warc_reader.rs`, shared with the stable replay
//! of `tests/fuzz_regressions.rs`.
#![no_main]

#[path = "../checks/warc_reader.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));

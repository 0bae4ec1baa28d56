//! Every on-disk reader on arbitrary bytes: the container, and each file
//! kind of the registry (`webmill::kinds::KINDS`) through its verify and
//! dump, as `webmill verify` and `webmill dump` run them. Nothing may panic.
//!
//! Checksums guard every block, so mutated files rarely get past them. The
//! input's first byte chooses: even, the rest is the file as it is (the
//! container's own parsing: header, footer, block index, checksums); odd, a
//! valid container of kind `KINDS[byte / 2 % len]` is written with the rest
//! cut at NUL bytes into header parameters, footer metadata and blocks
//! separators (a block: 8 key bytes, a record count byte, its payload), so
//! the kind's own record decoding sees arbitrary payloads.
//!
//! The check itself is `fuzz/checks/file_kinds.rs`, shared with the stable replay
//! of `tests/fuzz_regressions.rs`.
#![no_main]

#[path = "../checks/file_kinds.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));

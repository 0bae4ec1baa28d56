//! Input readers that several stages share.
//!
//! Every stage that reads files given by the user (`import-graph`'s edge lists
//! and vertex files, `pagerank`'s personalization file, `ingest`'s WARC files)
//! reads them the same way: plain, gzip or zstd whatever the name, with a byte counter
//! for progress, and a bad part of the input is skipped and reported with its
//! file and place rather than ending the run (unless `--strict`).
//!
//! * [`gzip`]: [`open_maybe_gzip`], a plain, gzip or zstd file (detected by content,
//!   concatenated members read through) as a buffered reader whose file bytes
//!   are counted into a shared counter.
//! * [`skip`]: [`Skip`] (what was skipped, in which file, where, why) and
//!   [`ReadReport`] (lines, records and bytes read, the skips counted by
//!   [`SkipKind`] and the first [`KEEP_SKIPS`] kept for the summary).
//! * [`report`]: the skip report, a job file listing every skip and cut
//!   ([`SkipWriter`], [`SKIPS`]).
//! * [`lines`]: [`for_each_line`], the line loop of the text formats: bounded
//!   line length ([`MAX_LINE_BYTES`]), a [`LineVerdict`] per line from the
//!   format's parser, skips reported as `FILE: line N: reason`; and the small
//!   field parsers the formats share ([`two_fields`], [`parse_u64`],
//!   [`shown`]).

pub mod gzip;
pub mod lines;
pub mod report;
pub mod skip;

pub use gzip::open_maybe_gzip;
pub use lines::{for_each_line, parse_u64, shown, two_fields, LineVerdict, MAX_LINE_BYTES};
pub use report::{for_each_skip, SkipEntry, SkipWriter, SKIPS};
pub use skip::{nothing_usable, ReadReport, Skip, SkipCounts, SkipKind, KEEP_SKIPS};

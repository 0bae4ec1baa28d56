//! Reports of skipped input: what was skipped, where, and why.
//!
//! A reader that meets a bad part of its input (a line that is not a record, a
//! cut gzip stream, a damaged WARC record) skips it and records a [`Skip`];
//! under `--strict` the skip is an error instead. A [`ReadReport`] counts every
//! skip by [`SkipKind`] and keeps the first [`KEEP_SKIPS`] for the stage's
//! summary; the whole list goes to the stage's skip report
//! ([`super::report`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Why an input record or file did not become a record of the stage (a
/// page, an arc), or what was cut from one that did.
///
/// The names (`damaged`, `url-too-long`, …) are what the figures and the
/// skip report say; [`SkipKind::is_cut`] tells the cuts (the record was
/// kept, a part of it dropped) from the skips (nothing was kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipKind {
    /// Bytes that are not a record: WARC or gzip damage, a truncated record,
    /// an unreadable compressed stream.
    Damaged,
    /// A WARC record whose block is larger than `--max-record-bytes`.
    TooLarge,
    /// A line of a text format that is not a record.
    BadLine,
    /// A line longer than the readers' line limit.
    LineTooLong,
    /// A `response` record whose HTTP message cannot be parsed.
    BadHttp,
    /// A WAT `metadata` record whose JSON cannot be read.
    BadMetadata,
    /// A record without `WARC-Target-URI`.
    NoTarget,
    /// A target URI that is not an `http`, `https` or `file` URL (crawler
    /// logs under `metadata://`, `urn:`, `dns:`).
    NotWeb,
    /// A URL longer than [`crate::ingest::url::MAX_URL_BYTES`].
    UrlTooLong,
    /// A response with an error status (1xx, 4xx, 5xx, or a 3xx without
    /// `Location`).
    ErrorStatus,
    /// A response whose media type is not HTML (images, scripts, PDF…).
    NotHtml,
    /// A body that is binary by its content (a file signature, control bytes).
    Binary,
    /// A file in an input directory whose name is not that of an HTML file.
    OtherFile,
    /// A symbolic link to a directory, or one that leads nowhere.
    Symlink,
    /// A FIFO, socket or device in an input directory.
    SpecialFile,
    /// A file that could not be read.
    Unreadable,
    /// A node id or name beyond what the graph's vertices define.
    UnknownNode,
    /// A record (page) kept, its block read only up to the per-record limit
    /// the budget allows.
    BlockCut,
    /// A page kept, its decoded body cut at the per-record limit (a gzip bomb).
    BodyCut,
    /// A page kept, its links beyond the per-page limit dropped.
    LinksCut,
    /// A page kept, links whose URL is longer than the URL limit dropped.
    LinkUrlTooLong,
}

impl SkipKind {
    /// Every kind, in order.
    pub const ALL: [SkipKind; 21] = [
        SkipKind::Damaged,
        SkipKind::TooLarge,
        SkipKind::BadLine,
        SkipKind::LineTooLong,
        SkipKind::BadHttp,
        SkipKind::BadMetadata,
        SkipKind::NoTarget,
        SkipKind::NotWeb,
        SkipKind::UrlTooLong,
        SkipKind::ErrorStatus,
        SkipKind::NotHtml,
        SkipKind::Binary,
        SkipKind::OtherFile,
        SkipKind::Symlink,
        SkipKind::SpecialFile,
        SkipKind::Unreadable,
        SkipKind::UnknownNode,
        SkipKind::BlockCut,
        SkipKind::BodyCut,
        SkipKind::LinksCut,
        SkipKind::LinkUrlTooLong,
    ];

    /// Its name in figures and reports (`url-too-long`).
    pub fn name(self) -> &'static str {
        match self {
            SkipKind::Damaged => "damaged",
            SkipKind::TooLarge => "too-large",
            SkipKind::BadLine => "bad-line",
            SkipKind::LineTooLong => "line-too-long",
            SkipKind::BadHttp => "bad-http",
            SkipKind::BadMetadata => "bad-metadata",
            SkipKind::NoTarget => "no-target",
            SkipKind::NotWeb => "not-web",
            SkipKind::UrlTooLong => "url-too-long",
            SkipKind::ErrorStatus => "error-status",
            SkipKind::NotHtml => "not-html",
            SkipKind::Binary => "binary",
            SkipKind::OtherFile => "other-file",
            SkipKind::Symlink => "symlink",
            SkipKind::SpecialFile => "special-file",
            SkipKind::Unreadable => "unreadable",
            SkipKind::UnknownNode => "unknown-node",
            SkipKind::BlockCut => "block-cut",
            SkipKind::BodyCut => "body-cut",
            SkipKind::LinksCut => "links-cut",
            SkipKind::LinkUrlTooLong => "link-url-too-long",
        }
    }

    /// The kind of a name.
    pub fn parse(name: &str) -> Option<SkipKind> {
        SkipKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// `true` for a cut: the record was kept, part of it dropped.
    pub fn is_cut(self) -> bool {
        matches!(
            self,
            SkipKind::BlockCut | SkipKind::BodyCut | SkipKind::LinksCut | SkipKind::LinkUrlTooLong
        )
    }

    /// `true` for what a stage may choose not to keep without the input being
    /// bad (cuts, non-HTML, error statuses, directory entries that are not
    /// pages): `--strict` fails only on the others.
    pub fn is_policy(self) -> bool {
        self.is_cut()
            || matches!(
                self,
                SkipKind::NotWeb
                    | SkipKind::ErrorStatus
                    | SkipKind::NotHtml
                    | SkipKind::Binary
                    | SkipKind::OtherFile
                    | SkipKind::Symlink
                    | SkipKind::SpecialFile
                    | SkipKind::UrlTooLong
            )
    }
}

impl std::fmt::Display for SkipKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Skips counted by kind (the figures' `skips`).
pub type SkipCounts = BTreeMap<SkipKind, u64>;

/// Something that was skipped, with where it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// The input file.
    pub path: PathBuf,
    /// Where in it ("line 12", "offset 4096").
    pub location: String,
    /// Why, as a kind.
    pub kind: SkipKind,
    /// What was wrong, for the user.
    pub reason: String,
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.path.display(),
            self.location,
            self.reason
        )
    }
}

/// What reading the inputs found.
#[derive(Clone, Debug, Default)]
pub struct ReadReport {
    /// Lines read (all of them, comments included).
    pub lines: u64,
    /// Arcs delivered (for a vertices file, vertices): the lines used.
    pub arcs: u64,
    /// Bytes of input files read (compressed size for gzip).
    pub bytes: u64,
    /// How many lines or streams were skipped.
    pub skipped: u64,
    /// The skips counted by kind.
    pub by_kind: SkipCounts,
    /// The first skips, for the summary.
    pub first_skips: Vec<Skip>,
}

/// How many skips a [`ReadReport`] keeps for the summary (all are counted,
/// and listed in the skip report).
pub const KEEP_SKIPS: usize = 20;

impl ReadReport {
    /// Counts `skip` (keeping it if it is among the first [`KEEP_SKIPS`]), or
    /// under `strict` returns it as an error.
    pub(super) fn skip(&mut self, skip: Skip, strict: bool) -> Result<()> {
        if strict {
            return Err(Error::Input {
                path: skip.path,
                location: skip.location,
                detail: format!(
                    "{} (--strict turns skipped input into a failure)",
                    skip.reason
                ),
            });
        }
        self.skipped += 1;
        *self.by_kind.entry(skip.kind).or_default() += 1;
        if self.first_skips.len() < KEEP_SKIPS {
            self.first_skips.push(skip);
        }
        Ok(())
    }
}

/// The error for inputs that yielded nothing usable (an empty directory, a
/// README given as a WARC file, a WARC file given as an edge list): names
/// the inputs, says what was `expected` and what was `found`, with the first
/// skip and a hint when the inputs look like another command's.
pub fn nothing_usable(
    inputs: &[PathBuf],
    expected: &str,
    found: &str,
    first_skips: &[String],
) -> Error {
    let mut names: Vec<String> = inputs
        .iter()
        .take(3)
        .map(|p| p.display().to_string())
        .collect();
    if inputs.len() > 3 {
        names.push(format!("… ({} inputs)", inputs.len()));
    }
    let mut detail = format!(
        "nothing usable in {}: expected {expected}; found {found}",
        names.join(", ")
    );
    if let Some(first) = first_skips.first() {
        detail.push_str(&format!(" (first skipped: {first})"));
    }
    if first_skips.iter().any(|s| s.contains("\"WARC/")) {
        detail.push_str(
            "; this is a WARC file: give it to `webmill ingest` or `webmill run` without --graph",
        );
    }
    Error::usage(detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_usable_says_what_was_expected_and_hints_at_warcs() {
        let e = nothing_usable(
            &[PathBuf::from("a.warc.gz")],
            "edge lines `src<TAB>dst`",
            "0 of 12 lines usable",
            &["a.warc.gz: line 1: expected two unsigned node ids, found \"WARC/1.0\"".into()],
        )
        .to_string();
        assert!(
            e.starts_with("nothing usable in a.warc.gz: expected edge lines"),
            "{e}"
        );
        assert!(
            e.contains("found 0 of 12 lines usable (first skipped: a.warc.gz: line 1"),
            "{e}"
        );
        assert!(e.contains("give it to `webmill ingest`"), "{e}");
    }
}

//! Reports of skipped input: what was skipped, where, and why.
//!
//! A reader that meets a bad part of its input (a line that is not a record, a
//! cut gzip stream, a damaged WARC record) skips it and records a [`Skip`];
//! under `--strict` the skip is an error instead. A [`ReadReport`] counts every
//! skip and keeps the first [`KEEP_SKIPS`] for the stage's report.

use std::path::PathBuf;

use crate::error::{Error, Result};

/// Something that was skipped, with where it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// The input file.
    pub path: PathBuf,
    /// Where in it ("line 12", "compressed offset 4096").
    pub location: String,
    /// What was wrong.
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
    /// The first skips, for the report.
    pub first_skips: Vec<Skip>,
}

/// How many skips a [`ReadReport`] keeps for the report (all are counted).
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

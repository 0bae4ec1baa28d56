//! Helpers of the command-line tests: the library tests' helpers
//! (`tests/common`), and runs of the webmill binaries.
#![allow(dead_code)]

#[path = "../../../tests/common/mod.rs"]
mod shared;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
pub use shared::*;

/// The `webmill` command.
pub fn webmill() -> Command {
    Command::cargo_bin("webmill").unwrap()
}

/// Runs `webmill ARGS…`, asserts that it succeeded (showing its standard
/// error otherwise) and returns its output.
pub fn webmill_ok<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = webmill().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `webmill ingest --mem 16M EXTRA… --out JOB INPUT`, whatever its outcome.
pub fn ingest(job: &Path, input: &Path, extra: &[&str]) -> Output {
    webmill()
        .args(["ingest", "--mem", "16M"])
        .args(extra)
        .arg("--out")
        .arg(job)
        .arg(input)
        .output()
        .unwrap()
}

/// The Debian PostgreSQL 15 pages (`None`, the test skipped, when they
/// cannot be had) written by `webmill-warc FLAGS…` to `dir/name`, served at
/// [`PG_BASE`] on a fixed date; returns (the file, the HTML directory).
pub fn pg_archive(dir: &Path, flags: &[&str], name: &str) -> Option<(PathBuf, PathBuf)> {
    let pkg = corpus_dir("postgresql-doc-15")?;
    let html = pkg.join("usr/share/doc/postgresql-doc-15/html");
    let out = dir.join(name);
    Command::cargo_bin("webmill-warc")
        .unwrap()
        .args(["-q", "--date", "2024-02-29T12:00:00Z", "--base", PG_BASE])
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(&html)
        .assert()
        .success();
    Some((out, html))
}

/// Where [`pg_archive`] serves the PostgreSQL pages.
pub const PG_BASE: &str = "https://www.postgresql.org/docs/15/";

/// Ingests `input` (under `dir`) killed with SIGKILL at random moments
/// until a run ends by itself: `files` of the job equal an uninterrupted
/// run's, byte for byte.
pub fn assert_resumes_to_the_same_bytes(dir: &Path, input: &Path, seed: u64, files: &[&str]) {
    let reference = dir.join("reference");
    assert!(ingest(&reference, input, &["--segment-records", "40"])
        .status
        .success());
    let job = dir.join("killed");
    let mut rng = Rng(seed);
    let kills = kill_until_done(
        || {
            let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("webmill"));
            c.args([
                "ingest",
                "-q",
                "--mem",
                "16M",
                "--segment-records",
                "40",
                "--out",
            ])
            .arg(&job)
            .arg(input);
            c
        },
        &mut rng,
        150,
        600,
    );
    for f in files {
        assert!(
            std::fs::read(reference.join(f)).unwrap() == std::fs::read(job.join(f)).unwrap(),
            "{f} differs after {kills} kills"
        );
    }
}

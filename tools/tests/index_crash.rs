//! `webmill index` interrupted (aborts at failpoints, `kill -9` at random
//! moments) and run again ends with files byte-identical to an uninterrupted
//! run.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use common::*;

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("webmill")
}

fn index_cmd(job: &Path, mem: &str) -> Command {
    index_cmd_barrels(job, mem, 8)
}

fn index_cmd_barrels(job: &Path, mem: &str, barrels: u32) -> Command {
    let mut c = Command::new(bin());
    c.args([
        "index",
        "-q",
        "--barrels",
        &barrels.to_string(),
        "--mem",
        mem,
    ])
    .arg(job)
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    c
}

fn index_files(job: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(job.join("index")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.starts_with('.'), "partial file {name} left");
        out.insert(name, std::fs::read(&p).unwrap());
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
}

/// An ingested job of a generated site, and the index files of an
/// uninterrupted run.
fn setup() -> (tempfile::TempDir, PathBuf, BTreeMap<String, Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    write_site(&site, 1500, 9);
    let base = dir.path().join("base");
    let status = Command::new(bin())
        .args(["ingest", "-q", "--mem", "16M", "--out"])
        .arg(&base)
        .arg(format!("http://site.example/={}", site.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let reference = dir.path().join("reference");
    copy_dir(&base, &reference);
    assert!(index_cmd(&reference, "64M").status().unwrap().success());
    let want = index_files(&reference);
    // 8 full barrels (no short ones: they are read from the full), the
    // lexicon, the field lengths and the anchor titles.
    assert_eq!(want.len(), 11);
    (dir, base, want)
}

#[test]
fn abort_at_failpoints_then_resume() {
    let (dir, base, want) = setup();
    // The runs written are the vocabulary's and the field lengths' (this
    // job's barrels fit in their budget and are sorted in memory, without
    // runs; a barrel sorted through runs resumes from them as every
    // external sort does).
    for (i, point) in [
        "sort.run_written:1",
        "sort.run_written:3",
        "index.barrel_done:1",
        "index.barrel_done:6",
        "publish.before_rename:3",
        "publish.before_rename:12",
        "publish.before_rename:24",
    ]
    .iter()
    .enumerate()
    {
        let job = dir.path().join(format!("job{i}"));
        copy_dir(&base, &job);
        let status = index_cmd(&job, "1M")
            .env("WEBMILL_FAILPOINT", point)
            .status()
            .unwrap();
        assert!(!status.success(), "failpoint {point} was never reached");
        // Resume with another budget.
        assert!(index_cmd(&job, "3M").status().unwrap().success(), "{point}");
        assert!(
            index_files(&job) == want,
            "index files differ after failpoint {point}"
        );
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(job.join("job.json")).unwrap()).unwrap();
        assert_eq!(
            manifest["stages"]["index"]["published"]["attempts"], 2,
            "{point}"
        );
        assert!(
            !job.join("tmp").exists(),
            "temporary files left after {point}"
        );
    }
}

/// The barrel sort's own runs: in one barrel the whole index is too large
/// for its share of `--mem 1M`, so it is sorted through runs (the test job's
/// 8 barrels above are sorted in memory). An abort halfway through those
/// runs resumes from them, with another budget, to the same files.
#[test]
fn abort_in_a_barrel_sort_then_resume() {
    let (dir, base, _) = setup();
    let reference = dir.path().join("one-barrel");
    copy_dir(&base, &reference);
    let log = dir.path().join("points.log");
    let status = index_cmd_barrels(&reference, "1M", 1)
        .env("WEBMILL_FAILPOINT_LOG", &log)
        .status()
        .unwrap();
    assert!(status.success());
    let want = index_files(&reference);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(reference.join("job.json")).unwrap()).unwrap();
    let barrel_runs = manifest["stages"]["index"]["published"]["figures"]["extra"]["runs"]
        .as_u64()
        .unwrap();
    assert!(
        barrel_runs >= 2,
        "the one barrel spills runs ({barrel_runs})"
    );
    let all_runs = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| *l == "sort.run_written")
        .count() as u64;
    // The barrel is sorted after the vocabulary and the field lengths, so
    // its runs are the last ones written.
    let point = format!("sort.run_written:{}", all_runs - barrel_runs / 2);
    let job = dir.path().join("job");
    copy_dir(&base, &job);
    let status = index_cmd_barrels(&job, "1M", 1)
        .env("WEBMILL_FAILPOINT", &point)
        .status()
        .unwrap();
    assert!(!status.success(), "failpoint {point} was never reached");
    assert!(
        job.join("tmp").exists(),
        "the barrel's runs are kept for the resume"
    );
    assert!(index_cmd_barrels(&job, "2M", 1).status().unwrap().success());
    assert!(
        index_files(&job) == want,
        "index files differ after failpoint {point}"
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(job.join("job.json")).unwrap()).unwrap();
    assert_eq!(manifest["stages"]["index"]["published"]["attempts"], 2);
    assert!(!job.join("tmp").exists(), "temporary files left");
}

#[test]
fn kill_9_at_random_moments_then_resume() {
    let (dir, base, want) = setup();
    let timing = dir.path().join("timing");
    copy_dir(&base, &timing);
    let t = Instant::now();
    assert!(index_cmd(&timing, "1M").status().unwrap().success());
    let full = t.elapsed().as_millis() as u64;
    let mut rng = Rng(12);
    for round in 0..2 {
        let job = dir.path().join(format!("killed{round}"));
        copy_dir(&base, &job);
        let kills = kill_until_done(|| index_cmd(&job, "1M"), &mut rng, 10, full.max(50));
        assert!(
            index_files(&job) == want,
            "index files differ after {kills} kills"
        );
    }
}

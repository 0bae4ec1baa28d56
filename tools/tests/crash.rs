//! Crash and resume: `kill -9` at random moments and aborts at chosen points
//! (failpoints) leave a job that the same command completes, with outputs
//! byte-identical to an uninterrupted run.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

const OUTPUTS: [&str; 3] = ["docs.wm", "edges.wm", "edges-t.wm"];

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("webmill")
}

fn import_cmd(job: &Path, input: &Path, mem: &str) -> Command {
    let mut c = Command::new(bin());
    c.args(["import-graph", "-q", "--mem", mem, "--out"])
        .arg(job)
        .arg(input)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn outputs(job: &Path) -> Vec<Vec<u8>> {
    OUTPUTS
        .iter()
        .map(|f| std::fs::read(job.join(f)).unwrap())
        .collect()
}

/// Nothing that looks complete but is not: no partial file lies under a final name.
fn assert_no_half_files(job: &Path) {
    for f in OUTPUTS {
        let p = job.join(f);
        if p.exists() {
            webmill::kinds::verify_file(&p).unwrap();
        }
    }
}

fn setup() -> (tempfile::TempDir, PathBuf, Vec<Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv.gz");
    write_snap(&input, &random_graph(5, 400_000), true);
    let reference = dir.path().join("reference");
    assert!(import_cmd(&reference, &input, "2M")
        .status()
        .unwrap()
        .success());
    let want = outputs(&reference);
    (dir, input, want)
}

#[test]
fn kill_9_at_random_moments_then_resume() {
    let (dir, input, want) = setup();
    // How long an uninterrupted run takes, to spread the kills over it.
    let t = Instant::now();
    assert!(import_cmd(&dir.path().join("timing"), &input, "2M")
        .status()
        .unwrap()
        .success());
    let full = t.elapsed().as_millis() as u64;
    let mut rng = Rng(2024);
    for round in 0..3 {
        let job = dir.path().join(format!("job{round}"));
        let mut kills = 0;
        let log = dir.path().join(format!("job{round}.stderr"));
        loop {
            let mut child = import_cmd(&job, &input, "2M")
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .unwrap();
            let delay = 20 + rng.below(full.max(50));
            std::thread::sleep(Duration::from_millis(delay));
            match child.try_wait().unwrap() {
                Some(status) => {
                    assert!(
                        status.success(),
                        "import failed after {kills} kills: {}",
                        std::fs::read_to_string(&log).unwrap_or_default()
                    );
                    break;
                }
                None => {
                    child.kill().unwrap(); // SIGKILL
                    child.wait().unwrap();
                    kills += 1;
                    assert_no_half_files(&job);
                    assert!(kills < 40, "never finished");
                }
            }
        }
        // One more run after completion is a no-op.
        assert!(import_cmd(&job, &input, "2M").status().unwrap().success());
        assert!(
            outputs(&job) == want,
            "outputs differ after {kills} kills (round {round})"
        );
    }
}

#[test]
fn abort_at_failpoints_then_resume() {
    let (dir, input, want) = setup();
    for (i, point) in [
        "sort.run_written:1",
        "sort.run_written:7",
        "sort.run_written:40",
        "sort.merge_written:1",
        "sort.merge_written:3",
        "publish.before_rename:2",
        "publish.before_rename:5",
        "publish.before_rename:9",
    ]
    .iter()
    .enumerate()
    {
        let job = dir.path().join(format!("job{i}"));
        let status = import_cmd(&job, &input, "2M")
            .env("WEBMILL_FAILPOINT", point)
            .status()
            .unwrap();
        assert!(!status.success(), "failpoint {point} was never reached");
        assert_no_half_files(&job);
        // Resume with a different budget: the runs already written are reused.
        assert!(import_cmd(&job, &input, "3M").status().unwrap().success());
        assert!(
            outputs(&job) == want,
            "outputs differ after failpoint {point}"
        );
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(job.join("job.json")).unwrap()).unwrap();
        if point.starts_with("sort.") {
            // Aborted inside the stage: the second run resumed it. (An abort while
            // publishing the manifest may come before the stage was recorded.)
            assert_eq!(
                manifest["stages"]["import-graph"]["published"]["attempts"], 2,
                "{point}"
            );
        }
        assert!(
            !job.join("tmp").exists(),
            "temporary files left after {point}"
        );
    }
}

fn pagerank_cmd(job: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(["pagerank", "-q", "--tol", "1e-12"])
        .args(extra)
        .arg(job)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// PageRank killed mid-run (at an iteration boundary by failpoint, or anywhere
/// by SIGKILL) and resumed ends with ranks bit-identical to an uninterrupted run.
#[test]
fn pagerank_resumes_bit_identical() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv.gz");
    write_snap(&input, &random_graph(8, 200_000), true);
    let reference = dir.path().join("reference");
    assert!(import_cmd(&reference, &input, "16M")
        .status()
        .unwrap()
        .success());
    let blocked = ["--mode", "blocked", "--mem", "1M"];
    assert!(pagerank_cmd(&reference, &blocked)
        .status()
        .unwrap()
        .success());
    let want = std::fs::read(reference.join("ranks.wm")).unwrap();
    let fresh = |name: &str| {
        let job = dir.path().join(name);
        assert!(import_cmd(&job, &input, "16M").status().unwrap().success());
        job
    };

    // Abort right after iteration 5's checkpoint; resume in another mode.
    let job = fresh("failpoint");
    let status = pagerank_cmd(&job, &blocked)
        .env("WEBMILL_FAILPOINT", "pagerank.iteration:5")
        .status()
        .unwrap();
    assert!(!status.success());
    assert!(pagerank_cmd(&job, &["--mode", "memory"])
        .status()
        .unwrap()
        .success());
    let got = std::fs::read(job.join("ranks.wm")).unwrap();
    let first_diff = got.iter().zip(&want).position(|(a, b)| a != b);
    assert!(
        got == want,
        "ranks differ after resume: lengths {} {}, first difference at {first_diff:?}",
        got.len(),
        want.len()
    );

    // SIGKILL at random moments.
    let job = fresh("killed");
    let mut rng = Rng(77);
    let mut kills = 0;
    loop {
        let mut child = pagerank_cmd(&job, &blocked).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(100 + rng.below(600)));
        match child.try_wait().unwrap() {
            Some(status) => {
                assert!(status.success());
                break;
            }
            None => {
                child.kill().unwrap();
                child.wait().unwrap();
                kills += 1;
                assert!(kills < 60, "never finished");
            }
        }
    }
    assert!(
        std::fs::read(job.join("ranks.wm")).unwrap() == want,
        "ranks differ after {kills} kills"
    );
}

//! `webmill run` interrupted anywhere — aborted at failpoints seeded over
//! every stage, twice in a row, killed with SIGKILL at random moments — and
//! run again with the same command ends with every output byte-identical to
//! an uninterrupted run. The corpus is real and small: the WARC captures of
//! `../shared/data/warc` (broken ones included), under a 1 MiB budget with
//! small ingest segments, so that every stage sorts, checkpoints and
//! publishes many times.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn run_cmd(job: &Path, inputs: &[PathBuf]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("webmill"));
    c.args([
        "run",
        "-q",
        "--mem",
        "1M",
        "--segment-records",
        "16",
        "--barrels",
        "4",
        "--out",
    ])
    .arg(job)
    .args(inputs)
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    c
}

/// Every file of the job but the manifest (whose figures hold times), by
/// path relative to the job; no partial file, staging or tmp left.
fn outputs(job: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![job.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(job).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                assert!(
                    !matches!(rel.as_str(), "tmp" | ".staging"),
                    "{rel} left in {}",
                    job.display()
                );
                stack.push(p);
            } else if rel != "job.json" && rel != ".lock" {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn assert_same(job: &Path, want: &BTreeMap<String, Vec<u8>>, what: &str) {
    let got = outputs(job);
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&got), names(want), "files differ {what}");
    for (name, bytes) in want {
        assert!(&got[name] == bytes, "{name} differs {what}");
    }
}

struct Setup {
    dir: tempfile::TempDir,
    inputs: Vec<PathBuf>,
    want: BTreeMap<String, Vec<u8>>,
    /// Per failpoint hit of an uninterrupted run: the stage it falls in
    /// (stages counted by their commits).
    stage_of_hit: Vec<usize>,
}

fn setup() -> Option<Setup> {
    let data = data_dir()?;
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(data.join("warc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    inputs.sort();
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("reference");
    let log = dir.path().join("failpoints.log");
    let status = run_cmd(&reference, &inputs)
        .env("WEBMILL_FAILPOINT_LOG", &log)
        .status()
        .unwrap();
    assert!(status.success());
    let want = outputs(&reference);
    assert!(want.contains_key("index/lexicon.wm") && want.contains_key("pairs-broder.wm"));
    let mut stage = 0;
    let mut stage_of_hit = Vec::new();
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        stage_of_hit.push(stage);
        if line == "job.commit" {
            stage += 1;
        }
    }
    assert_eq!(stage, 6, "six stages publish");
    Some(Setup {
        dir,
        inputs,
        want,
        stage_of_hit,
    })
}

/// 24 seeded failpoint hits, at least two in every stage, each aborting a
/// fresh run; the same command then finishes the job. Two of them are
/// followed by a second abort in the resumed run.
#[test]
fn aborted_anywhere_then_rerun_gives_the_same_bytes() {
    let Some(s) = setup() else { return };
    let hits = s.stage_of_hit.len() as u64;
    let mut rng = Rng(2025);
    let mut points = Vec::new();
    for stage in 0..6 {
        let in_stage: Vec<u64> = (0..hits)
            .filter(|&h| s.stage_of_hit[h as usize] == stage)
            .collect();
        for _ in 0..2 {
            points.push(in_stage[rng.below(in_stage.len() as u64) as usize] + 1);
        }
    }
    while points.len() < 24 {
        points.push(1 + rng.below(hits));
    }
    points.sort_unstable();
    points.dedup();
    assert!(points.len() >= 20, "{points:?}");
    // Second aborts, chosen up front so that the threads below need no RNG.
    let again: Vec<Option<u64>> = (0..points.len())
        .map(|i| (i % 10 == 3).then(|| 1 + rng.below(hits)))
        .collect();
    // Three at a time: the runs mostly wait for fsync.
    std::thread::scope(|scope| {
        for part in 0..3 {
            let (s, points, again) = (&s, &points, &again);
            scope.spawn(move || {
                for i in (part..points.len()).step_by(3) {
                    abort_then_resume(s, i, points[i], again[i], hits);
                }
            });
        }
    });
}

/// A fresh run of job `i` aborted at failpoint hit `n` (and, if `again`,
/// its resumed run at that hit), then run to the end and compared.
fn abort_then_resume(s: &Setup, i: usize, n: u64, again: Option<u64>, hits: u64) {
    let job = s.dir.path().join(format!("job{i}"));
    let status = run_cmd(&job, &s.inputs)
        .env("WEBMILL_FAILPOINT", format!("*:{n}"))
        .status()
        .unwrap();
    assert!(
        !status.success(),
        "failpoint hit {n} of {hits} was never reached"
    );
    if let Some(m) = again {
        // Interrupted again while resuming (if the resumed run gets that far).
        run_cmd(&job, &s.inputs)
            .env("WEBMILL_FAILPOINT", format!("*:{m}"))
            .status()
            .unwrap();
    }
    assert!(
        run_cmd(&job, &s.inputs).status().unwrap().success(),
        "hit {n}"
    );
    assert_same(
        &job,
        &s.want,
        &format!(
            "after an abort at failpoint hit {n} of {hits} (stage {}), then {again:?}",
            s.stage_of_hit[n as usize - 1]
        ),
    );
}

/// SIGKILL at random moments until the run gets through.
#[test]
fn killed_at_random_moments_then_rerun_gives_the_same_bytes() {
    let Some(s) = setup() else { return };
    let timing = s.dir.path().join("timing");
    let t = Instant::now();
    assert!(run_cmd(&timing, &s.inputs).status().unwrap().success());
    let full = t.elapsed().as_millis() as u64;
    let mut rng = Rng(77);
    let job = s.dir.path().join("killed");
    let mut kills = 0;
    loop {
        let mut child = run_cmd(&job, &s.inputs).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(20 + rng.below(full.max(50))));
        match child.try_wait().unwrap() {
            Some(status) => {
                assert!(status.success(), "run failed after {kills} kills");
                break;
            }
            None => {
                child.kill().unwrap();
                child.wait().unwrap();
                kills += 1;
                assert!(kills < 40, "never finished");
            }
        }
    }
    assert_same(&job, &s.want, &format!("after {kills} kills"));
}

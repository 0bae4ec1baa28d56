//! `webmill-scale`: every stage measured on a small generated corpus, and a
//! measurement killed part-way resumes with the commands not yet measured.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const PAGES: &str = "3000";

fn scale(dir: &Path, results: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("webmill-scale"));
    c.args(["--pages", PAGES, "--mem", "16M", "--threads", "2"])
        .args(["--interval-ms", "20"])
        .arg("--dir")
        .arg(dir)
        .arg("--results")
        .arg(results);
    c
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_stage_is_measured_and_a_killed_size_resumes() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("scale");
    let results = t.path().join("scale.jsonl");
    let measured = dir.join(PAGES).join("stages.jsonl");

    // Killed (with the webmill it runs) as soon as its first command, ingest
    // and resolve, is measured.
    let mut child = scale(&dir, &results)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while lines(&measured).len() < 2 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "webmill-scale ended before it was killed"
        );
        assert!(started.elapsed() < Duration::from_secs(300), "no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status()
        .unwrap();
    assert!(killed.success());
    child.wait().unwrap();
    let first = lines(&measured);
    assert!(!results.exists(), "no size finished yet");

    // The same command again: the first command is not run again, the rest
    // are, and the size's figures hold every stage.
    let out = scale(&dir, &results).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("ingest, resolve measured before"),
        "{stderr}"
    );
    let sizes = lines(&results);
    assert_eq!(sizes.len(), 1);
    let size = &sizes[0];
    assert_eq!(size["pages"], 3000);
    let stages = size["stages"].as_array().unwrap();
    let names: Vec<&str> = stages
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "ingest",
            "resolve",
            "pagerank",
            "index",
            "dedup-minhash",
            "dedup-broder"
        ]
    );
    assert_eq!(stages[0], first[0]["cost"], "ingest's figures kept");
    assert_eq!(stages[1], first[1]["cost"], "resolve's figures kept");
    for s in stages {
        assert!(s["wall"].as_f64().unwrap() > 0.0, "{s}");
        assert!(s["records"].as_u64().unwrap() > 0, "{s}");
        let rss = s["peak_rss"].as_u64().unwrap();
        assert!(rss > 0 && rss <= (16 << 20) * 11 / 10 + (100 << 20), "{s}");
    }
    assert_eq!(stages[0]["records"], 3000);
    assert_eq!(stages[0]["extra"]["pages"], 3000);
    // Measured sizes leave their corpus, not their job.
    assert!(dir.join(PAGES).join("corpus.warc.gz").exists());
    assert!(!dir.join(PAGES).join("job").exists());
    assert!(!measured.exists());
}

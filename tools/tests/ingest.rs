//! `webmill ingest` end to end: real WARC captures (broken ones included), a
//! generated site, exports and stats, `--strict`, thread-count independence,
//! and resume after aborts at failpoints and `kill -9`, byte-identical.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

const OUTPUTS: [&str; 10] = [
    "pages.wm",
    "text.wm",
    "repository.wm",
    "links.wm",
    "docs.wm",
    "urls.wm",
    "pagedoc.wm",
    "edges.wm",
    "edges-t.wm",
    "anchors.wm",
];

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("webmill")
}

fn ingest_cmd(job: &Path, inputs: &[String], extra: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(["ingest", "-q", "--out"])
        .arg(job)
        .args(extra)
        .args(inputs)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn outputs(job: &Path) -> Vec<Vec<u8>> {
    OUTPUTS
        .iter()
        .map(|f| std::fs::read(job.join(f)).unwrap_or_default())
        .collect()
}

fn assert_no_half_files(job: &Path) {
    for f in OUTPUTS {
        let p = job.join(f);
        if p.exists() {
            webmill::kinds::verify_file(&p).unwrap();
        }
    }
}

fn warc_files() -> Option<Vec<String>> {
    let data = data_dir()?;
    let mut v: Vec<String> = std::fs::read_dir(data.join("warc"))
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .collect();
    v.sort();
    Some(v)
}

fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(bin()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn real_warcs_with_broken_ones_exports_and_stats() {
    let Some(warcs) = warc_files() else { return };
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    let out = Command::new(bin())
        .args(["ingest", "--mem", "8M", "--out"])
        .arg(&job)
        .args(&warcs)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The broken files are reported with their name and an offset.
    assert!(stderr.contains("skipped: "), "{stderr}");
    assert!(stderr.contains("bad.arc: offset 134"), "{stderr}");
    assert!(stderr.contains("example.warc: offset 4764"), "{stderr}");
    assert!(
        stderr.contains("ingest: ") && stderr.contains("resolve: "),
        "{stderr}"
    );

    let stats: serde_json::Value =
        serde_json::from_str(&stdout_of(&["stats", "--json", job.to_str().unwrap()])).unwrap();
    for k in [
        "nodes",
        "crawled",
        "arcs",
        "dangling",
        "edges_bytes",
        "skipped",
    ] {
        assert!(stats[k].is_u64(), "stats lacks {k}: {stats}");
    }
    assert!(stats["crawled"].as_u64().unwrap() >= 20, "{stats}");
    assert!(stats["skipped"].as_u64().unwrap() >= 1, "{stats}");

    // export docs: five columns, iana's home page crawled with its title.
    let docs = stdout_of(&["export", "docs", job.to_str().unwrap()]);
    assert!(docs.starts_with("# docid\turl\tcrawled\tbytes\ttitle\n"));
    assert!(docs.lines().skip(1).all(|l| l.split('\t').count() == 5));
    assert!(
        docs.lines()
            .any(|l| l.contains("\thttp://www.iana.org/\t1\t")
                && l.contains("Internet Assigned Numbers Authority")),
        "{docs}"
    );
    // export text: the token stream of each crawled HTML doc.
    let text = stdout_of(&["export", "text", job.to_str().unwrap()]);
    assert!(text.starts_with("# docid\turl\ttokens\n"));
    assert!(text
        .lines()
        .any(|l| l.contains("iana") && l.contains("domain")));
    for f in OUTPUTS {
        stdout_of(&["verify", job.join(f).to_str().unwrap()]);
    }
    // `dump` reads every kind ingest writes.
    for f in [
        "pages.wm",
        "links.wm",
        "anchors.wm",
        "urls.wm",
        "pagedoc.wm",
    ] {
        let d = stdout_of(&["dump", job.join(f).to_str().unwrap()]);
        assert!(d.lines().count() > 1, "{f}: {d}");
    }

    // --strict turns the first skip into a failure naming the file.
    let strict = Command::new(bin())
        .args(["ingest", "-q", "--strict", "--out"])
        .arg(dir.path().join("strict"))
        .args(&warcs)
        .output()
        .unwrap();
    assert!(!strict.status.success());
    assert!(
        String::from_utf8_lossy(&strict.stderr).contains("--strict"),
        "{}",
        String::from_utf8_lossy(&strict.stderr)
    );
}

fn site_inputs(dir: &Path) -> Vec<String> {
    let site = dir.join("site");
    // 6,000 pages (~3.8 MB) are several times the 1M budget of
    // `outputs_do_not_depend_on_threads` on their own, without the real
    // WARC files.
    write_site(&site, 6000, 11);
    let mut inputs = vec![format!("http://site.example/={}", site.display())];
    if let Some(w) = warc_files() {
        inputs.extend(w.into_iter().filter(|p| p.ends_with("iana.warc.gz")));
    }
    inputs
}

#[test]
fn outputs_do_not_depend_on_threads() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = site_inputs(dir.path());
    let one = dir.path().join("one");
    let two = dir.path().join("two");
    let args = ["--mem", "1M", "--segment-records", "300"];
    assert!(ingest_cmd(&one, &inputs, &args)
        .arg("--threads")
        .arg("1")
        .status()
        .unwrap()
        .success());
    assert!(ingest_cmd(&two, &inputs, &args)
        .args(["--threads", "2"])
        .status()
        .unwrap()
        .success());
    assert!(outputs(&one) == outputs(&two));
    // Peak RSS within the budget's allowance (budget + 10% + 100 MB), on an
    // input several times the budget.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(two.join("job.json")).unwrap()).unwrap();
    let input: u64 = manifest["stages"]["ingest"]["published"]["figures"]["extra"]["input_bytes"]
        .as_u64()
        .unwrap();
    assert!(
        input > 3 * (1 << 20),
        "input of {input} bytes is not several times the budget"
    );
    for stage in ["ingest", "resolve"] {
        let rss = manifest["stages"][stage]["published"]["figures"]["peak_rss"]
            .as_u64()
            .unwrap();
        assert!(
            rss <= (1u64 << 20) * 11 / 10 + (100 << 20),
            "{stage}: peak RSS {rss} over the allowance"
        );
    }
}

#[test]
fn abort_at_failpoints_then_resume_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = site_inputs(dir.path());
    let args = ["--mem", "2M", "--segment-records", "300"];
    let reference = dir.path().join("reference");
    assert!(ingest_cmd(&reference, &inputs, &args)
        .status()
        .unwrap()
        .success());
    let want = outputs(&reference);
    for (i, point) in [
        "ingest.segment:2",
        "ingest.segment_written:5",
        "sort.run_written:3",
        "sort.merge_written:1",
        "publish.before_rename:4",
        "publish.before_rename:60",
    ]
    .iter()
    .enumerate()
    {
        let job = dir.path().join(format!("job{i}"));
        let status = ingest_cmd(&job, &inputs, &args)
            .env("WEBMILL_FAILPOINT", point)
            .status()
            .unwrap();
        assert!(!status.success(), "failpoint {point} was never reached");
        assert_no_half_files(&job);
        assert!(ingest_cmd(&job, &inputs, &args).status().unwrap().success());
        assert!(
            outputs(&job) == want,
            "outputs differ after failpoint {point}"
        );
        assert!(
            !job.join("tmp").exists(),
            "temporary files left after {point}"
        );
    }

    // kill -9 at random moments.
    let t = Instant::now();
    assert!(ingest_cmd(&dir.path().join("timing"), &inputs, &args)
        .status()
        .unwrap()
        .success());
    let full = t.elapsed().as_millis() as u64;
    let mut rng = Rng(99);
    let job = dir.path().join("killed");
    let mut kills = 0;
    loop {
        let mut child = ingest_cmd(&job, &inputs, &args).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(20 + rng.below(full.max(50))));
        match child.try_wait().unwrap() {
            Some(status) => {
                assert!(status.success(), "ingest failed after {kills} kills");
                break;
            }
            None => {
                child.kill().unwrap();
                child.wait().unwrap();
                kills += 1;
                assert_no_half_files(&job);
                assert!(kills < 40, "never finished");
            }
        }
    }
    assert!(outputs(&job) == want, "outputs differ after {kills} kills");
}

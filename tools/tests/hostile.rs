//! Hostile input within the budget (issue 14): each row of the table
//! as a test. The inputs come from `webmill-hostile` at sizes that keep the
//! ratio to the budget (a 16 MiB budget against a 1M-link page, a gzip bomb
//! of 256 MiB, records of 20–40 MB); each test runs `webmill ingest` as a
//! child process and asserts that it completes, the pages it keeps, the skips
//! and cuts it reports (figures, skip report, `export skips`), and the peak
//! RSS the process measured itself (the job manifest's figures) against the
//! allowance: budget × 1.1 + 100 MiB. Before the fix the bomb, the 1M-link
//! page and `--max-record-bytes 4G` each went past it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const MEM: u64 = 16 << 20;

fn bin(name: &str) -> PathBuf {
    assert_cmd::cargo::cargo_bin(name)
}

fn allowance(mem: u64) -> u64 {
    mem * 11 / 10 + (100 << 20)
}

/// Writes the hostile inputs named in `only` into `dir`.
fn hostile(dir: &Path, only: &[&str], extra: &[&str]) {
    let mut c = Command::new(bin("webmill-hostile"));
    c.arg("--out").arg(dir).args(extra);
    for o in only {
        c.args(["--only", o]);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What one ingest run left: its stderr, and the job's manifest.
struct Run {
    job: PathBuf,
    stderr: String,
    manifest: Value,
}

impl Run {
    fn ingest(job: &Path, args: &[&str], inputs: &[PathBuf]) -> Run {
        let out = Command::new(bin("webmill"))
            .args(["ingest", "--mem", "16M", "--out"])
            .arg(job)
            .args(args)
            .args(inputs)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "ingest failed: {stderr}");
        let manifest =
            serde_json::from_slice(&std::fs::read(job.join("job.json")).unwrap()).unwrap();
        Run {
            job: job.to_path_buf(),
            stderr,
            manifest,
        }
    }

    fn figures(&self, stage: &str) -> &Value {
        &self.manifest["stages"][stage]["published"]["figures"]
    }

    fn count(&self, key: &str) -> u64 {
        self.figures("ingest")["extra"][key].as_u64().unwrap_or(0)
    }

    fn skips(&self, kind: &str) -> u64 {
        self.figures("ingest")["extra"]["skips"][kind]
            .as_u64()
            .unwrap_or(0)
    }

    /// Peak RSS of ingest and resolve within the allowance.
    fn assert_within_budget(&self) {
        for stage in ["ingest", "resolve"] {
            let rss = self.figures(stage)["peak_rss"].as_u64().unwrap();
            assert!(
                rss > 0 && rss <= allowance(MEM),
                "{stage}: peak RSS {} MiB over the allowance of {} MiB",
                rss >> 20,
                allowance(MEM) >> 20
            );
        }
    }

    /// `export skips`, the skip report verified and dumped.
    fn skip_lines(&self) -> Vec<String> {
        let report = self.job.join("skips-ingest.wm");
        let v = Command::new(bin("webmill"))
            .arg("verify")
            .arg(&report)
            .output()
            .unwrap();
        assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
        let out = Command::new(bin("webmill"))
            .args(["export", "skips"])
            .arg(&self.job)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("# stage\tkey\taction\tkind\tfile\tlocation\tdetail")
        );
        lines.map(str::to_string).collect()
    }

    fn titles(&self) -> Vec<String> {
        let out = Command::new(bin("webmill"))
            .args(["export", "docs"])
            .arg(&self.job)
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .skip(1)
            .filter(|l| l.split('\t').nth(2) == Some("1"))
            .map(|l| l.split('\t').nth(4).unwrap_or("").to_string())
            .collect()
    }
}

#[test]
fn a_page_of_a_million_links_is_cut_at_the_budgets_limit() {
    let dir = tempfile::tempdir().unwrap();
    hostile(dir.path(), &["links"], &["--links", "1000000"]);
    let run = Run::ingest(
        &dir.path().join("job"),
        &[],
        &[dir.path().join("links.warc")],
    );
    run.assert_within_budget();
    assert_eq!(run.count("pages"), 1);
    // --mem 16M: 1 MiB of the record is read, 16,384 links kept.
    assert_eq!(run.count("links"), 16_384);
    assert_eq!(run.skips("block-cut"), 1);
    assert_eq!(run.skips("links-cut"), 1);
    let lines = run.skip_lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("ingest\t0\tcut\tblock-cut\t"),
        "{lines:?}"
    );
    assert!(lines[0].contains("links.warc\toffset 0\t"), "{lines:?}");
    assert!(lines[1].contains("links-cut") && lines[1].contains("16384 links kept"));
    assert!(run.stderr.contains("skips-ingest.wm"), "{}", run.stderr);
}

#[test]
fn a_gzip_bomb_is_decoded_up_to_the_limit_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    hostile(dir.path(), &["bomb"], &["--bomb", "256M"]);
    let run = Run::ingest(
        &dir.path().join("job"),
        &[],
        &[dir.path().join("bomb.warc")],
    );
    run.assert_within_budget();
    assert_eq!(run.count("pages"), 1);
    assert_eq!(run.count("html_bytes"), 1 << 20);
    assert_eq!(run.skips("body-cut"), 1);
    let lines = run.skip_lines();
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].contains("body-cut")
            && lines[0].contains("decoded only up to its first 1048576 bytes"),
        "{lines:?}"
    );
    assert_eq!(run.titles(), ["Bomb"]);
}

#[test]
fn a_mixed_warc_keeps_every_good_page_and_names_every_bad_record() {
    let dir = tempfile::tempdir().unwrap();
    hostile(
        dir.path(),
        &["mixed"],
        &["--bomb", "64M", "--big", "20M", "--pages", "50"],
    );
    let input = [dir.path().join("mixed.warc")];
    let args = ["--max-record-bytes", "16M"];
    let run = Run::ingest(&dir.path().join("two"), &args, &input);
    run.assert_within_budget();
    let titles = run.titles();
    for n in 0..50 {
        assert!(titles.contains(&format!("Page {n}")), "page {n} lost");
    }
    // The bomb and the record with a too-short Content-Length are pages too.
    assert_eq!(run.count("pages"), 52);
    assert_eq!(run.skips("too-large"), 1);
    assert_eq!(run.skips("damaged"), 4);
    assert_eq!(run.skips("body-cut"), 1);
    let lines = run.skip_lines();
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert!(lines.iter().all(|l| l.contains("mixed.warc\toffset ")));
    // The outputs do not depend on the thread count (the gate only orders).
    let one = Run::ingest(
        &dir.path().join("one"),
        &["--max-record-bytes", "16M", "--threads", "1"],
        &input,
    );
    one.assert_within_budget();
    for f in ["pages.wm", "links.wm", "repository.wm", "skips-ingest.wm"] {
        assert!(
            std::fs::read(run.job.join(f)).unwrap() == std::fs::read(one.job.join(f)).unwrap(),
            "{f} differs between 1 and 2 threads"
        );
    }
}

#[test]
fn max_record_bytes_beyond_the_budget_is_clamped_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    hostile(dir.path(), &["big"], &["--big", "40M"]);
    let run = Run::ingest(
        &dir.path().join("job"),
        &["--max-record-bytes", "4G"],
        &[dir.path().join("big.warc")],
    );
    run.assert_within_budget();
    assert!(
        run.stderr.contains("--max-record-bytes 4.0 GiB is more than one record may take under --mem 16.0 MiB (1.0 MiB"),
        "{}",
        run.stderr
    );
    assert_eq!(run.count("pages"), 1);
    // The record's first MiB, less its HTTP header.
    let html = run.count("html_bytes");
    assert!(html > (1 << 20) - 100 && html < 1 << 20, "{html}");
    assert_eq!(run.skips("block-cut"), 1);
}

#[test]
fn long_urls_are_kept_up_to_the_limit_and_reported_beyond() {
    let dir = tempfile::tempdir().unwrap();
    hostile(dir.path(), &["longurl"], &[]);
    let run = Run::ingest(
        &dir.path().join("job"),
        &[],
        &[dir.path().join("longurl.warc")],
    );
    run.assert_within_budget();
    assert_eq!(run.count("pages"), 3);
    let mut titles = run.titles();
    titles.sort();
    assert_eq!(
        titles,
        ["Links to long URLs", "Long URL of 10000 bytes", "Page 0"]
    );
    assert_eq!(run.skips("url-too-long"), 1);
    assert_eq!(run.skips("link-url-too-long"), 1);
    let lines = run.skip_lines();
    assert!(lines[0].contains("url-too-long") && lines[0].contains("100020 bytes"));
    assert!(lines[1].contains("1 links dropped"), "{lines:?}");
}

#[cfg(unix)]
#[test]
fn odd_directory_entries_are_reported_and_names_stay_distinct() {
    let dir = tempfile::tempdir().unwrap();
    hostile(dir.path(), &["names"], &[]);
    let input = format!(
        "http://names.example/={}",
        dir.path().join("names").display()
    );
    let run = Run::ingest(&dir.path().join("job"), &[], &[PathBuf::from(input)]);
    run.assert_within_budget();
    // a\xff.html and a\xfe.html, ok.html, the link to it, sub/inner.html.
    assert_eq!(run.count("pages"), 5);
    assert_eq!(
        run.figures("resolve")["extra"]["duplicate_captures"].as_u64(),
        Some(0)
    );
    assert_eq!(run.skips("symlink"), 2);
    assert_eq!(run.skips("special-file"), 1);
    let lines = run.skip_lines();
    assert_eq!(lines.len(), 3);
    assert!(lines
        .iter()
        .any(|l| l.contains("pipe.html") && l.contains("FIFO")));
    assert!(lines
        .iter()
        .any(|l| l.contains("link-to-dir") && l.contains("not followed")));
    assert!(lines
        .iter()
        .any(|l| l.contains("dangling.html") && l.contains("leads nowhere")));
    let docs = Command::new(bin("webmill"))
        .args(["export", "docs"])
        .arg(&run.job)
        .output()
        .unwrap();
    let docs = String::from_utf8(docs.stdout).unwrap();
    assert!(docs.contains("http://names.example/a%FE.html\t1"), "{docs}");
    assert!(docs.contains("http://names.example/a%FF.html\t1"), "{docs}");
}

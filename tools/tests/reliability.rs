//! Issue 24's reliability run, one regression test per finding: a job
//! resumable from its first byte, concurrent starters, exports written
//! whole or not at all, a manifest that cannot be edited unnoticed, and the
//! exit code of every error class.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("webmill")
}

fn webmill(args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args).stdin(Stdio::null());
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn import_cmd(job: &Path, input: &Path) -> Command {
    let mut c = webmill(&["-q", "--mem", "4M", "import-graph", "--out"]);
    c.arg(job).arg(input);
    c
}

fn outputs(job: &Path) -> Vec<Vec<u8>> {
    ["docs.wm", "edges.wm", "edges-t.wm"]
        .iter()
        .map(|f| std::fs::read(job.join(f)).unwrap_or_default())
        .collect()
}

/// Issue 24, finding 2: a kill in the first milliseconds of a new job left
/// `.lock` (and maybe `.job.json.partial`) without `job.json`, and the same
/// command then refused the directory. Now an abort at each failpoint of
/// job creation, and SIGKILLs at random microseconds of the first run,
/// leave a directory the same command completes, byte for byte.
#[test]
fn a_kill_at_any_instant_of_job_creation_leaves_a_job_the_same_command_continues() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv");
    write_snap(&input, &random_graph(11, 300), false);
    let reference = dir.path().join("reference");
    let out = import_cmd(&reference, &input).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let want = outputs(&reference);

    // The reported state, made by hand.
    let jx = dir.path().join("jx");
    std::fs::create_dir(&jx).unwrap();
    std::fs::write(jx.join(".lock"), b"").unwrap();
    std::fs::write(jx.join(".job.json.partial"), b"{\"vers").unwrap();
    let out = import_cmd(&jx, &input).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(outputs(&jx) == want);

    // Each failpoint of the creation (the manifest's own write is the
    // first publish.before_rename).
    for (i, point) in [
        "job.create.dir",
        "job.create.locked",
        "job.create.manifest",
        "publish.before_rename:1",
        "publish.before_rename:2",
    ]
    .iter()
    .enumerate()
    {
        let job = dir.path().join(format!("fp{i}"));
        let out = import_cmd(&job, &input)
            .env("WEBMILL_FAILPOINT", point)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{point} was not hit");
        let out = import_cmd(&job, &input).output().unwrap();
        assert!(
            out.status.success(),
            "after an abort at {point}: {}",
            text(&out.stderr)
        );
        assert!(outputs(&job) == want, "outputs differ after {point}");
    }

    // SIGKILL at random microseconds: most land in the creation (the whole
    // run takes a few milliseconds), some later. Each killed directory is
    // finished by the same command. Bounded to ~20 s.
    //
    // The delays are drawn below the fastest of three whole runs: timed
    // once, a run slowed by the other tests of this file (they run beside
    // it) made most delays outlast the later, faster runs, and too few
    // kills landed (CI, stop 36: 138 of 300).
    let full_us = (0..3)
        .map(|i| {
            let t = Instant::now();
            let out = import_cmd(&dir.path().join(format!("timing{i}")), &input)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
            t.elapsed().as_micros() as u64
        })
        .min()
        .unwrap();
    let mut rng = Rng(24);
    let start = Instant::now();
    let (mut killed, mut rounds) = (0, 0);
    while rounds < 300 && start.elapsed() < Duration::from_secs(20) {
        rounds += 1;
        let job = dir.path().join(format!("k{rounds}"));
        let mut child = import_cmd(&job, &input)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let delay = rng.below((full_us * 3 / 4).max(1000));
        std::thread::sleep(Duration::from_micros(delay));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed += 1;
        }
        child.wait().unwrap();
        let out = import_cmd(&job, &input).output().unwrap();
        assert!(
            out.status.success(),
            "killed after {delay} µs, the same command failed: {}",
            text(&out.stderr)
        );
        assert!(
            outputs(&job) == want,
            "outputs differ after a kill at {delay} µs"
        );
        std::fs::remove_dir_all(&job).unwrap();
    }
    println!(
        "{killed} of {rounds} runs killed (delays below {} µs)",
        full_us * 3 / 4
    );
    // Whether a kill lands is timing; the bar is low enough for a loaded
    // machine and still proves the kills happened.
    assert!(
        killed >= rounds / 4,
        "only {killed} of {rounds} runs were killed"
    );
}

/// Issue 24, finding 2: several runs started at once on a new directory:
/// each either does the work, finds it done, or says another process holds
/// the lock — never that the directory is not a job.
#[test]
fn concurrent_starters_get_the_locks_message() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv");
    write_snap(&input, &random_graph(12, 200_000), false);
    for round in 0..3 {
        let job = dir.path().join(format!("job{round}"));
        let children: Vec<_> = (0..4)
            .map(|_| {
                import_cmd(&job, &input)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut ok = 0;
        for c in children {
            let out = c.wait_with_output().unwrap();
            let err = text(&out.stderr);
            match out.status.code() {
                Some(0) => ok += 1,
                Some(3) => assert!(err.contains("another webmill process"), "{err}"),
                other => panic!("exit {other:?}: {err}"),
            }
            assert!(!err.contains("not a webmill job"), "{err}");
        }
        assert!(ok >= 1);
    }
}

/// A job of a small generated site, through every stage of `run`.
fn site_job(dir: &Path) -> PathBuf {
    let site = dir.join("site");
    write_site(&site, 200, 3);
    let job = dir.join("job");
    let mut c = webmill(&["run", "-q", "--mem", "16M", "--out"]);
    c.arg(&job)
        .arg(format!("http://site.example/={}", site.display()));
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    job
}

fn export(job: &Path, what: &str, format: &str, file: &Path) -> Output {
    webmill(&["export", what, "--format", format, "-o"])
        .arg(file)
        .arg(job)
        .output()
        .unwrap()
}

/// Issue 24, finding 3: `export -o FILE` that fails leaves no FILE (a
/// damaged doc table half-way, TSV and Parquet; a job without docs), and a
/// previous FILE stays as it was; a complete export says what it wrote.
#[test]
fn a_failed_export_leaves_no_file_and_an_old_one_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let job = site_job(dir.path());
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    for format in ["tsv", "parquet"] {
        let file = out_dir.join(format!("docs.{format}"));
        let out = export(&job, "docs", format, &file);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(
            err.contains("wrote") && err.contains(&*file.to_string_lossy()),
            "says what it wrote: {err}"
        );
    }
    // Damage a block in the second half of the doc table.
    let docs = job.join("docs.wm");
    let good = std::fs::read(&docs).unwrap();
    let mut bad = good.clone();
    let at = good.len() * 3 / 4;
    bad[at] ^= 0x55;
    std::fs::write(&docs, &bad).unwrap();
    for format in ["tsv", "parquet"] {
        let before = std::fs::read(out_dir.join(format!("docs.{format}"))).unwrap();
        for name in [format!("docs.{format}"), format!("new.{format}")] {
            let file = out_dir.join(&name);
            let out = export(&job, "docs", format, &file);
            assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
            if name.starts_with("new") {
                assert!(!file.exists(), "{name} appeared after a failed export");
            } else {
                assert!(
                    std::fs::read(&file).unwrap() == before,
                    "{name} was changed"
                );
            }
        }
    }
    std::fs::write(&docs, &good).unwrap();
    // A job without docs: nothing is written.
    let input = dir.path().join("g.tsv");
    write_snap(&input, &random_graph(5, 300), false);
    let empty = dir.path().join("empty");
    let out = import_cmd(&empty, &input)
        .env("WEBMILL_FAILPOINT", "job.publish")
        .output()
        .unwrap();
    assert!(!out.status.success());
    for format in ["tsv", "parquet"] {
        let file = out_dir.join(format!("nodocs.{format}"));
        let out = export(&empty, "docs", format, &file);
        assert!(!out.status.success());
        assert!(!file.exists(), "{}", text(&out.stderr));
    }
    // Nothing but the complete exports is left in the directory.
    let mut names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["docs.parquet", "docs.tsv"]);
}

/// Issue 24, finding 4: a record count edited in `job.json` is caught by
/// the manifest's checksum (verify and every reader name job.json), and a
/// manifest rewritten with a valid checksum but a wrong count is caught by
/// verify comparing each file with its record.
#[test]
fn an_edited_manifest_fails_verification_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv");
    write_snap(&input, &random_graph(13, 3000), false);
    let job = dir.path().join("job");
    assert!(import_cmd(&job, &input).status().unwrap().success());
    let j = job.to_str().unwrap();
    let out = webmill(&["verify", "-q", j]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "",
        "verify -q prints nothing when all is well"
    );
    let manifest = job.join("job.json");
    let good = std::fs::read_to_string(&manifest).unwrap();
    let v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let records = v["stages"]["import-graph"]["published"]["outputs"][0]["records"]
        .as_u64()
        .unwrap();
    let edited = good.replacen(
        &format!("\"records\": {records},"),
        &format!("\"records\": {},", records + 100),
        1,
    );
    assert_ne!(edited, good);
    std::fs::write(&manifest, &edited).unwrap();
    for args in [
        vec!["verify", j],
        vec!["stats", j],
        vec!["export", "docs", j],
    ] {
        let out = webmill(&args).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {err}");
        assert!(
            err.contains("job.json") && err.contains("checksum"),
            "{err}"
        );
    }
    // The same edit with the checksum made again: verify compares counts.
    let body = &edited[..edited.rfind(",\n  \"checksum\"").unwrap()];
    let resealed = format!(
        "{body},\n  \"checksum\": \"{:08x}\"\n}}",
        crc32c::crc32c(body.as_bytes())
    );
    std::fs::write(&manifest, resealed).unwrap();
    let out = webmill(&["verify", j]).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("docs.wm")
            && err.contains(&format!(
                "{} records where the file has {records}",
                records + 100
            )),
        "{err}"
    );
    assert!(
        !err.contains("at offset 0"),
        "a file-level fault has no offset: {err}"
    );
    std::fs::write(&manifest, good).unwrap();
    assert!(webmill(&["verify", "-q", j]).status().unwrap().success());
}

/// A WARC file with one good response and one record whose header is
/// damaged.
fn damaged_warc(path: &Path) {
    let http =
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>One</title><p>alpha beta</p>";
    let good = format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.example/\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:1>\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{http}\r\n\r\n",
        http.len()
    );
    let bad = "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.example/2\r\nContent-Length: twelve\r\n\r\nHTTP/1.1 200\r\n\r\n";
    std::fs::write(path, format!("{good}{bad}{good}")).unwrap();
}

/// Issue 24, finding 5 and 7: every error class exits with its documented
/// code — usage 2, job state 3, damaged data 4 (also bad input under
/// --strict, which exited 2), budget 5, OS error 6 (also a port in use,
/// which exited 1).
#[test]
fn every_error_class_exits_with_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let code = |c: &mut Command| {
        let out = c.output().unwrap();
        (out.status.code(), text(&out.stderr))
    };
    // Usage: a bad flag value, and a bad --tmp-dir.
    let (c, e) = code(&mut webmill(&["--mem", "1K", "stats", "nowhere"]));
    assert_eq!(c, Some(2), "{e}");
    let (c, e) = code(
        webmill(&["--tmp-dir", "/nonexistent/t", "import-graph", "--out"])
            .arg(dir.path().join("u"))
            .arg(dir.path().join("g.tsv")),
    );
    assert_eq!(c, Some(2), "{e}");
    // Damaged data: bad input under --strict.
    let warc = dir.path().join("d.warc");
    damaged_warc(&warc);
    let job = dir.path().join("strict");
    let (c, e) = code(
        webmill(&["-q", "--mem", "16M", "ingest", "--strict", "--out"])
            .arg(&job)
            .arg(&warc),
    );
    assert_eq!(c, Some(4), "--strict on bad input: {e}");
    assert!(e.contains("--strict"), "{e}");
    // Without --strict the same input is ingested, its bad record skipped.
    let job = dir.path().join("lenient");
    let (c, e) = code(
        webmill(&["-q", "--mem", "16M", "ingest", "--out"])
            .arg(&job)
            .arg(&warc),
    );
    assert_eq!(c, Some(0), "{e}");
    let j = job.to_str().unwrap();
    // Job state: a changed parameter without --force.
    assert_eq!(code(&mut webmill(&["-q", "pagerank", j])).0, Some(0));
    let (c, e) = code(&mut webmill(&["-q", "pagerank", "--damping", "0.5", j]));
    assert_eq!(c, Some(3), "{e}");
    // Budget.
    let (c, e) = code(&mut webmill(&[
        "--mem",
        "1M",
        "overlap",
        "--sample",
        "100000000",
        j,
        j,
    ]));
    assert_eq!(c, Some(5), "{e}");
    // OS error: a port in use.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let (c, e) = code(&mut webmill(&["serve", "--port", &port, j]));
    assert_eq!(c, Some(6), "{e}");
    assert!(e.contains(&port) && e.contains("in use"), "{e}");
    // OS error: an edge list that cannot be read.
    let (c, e) = code(
        webmill(&["-q", "import-graph", "--out"])
            .arg(dir.path().join("j3"))
            .arg(dir.path().join("missing.tsv")),
    );
    assert_eq!(c, Some(6), "{e}");
}

/// Issue 24, finding 1 for exports: `export -o FILE` while `pagerank
/// --force` rewrites the job gives the old job's table or the new one's,
/// whole, never a mix and never an error.
#[test]
fn an_export_during_a_rewrite_is_one_generation_whole() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv");
    write_snap(&input, &random_graph(14, 200_000), false);
    let job = dir.path().join("job");
    assert!(import_cmd(&job, &input).status().unwrap().success());
    let j = job.to_str().unwrap();
    let pagerank = |damping: &str| {
        let mut c = webmill(&[
            "-q",
            "--mem",
            "16M",
            "pagerank",
            "--force",
            "--damping",
            damping,
            j,
        ]);
        c.stdout(Stdio::null()).stderr(Stdio::null());
        c
    };
    assert!(pagerank("0.85").status().unwrap().success());
    let table = |name: &str| {
        let file = dir.path().join(name);
        let out = webmill(&["-q", "export", "ranks", j, "-o"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        std::fs::read(&file).unwrap()
    };
    let old = table("old.tsv");
    let mut rewrite = pagerank("0.5").spawn().unwrap();
    let mut during = Vec::new();
    while rewrite.try_wait().unwrap().is_none() {
        during.push(table(&format!("during{}.tsv", during.len())));
    }
    assert!(rewrite.wait().unwrap().success());
    let new = table("new.tsv");
    assert!(old != new);
    for (i, t) in during.iter().enumerate() {
        assert!(
            *t == old || *t == new,
            "export {i} during the rewrite mixed two generations"
        );
    }
}

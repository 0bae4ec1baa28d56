//! `webmill run` end to end: the whole job in one command, the same bytes as
//! the stage commands one by one, skipping and refusing on a second run,
//! edge lists, skipped input and `--strict`, the display off a terminal, and
//! Ctrl-C.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::*;

fn webmill(args: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("webmill"));
    c.args(args);
    c
}

fn output(mut c: Command) -> Output {
    c.stdin(Stdio::null()).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A generated site and its `BASE=DIR` input.
fn site(dir: &Path, pages: usize) -> String {
    let root = dir.join("site");
    write_site(&root, pages, 5);
    format!("http://site.example/={}", root.display())
}

fn run(job: &Path, input: &str, extra: &[&str]) -> Output {
    let mut c = webmill(&["run", "--mem", "16M", "--out"]);
    c.arg(job).args(extra).arg(input);
    output(c)
}

#[test]
fn a_site_in_one_command_then_again_with_everything_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let input = site(dir.path(), 300);
    let job = dir.path().join("job");
    let out = run(&job, &input, &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    // The summary a person reads.
    for want in [
        "6 stages (6 ran, 0 resumed, 0 skipped",
        "pages       300 fetched",
        "PageRank    converged",
        "      1. ",
        "dup minhash",
        "dup broder",
        "index       ",
        "skipped     3 input records (0 bad input",
        "2 other-file, 1 binary",
        "s1/binary.html",
        "Outputs in",
        "repository.wm",
        "index/lexicon.wm",
        "Next:",
        "webmill search",
        "webmill serve",
        "webmill top",
        "webmill export",
    ] {
        assert!(stdout.contains(want), "{want:?} missing from\n{stdout}");
    }
    // Off a terminal: plain log lines, one per stage event, in order.
    let order: Vec<usize> = [
        "ingest: running",
        "ingest: done",
        "resolve: done",
        "pagerank: done",
        "index: done",
        "dedup-broder: done",
        "dedup-minhash: done",
    ]
    .iter()
    .map(|w| {
        stderr
            .find(w)
            .unwrap_or_else(|| panic!("{w:?} missing from\n{stderr}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{stderr}");
    assert!(stderr.contains("[0:00:"), "{stderr}");
    let first = job_files(&job);

    let out = run(&job, &input, &[]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("6 stages (0 ran, 0 resumed, 6 skipped"),
        "{stdout}"
    );
    assert!(text(&out.stderr).contains("ingest: skipped: finished before"));
    // Issue 24: a stage that is skipped is not first announced as running.
    assert!(
        !text(&out.stderr).contains(": running"),
        "{}",
        text(&out.stderr)
    );
    assert!(job_files(&job) == first, "a skipped run changed the job");

    // -q: nothing at all.
    let out = run(&job, &input, &["-q"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

#[test]
fn run_writes_what_the_stage_commands_write() {
    let dir = tempfile::tempdir().unwrap();
    let input = site(dir.path(), 250);
    let all = dir.path().join("all");
    assert!(run(&all, &input, &["-q"]).status.success());
    let steps = dir.path().join("steps");
    let s = steps.to_str().unwrap();
    for args in [
        vec!["ingest", "-q", "--mem", "16M", "--out", s, &input],
        vec!["pagerank", "-q", "--mem", "16M", s],
        vec!["index", "-q", "--mem", "16M", s],
        vec![
            "dedup", "-q", "--mem", "16M", s, "--alg", "minhash", "--alg", "broder",
        ],
    ] {
        let out = output(webmill(&args));
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
    let (a, b) = (job_files(&all), job_files(&steps));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(&b[name] == bytes, "{name} differs");
    }
    // And `run` on the job the stage commands made skips every stage.
    let out = run(&steps, &input, &[]);
    assert!(
        text(&out.stdout).contains("(0 ran, 0 resumed, 6 skipped"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_changed_parameter_is_named_and_force_recomputes_only_what_it_touches() {
    let dir = tempfile::tempdir().unwrap();
    let input = site(dir.path(), 120);
    let job = dir.path().join("job");
    assert!(run(&job, &input, &["-q"]).status.success());
    let out = run(&job, &input, &["--damping", "0.9"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--damping was 0.85, now 0.9"), "{stderr}");
    assert!(stderr.contains("pagerank: stopped"), "{stderr}");
    assert!(!stderr.contains("resume with"), "{stderr}");
    // --force: pagerank again, and the near-duplicates that read its ranks.
    let out = run(&job, &input, &["--force", "--damping", "0.9"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("(3 ran, 0 resumed, 3 skipped"), "{stdout}");
}

#[test]
fn an_edge_list_runs_import_and_pagerank_only() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv");
    write_snap(&input, &random_graph(3, 5_000), false);
    let job = dir.path().join("job");
    let out = run(&job, input.to_str().unwrap(), &["--graph", "snap"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("2 stages (2 ran"), "{stdout}");
    assert!(stdout.contains("link graph"), "{stdout}");
    assert!(!stdout.contains("dup "), "{stdout}");
    // Near-duplicates of an edge list: refused before anything runs.
    let job2 = dir.path().join("job2");
    let out = run(
        &job2,
        input.to_str().unwrap(),
        &["--graph", "snap", "--dedup", "minhash"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no page text"),
        "{}",
        text(&out.stderr)
    );
    assert!(!job2.exists());
}

#[test]
fn skipped_input_is_listed_and_strict_makes_it_an_error() {
    let Some(data) = data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    let warcs: Vec<PathBuf> = ["iana.warc.gz", "example-bad.warc.gz.bad", "bad.arc"]
        .iter()
        .map(|f| data.join("warc").join(f))
        .collect();
    let mut c = webmill(&["run", "--mem", "16M", "--no-index", "--no-dedup", "--out"]);
    c.arg(&job).args(&warcs);
    let out = output(c);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("3 stages (3 ran"), "{stdout}");
    let line = stdout.lines().find(|l| l.contains("skipped     ")).unwrap();
    assert!(line.contains("input records"), "{stdout}");
    assert!(stdout.contains("bad.arc: "), "{stdout}");
    // The same job under --strict (and the same --mem: ingest's per-record
    // limits come from it): the skips are an error (data class).
    let mut c = webmill(&[
        "run",
        "--mem",
        "16M",
        "--strict",
        "--no-index",
        "--no-dedup",
        "--out",
    ]);
    c.arg(&job).args(&warcs);
    let out = output(c);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--strict"));
    // A fresh job under --strict fails at the first bad record (ingest
    // reports it as a usage error).
    let mut c = webmill(&["run", "-q", "--strict", "--out"]);
    c.arg(dir.path().join("strict")).args(&warcs);
    let out = output(c);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("bad.arc: offset 0"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn ctrl_c_says_what_was_interrupted_and_the_command_that_resumes_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = site(dir.path(), 3000);
    let job = dir.path().join("job");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("webmill"))
        .args(["run", "--mem", "1M", "--segment-records", "50", "--out"])
        .arg(&job)
        .arg(&input)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    // Interrupt once resolve runs (the handler is in place long before).
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!("run ended before resolve started:\n{seen}");
        }
        seen.push_str(&line);
        if line.contains("resolve: running") {
            break;
        }
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    if status.success() {
        eprintln!("SKIPPED: the run finished before SIGINT arrived");
        return;
    }
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    assert!(rest.contains("interrupted during resolve"), "{rest}");
    assert!(rest.contains("Resume with:"), "{rest}");
    assert!(
        rest.contains(&format!(
            "run --mem 1M --segment-records 50 --out {}",
            job.display()
        )),
        "{rest}"
    );
    // The command it printed finishes the job.
    let mut c = webmill(&["run", "--mem", "1M", "--segment-records", "50", "--out"]);
    c.arg(&job).arg(&input);
    let out = output(c);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("ingest: skipped: finished before"),
        "{}",
        text(&out.stderr)
    );
}

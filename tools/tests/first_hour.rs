//! What a new user met in their first hour, one regression test each (issue
//! 13): OS errors printed once, inputs that yield nothing, bad `--out` and
//! `--tmp-dir`, a refusal naming the changed flag, `inspect`'s stage order,
//! `stats`' grouped figures, `top`'s help, `--tol`'s default, `--plot` in the
//! README, read-only views beside a writer and on a read-only job, and the
//! near-duplicate plot with few points; and issue 24's: `run`'s display on
//! a real terminal (tmux), `run --force` after a failed run, a graph-only
//! job's summary, the near-duplicate methods' thresholds in words.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::*;

fn webmill(args: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("webmill"));
    c.args(args).stdin(Stdio::null());
    c
}

fn output(mut c: Command) -> Output {
    c.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A finished job of a small generated site (every stage of `run`).
fn site_job(dir: &Path) -> PathBuf {
    let site = dir.join("site");
    write_site(&site, 300, 3);
    let job = dir.join("job");
    let mut c = webmill(&["run", "-q", "--mem", "16M", "--out"]);
    c.arg(&job)
        .arg(format!("http://site.example/={}", site.display()));
    let out = output(c);
    assert!(out.status.success(), "{}", text(&out.stderr));
    job
}

#[test]
fn an_os_error_is_printed_once_with_what_was_asked() {
    let out = output(webmill(&["inspect", "/nonexistent/x.wm"]));
    assert_eq!(out.status.code(), Some(6));
    let e = text(&out.stderr);
    assert_eq!(e.matches("No such file or directory").count(), 1, "{e}");
    assert!(!e.contains("os error"), "{e}");
    for cmd in ["ingest", "run"] {
        let out = output(webmill(&[
            cmd,
            "--out",
            "/tmp/never-made",
            "/nonexistent/input",
        ]));
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let e = text(&out.stderr);
        assert!(
            e.contains(
                "/nonexistent/input: input not found (an INPUT is a WARC, ARC, WET or WAT file"
            ),
            "{cmd}: {e}"
        );
        assert!(!Path::new("/tmp/never-made").exists());
    }
}

#[test]
fn inputs_that_yield_nothing_are_errors_saying_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let readme = dir.path().join("README.md");
    std::fs::write(&readme, "# A project\n\nNot a WARC file.\n").unwrap();
    for (i, (cmd, input, want)) in [
        ("ingest", &empty, "found 0 WARC records, 0 HTML files"),
        ("run", &empty, "found 0 WARC records, 0 HTML files"),
        ("ingest", &readme, "not a WARC record"),
        ("run", &readme, "not a WARC record"),
    ]
    .into_iter()
    .enumerate()
    {
        let job = dir.path().join(format!("job{i}"));
        let mut c = webmill(&[cmd, "--out"]);
        c.arg(&job).arg(input);
        let out = output(c);
        let e = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd} {}: {e}", input.display());
        assert!(e.contains("nothing usable in"), "{e}");
        assert!(e.contains("expected WARC or ARC files"), "{e}");
        assert!(e.contains(want), "{e}");
        // Asked again (even with --force), the same answer, not a bug report.
        let mut c = webmill(&[cmd, "--force", "--out"]);
        c.arg(&job).arg(input);
        let again = output(c);
        assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    }
    let Some(data) = data_dir() else { return };
    let warc = data.join("warc/example.warc.gz");
    for (cmd, extra) in [("import-graph", vec![]), ("run", vec!["--graph", "snap"])] {
        let mut c = webmill(&[cmd, "-q"]);
        c.args(&extra)
            .arg("--out")
            .arg(dir.path().join(format!("g-{cmd}")))
            .arg(&warc);
        let out = output(c);
        let e = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {e}");
        assert!(e.contains("expected edge lines"), "{e}");
        assert!(
            e.contains("this is a WARC file: give it to `webmill ingest`"),
            "{e}"
        );
    }
}

#[test]
fn out_into_a_non_job_directory_and_a_missing_tmp_dir_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv");
    std::fs::write(&input, "1\t2\n2\t3\n").unwrap();
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("notes.txt"), "mine").unwrap();
    let mut c = webmill(&["run", "--graph", "snap", "--out"]);
    c.arg(&full).arg(&input);
    let out = output(c);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is not a webmill job"));
    assert_eq!(std::fs::read_dir(&full).unwrap().count(), 1);
    let mut c = webmill(&[
        "run",
        "--graph",
        "snap",
        "--tmp-dir",
        "/nonexistent/tmp",
        "--out",
    ]);
    c.arg(dir.path().join("job")).arg(&input);
    let out = output(c);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--tmp-dir directory does not exist"));
    assert!(!Path::new("/nonexistent/tmp").exists());
}

#[test]
fn a_refusal_names_the_changed_flag() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv");
    write_snap(&input, &random_graph(1, 500), false);
    let job = dir.path().join("job");
    let mut c = webmill(&["import-graph", "-q", "--out"]);
    c.arg(&job).arg(&input);
    assert!(output(c).status.success());
    let mut c = webmill(&["pagerank", "-q"]);
    c.arg(&job);
    assert!(output(c).status.success());
    let mut c = webmill(&["pagerank", "--damping", "0.9", "--max-iter", "50"]);
    c.arg(&job);
    let out = output(c);
    assert_eq!(out.status.code(), Some(3));
    let e = text(&out.stderr);
    assert!(
        e.contains("--damping was 0.85, now 0.9; --max-iter was 200, now 50"),
        "{e}"
    );
    assert!(!e.contains('{'), "a parameter set printed as JSON: {e}");
}

#[test]
fn inspect_stats_top_and_help_read_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let job = site_job(dir.path());
    let j = job.to_str().unwrap();

    // inspect lists the stages in pipeline order.
    let inspect = text(&output(webmill(&["inspect", j])).stdout);
    let at: Vec<usize> = [
        "stage ingest:",
        "stage resolve:",
        "stage pagerank:",
        "stage index:",
        "stage dedup-broder:",
        "stage dedup-minhash:",
    ]
    .iter()
    .map(|s| inspect.find(s).unwrap_or_else(|| panic!("{s} missing")))
    .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{inspect}");

    // stats: groups, digit separators, units; --json for machines.
    let out = output(webmill(&["stats", "--bootstrap", "0", j]));
    let stats = text(&out.stdout);
    for want in [
        "Input\n",
        "Pages\n",
        "Link graph\n",
        "Degree distributions",
        "Resources\n",
    ] {
        assert!(stats.contains(want), "{want:?} missing from\n{stats}");
    }
    let json: serde_json::Value = serde_json::from_slice(
        &output(webmill(&["stats", "--json", "--bootstrap", "0", j])).stdout,
    )
    .unwrap();
    let links = json["links"].as_u64().unwrap();
    assert!(links >= 1000);
    assert!(
        stats.contains(&format!(
            "links                      {}\n",
            with_separators(links)
        )),
        "{stats}"
    );
    let html = json["html_bytes"].as_u64().unwrap();
    assert!(
        stats.contains(&format!("iB ({} bytes)", with_separators(html))),
        "{stats}"
    );

    // top: its help names the columns it prints.
    let help = text(&output(webmill(&["top", "--help"])).stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("`rank docid url in_degree out_degree crawled`"),
        "{help}"
    );
    let top = text(&output(webmill(&["top", "-k", "3", j])).stdout);
    assert_eq!(
        top.lines().next(),
        Some("# rank\tdocid\turl\tin_degree\tout_degree\tcrawled")
    );
    assert_eq!(top.lines().count(), 4);
    // Issue 24: uncrawled link targets are marked, and --crawled leaves
    // them out.
    let all = text(&output(webmill(&["top", "-k", "40", j])).stdout);
    let crawled = |row: &&str| row.ends_with("\tyes");
    assert!(all
        .lines()
        .skip(1)
        .all(|r| r.ends_with("\tyes") || r.ends_with("\tno")));
    let only = text(&output(webmill(&["top", "--crawled", "-k", "40", j])).stdout);
    let rows: Vec<&str> = only.lines().skip(1).collect();
    assert_eq!(rows.len(), 40);
    assert!(rows.iter().all(crawled), "{only}");
    let kept: Vec<&str> = all.lines().skip(1).filter(crawled).collect();
    assert_eq!(
        rows[..kept.len()],
        kept[..],
        "the same order, uncrawled pages left out"
    );

    // --tol's default as written.
    for cmd in ["pagerank", "run"] {
        let help = text(&output(webmill(&[cmd, "--help"])).stdout);
        assert!(help.contains("[default: 1e-10]"), "{cmd}: {help}");
    }
    // --plot documented in the README with its argument.
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    assert!(
        readme.contains("--plot FILE.svg"),
        "README lacks --plot FILE.svg"
    );
}

/// `n` with a comma every three digits.
fn with_separators(n: u64) -> String {
    let s = n.to_string();
    let mut o = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            o.push(',');
        }
        o.push(c);
    }
    o
}

/// Paths, sizes, permissions and modification times of everything under
/// `dir`, directories included (a file created and removed again changes
/// its directory's time).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, u32, std::time::SystemTime)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let m = std::fs::metadata(&d).unwrap();
        out.insert(
            d.clone(),
            (0, m.permissions().mode(), m.modified().unwrap()),
        );
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else {
                out.insert(p, (m.len(), m.permissions().mode(), m.modified().unwrap()));
            }
        }
    }
    out
}

/// The read-only views on `job`: each succeeds and leaves every byte and
/// time of the job as it was.
fn views_leave_the_job_alone(job: &Path, scratch: &Path) {
    let j = job.to_str().unwrap();
    let parquet = scratch.join("docs.parquet");
    let p = parquet.to_str().unwrap();
    let before = snapshot(job);
    for args in [
        vec!["stats", "--bootstrap", "0", j],
        vec!["top", j],
        vec!["inspect", j],
        vec!["verify", j],
        vec!["export", "docs", j],
        vec!["export", "text", j],
        vec!["export", "postings", j],
        vec!["export", "pairs", "--urls", j],
        vec!["export", "docs", "--format", "parquet", "-o", p, j],
    ] {
        let out = output(webmill(&args));
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert!(snapshot(job) == before, "{args:?} changed the job");
    }
}

#[test]
fn read_only_views_work_beside_a_writer_and_on_a_read_only_job() {
    let dir = tempfile::tempdir().unwrap();
    let job = site_job(dir.path());
    // Another process holds the job's write lock (this test, as a writer
    // would): views do not care, writers are told.
    let lock = std::fs::File::options()
        .write(true)
        .open(job.join(".lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let mut c = webmill(&["pagerank", "--force"]);
    c.arg(&job);
    let out = output(c);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("another webmill process is writing this job"));
    views_leave_the_job_alone(&job, dir.path());
    drop(lock);

    // A read-only copy (the tests run as root, who may write anyway: the
    // snapshot shows that nothing did).
    let copy = dir.path().join("copy");
    let status = Command::new("cp")
        .arg("-a")
        .arg(&job)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let status = Command::new("chmod")
        .args(["-R", "a-w"])
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    views_leave_the_job_alone(&copy, dir.path());
    let _ = Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(&copy)
        .status();
}

#[test]
fn the_near_duplicate_plot_says_when_there_is_too_little_to_plot() {
    let dir = tempfile::tempdir().unwrap();
    // Three pairs of identical pages among distinct ones: every page with a
    // near-duplicate has exactly one, so the distribution is a single point.
    let mut pages = BTreeMap::new();
    let mut rng = Rng(9);
    for i in 0..40 {
        let words: Vec<String> = (0..120).map(|_| format!("w{}", rng.below(5000))).collect();
        if i < 3 {
            pages.insert(format!("copy{i}.html"), words.clone());
        }
        pages.insert(format!("p{i}.html"), words);
    }
    let site = dir.path().join("site");
    write_word_pages(&site, &pages);
    let job = dir.path().join("job");
    let mut c = webmill(&[
        "run",
        "-q",
        "--mem",
        "16M",
        "--no-index",
        "--dedup",
        "exact",
        "--out",
    ]);
    c.arg(&job)
        .arg(format!("http://dup.example/={}", site.display()));
    let out = output(c);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(job.join("dedup-exact-per-page.svg")).unwrap();
    assert!(
        svg.contains("Too little to plot: 1 distinct value"),
        "{svg}"
    );
    assert!(
        svg.contains("near-duplicates of a page = 1: 6 pages"),
        "{svg}"
    );
}

#[test]
fn a_directory_of_warc_files_is_read_and_one_with_pages_too_says_so() {
    let Some(data) = data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    // As a Common Crawl download: a directory of *.warc.gz.
    let crawl = dir.path().join("crawl");
    std::fs::create_dir(&crawl).unwrap();
    for f in ["iana.warc.gz", "example.warc.gz"] {
        std::fs::copy(data.join("warc").join(f), crawl.join(f)).unwrap();
    }
    let mut c = webmill(&["run", "-q", "--mem", "32M", "--out"]);
    c.arg(dir.path().join("job")).arg(&crawl);
    let out = output(c);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Pages and an archive in one directory: both read, and said.
    write_site(&crawl, 20, 1);
    let mut c = webmill(&["ingest", "--out"]);
    c.arg(dir.path().join("both")).arg(&crawl);
    let out = output(c);
    let e = text(&out.stderr);
    assert!(out.status.success(), "{e}");
    assert!(
        e.contains("2 archives (WARC/ARC/WET/WAT) or document sets (JSONL, Parquet) and")
            && e.contains("both are read"),
        "{e}"
    );
}

/// A tmux server of its own (`-L`), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// A session running `command` in a 140×60 terminal, or `None` without
    /// tmux.
    fn start(command: &str) -> Option<Tmux> {
        let socket = format!("webmill-test-{}", std::process::id());
        let ok = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "new-session",
                "-d",
                "-x",
                "140",
                "-y",
                "60",
                command,
            ])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("tmux is not installed: the terminal test is skipped");
            return None;
        }
        Some(Tmux { socket })
    }

    /// The screen and its scrollback, as a person would see it.
    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-J", "-S", "-300"])
            .output()
            .unwrap();
        text(&out.stdout)
    }

    /// Waits until the screen shows `marker`; returns the screen.
    fn wait_for(&self, marker: &str) -> String {
        let start = std::time::Instant::now();
        loop {
            let s = self.screen();
            if s.contains(marker) {
                return s;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(300),
                "{marker:?} never appeared:\n{s}"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// Issue 24, finding 9: on a terminal, `run`'s display ended garbled — the
/// stage lines frozen mid-run above the summary, the commands under
/// `Next:` erased, and a re-run of a finished job left "0 of 6 stages
/// done" on screen. Seen through tmux as a person sees it.
#[test]
fn run_ends_cleanly_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    write_site(&site, 300, 3);
    let job = dir.path().join("job");
    let cmd = format!(
        "{} run --mem 16M --out {} http://site.example/={}",
        assert_cmd::cargo::cargo_bin("webmill").display(),
        job.display(),
        site.display()
    );
    let script = dir.path().join("twice.sh");
    std::fs::write(
        &script,
        format!("{cmd}; echo FIRST-EXIT=$?; {cmd}; echo SECOND-EXIT=$?; sleep 600\n"),
    )
    .unwrap();
    let Some(tmux) = Tmux::start(&format!("sh {}", script.display())) else {
        return;
    };
    let screen = tmux.wait_for("SECOND-EXIT=");
    let runs: Vec<&str> = screen.split("FIRST-EXIT=").collect();
    assert_eq!(runs.len(), 2, "{screen}");
    assert!(runs[1].starts_with('0'), "{screen}");
    for (i, run) in runs.iter().enumerate() {
        // The display's last state: every stage done, nothing running.
        assert!(run.contains("6 of 6 stages done"), "run {i}:\n{run}");
        assert!(
            !run.contains("running"),
            "a stage line froze as running:\n{run}"
        );
        assert!(!run.contains("0 of 6 stages done"), "run {i}:\n{run}");
        assert!(!run.contains("waiting"), "run {i}:\n{run}");
        // The summary's last lines are intact, each command on its own
        // line, and what follows starts on a line of its own.
        let next = run
            .split("Next:")
            .nth(1)
            .unwrap_or_else(|| panic!("no Next: in run {i}:\n{run}"));
        let lines: Vec<&str> = next.lines().skip(1).take(5).collect();
        for (line, cmd) in lines
            .iter()
            .zip(["search", "serve", "top", "stats", "export"])
        {
            assert!(
                line.trim_start().starts_with(&format!(
                    "{} {cmd}",
                    assert_cmd::cargo::cargo_bin("webmill").display()
                )),
                "run {i}: {line:?} in\n{run}"
            );
        }
    }
    assert!(screen.contains("\nSECOND-EXIT=0"), "{screen}");
    assert!(runs[1].contains("skipped: finished before"), "{}", runs[1]);
}

/// Issue 24, finding 8: `run --force` did not recover a run that failed
/// with other inputs ("was interrupted while running with other parameters
/// (--inputs was [{\"base\":…}] …); pass --force", with --force passed), and
/// the message showed JSON. Now the refusal names the inputs as given and
/// --force starts the stage over.
#[test]
fn run_force_recovers_a_run_that_failed_with_other_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    write_site(&a, 60, 1);
    write_site(&b, 80, 2);
    let job = dir.path().join("job");
    let run = |input: &Path, extra: &[&str]| {
        let mut c = webmill(&["run", "--mem", "16M", "--out"]);
        c.arg(&job)
            .args(extra)
            .arg(format!("http://site.example/={}", input.display()));
        c
    };
    // The first run fails in ingest (an abort at a failpoint).
    let mut c = run(&a, &[]);
    c.env("WEBMILL_FAILPOINT", "ingest.segment");
    assert!(!output(c).status.success());
    let out = output(run(&b, &[]));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("the inputs were") && err.contains("--force"),
        "{err}"
    );
    assert!(
        !err.contains('{') && !err.contains("\"base\""),
        "JSON in the message: {err}"
    );
    let out = output(run(&b, &["--force"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("is complete"));
}

/// Issue 24, finding 10: a graph-only job's summary offered `search`,
/// which cannot work on an edge list; it offers what works on a graph.
#[test]
fn a_graph_jobs_summary_offers_what_works_on_a_graph() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.tsv");
    write_snap(&g, &random_graph(4, 2000), false);
    let job = dir.path().join("job");
    let mut c = webmill(&["run", "--mem", "16M", "--graph", "snap", "--out"]);
    c.arg(&job).arg(&g);
    let out = output(c);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let next = text(&out.stdout);
    let next = next.split("Next:").nth(1).expect("a Next: section");
    assert!(!next.contains(" search "), "{next}");
    for cmd in [" serve ", " top ", " bowtie ", " stats ", " export ranks "] {
        assert!(next.contains(cmd), "{cmd} missing from {next}");
    }
    // Each offered command works on the job.
    let j = job.to_str().unwrap();
    for args in [vec!["top", j], vec!["bowtie", j], vec!["stats", j]] {
        let out = output(webmill(&args));
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
}

/// Issue 24, finding 11: the near-duplicate methods reported very
/// different numbers of pairs on the same pages with nothing saying why;
/// the summary says each one's rule and threshold in words and points to
/// `dedup-eval`. `stats --plot FILE` says it wrote the file.
#[test]
fn the_summary_says_what_each_near_duplicate_method_counts() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    write_site(&site, 150, 5);
    let job = dir.path().join("job");
    let mut c = webmill(&["run", "--mem", "16M", "--out"]);
    c.arg(&job)
        .arg(format!("http://site.example/={}", site.display()));
    let out = output(c);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for want in [
        "pairs are pages whose 4-word shingle sets are estimated at Jaccard resemblance ≥ ",
        "pairs are pages sharing a megashingle",
        "dedup-eval",
    ] {
        assert!(stdout.contains(want), "{want:?} missing from\n{stdout}");
    }
    let plot = dir.path().join("degrees.svg");
    let out = output(webmill(&[
        "stats",
        job.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]));
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains(&format!("wrote {}", plot.display())),
        "{}",
        text(&out.stderr)
    );
}

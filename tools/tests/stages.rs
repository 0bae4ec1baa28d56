//! The stage layer from the command line, one test per defect it fixed: a
//! forced re-run killed (or out of disk) leaves the previous results published
//! and valid; jobs whose directories share a name share a `--tmp-dir`; a
//! missing `--tmp-dir` or a non-job `--out` directory is refused; exit codes
//! follow the error's class.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::*;

const GRAPH_FILES: [&str; 3] = ["docs.wm", "edges.wm", "edges-t.wm"];

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("webmill")
}

fn webmill(args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

fn run(mut c: Command) -> Output {
    c.output().unwrap()
}

fn import(job: &Path, input: &Path, extra: &[&str]) -> Command {
    let mut c = webmill(&["-q", "--mem", "2M", "import-graph", "--out"]);
    c.arg(job).args(extra).arg(input);
    c
}

fn graph_files(job: &Path) -> Vec<Vec<u8>> {
    GRAPH_FILES
        .iter()
        .map(|f| std::fs::read(job.join(f)).unwrap())
        .collect()
}

fn verify_ok(job: &Path) {
    let out = run(webmill(&["verify", job.to_str().unwrap()]));
    assert!(
        out.status.success(),
        "verify failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two graphs and the files a fresh import of each gives.
fn two_graphs(dir: &Path) -> (PathBuf, PathBuf, Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let g1 = dir.join("g1.tsv");
    let g2 = dir.join("g2.tsv.gz");
    write_snap(&g1, &random_graph(1, 20_000), false);
    write_snap(&g2, &random_graph(2, 200_000), true);
    let (r1, r2) = (dir.join("ref1"), dir.join("ref2"));
    assert!(run(import(&r1, &g1, &[])).status.success());
    assert!(run(import(&r2, &g2, &[])).status.success());
    (g1, g2, graph_files(&r1), graph_files(&r2))
}

/// A forced re-import aborted at points before its commit leaves the first
/// import's files, valid; aborted right after the commit, the next command
/// finishes the publication and the job holds the new import's files.
#[test]
fn a_killed_forced_rerun_leaves_the_previous_results() {
    let dir = tempfile::tempdir().unwrap();
    let (g1, g2, want1, want2) = two_graphs(dir.path());
    for (point, after_commit) in [
        ("sort.run_written:2", false),
        ("sort.merge_written:1", false),
        ("job.publish", false),
        ("job.commit", true),
    ] {
        let job = dir
            .path()
            .join(format!("job-{}", point.replace([':', '.'], "-")));
        assert!(run(import(&job, &g1, &[])).status.success());
        let mut c = import(&job, &g2, &["--force"]);
        c.env("WEBMILL_FAILPOINT", point);
        let out = run(c);
        assert!(!out.status.success(), "failpoint {point} was not reached");
        if after_commit {
            // Any writer finishes the move; readers refuse until then.
            let out = run(webmill(&["stats", "--no-degrees", job.to_str().unwrap()]));
            assert!(
                !out.status.success(),
                "{point}: a reader saw a half-moved job"
            );
            let out = run(import(&job, &g2, &[]));
            assert!(
                out.status.success(),
                "{point}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(graph_files(&job) == want2, "{point}: not the new import");
        } else {
            verify_ok(&job);
            assert!(
                graph_files(&job) == want1,
                "{point}: the old results were touched"
            );
            // The forced run resumes and publishes the new import.
            let out = run(import(&job, &g2, &["--force"]));
            assert!(out.status.success());
            assert!(graph_files(&job) == want2, "{point}: not the new import");
        }
        verify_ok(&job);
    }
}

/// On a full disk a forced re-import fails with an OS error (exit code 6)
/// naming the file, and the job still holds the previous import, valid.
/// Needs root (it mounts a small tmpfs); skips with a message otherwise.
#[test]
fn a_forced_rerun_on_a_full_disk_keeps_the_previous_results() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small-disk");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=3m", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIPPED: cannot mount a tmpfs (needs root): the full-disk test did not run");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(mnt.clone());
    let small = dir.path().join("small.tsv");
    write_snap(&small, &random_graph(3, 5_000), false);
    let big = dir.path().join("big.tsv.gz");
    write_snap(&big, &random_graph(4, 1_500_000), true);
    let job = mnt.join("job");
    assert!(run(import(&job, &small, &[])).status.success());
    let before = graph_files(&job);
    let out = run(import(&job, &big, &["--force"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    verify_ok(&job);
    assert!(
        graph_files(&job) == before,
        "the previous import was touched"
    );
    // The small import is still the job's, and a new command on it works.
    let out = run(webmill(&["stats", "--no-degrees", job.to_str().unwrap()]));
    assert!(out.status.success());
}

/// Two jobs named `job` in different directories, imported at the same time
/// with one shared `--tmp-dir`, do not meet there.
#[test]
fn same_named_jobs_share_a_tmp_dir() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.tsv.gz");
    write_snap(&g, &random_graph(6, 300_000), true);
    let reference = dir.path().join("reference");
    assert!(run(import(&reference, &g, &[])).status.success());
    let want = graph_files(&reference);
    let shared = dir.path().join("shared-tmp");
    std::fs::create_dir(&shared).unwrap();
    let tmp = shared.to_str().unwrap();
    let children: Vec<_> = ["a", "b"]
        .iter()
        .map(|d| {
            let job = dir.path().join(d).join("job");
            import(&job, &g, &["--tmp-dir", tmp]).spawn().unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for d in ["a", "b"] {
        assert!(graph_files(&dir.path().join(d).join("job")) == want, "{d}");
    }
}

/// A `--tmp-dir` that does not exist and an `--out` directory holding other
/// files are usage errors (exit code 2), and nothing is created.
#[test]
fn bad_tmp_dir_and_out_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.tsv");
    write_snap(&g, &random_graph(7, 1000), false);
    let missing = dir.path().join("no-such-dir");
    let out = run(import(
        &dir.path().join("job"),
        &g,
        &["--tmp-dir", missing.to_str().unwrap()],
    ));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    assert!(!missing.exists());
    let other = dir.path().join("photos");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("cat.jpg"), b"not a job").unwrap();
    let out = run(import(&other, &g, &[]));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a webmill job"));
    assert!(!other.join("job.json").exists());
}

/// Exit codes by class: a job refusal is 3, a damaged file 4, a missing input
/// file 6.
#[test]
fn exit_codes_follow_the_error_class() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.tsv");
    write_snap(&g, &random_graph(8, 1000), false);
    let job = dir.path().join("job");
    assert!(run(import(&job, &g, &[])).status.success());
    let out = run(import(&job, &g, &["--keep-self-loops"]));
    assert_eq!(out.status.code(), Some(3), "changed parameters");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--keep-self-loops was false, now true"));
    let out = run(import(
        &dir.path().join("job2"),
        &dir.path().join("nope.tsv"),
        &[],
    ));
    assert_eq!(out.status.code(), Some(6), "missing input");
    let edges = job.join("edges.wm");
    let mut bytes = std::fs::read(&edges).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0xff;
    std::fs::write(&edges, bytes).unwrap();
    let out = run(webmill(&["verify", edges.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(4), "damaged file");
    let out = run(webmill(&["verify", job.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(4), "damaged job");
}

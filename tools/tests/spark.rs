//! Issue 23: a job through Spark (`python -m webmill_spark run` on a
//! standalone cluster of two workers, started by `local-cluster start`) is
//! the job `webmill run` makes on one machine: every output file
//! byte-identical, the same search answers, the broken input in the skip
//! report — and so it stays when one worker's executor is SIGKILLed in the
//! middle of the job. Skips with a printed reason when Java or pyspark is
//! missing (`.ci/run` installs both).

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn webmill_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("webmill")
}

/// Why the Spark path cannot be tried here, if it cannot.
fn missing() -> Option<String> {
    if Command::new("java").arg("-version").output().is_err() {
        return Some("no java on the PATH".into());
    }
    let py = Command::new("python3")
        .args(["-c", "import pyspark"])
        .output();
    match py {
        Ok(o) if o.status.success() => None,
        _ => Some("python3 cannot import pyspark (pip install pyspark)".into()),
    }
}

fn python(state: &Path) -> Command {
    let mut c = Command::new("python3");
    c.env("PYTHONPATH", workspace_root().join("spark"))
        .env("WEBMILL_SPARK_STATE", state)
        .stdin(Stdio::null());
    c
}

/// Stops the cluster however the test ends.
struct Cluster {
    state: PathBuf,
    master: String,
}

impl Cluster {
    fn start(state: &Path, workers: usize) -> Cluster {
        let out = python(state)
            .args(["-m", "webmill_spark", "local-cluster", "start"])
            .args(["--workers", &workers.to_string(), "--memory", "1g"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "local-cluster start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let master = stdout.lines().last().unwrap_or_default().to_string();
        assert!(master.starts_with("spark://127.0.0.1:"), "{stdout}");
        Cluster {
            state: state.to_path_buf(),
            master,
        }
    }

    /// The pids of the executors the workers of this cluster launched.
    fn executors(&self) -> Vec<u32> {
        let dir = std::fs::read_dir(&self.state).unwrap();
        let mut cluster_dirs: Vec<PathBuf> = dir.flatten().map(|e| e.path()).collect();
        cluster_dirs.retain(|d| d.join("cluster.json").exists());
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            // An executor's working directory is under its worker's, which
            // is under this cluster's state directory.
            if cmd.contains("CoarseGrainedExecutorBackend")
                && cluster_dirs
                    .iter()
                    .any(|d| cmd.contains(&*d.to_string_lossy()) || cwd_under(pid, d))
            {
                pids.push(pid);
            }
        }
        pids
    }
}

fn cwd_under(pid: u32, dir: &Path) -> bool {
    std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir))
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = python(&self.state)
            .args(["-m", "webmill_spark", "local-cluster", "stop"])
            .args(["--master", &self.master])
            .output();
    }
}

fn search_json(job: &Path, query: &str) -> String {
    let out = webmill()
        .args(["search", "--json", "-k", "10"])
        .arg(job)
        .arg(query)
        .output()
        .unwrap();
    succeeded(&out);
    // Times differ run to run; the docIDs, scores and order must not.
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.contains("\"seconds\""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_job_through_spark_is_the_job_of_one_machine_even_when_an_executor_dies() {
    if let Some(why) = missing() {
        eprintln!("SKIPPED: the Spark path cannot run here: {why}");
        return;
    }
    let Some(data) = data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    write_site(&site, 120, 23);
    // Several real WARC files, one of them broken, and an HTML directory.
    let broken = dir.path().join("broken.warc.gz");
    // A download cut short: the first 2,000 bytes of a gzipped WARC.
    let whole = std::fs::read(data.join("warc/dupes.warc.gz")).unwrap();
    std::fs::write(&broken, &whole[..2000]).unwrap();
    let mut inputs: Vec<String> = ["iana.warc.gz", "dupes.warc.gz", "example.warc.gz"]
        .iter()
        .map(|f| data.join("warc").join(f).display().to_string())
        .collect();
    inputs.push(broken.display().to_string());
    inputs.push(format!("http://site.example/={}", site.display()));
    let flags = ["--mem", "64M"];

    let local = dir.path().join("local");
    succeeded(
        &webmill()
            .args(flags)
            .args(["--quiet", "run", "--segment-records", "40", "--out"])
            .arg(&local)
            .args(&inputs)
            .output()
            .unwrap(),
    );

    let state = dir.path().join("state");
    let cluster = Cluster::start(&state, 2);
    let spark = dir.path().join("spark");
    let mut run = python(&state)
        .args(["-m", "webmill_spark", "run", "--master", &cluster.master])
        .arg("--out")
        .arg(&spark)
        .arg("--webmill")
        .arg(webmill_bin())
        .args(flags)
        .args(["--segment-records", "40"])
        .args(&inputs)
        // Each task waits long enough for an executor to be killed under it.
        .env("WEBMILL_SPARK_TASK_DELAY", "4")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // SIGKILL one executor as soon as one runs tasks.
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut killed = None;
    while killed.is_none() && Instant::now() < deadline {
        if let Some(&pid) = cluster.executors().first() {
            // Let it take its first tasks.
            std::thread::sleep(Duration::from_secs(2));
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            killed = Some(pid);
        }
        if run.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "webmill_spark run failed:\n{stderr}");
    assert!(killed.is_some(), "no executor was seen to kill:\n{stderr}");
    assert!(stderr.contains("ingest on Spark: "), "{stderr}");

    // Every output file byte-identical.
    let (a, b) = (job_files(&local), job_files(&spark));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    assert!(a.len() > 15, "{:?}", a.keys());
    for (name, x) in &a {
        if x != &b[name] {
            let dump = |job: &Path| {
                let o = webmill_ok([OsStr::new("dump"), job.join(name).as_os_str()]);
                String::from_utf8_lossy(&o.stdout).into_owned()
            };
            let (da, db) = (dump(&local), dump(&spark));
            let first = da.lines().zip(db.lines()).find(|(x, y)| x != y);
            panic!("{name} differs between the local and the Spark job; first different line: {first:?}");
        }
    }
    // The same answers, and the broken input in the skip report.
    for q in [
        "internet assigned numbers",
        "example domain",
        "word3 word7",
        "iana",
    ] {
        assert_eq!(search_json(&local, q), search_json(&spark, q), "{q}");
    }
    let skips = webmill_ok([OsStr::new("export"), OsStr::new("skips"), spark.as_os_str()]);
    let skips = String::from_utf8_lossy(&skips.stdout);
    assert!(skips.contains("broken.warc.gz"), "{skips}");
    // The segments directory beside the job is gone.
    assert!(!dir.path().join("spark.segments").exists());
}

//! `webmill-scale`: every stage's cost against the corpus size (issue 14).
//!
//! For each `N` of `--pages`, it generates a web-like corpus of `N` pages
//! (`webmill-gen --format warc`: power-law in- and out-degrees, host
//! locality, Zipf vocabulary, planted near-duplicate clusters; one gzip
//! member per record, as Common Crawl ships them), then runs every stage on
//! it under one fixed `--mem`, each command as a child process:
//!
//! ```text
//! webmill ingest --out JOB corpus.warc.gz      stages ingest, resolve
//! webmill pagerank JOB                         stage pagerank
//! webmill index JOB                            stage index
//! webmill dedup JOB --alg minhash              stage dedup-minhash
//! webmill dedup JOB --alg broder               stage dedup-broder
//! ```
//!
//! # What it measures, and how
//!
//! Per stage:
//!
//! * **wall** — the stage's own `seconds` from the job manifest.
//! * **CPU** — user + system time of the child. A command's total is exact
//!   (this process's `cutime + cstime` from `/proc/self/stat` before and
//!   after waiting for it); when one command runs several stages, the total
//!   is split between them by sampling the child's `/proc/PID/stat` every
//!   `--interval-ms` and charging each delta to the stage the manifest says
//!   is running (the last stage takes the remainder).
//! * **pages/s** — `N` over the wall time (every stage's unit is the page;
//!   the stage's own record count is printed beside it).
//! * **peak RSS** — measured by the process itself (the manifest's
//!   `peak_rss`, reset at each stage start), against the allowance
//!   `budget × 1.1 + 100 MiB`.
//! * **disk** — peak temporary: the largest size (allocated blocks) of the
//!   job's `tmp/` and `.staging/` seen while the stage ran; final: the bytes
//!   of the files it published.
//!
//! A size stopped part-way (the machine went down, or ^C) resumes where it
//! stopped when the same command is run again: each command's figures go to
//! `DIR/N/stages.jsonl` as soon as it finishes and commands already measured
//! are not run again; the interrupted command resumes its job (webmill's own
//! resume), and its row is marked `(resumed)`, since its times then cover
//! only the last attempt.
//!
//! Each `N` appends one JSON line to `--results`; `--report` prints the
//! tables of a results file: per `N` and stage, then each stage's growth
//! (the exponent `k` of `cost ∝ N^k` between consecutive sizes, next to the
//! `N log N` exponent over the same step, and CPU µs per page).
//!
//! ```text
//! webmill-scale --dir /tmp/scale --pages 100000,1000000 --mem 64M --results scale.jsonl
//! webmill-scale --report scale.jsonl
//! ```

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Run every stage on generated web-like corpora of several sizes and print
/// wall and CPU time, pages/s, peak RSS against the allowance and disk use.
#[derive(Parser, Debug)]
#[command(name = "webmill-scale", version, max_term_width = 100)]
struct Args {
    /// Working directory: corpora and jobs go to DIR/N/
    #[arg(long, value_name = "DIR", required_unless_present = "report")]
    dir: Option<PathBuf>,
    /// Corpus sizes in pages, comma-separated
    #[arg(long, value_delimiter = ',', default_value = "100000,1000000")]
    pages: Vec<u64>,
    /// Memory budget of every stage (K, M, G suffixes)
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    mem: u64,
    /// Threads of every stage [default: all cores]
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Links per page (mean)
    #[arg(long, default_value_t = 10)]
    arcs_per_page: u64,
    /// Near-duplicate algorithms run by `dedup`
    #[arg(long, value_delimiter = ',', default_value = "minhash,broder")]
    algs: Vec<String>,
    /// Keep each job directory (by default it is deleted once measured; the
    /// corpus is kept and reused)
    #[arg(long)]
    keep: bool,
    /// Append each size's figures as a JSON line to this file
    #[arg(long, value_name = "FILE", default_value = "scale.jsonl")]
    results: PathBuf,
    /// Only print the tables of a results file
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Sampling interval of CPU time, stage and temporary disk
    #[arg(long, default_value_t = 200)]
    interval_ms: u64,
    /// Directory of the `webmill` and `webmill-gen` binaries [default: this
    /// binary's]
    #[arg(long, value_name = "DIR")]
    bin: Option<PathBuf>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    webmill::resources::parse_bytes(s).map_err(|e| e.to_string())
}

/// One stage at one size.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct StageCost {
    stage: String,
    wall: f64,
    cpu: f64,
    records: u64,
    peak_rss: u64,
    peak_tmp: u64,
    final_bytes: u64,
    /// The stage's own figures (the manifest's `extra`).
    #[serde(default)]
    extra: Value,
    /// The command was interrupted (this program was stopped) and resumed:
    /// wall and CPU cover only the attempt that finished.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    resumed: bool,
}

/// A stage measured at one size, kept in `DIR/N/stages.jsonl` as soon as
/// its command finishes, so that a stopped measurement resumes with the
/// commands not yet measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Measured {
    mem: u64,
    threads: Option<usize>,
    cost: StageCost,
}

/// Every stage at one size.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct SizeCost {
    pages: u64,
    mem: u64,
    threads: usize,
    corpus_bytes: u64,
    generate_seconds: f64,
    job_bytes: u64,
    stages: Vec<StageCost>,
}

fn allowance(mem: u64) -> u64 {
    mem + mem / 10 + (100 << 20)
}

/// Clock ticks per second of `/proc/*/stat` times (`USER_HZ`, 100 on Linux).
const TICKS: f64 = 100.0;

/// Fields of a `/proc/*/stat` line after the command name, 0-based from
/// field 3 (`state`).
fn stat_fields(path: &Path) -> Option<Vec<u64>> {
    let text = fs::read_to_string(path).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    Some(
        rest.split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect(),
    )
}

/// CPU seconds of process `pid` (user + system), if it is still there.
fn cpu_of(pid: u32) -> Option<f64> {
    let f = stat_fields(&PathBuf::from(format!("/proc/{pid}/stat")))?;
    Some((f.get(11)? + f.get(12)?) as f64 / TICKS)
}

/// CPU seconds of this process's waited-for children (`cutime + cstime`).
fn children_cpu() -> f64 {
    stat_fields(Path::new("/proc/self/stat"))
        .and_then(|f| Some((f.get(13)? + f.get(14)?) as f64 / TICKS))
        .unwrap_or(0.0)
}

/// Bytes allocated under `path` (0 if it is not there).
fn disk_use(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = fs::symlink_metadata(path) else {
        return 0;
    };
    let mut total = meta.blocks() * 512;
    if meta.is_dir() {
        if let Ok(entries) = fs::read_dir(path) {
            for e in entries.flatten() {
                total += disk_use(&e.path());
            }
        }
    }
    total
}

fn manifest(job: &Path) -> Option<Value> {
    serde_json::from_slice(&fs::read(job.join("job.json")).ok()?).ok()
}

/// The stage the manifest says is running.
fn running(m: &Value) -> Option<String> {
    m["stages"]
        .as_object()?
        .iter()
        .find(|(_, r)| !r["running"].is_null())
        .map(|(name, _)| name.clone())
}

/// Runs `webmill ARGS` on `job`, sampling it; returns the costs of `stages`
/// (in the order they run).
fn run_command(
    args: &Args,
    webmill: &Path,
    job: &Path,
    cmd: &[String],
    stages: &[String],
    log: &Path,
) -> anyhow::Result<Vec<StageCost>> {
    let mut c = Command::new(webmill);
    c.arg("--mem").arg(args.mem.to_string()).arg("--quiet");
    if let Some(t) = args.threads {
        c.arg("--threads").arg(t.to_string());
    }
    c.args(cmd);
    let err = File::create(log).with_context(|| format!("{}", log.display()))?;
    let cpu_before = children_cpu();
    let mut child = c
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .with_context(|| format!("cannot start {}", webmill.display()))?;
    let mut cpu: BTreeMap<String, f64> = BTreeMap::new();
    let mut tmp: BTreeMap<String, u64> = BTreeMap::new();
    let mut last_cpu = 0.0;
    let mut stage = stages[0].clone();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if let Some(now) = cpu_of(child.id()) {
            *cpu.entry(stage.clone()).or_default() += now - last_cpu;
            last_cpu = now;
        }
        if let Some(s) = manifest(job).as_ref().and_then(running) {
            stage = s;
        }
        let t = disk_use(&job.join("tmp")) + disk_use(&job.join(".staging"));
        let peak = tmp.entry(stage.clone()).or_default();
        *peak = (*peak).max(t);
        std::thread::sleep(Duration::from_millis(args.interval_ms));
    };
    if !status.success() {
        bail!(
            "`webmill {}` failed ({status}); see {}",
            cmd.join(" "),
            log.display()
        );
    }
    let total = children_cpu() - cpu_before;
    let m = manifest(job).context("no job.json")?;
    let mut out = Vec::new();
    let mut charged = 0.0;
    for (i, s) in stages.iter().enumerate() {
        let f = &m["stages"][s]["published"]["figures"];
        if f.is_null() {
            bail!("stage {s} did not publish (see {})", log.display());
        }
        let cpu = if i + 1 == stages.len() {
            (total - charged).max(0.0)
        } else {
            cpu.get(s).copied().unwrap_or(0.0)
        };
        charged += cpu;
        out.push(StageCost {
            stage: s.clone(),
            wall: f["seconds"].as_f64().unwrap_or(0.0),
            cpu,
            records: f["records"].as_u64().unwrap_or(0),
            peak_rss: f["peak_rss"].as_u64().unwrap_or(0),
            peak_tmp: tmp.get(s).copied().unwrap_or(0),
            final_bytes: f["bytes"].as_u64().unwrap_or(0),
            extra: f["extra"].clone(),
            resumed: false,
        });
    }
    Ok(out)
}

/// Generates the corpus of `n` pages unless it is already there.
fn corpus(args: &Args, gen: &Path, dir: &Path, n: u64) -> anyhow::Result<(PathBuf, f64)> {
    let path = dir.join("corpus.warc.gz");
    if path.exists() {
        return Ok((path, 0.0));
    }
    let partial = dir.join("corpus.warc.gz.partial");
    let started = Instant::now();
    let mut c = Command::new(gen);
    c.args(["--format", "warc", "--gzip", "--quiet"])
        .arg("--nodes")
        .arg(n.to_string())
        .arg("--arcs")
        .arg((n * args.arcs_per_page).to_string())
        .arg("-o")
        .arg(&partial);
    if let Some(t) = args.threads {
        c.arg("--threads").arg(t.to_string());
    }
    let status = c
        .status()
        .with_context(|| format!("cannot start {}", gen.display()))?;
    if !status.success() {
        bail!("webmill-gen failed ({status})");
    }
    fs::rename(&partial, &path)?;
    Ok((path, started.elapsed().as_secs_f64()))
}

fn measure(args: &Args, dir: &Path, bin: &Path, n: u64) -> anyhow::Result<SizeCost> {
    let dir = dir.join(n.to_string());
    fs::create_dir_all(&dir)?;
    let (warc, generate_seconds) = corpus(args, &bin.join("webmill-gen"), &dir, n)?;
    let job = dir.join("job");
    let done = measured(args, &dir, &job)?;
    let started_path = dir.join(STARTED);
    let webmill = bin.join("webmill");
    let j = job.display().to_string();
    let mut commands: Vec<(Vec<String>, Vec<String>)> = vec![
        (
            vec![
                "ingest".into(),
                "--out".into(),
                j.clone(),
                warc.display().to_string(),
            ],
            vec!["ingest".into(), "resolve".into()],
        ),
        (vec!["pagerank".into(), j.clone()], vec!["pagerank".into()]),
        (vec!["index".into(), j.clone()], vec!["index".into()]),
    ];
    // One command per algorithm: each pays its own sketch pass, as a user
    // running it alone would (run together they share one).
    for a in &args.algs {
        commands.push((
            vec!["dedup".into(), j.clone(), "--alg".into(), a.clone()],
            vec![format!("dedup-{a}")],
        ));
    }
    let mut stages = Vec::new();
    for (cmd, names) in &commands {
        let known: Vec<StageCost> = names
            .iter()
            .filter_map(|s| done.iter().find(|c| &c.stage == s).cloned())
            .collect();
        if known.len() == names.len() {
            eprintln!("webmill-scale: N={n}: {} measured before", names.join(", "));
            stages.extend(known);
            continue;
        }
        let label = names.join("+");
        let resumed = fs::read_to_string(&started_path).is_ok_and(|s| s == label);
        fs::write(&started_path, &label)?;
        eprintln!(
            "webmill-scale: N={n}: webmill {}{}",
            cmd.join(" "),
            if resumed { " (resumed)" } else { "" }
        );
        let log = dir.join(format!("{label}.log"));
        let costs = run_command(args, &webmill, &job, cmd, names, &log)?;
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(MEASURED))?;
        for mut cost in costs {
            cost.resumed = resumed;
            let m = Measured {
                mem: args.mem,
                threads: args.threads,
                cost: cost.clone(),
            };
            writeln!(f, "{}", serde_json::to_string(&m)?)?;
            stages.push(cost);
        }
        f.sync_all()?;
    }
    let _ = fs::remove_file(&started_path);
    let cost = SizeCost {
        pages: n,
        mem: args.mem,
        threads: args
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |p| p.get())),
        corpus_bytes: fs::metadata(&warc)?.len(),
        generate_seconds,
        job_bytes: disk_use(&job),
        stages,
    };
    if !args.keep {
        fs::remove_dir_all(&job)?;
    }
    fs::remove_file(dir.join(MEASURED))?;
    Ok(cost)
}

/// The file of stages measured so far at one size (see [`Measured`]).
const MEASURED: &str = "stages.jsonl";

/// The file naming the command running at one size, so that a stopped one
/// is known to be resumed.
const STARTED: &str = "started";

/// Stages measured by an earlier, stopped attempt at this size under the
/// same `--mem` and `--threads`, whose job is still there; otherwise starts
/// afresh (removes the job and the list).
fn measured(args: &Args, dir: &Path, job: &Path) -> anyhow::Result<Vec<StageCost>> {
    let path = dir.join(MEASURED);
    let earlier: Vec<Measured> = fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .map_while(|l| serde_json::from_str(l).ok())
        .collect();
    let usable = job.exists()
        && earlier
            .iter()
            .all(|m| m.mem == args.mem && m.threads == args.threads);
    if usable {
        return Ok(earlier.into_iter().map(|m| m.cost).collect());
    }
    if job.exists() {
        fs::remove_dir_all(job)?;
    }
    let _ = fs::remove_file(&path);
    let _ = fs::remove_file(dir.join(STARTED));
    Ok(Vec::new())
}

fn mib(b: u64) -> String {
    format!("{:.0}", b as f64 / f64::from(1 << 20))
}

fn print_size(c: &SizeCost) {
    println!(
        "\nN = {} pages: corpus {} MiB (gzip WARC, {:.0}× --mem {} MiB), job {} MiB; allowance {} MiB",
        c.pages,
        mib(c.corpus_bytes),
        c.corpus_bytes as f64 / c.mem as f64,
        mib(c.mem),
        mib(c.job_bytes),
        mib(allowance(c.mem))
    );
    println!("| stage | wall s | CPU s | pages/s | records | peak RSS MiB | within | peak tmp MiB | final MiB |");
    println!("|---|---:|---:|---:|---:|---:|---|---:|---:|");
    for s in &c.stages {
        println!(
            "| {}{} | {:.1} | {:.1} | {:.0} | {} | {} | {} | {} | {} |",
            s.stage,
            if s.resumed { " (resumed)" } else { "" },
            s.wall,
            s.cpu,
            c.pages as f64 / s.wall.max(1e-9),
            s.records,
            mib(s.peak_rss),
            if s.peak_rss <= allowance(c.mem) {
                "yes"
            } else {
                "NO"
            },
            mib(s.peak_tmp),
            mib(s.final_bytes)
        );
    }
    let (w, u): (f64, f64) = c
        .stages
        .iter()
        .fold((0.0, 0.0), |(w, u), s| (w + s.wall, u + s.cpu));
    println!(
        "| all | {w:.1} | {u:.1} | {:.0} | | | | | |",
        c.pages as f64 / w.max(1e-9)
    );
}

/// The growth table: per stage, the exponent of wall and CPU between
/// consecutive sizes, next to N log N's.
fn print_growth(sizes: &[SizeCost]) {
    if sizes.len() < 2 {
        return;
    }
    println!(
        "\nGrowth: k in cost ∝ N^k between consecutive sizes (N log N: k_nlogn); CPU µs per page"
    );
    let mut header = "| stage |".to_string();
    let mut rule = "|---|".to_string();
    for w in sizes.windows(2) {
        header += &format!(" k wall {}→{} | k CPU |", w[0].pages, w[1].pages);
        rule += "---:|---:|";
    }
    for s in sizes {
        header += &format!(" µs/page @{} |", s.pages);
        rule += "---:|";
    }
    println!("{header}\n{rule}");
    let nlogn = |a: f64, b: f64| (b * b.ln() / (a * a.ln())).ln() / (b / a).ln();
    let mut row = "| N log N |".to_string();
    for w in sizes.windows(2) {
        row += &format!(
            " {:.2} | {:.2} |",
            nlogn(w[0].pages as f64, w[1].pages as f64),
            nlogn(w[0].pages as f64, w[1].pages as f64)
        );
    }
    println!("{row}{}", " |".repeat(sizes.len()));
    for s in &sizes[0].stages {
        let of = |c: &SizeCost| c.stages.iter().find(|x| x.stage == s.stage).cloned();
        let mut row = format!("| {} |", s.stage);
        for w in sizes.windows(2) {
            match (of(&w[0]), of(&w[1])) {
                (Some(a), Some(b)) => {
                    let r = (w[1].pages as f64 / w[0].pages as f64).ln();
                    row += &format!(
                        " {:.2} | {:.2} |",
                        (b.wall / a.wall.max(1e-9)).ln() / r,
                        (b.cpu / a.cpu.max(1e-9)).ln() / r
                    );
                }
                _ => row += " | |",
            }
        }
        for c in sizes {
            match of(c) {
                Some(x) => row += &format!(" {:.1} |", x.cpu * 1e6 / c.pages as f64),
                None => row += " |",
            }
        }
        println!("{row}");
    }
}

fn report(path: &Path) -> anyhow::Result<()> {
    let text = fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let mut sizes: Vec<SizeCost> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    // The last measurement of each size.
    sizes.reverse();
    sizes.sort_by_key(|c| c.pages);
    sizes.dedup_by_key(|c| c.pages);
    for c in &sizes {
        print_size(c);
    }
    print_growth(&sizes);
    Ok(())
}

fn run(args: &Args) -> anyhow::Result<()> {
    if let Some(r) = &args.report {
        return report(r);
    }
    let dir = args.dir.clone().context("--dir is needed")?;
    let bin = match &args.bin {
        Some(b) => b.clone(),
        None => std::env::current_exe()?
            .parent()
            .context("no directory of this binary")?
            .to_path_buf(),
    };
    for &n in &args.pages {
        let cost = measure(args, &dir, &bin, n)?;
        print_size(&cost);
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&args.results)
            .with_context(|| format!("{}", args.results.display()))?;
        writeln!(f, "{}", serde_json::to_string(&cost)?)?;
    }
    report(&args.results)
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("webmill-scale: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

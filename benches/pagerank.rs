//! Benchmark: PageRank in its three modes (memory, blocked, sort-merge) next to
//! webgraph-rs (`webgraph-rank pagerank`, parallel Gauss–Seidel on a BVGraph),
//! at equal threads (2 by default).
//!
//! Data: the real LAW graphs in `../shared/data/graphs` — cnr-2000 (325,557
//! nodes, 3,216,152 arcs with its self-loops) and uk-2007-05@100000 (100,000
//! nodes, 3,050,615 arcs) — imported with their self-loops so that the values
//! match the reference vectors `*.pagerank.txt.gz`; and a web-like graph made by
//! `webmill-gen` (`tools/src/bin/webmill-gen.rs`; 10M nodes and 100M arcs by
//! default, seed 1). Each graph is imported once into `--work` (kept between
//! runs); webgraph-rs gets the forward BVGraph copied from `../shared/data`
//! (built with `webgraph from arcs` from the same edge list for the generated
//! graph), its transpose and their Elias–Fano offsets, made with the `webgraph`
//! command in `--work/webgraph`.
//!
//! Every run is a child process (this bench re-executed with `--case`, or
//! `webgraph-rank` under `/usr/bin/time -v`), so that its peak RSS is its own,
//! run with a fixed number of iterations (tolerance 1e-300): `--iters` (100) on
//! the LAW graphs, `--gen-iters` (20) on the generated one, and at most
//! `--sort-merge-iters` (4) in sort-merge mode, which is two orders of
//! magnitude slower per iteration under these budgets. Budgets: memory mode
//! gets its vectors and in-link CSR plus 32 MiB; blocked and sort-merge get a
//! quarter of one rank vector (n·8/4 bytes, at least 1 MiB), so one vector is
//! four times the budget.
//!
//! Prints, per graph and engine, medians over `--runs` runs of: wall seconds
//! at K iterations; ns per arc per iteration including the setup (wall /
//! (arcs × K), the setup being reading inputs, building the CSR, partitioning
//! arcs, and at the end publishing the vector); ns per arc per iteration
//! without it; the setup seconds; peak RSS (VmHWM of the child; webgraph-rs'
//! from `/usr/bin/time -v`) against the budget, also less what a child holds
//! before any work. The iterations are timed inside the child, by a progress
//! reporter that notes when PageRank's iteration counter moves (set to 0 once
//! the engine is built, to t after iteration t): no setup noise gets in.
//! webgraph-rs is timed from outside, runs of K and K/2 iterations, the
//! difference divided by K/2 (setup cancels out); its own log's ms/iteration
//! is printed beside. Then: whether the modes gave the same bits (memory mode
//! is run once more at sort-merge's iteration count for that), the L1
//! distances between webmill's vector, webgraph-rs' and the reference after K
//! iterations, and the two checks "memory mode no slower per iteration than
//! webgraph-rs" and "blocked mode within 3× of memory mode".
//!
//! Figures (branch `prblocked`, 2 threads, a 2-core machine shared with other
//! builds: load average 6–7 during the run, so every engine ran ~2× slower than
//! on a quiet machine, webgraph-rs ~3×; medians of 3 runs,
//! `cargo bench --bench pagerank -- --work /work/bench-data/pagerank --runs 3
//! --graphs cnr,uk`), ns/arc/iteration without setup, setup s, peak RSS / budget:
//!
//! ```text
//!                     memory               blocked              sort-merge (4 it.)     webgraph-rs
//! cnr-2000            6.34  0.23 s 32.5/57M 13.17 0.15 s 15.4/1M  1319  0.10 s 14.3/1M  36.15  15.6M
//! uk-2007-05@100000   4.58  0.19 s 22.7/48M  9.15 0.13 s 10.9/1M  1780  0.09 s 13.2/1M  21.77  12.3M
//! ```
//!
//! The generated graph (10M nodes, 100.3M arcs; main, quiet machine, medians of
//! 3, 20 iterations, `--runs 3 --graphs gen --modes memory,blocked`): memory
//! 6.12 ns/arc/it., 4.8 s setup, 774 MiB at a 797 MiB budget; blocked 11.16,
//! 4.1 s setup, 25.3 MiB at 19.1 MiB (the vector is 4.2× the budget);
//! webgraph-rs 27.78, 280 MiB.
//!
//! Blocked/memory: 2.08× (cnr), 1.99× (uk), 1.82× (gen); before the
//! part files (sorted partitions, per-arc varint decoding) it was 4.2× and 5.1×
//! with 4–6 s of setup (120 s on gen). Same bits in every mode. L1 to the
//! reference after 100 iterations: 2.2e-9 (cnr), 2.5e-9 (uk) — power iteration
//! needs 105/106 iterations for 1e-9; webgraph-rs' Gauss–Seidel gets 4e-14.
//!
//! ```text
//! cargo build --release -p webmill-cli --bin webmill-gen   # for the generated graph
//! cargo bench --bench pagerank -- --work /big/disk/bench-pagerank   # ~5 GB for 100M arcs
//! cargo bench --bench pagerank -- --runs 1 --gen-arcs 10000000 --graphs cnr,gen
//! ```
//!
//! Flags: `--runs N` (3), `--work DIR` (`target/bench-pagerank`), `--graphs
//! cnr,uk,gen`, `--modes memory,blocked,sort-merge`, `--iters K` (100),
//! `--gen-iters K` (20), `--sort-merge-iters K` (4), `--gen-arcs M`
//! (100000000), `--gen-nodes N` (M/10), `--gen-seed S` (1), `--gen-bin PATH`
//! (`webmill-gen` next to this bench's target directory), `--webgraph-bin DIR`
//! (`/work/webgraph-cli/bin`), `--no-webgraph`, `--threads T` (2),
//! `--import-mem BYTES` (2G).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use webmill::graph::import::{import_graph, GraphFormat, ImportOptions};
use webmill::graph::EdgeFile;
use webmill::job::{Job, JobFile, Outcome, Settings};
use webmill::progress::{Reporter, Task, Unit};
use webmill::rank::{memory_mode_bytes, pagerank, Mode, PageRankOptions, RankVector};
use webmill::resources::{current_rss, format_bytes, parse_bytes, peak_rss};

const MIB: u64 = 1 << 20;

fn data_dir() -> PathBuf {
    std::env::var_os("WEBMILL_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

fn parse_mode(name: &str) -> Mode {
    match name {
        "memory" => Mode::Memory,
        "blocked" => Mode::Blocked,
        "sort-merge" => Mode::SortMerge,
        other => panic!("unknown mode {other:?} (memory, blocked, sort-merge)"),
    }
}

/// A progress reporter that notes when PageRank's iteration counter moves:
/// position 0 is set once the engine is built (CSR, partitions), position t
/// when iteration t is done. Everything else is ignored.
#[derive(Default)]
struct IterationClock {
    marks: Marks,
}

/// (counter position, when) pairs.
type Marks = Arc<Mutex<Vec<(u64, Instant)>>>;

struct ClockTask(Option<Marks>);

impl Task for ClockTask {
    fn inc(&self, _: u64) {}
    fn set_position(&self, pos: u64) {
        if let Some(m) = &self.0 {
            m.lock().unwrap().push((pos, Instant::now()));
        }
    }
    fn set_message(&self, _: String) {}
}

impl Reporter for IterationClock {
    fn task(&self, label: &str, _: Option<u64>, _: Unit) -> Box<dyn Task> {
        let ours = label.starts_with("pagerank: iterating (");
        Box::new(ClockTask(ours.then(|| Arc::clone(&self.marks))))
    }
    fn note(&self, _: &str) {}
}

/// Child: PageRank on the imported job for `iters` iterations under `mem`;
/// prints `RESULT secs peak_rss iterations crc32c-of-the-vector start_rss
/// setup_secs iterating_secs`.
fn run_case(job_dir: &Path, mode: Mode, mem: u64, iters: u32) {
    // What the process holds before any work (binary, libraries, stacks).
    let base = current_rss().unwrap_or(0);
    let mut job = Job::open(job_dir, false).expect("job");
    let clock = Arc::new(IterationClock::default());
    let mut s = Settings::new(mem);
    s.force = true;
    s.reporter = clock.clone();
    let opts = PageRankOptions {
        tol: 1e-300,
        max_iter: iters,
        mode,
        ..PageRankOptions::default()
    };
    let t = Instant::now();
    let outcome = pagerank(&mut job, &opts, &s).expect("pagerank");
    let secs = t.elapsed().as_secs_f64();
    let rss = peak_rss().unwrap_or(0);
    let Outcome::Done { figures, .. } = outcome else {
        panic!("a forced run was skipped");
    };
    assert_eq!(figures.mode, mode, "ran in another mode");
    assert_eq!(figures.iterations, iters, "iterations");
    let marks = clock.marks.lock().unwrap().clone();
    let at = |pos: u64| {
        marks
            .iter()
            .find(|(p, _)| *p == pos)
            .map(|(_, i)| i.duration_since(t).as_secs_f64())
    };
    let (setup, iterating) = match (at(0), at(iters as u64)) {
        (Some(a), Some(b)) => (a, b - a),
        _ => (f64::NAN, f64::NAN),
    };
    let ranks = RankVector::open(job.file(JobFile::Ranks).unwrap())
        .and_then(|v| v.load())
        .expect("ranks");
    let bytes: Vec<u8> = ranks.iter().flat_map(|x| x.to_le_bytes()).collect();
    println!(
        "RESULT {secs} {rss} {iters} {:08x} {base} {setup} {iterating}",
        crc32c::crc32c(&bytes)
    );
}

/// One graph of the benchmark.
struct Graph {
    name: String,
    snap: PathBuf,
    keep_self_loops: bool,
    /// Forward BVGraph basename, if one comes with the data.
    bvgraph: Option<PathBuf>,
    reference: Option<PathBuf>,
    iters: u32,
}

/// Measurements of one engine on one graph, one value per run.
#[derive(Default)]
struct Samples {
    /// Wall seconds at K iterations.
    secs: Vec<f64>,
    /// Wall seconds at K/2 iterations (engines timed from outside only).
    half_secs: Vec<f64>,
    /// Seconds per iteration, timed inside (webmill).
    per_iter: Vec<f64>,
    /// Seconds before the first iteration, timed inside (webmill).
    setup: Vec<f64>,
    /// Seconds per iteration from the engine's own log (webgraph-rs).
    logged: Vec<f64>,
    /// Peak RSS in bytes.
    rss: Vec<f64>,
}

/// Medians of one engine on one graph.
struct Row {
    engine: String,
    iters: u32,
    budget: Option<u64>,
    secs_k: f64,
    per_iter_total: f64,
    per_iter: f64,
    setup: f64,
    rss: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

fn l1(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::NAN;
    }
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum()
}

fn read_reference(path: &Path) -> Vec<f64> {
    let f = std::fs::File::open(path).expect("reference");
    BufReader::new(flate2::read::MultiGzDecoder::new(f))
        .lines()
        .map(|l| l.expect("reference line").trim().parse().expect("a number"))
        .collect()
}

/// A vector written by `webgraph-rank --fmt java`: big-endian f64 (or f32).
fn read_java_vector(path: &Path, n: u64) -> Vec<f64> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .expect("webgraph-rank output");
    if bytes.len() as u64 == 8 * n {
        bytes
            .chunks_exact(8)
            .map(|b| f64::from_be_bytes(b.try_into().unwrap()))
            .collect()
    } else if bytes.len() as u64 == 4 * n {
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_be_bytes(b.try_into().unwrap()) as f64)
            .collect()
    } else {
        panic!("{}: {} bytes for {n} values", path.display(), bytes.len());
    }
}

fn run_checked(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn properties_arcs(basename: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(basename.with_extension("properties")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("arcs="))
        .and_then(|v| v.trim().parse().ok())
}

/// Builds what `webgraph-rank pagerank` needs in `dir`: the transpose of the
/// graph with Elias–Fano offsets. Returns its basename. Kept between runs.
fn prepare_webgraph(bin: &Path, g: &Graph, n: u64, m: u64, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("webgraph dir");
    let fwd = dir.join(&g.name);
    let t = dir.join(format!("{}-t", g.name));
    if t.with_extension("ef").exists() && properties_arcs(&t) == Some(m) {
        return t;
    }
    let env = |c: &mut Command| {
        c.env("RUST_MIN_STACK", "8388608").env("TMPDIR", dir);
    };
    let started = Instant::now();
    match &g.bvgraph {
        Some(src) => {
            for ext in ["graph", "properties"] {
                let to = fwd.with_extension(ext);
                let _ = std::fs::remove_file(&to);
                std::fs::copy(src.with_extension(ext), &to).expect("copy BVGraph");
                let mut p = std::fs::metadata(&to).unwrap().permissions();
                #[allow(clippy::permissions_set_readonly_false)]
                p.set_readonly(false);
                std::fs::set_permissions(&to, p).unwrap();
            }
        }
        None => {
            let input = std::fs::File::open(&g.snap).expect("edge list");
            let mut c = Command::new(bin.join("webgraph"));
            c.args(["from", "arcs", "--num-nodes", &n.to_string()])
                .args(["--num-arcs", &m.to_string()])
                .arg(&fwd)
                .stdin(Stdio::from(input));
            env(&mut c);
            run_checked(&mut c, "webgraph from arcs");
        }
    }
    let mut c = Command::new(bin.join("webgraph"));
    c.args(["build", "ef"]).arg(&fwd);
    env(&mut c);
    run_checked(&mut c, "webgraph build ef");
    let mut c = Command::new(bin.join("webgraph"));
    c.args(["transform", "transpose"]).arg(&fwd).arg(&t);
    env(&mut c);
    run_checked(&mut c, "webgraph transform transpose");
    let mut c = Command::new(bin.join("webgraph"));
    c.args(["build", "ef"]).arg(&t);
    env(&mut c);
    run_checked(&mut c, "webgraph build ef (transpose)");
    println!(
        "  webgraph-rs files for {} built in {:.1} s ({} arcs in the BVGraph, {} in webmill's import)",
        g.name,
        started.elapsed().as_secs_f64(),
        properties_arcs(&fwd).map_or("?".into(), |a| a.to_string()),
        m
    );
    t
}

/// What a `webgraph-rank pagerank` run gave.
struct WebgraphResult {
    secs: f64,
    /// Peak RSS in bytes, if `/usr/bin/time` told.
    rss: Option<f64>,
    /// Seconds per iteration as webgraph-rank logs them (its own clock
    /// around the iterations), if found.
    logged_iter: Option<f64>,
}

/// Seconds per iteration from webgraph-rank's last log line of the form
/// `Elapsed: 3s [100 iterations, 25.02 iterations/s, 39.97 ms/iteration]`.
fn logged_seconds_per_iteration(log: &str) -> Option<f64> {
    let line = log.lines().rev().find(|l| l.contains("/iteration]"))?;
    let head = &line[..line.find("/iteration]")?];
    let (value, unit) = head.rsplit(", ").next()?.trim().split_once(' ')?;
    let scale = match unit {
        "ns" => 1e-9,
        "µs" | "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" => 60.0,
        _ => return None,
    };
    value.parse::<f64>().ok().map(|v| v * scale)
}

/// Runs `webgraph-rank pagerank` for `iters` iterations.
fn run_webgraph(
    bin: &Path,
    transpose: &Path,
    out: &Path,
    iters: u32,
    threads: usize,
) -> WebgraphResult {
    let timer = Path::new("/usr/bin/time");
    let rank = bin.join("webgraph-rank");
    let mut c = if timer.exists() {
        let mut c = Command::new(timer);
        c.arg("-v").arg(&rank);
        c
    } else {
        Command::new(&rank)
    };
    c.args(["pagerank", "--fmt", "java", "--threshold", "1e-300"])
        .args(["--max-iter", &iters.to_string()])
        .args(["--num-threads", &threads.to_string()])
        .args(["--log-interval", "1h"])
        .arg("--output")
        .arg(out)
        .arg(transpose)
        .env("RUST_MIN_STACK", "8388608")
        .env("RUST_LOG", "info");
    let t = Instant::now();
    let o = c.output().expect("webgraph-rank");
    let secs = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "webgraph-rank failed:\n{err}");
    let rss = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes):"))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|k| k * 1024.0);
    WebgraphResult {
        secs,
        rss,
        logged_iter: logged_seconds_per_iteration(&err),
    }
}

struct Config {
    runs: usize,
    work: PathBuf,
    modes: Vec<String>,
    threads: usize,
    webgraph: Option<PathBuf>,
    import_mem: u64,
    /// Iterations of sort-merge mode (at most the graph's).
    sort_merge_iters: u32,
}

fn import(g: &Graph, job_dir: &Path, mem: u64) -> (u64, u64) {
    let mut job = Job::open(job_dir, true).expect("job");
    let opts = ImportOptions {
        format: GraphFormat::Snap,
        inputs: vec![g.snap.clone()],
        keep_self_loops: g.keep_self_loops,
    };
    let t = Instant::now();
    import_graph(&mut job, &opts, &Settings::new(mem)).expect("import");
    let secs = t.elapsed().as_secs_f64();
    let stats = EdgeFile::open(job.file(JobFile::Edges).unwrap())
        .expect("edges")
        .stats()
        .clone();
    if secs > 1.0 {
        println!("  imported {} in {secs:.1} s", g.name);
    }
    (stats.nodes, stats.arcs)
}

/// What a `--case` child reports.
struct CaseResult {
    secs: f64,
    rss: f64,
    hash: String,
    start_rss: f64,
    setup: f64,
    iterating: f64,
}

/// Runs one `--case` child.
fn run_child(
    exe: &Path,
    job_dir: &Path,
    mode: &str,
    budget: u64,
    iters: u32,
    threads: usize,
) -> CaseResult {
    let out = Command::new(exe)
        .args(["--case", &job_dir.to_string_lossy(), mode])
        .args([budget.to_string(), iters.to_string()])
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .expect("child");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| {
            panic!(
                "{mode} case failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let f: Vec<&str> = line.split(' ').collect();
    let num = |i: usize| -> f64 { f[i].parse().expect("a number") };
    CaseResult {
        secs: num(0),
        rss: num(1),
        hash: f[3].to_string(),
        start_rss: num(4),
        setup: num(5),
        iterating: num(6),
    }
}

fn bench_graph(g: &Graph, cfg: &Config) -> Vec<Row> {
    let exe = std::env::current_exe().expect("exe");
    let job_dir = cfg.work.join("jobs").join(&g.name);
    let (n, m) = import(g, &job_dir, cfg.import_mem);
    let (vectors, csr) = memory_mode_bytes(n, m, false);
    let k = g.iters;
    let half = (k / 2).max(1);
    println!(
        "\n{}: {n} nodes, {m} arcs; {k} iterations (and {half} for the setup), {} runs, {} threads",
        g.name, cfg.runs, cfg.threads
    );
    let quarter = (n * 8 / 4).max(MIB);
    let budgets: BTreeMap<&str, u64> = [
        ("memory", (vectors + csr).div_ceil(MIB) * MIB + 32 * MIB),
        ("blocked", quarter),
        ("sort-merge", quarter),
    ]
    .into_iter()
    .collect();
    let wg = cfg.webgraph.as_ref().map(|bin| {
        (
            bin,
            prepare_webgraph(bin, g, n, m, &cfg.work.join("webgraph")),
        )
    });
    let wg_out = cfg.work.join("webgraph").join(format!("{}.ranks", g.name));

    let iters_of = |engine: &str| {
        if engine == "sort-merge" {
            cfg.sort_merge_iters.clamp(1, k)
        } else {
            k
        }
    };
    let mut samples: BTreeMap<String, Samples> = BTreeMap::new();
    // hashes[iterations][mode] = crc32c of the vector
    let mut hashes: BTreeMap<u32, BTreeMap<String, String>> = BTreeMap::new();
    let mut ours: Option<Vec<f64>> = None;
    let mut base = Vec::new();
    for run in 0..cfg.runs {
        for mode in &cfg.modes {
            let km = iters_of(mode);
            let r = run_child(
                &exe,
                &job_dir,
                mode,
                budgets[mode.as_str()],
                km,
                cfg.threads,
            );
            base.push(r.start_rss);
            let e = samples.entry(mode.clone()).or_default();
            e.secs.push(r.secs);
            e.rss.push(r.rss);
            e.per_iter.push(r.iterating / km as f64);
            e.setup.push(r.setup);
            hashes.entry(km).or_default().insert(mode.clone(), r.hash);
            eprintln!(
                "  [run {run}] {mode} {km} iterations: {:.2} s ({:.2} s setup, {:.2} s after)",
                r.secs,
                r.setup,
                r.secs - r.setup - r.iterating
            );
            if mode == "memory" && ours.is_none() {
                ours = Some(
                    RankVector::open(job_dir.join(JobFile::Ranks.name()))
                        .and_then(|v| v.load())
                        .expect("ranks"),
                );
            }
        }
        if let Some((bin, t)) = &wg {
            let e = samples.entry("webgraph-rs".into()).or_default();
            for iters in [half, k] {
                let r = run_webgraph(bin, t, &wg_out, iters, cfg.threads);
                if iters == k {
                    e.secs.push(r.secs);
                    e.rss.push(r.rss.unwrap_or(f64::NAN));
                    e.logged.extend(r.logged_iter);
                } else {
                    e.half_secs.push(r.secs);
                }
                eprintln!(
                    "  [run {run}] webgraph-rs {iters} iterations: {:.2} s",
                    r.secs
                );
            }
        }
    }
    // Memory mode's bits at sort-merge's iteration count, to compare.
    let sm = iters_of("sort-merge");
    if sm != k
        && cfg.modes.iter().any(|m| m == "sort-merge")
        && cfg.modes.iter().any(|m| m == "memory")
    {
        let r = run_child(&exe, &job_dir, "memory", budgets["memory"], sm, cfg.threads);
        hashes
            .entry(sm)
            .or_default()
            .insert("memory".into(), r.hash);
    }

    let start_rss = median(base);
    let mut rows = Vec::new();
    let mut engines: Vec<String> = cfg.modes.clone();
    if wg.is_some() {
        engines.push("webgraph-rs".into());
    }
    let ns = |secs_per_iter: f64| secs_per_iter * 1e9 / m as f64;
    for engine in engines {
        let e = samples.remove(&engine).unwrap_or_default();
        let km = iters_of(&engine);
        let secs_k = median(e.secs.clone());
        let (per_iter, setup) = if e.half_secs.is_empty() {
            (median(e.per_iter), median(e.setup))
        } else {
            // Timed from outside: the difference between K and K/2
            // iterations cancels what is done once.
            let hm = (km / 2).max(1);
            let p = (secs_k - median(e.half_secs)) / (km - hm).max(1) as f64;
            (p, secs_k - p * km as f64)
        };
        if !e.logged.is_empty() {
            println!(
                "  ({engine}'s own log: {:.2} ns/arc/iter, median)",
                ns(median(e.logged))
            );
        }
        rows.push(Row {
            budget: budgets.get(engine.as_str()).copied(),
            engine,
            iters: km,
            secs_k,
            per_iter_total: secs_k * 1e9 / (m as f64 * km as f64),
            per_iter: ns(per_iter),
            setup,
            rss: median(e.rss),
        });
    }

    println!(
        "{:<12} {:>10} {:>6} {:>9} {:>13} {:>13} {:>9} {:>10} {:>8} {:>16}",
        "engine",
        "budget",
        "iters",
        "secs",
        "ns/arc/it+su",
        "ns/arc/iter",
        "setup s",
        "peak RSS",
        "RSS/bud",
        "(RSS-start)/bud"
    );
    for r in &rows {
        println!(
            "{:<12} {:>10} {:>6} {:>9.2} {:>13.2} {:>13.2} {:>9.2} {:>10} {:>8} {:>16}",
            r.engine,
            r.budget.map_or("-".into(), format_bytes),
            r.iters,
            r.secs_k,
            r.per_iter_total,
            r.per_iter,
            r.setup,
            if r.rss.is_nan() {
                "-".into()
            } else {
                format_bytes(r.rss as u64)
            },
            r.budget
                .map_or("-".into(), |b| format!("{:.2}", r.rss / b as f64)),
            r.budget.map_or("-".into(), |b| format!(
                "{:.2}",
                (r.rss - start_rss) / b as f64
            )),
        );
    }
    println!(
        "(a webmill child holds {} before any work: binary, libraries, thread stacks)",
        format_bytes(start_rss as u64)
    );

    // Values.
    for (iters, by_mode) in &hashes {
        let distinct: std::collections::BTreeSet<&String> = by_mode.values().collect();
        println!(
            "same bits after {iters} iterations: {} ({})",
            if distinct.len() <= 1 { "yes" } else { "NO" },
            by_mode
                .iter()
                .map(|(m, h)| format!("{m} {h}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let reference = g.reference.as_deref().map(read_reference);
    let theirs = wg.as_ref().map(|_| read_java_vector(&wg_out, n));
    if let (Some(o), Some(r)) = (&ours, &reference) {
        println!("L1(webmill, reference) = {:.3e}", l1(o, r));
    }
    if let (Some(t), Some(r)) = (&theirs, &reference) {
        println!("L1(webgraph-rs, reference) = {:.3e}", l1(t, r));
    }
    if let (Some(o), Some(t)) = (&ours, &theirs) {
        println!("L1(webmill, webgraph-rs) = {:.3e}", l1(o, t));
    }
    rows
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--case") {
        let mem = parse_bytes(&args[i + 3]).expect("mem");
        run_case(
            Path::new(&args[i + 1]),
            parse_mode(&args[i + 2]),
            mem,
            args[i + 4].parse().expect("iterations"),
        );
        return;
    }
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .map(|i| args[i + 1].clone())
    };
    let list = |flag: &str, default: &str| -> Vec<String> {
        get(flag)
            .unwrap_or_else(|| default.into())
            .split(',')
            .map(str::to_string)
            .collect()
    };
    let work = get("--work").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-pagerank"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&work).expect("--work");
    let work = std::fs::canonicalize(&work).expect("--work");
    let webgraph_bin =
        PathBuf::from(get("--webgraph-bin").unwrap_or_else(|| "/work/webgraph-cli/bin".into()));
    let webgraph = if args.iter().any(|a| a == "--no-webgraph") {
        None
    } else if webgraph_bin.join("webgraph-rank").exists() {
        Some(webgraph_bin)
    } else {
        println!(
            "webgraph-rs: no webgraph-rank in {} (--webgraph-bin DIR, or `cargo install webgraph-cli`); left out",
            webgraph_bin.display()
        );
        None
    };
    let cfg = Config {
        runs: get("--runs").map_or(3, |v| v.parse().expect("--runs")),
        work,
        modes: list("--modes", "memory,blocked,sort-merge"),
        threads: get("--threads").map_or(2, |v| v.parse().expect("--threads")),
        webgraph,
        import_mem: parse_bytes(&get("--import-mem").unwrap_or_else(|| "2G".into()))
            .expect("--import-mem"),
        sort_merge_iters: get("--sort-merge-iters")
            .map_or(4, |v| v.parse().expect("--sort-merge-iters")),
    };
    for m in &cfg.modes {
        parse_mode(m);
    }
    let iters: u32 = get("--iters").map_or(100, |v| v.parse().expect("--iters"));
    let gen_iters: u32 = get("--gen-iters").map_or(20, |v| v.parse().expect("--gen-iters"));
    let gen_arcs: u64 = get("--gen-arcs").map_or(100_000_000, |v| v.parse().expect("--gen-arcs"));
    let gen_nodes: u64 =
        get("--gen-nodes").map_or(gen_arcs / 10, |v| v.parse().expect("--gen-nodes"));
    let gen_seed: u64 = get("--gen-seed").map_or(1, |v| v.parse().expect("--gen-seed"));
    let graphs_dir = data_dir().join("graphs");

    let mut graphs = Vec::new();
    for which in list("--graphs", "cnr,uk,gen") {
        let law = |name: &str| {
            let base = graphs_dir.join(name);
            let snap = graphs_dir.join(format!("{name}.tsv.gz"));
            if !snap.exists() {
                println!("SKIPPED {name}: no {} (set WEBMILL_DATA)", snap.display());
                return None;
            }
            Some(Graph {
                name: name.to_string(),
                snap,
                keep_self_loops: true,
                bvgraph: base.with_extension("graph").exists().then(|| base.clone()),
                reference: Some(graphs_dir.join(format!("{name}.pagerank.txt.gz")))
                    .filter(|p| p.exists()),
                iters,
            })
        };
        let g = match which.as_str() {
            "cnr" => law("cnr-2000"),
            "uk" => law("uk-2007-05@100000"),
            "gen" => generated(&cfg.work, &args, gen_nodes, gen_arcs, gen_seed, gen_iters),
            other => panic!("unknown graph {other:?} (cnr, uk, gen)"),
        };
        graphs.extend(g);
    }

    println!(
        "PageRank benchmark: {} runs per case, medians; {} threads; work dir {}",
        cfg.runs,
        cfg.threads,
        cfg.work.display()
    );
    let mut summary = Vec::new();
    for g in &graphs {
        let rows = bench_graph(g, &cfg);
        let get = |e: &str| rows.iter().find(|r| r.engine == e).map(|r| r.per_iter);
        summary.push((
            g.name.clone(),
            get("memory"),
            get("blocked"),
            get("webgraph-rs"),
        ));
    }
    println!("\nChecks (per iteration, setup excluded):");
    for (name, mem, blk, wg) in summary {
        if let (Some(m), Some(w)) = (mem, wg) {
            println!(
                "{name}: memory mode {m:.2} ns/arc vs webgraph-rs {w:.2}: {} ({:.2}×)",
                if m <= w { "no slower" } else { "SLOWER" },
                m / w
            );
        }
        if let (Some(m), Some(b)) = (mem, blk) {
            println!(
                "{name}: blocked {b:.2} ns/arc vs memory {m:.2}: {:.2}× ({})",
                b / m,
                if b <= 3.0 * m {
                    "within 3×"
                } else {
                    "NOT within 3×"
                }
            );
        }
    }
}

/// The generated graph: made with `webmill-gen` into the work directory once.
fn generated(
    work: &Path,
    args: &[String],
    nodes: u64,
    arcs: u64,
    seed: u64,
    iters: u32,
) -> Option<Graph> {
    let name = format!("gen-{nodes}-{arcs}-s{seed}");
    let snap = work.join(format!("{name}.tsv"));
    if !snap.exists() {
        let bin = args
            .iter()
            .position(|a| a == "--gen-bin")
            .map(|i| PathBuf::from(&args[i + 1]))
            .unwrap_or_else(|| {
                // target/release/deps/pagerank-HASH → target/release/webmill-gen
                let exe = std::env::current_exe().expect("exe");
                exe.parent()
                    .and_then(Path::parent)
                    .map(|d| d.join("webmill-gen"))
                    .expect("target dir")
            });
        if !bin.exists() {
            println!(
                "SKIPPED {name}: no generator at {} (cargo build --release -p webmill-cli --bin webmill-gen, or --gen-bin PATH)",
                bin.display()
            );
            return None;
        }
        let partial = work.join(format!(".{name}.tsv.partial"));
        let t = Instant::now();
        run_checked(
            Command::new(&bin)
                .args(["--nodes", &nodes.to_string(), "--arcs", &arcs.to_string()])
                .args(["--seed", &seed.to_string(), "--quiet", "--output"])
                .arg(&partial),
            "webmill-gen",
        );
        std::fs::rename(&partial, &snap).expect("publish the generated graph");
        println!(
            "generated {} in {:.1} s",
            snap.display(),
            t.elapsed().as_secs_f64()
        );
    }
    Some(Graph {
        name,
        snap,
        keep_self_loops: false,
        bvgraph: None,
        reference: None,
        iters,
    })
}

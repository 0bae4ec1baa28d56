//! Benchmark: `webmill ingest` on a real web site, as a directory of HTML and
//! as a WARC of it, and `import-graph` on the LAW graphs: throughput per core,
//! peak RSS, bits per arc of the edge files, and the degree exponents.
//!
//! Data:
//! - the Debian `rust-doc` tree, `CORPUS/rust-doc/usr/share/doc/rust-doc/html`
//!   (32,101 HTML pages, 478 MB of HTML, about 2M links, and 670 other files:
//!   scripts, style sheets, images), `CORPUS` being `$WEBMILL_CORPUS` or
//!   `../corpus`;
//! - a WARC of the same tree (`--warc`, default `WORK/rust-doc.warc.gz`), made
//!   when missing by `webmill-warc` (`tools/src/bin/webmill-warc.rs`): every
//!   file as a `response` record, one gzip member per record, 95 MB;
//! - `../shared/data/graphs/{cnr-2000,uk-2007-05@100000}.tsv.gz` (3.2M and
//!   3.1M arcs) and their BVGraph `.properties` (`$WEBMILL_DATA` overrides the
//!   data directory).
//!
//! Each part is skipped with a message when its data is missing.
//!
//! Every measured run is a child process: the release `webmill` binary (built
//! beforehand with `cargo build --release -p webmill-cli`; `--webmill PATH`
//! overrides) under `/usr/bin/time -v`, on a fresh job directory. Prints
//! medians over `--runs` runs of:
//!
//! - **parse+extract** (in this process, one thread, pages in memory):
//!   `Extractor::extract` alone, then `ingest::page::process` (extract plus
//!   link resolution and record encoding: all the per-page CPU work of ingest
//!   but I/O, gzip and zstd) — MB of HTML per wall-clock second and per
//!   CPU-second of the thread (`/proc/thread-self/schedstat`);
//! - **ingest** of the directory and of the WARC, at each `--threads` and
//!   `--mem`: wall seconds of the whole command; the `ingest` and `resolve`
//!   stages' seconds (from `JOB/job.json`); the command's user + system CPU
//!   seconds (`time -v`); MB/s of HTML per core (`html_bytes` of the ingest
//!   stage / seconds / threads) for the ingest stage and for the whole
//!   command, and MB of HTML per CPU-second of the command (on a shared,
//!   loaded machine the wall-clock figures measure the neighbours; the
//!   CPU-second ones what a core does); the stages' `peak_rss` (each stage resets
//!   the kernel's high-water mark when it begins) and the command's maximum RSS
//!   from `time -v`; bits per arc of `edges.wm` and `edges-t.wm`; whether the
//!   directory and the WARC gave the same edge file (same checksum);
//! - **import-graph** of the LAW graphs (self-loops kept, so that the arcs are
//!   BVGraph's): seconds, peak RSS, bits per arc of both edge files next to
//!   `bitsperlink` of the graph's `.properties`;
//! - **degree exponents**: `webmill stats --json --plot` on the last job of
//!   each input: the fitted in- and out-degree exponents with `k_min`, and the
//!   seconds `stats` took; plots go to `WORK/plots/`.
//!
//! Goals from the issue: ≥ 50 MB/s/core parse+extract, ≤ 8 bits per arc.
//!
//! ```text
//! cargo build --release -p webmill-cli
//! cargo bench --bench ingest                                  # 3 runs, threads 1,2, mem 1G,256M
//! cargo bench --bench ingest -- --runs 1 --parts parse,warc --threads 2 --mem 256M
//! ```
//!
//! Flags: `--runs N` (3), `--parts parse,dir,warc,import,stats` (all),
//! `--threads 1,2`, `--mem 1G,256M`, `--import-mem 1G`, `--work DIR`
//! (`target/bench-ingest`), `--warc PATH`, `--base URL`
//! (`https://rust-doc.example/`), `--webmill PATH`, `--webmill-warc PATH`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;
use webmill::ingest::html::Extractor;
use webmill::ingest::page::{process, Fetched};
use webmill::resources::format_bytes;

const RUST_DOC: &str = "rust-doc/usr/share/doc/rust-doc/html";

fn corpus_root() -> PathBuf {
    std::env::var_os("WEBMILL_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus"))
}

fn data_dir() -> PathBuf {
    std::env::var_os("WEBMILL_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

/// A binary next to this bench's target directory
/// (`target/release/deps/ingest-HASH` → `target/release/NAME`).
fn sibling_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("exe");
    exe.parent()
        .and_then(Path::parent)
        .map(|d| d.join(name))
        .expect("target dir")
}

/// HTML files under `dir` (relative paths, sorted), as ingest reads them.
fn html_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(root.join(rel)) else {
            return;
        };
        for e in rd.flatten() {
            let r = rel.join(e.file_name());
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                walk(root, &r, out);
            } else if (ft.is_file() || e.path().is_file())
                && r.extension()
                    .is_some_and(|x| ["html", "htm", "xhtml", "shtml"].iter().any(|h| x == *h))
            {
                out.push(r);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, Path::new(""), &mut out);
    out.sort();
    out
}

// ---------------------------------------------------------------------------
// Parse + extract, in memory

fn bench_parse(dir: &Path, base: &str, runs: usize) {
    let files = html_files(dir);
    let pages: Vec<(String, Vec<u8>)> = files
        .iter()
        .filter_map(|rel| {
            let body = std::fs::read(dir.join(rel)).ok()?;
            let url = webmill::url::normalize(&format!("{base}{}", rel.display()))?;
            Some((url, body))
        })
        .collect();
    let bytes: usize = pages.iter().map(|p| p.1.len()).sum();
    let mb = bytes as f64 / 1e6;
    println!(
        "\nparse+extract, one thread, {} pages ({mb:.1} MB of HTML) in memory, {runs} runs:",
        pages.len()
    );
    let (mut extract, mut full) = (Vec::new(), Vec::new());
    let (mut extract_cpu, mut full_cpu) = (Vec::new(), Vec::new());
    let (mut links, mut resolved) = (0u64, 0u64);
    let cpu_rate = |c0: Option<f64>| match (c0, thread_cpu_ns()) {
        (Some(a), Some(b)) => mb / ((b - a) / 1e9),
        _ => f64::NAN,
    };
    for _ in 0..runs {
        let mut ex = Extractor::new();
        let (t, c) = (Instant::now(), thread_cpu_ns());
        links = 0;
        for (_, body) in &pages {
            if let Ok(p) = ex.extract(body, None) {
                links += p.links.len() as u64;
            }
        }
        extract.push(mb / t.elapsed().as_secs_f64());
        extract_cpu.push(cpu_rate(c));
        let (t, c) = (Instant::now(), thread_cpu_ns());
        resolved = 0;
        for (url, body) in &pages {
            let f = Fetched {
                url,
                status: 0,
                date: "",
                content_type: "text/html",
                charset: None,
                body,
                location: None,
            };
            if let Ok(out) = process(&mut ex, &f) {
                resolved += out.links.len() as u64;
            }
        }
        full.push(mb / t.elapsed().as_secs_f64());
        full_cpu.push(cpu_rate(c));
    }
    let (e, f) = (median(extract), median(full));
    let (ec, fc) = (median(extract_cpu), median(full_cpu));
    println!("  (MB/s by wall clock, and per CPU-second of the thread: the latter is what a core does when it is not shared)");
    println!(
        "  Extractor::extract        {e:7.1} MB/s wall {ec:7.1} MB/cpu-s  ({links} links found)"
    );
    println!("  ingest::page::process     {f:7.1} MB/s wall {fc:7.1} MB/cpu-s  ({resolved} links resolved)");
    println!(
        "  goal >= 50 MB/s/core parse+extract (Extractor, per CPU-second): {}",
        if ec >= 50.0 { "met" } else { "NOT met" }
    );
}

// ---------------------------------------------------------------------------
// Child runs

/// What one `webmill` command did.
struct ChildRun {
    wall: f64,
    /// Maximum RSS of the command (`time -v`).
    max_rss: Option<f64>,
    /// User + system CPU seconds of the command (`time -v`).
    cpu: Option<f64>,
}

/// CPU nanoseconds the calling thread has run (`/proc/thread-self/schedstat`),
/// so that a figure per core means something on a loaded machine.
fn thread_cpu_ns() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn run_child(cmd: &mut Command, what: &str) -> ChildRun {
    let t = Instant::now();
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let wall = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{err}",
        out.status
    );
    let field = |name: &str| {
        err.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    let max_rss = field("Maximum resident set size (kbytes):").map(|k| k * 1024.0);
    let cpu = match (
        field("User time (seconds):"),
        field("System time (seconds):"),
    ) {
        (Some(u), Some(s)) => Some(u + s),
        _ => None,
    };
    ChildRun { wall, max_rss, cpu }
}

/// `webmill ARGS`, under `/usr/bin/time -v` when it exists.
fn webmill_cmd(bin: &Path, args: &[String]) -> Command {
    let time = Path::new("/usr/bin/time");
    let mut c = if time.exists() {
        let mut c = Command::new(time);
        c.arg("-v").arg(bin);
        c
    } else {
        Command::new(bin)
    };
    c.args(args);
    c
}

fn manifest(job: &Path) -> Value {
    let text = std::fs::read_to_string(job.join("job.json")).expect("job.json");
    serde_json::from_str(&text).expect("job.json is JSON")
}

fn fig(m: &Value, stage: &str, key: &str) -> f64 {
    let f = &m["stages"][stage]["figures"];
    f.get(key)
        .or_else(|| f["extra"].get(key))
        .and_then(Value::as_f64)
        .unwrap_or(f64::NAN)
}

fn output_checksum(m: &Value, stage: &str, path: &str) -> String {
    m["stages"][stage]["outputs"]
        .as_array()
        .and_then(|outs| outs.iter().find(|o| o["path"] == path))
        .and_then(|o| o["checksum"].as_str())
        .unwrap_or("?")
        .to_string()
}

/// Medians of one ingest case.
#[derive(Default)]
struct IngestSamples {
    wall: Vec<f64>,
    ingest: Vec<f64>,
    resolve: Vec<f64>,
    ingest_rss: Vec<f64>,
    resolve_rss: Vec<f64>,
    max_rss: Vec<f64>,
    cpu: Vec<f64>,
}

/// The last run's job figures: html bytes, pages, links, nodes, arcs, edge
/// bytes both ways, checksum of edges.wm.
struct JobFigures {
    html_bytes: f64,
    pages: f64,
    links: f64,
    nodes: f64,
    arcs: f64,
    edges: f64,
    transposed: f64,
    checksum: String,
}

fn mib(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format_bytes(x as u64)
    }
}

#[allow(clippy::too_many_arguments)]
fn bench_ingest(
    bin: &Path,
    label: &str,
    input: &str,
    threads: &[usize],
    mems: &[String],
    runs: usize,
    work: &Path,
    checksums: &mut Vec<(String, String)>,
) -> Option<PathBuf> {
    let mut last_job = None;
    for &t in threads {
        for mem in mems {
            let job = work.join(format!("job-{label}-t{t}-{mem}"));
            let mut s = IngestSamples::default();
            let mut figs = None;
            for _ in 0..runs {
                let _ = std::fs::remove_dir_all(&job);
                let args: Vec<String> = [
                    "--threads",
                    &t.to_string(),
                    "--mem",
                    mem,
                    "-q",
                    "ingest",
                    "--out",
                    &job.to_string_lossy(),
                    input,
                ]
                .iter()
                .map(|a| a.to_string())
                .collect();
                let r = run_child(&mut webmill_cmd(bin, &args), "webmill ingest");
                let m = manifest(&job);
                s.wall.push(r.wall);
                s.max_rss.push(r.max_rss.unwrap_or(f64::NAN));
                s.cpu.push(r.cpu.unwrap_or(f64::NAN));
                s.ingest.push(fig(&m, "ingest", "seconds"));
                s.resolve.push(fig(&m, "resolve", "seconds"));
                s.ingest_rss.push(fig(&m, "ingest", "peak_rss"));
                s.resolve_rss.push(fig(&m, "resolve", "peak_rss"));
                figs = Some(JobFigures {
                    html_bytes: fig(&m, "ingest", "html_bytes"),
                    pages: fig(&m, "ingest", "pages"),
                    links: fig(&m, "ingest", "links"),
                    nodes: fig(&m, "resolve", "nodes"),
                    arcs: fig(&m, "resolve", "arcs"),
                    edges: fig(&m, "resolve", "edges_bytes"),
                    transposed: fig(&m, "resolve", "transposed_bytes"),
                    checksum: output_checksum(&m, "resolve", "edges.wm"),
                });
            }
            let f = figs.expect("at least one run");
            let (wall, ing, res) = (median(s.wall), median(s.ingest), median(s.resolve));
            let mb = f.html_bytes / 1e6;
            println!(
                "{:<6} {:>3} {:>5} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>9.1} {:>9.1} {:>9.1} {:>10} {:>10} {:>10} {:>7.2} {:>7.2}",
                label,
                t,
                mem,
                wall,
                ing,
                res,
                median(s.cpu.clone()),
                mb / ing / t as f64,
                mb / wall / t as f64,
                mb / median(s.cpu),
                mib(median(s.ingest_rss)),
                mib(median(s.resolve_rss)),
                mib(median(s.max_rss)),
                f.edges * 8.0 / f.arcs,
                f.transposed * 8.0 / f.arcs,
            );
            if checksums.iter().all(|(l, _)| l != label) {
                println!(
                    "       ({} pages, {mb:.1} MB of HTML, {} links -> {} docs, {} arcs)",
                    f.pages, f.links, f.nodes, f.arcs
                );
            }
            checksums.push((label.to_string(), f.checksum));
            last_job = Some(job);
        }
    }
    last_job
}

fn bvgraph_bits(graph: &Path) -> Option<f64> {
    let name = graph.file_name()?.to_string_lossy().replace(".tsv.gz", "");
    let props = std::fs::read_to_string(graph.with_file_name(format!("{name}.properties"))).ok()?;
    props
        .lines()
        .find_map(|l| l.strip_prefix("bitsperlink="))
        .and_then(|v| v.trim().parse().ok())
}

fn bench_import(bin: &Path, mem: &str, runs: usize, work: &Path) -> Vec<(String, PathBuf)> {
    let dir = data_dir().join("graphs");
    let mut jobs = Vec::new();
    println!(
        "\nimport-graph (--keep-self-loops, --mem {mem}), medians of {runs} runs:\n{:<20} {:>8} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "graph", "secs", "arcs", "peak RSS", "max RSS", "bits/arc", "transp.", "BVGraph"
    );
    for name in ["cnr-2000", "uk-2007-05@100000"] {
        let input = dir.join(format!("{name}.tsv.gz"));
        if !input.exists() {
            println!("{name}: SKIPPED, {} not found", input.display());
            continue;
        }
        let job = work.join(format!("job-{name}"));
        let (mut secs, mut rss, mut max_rss) = (Vec::new(), Vec::new(), Vec::new());
        let mut m = Value::Null;
        for _ in 0..runs {
            let _ = std::fs::remove_dir_all(&job);
            let args: Vec<String> = vec![
                "--mem".into(),
                mem.into(),
                "-q".into(),
                "import-graph".into(),
                "--keep-self-loops".into(),
                "--out".into(),
                job.to_string_lossy().into(),
                input.to_string_lossy().into(),
            ];
            let r = run_child(&mut webmill_cmd(bin, &args), "webmill import-graph");
            m = manifest(&job);
            secs.push(fig(&m, "import-graph", "seconds"));
            rss.push(fig(&m, "import-graph", "peak_rss"));
            max_rss.push(r.max_rss.unwrap_or(f64::NAN));
        }
        let arcs = fig(&m, "import-graph", "arcs");
        println!(
            "{:<20} {:>8.2} {:>10} {:>10} {:>10} {:>9.3} {:>9.3} {:>9}",
            name,
            median(secs),
            arcs,
            mib(median(rss)),
            mib(median(max_rss)),
            fig(&m, "import-graph", "edges_bytes") * 8.0 / arcs,
            fig(&m, "import-graph", "transposed_bytes") * 8.0 / arcs,
            bvgraph_bits(&input).map_or("-".into(), |b| format!("{b:.3}")),
        );
        jobs.push((name.to_string(), job));
    }
    jobs
}

fn bench_stats(bin: &Path, jobs: &[(String, PathBuf)], work: &Path) {
    let plots = work.join("plots");
    std::fs::create_dir_all(&plots).expect("plots dir");
    println!(
        "\ndegree exponents (webmill stats --json --plot; discrete MLE, k_min by KS distance):\n{:<20} {:>6} {:>15} {:>6} {:>9} {:>15} {:>6} {:>9} {:>7}",
        "graph", "stats s", "in alpha", "k_min", "tail", "out alpha", "k_min", "tail", "max in"
    );
    for (name, job) in jobs {
        let file: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '@' || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let plot = plots.join(format!(
            "{}-degrees.svg",
            file.trim_matches('-').replace("--", "-")
        ));
        let t = Instant::now();
        let out = Command::new(bin)
            .args(["stats", "--json", "--plot"])
            .arg(&plot)
            .arg(job)
            .output()
            .expect("webmill stats");
        let secs = t.elapsed().as_secs_f64();
        assert!(
            out.status.success(),
            "stats failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("stats JSON");
        let alpha = |d: &str| match (
            v[format!("{d}_degree_exponent")].as_f64(),
            v[format!("{d}_degree_exponent_error")].as_f64(),
        ) {
            (Some(a), Some(e)) => format!("{a:.3} ± {e:.3}"),
            _ => "-".into(),
        };
        println!(
            "{:<20} {:>6.2} {:>15} {:>6} {:>9} {:>15} {:>6} {:>9} {:>7}",
            name,
            secs,
            alpha("in"),
            v["in_degree_kmin"],
            v["in_degree_tail_nodes"],
            alpha("out"),
            v["out_degree_kmin"],
            v["out_degree_tail_nodes"],
            v["max_in_degree"],
        );
    }
    println!("plots in {}", plots.display());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let runs: usize = get("--runs").map_or(3, |v| v.parse().expect("--runs N"));
    let parts = get("--parts").unwrap_or_else(|| "parse,dir,warc,import,stats".into());
    let part = |p: &str| parts.split(',').any(|x| x == p);
    let threads: Vec<usize> = get("--threads")
        .unwrap_or_else(|| "1,2".into())
        .split(',')
        .map(|t| t.parse().expect("--threads 1,2"))
        .collect();
    let mems: Vec<String> = get("--mem")
        .unwrap_or_else(|| "1G,256M".into())
        .split(',')
        .map(str::to_string)
        .collect();
    let import_mem = get("--import-mem").unwrap_or_else(|| "1G".into());
    let work = get("--work").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-ingest"),
        PathBuf::from,
    );
    let base = get("--base").unwrap_or_else(|| "https://rust-doc.example/".into());
    let bin = get("--webmill").map_or_else(|| sibling_binary("webmill"), PathBuf::from);
    std::fs::create_dir_all(&work).expect("work dir");
    let corpus = corpus_root().join(RUST_DOC);
    let have_corpus = corpus.is_dir();
    if !have_corpus {
        println!(
            "SKIPPED rust-doc parts: {} not found (set WEBMILL_CORPUS; see ../shared/data/README.md)",
            corpus.display()
        );
    }
    println!(
        "ingest benchmark: {runs} runs per case, medians; machine: {} cores (shared: expect noise)",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if have_corpus && part("parse") {
        bench_parse(&corpus, &base, runs);
    }
    let needs_bin = part("dir") || part("warc") || part("import") || part("stats");
    if needs_bin && !bin.exists() {
        println!(
            "SKIPPED the command parts: no webmill binary at {} (cargo build --release -p webmill-cli, or --webmill PATH)",
            bin.display()
        );
        return;
    }
    let mut stats_jobs = Vec::new();
    if have_corpus && (part("dir") || part("warc")) {
        println!(
            "\ningest + resolve of rust-doc. wall, ingest, resolve: seconds (the command; its two stages); cpu: user+sys\nseconds of the command; MB/s/c: MB of HTML per second per thread, of the ingest stage (i) and of the\ncommand (w); MB/cpu-s: MB of HTML per CPU-second of the command; RSS: the stages' peak_rss and the\ncommand's maximum (time -v); b/arc: bits per arc of edges.wm and edges-t.wm.\n{:<6} {:>3} {:>5} {:>7} {:>7} {:>7} {:>7} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>7} {:>7}",
            "input", "thr", "mem", "wall", "ingest", "resolve", "cpu", "MB/s/c i", "MB/s/c w", "MB/cpu-s",
            "ingest RSS", "resolv RSS", "max RSS", "b/arc", "b/arc-t"
        );
        let mut checksums = Vec::new();
        if part("dir") {
            let input = format!("{base}={}", corpus.display());
            if let Some(j) = bench_ingest(
                &bin,
                "dir",
                &input,
                &threads,
                &mems,
                runs,
                &work,
                &mut checksums,
            ) {
                stats_jobs.push(("rust-doc (dir)".to_string(), j));
            }
        }
        if part("warc") {
            let warc = get("--warc").map_or_else(|| work.join("rust-doc.warc.gz"), PathBuf::from);
            let mut ok = warc.exists();
            if !ok {
                let maker = get("--webmill-warc")
                    .map_or_else(|| sibling_binary("webmill-warc"), PathBuf::from);
                if maker.exists() {
                    println!("       (making {} with webmill-warc)", warc.display());
                    let r = run_child(
                        Command::new(&maker)
                            .args(["--quiet", "--base", &base, "--output"])
                            .arg(&warc)
                            .arg(&corpus),
                        "webmill-warc",
                    );
                    println!("       (made in {:.1} s)", r.wall);
                    ok = true;
                } else {
                    println!(
                        "SKIPPED warc: no {} and no webmill-warc at {}",
                        warc.display(),
                        maker.display()
                    );
                }
            }
            if ok {
                if let Some(j) = bench_ingest(
                    &bin,
                    "warc",
                    &warc.to_string_lossy(),
                    &threads,
                    &mems,
                    runs,
                    &work,
                    &mut checksums,
                ) {
                    stats_jobs.push(("rust-doc (warc)".to_string(), j));
                }
            }
        }
        let mut sums: Vec<&str> = checksums.iter().map(|(_, c)| c.as_str()).collect();
        sums.sort_unstable();
        sums.dedup();
        println!(
            "edges.wm checksums over all cases (threads, budgets, dir and WARC): {}",
            if sums.len() == 1 {
                format!("all equal ({})", sums[0])
            } else {
                format!("DIFFER: {checksums:?}")
            }
        );
    }
    if part("import") {
        stats_jobs.extend(bench_import(&bin, &import_mem, runs, &work));
    }
    if part("stats") {
        bench_stats(&bin, &stats_jobs, &work);
    }
}

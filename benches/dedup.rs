//! Benchmark: near-duplicate detection — sketching speed on real pages, the
//! whole stage on 10M generated docs within `--mem 1G`, and datasketch's
//! MinHashLSH side by side on the same generated corpus.
//!
//! **Part `sketch`** (real pages). Data: Debian's rust-doc HTML
//! (`/work/corpus/rust-doc/usr/share/doc/rust-doc/html`, 32,101 files) and the
//! llvm-15-doc + llvm-16-doc HTML, each ingested once into `--work` with the
//! release `webmill` binary. The token streams are loaded into memory and
//! every algorithm sketches all non-empty pages on one thread, timed inside
//! this process: word fingerprints + the sketch + its sort keys (band keys,
//! megashingles, subsketches), nothing else. Prints docs per CPU-second of the
//! thread (`/proc/thread-self/schedstat`: a core's worth of work, robust to
//! other load on the machine) and per wall second (medians of `--runs`),
//! words per CPU-second, and the sketch bytes per doc: raw (what the stage sorts)
//! and in `sketches-ALG.wm` (zstd) after `webmill --threads 1 dedup --alg ALG`,
//! whose end-to-end docs/s (one thread, sorting and verification included) is
//! printed too.
//!
//! **Part `gen`** (scale). `webmill-corpus` writes a job of `--gen-docs`
//! (10,000,000) generated pages of 50–150 Zipf words with planted
//! near-duplicate clusters (10% of docs drawn as copies with up to 10% of
//! their words replaced; `planted.tsv` holds the truth) straight into the job's
//! files. Then `webmill dedup --mem 1G --alg A` for each of `--gen-algs`
//! (minhash), as a child process (this bench re-executed with `--case`, its
//! own peak RSS), timed by a progress reporter that notes when each task of the
//! stage starts: the sketch pass, then pair finding (key sort, candidate
//! groups, verification joins, union-find, clusters). Prints wall seconds of
//! both, docs/s, peak RSS (VmHWM) against the budget, pairs, and the share of
//! planted (copy, source) pairs found.
//!
//! **Part `datasketch`** (comparison). A `--ds-docs` (100,000) doc job by the
//! same generator; `webmill export text` gives the TSV; a Python script reads
//! it, builds datasketch `MinHash(num_perm=200)` of the 4-word shingles (words
//! joined by a space, UTF-8) of every doc, inserts them in
//! `MinHashLSH(threshold=0.8, num_perm=200)` and queries every doc: end to end
//! from the TSV to the candidate pairs. Webmill runs `dedup --alg minhash` on
//! the same job (4-word shingles, 200 min-values, threshold 0.8), end to end
//! from the job's token streams to pairs and clusters, on 1 thread and on
//! `--threads`. Medians of `--runs`; ratio = Python / webmill.
//!
//! The machine is shared: timings are medians, and noisy.
//!
//! ```text
//! cargo build --release -p webmill-cli --bin webmill --bin webmill-corpus
//! pip install datasketch
//! cargo bench --bench dedup -- --work /work/bench-data/dedup
//! cargo bench --bench dedup -- --parts gen --gen-docs 1000000 --runs 1
//! ```
//!
//! Flags: `--parts sketch,gen,datasketch`, `--runs N` (3), `--work DIR`
//! (`target/bench-dedup`), `--corpus DIR` (`/work/corpus`), `--gen-docs N`
//! (10000000), `--gen-algs minhash,...`, `--gen-mem BYTES` (1G), `--ds-docs N`
//! (100000), `--threads T` (2), `--bin DIR` (the directory of this bench's
//! target profile, holding `webmill` and `webmill-corpus`), `--python PATH`
//! (`python3`).

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use webmill::dedup::broder::BroderSketcher;
use webmill::dedup::charikar::{subsketches, CharikarSketcher};
use webmill::dedup::files::for_each_pair;
use webmill::dedup::minhash::MinHasher;
use webmill::dedup::shingle::Scratch;
use webmill::dedup::shingle::{exact_fingerprint, word_fingerprints};
use webmill::dedup::stage::{dedup, DedupOptions};
use webmill::dedup::Alg;
use webmill::job::{Job, JobFile, JobView, Outcome, Settings, StageId};
use webmill::progress::{Reporter, Task, Unit};
use webmill::resources::{format_bytes, parse_bytes, peak_rss};

struct Flags {
    parts: Vec<String>,
    runs: usize,
    work: PathBuf,
    corpus: PathBuf,
    gen_docs: u64,
    gen_algs: Vec<String>,
    gen_mem: u64,
    ds_docs: u64,
    threads: usize,
    bin: PathBuf,
    python: String,
}

fn flags() -> Flags {
    let exe = std::env::current_exe().expect("current exe");
    // target/release/deps/dedup-… → target/release
    let bin = exe
        .parent()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut f = Flags {
        parts: vec!["sketch".into(), "gen".into(), "datasketch".into()],
        runs: 3,
        work: Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-dedup"),
        corpus: PathBuf::from("/work/corpus"),
        gen_docs: 10_000_000,
        gen_algs: vec!["minhash".into()],
        gen_mem: 1 << 30,
        ds_docs: 100_000,
        threads: 2,
        bin,
        python: "python3".into(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let v = || args.get(i + 1).cloned().unwrap_or_default();
        let list = |s: String| s.split(',').map(str::to_string).collect::<Vec<_>>();
        match args[i].as_str() {
            "--parts" => f.parts = list(v()),
            "--runs" => f.runs = v().parse().expect("--runs N"),
            "--work" => f.work = PathBuf::from(v()),
            "--corpus" => f.corpus = PathBuf::from(v()),
            "--gen-docs" => f.gen_docs = v().parse().expect("--gen-docs N"),
            "--gen-algs" => f.gen_algs = list(v()),
            "--gen-mem" => f.gen_mem = parse_bytes(&v()).expect("--gen-mem BYTES"),
            "--ds-docs" => f.ds_docs = v().parse().expect("--ds-docs N"),
            "--threads" => f.threads = v().parse().expect("--threads T"),
            "--bin" => f.bin = PathBuf::from(v()),
            "--python" => f.python = v(),
            "--bench" => {
                i += 1;
                continue;
            }
            other => panic!("unknown flag {other}"),
        }
        i += 2;
    }
    f
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run_ok(cmd: &mut Command) {
    eprintln!("$ {cmd:?}");
    let st = cmd.status().expect("spawn");
    assert!(st.success(), "{cmd:?} failed: {st}");
}

fn webmill(f: &Flags) -> Command {
    let p = f.bin.join("webmill");
    assert!(
        p.exists(),
        "{} missing: cargo build --release -p webmill-cli --bin webmill --bin webmill-corpus",
        p.display()
    );
    Command::new(p)
}

fn finished(job: &Path, stage: StageId) -> bool {
    JobView::open(job)
        .ok()
        .is_some_and(|j| j.published(stage).is_some())
}

/// Ranks the job (dedup keeps the highest-ranked doc of each cluster).
fn ranked(f: &Flags, job: &Path) {
    if !finished(job, StageId::PageRank) {
        let mut c = webmill(f);
        c.args(["--quiet", "pagerank"]).arg(job);
        run_ok(&mut c);
    }
}

// ---------------------------------------------------------------- sketch part

fn load_texts(job: &Path) -> Vec<String> {
    let job = JobView::open(job).expect("job");
    let mut out = Vec::new();
    let text = job.file(JobFile::Text).expect("text.wm");
    let pagedoc = job.file(JobFile::PageDoc).expect("pagedoc.wm");
    webmill::ingest::text::for_each_page_text(&text, &pagedoc, |_, _, w| {
        if !w.split(' ').all(str::is_empty) {
            out.push(w.to_string());
        }
        Ok(())
    })
    .expect("token streams");
    out
}

/// CPU seconds this thread has run (`/proc/thread-self/schedstat`, first
/// field in ns): on a shared machine, what a core's worth of work took.
fn thread_cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split(' ').next()?.parse::<u64>().ok())
        .map_or(f64::NAN, |ns| ns as f64 / 1e9)
}

/// Sketches every page once on this thread; returns (wall seconds, CPU
/// seconds) and a checksum.
fn sketch_all(alg: Alg, pages: &[String]) -> ((f64, f64), u64) {
    let broder = BroderSketcher::new();
    let charikar = CharikarSketcher::new();
    let minhash = MinHasher::new();
    let mut fps = Vec::new();
    let mut scratch = Scratch::new();
    let mut check = 0u64;
    let cpu = thread_cpu_secs();
    let t = Instant::now();
    for w in pages {
        let tokens = || w.split(' ').filter(|x| !x.is_empty());
        match alg {
            Alg::Exact => check ^= exact_fingerprint(tokens()),
            Alg::Broder => {
                word_fingerprints(tokens(), &mut fps);
                if let Some(s) = broder.sketch_fingerprints(&fps, &mut scratch) {
                    check ^= s.megashingles[0];
                }
            }
            Alg::Charikar => {
                word_fingerprints(tokens(), &mut fps);
                if let Some(s) = charikar.sketch_fingerprints(&fps, &mut scratch) {
                    check ^= subsketches(&s)[0].key();
                }
            }
            Alg::MinHash => {
                word_fingerprints(tokens(), &mut fps);
                if let Some(s) = minhash.sketch_fingerprints(&fps, &mut scratch) {
                    check ^= minhash.bands(&s).fold(0, |a, (_, k)| a ^ k);
                }
            }
        }
    }
    ((t.elapsed().as_secs_f64(), thread_cpu_secs() - cpu), check)
}

fn part_sketch(f: &Flags) {
    let corpora: Vec<(&str, Vec<String>)> = vec![
        (
            "rust-doc",
            vec![format!(
                "http://rust.example/={}",
                f.corpus
                    .join("rust-doc/usr/share/doc/rust-doc/html")
                    .display()
            )],
        ),
        (
            "llvm-15+16",
            vec![
                format!(
                    "http://llvm.example/15/={}",
                    f.corpus
                        .join("llvm-15-doc/usr/share/doc/llvm-15-doc/html")
                        .display()
                ),
                format!(
                    "http://llvm.example/16/={}",
                    f.corpus
                        .join("llvm-16-doc/usr/share/doc/llvm-16-doc/html")
                        .display()
                ),
            ],
        ),
    ];
    for (name, inputs) in corpora {
        let job = f.work.join(format!("real-{name}"));
        if !finished(&job, StageId::Resolve) {
            let mut c = webmill(f);
            c.args(["--quiet", "ingest", "--out"])
                .arg(&job)
                .args(&inputs);
            run_ok(&mut c);
        }
        ranked(f, &job);
        let pages = load_texts(&job);
        let words: u64 = pages.iter().map(|p| p.split(' ').count() as u64).sum();
        println!(
            "\n## sketching on {name}: {} non-empty pages, {} words ({:.0} words/page); one thread, median of {}",
            pages.len(),
            words,
            words as f64 / pages.len() as f64,
            f.runs
        );
        println!(
            "{:<9} {:>12} {:>12} {:>14} {:>10} {:>13} {:>14}",
            "alg",
            "docs/CPU-s",
            "docs/wall-s",
            "Mwords/CPU-s",
            "raw B/doc",
            "file B/doc",
            "stage docs/s"
        );
        for alg in Alg::ALL {
            let times: Vec<(f64, f64)> = (0..f.runs).map(|_| sketch_all(alg, &pages).0).collect();
            let wall = median(times.iter().map(|t| t.0).collect());
            let secs = median(times.iter().map(|t| t.1).collect());
            let raw = match alg {
                Alg::Exact => 8,
                // The min-values the sketch file keeps (u32 each).
                Alg::Broder => 4 * webmill::dedup::broder::MIN_VALUES,
                Alg::Charikar => webmill::dedup::charikar::CHARIKAR_BITS / 8,
                Alg::MinHash => 4 * webmill::dedup::minhash::MINHASH_LEN,
            };
            // The stage on one thread, end to end.
            let mut c = webmill(f);
            c.args([
                "--quiet",
                "--threads",
                "1",
                "--mem",
                "1G",
                "dedup",
                "--force",
                "--alg",
            ])
            .arg(alg.name())
            .arg(&job);
            run_ok(&mut c);
            let j = JobView::open(&job).expect("job");
            let rec = j.published(StageId::Dedup(alg)).expect("stage record");
            let file = rec
                .outputs
                .iter()
                .find(|o| o.path == JobFile::Sketches(alg).name())
                .map_or(0, |o| o.bytes);
            let docs = rec.figures.extra["docs_sketched"].as_u64().unwrap_or(0);
            println!(
                "{:<9} {:>12.0} {:>12.0} {:>14.2} {:>10} {:>13.1} {:>14.0}",
                alg.name(),
                pages.len() as f64 / secs,
                pages.len() as f64 / wall,
                words as f64 / secs / 1e6,
                raw,
                file as f64 / docs.max(1) as f64,
                docs as f64 / rec.figures.seconds
            );
        }
    }
}

// ------------------------------------------------------------------ gen part

/// Notes when each task starts and when its position moves: (label, time).
#[derive(Default)]
struct PhaseClock {
    marks: Marks,
}

type Marks = Arc<Mutex<Vec<(String, Instant)>>>;

struct ClockTask(String, Marks);

impl Task for ClockTask {
    fn inc(&self, _: u64) {}
    fn set_position(&self, _: u64) {
        self.1
            .lock()
            .unwrap()
            .push((self.0.clone(), Instant::now()));
    }
    fn set_message(&self, _: String) {}
}

impl Reporter for PhaseClock {
    fn task(&self, label: &str, _: Option<u64>, _: Unit) -> Box<dyn Task> {
        self.marks
            .lock()
            .unwrap()
            .push((label.to_string(), Instant::now()));
        Box::new(ClockTask(label.to_string(), Arc::clone(&self.marks)))
    }
    fn note(&self, _: &str) {}
}

/// Child: `dedup --alg ALG --force` under `mem`; prints `RESULT {json}`.
fn run_case(job_dir: &Path, alg: &str, mem: u64) {
    let mut job = Job::open(job_dir, false).expect("job");
    let clock = Arc::new(PhaseClock::default());
    let mut s = Settings::new(mem);
    s.force = true;
    s.reporter = clock.clone();
    let opts = DedupOptions {
        algs: vec![Alg::parse(alg).expect("alg")],
        ..DedupOptions::default()
    };
    let t = Instant::now();
    let out = dedup(&mut job, &opts, &s).expect("dedup");
    let secs = t.elapsed().as_secs_f64();
    let Outcome::Done { record: rec, .. } = &out[0].1 else {
        panic!("a forced run was skipped")
    };
    let marks = clock.marks.lock().unwrap().clone();
    // The sketch pass: from its task's start to its last position update.
    let at = |i: &Instant| i.duration_since(t).as_secs_f64();
    let sketch: Vec<f64> = marks
        .iter()
        .filter(|(l, _)| l.ends_with(": sketching"))
        .map(|(_, i)| at(i))
        .collect();
    let sketch_began = sketch.first().copied().unwrap_or(0.0);
    let sketch_end = sketch.last().copied().unwrap_or(secs);
    let mut phases: Vec<(String, f64)> = Vec::new();
    for (l, i) in &marks {
        if !phases.iter().any(|(p, _)| p == l) {
            phases.push((l.clone(), at(i)));
        }
    }
    let x = &rec.figures.extra;
    let result = serde_json::json!({
        "secs": secs,
        "sketch_secs": sketch_end - sketch_began,
        "pair_secs": secs - sketch_end,
        "peak_rss": peak_rss().unwrap_or(0),
        "docs": x["docs_sketched"], "pairs": x["pairs"], "candidates": x["candidates"],
        "capped": x["capped_groups"], "clusters": x["clusters"],
        "phases": phases,
    });
    println!("RESULT {result}");
}

fn case(f: &Flags, job: &Path, alg: &str, mem: u64, threads: usize) -> serde_json::Value {
    let exe = std::env::current_exe().expect("exe");
    let mut c = Command::new(exe);
    c.args(["--case"])
        .arg(job)
        .arg(alg)
        .arg(mem.to_string())
        .env("RAYON_NUM_THREADS", threads.to_string())
        .stdout(Stdio::piped());
    eprintln!("$ {c:?}");
    let _ = f;
    let out = c.output().expect("child");
    assert!(out.status.success(), "child failed");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .expect("RESULT line");
    serde_json::from_str(line).expect("json")
}

fn generated(f: &Flags, docs: u64) -> PathBuf {
    let job = f.work.join(format!("gen-{docs}"));
    if !finished(&job, StageId::Resolve) {
        let gen = f.bin.join("webmill-corpus");
        assert!(gen.exists(), "{} missing", gen.display());
        run_ok(
            Command::new(gen)
                .arg(&job)
                .args(["--docs", &docs.to_string(), "--force"]),
        );
    }
    ranked(f, &job);
    job
}

fn planted_found(job: &Path, alg: Alg) -> (u64, u64) {
    let mut pairs = HashSet::new();
    for_each_pair(&job.join(JobFile::Pairs(alg).name()), |a, b, _| {
        pairs.insert((a, b));
        Ok(())
    })
    .expect("pairs");
    let file = std::fs::File::open(job.join("planted.tsv")).expect("planted.tsv");
    let (mut n, mut found) = (0, 0);
    for line in BufReader::new(file).lines().skip(1) {
        let line = line.expect("line");
        let mut it = line.split('\t').map(|x| x.parse::<u64>().expect("number"));
        let (c, s) = (it.next().expect("copy"), it.next().expect("source"));
        n += 1;
        found += u64::from(pairs.contains(&(c.min(s), c.max(s))));
    }
    (n, found)
}

fn part_gen(f: &Flags) {
    let job = generated(f, f.gen_docs);
    println!(
        "\n## {} generated docs (webmill-corpus defaults: 50–150 Zipf words, 10% drawn as copies), --mem {}, {} threads",
        f.gen_docs,
        format_bytes(f.gen_mem),
        f.threads
    );
    for alg in &f.gen_algs {
        let r = case(f, &job, alg, f.gen_mem, f.threads);
        let (planted, found) = planted_found(&job, Alg::parse(alg).expect("alg"));
        println!(
            "{alg}: {:.1} s in all = sketch pass {:.1} s ({:.0} docs/s) + pair finding {:.1} s; peak RSS {} (budget {}); {} candidates, {} pairs, {} clusters, {} capped groups; planted (copy, source) pairs found: {found} of {planted} ({:.3})",
            r["secs"].as_f64().unwrap_or(0.0),
            r["sketch_secs"].as_f64().unwrap_or(0.0),
            r["docs"].as_f64().unwrap_or(0.0) / r["sketch_secs"].as_f64().unwrap_or(1.0),
            r["pair_secs"].as_f64().unwrap_or(0.0),
            format_bytes(r["peak_rss"].as_u64().unwrap_or(0)),
            format_bytes(f.gen_mem),
            r["candidates"],
            r["pairs"],
            r["clusters"],
            r["capped"],
            found as f64 / planted.max(1) as f64
        );
        println!("  phases (task, start s): {}", r["phases"]);
    }
}

// ----------------------------------------------------------- datasketch part

const PYTHON: &str = r##"
import sys, time
t0 = time.time()
from datasketch import MinHash, MinHashLSH
docs = []
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        if line.startswith("#"):
            continue
        doc, _url, words = line.rstrip("\n").split("\t", 2)
        docs.append((int(doc), words.split(" ")))
k = 4
lsh = MinHashLSH(threshold=0.8, num_perm=200)
sigs = []
for doc, w in docs:
    if not w or w == [""]:
        continue
    sh = {" ".join(w[i:i + k]).encode("utf-8") for i in range(max(1, len(w) - k + 1))}
    m = MinHash(num_perm=200)
    m.update_batch(list(sh))
    lsh.insert(doc, m)
    sigs.append((doc, m))
pairs = set()
for doc, m in sigs:
    for other in lsh.query(m):
        if other != doc:
            pairs.add((min(doc, other), max(doc, other)))
print("RESULT", time.time() - t0, len(sigs), len(pairs))
"##;

fn part_datasketch(f: &Flags) {
    let job = generated(f, f.ds_docs);
    let tsv = f.work.join(format!("gen-{}.tsv", f.ds_docs));
    if !tsv.exists() {
        let out = std::fs::File::create(&tsv).expect("tsv");
        let mut c = webmill(f);
        c.args(["--quiet", "export", "text"]).arg(&job).stdout(out);
        run_ok(&mut c);
    }
    let script = f.work.join("datasketch_lsh.py");
    std::fs::write(&script, PYTHON).expect("script");
    let mut py = Vec::new();
    let mut py_pairs = 0;
    for _ in 0..f.runs {
        let t = Instant::now();
        let mut c = Command::new(&f.python);
        c.arg(&script).arg(&tsv).stdout(Stdio::piped());
        eprintln!("$ {c:?}");
        let out = c.output().expect("python");
        assert!(
            out.status.success(),
            "python failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        py.push(t.elapsed().as_secs_f64());
        let text = String::from_utf8_lossy(&out.stdout);
        if let Some(l) = text.lines().find_map(|l| l.strip_prefix("RESULT ")) {
            py_pairs = l
                .split(' ')
                .nth(2)
                .and_then(|x| x.parse().ok())
                .unwrap_or(0u64);
        }
    }
    let mut ours: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    let mut our_pairs = 0;
    for threads in [1, f.threads] {
        for _ in 0..f.runs {
            let t = Instant::now();
            let mut c = webmill(f);
            c.args(["--quiet", "--threads", &threads.to_string(), "--mem", "1G"])
                .args(["dedup", "--force", "--alg", "minhash"])
                .arg(&job);
            run_ok(&mut c);
            ours.entry(threads)
                .or_default()
                .push(t.elapsed().as_secs_f64());
            let j = Job::open(&job, false).expect("job");
            our_pairs = j
                .published(StageId::parse("dedup-minhash").unwrap())
                .expect("stage")
                .figures
                .extra["pairs"]
                .as_u64()
                .unwrap_or(0);
        }
    }
    let py_s = median(py);
    println!(
        "\n## datasketch MinHashLSH (threshold 0.8, 200 permutations, 4-word shingles) vs webmill dedup --alg minhash, {} generated docs, median of {}",
        f.ds_docs, f.runs
    );
    println!("datasketch (1 thread, from the TSV): {py_s:.1} s, {py_pairs} candidate pairs");
    for (threads, v) in ours {
        let s = median(v);
        println!(
            "webmill ({threads} thread(s), from the job): {s:.2} s, {our_pairs} verified pairs; datasketch / webmill = {:.1}×",
            py_s / s
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--case") {
        let mem = args[4].parse().expect("mem");
        run_case(Path::new(&args[2]), &args[3], mem);
        return;
    }
    let f = flags();
    std::fs::create_dir_all(&f.work).expect("work dir");
    println!("# dedup benchmark (shared 2-core machine: medians, noisy)");
    for part in &f.parts {
        match part.as_str() {
            "sketch" => part_sketch(&f),
            "gen" => part_gen(&f),
            "datasketch" => part_datasketch(&f),
            other => panic!("unknown part {other} (sketch, gen, datasketch)"),
        }
    }
}

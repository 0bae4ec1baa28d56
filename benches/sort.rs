//! External-sort benchmark: webmill's `sort::ExternalSorter` against the
//! `extsort` crate (0.5) under the same memory budget.
//!
//! Three engines: `webmill` with its defaults (raw runs, two overlapping
//! buffers of 42% of the budget), `webmill-tuned` (raw runs, one buffer of 84%
//! of the budget: half as many runs, but the producer waits during each
//! spill), and `extsort` with its parallel sort on.
//!
//! # Figures (2-core shared VM, budget 256 MiB, 50M pairs / 10M wide)
//!
//! Whole-process medians of 5 alternating pairs of single cases (`--case
//! ENGINE:WORKLOAD --records 50M|10M --budget 256M`, the directory removed
//! before each run), quiet machine, session 4 code:
//!
//! | workload | engine  | wall s | CPU s | peak RSS | wall ratio (per pair, median) |
//! |----------|---------|-------:|------:|---------:|------------------------------:|
//! | pairs    | webmill |   2.11 |  3.67 |  225 MiB |                 0.442 (2.26×) |
//! | pairs    | extsort |   5.05 |  6.72 |  259 MiB |                               |
//! | wide     | webmill |   2.26 |  3.75 |  226 MiB |                 0.489 (2.05×) |
//! | wide     | extsort |   4.67 |  5.66 |  259 MiB |                               |
//!
//! Per-pair CPU ratios: 0.55 (pairs), 0.65 (wide). An earlier round of 3
//! pairs an hour before gave 2.02× and 1.99×.
//!
//! `cargo bench --bench sort -- --runs 3` at a noisier moment (extsort's own
//! wide runs ranged 4.19–5.05 s, webmill's 2.09–2.95): pairs 2.08 vs 3.88 s
//! (1.86×), wide 2.74 vs 4.49 s (1.64×); CPU seconds 1.39× and 1.26× fewer.
//!
//! What made the difference, from 1.07×/1.13× (session 3): runs sorted by an
//! in-place block-wise radix sort (`sort::block_radix`; 0.155 against
//! 0.35–0.47 CPU s for one 6.7M-pair buffer); the merge cut into key ranges
//! merged by parallel threads (`sort::merge`); buffers on transparent huge
//! pages (0.74× wide, 0.90× pairs); a spill sorting while the previous one
//! writes; raw blocks read and written without extra copies or zero-fills;
//! key prefixes compared first and branch-free in the loser tree.
//!
//! # Data
//!
//! * `pairs`: `(u64, u32)` records, key = splitmix64(i), value = i (12 bytes
//!   encoded, 16 bytes in memory). Default 50M records (600 MB encoded, 800 MB
//!   in memory).
//! * `wide`: 100-byte records (`[u8; 100]`) laid out like sortbenchmark.org's
//!   `gensort` binary records: a random 10-byte key, then the record number in
//!   hex, break bytes and a filler of repeated hex digits. Default 10M records
//!   (1 GB).
//!
//! Both generators are deterministic (counter-based splitmix64), so every run
//! sorts the same bytes. The default budget is 256 MiB, smaller than either
//! data set, so both engines spill runs to disk and merge them.
//!
//! # What is timed
//!
//! Generation + push + `finish` + consuming the whole sorted output, in which
//! every record is checked to be ≥ its predecessor, counted and folded into an
//! order-independent fingerprint compared with the input's. Each engine runs in
//! its own child process (the binary re-executes itself with `--case`), so its
//! peak RSS (VmHWM) is its own. Engines alternate (order flipped every round),
//! `--runs` rounds each (default 3).
//!
//! # Figures printed
//!
//! Per run and, at the end, a table of medians per workload and engine:
//!
//! * wall seconds, split into push (generation + push), finish and drain;
//! * CPU seconds of the child (user + system, all threads; steadier than wall
//!   time on a busy machine);
//! * records/s and MB/s (input bytes = records × encoded size, MB = 10^6 B);
//! * bytes per record on disk: size of the sort directory once `finish`
//!   returns (both write raw encodings by default; webmill adds block
//!   headers, an index and checksums);
//! * runs formed / intermediate merge passes;
//! * peak RSS (median, and max over runs) and peak RSS minus budget;
//!
//! then the throughput ratio webmill / extsort and the CPU-seconds ratio.
//!
//! # extsort configuration
//!
//! Segment size = budget / in-memory record size (it spills once it holds more
//! than `segment_size` items, so it is given one less), parallel (rayon) segment
//! sort enabled, segments written under the same parent directory as webmill's
//! runs. Its merge (peek mode below 20 segments, a binary heap above) has no
//! other knob worth turning here.
//!
//! # Running
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo bench --bench sort                 # full size
//! CARGO_TARGET_DIR=/work/target-bench cargo bench --bench sort -- \
//!     --pairs 5M --wide 1M --budget 32M --runs 1                                 # quick
//! ```
//!
//! Options (environment variables in parentheses; arguments win):
//!
//! * `--pairs N` (`SORT_BENCH_PAIRS`), `--wide N` (`SORT_BENCH_WIDE`): record
//!   counts of the two workloads; `--records N` (`SORT_BENCH_RECORDS`) sets both.
//!   Counts accept `_` and the suffixes `K`, `M`, `G` (powers of 1000).
//! * `--budget SIZE` (`SORT_BENCH_BUDGET`): memory budget, e.g. `256M` (MiB).
//! * `--runs R` (`SORT_BENCH_RUNS`): runs per engine and workload.
//! * `--workload pairs|wide|all`.
//! * `--dir PATH` (`SORT_BENCH_DIR`): where the temporary sort directories go;
//!   default: next to the bench executable, i.e. in the target directory, not
//!   on a possibly small /tmp. They are removed afterwards.
//!
//! One case alone, e.g. under `perf record`:
//! `target/release/deps/sort-HASH --case webmill:pairs --records 50M --budget 256M --dir DIR`
//! (DIR is created and left in place).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::error::Error;
use std::io::{Read, Write};
use std::mem::size_of;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use webmill::resources::{format_bytes, parse_bytes, peak_rss};
use webmill::sort::{Combine, ExternalSorter, Record, RunCodec, SortConfig};

type BoxResult<T> = Result<T, Box<dyn Error>>;

const DEFAULT_PAIRS: u64 = 50_000_000;
const DEFAULT_WIDE: u64 = 10_000_000;
const DEFAULT_BUDGET: u64 = 256 << 20;
const DEFAULT_RUNS: usize = 3;

// ---------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------

/// splitmix64's output function: a bijective mix of a counter.
#[inline]
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A record type of a workload.
trait BenchRecord: Record + Copy {
    /// Bytes of the record's encoding (the "input bytes" of MB/s).
    const ENCODED: usize;
    /// Record number `i` of the deterministic input.
    fn make(i: u64) -> Self;
    /// A hash of the record; summed (wrapping) over a multiset it gives an
    /// order-independent fingerprint of the data.
    fn fingerprint(&self) -> u64;
}

impl BenchRecord for (u64, u32) {
    const ENCODED: usize = 12;

    #[inline]
    fn make(i: u64) -> Self {
        (splitmix64(i), i as u32)
    }

    #[inline]
    fn fingerprint(&self) -> u64 {
        splitmix64(self.0 ^ (u64::from(self.1) << 21))
    }
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

impl BenchRecord for [u8; 100] {
    const ENCODED: usize = 100;

    /// A gensort-style binary record: 10-byte key, `00 11`, the record number as
    /// 32 hex digits, `88 99 AA BB`, 48 bytes of filler (12 hex digits of the
    /// random number, each repeated 4 times), `CC DD EE FF`.
    #[inline]
    fn make(i: u64) -> Self {
        let (hi, lo) = (splitmix64(2 * i), splitmix64(2 * i + 1));
        let mut r = [0u8; 100];
        r[..8].copy_from_slice(&hi.to_be_bytes());
        r[8..10].copy_from_slice(&lo.to_be_bytes()[..2]);
        r[10..12].copy_from_slice(&[0x00, 0x11]);
        for (k, b) in r[12..44].iter_mut().enumerate() {
            let shift = 4 * (31 - k);
            *b = if shift < 64 {
                HEX[((i >> shift) & 15) as usize]
            } else {
                b'0'
            };
        }
        r[44..48].copy_from_slice(&[0x88, 0x99, 0xAA, 0xBB]);
        for (k, group) in r[48..96].chunks_exact_mut(4).enumerate() {
            group.fill(HEX[((lo >> (4 * k)) & 15) as usize]);
        }
        r[96..100].copy_from_slice(&[0xCC, 0xDD, 0xEE, 0xFF]);
        r
    }

    /// Mixes the first 8 key bytes with the low 16 hex digits of the record
    /// number, which together identify the record.
    #[inline]
    fn fingerprint(&self) -> u64 {
        let key = u64::from_le_bytes(self[..8].try_into().expect("8 bytes"));
        let num = u64::from_le_bytes(self[36..44].try_into().expect("8 bytes"));
        splitmix64(key ^ num.rotate_left(29))
    }
}

/// Checks the sorted output as it streams by: order, count, fingerprint.
struct Checker<T> {
    prev: Option<T>,
    count: u64,
    fingerprint: u64,
}

impl<T: BenchRecord> Checker<T> {
    fn new() -> Self {
        Checker {
            prev: None,
            count: 0,
            fingerprint: 0,
        }
    }

    #[inline]
    fn add(&mut self, r: T) -> BoxResult<()> {
        if let Some(p) = &self.prev {
            if p.cmp(&r) == Ordering::Greater {
                return Err(format!("output out of order at record {}", self.count).into());
            }
        }
        self.count += 1;
        self.fingerprint = self.fingerprint.wrapping_add(r.fingerprint());
        self.prev = Some(r);
        Ok(())
    }

    fn verify(&self, records: u64, fingerprint: u64) -> BoxResult<()> {
        if self.count != records {
            return Err(format!("output has {} records, input {records}", self.count).into());
        }
        if self.fingerprint != fingerprint {
            return Err("output records differ from the input (fingerprint mismatch)".into());
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Engines (child side)
// ---------------------------------------------------------------------------

/// What a child measures.
#[derive(Default)]
struct Measured {
    push_secs: f64,
    finish_secs: f64,
    drain_secs: f64,
    /// Bytes in the sort directory once `finish` returned.
    disk_bytes: u64,
    /// Bytes of run files written in all (includes intermediate merge passes).
    written_bytes: u64,
    /// Runs (segments) formed from input.
    runs: u64,
    merge_passes: u64,
}

/// Total size of the files directly in `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn run_webmill<T: BenchRecord>(
    n: u64,
    budget: u64,
    dir: &Path,
    tuned: bool,
) -> BoxResult<Measured> {
    let mut m = Measured::default();
    let t0 = Instant::now();
    let mut cfg = SortConfig::new(dir, budget);
    if tuned {
        // For a producer that makes records cheaply: one big buffer (half as
        // many runs to merge); raw runs (the default) said explicitly.
        cfg.codec = RunCodec::Raw;
        cfg.overlap = false;
    }
    let mut sorter = ExternalSorter::<T>::new(cfg, Combine::None)?;
    let mut fingerprint = 0u64;
    for i in 0..n {
        let r = T::make(i);
        fingerprint = fingerprint.wrapping_add(r.fingerprint());
        sorter.push(r)?;
    }
    let t1 = Instant::now();
    let mut sorted = sorter.finish()?;
    let t2 = Instant::now();
    let stats = sorted.stats().clone();
    m.disk_bytes = dir_bytes(dir);
    let t2b = Instant::now(); // dir_bytes is not part of the sort
    let mut check = Checker::<T>::new();
    while let Some(r) = sorted.next_record()? {
        check.add(r)?;
    }
    let t3 = Instant::now();
    check.verify(n, fingerprint)?;
    m.push_secs = (t1 - t0).as_secs_f64();
    m.finish_secs = (t2 - t1).as_secs_f64();
    m.drain_secs = (t3 - t2b).as_secs_f64();
    m.written_bytes = stats.run_bytes;
    m.runs = stats.runs as u64;
    m.merge_passes = stats.merge_passes as u64;
    Ok(m)
}

/// extsort needs its own `Sortable` impls (orphan rule), hence this newtype
/// with the same order as the wrapped record.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Ext<T>(T);

impl extsort::Sortable for Ext<(u64, u32)> {
    #[inline]
    fn encode<W: Write>(&self, w: &mut W) -> std::io::Result<()> {
        let mut b = [0u8; 12];
        b[..8].copy_from_slice(&self.0 .0.to_le_bytes());
        b[8..].copy_from_slice(&self.0 .1.to_le_bytes());
        w.write_all(&b)
    }

    #[inline]
    fn decode<R: Read>(r: &mut R) -> std::io::Result<Self> {
        let mut b = [0u8; 12];
        r.read_exact(&mut b)?;
        let k = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        let v = u32::from_le_bytes(b[8..].try_into().expect("4 bytes"));
        Ok(Ext((k, v)))
    }
}

impl extsort::Sortable for Ext<[u8; 100]> {
    #[inline]
    fn encode<W: Write>(&self, w: &mut W) -> std::io::Result<()> {
        w.write_all(&self.0)
    }

    #[inline]
    fn decode<R: Read>(r: &mut R) -> std::io::Result<Self> {
        let mut b = [0u8; 100];
        r.read_exact(&mut b)?;
        Ok(Ext(b))
    }
}

fn run_extsort<T: BenchRecord>(n: u64, budget: u64, dir: &Path) -> BoxResult<Measured>
where
    Ext<T>: extsort::Sortable + Ord,
{
    let mut m = Measured::default();
    std::fs::create_dir_all(dir)?;
    // Equal memory: the buffer holds at most budget / size_of::<T>() records
    // (extsort spills when it holds more than `segment_size`).
    let items = (budget / size_of::<T>() as u64).max(2) as usize;
    let t0 = Instant::now();
    let mut sorter = extsort::ExternalSorter::new()
        .with_segment_size(items - 1)
        .with_sort_dir(dir.to_path_buf())
        .with_parallel_sort()
        .pushed::<Ext<T>>();
    let mut fingerprint = 0u64;
    for i in 0..n {
        let r = T::make(i);
        fingerprint = fingerprint.wrapping_add(r.fingerprint());
        sorter.push(Ext(r))?;
    }
    let t1 = Instant::now();
    let sorted = sorter.done()?;
    let t2 = Instant::now();
    m.runs = sorted.disk_segment_count() as u64;
    m.disk_bytes = dir_bytes(dir);
    m.written_bytes = m.disk_bytes;
    let t2b = Instant::now();
    let mut check = Checker::<T>::new();
    for r in sorted {
        check.add(r?.0)?;
    }
    let t3 = Instant::now();
    check.verify(n, fingerprint)?;
    m.push_secs = (t1 - t0).as_secs_f64();
    m.finish_secs = (t2 - t1).as_secs_f64();
    m.drain_secs = (t3 - t2b).as_secs_f64();
    Ok(m)
}

/// CPU seconds (user + system, all threads) the process used so far, from
/// `/proc/self/stat` (in USER_HZ ticks, 100 per second on Linux).
fn cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses: state is
    // field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

/// Child mode: runs one case and prints one `RESULT key=value ...` line.
fn child(case: &str, n: u64, budget: u64, dir: &Path) -> BoxResult<()> {
    let m = match case {
        "webmill:pairs" => run_webmill::<(u64, u32)>(n, budget, dir, false)?,
        "webmill:wide" => run_webmill::<[u8; 100]>(n, budget, dir, false)?,
        "webmill-tuned:pairs" => run_webmill::<(u64, u32)>(n, budget, dir, true)?,
        "webmill-tuned:wide" => run_webmill::<[u8; 100]>(n, budget, dir, true)?,
        "extsort:pairs" => run_extsort::<(u64, u32)>(n, budget, dir)?,
        "extsort:wide" => run_extsort::<[u8; 100]>(n, budget, dir)?,
        _ => return Err(format!("unknown case {case:?}").into()),
    };
    let peak = peak_rss().ok_or("cannot read VmHWM from /proc/self/status")?;
    let cpu = cpu_secs().ok_or("cannot read /proc/self/stat")?;
    println!(
        "RESULT push_secs={} finish_secs={} drain_secs={} cpu_secs={cpu} disk_bytes={} \
         written_bytes={} runs={} merge_passes={} peak_rss={}",
        m.push_secs,
        m.finish_secs,
        m.drain_secs,
        m.disk_bytes,
        m.written_bytes,
        m.runs,
        m.merge_passes,
        peak
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Parent: runs the cases, reports
// ---------------------------------------------------------------------------

struct Options {
    pairs: u64,
    wide: u64,
    budget: u64,
    runs: usize,
    workloads: Vec<&'static str>,
    dir: Option<PathBuf>,
    /// Child mode: the case to run, with `records` records in `dir`.
    case: Option<String>,
    records: Option<u64>,
}

/// Parses a record count: `50000000`, `50_000_000`, `50M`, `1.5K`.
fn parse_count(text: &str) -> BoxResult<u64> {
    let t: String = text.trim().chars().filter(|&c| c != '_').collect();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('G') => (&t[..t.len() - 1], 1e9),
        _ => (&t[..], 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("cannot read {text:?} as a record count"))?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("{text:?} is not a record count").into());
    }
    Ok((v * mult).round() as u64)
}

fn parse_options() -> BoxResult<Options> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let mut o = Options {
        pairs: DEFAULT_PAIRS,
        wide: DEFAULT_WIDE,
        budget: DEFAULT_BUDGET,
        runs: DEFAULT_RUNS,
        workloads: vec!["pairs", "wide"],
        dir: env("SORT_BENCH_DIR").map(PathBuf::from),
        case: None,
        records: None,
    };
    if let Some(v) = env("SORT_BENCH_RECORDS") {
        o.pairs = parse_count(&v)?;
        o.wide = o.pairs;
    }
    if let Some(v) = env("SORT_BENCH_PAIRS") {
        o.pairs = parse_count(&v)?;
    }
    if let Some(v) = env("SORT_BENCH_WIDE") {
        o.wide = parse_count(&v)?;
    }
    if let Some(v) = env("SORT_BENCH_BUDGET") {
        o.budget = parse_bytes(&v)?;
    }
    if let Some(v) = env("SORT_BENCH_RUNS") {
        o.runs = v.parse()?;
    }
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        // `cargo bench` passes `--bench`; libtest-style flags are ignored too.
        if arg == "--bench" || arg == "--nocapture" {
            continue;
        }
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--pairs" => o.pairs = parse_count(&value()?)?,
            "--wide" => o.wide = parse_count(&value()?)?,
            "--records" => {
                let n = parse_count(&value()?)?;
                (o.pairs, o.wide, o.records) = (n, n, Some(n));
            }
            "--budget" => o.budget = parse_bytes(&value()?)?,
            "--runs" => o.runs = value()?.parse()?,
            "--dir" => o.dir = Some(PathBuf::from(value()?)),
            "--case" => o.case = Some(value()?),
            "--workload" => {
                o.workloads = match value()?.as_str() {
                    "pairs" => vec!["pairs"],
                    "wide" => vec!["wide"],
                    "all" => vec!["pairs", "wide"],
                    w => return Err(format!("unknown workload {w:?} (pairs, wide, all)").into()),
                }
            }
            _ => {
                return Err(format!(
                    "unknown argument {arg:?}; options: --pairs N --wide N --records N \
                     --budget SIZE --runs R --workload pairs|wide|all --dir PATH"
                )
                .into())
            }
        }
    }
    if o.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    Ok(o)
}

/// One child's figures, keyed as printed on its `RESULT` line.
type Figures = HashMap<String, f64>;

fn run_child(case: &str, n: u64, budget: u64, dir: &Path) -> BoxResult<Figures> {
    let exe = std::env::current_exe()?;
    let output = Command::new(exe)
        .args(["--case", case, "--records", &n.to_string()])
        .args(["--budget", &budget.to_string()])
        .arg("--dir")
        .arg(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()?;
    if !output.status.success() {
        return Err(format!("case {case} failed ({})", output.status).into());
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .ok_or(format!("case {case} printed no RESULT line"))?;
    let mut figures = Figures::new();
    for kv in line.split_whitespace() {
        let (k, v) = kv.split_once('=').ok_or("malformed RESULT line")?;
        figures.insert(k.to_string(), v.parse()?);
    }
    Ok(figures)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Summary of one engine on one workload: medians over its runs.
struct Summary {
    workload: String,
    engine: &'static str,
    wall: f64,
    push: f64,
    finish: f64,
    drain: f64,
    cpu: f64,
    records_per_sec: f64,
    mb_per_sec: f64,
    disk_per_record: f64,
    written_per_record: f64,
    runs: f64,
    merge_passes: f64,
    peak_rss: f64,
    peak_rss_max: f64,
}

fn summarize(
    workload: &str,
    engine: &'static str,
    n: u64,
    encoded: u64,
    runs: &[Figures],
) -> Summary {
    let med = |f: &dyn Fn(&Figures) -> f64| median(runs.iter().map(f).collect());
    let wall = |f: &Figures| f["push_secs"] + f["finish_secs"] + f["drain_secs"];
    Summary {
        workload: workload.to_string(),
        engine,
        wall: med(&wall),
        push: med(&|f| f["push_secs"]),
        finish: med(&|f| f["finish_secs"]),
        drain: med(&|f| f["drain_secs"]),
        cpu: med(&|f| f["cpu_secs"]),
        records_per_sec: med(&|f| n as f64 / wall(f)),
        mb_per_sec: med(&|f| (n * encoded) as f64 / 1e6 / wall(f)),
        disk_per_record: med(&|f| f["disk_bytes"] / n.max(1) as f64),
        written_per_record: med(&|f| f["written_bytes"] / n.max(1) as f64),
        runs: med(&|f| f["runs"]),
        merge_passes: med(&|f| f["merge_passes"]),
        peak_rss: med(&|f| f["peak_rss"]),
        peak_rss_max: runs.iter().map(|f| f["peak_rss"]).fold(0.0, f64::max),
    }
}

/// Signed byte difference for people: `+12.3 MiB`, `-40.0 MiB`.
fn format_signed(v: f64) -> String {
    let sign = if v < 0.0 { "-" } else { "+" };
    format!("{sign}{}", format_bytes(v.abs() as u64))
}

fn parent(o: &Options) -> BoxResult<()> {
    let base = match &o.dir {
        Some(d) => d.clone(),
        None => std::env::current_exe()?
            .parent()
            .ok_or("the bench executable has no parent directory")?
            .to_path_buf(),
    };
    std::fs::create_dir_all(&base)?;
    // Removed (with whatever a failed child left) when dropped.
    let tmp = tempfile::Builder::new()
        .prefix("sort-bench-")
        .tempdir_in(&base)?;
    println!(
        "external sort benchmark: budget {}, {} run(s) per engine, {} cores, temp dir {}",
        format_bytes(o.budget),
        o.runs,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        tmp.path().display()
    );

    // webmill with its defaults (raw runs, two overlapping buffers), webmill
    // tuned for cheap records (one buffer), and the baseline.
    let engines = ["webmill", "webmill-tuned", "extsort"];
    let mut summaries = Vec::new();
    for &workload in &o.workloads {
        let (n, encoded, in_memory, label) = match workload {
            "pairs" => (
                o.pairs,
                <(u64, u32)>::ENCODED,
                size_of::<(u64, u32)>(),
                "(u64, u32)",
            ),
            _ => (
                o.wide,
                <[u8; 100]>::ENCODED,
                size_of::<[u8; 100]>(),
                "[u8; 100] gensort-style",
            ),
        };
        let (encoded, in_memory) = (encoded as u64, in_memory as u64);
        println!(
            "\n== {workload}: {n} records of {label}: {} encoded, {} in memory",
            format_bytes(n * encoded),
            format_bytes(n * in_memory)
        );
        if n * in_memory <= o.budget {
            println!("   (warning: the data fits in the budget; this measures an in-memory sort)");
        }
        let mut results: Vec<Vec<Figures>> = vec![Vec::new(); engines.len()];
        for round in 0..o.runs {
            // Alternate engines, flipping the order every round (ABBA...), so
            // slow drift of a noisy machine hits both alike.
            let order: Vec<usize> = if round % 2 == 0 {
                vec![0, 1, 2]
            } else {
                vec![2, 1, 0]
            };
            for e in order {
                let case = format!("{}:{workload}", engines[e]);
                let dir = tmp
                    .path()
                    .join(format!("{}-{workload}-{round}", engines[e]));
                let f = run_child(&case, n, o.budget, &dir)?;
                let _ = std::fs::remove_dir_all(&dir);
                let wall = f["push_secs"] + f["finish_secs"] + f["drain_secs"];
                println!(
                    "   run {} {:13} {:7.2} s (push {:.2} + finish {:.2} + drain {:.2}), \
                     cpu {:6.2} s  {:6.2} Mrec/s  {:7.1} MB/s  peak RSS {}",
                    round + 1,
                    engines[e],
                    wall,
                    f["push_secs"],
                    f["finish_secs"],
                    f["drain_secs"],
                    f["cpu_secs"],
                    n as f64 / wall / 1e6,
                    (n * encoded) as f64 / 1e6 / wall,
                    format_bytes(f["peak_rss"] as u64)
                );
                results[e].push(f);
            }
        }
        for (e, runs) in results.iter().enumerate() {
            summaries.push(summarize(workload, engines[e], n, encoded, runs));
        }
    }

    println!(
        "\nMedians of {} run(s); budget {}; MB = 10^6 bytes of encoded input",
        o.runs,
        format_bytes(o.budget)
    );
    println!(
        "{:<8} {:<8} {:>8} {:>22} {:>7} {:>8} {:>8} {:>9} {:>9} {:>10} {:>11} {:>11}",
        "workload",
        "engine",
        "wall s",
        "push/finish/drain s",
        "cpu s",
        "Mrec/s",
        "MB/s",
        "disk B/r",
        "runs/pass",
        "peak RSS",
        "RSS-budget",
        "max RSS"
    );
    for s in &summaries {
        println!(
            "{:<8} {:<8} {:>8.2} {:>22} {:>7.2} {:>8.2} {:>8.1} {:>9} {:>9} {:>10} {:>11} {:>11}",
            s.workload,
            s.engine,
            s.wall,
            format!("{:.2}/{:.2}/{:.2}", s.push, s.finish, s.drain),
            s.cpu,
            s.records_per_sec / 1e6,
            s.mb_per_sec,
            if s.written_per_record > s.disk_per_record + 0.005 {
                format!("{:.2}*", s.disk_per_record)
            } else {
                format!("{:.2}", s.disk_per_record)
            },
            format!("{}/{}", s.runs, s.merge_passes),
            format_bytes(s.peak_rss as u64),
            format_signed(s.peak_rss - o.budget as f64),
            format_bytes(s.peak_rss_max as u64),
        );
    }
    if summaries
        .iter()
        .any(|s| s.written_per_record > s.disk_per_record + 0.005)
    {
        println!("(* more was written in all, counting intermediate merge passes)");
    }
    println!();
    for w in &o.workloads {
        let find = |e: &str| summaries.iter().find(|s| s.workload == *w && s.engine == e);
        for ours in ["webmill", "webmill-tuned"] {
            if let (Some(a), Some(b)) = (find(ours), find("extsort")) {
                println!(
                    "{w}: {ours} / extsort throughput = {:.2}x (CPU seconds extsort / {ours} \
                     = {:.2}x); {ours} peak RSS {} budget",
                    a.records_per_sec / b.records_per_sec,
                    b.cpu / a.cpu,
                    format_signed(a.peak_rss - o.budget as f64)
                );
            }
        }
    }
    tmp.close()?;
    Ok(())
}

fn main() {
    let result = parse_options().and_then(|o| match &o.case {
        Some(case) => {
            let dir = o.dir.clone().ok_or("--case needs --dir")?;
            let n = o.records.ok_or("--case needs --records")?;
            child(case, n, o.budget, &dir)
        }
        None => parent(&o),
    });
    if let Err(e) = result {
        eprintln!("sort bench: {e}");
        std::process::exit(1);
    }
}

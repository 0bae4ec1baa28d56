//! Near-duplicate sketching benchmark: single-thread throughput of the per-page
//! sketches of `webmill::dedup` on real pages.
//!
//! # Data
//!
//! Real HTML from Debian's documentation packages extracted under `/work/corpus`
//! (or `--corpus DIR`): `rust-doc` (the Rust books and std API docs) and
//! `llvm-16-doc` (the LLVM manuals and Doxygen pages). From each, at most `--docs N`
//! files (default 2000), sampled at an even stride over the sorted paths. The text is
//! made by a crude, regex-free loop — drop tags, `<script>` and `<style>` contents,
//! split on non-alphanumerics, lowercase — which gives realistic word streams (the
//! real extractor lives in `ingest`). Reading and tokenizing are not timed.
//!
//! # What is timed
//!
//! One thread, every page of the sample sketched in turn, from its words (`&[String]`)
//! to the sketch, scratch buffers reused across pages, as a dedup stage would:
//!
//! * `words`: word fingerprints alone (part of every sketch below);
//! * `exact`: [`exact_fingerprint`];
//! * `broder`: Alg. B, 84 min-values of 10-word shingles → 6 supershingles → 15
//!   megashingles;
//! * `charikar`: Alg. C, 384 sign bits (+ the 13 subsketches);
//! * `minhash`: 200 min-values of 4-word shingles (+ the 20 band keys).
//!
//! Every sketch includes computing the page's word fingerprints; on x86-64 the
//! min-values and Alg. C's accumulation take their AVX2 path when the CPU has it.
//!
//! Two sets: all sampled pages, and those of 500–2000 words (the goal's page
//! size). `--runs R` rounds (default 3) of all algorithms per set; a round sketches
//! the set as many times as it takes to reach 2M words; the table gives the median
//! of the rounds. Times are the CPU time of the benchmark thread
//! (`/proc/thread-self/schedstat`), steadier than wall time on a shared machine;
//! wall-clock rates are printed per round in parentheses.
//!
//! # Figures printed
//!
//! Pages, words per page (mean, median), then per set and algorithm: docs/s on one
//! core, µs/doc, million words/s, µs per 1000 words, and the sketch's bytes per
//! page (what the dedup stage would sort: one fingerprint; 15 megashingles; 48
//! bytes + 13 subsketches; 200 32-bit values + 20 band keys). Goals (issue 5): ≥ 10,000 docs/s/core for min-hash, ≥
//! 5,000 for Alg. B, on pages of 500–2000 words.
//!
//! # Running
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-sketch cargo bench --bench sketch
//! CARGO_TARGET_DIR=/work/target-sketch cargo bench --bench sketch -- --docs 500 --runs 1
//! ```

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use webmill::dedup::{
    exact_fingerprint, subsketches, word_fingerprints, BroderSketcher, CharikarSketcher, MinHasher,
    Scratch,
};

const DEFAULT_DOCS: usize = 2000;
const DEFAULT_RUNS: usize = 3;
const CORPORA: [&str; 2] = [
    "rust-doc/usr/share/doc/rust-doc/html",
    "llvm-16-doc/usr/share/doc/llvm-16-doc/html",
];

/// Crude words of an HTML page (see the header).
fn crude_words(html: &str) -> Vec<String> {
    let lower = html.to_lowercase();
    let mut text = String::with_capacity(lower.len());
    let mut rest = lower.as_str();
    while let Some(start) = rest.find('<') {
        text.push_str(&rest[..start]);
        text.push(' ');
        let tag = &rest[start..];
        let end = if tag.starts_with("<script") {
            tag.find("</script>").map(|i| i + 9)
        } else if tag.starts_with("<style") {
            tag.find("</style>").map(|i| i + 8)
        } else {
            tag.find('>').map(|i| i + 1)
        };
        match end {
            Some(n) => rest = &tag[n..],
            None => {
                rest = "";
                break;
            }
        }
    }
    text.push_str(rest);
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            html_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "html") {
            out.push(path);
        }
    }
}

/// One algorithm's pass over all pages; returns a checksum so nothing is optimized
/// away.
type Pass<'a> = Box<dyn FnMut(&[Vec<String>]) -> u64 + 'a>;

/// CPU time of this thread in seconds (`/proc/thread-self/schedstat`, ns on CPU):
/// on a shared machine it excludes the time other processes hold the core.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let docs_per_corpus: usize =
        get("--docs").map_or(DEFAULT_DOCS, |v| v.parse().expect("--docs N"));
    let runs: usize = get("--runs").map_or(DEFAULT_RUNS, |v| v.parse().expect("--runs R"));
    let corpus = PathBuf::from(get("--corpus").unwrap_or_else(|| "/work/corpus".into()));
    let only = get("--only");

    let mut pages: Vec<Vec<String>> = Vec::new();
    for sub in CORPORA {
        let mut files = Vec::new();
        html_files(&corpus.join(sub), &mut files);
        files.sort();
        if files.is_empty() {
            println!("{}: no HTML files, skipped", corpus.join(sub).display());
            continue;
        }
        let stride = files.len().div_ceil(docs_per_corpus).max(1);
        let mut n = 0;
        for path in files.iter().step_by(stride) {
            if let Ok(bytes) = std::fs::read(path) {
                pages.push(crude_words(&String::from_utf8_lossy(&bytes)));
                n += 1;
            }
        }
        println!("{sub}: {n} of {} pages", files.len());
    }
    if pages.is_empty() {
        println!(
            "SKIPPED: no pages under {} (pass --corpus DIR)",
            corpus.display()
        );
        return;
    }
    let total_words: usize = pages.iter().map(Vec::len).sum();
    let mut lens: Vec<f64> = pages.iter().map(|p| p.len() as f64).collect();
    let mean_words = total_words as f64 / pages.len() as f64;
    let median_words = {
        lens.sort_by(f64::total_cmp);
        lens[lens.len() / 2]
    };
    let empty = pages.iter().filter(|p| p.is_empty()).count();
    println!(
        "{} pages, {} words: {:.0} words/page mean, {:.0} median, {} empty; {} run(s), one thread",
        pages.len(),
        total_words,
        mean_words,
        median_words,
        empty,
        runs
    );

    let broder = BroderSketcher::new();
    let charikar = CharikarSketcher::new();
    let minhash = MinHasher::new();
    let mut bscratch = Scratch::new();
    let mut cscratch = Scratch::new();
    let mut mscratch = Scratch::new();

    // (name, sketch bytes per page, pass)
    let mut passes: Vec<(&str, &str, Pass)> = vec![
        (
            "words",
            "-",
            Box::new(|pages: &[Vec<String>]| {
                let mut sum = 0u64;
                let mut fps = Vec::new();
                for p in pages {
                    word_fingerprints(p, &mut fps);
                    sum = sum.wrapping_add(fps.iter().fold(0, |a, &b| a ^ b));
                }
                sum
            }),
        ),
        (
            "exact",
            "8",
            Box::new(|pages: &[Vec<String>]| {
                pages
                    .iter()
                    .fold(0u64, |s, p| s.wrapping_add(exact_fingerprint(p)))
            }),
        ),
        (
            "broder",
            "120 (15 megashingles)",
            Box::new(|pages: &[Vec<String>]| {
                let mut sum = 0u64;
                for p in pages {
                    if let Some(s) = broder.sketch(p, &mut bscratch) {
                        sum = sum.wrapping_add(s.megashingles[0]);
                    }
                }
                sum
            }),
        ),
        (
            "charikar",
            "48 + 13 subsketches",
            Box::new(|pages: &[Vec<String>]| {
                let mut sum = 0u64;
                for p in pages {
                    if let Some(s) = charikar.sketch(p, &mut cscratch) {
                        sum = sum.wrapping_add(subsketches(&s)[12].key());
                    }
                }
                sum
            }),
        ),
        (
            "minhash",
            "800 + 20 band keys",
            Box::new(|pages: &[Vec<String>]| {
                let mut sum = 0u64;
                for p in pages {
                    if let Some(s) = minhash.sketch(p, &mut mscratch) {
                        sum = minhash.bands(&s).fold(sum, |a, (_, k)| a.wrapping_add(k));
                    }
                }
                sum
            }),
        ),
    ];

    if let Some(only) = &only {
        passes.retain(|(name, _, _)| name == only);
    }
    let cpu_clock = thread_cpu_seconds().is_some();
    println!(
        "timing: {}",
        if cpu_clock {
            "CPU time of the benchmark thread (wall time in parentheses)"
        } else {
            "wall time (no /proc/thread-self/schedstat)"
        }
    );
    // The goal's page size: the pages of 500–2000 words, timed on their own.
    let mid: Vec<Vec<String>> = pages
        .iter()
        .filter(|p| (500..=2000).contains(&p.len()))
        .cloned()
        .collect();
    let sets: [(&str, &[Vec<String>]); 2] =
        [("all pages", &pages), ("pages of 500-2000 words", &mid)];
    for (label, set) in sets {
        if set.is_empty() {
            continue;
        }
        let words: usize = set.iter().map(Vec::len).sum();
        println!();
        println!(
            "== {label}: {} pages, {:.0} words/page mean ==",
            set.len(),
            words as f64 / set.len() as f64
        );
        // Small sets are sketched several times per measurement (≥ 2M words).
        let reps = 2_000_000usize.div_ceil(words.max(1)).max(1);
        println!("({reps} pass(es) per measurement)");
        let mut seconds: Vec<Vec<f64>> = vec![Vec::new(); passes.len()];
        for run in 1..=runs {
            let mut line = format!("run {run}:");
            for (i, (name, _, pass)) in passes.iter_mut().enumerate() {
                let cpu0 = thread_cpu_seconds();
                let start = Instant::now();
                let mut check = 0u64;
                for _ in 0..reps {
                    check = check.wrapping_add(black_box(pass(black_box(set))));
                }
                let wall = start.elapsed().as_secs_f64() / reps as f64;
                let s = match (cpu0, thread_cpu_seconds()) {
                    (Some(a), Some(b)) => (b - a) / reps as f64,
                    _ => wall,
                };
                seconds[i].push(s);
                line.push_str(&format!(
                    " {name} {:.0}/s ({:.0}/s)",
                    set.len() as f64 / s,
                    set.len() as f64 / wall
                ));
                black_box(check);
            }
            println!("{line}");
        }
        println!(
            "{:<9} {:>10} {:>9} {:>10} {:>14}  sketch bytes/page   (medians of {runs})",
            "algorithm", "docs/s", "µs/doc", "Mwords/s", "µs/1000 words"
        );
        for (i, (name, bytes, _)) in passes.iter().enumerate() {
            let s = median(seconds[i].clone());
            println!(
                "{:<9} {:>10.0} {:>9.1} {:>10.1} {:>14.1}  {}",
                name,
                set.len() as f64 / s,
                s * 1e6 / set.len() as f64,
                words as f64 / s / 1e6,
                s * 1e9 / words as f64,
                bytes
            );
        }
    }
}

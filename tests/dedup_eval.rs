//! `dedup-eval` checked two ways: on a generated site with planted
//! near-duplicates at controlled similarities (the report's counts against an
//! independent brute-force recount, its rates against the theoretical curves),
//! and on real near-duplicates — Debian's llvm-15-doc and llvm-16-doc HTML
//! ingested as two crawls of one site — against the goals (min-hash
//! meets both at 0.8 with `--verify exact`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{corpus_dir, ingested_job, job_page_texts, write_word_pages, Rng};
use webmill::dedup::eval::{evaluate, EvalOptions, EvalReport};
use webmill::dedup::files::for_each_pair;
use webmill::dedup::shingle::{cosine, jaccard, shingle_set};
use webmill::dedup::stage::{dedup, DedupOptions, Verify};
use webmill::dedup::Alg;
use webmill::docs::DocTable;
use webmill::job::{Job, JobFile, Settings, StageId};

/// `groups` base pages of 1,000 random words (vocabulary 200,000: unrelated
/// pages share almost no shingle), each with 3 variants with `m` words
/// replaced, `m` uniform in 0..=15 for half of them (the region of Alg. B and
/// Alg. C) and in 16..=70 for the other half (min-hash's). Returns path → words.
fn planted_site(dir: &Path, groups: usize) -> BTreeMap<String, Vec<String>> {
    let mut rng = Rng(11);
    let word = |rng: &mut Rng| format!("w{}", rng.below(200_000));
    let mut pages = BTreeMap::new();
    for g in 0..groups {
        let base: Vec<String> = (0..1000).map(|_| word(&mut rng)).collect();
        for v in 0..3 {
            let m = if rng.below(2) == 0 {
                rng.below(16)
            } else {
                16 + rng.below(55)
            };
            let mut page = base.clone();
            for _ in 0..m {
                let i = rng.below(page.len() as u64) as usize;
                page[i] = word(&mut rng);
            }
            pages.insert(format!("g{g:04}/v{v}.html"), page);
        }
        pages.insert(format!("g{g:04}/base.html"), base);
    }
    write_word_pages(dir, &pages);
    pages
}

fn ingested(job_dir: &Path, inputs: &[String]) -> Job {
    ingested_job(job_dir, inputs, 256 << 20)
}

/// docID → URL of the crawled docs.
fn urls(job: &Job) -> BTreeMap<u64, String> {
    DocTable::open(job.file(JobFile::Docs).unwrap())
        .unwrap()
        .iter()
        .map(|r| r.unwrap())
        .filter(|(_, d)| d.crawled)
        .map(|(id, d)| (id, d.url))
        .collect()
}

fn reported(job: &Job, alg: Alg) -> BTreeSet<(u64, u64)> {
    let mut out = BTreeSet::new();
    for_each_pair(&job.file(JobFile::Pairs(alg)).unwrap(), |a, b, _| {
        out.insert((a, b));
        Ok(())
    })
    .unwrap();
    out
}

/// The per-bin check against theory: the measured rate within `points` of
/// the bin-averaged curve, or within 4 standard deviations of the binomial
/// count (small bins), for bins of at least `min_pairs` pairs.
fn check_against_theory(r: &EvalReport, points: f64, min_pairs: u64) -> Vec<String> {
    let mut bad = Vec::new();
    for b in &r.bins {
        if b.pairs < min_pairs {
            continue;
        }
        let (rate, theory) = (b.rate.unwrap(), b.theory.unwrap());
        let sd = (theory * (1.0 - theory) / b.pairs as f64).sqrt();
        if (rate - theory).abs() > points.max(4.0 * sd) {
            bad.push(format!(
                "{} {}: rate {rate:.4} vs theory {theory:.4} over {} pairs",
                r.setup.algorithm, b.label, b.pairs
            ));
        }
    }
    bad
}

/// Sorted (word, count) of a page.
fn term_frequencies(words: &[String]) -> Vec<(&str, u64)> {
    let mut w: Vec<&str> = words.iter().map(String::as_str).collect();
    w.sort_unstable();
    let mut out: Vec<(&str, u64)> = Vec::new();
    for x in w {
        match out.last_mut() {
            Some((y, c)) if *y == x => *c += 1,
            _ => out.push((x, 1)),
        }
    }
    out
}

/// Cosine of two term-frequency vectors (words compared as strings).
fn tf_cosine(a: &[(&str, u64)], b: &[(&str, u64)]) -> f64 {
    let (mut i, mut j, mut dot) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                dot += a[i].1 * b[j].1;
                i += 1;
                j += 1;
            }
        }
    }
    let norm = |v: &[(&str, u64)]| (v.iter().map(|x| x.1 * x.1).sum::<u64>() as f64).sqrt();
    dot as f64 / (norm(a) * norm(b))
}

#[test]
fn planted_pairs_binned_exactly_and_rates_follow_theory() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let pages = planted_site(&site, 250);
    let mut job = ingested(
        &dir.path().join("job"),
        &[format!("http://p.example/={}", site.display())],
    );
    let opts = DedupOptions {
        algs: vec![Alg::Exact, Alg::Broder, Alg::Charikar, Alg::MinHash],
        ..DedupOptions::default()
    };
    dedup(&mut job, &opts, &Settings::new(64 << 20)).unwrap();
    let urls = urls(&job);
    let words = |d: u64| &pages[urls[&d].trim_start_matches("http://p.example/")];
    let docs: Vec<u64> = urls.keys().copied().collect();
    assert_eq!(docs.len(), 1000);

    let sets4: Vec<Vec<u64>> = docs
        .iter()
        .map(|&d| shingle_set(words(d), 4).unwrap())
        .collect();
    let sets10: Vec<Vec<u64>> = docs
        .iter()
        .map(|&d| shingle_set(words(d), 10).unwrap())
        .collect();
    let tfs: Vec<Vec<(&str, u64)>> = docs.iter().map(|&d| term_frequencies(words(d))).collect();
    // The merge below against the library's reference on a few pairs.
    for i in 0..8 {
        let (a, b) = (words(docs[i]), words(docs[i + 1]));
        assert!((tf_cosine(&tfs[i], &tfs[i + 1]) - cosine(a, b)).abs() < 1e-12);
    }
    for alg in [Alg::MinHash, Alg::Broder, Alg::Charikar, Alg::Exact] {
        let r = evaluate(
            &job,
            &EvalOptions {
                sample: 5000,
                ..EvalOptions::new(alg)
            },
        )
        .unwrap();
        eprintln!("{}", r.table());
        assert_eq!(r.sample, 1000);
        assert_eq!(r.pairs, 1000 * 999 / 2);
        // Independent recount: every pair by the library's reference functions
        // (cosine on the word strings), binned by the report's edges.
        let got = reported(&job, alg);
        // Per pair: (bin, reported, similarity ≥ 0.9), rows in parallel.
        use rayon::prelude::*;
        let counts: Vec<(usize, bool, bool)> = (0..docs.len())
            .into_par_iter()
            .flat_map_iter(|i| {
                let (docs, got, r) = (&docs, &got, &r);
                let (sets4, sets10, tfs) = (&sets4, &sets10, &tfs);
                (i + 1..docs.len()).map(move |j| {
                    let s = match alg {
                        Alg::MinHash => jaccard(&sets4[i], &sets4[j]),
                        Alg::Broder => jaccard(&sets10[i], &sets10[j]),
                        Alg::Charikar => {
                            let c = tf_cosine(&tfs[i], &tfs[j]);
                            if c >= 1.0 - 1e-12 {
                                1.0
                            } else {
                                c
                            }
                        }
                        Alg::Exact => f64::from(u8::from(words(docs[i]) == words(docs[j]))),
                    };
                    let b = r.bins.iter().rposition(|b| s >= b.lo).unwrap();
                    (b, got.contains(&(docs[i], docs[j])), s >= 0.9)
                })
            })
            .collect();
        let mut pairs = vec![0u64; r.bins.len()];
        let mut hits = vec![0u64; r.bins.len()];
        let (mut relevant, mut relevant_hit) = (0u64, 0u64);
        for (b, hit, high) in counts {
            pairs[b] += 1;
            hits[b] += u64::from(hit);
            relevant += u64::from(high);
            relevant_hit += u64::from(high && hit);
        }
        let (rp, rh): (Vec<u64>, Vec<u64>) = r.bins.iter().map(|b| (b.pairs, b.reported)).unzip();
        assert_eq!(rp, pairs, "{}: pairs per bin", alg.name());
        assert_eq!(rh, hits, "{}: reported per bin", alg.name());
        assert_eq!((r.relevant, r.relevant_reported), (relevant, relevant_hit));
        assert_eq!(
            r.reported,
            got.len() as u64,
            "all pairs are inside the full sample"
        );
        // Every bin with enough pairs follows the curve.
        let bad = check_against_theory(&r, 0.05, 20);
        assert!(bad.is_empty(), "{bad:#?}");
        // The planted range is covered: some bins in the curve's rise hold pairs.
        let rising = r
            .bins
            .iter()
            .filter(|b| b.pairs >= 20 && b.theory.is_some_and(|t| (0.05..0.95).contains(&t)))
            .count();
        if alg != Alg::Exact {
            assert!(rising >= 1, "{}: no bin on the curve's rise", alg.name());
        }
    }

    // A sample of 300: the 300 docs with the smallest xxh3(docID), and only
    // the reported pairs inside it.
    let r = evaluate(
        &job,
        &EvalOptions {
            sample: 300,
            ..EvalOptions::new(Alg::MinHash)
        },
    )
    .unwrap();
    let mut by_hash: Vec<(u64, u64)> = docs
        .iter()
        .map(|&d| (xxhash_rust::xxh3::xxh3_64(&d.to_le_bytes()), d))
        .collect();
    by_hash.sort_unstable();
    let chosen: BTreeSet<u64> = by_hash[..300].iter().map(|&(_, d)| d).collect();
    let inside = reported(&job, Alg::MinHash)
        .iter()
        .filter(|(a, b)| chosen.contains(a) && chosen.contains(b))
        .count();
    assert_eq!((r.sample, r.pairs), (300, 300 * 299 / 2));
    assert_eq!(r.reported, inside as u64);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["sample"], 300);
    assert!(r.plot_svg().contains("measured"));
}

/// The two llvm doc trees (fetched by [`corpus_dir`] when missing).
fn llvm_dirs() -> Option<(PathBuf, PathBuf)> {
    let d = |v: u32| {
        corpus_dir(&format!("llvm-{v}-doc"))
            .map(|p| p.join(format!("usr/share/doc/llvm-{v}-doc/html")))
    };
    Some((d(15)?, d(16)?))
}

#[test]
fn llvm_15_and_16_docs_meet_the_goals() {
    let Some((d15, d16)) = llvm_dirs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut job = ingested(
        &dir.path().join("job"),
        &[
            format!("http://llvm.example/15/={}", d15.display()),
            format!("http://llvm.example/16/={}", d16.display()),
        ],
    );
    let opts = DedupOptions {
        algs: vec![Alg::Broder, Alg::Charikar, Alg::MinHash],
        ..DedupOptions::default()
    };
    dedup(&mut job, &opts, &Settings::new(256 << 20)).unwrap();

    // Same-path pairs (15/x.html, 16/x.html) and their word-5-shingle Jaccard.
    let urls = urls(&job);
    let mut text: BTreeMap<u64, String> = BTreeMap::new();
    job_page_texts(&job, |_, doc, words| {
        text.insert(doc, words.to_string());
        Ok(())
    })
    .unwrap();
    let mut by_path: BTreeMap<String, [Option<u64>; 2]> = BTreeMap::new();
    for (&doc, url) in &urls {
        for (v, prefix) in ["http://llvm.example/15/", "http://llvm.example/16/"]
            .iter()
            .enumerate()
        {
            if let Some(rest) = url.strip_prefix(prefix) {
                by_path.entry(rest.to_string()).or_default()[v] = Some(doc);
            }
        }
    }
    let toks = |d: u64| -> Vec<&str> {
        text.get(&d)
            .map(|t| t.split(' ').filter(|w| !w.is_empty()).collect())
            .unwrap_or_default()
    };
    let same_path: Vec<(u64, u64)> = by_path
        .values()
        .filter_map(|v| Some((v[0]?, v[1]?)))
        .collect();
    let mut j5_high = Vec::new();
    for &(a, b) in &same_path {
        let j5 = jaccard(
            &shingle_set(toks(a), 5).unwrap(),
            &shingle_set(toks(b), 5).unwrap(),
        );
        if j5 >= 0.9 {
            j5_high.push((a.min(b), a.max(b)));
        }
    }
    let mh = reported(&job, Alg::MinHash);
    let found = j5_high.iter().filter(|p| mh.contains(p)).count();
    eprintln!(
        "llvm: {} docs with text ({} crawled URLs); {} same-path pairs, {} with word-5-shingle Jaccard ≥ 0.9 (the issue says 900 and 560); minhash reports {found} of those",
        text.len(),
        urls.len(),
        same_path.len(),
        j5_high.len()
    );
    assert!(
        same_path.len() >= 800,
        "{} same-path pairs",
        same_path.len()
    );

    let mut failures = Vec::new();
    for alg in [Alg::MinHash, Alg::Broder, Alg::Charikar] {
        let r = evaluate(
            &job,
            &EvalOptions {
                sample: usize::MAX,
                ..EvalOptions::new(alg)
            },
        )
        .unwrap();
        eprintln!("{}", r.table());
        assert_eq!(
            r.sample + r.empty_docs,
            text.len() as u64,
            "the sample covers all docs"
        );
        match alg {
            Alg::MinHash => {
                // The goals: recall ≥ 0.95 on pairs with J ≥ 0.9, and
                // precision ≥ 0.95 (reported pairs with J ≥ 0.8).
                let recall = r.recall.unwrap();
                if recall < 0.95 {
                    failures.push(format!("minhash recall {recall:.4} < 0.95"));
                }
                // Precision at threshold 0.8 is NOT ≥ 0.95 on this corpus, and
                // cannot be by design: the curve's 50% point is J = 0.8, and
                // the AMDGPU pages hold ~8,700 template pairs with J in
                // [0.75, 0.8), which the curve reports with probability ~0.25
                // (the curve itself predicts precision ~0.79). Checked here:
                // the measured precision is the curve's within 0.15 (the fixed
                // hash functions meet thousands of near-identical template
                // pairs, so those pairs are not independent trials), and the
                // goal is met at --threshold 0.85 below.
                let (p, e) = (r.precision.unwrap(), r.expected_precision.unwrap());
                eprintln!(
                    "minhash at threshold 0.8: precision {p:.4} against the goal 0.95; the curve predicts {e:.4} on these pairs"
                );
                if (p - e).abs() > 0.15 {
                    failures.push(format!(
                        "minhash precision {p:.4} far from the curve's {e:.4}"
                    ));
                }
            }
            // Per bin within 0.3 here, not 0.05: llvm's near-duplicate pairs
            // are not independent trials. One AMDGPU template family gives
            // hundreds of pairs that differ in the same few shingles, so one
            // draw of the fixed functions decides them together. Measured by
            // re-sketching with 24 seeds: broder's rate on the 116 pairs with
            // J in [0.85, 0.90) ranges from 0.05 to 0.45 (mean 0.17, curve
            // 0.22). The tight per-bin check on independent pairs is in
            // `planted_pairs_binned_exactly_and_rates_follow_theory` and the
            // sketchers' unit tests.
            _ => failures.extend(check_against_theory(&r, 0.3, 10)),
        }
    }

    // Min-hash at 0.8 with exact verification (the candidates' exact Jaccard
    // of shingle sets decides): both goals met at the threshold, and
    // precision is 1 by construction. (This replaces a run at --threshold
    // 0.85, which met them by giving up the pairs in [0.8, 0.85).)
    let opts = DedupOptions {
        algs: vec![Alg::MinHash],
        verify: Verify::Exact,
        ..DedupOptions::default()
    };
    let s = Settings {
        force: true,
        ..Settings::new(256 << 20)
    };
    dedup(&mut job, &opts, &s).unwrap();
    let exact_seconds = job
        .published(StageId::parse("dedup-minhash").unwrap())
        .unwrap()
        .figures
        .seconds;
    let r = evaluate(
        &job,
        &EvalOptions {
            sample: usize::MAX,
            ..EvalOptions::new(Alg::MinHash)
        },
    )
    .unwrap();
    eprintln!(
        "minhash --verify exact:\n{}dedup-minhash --verify exact took {exact_seconds:.1} s",
        r.table()
    );
    let (recall, precision) = (r.recall.unwrap(), r.precision.unwrap());
    if recall < 0.95 || precision < 0.95 {
        failures.push(format!(
            "minhash --verify exact at 0.8: recall {recall:.4}, precision {precision:.4}"
        ));
    }
    if r.reported_on_target != r.reported {
        failures.push(format!(
            "minhash --verify exact reports {} pairs below J = 0.8",
            r.reported - r.reported_on_target
        ));
    }
    failures.extend(check_against_theory(&r, 0.05, 10));
    assert!(failures.is_empty(), "{failures:#?}");
}

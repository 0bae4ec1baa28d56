//! The report against counts and judgements made in memory.

use super::*;
use crate::container::pagefile::PageFileWriter;
use crate::dedup::files::PAIRS;
use crate::docs::{Doc, DocWriter};
use crate::progress::silent;

fn write_pairs(path: &Path, pairs: &[(u64, u64, f32)]) {
    let mut w = PageFileWriter::create(path, &PAIRS, 256 << 10, 3).unwrap();
    let mut payload = Vec::new();
    for &(a, b, sim) in pairs {
        payload.clear();
        crate::varint::put(&mut payload, b - a);
        payload.extend_from_slice(&sim.to_le_bytes());
        w.push(a, &payload).unwrap();
    }
    w.finish(&serde_json::json!({})).unwrap();
}

/// splitmix64 as a generator.
fn rng(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_add(1);
    mix64(*seed)
}

#[test]
fn counts_and_precision_match_a_naive_report() {
    let dir = tempfile::tempdir().unwrap();
    let n = 300u64;
    // Hosts of 30 docs each; texts: 12 families of near-copies.
    let docs = dir.path().join("docs.wm");
    let mut w = DocWriter::create(&docs, "test").unwrap();
    for d in 0..n {
        w.push(&Doc {
            url: format!("http://h{}/{d}", d / 30),
            crawled: true,
            host: d / 30,
            ..Doc::default()
        })
        .unwrap();
    }
    w.finish().unwrap();
    let mut seed = 5u64;
    let base: Vec<Vec<String>> = (0..12)
        .map(|f| (0..40).map(|i| format!("w{f}x{i}")).collect())
        .collect();
    let texts: Vec<String> = (0..n)
        .map(|d| {
            let mut words = base[(d % 12) as usize].clone();
            // Change a few words: some pairs fall under the judge's threshold.
            for _ in 0..(rng(&mut seed) % 4) {
                let i = (rng(&mut seed) % 40) as usize;
                words[i] = format!("z{}", rng(&mut seed) % 1000);
            }
            words.join(" ")
        })
        .collect();
    let mut pairs = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            if a % 12 == b % 12 && rng(&mut seed).is_multiple_of(3) {
                pairs.push((a, b, (rng(&mut seed) % 1001) as f32 / 1000.0));
            }
        }
    }
    let path = dir.path().join("pairs-x.wm");
    write_pairs(&path, &pairs);
    let opts = ReportOptions {
        sample_per_bin: 100_000,
        judge_shingle: 3,
        judge_threshold: 0.8,
        seed: 1,
    };
    let algs = [AlgPairs {
        name: "x".into(),
        pairs: path,
    }];
    let reports = dedup_report(
        &algs,
        &docs,
        |f| {
            texts
                .iter()
                .enumerate()
                .try_for_each(|(d, t)| f(d as u64, t))
        },
        &dir.path().join("tmp"),
        64 << 20,
        &silent(),
        &opts,
    )
    .unwrap();
    let r = &reports[0];
    // Naive counts.
    let mut per = vec![(0u64, 0u64); n as usize];
    let mut same_pairs = 0;
    let (mut correct, mut same_correct, mut cross_correct, mut same_n) = (0u64, 0u64, 0u64, 0u64);
    for &(a, b, _) in &pairs {
        let same = a / 30 == b / 30;
        same_pairs += same as u64;
        for d in [a, b] {
            if same {
                per[d as usize].0 += 1
            } else {
                per[d as usize].1 += 1
            }
        }
        let set = |d: u64| shingle_set(texts[d as usize].split(' '), 3).unwrap();
        let ok = jaccard(&set(a), &set(b)) >= 0.8;
        correct += ok as u64;
        if same {
            same_n += 1;
            same_correct += ok as u64;
        } else {
            cross_correct += ok as u64;
        }
    }
    let hist = |f: &dyn Fn(&(u64, u64)) -> u64| {
        let mut h = BTreeMap::new();
        for p in &per {
            if f(p) > 0 {
                *h.entry(f(p)).or_insert(0u64) += 1;
            }
        }
        h
    };
    assert_eq!(r.pairs, pairs.len() as u64);
    assert_eq!(r.same_host_pairs, same_pairs);
    assert_eq!(r.n_all, hist(&|p| p.0 + p.1));
    assert_eq!(r.n_same_host, hist(&|p| p.0));
    assert_eq!(r.n_cross_host, hist(&|p| p.1));
    // Everything judged: the weighted precisions are the plain ones.
    let close = |x: Option<f64>, want: f64| (x.unwrap() - want).abs() < 1e-12;
    assert!(
        close(r.precision, correct as f64 / pairs.len() as f64),
        "{r:?}"
    );
    assert!(close(
        r.precision_same_host,
        same_correct as f64 / same_n as f64
    ));
    assert!(close(
        r.precision_cross_host,
        cross_correct as f64 / (pairs.len() as u64 - same_n) as f64
    ));
    assert!(
        correct > 0 && correct < pairs.len() as u64,
        "the judge must split the pairs"
    );
    let svg = plot_svg(&reports, "t");
    assert!(svg.contains("x: all"));
}

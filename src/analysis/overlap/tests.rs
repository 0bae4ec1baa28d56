//! Capture–recapture against sets in memory.

use std::collections::BTreeSet;

use super::*;
use crate::docs::{Doc, DocWriter};
use crate::ingest::urltable::UrlTableWriter;
use crate::progress::Silent;

/// Writes a crawl whose crawled pages have fingerprints `pages` and whose
/// link targets (not crawled) have `targets`; docIDs in fingerprint-hash order.
fn write_crawl(dir: &Path, name: &str, pages: &BTreeSet<u64>, targets: &BTreeSet<u64>) -> Crawl {
    let mut all: Vec<(u64, bool)> = pages
        .iter()
        .map(|&f| (f, true))
        .chain(
            targets
                .iter()
                .filter(|f| !pages.contains(f))
                .map(|&f| (f, false)),
        )
        .collect();
    // DocIDs in an order unrelated to the fingerprints.
    all.sort_by_key(|&(f, _)| sample_key(f, 77));
    let docs = dir.join(format!("{name}-docs.wm"));
    let urls = dir.join(format!("{name}-urls.wm"));
    let mut w = DocWriter::create(&docs, "test").unwrap();
    for (i, &(_, crawled)) in all.iter().enumerate() {
        w.push(&Doc {
            url: format!("http://x/{i}"),
            crawled,
            ..Doc::default()
        })
        .unwrap();
    }
    w.finish().unwrap();
    let mut pairs: Vec<(u64, u64)> = all
        .iter()
        .enumerate()
        .map(|(i, &(f, _))| (f, i as u64))
        .collect();
    pairs.sort_unstable();
    let mut u = UrlTableWriter::create(&urls).unwrap();
    for (f, d) in pairs {
        u.push(f, d).unwrap();
    }
    u.finish().unwrap();
    Crawl { urls, docs }
}

fn sets(na: u64, nb: u64, shared: u64, seed: u64) -> (BTreeSet<u64>, BTreeSet<u64>) {
    let fp = |i: u64| sample_key(i, seed);
    let a: BTreeSet<u64> = (0..na).map(fp).collect();
    let b: BTreeSet<u64> = (na - shared..na - shared + nb).map(fp).collect();
    (a, b)
}

#[test]
fn counts_the_exact_overlap_and_closes_on_it_with_whole_samples() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = sets(5000, 3000, 1200, 1);
    let targets: BTreeSet<u64> = (0..700).map(|i| sample_key(i, 99)).collect();
    let ca = write_crawl(dir.path(), "a", &a, &targets);
    let cb = write_crawl(dir.path(), "b", &b, &targets);
    let whole = OverlapOptions {
        sample: 10_000,
        seed: 3,
    };
    let r = overlap(&ca, &cb, 1 << 30, &Silent, &whole).unwrap();
    assert_eq!((r.pages_a, r.pages_b), (5000, 3000));
    assert_eq!(r.both, a.intersection(&b).count() as u64);
    assert_eq!((r.sample_a, r.sample_b), (5000, 3000));
    assert_eq!((r.a_in_b, r.b_in_a), (1200, 1200));
    let e = r.estimate.unwrap();
    assert!((e - 5000.0 / 3000.0).abs() < 1e-12, "{r:?}");
    assert!(
        (r.ci_high.unwrap() - r.ci_low.unwrap()).abs() < 1e-9,
        "{r:?}"
    );
    assert_eq!(r.exact, 5000.0 / 3000.0);
}

#[test]
fn sampled_membership_matches_sets_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = sets(4000, 6000, 2500, 2);
    let ca = write_crawl(dir.path(), "a", &a, &BTreeSet::new());
    let cb = write_crawl(dir.path(), "b", &b, &BTreeSet::new());
    let opts = OverlapOptions {
        sample: 300,
        seed: 11,
    };
    let r = overlap(&ca, &cb, 1 << 30, &Silent, &opts).unwrap();
    // The same sample drawn naively: the 300 smallest keys.
    let naive = |s: &BTreeSet<u64>, other: &BTreeSet<u64>, seed: u64| {
        let mut k: Vec<(u64, u64)> = s.iter().map(|&f| (sample_key(f, seed), f)).collect();
        k.sort_unstable();
        k.iter()
            .take(300)
            .filter(|(_, f)| other.contains(f))
            .count() as u64
    };
    assert_eq!(r.a_in_b, naive(&a, &b, 11));
    assert_eq!(r.b_in_a, naive(&b, &a, 11 ^ 0x5bd1_e995));
}

#[test]
fn the_interval_covers_the_truth_about_95_percent_of_the_time() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = sets(20_000, 12_000, 5_000, 3);
    let ca = write_crawl(dir.path(), "a", &a, &BTreeSet::new());
    let cb = write_crawl(dir.path(), "b", &b, &BTreeSet::new());
    let truth = 20_000.0 / 12_000.0;
    let runs = 80;
    let covered = (0..runs)
        .filter(|&seed| {
            let r = overlap(
                &ca,
                &cb,
                1 << 30,
                &Silent,
                &OverlapOptions { sample: 400, seed },
            )
            .unwrap();
            r.ci_low.unwrap() <= truth && truth <= r.ci_high.unwrap()
        })
        .count();
    assert!(
        (68..=80).contains(&covered),
        "{covered} of {runs} intervals cover the truth"
    );
}

#[test]
fn refuses_a_budget_below_its_bits() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = sets(100, 100, 10, 4);
    let ca = write_crawl(dir.path(), "a", &a, &BTreeSet::new());
    let cb = write_crawl(dir.path(), "b", &b, &BTreeSet::new());
    let err = overlap(&ca, &cb, 100, &Silent, &OverlapOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Budget { .. }));
}

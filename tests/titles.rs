//! Title queries on a real site (issue 21): a page's own title, run as a
//! query with the search's defaults (`--match any --ranking bm25f`, pruning
//! on), finds the page in the top 10 at least 99% of the time on rust-doc —
//! the navigational case must not get worse than under the paper's
//! conjunctive search.
//!
//! Needs Debian's `rust-doc` package unpacked where the benches look for
//! it (`$WEBMILL_CORPUS`, `/work/corpus`, `/tmp/corpus`, `target/corpus`;
//! `../shared/data/fetch-debian-docs.sh DIR rust-doc`); without it the
//! test says so and passes. The job is built once into
//! `target/bench-jobs/rust-doc` (shared with `cargo bench --bench search`).

#[path = "../benches/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

use webmill::index::stem::Stem;

use webmill::job::{JobView, Settings};
use webmill::search::titles::title_queries;
use webmill::search::{Matching, Query, Ranking, Searcher};

/// Pages queried (evenly sampled by docID).
const SAMPLE: usize = 2000;

#[test]
fn rust_doc_titles_stay_in_the_top_10() {
    let site = "rust-doc";
    let Some(html) = common::site_html(site) else {
        println!(
            "SKIPPED: {site} not found (fetch it with ../shared/data/fetch-debian-docs.sh DIR {site} \
             and set WEBMILL_CORPUS=DIR)"
        );
        return;
    };
    // `TITLES_STEMS=none,english` measures a stemmed index too (a job of
    // its own), held to the same floors.
    let stems = std::env::var("TITLES_STEMS").unwrap_or_else(|_| "none".into());
    let mut failed = Vec::new();
    for stem in stems.split(',') {
        let (stem, dir) = match stem {
            "english" => (
                Stem::English,
                PathBuf::from("target/bench-jobs/rust-doc-english"),
            ),
            _ => (Stem::None, PathBuf::from("target/bench-jobs").join(site)),
        };
        measure(site, &html, &dir, stem, &mut failed);
    }
    assert!(failed.is_empty(), "{failed:?}");
}

/// The title queries on one index of the site, each ranking; a rate under
/// its floor is added to `failed`.
fn measure(site: &str, html: &Path, dir: &Path, stem: Stem, failed: &mut Vec<String>) {
    let mut job = common::ranked_site_job(dir, site, html);
    webmill::index::build_index(
        &mut job,
        &webmill::index::IndexOptions {
            stem,
            ..Default::default()
        },
        &Settings::new(1 << 30),
    )
    .expect("index");
    let view = JobView::open(dir).expect("view");
    let s = Searcher::open(&view).expect("searcher");
    let defaults = Query::parse("");
    assert_eq!(
        (defaults.matching, defaults.ranking),
        (Matching::Any, Ranking::Bm25f)
    );
    // Measured (2,001 pages): default 0.9975, BM25 0.9730 (the page's text
    // only: no title field, hence no floor), the paper's 0.9990.
    for (name, matching, ranking, floor) in [
        ("default (any, bm25f)", Matching::Any, Ranking::Bm25f, 0.99),
        ("any, bm25", Matching::Any, Ranking::Bm25, 0.0),
        ("all, paper", Matching::All, Ranking::Paper, 0.99),
    ] {
        let mut how = Query::parse("");
        how.matching = matching;
        how.ranking = ranking;
        let t = std::time::Instant::now();
        let r = title_queries(&s, SAMPLE, &how).expect("title queries");
        println!(
            "{site} --stem {stem:?} {name}: {} of {} distinctive titles queried: top-10 {:.4}, top-1 {:.4}, MRR@10 {:.4} ({:.1} s)",
            r.queried,
            r.distinctive,
            r.rate,
            r.top1 as f64 / r.queried.max(1) as f64,
            r.mrr,
            t.elapsed().as_secs_f64()
        );
        if r.rate < floor {
            for (doc, title, rank) in &r.misses {
                println!("  miss: doc {doc} {title:?} rank {rank:?}");
            }
            failed.push(format!("{stem:?} {name}: top-10 {:.4} < {floor}", r.rate));
        }
    }
}

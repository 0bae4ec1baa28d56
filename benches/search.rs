//! Search quality on real sites: the title-query measurement
//! (`webmill::search::titles`) with the default ranking weights and with
//! each part of the ranking changed in turn — what justifies the defaults.
//!
//! Data: Debian HTML documentation packages (`../shared/data/README.md`),
//! looked for under `$WEBMILL_CORPUS`, `/work/corpus`, `/tmp/corpus` and
//! `target/corpus`; `WEBMILL_BENCH_SITES` (default `rust-doc,llvm-16-doc`)
//! names them. Each site is ingested, ranked and indexed once into
//! `target/bench-jobs/SITE` (later runs skip the finished stages), then
//! `SAMPLE` pages with distinctive titles (default 2000, 0 = all) are
//! queried by their titles. Prints per site and weight variant: pages
//! queried, the share found in the top 10 and at rank 1, and MRR@10; with
//! `MISSES=1` the first misses of the default weights.
//!
//! `cargo bench --bench search`

mod common;

use std::path::PathBuf;

use webmill::job::{JobView, Settings};
use webmill::search::rank::DEFAULT_PROX;
use webmill::search::titles::title_queries;
use webmill::search::{Matching, Query, Ranking, RankingWeights, Searcher};

/// The site ingested, ranked and indexed into `target/bench-jobs/SITE`
/// (stages already done are skipped).
fn site_job(site: &str, html: &std::path::Path) -> PathBuf {
    let dir = PathBuf::from("target/bench-jobs").join(site);
    let mut job = common::ranked_site_job(&dir, site, html);
    webmill::index::build_index(
        &mut job,
        &webmill::index::IndexOptions::default(),
        &Settings::new(1 << 30),
    )
    .expect("index");
    dir
}

/// A change to (type weights, knees, proximity factors, PageRank weight).
type Change = dyn Fn(&mut [f64; 7], &mut [f64; 7], &mut [f64; 10], &mut f64);

/// The default weights and one change to each part of the ranking.
fn variants() -> Vec<(&'static str, RankingWeights)> {
    let d = RankingWeights::default();
    let with = |f: &Change| {
        let (mut tw, mut knee, mut prox, mut pr) =
            (d.type_weight, d.knee, DEFAULT_PROX, d.pagerank_weight);
        f(&mut tw, &mut knee, &mut prox, &mut pr);
        RankingWeights::with_prox(tw, knee, d.cap, prox, pr)
    };
    vec![
        ("default", d.clone()),
        ("all types weigh 1", with(&|tw, _, _, _| *tw = [1.0; 7])),
        ("title = plain", with(&|tw, _, _, _| tw[0] = tw[5])),
        ("anchor = plain", with(&|tw, _, _, _| tw[1] = tw[5])),
        ("anchor = title", with(&|tw, _, _, _| tw[1] = tw[0])),
        ("url = plain", with(&|tw, _, _, _| tw[2] = tw[5])),
        ("no proximity", with(&|_, _, p, _| *p = [0.0; 10])),
        (
            "proximity ×2",
            with(&|_, _, p, _| p.iter_mut().for_each(|x| *x *= 2.0)),
        ),
        ("no tapering", {
            let mut w = with(&|_, k, _, _| *k = [1e9; 7]);
            w.cap = [1e9; 7];
            w
        }),
        ("caps ×4", {
            let mut w = d.clone();
            w.cap.iter_mut().for_each(|x| *x *= 4.0);
            w
        }),
        (
            "proximity ÷2",
            with(&|_, _, p, _| p.iter_mut().for_each(|x| *x /= 2.0)),
        ),
        (
            "knees ÷4",
            with(&|_, k, _, _| k.iter_mut().for_each(|x| *x = (*x / 4.0).max(1.0))),
        ),
        (
            "knees ×4",
            with(&|_, k, _, _| k.iter_mut().for_each(|x| *x *= 4.0)),
        ),
        ("no PageRank", with(&|_, _, _, pr| *pr = 0.0)),
        ("PageRank ÷2", with(&|_, _, _, pr| *pr /= 2.0)),
        ("PageRank ×4", with(&|_, _, _, pr| *pr *= 4.0)),
    ]
}

/// A variant from `tw=a,b,..;knee=..;prox=..;pr=x` (the defaults for parts
/// left out), for exploring.
fn custom(spec: &str) -> RankingWeights {
    let d = RankingWeights::default();
    let (mut tw, mut knee, mut cap, mut prox, mut pr) = (
        d.type_weight,
        d.knee,
        d.cap,
        DEFAULT_PROX,
        d.pagerank_weight,
    );
    for part in spec.split(';').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').expect("name=values");
        let vals: Vec<f64> = v.split(',').map(|x| x.parse().expect("a number")).collect();
        match k {
            "tw" => tw.copy_from_slice(&vals),
            "knee" => knee.copy_from_slice(&vals),
            "cap" => cap.copy_from_slice(&vals),
            "prox" => prox.copy_from_slice(&vals),
            "pr" => pr = vals[0],
            _ => panic!("unknown part {k}"),
        }
    }
    RankingWeights::with_prox(tw, knee, cap, prox, pr)
}

/// Prints the first `n` title queries whose page is not ranked first, with
/// what is.
fn show_firsts(s: &Searcher, w: &RankingWeights, n: usize) {
    let docs = webmill::docs::DocTable::open(s.docs_path()).expect("docs");
    let mut shown = 0;
    for d in docs.iter().step_by(17) {
        let (id, d) = d.expect("doc");
        if !d.crawled || d.title.is_empty() || shown >= n {
            continue;
        }
        let mut q = webmill::search::Query::parse(&d.title).ranking_only();
        q.weights = w.clone();
        let r = s.search(&q, 10, 0).expect("search");
        if r.results.first().is_some_and(|f| f.docid != id) {
            let rank = r.results.iter().position(|x| x.docid == id).map(|p| p + 1);
            println!(
                "      {:?} at {rank:?}; first: {:?} {}",
                d.title, r.results[0].title, r.results[0].url
            );
            shown += 1;
        }
    }
}

fn main() {
    let sites =
        std::env::var("WEBMILL_BENCH_SITES").unwrap_or_else(|_| "rust-doc,llvm-16-doc".into());
    let sample: usize = std::env::var("SAMPLE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let only_default = std::env::var_os("DEFAULT_ONLY").is_some();
    for site in sites.split(',') {
        let Some(html) = common::site_html(site) else {
            eprintln!(
                "SKIPPED: {site} not found (fetch it with ../shared/data/fetch-debian-docs.sh)"
            );
            continue;
        };
        let dir = site_job(site, &html);
        let view = JobView::open(&dir).expect("view");
        let searcher = Searcher::open(&view).expect("searcher");
        println!("title queries on {site} ({} docs):", searcher.doc_count());
        let list = match std::env::var("VARIANT") {
            Ok(spec) => vec![("custom", custom(&spec))],
            Err(_) => variants(),
        };
        for (name, w) in list {
            if only_default && name != "default" {
                continue;
            }
            let t = std::time::Instant::now();
            let mut how = Query::parse("");
            how.matching = Matching::All;
            how.ranking = Ranking::Paper;
            how.weights = w.clone();
            let r = title_queries(&searcher, sample, &how).expect("title queries");
            println!(
                "  {name:<18} queried {:>5} of {:>5} distinctive ({} titled, {} multi-word): top-10 {:.3}, top-1 {:.3}, MRR@10 {:.3}  ({:.1} s)",
                r.queried,
                r.distinctive,
                r.titled,
                r.multi_word,
                r.rate,
                r.top1 as f64 / r.queried.max(1) as f64,
                r.mrr,
                t.elapsed().as_secs_f64()
            );
            if let Some(n) = std::env::var("FIRSTS")
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
            {
                show_firsts(&searcher, &w, n);
            }
            if name == "default" && std::env::var_os("MISSES").is_some() {
                for (doc, title, rank) in &r.misses {
                    println!("      miss: doc {doc} {title:?} rank {rank:?}");
                }
            }
        }
    }
}

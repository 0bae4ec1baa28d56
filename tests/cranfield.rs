//! Ranking quality on Cranfield's development half (`../shared/data/cranfield`:
//! 1,400 abstracts, the 113 odd-numbered queries and their graded
//! judgments): every document written as an HTML page (title in `<title>`
//! and `<h1>`, body in `<p>`), run through ingest, resolve, PageRank and the
//! index like any site, and every query searched in plain words. nDCG@10
//! (linear gains, as trec_eval's `ndcg_cut_10`) and MRR@10 per ranking are
//! printed; each ranking has a floor a little under what it measured, so a
//! regression fails. `benches/cranfield.py` prints the same figures next to
//! PISA's BM25.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use common::{data_dir, ingested_job};
use webmill::index::{build_index, IndexOptions, Stem};
use webmill::job::{JobView, Settings};
use webmill::search::{Matching, Query, Ranking, Searcher};

/// (id, title, body) of every document.
type Docs = Vec<(u64, String, String)>;

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// nDCG@10 with linear gains and MRR@10 of the ranked ids against `qrels`
/// (doc → grade, grade > 0 relevant).
fn measures(ranked: &[u64], qrels: &HashMap<u64, i64>) -> (f64, f64) {
    let gain = |d: &u64| qrels.get(d).copied().unwrap_or(0).max(0) as f64;
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, d)| gain(d) / (i as f64 + 2.0).log2())
        .sum();
    let mut ideal: Vec<f64> = qrels.values().map(|&g| g.max(0) as f64).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, g)| g / (i as f64 + 2.0).log2())
        .sum();
    let rr = ranked
        .iter()
        .take(10)
        .position(|d| gain(d) > 0.0)
        .map_or(0.0, |p| 1.0 / (p as f64 + 1.0));
    (if idcg > 0.0 { dcg / idcg } else { 0.0 }, rr)
}

#[test]
fn cranfield_development_half_keeps_its_quality() {
    let Some(data) = data_dir() else { return };
    let dir = data.join("cranfield");
    let docs: Docs = read_json(&dir.join("cranfield-documents.json"))
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["id"].as_u64().unwrap(),
                d["title"].as_str().unwrap_or_default().to_string(),
                d["body"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let queries: Vec<(u64, String)> = read_json(&dir.join("cranfield-queries-dev.json"))
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["id"].as_u64().unwrap(),
                q["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut qrels: HashMap<u64, HashMap<u64, i64>> = HashMap::new();
    for j in read_json(&dir.join("cranfield-qrels-dev.json"))
        .as_array()
        .unwrap()
    {
        qrels
            .entry(j["queryId"].as_u64().unwrap())
            .or_default()
            .insert(
                j["docId"].as_u64().unwrap(),
                j["relevance"].as_i64().unwrap(),
            );
    }
    assert_eq!((docs.len(), queries.len()), (1400, 113));

    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    for (id, title, body) in &docs {
        let (t, b) = (html_escape(title), html_escape(body));
        std::fs::write(
            site.join(format!("{id}.html")),
            format!(
                "<html><head><title>{t}</title></head><body><h1>{t}</h1><p>{b}</p></body></html>"
            ),
        )
        .unwrap();
    }
    let id_of = |url: &str| -> u64 {
        url.rsplit('/')
            .next()
            .and_then(|f| f.strip_suffix(".html"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    // (stemming, matching, ranking, nDCG@10 floor, MRR@10 floor)
    let runs = [
        // Measured: 0.0048 / 0.0118 (221 of 225 queries without results).
        (Stem::None, Matching::All, Ranking::Paper, 0.004, 0.01),
        // Measured: 0.0667 / 0.1327.
        (Stem::None, Matching::Any, Ranking::Paper, 0.055, 0.11),
        // Measured: 0.3547 / 0.5221 (PISA's BM25, k1 0.9, b 0.4: 0.3549 / 0.5391).
        (Stem::None, Matching::Any, Ranking::Bm25, 0.345, 0.50),
        // Measured: 0.3608 / 0.5082.
        (Stem::None, Matching::Any, Ranking::Bm25f, 0.35, 0.49),
        // Measured: 0.3693 / 0.5321.
        (Stem::English, Matching::Any, Ranking::Bm25, 0.36, 0.51),
        // Measured: 0.3820 / 0.5405.
        (Stem::English, Matching::Any, Ranking::Bm25f, 0.372, 0.52),
    ];
    let mut failed = Vec::new();
    let t = std::time::Instant::now();
    let input = format!("http://cranfield.example/={}", site.display());
    for stem in Stem::ALL {
        let mut job = ingested_job(
            &tmp.path().join(stem.name()),
            std::slice::from_ref(&input),
            64 << 20,
        );
        let settings = Settings {
            reporter: Arc::new(webmill::progress::Silent),
            ..Settings::new(64 << 20)
        };
        let opts = IndexOptions { barrels: 4, stem };
        build_index(&mut job, &opts, &settings).unwrap();
        let view = JobView::open(job.dir()).unwrap();
        let s = Searcher::open(&view).unwrap();
        for &(_, matching, ranking, ndcg_floor, mrr_floor) in runs.iter().filter(|r| r.0 == stem) {
            let (mut ndcg, mut mrr) = (0.0, 0.0);
            for (qid, text) in &queries {
                let mut q = Query::parse(text).ranking_only();
                q.matching = matching;
                q.ranking = ranking;
                let r = s.search(&q, 10, 0).unwrap();
                let ranked: Vec<u64> = r.results.iter().map(|x| id_of(&x.url)).collect();
                let (n, m) = measures(&ranked, qrels.get(qid).unwrap_or(&HashMap::new()));
                ndcg += n;
                mrr += m;
            }
            ndcg /= queries.len() as f64;
            mrr /= queries.len() as f64;
            let name = format!(
                "--stem {} --match {matching:?} --ranking {}",
                stem.name(),
                ranking.name()
            );
            println!("cranfield dev: {name:<44} nDCG@10 {ndcg:.4}  MRR@10 {mrr:.4}");
            if ndcg < ndcg_floor || mrr < mrr_floor {
                failed.push(format!(
                    "{name}: nDCG@10 {ndcg:.4} (floor {ndcg_floor}), MRR@10 {mrr:.4} (floor {mrr_floor})"
                ));
            }
        }
    }
    println!(
        "two jobs built and {} queries × {} runs in {:.1} s",
        queries.len(),
        runs.len(),
        t.elapsed().as_secs_f64()
    );
    assert!(failed.is_empty(), "below the floor: {failed:?}");
}

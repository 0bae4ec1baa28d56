//! The title-query measurement: how well the ranking finds a page by its
//! own title, the one relevance judgment a crawl provides for free.
//!
//! For every crawled page whose title, as a sequence of words (the
//! tokenizer's), no other page of the job has — a *distinctive* title —
//! the title is run as a query (the bare ranking: no host clusters, no
//! near-duplicate groups) and the page's rank among the results noted. The
//! report gives the share of pages found in the top 10 and the top 1, and
//! the mean reciprocal rank over the first 10 (MRR@10: 1/rank, 0 past 10).
//!
//! Distinctness is decided in memory (a map from title to count over the
//! doc table's crawled pages): this is a measurement for sites and samples,
//! not for a web-scale job. Pages are sampled evenly by docID.

use std::collections::HashMap;

use serde::Serialize;

use super::query::Query;
use super::Searcher;
use crate::error::Result;

/// Ranks looked at for the reciprocal rank.
pub const MRR_DEPTH: usize = 10;

/// What the title queries found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TitleReport {
    /// Crawled pages with a title.
    pub titled: u64,
    /// Of them, pages whose title no other page has.
    pub distinctive: u64,
    /// Pages queried (the sample).
    pub queried: u64,
    /// Queried pages ranked first.
    pub top1: u64,
    /// Queried pages in the top 10.
    pub top10: u64,
    /// `top10 / queried`.
    pub rate: f64,
    /// Mean of 1/rank (0 past rank 10).
    pub mrr: f64,
    /// Queries of more than one word.
    pub multi_word: u64,
    /// Up to 20 pages not in the top 10: (docID, title, rank if found at all).
    pub misses: Vec<(u64, String, Option<usize>)>,
}

/// Runs the title queries of at most `sample` pages (all when 0), matched
/// and ranked as `how` says (its matching, ranking and weights).
pub fn title_queries(s: &Searcher, sample: usize, how: &Query) -> Result<TitleReport> {
    let mut r = TitleReport::default();
    let mut count: HashMap<String, u32> = HashMap::new();
    let mut pages: Vec<(u64, String, String)> = Vec::new();
    for d in s.store().table().iter() {
        let (id, d) = d?;
        if !d.crawled || d.title.trim().is_empty() {
            continue;
        }
        let key = Query::plain(&d.title).words.join(" ");
        if key.is_empty() {
            continue;
        }
        r.titled += 1;
        *count.entry(key.clone()).or_default() += 1;
        pages.push((id, d.title, key));
    }
    pages.retain(|(_, _, key)| count.get(key) == Some(&1));
    r.distinctive = pages.len() as u64;
    let step = if sample == 0 || pages.len() <= sample {
        1.0
    } else {
        pages.len() as f64 / sample as f64
    };
    let mut rr = 0.0;
    let mut i = 0.0f64;
    while (i as usize) < pages.len() {
        let (id, title, _) = &pages[i as usize];
        i += step;
        let mut q = Query::plain(title).ranking_only();
        q.weights = how.weights.clone();
        q.ranking = how.ranking;
        q.matching = how.matching;
        if q.words.len() > 1 {
            r.multi_word += 1;
        }
        let res = s.search(&q, MRR_DEPTH, 0)?;
        let rank = res
            .results
            .iter()
            .position(|x| x.docid == *id)
            .map(|p| p + 1);
        r.queried += 1;
        match rank {
            Some(k) => {
                rr += 1.0 / k as f64;
                r.top10 += 1;
                if k == 1 {
                    r.top1 += 1;
                }
            }
            None if r.misses.len() < 20 => {
                let deep = s.search(&q, 1000, 0)?;
                let rank = deep
                    .results
                    .iter()
                    .position(|x| x.docid == *id)
                    .map(|p| p + 1);
                r.misses.push((*id, title.clone(), rank));
            }
            None => {}
        }
    }
    if r.queried > 0 {
        r.rate = r.top10 as f64 / r.queried as f64;
        r.mrr = rr / r.queried as f64;
    }
    Ok(r)
}

//! Query evaluation, Brin & Page's Figure 4: conjunctive matching over the
//! doclists of the query words, short barrels first.
//!
//! 1–3. The words' lexicon entries give each doclist's start in the short and
//!    the full barrel of the word's barrel; a cursor is opened on each.
//! 4. The cursors are intersected by leapfrogging: the rarest word leads, the
//!    others `seek` to its document (skipping whole postings blocks by their
//!    last docID), and whenever one overshoots the leader seeks to it.
//! 5. Each document that has every word is ranked ([`super::rank`]) from its
//!    hit lists (a short barrel holds a document's whole hit list, so the
//!    score is the same whichever barrel it came from).
//! 6. When the short doclists run out with fewer than `want` matches (the
//!    caller's offset + k), or some word has no short doclist at all, the
//!    match is done again on the full barrels, from the start.
//! 7. Matching stops at the `cutoff`-th match (the paper's 40,000), which
//!    bounds the response time: the top k are then the best of the first
//!    `cutoff` matches in docID order, which need not be the best overall.
//!
//! Matches are returned in docID order with their IR score and final score;
//! ranking them is the caller's.

use std::sync::Arc;

use serde::Serialize;

use super::rank::{RankingWeights, Scorer};
use crate::error::Result;
use crate::index::hit::Hit;
use crate::index::{Barrel, BarrelSet, DoclistCursor, TermInfo};

/// A query word found in the lexicon.
#[derive(Clone, Debug)]
pub struct Term {
    /// The word.
    pub word: String,
    /// Its wordID.
    pub id: u32,
    /// Its lexicon entry.
    pub info: TermInfo,
    /// Its barrel.
    pub barrel: usize,
}

/// Which barrels the results came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pass {
    /// The short barrels had enough matches.
    Short,
    /// The search fell through to the full barrels.
    Full,
}

/// One matching document.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Match {
    /// docID.
    pub doc: u32,
    /// IR score.
    pub ir: f64,
    /// PageRank, when the job has ranks.
    pub pagerank: Option<f64>,
    /// Final score.
    pub score: f64,
}

/// What the evaluation found.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// Matches in docID order.
    pub matches: Vec<Match>,
    /// The barrels they came from.
    pub pass: Pass,
    /// Matching stopped at the cut-off.
    pub cut_off: bool,
    /// Matches the short pass found (before any fall-through).
    pub short_matches: usize,
}

/// A PageRank lookup for docIDs in increasing order.
pub type PageRankLookup<'a> = Box<dyn FnMut(u32) -> Result<f64> + 'a>;

/// What evaluation needs from the searcher: barrels and PageRank.
pub trait Sources {
    /// Barrel `b` of `set`, opened.
    fn barrel(&self, set: BarrelSet, b: usize) -> Result<Arc<Barrel>>;
    /// A PageRank lookup for docIDs in increasing order (`None`: no ranks).
    fn pagerank(&self) -> Result<Option<PageRankLookup<'_>>>;
    /// Documents in the collection.
    fn docs(&self) -> u64;
}

/// Evaluates the conjunction of `terms` (query order).
pub fn evaluate(
    src: &dyn Sources,
    terms: &[Term],
    want: usize,
    cutoff: usize,
    weights: &RankingWeights,
) -> Result<Evaluation> {
    let mut short_matches = 0;
    if terms.iter().all(|t| t.info.short_docs > 0) {
        let (matches, cut_off) = pass(src, terms, BarrelSet::Short, cutoff, weights)?;
        short_matches = matches.len();
        if matches.len() >= want || cut_off {
            return Ok(Evaluation {
                matches,
                pass: Pass::Short,
                cut_off,
                short_matches,
            });
        }
    }
    let (matches, cut_off) = pass(src, terms, BarrelSet::Full, cutoff, weights)?;
    Ok(Evaluation {
        matches,
        pass: Pass::Full,
        cut_off,
        short_matches,
    })
}

/// Opens a cursor on each term's doclist in `set`.
pub fn open_cursors<'b>(
    barrels: &'b [Arc<Barrel>],
    terms: &[Term],
    set: BarrelSet,
) -> Result<Vec<DoclistCursor<'b>>> {
    terms
        .iter()
        .zip(barrels)
        .map(|(t, b)| match set {
            BarrelSet::Short => b.doclist(t.id, t.info.short, t.info.short_docs),
            BarrelSet::Full => b.doclist(t.id, t.info.full, t.info.docs),
        })
        .collect()
}

/// The barrels of `terms` in `set`.
pub fn barrels_of(src: &dyn Sources, terms: &[Term], set: BarrelSet) -> Result<Vec<Arc<Barrel>>> {
    terms.iter().map(|t| src.barrel(set, t.barrel)).collect()
}

/// One pass over one set of barrels: (matches in docID order, cut off).
fn pass(
    src: &dyn Sources,
    terms: &[Term],
    set: BarrelSet,
    cutoff: usize,
    weights: &RankingWeights,
) -> Result<(Vec<Match>, bool)> {
    let barrels = barrels_of(src, terms, set)?;
    let mut cursors = open_cursors(&barrels, terms, set)?;
    // Rarest first: it leads, and the others seek.
    let mut order: Vec<usize> = (0..terms.len()).collect();
    order.sort_by_key(|&i| (cursors[i].len(), i));
    let mut pagerank = src.pagerank()?;
    let docs = src.docs();
    let mut scorer = Scorer::new();
    let mut hits: Vec<Vec<Hit>> = vec![Vec::new(); terms.len()];
    let mut matches = Vec::new();
    let lead = order[0];
    let Some(mut doc) = cursors[lead].next()? else {
        return Ok((matches, false));
    };
    'outer: loop {
        for &i in &order[1..] {
            match cursors[i].seek(doc)? {
                None => break 'outer,
                Some(d) if d > doc => match cursors[lead].seek(d)? {
                    None => break 'outer,
                    Some(d) => {
                        doc = d;
                        continue 'outer;
                    }
                },
                Some(_) => {}
            }
        }
        for (c, h) in cursors.iter_mut().zip(hits.iter_mut()) {
            h.clear();
            c.hits(h)?;
        }
        scorer.load(hits.iter().map(Vec::as_slice));
        let ir = scorer.ir(weights);
        let pr = match &mut pagerank {
            Some(f) => Some(f(doc)?),
            None => None,
        };
        matches.push(Match {
            doc,
            ir,
            pagerank: pr,
            score: weights.combine(ir, pr, docs),
        });
        if matches.len() >= cutoff {
            return Ok((matches, true));
        }
        match cursors[lead].next()? {
            Some(d) => doc = d,
            None => break,
        }
    }
    Ok((matches, false))
}

/// The hit lists of `terms` in document `doc` (from the full barrels), or
/// `None` if some term is not in it.
pub fn hits_of(src: &dyn Sources, terms: &[Term], doc: u32) -> Result<Option<Vec<Vec<Hit>>>> {
    let barrels = barrels_of(src, terms, BarrelSet::Full)?;
    let mut cursors = open_cursors(&barrels, terms, BarrelSet::Full)?;
    let mut out = Vec::with_capacity(terms.len());
    for c in &mut cursors {
        if c.seek(doc)? != Some(doc) {
            return Ok(None);
        }
        let mut h = Vec::new();
        c.hits(&mut h)?;
        out.push(h);
    }
    Ok(Some(out))
}

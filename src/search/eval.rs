//! Query evaluation, Brin & Page's Figure 4: conjunctive matching over the
//! doclists of the query words, short doclists first.
//!
//! 1–3. The words' lexicon entries give each doclist's start in its barrel
//!    and how many of its documents have a title or anchor hit of the word
//!    (its *short doclist*, the paper's short barrel; read from the full
//!    doclist by the postings blocks' count columns, see
//!    [`crate::index::Barrel::short_doclist`]); a cursor is opened on each.
//! 4. The cursors are intersected by leapfrogging: the rarest word leads, the
//!    others `seek` to its document (skipping whole postings blocks by their
//!    last docID), and whenever one overshoots the leader seeks to it.
//! 5. Each document that has every word is ranked ([`super::rank`]) from its
//!    hit lists (the same whole hit list in either pass).
//! 6. When the short doclists run out with fewer than `want` matches (the
//!    caller's offset + k), or some word has no short doclist at all, the
//!    match is done again on the full doclists, from the start.
//! 7. Matching stops at the `cutoff`-th match (the paper's 40,000), which
//!    bounds the response time: the top k are then the best of the first
//!    `cutoff` matches in docID order, which need not be the best overall.
//!
//! Matches are returned in docID order with their IR score and final score;
//! ranking them is the caller's.
//!
//! [`evaluate_in`] restricts all of this to a range of docIDs — what an index
//! server holding one docID-range subindex would do — and every evaluation
//! counts its [`Work`]: the postings it decoded and the hits it read.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

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
    /// Documents of the collection holding it (what idf is computed
    /// from): `info.docs`, or for a shard of a sharded index the sum of
    /// every shard's count.
    pub df: u32,
    /// Its barrel.
    pub barrel: usize,
}

/// Which barrels the results came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pass {
    /// The short doclists had enough matches.
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
    /// It satisfies the whole query (every match of the conjunctive
    /// evaluation does).
    pub complete: bool,
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
    /// Matching stopped at the deadline: the matches are those found by
    /// then, a partial answer.
    pub timed_out: bool,
    /// Matches the short pass found (before any fall-through).
    pub short_matches: usize,
    /// What the evaluation read, both passes together.
    pub work: Work,
}

/// What an evaluation read: the deterministic measure of its cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Work {
    /// Postings decoded (every entry of every postings block loaded; blocks
    /// skipped by their last docID are not counted).
    pub postings: u64,
    /// Hits decoded for the matching documents' scores.
    pub hits: u64,
    /// Matching documents scored.
    pub matches: u64,
    /// Times block-max pruning skipped docIDs by the postings blocks'
    /// score bounds.
    pub block_skips: u64,
    /// Candidates evaluated: documents every cursor was moved to (those
    /// skipped by block bounds are not counted).
    pub candidates: u64,
    /// Of them, those whose hit lists were read to score them (a phrase
    /// checked, or the proximity match placed): the costly part.
    pub placed: u64,
    /// Of them, those that entered the top results when they were scored
    /// (some pushed out again later): what the rest was evaluated for.
    pub entered: u64,
}

impl Work {
    /// Postings plus hits: the entries the evaluation decoded.
    pub fn entries(&self) -> u64 {
        self.postings + self.hits
    }

    fn add(&mut self, o: Work) {
        self.postings += o.postings;
        self.hits += o.hits;
        self.matches += o.matches;
        self.block_skips += o.block_skips;
        self.candidates += o.candidates;
        self.placed += o.placed;
        self.entered += o.entered;
    }
}

pub use crate::docstore::PageRankLookup;

/// What evaluation needs from the searcher: barrels and PageRank.
pub trait Sources {
    /// Full barrel `b`, opened (the short pass reads it too: a short
    /// doclist is the postings of the full one with a title or anchor hit).
    fn barrel(&self, b: usize) -> Result<Arc<Barrel>>;
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
    evaluate_in(src, terms, 0..u32::MAX, want, cutoff, weights)
}

/// Evaluates the conjunction of `terms` over the documents `docs` only, as
/// an index server holding just that range would: the same passes, the
/// cursors started at `docs.start` and stopped at `docs.end`, `want` and
/// `cutoff` counted within the range. (A server would know a word has no
/// short doclist in its range and skip the short pass; here that pass is
/// tried and ends at its first block.)
pub fn evaluate_in(
    src: &dyn Sources,
    terms: &[Term],
    docs: Range<u32>,
    want: usize,
    cutoff: usize,
    weights: &RankingWeights,
) -> Result<Evaluation> {
    evaluate_until(src, terms, docs, want, cutoff, weights, None)
}

/// [`evaluate_in`] that stops matching at `deadline` (checked every few
/// matches), returning what it found by then marked `timed_out`.
pub fn evaluate_until(
    src: &dyn Sources,
    terms: &[Term],
    docs: Range<u32>,
    want: usize,
    cutoff: usize,
    weights: &RankingWeights,
    deadline: Option<Instant>,
) -> Result<Evaluation> {
    let mut short_matches = 0;
    let mut work = Work::default();
    let limits = Limits { cutoff, deadline };
    if terms.iter().all(|t| t.info.short_docs > 0) {
        let (matches, stop) = pass(
            src,
            terms,
            BarrelSet::Short,
            &docs,
            &limits,
            weights,
            &mut work,
        )?;
        short_matches = matches.len();
        if matches.len() >= want || stop != Stop::End {
            return Ok(Evaluation {
                matches,
                pass: Pass::Short,
                cut_off: stop == Stop::CutOff,
                timed_out: stop == Stop::Deadline,
                short_matches,
                work,
            });
        }
    }
    let (matches, stop) = pass(
        src,
        terms,
        BarrelSet::Full,
        &docs,
        &limits,
        weights,
        &mut work,
    )?;
    Ok(Evaluation {
        matches,
        pass: Pass::Full,
        cut_off: stop == Stop::CutOff,
        timed_out: stop == Stop::Deadline,
        short_matches,
        work,
    })
}

/// One pass of [`evaluate_until`] over the barrels `set` alone, for a
/// sharded search (which decides the passes for all its shards together):
/// the matches in docID order, whether the cut-off or the deadline
/// stopped it; what it read is added to `work`.
pub fn evaluate_pass(
    src: &dyn Sources,
    terms: &[Term],
    set: BarrelSet,
    cutoff: usize,
    weights: &RankingWeights,
    deadline: Option<Instant>,
    work: &mut Work,
) -> Result<(Vec<Match>, bool, bool)> {
    let limits = Limits { cutoff, deadline };
    let (m, stop) = pass(src, terms, set, &(0..u32::MAX), &limits, weights, work)?;
    Ok((m, stop == Stop::CutOff, stop == Stop::Deadline))
}

/// Where matching stops early.
struct Limits {
    cutoff: usize,
    deadline: Option<Instant>,
}

/// Why a pass stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// At the end of the doclists or of the range.
    End,
    /// At the cut-off.
    CutOff,
    /// At the deadline.
    Deadline,
}

/// Matches scored between two looks at the clock.
const CLOCK_EVERY: usize = 64;

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
            BarrelSet::Short => b.short_doclist(t.id, t.info.full, t.info.short_docs),
            BarrelSet::Full => b.doclist(t.id, t.info.full, t.info.docs),
        })
        .collect()
}

/// The barrels of `terms`.
pub fn barrels_of(src: &dyn Sources, terms: &[Term]) -> Result<Vec<Arc<Barrel>>> {
    terms.iter().map(|t| src.barrel(t.barrel)).collect()
}

/// One pass over one set of barrels within `range`: (matches in docID
/// order, cut off); what it read is added to `work`.
fn pass(
    src: &dyn Sources,
    terms: &[Term],
    set: BarrelSet,
    range: &Range<u32>,
    limits: &Limits,
    weights: &RankingWeights,
    work: &mut Work,
) -> Result<(Vec<Match>, Stop)> {
    let barrels = barrels_of(src, terms)?;
    let mut cursors = open_cursors(&barrels, terms, set)?;
    let mut own = Work::default();
    let found = matching(src, &mut cursors, range, limits, weights, &mut own.hits);
    own.postings = cursors.iter().map(|c| c.postings_decoded()).sum();
    let (matches, stop) = found?;
    own.matches = matches.len() as u64;
    work.add(own);
    Ok((matches, stop))
}

/// The leapfrog intersection of `cursors` within `range`, each match
/// scored; the hits read are added to `hits`.
fn matching(
    src: &dyn Sources,
    cursors: &mut [DoclistCursor<'_>],
    range: &Range<u32>,
    limits: &Limits,
    weights: &RankingWeights,
    hits_read: &mut u64,
) -> Result<(Vec<Match>, Stop)> {
    let terms = cursors.len();
    // Rarest first: it leads, and the others seek.
    let mut order: Vec<usize> = (0..terms).collect();
    order.sort_by_key(|&i| (cursors[i].len(), i));
    let mut pagerank = src.pagerank()?;
    let docs = src.docs();
    let mut scorer = Scorer::new();
    let mut hits: Vec<Vec<Hit>> = vec![Vec::new(); terms];
    let mut matches = Vec::new();
    let lead = order[0];
    let first = if range.start == 0 {
        cursors[lead].next()?
    } else {
        cursors[lead].seek(range.start)?
    };
    let Some(mut doc) = first else {
        return Ok((matches, Stop::End));
    };
    'outer: loop {
        if doc >= range.end {
            break;
        }
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
            *hits_read += h.len() as u64;
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
            complete: true,
        });
        if matches.len() >= limits.cutoff {
            return Ok((matches, Stop::CutOff));
        }
        if matches.len() % CLOCK_EVERY == 1 && limits.deadline.is_some_and(|d| Instant::now() >= d)
        {
            return Ok((matches, Stop::Deadline));
        }
        match cursors[lead].next()? {
            Some(d) => doc = d,
            None => break,
        }
    }
    Ok((matches, Stop::End))
}

/// `term`'s hits in document `doc` (from its full barrel) into `out`, which
/// is left empty when `doc` does not hold the term.
pub fn hits_in(src: &dyn Sources, term: &Term, doc: u32, out: &mut Vec<Hit>) -> Result<()> {
    out.clear();
    let b = src.barrel(term.barrel)?;
    let mut c = b.doclist(term.id, term.info.full, term.info.docs)?;
    if c.seek(doc)? == Some(doc) {
        c.hits(out)?;
    }
    Ok(())
}

/// The hit lists of `terms` in document `doc` (from the full barrels), or
/// `None` if some term is not in it.
pub fn hits_of(src: &dyn Sources, terms: &[Term], doc: u32) -> Result<Option<Vec<Vec<Hit>>>> {
    let barrels = barrels_of(src, terms)?;
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

//! Ranked retrieval for every query of the query language
//! ([`super::query`]): documents that satisfy the whole query first, then
//! (`--match any`) those holding only some of its words,
//! ranked by BM25, BM25F ([`super::bm25`]) or the paper's function
//! ([`super::rank`]).
//!
//! The evaluation is document-at-a-time over the full barrels' doclists:
//!
//! 1. Every distinct word of the query (excluded ones too) is looked up;
//!    a cursor is opened on each doclist found.
//! 2. Candidates are the union of the doclists of the words that are not
//!    excluded (a query of `site:` and exclusions only takes the documents
//!    of its sites, ranked by PageRank).
//! 3. For each candidate, every cursor is moved to it; the query's tree is
//!    evaluated on the words present — a phrase by its hits' positions
//!    (consecutive, in order, in one field), `site:` by the docID ranges of
//!    the host (one host's docs are contiguous in docID order, and a
//!    domain's subdomains next to it), exclusions by their absence. A
//!    document satisfying the tree is *complete* (under `--match any` the
//!    tree without a question's function words, [`Query::required`]: they
//!    score but do not decide what comes first). An incomplete one is kept
//!    under `--match any` when it breaks none of the query's hard constraints:
//!    the top-level exclusions and `site:`s.
//! 4. Each kept document is scored from its hits, and a bounded heap keeps
//!    the best `keep` by (complete, score, docID).
//!
//! No cut-off in docID order applies: the top k are those of the whole
//! collection.
//!
//! # Dynamic pruning (BM25 and BM25F)
//!
//! Once the heap is full, its worst match is the bar a document must pass.
//! Two upper bounds keep the work to the documents that can still pass it
//! ([`Query::prune`]; the paper's ranking, whose score is not a sum of the
//! words' parts, is evaluated exhaustively):
//!
//! * **MaxScore** (Turtle & Flood 1995) over the words: each word's score
//!   is at most `idf · (k1 + 1)`; the proximity bonus at most
//!   `proximity_weight ·` the largest idf; PageRank's factor at most the
//!   collection's largest. The words are split into *essential* ones and
//!   the rest: a document holding only non-essential words can neither
//!   reach the bar's score nor satisfy what the bar demands (once the heap
//!   holds only complete matches, or under `--match all`, a document must
//!   satisfy the query: a query needing word `w` is then driven by `w`'s
//!   doclist alone — the conjunctive case). Candidates come from the
//!   essential words' doclists only; the others are moved by `seek`, which
//!   skips postings blocks by their last docID without decoding them.
//! * **Block-max** (Ding & Suel 2011, in its MaxScore form): each postings
//!   block's directory entry stores a bound of its documents' saturated
//!   frequencies ([`crate::index::inverted`], "Block bounds"). For a
//!   candidate `t`, every scored word's cursor looks up, without decoding,
//!   the block a seek to `t` would stop in ([`DoclistCursor::shallow`]):
//!   its bound times the word's idf, or nothing when `t` falls before the
//!   block or past the doclist (the word is then known absent, which is
//!   block-max AND for a conjunction); PageRank's factor is bounded by
//!   the largest PageRank of the docIDs up to the first block boundary
//!   ([`super::RankBounds`]). When that sum (with the proximity bound)
//!   cannot pass the bar, or the query cannot be satisfied there, every
//!   docID up to the boundary is skipped — essential cursors seek past it,
//!   never decoding the blocks in between — and the next boundary is tried.
//!   The bounds were computed with the default weights; a query with
//!   other BM25 weights uses the doclists' bounds instead.
//! * **Per document**, before any hit is read: the words' hits per class
//!   (the postings blocks' count columns) and the document's field
//!   lengths give its exact BM25/BM25F text score, PageRank is looked up,
//!   and the proximity bonus is bounded from the counts
//!   ([`RankingWeights::proximity_bound`]); a document whose bound, even
//!   if it satisfied the query, cannot pass the bar is not looked at
//!   further. A document scored without the proximity match (one word
//!   present, or no proximity weight) is then scored: the bound is its
//!   score. Hits are read only to check a phrase and to place the words
//!   for the proximity match (the costly part of scoring).
//! * **Phrases**: when every phrase holds every scored word, a document's
//!   hits are read once, as its proximity match reads them
//!   ([`ProximityPlan`]: the fields where every word has hits, which are
//!   the only ones a phrase can stand in), for the check and the score.
//!
//! A safety valve stops the evaluation once [`Query::cutoff`] documents
//! have been scored (hit lists decoded) and says so
//! ([`Retrieved::cut_off`]); pruning keeps real queries far below it.
//!
//! The results are those of the exhaustive evaluation, ties included
//! (`tests/query.rs` checks both against a brute-force scan). Totals stay
//! exact as long as every candidate was looked at and no phrase had to be
//! left unchecked; otherwise [`Retrieved::estimated`] is set and the totals
//! are an estimate (the matches found, scaled to the union of the words'
//! doclists).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::sync::Arc;

use super::bm25::{self, Bm25Explain, CollectionStats, WordInDoc, N_FIELDS};
use super::eval::{Match, Sources, Term, Work};
use super::query::{Matching, Node, Query, Ranking};
use super::rank::{
    self, phrase_in, Explain, HitType, ProximityBound, ProximityPlan, RankingWeights, Scorer,
    HIT_TYPES,
};
use super::{RankBounds, Searcher};
use crate::docstore::DocStore;
use crate::error::Result;
use crate::index::hit::Hit;
use crate::index::inverted::{bound_value, BoundParams, BOUND_BM25, BOUND_BM25F};
use crate::index::postings::{self, HitClasses};
use crate::index::{Barrel, DoclistCursor};

mod phrase;
mod words;

/// What the retrieval found.
#[derive(Clone, Debug, Default)]
pub struct Retrieved {
    /// The best matches, best first: complete ones before the others, then
    /// by score, then docID.
    pub matches: Vec<Match>,
    /// Matching documents (exact unless [`Self::estimated`]).
    pub total: u64,
    /// Of them, those satisfying the whole query.
    pub complete: u64,
    /// Pruning skipped documents, so the totals are estimates.
    pub estimated: bool,
    /// The least and the most [`Self::total`] can be (both it when exact).
    pub total_bounds: (u64, u64),
    /// The least and the most [`Self::complete`] can be.
    pub complete_bounds: (u64, u64),
    /// The query's deadline passed: the matches are those of the
    /// documents evaluated until then (totals too).
    pub timed_out: bool,
    /// The safety valve fired: [`Query::cutoff`] documents had been scored
    /// (their hit lists decoded), and no more were; the matches are the
    /// best of those, the totals an estimate.
    pub cut_off: bool,
    /// What the evaluation read.
    pub work: Work,
}

/// The explanation of one document's score under the query's ranking.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Explanation {
    /// The paper's ranking.
    Paper(Explain),
    /// BM25 or BM25F.
    Bm25(Bm25Explain),
}

/// A query word and its doclist, if the lexicon has it.
struct Slot {
    word: String,
    term: Option<Term>,
    /// It occurs outside any exclusion: it is scored and its doclist makes
    /// candidates.
    scored: bool,
}

/// The query's words, each once, in query order: their terms from
/// `known` (already looked up), or else from the lexicon.
fn slots(s: &Searcher, expr: &Node, known: &[Term]) -> Result<Vec<Slot>> {
    let mut out: Vec<Slot> = Vec::new();
    let mut err = None;
    expr.visit_words(false, &mut |w, negated| {
        if let Some(slot) = out.iter_mut().find(|x| x.word == w) {
            slot.scored |= !negated;
            return;
        }
        let term = match known.iter().find(|t| t.word == w) {
            Some(t) => Ok(Some(t.clone())),
            None => s.terms(&[w.to_string()]).map(|(_, mut t)| t.pop()),
        };
        match term {
            Ok(term) => out.push(Slot {
                word: w.to_string(),
                term,
                scored: !negated,
            }),
            Err(e) => err = Some(e),
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The scored slots in the order of the query's words ([`Query::words`]):
/// the paper's proximity depends on it, and sums are added in it.
fn scored_in_query_order(slots: &[Slot], query: &Query) -> Vec<usize> {
    query
        .words
        .iter()
        .filter_map(|w| slots.iter().position(|s| s.scored && &s.word == w))
        .collect()
}

/// The docID ranges of `host` and its subdomains: in the doc table's order
/// (by the URL sort key, [`crate::url::sort_key`]) they are the keys
/// starting with the host's reversed labels followed by `)` (the host),
/// `:` (the host with a port) or `,` (a subdomain).
pub fn site_ranges(store: &DocStore, host: &str) -> Result<Vec<Range<u32>>> {
    let Some(prefix) = host_prefix(host) else {
        return Ok(Vec::new());
    };
    let n = u32::try_from(store.len()).unwrap_or(u32::MAX);
    let mut key = Vec::new();
    // The first docID whose URL key is ≥ `target`.
    let mut lower_bound = |target: &[u8]| -> Result<u32> {
        let (mut lo, mut hi) = (0u32, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            key.clear();
            crate::url::sort_key(&store.doc(u64::from(mid))?.url, &mut key);
            if key.as_slice() < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    };
    let mut out = Vec::new();
    for sep in [b')', b',', b':'] {
        let mut from = prefix.clone();
        from.push(sep);
        let mut to = prefix.clone();
        to.push(sep + 1);
        let r = lower_bound(&from)?..lower_bound(&to)?;
        if !r.is_empty() {
            out.push(r);
        }
    }
    out.sort_by_key(|r| r.start);
    Ok(out)
}

/// The sort-key prefix of a host: its labels reversed, comma-separated (an
/// IP address as written); `None` for what is not a host.
fn host_prefix(host: &str) -> Option<Vec<u8>> {
    let u = url::Url::parse(&format!("http://{host}/")).ok()?;
    let h = u.host_str()?;
    Some(match u.host()? {
        url::Host::Domain(_) => h.rsplit('.').collect::<Vec<_>>().join(",").into_bytes(),
        _ => h
            .trim_start_matches('[')
            .trim_end_matches(']')
            .as_bytes()
            .to_vec(),
    })
}

/// A match in the heap: worst at the top.
struct Ranked(Match);

impl Ranked {
    fn key(&self) -> (bool, f64, std::cmp::Reverse<u32>) {
        (self.0.complete, self.0.score, std::cmp::Reverse(self.0.doc))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ranked {
    // Reversed: the heap's top is the worst kept match.
    fn cmp(&self, o: &Self) -> Ordering {
        let (a, b) = (self.key(), o.key());
        // Lazily: most comparisons are decided by the score.
        b.0.cmp(&a.0)
            .then_with(|| b.1.total_cmp(&a.1))
            .then_with(|| b.2.cmp(&a.2))
    }
}

/// Orders matches best first: complete, score, docID.
pub fn best_first(a: &Match, b: &Match) -> Ordering {
    b.complete
        .cmp(&a.complete)
        .then(b.score.total_cmp(&a.score))
        .then(a.doc.cmp(&b.doc))
}

/// One document's words: present or not, and their hits once read (the
/// buffers are the retrieval's, reused from document to document).
struct DocWords<'c, 'b> {
    doc: u32,
    cursors: &'c mut [Option<DoclistCursor<'b>>],
    present: &'c [bool],
    hits: &'c mut [Vec<Hit>],
    /// Per word: its hits are in `hits`.
    read: &'c mut [bool],
    /// Per word: how many of its hits in `hits` lead in (field, position)
    /// order, as the decoder says (0: unknown).
    led: &'c mut [usize],
    /// The classes read of each word's hits (bit `1 << class`) when the
    /// document's hits are read as its proximity match reads them
    /// ([`ProximityPlan`], no capitalization), or `None` for every hit.
    read_as: Option<u8>,
    hits_read: u64,
    /// The phrase check's buffers (reused).
    phrase: &'c mut PhraseBufs,
}

/// Buffers of the phrase check, kept from document to document.
#[derive(Default)]
struct PhraseBufs {
    /// The phrase's words' slots.
    slots: Vec<usize>,
    /// Per phrase word, its hits sorted by (field, position) when the list
    /// was not ([`phrase_in`]).
    sorted: Vec<Vec<Hit>>,
    scratch: Vec<Hit>,
}

impl DocWords<'_, '_> {
    /// Word `i`'s hits per type (zero when absent), from its postings
    /// block's count columns (no hit is read).
    fn counts(&mut self, i: usize) -> Result<[u32; HIT_TYPES]> {
        match &mut self.cursors[i] {
            Some(c) if self.present[i] => Ok(type_counts(&c.classes()?)),
            _ => Ok([0; HIT_TYPES]),
        }
    }

    /// Word `i`'s hits (empty when absent), read once: all of them, or
    /// those of the classes `read_as` says (counted as the whole list all
    /// the same, so the work does not depend on how they were read).
    fn hits(&mut self, i: usize) -> Result<&[Hit]> {
        if !self.read[i] {
            let h = &mut self.hits[i];
            h.clear();
            self.led[i] = 0;
            if self.present[i] {
                if let Some(c) = &mut self.cursors[i] {
                    match self.read_as {
                        Some(classes) => {
                            self.led[i] = c.placed_hits(classes, h)?;
                            let all: u32 = c.classes()?.iter().sum();
                            self.hits_read += u64::from(all);
                        }
                        None => {
                            c.hits(h)?;
                            self.hits_read += h.len() as u64;
                        }
                    }
                }
            }
            self.read[i] = true;
        }
        Ok(&self.hits[i])
    }
}

/// What a node needs to be evaluated on a document.
struct Eval<'q> {
    slots: &'q [Slot],
    sites: &'q [(String, Vec<Range<u32>>)],
}

impl Eval<'_> {
    fn slot(&self, w: &str) -> usize {
        self.slots
            .iter()
            .position(|s| s.word == w)
            .unwrap_or(usize::MAX)
    }

    fn in_site(&self, host: &str, doc: u32) -> bool {
        self.sites
            .iter()
            .find(|(h, _)| h == host)
            .is_some_and(|(_, rs)| rs.iter().any(|r| r.contains(&doc)))
    }

    fn holds(&self, n: &Node, d: &mut DocWords<'_, '_>) -> Result<bool> {
        Ok(match n {
            Node::Word(w) => {
                let i = self.slot(w);
                d.present.get(i).copied().unwrap_or(false)
            }
            Node::Phrase(ws) => self.phrase(ws, d)?,
            Node::Site(h) => self.in_site(h, d.doc),
            Node::All(ns) => {
                for n in ns {
                    if !self.holds(n, d)? {
                        return Ok(false);
                    }
                }
                true
            }
            Node::Any(ns) => {
                for n in ns {
                    if self.holds(n, d)? {
                        return Ok(true);
                    }
                }
                false
            }
            Node::Not(n) => !self.holds(n, d)?,
        })
    }

    /// Whether the words stand consecutively, in order, in one field.
    fn phrase(&self, ws: &[String], d: &mut DocWords<'_, '_>) -> Result<bool> {
        let mut slots = std::mem::take(&mut d.phrase.slots);
        slots.clear();
        slots.extend(ws.iter().map(|w| self.slot(w)));
        let found = Self::phrase_of(&slots, d);
        d.phrase.slots = slots;
        found
    }

    /// [`Self::phrase`] of the words in `slots`.
    fn phrase_of(slots: &[usize], d: &mut DocWords<'_, '_>) -> Result<bool> {
        if slots
            .iter()
            .any(|&i| !d.present.get(i).copied().unwrap_or(false))
        {
            return Ok(false);
        }
        for &i in slots {
            d.hits(i)?;
        }
        let (hits, led) = (&*d.hits, &*d.led);
        let bufs = &mut d.phrase.sorted;
        Ok(phrase_in(
            slots.len(),
            |k| (hits[slots[k]].as_slice(), led[slots[k]]),
            bufs,
            &mut d.phrase.scratch,
        ))
    }
}

/// The top-level items that are hard constraints under `--match any`:
/// those without a scored word (exclusions, `site:`).
fn hard_items(expr: &Node) -> Vec<&Node> {
    let items: Vec<&Node> = match expr {
        Node::All(ns) => ns.iter().collect(),
        n => vec![n],
    };
    items
        .into_iter()
        .filter(|n| {
            let mut scored = false;
            n.visit_words(false, &mut |_, negated| scored |= !negated);
            !scored
        })
        .collect()
}

/// Scores documents under one ranking.
pub struct DocScorer<'a> {
    query: &'a Query,
    stats: CollectionStats,
    scorer: Scorer,
    /// The query's proximity bound, worked out once.
    prox_bound: ProximityBound,
}

impl<'a> DocScorer<'a> {
    /// A scorer for `query` over `s`'s collection.
    pub fn new(s: &Searcher, query: &'a Query) -> DocScorer<'a> {
        DocScorer {
            query,
            stats: CollectionStats {
                docs: s.doc_count(),
                avg_len: s.average_field_lengths(),
            },
            scorer: Scorer::new(),
            prox_bound: ProximityBound::new(&query.weights),
        }
    }

    /// The IR score and final score of a document from the scored words'
    /// `(word, df, hits)` (empty hits: absent), and its explanation when
    /// asked.
    pub fn score(
        &mut self,
        words: &[(&str, u32, &[Hit])],
        lens: Option<&[u32; N_FIELDS]>,
        pagerank: Option<f64>,
        explain: bool,
    ) -> (f64, f64, Option<Explanation>) {
        let q = self.query;
        if words.is_empty() {
            // `site:` alone: by PageRank.
            let pr = pagerank.unwrap_or(0.0);
            return (0.0, pr, None);
        }
        let present = words.iter().filter(|(_, _, h)| !h.is_empty()).count();
        // BM25's proximity needs two words present (the paper's ranking
        // always places the hits).
        let proximity = explain
            || q.ranking == Ranking::Paper
            || (present > 1 && q.bm25.proximity_weight != 0.0);
        self.scorer.load(
            words
                .iter()
                .filter(|(_, _, h)| !h.is_empty() && proximity)
                .map(|(_, _, h)| *h),
        );
        match q.ranking {
            Ranking::Paper => {
                let ir = self.scorer.ir(&q.weights);
                let score = q.weights.combine(ir, pagerank, self.stats.docs);
                let ex = explain.then(|| {
                    let names: Vec<String> = words
                        .iter()
                        .filter(|(_, _, h)| !h.is_empty())
                        .map(|(w, _, _)| w.to_string())
                        .collect();
                    Explanation::Paper(self.scorer.explain(
                        &names,
                        &q.weights,
                        pagerank,
                        self.stats.docs,
                    ))
                });
                (ir, score, ex)
            }
            Ranking::Bm25 | Ranking::Bm25f => {
                let wd = word_counts(&self.stats, words);
                let prox = self.scorer.proximity(&q.weights);
                let (score, ex) = bm25::score(
                    &q.bm25,
                    q.ranking == Ranking::Bm25f,
                    &self.stats,
                    &wd,
                    lens,
                    prox,
                    pagerank,
                    explain,
                );
                let ir = ex.as_ref().map_or(score, |e| e.text + e.proximity);
                (ir, score, ex.map(Explanation::Bm25))
            }
        }
    }
}

/// Each scored word's hits per type (zero when absent), as the ranking's
/// scorer counts them.
fn word_counts<'w>(
    stats: &CollectionStats,
    words: &[(&'w str, u32, &[Hit])],
) -> Vec<WordInDoc<'w>> {
    words
        .iter()
        .map(|&(word, df, h)| {
            let mut counts = [0u32; HIT_TYPES];
            for &x in h {
                counts[HitType::of(x).index()] += 1;
            }
            WordInDoc {
                word,
                df,
                idf: stats.idf(df),
                counts,
            }
        })
        .collect()
}

impl DocScorer<'_> {
    /// Whether [`Self::score`] places the hits of a document whose words
    /// have these counts (for the proximity match): under the paper's
    /// ranking, or with two words present and a proximity weight (and,
    /// to keep one path, for a query without words).
    fn places(&self, words: &[WordInDoc<'_>]) -> bool {
        let q = self.query;
        if words.is_empty() {
            // `site:` alone: ranked by PageRank (no hits to place).
            return true;
        }
        let present = words
            .iter()
            .filter(|w| w.counts.iter().any(|&c| c > 0))
            .count();
        q.ranking == Ranking::Paper || (present > 1 && q.bm25.proximity_weight != 0.0)
    }

    /// The words' part of the BM25 or BM25F score of a document
    /// ([`bm25::TextPart`]): what [`Self::bound`] and [`Self::score_placed`]
    /// finish.
    fn text(&self, words: &[WordInDoc<'_>], lens: Option<&[u32; N_FIELDS]>) -> bm25::TextPart {
        let q = self.query;
        bm25::text_part(
            &q.bm25,
            q.ranking == Ranking::Bm25f,
            &self.stats,
            words,
            lens,
        )
    }

    /// At least the BM25 or BM25F score [`Self::score`] gives a document,
    /// without placing its hits: the exact text score `text` (of
    /// [`Self::text`]), the proximity score at its bound from the hit
    /// counts ([`RankingWeights::proximity_bound`]).
    fn bound(&self, words: &[WordInDoc<'_>], text: &bm25::TextPart, factor: f64) -> f64 {
        let q = self.query;
        let present = words
            .iter()
            .filter(|w| w.counts.iter().any(|&c| c > 0))
            .count();
        // With fewer than two words present there is no proximity bonus
        // (`proximity_bound` is 0): the common one-word case skips it.
        let prox = if present < 2 {
            0.0
        } else {
            let counts = words.iter().take(super::MAX_QUERY_WORDS).map(|w| &w.counts);
            self.prox_bound.of(counts).min(1e300)
        };
        text.total(&q.bm25, prox, factor)
    }

    /// [`Self::bound`] when a document with it may still enter a heap
    /// whose worst match is `worst` ([`may_pass`], `complete` as the
    /// document may be), `None` when it cannot. The proximity bound
    /// ([`ProximityBound::of`], per type and bin) is the costly part: the
    /// text score with the bonus at its limit
    /// ([`bm25::TextPart::total_at_most`]) is tried first, and a candidate
    /// it shuts out would be shut out by the bound (never above it), so
    /// the decisions are the bound's.
    fn bound_passing(
        &self,
        words: &[WordInDoc<'_>],
        text: &bm25::TextPart,
        factor: f64,
        worst: &Match,
        complete: bool,
    ) -> Option<f64> {
        if !may_pass(
            worst,
            complete,
            text.total_at_most(&self.query.bm25, factor),
        ) {
            return None;
        }
        let bound = self.bound(words, text, factor);
        may_pass(worst, complete, bound).then_some(bound)
    }

    /// The (IR score, final score) [`Self::score`] gives a document whose
    /// hits it places ([`Self::places`] true), under BM25 or BM25F, from
    /// its words' text score `text` ([`Self::text`] of their counts, as
    /// [`Self::score`] counts them from `hits`) and their hits in the same
    /// order, each list with its count of leading hits known in (field,
    /// position) order ([`Scorer::load_proximity_led`]; 0 if unknown).
    ///
    /// With a `plan`, `hits` are the present words' alone, read as it says
    /// ([`Scorer::load_proximity_planned`]); without, every word's full
    /// list, empty when it is absent.
    fn score_placed<'h>(
        &mut self,
        words: &[WordInDoc<'_>],
        hits: impl Iterator<Item = (&'h [Hit], usize)> + Clone,
        text: &bm25::TextPart,
        pagerank: (Option<f64>, f64),
        plan: Option<&ProximityPlan>,
    ) -> (f64, f64) {
        let q = self.query;
        if words.is_empty() {
            return (0.0, pagerank.0.unwrap_or(0.0));
        }
        // The query's distinct words are at most `MAX_QUERY_WORDS`.
        let mut lists: [&[Hit]; super::MAX_QUERY_WORDS] = [&[]; super::MAX_QUERY_WORDS];
        let mut led = [0; super::MAX_QUERY_WORDS];
        let mut n = 0;
        for (h, l) in hits
            .clone()
            .filter(|(h, _)| plan.is_some() || !h.is_empty())
        {
            if let (Some(list), Some(led)) = (lists.get_mut(n), led.get_mut(n)) {
                (*list, *led) = (h, l);
            }
            n += 1;
        }
        match (plan, n <= lists.len()) {
            (Some(plan), true) => self
                .scorer
                .load_proximity_planned(&lists[..n], |k| led[k], plan),
            (None, true) => self.scorer.load_proximity_led(&lists[..n], |k| led[k]),
            _ => self
                .scorer
                .load(hits.map(|(h, _)| h).filter(|h| !h.is_empty())),
        }
        let prox = self.scorer.proximity(&q.weights);
        let score = text.total(&q.bm25, prox, pagerank.1);
        (score, score)
    }

    /// The (IR score, final score) [`Self::score`] gives a document whose
    /// hits it would not place ([`Self::places`] false), from its words'
    /// counts.
    fn score_counts(
        &self,
        words: &[WordInDoc<'_>],
        lens: Option<&[u32; N_FIELDS]>,
        pagerank: (Option<f64>, f64),
    ) -> (f64, f64) {
        let score = self
            .text(words, lens)
            .total(&self.query.bm25, 0.0, pagerank.1);
        (score, score)
    }
}

/// The current document's hits per class (into `out`), from its cursor's postings
/// block's count columns, their sums checked (`type_counts` adds them).
/// The columns are decoded once per block: `counted_at` is the cursor's
/// decoded postings when they last were (they grow with each block the
/// cursor loads, and only then). Asking the cursor per candidate
/// (its `classes`, then the sums checked) copied its block's view each
/// time.
/// Of a full doclist only ([`DoclistCursor::block_columns`]). Always
/// inlined: the 2–3-word loop calls it per word per candidate, and as a
/// call it cost that loop 2–4% more instructions than its own copy did.
#[inline(always)]
fn column_classes(
    c: &mut DoclistCursor<'_>,
    counted_at: &mut u64,
    out: &mut HitClasses,
) -> Result<()> {
    if *counted_at != c.postings_decoded() {
        c.count_block()?;
        *counted_at = c.postings_decoded();
    }
    let (_, cols, at) = c.block_columns();
    for (x, col) in out.iter_mut().zip(cols) {
        *x = col[at];
    }
    postings::plain_fancy(out).map_err(|d| c.corrupt(d))?;
    Ok(())
}

/// A word's hit counts per [`HitType`] from its hit classes (the postings
/// block's count columns), as [`HitType::of`] types each hit.
fn type_counts(c: &HitClasses) -> [u32; HIT_TYPES] {
    let mut t = [0u32; HIT_TYPES];
    for (&n, ty) in c.iter().zip(rank::CLASS_TYPES) {
        t[ty.index()] += n;
    }
    t
}

/// A node as [`possible`] and [`necessary`] read it, its words resolved to
/// slot indices once per query: they are asked of every candidate and
/// block, where finding each word's slot by comparing strings was 2–3% of
/// a query's time.
enum Need {
    /// Words that must all be present (a word, or a phrase's words).
    Words(Vec<usize>),
    /// A `site:`, unknown here.
    Site,
    All(Vec<Need>),
    Any(Vec<Need>),
    Not(Box<Need>),
}

impl Need {
    fn of(n: &Node, slot: &impl Fn(&str) -> usize) -> Need {
        match n {
            Node::Word(w) => Need::Words(vec![slot(w)]),
            Node::Phrase(ws) => Need::Words(ws.iter().map(|w| slot(w)).collect()),
            Node::Site(_) => Need::Site,
            Node::All(ns) => Need::All(ns.iter().map(|n| Need::of(n, slot)).collect()),
            Node::Any(ns) => Need::Any(ns.iter().map(|n| Need::of(n, slot)).collect()),
            Node::Not(n) => Need::Not(Box::new(Need::of(n, slot))),
        }
    }
}

/// Whether a node can hold, or must hold, for a document of which only the
/// words `can(i)` (slot indices) may be present: phrases as their words,
/// `site:` unknown.
fn possible(n: &Need, can: &impl Fn(usize) -> bool) -> bool {
    match n {
        Need::Words(ws) => ws.iter().all(|&i| can(i)),
        Need::Site => true,
        Need::All(ns) => ns.iter().all(|n| possible(n, can)),
        Need::Any(ns) => ns.iter().any(|n| possible(n, can)),
        Need::Not(n) => !necessary(n, can),
    }
}

/// [`possible`] of every set of the slots `0..n` (at most
/// [`words::MAX_PLAIN`]), worked out once: entry `mask` for the slots `i`
/// with bit `i` set. Asked per candidate and per block, the tree's walk
/// was 2% of an OR query's instructions.
fn possible_sets(need: &Need, n: usize) -> PossibleSets {
    let mut sets = [false; 1 << words::MAX_PLAIN];
    for (mask, p) in sets.iter_mut().enumerate().take(1 << n) {
        *p = possible(need, &|i: usize| i < n && mask >> i & 1 == 1);
    }
    sets
}

/// [`possible_sets`]' table.
type PossibleSets = [bool; 1 << words::MAX_PLAIN];

/// See [`possible`]: whether the node holds whichever of the words are
/// present.
fn necessary(n: &Need, can: &impl Fn(usize) -> bool) -> bool {
    match n {
        Need::Words(_) | Need::Site => false,
        Need::All(ns) => ns.iter().all(|n| necessary(n, can)),
        Need::Any(ns) => ns.iter().any(|n| necessary(n, can)),
        Need::Not(n) => !possible(n, can),
    }
}

/// Whether the query has a phrase (its test needs hit lists).
fn has_phrase(n: &Node) -> bool {
    match n {
        Node::Phrase(_) => true,
        Node::Word(_) | Node::Site(_) => false,
        Node::All(ns) | Node::Any(ns) => ns.iter().any(has_phrase),
        Node::Not(n) => has_phrase(n),
    }
}

/// Whether every phrase of the tree (its words) satisfies `ok`.
fn phrases_hold(n: &Node, ok: &impl Fn(&[String]) -> bool) -> bool {
    match n {
        Node::Phrase(ws) => ok(ws),
        Node::Word(_) | Node::Site(_) => true,
        Node::All(ns) | Node::Any(ns) => ns.iter().all(|n| phrases_hold(n, ok)),
        Node::Not(n) => phrases_hold(n, ok),
    }
}

/// The upper bounds of BM25 and BM25F scores that pruning works with.
struct Bounds<'s> {
    /// Per slot: its barrel's block bounds were computed with the query's
    /// weights, so they bound its scores.
    blockmax: Vec<bool>,
    /// Which bound byte of a postings block is the query's ranking's.
    byte: usize,
    /// The largest PageRank of docID ranges (`None`: no ranks).
    ranks: Option<&'s RankBounds>,
    /// Per slot: its idf (0 for a slot not scored).
    idf: Vec<f64>,
    /// Per slot: the most its word can add, `idf · (k1 + 1)`.
    word: Vec<f64>,
    /// The largest PageRank factor of the collection (1 without ranks).
    factor: f64,
    weights: super::bm25::Bm25Weights,
    fielded: bool,
    docs: u64,
    /// Per field, a document's length normalisation is `norm_at[f] +
    /// norm_per[f] · len_f` (BM25F; under BM25 field 0 holds
    /// `k1 · (1 − b + b · len / avglen)` of the body's length): the
    /// averages' divisions done once per query, not for every candidate
    /// in [`Self::of_classes`].
    norm_at: [f64; N_FIELDS],
    norm_per: [f64; N_FIELDS],
    /// Per field, the normalisation at ratio 1 (a document without
    /// lengths).
    norm_one: [f64; N_FIELDS],
    /// Per [`RankBounds::CHUNK`] of docIDs, [`Self::factor_at_most`] of
    /// its largest PageRank (`None`: no ranks), shared by the queries of a
    /// searcher with the same weight ([`RankBounds::chunk_factors`]).
    chunk_factors: Option<Arc<[f64]>>,
}

/// Rounding slack: a bound is compared as `bound · (1 + SLACK) + SLACK`,
/// so a sum added in another order cannot make it too small.
const SLACK: f64 = 1e-9;

impl<'s> Bounds<'s> {
    /// Bounds for `query`, or `None` when its ranking cannot be bounded
    /// (the paper's, or negative weights).
    fn new(
        s: &'s Searcher,
        query: &Query,
        slots: &[Slot],
        scored: &[usize],
        barrels: &[Option<Arc<Barrel>>],
    ) -> Result<Option<Bounds<'s>>> {
        let w = &query.bm25;
        let fielded = match query.ranking {
            Ranking::Paper => return Ok(None),
            Ranking::Bm25 => false,
            Ranking::Bm25f => true,
        };
        let nonneg = w.k1 >= 0.0
            && w.proximity_weight >= 0.0
            && w.proximity_k >= 0.0
            && w.pagerank_weight >= 0.0
            && w.field_weight.iter().all(|&x| x >= 0.0)
            && (0.0..=1.0).contains(&w.b)
            && w.field_b.iter().all(|b| (0.0..=1.0).contains(b));
        // A query without a scored word ranks its sites by PageRank alone.
        if !query.prune || !nonneg || scored.is_empty() {
            return Ok(None);
        }
        let stats = CollectionStats {
            docs: s.doc_count(),
            avg_len: s.average_field_lengths(),
        };
        let mut idf = vec![0.0; slots.len()];
        let mut word = vec![0.0; slots.len()];
        for &i in scored {
            if let Some(t) = &slots[i].term {
                idf[i] = stats.idf(t.df);
                word[i] = idf[i] * (w.k1 + 1.0);
            }
        }
        let ranks = s.rank_bounds()?;
        let factor = match ranks {
            Some(r) => RankingWeights {
                pagerank_weight: w.pagerank_weight,
                ..RankingWeights::default()
            }
            .pagerank_factor(r.max(), stats.docs),
            None => 1.0,
        };
        let same = |p: &BoundParams| {
            p.k1 == w.k1
                && p.b == w.b
                && p.field_weight == w.field_weight
                && p.field_b == w.field_b
                && p.avg_len == stats.avg_len
        };
        let blockmax = barrels
            .iter()
            .map(|b| b.as_ref().and_then(|b| b.bound_params()).is_some_and(same))
            .collect();
        let [norm_at, norm_per, norm_one] = length_norms(w, fielded, stats.avg_len);
        let chunk_factors = ranks.map(|r| {
            let (weight, docs) = (w.pagerank_weight, stats.docs);
            r.chunk_factors([weight.to_bits(), docs], |pr| {
                factor_at_most(weight, docs, pr)
            })
        });
        Ok(Some(Bounds {
            blockmax,
            byte: if fielded { BOUND_BM25F } else { BOUND_BM25 },
            ranks,
            idf,
            word,
            factor,
            weights: w.clone(),
            fielded,
            docs: stats.docs,
            norm_at,
            norm_per,
            norm_one,
            chunk_factors,
        }))
    }

    /// The most a document holding only the words `set` can score.
    fn of_set(&self, set: impl Iterator<Item = usize>) -> f64 {
        let (mut sum, mut max_idf, mut n) = (0.0, 0.0f64, 0);
        for i in set {
            sum += self.word[i];
            max_idf = max_idf.max(self.idf[i]);
            n += 1;
        }
        let prox = if n > 1 {
            self.weights.proximity_weight * max_idf
        } else {
            0.0
        };
        (sum + prox) * self.factor
    }

    /// The most the words `words` (slot, hit classes) of a document with
    /// field lengths `lens` can add to its score before the PageRank
    /// factor: each word's [`Self::of_classes`] (its exact text score
    /// within rounding) and, with more than one word, the proximity bonus
    /// at its limit (`proximity_weight` times the largest idf: the bonus
    /// is the mean idf of the words scoring times a fraction below 1).
    ///
    /// Each class is counted in the field the exact score counts it in: a
    /// bound from the plain (small to large type) and fancy (URL, title,
    /// anchor, other) totals counted class OTHER as fancy under BM25F and
    /// left it out under BM25, while the exact score counts it as body —
    /// below the true score for a document with such hits.
    ///
    /// Always inlined: called from three loops, it was left out of line,
    /// and the call cost the 2–3-word loop ~4% more instructions on
    /// rust-doc's AND queries.
    #[inline(always)]
    fn of_words<'c>(
        &self,
        words: impl Iterator<Item = (usize, &'c HitClasses)>,
        lens: Option<&[u32; N_FIELDS]>,
    ) -> f64 {
        let (mut sum, mut max_idf, mut n) = (0.0, 0.0f64, 0);
        for (i, c) in words {
            sum += self.of_classes(i, c, lens);
            max_idf = max_idf.max(self.idf[i]);
            n += 1;
        }
        if n > 1 {
            sum += self.weights.proximity_weight * max_idf;
        }
        sum
    }

    /// The most word `i` can add to a document where its hits per count
    /// class are `classes`, its field lengths `lens`: each class counted in
    /// the field the exact score counts it in ([`type_counts`],
    /// [`bm25::FIELD_OF_TYPE`]), the lengths normalised with the per-query
    /// constants. So it is the exact text score within rounding (far
    /// inside `SLACK`) — a one-word query's candidate that passes it mostly
    /// enters the heap — and it costs a division per field the word is in,
    /// not a test of every field. (Plain and fancy totals, each counted in
    /// its best field, let ~36% of rust-doc's one-word candidates on to
    /// the exact score, ~7% of them into the heap.)
    ///
    /// Always inlined: with [`Self::of_words`] calling it too, a plain
    /// `#[inline]` left it out of line in the one-word loop (14.8M
    /// instructions of calls on rust-doc's 300 one-word queries).
    #[inline(always)]
    fn of_classes(&self, i: usize, c: &HitClasses, lens: Option<&[u32; N_FIELDS]>) -> f64 {
        use postings::{ANCHOR, BOLD, LARGE, OTHER, PLAIN, SMALL, TITLE, URL};
        let w = &self.weights;
        // Summed as floats: corrupt counts cannot overflow.
        let body =
            f64::from(c[SMALL]) + f64::from(c[PLAIN]) + f64::from(c[BOLD]) + f64::from(c[OTHER]);
        if self.fielded {
            let tf = [
                f64::from(c[TITLE]),
                f64::from(c[ANCHOR]),
                f64::from(c[URL]),
                f64::from(c[LARGE]),
                body,
            ];
            let mut p = 0.0;
            for (f, &n) in tf.iter().enumerate() {
                if n > 0.0 {
                    let norm = match lens {
                        Some(l) => self.norm_at[f] + self.norm_per[f] * f64::from(l[f]),
                        None => self.norm_one[f],
                    };
                    p += w.field_weight[f] * n / norm.max(1e-9);
                }
            }
            // As `bm25::word_score` divides (no floor under `p + k1`).
            self.idf[i] * p * (w.k1 + 1.0) / (p + w.k1)
        } else {
            let n = body + f64::from(c[LARGE]);
            let norm = match lens {
                Some(l) => self.norm_at[0] + self.norm_per[0] * (f64::from(l[3]) + f64::from(l[4])),
                None => self.norm_one[0],
            };
            self.idf[i] * n * (w.k1 + 1.0) / (n + norm).max(1e-9)
        }
    }

    /// The most word `i` can add to a document of a postings block with
    /// bound bytes `bound`.
    fn of_block(&self, i: usize, bound: [u8; 2]) -> f64 {
        if self.blockmax[i] {
            self.idf[i] * bound_value(bound[self.byte], self.weights.k1)
        } else {
            self.word[i]
        }
    }

    /// At least the largest PageRank factor of docIDs `first..=last` (see
    /// [`Self::factor_at_most`]).
    fn factor_in(&self, first: u32, last: u32) -> f64 {
        match self.ranks {
            // A bound, so the logarithm-free one: candidates are often
            // in a new chunk each, and this was a `ln_1p` per candidate.
            Some(r) => self.factor_at_most(Some(r.max_in(first, last))),
            None => 1.0,
        }
    }

    /// [`Self::factor_in`] of the [`RankBounds::CHUNK`] docIDs around
    /// `doc` (or of any range of docIDs within that chunk): a table read.
    #[inline]
    fn chunk_factor(&self, doc: u32) -> f64 {
        match &self.chunk_factors {
            // `RankBounds::max_in` counts docIDs past the last chunk in it.
            Some(t) if !t.is_empty() => t[(doc as usize / RankBounds::CHUNK).min(t.len() - 1)],
            _ => {
                let first = doc - doc % RankBounds::CHUNK as u32;
                self.factor_in(first, first.saturating_add(RankBounds::CHUNK as u32 - 1))
            }
        }
    }

    /// [`Self::factor_at_most`] of every docID's PageRank in `ranks`, the
    /// PageRank vector in memory ([`RankBounds::doc_factors`]; `None`: no
    /// ranks).
    fn doc_factors(&self, ranks: &[f64]) -> Option<Arc<[f64]>> {
        let (weight, docs) = (self.weights.pagerank_weight, self.docs);
        self.ranks.map(|r| {
            r.doc_factors([weight.to_bits(), docs], ranks, |pr| {
                factor_at_most(weight, docs, pr)
            })
        })
    }

    /// The PageRank factor of a document.
    fn factor_of(&self, pr: Option<f64>) -> f64 {
        bm25::pagerank_factor(&self.weights, self.docs, pr)
    }

    /// At least [`Self::factor_of`], and at most `pagerank_weight · 0.002`
    /// above it, without its `ln_1p`: a bound needs no exact factor, and
    /// the logarithm per candidate (its chunk's, then its own) was ~6% of
    /// a one-word query's time.
    fn factor_at_most(&self, pr: Option<f64>) -> f64 {
        pr.map_or(1.0, |pr| {
            factor_at_most(self.weights.pagerank_weight, self.docs, pr)
        })
    }
}

/// [`Bounds::factor_at_most`] of PageRank `pr` with PageRank weight
/// `weight` in a collection of `docs` documents.
fn factor_at_most(weight: f64, docs: u64, pr: f64) -> f64 {
    // Where no bound is had (NaN, or past the largest finite value), the
    // exact logarithm.
    rank::pagerank_factor_with(weight, pr, docs, |x| {
        ln_1p_at_most(x).unwrap_or_else(|| x.ln_1p())
    })
}

/// [`Bounds`]' length normalisations: per field `[at, per, one]`, a
/// document's normalisation being `at + per · len` (BM25F: `1 − b_f +
/// b_f · len_f / avg_f` as `(1 − b_f) + (b_f / avg_f) · len_f`; BM25 in
/// field 0: `k1 · (1 − b + b · len / avglen)` of the body's length), and
/// `one` it at ratio 1 (a document without lengths; a field without an
/// average has ratio 1 always).
fn length_norms(
    w: &bm25::Bm25Weights,
    fielded: bool,
    avg_len: Option<[f64; N_FIELDS]>,
) -> [[f64; N_FIELDS]; 3] {
    let (mut at, mut per, mut one) = ([1.0; N_FIELDS], [0.0; N_FIELDS], [1.0; N_FIELDS]);
    if fielded {
        for f in 0..N_FIELDS {
            one[f] = 1.0 - w.field_b[f] + w.field_b[f];
            (at[f], per[f]) = match avg_len {
                Some(avg) if avg[f] > 0.0 => (1.0 - w.field_b[f], w.field_b[f] / avg[f]),
                _ => (one[f], 0.0),
            };
        }
    } else {
        one[0] = w.k1 * (1.0 - w.b + w.b);
        (at[0], per[0]) = match avg_len {
            Some(avg) if avg[3] + avg[4] > 0.0 => {
                (w.k1 * (1.0 - w.b), w.k1 * w.b / (avg[3] + avg[4]))
            }
            _ => (one[0], 0.0),
        };
    }
    [at, per, one]
}

/// At least `ln(1 + x)` for a finite `x ≥ 0` (`None` otherwise: NaN, or
/// past the largest finite `1 + x`), without a logarithm and at most
/// ~0.002 above it. With `1 + x = 2^e · m`, `m ∈ [1, 2)`, and `a` the
/// start of `m`'s sixteenth of `[1, 2)`: `ln(1 + x) = e · ln 2 + ln m`,
/// and `ln m ≤ ln a + (m − a) / a` (the tangent at `a` of the concave
/// logarithm; the gap is at most `(1/16)² / 2`). The margin covers the
/// rounding of `1 + x` and of the sum (below 1e-13 for any `e`).
fn ln_1p_at_most(x: f64) -> Option<f64> {
    // `a = 1 + j/16`, `ln a` and `1 / a`.
    static TABLE: std::sync::OnceLock<[(f64, f64, f64); 16]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        std::array::from_fn(|j| {
            let a = 1.0 + j as f64 / 16.0;
            (a, a.ln(), 1.0 / a)
        })
    });
    let y = 1.0 + x;
    if x.is_nan() || x < 0.0 || !y.is_finite() {
        return None;
    }
    let bits = y.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let j = ((bits >> 48) & 0xf) as usize;
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let (a, ln_a, inv_a) = table[j];
    Some(e as f64 * std::f64::consts::LN_2 + ln_a + (m - a) * inv_a + 1e-12)
}

/// Whether a document with this key could still enter a full heap whose
/// worst match is `worst`: complete or not (as best it can be), its score
/// bound, its docID.
fn may_pass(worst: &Match, complete: bool, bound: f64) -> bool {
    match complete.cmp(&worst.complete) {
        Ordering::Greater => true,
        Ordering::Less => false,
        // Ties by docID are left to the exact comparison.
        Ordering::Equal => bound * (1.0 + SLACK) + SLACK >= worst.score,
    }
}

/// Retrieves the best `keep` matches of `query` (see the module docs).
pub fn retrieve(s: &Searcher, query: &Query, keep: usize) -> Result<Retrieved> {
    retrieve_with(s, query, &[], keep)
}

/// [`retrieve`] with some of the query's words already looked up
/// (`known`, from [`Searcher::terms`]): `Searcher::search` has them, and
/// looking them up again was ~1.5% of a one-word query's instructions.
pub(super) fn retrieve_with(
    s: &Searcher,
    query: &Query,
    known: &[Term],
    keep: usize,
) -> Result<Retrieved> {
    let slots = slots(s, &query.expr, known)?;
    let mut sites: Vec<(String, Vec<Range<u32>>)> = Vec::new();
    let mut site_err = None;
    query.expr.visit_sites(&mut |h| {
        if !sites.iter().any(|(x, _)| x == h) {
            match s.site_ranges(h) {
                Ok(r) => sites.push((h.to_string(), r)),
                Err(e) => site_err = Some(e),
            }
        }
    });
    if let Some(e) = site_err {
        return Err(e);
    }
    let ev = Eval {
        slots: &slots,
        sites: &sites,
    };
    let hard = hard_items(&query.expr);
    // What a complete match must satisfy (a question's function words
    // optional under `--match any`).
    let need = query.required(|w| s.is_question_stopword(w));
    let need: &Node = &need;
    let slot_of = |w: &str| ev.slot(w);
    // When it is plain words only (the common case), the slots it needs:
    // completeness is then their presence, with no string compared.
    let need_words: Option<Vec<usize>> = match need {
        Node::All(ns) => ns
            .iter()
            .map(|n| match n {
                Node::Word(w) => Some(slot_of(w)),
                _ => None,
            })
            .collect(),
        _ => None,
    };
    let need_words = need_words.as_deref();
    let need_slots = Need::of(need, &slot_of);
    let barrels: Vec<Option<Arc<Barrel>>> = slots
        .iter()
        .map(|sl| sl.term.as_ref().map(|t| s.barrel(t.barrel)).transpose())
        .collect::<Result<_>>()?;
    let mut cursors: Vec<Option<DoclistCursor<'_>>> = slots
        .iter()
        .zip(&barrels)
        .map(|(sl, b)| match (&sl.term, b) {
            (Some(t), Some(b)) => b.doclist(t.id, t.info.full, t.info.docs).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let scored = scored_in_query_order(&slots, query);
    let keep = keep.max(1);
    let bounds = Bounds::new(s, query, &slots, &scored, &barrels)?;

    if let (Some(b), true) = (&bounds, words::applies(query, &slots, bounds.is_some())) {
        // The common case, on its own loop (the same results as the
        // generic one below; exact totals).
        let mut heads: Vec<Option<u32>> = vec![None; slots.len()];
        let (out, heap, seen) = words::one_word(
            s,
            query,
            keep.max(1),
            b,
            &slots[0],
            &mut cursors,
            &mut heads,
        )?;
        return Ok(finish(
            s,
            query,
            need,
            &slots,
            &[0],
            &heads,
            &cursors,
            true,
            out,
            heap,
            seen,
        ));
    }

    // What the other loops score with (the one-word loop needs none of it:
    // the proximity bound alone is ~1% of its instructions).
    let mut scorer = DocScorer::new(s, query);
    let own_loop = words::own_loop(
        query,
        &slots,
        &scored,
        cursors.iter().all(Option::is_some),
        bounds.is_some(),
    );
    let phrase_order = own_loop
        .then(|| phrase::applies(query, need, &slots, &scored))
        .flatten();
    if let (Some(b), true) = (
        &bounds,
        phrase_order.is_some() || (own_loop && words::applies_plain(query, need)),
    ) {
        // Two or three plain words, or one phrase of them, on their own
        // loops (the same results as the generic one below; a phrase's
        // work and totals too).
        let mut heads: Vec<Option<u32>> = vec![None; slots.len()];
        for &i in &scored {
            if let Some(c) = &mut cursors[i] {
                heads[i] = c.next()?;
            }
        }
        let (out, heap, seen) = match &phrase_order {
            Some(order) => phrase::phrase(
                s,
                query,
                keep,
                words::Walk::new(s, query, b, &need_slots, &slots, &scored)?,
                &order[..scored.len()],
                &mut scorer,
                &mut cursors,
                &mut heads,
            )?,
            None => words::plain(
                s,
                query,
                keep,
                b,
                &need_slots,
                &slots,
                &scored,
                &mut scorer,
                &mut cursors,
                &mut heads,
            )?,
        };
        return Ok(finish(
            s, query, need, &slots, &scored, &heads, &cursors, true, out, heap, seen,
        ));
    }

    generic(
        s,
        query,
        keep,
        &ev,
        &hard,
        need,
        need_words,
        &need_slots,
        cursors,
        &scored,
        bounds.as_ref(),
        scorer,
    )
}

/// Any other query (phrases, exclusions, `site:`, groups, OR of groups,
/// the paper's ranking): the generic loop, which pays for every candidate
/// for what any query might need. Apart from [`retrieve_with`], which then
/// only chooses the loop, and never inlined there (its one caller), so
/// that a change to it leaves the dedicated loops' code where it was (out
/// of line it costs them nothing: callgrind, the bench's AND and OR).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn generic(
    s: &Searcher,
    query: &Query,
    keep: usize,
    ev: &Eval<'_>,
    hard: &[&Node],
    need: &Node,
    need_words: Option<&[usize]>,
    need_slots: &Need,
    mut cursors: Vec<Option<DoclistCursor<'_>>>,
    scored: &[usize],
    bounds: Option<&Bounds<'_>>,
    mut scorer: DocScorer<'_>,
) -> Result<Retrieved> {
    let slots = ev.slots;
    let sites = ev.sites;
    let mut out = Retrieved::default();
    let mut heap: BinaryHeap<Ranked> = BinaryHeap::new();
    let mut pagerank = s.pageranks()?;
    let slot_idf: Vec<f64> = slots
        .iter()
        .map(|sl| scorer.stats.idf(sl.term.as_ref().map_or(0, |t| t.df)))
        .collect();
    let phrases = has_phrase(&query.expr);
    // When every phrase holds every scored word (a phrase alone, the
    // common case), a phrase can stand only in a field where each of them
    // has hits, the fields the proximity match reads ([`ProximityPlan`]):
    // a document's hits are then read once as that match reads them, for
    // the phrase check and the score alike (no capitalization, no other
    // field, the order known from the decoder). Read whole and checked for
    // order twice, they were half a phrase query's instructions.
    // (Without a scored word the plan reads nothing: an excluded
    // phrase's hits are then read whole.)
    let planned = query.ranking != Ranking::Paper
        && phrases
        && !scored.is_empty()
        && phrases_hold(&query.expr, &|ws: &[String]| {
            scored.iter().all(|&i| ws.contains(&slots[i].word))
        });
    let mut plan_words: Vec<usize> = Vec::with_capacity(scored.len());
    let mut plan_classes: Vec<HitClasses> = Vec::with_capacity(scored.len());
    let mut led = vec![0usize; slots.len()];
    // Candidates: the union of the scored words' doclists, or the sites'
    // docs when no scored word has one.
    let candidate_cursors: Vec<usize> = scored
        .iter()
        .copied()
        .filter(|&i| cursors[i].is_some())
        .collect();
    let mut heads: Vec<Option<u32>> = vec![None; slots.len()];
    for &i in &candidate_cursors {
        if let Some(c) = &mut cursors[i] {
            heads[i] = c.next()?;
        }
    }
    // The essential words (MaxScore): candidates come from their doclists.
    let mut essential: Vec<bool> = vec![false; slots.len()];
    for &i in &candidate_cursors {
        essential[i] = true;
    }
    // Per slot: its cursor drives the candidates (looked up per cursor and
    // candidate, so not searched for in `candidate_cursors`).
    let is_candidate = essential.clone();
    // Whether the essential words may change: after the heap's worst does.
    let mut bar_moved = bounds.is_some();
    let must_complete_always = query.matching == Matching::All;
    let mut block_max = bounds.as_ref().map(|b| {
        BlockMax::new(
            b,
            need_slots,
            scored,
            &candidate_cursors,
            must_complete_always,
            slots.len(),
        )
    });
    // Ranges of several sites may overlap (a domain and its subdomain):
    // merged, so each doc comes once, in increasing order.
    let mut top_sites: Vec<Range<u32>> = if candidate_cursors.is_empty() && scored.is_empty() {
        hard.iter()
            .filter_map(|n| match n {
                Node::Site(h) => sites.iter().find(|(x, _)| x == h),
                _ => None,
            })
            .flat_map(|(_, rs)| rs.iter().cloned())
            .collect()
    } else {
        Vec::new()
    };
    top_sites.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<u32>> = Vec::new();
    for r in top_sites {
        match merged.last_mut() {
            Some(l) if r.start <= l.end => l.end = l.end.max(r.end),
            _ => merged.push(r),
        }
    }
    let by_site = !merged.is_empty();
    let mut present = vec![false; slots.len()];
    let mut hit_bufs: Vec<Vec<Hit>> = vec![Vec::new(); slots.len()];
    let mut read = vec![false; slots.len()];
    let mut phrase_bufs = PhraseBufs::default();
    let mut site_docs = merged.into_iter().flatten();
    let mut evaluated = 0u64;
    let mut wd: Vec<WordInDoc<'_>> = Vec::with_capacity(scored.len());
    // The candidate words' postings of the documents evaluated, and those
    // evaluated without deciding whether they match (totals' bounds).
    let mut postings_seen = 0u64;
    let mut undecided = 0u64;
    let mut scored_docs = 0usize;
    // (word, plain hits, fancy hits) of a candidate's present words, for
    // its cheap bound.
    // Per slot: the candidate's hits per class, read with the plain and
    // fancy totals for the cheap bound and kept for the exact text score
    // (valid for the present scored words once `factor` is set).
    let mut classes: Vec<HitClasses> = vec![[0; postings::CLASSES]; slots.len()];
    // Per slot: its cursor's decoded postings when its block's count
    // columns were last decoded ([`column_classes`]).
    let mut counted_at = vec![u64::MAX; slots.len()];
    loop {
        if let (Some(b), true) = (&bounds, bar_moved) {
            bar_moved = false;
            let worst = if heap.len() >= keep {
                heap.peek().map(|r| &r.0)
            } else {
                None
            };
            choose_essential(
                b,
                need_slots,
                &candidate_cursors,
                slots,
                worst,
                must_complete_always,
                &mut essential,
            );
        }
        let doc = if by_site {
            match site_docs.next() {
                Some(d) => d,
                None => break,
            }
        } else {
            match candidate_cursors
                .iter()
                .filter(|&&i| essential[i])
                .filter_map(|&i| heads[i])
                .min()
            {
                Some(d) => d,
                None => break,
            }
        };
        // Block-max: can any document from `doc` on enter, by the bounds of
        // the postings blocks the words' cursors would stop in? If not,
        // the essential cursors skip to where one might.
        if let (Some(bm), false) = (&mut block_max, by_site) {
            let worst = (heap.len() >= keep)
                .then(|| heap.peek().map(|r| r.0))
                .flatten();
            if bm.skip(
                &mut cursors,
                &mut heads,
                &essential,
                worst.as_ref(),
                doc,
                &mut out.work,
            )? {
                out.estimated = true;
                continue;
            }
        }
        if past_deadline(query, evaluated) {
            out.timed_out = true;
            break;
        }
        evaluated += 1;
        out.work.candidates += 1;
        // Every slot with a cursor is set below; the others stay absent.
        for (i, c) in cursors.iter_mut().enumerate() {
            let Some(c) = c else { continue };
            let at = if is_candidate[i] {
                if heads[i].is_some_and(|h| h < doc) {
                    // A non-essential word's documents before `doc` were
                    // skipped unseen.
                    out.estimated = true;
                    heads[i] = c.seek(doc)?;
                }
                heads[i]
            } else {
                c.seek(doc)?
            };
            present[i] = at == Some(doc);
        }
        postings_seen += candidate_cursors.iter().filter(|&&i| present[i]).count() as u64;
        // Before any hit list is read: can this document still enter?
        let mut pr = None;
        let mut lens = None;
        let mut factor: Option<f64> = None;
        // The document's bound, once worked out: its exact text score with
        // the proximity bonus at its bound (`DocScorer::bound`), and that
        // text score.
        let mut bounded: Option<(f64, bm25::TextPart)> = None;
        let mut hopeless = false;
        // It cannot match at all: a miss, decided without a hit list.
        let mut impossible = false;
        // The scored words' `classes` are this document's.
        let mut counted = false;
        if let Some(b) = &bounds {
            let worst = if heap.len() >= keep {
                heap.peek().map(|r| &r.0)
            } else {
                None
            };
            let has = |i: usize| present.get(i).copied().unwrap_or(false);
            let may_complete = match need_words {
                Some(ws) => ws.iter().all(|&i| has(i)),
                None => possible(need_slots, &has),
            };
            if must_complete_always && !may_complete {
                hopeless = true;
                impossible = true;
            } else if let Some(worst) = worst {
                if may_pass(worst, may_complete, f64::INFINITY) {
                    lens = s.field_lengths(doc)?;
                    // First a bound from the count columns (each word's
                    // exact text score within rounding, the proximity
                    // bonus at its limit): most candidates stop here,
                    // first with the largest PageRank factor of the docIDs
                    // around (worked out once per `RankBounds::CHUNK` of
                    // them), so their own PageRank is not looked up.
                    for &i in scored {
                        if present[i] {
                            if let Some(c) = &mut cursors[i] {
                                column_classes(c, &mut counted_at[i], &mut classes[i])?;
                            }
                        }
                    }
                    counted = true;
                    let sum = b.of_words(
                        scored
                            .iter()
                            .filter(|&&i| present[i] && cursors[i].is_some())
                            .map(|&i| (i, &classes[i])),
                        lens.as_ref(),
                    );
                    let around = b.chunk_factor(doc);
                    if !may_pass(worst, may_complete, sum * around) {
                        hopeless = true;
                    } else {
                        pr = match &mut pagerank {
                            Some(f) => Some(f.get(doc)?),
                            None => None,
                        };
                        // Its own factor, first bounded without a logarithm.
                        if !may_pass(worst, may_complete, sum * b.factor_at_most(pr)) {
                            hopeless = true;
                        } else {
                            let f = b.factor_of(pr);
                            factor = Some(f);
                            if !may_pass(worst, may_complete, sum * f) {
                                hopeless = true;
                            }
                        }
                    }
                }
                if !hopeless && factor.is_some() {
                    let f = factor.unwrap_or(1.0);
                    // The exact text score, from the words' count columns
                    // (no hit read), with the proximity bonus at its bound.
                    wd.clear();
                    for &i in scored {
                        let counts = match &cursors[i] {
                            Some(_) if present[i] => type_counts(&classes[i]),
                            _ => [0; HIT_TYPES],
                        };
                        wd.push(WordInDoc {
                            word: slots[i].word.as_str(),
                            df: slots[i].term.as_ref().map_or(0, |t| t.df),
                            idf: slot_idf[i],
                            counts,
                        });
                    }
                    let text = scorer.text(&wd, lens.as_ref());
                    match scorer.bound_passing(&wd, &text, f, worst, may_complete) {
                        Some(bound) => bounded = Some((bound, text)),
                        None => hopeless = true,
                    }
                } else {
                    // Not even at the largest score, or not by the cheap bound.
                    hopeless = true;
                }
            }
        }
        // The proximity match's plan, when its hits are read as it says.
        let mut plan = None;
        if planned && !impossible && !hopeless {
            plan_words.clear();
            plan_classes.clear();
            for &i in scored {
                let Some(c) = cursors[i].as_mut().filter(|_| present[i]) else {
                    continue;
                };
                if !counted {
                    classes[i] = c.classes()?;
                }
                if classes[i].iter().any(|&x| x > 0) {
                    plan_words.push(i);
                    plan_classes.push(classes[i]);
                }
            }
            plan = Some(ProximityPlan::of(&plan_classes));
        }
        read.fill(false);
        let mut d = DocWords {
            doc,
            cursors: &mut cursors,
            present: &present,
            hits: &mut hit_bufs,
            read: &mut read,
            led: &mut led,
            read_as: plan.map(|p| p.read),
            hits_read: 0,
            phrase: &mut phrase_bufs,
        };
        if impossible {
            // Every match must be complete, and it lacks a word.
        } else if hopeless && phrases {
            // Whether it matches at all would take its hit lists.
            out.estimated = true;
            undecided += 1;
        } else {
            let complete = match need_words {
                Some(ws) => ws.iter().all(|&i| present.get(i).copied().unwrap_or(false)),
                None => ev.holds(need, &mut d)?,
            };
            let keep_it = complete
                || (query.matching == Matching::Any && {
                    let mut ok = true;
                    for n in hard {
                        if !ev.holds(n, &mut d)? {
                            ok = false;
                            break;
                        }
                    }
                    ok
                });
            if keep_it {
                out.total += 1;
                out.complete += u64::from(complete);
            }
            if keep_it && !hopeless {
                if scored_docs >= query.cutoff.max(1) {
                    out.cut_off = true;
                    out.estimated = true;
                    break;
                }
                scored_docs += 1;
                'scored: {
                    // Each word's hits per type, from the postings blocks'
                    // count columns (positions are decoded only when the
                    // proximity match needs them); already taken for the bound.
                    if bounded.is_none() {
                        wd.clear();
                        for &i in scored {
                            wd.push(WordInDoc {
                                word: slots[i].word.as_str(),
                                df: slots[i].term.as_ref().map_or(0, |t| t.df),
                                idf: slot_idf[i],
                                counts: d.counts(i)?,
                            });
                        }
                    }
                    if bounds.is_none() || lens.is_none() {
                        lens = s.field_lengths(doc)?;
                    }
                    if pr.is_none() {
                        pr = match &mut pagerank {
                            Some(f) => Some(f.get(doc)?),
                            None => None,
                        };
                    }
                    let pr_factor = (
                        pr,
                        match factor {
                            Some(f) => f,
                            None => bm25::pagerank_factor(&query.bm25, scorer.stats.docs, pr),
                        },
                    );
                    let placed = scorer.places(&wd);
                    // The exact text score with proximity at its limit: if even
                    // that cannot enter, the hits need not be placed.
                    let text = match (&bounded, placed) {
                        (Some((_, t)), _) => Some(*t),
                        (None, true) if query.ranking != Ranking::Paper => {
                            Some(scorer.text(&wd, lens.as_ref()))
                        }
                        (None, _) => None,
                    };
                    if let (true, true, Some(text)) = (placed, bounds.is_some(), &text) {
                        if let Some(worst) = (heap.len() >= keep).then(|| heap.peek()).flatten() {
                            let bound = match bounded {
                                Some((b, _)) => b,
                                None => scorer.bound(&wd, text, pr_factor.1),
                            };
                            if !may_pass(&worst.0, complete, bound) {
                                // Its hit lists, if any were read, are counted below.
                                break 'scored;
                            }
                        }
                    }
                    let (ir, score) = if placed && query.ranking == Ranking::Paper {
                        for &i in scored {
                            d.hits(i)?;
                        }
                        let words: Vec<(&str, u32, &[Hit])> = scored
                            .iter()
                            .zip(&wd)
                            .map(|(&i, w)| (w.word, w.df, d.hits[i].as_slice()))
                            .collect();
                        let (ir, score, _) = scorer.score(&words, lens.as_ref(), pr, false);
                        (ir, score)
                    } else if let (true, Some(text), Some(plan)) = (placed, &text, &plan) {
                        // The present words' hits, as the plan reads them.
                        for &i in &plan_words {
                            d.hits(i)?;
                        }
                        scorer.score_placed(
                            &wd,
                            plan_words.iter().map(|&i| (d.hits[i].as_slice(), d.led[i])),
                            text,
                            pr_factor,
                            Some(plan),
                        )
                    } else if let (true, Some(text)) = (placed, &text) {
                        for &i in scored {
                            d.hits(i)?;
                        }
                        scorer.score_placed(
                            &wd,
                            scored.iter().map(|&i| (d.hits[i].as_slice(), 0)),
                            text,
                            pr_factor,
                            None,
                        )
                    } else if let Some((score, _)) = bounded {
                        // Without placing, the bound is the score: the text
                        // score with no proximity bonus (`score_counts`).
                        (score, score)
                    } else {
                        scorer.score_counts(&wd, lens.as_ref(), pr_factor)
                    };
                    let m = Match {
                        doc,
                        ir,
                        pagerank: pr,
                        score,
                        complete,
                    };
                    if offer(&mut heap, keep, m, &mut out.work) {
                        bar_moved = heap.len() >= keep;
                        if let Some(bm) = &mut block_max {
                            bm.heap_changed();
                        }
                    }
                }
            }
        }
        out.work.placed += u64::from(d.read.iter().any(|&r| r));
        out.work.hits += d.hits_read;
        advance(&candidate_cursors, &mut cursors, &mut heads, doc)?;
    }
    let seen = Seen {
        matches: out.total,
        complete: out.complete,
        evaluated,
        undecided,
        postings: postings_seen,
    };
    Ok(finish(
        s,
        query,
        need,
        slots,
        &candidate_cursors,
        &heads,
        &cursors,
        hard.is_empty(),
        out,
        heap,
        seen,
    ))
}

/// The end of an evaluation: the totals (estimated when documents were
/// skipped), the work, and the matches kept, best first.
#[allow(clippy::too_many_arguments)]
fn finish(
    s: &Searcher,
    query: &Query,
    need: &Node,
    slots: &[Slot],
    candidate_cursors: &[usize],
    heads: &[Option<u32>],
    cursors: &[Option<DoclistCursor<'_>>],
    no_hard: bool,
    mut out: Retrieved,
    heap: BinaryHeap<Ranked>,
    seen: Seen,
) -> Retrieved {
    if !out.timed_out && !out.cut_off && candidate_cursors.iter().any(|&i| heads[i].is_some()) {
        // Non-essential words' documents after the last candidate.
        out.estimated = true;
    }
    out.total_bounds = (out.total, out.total);
    out.complete_bounds = (out.complete, out.complete);
    if out.estimated {
        let est = estimate_totals(s, query, need, slots, candidate_cursors, no_hard, seen);
        (out.total, out.total_bounds) = est[0];
        (out.complete, out.complete_bounds) = est[1];
    }
    out.work.postings = cursors.iter().flatten().map(|c| c.postings_decoded()).sum();
    out.work.matches = out.total;
    out.matches = heap.into_iter().map(|r| r.0).collect();
    out.matches.sort_by(best_first);
    out
}

/// What an evaluation saw of its candidates.
struct Seen {
    /// Matches found.
    matches: u64,
    /// Complete matches found.
    complete: u64,
    /// Candidates evaluated.
    evaluated: u64,
    /// Of them, those left undecided (a phrase not checked).
    undecided: u64,
    /// The candidate words' postings of the evaluated documents.
    postings: u64,
}

/// The totals of an evaluation that skipped documents: per total (all
/// matches, complete ones) an estimate within bounds that hold whatever
/// the skipped documents were.
///
/// * **Least**: the matches seen; under `--match any` without exclusions
///   or `site:` every document of a scored word matches, so also its
///   largest document frequency.
/// * **Most**: the matches seen, the undecided, and every candidate not
///   looked at: each holds at least one of the candidate words' postings
///   the evaluated documents did not, and at most the documents with any
///   text ([`Searcher::text_docs`]) are candidates; a complete match holds
///   every word [`Query::required`] names outside a group, so at most the
///   smallest of their document frequencies.
/// * **Estimate**: the candidates not looked at are the postings left
///   over divided by the mean postings of an evaluated candidate, and
///   match in the share the decided ones did (those evaluated, less the
///   undecided); held within the bounds.
fn estimate_totals(
    s: &Searcher,
    query: &Query,
    need: &Node,
    slots: &[Slot],
    candidates: &[usize],
    no_hard: bool,
    seen: Seen,
) -> [(u64, (u64, u64)); 2] {
    let df = |i: usize| slots[i].term.as_ref().map_or(0, |t| u64::from(t.info.docs));
    let sum_df: u64 = candidates.iter().map(|&i| df(i)).sum();
    let max_df = candidates.iter().map(|&i| df(i)).max().unwrap_or(0);
    let left = sum_df.saturating_sub(seen.postings);
    // A query of sites: its candidates are the sites' documents.
    let unseen = if candidates.is_empty() {
        s.doc_count().saturating_sub(seen.evaluated)
    } else {
        left.min(s.text_docs().saturating_sub(seen.evaluated))
    };
    // The words a complete match must hold (those outside a group, a
    // phrase's included): at most the fewest documents of one of them.
    let mut must: Option<u64> = None;
    let mut must_hold = |w: &String| {
        let d = slots
            .iter()
            .find(|x| &x.word == w)
            .and_then(|x| x.term.as_ref())
            .map_or(0, |t| u64::from(t.info.docs));
        must = Some(must.map_or(d, |m| m.min(d)));
    };
    let required = match need {
        Node::All(items) => items.as_slice(),
        one => std::slice::from_ref(one),
    };
    for it in required {
        match it {
            Node::Word(w) => must_hold(w),
            Node::Phrase(ws) => ws.iter().for_each(&mut must_hold),
            _ => {}
        }
    }
    let mut least = seen.matches;
    if query.matching == Matching::Any && no_hard {
        least = least.max(max_df);
    }
    let open = seen.undecided + unseen;
    let mut most = (seen.matches + open).max(least);
    let complete_most = must
        .map_or(most, |m| m.min(most))
        .min(seen.complete + open)
        .max(seen.complete);
    if query.matching == Matching::All {
        most = most.min(complete_most).max(least);
    }
    let per_doc = if seen.evaluated > 0 && seen.postings > 0 {
        seen.postings as f64 / seen.evaluated as f64
    } else {
        1.0
    };
    let unseen_est = (left as f64 / per_doc).min(unseen as f64);
    // The share of the decided candidates that matched (an undecided one
    // is neither a match nor a miss).
    let decided = seen.evaluated.saturating_sub(seen.undecided);
    let share = |x: u64| {
        if decided == 0 {
            1.0
        } else {
            x as f64 / decided as f64
        }
    };
    let scaled = |x: u64| x as f64 + share(x) * (seen.undecided as f64 + unseen_est);
    let total = (scaled(seen.matches).round() as u64).clamp(least, most);
    let complete_least = seen.complete;
    let complete = (scaled(seen.complete).round() as u64)
        .clamp(complete_least, complete_most.min(most))
        .min(total);
    [
        (total, (least, most)),
        (complete, (complete_least, complete_most.min(most))),
    ]
}

/// Moves the candidate cursors standing at `doc` to their next document.
fn advance(
    candidates: &[usize],
    cursors: &mut [Option<DoclistCursor<'_>>],
    heads: &mut [Option<u32>],
    doc: u32,
) -> Result<()> {
    for &i in candidates {
        if heads[i] == Some(doc) {
            if let Some(c) = &mut cursors[i] {
                heads[i] = c.next()?;
            }
        }
    }
    Ok(())
}

/// Whether `query`'s deadline has passed, with `evaluated` candidates
/// evaluated: the clock is read before the second candidate and every
/// 1,024th after it, so a deadline already past still answers with a
/// match.
fn past_deadline(query: &Query, evaluated: u64) -> bool {
    evaluated % 1024 == 1
        && query
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
}

/// Offers a scored match to the heap of the best `keep`: whether it
/// entered (pushing out the worst when the heap was full), counted in
/// `work`.
fn offer(heap: &mut BinaryHeap<Ranked>, keep: usize, m: Match, work: &mut Work) -> bool {
    let m = Ranked(m);
    if heap.len() < keep {
        heap.push(m);
    } else {
        // The worst replaced in place, sifted down once when `worst` drops:
        // a pop and a push sifted twice (~300 instructions an entry on
        // rust-doc's one-word queries). The same matches are kept, and
        // they are sorted at the end.
        match heap.peek_mut() {
            Some(mut worst) if m.cmp(&worst) == Ordering::Less => *worst = m,
            _ => return false,
        }
    }
    work.entered += 1;
    true
}

/// Block-max between candidates: what it works with (the query's bounds,
/// what a complete match needs, the scored words and those whose cursors
/// make candidates) and what it knows — the docID up to which the
/// postings blocks' bounds were last found to let a document in, and the
/// heap's version then (`epoch`, counting its changes): until either
/// moves they are not looked at again. Each evaluation loop has one.
struct BlockMax<'q, 's> {
    b: &'q Bounds<'s>,
    need: &'q Need,
    scored: &'q [usize],
    candidates: &'q [usize],
    must_complete_always: bool,
    /// Per slot: its word may be in the blocks looked at ([`block_skip`]'s
    /// scratch).
    can: Vec<bool>,
    /// [`possible`] of `need` per set of slots, when they are few enough
    /// ([`possible_sets`]).
    possible: Option<PossibleSets>,
    epoch: u64,
    may_enter_until: Option<(u64, u64)>,
    /// With one scored word: what the last look at its postings block
    /// found, kept across changes of the heap ([`Self::lets_in`]).
    look: Option<Look>,
}

/// What [`block_skip`] found of the postings blocks at its docID `t`,
/// whatever the worst match: their words' bound before PageRank, whether
/// a document in them may be a complete match, and `next`, where the
/// first of them ends — the same blocks hold every docID of `t..next`.
#[derive(Clone, Copy)]
struct Look {
    sum: f64,
    may_complete: bool,
    next: u64,
}

impl<'q, 's> BlockMax<'q, 's> {
    fn new(
        b: &'q Bounds<'s>,
        need: &'q Need,
        scored: &'q [usize],
        candidates: &'q [usize],
        must_complete_always: bool,
        slots: usize,
    ) -> Self {
        BlockMax {
            b,
            need,
            scored,
            candidates,
            must_complete_always,
            can: vec![false; slots],
            possible: (slots <= words::MAX_PLAIN).then(|| possible_sets(need, slots)),
            epoch: 0,
            may_enter_until: None,
            look: None,
        }
    }

    /// The heap changed: what the bounds were known to let in is asked
    /// again.
    fn heap_changed(&mut self) {
        self.epoch += 1;
    }

    /// Whether the bounds are known to let a document in at `doc`: the
    /// docIDs where they last did cover it and the heap has not changed
    /// since.
    #[inline(always)]
    fn known(&self, doc: u32) -> bool {
        u64::from(doc) < self.known_until()
    }

    /// The docID before which [`Self::known`] holds (0: at none): a loop
    /// walking a block's increasing docIDs finds the end of its known run
    /// once instead of asking per candidate.
    #[inline(always)]
    fn known_until(&self) -> u64 {
        match self.may_enter_until {
            Some((until, e)) if e == self.epoch => until,
            _ => 0,
        }
    }

    /// Before evaluating `doc`, with `worst` the worst match of a full
    /// heap: when no document from `doc` on can enter by the bounds of the
    /// postings blocks the words' cursors would stop in ([`block_skip`]),
    /// the essential candidates' cursors skip to where one might (their
    /// heads move) and `true` says so.
    ///
    /// Always inlined, the rest ([`Self::skip_at`]) not: the generic loop
    /// calls it for every candidate, and most return at the first test,
    /// which costs less than passing the arguments (a call per candidate
    /// was +3.9% instructions on rust-doc's multi-word queries).
    #[inline(always)]
    fn skip(
        &mut self,
        cursors: &mut [Option<DoclistCursor<'_>>],
        heads: &mut [Option<u32>],
        essential: &[bool],
        worst: Option<&Match>,
        doc: u32,
        work: &mut Work,
    ) -> Result<bool> {
        let Some(worst) = worst.filter(|_| !self.known(doc)) else {
            return Ok(false);
        };
        if self.lets_in(worst, doc) {
            return Ok(false);
        }
        self.skip_at(cursors, heads, essential, worst, doc, work)
    }

    /// With one scored word, whose cursor's document `doc` is, and `worst`
    /// the worst match of a full heap: whether block-max lets a document
    /// in at `doc` by its last look at the word's postings block, which
    /// still holds `doc` — and then, as [`block_skip`] at `doc` would, it
    /// knows so until the end of `doc`'s [`RankBounds::CHUNK`] of docIDs.
    /// `false`: not decided here ([`Self::skip_at`] looks again).
    ///
    /// [`block_skip`] at `doc` would find the same block, so the same
    /// bound before PageRank; its first test (PageRank's largest factor
    /// from `doc` to the block's end) passes when `doc`'s chunk's factor
    /// does (its largest PageRank is at least the chunk's, and the factor
    /// grows with PageRank but for the ≤0.002 steps of
    /// [`ln_1p_at_most`], where block-max may now evaluate a block's
    /// candidates that it skipped: their own bounds refuse them, so the
    /// results are the same); its walk of chunks then stops at `doc`'s.
    /// After a match entered, a one-word query's next candidate is most
    /// often in the same block and chunk: the full look cost ~550
    /// instructions, this one a table read (rust-doc's one-word queries
    /// made ~60 such looks each, a fifth of their instructions).
    #[inline(always)]
    fn lets_in(&mut self, worst: &Match, doc: u32) -> bool {
        let Some(l) = self.look.filter(|l| u64::from(doc) < l.next) else {
            return false;
        };
        if !may_pass(worst, l.may_complete, l.sum * self.b.chunk_factor(doc)) {
            return false;
        }
        let until = match self.b.ranks {
            Some(_) => {
                let chunk = RankBounds::CHUNK as u64;
                ((u64::from(doc) / chunk + 1) * chunk).min(l.next)
            }
            None => l.next,
        };
        self.may_enter_until = Some((until, self.epoch));
        true
    }

    /// [`Self::skip`] when the bounds are to be looked at: the heap is
    /// full (its worst match `worst`) and `doc` is past where they last
    /// let a document in.
    #[inline(never)]
    fn skip_at(
        &mut self,
        cursors: &mut [Option<DoclistCursor<'_>>],
        heads: &mut [Option<u32>],
        essential: &[bool],
        worst: &Match,
        doc: u32,
        work: &mut Work,
    ) -> Result<bool> {
        let mut t = doc;
        let mut end = false;
        let mut skipped = false;
        loop {
            let (skip, next, look) = block_skip(
                self.b,
                (self.need, self.possible.as_ref()),
                self.scored,
                cursors,
                heads,
                essential,
                worst,
                self.must_complete_always,
                &mut self.can,
                t,
            )?;
            if !skip {
                self.may_enter_until = Some((next, self.epoch));
                if self.scored.len() == 1 {
                    self.look = Some(look);
                }
                break;
            }
            skipped = true;
            work.block_skips += 1;
            match u32::try_from(next) {
                Ok(n) => t = n,
                Err(_) => {
                    end = true;
                    break;
                }
            }
        }
        if skipped {
            for &i in self.candidates {
                if !essential[i] || heads[i].is_none_or(|h| h >= t) {
                    continue;
                }
                heads[i] = match (&mut cursors[i], end) {
                    (Some(c), false) => c.seek(t)?,
                    _ => None,
                };
            }
        }
        Ok(skipped)
    }
}

/// Block-max: `(true, next)` when no document of docIDs `t..next` can
/// enter a full heap whose worst match is `worst` (`next` past `u32::MAX`:
/// none after `t`), `(false, next)` when one might — and then, with the
/// same worst match, one might at any docID of `t..next` (the same blocks'
/// bounds, PageRank's over a smaller range, so a bound no larger). Each scored word adds the bound of the
/// postings block its cursor would stop in for `t` (nothing when `t` falls
/// before that block or after the doclist), PageRank the largest factor of
/// the docIDs until the first block boundary, or failing that of each
/// [`RankBounds::CHUNK`] of them (`next` is then the end of the first
/// chunk that may let one in); an essential cursor already at or past `t`
/// says exactly whether its word is in `t`. With it, what was found of the
/// blocks ([`Look`]).
#[allow(clippy::too_many_arguments)]
fn block_skip(
    b: &Bounds<'_>,
    (need, sets): (&Need, Option<&PossibleSets>),
    scored: &[usize],
    cursors: &mut [Option<DoclistCursor<'_>>],
    heads: &[Option<u32>],
    essential: &[bool],
    worst: &Match,
    must_complete_always: bool,
    can: &mut [bool],
    t: u32,
) -> Result<(bool, u64, Look)> {
    let (mut sum, mut max_idf, mut n) = (0.0, 0.0f64, 0);
    let mut next = u64::MAX;
    can.fill(false);
    for &i in scored {
        let Some(c) = cursors[i].as_mut() else {
            continue;
        };
        let info = if essential[i] && heads[i].is_none_or(|h| h >= t) {
            match heads[i] {
                None => continue,
                Some(h) if h > t => {
                    next = next.min(u64::from(h));
                    continue;
                }
                Some(_) => c.shallow(t)?,
            }
        } else {
            c.shallow(t)?
        };
        let Some(info) = info else { continue };
        if t < info.first {
            next = next.min(u64::from(info.first));
            continue;
        }
        next = next.min(u64::from(info.last) + 1);
        can[i] = true;
        sum += b.of_block(i, info.bound);
        max_idf = max_idf.max(b.idf[i]);
        n += 1;
    }
    let may_complete = match sets {
        // `can` has a flag per slot.
        Some(sets) => sets[can.iter().rev().fold(0, |m, &c| m << 1 | usize::from(c))],
        None => possible(need, &|i: usize| can.get(i).copied().unwrap_or(false)),
    };
    if n > 1 {
        sum += b.weights.proximity_weight * max_idf;
    }
    let look = Look {
        sum,
        may_complete,
        next,
    };
    if must_complete_always && !may_complete {
        return Ok((true, next, look));
    }
    let last = u32::try_from(next.saturating_sub(1)).unwrap_or(u32::MAX);
    if !may_pass(worst, may_complete, sum * b.factor_in(t, last)) {
        return Ok((true, next, look));
    }
    if b.ranks.is_none() {
        return Ok((false, next, look));
    }
    // The blocks let a document in somewhere in `t..next`, PageRank's
    // largest factor over all of it perhaps not everywhere: walked a
    // `RankBounds::CHUNK` of docIDs at a time, the chunks of low PageRank
    // are skipped without a candidate's field lengths or counts being
    // read (most of a one-word query's candidates). The walk looks at most
    // `SKIP_WALK` chunks per call, so a range reaching far past the
    // collection costs no more.
    const SKIP_WALK: u64 = 64;
    let chunk = RankBounds::CHUNK as u64;
    let horizon = next.min(u64::from(t) + SKIP_WALK * chunk).min(1 << 32);
    let mut c = u64::from(t);
    while c < horizon {
        let end = ((c / chunk + 1) * chunk).min(next);
        // `c..end` lies in one chunk.
        let first = c as u32;
        if may_pass(worst, may_complete, sum * b.chunk_factor(first)) {
            return Ok(if first == t {
                (false, end, look)
            } else {
                (true, c, look)
            });
        }
        c = end;
    }
    Ok((true, c, look))
}

/// Chooses the essential words (MaxScore): the smallest total document
/// count among the sets outside which no document can pass the bar — the
/// words in increasing order of bound with the largest prefix that cannot
/// reach it left out, or (when a match must be complete) one word the query
/// cannot hold without.
#[allow(clippy::too_many_arguments)]
fn choose_essential(
    b: &Bounds,
    need: &Need,
    candidates: &[usize],
    slots: &[Slot],
    worst: Option<&Match>,
    must_complete_always: bool,
    essential: &mut [bool],
) {
    let must_complete = must_complete_always || worst.is_some_and(|w| w.complete);
    // Whether a document holding only the words `set` cannot enter (its
    // bound summed in `set`'s order). A set is an iterator, not a vector:
    // this runs at every move of the bar, and its vectors were ~1% of an
    // OR query's instructions.
    fn shut_out(
        b: &Bounds,
        need: &Need,
        worst: Option<&Match>,
        must_complete: bool,
        set: impl Iterator<Item = usize> + Clone,
    ) -> bool {
        let can = |i: usize| set.clone().any(|j| j == i);
        let may_complete = possible(need, &can);
        if must_complete && !may_complete {
            return true;
        }
        match worst {
            Some(w) => !may_pass(w, may_complete, b.of_set(set)),
            None => false,
        }
    }
    let df = |i: usize| slots[i].term.as_ref().map_or(0u64, |t| u64::from(t.df));
    // The candidates by bound, on the stack: a query has at most
    // `MAX_QUERY_WORDS` distinct words (a longer list goes to the heap).
    let mut on_stack = [0usize; super::MAX_QUERY_WORDS];
    let mut spilled = Vec::new();
    let by_bound: &mut [usize] = match on_stack.get_mut(..candidates.len()) {
        Some(s) => {
            s.copy_from_slice(candidates);
            s
        }
        None => {
            spilled.extend_from_slice(candidates);
            &mut spilled
        }
    };
    // Distinct words: the order is total, the unstable sort the stable one.
    by_bound.sort_unstable_by(|&x, &y| b.word[x].total_cmp(&b.word[y]).then(x.cmp(&y)));
    let by_bound = &*by_bound;
    let mut cut = 0;
    while cut < by_bound.len()
        && shut_out(
            b,
            need,
            worst,
            must_complete,
            by_bound[..=cut].iter().copied(),
        )
    {
        cut += 1;
    }
    // The essential words: `by_bound[cut..]`, or the one word `one`.
    let mut one = None;
    let mut best_cost: u64 = by_bound[cut..].iter().map(|&i| df(i)).sum();
    if must_complete {
        for &r in candidates {
            let rest = candidates.iter().copied().filter(move |&i| i != r);
            if df(r) < best_cost && shut_out(b, need, worst, must_complete, rest) {
                one = Some(r);
                best_cost = df(r);
            }
        }
    }
    for &i in candidates {
        essential[i] = match one {
            Some(r) => i == r,
            None => by_bound[cut..].contains(&i),
        };
    }
}

/// The explanation of match `m`'s score under `query`'s ranking (`terms`:
/// the query's words found in the lexicon, for the paper's conjunction);
/// `None` when the document lacks a word it was matched by (an index
/// changed under the searcher).
pub fn explain(
    s: &Searcher,
    terms: &[Term],
    query: &Query,
    m: &Match,
) -> Result<Option<Explanation>> {
    if query.is_paper_conjunction() {
        return Ok(super::eval::hits_of(s, terms, m.doc)?.map(|hits| {
            let mut scorer = Scorer::new();
            scorer.load(hits.iter().map(Vec::as_slice));
            let names: Vec<String> = terms.iter().map(|t| t.word.clone()).collect();
            Explanation::Paper(scorer.explain(&names, &query.weights, m.pagerank, s.doc_count()))
        }));
    }
    let slots = slots(s, &query.expr, terms)?;
    let mut lists: Vec<(&str, u32, Vec<Hit>)> = Vec::new();
    for sl in scored_in_query_order(&slots, query)
        .into_iter()
        .map(|i| &slots[i])
    {
        let mut h = Vec::new();
        let mut df = 0;
        if let Some(t) = &sl.term {
            df = t.df;
            super::eval::hits_in(s, t, m.doc, &mut h)?;
        }
        lists.push((sl.word.as_str(), df, h));
    }
    let words: Vec<(&str, u32, &[Hit])> = lists
        .iter()
        .map(|(w, df, h)| (*w, *df, h.as_slice()))
        .collect();
    let lens = s.field_lengths(m.doc)?;
    let mut scorer = DocScorer::new(s, query);
    Ok(scorer.score(&words, lens.as_ref(), m.pagerank, true).2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(super) fn bounds_for(
        w: &bm25::Bm25Weights,
        fielded: bool,
        avg_len: Option<[f64; N_FIELDS]>,
    ) -> Bounds<'static> {
        let [norm_at, norm_per, norm_one] = length_norms(w, fielded, avg_len);
        Bounds {
            blockmax: Vec::new(),
            byte: BOUND_BM25F,
            ranks: None,
            idf: Vec::new(),
            word: Vec::new(),
            factor: 1.0,
            weights: w.clone(),
            fielded,
            docs: 1000,
            norm_at,
            norm_per,
            norm_one,
            chunk_factors: None,
        }
    }

    proptest! {
        /// `Bounds::of_classes` is the exact text score of one word
        /// (`bm25::text_part`) within a relative 1e-12, for any weights,
        /// averages (some zero or unknown), lengths (some missing) and
        /// counts of every class: a bound pruning may trust, and one that
        /// lets through no document the exact score would not.
        #[test]
        fn of_classes_is_the_exact_text_score(
            fielded in any::<bool>(),
            k1 in 0.01f64..3.0,
            b in 0.0f64..=1.0,
            field_weight in proptest::array::uniform5(0.0f64..20.0),
            field_b in proptest::array::uniform5(0.0f64..=1.0),
            avg in proptest::option::of(proptest::array::uniform5(
                prop_oneof![Just(0.0f64), 0.01f64..5000.0])),
            lens in proptest::option::of(proptest::array::uniform5(
                prop_oneof![Just(0u32), 0u32..100_000])),
            classes in proptest::array::uniform8(prop_oneof![Just(0u32), 0u32..1000]),
            df in 1u32..1000,
        ) {
            let w = bm25::Bm25Weights { k1, b, field_weight, field_b, ..Default::default() };
            let mut bounds = bounds_for(&w, fielded, avg);
            let stats = CollectionStats { docs: 1000, avg_len: avg };
            bounds.idf = vec![stats.idf(df)];
            let got = bounds.of_classes(0, &classes, lens.as_ref());
            let words = [WordInDoc { word: "w", df, idf: stats.idf(df), counts: type_counts(&classes) }];
            let want = bm25::text_part(&w, fielded, &stats, &words, lens.as_ref()).total(&w, 0.0, 1.0);
            prop_assert!((got - want).abs() <= 1e-12 * want.abs().max(1e-300), "{got} against {want}");
        }

        /// `Bounds::of_words`, the bound the multi-word loops prune with,
        /// is at least the exact score before the PageRank factor
        /// (`bm25::text_part` with any proximity score) of one to three
        /// words with hits of every class — OTHER among them, which the
        /// exact score counts as body — for any weights, averages and
        /// lengths.
        #[test]
        fn of_words_bounds_the_exact_score(
            fielded in any::<bool>(),
            k1 in 0.01f64..3.0,
            b in 0.0f64..=1.0,
            field_weight in proptest::array::uniform5(0.0f64..20.0),
            field_b in proptest::array::uniform5(0.0f64..=1.0),
            proximity_weight in 0.0f64..5.0,
            proximity_k in 0.0f64..10.0,
            avg in proptest::option::of(proptest::array::uniform5(
                prop_oneof![Just(0.0f64), 0.01f64..5000.0])),
            lens in proptest::option::of(proptest::array::uniform5(
                prop_oneof![Just(0u32), 0u32..100_000])),
            words in proptest::collection::vec((
                proptest::array::uniform8(prop_oneof![Just(0u32), 0u32..1000]),
                1u32..1000,
            ), 1..=3),
            prox_raw in prop_oneof![Just(0.0f64), 0.0f64..1e6, Just(1e300)],
        ) {
            let w = bm25::Bm25Weights {
                k1, b, field_weight, field_b, proximity_weight, proximity_k, ..Default::default()
            };
            let mut bounds = bounds_for(&w, fielded, avg);
            let stats = CollectionStats { docs: 1000, avg_len: avg };
            bounds.idf = words.iter().map(|&(_, df)| stats.idf(df)).collect();
            let got = bounds.of_words(words.iter().enumerate().map(|(i, (c, _))| (i, c)), lens.as_ref());
            let wd: Vec<WordInDoc<'_>> = words
                .iter()
                .map(|(c, df)| WordInDoc { word: "w", df: *df, idf: stats.idf(*df), counts: type_counts(c) })
                .collect();
            let want = bm25::text_part(&w, fielded, &stats, &wd, lens.as_ref()).total(&w, prox_raw, 1.0);
            prop_assert!(got * (1.0 + SLACK) + SLACK >= want, "{got} below {want}");
        }

        /// `ln_1p_at_most` is never below `ln_1p` and at most 0.002 above
        /// it, over every magnitude a PageRank times a collection size takes.
        #[test]
        fn ln_1p_at_most_bounds_ln_1p(mantissa in 1.0f64..2.0, exp in -1074i32..1020) {
            let x = mantissa * 2f64.powi(exp);
            let got = ln_1p_at_most(x).expect("finite x ≥ 0 has a bound");
            prop_assert!(got >= x.ln_1p(), "{x}: {got} below {}", x.ln_1p());
            prop_assert!(got <= x.ln_1p() + 0.002, "{x}: {got} far above {}", x.ln_1p());
        }
    }

    /// A document whose only hits are of class OTHER (counted as body by
    /// the exact score): a bound from the plain and fancy totals gave it
    /// 0 under BM25 and weighed it as a hit of its best fancy field under
    /// BM25F.
    #[test]
    fn of_words_counts_other_hits_as_body() {
        let mut classes = [0u32; postings::CLASSES];
        classes[postings::OTHER] = 3;
        for fielded in [false, true] {
            let w = bm25::Bm25Weights {
                field_weight: [0.5, 0.5, 0.5, 1.0, 4.0],
                ..Default::default()
            };
            let avg = Some([4.0, 20.0, 6.0, 10.0, 300.0]);
            let lens = [2, 0, 5, 0, 100];
            let mut bounds = bounds_for(&w, fielded, avg);
            let stats = CollectionStats {
                docs: 1000,
                avg_len: avg,
            };
            bounds.idf = vec![stats.idf(7), stats.idf(40)];
            let mut plain = [0u32; postings::CLASSES];
            plain[postings::PLAIN] = 1;
            let both = [(0, &classes), (1, &plain)];
            let got = bounds.of_words(both.iter().copied(), Some(&lens));
            let wd = [
                WordInDoc {
                    word: "a",
                    df: 7,
                    idf: stats.idf(7),
                    counts: type_counts(&classes),
                },
                WordInDoc {
                    word: "b",
                    df: 40,
                    idf: stats.idf(40),
                    counts: type_counts(&plain),
                },
            ];
            let want = bm25::text_part(&w, fielded, &stats, &wd[..1], Some(&lens));
            assert!(want.text > 0.0, "fielded {fielded}");
            // Alone: the exact text score within rounding.
            let alone = bounds.of_words(both[..1].iter().copied(), Some(&lens));
            assert!(
                (alone - want.text).abs() <= 1e-12 * want.text,
                "{alone} {}",
                want.text
            );
            // With a second word, at least any score with proximity.
            let want = bm25::text_part(&w, fielded, &stats, &wd, Some(&lens)).total(&w, 1e300, 1.0);
            assert!(
                got * (1.0 + SLACK) + SLACK >= want,
                "fielded {fielded}: {got} below {want}"
            );
        }
    }

    /// The edges: 0, the sixteenths' boundaries (where the tangent touches)
    /// and what has no finite logarithm.
    #[test]
    fn ln_1p_at_most_edges() {
        for j in 0..=64 {
            let x = j as f64 / 16.0;
            for x in [
                x,
                f64::from_bits(x.to_bits().saturating_sub(1)),
                f64::from_bits(x.to_bits() + 1),
            ] {
                let got = ln_1p_at_most(x).unwrap();
                assert!(got >= x.ln_1p() && got <= x.ln_1p() + 0.002, "{x}: {got}");
            }
        }
        assert_eq!(ln_1p_at_most(-1e-300), None);
        assert_eq!(ln_1p_at_most(f64::NAN), None);
        assert_eq!(ln_1p_at_most(f64::INFINITY), None);
        assert!(ln_1p_at_most(1e300).unwrap() >= 1e300f64.ln_1p());
    }
}

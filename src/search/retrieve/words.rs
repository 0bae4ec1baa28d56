//! The common case's own loop: a query of one plain word (no phrase,
//! exclusion, `site:` or group) under a ranking pruning can bound (BM25 or
//! BM25F with [`Bounds`]).
//!
//! The generic loop of [`super::retrieve`] pays, for every candidate, for
//! what any query might need: a cursor per slot moved to the candidate,
//! the essential words' heads searched for the smallest, the query's tree
//! asked whether the document is complete, the scorer's word list built,
//! hit buffers reset. Measured with callgrind on rust-doc, a one-word
//! query's candidate cost ~1,230 instructions, most of them that
//! machinery: a one-word query has one cursor, every candidate holds the
//! word (so it is a complete match), and its exact score needs no hit —
//! it is the text score from the count columns times the PageRank factor.
//!
//! Here the word's postings blocks are walked a block at a time: the
//! block's docIDs and count columns as plain arrays, each candidate's
//! counts read from them, its bound and (for the few that pass) its exact
//! score worked out from them. Everything that decides what is evaluated
//! is the generic loop's, in the same order — the essential word (the
//! word's largest score against the bar), block-max skips
//! ([`super::skip_blocks`]), the deadline's clock every 1,024th candidate,
//! the safety valve — and the scores are the same functions'
//! ([`bm25::text_part`], [`Bounds::factor_of`]), so the top k, their score
//! bits, the totals and the work counters are the generic loop's; a
//! property test (`tests/query.rs`) compares the two on random queries.

use std::collections::BinaryHeap;

use super::{
    bounds_known, may_pass, offer, past_deadline, skip_blocks, type_counts, Bounds, ChunkFactor,
    Need, Ranked, Retrieved, Seen, Slot,
};
use crate::error::Result;
use crate::index::postings::{self, HitClasses};
use crate::index::DoclistCursor;
use crate::search::bm25::{self, CollectionStats, WordInDoc};
use crate::search::eval::{Match, Sources};
use crate::search::query::{Matching, Query, Ranking};
use crate::search::Searcher;

/// Whether [`one_word`] evaluates `query`: one word, scored, with a
/// doclist, its ranking bounded, nothing else asked (no phrase, exclusion
/// or `site:`, which need the generic loop's tree), and the dedicated
/// paths not turned off ([`Query::fast_path`]).
pub(super) fn applies(query: &Query, slots: &[Slot], bounded: bool) -> bool {
    use crate::search::query::Node;
    query.fast_path
        && bounded
        && matches!(query.ranking, Ranking::Bm25 | Ranking::Bm25f)
        && slots.len() == 1
        && slots[0].scored
        && slots[0].term.is_some()
        && matches!(&query.expr, Node::All(ns) if matches!(ns.as_slice(), [Node::Word(_)]))
}

/// Evaluates a one-word query ([`applies`]) whose cursor is `cursors[0]`,
/// standing at `heads[0]` (its first document): the matches kept, what
/// [`super::finish`] needs of the evaluation, and the cursors and heads
/// where the evaluation left them.
#[allow(clippy::too_many_arguments)]
pub(super) fn one_word(
    s: &Searcher,
    query: &Query,
    keep: usize,
    b: &Bounds<'_>,
    need: &Need,
    slot: &Slot,
    cursors: &mut [Option<DoclistCursor<'_>>],
    heads: &mut [Option<u32>],
) -> Result<(Retrieved, BinaryHeap<Ranked>, Seen)> {
    let mut out = Retrieved::default();
    let mut heap: BinaryHeap<Ranked> = BinaryHeap::new();
    let stats = CollectionStats {
        docs: s.doc_count(),
        avg_len: s.average_field_lengths(),
    };
    let df = slot.term.as_ref().map_or(0, |t| t.df);
    let idf = stats.idf(df);
    let fielded = query.ranking == Ranking::Bm25f;
    let mut pagerank = s.pagerank()?;
    let must_complete_always = query.matching == Matching::All;
    let cutoff = query.cutoff.max(1);
    // The generic loop's state, for one word.
    let mut essential = true;
    let mut bar_moved = true;
    let mut epoch = 0u64;
    let mut may_enter_until: Option<(u64, u64)> = None;
    let mut can = [false];
    let (mut evaluated, mut scored_docs) = (0u64, 0usize);
    let mut chunk_factor = ChunkFactor::default();
    'walk: loop {
        if bar_moved {
            bar_moved = false;
            // `choose_essential` of one word that every match holds: it
            // stays essential unless even its largest score cannot pass
            // the bar, and then no document can enter.
            if heap.len() >= keep {
                if let Some(worst) = heap.peek() {
                    essential = may_pass(&worst.0, true, b.of_set(std::iter::once(0)));
                }
            }
        }
        if !essential {
            break;
        }
        let Some(doc) = heads[0] else { break };
        // Block-max, as the generic loop does it.
        let worst = (heap.len() >= keep)
            .then(|| heap.peek().map(|r| r.0))
            .flatten();
        if skip_blocks(
            b,
            need,
            &[0],
            &[0],
            cursors,
            heads,
            &[true],
            worst.as_ref(),
            must_complete_always,
            &mut can,
            doc,
            (epoch, &mut may_enter_until),
            &mut out.work,
        )? {
            out.estimated = true;
            continue;
        }
        // The walk of the rest of the block, from `doc`, until the bar
        // moves or a docID is reached whose block-max bounds are not known.
        let Some(c) = cursors[0].as_mut() else { break };
        c.count_block()?;
        let (docs, counts, i0) = c.block_columns();
        let mut j = i0;
        let mut stop = false;
        while j < docs.len() {
            let doc = docs[j];
            if j > i0 && heap.len() >= keep && !bounds_known(may_enter_until, epoch, doc) {
                break;
            }
            if past_deadline(query, evaluated) {
                out.timed_out = true;
                stop = true;
                break;
            }
            evaluated += 1;
            // Every candidate holds the word: a complete match.
            out.total += 1;
            out.complete += 1;
            let mut classes: HitClasses = [0; postings::CLASSES];
            for (x, col) in classes.iter_mut().zip(counts) {
                *x = col[j];
            }
            let lens = s.field_lengths(doc)?;
            let worst = if heap.len() >= keep {
                heap.peek().map(|r| &r.0)
            } else {
                None
            };
            let (pr, factor) = if let Some(worst) = worst {
                // The generic loop's bounds, cheapest first: the counts'
                // best fields with the PageRank of the docIDs around,
                // then the document's own PageRank.
                let (np, nf) = postings::plain_fancy(&classes).map_err(|d| c.corrupt(d))?;
                let norms = b.doc_norms(lens.as_ref(), np > 0, nf > 0);
                let sum = b.of_word(0, np, nf, &norms);
                let around = chunk_factor.of(b, doc);
                if !may_pass(worst, true, sum * around) {
                    j += 1;
                    continue;
                }
                let pr = match &mut pagerank {
                    Some(f) => Some(f(doc)?),
                    None => None,
                };
                if !may_pass(worst, true, sum * b.factor_at_most(pr)) {
                    j += 1;
                    continue;
                }
                let f = b.factor_of(pr);
                if !may_pass(worst, true, sum * f) {
                    j += 1;
                    continue;
                }
                (pr, f)
            } else {
                let pr = match &mut pagerank {
                    Some(f) => Some(f(doc)?),
                    None => None,
                };
                (pr, b.factor_of(pr))
            };
            // The exact score: the text score of the counts (no
            // proximity bonus with one word) times the PageRank factor.
            let wd = [WordInDoc {
                word: slot.word.as_str(),
                df,
                idf,
                counts: type_counts(&classes),
            }];
            let score = bm25::text_part(&query.bm25, fielded, &stats, &wd, lens.as_ref()).total(
                &query.bm25,
                0.0,
                factor,
            );
            if worst.is_some_and(|w| !may_pass(w, true, score)) {
                j += 1;
                continue;
            }
            if scored_docs >= cutoff {
                out.cut_off = true;
                out.estimated = true;
                stop = true;
                break;
            }
            scored_docs += 1;
            let m = Match {
                doc,
                ir: score,
                pagerank: pr,
                score,
                complete: true,
            };
            j += 1;
            if offer(&mut heap, keep, m, &mut out.work) {
                bar_moved = heap.len() >= keep;
                epoch += 1;
            }
            if bar_moved {
                break;
            }
        }
        if stop {
            break 'walk;
        }
        heads[0] = c.move_to(j)?;
    }
    out.work.candidates = evaluated;
    let seen = Seen {
        matches: out.total,
        complete: out.complete,
        evaluated,
        undecided: 0,
        postings: evaluated,
    };
    Ok((out, heap, seen))
}

//! A phrase's own loop: a query that is one phrase of two to
//! [`MAX_PLAIN`] distinct words (`"write ahead log"`), under a ranking
//! pruning can bound.
//!
//! The generic loop of [`super::retrieve`] evaluated it with what any
//! query might need: per candidate, the query's tree walked to ask
//! whether it may be complete and then whether it is (the phrase found by
//! its words' slots, compared as strings), the words' hits read through
//! the document's word table, the scorer's word list and the proximity
//! match's plan collected again, the bound from the count columns with
//! the PageRank factor of the docIDs around. Measured with callgrind on
//! rust-doc's 2-word phrases, that machinery was ~490M of 2,044M
//! instructions.
//!
//! Here, as in [`words::plain`](super::words::plain), the words' cursors
//! and bounds are a walk's own arrays ([`Walk`]); a candidate's bound is
//! worked out from its postings blocks' bounds and its own PageRank
//! factor, then from its count columns ([`Walk::judge`]), before any hit
//! is read; and the phrase is checked and the proximity match scored
//! from the words' hits read once, as the match reads them
//! ([`ProximityPlan`]). The decisions
//! are the generic loop's, in its order, the bar its heap's worst match:
//! the matches, their score bits, the totals and the work counters are
//! its own (`phrase_path_equals_the_generic_one` in `tests/query.rs`).

use std::collections::BinaryHeap;

use super::words::{bar, word_list, Walk, MAX_PLAIN};
use super::{advance, may_pass, offer, DocScorer, Ranked, Retrieved, Seen, Slot};
use crate::error::Result;
use crate::index::hit::Hit;
use crate::index::postings::{self, HitClasses};
use crate::index::DoclistCursor;
use crate::search::eval::Match;
use crate::search::query::{Matching, Node, Query};
use crate::search::rank::{phrase_in, ProximityPlan};
use crate::search::Searcher;

/// The phrase of a query that is one phrase and nothing else.
fn one_phrase(n: &Node) -> Option<&[String]> {
    match n {
        Node::Phrase(ws) => Some(ws),
        Node::All(ns) => match ns.as_slice() {
            [Node::Phrase(ws)] => Some(ws),
            _ => None,
        },
        _ => None,
    }
}

/// Whether [`phrase`] evaluates a query whose words fit a 2–3-word loop
/// ([`super::words::own_loop`]), its tree `need` under its matching: one
/// phrase of all its words (each once), with a proximity bonus. If so,
/// per word of the phrase in order, its index in `scored`.
pub(super) fn applies(
    query: &Query,
    need: &Node,
    slots: &[Slot],
    scored: &[usize],
) -> Option<[usize; MAX_PLAIN]> {
    let ws = one_phrase(&query.expr)?;
    let fits = query.bm25.proximity_weight != 0.0
        && ws.len() == slots.len()
        && one_phrase(need) == Some(ws);
    if !fits {
        return None;
    }
    let mut order = [0; MAX_PLAIN];
    for (o, w) in order.iter_mut().zip(ws) {
        *o = scored.iter().position(|&i| &slots[i].word == w)?;
    }
    Some(order)
}

/// Evaluates a one-phrase query ([`applies`], `order` what it gave) whose
/// cursors stand at `heads` (every word's first document): what
/// [`super::words::plain`] gives, with the generic loop's work and totals.
///
/// Per candidate, in the generic loop's order: the essential words
/// ([`super::choose_essential`]), the candidate as the least essential
/// head, block-max ([`super::BlockMax`]), the other words' cursors moved
/// to it ([`Walk::next`]). Under `--match all` a document without every
/// word is passed by; else it may be an incomplete match. Before any hit is read, a full heap's bar
/// is tried ([`Walk::judge`]): a document that cannot pass it is left
/// undecided (whether it holds the phrase would take its hits). Then the
/// words' hits are read once, of the fields the proximity match reads
/// ([`ProximityPlan`]: those where every word has hits, the only ones a
/// phrase can stand in), for the phrase check and the score alike.
#[allow(clippy::too_many_arguments)]
pub(super) fn phrase(
    s: &Searcher,
    query: &Query,
    keep: usize,
    mut walk: Walk<'_, '_>,
    order: &[usize],
    scorer: &mut DocScorer<'_>,
    cursors: &mut [Option<DoclistCursor<'_>>],
    heads: &mut [Option<u32>],
) -> Result<(Retrieved, BinaryHeap<Ranked>, Seen)> {
    let scored = walk.scored;
    let (mut out, mut heap) = (Retrieved::default(), BinaryHeap::new());
    // A phrase breaks no hard constraint: under `--match any` every
    // candidate decided is kept.
    let keep_any = query.matching == Matching::Any;
    let mut wd = word_list(scorer, walk.slots, scored);
    // Per word (in the order of `scored`): its hits, read as the plan
    // says, and how many of them lead in (field, position) order.
    let mut hits: [Vec<Hit>; MAX_PLAIN] = Default::default();
    let mut led = [0usize; MAX_PLAIN];
    let (mut sorted, mut scratch) = (Vec::new(), Vec::new());
    let mut undecided = 0u64;
    loop {
        let worst = bar(&heap, keep);
        let Some(cand) = walk.next(query, worst.as_ref(), cursors, heads, &mut out)? else {
            break;
        };
        let mut j = walk.judge(s, scorer, cursors, &mut wd, cand, worst.as_ref(), true)?;
        let (doc, mask) = (cand.doc, cand.mask);
        if j.hopeless {
            // Whether it matches at all would take its hits.
            out.estimated = true;
            undecided += 1;
            advance(scored, cursors, heads, doc)?;
            continue;
        }
        if j.bounded.is_none() {
            // Not counted for a bound (the heap is not full yet).
            walk.count(cursors, &mut wd, mask)?;
        }
        // The proximity match's plan: the words present with hits.
        let mut plan_words = [0usize; MAX_PLAIN];
        let mut plan_classes = [[0; postings::CLASSES]; MAX_PLAIN];
        let mut planned = 0;
        for (k, &i) in scored.iter().enumerate() {
            if mask >> i & 1 == 1 && walk.cols.classes[k].iter().any(|&x| x > 0) {
                (plan_words[planned], plan_classes[planned]) = (k, walk.cols.classes[k]);
                planned += 1;
            }
        }
        let plan = ProximityPlan::of(&plan_classes[..planned]);
        let mut words = Words {
            read: 0,
            hits_read: 0,
            hits: &mut hits,
            led: &mut led,
        };
        let complete = cand.may_complete && {
            words.read(order, scored, cursors, &walk.cols.classes, plan.read)?;
            let (hits, led) = (&*words.hits, &*words.led);
            phrase_in(
                order.len(),
                |j| (hits[order[j]].as_slice(), led[order[j]]),
                &mut sorted,
                &mut scratch,
            )
        };
        let keep_it = complete || keep_any;
        if keep_it {
            out.total += 1;
            out.complete += u64::from(complete);
            if !walk.may_score(&mut out) {
                break;
            }
            let pr_factor = walk.score_inputs(s, query, scorer, doc, &mut j)?;
            let scored_as = if scorer.places(&wd) {
                let text = match &j.bounded {
                    Some((_, text)) => *text,
                    None => scorer.text(&wd, j.lens.as_ref()),
                };
                // Complete or not, it passed the bar as it may be: an
                // incomplete match may not pass where a complete one would.
                let passes = match (&j.bounded, bar(&heap, keep)) {
                    (Some((bound, _)), Some(w)) => may_pass(&w, complete, *bound),
                    _ => true,
                };
                if passes {
                    let plan_words = &plan_words[..planned];
                    words.read(plan_words, scored, cursors, &walk.cols.classes, plan.read)?;
                    let (hits, led) = (&*words.hits, &*words.led);
                    Some(scorer.score_placed(
                        &wd,
                        plan_words.iter().map(|&k| (hits[k].as_slice(), led[k])),
                        &text,
                        pr_factor,
                        Some(&plan),
                    ))
                } else {
                    None
                }
            } else {
                // Without placing, the bound is the score: the text score
                // with no proximity bonus.
                Some(match j.bounded {
                    Some((score, _)) => (score, score),
                    None => scorer.score_counts(&wd, j.lens.as_ref(), pr_factor),
                })
            };
            if let Some((ir, score)) = scored_as {
                let m = Match {
                    doc,
                    ir,
                    pagerank: pr_factor.0,
                    score,
                    complete,
                };
                if offer(&mut heap, keep, m, &mut out.work) {
                    walk.bar_moved = heap.len() >= keep;
                    walk.block_max.heap_changed();
                }
            }
        }
        out.work.placed += u64::from(words.read != 0);
        out.work.hits += words.hits_read;
        advance(scored, cursors, heads, doc)?;
    }
    let seen = walk.seen(&mut out, undecided);
    Ok((out, heap, seen))
}

/// A candidate's words' hits as [`phrase`] reads them: each word's once,
/// into the walk's buffers.
struct Words<'h> {
    /// Per word (bit `k`, in the order of `scored`): its hits are read.
    read: usize,
    /// The hits read, counted as the whole lists (as the generic loop
    /// counts them, however they were read).
    hits_read: u64,
    hits: &'h mut [Vec<Hit>; MAX_PLAIN],
    led: &'h mut [usize; MAX_PLAIN],
}

impl Words<'_> {
    /// Reads the hits of the classes `read_as` (bit `1 << class`) of the
    /// words `ks` (indices in `scored`) whose hits are not read, from
    /// their cursors standing at the candidate; `classes` are each word's
    /// hits per class.
    fn read(
        &mut self,
        ks: &[usize],
        scored: &[usize],
        cursors: &mut [Option<DoclistCursor<'_>>],
        classes: &[HitClasses; MAX_PLAIN],
        read_as: u8,
    ) -> Result<()> {
        for &k in ks {
            if self.read >> k & 1 == 1 {
                continue;
            }
            self.read |= 1 << k;
            let h = &mut self.hits[k];
            h.clear();
            self.led[k] = match cursors[scored[k]].as_mut() {
                Some(c) => c.placed_hits(read_as, h)?,
                None => 0,
            };
            self.hits_read += classes[k].iter().map(|&x| u64::from(x)).sum::<u64>();
        }
        Ok(())
    }
}

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
//! Here the word's postings blocks are evaluated a block at a time, the
//! best bound first ([`one_word`]): the block's docIDs and count columns
//! as plain arrays, each candidate's counts read from them, its bounds
//! and (for the few that pass) its exact score worked out from them with
//! the generic loop's functions ([`bm25::text_part`],
//! [`Bounds::factor_of`]), so the top k and their score bits are the
//! generic loop's, and the totals are exact; a property test
//! (`tests/query.rs`) compares the two on random queries.

use std::collections::BinaryHeap;

use super::{
    advance, choose_essential, column_classes, may_pass, offer, past_deadline, possible_sets,
    type_counts, BlockMax, Bounds, DocScorer, Need, PossibleSets, Ranked, Retrieved, Seen, Slot,
};
use crate::docstore::PageRanks;
use crate::error::Result;
use crate::index::hit::Hit;
use crate::index::postings::{self, HitClasses, BLOCK_DOCS, CLASSES};
use crate::index::{BlockAt, DoclistCursor, PostingAt};
use crate::search::bm25::{self, CollectionStats, WordInDoc, N_FIELDS};
use crate::search::eval::{Match, Work};
use crate::search::query::{Matching, Node, Query, Ranking};
use crate::search::rank::{ProximityPlan, HIT_TYPES};
use crate::search::{LengthsView, Searcher};

/// Whether [`one_word`] evaluates `query`: one word, scored, with a
/// doclist, its ranking bounded, nothing else asked (no phrase, exclusion
/// or `site:`, which need the generic loop's tree), and the dedicated
/// paths not turned off ([`Query::fast_path`]).
pub(super) fn applies(query: &Query, slots: &[Slot], bounded: bool) -> bool {
    query.fast_path
        && bounded
        && matches!(query.ranking, Ranking::Bm25 | Ranking::Bm25f)
        && slots.len() == 1
        && slots[0].scored
        && slots[0].term.is_some()
        && matches!(&query.expr, Node::All(ns) if matches!(ns.as_slice(), [Node::Word(_)]))
}

/// Evaluates a one-word query ([`applies`]) whose cursor is `cursors[0]`,
/// standing at its first document: the matches kept, what
/// [`super::finish`] needs of the evaluation, and the cursors and heads
/// where the evaluation left them (the head `None`: the doclist is done
/// with).
///
/// The word's postings blocks are evaluated best bound first, not in
/// docID order: a one-word query's documents are scored each on its own,
/// so nothing ties their order to the docIDs', and the first blocks fill
/// the heap with the best documents, after which the bar shuts out most
/// of the rest by their blocks' bounds alone — block-max's bound of a
/// block (its stored bound times PageRank's largest factor over its
/// docIDs), sorted once from the directories, no block decoded. The heap
/// keeps the best by (score, docID) whatever the order, and a block is
/// left out only when its bound cannot pass the bar, so the matches are
/// the docID-order walk's (`plain_word_path_equals_the_generic_one`).
/// A block is decoded only when its bound passes the bar, its count
/// columns only when its documents' own factors do, and a document's
/// field lengths and counts are read only when the block's text bound
/// times its own factor passes (most of a common word's documents fail
/// that on a table read). The totals need no walk: every document of the
/// doclist matches, so they are its length, exact (the docID-order walk
/// estimated them once block-max skipped a block).
#[allow(clippy::too_many_arguments)]
pub(super) fn one_word(
    s: &Searcher,
    query: &Query,
    keep: usize,
    b: &Bounds<'_>,
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
    let mut pagerank = s.pageranks()?;
    // Each docID's own PageRank factor bound, where the vector is in
    // memory (`Bounds::factor_at_most` of its PageRank, so the first bound
    // is as tight as the second was); else the bound of its chunk's.
    let own_factors = own_factors(b, &pagerank);
    let own_factors = own_factors.as_deref().unwrap_or(&[]);
    let cutoff = query.cutoff.max(1);
    let lengths = s.lengths_view();
    let timed = query.deadline.is_some();
    let (mut evaluated, mut scored_docs) = (0u64, 0usize);
    let Some(c) = cursors[0].as_mut() else {
        return Ok((out, heap, seen(0, 0)));
    };
    // The word's postings blocks, the best bound first: at first each
    // block's text bound times PageRank's largest factor over its docIDs
    // (from the directories), and once its docIDs are decoded, times the
    // largest factor of its own documents — far tighter where the block's
    // docIDs spread over a wide range, as a common word's do — put back
    // in its place (ties in docID order).
    let mut ahead = Vec::new();
    c.for_each_block(|at, info| {
        let text = b.of_block(0, info.bound);
        ahead.push(Ahead {
            bound: text * b.factor_in(info.first, info.last),
            text,
            tight: false,
            at,
        });
    })?;
    let mut queue = BinaryHeap::from(ahead);
    let mut worst: Option<Match> = None;
    let mut cheap: Option<CheapBound<'_>> = None;
    let mut stopped = false;
    'blocks: while let Some(Ahead {
        bound,
        text,
        tight,
        at,
    }) = queue.pop()
    {
        if worst.as_ref().is_some_and(|w| !may_pass(w, true, bound)) {
            // Nor can any block after it.
            out.work.block_skips += queue.len() as u64 + 1;
            break;
        }
        c.load_at(at)?;
        if !tight {
            let (docs, _, _) = c.block_columns();
            let most = docs
                .iter()
                .fold(0.0f64, |m, &d| m.max(factor_around(b, own_factors, d).0));
            let bound = text * most;
            if worst.as_ref().is_some_and(|w| !may_pass(w, true, bound)) {
                out.work.block_skips += 1;
                continue;
            }
            if queue.peek().is_some_and(|a| a.bound > bound) {
                queue.push(Ahead {
                    bound,
                    text,
                    tight: true,
                    at,
                });
                continue;
            }
        }
        c.count_block()?;
        let (docs, counts, _) = c.block_columns();
        // No more docIDs than a block's count columns hold (as many as
        // there are): indexing needs no bounds checks.
        let docs = &docs[..docs.len().min(postings::BLOCK_DOCS)];
        for (j, &doc) in docs.iter().enumerate() {
            if timed && past_deadline(query, evaluated) {
                out.timed_out = true;
                stopped = true;
                break 'blocks;
            }
            evaluated += 1;
            let (around, own) = factor_around(b, own_factors, doc);
            // Most candidates fail the first bound: the block's text bound
            // times their factor, then the cheap test of those it can
            // decide, straight from the count columns.
            if worst
                .as_ref()
                .is_some_and(|w| !may_pass(w, true, text * around))
                || cheap
                    .as_ref()
                    .is_some_and(|t| t.fails(counts, j, doc, around))
            {
                continue;
            }
            let classes: HitClasses = std::array::from_fn(|k| counts[k][j]);
            let lens = lengths.get(doc)?;
            let (pr, factor) = if let Some(worst) = &worst {
                // The generic loop's bounds, cheapest first: the counts'
                // best fields with the PageRank factor bound of the docIDs
                // around (or the document's own), then the document's own
                // PageRank.
                // The counts' sums checked (`type_counts` adds them): eight
                // counts below 2^29 cannot overflow a sum, so only a count
                // that large pays for the sums.
                if classes.iter().fold(0, |a, &x| a | x) >= 1 << 29 {
                    postings::plain_fancy(&classes).map_err(|d| c.corrupt(d))?;
                }
                let sum = b.of_classes(0, &classes, lens.as_ref());
                if !may_pass(worst, true, sum * around) {
                    continue;
                }
                let pr = match &mut pagerank {
                    Some(f) => Some(f.get(doc)?),
                    None => None,
                };
                if !own && !may_pass(worst, true, sum * b.factor_at_most(pr)) {
                    continue;
                }
                let f = b.factor_of(pr);
                if !may_pass(worst, true, sum * f) {
                    continue;
                }
                (pr, f)
            } else {
                let pr = match &mut pagerank {
                    Some(f) => Some(f.get(doc)?),
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
            if worst.as_ref().is_some_and(|w| !may_pass(w, true, score)) {
                continue;
            }
            if scored_docs >= cutoff {
                out.cut_off = true;
                stopped = true;
                break 'blocks;
            }
            scored_docs += 1;
            let m = Match {
                doc,
                ir: score,
                pagerank: pr,
                score,
                complete: true,
            };
            if offer(&mut heap, keep, m, &mut out.work) && heap.len() >= keep {
                // The bar moved.
                worst = heap.peek().map(|r| r.0);
                cheap = worst.as_ref().and_then(|w| CheapBound::new(b, w, &lengths));
                if worst.as_ref().is_some_and(|w| !may_pass(w, true, bound)) {
                    // Nor can the rest of this block, nor any block after it.
                    out.work.block_skips += queue.len() as u64;
                    break 'blocks;
                }
            }
        }
    }
    heads[0] = None;
    out.work.candidates = evaluated;
    let matches = if stopped {
        // The documents evaluated (the safety valve or the deadline
        // stopped the walk); `finish` estimates the rest.
        out.estimated = true;
        evaluated
    } else {
        u64::from(c.len())
    };
    (out.total, out.complete) = (matches, matches);
    Ok((out, heap, seen(matches, evaluated)))
}

/// A postings block [`one_word`] has yet to evaluate: its bound (the text
/// bound `text` times a PageRank factor bound, `tight` once that is its
/// documents' own), where it lies. Ordered by bound, then the first in
/// docID order.
struct Ahead {
    bound: f64,
    text: f64,
    tight: bool,
    at: BlockAt,
}

impl PartialEq for Ahead {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == std::cmp::Ordering::Equal
    }
}
impl Eq for Ahead {}
impl PartialOrd for Ahead {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ahead {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.bound
            .total_cmp(&o.bound)
            .then_with(|| o.at.cmp(&self.at))
    }
}

/// Each docID's own PageRank factor bound (`Bounds::factor_at_most` of its
/// PageRank) where the vector is in memory: a table read, as tight as the
/// bound from the document's PageRank.
pub(super) fn own_factors(
    b: &Bounds<'_>,
    pagerank: &Option<PageRanks>,
) -> Option<std::sync::Arc<[f64]>> {
    match pagerank {
        Some(PageRanks::Memory(v)) => b.doc_factors(v),
        _ => None,
    }
}

/// The PageRank factor bound of `doc` that a first bound takes: its own
/// (`true`) where `own_factors` ([`own_factors`]) holds it, else its
/// chunk's.
#[inline(always)]
fn factor_around(b: &Bounds<'_>, own_factors: &[f64], doc: u32) -> (f64, bool) {
    match own_factors.get(doc as usize) {
        Some(&f) => (f, true),
        None => (b.chunk_factor(doc), false),
    }
}

/// What [`one_word`] saw: `matches` documents known to match (all
/// complete), `evaluated` of them evaluated.
fn seen(matches: u64, evaluated: u64) -> Seen {
    Seen {
        matches,
        complete: matches,
        evaluated,
        undecided: 0,
        postings: evaluated,
    }
}

/// The first bound of [`one_word`] (`Bounds::of_classes` of a candidate's
/// counts times the PageRank factor of the docIDs around) against a full
/// heap's worst score, for the candidates it can decide without the
/// bound's last division: any whose counts `postings::plain_fancy` accepts,
/// with their field lengths known.
///
/// The bound is `A · x / (x + y)` times the factor `f`, with `A = idf ·
/// (k1 + 1)` and, under BM25F, `x = w_body · n + q · norm_body(len)`, `y =
/// k1 · norm_body(len)` (the exact score's `p · (k1 + 1) / (p + k1)`, `p =
/// x / norm_body`, with `p`'s body division multiplied out; `q` is the
/// other fields' share of `p`, `Σ w_f · n_f / norm_f`, divided as
/// `of_classes` divides it, for the fifth of candidates with title,
/// anchor, URL or large-type hits), under BM25 `x = n`, `y = norm(len)`. It
/// fails the worst score `T` when `A·f·x/(x+y) · (1 + SLACK) + SLACK < T`,
/// that is below `s = (T − SLACK) / (1 + SLACK)`; with the margin `M` it is
/// claimed to when `x · (A·(1+M)·f − s) < s · y`, which gives `A·f·x/(x+y)
/// < s / (1 + M)`. The roundings of this test and of the bound as
/// `of_classes` works it out (sums of non-negative terms) are each a few
/// parts in 10^16, `M` is 10^-7: what this test rejects the bound rejects
/// too, and what it does not decide goes to the bound unchanged, so the
/// decisions are the bound's (`cheap_bound_never_rejects_what_the_bound_passes`
/// tries it).
struct CheapBound<'a> {
    /// `A · (1 + M)`.
    a: f64,
    s: f64,
    fielded: bool,
    /// BM25F: the body's weight; BM25: 1.
    w: f64,
    /// BM25F: `k1`; BM25: 1.
    k1: f64,
    /// The normalisation `at + per · len` (BM25F: the body's; BM25: of
    /// the large type and body lengths, `k1` in it).
    at: f64,
    per: f64,
    /// BM25F: per field other than the body, its weight and its
    /// normalisation's `at` and `per`.
    fields: [(f64, f64, f64); BODY],
    /// The field lengths by docID, in memory (a docID past them is left
    /// to the bound).
    lens: &'a [[u32; N_FIELDS]],
}

impl<'a> CheapBound<'a> {
    /// The margin `M`.
    const MARGIN: f64 = 1e-7;

    /// The test against `worst`, or `None` where it is not sound or not
    /// cheap to use: an incomplete worst match (every candidate is
    /// complete, so all pass), a worst score so small that `T − SLACK`
    /// loses precision, field lengths not in memory.
    fn new(b: &Bounds<'_>, worst: &Match, lengths: &LengthsView<'a>) -> Option<CheapBound<'a>> {
        let t = worst.score;
        let LengthsView::Memory(lens) = *lengths else {
            return None;
        };
        if !worst.complete || !(1e-6..f64::MAX).contains(&t) {
            return None;
        }
        let w = &b.weights;
        let (weight, k1, at, per) = if b.fielded {
            (
                w.field_weight[BODY],
                w.k1,
                b.norm_at[BODY],
                b.norm_per[BODY],
            )
        } else {
            (1.0, 1.0, b.norm_at[0], b.norm_per[0])
        };
        Some(CheapBound {
            a: b.idf[0] * (w.k1 + 1.0) * (1.0 + Self::MARGIN),
            s: (t - super::SLACK) / (1.0 + super::SLACK),
            fielded: b.fielded,
            w: weight,
            k1,
            at,
            per,
            fields: std::array::from_fn(|f| (w.field_weight[f], b.norm_at[f], b.norm_per[f])),
            lens,
        })
    }

    /// Whether document `doc`, the `j`-th of a block whose count columns
    /// per class are `counts`, in docIDs whose PageRank factor is at most
    /// `around`, surely fails the first bound (`false`: not decided here).
    #[inline(always)]
    fn fails(
        &self,
        counts: &[[u32; BLOCK_DOCS]; CLASSES],
        j: usize,
        doc: u32,
        around: f64,
    ) -> bool {
        use postings::{ANCHOR, BOLD, LARGE, OTHER, PLAIN, SMALL, TITLE, URL};
        let c = |k: usize| counts[k][j % BLOCK_DOCS];
        let Some(l) = self.lens.get(doc as usize) else {
            return false;
        };
        // The counts added as `u64`, which cannot overflow; sums that
        // `postings::plain_fancy` would find overflowing `u32` are left to
        // the bound, which checks them.
        let small_to_bold = u64::from(c(SMALL)) + u64::from(c(PLAIN)) + u64::from(c(BOLD));
        let plain = small_to_bold + u64::from(c(LARGE));
        let fancy =
            u64::from(c(URL)) + u64::from(c(TITLE)) + u64::from(c(ANCHOR)) + u64::from(c(OTHER));
        if plain > u64::from(u32::MAX) || fancy > u64::from(u32::MAX) {
            return false;
        }
        let (x, norm) = if self.fielded {
            let body = (small_to_bold + u64::from(c(OTHER))) as f64;
            // As `of_classes` floors it.
            let norm = (self.at + self.per * f64::from(l[BODY])).max(1e-9);
            let mut x = self.w * body;
            // Large type, URL, title and anchor are fields of their own,
            // in `of_classes`' order of fields.
            let others = [c(TITLE), c(ANCHOR), c(URL), c(LARGE)];
            if others != [0; BODY] {
                let mut q = 0.0;
                for ((&n, &(w, at, per)), &len) in others.iter().zip(&self.fields).zip(l) {
                    if n != 0 {
                        q += w * f64::from(n) / (at + per * f64::from(len)).max(1e-9);
                    }
                }
                x += q * norm;
            }
            (x, norm)
        } else {
            let n = (plain + u64::from(c(OTHER))) as f64;
            (
                n,
                self.at + self.per * (f64::from(l[LARGE_FIELD]) + f64::from(l[BODY])),
            )
        };
        // NaN anywhere compares false: not decided.
        x * (self.a * around - self.s) < self.s * (self.k1 * norm)
    }
}

/// The body's field, and large type's ([`bm25::FIELD_OF_TYPE`]).
const BODY: usize = N_FIELDS - 1;
const LARGE_FIELD: usize = N_FIELDS - 2;

/// A document [`plain`] places once the doclists are walked: what its
/// score needs besides its hits, and where its words' postings lie.
struct Pending {
    doc: u32,
    complete: bool,
    /// Its bound: its text score with the proximity bonus at its bound.
    upper: f64,
    text: bm25::TextPart,
    /// Its PageRank and PageRank factor.
    pagerank: (Option<f64>, f64),
    /// The words of its proximity match (present, with hits): how many,
    /// and per word its index in `scored`, its hits per class and its
    /// posting.
    words: usize,
    word: [usize; MAX_PLAIN],
    classes: [HitClasses; MAX_PLAIN],
    at: [PostingAt; MAX_PLAIN],
}

/// Pending documents [`plain`] holds before it drops those the bar has
/// since shut out (then again at twice what is left).
const PENDING_COMPACT: usize = 4096;

/// The most pending documents [`plain`] holds (~250 bytes each, ~4 MiB):
/// past it, a query's memory would grow with its matches (a broad query
/// over a web-scale collection, whose bar the lower bounds raise slowly),
/// so a document to place is placed as it comes, as before pending lists.
const PENDING_MAX: usize = 16_384;

thread_local! {
    /// A thread's pending list, kept from query to query (at most
    /// [`PENDING_MAX`] entries, ~4 MiB a thread): a fresh list grown to a
    /// query's hundreds of entries was reallocated and copied ~8 times a
    /// query, ~1% of a 2–3-word query's instructions on rust-doc.
    static PENDING: std::cell::RefCell<Vec<Pending>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A pending document's place in the order [`plain`] places them: by
/// completeness, then bound, then docID (the best first), with its index.
struct ByBound(bool, f64, std::cmp::Reverse<u32>, usize);

impl PartialEq for ByBound {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == std::cmp::Ordering::Equal
    }
}

impl Eq for ByBound {}

impl PartialOrd for ByBound {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for ByBound {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.0.cmp(&o.0))
            .then(self.1.total_cmp(&o.1))
            .then(self.2.cmp(&o.2))
    }
}

/// The worst of the best `keep` in `heap` once it holds that many: the
/// bar a document must pass.
pub(super) fn bar(heap: &BinaryHeap<Ranked>, keep: usize) -> Option<Match> {
    (heap.len() >= keep)
        .then(|| heap.peek().map(|r| r.0))
        .flatten()
}

/// The most words [`plain`] evaluates: the bench's and most people's
/// queries have two or three; past that the generic loop serves.
pub(super) const MAX_PLAIN: usize = 3;

/// Whether a query with these words (`slots`, of which `scored` are
/// scored) may be evaluated on a 2–3-word loop ([`plain`],
/// [`super::phrase::phrase`]), as far as its words tell: two to
/// [`MAX_PLAIN`] distinct words, each scored and with a doclist
/// (`cursors_open`), under a ranking pruning can bound, the dedicated
/// paths not turned off.
pub(super) fn own_loop(
    query: &Query,
    slots: &[Slot],
    scored: &[usize],
    cursors_open: bool,
    bounded: bool,
) -> bool {
    query.fast_path
        && bounded
        && cursors_open
        && matches!(query.ranking, Ranking::Bm25 | Ranking::Bm25f)
        && (2..=MAX_PLAIN).contains(&slots.len())
        && scored.len() == slots.len()
        && slots.iter().all(|s| s.scored && s.term.is_some())
}

/// Whether [`plain`] evaluates a query whose words fit a 2–3-word loop
/// ([`own_loop`]), its tree `need` under its matching: words joined by
/// AND and OR only (no phrase, exclusion or `site:`, whose tests need the
/// generic loop's tree and hit lists).
pub(super) fn applies_plain(query: &Query, need: &Node) -> bool {
    fn plain_tree(n: &Node) -> bool {
        match n {
            Node::Word(_) => true,
            Node::All(ns) | Node::Any(ns) => ns.iter().all(plain_tree),
            Node::Phrase(_) | Node::Site(_) | Node::Not(_) => false,
        }
    }
    plain_tree(&query.expr) && plain_tree(need)
}

/// Evaluates a query of plain words ([`applies_plain`]) whose cursors
/// stand at `heads` (every word's first document): what [`one_word`]
/// gives, for several words.
///
/// The generic loop's decisions, in its order — the essential words
/// ([`choose_essential`]), the candidate as the least essential head,
/// block-max ([`BlockMax`]), the other words' cursors moved to it, the
/// bounds from the counts, the proximity bound — without its general
/// machinery: a document's completeness is a table of the words present
/// (every subset of at most [`MAX_PLAIN`] words, worked out once from the
/// query's tree), the counts come from the postings blocks' count columns
/// (decoded once per block), the scorer's word list is built once and
/// only its counts change, and no buffer is reset per candidate.
///
/// Placing a document's hits for the proximity match is the costly part,
/// and in docID order most documents placed were pushed out again by
/// later ones: the bar rose only as they came. So a document that passes
/// the bound and must be placed is only noted ([`Pending`], with where its
/// postings lie) and counts towards the bar by its score without the
/// proximity bonus, which its score is at least; once the doclists are
/// walked, the pending documents are placed in two batches, each in
/// docID order (documents of one postings block share its reload): the
/// `keep` best bounds, which fill the heap, then every other that still
/// passes the bar. (Placing strictly in bound order placed 53% fewer
/// documents on rust-doc's 2–3-word AND queries, 14,601 of 31,179, but
/// reloaded a block for most of them.) The queries' instructions fell 7%
/// (AND) and 11% (OR), on vtk9-doc's 7% each. At most [`PENDING_MAX`]
/// documents wait; past that one is placed as it comes. The top k and
/// their score bits are the generic loop's (the same scores of every
/// document that can enter); the work counters and, where documents
/// were skipped, the estimated totals are not (`tests/query.rs` compares
/// the two).
#[allow(clippy::too_many_arguments)]
pub(super) fn plain(
    s: &Searcher,
    query: &Query,
    keep: usize,
    b: &Bounds<'_>,
    need: &Need,
    slots: &[Slot],
    scored: &[usize],
    scorer: &mut DocScorer<'_>,
    cursors: &mut [Option<DoclistCursor<'_>>],
    heads: &mut [Option<u32>],
) -> Result<(Retrieved, BinaryHeap<Ranked>, Seen)> {
    let n = scored.len();
    let mut out = Retrieved::default();
    let mut heap: BinaryHeap<Ranked> = BinaryHeap::new();
    let mut pagerank = s.pageranks()?;
    let own_factors = own_factors(b, &pagerank);
    let own_factors = own_factors.as_deref().unwrap_or(&[]);
    let must_complete_always = query.matching == Matching::All;
    // Plain words break no hard constraint: under `--match any` every
    // candidate is kept.
    let keep_any = query.matching == Matching::Any;
    let cutoff = query.cutoff.max(1);
    // Per set of words present (bit `i`: slot `i`), whether the document
    // satisfies the query: for a tree of words only, what `possible` says
    // of the set is what evaluating the tree on it gives.
    let complete_of = possible_sets(need, n);
    // The scorer's word list, in the order of `scored`: only the counts
    // change from document to document.
    let mut wd = word_list(scorer, slots, scored);
    let mut placer = Placer::default();
    let mut classes: [HitClasses; MAX_PLAIN] = [[0; postings::CLASSES]; MAX_PLAIN];
    // Per word: its cursor's decoded postings when its block's count
    // columns were last decoded.
    let mut counted_at = [u64::MAX; MAX_PLAIN];
    // Per slot: its current postings block's bound, and its cursor's
    // decoded postings then.
    let mut block_text = [(0.0f64, u64::MAX); MAX_PLAIN];
    let mut essential = vec![true; n];
    let mut bar_moved = true;
    let mut block_max = BlockMax::new(b, need, scored, scored, must_complete_always, n);
    let (mut evaluated, mut scored_docs) = (0u64, 0usize);
    let mut postings_seen = 0u64;
    // The documents whose hits are to be placed, and the best `keep` of
    // what is known of each document scored: its score, or for a pending
    // one its score without the proximity bonus (at most its score). The
    // worst of these is the bar.
    let mut pending = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    pending.clear();
    let mut known_best: BinaryHeap<Ranked> = BinaryHeap::new();
    let mut compact_at = PENDING_COMPACT;
    loop {
        if bar_moved {
            bar_moved = false;
            let worst = bar(&known_best, keep);
            choose_essential(
                b,
                need,
                scored,
                slots,
                worst.as_ref(),
                must_complete_always,
                &mut essential,
            );
        }
        let mut doc = None;
        for i in 0..n {
            if essential[i] {
                if let Some(h) = heads[i] {
                    doc = Some(doc.map_or(h, |d: u32| d.min(h)));
                }
            }
        }
        let Some(doc) = doc else { break };
        let worst = bar(&known_best, keep);
        if block_max.skip(
            cursors,
            heads,
            &essential,
            worst.as_ref(),
            doc,
            &mut out.work,
        )? {
            out.estimated = true;
            continue;
        }
        if past_deadline(query, evaluated) {
            out.timed_out = true;
            break;
        }
        evaluated += 1;
        let mask = present(doc, n, cursors, heads, &mut out)?;
        postings_seen += u64::from(mask.count_ones());
        let may_complete = complete_of[mask];
        if must_complete_always && !may_complete {
            // Every match must be complete, and it lacks a word.
            advance(scored, cursors, heads, doc)?;
            continue;
        }
        let has = |i: usize| mask >> i & 1 == 1;
        let worst = bar(&known_best, keep);
        let (mut pr, mut lens, mut factor) = (None, None, None);
        // The document's bound once worked out (the exact text score with
        // the proximity bonus at its bound) and that text score.
        let mut bounded: Option<(f64, bm25::TextPart)> = None;
        let mut hopeless = false;
        if let Some(worst) = &worst {
            // Where the document's own PageRank factor is a table read
            // and it holds one word (no proximity bonus), first the word's
            // postings block's bound with it: most such candidates of an
            // OR query fail it before their field lengths and counts are
            // read. (`Bounds::of_block` is at least `Bounds::of_classes`,
            // as block-max has it.) With more words the bonus's bound
            // dominates, and the test cost more than it saved.
            let own = own_factors.get(doc as usize).copied();
            if let (Some(f), true) = (own, mask.is_power_of_two()) {
                let i = mask.trailing_zeros() as usize;
                if let Some(c) = cursors[i].as_ref() {
                    if block_text[i].1 != c.postings_decoded() {
                        block_text[i] = (b.of_block(i, c.block_bound()), c.postings_decoded());
                    }
                    hopeless = !may_pass(worst, may_complete, block_text[i].0 * f);
                }
            }
            if !hopeless && may_pass(worst, may_complete, f64::INFINITY) {
                lens = s.field_lengths(doc)?;
                // The bound from the count columns, as the generic loop
                // works it out ([`Bounds::of_words`]), in the order of
                // `scored`.
                for (k, &i) in scored.iter().enumerate() {
                    if !has(i) {
                        continue;
                    }
                    if let Some(c) = cursors[i].as_mut() {
                        column_classes(c, &mut counted_at[k], &mut classes[k])?;
                    }
                }
                let sum = b.of_words(
                    scored
                        .iter()
                        .zip(&classes)
                        .filter(|(&i, _)| has(i))
                        .map(|(&i, c)| (i, c)),
                    lens.as_ref(),
                );
                let around = own.unwrap_or_else(|| b.chunk_factor(doc));
                if may_pass(worst, may_complete, sum * around) {
                    pr = match &mut pagerank {
                        Some(f) => Some(f.get(doc)?),
                        None => None,
                    };
                    if own.is_some() || may_pass(worst, may_complete, sum * b.factor_at_most(pr)) {
                        let f = b.factor_of(pr);
                        factor = Some(f);
                        hopeless = !may_pass(worst, may_complete, sum * f);
                    } else {
                        hopeless = true;
                    }
                } else {
                    hopeless = true;
                }
            }
            if let (false, Some(f)) = (hopeless, factor) {
                // The exact text score from the count columns, with the
                // proximity bonus at its bound.
                for (k, &i) in scored.iter().enumerate() {
                    wd[k].counts = if has(i) {
                        type_counts(&classes[k])
                    } else {
                        [0; HIT_TYPES]
                    };
                }
                let text = scorer.text(&wd, lens.as_ref());
                match scorer.bound_passing(&wd, &text, f, worst, may_complete) {
                    Some(bound) => bounded = Some((bound, text)),
                    None => hopeless = true,
                }
            } else {
                hopeless = true;
            }
        }
        let complete = may_complete;
        let keep_it = complete || keep_any;
        if keep_it {
            out.total += 1;
            out.complete += u64::from(complete);
        }
        if keep_it && !hopeless {
            if scored_docs >= cutoff {
                out.cut_off = true;
                out.estimated = true;
                break;
            }
            scored_docs += 1;
            if bounded.is_none() {
                for (k, &i) in scored.iter().enumerate() {
                    wd[k].counts = match &mut cursors[i] {
                        Some(c) if has(i) => {
                            classes[k] = c.classes()?;
                            type_counts(&classes[k])
                        }
                        _ => [0; HIT_TYPES],
                    };
                }
            }
            if lens.is_none() {
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
            let known = if scorer.places(&wd) {
                // Its hits are placed once the stream ends; until then
                // it counts by its score without the proximity bonus.
                let (upper, text) = match bounded {
                    Some(bt) => bt,
                    None => {
                        let text = scorer.text(&wd, lens.as_ref());
                        (scorer.bound(&wd, &text, pr_factor.1), text)
                    }
                };
                let mut p = Pending {
                    doc,
                    complete,
                    upper,
                    text,
                    pagerank: pr_factor,
                    words: 0,
                    word: [0; MAX_PLAIN],
                    classes: [[0; postings::CLASSES]; MAX_PLAIN],
                    at: [PostingAt::default(); MAX_PLAIN],
                };
                // The words of the proximity match: those present with hits.
                for (k, &i) in scored.iter().enumerate() {
                    if let (true, true, Some(c)) = (
                        has(i),
                        classes[k].iter().any(|&x| x > 0),
                        cursors[i].as_ref(),
                    ) {
                        let j = p.words;
                        (p.word[j], p.classes[j], p.at[j]) = (k, classes[k], c.posting());
                        p.words += 1;
                    }
                }
                let without_bonus = text.total(&query.bm25, 0.0, pr_factor.1);
                if pending.len() < PENDING_MAX {
                    pending.push(p);
                    without_bonus
                } else if bar(&known_best, keep).is_none_or(|w| may_pass(&w, complete, upper)) {
                    // Pending documents at their most: placed now, its
                    // cursors standing on its postings.
                    let m = placer.place(&p, scored, cursors, scorer, &wd)?;
                    offer(&mut heap, keep, m, &mut out.work);
                    m.score
                } else {
                    without_bonus
                }
            } else {
                // Without placing, the bound is the score: the text score
                // with no proximity bonus.
                let score = match bounded {
                    Some((score, _)) => score,
                    None => scorer.score_counts(&wd, lens.as_ref(), pr_factor).1,
                };
                let m = Match {
                    doc,
                    ir: score,
                    pagerank: pr,
                    score,
                    complete,
                };
                offer(&mut heap, keep, m, &mut out.work);
                score
            };
            let m = Match {
                doc,
                ir: known,
                pagerank: pr,
                score: known,
                complete,
            };
            if offer(&mut known_best, keep, m, &mut Work::default()) {
                bar_moved = known_best.len() >= keep;
                block_max.heap_changed();
            }
            if pending.len() >= compact_at {
                // The bar has risen since most of them were kept.
                if let Some(worst) = bar(&known_best, keep) {
                    pending.retain(|p| may_pass(&worst, p.complete, p.upper));
                }
                compact_at = compact_at.max(2 * pending.len());
            }
        }
        advance(scored, cursors, heads, doc)?;
    }
    // The pending documents placed, best bound first, until no other can
    // enter: in two batches, each in docID order (their postings blocks
    // are loaded again to read their hits, and documents of one block
    // placed together share the load; placed in bound order they were
    // loaded once or more per document, 12% more instructions on
    // vtk9-doc's AND queries than placing as they came).
    let mut best: BinaryHeap<ByBound> = pending
        .iter()
        .enumerate()
        .map(|(j, p)| ByBound(p.complete, p.upper, std::cmp::Reverse(p.doc), j))
        .collect();
    let passes = |heap: &BinaryHeap<Ranked>, p: &Pending| {
        bar(heap, keep).is_none_or(|w| may_pass(&w, p.complete, p.upper))
    };
    let mut batch: Vec<usize> = Vec::with_capacity(keep.min(pending.len()));
    // The first batch: the best `keep` bounds, which fill the heap and
    // raise the bar near where it ends; then every other that passes it.
    let mut size = keep;
    loop {
        batch.clear();
        while batch.len() < size {
            match best.peek() {
                Some(b) if passes(&heap, &pending[b.3]) => batch.push(b.3),
                _ => break,
            }
            best.pop();
        }
        if batch.is_empty() {
            break;
        }
        size = usize::MAX;
        batch.sort_unstable_by_key(|&j| pending[j].doc);
        for &j in &batch {
            let p = &pending[j];
            if !passes(&heap, p) {
                continue;
            }
            let m = placer.place(p, scored, cursors, scorer, &wd)?;
            offer(&mut heap, keep, m, &mut out.work);
        }
    }
    pending.clear();
    PENDING.with(|p| *p.borrow_mut() = pending);
    out.work.candidates = evaluated;
    out.work.placed += placer.placed;
    out.work.hits += placer.hits;
    let seen = Seen {
        matches: out.total,
        complete: out.complete,
        evaluated,
        undecided: 0,
        postings: postings_seen,
    };
    Ok((out, heap, seen))
}

/// The words of the slots `0..n` present in candidate `doc` (bit `i`:
/// slot `i`): a non-essential word's cursor is moved to the candidate
/// (its documents before it were skipped unseen, so `out`'s totals are
/// estimates). Always inlined: the 2–3-word loops call it per candidate.
#[inline(always)]
fn present(
    doc: u32,
    n: usize,
    cursors: &mut [Option<DoclistCursor<'_>>],
    heads: &mut [Option<u32>],
    out: &mut Retrieved,
) -> Result<usize> {
    let mut mask = 0usize;
    for i in 0..n {
        if heads[i].is_some_and(|h| h < doc) {
            out.estimated = true;
            heads[i] = match &mut cursors[i] {
                Some(c) => c.seek(doc)?,
                None => None,
            };
        }
        if heads[i] == Some(doc) {
            mask |= 1 << i;
        }
    }
    Ok(mask)
}

/// A 2–3-word loop's walk over its words' doclists (each word a slot of
/// `0..n`, each a candidate word): the generic loop's choice of
/// candidates — the essential words ([`choose_essential`]), chosen again
/// when the bar moved, the candidate as the least essential head,
/// block-max ([`BlockMax`]), the other words' cursors moved to it.
pub(super) struct Walk<'q, 's> {
    pub(super) b: &'q Bounds<'s>,
    /// Per set of words present (bit `i`: slot `i`), whether the document
    /// may satisfy the query ([`possible_sets`]; for a tree of words
    /// only, whether it does).
    complete_of: PossibleSets,
    pagerank: Option<PageRanks<'s>>,
    /// Each docID's own PageRank factor bound ([`own_factors`]), if any.
    own_factors: Option<std::sync::Arc<[f64]>>,
    /// The candidate's count columns ([`Self::judge`]).
    pub(super) cols: Columns,
    need: &'q Need,
    pub(super) slots: &'q [Slot],
    /// The query's words (every slot, in query order).
    pub(super) scored: &'q [usize],
    /// Under `--match all`: every match is complete.
    must_complete_always: bool,
    essential: [bool; MAX_PLAIN],
    /// The bar moved since the essential words were chosen.
    pub(super) bar_moved: bool,
    pub(super) block_max: BlockMax<'q, 's>,
    /// Candidates evaluated.
    evaluated: u64,
    /// Their candidate words' postings.
    postings_seen: u64,
    /// Documents scored, and the most that may be ([`Query::cutoff`]).
    scored_docs: usize,
    cutoff: usize,
}

impl<'q, 's> Walk<'q, 's> {
    /// The walk of `query`'s words `scored` (every slot of `slots`) over
    /// `s`, `need` its tree as a complete match must satisfy it.
    pub(super) fn new(
        s: &'s Searcher,
        query: &Query,
        b: &'q Bounds<'s>,
        need: &'q Need,
        slots: &'q [Slot],
        scored: &'q [usize],
    ) -> Result<Self> {
        let n = scored.len();
        let must_complete_always = query.matching == Matching::All;
        let pagerank = s.pageranks()?;
        Ok(Walk {
            b,
            complete_of: possible_sets(need, n),
            own_factors: own_factors(b, &pagerank),
            pagerank,
            cols: Columns::default(),
            need,
            slots,
            scored,
            must_complete_always,
            essential: [true; MAX_PLAIN],
            bar_moved: true,
            block_max: BlockMax::new(b, need, scored, scored, must_complete_always, n),
            evaluated: 0,
            postings_seen: 0,
            scored_docs: 0,
            cutoff: query.cutoff.max(1),
        })
    }

    /// The next candidate, the cursors at `heads` moved to it, with
    /// `worst` the bar (under `--match all` one that holds every word the
    /// query needs); `None` when the doclists are done with or the
    /// deadline passed (then `out.timed_out`). Always inlined: it is the
    /// loops' head.
    #[inline(always)]
    pub(super) fn next(
        &mut self,
        query: &Query,
        worst: Option<&Match>,
        cursors: &mut [Option<DoclistCursor<'_>>],
        heads: &mut [Option<u32>],
        out: &mut Retrieved,
    ) -> Result<Option<Candidate>> {
        let n = self.scored.len();
        loop {
            if self.bar_moved {
                self.bar_moved = false;
                choose_essential(
                    self.b,
                    self.need,
                    self.scored,
                    self.slots,
                    worst,
                    self.must_complete_always,
                    &mut self.essential,
                );
            }
            let mut doc = None;
            for (&essential, &head) in self.essential.iter().zip(&heads[..n]) {
                if let (true, Some(h)) = (essential, head) {
                    doc = Some(doc.map_or(h, |d: u32| d.min(h)));
                }
            }
            let Some(doc) = doc else { return Ok(None) };
            if self
                .block_max
                .skip(cursors, heads, &self.essential, worst, doc, &mut out.work)?
            {
                out.estimated = true;
                continue;
            }
            if past_deadline(query, self.evaluated) {
                out.timed_out = true;
                return Ok(None);
            }
            self.evaluated += 1;
            let mask = present(doc, n, cursors, heads, out)?;
            self.postings_seen += u64::from(mask.count_ones());
            let may_complete = self.complete_of[mask];
            if self.must_complete_always && !may_complete {
                // Every match must be complete, and it lacks a word.
                advance(self.scored, cursors, heads, doc)?;
                continue;
            }
            return Ok(Some(Candidate {
                doc,
                mask,
                may_complete,
            }));
        }
    }

    /// [`judge`] of candidate `cand` against the bar `worst` (nothing to
    /// judge while there is none), `block_test` as it takes it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn judge(
        &mut self,
        s: &Searcher,
        scorer: &DocScorer<'_>,
        cursors: &mut [Option<DoclistCursor<'_>>],
        wd: &mut [WordInDoc<'_>],
        cand: Candidate,
        worst: Option<&Match>,
        block_test: bool,
    ) -> Result<Judged> {
        match worst {
            Some(worst) => judge(
                s,
                self.b,
                scorer,
                self.scored,
                cursors,
                &mut self.pagerank,
                self.own_factors.as_deref().unwrap_or(&[]),
                &mut self.cols,
                wd,
                (cand.doc, cand.mask),
                worst,
                cand.may_complete,
                block_test,
            ),
            None => Ok(Judged::default()),
        }
    }

    /// What a document to score takes besides its counts and hits: its
    /// field lengths and PageRank, looked up unless [`Self::judge`] did
    /// (`j`), and its (PageRank, PageRank factor).
    #[inline(always)]
    pub(super) fn score_inputs(
        &mut self,
        s: &Searcher,
        query: &Query,
        scorer: &DocScorer<'_>,
        doc: u32,
        j: &mut Judged,
    ) -> Result<(Option<f64>, f64)> {
        if j.lens.is_none() {
            j.lens = s.field_lengths(doc)?;
        }
        if j.pr.is_none() {
            j.pr = match &mut self.pagerank {
                Some(f) => Some(f.get(doc)?),
                None => None,
            };
        }
        let factor = match j.factor {
            Some(f) => f,
            None => bm25::pagerank_factor(&query.bm25, scorer.stats.docs, j.pr),
        };
        Ok((j.pr, factor))
    }

    /// Whether a document may be scored: not once the safety valve fired
    /// ([`Retrieved::cut_off`] in `out`, which stops the walk).
    #[inline(always)]
    pub(super) fn may_score(&mut self, out: &mut Retrieved) -> bool {
        if self.scored_docs >= self.cutoff {
            out.cut_off = true;
            out.estimated = true;
            return false;
        }
        self.scored_docs += 1;
        true
    }

    /// The candidate's hits per class (its words `mask`) read from their
    /// count columns into `cols`, and per type into the scorer's word
    /// list `wd`, where [`Self::judge`] did not.
    pub(super) fn count(
        &mut self,
        cursors: &mut [Option<DoclistCursor<'_>>],
        wd: &mut [WordInDoc<'_>],
        mask: usize,
    ) -> Result<()> {
        let cols = &mut self.cols;
        for (k, &i) in self.scored.iter().enumerate() {
            wd[k].counts = match cursors[i].as_mut() {
                Some(c) if mask >> i & 1 == 1 => {
                    column_classes(c, &mut cols.counted_at[k], &mut cols.classes[k])?;
                    type_counts(&cols.classes[k])
                }
                _ => [0; HIT_TYPES],
            };
        }
        Ok(())
    }

    /// What the walk saw, `out` its evaluation's (its candidates counted
    /// in its work), `undecided` of its candidates left undecided.
    pub(super) fn seen(&self, out: &mut Retrieved, undecided: u64) -> Seen {
        out.work.candidates = self.evaluated;
        Seen {
            matches: out.total,
            complete: out.complete,
            evaluated: self.evaluated,
            undecided,
            postings: self.postings_seen,
        }
    }
}

/// A candidate of a [`Walk`]: its docID, the words it holds (bit `i`:
/// slot `i`), and whether it may satisfy the query.
#[derive(Clone, Copy)]
pub(super) struct Candidate {
    pub(super) doc: u32,
    pub(super) mask: usize,
    pub(super) may_complete: bool,
}

/// The scorer's word list of the words `scored` (slots), in that order,
/// their counts zero: the 2–3-word loops set only the counts from
/// document to document.
pub(super) fn word_list<'s>(
    scorer: &DocScorer<'_>,
    slots: &'s [Slot],
    scored: &[usize],
) -> Vec<WordInDoc<'s>> {
    scored
        .iter()
        .map(|&i| {
            let df = slots[i].term.as_ref().map_or(0, |t| t.df);
            WordInDoc {
                word: slots[i].word.as_str(),
                df,
                idf: scorer.stats.idf(df),
                counts: [0; HIT_TYPES],
            }
        })
        .collect()
}

/// What a candidate's count columns are read into ([`judge`]), kept from
/// candidate to candidate: per word (in the order of `scored`) its hits
/// per class and its cursor's decoded postings when its block's count
/// columns were last decoded; per slot its current postings block's
/// bound and its cursor's decoded postings then.
pub(super) struct Columns {
    /// Per word.
    pub(super) classes: [HitClasses; MAX_PLAIN],
    /// Per word.
    pub(super) counted_at: [u64; MAX_PLAIN],
    /// Per slot.
    block_text: [(f64, u64); MAX_PLAIN],
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            classes: [[0; postings::CLASSES]; MAX_PLAIN],
            counted_at: [u64::MAX; MAX_PLAIN],
            block_text: [(0.0, u64::MAX); MAX_PLAIN],
        }
    }
}

/// What [`judge`] found of a candidate before any hit is read: its
/// PageRank, field lengths and PageRank factor where it looked them up,
/// its bound (the exact text score with the proximity bonus at its bound)
/// and that text score where it passes, or that it cannot pass.
#[derive(Default)]
pub(super) struct Judged {
    pub(super) pr: Option<f64>,
    pub(super) lens: Option<[u32; N_FIELDS]>,
    pub(super) factor: Option<f64>,
    pub(super) bounded: Option<(f64, bm25::TextPart)>,
    pub(super) hopeless: bool,
}

/// Whether candidate `doc`, holding the words of `mask` (bit `i`: slot
/// `i`), may pass a full heap's worst match `worst` ([`may_pass`],
/// `may_complete` as it may be): the generic loop's bounds, cheapest
/// first, so its decisions. With `block_test`, first its words' postings
/// blocks' bounds (with the proximity bonus at its limit, as
/// [`Bounds::of_words`] has it; `Bounds::of_block` is at least
/// `Bounds::of_classes`, as block-max has it) times its own PageRank
/// factor where that is a table read, before its field lengths and counts
/// are read; then the bound from the count columns with the factor of the
/// docIDs around (or its own), its own PageRank's factor, and the exact
/// text score with the proximity bound ([`DocScorer::bound_passing`]),
/// `wd` the scorer's word list in the order of `scored` (its counts set
/// here). Always inlined: the 2–3-word loops call it per candidate.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn judge(
    s: &Searcher,
    b: &Bounds<'_>,
    scorer: &DocScorer<'_>,
    scored: &[usize],
    cursors: &mut [Option<DoclistCursor<'_>>],
    pagerank: &mut Option<PageRanks<'_>>,
    own_factors: &[f64],
    cols: &mut Columns,
    wd: &mut [WordInDoc<'_>],
    (doc, mask): (u32, usize),
    worst: &Match,
    may_complete: bool,
    block_test: bool,
) -> Result<Judged> {
    let has = |i: usize| mask >> i & 1 == 1;
    let mut j = Judged::default();
    let own = own_factors.get(doc as usize).copied();
    if let (Some(f), true) = (own, block_test) {
        let (mut sum, mut max_idf) = (0.0, 0.0f64);
        let mut rest = mask;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if let Some(c) = cursors[i].as_ref() {
                let t = &mut cols.block_text[i];
                if t.1 != c.postings_decoded() {
                    *t = (b.of_block(i, c.block_bound()), c.postings_decoded());
                }
                sum += t.0;
                max_idf = max_idf.max(b.idf[i]);
            }
        }
        if !mask.is_power_of_two() {
            sum += b.weights.proximity_weight * max_idf;
        }
        j.hopeless = !may_pass(worst, may_complete, sum * f);
    }
    if !j.hopeless && may_pass(worst, may_complete, f64::INFINITY) {
        j.lens = s.field_lengths(doc)?;
        // The bound from the count columns, as the generic loop works it
        // out ([`Bounds::of_words`]), in the order of `scored`.
        for (k, &i) in scored.iter().enumerate() {
            if !has(i) {
                continue;
            }
            if let Some(c) = cursors[i].as_mut() {
                column_classes(c, &mut cols.counted_at[k], &mut cols.classes[k])?;
            }
        }
        let sum = b.of_words(
            scored
                .iter()
                .zip(&cols.classes)
                .filter(|(&i, _)| has(i))
                .map(|(&i, c)| (i, c)),
            j.lens.as_ref(),
        );
        let around = own.unwrap_or_else(|| b.chunk_factor(doc));
        if may_pass(worst, may_complete, sum * around) {
            j.pr = match pagerank {
                Some(f) => Some(f.get(doc)?),
                None => None,
            };
            if own.is_some() || may_pass(worst, may_complete, sum * b.factor_at_most(j.pr)) {
                let f = b.factor_of(j.pr);
                j.factor = Some(f);
                j.hopeless = !may_pass(worst, may_complete, sum * f);
            } else {
                j.hopeless = true;
            }
        } else {
            j.hopeless = true;
        }
    }
    if let (false, Some(f)) = (j.hopeless, j.factor) {
        // The exact text score from the count columns, with the
        // proximity bonus at its bound.
        for (k, &i) in scored.iter().enumerate() {
            wd[k].counts = if has(i) {
                type_counts(&cols.classes[k])
            } else {
                [0; HIT_TYPES]
            };
        }
        let text = scorer.text(wd, j.lens.as_ref());
        match scorer.bound_passing(wd, &text, f, worst, may_complete) {
            Some(bound) => j.bounded = Some((bound, text)),
            None => j.hopeless = true,
        }
    } else {
        j.hopeless = true;
    }
    Ok(j)
}

/// What [`plain`] places documents' hits with: the hit lists' buffers,
/// and the documents placed and hits read, for the work counters.
#[derive(Default)]
struct Placer {
    bufs: [Vec<Hit>; MAX_PLAIN],
    placed: u64,
    /// The whole lists' hits, as the generic loop reads them.
    hits: u64,
}

impl Placer {
    /// `p` scored with its hits placed for the proximity match: of each
    /// word's hits only the fields the match reads, as the counts tell
    /// ([`ProximityPlan`]), and as the match reads them (no
    /// capitalization), with how many of its hits lead it in (field,
    /// position) order: only the rest is checked for order. A posting's
    /// block is loaded again unless its cursor stands in it.
    fn place(
        &mut self,
        p: &Pending,
        scored: &[usize],
        cursors: &mut [Option<DoclistCursor<'_>>],
        scorer: &mut DocScorer<'_>,
        wd: &[WordInDoc<'_>],
    ) -> Result<Match> {
        let plan = ProximityPlan::of(&p.classes[..p.words]);
        let mut led = [0usize; MAX_PLAIN];
        for j in 0..p.words {
            let h = &mut self.bufs[j];
            h.clear();
            led[j] = match &mut cursors[scored[p.word[j]]] {
                Some(c) => c.placed_hits_at(p.at[j], plan.read, h)?,
                None => 0,
            };
            self.hits += p.classes[j].iter().map(|&x| u64::from(x)).sum::<u64>();
        }
        self.placed += 1;
        let (ir, score) = scorer.score_placed(
            wd,
            self.bufs[..p.words].iter().map(Vec::as_slice).zip(led),
            &p.text,
            p.pagerank,
            Some(&plan),
        );
        Ok(Match {
            doc: p.doc,
            ir,
            pagerank: p.pagerank.0,
            score,
            complete: p.complete,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::bounds_for;
    use super::*;
    use proptest::prelude::*;

    /// [`CheapBound`] against `worst` of a document with counts `classes`
    /// and field lengths `lens` (`None`: not used).
    fn cheap_fails(
        bounds: &Bounds<'_>,
        worst: &Match,
        classes: &HitClasses,
        lens: &[u32; N_FIELDS],
        around: f64,
    ) -> Option<bool> {
        let all = [[0; N_FIELDS], *lens];
        let cheap = CheapBound::new(bounds, worst, &LengthsView::Memory(&all))?;
        let mut counts = [[0u32; BLOCK_DOCS]; CLASSES];
        for (col, &n) in counts.iter_mut().zip(classes) {
            col[5] = n;
        }
        Some(cheap.fails(&counts, 5, 1, around))
    }

    proptest! {
        /// What [`CheapBound`] rejects, the first bound (`of_classes`
        /// times the factor, through `may_pass`) rejects too, for any
        /// weights, averages, lengths, counts, factors and worst scores —
        /// the worst scores drawn around the bound itself, within a few
        /// parts in 10^7 either side, where rounding could tell them
        /// apart; and it does decide most documents whose bound is far
        /// below the worst score (a test that decided nothing would pass
        /// the first property too).
        #[test]
        fn cheap_bound_never_rejects_what_the_bound_passes(
            fielded in any::<bool>(),
            k1 in prop_oneof![Just(0.0f64), 0.0f64..3.0],
            b in 0.0f64..=1.0,
            field_weight in proptest::array::uniform5(prop_oneof![Just(0.0f64), 0.0f64..20.0]),
            field_b in proptest::array::uniform5(prop_oneof![Just(1.0f64), 0.0f64..=1.0]),
            avg in proptest::option::of(proptest::array::uniform5(
                prop_oneof![Just(0.0f64), 0.01f64..5000.0])),
            lens in proptest::array::uniform5(prop_oneof![Just(0u32), 0u32..100_000, Just(u32::MAX)]),
            body_only in any::<bool>(),
            classes in proptest::array::uniform8(prop_oneof![
                Just(0u32), 0u32..1000, Just(1 << 29), Just(u32::MAX)]),
            df in 1u32..1000,
            around in prop_oneof![Just(1.0f64), 1.0f64..3.0],
            near in -1e-6f64..1e-6,
            scale in prop_oneof![Just(1.0f64), 0.0f64..4.0],
        ) {
            let w = bm25::Bm25Weights { k1, b, field_weight, field_b, ..Default::default() };
            let mut bounds = bounds_for(&w, fielded, avg);
            let stats = CollectionStats { docs: 1000, avg_len: avg };
            bounds.idf = vec![stats.idf(df)];
            let mut classes = classes;
            if body_only {
                for k in [postings::TITLE, postings::ANCHOR, postings::URL, postings::LARGE] {
                    classes[k] = 0;
                }
            }
            let bound = bounds.of_classes(0, &classes, Some(&lens)) * around;
            // Both sides of where `may_pass` turns, and anywhere below or
            // above it.
            let at = bound * (1.0 + super::super::SLACK) + super::super::SLACK;
            for score in [at * (1.0 + near), at * scale, at, f64::from_bits(at.to_bits() + 1)] {
                let worst = Match { doc: 7, ir: score, pagerank: None, score, complete: true };
                if cheap_fails(&bounds, &worst, &classes, &lens, around) == Some(true) {
                    prop_assert!(
                        !may_pass(&worst, true, bound),
                        "rejected a bound {bound} that passes {score}"
                    );
                }
            }
            // Far below: decided, when the test applies (counts that
            // cannot overflow) and the bound is positive (`x > 0`).
            let worst_score = at * 2.0 + 1.0;
            let applies = classes.iter().all(|&x| x < 1 << 29)
                && bound.is_finite()
                && bound > 0.0;
            let worst = Match { doc: 7, ir: worst_score, pagerank: None, score: worst_score, complete: true };
            if applies {
                prop_assert_eq!(
                    cheap_fails(&bounds, &worst, &classes, &lens, around),
                    Some(true),
                    "bound {} against {}", bound, worst_score
                );
            }
        }
    }

    /// An incomplete worst match lets every (complete) candidate pass, and
    /// a worst score near 0, lengths not in memory or a docID past them
    /// are left to the bound.
    #[test]
    fn cheap_bound_is_off_where_it_cannot_decide() {
        let w = bm25::Bm25Weights::default();
        let mut bounds = bounds_for(&w, true, Some([10.0; N_FIELDS]));
        bounds.idf = vec![2.0];
        let worst = |score, complete| Match {
            doc: 1,
            ir: score,
            pagerank: None,
            score,
            complete,
        };
        let lens = [1, 1, 1, 1, 10];
        let body = [0, 3, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            cheap_fails(&bounds, &worst(100.0, false), &body, &lens, 1.0),
            None
        );
        assert_eq!(
            cheap_fails(&bounds, &worst(1e-9, true), &body, &lens, 1.0),
            None
        );
        assert_eq!(
            cheap_fails(&bounds, &worst(f64::NAN, true), &body, &lens, 1.0),
            None
        );
        assert!(CheapBound::new(&bounds, &worst(100.0, true), &LengthsView::Absent).is_none());
        assert_eq!(
            cheap_fails(&bounds, &worst(100.0, true), &body, &lens, 1.0),
            Some(true)
        );
        // A title hit is decided too; sums that overflow are not.
        let title = [0, 3, 0, 0, 0, 1, 0, 0];
        assert_eq!(
            cheap_fails(&bounds, &worst(100.0, true), &title, &lens, 1.0),
            Some(true)
        );
        assert_eq!(
            cheap_fails(&bounds, &worst(1.0, true), &title, &lens, 1.0),
            Some(false)
        );
        let huge = [u32::MAX, 1, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            cheap_fails(&bounds, &worst(100.0, true), &huge, &lens, 1.0),
            Some(false)
        );
        // A docID past the lengths.
        let all = [lens];
        let cheap =
            CheapBound::new(&bounds, &worst(100.0, true), &LengthsView::Memory(&all)).unwrap();
        let mut counts = [[0u32; BLOCK_DOCS]; CLASSES];
        counts[1][0] = 3;
        assert!(cheap.fails(&counts, 0, 0, 1.0));
        assert!(!cheap.fails(&counts, 0, 1, 1.0));
    }
}

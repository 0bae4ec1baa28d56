//! The ranking function of Brin & Page §4.5.1, and its one table of weights.
//!
//! A document's hit lists for the query words are turned into numbers in
//! three steps, each of which `--explain` shows:
//!
//! 1. **Counts by type.** Every hit has a [`HitType`]: title, anchor, URL,
//!    or a plain hit by its relative font size (large, bold, normal, small).
//!    Per word, the hits of each type are counted.
//! 2. **Count-weights.** A count `n` becomes `cw(n) = n` up to the type's
//!    knee `K`, then `K + (C − K)(1 − e^(−(n − K)/(C − K)))`, rising towards
//!    the type's cap `C`: linear, then tapering (the
//!    paper: "count-weights increase linearly with counts at first but
//!    quickly taper off so that more than a certain count will not help").
//!    The slope is 1 at the knee, so the curve is smooth.
//! 3. **Proximity** (several words). The hits of the words are matched up
//!    ([`Scorer`]): for each hit of the word with the fewest hits (the
//!    *pivot*), every other word contributes its hit in the same field (page
//!    text, URL, title, or the anchors of one source) nearest to where a
//!    phrase would put it. The matched set's spread falls in one of
//!    [`PROX_BINS`] bins, from an exact phrase (bin 0) to "not even close"
//!    (bin 9: another field, a position clamped at the end of a long page, or
//!    more than 127 words apart); see [`prox_bin`]. Matched sets are counted
//!    per (type of the pivot hit, bin).
//!
//! The IR score is the dot product of the count-weights with the weights:
//! `Σ_word Σ_type type_weight[type] · cw(count) + Σ_(type,bin)
//! type_prox_weight[type][bin] · cw(count)`. With a PageRank vector the final
//! score is `ir · (1 + pagerank_weight · ln(1 + N · pr))`, where `N · pr` is
//! the PageRank relative to the average page (1 for an average page), so
//! PageRank orders documents of similar text relevance and cannot lift an
//! irrelevant one: a page 100× the average PageRank scores
//! `1 + 4.6 · pagerank_weight` times its IR score.
//!
//! All weights are in [`RankingWeights`], measured as its docs say.

use serde::{Deserialize, Serialize};

use crate::index::hit::{
    FancyType, Hit, HitFields, FANCY_FONT, MAX_ANCHOR_POSITION, MAX_PLAIN_POSITION,
};
use crate::index::postings::{self, HitClasses, CLASSES};

/// Words whose hit lists a match keeps on the stack, as many as a query
/// searches (`search::query::MAX_QUERY_WORDS`, not imported: the query
/// layer sits on this one); more go to the heap.
const INLINE_WORDS: usize = 32;

/// Hit types.
pub const HIT_TYPES: usize = 7;
/// Proximity bins.
pub const PROX_BINS: usize = 10;

/// The type of a hit, for ranking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HitType {
    /// A word of the document's title.
    Title,
    /// A word of the anchor text of a link to the document.
    Anchor,
    /// A word of the document's URL.
    Url,
    /// A plain hit in large type: relative font ≥ 3 (`h1`–`h4` over body text).
    Large,
    /// A plain hit one size up: relative font 2 (bold, `h5`/`h6`, `big`).
    Bold,
    /// A plain hit in the body text size (relative font 1).
    Plain,
    /// A plain hit in small type (relative font 0: `small`, footnotes).
    Small,
}

impl HitType {
    /// Every type, in table order.
    pub const ALL: [HitType; HIT_TYPES] = [
        HitType::Title,
        HitType::Anchor,
        HitType::Url,
        HitType::Large,
        HitType::Bold,
        HitType::Plain,
        HitType::Small,
    ];

    /// Its index in the weight tables.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            HitType::Title => "title",
            HitType::Anchor => "anchor",
            HitType::Url => "url",
            HitType::Large => "large",
            HitType::Bold => "bold",
            HitType::Plain => "plain",
            HitType::Small => "small",
        }
    }

    /// The type of a hit (meta and reserved fancy hits count as plain).
    #[inline]
    pub fn of(hit: Hit) -> HitType {
        match hit.fields() {
            HitFields::Plain { font, .. } => match font {
                0 => HitType::Small,
                1 => HitType::Plain,
                2 => HitType::Bold,
                _ => HitType::Large,
            },
            HitFields::Anchor { .. } => HitType::Anchor,
            HitFields::Fancy { kind, .. } => match kind {
                FancyType::Url => HitType::Url,
                FancyType::Title => HitType::Title,
                _ => HitType::Plain,
            },
        }
    }
}

/// Every weight of the ranking function, in one table.
///
/// | type   | weight | knee | cap |
/// |--------|-------:|-----:|----:|
/// | title  | 24     | 2    | 3   |
/// | anchor | 12     | 2    | 3   |
/// | URL    | 8      | 2    | 3   |
/// | large  | 6      | 4    | 8   |
/// | bold   | 3      | 4    | 8   |
/// | plain  | 1      | 4    | 8   |
/// | small  | 0.5    | 4    | 8   |
///
/// `type_prox_weight[t][b] = type_weight[t] · prox[b]`, `prox` = 16, 8, 6,
/// 4, 2.4, 1.6, 1, 0.4, 0.2, 0 from phrase (bin 0) to not even close (bin
/// 9); `pagerank_weight` = 0.1.
///
/// The defaults were chosen by measurement: `cargo bench --bench search`
/// runs the title-query test ([`super::titles`]) on two Debian
/// documentation sites (rust-doc, llvm-16-doc) with these weights and with
/// each part changed in turn; ARCHITECTURE.md ("Search quality") has the
/// table. What it showed (MRR@10 on 1000 rust-doc / 262 llvm titles):
///
/// * **tapering to a cap** matters most (0.986 / 1.000; without it 0.244 /
///   0.635, with caps ×4 0.475 / 0.923): a documentation site's navigation
///   repeats a page's name as anchor text from hundreds of pages (every
///   page of the Unstable Book links to every other: 601 anchor hits), and
///   reference pages repeat their type names hundreds of times; "more than
///   a certain count will not help" has to be a ceiling, not a logarithm.
/// * **type weights**: all 1 gives 0.310 / 0.837, title = plain 0.436 /
///   0.854; anchors and URLs at the plain weight cost little here (0.978,
///   0.980) — a site's own anchors say what its titles say.
/// * **proximity**: none gives 0.523 / 0.901; ×2 or ÷2 within 0.01. The
///   phrase in the title is what separates `Vec in alloc::vec` from
///   `Vec in std::vec`, which hold the same words.
/// * **PageRank** (`score = ir · (1 + w · ln(1 + N · pr))`): 0, 0.05 and 0.1
///   within 0.002 of each other on title queries, ×4 (0.4) 0.560 / 0.992: a
///   site's index pages have the highest PageRank and mention every name.
///   It stays at 0.1 to order one-word queries among pages of equal text
///   relevance (`vec`: the `Vec` pages, then the `vec` modules).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankingWeights {
    /// Weight of one hit of each [`HitType`] (at counts below the knee).
    pub type_weight: [f64; HIT_TYPES],
    /// Count at which each type's count-weight stops growing linearly.
    pub knee: [f64; HIT_TYPES],
    /// The value each type's count-weight tapers towards.
    pub cap: [f64; HIT_TYPES],
    /// Weight of a matched set of hits per (type, proximity bin).
    pub type_prox_weight: [[f64; PROX_BINS]; HIT_TYPES],
    /// How much PageRank scales the IR score (0: not at all).
    pub pagerank_weight: f64,
}

/// The default knees, in [`HitType::ALL`] order.
pub const DEFAULT_KNEE: [f64; HIT_TYPES] = [2.0, 2.0, 2.0, 4.0, 4.0, 4.0, 4.0];
/// The default caps, in [`HitType::ALL`] order.
pub const DEFAULT_CAP: [f64; HIT_TYPES] = [3.0, 3.0, 3.0, 8.0, 8.0, 8.0, 8.0];

/// The default proximity factors, phrase to not even close.
pub const DEFAULT_PROX: [f64; PROX_BINS] = [16.0, 8.0, 6.0, 4.0, 2.4, 1.6, 1.0, 0.4, 0.2, 0.0];

impl Default for RankingWeights {
    fn default() -> Self {
        let type_weight = [24.0, 12.0, 8.0, 6.0, 3.0, 1.0, 0.5];
        RankingWeights::with_prox(type_weight, DEFAULT_KNEE, DEFAULT_CAP, DEFAULT_PROX, 0.1)
    }
}

impl RankingWeights {
    /// Weights whose type-prox-weights are `type_weight[t] · prox[b]`.
    pub fn with_prox(
        type_weight: [f64; HIT_TYPES],
        knee: [f64; HIT_TYPES],
        cap: [f64; HIT_TYPES],
        prox: [f64; PROX_BINS],
        pagerank_weight: f64,
    ) -> RankingWeights {
        let mut type_prox_weight = [[0.0; PROX_BINS]; HIT_TYPES];
        for (t, row) in type_prox_weight.iter_mut().enumerate() {
            for (b, w) in row.iter_mut().enumerate() {
                *w = type_weight[t] * prox[b];
            }
        }
        RankingWeights {
            type_weight,
            knee,
            cap,
            type_prox_weight,
            pagerank_weight,
        }
    }

    /// At least the proximity score ([`Scorer::proximity`]) of a document
    /// whose query words have these hit counts per type (in query order,
    /// zeros for an absent word), without placing a hit; see
    /// [`ProximityBound`], which a query works out once.
    pub fn proximity_bound(&self, counts: &[[u32; HIT_TYPES]]) -> f64 {
        ProximityBound::new(self).of(counts)
    }

    /// The count-weight of `n` hits (or matched sets) of type `t`: `n` up to
    /// the knee `K`, then `K + (C − K)(1 − e^{−(n − K)/(C − K)})` towards
    /// the cap `C` (slope 1 at the knee); `K` past it when `C ≤ K`.
    #[inline]
    pub fn count_weight(&self, t: HitType, n: u32) -> f64 {
        let n = f64::from(n);
        let k = self.knee[t.index()].max(1.0);
        let room = self.cap[t.index()] - k;
        if n <= k || room <= 0.0 {
            n.min(k)
        } else {
            k + room * (1.0 - (-(n - k) / room).exp())
        }
    }

    /// The final score from the IR score and the PageRank `pr` of a document
    /// in a collection of `docs` documents.
    #[inline]
    pub fn combine(&self, ir: f64, pr: Option<f64>, docs: u64) -> f64 {
        match pr {
            Some(pr) => ir * self.pagerank_factor(pr, docs),
            None => ir,
        }
    }

    /// `1 + pagerank_weight · ln(1 + docs · pr)`.
    #[inline]
    pub fn pagerank_factor(&self, pr: f64, docs: u64) -> f64 {
        pagerank_factor_with(self.pagerank_weight, pr, docs, f64::ln_1p)
    }
}

/// [`RankingWeights::pagerank_factor`] with the `ln_1p` it takes given:
/// `f64::ln_1p` for the factor itself, an upper bound of it for an upper
/// bound of the factor (the weight being non-negative), so that pruning's
/// bound and the score share one formula.
#[inline]
pub fn pagerank_factor_with(
    weight: f64,
    pr: f64,
    docs: u64,
    ln_1p: impl FnOnce(f64) -> f64,
) -> f64 {
    1.0 + weight * ln_1p(docs as f64 * pr.max(0.0))
}

/// [`RankingWeights::proximity_bound`] with its per-query part worked
/// out once: per type, the type-prox-weights from the heaviest down and
/// the most one bin's count-weight can be.
#[derive(Clone, Debug)]
pub struct ProximityBound {
    /// Per type, its type-prox-weights sorted from the heaviest down.
    sorted: [[f64; PROX_BINS]; HIT_TYPES],
    /// Per type, the sums of its first `k` sorted weights (index `k`),
    /// each at `per_bin`: what `k` full bins add.
    full: [[f64; PROX_BINS + 1]; HIT_TYPES],
    /// Per type, `max(knee, 1, cap)`.
    per_bin: [f64; HIT_TYPES],
    /// Per type, some weight of it is negative or NaN: no bound.
    unbounded: [bool; HIT_TYPES],
    /// Per type, its type-prox-weight in the last bin (not even close):
    /// where every hit of a field no other word has hits in goes.
    last: [f64; HIT_TYPES],
}

/// The types of the page text's hits (bit `1 << index`), which share one
/// field.
const TEXT_TYPES: u8 = 1 << HitType::Large as u8
    | 1 << HitType::Bold as u8
    | 1 << HitType::Plain as u8
    | 1 << HitType::Small as u8;

/// The types (bit `1 << index`) of a pivot's hits that a word with hits
/// of the types `has` (bit `1 << index`) can share a field with: a title
/// hit is matched only with title hits, a URL hit with URL hits, an anchor
/// hit with anchor hits (of its own source, which counts do not tell),
/// and a hit of the page text (large, bold, plain, small type) with page
/// text hits. Meta hits count as plain and are matched with meta hits,
/// which count as plain too, so the page text's set covers them. A pivot
/// hit whose field some other word cannot share lands in the last bin
/// whatever the positions ([`Scorer::bin_of`]).
#[inline]
fn reach(has: u8) -> u8 {
    let fancy = has & !TEXT_TYPES;
    if has & TEXT_TYPES != 0 {
        fancy | TEXT_TYPES
    } else {
        fancy
    }
}

impl ProximityBound {
    /// The bound's per-query part for weights `w`.
    pub fn new(w: &RankingWeights) -> ProximityBound {
        let mut sorted = w.type_prox_weight;
        let mut unbounded = [false; HIT_TYPES];
        for (row, u) in sorted.iter_mut().zip(&mut unbounded) {
            *u = row.iter().any(|&x| x < 0.0 || x.is_nan());
            row.sort_by(|a, b| b.total_cmp(a));
        }
        let mut per_bin = [0.0; HIT_TYPES];
        for (t, p) in per_bin.iter_mut().enumerate() {
            *p = w.knee[t].max(1.0).max(w.cap[t]);
        }
        let mut last = [0.0; HIT_TYPES];
        for (l, row) in last.iter_mut().zip(&w.type_prox_weight) {
            *l = row[PROX_BINS - 1];
        }
        let mut full = [[0.0; PROX_BINS + 1]; HIT_TYPES];
        for ((f, row), &p) in full.iter_mut().zip(&sorted).zip(&per_bin) {
            for (k, &x) in row.iter().enumerate() {
                f[k + 1] = f[k] + x * p;
            }
        }
        ProximityBound {
            sorted,
            full,
            per_bin,
            unbounded,
            last,
        }
    }

    /// At least the proximity score ([`Scorer::proximity`]) of a document
    /// whose query words have these hit counts per type (in query order,
    /// zeros for an absent word), without placing a hit: the pivot (the
    /// present word with fewest hits, the first such, as `pivot_of`
    /// picks it) puts each of its hits of type `t` in one bin, and a bin's
    /// count-weight is at most `min(count, max(knee, cap))` (slope ≤ 1,
    /// never above the cap), so the most its hits can add is their count
    /// spread over the bins from the heaviest down, at most that much per
    /// bin. Hits of a type whose field some other present word has no hit
    /// in ([`reach`]) all land in the last bin: thousands of
    /// rust-doc's redirect pages hold "redirection" in the title alone,
    /// and bounding its title hit at the phrase bin (24 · 16) let every one
    /// of them through to have its hits read ("to redirection": 9,579 of
    /// 10,031 candidates).
    pub fn of<'c, I>(&self, counts: I) -> f64
    where
        I: IntoIterator<Item = &'c [u32; HIT_TYPES]>,
    {
        // One pass: the pivot, and what the other present words reach.
        // A word's reach is kept until the next word shows whether it is
        // the pivot; `reached` is what every present word but the pivot
        // reaches (bit per type of the pivot's hits).
        let mut pivot: Option<(u64, &[u32; HIT_TYPES], u8)> = None;
        let mut reached = u8::MAX;
        let mut present = 0;
        for c in counts {
            let (mut n, mut has) = (0u64, 0u8);
            for (t, &x) in c.iter().enumerate() {
                n += u64::from(x);
                has |= u8::from(x > 0) << t;
            }
            if n == 0 {
                continue;
            }
            present += 1;
            let r = reach(has);
            match pivot {
                Some((m, _, _)) if n >= m => reached &= r,
                Some((_, _, pr)) => {
                    reached &= pr;
                    pivot = Some((n, c, r));
                }
                None => pivot = Some((n, c, r)),
            }
        }
        let Some((_, pivot, _)) = pivot.filter(|_| present > 1) else {
            return 0.0;
        };
        let mut b = 0.0;
        for t in HitType::ALL {
            let n = pivot[t.index()];
            if n == 0 {
                continue;
            }
            if self.unbounded[t.index()] {
                return f64::INFINITY;
            }
            let per_bin = self.per_bin[t.index()];
            let n = f64::from(n);
            if reached >> t.index() & 1 == 0 {
                // All of them in the last bin: one count-weight.
                b += self.last[t.index()] * n.min(per_bin);
                continue;
            }
            // The count spread over the bins from the heaviest down, at
            // most `per_bin` a bin: `k` full bins, then what is left in
            // the next. The rounded quotient is never below the exact
            // one, so `k` is at least the full bins' count; one over (an
            // exact quotient just below a whole number) leaves nothing
            // over and adds a whole bin more: still at least the spread.
            let k = ((n / per_bin).floor() as usize).min(PROX_BINS);
            b += self.full[t.index()][k];
            if let Some(&x) = self.sorted[t.index()].get(k) {
                b += x * (n - k as f64 * per_bin).clamp(0.0, per_bin);
            }
        }
        b * (1.0 + 1e-9) + 1e-9
    }
}

/// The field a hit is in, for proximity: hits are matched within one field.
const FIELD_TEXT: u16 = 0;
const FIELD_URL: u16 = 1;
const FIELD_TITLE: u16 = 2;
const FIELD_META: u16 = 3;
/// Anchor hits: `FIELD_ANCHOR + source hash`.
const FIELD_ANCHOR: u16 = 16;

/// One hit, placed for matching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Placed {
    field: u16,
    pos: u16,
    ty: HitType,
    /// The position was clamped (the end of a long page or anchor).
    clamped: bool,
}

fn place(h: Hit) -> Placed {
    let ty = HitType::of(h);
    let (field, pos, clamped) = match h.fields() {
        HitFields::Plain { position, .. } => (
            FIELD_TEXT,
            position,
            u32::from(position) >= MAX_PLAIN_POSITION,
        ),
        HitFields::Anchor {
            source, position, ..
        } => (
            FIELD_ANCHOR + u16::from(source),
            u16::from(position),
            u32::from(position) >= MAX_ANCHOR_POSITION,
        ),
        HitFields::Fancy { kind, position, .. } => (
            match kind {
                FancyType::Url => FIELD_URL,
                FancyType::Title => FIELD_TITLE,
                _ => FIELD_META,
            },
            u16::from(position),
            false,
        ),
    };
    Placed {
        field,
        pos,
        ty,
        clamped,
    }
}

/// Where a hit stands for phrase matching: (field, position, clamped). The
/// field is the page text, the URL, the title, the meta text, or the
/// anchors of one source (by its hash); a clamped position (the end of a
/// long page or anchor) is not where the word stands.
pub fn field_position(h: Hit) -> (u16, u16, bool) {
    let p = place(h);
    (p.field, p.pos, p.clamped)
}

/// Sorts hits by (field, position), the only order matching looks at.
fn sort_by_field_and_position(placed: &mut [Placed], scratch: &mut Vec<Placed>) {
    sort_field_position(placed, |p| (p.field, p.pos), scratch);
}

/// Sorts `items` by `key`, a hit's (field, position). A hit list is its
/// plain hits in position order, then its URL, title and anchor hits (URL
/// and title each in position order, anchor hits by source hash and
/// position since barrel version 6), so the sorted prefix is found first
/// and is most often the whole list. When what follows the hits before the
/// anchors is anchor hits alone in another order (hit lists not read from
/// a barrel) their (source hash, position) takes one of 256 values
/// and they are counted into place (pages with hundreds of anchor hits are
/// common); items of equal key are then equal (same type, same clamping), so
/// the order is the one a comparison sort gives. Otherwise the rest is
/// sorted and merged with the prefix when they overlap.
pub(crate) fn sort_field_position<T: Copy>(
    items: &mut [T],
    key: impl Fn(&T) -> (u16, u16),
    scratch: &mut Vec<T>,
) {
    let run = items
        .windows(2)
        .take_while(|w| key(&w[0]) <= key(&w[1]))
        .count()
        + 1;
    if run >= items.len() {
        return;
    }
    let anchor = |k: (u16, u16)| {
        (FIELD_ANCHOR..FIELD_ANCHOR + 16).contains(&k.0) && u32::from(k.1) <= MAX_ANCHOR_POSITION
    };
    // The anchor hits: from the first in the sorted prefix to the end.
    let start = items[..run].partition_point(|t| key(t).0 < FIELD_ANCHOR);
    let anchors = &mut items[start..];
    if anchors.len() >= ANCHOR_COUNTING_SORT && anchors.iter().all(|t| anchor(key(t))) {
        let slot = |k: (u16, u16)| usize::from(k.0 - FIELD_ANCHOR) << 4 | usize::from(k.1);
        let mut at = [0u32; 257];
        for t in anchors.iter() {
            at[slot(key(t)) + 1] += 1;
        }
        for i in 1..at.len() {
            at[i] += at[i - 1];
        }
        scratch.clear();
        scratch.extend_from_slice(anchors);
        for t in scratch.iter() {
            let s = slot(key(t));
            anchors[at[s] as usize] = *t;
            at[s] += 1;
        }
        return;
    }
    items[run..].sort_unstable_by_key(&key);
    if key(&items[run - 1]) > key(&items[run]) {
        items.sort_by_key(key);
    }
}

/// Unsorted anchor hits from which counting beats sorting.
const ANCHOR_COUNTING_SORT: usize = 24;

/// The proximity bin of a matched set of `n` hits spanning `span` positions
/// (largest minus smallest), `phrase` when they stand in query order one
/// after the other: 0 phrase; then by the slack `d = span − (n − 1)`: 1 for
/// `d ≤ 0` (adjacent, out of order), 2 for `d ≤ 1`, 3 for ≤ 3, 4 for ≤ 7, 5
/// for ≤ 15, 6 for ≤ 31, 7 for ≤ 63, 8 for ≤ 127, 9 beyond.
pub fn prox_bin(n: usize, span: u32, phrase: bool) -> usize {
    if phrase {
        return 0;
    }
    let d = i64::from(span) - (n as i64 - 1);
    match d {
        i64::MIN..=0 => 1,
        1 => 2,
        2..=3 => 3,
        4..=7 => 4,
        8..=15 => 5,
        16..=31 => 6,
        32..=63 => 7,
        64..=127 => 8,
        _ => 9,
    }
}

/// What the ranking saw of one word in one document.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WordExplain {
    /// The word.
    pub word: String,
    /// Per hit type with hits: (type, count, count-weight, weight, count-weight · weight).
    pub types: Vec<(HitType, u32, f64, f64, f64)>,
}

/// A (type, proximity bin) with matched sets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProxExplain {
    /// Type of the pivot hit.
    pub ty: HitType,
    /// Bin, 0 (phrase) to 9 (not even close).
    pub bin: usize,
    /// Matched sets.
    pub count: u32,
    /// Their count-weight.
    pub count_weight: f64,
    /// The type-prox-weight.
    pub weight: f64,
    /// `count_weight · weight`.
    pub contribution: f64,
}

/// The numbers behind one result's score (the paper's debug mode).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Explain {
    /// Per query word.
    pub words: Vec<WordExplain>,
    /// Per (type, bin) with matched sets (several words only).
    pub proximity: Vec<ProxExplain>,
    /// The IR score: the sum of every contribution.
    pub ir: f64,
    /// The document's PageRank, when the job has ranks.
    pub pagerank: Option<f64>,
    /// `1 + pagerank_weight · ln(1 + N · pr)` (1 without ranks).
    pub pagerank_factor: f64,
    /// `ir · pagerank_factor`.
    pub score: f64,
}

/// A document's matched sets counted per (type of the pivot hit, bin).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ProxCounts {
    counts: [[u32; PROX_BINS]; HIT_TYPES],
    /// Per type, the bins counted in (bit `1 << bin`): the scores add
    /// those alone, and a document's match clears those alone (a walk of
    /// all 70 was a tenth of a placed document's scoring on rust-doc).
    bins: [u16; HIT_TYPES],
}

impl ProxCounts {
    /// Clears the counts.
    fn clear(&mut self) {
        for (row, bins) in self.counts.iter_mut().zip(&mut self.bins) {
            if *bins != 0 {
                *row = [0; PROX_BINS];
                *bins = 0;
            }
        }
    }

    /// Counts `n` (> 0) matched sets of type `t` in `bin`.
    #[inline]
    fn add(&mut self, t: HitType, bin: usize, n: u32) {
        self.counts[t.index()][bin] += n;
        self.bins[t.index()] |= 1 << bin;
    }

    /// Calls `f(type, bin, count)` for every (type, bin) counted in, types
    /// in table order, bins from the phrase's up: the order the scores add
    /// them in.
    #[inline]
    fn each(&self, mut f: impl FnMut(HitType, usize, u32)) {
        for t in HitType::ALL {
            let mut bins = self.bins[t.index()];
            while bins != 0 {
                let b = bins.trailing_zeros() as usize;
                bins &= bins - 1;
                f(t, b, self.counts[t.index()][b]);
            }
        }
    }
}

/// Scores documents from their hit lists; keeps its buffers between calls.
#[derive(Default)]
pub struct Scorer {
    words: Vec<Vec<Placed>>,
    counts: Vec<[u32; HIT_TYPES]>,
    prox: ProxCounts,
    /// The counting sort's copy of anchor hits.
    scratch: Vec<Placed>,
    /// Per word, its hits sorted by (field, position) when the list was
    /// not ([`Self::load_proximity`]).
    sorted: Vec<Vec<Hit>>,
    /// The counting sort's copy of anchor hits, for `sorted`.
    hit_scratch: Vec<Hit>,
    /// Per word, where the last search in its list ended
    /// ([`bin_in_lists`]).
    from: Vec<usize>,
}

impl Scorer {
    /// A scorer.
    pub fn new() -> Scorer {
        Scorer::default()
    }

    /// Loads the hit lists of the query words (in query order) of one
    /// document and computes the counts.
    pub fn load<'h>(&mut self, hits: impl IntoIterator<Item = &'h [Hit]>) {
        let mut n = 0;
        for list in hits {
            if self.words.len() <= n {
                self.words.push(Vec::new());
                self.counts.push([0; HIT_TYPES]);
            }
            let placed = &mut self.words[n];
            placed.clear();
            let counts = &mut self.counts[n];
            *counts = [0; HIT_TYPES];
            for &h in list {
                let p = place(h);
                counts[p.ty.index()] += 1;
                placed.push(p);
            }
            n += 1;
        }
        self.words.truncate(n);
        self.counts.truncate(n);
        let pivot = pivot_of(self.words.iter().map(Vec::len));
        self.match_proximity(pivot);
    }

    /// Loads the hit lists of the query words (in query order) of one
    /// document for its proximity score ([`Self::proximity`]) alone: no
    /// per-type counts are taken ([`Self::counts`] is empty). The same
    /// proximity score as [`Self::load`], without placing the other words'
    /// hits: a hit list as a barrel gives it is already in (field,
    /// position) order ([`sorted_hits`]), so only the pivot's few hits are
    /// placed and the others' nearest hits are found by binary search in
    /// the lists themselves. Placing, filtering and sorting every hit of
    /// every word made this 14% of `Searcher::search`'s samples on
    /// rust-doc, most of it for the words with the most hits, which the
    /// match only probes.
    pub fn load_proximity(&mut self, lists: &[&[Hit]]) {
        self.load_proximity_led(lists, |_| 0);
    }

    /// [`Self::load_proximity`] of lists whose first `led(k)` hits (list
    /// `k`) are known to be in (field, position) order, as a barrel's
    /// decoder says ([`crate::index::DoclistCursor::placed_hits`]): only
    /// the rest is checked ([`sorted_hits`]). Checking every hit was ~9%
    /// of a 2–3-word query's instructions.
    pub fn load_proximity_led(&mut self, lists: &[&[Hit]], led: impl Fn(usize) -> usize) {
        let plan = ProximityPlan {
            pivot: pivot_of(lists.iter().map(|l| l.len())),
            read: u8::MAX,
            unmatched: [0; HIT_TYPES],
        };
        self.load_proximity_planned(lists, led, &plan);
    }

    /// [`Self::load_proximity_led`] of lists read as `plan` says
    /// ([`ProximityPlan::of`] the words' counts): its pivot's, and of
    /// every list only the hits of the fields the pivot's hits are
    /// matched in; the pivot's other hits, `plan.unmatched`, are counted
    /// in the last bin, where matching them would put them.
    pub fn load_proximity_planned(
        &mut self,
        lists: &[&[Hit]],
        led: impl Fn(usize) -> usize,
        plan: &ProximityPlan,
    ) {
        let n = lists.len();
        self.counts.clear();
        self.words.clear();
        self.prox.clear();
        if n < 2 {
            return;
        }
        let pivot = plan.pivot;
        if self.sorted.len() < n {
            self.sorted.resize_with(n, Vec::new);
        }
        let (mut small, mut large) = ([&[][..]; INLINE_WORDS], Vec::new());
        let views = sorted_views(
            (n, pivot),
            |k| (lists[k], led(k)),
            &mut self.sorted,
            &mut self.hit_scratch,
            (&mut small, &mut large),
        );
        self.from.clear();
        self.from.resize(n, 0);
        for &h in views[pivot] {
            let p = place(h);
            let bin = bin_in_lists(views, pivot, &p, &mut self.from);
            self.prox.add(p.ty, bin, 1);
        }
        for t in HitType::ALL {
            let c = plan.unmatched[t.index()];
            if c > 0 {
                self.prox.add(t, PROX_BINS - 1, c);
            }
        }
    }

    /// Counts matched sets per (type, bin): for each hit of the pivot word
    /// (fewest hits; the first such in query order, [`pivot_of`]), the
    /// other words' hits in the same field nearest to where a phrase would
    /// put them.
    fn match_proximity(&mut self, pivot: usize) {
        self.prox.clear();
        let n = self.words.len();
        if n < 2 {
            return;
        }
        for placed in &mut self.words {
            sort_by_field_and_position(placed, &mut self.scratch);
        }
        for h in &self.words[pivot] {
            let bin = self.bin_of(pivot, h);
            self.prox.add(h.ty, bin, 1);
        }
    }

    fn bin_of(&self, pivot: usize, h: &Placed) -> usize {
        let n = self.words.len();
        if h.clamped {
            return PROX_BINS - 1;
        }
        let (mut lo, mut hi) = (i64::from(h.pos), i64::from(h.pos));
        let mut phrase = true;
        for (j, other) in self.words.iter().enumerate() {
            if j == pivot {
                continue;
            }
            let expected = i64::from(h.pos) + j as i64 - pivot as i64;
            let Some(q) = nearest(other, h.field, expected) else {
                return PROX_BINS - 1;
            };
            if q.clamped {
                return PROX_BINS - 1;
            }
            let q = i64::from(q.pos);
            phrase &= q == expected;
            lo = lo.min(q);
            hi = hi.max(q);
        }
        prox_bin(n, (hi - lo) as u32, phrase)
    }

    /// The loaded words' hit counts per [`HitType`], in load order.
    pub fn counts(&self) -> &[[u32; HIT_TYPES]] {
        &self.counts
    }

    /// The proximity part of the IR score: `Σ_(type,bin)
    /// type_prox_weight[type][bin] · cw(count)` (0 for fewer than two
    /// words).
    pub fn proximity(&self, w: &RankingWeights) -> f64 {
        let mut p = 0.0;
        self.prox
            .each(|t, b, c| p += w.type_prox_weight[t.index()][b] * w.count_weight(t, c));
        p
    }

    /// The IR score of the loaded document.
    pub fn ir(&self, w: &RankingWeights) -> f64 {
        let mut ir = 0.0;
        for counts in &self.counts {
            for t in HitType::ALL {
                let c = counts[t.index()];
                if c > 0 {
                    ir += w.type_weight[t.index()] * w.count_weight(t, c);
                }
            }
        }
        self.prox
            .each(|t, b, c| ir += w.type_prox_weight[t.index()][b] * w.count_weight(t, c));
        ir
    }

    /// The loaded document's numbers, for `--explain`.
    pub fn explain(
        &self,
        words: &[String],
        w: &RankingWeights,
        pagerank: Option<f64>,
        docs: u64,
    ) -> Explain {
        let mut e = Explain::default();
        for (i, counts) in self.counts.iter().enumerate() {
            let mut we = WordExplain {
                word: words.get(i).cloned().unwrap_or_default(),
                types: Vec::new(),
            };
            for t in HitType::ALL {
                let c = counts[t.index()];
                if c > 0 {
                    let cw = w.count_weight(t, c);
                    let tw = w.type_weight[t.index()];
                    we.types.push((t, c, cw, tw, cw * tw));
                }
            }
            e.words.push(we);
        }
        self.prox.each(|t, bin, count| {
            let count_weight = w.count_weight(t, count);
            let weight = w.type_prox_weight[t.index()][bin];
            e.proximity.push(ProxExplain {
                ty: t,
                bin,
                count,
                count_weight,
                weight,
                contribution: count_weight * weight,
            });
        });
        e.ir = self.ir(w);
        e.pagerank = pagerank;
        e.pagerank_factor = pagerank.map_or(1.0, |pr| w.pagerank_factor(pr, docs));
        e.score = w.combine(e.ir, pagerank, docs);
        e
    }
}

/// The pivot of the proximity match: the word with the fewest hits, the
/// first such in query order (0 for none).
fn pivot_of(lens: impl Iterator<Item = usize>) -> usize {
    lens.enumerate()
        .min_by_key(|&(i, len)| (len, i))
        .map_or(0, |(i, _)| i)
}

/// Per postings class, the classes whose hits stand in the fields its
/// hits stand in (bit `1 << class`): page text (small, plain, bold and
/// large type), URL, title, anchors, meta (the other class).
const CLASS_FIELDS: [u8; CLASSES] = {
    const TEXT: u8 =
        1 << postings::SMALL | 1 << postings::PLAIN | 1 << postings::BOLD | 1 << postings::LARGE;
    [
        TEXT,
        TEXT,
        TEXT,
        TEXT,
        1 << postings::URL,
        1 << postings::TITLE,
        1 << postings::ANCHOR,
        1 << postings::OTHER,
    ]
};

/// Per postings class, the type of its hits ([`HitType::of`]: meta and
/// reserved hits count as plain; also what a word's counts per class
/// add up to per type in `retrieve`).
pub(super) const CLASS_TYPES: [HitType; CLASSES] = [
    HitType::Small,
    HitType::Plain,
    HitType::Bold,
    HitType::Large,
    HitType::Url,
    HitType::Title,
    HitType::Anchor,
    HitType::Plain,
];

/// What a document's proximity match reads of its words' hits, from
/// their counts per postings class alone: a pivot's hit is matched only
/// with the other words' hits of its own field, and lands in the last bin
/// when some other word has no hit in that field at all (as
/// [`ProximityBound`] bounds it). So of every word only the hits of the
/// fields where the pivot has hits and every other word too are read; the
/// pivot's other hits go to the last bin uncounted by position. On
/// rust-doc a pivot with body text hits alone skips the other words'
/// title, URL and anchor hits, and one in the URL or title alone skips
/// their whole body text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProximityPlan {
    /// The pivot, as [`Scorer::load_proximity`] picks it from the full
    /// lists.
    pub pivot: usize,
    /// The classes read of every word (bit `1 << class`).
    pub read: u8,
    /// Per [`HitType`], the pivot's hits not read.
    pub unmatched: [u32; HIT_TYPES],
}

impl ProximityPlan {
    /// The plan for the words (present ones, in query order) with these
    /// hit counts per class.
    pub fn of(classes: &[HitClasses]) -> ProximityPlan {
        let pivot = pivot_of(
            classes
                .iter()
                .map(|c| c.iter().map(|&x| x as usize).sum::<usize>()),
        );
        // The classes of the fields in which a word of these counts has
        // hits.
        let fields = |c: &HitClasses| {
            c.iter()
                .zip(CLASS_FIELDS)
                .fold(0u8, |m, (&x, f)| if x > 0 { m | f } else { m })
        };
        let mut plan = ProximityPlan {
            pivot,
            read: 0,
            unmatched: [0; HIT_TYPES],
        };
        let Some(own) = classes.get(pivot) else {
            return plan;
        };
        plan.read = classes
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != pivot)
            .fold(fields(own), |read, (_, c)| read & fields(c));
        for ((c, &n), t) in own.iter().enumerate().zip(CLASS_TYPES) {
            if plan.read >> c & 1 == 0 {
                let u = &mut plan.unmatched[t.index()];
                *u = u.saturating_add(n);
            }
        }
        plan
    }
}

/// The hit of `field` in `hits` (sorted by field, position) nearest to
/// `expected`; ties go to the smaller position.
fn nearest(hits: &[Placed], field: u16, expected: i64) -> Option<&Placed> {
    let start = hits.partition_point(|p| p.field < field);
    let end = start + hits[start..].partition_point(|p| p.field == field);
    let run = &hits[start..end];
    if run.is_empty() {
        return None;
    }
    let at = run.partition_point(|p| i64::from(p.pos) < expected);
    let after = run.get(at);
    let before = at.checked_sub(1).and_then(|i| run.get(i));
    match (before, after) {
        (Some(b), Some(a)) => {
            if expected - i64::from(b.pos) <= i64::from(a.pos) - expected {
                Some(b)
            } else {
                Some(a)
            }
        }
        (b, a) => b.or(a),
    }
}

/// A hit's (field, position) as one number, `field << 16 | position`:
/// the order matching looks at, read from the hit's bits, as [`place`]
/// gives them (a test checks every hit). The binary searches of
/// [`nearest_hit`] and [`has_hit_at`] compute it at every probe, where
/// [`place`] also works out the hit's type.
#[inline]
fn hit_key(h: Hit) -> u32 {
    let v = u32::from(h.0);
    if v >> 12 & 7 != u32::from(FANCY_FONT) {
        return v & 0xfff;
    }
    let (field, pos) = match FancyType::from_code((v >> 8) as u8) {
        FancyType::Url => (FIELD_URL, v & 0xff),
        FancyType::Title => (FIELD_TITLE, v & 0xff),
        FancyType::Anchor => (FIELD_ANCHOR + (v >> 4 & 0xf) as u16, v & 0xf),
        _ => (FIELD_META, v & 0xff),
    };
    u32::from(field) << 16 | pos
}

/// Whether the hit of key `k` ([`hit_key`]) has a clamped position: the
/// end of a long page (page text) or anchor (anchor fields).
#[inline]
fn key_clamped(k: u32) -> bool {
    let (field, pos) = ((k >> 16) as u16, k & 0xffff);
    match field {
        FIELD_TEXT => pos >= MAX_PLAIN_POSITION,
        f if f >= FIELD_ANCHOR => pos >= MAX_ANCHOR_POSITION,
        _ => false,
    }
}

/// [`hit_key`] as the (field, position) pair [`sort_field_position`] takes.
#[inline]
fn place_key(h: Hit) -> (u16, u16) {
    let k = hit_key(h);
    ((k >> 16) as u16, k as u16)
}

/// `hits` in (field, position) order: the list itself when it is so
/// already (a barrel's hit list is, unless it has meta or reserved hits
/// after its anchor hits: checking costs a comparison per hit, placing
/// and sorting a copy several times that), else a sorted copy in `buf`
/// (`scratch` is the counting sort's). Hits of equal key differ at most in
/// type and capitalization, which neither the proximity match of other
/// words' hits nor the phrase check reads.
///
/// `led`: how many hits lead the list known to be in (field, position)
/// order (0 if unknown; a barrel's decoder says,
/// [`crate::index::DoclistCursor::placed_hits`]): the list is in order
/// when its tail from the last of them is, and only that is checked. A
/// `led` past the list's end is taken as its length.
pub(crate) fn sorted_hits<'a>(
    hits: &'a [Hit],
    led: usize,
    buf: &'a mut Vec<Hit>,
    scratch: &mut Vec<Hit>,
) -> &'a [Hit] {
    let from = led.min(hits.len()).saturating_sub(1);
    if hits[from..].is_sorted_by_key(|&h| hit_key(h)) {
        return hits;
    }
    buf.clear();
    buf.extend_from_slice(hits);
    sort_field_position(buf, |&h| place_key(h), scratch);
    buf
}

/// The `n` lists `list(0..n)` (each with its count of leading hits known
/// in order, [`sorted_hits`]) as the proximity match and the
/// phrase check read them: the one at `keep` as it is (its hits are each
/// matched on their own, in any order), the others in (field, position)
/// order ([`sorted_hits`], with `bufs`, one a list, and `scratch`). They are kept
/// in `into.0` when they fit (a query's words), else in `into.1` (a
/// caller's own longer lists, a phrase repeating words).
#[allow(clippy::type_complexity)]
fn sorted_views<'a, 's>(
    (n, keep): (usize, usize),
    list: impl Fn(usize) -> (&'a [Hit], usize),
    bufs: &'a mut [Vec<Hit>],
    scratch: &mut Vec<Hit>,
    into: (&'s mut [&'a [Hit]; INLINE_WORDS], &'s mut Vec<&'a [Hit]>),
) -> &'s [&'a [Hit]] {
    let views: &'s mut [&'a [Hit]] = if n <= INLINE_WORDS {
        &mut into.0[..n]
    } else {
        into.1.resize(n, &[][..]);
        into.1
    };
    for ((k, view), buf) in views.iter_mut().enumerate().zip(bufs.iter_mut()) {
        let (hits, led) = list(k);
        *view = if k == keep {
            hits
        } else {
            sorted_hits(hits, led, buf, scratch)
        };
    }
    views
}

/// Whether `hits` (sorted by (field, position), [`sorted_hits`]) has an
/// unclamped hit at `pos` in `field`: where a phrase needs a word. `from`
/// is where an earlier search in `hits` ended, as [`nearest_hit`] takes
/// it: the search goes on from there when it can.
pub(crate) fn has_hit_at(hits: &[Hit], field: u16, pos: u16, from: &mut usize) -> bool {
    let k = u32::from(field) << 16 | u32::from(pos);
    let at = seek_from(hits, from, k);
    hits.get(at).is_some_and(|&h| hit_key(h) == k) && !key_clamped(k)
}

/// Whether the `n` words whose hit lists are `list(0..n)` (in phrase
/// order) stand one after the other, unclamped, in one field. Each list
/// comes with its count of leading hits known in (field, position) order
/// ([`sorted_hits`]; 0 if unknown). `bufs` and `scratch` are working
/// space (one buffer a word, reused).
pub(crate) fn phrase_in<'a>(
    n: usize,
    list: impl Fn(usize) -> (&'a [Hit], usize),
    bufs: &'a mut Vec<Vec<Hit>>,
    scratch: &mut Vec<Hit>,
) -> bool {
    if n == 0 {
        return false;
    }
    // The word with the fewest hits drives: each of its hits says where
    // the phrase would start, and the other words' hits are looked up
    // there (sorted for it; the driver's need not be).
    let driver = pivot_of((0..n).map(|k| list(k).0.len()));
    if bufs.len() < n {
        bufs.resize_with(n, Vec::new);
    }
    let (mut small, mut large) = ([&[][..]; INLINE_WORDS], Vec::new());
    let views = sorted_views((n, driver), list, bufs, scratch, (&mut small, &mut large));
    // Per word, where its last search ended (the driver's hits mostly
    // come in order, so the searches move forward, [`has_hit_at`]).
    let (mut small_from, mut large_from) = ([0usize; INLINE_WORDS], Vec::new());
    let from: &mut [usize] = if n <= INLINE_WORDS {
        &mut small_from[..n]
    } else {
        large_from.resize(n, 0);
        &mut large_from
    };
    views[driver].iter().any(|&h| {
        let p = place(h);
        // The phrase's start: `pos − driver`, and word k at start + k.
        let Some(start) = p.pos.checked_sub(driver as u16).filter(|_| !p.clamped) else {
            return false;
        };
        views
            .iter()
            .zip(from.iter_mut())
            .enumerate()
            .all(|(k, (l, at))| {
                k == driver
                    || start
                        .checked_add(k as u16)
                        .is_some_and(|q| has_hit_at(l, p.field, q, at))
            })
    })
}

/// [`phrase_in`] by brute force: every unclamped hit of the first word
/// tried as the start (the reference of its tests).
#[cfg(test)]
fn phrase_in_naive(lists: &[&[Hit]]) -> bool {
    let Some(first) = lists.first() else {
        return false;
    };
    first.iter().any(|&h| {
        let p = place(h);
        !p.clamped
            && lists.iter().enumerate().skip(1).all(|(k, l)| {
                l.iter().any(|&x| {
                    let q = place(x);
                    !q.clamped
                        && q.field == p.field
                        && u32::from(q.pos) == u32::from(p.pos) + k as u32
                })
            })
    })
}

/// The proximity bin of the pivot's hit `h` against the other words'
/// hits in `lists` (each sorted by (field, position), the pivot's list
/// in any order): as [`Scorer::bin_of`] finds it on placed hits. `from`
/// holds, per word, where the search for the pivot's previous hit ended
/// (0 at first): the pivot's hits mostly come in (field, position) order
/// too, so each search goes on from there ([`seek`]) rather than over the
/// whole list, and starts over when a hit comes out of order. vtk9-doc's
/// slowest queries ("int vtkalgorithm") match hundreds of hits per page,
/// and their binary searches were 13% of the query's samples.
fn bin_in_lists(lists: &[&[Hit]], pivot: usize, h: &Placed, from: &mut [usize]) -> usize {
    let n = lists.len();
    if h.clamped {
        return PROX_BINS - 1;
    }
    let (mut lo, mut hi) = (i64::from(h.pos), i64::from(h.pos));
    let mut phrase = true;
    for ((j, other), at) in lists.iter().enumerate().zip(from.iter_mut()) {
        if j == pivot {
            continue;
        }
        let expected = i64::from(h.pos) + j as i64 - pivot as i64;
        let Some((q, clamped)) = nearest_hit(other, h.field, expected, at) else {
            return PROX_BINS - 1;
        };
        if clamped {
            return PROX_BINS - 1;
        }
        let q = i64::from(q);
        phrase &= q == expected;
        lo = lo.min(q);
        hi = hi.max(q);
    }
    prox_bin(n, (hi - lo) as u32, phrase)
}

/// [`nearest`] in a hit list sorted by (field, position): the hit of
/// `field` nearest to `expected` (ties to the smaller position) as its
/// position and whether it is clamped. `from` is where an earlier search
/// in `hits` ended; the search starts there when every hit before it is
/// below this one's key, else at 0, and leaves where it ended.
fn nearest_hit(hits: &[Hit], field: u16, expected: i64, from: &mut usize) -> Option<(u16, bool)> {
    // Positions are at most 4,095 and `expected` within a query's words of
    // one, so it fits a u16 once below-zero is taken as zero (no position
    // is below either).
    let e = expected.clamp(0, i64::from(u16::MAX)) as u32;
    let (lo, hi) = (u32::from(field) << 16, u32::from(field) << 16 | 0xffff);
    let at = seek_from(hits, from, lo | e);
    let in_field = |i: usize| {
        hits.get(i)
            .map(|&h| hit_key(h))
            .filter(|k| (lo..=hi).contains(k))
    };
    let after = in_field(at);
    let before = at.checked_sub(1).and_then(in_field);
    let pos = |k: u32| i64::from(k & 0xffff);
    let best = match (before, after) {
        (Some(b), Some(a)) => {
            if expected - pos(b) <= pos(a) - expected {
                b
            } else {
                a
            }
        }
        (b, a) => b.or(a)?,
    };
    Some(((best & 0xffff) as u16, key_clamped(best)))
}

/// [`seek`] from where the last search in `hits` ended (`from`), or from
/// 0 when a hit before it is not below `target` (the searches came out of
/// order); `from` is left where this one ends.
fn seek_from(hits: &[Hit], from: &mut usize, target: u32) -> usize {
    if *from > hits.len() || (*from > 0 && hit_key(hits[*from - 1]) >= target) {
        *from = 0;
    }
    *from = seek(hits, *from, target);
    *from
}

/// The first index of `hits` (sorted by [`hit_key`]) whose key is not
/// below `target`, given that none before `from` is: galloping from
/// `from` (steps 1, 2, 4, …) to a hit not below it, then a binary search
/// within the last step, so a search costs the log of how far it moves,
/// not of the list's length.
fn seek(hits: &[Hit], from: usize, target: u32) -> usize {
    let mut lo = from.min(hits.len());
    let mut step = 1;
    while lo + step <= hits.len() && hit_key(hits[lo + step - 1]) < target {
        lo += step;
        step *= 2;
    }
    let end = (lo + step - 1).min(hits.len());
    lo + hits[lo..end].partition_point(|&h| hit_key(h) < target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Hit lists as blocks give them (plain hits by position, then URL,
        /// title, anchor and meta hits) sort as a comparison sort sorts them,
        /// anchors counted or not.
        #[test]
        fn field_position_sort(
            plain in proptest::collection::vec(0u32..5000, 0..40),
            fancy in proptest::collection::vec((0u8..4, any::<u64>(), 0u32..40), 0..300),
            meta in any::<bool>(),
        ) {
            let mut hits = text(&{
                let mut p = plain.clone();
                p.sort_unstable();
                p
            });
            let mut fancy: Vec<Hit> = fancy
                .into_iter()
                .map(|(t, src, p)| match t {
                    0 => Hit::fancy(false, FancyType::Url, p),
                    1 => Hit::fancy(false, FancyType::Title, p),
                    // Without meta hits the anchors are counted into place.
                    3 if meta && src % 8 == 0 => Hit::fancy(false, FancyType::Meta, p),
                    _ => Hit::anchor(false, src % 64, p),
                })
                .collect();
            fancy.sort_by_key(|h| match h.fields() {
                HitFields::Fancy { kind: FancyType::Url, .. } => 0,
                HitFields::Fancy { kind: FancyType::Title, .. } => 1,
                HitFields::Anchor { .. } => 2,
                _ => 3,
            });
            hits.extend(fancy);
            let mut placed: Vec<Placed> = hits.iter().map(|&h| place(h)).collect();
            let mut want = placed.clone();
            want.sort_unstable_by_key(|p| (p.field, p.pos));
            sort_by_field_and_position(&mut placed, &mut Vec::new());
            prop_assert_eq!(&placed, &want);
            let mut pairs: Vec<(u16, u16)> = hits
                .iter()
                .map(|&h| field_position(h))
                .filter(|p| !p.2)
                .map(|p| (p.0, p.1))
                .collect();
            let mut want = pairs.clone();
            want.sort_unstable();
            sort_field_position(&mut pairs, |&k| k, &mut Vec::new());
            prop_assert_eq!(pairs, want);
        }

        /// Placing only the pivot's fields of the other words gives the
        /// proximity match of placing every hit.
        #[test]
        fn proximity_from_the_pivots_fields(
            words in proptest::collection::vec(
                (
                    proptest::collection::vec(0u32..300, 0..30),
                    proptest::collection::vec((0u8..3, 0u64..4, 0u32..20), 0..40),
                ),
                1..4,
            ),
        ) {
            let lists: Vec<Vec<Hit>> = words
                .into_iter()
                .map(|(mut plain, fancy)| {
                    plain.sort_unstable();
                    let mut hits = text(&plain);
                    let mut fancy: Vec<(u8, Hit)> = fancy
                        .into_iter()
                        .map(|(t, src, p)| match t {
                            0 => (0, Hit::fancy(false, FancyType::Url, p)),
                            1 => (1, Hit::fancy(false, FancyType::Title, p)),
                            _ => (2, Hit::anchor(false, src, p.min(15))),
                        })
                        .collect();
                    fancy.sort_by_key(|&(t, _)| t);
                    hits.extend(fancy.into_iter().map(|(_, h)| h));
                    hits
                })
                .filter(|l| !l.is_empty())
                .collect();
            let slices: Vec<&[Hit]> = lists.iter().map(Vec::as_slice).collect();
            let w = RankingWeights::default();
            let mut all = Scorer::new();
            all.load(slices.iter().copied());
            let mut some = Scorer::new();
            some.load_proximity(&slices);
            prop_assert_eq!(all.prox, some.prox);
            prop_assert_eq!(all.proximity(&w), some.proximity(&w));
        }
    }

    /// Random hit lists for the matching tests: plain hits (font and
    /// capitalization random, a position clamped at 4,095 now and then),
    /// URL, title, meta and anchor hits (some clamped), in a barrel's order
    /// (plain by position, URL, title, anchors by source and position,
    /// meta last) or shuffled.
    fn hit_lists() -> impl Strategy<Value = Vec<Vec<Hit>>> {
        proptest::collection::vec(
            (
                proptest::collection::vec((0u32..24, 0u8..4, any::<bool>()), 0..30),
                proptest::collection::vec((0u8..4, 0u64..3, 0u32..20), 0..20),
                any::<bool>(),
                any::<u64>(),
            ),
            1..5,
        )
        .prop_map(|words| {
            words
                .into_iter()
                .map(|(plain, fancy, shuffle, seed)| {
                    let mut plain: Vec<Hit> = plain
                        .into_iter()
                        .map(|(p, font, cap)| {
                            let p = if p == 23 { 4095 } else { p };
                            Hit::plain(cap, font, p)
                        })
                        .collect();
                    plain.sort_by_key(|h| h.plain_position());
                    let mut fancy: Vec<(u8, Hit)> = fancy
                        .into_iter()
                        .map(|(t, src, p)| match t {
                            0 => (0, Hit::fancy(false, FancyType::Url, p)),
                            1 => (1, Hit::fancy(true, FancyType::Title, p)),
                            2 => (3, Hit::fancy(false, FancyType::Meta, p)),
                            _ => (2, Hit::anchor(false, src, p)),
                        })
                        .collect();
                    fancy.sort_by_key(|&(t, h)| (t, field_position(h)));
                    plain.extend(fancy.into_iter().map(|(_, h)| h));
                    if shuffle {
                        // A deterministic shuffle from the seed.
                        let mut x = seed | 1;
                        for i in (1..plain.len()).rev() {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            plain.swap(i, (x % (i as u64 + 1)) as usize);
                        }
                    }
                    plain
                })
                .collect()
        })
    }

    /// How many hits lead `hits` in (field, position) order, from
    /// [`place`]: what `DoclistCursor::placed_hits` reports of a barrel's
    /// list, or more.
    fn led_of(hits: &[Hit]) -> usize {
        let keys: Vec<(u16, u16)> = hits
            .iter()
            .map(|&h| place(h))
            .map(|p| (p.field, p.pos))
            .collect();
        (0..=keys.len())
            .rev()
            .find(|&l| keys[..l].is_sorted())
            .unwrap_or(0)
    }

    /// The key read from a hit's bits is the field and position
    /// [`place`] gives, and clamped exactly when [`place`] says so, for
    /// every 16-bit hit.
    #[test]
    fn hit_key_is_place() {
        for v in 0..=u16::MAX {
            let p = place(Hit(v));
            let k = hit_key(Hit(v));
            assert_eq!(k, u32::from(p.field) << 16 | u32::from(p.pos), "{v:#06x}");
            assert_eq!(key_clamped(k), p.clamped, "{v:#06x}");
            assert_eq!(place_key(Hit(v)), (p.field, p.pos), "{v:#06x}");
        }
    }

    proptest! {
        /// The proximity match on the lists themselves (binary search in
        /// sorted lists, sorted copies of the others) counts what the match
        /// on placed and sorted hits counts, clamped hits, meta hits after
        /// the anchors and shuffled lists included.
        #[test]
        fn proximity_on_lists_as_on_placed_hits(lists in hit_lists()) {
            let slices: Vec<&[Hit]> = lists.iter().map(Vec::as_slice).collect();
            let mut all = Scorer::new();
            all.load(slices.iter().copied());
            let mut some = Scorer::new();
            // Twice: the second reuses the first's buffers.
            some.load_proximity(&slices);
            some.load_proximity(&slices);
            prop_assert_eq!(all.prox, some.prox);
            // With the lists' leading hits known in order, as a barrel's
            // decoder says (only the tails checked): the same, whether all
            // of such a prefix is given or only part of it.
            let led: Vec<usize> = slices.iter().map(|l| led_of(l)).collect();
            some.load_proximity_led(&slices, |k| led[k]);
            prop_assert_eq!(all.prox, some.prox);
            some.load_proximity_led(&slices, |k| led[k] / 2);
            prop_assert_eq!(all.prox, some.prox);
        }

        /// The match of the lists read as [`ProximityPlan`] plans it from
        /// their counts per class (of every list only the fields the
        /// pivot's hits can be matched in, the pivot's others counted in
        /// the last bin) counts as the match of the whole lists.
        #[test]
        fn planned_proximity_as_on_whole_lists(lists in hit_lists()) {
            // The words present: those with hits.
            let slices: Vec<&[Hit]> =
                lists.iter().filter(|l| !l.is_empty()).map(Vec::as_slice).collect();
            let mut all = Scorer::new();
            all.load_proximity(&slices);
            let classes: Vec<HitClasses> = slices
                .iter()
                .map(|l| {
                    let mut c = [0; CLASSES];
                    for &h in *l {
                        c[postings::class_of(h)] += 1;
                    }
                    c
                })
                .collect();
            let plan = ProximityPlan::of(&classes);
            let read: Vec<Vec<Hit>> = slices
                .iter()
                .map(|l| {
                    l.iter()
                        .copied()
                        .filter(|&h| plan.read >> postings::class_of(h) & 1 == 1)
                        .collect()
                })
                .collect();
            let read: Vec<&[Hit]> = read.iter().map(Vec::as_slice).collect();
            let mut some = Scorer::new();
            some.load_proximity_planned(&read, |_| 0, &plan);
            prop_assert_eq!(all.prox, some.prox);
        }

        /// The proximity bound from hit counts is at least the proximity
        /// score the match gives (a true upper bound, so pruning by it
        /// keeps the exact top k), for random hit lists (words sharing a
        /// field or not, clamped, meta and anchor hits) with an absent
        /// word's zero counts among them, under the default weights and
        /// random non-negative ones.
        #[test]
        fn proximity_bound_is_an_upper_bound(
            lists in hit_lists(),
            absent in 0usize..6,
            prox in proptest::array::uniform10(0.0f64..20.0),
            type_weight in proptest::array::uniform7(0.0f64..30.0),
            knee in proptest::array::uniform7(0.0f64..6.0),
            cap in proptest::array::uniform7(0.0f64..10.0),
        ) {
            let present: Vec<&[Hit]> = lists
                .iter()
                .map(Vec::as_slice)
                .filter(|l| !l.is_empty())
                .collect();
            let mut s = Scorer::new();
            s.load(present.iter().copied());
            let mut counts = s.counts().to_vec();
            counts.insert(absent.min(counts.len()), [0; HIT_TYPES]);
            let random = RankingWeights::with_prox(type_weight, knee, cap, prox, 0.1);
            for w in [RankingWeights::default(), random] {
                let exact = s.proximity(&w);
                let bound = ProximityBound::new(&w).of(&counts);
                prop_assert!(exact <= bound, "{exact} > {bound}: {counts:?} {:?}", s.prox);
            }
        }

        /// Galloping from any start before which every key is below the
        /// target finds what a binary search over the whole list finds.
        #[test]
        fn seek_as_partition_point(
            raw in proptest::collection::vec(any::<u16>(), 0..300),
            target in 0u32..(40 << 16),
            cut in 0usize..300,
        ) {
            let mut hits: Vec<Hit> = raw.into_iter().map(Hit).collect();
            hits.sort_by_key(|&h| hit_key(h));
            let want = hits.partition_point(|&h| hit_key(h) < target);
            prop_assert_eq!(seek(&hits, cut.min(want), target), want);
            // And a target among the keys.
            if let Some(&h) = hits.get(cut % hits.len().max(1)) {
                let t = hit_key(h);
                let want = hits.partition_point(|&h| hit_key(h) < t);
                prop_assert_eq!(seek(&hits, cut.min(want), t), want);
            }
        }

        /// The phrase check finds a phrase exactly when trying every
        /// unclamped hit of the first word as its start does.
        #[test]
        fn phrase_in_as_brute_force(lists in hit_lists()) {
            let (mut bufs, mut scratch) = (Vec::new(), Vec::new());
            let got = phrase_in(lists.len(), |k| (lists[k].as_slice(), 0), &mut bufs, &mut scratch);
            let slices: Vec<&[Hit]> = lists.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(got, phrase_in_naive(&slices));
            // With the lists' leading hits known in order, as a barrel's
            // decoder says (only the tails checked): the same.
            let led: Vec<usize> = slices.iter().map(|l| led_of(l)).collect();
            let got = phrase_in(lists.len(), |k| (slices[k], led[k]), &mut bufs, &mut scratch);
            prop_assert_eq!(got, phrase_in_naive(&slices));
        }
    }

    /// A word in the title alone and one in the page text alone are never
    /// matched: the bound is the last bin's (0 with the default weights),
    /// not the phrase bin's 24 · 16 it was; words sharing the page text
    /// keep the phrase bin's bound.
    #[test]
    fn proximity_bound_of_words_in_different_fields() {
        let w = RankingWeights::default();
        let b = ProximityBound::new(&w);
        let mut title = [0; HIT_TYPES];
        title[HitType::Title.index()] = 1;
        let mut text = [0; HIT_TYPES];
        text[HitType::Plain.index()] = 3;
        assert!(b.of(&[title, text]) < 1e-6);
        assert!(b.of(&[text, [0; HIT_TYPES], title]) < 1e-6);
        // The title word has body hits too: its body hit may be a phrase.
        let mut both = title;
        both[HitType::Bold.index()] = 1;
        let want = w.type_prox_weight[HitType::Bold.index()][0];
        assert!(
            (b.of(&[both, text]) - want).abs() < 1e-6,
            "{}",
            b.of(&[both, text])
        );
        // Meta hits count as plain: a plain pivot hit may meet them.
        assert!(b.of(&[text, text]) >= w.type_prox_weight[HitType::Plain.index()][0] * 3.0);
    }

    /// A document none of whose words has a hit (all filtered out) has no
    /// proximity, as [`Scorer::load`] says.
    #[test]
    fn proximity_of_no_words() {
        let mut s = Scorer::new();
        s.load_proximity(&[]);
        assert_eq!(s.proximity(&RankingWeights::default()), 0.0);
    }

    fn source_hash_eq(a: u64, b: u64) -> bool {
        crate::index::hit::source_hash(a) == crate::index::hit::source_hash(b)
    }

    fn text(positions: &[u32]) -> Vec<Hit> {
        positions.iter().map(|&p| Hit::plain(false, 1, p)).collect()
    }

    fn bins(s: &Scorer) -> Vec<(HitType, usize, u32)> {
        let mut v = Vec::new();
        for t in HitType::ALL {
            for (b, &c) in s.prox.counts[t.index()].iter().enumerate() {
                if c > 0 {
                    v.push((t, b, c));
                }
            }
        }
        v
    }

    #[test]
    fn types_of_hits() {
        assert_eq!(HitType::of(Hit::title(false, 0)), HitType::Title);
        assert_eq!(HitType::of(Hit::anchor(true, 7, 3)), HitType::Anchor);
        assert_eq!(HitType::of(Hit::url(false, 1)), HitType::Url);
        assert_eq!(HitType::of(Hit::plain(false, 6, 1)), HitType::Large);
        assert_eq!(HitType::of(Hit::plain(false, 3, 1)), HitType::Large);
        assert_eq!(HitType::of(Hit::plain(false, 2, 1)), HitType::Bold);
        assert_eq!(HitType::of(Hit::plain(true, 1, 1)), HitType::Plain);
        assert_eq!(HitType::of(Hit::plain(false, 0, 1)), HitType::Small);
    }

    #[test]
    fn count_weights_grow_linearly_then_taper() {
        let w = RankingWeights::default();
        for n in 0..=4 {
            assert_eq!(w.count_weight(HitType::Plain, n), f64::from(n));
        }
        let mut prev = 4.0;
        for n in 5..2000 {
            let cw = w.count_weight(HitType::Plain, n);
            assert!(cw >= prev && cw - prev <= 1.0 && cw <= 8.0, "{n}: {cw}");
            prev = cw;
        }
        let e = (-1.0f64 / 4.0).exp();
        assert!((w.count_weight(HitType::Plain, 5) - (4.0 + 4.0 * (1.0 - e))).abs() < 1e-12);
        assert!(w.count_weight(HitType::Plain, 100) > 7.99);
        assert_eq!(w.count_weight(HitType::Title, 2), 2.0);
        assert!(w.count_weight(HitType::Title, 3) < 3.0);
        assert!(w.count_weight(HitType::Anchor, 601) <= 3.0);
        // A cap at or below the knee: linear up to the knee, then flat.
        let mut flat = w.clone();
        flat.cap[HitType::Url.index()] = 1.0;
        assert_eq!(flat.count_weight(HitType::Url, 1), 1.0);
        assert_eq!(flat.count_weight(HitType::Url, 9), 2.0);
    }

    #[test]
    fn bins_from_phrase_to_not_even_close() {
        assert_eq!(prox_bin(2, 1, true), 0);
        assert_eq!(prox_bin(2, 1, false), 1);
        assert_eq!(prox_bin(2, 2, false), 2);
        assert_eq!(prox_bin(3, 2, false), 1);
        assert_eq!(prox_bin(2, 4, false), 3);
        assert_eq!(prox_bin(2, 8, false), 4);
        assert_eq!(prox_bin(2, 16, false), 5);
        assert_eq!(prox_bin(2, 32, false), 6);
        assert_eq!(prox_bin(2, 64, false), 7);
        assert_eq!(prox_bin(2, 128, false), 8);
        assert_eq!(prox_bin(2, 129, false), 9);
        assert_eq!(prox_bin(2, 4000, false), 9);
    }

    #[test]
    fn phrases_and_near_hits_are_matched() {
        let mut s = Scorer::new();
        // "new york": a phrase at 10-11, the words 5 apart at 40/45.
        let new = text(&[10, 40, 100]);
        let york = text(&[11, 45]);
        s.load([&york[..], &new[..]]);
        // Pivot is york (fewer hits): 11 → new expected at 12, nearest 10
        // (span 1, out of order) — query order is york, new.
        assert_eq!(
            bins(&s),
            vec![(HitType::Plain, 1, 1), (HitType::Plain, 4, 1)]
        );
        s.load([&new[..], &york[..]]);
        assert_eq!(
            bins(&s),
            vec![(HitType::Plain, 0, 1), (HitType::Plain, 4, 1)]
        );
        // Title phrase; the text hit of one word is in another field.
        let a = [Hit::title(false, 2), Hit::plain(false, 1, 7)];
        let b = [Hit::title(false, 3)];
        s.load([&a[..], &b[..]]);
        assert_eq!(bins(&s), vec![(HitType::Title, 0, 1)]);
        // Anchors: matched only within one source.
        let a = [Hit::anchor(false, 1, 0)];
        let b = [Hit::anchor(false, 2, 1)];
        let same = source_hash_eq(1, 2);
        s.load([&a[..], &b[..]]);
        let expect = if same { 0 } else { 9 };
        assert_eq!(bins(&s), vec![(HitType::Anchor, expect, 1)]);
        // A clamped position is not even close.
        let a = text(&[5000]);
        let b = text(&[4094]);
        s.load([&a[..], &b[..]]);
        assert_eq!(bins(&s), vec![(HitType::Plain, 9, 1)]);
        // One word: no proximity.
        s.load([&new[..]]);
        assert!(bins(&s).is_empty());
    }

    #[test]
    fn ir_is_the_dot_product() {
        let w = RankingWeights::default();
        let mut s = Scorer::new();
        let a = [Hit::title(false, 0), Hit::plain(false, 1, 4)];
        let b = [Hit::title(false, 1)];
        s.load([&a[..], &b[..]]);
        // a: title 1 (24) + plain 1 (1); b: title 1 (24); pivot b: title
        // phrase (24 · 16).
        assert!((s.ir(&w) - (24.0 + 1.0 + 24.0 + 384.0)).abs() < 1e-9);
        let e = s.explain(&["a".into(), "b".into()], &w, Some(0.5), 2);
        assert!((e.ir - s.ir(&w)).abs() < 1e-12);
        let sum: f64 = e
            .words
            .iter()
            .flat_map(|x| x.types.iter().map(|t| t.4))
            .chain(e.proximity.iter().map(|p| p.contribution))
            .sum();
        assert!((sum - e.ir).abs() < 1e-9);
        assert!((e.pagerank_factor - (1.0 + 0.1 * 2f64.ln())).abs() < 1e-12);
        assert!((e.score - e.ir * e.pagerank_factor).abs() < 1e-9);
    }
}

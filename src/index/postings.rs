//! Postings blocks: up to 128 documents of one doclist with their hits, the
//! unit the inverted barrels are made of and the unit a cursor decodes.
//!
//! # Layout (little-endian)
//!
//! ```text
//! 0   u32  first      docID of the block's first document
//! 4   u8   n − 1      documents in the block, 1..=128
//! 5   u8   w_gap      bits per docID gap
//! 6   u8   mask       bit c set: count column c is stored (its width > 0)
//! 7   u8   attr       w_cap | w_large << 1: bits per capitalization (0 or 1),
//!                     bits per large hit's font (0..=2)
//! 8   u8   w_fancy    bits per packed URL, title or anchor hit
//! 9   u8 × popcount(mask)  the stored count columns' widths, in class order
//!     u8   w_rep      only if the anchor column is stored: bits per anchor
//!                     value's repeats − 1 (0: no value repeats)
//!     u8   w_distinct only if w_rep > 0: bits per distinct anchor count
//!     gaps     n − 1 values at w_gap:  docID[i] − docID[i−1] − 1, i = 1..n
//!              (a full block: 128 values in the lane layout, value 0 = 0)
//!     counts   per stored class c, n values at its width: document i's hits
//!              of class c (classes: small, plain, bold, large, URL, title,
//!              anchor, other; a column not stored is all zeros)
//!     distinct only if w_rep > 0: n values at w_distinct, document i's
//!              distinct anchor values (w_rep = 0: its anchor count)
//!     shapes   per run of positions (R = ⌈P / 128⌉ runs, P = plain hits):
//!              u8 w | x << 4 (bits per low part, per exception's high
//!              part; w + x ≤ 12), and only if x > 0 a u8 e − 1 (e
//!              exceptions)
//!     runs     R runs, run r = min(128, P − 128r) values: the plain
//!              hits' positions, per document and plain class (small, plain,
//!              bold, large) the first absolute and the others as the
//!              difference from the one before (positions never decrease);
//!              each value's low w bits, then the e exceptions' indices in
//!              the run (7 bits, increasing) and high parts (value >> w, at x)
//!     caps     P values at w_cap: each plain hit's capitalization, same order
//!     large    L values at w_large, L = large hits: each one's font − 3
//!     fancy    Q values at w_fancy, Q = URL + title hits + distinct anchor
//!              values: per document its URL, title hits, (low 8 bits << 1) |
//!              cap each, then its distinct anchor values so packed, increasing
//!     repeats  D values at w_rep, D = distinct anchor values: each one's
//!              repeats − 1, in the order of the fancy column
//!     other    O = other hits, u16 each as they are (meta and reserved types)
//! ```
//!
//! Each packed field ([`super::bitpack`]) starts on a byte boundary. In a
//! full block (128 documents) the gaps and the count columns are packed in
//! the lane layout, which SIMD instructions unpack (the gaps with their
//! prefix sum); the other fields, and every field of a shorter block, in the
//! scalar layout (the distinct anchor counts as the count columns). A
//! document's hit list is its plain hits in position order (equal positions
//! by class, each class in the order given: only positions clamped at 4,095
//! can be equal) followed by its
//! fancy hits: URL and title hits, each class in the order given, then its
//! anchor hits in increasing order of their packed value (source hash,
//! position, cap), each value repeated its count of times, then other
//! hits in the order given. The block's length is not stored: the barrel's block directory
//! delimits it, and a decoder checks that the fields fill it exactly.
//!
//! # Why this shape
//!
//! A conjunctive query decodes the docIDs of the blocks it visits and the
//! counts and hits of the few documents that match, so the docIDs, the counts
//! and the hits are separate packed columns, decoded on demand, and any
//! document's hits are reached from the counts' prefix sums without touching
//! the others'. The counts are per *class* — plain hits by relative font
//! (small, body, bold, large) and fancy hits by type — so BM25 and BM25F
//! score a document, and bound its proximity bonus, from the counts alone:
//! no hit is read unless its positions are. Classes a block does not have
//! take no column (a mask bit), so a doclist of body text pays for one.
//! Positions are delta-coded per document and class and packed in runs of
//! 128 with their own width, so one long hit list does not widen the rest,
//! and the few wide values of a run (mostly documents' first, absolute
//! positions) are exceptions with their high bits apart (barrel version 6
//! packed a run at its widest value: 17% more position bytes on vtk9-doc).
//! A plain hit's font is its class's for small, body and bold type, so only
//! large hits store theirs (fonts 3–6, at most 2 bits), and one heading in
//! a block no longer widens every hit's attribute (barrel version 4 packed
//! font and capitalization per hit: 2.45 bits per plain hit on rust-doc,
//! 11% of the index); capitalization takes a bit per hit where a block has
//! any capital, else none. Fancy hits keep
//! only what their class does not say: the position (an anchor's source hash
//! and position) and capitalization, 9 bits at most. Anchor hits are mostly
//! the same link text from many pages: a document's anchor hits of a word
//! are stored as their distinct values, each with its repeats (barrel
//! version 5 stored every hit: on rust-doc 2.97 M anchor hits at 9 bits for
//! 0.43 M distinct values, 12% of the index); the anchor count column still
//! counts every hit, so BM25F reads the anchor frequency without the hits.

use super::bitpack::{self, lanes_len, max_width, pack, pack_lanes, pack_lanes_gaps, packed_len};
use super::hit::{FancyType, Hit, FANCY_FONT, MAX_PLAIN_POSITION};

/// Documents per postings block (all but the last block of a doclist are full).
pub const BLOCK_DOCS: usize = 128;
/// Plain-hit positions per run.
pub const RUN_HITS: usize = 128;
/// Bytes of the fixed header.
pub const HEADER: usize = 9;
/// Hit classes, one count column each.
pub const CLASSES: usize = 8;
/// Class of plain hits at relative font 0.
pub const SMALL: usize = 0;
/// Class of plain hits at relative font 1 (body text).
pub const PLAIN: usize = 1;
/// Class of plain hits at relative font 2.
pub const BOLD: usize = 2;
/// Class of plain hits at relative font ≥ 3.
pub const LARGE: usize = 3;
/// Class of URL hits.
pub const URL: usize = 4;
/// Class of title hits.
pub const TITLE: usize = 5;
/// Class of anchor hits.
pub const ANCHOR: usize = 6;
/// Class of the other fancy hits (meta, reserved types), stored whole.
pub const OTHER: usize = 7;
/// The classes' names (dumps, errors).
pub const CLASS_NAMES: [&str; CLASSES] = [
    "small", "plain", "bold", "large", "url", "title", "anchor", "other",
];
/// Largest width of a packed fancy hit.
const MAX_FANCY_WIDTH: u8 = 9;
/// Packed fancy hits' values ([`fancy_value`]): `0..2^MAX_FANCY_WIDTH`.
const ANCHOR_VALUES: usize = 1 << MAX_FANCY_WIDTH;
/// A document's anchor hits of a word up to which its distinct values are
/// found by sorting them; more are counted per value (a pass over
/// [`ANCHOR_VALUES`] counters costs about what sorting this many does).
const SORTED_ANCHORS: usize = 64;
/// The smallest font of the large class; a large hit stores its font
/// minus this (0..=3, at most 2 bits).
const LARGE_FONT: u8 = 3;

/// The class of a hit.
///
/// Read from a table of the hit's bits 14..8 (its font, and its type when
/// the font is 7), which [`class_by_fields`] fills: one load in place of
/// two levels of branches, for a function the sorter calls on every hit
/// (see `field_of_hit`, which does the same for the fields).
#[inline]
pub fn class_of(h: Hit) -> usize {
    usize::from(CLASS_OF_HIGH_BITS[usize::from((h.0 >> 8) & 0x7f)])
}

/// [`class_of`] by the hit's bits 14..8 (also what
/// [`super::fieldlens::field_of_hit`]'s table is made from).
pub(super) const CLASS_OF_HIGH_BITS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        t[i] = class_by_fields(Hit((i as u16) << 8)) as u8;
        i += 1;
    }
    t
};

/// The class of a hit by its font and fancy type: what [`class_of`]'s
/// table holds.
const fn class_by_fields(h: Hit) -> usize {
    let font = (h.0 >> 12) & 7;
    if font != super::hit::FANCY_FONT {
        return match font {
            0 => SMALL,
            1 => PLAIN,
            2 => BOLD,
            _ => LARGE,
        };
    }
    match FancyType::from_code(((h.0 >> 8) & 0xf) as u8) {
        FancyType::Url => URL,
        FancyType::Title => TITLE,
        FancyType::Anchor => ANCHOR,
        _ => OTHER,
    }
}

/// A document's hits of one word per class ([`class_of`]), without their
/// positions.
pub type HitClasses = [u32; CLASSES];

/// A document's plain (small to large type) and fancy (URL, title,
/// anchor) hit counts from its hits per class; an error when a sum
/// overflows (a corrupt count column).
pub fn plain_fancy(c: &HitClasses) -> Result<(u32, u32), String> {
    let sum = |r: &[u32]| r.iter().try_fold(0u32, |a, &x| a.checked_add(x));
    match (sum(&c[SMALL..=LARGE]), sum(&c[URL..])) {
        (Some(p), Some(f)) => Ok((p, f)),
        _ => Err("hit counts overflow".into()),
    }
}

/// A document's hits of one word per class: what [`BlockEncoder::push`]
/// stores as its counts, and what a block bound and the short doclist are
/// computed from (counted once a posting).
pub fn hit_classes(plain: &[Hit], fancy: &[Hit]) -> HitClasses {
    let mut c = [0u32; CLASSES];
    for &h in plain.iter().chain(fancy) {
        c[class_of(h)] += 1;
    }
    c
}

/// Collects up to [`BLOCK_DOCS`] documents of one doclist and encodes them.
pub struct BlockEncoder {
    docs: Vec<u32>,
    /// Per class, each document's count (the first `docs.len()` are set):
    /// arrays rather than vectors, a posting's counts being eight stores
    /// instead of eight pushes.
    counts: Box<[[u32; BLOCK_DOCS]; CLASSES]>,
    plain: Vec<Hit>,
    /// Packed URL and title hits and distinct anchor values, per document.
    fancy: Vec<u32>,
    /// Per document, its distinct anchor values.
    distinct: Vec<u32>,
    /// Per distinct anchor value, its repeats − 1.
    repeats: Vec<u32>,
    other: Vec<Hit>,
    scratch: Vec<u32>,
    /// Per anchor value, its repeats in the document being pushed (all
    /// zero between documents).
    anchor_counts: Box<[u32; ANCHOR_VALUES]>,
    positions: Vec<u32>,
    caps: Vec<u32>,
    large: Vec<u32>,
}

impl Default for BlockEncoder {
    fn default() -> Self {
        BlockEncoder {
            docs: Vec::with_capacity(BLOCK_DOCS),
            counts: Box::new([[0; BLOCK_DOCS]; CLASSES]),
            plain: Vec::new(),
            fancy: Vec::new(),
            distinct: Vec::new(),
            repeats: Vec::new(),
            other: Vec::new(),
            scratch: Vec::new(),
            anchor_counts: Box::new([0; ANCHOR_VALUES]),
            positions: Vec::new(),
            caps: Vec::new(),
            large: Vec::new(),
        }
    }
}

impl BlockEncoder {
    /// An empty encoder.
    pub fn new() -> BlockEncoder {
        BlockEncoder::default()
    }

    /// Documents collected.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// `true` when no document is collected.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// `true` when the block holds [`BLOCK_DOCS`] documents.
    pub fn is_full(&self) -> bool {
        self.docs.len() == BLOCK_DOCS
    }

    /// The last docID collected.
    pub fn last_doc(&self) -> Option<u32> {
        self.docs.last().copied()
    }

    /// The first docID collected.
    pub fn first_doc(&self) -> Option<u32> {
        self.docs.first().copied()
    }

    /// Adds a document (docIDs increasing) with its plain hits (positions not
    /// decreasing) and fancy hits. The fancy hits are kept by class (URL,
    /// title, anchor, other), URL and title hits in the order given, anchor
    /// hits as their distinct packed values in increasing order, each with
    /// its number of repeats.
    pub fn push(&mut self, doc: u32, plain: &[Hit], fancy: &[Hit]) {
        self.push_classified(doc, plain, fancy, &hit_classes(plain, fancy));
    }

    /// [`BlockEncoder::push`] of a document whose hits per class are `c`
    /// ([`hit_classes`] of `plain` and `fancy`): the fancy hits of a class
    /// it has none of are not looked at.
    pub fn push_classified(&mut self, doc: u32, plain: &[Hit], fancy: &[Hit], c: &HitClasses) {
        debug_assert!(self.docs.len() < BLOCK_DOCS);
        debug_assert!(self.docs.last().is_none_or(|&d| d < doc));
        debug_assert!(plain.iter().all(|h| !h.is_fancy()));
        debug_assert!(fancy.iter().all(|h| h.is_fancy()));
        debug_assert_eq!(*c, hit_classes(plain, fancy));
        let slot = self.docs.len();
        self.docs.push(doc);
        for (col, &v) in self.counts.iter_mut().zip(c) {
            col[slot] = v;
        }
        self.plain.extend_from_slice(plain);
        for class in [URL, TITLE] {
            if c[class] > 0 {
                for h in fancy.iter().filter(|&&h| class_of(h) == class) {
                    self.fancy.push(fancy_value(h));
                }
            }
        }
        if c[ANCHOR] + c[OTHER] == 0 {
            self.distinct.push(0);
            return;
        }
        // Anchor hits: the same link text from many pages repeats the same
        // (source hash, position, cap) — 2.97 M anchor hits hold 0.43 M
        // distinct values per (word, document) on rust-doc — so each
        // distinct value is stored once with its repeats.
        let s = &mut self.scratch;
        s.clear();
        s.extend(
            fancy
                .iter()
                .filter(|&&h| class_of(h) == ANCHOR)
                .map(fancy_value),
        );
        let before = self.fancy.len();
        if s.len() <= SORTED_ANCHORS {
            s.sort_unstable();
            let mut i = 0;
            while i < s.len() {
                let j = i + s[i..].iter().take_while(|&&v| v == s[i]).count();
                self.fancy.push(s[i]);
                self.repeats.push((j - i - 1) as u32);
                i = j;
            }
        } else {
            // A long list (a page many pages link to with this word) is
            // counted per value, in the same increasing order, instead of
            // sorted: sorting them took 1% of the index build's
            // instructions on rust-doc.
            let counts = &mut self.anchor_counts;
            for &v in s.iter() {
                counts[v as usize] += 1;
            }
            for (v, c) in counts.iter_mut().enumerate() {
                if *c > 0 {
                    self.fancy.push(v as u32);
                    self.repeats.push(*c - 1);
                    *c = 0;
                }
            }
        }
        self.distinct.push((self.fancy.len() - before) as u32);
        for &h in fancy.iter().filter(|&&h| class_of(h) == OTHER) {
            self.other.push(h);
        }
    }

    /// Appends the encoded block to `out` and empties the encoder.
    pub fn encode(&mut self, out: &mut Vec<u8>) {
        let n = self.docs.len();
        assert!(
            n > 0 && n <= BLOCK_DOCS,
            "a postings block holds 1..=128 docs"
        );
        let s = &mut self.scratch;
        s.clear();
        s.extend(self.docs.windows(2).map(|w| w[1] - w[0] - 1));
        let w_gap = max_width(s);
        let counts: [&[u32]; CLASSES] = std::array::from_fn(|c| &self.counts[c][..n]);
        let widths: [u8; CLASSES] = std::array::from_fn(|c| max_width(counts[c]));
        let mask = widths
            .iter()
            .enumerate()
            .fold(0u8, |m, (c, &w)| m | (u8::from(w > 0) << c));
        // Positions: per document and plain class (small, plain, bold,
        // large), the first absolute and then differences; the
        // capitalization of each hit in the same order, and the font of
        // each large hit (the class says the others').
        let (pos, caps, large) = (&mut self.positions, &mut self.caps, &mut self.large);
        pos.clear();
        caps.clear();
        large.clear();
        let mut at = 0;
        // `i` is a document: it indexes the same row of four count
        // columns, which an iterator over one of them would not give.
        #[allow(clippy::needless_range_loop)]
        for i in 0..n {
            let per: [u32; LARGE + 1] = std::array::from_fn(|c| counts[c][i]);
            let np = per.iter().sum::<u32>() as usize;
            let doc = &self.plain[at..at + np];
            at += np;
            // A document's plain hits are mostly of one class: then they
            // are all of it, in order, and no hit's class is looked at
            // (a document without plain hits takes this way too, with
            // nothing to add).
            if let Some(class) = (SMALL..=LARGE).find(|&c| per[c] as usize == np) {
                push_plain_run(doc.iter().copied(), class, pos, caps, large);
            } else {
                for class in (SMALL..=LARGE).filter(|&c| per[c] > 0) {
                    let of_class = doc.iter().copied().filter(|&h| class_of(h) == class);
                    push_plain_run(of_class, class, pos, caps, large);
                }
            }
        }
        let (w_cap, w_large) = (max_width(caps), max_width(large));
        let w_fancy = max_width(&self.fancy);
        // Repeats: none (width 0) leaves every document's distinct anchor
        // values equal to its anchor count, and the column unstored.
        let w_rep = max_width(&self.repeats);
        let w_distinct = if w_rep > 0 {
            max_width(&self.distinct)
        } else {
            0
        };
        out.extend_from_slice(&self.docs[0].to_le_bytes());
        out.extend_from_slice(&[(n - 1) as u8, w_gap, mask, w_cap | w_large << 1, w_fancy]);
        out.extend(widths.iter().filter(|&&w| w > 0));
        if widths[ANCHOR] > 0 {
            out.push(w_rep);
            if w_rep > 0 {
                out.push(w_distinct);
            }
        }
        if n == BLOCK_DOCS {
            pack_lanes_gaps(&self.docs, w_gap, out);
            for (c, &w) in counts.iter().zip(&widths) {
                if w > 0 {
                    pack_lanes(c, w, out);
                }
            }
            if w_distinct > 0 {
                pack_lanes(&self.distinct, w_distinct, out);
            }
        } else {
            pack(s, w_gap, out);
            for (c, &w) in counts.iter().zip(&widths) {
                pack(c, w, out);
            }
            pack(&self.distinct, w_distinct, out);
        }
        let shapes: Vec<RunShape> = pos.chunks(RUN_HITS).map(RunShape::of).collect();
        for shape in &shapes {
            out.push(shape.w | shape.x << 4);
            if shape.x > 0 {
                out.push((shape.e - 1) as u8);
            }
        }
        for (run, shape) in pos.chunks(RUN_HITS).zip(&shapes) {
            shape.pack(run, &mut self.scratch, out);
        }
        pack(caps, w_cap, out);
        pack(large, w_large, out);
        pack(&self.fancy, w_fancy, out);
        pack(&self.repeats, w_rep, out);
        for h in &self.other {
            out.extend_from_slice(&h.0.to_le_bytes());
        }
        self.docs.clear();
        self.plain.clear();
        self.fancy.clear();
        self.distinct.clear();
        self.repeats.clear();
        self.other.clear();
    }
}

/// Appends a document's plain hits of one class, in position order: their
/// positions (the first absolute, then differences), capitalizations and,
/// for the large class, fonts. Each column is one `extend`: over a
/// document's slice of hits (one class, the common case) it is sized once
/// and written without a capacity test per hit (with the counts read once
/// a document, [`BlockEncoder::encode`] went 1.76G → 1.49G instructions on
/// rust-doc).
#[inline(always)]
fn push_plain_run(
    hits: impl Iterator<Item = Hit> + Clone,
    class: usize,
    pos: &mut Vec<u32>,
    caps: &mut Vec<u32>,
    large: &mut Vec<u32>,
) {
    let mut prev = 0;
    pos.extend(hits.clone().map(|h| {
        let p = u32::from(h.plain_position());
        let d = p - prev;
        prev = p;
        d
    }));
    caps.extend(hits.clone().map(|h| u32::from(h.cap())));
    if class == LARGE {
        large.extend(hits.map(|h| u32::from(h.font() - LARGE_FONT)));
    }
}

/// How a run of positions is packed (patched frame of reference): every
/// value's low `w` bits, then the `e` values wider than that as exceptions,
/// their indices in the run (7 bits each) and their high bits (`x` bits
/// each, `w + x` the run's widest value). A run's positions are a
/// document's first, absolute (up to 4,095: 12 bits), among small
/// differences; packing them all at the widest value's width spent 10.8
/// bits per plain hit on vtk9-doc, 64% of the index, and exceptions cut
/// the positions by 17% (25.7 → 21.3 MB).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RunShape {
    /// Bits per value's low part.
    w: u8,
    /// Bits per exception's high part (0: no exception).
    x: u8,
    /// Exceptions (0 when `x` is 0).
    e: usize,
}

/// Bits per exception's index in its run (a run holds at most 128 values).
const EXCEPTION_INDEX_BITS: u8 = 7;

impl RunShape {
    /// The smallest packing of `run` (at most [`RUN_HITS`] values); of
    /// equal sizes the one with the fewest exceptions, the cheapest to
    /// decode.
    fn of(run: &[u32]) -> RunShape {
        // by_width[k]: values of exactly k bits.
        let mut by_width = [0usize; 33];
        for &v in run {
            by_width[bitpack::width(v) as usize] += 1;
        }
        let widest = (0..33).rev().find(|&k| by_width[k] > 0).unwrap_or(0) as u8;
        let mut best = RunShape {
            w: widest,
            x: 0,
            e: 0,
        };
        let mut best_len = packed_len(run.len(), widest);
        let mut wider = 0;
        for w in (0..widest).rev() {
            wider += by_width[w as usize + 1];
            let x = widest - w;
            let len = packed_len(run.len(), w)
                + 1
                + packed_len(wider, EXCEPTION_INDEX_BITS)
                + packed_len(wider, x);
            if len < best_len {
                (best, best_len) = (RunShape { w, x, e: wider }, len);
            }
        }
        best
    }

    /// Appends `run`'s low parts, then its exceptions' indices and high
    /// parts (`scratch` is working space).
    fn pack(&self, run: &[u32], scratch: &mut Vec<u32>, out: &mut Vec<u8>) {
        let low = (1u32 << self.w) - 1;
        scratch.clear();
        scratch.extend(run.iter().map(|&v| v & low));
        pack(scratch, self.w, out);
        if self.x == 0 {
            return;
        }
        scratch.clear();
        scratch.extend((0..run.len()).filter(|&i| run[i] > low).map(|i| i as u32));
        debug_assert_eq!(scratch.len(), self.e);
        pack(scratch, EXCEPTION_INDEX_BITS, out);
        scratch.clear();
        scratch.extend(run.iter().filter(|&&v| v > low).map(|&v| v >> self.w));
        pack(scratch, self.x, out);
    }
}

/// A URL, title or anchor hit as the block packs it: what its class does
/// not say, `(low 8 bits << 1) | cap`.
#[inline]
fn fancy_value(h: &Hit) -> u32 {
    (u32::from(h.0 & 0xff) << 1) | u32::from(h.cap())
}

/// Merges the runs of plain hits `out[start..ends[0]]`, `..ends[1]`, …
/// (one per class, in class order, each in position order) into position
/// order, equal positions by class: what a stable sort by (position,
/// class) gives, without sorting. The merge is written after them and
/// moved back.
fn merge_runs(out: &mut Vec<Hit>, start: usize, ends: &[usize]) {
    let mid = out.len();
    let mut heads = [0usize; LARGE + 1];
    let k = ends.len().min(heads.len());
    heads[0] = start;
    heads[1..k].copy_from_slice(&ends[..k - 1]);
    for _ in start..mid {
        // The run whose head has the least position; ties to the first
        // (the lower class).
        let mut best = usize::MAX;
        let mut best_pos = 0;
        for (j, (&h, &e)) in heads[..k].iter().zip(ends).enumerate() {
            if h < e {
                let p = out[h].plain_position();
                if best == usize::MAX || p < best_pos {
                    best = j;
                    best_pos = p;
                }
            }
        }
        let h = out[heads[best]];
        heads[best] += 1;
        out.push(h);
    }
    out.copy_within(mid.., start);
    out.truncate(mid);
}

/// The hit of class `class` (URL, title or anchor) packed as `v`.
#[inline]
fn unpack_fancy(class: usize, v: u32) -> Hit {
    let code = match class {
        URL => FancyType::Url,
        TITLE => FancyType::Title,
        _ => FancyType::Anchor,
    }
    .code();
    Hit(((v & 1) as u16) << 15 | FANCY_FONT << 12 | u16::from(code) << 8 | (v >> 1) as u16 & 0xff)
}

/// A postings block, parsed: header fields and where its columns are.
#[derive(Clone, Copy, Debug)]
pub struct BlockView<'a> {
    bytes: &'a [u8],
    /// Documents in the block.
    pub n: usize,
    /// First docID.
    pub first: u32,
    w_gap: u8,
    w_cap: u8,
    w_large: u8,
    w_fancy: u8,
    /// Bits per anchor value's repeats − 1 (0: no value repeats).
    w_rep: u8,
    /// Bits per document's distinct anchor values (0: not stored, each
    /// document's anchor count).
    w_distinct: u8,
    /// Per class, its column's width (0: not stored).
    widths: [u8; CLASSES],
    /// Per class, where its column starts.
    count_at: [usize; CLASSES],
    gaps_at: usize,
    /// Where the distinct anchor values column starts.
    distinct_at: usize,
    hits_at: usize,
}

/// Where the hit columns of a block are, once the counts are known.
#[derive(Clone, Debug, Default)]
pub struct HitColumns {
    /// Each run of positions: its shape and where its parts are.
    runs: Vec<PosRun>,
    widths_at: usize,
    /// Where the runs start (after their shapes).
    runs_at: usize,
    caps_at: usize,
    large_at: usize,
    fancy_at: usize,
    repeats_at: usize,
    other_at: usize,
    /// Total plain hits.
    pub plain: usize,
    /// Total large hits.
    pub large: usize,
    /// Total packed values: URL and title hits, distinct anchor values.
    pub fancy: usize,
    /// Total distinct anchor values (each with its repeats).
    pub distinct: usize,
    /// Total other hits.
    pub other: usize,
}

/// A run of positions located in its block ([`RunShape`]).
#[derive(Clone, Copy, Debug, Default)]
struct PosRun {
    shape: RunShape,
    /// Values in the run.
    len: usize,
    /// Where its low parts, exception indices and high parts start, and
    /// where it ends.
    at: usize,
    index_at: usize,
    high_at: usize,
    end: usize,
}

impl<'a> BlockView<'a> {
    /// Parses the header of the block in `bytes` (exactly the block).
    pub fn parse(bytes: &'a [u8]) -> Result<BlockView<'a>, String> {
        if bytes.len() < HEADER {
            return Err(format!(
                "postings block of {} bytes is shorter than its header",
                bytes.len()
            ));
        }
        let first = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let n = bytes[4] as usize + 1;
        let [w_gap, mask, attr, w_fancy] = [bytes[5], bytes[6], bytes[7], bytes[8]];
        let (w_cap, w_large) = (attr & 1, attr >> 1);
        if n > BLOCK_DOCS {
            return Err(format!(
                "{n} documents in a postings block (at most {BLOCK_DOCS})"
            ));
        }
        if w_gap > 32 || w_large > 2 || w_fancy > MAX_FANCY_WIDTH {
            return Err(format!(
                "bad header: widths {w_gap}/{w_cap}/{w_large}/{w_fancy}"
            ));
        }
        let stored = mask.count_ones() as usize;
        if HEADER + stored > bytes.len() {
            return Err("postings block cut in its count widths".into());
        }
        let mut widths = [0u8; CLASSES];
        let mut k = HEADER;
        for (c, w) in widths.iter_mut().enumerate() {
            if mask >> c & 1 == 1 {
                *w = bytes[k];
                k += 1;
                if *w == 0 || *w > 32 {
                    return Err(format!("{} count column of width {}", CLASS_NAMES[c], *w));
                }
            }
        }
        let (mut w_rep, mut w_distinct) = (0, 0);
        if widths[ANCHOR] > 0 {
            w_rep = *bytes
                .get(k)
                .ok_or("postings block cut in its repeat width")?;
            k += 1;
            if w_rep > 32 {
                return Err(format!("anchor repeats of width {w_rep}"));
            }
            if w_rep > 0 {
                w_distinct = *bytes
                    .get(k)
                    .ok_or("postings block cut in its repeat width")?;
                k += 1;
                if w_distinct == 0 || w_distinct > 32 {
                    return Err(format!("distinct anchors column of width {w_distinct}"));
                }
            }
        }
        let gaps_at = k;
        let len = |values: usize, w: u8| {
            if n == BLOCK_DOCS {
                lanes_len(w)
            } else {
                packed_len(values, w)
            }
        };
        let mut at = gaps_at + len(n - 1, w_gap);
        let mut count_at = [0usize; CLASSES];
        for (c, &w) in widths.iter().enumerate() {
            count_at[c] = at;
            at += len(n, w);
        }
        let distinct_at = at;
        if w_distinct > 0 {
            at += len(n, w_distinct);
        }
        if at > bytes.len() {
            return Err(format!(
                "postings block of {} bytes is cut in its docIDs or counts",
                bytes.len()
            ));
        }
        Ok(BlockView {
            bytes,
            n,
            first,
            w_gap,
            w_cap,
            w_large,
            w_fancy,
            w_rep,
            w_distinct,
            widths,
            count_at,
            gaps_at,
            distinct_at,
            hits_at: at,
        })
    }

    /// Decodes the docIDs into `docs[..n]`. Fails if they overflow.
    pub fn docs(&self, docs: &mut [u32]) -> Result<(), String> {
        let gaps = &self.bytes[self.gaps_at..self.count_at[0]];
        if self.n == BLOCK_DOCS {
            return Ok(bitpack::unpack_lanes_gaps(
                gaps, self.w_gap, self.first, docs,
            )?);
        }
        let docs = &mut docs[..self.n];
        docs[0] = self.first;
        bitpack::unpack_into(gaps, self.w_gap, 0, &mut docs[1..]).ok_or("docID gaps cut short")?;
        let mut prev = self.first;
        for d in docs[1..].iter_mut() {
            prev = prev
                .checked_add(*d)
                .and_then(|v| v.checked_add(1))
                .ok_or("docIDs overflow 32 bits")?;
            *d = prev;
        }
        Ok(())
    }

    /// Whether class `c`'s count column is stored: some document of the
    /// block has a hit of that class.
    #[inline]
    pub fn has_class(&self, c: usize) -> bool {
        self.widths[c] > 0
    }

    /// Decodes the count column of class `c` into `out[..n]`.
    pub fn counts(&self, c: usize, out: &mut [u32]) -> Result<(), String> {
        let end = if c + 1 < CLASSES {
            self.count_at[c + 1]
        } else {
            self.distinct_at
        };
        let bytes = &self.bytes[self.count_at[c]..end];
        if self.n == BLOCK_DOCS {
            bitpack::unpack_lanes(bytes, self.widths[c], out)
        } else {
            bitpack::unpack_into(bytes, self.widths[c], 0, &mut out[..self.n])
        }
        .ok_or_else(|| format!("{} counts cut short", CLASS_NAMES[c]))
    }

    /// Whether the block stores its documents' distinct anchor values
    /// ([`Self::distinct`]): some anchor value repeats.
    #[inline]
    pub fn has_repeats(&self) -> bool {
        self.w_distinct > 0
    }

    /// Decodes each document's distinct anchor values into `out[..n]`;
    /// only when [`Self::has_repeats`] (else they are the anchor counts).
    pub fn distinct(&self, out: &mut [u32]) -> Result<(), String> {
        let bytes = &self.bytes[self.distinct_at..self.hits_at];
        if self.n == BLOCK_DOCS {
            bitpack::unpack_lanes(bytes, self.w_distinct, out)
        } else {
            bitpack::unpack_into(bytes, self.w_distinct, 0, &mut out[..self.n])
        }
        .ok_or_else(|| "distinct anchor counts cut short".to_string())
    }

    /// Locates the hit columns from the total plain, large, packed fancy
    /// (URL, title and distinct anchor values), distinct anchor and other
    /// hit counts, checking that they fill the block exactly.
    pub fn columns(
        &self,
        (plain, large, fancy, distinct, other): (usize, usize, usize, usize, usize),
        out: &mut HitColumns,
    ) -> Result<(), String> {
        let widths_at = self.hits_at;
        let mut at = widths_at;
        out.runs.clear();
        for r in 0..plain.div_ceil(RUN_HITS) {
            let head = *self.bytes.get(at).ok_or("position widths cut short")?;
            at += 1;
            let (w, x) = (head & 0xf, head >> 4);
            if w + x > 12 {
                return Err(format!(
                    "position run {r} has widths {w} + {x} (at most 12 together)"
                ));
            }
            let len = (plain - r * RUN_HITS).min(RUN_HITS);
            let mut e = 0;
            if x > 0 {
                e = *self.bytes.get(at).ok_or("position widths cut short")? as usize + 1;
                at += 1;
                if e > len {
                    return Err(format!(
                        "position run {r} of {len} values has {e} exceptions"
                    ));
                }
            }
            out.runs.push(PosRun {
                shape: RunShape { w, x, e },
                len,
                ..PosRun::default()
            });
        }
        let runs_at = at;
        for run in &mut out.runs {
            let RunShape { w, x, e } = run.shape;
            run.at = at;
            run.index_at = run.at + packed_len(run.len, w);
            run.high_at = run.index_at + packed_len(e, EXCEPTION_INDEX_BITS);
            run.end = run.high_at + packed_len(e, x);
            at = run.end;
        }
        let caps_at = at;
        let large_at = caps_at + packed_len(plain, self.w_cap);
        let fancy_at = large_at + packed_len(large, self.w_large);
        let repeats_at = fancy_at + packed_len(fancy, self.w_fancy);
        let other_at = repeats_at + packed_len(distinct, self.w_rep);
        let end = other_at + 2 * other;
        if end != self.bytes.len() {
            return Err(format!(
                "hits take {} bytes, the block {}",
                end - self.hits_at,
                self.bytes.len() - self.hits_at
            ));
        }
        out.widths_at = widths_at;
        out.runs_at = runs_at;
        out.caps_at = caps_at;
        out.large_at = large_at;
        out.fancy_at = fancy_at;
        out.repeats_at = repeats_at;
        out.other_at = other_at;
        out.plain = plain;
        out.large = large;
        out.fancy = fancy;
        out.distinct = distinct;
        out.other = other;
        Ok(())
    }

    /// Adds to `buf`, values `off..off + buf.len()` of `run` as unpacked
    /// at its low width, the high parts of its exceptions among them,
    /// found by binary search on the increasing indices (a linear scan
    /// from the run's first exception for every document slowed AND, OR
    /// and phrase queries). Fails on indices that do not increase there
    /// and on an exception without high bits (a writer makes neither);
    /// [`Self::check_exceptions`] checks every exception of a block.
    fn patch(&self, run: &PosRun, off: usize, buf: &mut [u32]) -> Result<(), String> {
        let index = &self.bytes[run.index_at..run.high_at];
        let high = &self.bytes[run.high_at..run.end];
        let at = |j: usize| bitpack::get(index, EXCEPTION_INDEX_BITS, j) as usize;
        let (mut lo, mut hi) = (0, run.shape.e);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if at(mid) < off {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut next = off;
        for j in lo..run.shape.e {
            let i = at(j);
            if i >= off + buf.len() {
                break;
            }
            if i < next {
                return Err(format!(
                    "position exception at {i} after {}",
                    next as isize - 1
                ));
            }
            next = i + 1;
            let h = bitpack::get(high, run.shape.x, j);
            if h == 0 {
                return Err(format!("position exception at {i} has no high bits"));
            }
            buf[i - off] |= h << run.shape.w;
        }
        Ok(())
    }

    /// Checks every run's exceptions: indices increasing and inside the
    /// run, high parts not 0 (for `verify` and `dump`, which see what a
    /// document's binary search may skip).
    fn check_exceptions(&self, cols: &HitColumns) -> Result<(), String> {
        for run in &cols.runs {
            let index = &self.bytes[run.index_at..run.high_at];
            let high = &self.bytes[run.high_at..run.end];
            let mut next = 0;
            for j in 0..run.shape.e {
                let i = bitpack::get(index, EXCEPTION_INDEX_BITS, j) as usize;
                if i < next || i >= run.len {
                    return Err(format!(
                        "position exception at {i} in a run of {} (after {})",
                        run.len,
                        next as isize - 1
                    ));
                }
                next = i + 1;
                if bitpack::get(high, run.shape.x, j) == 0 {
                    return Err(format!("position exception at {i} has no high bits"));
                }
            }
        }
        Ok(())
    }

    /// Appends the hits of the document whose plain hits are
    /// `plain_first..plain_first + np`, large hits `large_first..`, packed
    /// fancy values `fancy_first..`, distinct anchor values
    /// `distinct_first..distinct_first + distinct` and other hits
    /// `other_first..` (from the counts' prefix sums), with `classes` its
    /// counts, to `out`: plain hits in position order (equal positions by
    /// class), then URL and title hits, anchor hits in increasing order of
    /// their packed value (each repeated its count of times), and other
    /// hits. Fails if a position passes 4,095, a large font is not one
    /// (its value would make the hit fancy), the anchor values do not
    /// increase or their repeats disagree with the anchor count, or the
    /// other hits' types disagree with the counts.
    ///
    /// `read` says which classes are appended (the others' hits are
    /// skipped, and not checked) and whether the plain hits'
    /// capitalization is read: with `caps` false each is left
    /// uncapitalized (the proximity match reads only a hit's type, field
    /// and position, and unpacking the capitalization column was a second
    /// bit-unpacking per run of plain hits). `scratch` is working space.
    ///
    /// Returns how many of the hits appended lead them in (field,
    /// position) order (the proximity match's, `rank::hit_key`): the
    /// plain hits (position order), then, if the URL hits and the title
    /// hits are each in position order, these and the anchor hits too
    /// (their packed values increase, checked, and order them by source
    /// and position). Only the other hits, after the anchors, are left to
    /// the reader to check.
    #[allow(clippy::too_many_arguments)]
    pub fn hits(
        &self,
        cols: &HitColumns,
        (plain_first, large_first, fancy_first, distinct_first, other_first): (
            usize,
            usize,
            usize,
            usize,
            usize,
        ),
        classes: &HitClasses,
        distinct: usize,
        read: HitRead,
        scratch: &mut HitScratch,
        out: &mut Vec<Hit>,
    ) -> Result<usize, String> {
        let np = classes[SMALL..=LARGE].iter().sum::<u32>() as usize;
        // Room for the hits and, with several plain classes, their merge.
        out.reserve(2 * np + classes[URL..].iter().sum::<u32>() as usize);
        let cap_column = &self.bytes[cols.caps_at..cols.large_at];
        let large = &self.bytes[cols.large_at..cols.fancy_at];
        let start = out.len();
        let HitScratch {
            positions: buf,
            caps: cap_buf,
        } = scratch;
        let mut k = 0;
        let mut li = large_first;
        // Where each class's run of hits ends in `out` (classes with hits).
        let mut ends = [0usize; LARGE + 1];
        let mut runs = 0;
        for (class, &cnt) in classes.iter().enumerate().take(LARGE + 1) {
            let cnt = cnt as usize;
            if cnt == 0 {
                continue;
            }
            if !read.has(class) {
                k += cnt;
                continue;
            }
            // The class's positions, run by run: the first absolute, then
            // differences.
            let mut pos = 0u32;
            let mut done = 0;
            while done < cnt {
                let i = plain_first + k + done;
                let (r, off) = (i / RUN_HITS, i % RUN_HITS);
                let take = (RUN_HITS - off).min(cnt - done);
                let run = cols.runs.get(r).ok_or("position runs cut short")?;
                bitpack::unpack_into(
                    &self.bytes[run.at..run.index_at],
                    run.shape.w,
                    off,
                    &mut buf[..take],
                )
                .ok_or("position run cut short")?;
                if run.shape.e > 0 {
                    self.patch(run, off, &mut buf[..take])?;
                }
                if read.caps {
                    bitpack::unpack_into(cap_column, self.w_cap, i, &mut cap_buf[..take])
                        .ok_or("capitalization cut short")?;
                } else {
                    cap_buf[..take].fill(0);
                }
                // The positions summed in place (`pos` starts at 0, so the
                // class's first value, absolute, is taken as it is) and
                // checked once: they never decrease, so the last is the
                // largest (testing every one was a tenth of this
                // function's time on vtk9-doc).
                for v in &mut buf[..take] {
                    pos = pos.saturating_add(*v);
                    *v = pos;
                }
                if pos > MAX_PLAIN_POSITION {
                    let p = buf[..take].iter().find(|&&p| p > MAX_PLAIN_POSITION);
                    let p = p.copied().unwrap_or(pos);
                    return Err(format!("plain hit position {p} over {MAX_PLAIN_POSITION}"));
                }
                let hits = buf[..take].iter().zip(&cap_buf[..take]);
                if class == LARGE {
                    for (&p, &cap) in hits {
                        if li >= cols.large {
                            return Err("large fonts cut short".into());
                        }
                        let font = LARGE_FONT + bitpack::get(large, self.w_large, li) as u8;
                        li += 1;
                        // Font 7 is a fancy hit's mark: a plain hit of it
                        // would break the order a hit list is read in
                        // (plain hits first, by position).
                        if u16::from(font) >= FANCY_FONT {
                            return Err(format!("large font {font} of a plain hit"));
                        }
                        out.push(Hit::plain(cap == 1, font, p));
                    }
                } else {
                    // The class says the font: the hits are appended by one
                    // exact-size extend, without a capacity check and a
                    // font read per hit (the per-hit push was a third of
                    // this function's time).
                    let font = class as u8;
                    out.extend(hits.map(|(&p, &cap)| Hit::plain(cap == 1, font, p)));
                }
                done += take;
            }
            k += cnt;
            ends[runs] = out.len();
            runs += 1;
        }
        if runs > 1 {
            merge_runs(out, start, &ends[..runs]);
        }
        let plain_read = out.len() - start;
        let fancy = &self.bytes[cols.fancy_at..cols.repeats_at];
        let mut at = fancy_first;
        // Whether the URL and title hits are each in position order (a
        // writer puts them so; nothing checks it): then the list is in
        // (field, position) order up to the other hits.
        let mut fancy_ordered = true;
        for class in [URL, TITLE] {
            let cnt = classes[class] as usize;
            if at + cnt > cols.fancy {
                return Err("fancy hits cut short".into());
            }
            if !read.has(class) {
                at += cnt;
                continue;
            }
            let class_start = out.len();
            let mut done = 0;
            while done < cnt {
                let take = RUN_HITS.min(cnt - done);
                bitpack::unpack_into(fancy, self.w_fancy, at, &mut buf[..take])
                    .ok_or("fancy hits cut short")?;
                out.extend(buf[..take].iter().map(|&v| unpack_fancy(class, v)));
                at += take;
                done += take;
            }
            fancy_ordered &= out[class_start..].is_sorted_by_key(|h| h.0 & 0xff);
        }
        let anchors = classes[ANCHOR] as usize;
        if read.has(ANCHOR) && (anchors > 0 || distinct > 0) {
            if at + distinct > cols.fancy || distinct_first + distinct > cols.distinct {
                return Err("anchor values cut short".into());
            }
            let repeats = &self.bytes[cols.repeats_at..cols.other_at];
            let (mut left, mut prev) = (anchors, 0);
            for j in 0..distinct {
                let v = bitpack::get(fancy, self.w_fancy, at + j);
                if j > 0 && prev >= v {
                    return Err(format!("anchor value {v:#x} after {prev:#x}"));
                }
                prev = v;
                let r = bitpack::get(repeats, self.w_rep, distinct_first + j) as usize + 1;
                if r > left {
                    return Err(format!(
                        "anchor values repeat more than the anchor count {anchors}"
                    ));
                }
                left -= r;
                out.resize(out.len() + r, unpack_fancy(ANCHOR, v));
            }
            if left > 0 {
                return Err(format!(
                    "anchor values repeat {} times, the anchor count is {anchors}",
                    anchors - left
                ));
            }
        }
        let ordered = if fancy_ordered {
            out.len() - start
        } else {
            plain_read
        };
        let others = if read.has(OTHER) { classes[OTHER] } else { 0 };
        for k in 0..others as usize {
            if other_first + k >= cols.other {
                return Err("other hits cut short".into());
            }
            let at = cols.other_at + 2 * (other_first + k);
            let h = Hit(u16::from_le_bytes([self.bytes[at], self.bytes[at + 1]]));
            if !h.is_fancy() || class_of(h) != OTHER {
                return Err(format!(
                    "other hit {:#06x} is not a meta or reserved hit",
                    h.0
                ));
            }
            out.push(h);
        }
        Ok(ordered)
    }
}

/// What [`BlockView::hits`] reads of a document's hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HitRead {
    /// The classes whose hits are read (bit `1 << class`).
    pub classes: u8,
    /// Whether the plain hits' capitalization is read.
    pub caps: bool,
}

impl HitRead {
    /// Every hit, capitalization included.
    pub const ALL: HitRead = HitRead {
        classes: u8::MAX,
        caps: true,
    };

    /// Whether the hits of class `c` are read.
    #[inline]
    fn has(self, c: usize) -> bool {
        self.classes >> c & 1 == 1
    }
}

/// [`BlockView::hits`]' working space: a run of values at a time. Kept
/// by the caller, as zeroing two fresh arrays per call was 2% of a 2–3
/// word query's instructions (rust-doc's hit lists are a few hits each).
#[derive(Clone, Debug)]
pub struct HitScratch {
    positions: [u32; RUN_HITS],
    caps: [u32; RUN_HITS],
}

impl Default for HitScratch {
    fn default() -> Self {
        HitScratch {
            positions: [0; RUN_HITS],
            caps: [0; RUN_HITS],
        }
    }
}

/// A postings block decoded for reading: docIDs, and on request the counts
/// (with their prefix sums) and hits.
pub struct DecodedBlock {
    /// docIDs.
    pub docs: [u32; BLOCK_DOCS],
    /// Per class, each document's hits of it (valid once [`Self::count`]
    /// ran).
    pub counts: [[u32; BLOCK_DOCS]; CLASSES],
    /// Index of each document's first plain hit (n + 1 entries).
    pub plain_at: [u32; BLOCK_DOCS + 1],
    /// Index of each document's first large hit (n + 1 entries).
    pub large_at: [u32; BLOCK_DOCS + 1],
    /// Index of each document's first packed fancy value (n + 1 entries).
    pub fancy_at: [u32; BLOCK_DOCS + 1],
    /// Each document's distinct anchor values (valid once the prefix sums
    /// are worked out).
    pub distinct: [u32; BLOCK_DOCS],
    /// Index of each document's first distinct anchor value (n + 1
    /// entries).
    pub distinct_at: [u32; BLOCK_DOCS + 1],
    /// Index of each document's first other hit (n + 1 entries).
    pub other_at: [u32; BLOCK_DOCS + 1],
    /// Documents.
    pub n: usize,
    /// The counts are decoded.
    counted: bool,
    /// Their prefix sums are worked out.
    summed: bool,
    /// Count columns that may hold other values than 0 (bit per class).
    filled: u8,
    /// Hit columns (located on first use, `located`). Kept from block
    /// to block, so that their runs' list is not allocated again for
    /// every block whose hits are read (~1% of a 2–3-word query's
    /// instructions on rust-doc).
    cols: HitColumns,
    /// `cols` holds this block's columns.
    located: bool,
    /// The hit decoder's working space.
    scratch: HitScratch,
}

impl Default for DecodedBlock {
    fn default() -> Self {
        DecodedBlock {
            docs: [0; BLOCK_DOCS],
            counts: [[0; BLOCK_DOCS]; CLASSES],
            plain_at: [0; BLOCK_DOCS + 1],
            large_at: [0; BLOCK_DOCS + 1],
            fancy_at: [0; BLOCK_DOCS + 1],
            distinct: [0; BLOCK_DOCS],
            distinct_at: [0; BLOCK_DOCS + 1],
            other_at: [0; BLOCK_DOCS + 1],
            n: 0,
            counted: false,
            summed: false,
            filled: 0,
            cols: HitColumns::default(),
            located: false,
            scratch: HitScratch::default(),
        }
    }
}

impl DecodedBlock {
    /// Decodes the docIDs of `view` (the counts wait for [`Self::count`]).
    pub fn load(&mut self, view: &BlockView<'_>) -> Result<(), String> {
        view.docs(&mut self.docs)?;
        self.n = view.n;
        self.counted = false;
        self.summed = false;
        self.located = false;
        Ok(())
    }

    /// Decodes the stored count columns, once per block (a column not
    /// stored is zeros).
    pub fn count(&mut self, view: &BlockView<'_>) -> Result<(), String> {
        if self.counted {
            return Ok(());
        }
        for (c, col) in self.counts.iter_mut().enumerate() {
            if view.widths[c] > 0 {
                view.counts(c, col)?;
                self.filled |= 1 << c;
            } else if self.filled >> c & 1 == 1 {
                col.fill(0);
                self.filled &= !(1 << c);
            }
        }
        self.counted = true;
        Ok(())
    }

    /// Decodes the counts and their prefix sums (where each document's
    /// hits start), once per block.
    fn sum(&mut self, view: &BlockView<'_>) -> Result<(), String> {
        if self.summed {
            return Ok(());
        }
        self.count(view)?;
        let n = view.n;
        // Without repeats each anchor value is one hit.
        if view.has_repeats() {
            view.distinct(&mut self.distinct)?;
        } else {
            self.distinct[..n].copy_from_slice(&self.counts[ANCHOR][..n]);
        }
        let (mut p, mut l, mut f, mut d, mut o) = (0u32, 0u32, 0u32, 0u32, 0u32);
        let overflow = || "hit counts overflow".to_string();
        let c = &self.counts;
        for i in 0..n {
            self.plain_at[i] = p;
            self.large_at[i] = l;
            self.fancy_at[i] = f;
            self.distinct_at[i] = d;
            l = l.checked_add(c[LARGE][i]).ok_or_else(overflow)?;
            self.other_at[i] = o;
            for col in &c[SMALL..=LARGE] {
                p = p.checked_add(col[i]).ok_or_else(overflow)?;
            }
            d = d.checked_add(self.distinct[i]).ok_or_else(overflow)?;
            for col in &c[URL..=TITLE] {
                f = f.checked_add(col[i]).ok_or_else(overflow)?;
            }
            f = f.checked_add(self.distinct[i]).ok_or_else(overflow)?;
            o = o.checked_add(c[OTHER][i]).ok_or_else(overflow)?;
        }
        self.plain_at[n] = p;
        self.large_at[n] = l;
        self.fancy_at[n] = f;
        self.distinct_at[n] = d;
        self.other_at[n] = o;
        self.summed = true;
        Ok(())
    }

    /// Document `i`'s hits per class (see [`class_of`]).
    pub fn classes(&mut self, view: &BlockView<'_>, i: usize) -> Result<HitClasses, String> {
        self.count(view)?;
        let mut c = [0u32; CLASSES];
        for (x, col) in c.iter_mut().zip(&self.counts) {
            *x = col[i];
        }
        Ok(c)
    }

    /// Document `i`'s plain and fancy hit counts.
    pub fn hit_counts(&mut self, view: &BlockView<'_>, i: usize) -> Result<(u32, u32), String> {
        plain_fancy(&self.classes(view, i)?)
    }

    /// Appends document `i`'s hits to `out`.
    pub fn hits(
        &mut self,
        view: &BlockView<'_>,
        i: usize,
        out: &mut Vec<Hit>,
    ) -> Result<(), String> {
        self.hits_read(view, i, HitRead::ALL, out).map(|_| ())
    }

    /// Appends document `i`'s hits of the classes `classes` (bit `1 <<
    /// class`) to `out` as the proximity match reads them: plain hits
    /// uncapitalized ([`BlockView::hits`] without `caps`). Returns how
    /// many of them lead in (field, position) order ([`BlockView::hits`]):
    /// the list is in that order if its tail from there is.
    pub fn placed_hits(
        &mut self,
        view: &BlockView<'_>,
        i: usize,
        classes: u8,
        out: &mut Vec<Hit>,
    ) -> Result<usize, String> {
        let read = HitRead {
            classes,
            caps: false,
        };
        self.hits_read(view, i, read, out)
    }

    /// [`Self::hits`] of the classes and capitalization `read` says;
    /// returns how many hits lead in (field, position) order.
    fn hits_read(
        &mut self,
        view: &BlockView<'_>,
        i: usize,
        read: HitRead,
        out: &mut Vec<Hit>,
    ) -> Result<usize, String> {
        let classes = self.classes(view, i)?;
        self.sum(view)?;
        if !self.located {
            view.columns(self.totals(), &mut self.cols)?;
            self.located = true;
        }
        view.hits(
            &self.cols,
            (
                self.plain_at[i] as usize,
                self.large_at[i] as usize,
                self.fancy_at[i] as usize,
                self.distinct_at[i] as usize,
                self.other_at[i] as usize,
            ),
            &classes,
            self.distinct[i] as usize,
            read,
            &mut self.scratch,
            out,
        )
    }

    /// The block's plain, large, packed fancy, distinct anchor and other
    /// values, once the prefix sums are worked out.
    fn totals(&self) -> (usize, usize, usize, usize, usize) {
        let n = self.n;
        (
            self.plain_at[n] as usize,
            self.large_at[n] as usize,
            self.fancy_at[n] as usize,
            self.distinct_at[n] as usize,
            self.other_at[n] as usize,
        )
    }
}

/// A postings block's bytes, field by field (what `webmill inspect
/// --bytes` adds up over a barrel), with the values they hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockBytes {
    /// Postings blocks added up.
    pub blocks: u64,
    /// Of which full (128 documents).
    pub full_blocks: u64,
    /// Documents.
    pub docs: u64,
    /// Plain hits.
    pub plain_hits: u64,
    /// URL, title and anchor hits (an anchor value's repeats each count).
    pub fancy_hits: u64,
    /// Distinct anchor values (each stored once with its repeats).
    pub anchor_values: u64,
    /// Other hits.
    pub other_hits: u64,
    /// The fixed header and the columns' width bytes.
    pub header: u64,
    /// docID gaps.
    pub gaps: u64,
    /// Count columns, per class.
    pub counts: [u64; CLASSES],
    /// The distinct anchor values column.
    pub distinct: u64,
    /// The position runs' width bytes.
    pub run_widths: u64,
    /// The position runs' low parts.
    pub runs: u64,
    /// The position runs' exceptions: their indices and high parts.
    pub exceptions: u64,
    /// The plain hits' capitalization.
    pub caps: u64,
    /// The large hits' fonts.
    pub large_fonts: u64,
    /// The packed URL and title hits and distinct anchor values.
    pub fancy: u64,
    /// The anchor values' repeats.
    pub repeats: u64,
    /// The other hits.
    pub other: u64,
}

impl BlockBytes {
    /// Adds `o`'s figures to these.
    pub fn add(&mut self, o: &BlockBytes) {
        self.blocks += o.blocks;
        self.full_blocks += o.full_blocks;
        self.docs += o.docs;
        self.plain_hits += o.plain_hits;
        self.fancy_hits += o.fancy_hits;
        self.anchor_values += o.anchor_values;
        self.other_hits += o.other_hits;
        self.header += o.header;
        self.gaps += o.gaps;
        for (a, b) in self.counts.iter_mut().zip(o.counts) {
            *a += b;
        }
        self.distinct += o.distinct;
        self.run_widths += o.run_widths;
        self.runs += o.runs;
        self.exceptions += o.exceptions;
        self.caps += o.caps;
        self.large_fonts += o.large_fonts;
        self.fancy += o.fancy;
        self.repeats += o.repeats;
        self.other += o.other;
    }

    /// The bytes of all fields.
    pub fn total(&self) -> u64 {
        self.header
            + self.gaps
            + self.counts.iter().sum::<u64>()
            + self.distinct
            + self.run_widths
            + self.runs
            + self.exceptions
            + self.caps
            + self.large_fonts
            + self.fancy
            + self.repeats
            + self.other
    }
}

/// The bytes of each field of the block in `bytes` (exactly the block),
/// checking that the fields fill it.
pub fn block_bytes(bytes: &[u8]) -> Result<BlockBytes, String> {
    let view = BlockView::parse(bytes)?;
    let mut d = DecodedBlock::default();
    d.load(&view)?;
    d.sum(&view)?;
    let n = view.n;
    let mut cols = HitColumns::default();
    view.columns(d.totals(), &mut cols)?;
    let mut counts = [0u64; CLASSES];
    for (c, x) in counts.iter_mut().enumerate() {
        let end = view
            .count_at
            .get(c + 1)
            .copied()
            .unwrap_or(view.distinct_at);
        *x = (end - view.count_at[c]) as u64;
    }
    let hits = |c: usize| d.counts[c][..n].iter().map(|&x| u64::from(x)).sum::<u64>();
    Ok(BlockBytes {
        blocks: 1,
        full_blocks: u64::from(n == BLOCK_DOCS),
        docs: n as u64,
        plain_hits: cols.plain as u64,
        fancy_hits: hits(URL) + hits(TITLE) + hits(ANCHOR),
        anchor_values: cols.distinct as u64,
        other_hits: cols.other as u64,
        header: view.gaps_at as u64,
        gaps: (view.count_at[0] - view.gaps_at) as u64,
        counts,
        distinct: (view.hits_at - view.distinct_at) as u64,
        run_widths: (cols.runs_at - cols.widths_at) as u64,
        runs: cols.runs.iter().map(|r| r.index_at - r.at).sum::<usize>() as u64,
        exceptions: cols.runs.iter().map(|r| r.end - r.index_at).sum::<usize>() as u64,
        caps: (cols.large_at - cols.caps_at) as u64,
        large_fonts: (cols.fancy_at - cols.large_at) as u64,
        fancy: (cols.repeats_at - cols.fancy_at) as u64,
        repeats: (cols.other_at - cols.repeats_at) as u64,
        other: (bytes.len() - cols.other_at) as u64,
    })
}

/// One document of a doclist with its hits, as tests and dumps see it.
pub type Posting = (u32, Vec<Hit>, Vec<Hit>);

/// Decodes a whole block into postings, checking every field (for `verify`,
/// `dump` and tests).
pub fn decode_block(bytes: &[u8]) -> Result<Vec<Posting>, String> {
    let view = BlockView::parse(bytes)?;
    let mut d = DecodedBlock::default();
    d.load(&view)?;
    let mut out = Vec::with_capacity(d.n);
    let mut hits = Vec::new();
    for i in 0..d.n {
        hits.clear();
        d.hits(&view, i, &mut hits)?;
        let np = (d.plain_at[i + 1] - d.plain_at[i]) as usize;
        out.push((d.docs[i], hits[..np].to_vec(), hits[np..].to_vec()));
    }
    if d.located {
        view.check_exceptions(&d.cols)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::hit::HitFields;

    /// The table gives every hit the class its font and type say.
    #[test]
    fn class_of_every_hit_is_that_of_its_font_and_type() {
        for v in 0..=u16::MAX {
            let h = Hit(v);
            let naive = match h.fancy_type() {
                None => match h.font() {
                    0 => SMALL,
                    1 => PLAIN,
                    2 => BOLD,
                    _ => LARGE,
                },
                Some(FancyType::Url) => URL,
                Some(FancyType::Title) => TITLE,
                Some(FancyType::Anchor) => ANCHOR,
                Some(_) => OTHER,
            };
            assert_eq!(class_of(h), naive, "{v:#06x}");
        }
    }
    use proptest::prelude::*;

    fn posting() -> impl Strategy<Value = (u32, Vec<Hit>, Vec<Hit>)> {
        (
            1u32..5000,
            proptest::collection::vec((any::<bool>(), 0u8..=6, 0u32..5000), 0..300),
            proptest::collection::vec((any::<bool>(), 0u8..6, any::<u64>(), 0u32..300), 0..6),
            // Anchor hits from few sources at few positions: many repeats.
            proptest::collection::vec((any::<bool>(), 0u64..4, 0u32..3), 0..3),
            0usize..200,
        )
            .prop_map(|(gap, plain, fancy, texts, repeats)| {
                let mut plain: Vec<Hit> = plain
                    .into_iter()
                    .map(|(c, f, p)| Hit::plain(c, f, p))
                    .collect();
                // Position order, equal positions by class, as a block
                // gives them back.
                plain.sort_by_key(|h| (h.plain_position(), class_of(*h)));
                let mut fancy: Vec<Hit> = fancy
                    .into_iter()
                    .map(|(c, t, s, p)| match t {
                        2 => Hit::anchor(c, s, p),
                        t => Hit::fancy(c, FancyType::from_code(t), p),
                    })
                    .collect();
                if !texts.is_empty() {
                    for k in 0..repeats {
                        let (c, s, p) = texts[k * 7 % texts.len()];
                        fancy.insert(k % (fancy.len() + 1), Hit::anchor(c, s, p));
                    }
                }
                (gap, plain, fancy)
            })
    }

    /// A hit's (field, position), the order the proximity match reads
    /// hit lists in, worked out from its fields: plain hits in field 0,
    /// URL 1, title 2, other fancy hits 3, anchors 16 + their source.
    fn field_position(h: Hit) -> (u16, u16) {
        match h.fields() {
            HitFields::Plain { position, .. } => (0, position),
            HitFields::Anchor {
                source, position, ..
            } => (16 + u16::from(source), u16::from(position)),
            HitFields::Fancy { kind, position, .. } => (
                match kind {
                    FancyType::Url => 1,
                    FancyType::Title => 2,
                    _ => 3,
                },
                u16::from(position),
            ),
        }
    }

    /// The fancy hits as a block gives them back: by class, URL, title
    /// and other hits each in its order, anchor hits by (source hash,
    /// position, cap).
    fn by_class(fancy: &[Hit]) -> Vec<Hit> {
        let mut f = fancy.to_vec();
        f.sort_by_key(|&h| {
            let c = class_of(h);
            (
                c,
                if c == ANCHOR {
                    (h.0 & 0xff, h.cap())
                } else {
                    (0, false)
                },
            )
        });
        f
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn blocks_roundtrip(first in 0u32..1_000_000, docs in proptest::collection::vec(posting(), 1..=128)) {
            let mut enc = BlockEncoder::new();
            let mut want = Vec::new();
            let mut doc = first;
            for (gap, plain, fancy) in &docs {
                enc.push(doc, plain, fancy);
                want.push((doc, plain.clone(), by_class(fancy)));
                doc += gap;
            }
            let mut out = vec![];
            enc.encode(&mut out);
            prop_assert!(enc.is_empty());
            prop_assert_eq!(decode_block(&out).unwrap(), want.clone());
            // The fields' bytes add up to the block, their values to the postings'.
            let bytes = block_bytes(&out).unwrap();
            prop_assert_eq!(bytes.total(), out.len() as u64);
            prop_assert_eq!(bytes.docs, want.len() as u64);
            prop_assert_eq!(bytes.plain_hits, want.iter().map(|w| w.1.len() as u64).sum::<u64>());
            prop_assert_eq!(
                bytes.fancy_hits + bytes.other_hits,
                want.iter().map(|w| w.2.len() as u64).sum::<u64>()
            );
            // Each distinct (document, anchor hit) is stored once.
            let mut distinct: Vec<(u32, u16)> = want
                .iter()
                .flat_map(|w| w.2.iter().filter(|&&h| class_of(h) == ANCHOR).map(move |h| (w.0, h.0)))
                .collect();
            distinct.dedup();
            prop_assert_eq!(bytes.anchor_values, distinct.len() as u64);
            // Any one document's hits and counts, alone.
            let view = BlockView::parse(&out).unwrap();
            let mut d = DecodedBlock::default();
            d.load(&view).unwrap();
            for i in (0..want.len()).rev().step_by(7) {
                let mut all = want[i].1.clone();
                all.extend_from_slice(&want[i].2);
                let mut classes = [0u32; CLASSES];
                for &h in &all {
                    classes[class_of(h)] += 1;
                }
                prop_assert_eq!(d.classes(&view, i).unwrap(), classes);
                prop_assert_eq!(
                    d.hit_counts(&view, i).unwrap(),
                    (want[i].1.len() as u32, want[i].2.len() as u32)
                );
                let mut hits = Vec::new();
                d.hits(&view, i, &mut hits).unwrap();
                prop_assert_eq!(&hits, &all);
                // As the proximity match reads them: the same hits, the
                // plain ones uncapitalized, and as many said to lead in
                // (field, position) order as do: all but the other hits
                // (the writer puts URL and title hits in position order).
                let uncapitalized: Vec<Hit> = all
                    .iter()
                    .map(|&h| if h.is_fancy() { h } else { Hit(h.0 & 0x7fff) })
                    .collect();
                hits.clear();
                let ordered = d.placed_hits(&view, i, u8::MAX, &mut hits).unwrap();
                prop_assert_eq!(&hits, &uncapitalized);
                // Some classes only: those classes' hits, in the same order
                // (read after the capitalized ones, whose scratch they
                // must not take).
                let mut some = Vec::new();
                let classes_read = (i as u8).wrapping_mul(0x35) | 1 << PLAIN;
                d.placed_hits(&view, i, classes_read, &mut some).unwrap();
                let want_some: Vec<Hit> = uncapitalized
                    .iter()
                    .copied()
                    .filter(|&h| classes_read >> class_of(h) & 1 == 1)
                    .collect();
                prop_assert_eq!(&some, &want_some);
                let in_order = |class: usize| {
                    all.iter()
                        .filter(|&&h| class_of(h) == class)
                        .is_sorted_by_key(|&h| field_position(h))
                };
                let np = want[i].1.len();
                let want_ordered = if in_order(URL) && in_order(TITLE) {
                    all.len() - classes[OTHER] as usize
                } else {
                    np
                };
                prop_assert_eq!(ordered, want_ordered);
                prop_assert!(hits[..ordered].is_sorted_by_key(|&h| field_position(h)));
            }
            // A block cut or extended by a byte is refused.
            prop_assert!(decode_block(&out[..out.len() - 1]).is_err());
            let mut longer = out.clone();
            longer.push(0);
            prop_assert!(decode_block(&longer).is_err());
        }
    }

    /// The layout, byte by byte (the example of `formats/barrel.md`).
    #[test]
    fn golden_block() {
        let mut enc = BlockEncoder::new();
        enc.push(
            7,
            &[Hit::plain(true, 1, 0), Hit::plain(false, 1, 5)],
            &[Hit::title(false, 0)],
        );
        enc.push(9, &[Hit::plain(false, 2, 3)], &[Hit::anchor(true, 1, 2)]);
        let mut out = Vec::new();
        enc.encode(&mut out);
        // first 7; n − 1 = 1; gap 9 − 7 − 1 = 1 (1 bit); columns plain (2,
        // 0: 2 bits), bold (0, 1: 1 bit), title (1, 0: 1 bit), anchor (0, 1:
        // 1 bit): mask 0b0110_0110; positions by document and class: 0, 5
        // (plain), 3 (bold) in one run of width 3; capitalization 1, 0, 0
        // (1 bit), no large hit; fancy title0 → 0 << 1 | 0 = 0, anchor2#9
        // → 0x92 << 1 | 1 = 0x125 (9 bits).
        assert_eq!(
            out,
            [
                0x07, 0, 0, 0, // first
                0x01, 0x01, 0x66, 0x01,
                0x09, // n − 1, w_gap, mask, w_cap | w_large << 1, w_fancy
                0x02, 0x01, 0x01, 0x01, // widths: plain, bold, title, anchor
                0x00, // w_rep: no anchor value repeats (no distinct column)
                0x01, // gaps: 1
                0x02, // plain: 2, 0 → 0b00_10
                0x02, // bold: 0, 1 → 0b1_0
                0x01, // title: 1, 0 → 0b0_1
                0x02, // anchor: 0, 1 → 0b1_0
                0x03, // run widths: 3
                0xe8, 0x00, // runs: 0, 5, 3 → 000 101 011 → 0b11_101_000 0b0
                0x01, // capitalization: 1, 0, 0 → 0b001
                0x00, 0x4a, 0x02, // fancy: 0, 0x125 at 9 bits
            ]
        );
        let b = block_bytes(&out).unwrap();
        assert_eq!(
            (
                b.header,
                b.gaps,
                b.counts,
                b.run_widths,
                b.runs,
                b.caps,
                b.large_fonts,
                b.fancy,
                b.other
            ),
            (14, 1, [0, 1, 1, 0, 0, 1, 1, 0], 1, 2, 1, 0, 3, 0)
        );
        assert_eq!(
            decode_block(&out).unwrap(),
            vec![
                (
                    7,
                    vec![Hit::plain(true, 1, 0), Hit::plain(false, 1, 5)],
                    vec![Hit::title(false, 0)]
                ),
                (
                    9,
                    vec![Hit::plain(false, 2, 3)],
                    vec![Hit::anchor(true, 1, 2)]
                ),
            ]
        );
    }

    /// Anchor hits that repeat: the distinct values in increasing order,
    /// each with its repeats − 1, and the document's distinct count.
    #[test]
    fn golden_block_with_repeats() {
        let (a, a_cap, b) = (
            Hit::anchor(false, 1, 2),
            Hit::anchor(true, 1, 2),
            Hit::anchor(false, 2, 0),
        );
        let mut enc = BlockEncoder::new();
        enc.push(4, &[], &[a, a_cap, a, b, a]);
        let mut out = Vec::new();
        enc.encode(&mut out);
        // anchor1#3 → 0x30 << 1 = 0x60 (once), anchor2#9 → 0x92 << 1 =
        // 0x124 (3 times), ANCHOR2#9 → 0x125 (once).
        assert_eq!(
            out,
            [
                0x04, 0, 0, 0, // first
                0x00, 0x00, 0x40, 0x00, 0x09, // n − 1, w_gap, mask: anchor, attr, w_fancy
                0x03, // width of the anchor counts (5: 3 bits)
                0x02, 0x02, // w_rep (repeats − 1 up to 2), w_distinct (3)
                0x05, // anchor count 5
                0x03, // distinct anchor values 3
                0x60, 0x48, 0x96, 0x04, // 0x60, 0x124, 0x125 at 9 bits
                0x08, // repeats − 1: 0, 2, 0 at 2 bits
            ]
        );
        let bb = block_bytes(&out).unwrap();
        assert_eq!(
            (
                bb.header,
                bb.counts[ANCHOR],
                bb.distinct,
                bb.fancy,
                bb.repeats
            ),
            (12, 1, 1, 4, 1)
        );
        assert_eq!((bb.fancy_hits, bb.anchor_values), (5, 3));
        assert_eq!(
            decode_block(&out).unwrap(),
            vec![(4, vec![], vec![b, a, a, a, a_cap])]
        );
        // Repeats that disagree with the anchor count, or values out of
        // order, are refused.
        let mut bad = out.clone();
        bad[12] = 6;
        assert!(decode_block(&bad).unwrap_err().contains("anchor count"));
        let mut bad = out.clone();
        bad[14] = 0xff;
        bad[15] = 0x49;
        assert!(decode_block(&bad).unwrap_err().contains("after"));
    }

    /// A run of positions whose first value is wide keeps it as an
    /// exception (the example of `formats/barrel.md`), and the run's
    /// shape is the smallest.
    #[test]
    fn golden_block_with_exceptions() {
        let plain: Vec<Hit> = [700, 701, 703, 706, 710]
            .iter()
            .map(|&p| Hit::plain(false, 1, p))
            .collect();
        let mut enc = BlockEncoder::new();
        enc.push(4, &plain, &[]);
        let mut out = Vec::new();
        enc.encode(&mut out);
        // Values 700, 1, 2, 3, 4: at 10 bits 7 bytes; at w 3 the low parts
        // 4, 1, 2, 3, 4 (2 bytes), one exception (index 0, high part 700
        // >> 3 = 87 at x 7) and the e − 1 byte: 5 bytes.
        assert_eq!(
            out,
            [
                0x04, 0, 0, 0, // first
                0x00, 0x00, 0x02, 0x00, 0x00, // n − 1, w_gap, mask: plain, attr, w_fancy
                0x03, // width of the plain counts (5: 3 bits)
                0x05, // plain count 5
                0x73, 0x00, // run shape: w 3 | x 7 << 4; e − 1 = 0
                0x8c, 0x46, // low parts 4, 1, 2, 3, 4 at 3 bits
                0x00, // exception indices: 0 at 7 bits
                0x57, // high parts: 87 at 7 bits
            ]
        );
        let bb = block_bytes(&out).unwrap();
        assert_eq!((bb.run_widths, bb.runs, bb.exceptions), (2, 2, 2));
        assert_eq!(
            decode_block(&out).unwrap(),
            vec![(4, plain.clone(), vec![])]
        );
        // Exceptions out of order, past the run or without high bits are
        // refused.
        let mut bad = out.clone();
        bad[15] = 5;
        assert!(decode_block(&bad).unwrap_err().contains("exception at 5"));
        let mut bad = out.clone();
        bad[16] = 0;
        assert!(decode_block(&bad).unwrap_err().contains("no high bits"));
        let mut bad = out.clone();
        bad[11] = 0xd3; // w 3 + x 13
        assert!(decode_block(&bad).unwrap_err().contains("at most 12"));
        // Every run shape is the smallest: no width packs a run in fewer
        // bytes (a brute force over the widths).
        for run in [
            vec![4095u32, 0, 0, 1],
            vec![0; 128],
            (0..128).collect(),
            (0..100)
                .map(|i| if i % 9 == 0 { 3000 } else { i % 5 })
                .collect::<Vec<u32>>(),
        ] {
            let shape = RunShape::of(&run);
            let len = |w: u8| {
                let e = run.iter().filter(|&&v| bitpack::width(v) > w).count();
                let widest = bitpack::max_width(&run);
                packed_len(run.len(), w)
                    + if e > 0 {
                        1 + packed_len(e, EXCEPTION_INDEX_BITS) + packed_len(e, widest - w)
                    } else {
                        0
                    }
            };
            let best = (0..=bitpack::max_width(&run)).map(len).min().unwrap();
            assert_eq!(len(shape.w), best, "{run:?}");
            let mut bytes = Vec::new();
            shape.pack(&run, &mut Vec::new(), &mut bytes);
            assert_eq!(bytes.len(), best - usize::from(shape.x > 0));
        }
    }

    /// A full block packs its gaps and count columns in the lane layout:
    /// their bytes are the lane packing of the values, and a first gap that
    /// is not 0 or docIDs past 2³² are refused.
    #[test]
    fn full_block_lanes() {
        let mut enc = BlockEncoder::new();
        let mut want = Vec::new();
        let mut doc = 1000u32;
        for i in 0..BLOCK_DOCS as u32 {
            let plain: Vec<Hit> = (0..i % 5).map(|k| Hit::plain(k == 1, 1, k * 3)).collect();
            let fancy = if i % 7 == 0 {
                vec![Hit::title(false, 0)]
            } else {
                vec![]
            };
            enc.push(doc, &plain, &fancy);
            want.push((doc, plain, fancy));
            doc += 1 + i % 9;
        }
        let mut out = Vec::new();
        enc.encode(&mut out);
        assert_eq!(decode_block(&out).unwrap(), want);
        // Header, widths of plain (3 bits: up to 4) and title (1 bit), then
        // gaps at 4 bits (up to 8), 16·w bytes each.
        assert_eq!(out[5..7], [4, 0b10_0010]);
        assert_eq!(out[9..11], [3, 1]);
        let mut gaps = vec![0u32];
        gaps.extend(want.windows(2).map(|p| p[1].0 - p[0].0 - 1));
        let mut lanes = Vec::new();
        bitpack::pack_lanes(&gaps, 4, &mut lanes);
        assert_eq!(out[11..11 + 64], lanes[..]);
        let plain: Vec<u32> = want.iter().map(|w| w.1.len() as u32).collect();
        lanes.clear();
        bitpack::pack_lanes(&plain, 3, &mut lanes);
        assert_eq!(out[75..75 + 48], lanes[..]);
        // Value 0 of the gaps (lane 0's lowest bits) must be 0.
        let mut bad = out.clone();
        bad[11] |= 1;
        assert!(decode_block(&bad).unwrap_err().contains("first docID gap"));
        // A first docID near 2³² makes the docIDs overflow.
        let mut bad = out.clone();
        bad[..4].copy_from_slice(&(u32::MAX - 100).to_le_bytes());
        assert!(decode_block(&bad).unwrap_err().contains("overflow"));
    }

    /// Counts that disagree with the hit columns' lengths are refused, and
    /// a large hit's font comes from its own column.
    #[test]
    fn counts_are_checked() {
        let mut enc = BlockEncoder::new();
        enc.push(3, &[Hit::plain(false, 1, 0), Hit::plain(false, 4, 2)], &[]);
        let mut out = Vec::new();
        enc.encode(&mut out);
        // Columns plain (1) and large (1), 1 bit each, in bytes 11 and 12;
        // positions 0 (plain), 2 (large) at 2 bits; no capital; the large
        // font 4 − 3 = 1 at 1 bit.
        assert_eq!(out[6], 0b1010);
        assert_eq!(out[7], 1 << 1);
        assert_eq!(out[11..13], [1, 1]);
        assert_eq!(
            decode_block(&out).unwrap()[0].1,
            [Hit::plain(false, 1, 0), Hit::plain(false, 4, 2)]
        );
        // Saying no large hit leaves its font column unread: refused.
        out[12] = 0;
        let err = decode_block(&out).unwrap_err();
        assert!(err.contains("hits take"), "{err}");
    }
}

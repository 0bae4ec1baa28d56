//! Postings blocks: up to 128 documents of one doclist with their hits, the
//! unit the inverted barrels are made of and the unit a cursor decodes.
//!
//! # Layout (little-endian)
//!
//! ```text
//! 0   u32  first      docID of the block's first document
//! 4   u8   n − 1      documents in the block, 1..=128
//! 5   u8   w_gap      bits per docID gap
//! 6   u8   w_np       bits per plain-hit count
//! 7   u8   w_nf       bits per fancy-hit count
//! 8   u8   w_attr     bits per plain-hit attribute
//! 9   u8   font_base  smallest relative font size of the block's plain hits (0 if none)
//! 10  gaps     n − 1 values at w_gap:  docID[i] − docID[i−1] − 1, i = 1..n
//!     np       n values at w_np:        plain hits of document i
//!     nf       n values at w_nf:        fancy hits of document i
//!     widths   R = ⌈P / 128⌉ bytes:     width of each run of positions (P = Σ np)
//!     runs     R runs, run r = min(128, P − 128r) values at widths[r]: the plain
//!              hits' positions, per document the first absolute and the others
//!              as the difference from the one before (positions never decrease)
//!     attrs    P values at w_attr:      ((font − font_base) << 1) | cap of each plain hit
//!     fancy    F = Σ nf hits, u16 each: the fancy hits as they are (see `hit`)
//! ```
//!
//! Each packed field ([`super::bitpack`]) starts on a byte boundary. A
//! document's hit list is its plain hits in position order followed by its
//! fancy hits (URL, title, then anchor hits by source docID). The block's
//! length is not stored: the barrel's block directory delimits it, and a
//! decoder checks that the fields fill it exactly.
//!
//! # Why this shape
//!
//! A conjunctive query decodes the docIDs (and counts) of the blocks it
//! visits and the hits of the few documents that match, so the docIDs, the
//! counts and the hits are separate packed columns, and any document's hits
//! are reached from the counts' prefix sums without touching the others'.
//! Positions are delta-coded per document and packed in runs of 128 with their
//! own width, so one long hit list does not widen the rest; the attributes
//! (capitalization, font) take 0 bits when a block's plain hits all look alike
//! and 1 when only capitalization varies. Fancy hits are rare and kept whole.
//! Measured sizes against the paper's two bytes per hit are in the stage's
//! figures and `formats/barrel.md`.

use super::bitpack::{self, max_width, pack, packed_len};
use super::hit::{Hit, MAX_FONT, MAX_PLAIN_POSITION};

/// Documents per postings block (all but the last block of a doclist are full).
pub const BLOCK_DOCS: usize = 128;
/// Plain-hit positions per run.
pub const RUN_HITS: usize = 128;
/// Bytes of the fixed header.
pub const HEADER: usize = 10;

/// Collects up to [`BLOCK_DOCS`] documents of one doclist and encodes them.
#[derive(Default)]
pub struct BlockEncoder {
    docs: Vec<u32>,
    np: Vec<u32>,
    nf: Vec<u32>,
    plain: Vec<Hit>,
    fancy: Vec<Hit>,
    scratch: Vec<u32>,
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
    /// decreasing) and fancy hits.
    pub fn push(&mut self, doc: u32, plain: &[Hit], fancy: &[Hit]) {
        debug_assert!(self.docs.len() < BLOCK_DOCS);
        debug_assert!(self.docs.last().is_none_or(|&d| d < doc));
        debug_assert!(plain.iter().all(|h| !h.is_fancy()));
        debug_assert!(fancy.iter().all(|h| h.is_fancy()));
        self.docs.push(doc);
        self.np.push(plain.len() as u32);
        self.nf.push(fancy.len() as u32);
        self.plain.extend_from_slice(plain);
        self.fancy.extend_from_slice(fancy);
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
        let w_np = max_width(&self.np);
        let w_nf = max_width(&self.nf);
        let font_base = self.plain.iter().map(|h| h.font()).min().unwrap_or(0);
        let attr = |h: &Hit| (u32::from(h.font() - font_base) << 1) | u32::from(h.cap());
        let w_attr = width_of(self.plain.iter().map(attr));
        out.extend_from_slice(&self.docs[0].to_le_bytes());
        out.extend_from_slice(&[(n - 1) as u8, w_gap, w_np, w_nf, w_attr, font_base]);
        pack(s, w_gap, out);
        pack(&self.np, w_np, out);
        pack(&self.nf, w_nf, out);
        // Positions: per document, the first absolute and then differences.
        s.clear();
        let mut at = 0;
        for &c in &self.np {
            let mut prev = 0u32;
            for (k, h) in self.plain[at..at + c as usize].iter().enumerate() {
                let p = u32::from(h.plain_position());
                s.push(if k == 0 { p } else { p - prev });
                prev = p;
            }
            at += c as usize;
        }
        let widths: Vec<u8> = s.chunks(RUN_HITS).map(max_width).collect();
        out.extend_from_slice(&widths);
        for (run, &w) in s.chunks(RUN_HITS).zip(&widths) {
            pack(run, w, out);
        }
        s.clear();
        s.extend(self.plain.iter().map(attr));
        pack(s, w_attr, out);
        for h in &self.fancy {
            out.extend_from_slice(&h.0.to_le_bytes());
        }
        self.docs.clear();
        self.np.clear();
        self.nf.clear();
        self.plain.clear();
        self.fancy.clear();
    }
}

fn width_of(values: impl Iterator<Item = u32>) -> u8 {
    bitpack::width(values.fold(0, |a, v| a | v))
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
    w_np: u8,
    w_nf: u8,
    w_attr: u8,
    font_base: u8,
    gaps_at: usize,
    np_at: usize,
    nf_at: usize,
    hits_at: usize,
}

/// Where the hit columns of a block are, once the counts are known.
#[derive(Clone, Debug, Default)]
pub struct HitColumns {
    /// Byte offset of each run of positions, and one past the last.
    run_at: Vec<usize>,
    widths_at: usize,
    attrs_at: usize,
    fancy_at: usize,
    /// Total plain and fancy hits.
    pub plain: usize,
    /// Total fancy hits.
    pub fancy: usize,
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
        let [w_gap, w_np, w_nf, w_attr, font_base] =
            [bytes[5], bytes[6], bytes[7], bytes[8], bytes[9]];
        if n > BLOCK_DOCS {
            return Err(format!(
                "{n} documents in a postings block (at most {BLOCK_DOCS})"
            ));
        }
        if w_gap > 32 || w_np > 32 || w_nf > 32 || w_attr > 4 || font_base > MAX_FONT {
            return Err(format!(
                "bad header: widths {w_gap}/{w_np}/{w_nf}/{w_attr}, font base {font_base}"
            ));
        }
        let gaps_at = HEADER;
        let np_at = gaps_at + packed_len(n - 1, w_gap);
        let nf_at = np_at + packed_len(n, w_np);
        let hits_at = nf_at + packed_len(n, w_nf);
        if hits_at > bytes.len() {
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
            w_np,
            w_nf,
            w_attr,
            font_base,
            gaps_at,
            np_at,
            nf_at,
            hits_at,
        })
    }

    /// Decodes the docIDs into `docs[..n]`. Fails if they overflow.
    pub fn docs(&self, docs: &mut [u32]) -> Result<(), String> {
        let docs = &mut docs[..self.n];
        docs[0] = self.first;
        bitpack::unpack_into(
            &self.bytes[self.gaps_at..self.np_at],
            self.w_gap,
            0,
            &mut docs[1..],
        )
        .ok_or("docID gaps cut short")?;
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

    /// Decodes the plain and fancy hit counts into `np[..n]` and `nf[..n]`.
    pub fn counts(&self, np: &mut [u32], nf: &mut [u32]) -> Result<(), String> {
        bitpack::unpack_into(
            &self.bytes[self.np_at..self.nf_at],
            self.w_np,
            0,
            &mut np[..self.n],
        )
        .ok_or("plain counts cut short")?;
        bitpack::unpack_into(
            &self.bytes[self.nf_at..self.hits_at],
            self.w_nf,
            0,
            &mut nf[..self.n],
        )
        .ok_or("fancy counts cut short")?;
        Ok(())
    }

    /// Locates the hit columns from the total plain and fancy hit counts,
    /// checking that they fill the block exactly.
    pub fn columns(&self, plain: usize, fancy: usize, out: &mut HitColumns) -> Result<(), String> {
        let runs = plain.div_ceil(RUN_HITS);
        let widths_at = self.hits_at;
        let mut at = widths_at + runs;
        if at > self.bytes.len() {
            return Err("position widths cut short".into());
        }
        out.run_at.clear();
        for r in 0..runs {
            let w = self.bytes[widths_at + r];
            if w > 12 {
                return Err(format!("position run {r} has width {w} (at most 12)"));
            }
            out.run_at.push(at);
            at += packed_len((plain - r * RUN_HITS).min(RUN_HITS), w);
        }
        out.run_at.push(at);
        let attrs_at = at;
        let fancy_at = attrs_at + packed_len(plain, self.w_attr);
        let end = fancy_at + 2 * fancy;
        if end != self.bytes.len() {
            return Err(format!(
                "hits take {} bytes, the block {}",
                end - self.hits_at,
                self.bytes.len() - self.hits_at
            ));
        }
        out.widths_at = widths_at;
        out.attrs_at = attrs_at;
        out.fancy_at = fancy_at;
        out.plain = plain;
        out.fancy = fancy;
        out.end = end;
        Ok(())
    }

    /// Appends the hits of the document whose plain hits are
    /// `plain_first..plain_first + np` and fancy hits `fancy_first..+nf` (from
    /// the counts' prefix sums) to `out`: plain hits first, then fancy hits.
    pub fn hits(
        &self,
        cols: &HitColumns,
        (plain_first, np): (usize, usize),
        (fancy_first, nf): (usize, usize),
        out: &mut Vec<Hit>,
    ) -> Result<(), String> {
        // Run by run, a slice of positions and attributes unpacked at once.
        let attrs = &self.bytes[cols.attrs_at..cols.fancy_at];
        let (mut positions, mut attr_buf) = ([0u32; RUN_HITS], [0u32; RUN_HITS]);
        out.reserve(np + nf);
        let mut pos = 0u32;
        let mut k = 0;
        while k < np {
            let i = plain_first + k;
            let (r, off) = (i / RUN_HITS, i % RUN_HITS);
            let take = (RUN_HITS - off).min(np - k);
            let w = self.bytes[cols.widths_at + r];
            let run = &self.bytes[cols.run_at[r]..cols.run_at[r + 1]];
            bitpack::unpack_into(run, w, off, &mut positions[..take])
                .ok_or("position run cut short")?;
            bitpack::unpack_into(attrs, self.w_attr, i, &mut attr_buf[..take])
                .ok_or("attributes cut short")?;
            for (j, (&v, &attr)) in positions[..take].iter().zip(&attr_buf[..take]).enumerate() {
                pos = if k + j == 0 { v } else { pos + v };
                if pos > MAX_PLAIN_POSITION {
                    return Err(format!(
                        "plain hit position {pos} over {MAX_PLAIN_POSITION}"
                    ));
                }
                let font = u32::from(self.font_base) + (attr >> 1);
                if font > u32::from(MAX_FONT) {
                    return Err(format!("plain hit font {font} over {MAX_FONT}"));
                }
                out.push(Hit::plain(attr & 1 == 1, font as u8, pos));
            }
            k += take;
        }
        for k in 0..nf {
            let at = cols.fancy_at + 2 * (fancy_first + k);
            let h = Hit(u16::from_le_bytes([self.bytes[at], self.bytes[at + 1]]));
            if !h.is_fancy() {
                return Err(format!("fancy hit {:#06x} is not fancy", h.0));
            }
            out.push(h);
        }
        Ok(())
    }
}

/// A document's hits of one word by class, without their positions: plain
/// hits per font (0..=6), fancy hits per type code (0..=15).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HitClasses {
    /// Plain hits per relative font.
    pub fonts: [u32; MAX_FONT as usize + 1],
    /// Fancy hits per type code ([`super::hit::FancyType::code`]).
    pub fancy: [u32; 16],
}

impl BlockView<'_> {
    /// The classes of the hits [`Self::hits`] would give, reading only the
    /// attributes and fancy hits (not the positions).
    pub fn classes(
        &self,
        cols: &HitColumns,
        (plain_first, np): (usize, usize),
        (fancy_first, nf): (usize, usize),
    ) -> Result<HitClasses, String> {
        let mut c = HitClasses::default();
        // At width 0 or 1 every plain hit has the base font (the one bit is
        // capitalization): no attribute need be read.
        if self.w_attr <= 1 {
            c.fonts[usize::from(self.font_base)] += np as u32;
        } else {
            let attrs = &self.bytes[cols.attrs_at..cols.fancy_at];
            let mut buf = [0u32; RUN_HITS];
            let mut k = 0;
            while k < np {
                let take = RUN_HITS.min(np - k);
                bitpack::unpack_into(attrs, self.w_attr, plain_first + k, &mut buf[..take])
                    .ok_or("attributes cut short")?;
                for &attr in &buf[..take] {
                    let font = u32::from(self.font_base) + (attr >> 1);
                    if font > u32::from(MAX_FONT) {
                        return Err(format!("plain hit font {font} over {MAX_FONT}"));
                    }
                    c.fonts[font as usize] += 1;
                }
                k += take;
            }
        }
        for k in 0..nf {
            let at = cols.fancy_at + 2 * (fancy_first + k);
            let h = Hit(u16::from_le_bytes([self.bytes[at], self.bytes[at + 1]]));
            match h.fancy_type() {
                Some(t) => c.fancy[usize::from(t.code())] += 1,
                None => return Err(format!("fancy hit {:#06x} is not fancy", h.0)),
            }
        }
        Ok(c)
    }
}

/// A postings block decoded for reading: docIDs, counts and their prefix
/// sums; hits on request.
pub struct DecodedBlock {
    /// docIDs.
    pub docs: [u32; BLOCK_DOCS],
    /// Plain hit counts.
    pub np: [u32; BLOCK_DOCS],
    /// Fancy hit counts.
    pub nf: [u32; BLOCK_DOCS],
    /// Index of each document's first plain hit (n + 1 entries).
    pub plain_at: [u32; BLOCK_DOCS + 1],
    /// Index of each document's first fancy hit (n + 1 entries).
    pub fancy_at: [u32; BLOCK_DOCS + 1],
    /// Documents.
    pub n: usize,
    /// Hit columns (located on first use).
    pub cols: Option<HitColumns>,
}

impl Default for DecodedBlock {
    fn default() -> Self {
        DecodedBlock {
            docs: [0; BLOCK_DOCS],
            np: [0; BLOCK_DOCS],
            nf: [0; BLOCK_DOCS],
            plain_at: [0; BLOCK_DOCS + 1],
            fancy_at: [0; BLOCK_DOCS + 1],
            n: 0,
            cols: None,
        }
    }
}

impl DecodedBlock {
    /// Decodes docIDs and counts of `view`.
    pub fn load(&mut self, view: &BlockView<'_>) -> Result<(), String> {
        view.docs(&mut self.docs)?;
        view.counts(&mut self.np, &mut self.nf)?;
        self.n = view.n;
        let (mut p, mut f) = (0u32, 0u32);
        for i in 0..view.n {
            self.plain_at[i] = p;
            self.fancy_at[i] = f;
            p = p.checked_add(self.np[i]).ok_or("hit counts overflow")?;
            f = f.checked_add(self.nf[i]).ok_or("hit counts overflow")?;
        }
        self.plain_at[view.n] = p;
        self.fancy_at[view.n] = f;
        self.cols = None;
        Ok(())
    }

    fn columns(&mut self, view: &BlockView<'_>) -> Result<&HitColumns, String> {
        if self.cols.is_none() {
            let mut cols = HitColumns::default();
            view.columns(
                self.plain_at[self.n] as usize,
                self.fancy_at[self.n] as usize,
                &mut cols,
            )?;
            self.cols = Some(cols);
        }
        self.cols
            .as_ref()
            .ok_or_else(|| "no hit columns".to_string())
    }

    /// Document `i`'s hit classes (see [`BlockView::classes`]).
    pub fn classes(&mut self, view: &BlockView<'_>, i: usize) -> Result<HitClasses, String> {
        let (p, np) = (self.plain_at[i] as usize, self.np[i] as usize);
        let (f, nf) = (self.fancy_at[i] as usize, self.nf[i] as usize);
        let cols = self.columns(view)?;
        view.classes(cols, (p, np), (f, nf))
    }

    /// Appends document `i`'s hits to `out`.
    pub fn hits(
        &mut self,
        view: &BlockView<'_>,
        i: usize,
        out: &mut Vec<Hit>,
    ) -> Result<(), String> {
        self.columns(view)?;
        let cols = self.cols.as_ref().ok_or("no hit columns")?;
        view.hits(
            cols,
            (self.plain_at[i] as usize, self.np[i] as usize),
            (self.fancy_at[i] as usize, self.nf[i] as usize),
            out,
        )
    }
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
        let np = d.np[i] as usize;
        out.push((d.docs[i], hits[..np].to_vec(), hits[np..].to_vec()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::hit::FancyType;
    use proptest::prelude::*;

    fn posting() -> impl Strategy<Value = (u32, Vec<Hit>, Vec<Hit>)> {
        (
            1u32..5000,
            proptest::collection::vec((any::<bool>(), 0u8..=6, 0u32..5000), 0..300),
            proptest::collection::vec((any::<bool>(), 0u8..4, any::<u64>(), 0u32..300), 0..5),
        )
            .prop_map(|(gap, plain, fancy)| {
                let mut plain: Vec<Hit> = plain
                    .into_iter()
                    .map(|(c, f, p)| Hit::plain(c, f, p))
                    .collect();
                plain.sort_by_key(|h| h.plain_position());
                let fancy = fancy
                    .into_iter()
                    .map(|(c, t, s, p)| match t {
                        2 => Hit::anchor(c, s, p),
                        t => Hit::fancy(c, FancyType::from_code(t), p),
                    })
                    .collect();
                (gap, plain, fancy)
            })
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
                want.push((doc, plain.clone(), fancy.clone()));
                doc += gap;
            }
            let mut out = vec![];
            enc.encode(&mut out);
            prop_assert!(enc.is_empty());
            prop_assert_eq!(decode_block(&out).unwrap(), want.clone());
            // Any one document's hits, alone.
            let view = BlockView::parse(&out).unwrap();
            let mut d = DecodedBlock::default();
            d.load(&view).unwrap();
            for i in (0..want.len()).rev().step_by(7) {
                let mut hits = Vec::new();
                d.hits(&view, i, &mut hits).unwrap();
                let mut all = want[i].1.clone();
                all.extend_from_slice(&want[i].2);
                prop_assert_eq!(hits, all.clone());
                // Its classes, without the positions.
                let mut classes = HitClasses::default();
                for h in &all {
                    match h.fancy_type() {
                        Some(t) => classes.fancy[usize::from(t.code())] += 1,
                        None => classes.fonts[usize::from(h.font())] += 1,
                    }
                }
                prop_assert_eq!(d.classes(&view, i).unwrap(), classes);
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
        enc.push(9, &[Hit::plain(false, 2, 3)], &[]);
        let mut out = Vec::new();
        enc.encode(&mut out);
        // first 7; n − 1 = 1; gap 9 − 7 − 1 = 1 (1 bit); np 2, 1 (2 bits); nf
        // 1, 0 (1 bit); attrs: (font − 1) << 1 | cap = 1, 0, 2 (2 bits); font base 1.
        // positions 0, 5, 3 in one run of width 3.
        assert_eq!(
            out,
            [
                0x07, 0, 0, 0, // first
                0x01, 0x01, 0x02, 0x01, 0x02, 0x01, // n−1, widths, font base
                0x01, // gaps: 1
                0x06, // np: 2, 1 → 0b01_10
                0x01, // nf: 1, 0 → 0b0_1
                0x03, // run widths: 3
                0xe8, 0x00, // runs: 0, 5, 3 → 000 101 011 → 0b11_101_000 0b0
                0x21, // attrs: 1, 0, 2 → 0b10_00_01
                0x00, 0x71, // title0 = 0x7100
            ]
        );
    }
}

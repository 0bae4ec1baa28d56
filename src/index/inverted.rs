//! Inverted barrels: the `barrel` container kind (version 7).
//!
//! A barrel holds the doclists of a range of wordIDs (Brin & Page §4.2.7):
//! per word, the documents that contain it in increasing docID order, each
//! with its hit list. The paper also kept *short* barrels, holding per word
//! only the documents whose hit list for that word contains a title or an
//! anchor hit, with their whole hit list, for the searcher's first pass.
//! Every postings block stores each document's title and anchor hit counts,
//! so that short doclist is read from the full one instead
//! ([`Barrel::short_doclist`]: the same documents, in the same order, with
//! the same hits), and only the full barrels are written (`"set": "full"`).
//!
//! # Layout
//!
//! Container parameters `{"set": "short"|"full", "barrel": b, "first_word":
//! w₀, "end_word": w₁, "block_bytes": 65536, "bounds": B}`: the barrel holds
//! wordIDs `w₀ ≤ w < w₁`; `B` ([`BoundParams`]) is what the block bounds
//! were computed with. Footer metadata `{"doclists", "postings", "plain_hits",
//! "fancy_hits"}`. Every block is raw (so the file can be mapped) and holds
//! whole postings blocks ([`super::postings`], up to 128 documents of one
//! doclist each), words in increasing order, each word's documents in
//! increasing docID order; a doclist may go on in the next block. A block's
//! payload:
//!
//! ```text
//! 0       u32 m          postings blocks in this block
//! 4       m × 14 bytes   directory, one entry per postings block:
//!                          u32 wordID, u32 last docID, u32 end,
//!                          u8 BM25F bound, u8 BM25 bound
//!                        (end: offset in this payload of the byte after the
//!                        postings block; block j spans [end_{j−1}, end_j), the
//!                        first starting at 4 + 14m)
//! 4+14m   the postings blocks
//! ```
//!
//! # Block bounds
//!
//! A directory entry's bound bytes bound the scores of its postings block's
//! documents ([`bound_byte`] of the largest saturated frequency — the
//! word's BM25F or BM25 score over its idf — computed at build time from
//! the hits and the field lengths), so block-max pruning skips blocks
//! without decoding them. They are stored rather than derived at open:
//! deriving needs every posting's hit counts and its document's field
//! lengths, a pass over the whole index (what a query is meant to avoid),
//! while storing costs 2 bytes per postings block of up to 128 documents.
//!
//! The container's block key is the big-endian wordID and the big-endian
//! first docID of the block's first postings block (8 bytes), its record
//! count the number of documents in it. A writer closes a block once its
//! payload reaches 64 KiB after a postings block, so a block exceeds that by
//! at most one postings block, and block boundaries depend on the data alone.
//!
//! # Seeking
//!
//! Three levels, none of which decodes what it skips: the container's block
//! index (read at open: one key per 64 KiB) finds the block holding
//! `(word, docID)` by binary search; the block's directory finds the postings
//! block by its last docID; the postings block decodes its docIDs (one packed
//! column). The lexicon points each word at its first postings block
//! ([`Location`]: block, directory entry) and gives its document count.
//!
//! Blocks are checked (crc32c) the first time a reader touches them, so a
//! search reads and checks only the blocks its doclists live in.

use std::path::Path;
use std::sync::Mutex;

use serde_json::json;

use super::fieldlens::{field_of_hit, FieldLengths, FIELDS};
use super::hit::Hit;
use super::postings::{
    block_bytes, decode_block, hit_classes, BlockBytes, BlockEncoder, BlockView, DecodedBlock,
    HitClasses, Posting, ANCHOR, BLOCK_DOCS, BOLD, CLASSES, LARGE, OTHER, PLAIN, SMALL, TITLE, URL,
};
use crate::container::{BlockCodec, Container, ContainerWriter, FileKind, MappedContainer};
use crate::error::{Error, Result};

/// The `barrel` kind.
pub const BARREL: FileKind = FileKind {
    tag: "barrel",
    version: 7,
    what: "inverted barrel: per wordID its doclist, docID-sorted postings blocks with skip data",
    verify: |path| Barrel::open(path)?.verify().map(drop),
    dump,
};
/// A block is closed once its payload reaches this many bytes.
pub const BLOCK_BYTES: usize = 64 << 10;
const DIR_ENTRY: usize = 14;
/// A block bound byte that bounds nothing (`k1 + 1`, the saturation limit).
pub const NO_BOUND: u8 = 255;
/// Which byte of a postings block's bounds: BM25F's.
pub const BOUND_BM25F: usize = 0;
/// Which byte of a postings block's bounds: BM25's.
pub const BOUND_BM25: usize = 1;

/// What the block bounds of a barrel were computed with (its `"bounds"`
/// parameter): BM25's and BM25F's weights and the collection's average
/// field lengths (`None`: the index had none, every length counts as the
/// average). A searcher uses the bounds only for a query ranked with the
/// same numbers.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BoundParams {
    /// Term-frequency saturation.
    pub k1: f64,
    /// BM25's length normalization.
    pub b: f64,
    /// BM25F's field weights.
    pub field_weight: [f64; super::fieldlens::FIELDS],
    /// BM25F's per-field length normalization.
    pub field_b: [f64; super::fieldlens::FIELDS],
    /// The average field lengths.
    pub avg_len: Option<[f64; super::fieldlens::FIELDS]>,
}

impl BoundParams {
    /// The default BM25 and BM25F weights — the searcher's defaults take
    /// theirs from here (`search::Bm25Weights::default`), so the stored
    /// bounds fit a query ranked with the defaults — and the collection's
    /// average field lengths `avg_len`.
    pub fn default_weights(avg_len: Option<[f64; super::fieldlens::FIELDS]>) -> Self {
        BoundParams {
            k1: 1.2,
            b: 0.75,
            field_weight: [2.0, 1.0, 0.5, 1.0, 1.0],
            field_b: [0.5, 0.5, 0.5, 0.75, 0.75],
            avg_len,
        }
    }

    /// The length normalizations of a document with field lengths `lens`
    /// (`None`: every length is the average).
    pub fn norms(&self, lens: Option<&[u32; FIELDS]>) -> DocNorms {
        let field = std::array::from_fn(|f| {
            let ratio = match (self.avg_len, lens) {
                (Some(avg), Some(l)) if avg[f] > 0.0 => f64::from(l[f]) / avg[f],
                _ => 1.0,
            };
            let norm = 1.0 - self.field_b[f] + self.field_b[f] * ratio;
            norm.max(1e-9)
        });
        let ratio = match (self.avg_len, lens) {
            (Some(avg), Some(l)) if avg[3] + avg[4] > 0.0 => {
                f64::from(l[3] + l[4]) / (avg[3] + avg[4])
            }
            _ => 1.0,
        };
        DocNorms {
            field,
            body: self.k1 * (1.0 - self.b + self.b * ratio),
        }
    }

    /// A word's saturated frequency in a document where it has `tf` hits
    /// per field, with length normalizations `n` ([`BoundParams::norms`]):
    /// BM25F's (`fielded`) or BM25's score of the word divided by its idf
    /// — the formulas of [`crate::search::bm25::score`].
    pub fn saturated(&self, fielded: bool, tf: &[u32; FIELDS], n: &DocNorms) -> f64 {
        let k1 = self.k1;
        if fielded {
            let mut p = 0.0;
            for (f, &c) in tf.iter().enumerate() {
                if c > 0 {
                    p += self.field_weight[f] * f64::from(c) / n.field[f];
                }
            }
            p * (k1 + 1.0) / (p + k1)
        } else {
            let c = f64::from(tf[3] + tf[4]);
            c * (k1 + 1.0) / (c + n.body).max(1e-9)
        }
    }
}

/// A document's length normalizations under a [`BoundParams`], which
/// depend on its field lengths only: computed once per document rather
/// than once per posting (with their divisions, the bounds took 4.5% of
/// the index build's instructions on rust-doc).
#[derive(Clone, Copy, Debug)]
pub struct DocNorms {
    /// BM25F's divisor of each field's hits.
    field: [f64; FIELDS],
    /// BM25's length term of the body (large and body type).
    body: f64,
}

/// A document's saturated frequency `t` (the part of a word's score before
/// its idf, `0 ≤ t < k1 + 1`) as a bound byte: the least `q` with
/// `t ≤ (k1 + 1) · q / 254`, rounded up with a margin so that the same
/// number computed in another order stays below it. 255 bounds nothing.
pub fn bound_byte(t: f64, k1: f64) -> u8 {
    let x = (t / (k1 + 1.0)) * 254.0 * (1.0 + 1e-9) + 1e-9;
    if x.is_nan() || x > 254.0 {
        NO_BOUND
    } else {
        // `x.ceil().max(0.0) as u8` without `ceil`, a libm call on the
        // baseline x86-64 target (no SSE4.1 rounding): 0 ≤ x ≤ 254, so the
        // truncation fits and is one below the ceiling unless `x` is
        // whole. Two calls a posting made it 0.6% of the index build's
        // instructions on rust-doc.
        let x = x.max(0.0);
        let t = x as u8;
        t + u8::from(f64::from(t) < x)
    }
}

/// The most `t` can be under bound byte `q` (see [`bound_byte`]).
pub fn bound_value(q: u8, k1: f64) -> f64 {
    if q == NO_BOUND {
        k1 + 1.0
    } else {
        (k1 + 1.0) * f64::from(q) / 254.0
    }
}

/// Which doclists a pass of the paper's search reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrelSet {
    /// The short doclists: the postings with a title or anchor hit of
    /// their word ([`Barrel::short_doclist`]).
    Short,
    /// All postings (the barrel files' only `"set"`).
    Full,
}

impl BarrelSet {
    /// Its name in parameters and file names.
    pub fn name(self) -> &'static str {
        match self {
            BarrelSet::Short => "short",
            BarrelSet::Full => "full",
        }
    }

    /// The sets a barrel file can hold: only the full one is written.
    fn from_name(s: &str) -> Option<BarrelSet> {
        (s == "full").then_some(BarrelSet::Full)
    }
}

/// Where a doclist starts: block index and directory entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Location {
    /// Block of the barrel file.
    pub block: u32,
    /// Entry of that block's directory.
    pub entry: u32,
}

/// What a finished doclist holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DoclistStats {
    /// Documents.
    pub docs: u32,
    /// Hits, plain and fancy.
    pub hits: u64,
}

/// Totals of a barrel file (its footer metadata).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BarrelTotals {
    /// Doclists (words with at least one document).
    pub doclists: u64,
    /// Documents summed over doclists.
    pub postings: u64,
    /// Plain hits.
    pub plain_hits: u64,
    /// Fancy hits.
    pub fancy_hits: u64,
}

impl BarrelTotals {
    fn to_json(self) -> serde_json::Value {
        json!({
            "doclists": self.doclists,
            "postings": self.postings,
            "plain_hits": self.plain_hits,
            "fancy_hits": self.fancy_hits,
        })
    }
}

/// A barrel file's bytes, part by part ([`Barrel::bytes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BarrelBytes {
    /// The whole file.
    pub file: u64,
    /// The container's own: header, block headers, block index, footer.
    pub container: u64,
    /// The blocks' entry counts and directories (with the bound bytes).
    pub directory: u64,
    /// The postings blocks, field by field.
    pub postings: BlockBytes,
}

impl BarrelBytes {
    /// Adds `o`'s figures to these.
    pub fn add(&mut self, o: &BarrelBytes) {
        self.file += o.file;
        self.container += o.container;
        self.directory += o.directory;
        self.postings.add(&o.postings);
    }
}

/// Writes one inverted barrel, doclist by doclist.
pub struct BarrelWriter {
    w: ContainerWriter,
    body: Vec<u8>,
    dir: Vec<([u32; 3], [u8; 2])>,
    /// The current postings block's bounds (the largest of its documents').
    bound: [u8; 2],
    block_docs: u64,
    first_key: [u8; 8],
    enc: BlockEncoder,
    word: Option<u32>,
    last_doc: Option<u32>,
    doclist: DoclistStats,
    totals: BarrelTotals,
    range: (u32, u32),
}

impl BarrelWriter {
    /// Starts barrel `barrel` for wordIDs `first_word..end_word`, its
    /// block bounds computed with `bounds` (`None`: they bound nothing).
    pub fn create(
        path: impl AsRef<Path>,
        barrel: u32,
        first_word: u32,
        end_word: u32,
        bounds: Option<&BoundParams>,
    ) -> Result<BarrelWriter> {
        let params = json!({
            "set": BarrelSet::Full.name(), "barrel": barrel, "first_word": first_word,
            "end_word": end_word, "block_bytes": BLOCK_BYTES, "bounds": bounds,
        });
        Ok(BarrelWriter {
            w: ContainerWriter::create(path, BARREL.tag, BARREL.version, &params)?,
            body: Vec::with_capacity(BLOCK_BYTES + 4096),
            dir: Vec::new(),
            bound: [0; 2],
            block_docs: 0,
            first_key: [0; 8],
            enc: BlockEncoder::new(),
            word: None,
            last_doc: None,
            doclist: DoclistStats::default(),
            totals: BarrelTotals::default(),
            range: (first_word, end_word),
        })
    }

    /// Starts the doclist of `word` (greater than the previous one) and says
    /// where it will be. Ends the previous doclist.
    pub fn begin_word(&mut self, word: u32) -> Result<Location> {
        if self.word.is_some() {
            self.end_word()?;
        }
        if word < self.range.0 || word >= self.range.1 {
            return Err(Error::internal(format!(
                "wordID {word} outside the barrel's range {}..{}",
                self.range.0, self.range.1
            )));
        }
        self.word = Some(word);
        self.last_doc = None;
        Ok(Location {
            block: self.w.blocks() as u32,
            entry: self.dir.len() as u32,
        })
    }

    /// Adds a document to the current doclist (docIDs increasing) with its
    /// bound bytes (BM25F's, BM25's: [`bound_byte`] of its saturated
    /// frequency; [`NO_BOUND`] when unknown).
    pub fn push(&mut self, doc: u32, plain: &[Hit], fancy: &[Hit], bound: [u8; 2]) -> Result<()> {
        self.push_classified(doc, plain, fancy, &hit_classes(plain, fancy), bound)
    }

    /// [`BarrelWriter::push`] of a document whose hits per class are `c`
    /// ([`hit_classes`] of `plain` and `fancy`).
    pub fn push_classified(
        &mut self,
        doc: u32,
        plain: &[Hit],
        fancy: &[Hit],
        c: &HitClasses,
        bound: [u8; 2],
    ) -> Result<()> {
        if self.word.is_none() || self.last_doc.is_some_and(|d| d >= doc) {
            return Err(Error::internal(format!(
                "barrel writer: doc {doc} out of order after {:?} (word {:?})",
                self.last_doc, self.word
            )));
        }
        self.last_doc = Some(doc);
        self.enc.push_classified(doc, plain, fancy, c);
        self.bound = [self.bound[0].max(bound[0]), self.bound[1].max(bound[1])];
        self.doclist.docs += 1;
        self.doclist.hits += (plain.len() + fancy.len()) as u64;
        self.totals.plain_hits += plain.len() as u64;
        self.totals.fancy_hits += fancy.len() as u64;
        if self.enc.is_full() {
            self.flush_postings()?;
        }
        Ok(())
    }

    /// Ends the current doclist and returns what it holds.
    pub fn end_word(&mut self) -> Result<DoclistStats> {
        self.flush_postings()?;
        if self.word.take().is_some() && self.doclist.docs > 0 {
            self.totals.doclists += 1;
            self.totals.postings += u64::from(self.doclist.docs);
        }
        Ok(std::mem::take(&mut self.doclist))
    }

    fn flush_postings(&mut self) -> Result<()> {
        let (Some(word), Some(first), Some(last)) =
            (self.word, self.enc.first_doc(), self.enc.last_doc())
        else {
            return Ok(());
        };
        if self.dir.is_empty() {
            self.first_key[..4].copy_from_slice(&word.to_be_bytes());
            self.first_key[4..].copy_from_slice(&first.to_be_bytes());
        }
        self.block_docs += self.enc.len() as u64;
        self.enc.encode(&mut self.body);
        self.dir.push((
            [word, last, self.body.len() as u32],
            std::mem::take(&mut self.bound),
        ));
        if 4 + DIR_ENTRY * self.dir.len() + self.body.len() >= BLOCK_BYTES {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.dir.is_empty() {
            return Ok(());
        }
        let head = 4 + DIR_ENTRY * self.dir.len();
        let mut payload = Vec::with_capacity(head + self.body.len());
        payload.extend_from_slice(&(self.dir.len() as u32).to_le_bytes());
        for ([word, last, end], bound) in &self.dir {
            payload.extend_from_slice(&word.to_le_bytes());
            payload.extend_from_slice(&last.to_le_bytes());
            payload.extend_from_slice(&(head as u32 + end).to_le_bytes());
            payload.extend_from_slice(bound);
        }
        payload.extend_from_slice(&self.body);
        self.w
            .write_block(BlockCodec::Raw, &self.first_key, self.block_docs, &payload)?;
        self.dir.clear();
        self.body.clear();
        self.block_docs = 0;
        Ok(())
    }

    /// Publishes the barrel; returns its totals and size in bytes.
    pub fn finish(mut self) -> Result<(BarrelTotals, u64)> {
        self.end_word()?;
        self.flush_block()?;
        let totals = self.totals;
        let (_, size) = self.w.finish(&totals.to_json())?;
        Ok((totals, size))
    }
}

/// One directory entry of a block, with its postings block's byte range.
#[derive(Clone, Copy, Debug)]
struct Entry {
    word: u32,
    last: u32,
    bound: [u8; 2],
    start: usize,
    end: usize,
}

/// An open inverted barrel.
pub struct Barrel {
    m: MappedContainer,
    barrel: u32,
    first_word: u32,
    end_word: u32,
    bounds: Option<BoundParams>,
    /// Decoded postings blocks of cursors dropped, lent to the next ones
    /// opened ([`LentBlock`]).
    spare: Mutex<Vec<Box<DecodedBlock>>>,
}

/// The most decoded postings blocks a barrel keeps for its next cursors
/// (~8 KiB each): a query's words, times the threads searching at once.
const SPARE_BLOCKS: usize = 16;

/// A cursor's decoded postings block, lent by its barrel and given back
/// when the cursor is dropped. A new block is ~8 KiB of zeros to write and
/// allocate, ~9,000 instructions: a third of what a one-word query with
/// few matches costs in all (rust-doc); a lent one costs a lock.
struct LentBlock<'a> {
    /// Always `Some` until dropped.
    block: Option<Box<DecodedBlock>>,
    spare: &'a Mutex<Vec<Box<DecodedBlock>>>,
}

impl<'a> LentBlock<'a> {
    fn of(barrel: &'a Barrel) -> LentBlock<'a> {
        let kept = barrel.spare.lock().ok().and_then(|mut s| s.pop());
        LentBlock {
            block: Some(kept.unwrap_or_default()),
            spare: &barrel.spare,
        }
    }
}

impl std::ops::Deref for LentBlock<'_> {
    type Target = DecodedBlock;
    fn deref(&self) -> &DecodedBlock {
        self.block
            .as_deref()
            .expect("a lent block is held until dropped")
    }
}

impl std::ops::DerefMut for LentBlock<'_> {
    fn deref_mut(&mut self) -> &mut DecodedBlock {
        self.block
            .as_deref_mut()
            .expect("a lent block is held until dropped")
    }
}

impl Drop for LentBlock<'_> {
    fn drop(&mut self) {
        if let (Some(b), Ok(mut spare)) = (self.block.take(), self.spare.lock()) {
            if spare.len() < SPARE_BLOCKS {
                spare.push(b);
            }
        }
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Barrel {
    /// Opens a barrel file, checking its structure (blocks are checked when
    /// first read).
    pub fn open(path: impl AsRef<Path>) -> Result<Barrel> {
        let c = BARREL.open(path)?;
        let p = c.params();
        let bad = |what: &str| {
            Error::corrupt(
                c.path(),
                "header parameters",
                0,
                format!("bad or missing {what}"),
            )
        };
        p["set"]
            .as_str()
            .and_then(BarrelSet::from_name)
            .ok_or_else(|| bad("\"set\" (only \"full\" barrels are written)"))?;
        let num = |k: &str| {
            p[k].as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| bad(k))
        };
        let (barrel, first_word, end_word) = (num("barrel")?, num("first_word")?, num("end_word")?);
        let bounds = match &p["bounds"] {
            serde_json::Value::Null => None,
            v => Some(serde_json::from_value(v.clone()).map_err(|_| bad("\"bounds\""))?),
        };
        for (i, b) in c.blocks().iter().enumerate() {
            if b.key.len() != 8 {
                return Err(Error::corrupt(
                    c.path(),
                    format!("block {i}"),
                    b.offset,
                    format!("first key has {} bytes, expected 8", b.key.len()),
                ));
            }
        }
        Ok(Barrel {
            m: MappedContainer::new(c)?,
            barrel,
            first_word,
            end_word,
            bounds,
            spare: Mutex::new(Vec::new()),
        })
    }

    /// What the block bounds were computed with (`None`: they bound
    /// nothing).
    pub fn bound_params(&self) -> Option<&BoundParams> {
        self.bounds.as_ref()
    }

    /// The container.
    pub fn container(&self) -> &Container {
        self.m.container()
    }

    /// The barrel's number.
    pub fn number(&self) -> u32 {
        self.barrel
    }

    /// The wordIDs it holds: `first..end`.
    pub fn words(&self) -> (u32, u32) {
        (self.first_word, self.end_word)
    }

    fn corrupt(&self, block: usize, detail: impl Into<String>) -> Error {
        let c = self.container();
        Error::corrupt(
            c.path(),
            format!("block {block}"),
            c.blocks()[block].offset,
            detail,
        )
    }

    /// Block `i`'s payload and number of directory entries, checked.
    fn block(&self, i: usize) -> Result<(&[u8], usize)> {
        let p = self.m.payload(i)?;
        if p.len() < 4 {
            return Err(self.corrupt(i, "block shorter than its entry count"));
        }
        let m = le32(p, 0) as usize;
        if m == 0 || 4 + DIR_ENTRY * m > p.len() {
            return Err(self.corrupt(
                i,
                format!("{m} directory entries in a {}-byte block", p.len()),
            ));
        }
        Ok((p, m))
    }

    fn entry(&self, i: usize, p: &[u8], m: usize, j: usize) -> Result<Entry> {
        let at = 4 + DIR_ENTRY * j;
        let start = if j == 0 {
            4 + DIR_ENTRY * m
        } else {
            le32(p, at - DIR_ENTRY + 8) as usize
        };
        let end = le32(p, at + 8) as usize;
        if start > end || end > p.len() {
            return Err(self.corrupt(
                i,
                format!("entry {j}: postings block {start}..{end} outside the block"),
            ));
        }
        Ok(Entry {
            word: le32(p, at),
            last: le32(p, at + 4),
            bound: [p[at + 12], p[at + 13]],
            start,
            end,
        })
    }

    /// Opens a cursor over `word`'s doclist, which starts at `loc` and holds
    /// `docs` documents (both from the lexicon).
    pub fn doclist(&self, word: u32, loc: Location, docs: u32) -> Result<DoclistCursor<'_>> {
        self.cursor(word, loc, docs, false)
    }

    /// Opens a cursor over the *short doclist* of `word`: the documents of
    /// its doclist (at `loc`, `docs` documents) whose hits of the word
    /// include a title or an anchor hit, found by their count columns.
    /// `short_docs` is how many there are (the lexicon's count), what
    /// [`DoclistCursor::len`] says.
    pub fn short_doclist(
        &self,
        word: u32,
        loc: Location,
        short_docs: u32,
    ) -> Result<DoclistCursor<'_>> {
        self.cursor(word, loc, short_docs, true)
    }

    fn cursor(
        &self,
        word: u32,
        loc: Location,
        docs: u32,
        short: bool,
    ) -> Result<DoclistCursor<'_>> {
        let mut c = DoclistCursor {
            barrel: self,
            word,
            docs,
            short,
            block: loc.block as usize,
            entry: loc.entry as usize,
            view: None,
            dec: LentBlock::of(self),
            i: 0,
            started: false,
            done: docs == 0,
            decoded: 0,
            bound: [NO_BOUND; 2],
            shallow: None,
        };
        if !c.done {
            if c.block >= self.container().blocks().len() {
                return Err(Error::corrupt(
                    self.container().path(),
                    "lexicon location",
                    0,
                    format!(
                        "word {word} is said to start in block {}, past the last",
                        loc.block
                    ),
                ));
            }
            c.load(c.block, c.entry)?;
        }
        Ok(c)
    }

    /// Calls `f(word, postings)` for every postings block of the file in
    /// order, checking each (for `verify`, `dump` and tests).
    pub fn for_each_block(
        &self,
        mut f: impl FnMut(usize, u32, Vec<Posting>) -> Result<()>,
    ) -> Result<()> {
        let c = self.container();
        let mut prev: Option<(u32, u32)> = None;
        for i in 0..c.blocks().len() {
            let (p, m) = self.block(i)?;
            let mut docs = 0u64;
            for j in 0..m {
                let e = self.entry(i, p, m, j)?;
                if j + 1 == m && e.end != p.len() {
                    return Err(self.corrupt(
                        i,
                        format!(
                            "the last postings block ends at {}, the block at {}",
                            e.end,
                            p.len()
                        ),
                    ));
                }
                if e.word < self.first_word || e.word >= self.end_word {
                    return Err(self.corrupt(
                        i,
                        format!(
                            "entry {j}: wordID {} outside {}..{}",
                            e.word, self.first_word, self.end_word
                        ),
                    ));
                }
                let postings = decode_block(&p[e.start..e.end])
                    .map_err(|d| self.corrupt(i, format!("entry {j} (word {}): {d}", e.word)))?;
                let (first, last) = (postings[0].0, postings[postings.len() - 1].0);
                if last != e.last {
                    return Err(self.corrupt(
                        i,
                        format!(
                            "entry {j}: directory says last docID {}, the postings end at {last}",
                            e.last
                        ),
                    ));
                }
                if j + 1 < m && postings.len() != BLOCK_DOCS {
                    let next = le32(p, 4 + DIR_ENTRY * (j + 1));
                    if next == e.word {
                        return Err(self.corrupt(
                            i,
                            format!(
                                "entry {j}: a postings block of {} docs inside a doclist",
                                postings.len()
                            ),
                        ));
                    }
                }
                if prev.is_some_and(|(w, d)| (w, d) >= (e.word, first)) {
                    return Err(self.corrupt(
                        i,
                        format!(
                            "entry {j}: (word {}, doc {first}) does not follow {prev:?}",
                            e.word
                        ),
                    ));
                }
                if j == 0 {
                    let key = &c.blocks()[i].key;
                    if key[..4] != e.word.to_be_bytes() || key[4..] != first.to_be_bytes() {
                        return Err(self.corrupt(i, "block key is not the first (word, docID)"));
                    }
                }
                prev = Some((e.word, last));
                docs += postings.len() as u64;
                f(i, e.word, postings)?;
            }
            if docs != c.blocks()[i].records {
                return Err(self.corrupt(
                    i,
                    format!("{docs} documents, the index says {}", c.blocks()[i].records),
                ));
            }
        }
        Ok(())
    }

    /// When the field lengths the bounds were computed from lie beside the
    /// barrel (`fieldlens.wm`, as in a job's `index/`): that every
    /// directory entry's bound bytes are its postings block's largest.
    fn verify_bounds(&self) -> Result<()> {
        let Some(params) = &self.bounds else {
            return Ok(());
        };
        let c = self.container();
        let Some(path) = c.path().parent().map(|d| d.join("fieldlens.wm")) else {
            return Ok(());
        };
        if params.avg_len.is_none() || !path.exists() {
            return Ok(());
        }
        let f = super::fieldlens::FieldLengths::open(&path)?;
        if Some(f.averages()) != params.avg_len {
            return Err(Error::corrupt(
                c.path(),
                "header parameters",
                0,
                format!(
                    "bounds computed with average field lengths {:?}, {} has {:?}",
                    params.avg_len,
                    path.display(),
                    f.averages()
                ),
            ));
        }
        // In memory up to 64 MiB (1.4M documents), else a block at a time.
        let impacts = Impacts::within(params.clone(), f, 64 << 20)?;
        let mut reader = impacts.reader();
        for i in 0..c.blocks().len() {
            let (p, m) = self.block(i)?;
            for j in 0..m {
                let e = self.entry(i, p, m, j)?;
                let postings = decode_block(&p[e.start..e.end])
                    .map_err(|d| self.corrupt(i, format!("entry {j} (word {}): {d}", e.word)))?;
                let mut want = [0u8; 2];
                for (doc, plain, fancy) in &postings {
                    let b = impacts.bytes(&mut reader, *doc, plain, fancy)?;
                    want = [want[0].max(b[0]), want[1].max(b[1])];
                }
                if want != e.bound {
                    return Err(self.corrupt(
                        i,
                        format!(
                            "entry {j} (word {}): bounds {:?}, its documents give {want:?}",
                            e.word, e.bound
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The file's bytes, part by part: the container's own (header, block
    /// headers, block index, footer), the blocks' directories and each
    /// field of the postings blocks. Reads and checks every block.
    pub fn bytes(&self) -> Result<BarrelBytes> {
        let c = self.container();
        let mut out = BarrelBytes {
            file: c.size(),
            ..BarrelBytes::default()
        };
        let mut payloads = 0u64;
        for i in 0..c.blocks().len() {
            let (p, m) = self.block(i)?;
            payloads += p.len() as u64;
            out.directory += (4 + DIR_ENTRY * m) as u64;
            for j in 0..m {
                let e = self.entry(i, p, m, j)?;
                let b = block_bytes(&p[e.start..e.end])
                    .map_err(|d| self.corrupt(i, format!("entry {j} (word {}): {d}", e.word)))?;
                out.postings.add(&b);
            }
        }
        out.container = out.file - payloads;
        Ok(out)
    }

    /// Checks every byte (container checksums and padding) and every record:
    /// directories, postings blocks, order, totals; and the block bounds
    /// when the field lengths lie beside the file.
    pub fn verify(&self) -> Result<BarrelTotals> {
        self.container().verify(|_, _, _| Ok(()))?;
        let mut t = BarrelTotals::default();
        let mut last_word = None;
        self.for_each_block(|_, word, postings| {
            if last_word != Some(word) {
                t.doclists += 1;
                last_word = Some(word);
            }
            t.postings += postings.len() as u64;
            for (_, plain, fancy) in &postings {
                t.plain_hits += plain.len() as u64;
                t.fancy_hits += fancy.len() as u64;
            }
            Ok(())
        })?;
        self.verify_bounds()?;
        let c = self.container();
        if c.meta() != &t.to_json() {
            return Err(c.meta_error(format!(
                "metadata says {}, the blocks hold {}",
                c.meta(),
                t.to_json()
            )));
        }
        Ok(t)
    }
}

/// Writes `path`'s doclists as TSV: one line per posting with its decoded
/// hits (see [`Hit`]'s display). When a `lexicon.wm` lies beside the barrel,
/// its words are shown too.
pub fn dump(path: &Path, out: &mut dyn std::io::Write) -> Result<()> {
    use crate::error::IoContext;
    let b = Barrel::open(path)?;
    let (first, end) = b.words();
    let mut words = std::collections::HashMap::new();
    if let Some(lex) = path
        .parent()
        .map(|d| d.join("lexicon.wm"))
        .and_then(|p| super::Lexicon::open(p).ok())
    {
        lex.for_each_word(|w, id| {
            if (first..end).contains(&id) {
                words.insert(id, w.to_string());
            }
            Ok(())
        })?;
    }
    writeln!(out, "# wordid\tword\tdocid\thits").at("stdout")?;
    let mut line = String::new();
    b.for_each_block(|_, word, postings| {
        let name = words.get(&word).map_or("", String::as_str);
        for (doc, plain, fancy) in postings {
            line.clear();
            for (k, h) in plain.iter().chain(&fancy).enumerate() {
                if k > 0 {
                    line.push(' ');
                }
                line.push_str(&h.to_string());
            }
            writeln!(out, "{word}\t{}\t{doc}\t{line}", crate::tsv::escape(name)).at("stdout")?;
        }
        Ok(())
    })
}

/// A cursor over one doclist: `next`, `seek` and the current document's hits.
pub struct DoclistCursor<'a> {
    barrel: &'a Barrel,
    word: u32,
    docs: u32,
    /// Only the documents with a title or an anchor hit of the word.
    short: bool,
    block: usize,
    entry: usize,
    view: Option<BlockView<'a>>,
    dec: LentBlock<'a>,
    i: usize,
    started: bool,
    done: bool,
    /// Postings decoded so far (the work [`Self::postings_decoded`] reports).
    decoded: u64,
    /// The loaded postings block's bounds.
    bound: [u8; 2],
    /// The last answer of [`Self::shallow`]: (block, entry) and what it
    /// said.
    shallow: Option<((usize, usize), BlockInfo)>,
}

/// Where a posting lies in its barrel: the postings block (barrel block,
/// directory entry) and the document's index in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PostingAt {
    block: usize,
    entry: usize,
    i: usize,
}

/// A postings block as its directory entry tells it, undecoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockInfo {
    /// Its first docID.
    pub first: u32,
    /// Its last docID.
    pub last: u32,
    /// Its bound bytes (BM25F's, BM25's).
    pub bound: [u8; 2],
}

/// Where a postings block of a doclist lies (barrel block, directory
/// entry): what [`DoclistCursor::for_each_block`] names and
/// [`DoclistCursor::load_at`] loads. Ordered as the doclist is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct BlockAt {
    block: usize,
    entry: usize,
}

impl<'a> DoclistCursor<'a> {
    /// Postings decoded so far: the entries of every postings block this
    /// cursor loaded (blocks skipped by their last docID are not decoded and
    /// not counted). What a search spends most of its time on.
    pub fn postings_decoded(&self) -> u64 {
        self.decoded
    }

    /// Documents in the doclist.
    pub fn len(&self) -> u32 {
        self.docs
    }

    /// `true` for an empty doclist.
    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// Loads the postings block at (block, entry), which must be this word's.
    fn load(&mut self, block: usize, entry: usize) -> Result<()> {
        let b = self.barrel;
        let (p, m) = b.block(block)?;
        if entry >= m {
            return Err(b.corrupt(block, format!("entry {entry} asked of a block of {m}")));
        }
        let e = b.entry(block, p, m, entry)?;
        if e.word != self.word {
            return Err(b.corrupt(
                block,
                format!(
                    "entry {entry} holds word {}, expected {}",
                    e.word, self.word
                ),
            ));
        }
        let view = BlockView::parse(&p[e.start..e.end])
            .map_err(|d| b.corrupt(block, format!("entry {entry}: {d}")))?;
        self.dec
            .load(&view)
            .map_err(|d| b.corrupt(block, format!("entry {entry}: {d}")))?;
        self.view = Some(view);
        self.block = block;
        self.entry = entry;
        self.bound = e.bound;
        self.i = 0;
        self.decoded += self.dec.n as u64;
        Ok(())
    }

    /// The location of the postings block after the current one, if it is
    /// still this word's.
    fn next_location(&self) -> Result<Option<(usize, usize)>> {
        let b = self.barrel;
        let (p, m) = b.block(self.block)?;
        let (block, entry) = if self.entry + 1 < m {
            (self.block, self.entry + 1)
        } else if self.block + 1 < b.container().blocks().len() {
            (self.block + 1, 0)
        } else {
            return Ok(None);
        };
        let word = if block == self.block {
            le32(p, 4 + DIR_ENTRY * entry)
        } else {
            let (q, _) = b.block(block)?;
            le32(q, 4)
        };
        Ok((word == self.word).then_some((block, entry)))
    }

    fn advance_block(&mut self) -> Result<bool> {
        match self.next_location()? {
            Some((block, entry)) => {
                self.load(block, entry)?;
                Ok(true)
            }
            None => {
                self.done = true;
                Ok(false)
            }
        }
    }

    /// Moves to the next document; `None` at the end. (Not an `Iterator`:
    /// reading a block can fail, and a cursor is also moved by `seek`.)
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<u32>> {
        if self.done {
            return Ok(None);
        }
        if !self.started {
            self.started = true;
        } else {
            self.i += 1;
            if self.i >= self.dec.n && !self.advance_block()? {
                return Ok(None);
            }
        }
        self.settle()
    }

    /// The current document, or for a short doclist the first at or after
    /// it with a title or an anchor hit (`None`: the doclist has no more).
    fn settle(&mut self) -> Result<Option<u32>> {
        if !self.short {
            return Ok(Some(self.dec.docs[self.i]));
        }
        loop {
            let view = self
                .view
                .ok_or_else(|| Error::internal("cursor without a block"))?;
            if view.has_class(TITLE) || view.has_class(ANCHOR) {
                let (block, entry) = (self.block, self.entry);
                self.dec
                    .count(&view)
                    .map_err(|d| self.barrel.corrupt(block, format!("entry {entry}: {d}")))?;
                let (t, a) = (&self.dec.counts[TITLE], &self.dec.counts[ANCHOR]);
                let n = self.dec.n;
                while self.i < n && t[self.i] == 0 && a[self.i] == 0 {
                    self.i += 1;
                }
                if self.i < n {
                    break;
                }
            }
            if !self.advance_block()? {
                return Ok(None);
            }
        }
        Ok(Some(self.dec.docs[self.i]))
    }

    /// Moves to the first document ≥ `target` at or after the current one;
    /// `None` when there is none. Skips postings blocks (and whole barrel
    /// blocks) by their last docIDs without decoding them.
    pub fn seek(&mut self, target: u32) -> Result<Option<u32>> {
        if self.done {
            return Ok(None);
        }
        if self.started && self.dec.docs[self.i] >= target {
            return Ok(Some(self.dec.docs[self.i]));
        }
        self.started = true;
        if self.dec.docs[self.dec.n - 1] < target && !self.skip_to(target)? {
            self.done = true;
            return Ok(None);
        }
        let docs = &self.dec.docs[self.i..self.dec.n];
        self.i += docs.partition_point(|&d| d < target);
        self.settle()
    }

    /// Loads the postings block of this word holding the first docID ≥
    /// `target` (beyond the current one); `false` if there is none.
    fn skip_to(&mut self, target: u32) -> Result<bool> {
        let b = self.barrel;
        let wanted = (self.word, target);
        // In the current block's directory.
        let (p, m) = b.block(self.block)?;
        let found = self.search_dir(self.block, p, m, self.entry + 1, wanted)?;
        if let Some(j) = found {
            self.load(self.block, j)?;
            return Ok(true);
        }
        if le32(p, 4 + DIR_ENTRY * (m - 1)) != self.word {
            return Ok(false);
        }
        // Through the container's block index.
        let mut key = [0u8; 8];
        key[..4].copy_from_slice(&self.word.to_be_bytes());
        key[4..].copy_from_slice(&target.to_be_bytes());
        let nblocks = b.container().blocks().len();
        let i = b
            .container()
            .find_block(&key)
            .unwrap_or(0)
            .max(self.block + 1);
        if i >= nblocks {
            return Ok(false);
        }
        let (q, mq) = b.block(i)?;
        if let Some(j) = self.search_dir(i, q, mq, 0, wanted)? {
            self.load(i, j)?;
            return Ok(true);
        }
        if le32(q, 4 + DIR_ENTRY * (mq - 1)) != self.word || i + 1 >= nblocks {
            return Ok(false);
        }
        let (r, _) = b.block(i + 1)?;
        if le32(r, 4) != self.word {
            return Ok(false);
        }
        self.load(i + 1, 0)?;
        Ok(true)
    }

    /// The first directory entry ≥ `from` of block `i` whose (word, last
    /// docID) ≥ `wanted`, if it is this word's.
    fn search_dir(
        &self,
        i: usize,
        p: &[u8],
        m: usize,
        from: usize,
        wanted: (u32, u32),
    ) -> Result<Option<usize>> {
        let key = |j: usize| (le32(p, 4 + DIR_ENTRY * j), le32(p, 8 + DIR_ENTRY * j));
        let (mut lo, mut hi) = (from.min(m), m);
        // Galloping first: a cursor's target is most often in the entry
        // right after its own, or a few after, so entries `lo`, `lo + 1`,
        // `lo + 3`, `lo + 7`, … are probed before the binary search
        // narrows the last gap — the same first entry ≥ `wanted` in
        // O(log distance) probes, not O(log m) (block-max's shallow moves
        // searched a directory of hundreds of entries for the next one).
        let mut step = 1;
        while lo + step - 1 < hi {
            let probe = lo + step - 1;
            if key(probe) < wanted {
                lo = probe + 1;
                step *= 2;
            } else {
                hi = probe;
                break;
            }
        }
        while lo < hi {
            let mid = (lo + hi) / 2;
            if key(mid) < wanted {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo < m && key(lo).0 == self.word {
            let _ = i;
            Ok(Some(lo))
        } else {
            Ok(None)
        }
    }

    /// The postings block of this doclist that a [`Self::seek`] to
    /// `target` would stop in — the first, at or after the current one,
    /// whose last docID is ≥ `target` — from the directory alone, without
    /// decoding it (`None`: the doclist ends before `target`). Targets must
    /// not decrease between calls (nor go below the current document).
    pub fn shallow(&mut self, target: u32) -> Result<Option<BlockInfo>> {
        if self.done {
            return Ok(None);
        }
        if self.dec.docs[self.dec.n - 1] >= target {
            return Ok(Some(BlockInfo {
                first: self.dec.docs[0],
                last: self.dec.docs[self.dec.n - 1],
                bound: self.bound,
            }));
        }
        let (mut block, mut entry) = (self.block, self.entry);
        if let Some(((b, e), info)) = self.shallow {
            if (b, e) > (block, entry) {
                if info.last >= target {
                    return Ok(Some(info));
                }
                (block, entry) = (b, e);
            }
        }
        let b = self.barrel;
        let wanted = (self.word, target);
        let (p, m) = b.block(block)?;
        let mut at = self
            .search_dir(block, p, m, entry + 1, wanted)?
            .map(|j| (block, j));
        if at.is_none() && le32(p, 4 + DIR_ENTRY * (m - 1)) == self.word {
            // Through the container's block index.
            let mut key = [0u8; 8];
            key[..4].copy_from_slice(&self.word.to_be_bytes());
            key[4..].copy_from_slice(&target.to_be_bytes());
            let nblocks = b.container().blocks().len();
            let i = b.container().find_block(&key).unwrap_or(0).max(block + 1);
            if i < nblocks {
                let (q, mq) = b.block(i)?;
                at = self.search_dir(i, q, mq, 0, wanted)?.map(|j| (i, j));
                if at.is_none() && le32(q, 4 + DIR_ENTRY * (mq - 1)) == self.word && i + 1 < nblocks
                {
                    let (r, _) = b.block(i + 1)?;
                    if le32(r, 4) == self.word {
                        at = Some((i + 1, 0));
                    }
                }
            }
        }
        let Some((i, j)) = at else {
            return Ok(None);
        };
        let (p, m) = b.block(i)?;
        let e = b.entry(i, p, m, j)?;
        if e.end < e.start + 4 {
            return Err(b.corrupt(
                i,
                format!("entry {j}: postings block of {} bytes", e.end - e.start),
            ));
        }
        let info = BlockInfo {
            first: le32(p, e.start),
            last: e.last,
            bound: e.bound,
        };
        self.shallow = Some(((i, j), info));
        Ok(Some(info))
    }

    /// The current docID (after a `next` or `seek` that returned one).
    pub fn doc(&self) -> u32 {
        self.dec.docs[self.i]
    }

    /// The current document's hit counts: (plain, fancy).
    pub fn hit_counts(&mut self) -> Result<(u32, u32)> {
        self.decode(|dec, view, i| dec.hit_counts(view, i))
    }

    /// The current document's hits per class, from the count columns (no
    /// hit is read).
    pub fn classes(&mut self) -> Result<HitClasses> {
        self.decode(|dec, view, i| dec.classes(view, i))
    }

    /// Calls `f` with every postings block of this doclist from the current
    /// one on, in docID order, as the barrels' directories tell them (none
    /// is decoded): where it lies, for [`Self::load_at`], and what it holds.
    /// For a caller that walks a doclist's blocks in an order of its own
    /// (a one-word query's evaluation, best bound first). Of a full
    /// doclist only.
    pub fn for_each_block(&self, mut f: impl FnMut(BlockAt, BlockInfo)) -> Result<()> {
        if self.done {
            return Ok(());
        }
        let b = self.barrel;
        let nblocks = b.container().blocks().len();
        let (mut block, mut entry) = (self.block, self.entry);
        while block < nblocks {
            let (p, m) = b.block(block)?;
            for j in entry..m {
                let e = b.entry(block, p, m, j)?;
                if e.word != self.word {
                    return Ok(());
                }
                if e.end < e.start + 4 {
                    return Err(b.corrupt(
                        block,
                        format!("entry {j}: postings block of {} bytes", e.end - e.start),
                    ));
                }
                let info = BlockInfo {
                    first: le32(p, e.start),
                    last: e.last,
                    bound: e.bound,
                };
                f(BlockAt { block, entry: j }, info);
            }
            (block, entry) = (block + 1, 0);
        }
        Ok(())
    }

    /// Loads the postings block at `at` (one [`Self::for_each_block`]
    /// named) unless it is the current one, and stands on its first
    /// document, which it returns; [`Self::count_block`] and
    /// [`Self::block_columns`] then read it. Blocks may be loaded in any
    /// order; [`Self::next`], `seek` and `shallow` are not for a cursor
    /// moved so.
    pub fn load_at(&mut self, at: BlockAt) -> Result<u32> {
        if self.short {
            return Err(Error::internal(
                "a short doclist's block loaded by location",
            ));
        }
        if self.view.is_none() || (at.block, at.entry) != (self.block, self.entry) {
            self.load(at.block, at.entry)?;
        }
        self.i = 0;
        (self.started, self.done) = (true, false);
        Ok(self.dec.docs[0])
    }

    /// The current postings block's bound bytes (BM25F's, BM25's), as its
    /// directory entry holds them.
    pub fn block_bound(&self) -> [u8; 2] {
        self.bound
    }

    /// Decodes the current postings block's count columns (once per block),
    /// for [`Self::block_columns`].
    pub fn count_block(&mut self) -> Result<()> {
        self.decode(|dec, view, _| dec.count(view))
    }

    /// The current postings block for a caller that walks it itself (a
    /// one-word query's evaluation, `search::retrieve`): its docIDs, its
    /// count columns per class (valid once [`Self::count_block`] ran for
    /// this block) and the current document's index in them. Of a full
    /// doclist only: a short one's block holds documents it skips.
    pub fn block_columns(&self) -> (&[u32], &[[u32; BLOCK_DOCS]; CLASSES], usize) {
        (&self.dec.docs[..self.dec.n], &self.dec.counts, self.i)
    }

    /// The error of a corrupt current postings block, naming the barrel,
    /// the block and the entry.
    pub fn corrupt(&self, detail: impl std::fmt::Display) -> Error {
        self.barrel
            .corrupt(self.block, format!("entry {}: {detail}", self.entry))
    }

    /// Appends the current document's hits to `out` (plain hits in position
    /// order, then fancy hits).
    pub fn hits(&mut self, out: &mut Vec<Hit>) -> Result<()> {
        self.decode(|dec, view, i| dec.hits(view, i, out))
    }

    /// Appends the current document's hits of the classes `classes` (bit
    /// `1 << class`) to `out` as the proximity match reads them, and
    /// returns how many of them lead in (field, position) order
    /// ([`DecodedBlock::placed_hits`]).
    pub fn placed_hits(&mut self, classes: u8, out: &mut Vec<Hit>) -> Result<usize> {
        self.decode(|dec, view, i| dec.placed_hits(view, i, classes, out))
    }

    /// Where the current document's posting lies, for
    /// [`Self::placed_hits_at`] to read its hits once the cursor has moved
    /// on.
    pub fn posting(&self) -> PostingAt {
        PostingAt {
            block: self.block,
            entry: self.entry,
            i: self.i,
        }
    }

    /// [`Self::placed_hits`] of the posting at `at` (one this cursor stood
    /// on, [`Self::posting`]): its postings block is loaded again unless it
    /// is the current one (and counted as decoded). The cursor is left
    /// there, so it is for a caller done moving it.
    pub fn placed_hits_at(
        &mut self,
        at: PostingAt,
        classes: u8,
        out: &mut Vec<Hit>,
    ) -> Result<usize> {
        if self.view.is_none() || (at.block, at.entry) != (self.block, self.entry) {
            self.load(at.block, at.entry)?;
        }
        if at.i >= self.dec.n {
            return Err(self.corrupt(format!(
                "posting {} asked of a block of {}",
                at.i, self.dec.n
            )));
        }
        self.i = at.i;
        self.placed_hits(classes, out)
    }

    /// Runs `read` on the current block's decoder for the current document,
    /// naming the barrel, block and entry in a corrupt block's error.
    fn decode<T>(
        &mut self,
        read: impl FnOnce(&mut DecodedBlock, &BlockView<'a>, usize) -> std::result::Result<T, String>,
    ) -> Result<T> {
        let view = self
            .view
            .ok_or_else(|| Error::internal("cursor without a block"))?;
        let (block, entry) = (self.block, self.entry);
        read(&mut self.dec, &view, self.i)
            .map_err(|d| self.barrel.corrupt(block, format!("entry {entry}: {d}")))
    }
}

/// What the block bounds of the barrels are computed from: the ranking's
/// parameters and every document's field lengths.
pub struct Impacts {
    /// The parameters.
    pub params: BoundParams,
    norms: Norms,
}

/// Every document's length normalizations: in memory, or computed from
/// the field lengths file read a block at a time.
enum Norms {
    /// Per docID.
    Memory(Vec<DocNorms>),
    /// The file.
    File(Box<FieldLengths>),
}

/// One barrel's reader of an [`Impacts`]' norms, with the last file block
/// read.
pub(crate) struct NormReader<'a> {
    impacts: &'a Impacts,
    block: Option<(u64, Vec<[u32; FIELDS]>)>,
}

impl NormReader<'_> {
    fn get(&mut self, doc: u32) -> Result<Option<DocNorms>> {
        let params = &self.impacts.params;
        match &self.impacts.norms {
            Norms::Memory(v) => Ok(v.get(doc as usize).copied()),
            Norms::File(f) => {
                if u64::from(doc) >= f.docs() {
                    return Ok(None);
                }
                let b = u64::from(doc) / super::fieldlens::BLOCK_DOCS as u64;
                if self.block.as_ref().is_none_or(|(x, _)| *x != b) {
                    self.block = Some((b, f.block(b as usize)?));
                }
                Ok(self.block.as_ref().and_then(|(_, v)| {
                    v.get(doc as usize % super::fieldlens::BLOCK_DOCS)
                        .map(|l| params.norms(Some(l)))
                }))
            }
        }
    }
}

impl Impacts {
    /// The bounds of `params` over the field lengths of `f`: every
    /// document's norms in memory when they fit in `budget` bytes, else
    /// computed a posting at a time from the file, read a block at a time.
    pub fn within(params: BoundParams, f: FieldLengths, budget: u64) -> Result<Impacts> {
        let bytes = std::mem::size_of::<DocNorms>() as u64;
        let norms = if f.docs().saturating_mul(bytes) <= budget {
            let mut v = Vec::with_capacity(f.docs() as usize);
            for b in 0..f.blocks() {
                v.extend(f.block(b)?.iter().map(|l| params.norms(Some(l))));
            }
            Norms::Memory(v)
        } else {
            Norms::File(Box::new(f))
        };
        Ok(Impacts { params, norms })
    }

    /// The bounds of `params` over the field lengths `lens` (per docID).
    #[cfg(test)]
    fn of_lengths(params: BoundParams, lens: &[[u32; FIELDS]]) -> Impacts {
        let norms = Norms::Memory(lens.iter().map(|l| params.norms(Some(l))).collect());
        Impacts { params, norms }
    }

    /// A reader of the norms, for one barrel.
    pub(crate) fn reader(&self) -> NormReader<'_> {
        NormReader {
            impacts: self,
            block: None,
        }
    }

    /// Whether the norms are in memory.
    pub fn in_memory(&self) -> bool {
        matches!(self.norms, Norms::Memory(_))
    }

    /// The bound bytes (BM25F's, BM25's) of a posting: its saturated
    /// frequency under each ranking.
    pub(crate) fn bytes(
        &self,
        reader: &mut NormReader<'_>,
        doc: u32,
        plain: &[Hit],
        fancy: &[Hit],
    ) -> Result<[u8; 2]> {
        let mut tf = [0u32; FIELDS];
        for &h in plain.iter().chain(fancy) {
            tf[field_of_hit(h)] += 1;
        }
        self.bytes_of_fields(reader, doc, &tf)
    }

    /// [`Impacts::bytes`] of a posting whose hits per class are `c`
    /// ([`hit_classes`]): its hits per field are sums of its classes'
    /// ([`field_of_hit`]: body is the small, plain and bold type and the
    /// other fancy hits), so its hits are not looked at again.
    pub(crate) fn bytes_of_classes(
        &self,
        reader: &mut NormReader<'_>,
        doc: u32,
        c: &HitClasses,
    ) -> Result<[u8; 2]> {
        let tf = [
            c[TITLE],
            c[ANCHOR],
            c[URL],
            c[LARGE],
            c[SMALL] + c[PLAIN] + c[BOLD] + c[OTHER],
        ];
        self.bytes_of_fields(reader, doc, &tf)
    }

    /// The bound bytes of a posting with `tf` hits per field.
    fn bytes_of_fields(
        &self,
        reader: &mut NormReader<'_>,
        doc: u32,
        tf: &[u32; FIELDS],
    ) -> Result<[u8; 2]> {
        let norms = match self.params.avg_len {
            None => self.params.norms(None),
            Some(_) => match reader.get(doc)? {
                Some(n) => n,
                None => return Ok([NO_BOUND; 2]),
            },
        };
        let k1 = self.params.k1;
        Ok([
            bound_byte(self.params.saturated(true, tf, &norms), k1),
            bound_byte(self.params.saturated(false, tf, &norms), k1),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::hit::FancyType;
    use proptest::prelude::*;

    type Doclists = Vec<(u32, Vec<Posting>)>;

    fn doclists() -> impl Strategy<Value = Doclists> {
        proptest::collection::vec(
            (
                1u32..20,
                proptest::collection::vec((1u32..40, 0usize..6, 0usize..3), 1..400),
            ),
            1..12,
        )
        .prop_map(|words| {
            let mut word = 0;
            words
                .into_iter()
                .map(|(wgap, docs)| {
                    word += wgap;
                    let mut doc = 0;
                    let postings = docs
                        .into_iter()
                        .map(|(gap, np, nf)| {
                            doc += gap;
                            let plain = (0..np)
                                .map(|k| Hit::plain(k % 2 == 0, 1 + (k % 3) as u8, (k * 7) as u32))
                                .collect();
                            // By class, as a block keeps them: URL, then anchor.
                            let fancy = (0..nf)
                                .map(|k| {
                                    if k + 1 == nf {
                                        Hit::anchor(false, doc as u64, 1)
                                    } else {
                                        Hit::fancy(true, FancyType::Url, k as u32 + 1)
                                    }
                                })
                                .collect();
                            (doc, plain, fancy)
                        })
                        .collect();
                    (word, postings)
                })
                .collect()
        })
    }

    fn write(path: &Path, lists: &Doclists) -> Vec<Location> {
        let mut w = BarrelWriter::create(path, 3, 0, 1000, None).unwrap();
        let mut locs = Vec::new();
        for (word, postings) in lists {
            locs.push(w.begin_word(*word).unwrap());
            for (d, p, f) in postings {
                w.push(*d, p, f, [NO_BOUND; 2]).unwrap();
            }
        }
        w.finish().unwrap();
        locs
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn doclists_roundtrip_and_seek(lists in doclists(), targets in proptest::collection::vec(0u32..20_000, 1..30)) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("b.wm");
            let locs = write(&path, &lists);
            let b = Barrel::open(&path).unwrap();
            let totals = b.verify().unwrap();
            prop_assert_eq!(totals.doclists, lists.len() as u64);
            // The blocks hold the doclists in order.
            let mut got: Doclists = Vec::new();
            b.for_each_block(|_, w, ps| {
                match got.last_mut() {
                    Some((lw, v)) if *lw == w => v.extend(ps),
                    _ => got.push((w, ps)),
                }
                Ok(())
            }).unwrap();
            prop_assert_eq!(&got, &lists);
            let mut sorted_targets = targets.clone();
            sorted_targets.sort_unstable();
            for ((word, postings), loc) in lists.iter().zip(&locs) {
                // next() walks every document with its hits.
                let mut c = b.doclist(*word, *loc, postings.len() as u32).unwrap();
                let mut hits = Vec::new();
                for (d, p, f) in postings {
                    prop_assert_eq!(c.next().unwrap(), Some(*d));
                    hits.clear();
                    c.hits(&mut hits).unwrap();
                    prop_assert_eq!(&hits[..p.len()], &p[..]);
                    prop_assert_eq!(&hits[p.len()..], &f[..]);
                }
                prop_assert_eq!(c.next().unwrap(), None);
                // The short doclist: the documents with a title or anchor
                // hit, by next() and by seek(), with their hits.
                let short: Vec<&Posting> = postings
                    .iter()
                    .filter(|p| p.2.iter().any(|h| h.is_title_or_anchor()))
                    .collect();
                let mut c = b.short_doclist(*word, *loc, short.len() as u32).unwrap();
                prop_assert_eq!(c.len() as usize, short.len());
                for (d, p, f) in &short {
                    prop_assert_eq!(c.next().unwrap(), Some(*d));
                    hits.clear();
                    c.hits(&mut hits).unwrap();
                    prop_assert_eq!(hits.len(), p.len() + f.len());
                }
                prop_assert_eq!(c.next().unwrap(), None);
                let mut c = b.short_doclist(*word, *loc, short.len() as u32).unwrap();
                for &t in &sorted_targets {
                    let want = short.iter().map(|p| p.0).find(|&d| d >= t);
                    prop_assert_eq!(c.seek(t).unwrap(), want, "short seek {}", t);
                    if want.is_none() {
                        break;
                    }
                }
                // seek() agrees with a linear scan, for increasing targets.
                let mut c = b.doclist(*word, *loc, postings.len() as u32).unwrap();
                let mut at = 0;
                for &t in &sorted_targets {
                    let want = postings[at..].iter().map(|p| p.0).find(|&d| d >= t);
                    let got = c.seek(t).unwrap();
                    prop_assert_eq!(got, want, "seek {}", t);
                    match want {
                        Some(d) => {
                            at = postings.iter().position(|p| p.0 == d).unwrap();
                            hits.clear();
                            c.hits(&mut hits).unwrap();
                            prop_assert_eq!(hits.len(), postings[at].1.len() + postings[at].2.len());
                        }
                        None => break,
                    }
                }
            }
        }
    }

    /// `verify` recomputes the block bounds from the field lengths beside
    /// the barrel, and names an entry whose bounds are not its documents'.
    #[test]
    fn verify_checks_block_bounds() {
        use super::super::fieldlens::{FieldLengths, FieldLengthsWriter};
        use super::super::inverted::Impacts;
        let dir = tempfile::tempdir().unwrap();
        let lens_path = dir.path().join("fieldlens.wm");
        let mut w = FieldLengthsWriter::create(&lens_path, 300).unwrap();
        for d in 0..300u32 {
            w.push(&[d % 3, d % 5, 2, d % 7, 10 + d % 50]).unwrap();
        }
        w.finish().unwrap();
        let f = FieldLengths::open(&lens_path).unwrap();
        let params = BoundParams::default_weights(Some(f.averages()));
        let impacts = Impacts::within(params.clone(), f, 0).unwrap();
        assert!(!impacts.in_memory());
        let write = |wrong: Option<u32>| {
            let path = dir.path().join("full-000.wm");
            let mut w = BarrelWriter::create(&path, 0, 0, 1, Some(&params)).unwrap();
            let mut reader = impacts.reader();
            w.begin_word(0).unwrap();
            for doc in (0..300u32).step_by(2) {
                let plain: Vec<Hit> = (0..(doc % 9)).map(|p| Hit::plain(false, 1, p)).collect();
                let fancy = [Hit::title(false, 0)];
                let mut b = impacts.bytes(&mut reader, doc, &plain, &fancy).unwrap();
                if wrong == Some(doc) {
                    b[0] = 254;
                }
                w.push(doc, &plain, &fancy, b).unwrap();
            }
            w.finish().unwrap();
            Barrel::open(&path).unwrap().verify()
        };
        write(None).unwrap();
        let e = write(Some(200)).unwrap_err().to_string();
        assert!(e.contains("bounds"), "{e}");
        // A doclist of 150 documents: two postings blocks, both bounded.
        let path = dir.path().join("full-000.wm");
        let b = Barrel::open(&path).unwrap();
        let loc = Location { block: 0, entry: 0 };
        let mut c = b.doclist(0, loc, 150).unwrap();
        let first = c.shallow(0).unwrap().unwrap();
        let second = c.shallow(first.last + 1).unwrap().unwrap();
        assert_eq!((first.first, first.last, second.first), (0, 254, 256));
        assert!(first.bound[0] > 0 && second.bound[0] > 0);
        assert_eq!(c.shallow(299).unwrap(), None);
    }

    /// A barrel of version 6 (position runs packed at their widest
    /// value's width, without exceptions) is refused, naming the file and
    /// both versions.
    #[test]
    fn version_6_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("full-000.wm");
        let w = ContainerWriter::create(&path, BARREL.tag, 6, &json!({})).unwrap();
        w.finish(&json!({})).unwrap();
        let err = Barrel::open(&path)
            .err()
            .expect("version 6 refused")
            .to_string();
        assert!(
            err.contains("full-000.wm") && err.contains("version 6") && err.contains("version 7"),
            "{err}"
        );
    }

    #[test]
    fn corrupt_block_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.wm");
        let lists: Doclists = vec![(
            5,
            (1..2000)
                .map(|d| (d * 3, vec![Hit::plain(false, 1, d % 50)], vec![]))
                .collect(),
        )];
        let locs = write(&path, &lists);
        let mut bytes = std::fs::read(&path).unwrap();
        let c = Container::open(&path).unwrap();
        assert!(!c.blocks().is_empty());
        let at = c.blocks()[0].offset as usize + 24 + 100;
        bytes[at] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        let b = Barrel::open(&path).unwrap();
        let err = b.verify().unwrap_err().to_string();
        assert!(err.contains("b.wm") && err.contains("block 0"), "{err}");
        let cur = b
            .doclist(5, locs[0], 1999)
            .err()
            .expect("a corrupt block is refused")
            .to_string();
        assert!(cur.contains("block 0"), "{cur}");
    }

    proptest! {
        /// `bound_byte`'s rounding up without `ceil` gives what `ceil`
        /// gave: saturated frequencies anywhere in and around their range,
        /// whole bytes exactly (where a rounding could differ), negative
        /// and NaN ones.
        #[test]
        fn bound_bytes_round_up_as_ceil_does(
            t in prop_oneof![-1.0f64..4.0, (0u32..=260).prop_map(|q| f64::from(q) * 2.2 / 254.0)],
            k1 in prop_oneof![Just(1.2f64), 0.0f64..3.0],
            nan: bool,
        ) {
            let t = if nan { f64::NAN } else { t };
            let x = (t / (k1 + 1.0)) * 254.0 * (1.0 + 1e-9) + 1e-9;
            let naive = if x.is_nan() || x > 254.0 { NO_BOUND } else { x.ceil().max(0.0) as u8 };
            prop_assert_eq!(bound_byte(t, k1), naive);
        }

        /// A posting's bound bytes from its hits per class (what the
        /// sorter computes, counting the classes once) equal those from its
        /// hits per field (each hit's field looked up), whatever the hits'
        /// fonts and fancy types, with and without average lengths.
        #[test]
        fn bounds_from_classes_equal_bounds_from_hits(
            plain in proptest::collection::vec((any::<bool>(), 0u8..=6, 0u32..5000), 0..40),
            fancy in proptest::collection::vec((any::<bool>(), 0u8..16, any::<u64>(), 0u32..300), 0..20),
            lens in proptest::collection::vec(proptest::array::uniform5(0u32..400), 1..8),
            with_avg: bool,
            doc in 0u32..10,
        ) {
            let plain: Vec<Hit> = plain.into_iter().map(|(c, f, p)| Hit::plain(c, f, p)).collect();
            let fancy: Vec<Hit> = fancy
                .into_iter()
                .map(|(c, t, s, p)| match FancyType::from_code(t) {
                    FancyType::Anchor => Hit::anchor(c, s, p),
                    kind => Hit::fancy(c, kind, p),
                })
                .collect();
            let avg = with_avg.then_some([3.5, 40.0, 7.0, 12.0, 300.0]);
            let impacts = Impacts::of_lengths(BoundParams::default_weights(avg), &lens);
            let mut r = impacts.reader();
            let by_hits = impacts.bytes(&mut r, doc, &plain, &fancy).unwrap();
            let c = hit_classes(&plain, &fancy);
            prop_assert_eq!(impacts.bytes_of_classes(&mut r, doc, &c).unwrap(), by_hits);
        }
    }
}

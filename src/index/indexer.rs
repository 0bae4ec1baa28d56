//! The indexer: documents → hits (Brin & Page §4.1, "the indexer … converts
//! each document into a set of word occurrences called hits").
//!
//! A job's documents are read in two parts, in this order:
//!
//! 1. **page texts** (`text.wm`, page order, canonical captures only, their
//!    docIDs from `pagedoc.wm`): each word at position `i` becomes a plain hit
//!    with its capitalization and relative font size ([`text_hits`]);
//! 2. **fancy texts** (`docs.wm` in docID order beside `anchors.wm`, keyed by
//!    target): the words of each doc's URL (after the scheme) become URL hits,
//!    of its title title hits, and of the anchor text of every link to it
//!    anchor hits — also for docs that were never crawled
//!    ([`fancy_hits`]). URL, title and anchor words are cut into words by the
//!    extractor's own tokenizer ([`crate::ingest::html::tokenize`]).
//!
//! The work comes in units (a block of `text.wm`, a block of `docs.wm` with
//! its anchors) processed in parallel and consumed in order
//! ([`crate::par::pipeline`]: a few units in flight at a time), so
//! every output is the same whatever the thread count. Two passes walk it:
//! [`count_vocabulary`] (hits per word, for the lexicon) and
//! [`write_forward`] (each document's hits into the forward barrels of their
//! words). Pass 1 numbers each unit's distinct words in the order it meets
//! them and keeps the first units, as many as its share of the budget holds,
//! as those unit-local word indices with their hits ([`Carried`]): the
//! forward pass looks each of a carried unit's words up once and maps its
//! tokens through a dense array, instead of reading, decompressing,
//! tokenizing and hashing the unit again into the word → wordID table (the
//! units that did not fit are read again, with the same result).

use std::hash::BuildHasher;
use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::fieldlens::{field_of_hit, FIELDS};
use super::forward::{encode_record_with, ForwardWriter, Part};
use super::hit::{relative_font, Hit};
use super::lexicon::{FstBytes, VocabRec, WordPlan};
use super::stem::{Stem, Stemmer};
use crate::container::pagefile::PageFile;
use crate::docs::DocTable;
use crate::error::{Error, Result};
use crate::ingest::html::{flag, tokenize};
use crate::ingest::records;
use crate::par::{pipeline, InFlight};
use crate::progress::{SharedReporter, Unit};
use crate::sort::ExternalSorter;

/// The hasher of the indexer's word tables: foldhash, seeded at random per
/// table (crawled text is untrusted input), several times faster than a
/// streaming xxh3 on the short keys words are; nothing written depends on
/// a table's order.
type WordHasher = foldhash::fast::RandomState;

/// Hits per word (a chunk's or a unit's vocabulary).
type WordCounts = WordMap<u64>;

/// A hash table keyed by words. Words of at most 7 bytes (most words) are
/// packed with their length into a `u64`, hashed and compared as one
/// integer and stored without an allocation; longer ones are kept as
/// strings. (String keys cost a `memcmp` call per lookup and an allocation
/// per new word: 8% and 2% of the indexer's CPU time on rust-doc.)
pub struct WordMap<V> {
    short: hashbrown::HashMap<u64, V, WordHasher>,
    long: hashbrown::HashMap<Box<str>, V, WordHasher>,
}

/// `w` packed into a `u64` (bytes, then its length in the top byte) if it
/// has at most 7 bytes.
///
/// Built from two loads that overlap (equal bytes OR-ed twice) rather than
/// by copying the word into a zeroed array: that copy was a `memcpy` call
/// whose byte stores the array's 8-byte load then waited on (a
/// store-forwarding stall), 4% of the index build's CPU time on rust-doc.
#[inline]
fn pack_word(w: &str) -> Option<u64> {
    let b = w.as_bytes();
    let n = b.len();
    let v = match n {
        0 => 0,
        1 => u64::from(b[0]),
        2 | 3 => {
            let lo = u16::from_le_bytes([b[0], b[1]]);
            let hi = u16::from_le_bytes([b[n - 2], b[n - 1]]);
            u64::from(lo) | u64::from(hi) << ((n - 2) * 8)
        }
        4..=7 => {
            let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]);
            u64::from(lo) | u64::from(hi) << ((n - 4) * 8)
        }
        _ => return None,
    };
    Some(v | (n as u64) << 56)
}

/// The word [`pack_word`] packed.
fn unpack_word(k: u64) -> String {
    let a = k.to_le_bytes();
    let n = usize::from(a[7]).min(7);
    String::from_utf8_lossy(&a[..n]).into_owned()
}

impl<V> Default for WordMap<V> {
    fn default() -> Self {
        WordMap {
            short: hashbrown::HashMap::with_hasher(WordHasher::default()),
            long: hashbrown::HashMap::with_hasher(WordHasher::default()),
        }
    }
}

impl<V> WordMap<V> {
    /// The value of `w`.
    #[inline]
    pub fn get(&self, w: &str) -> Option<&V> {
        self.get_keyed(w, pack_word(w))
    }

    /// The value of `w`, whose [`pack_word`] key is `key`.
    #[inline]
    fn get_keyed(&self, w: &str, key: Option<u64>) -> Option<&V> {
        match key {
            Some(k) => self.short.get(&k),
            None => self.long.get(w),
        }
    }

    /// The value of `w`, inserting `new()` first if `w` is not there; and
    /// whether it was inserted.
    #[inline]
    pub fn get_or_insert(&mut self, w: &str, new: impl FnOnce() -> V) -> (&mut V, bool) {
        self.get_or_insert_keyed(w, pack_word(w), new)
    }

    /// [`WordMap::get_or_insert`] of `w`, whose [`pack_word`] key is `key`.
    #[inline]
    fn get_or_insert_keyed(
        &mut self,
        w: &str,
        key: Option<u64>,
        new: impl FnOnce() -> V,
    ) -> (&mut V, bool) {
        let mut inserted = false;
        let v = match key {
            Some(k) => self.short.entry(k).or_insert_with(|| {
                inserted = true;
                new()
            }),
            None => self.long.entry_ref(w).or_insert_with(|| {
                inserted = true;
                new()
            }),
        };
        (v, inserted)
    }

    /// Words in the table.
    pub fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// `true` if the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the table into `(word, value)` pairs, in no particular order.
    pub fn drain(&mut self) -> impl Iterator<Item = (String, V)> + '_ {
        let short = self.short.drain().map(|(k, v)| (unpack_word(k), v));
        short.chain(self.long.drain().map(|(w, v)| (w.into_string(), v)))
    }
}

impl WordMap<u64> {
    /// Adds a unit's counts to this table's; returns the bytes the words new
    /// here take (their length plus 64 each, the budget's estimate).
    fn add_counts(&mut self, unit: &UnitVocab) -> u64 {
        let mut new_bytes = 0;
        for (w, &c) in unit.words.iter().zip(&unit.counts) {
            match *w {
                VocabWord::Short(k) => match self.short.entry(k) {
                    hashbrown::hash_map::Entry::Occupied(mut e) => *e.get_mut() += c,
                    hashbrown::hash_map::Entry::Vacant(e) => {
                        new_bytes += u64::from(k.to_le_bytes()[7]) + 64;
                        e.insert(c);
                    }
                },
                VocabWord::Long(start, end) => {
                    let w = &unit.long_text[start as usize..end as usize];
                    let (v, new) = self.get_or_insert(w, || 0);
                    *v += c;
                    if new {
                        new_bytes += w.len() as u64 + 64;
                    }
                }
            }
        }
        new_bytes
    }
}

/// A word of a unit's vocabulary: packed by [`pack_word`], or the range of
/// [`UnitVocab::long_text`] holding it.
#[derive(Clone, Copy, Debug)]
enum VocabWord {
    Short(u64),
    Long(u32, u32),
}

/// A unit's vocabulary as pass 1 counts it: its distinct words numbered in
/// the order first met (the unit-local word index), with their hits.
#[derive(Default)]
struct UnitVocab {
    index: WordMap<u32>,
    words: Vec<VocabWord>,
    long_text: String,
    counts: Vec<u64>,
}

impl UnitVocab {
    /// Counts one hit of `w`, whose [`pack_word`] key is `key`; returns its
    /// unit-local index.
    #[inline]
    fn add(&mut self, w: &str, key: Option<u64>) -> u32 {
        let n = self.words.len() as u32;
        let (&mut i, new) = self.index.get_or_insert_keyed(w, key, || n);
        if new {
            self.words.push(match key {
                Some(k) => VocabWord::Short(k),
                None => {
                    let start = self.long_text.len() as u32;
                    self.long_text.push_str(w);
                    VocabWord::Long(start, self.long_text.len() as u32)
                }
            });
            self.counts.push(0);
        }
        self.counts[i as usize] += 1;
        i
    }
}

/// A unit's documents as pass 1 tokenized them, carried into the forward
/// pass so that it neither reads, tokenizes nor hashes them again: the
/// unit's vocabulary, and each document's words as unit-local indices into
/// it, with their hits. The forward pass looks each vocabulary word up once
/// and maps a document's words through that small dense array; the word →
/// wordID table is large (90k words on rust-doc), and hashing every token
/// into it again missed the cache once a token (17.6% of the build's CPU
/// time on rust-doc).
pub struct CarriedUnit {
    words: Vec<VocabWord>,
    long_text: String,
    /// (docID, part, words) of each document, in the order read.
    docs: Vec<(u64, Part, u32)>,
    /// Every document's words, as indices into `words`.
    tokens: LocalWords,
    /// One hit per token.
    hits: Vec<Hit>,
    /// Bytes of input the unit stands for (for progress).
    input_bytes: u64,
}

/// A carried unit's words as unit-local indices: in 16 bits when the unit
/// has at most 2¹⁶ distinct words (a unit of rust-doc has a few thousand),
/// which makes a carried token 4 bytes with its hit instead of 6. Pass 1
/// appends each document's narrow from the start (all widened once the
/// vocabulary outgrows 16 bits): a 32-bit copy of the unit's, narrowed at
/// its end, wrote and faulted in three times the bytes.
enum LocalWords {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Default for LocalWords {
    fn default() -> Self {
        LocalWords::Narrow(Vec::new())
    }
}

impl LocalWords {
    /// Appends `ids`, indices into a vocabulary of `words` words.
    fn extend(&mut self, ids: &[u32], words: usize) {
        if let LocalWords::Narrow(v) = self {
            if words <= 1 << 16 {
                v.extend(ids.iter().map(|&i| i as u16));
                return;
            }
            *self = LocalWords::Wide(v.iter().map(|&t| u32::from(t)).collect());
        }
        if let LocalWords::Wide(v) = self {
            v.extend_from_slice(ids);
        }
    }

    fn shrink_to_fit(&mut self) {
        match self {
            LocalWords::Narrow(v) => v.shrink_to_fit(),
            LocalWords::Wide(v) => v.shrink_to_fit(),
        }
    }
}

impl CarriedUnit {
    /// Pass 1's tokens of a unit (`tokens` indices into its vocabulary),
    /// its vocabulary still to be given.
    fn new(
        mut docs: Vec<(u64, Part, u32)>,
        mut tokens: LocalWords,
        mut hits: Vec<Hit>,
        input_bytes: u64,
    ) -> CarriedUnit {
        docs.shrink_to_fit();
        tokens.shrink_to_fit();
        hits.shrink_to_fit();
        CarriedUnit {
            words: Vec::new(),
            long_text: String::new(),
            docs,
            tokens,
            hits,
            input_bytes,
        }
    }

    /// Bytes it holds (its vectors' lengths: they are built to size).
    fn bytes(&self) -> u64 {
        let tokens = match &self.tokens {
            LocalWords::Narrow(t) => t.len() * 2,
            LocalWords::Wide(t) => t.len() * 4,
        };
        (self.words.len() * std::mem::size_of::<VocabWord>()
            + self.long_text.len()
            + self.docs.len() * std::mem::size_of::<(u64, Part, u32)>()
            + tokens
            + self.hits.len() * 2) as u64
            + 128
    }

    /// Sets `keys` to `wordID · 2³² + index` for the words `range` of the
    /// unit, `ids` being the wordIDs of its vocabulary.
    fn keys(&self, range: std::ops::Range<usize>, ids: &[u32], keys: &mut Vec<u64>) {
        fn fill<T: Copy + Into<u64>>(tokens: &[T], ids: &[u32], keys: &mut Vec<u64>) {
            keys.clear();
            keys.extend(
                tokens
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| u64::from(ids[t.into() as usize]) << 32 | i as u64),
            );
        }
        match &self.tokens {
            LocalWords::Narrow(t) => fill(&t[range], ids, keys),
            LocalWords::Wide(t) => fill(&t[range], ids, keys),
        }
    }
}

/// The units pass 1 carries into the forward pass: the first units of the
/// input, in order, as many as fit in the budget it was given (the forward
/// pass reads the rest again). Empty when pass 1 ran in an earlier attempt.
#[derive(Default)]
pub struct Carried {
    units: Vec<CarriedUnit>,
    /// Every unit is carried.
    all: bool,
}

impl Carried {
    /// Units carried.
    pub fn units(&self) -> usize {
        self.units.len()
    }
}

/// The job files the indexer reads.
#[derive(Clone, Debug)]
pub struct Sources {
    /// `text.wm`: token streams by page.
    pub text: PathBuf,
    /// `pagedoc.wm`: page → docID.
    pub pagedoc: PathBuf,
    /// `docs.wm`: the doc table.
    pub docs: PathBuf,
    /// `anchors.wm`: anchors by target docID.
    pub anchors: PathBuf,
    /// Index only the documents of these docIDs (a shard of a
    /// document-partitioned index, see [`super::shards`]); `None`: all.
    pub docs_range: Option<std::ops::Range<u64>>,
}

/// The plain hits of a page's token stream, from its flag bytes (one per
/// word): position = index, capitalization from the flag, font
/// size relative to the page's most common size (see [`super::hit`]).
pub fn text_hits(flags: &[u8], out: &mut Vec<Hit>) {
    let mut histogram = [0u32; 8];
    for f in flags {
        histogram[usize::from(flag::size(*f))] += 1;
    }
    // The most common size; ties go to the smaller size.
    let modal = (0..8u8)
        .max_by_key(|&s| (histogram[usize::from(s)], std::cmp::Reverse(s)))
        .unwrap_or(flag::NORMAL_SIZE);
    out.extend(flags.iter().enumerate().map(|(i, &f)| {
        let font = relative_font(flag::size(f), f & flag::BOLD != 0, modal);
        Hit::plain(f & flag::CAPITALIZED != 0, font, i as u32)
    }));
}

/// Reusable buffers for [`fancy_hits`].
#[derive(Default)]
pub struct Tokens {
    /// Words, space-separated.
    pub words: String,
    flags: Vec<u8>,
    /// One hit per word.
    pub hits: Vec<Hit>,
    /// The document's anchor texts already cut into words, by the hash of
    /// the text (see [`fancy_hits`]).
    seen: hashbrown::HashMap<u64, CutText, WordHasher>,
}

/// An anchor text [`fancy_hits`] has cut into words for the document: the
/// index of the anchor it came from first (whose text a later one is
/// compared with), and where its words (after their separator) and flags
/// are in [`Tokens`].
#[derive(Clone, Debug)]
struct CutText {
    anchor: usize,
    words: std::ops::Range<usize>,
    flags: std::ops::Range<usize>,
}

/// The fancy hits of a document: the words of its URL (after `scheme://`),
/// its title, and the anchor texts `(source docID, text)` of the links to it,
/// into `t.words` (space-separated) and `t.hits`.
///
/// Most links to a page carry the same text (93% of rust-doc's anchors
/// repeat a text of an earlier anchor to the same page: navigation and
/// cross-references), so each distinct text is cut into words once and its
/// words and flags copied for the others; the tokenizer's output depends
/// on nothing but the text (the separator before it aside), so the words
/// and hits are what cutting every text gives. Cutting every one took 5.6%
/// of the index build's instructions on rust-doc.
pub fn fancy_hits(url: &str, title: &str, anchors: &[(u64, &str)], t: &mut Tokens) {
    t.words.clear();
    t.flags.clear();
    t.hits.clear();
    t.seen.clear();
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    t.add(rest, Hit::url);
    t.add(title, Hit::title);
    for (k, &(src, text)) in anchors.iter().enumerate() {
        let hit = |cap, j| Hit::anchor(cap, src, j);
        let key = t.seen.hasher().hash_one(text);
        match t.seen.get(&key) {
            Some(c) if anchors[c.anchor].1 == text => {
                let c = c.clone();
                t.repeat(&c, hit);
            }
            _ => {
                let (words, flags) = t.add(text, hit);
                t.seen.entry(key).or_insert(CutText {
                    anchor: k,
                    words,
                    flags,
                });
            }
        }
    }
}

impl Tokens {
    /// Appends the words of `text` with the hit `hit(capitalized, index)`
    /// each; returns where its words (after their separator) and their
    /// flags are.
    fn add(
        &mut self,
        text: &str,
        hit: impl Fn(bool, u32) -> Hit,
    ) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let (at, before) = (self.flags.len(), self.words.len());
        tokenize(text, &mut self.words, &mut self.flags);
        // The tokenizer puts a space before its first word when the words
        // are not empty.
        let start = if before > 0 && self.flags.len() > at {
            before + 1
        } else {
            before
        };
        self.push_hits(at, hit);
        (start..self.words.len(), at..self.flags.len())
    }

    /// Appends again the words and flags of a text cut before, as
    /// [`Tokens::add`] of the same text would.
    fn repeat(&mut self, c: &CutText, hit: impl Fn(bool, u32) -> Hit) {
        if c.flags.is_empty() {
            return;
        }
        if !self.words.is_empty() {
            self.words.push(' ');
        }
        self.words.extend_from_within(c.words.clone());
        let at = self.flags.len();
        self.flags.extend_from_within(c.flags.clone());
        self.push_hits(at, hit);
    }

    /// One hit per flag from `at` on.
    fn push_hits(&mut self, at: usize, hit: impl Fn(bool, u32) -> Hit) {
        self.hits.extend(
            self.flags[at..]
                .iter()
                .enumerate()
                .map(|(j, &f)| hit(f & flag::CAPITALIZED != 0, j as u32)),
        );
    }
}

/// A unit of work: a block of the text file, or a block of the doc table
/// with the anchors of its docs.
enum Work {
    Text {
        block: usize,
        /// docID of each page from `first_page` on (`u64::MAX`: not canonical).
        first_page: u64,
        docs: Vec<u64>,
    },
    Fancy {
        block: usize,
        /// The block's docIDs: its worker reads their anchors (keyed by
        /// target) itself, so the anchors are decoded in parallel rather
        /// than on the thread that hands out the units.
        docs: std::ops::Range<u64>,
    },
}

/// The open inputs, shared by the workers.
struct Inputs {
    text: PageFile,
    pagedoc: PageFile,
    docs: DocTable,
    anchors: PageFile,
    /// The stemmer every word goes through, if any.
    stemmer: Option<Stemmer>,
    /// The docIDs indexed.
    range: std::ops::Range<u64>,
    /// Block buffers (stored, decoded) a unit takes and gives back, so a
    /// thread's next unit decodes into pages already faulted in: fresh
    /// buffers of a few hundred KiB are mapped afresh by the allocator
    /// ([`crate::resources::bound_allocator_retention`]), and their faults
    /// took about 5% of rust-doc's build CPU. There are at most as many as
    /// units ever ran at once (one a thread), each no larger than
    /// [`Inputs::KEEP_BLOCK`], and they are freed with the inputs at the
    /// pass's end: the bound on the decoded input in flight already counts
    /// them.
    blocks: std::sync::Mutex<Vec<(Vec<u8>, Vec<u8>)>>,
}

impl Inputs {
    /// Largest block buffer given back to [`Inputs::blocks`]: a block of an
    /// outsized page is not kept beside later units.
    const KEEP_BLOCK: usize = 4 << 20;

    /// A pair of block buffers from the pool (or new ones).
    fn take_block(&self) -> (Vec<u8>, Vec<u8>) {
        take_from(&self.blocks, Default::default)
    }

    /// Gives `buf` back to the pool unless it grew past
    /// [`Inputs::KEEP_BLOCK`].
    fn give_block(&self, buf: (Vec<u8>, Vec<u8>)) {
        if buf.0.capacity().max(buf.1.capacity()) <= Self::KEEP_BLOCK {
            give_to(&self.blocks, buf);
        }
    }

    fn open(s: &Sources, stem: Stem) -> Result<Inputs> {
        let docs = DocTable::open(&s.docs)?;
        if docs.len() > u64::from(u32::MAX) {
            return Err(Error::usage(format!(
                "{} docs: the index holds docIDs below 2³²",
                docs.len()
            )));
        }
        Ok(Inputs {
            text: PageFile::open(&s.text, &records::TEXT)?,
            pagedoc: PageFile::open(&s.pagedoc, &records::PAGEDOC)?,
            docs,
            anchors: PageFile::open(&s.anchors, &records::ANCHORS)?,
            stemmer: stem.stemmer(),
            range: s.docs_range.clone().unwrap_or(0..u64::MAX),
            blocks: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// The units of work, in order: the text file's blocks (each with the
    /// docIDs of its pages, read from the page map here), then the doc
    /// table's blocks (of a shard's documents only: from the block holding
    /// its first docID).
    fn units(&self) -> Units<'_> {
        let dc = self.docs.container();
        let (mut block, mut next_doc) = (0, 0u64);
        while block < dc.blocks().len() && next_doc + dc.blocks()[block].records <= self.range.start
        {
            next_doc += dc.blocks()[block].records;
            block += 1;
        }
        Units {
            inputs: self,
            pagedoc: SeqReader::new(&self.pagedoc),
            text_block: 0,
            doc_block: block,
            next_doc,
        }
    }

    /// Calls `g(docID, part, words, hits)` for each document of `unit`:
    /// `words` space-separated, one hit per word. With `titles`, also
    /// appends there the anchor title ([`super::titles`]) of each of a doc
    /// table unit's documents that is not crawled and has no title.
    fn visit(
        &self,
        unit: &Work,
        tokens: &mut Tokens,
        mut titles: Option<&mut Vec<(u64, String)>>,
        mut g: impl FnMut(u64, Part, &str, &[Hit]) -> Result<()>,
    ) -> Result<()> {
        let mut stemmed = String::new();
        let mut g = |doc: u64, part: Part, words: &str, hits: &[Hit]| match &self.stemmer {
            Some(st) => {
                st.words(words, &mut stemmed);
                g(doc, part, &stemmed, hits)
            }
            None => g(doc, part, words, hits),
        };
        match unit {
            Work::Text {
                block,
                first_page,
                docs,
            } => {
                let mut buf = self.take_block();
                let mut hits = Vec::new();
                let r = self.text.visit_block(*block, &mut buf, |page, input| {
                    let (words, flags) = records::decode_text(input)?;
                    let doc = docs
                        .get((page - first_page) as usize)
                        .copied()
                        .ok_or_else(|| {
                            Error::record(format!("page {page} has no docID in the page map"))
                        })?;
                    if doc != u64::MAX && self.range.contains(&doc) && !flags.is_empty() {
                        hits.clear();
                        text_hits(flags, &mut hits);
                        g(doc, Part::Text, words, &hits)?;
                    }
                    Ok(())
                });
                self.give_block(buf);
                r
            }
            Work::Fancy { block, docs } => {
                let (first, end) = (docs.start, docs.end);
                if end <= self.range.start || first >= self.range.end {
                    return Ok(());
                }
                let c = self.docs.container();
                let list = self.docs.decode_block(*block, &c.read_block(*block)?)?;
                // The doc table's last unit reads the anchors to the file's
                // end, so that an anchor to a docID past the table is an
                // error here as in the titles' own pass.
                let last = *block + 1 == c.blocks().len();
                let read_end = if last { u64::MAX } else { end };
                // (source, target − first, text length) of the anchors of
                // the block's docs, in file order, their texts one after
                // the other in `text`: 16 bytes an anchor, not 32 with the
                // target and a range of `text` (a doc table block of
                // vtk9-doc has up to 300k anchors, and this list is the
                // largest allocation of the passes' peak at small budgets).
                // The anchor block holding the first target may start with
                // earlier targets' anchors (the previous unit's): they are
                // decoded and passed over.
                let mut anchors: Vec<(u64, u32, u32)> = Vec::new();
                let mut text = String::new();
                let mut reader = SeqReader::with_buffer(&self.anchors, first, self.take_block());
                let read = reader.take_until(read_end, |target, input| {
                    let (src, _, t) = records::decode_anchor(input)?;
                    if target >= end {
                        return Err(Error::record(format!(
                            "anchor to docID {target}, past the doc table's {end} docs"
                        )));
                    }
                    if target >= first {
                        let too_large = |what| Error::record(format!("{what} over 2³²"));
                        let at = u32::try_from(target - first).map_err(|_| too_large("docs"))?;
                        let len = u32::try_from(t.len()).map_err(|_| too_large("anchor bytes"))?;
                        text.push_str(t);
                        anchors.push((src, at, len));
                    }
                    Ok(())
                });
                self.give_block(reader.into_buffer());
                read?;
                // The next anchor and where its text starts.
                let (mut a, mut at) = (0, 0);
                let mut refs: Vec<(u64, &str)> = Vec::new();
                for (k, d) in list.iter().enumerate() {
                    let doc = first + k as u64;
                    refs.clear();
                    while let Some(&(src, to, len)) =
                        anchors.get(a).filter(|x| u64::from(x.1) <= k as u64)
                    {
                        let end = at + len as usize;
                        if u64::from(to) == k as u64 {
                            refs.push((src, &text[at..end]));
                        }
                        (a, at) = (a + 1, end);
                    }
                    if !self.range.contains(&doc) {
                        continue;
                    }
                    if let Some(titles) = titles.as_deref_mut() {
                        if !d.crawled && d.title.is_empty() {
                            let mut vote = super::titles::AnchorVote::default();
                            for &(_, text) in &refs {
                                if !vote.add(text) {
                                    break;
                                }
                            }
                            if let Some(t) = vote.title() {
                                titles.push((doc, t.to_string()));
                            }
                        }
                    }
                    fancy_hits(&d.url, &d.title, &refs, tokens);
                    if !tokens.hits.is_empty() {
                        g(doc, Part::Fancy, &tokens.words, &tokens.hits)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Bytes of input a unit stands for (for progress).
    fn unit_bytes(&self, unit: &Work) -> u64 {
        match unit {
            Work::Text { block, .. } => self.text.container().blocks()[*block].raw,
            Work::Fancy { block, .. } => self.docs.container().blocks()[*block].raw,
        }
    }

    /// What a unit holds while at work, about, for the bound on the units
    /// in flight: its decoded input, which for a doc table unit is also its
    /// documents' anchors (the anchor blocks of its docIDs). A block of
    /// vtk9-doc's doc table has up to 6.8 MB of anchors, 400 times its own
    /// bytes: counted at its own bytes alone, four such units could be in
    /// flight at once, the largest allocations of either pass.
    fn unit_cost(&self, unit: &Work) -> u64 {
        let anchors = match unit {
            Work::Text { .. } => 0,
            Work::Fancy { docs, .. } => {
                let from = self.anchors.find_block(docs.start).unwrap_or(0);
                match self.anchors.find_block(docs.end.saturating_sub(1)) {
                    Some(to) if to >= from => self.anchors.container().blocks()[from..=to]
                        .iter()
                        .map(|b| b.raw)
                        .sum(),
                    _ => 0,
                }
            }
        };
        self.unit_bytes(unit) + anchors
    }

    fn total_bytes(&self) -> u64 {
        self.text.container().raw_bytes() + self.docs.container().raw_bytes()
    }
}

/// The units of work of [`Inputs::units`].
struct Units<'a> {
    inputs: &'a Inputs,
    /// The page map, read a text block's pages at a time.
    pagedoc: SeqReader<'a>,
    /// The next text block.
    text_block: usize,
    /// The next doc table block, and its first docID.
    doc_block: usize,
    next_doc: u64,
}

impl Units<'_> {
    /// The text unit of block `i`, its docIDs read from the page map.
    fn text(&mut self, i: usize) -> Result<Work> {
        let tc = self.inputs.text.container();
        let first_page = |i: usize| -> u64 {
            tc.blocks()
                .get(i)
                .and_then(|b| <[u8; 8]>::try_from(b.key.as_slice()).ok())
                .map_or(u64::MAX, u64::from_be_bytes)
        };
        let (p0, p1) = (first_page(i), first_page(i + 1));
        let mut docs = Vec::new();
        self.pagedoc.take_until(p1, |page, input| {
            if page >= p0 {
                let (doc, canonical) = records::decode_pagedoc(input)?;
                while docs.len() as u64 + p0 < page {
                    docs.push(u64::MAX);
                }
                docs.push(if canonical { doc } else { u64::MAX });
            } else {
                records::decode_pagedoc(input)?;
            }
            Ok(())
        })?;
        Ok(Work::Text {
            block: i,
            first_page: p0,
            docs,
        })
    }
}

impl Iterator for Units<'_> {
    type Item = Result<Work>;

    fn next(&mut self) -> Option<Result<Work>> {
        if self.text_block < self.inputs.text.container().blocks().len() {
            self.text_block += 1;
            return Some(self.text(self.text_block - 1));
        }
        let dc = self.inputs.docs.container();
        if self.doc_block >= dc.blocks().len() || self.next_doc >= self.inputs.range.end {
            return None;
        }
        let (block, first) = (self.doc_block, self.next_doc);
        self.next_doc += dc.blocks()[block].records;
        self.doc_block += 1;
        Some(Ok(Work::Fancy {
            block,
            docs: first..self.next_doc,
        }))
    }
}

/// Reads a page file (keyed by page or docID) sequentially, a key range at a time.
struct SeqReader<'a> {
    file: &'a PageFile,
    next_block: usize,
    /// The current block (stored, decoded).
    raw: (Vec<u8>, Vec<u8>),
    /// Records of the current block not yet taken: (key, offset of the
    /// payload in the decoded block).
    pending: Vec<(u64, usize)>,
    /// The first of `pending` not taken.
    next: usize,
}

impl<'a> SeqReader<'a> {
    fn new(file: &'a PageFile) -> SeqReader<'a> {
        SeqReader::with_buffer(file, 0, Default::default())
    }

    /// A reader whose first block is the first that may hold records of
    /// key `key` (earlier records of that block are passed too), decoding
    /// blocks into `raw`.
    fn with_buffer(file: &'a PageFile, key: u64, raw: (Vec<u8>, Vec<u8>)) -> SeqReader<'a> {
        let blocks = file.container().blocks();
        let mut next_block = file.find_block(key).unwrap_or(0);
        // A key's records may start in the blocks before the one it opens.
        while next_block > 0 && blocks[next_block].key == key.to_be_bytes() {
            next_block -= 1;
        }
        SeqReader {
            file,
            next_block,
            raw,
            pending: Vec::new(),
            next: 0,
        }
    }

    /// The block buffer, for reuse.
    fn into_buffer(self) -> (Vec<u8>, Vec<u8>) {
        self.raw
    }

    /// Calls `f(key, payload)` for every record with key < `end` not taken
    /// yet; `f` decodes the record (consumes its payload).
    fn take_until(
        &mut self,
        end: u64,
        mut f: impl FnMut(u64, &mut &[u8]) -> Result<()>,
    ) -> Result<()> {
        loop {
            while let Some(&(key, at)) = self.pending.get(self.next) {
                if key >= end {
                    return Ok(());
                }
                self.next += 1;
                let mut input = &self.raw.1[at..];
                f(key, &mut input)?;
            }
            if self.next_block >= self.file.container().blocks().len() {
                return Ok(());
            }
            self.pending.clear();
            self.next = 0;
            let (pending, kind) = (&mut self.pending, self.file.kind());
            // A block's records below `end` go straight to `f`, decoded
            // once (keys do not decrease, so they come first); the later
            // ones are decoded by the kind's own decoder only to find
            // where they end, and kept as the bytes left in the block at
            // their start until the block's length is known. (Copying every
            // record out and decoding it twice took a few percent of the
            // index build's CPU, serially, for the anchors.)
            self.file
                .visit_block(self.next_block, &mut self.raw, |key, input| {
                    if key < end && pending.is_empty() {
                        f(key, input)
                    } else {
                        pending.push((key, input.len()));
                        records::check_record(kind, key, input)
                    }
                })?;
            let len = self.raw.1.len();
            for p in &mut self.pending {
                p.1 = len - p.1;
            }
            self.next_block += 1;
        }
    }
}

/// The word → wordID lookup of the forward pass: the most frequent words
/// (the smallest wordIDs) in a hash table, the rest through the transducer.
pub struct WordIds {
    hot: WordMap<u32>,
    fst: fst::Map<FstBytes>,
}

impl WordIds {
    /// Loads the wordIDs below a bound derived from `budget` bytes (about 64
    /// bytes a word) into the hash table.
    pub fn new(fst: fst::Map<FstBytes>, budget: u64) -> WordIds {
        use fst::Streamer;
        let hot_words = (budget / 64).min(u64::from(u32::MAX)) as u32;
        let mut hot = WordMap::default();
        let mut s = fst.stream();
        while let Some((w, id)) = s.next() {
            if (id as u32) < hot_words {
                if let Ok(w) = std::str::from_utf8(w) {
                    hot.get_or_insert(w, || id as u32);
                }
            }
        }
        drop(s);
        WordIds { hot, fst }
    }

    /// The wordID of `word`.
    #[inline]
    pub fn get(&self, word: &str) -> Option<u32> {
        self.get_keyed(word, pack_word(word))
    }

    /// The wordID of `word`, whose [`pack_word`] key is `key`.
    #[inline]
    fn get_keyed(&self, word: &str, key: Option<u64>) -> Option<u32> {
        match self.hot.get_keyed(word, key) {
            Some(&id) => Some(id),
            None => self.fst.get(word).map(|v| v as u32),
        }
    }

    /// The wordID of the word [`pack_word`] packed into `k`.
    #[inline]
    fn get_packed(&self, k: u64) -> Option<u32> {
        match self.hot.short.get(&k) {
            Some(&id) => Some(id),
            None => {
                let a = k.to_le_bytes();
                self.fst
                    .get(&a[..usize::from(a[7]).min(7)])
                    .map(|v| v as u32)
            }
        }
    }
}

/// What a pass read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PassStats {
    /// Documents with text (part 0 records).
    pub texts: u64,
    /// Documents with URL, title or anchor words (part 1 records).
    pub fancy_docs: u64,
    /// Plain hits.
    pub plain_hits: u64,
    /// Fancy hits.
    pub fancy_hits: u64,
}

impl PassStats {
    fn add(&mut self, part: Part, hits: usize) {
        match part {
            Part::Text => {
                self.texts += 1;
                self.plain_hits += hits as u64;
            }
            Part::Fancy => {
                self.fancy_docs += 1;
                self.fancy_hits += hits as u64;
            }
        }
    }
}

/// The units in flight in a pass: two a thread (one at work, one done or
/// waiting), within `bytes` of input.
fn in_flight(bytes: u64) -> InFlight {
    InFlight {
        items: 2 * rayon::current_num_threads().max(1),
        cost: bytes,
    }
}

/// What a unit of pass 1 made: its vocabulary, its tokens if they may be
/// carried, its figures and its input bytes.
type CountOutput = (
    UnitVocab,
    Option<CarriedUnit>,
    PassStats,
    u64,
    Vec<(u64, String)>,
);

/// Pass 1: counts the hits of every word and pushes `(word, hits)` into
/// `vocabulary` (whose combine adds equal words' counts) a chunk at a time:
/// a chunk's vocabulary is held in memory until it takes `chunk_budget`
/// bytes, and the units in flight hold a quarter of that of input. The
/// first units, as long as they fit in `carry_budget` bytes, are kept
/// tokenized for the forward pass ([`Carried`]). With `titles`, writes
/// there the anchor titles of the documents ([`super::titles`]): the doc
/// table's units read every document's anchors anyway, so the titles cost
/// no pass of their own over `anchors.wm` (3.6% of the index build's
/// instructions on rust-doc, on the main thread).
pub fn count_vocabulary(
    sources: &Sources,
    stem: Stem,
    vocabulary: &mut ExternalSorter<VocabRec>,
    chunk_budget: u64,
    carry_budget: u64,
    reporter: &SharedReporter,
    mut titles: Option<&mut super::titles::TitlesWriter>,
) -> Result<(PassStats, Carried)> {
    let in_flight_bytes = chunk_budget / 4;
    let inputs = Inputs::open(sources, stem)?;
    let task = reporter.task(
        "index: counting words",
        Some(inputs.total_bytes()),
        Unit::Bytes,
    );
    let mut chunk = WordCounts::default();
    let mut chunk_bytes = 0u64;
    let mut stats = PassStats::default();
    let mut carried = Carried::default();
    let mut carried_bytes = 0u64;
    // Units are carried until the first that does not fit: the forward pass
    // then reads the input from that unit on. (A unit's worker reads this
    // when it starts; only the consumer clears it.)
    let carrying = AtomicBool::new(carry_budget > 0);
    let with_titles = titles.is_some();
    let count_unit = |u: Work| -> Result<CountOutput> {
        let carry = carrying.load(Ordering::Relaxed);
        let mut vocab = UnitVocab::default();
        let mut st = PassStats::default();
        let mut tokens = Tokens::default();
        // (docID, part, words) of each document, its words as
        // indices into `vocab`, and its hits.
        let mut kept = carry.then(|| (Vec::new(), LocalWords::default(), Vec::new()));
        let mut indices: Vec<u32> = Vec::new();
        let mut unit_titles = Vec::new();
        let titles_here = with_titles.then_some(&mut unit_titles);
        inputs.visit(&u, &mut tokens, titles_here, |doc, part, words, hits| {
            st.add(part, hits.len());
            match &mut kept {
                Some((docs, tokens, kept_hits)) => {
                    // Through a reused 32-bit buffer: `extend` over the
                    // words keeps `vocab.add` inlined in this loop, which
                    // a push per word into `LocalWords` did not.
                    indices.clear();
                    indices.extend(SplitWords::new(words).map(|(w, k)| vocab.add(w, k)));
                    tokens.extend(&indices, vocab.words.len());
                    let n = indices.len();
                    if n != hits.len() {
                        return Err(Error::internal(format!("{n} words, {} hits", hits.len())));
                    }
                    kept_hits.extend_from_slice(hits);
                    docs.push((doc, part, n as u32));
                }
                None => {
                    for (w, k) in SplitWords::new(words) {
                        vocab.add(w, k);
                    }
                }
            }
            Ok(())
        })?;
        let bytes = inputs.unit_bytes(&u);
        let kept = kept.map(|(docs, tokens, hits)| {
            vocab.words.shrink_to_fit();
            vocab.long_text.shrink_to_fit();
            CarriedUnit::new(docs, tokens, hits, bytes)
        });
        Ok((vocab, kept, st, bytes, unit_titles))
    };
    let consume = |out: Result<CountOutput>| -> Result<()> {
        let (vocab, kept, st, bytes, unit_titles) = out?;
        if let Some(w) = titles.as_deref_mut() {
            for (doc, t) in &unit_titles {
                w.push(*doc, t)?;
            }
        }
        stats.plain_hits += st.plain_hits;
        stats.fancy_hits += st.fancy_hits;
        stats.texts += st.texts;
        stats.fancy_docs += st.fancy_docs;
        chunk_bytes += chunk.add_counts(&vocab);
        if let (true, Some(mut unit)) = (carrying.load(Ordering::Relaxed), kept) {
            unit.words = vocab.words;
            unit.long_text = vocab.long_text;
            if carried_bytes + unit.bytes() <= carry_budget {
                carried_bytes += unit.bytes();
                carried.units.push(unit);
            } else {
                carrying.store(false, Ordering::Relaxed);
            }
        }
        task.inc(bytes);
        if chunk_bytes >= chunk_budget {
            flush_chunk(&mut chunk, vocabulary)?;
            chunk_bytes = 0;
            crate::sort::memory::release_freed_heap();
        }
        Ok(())
    };
    pipeline(
        inputs.units(),
        in_flight(in_flight_bytes),
        |u| inputs.unit_cost(u),
        count_unit,
        consume,
    )?;
    flush_chunk(&mut chunk, vocabulary)?;
    carried.all = carrying.into_inner();
    Ok((stats, carried))
}

/// Pushes a chunk's vocabulary into the sort, in byte order of the words (so
/// that what is pushed does not depend on the hash table's layout).
fn flush_chunk(chunk: &mut WordCounts, vocabulary: &mut ExternalSorter<VocabRec>) -> Result<()> {
    let mut words: Vec<(String, u64)> = chunk.drain().collect();
    words.sort_unstable();
    for (w, c) in words {
        vocabulary.push((w.into_bytes(), c))?;
    }
    Ok(())
}

/// What the forward pass wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ForwardStats {
    /// Documents and hits read.
    pub pass: PassStats,
    /// Records over all barrels.
    pub records: u64,
    /// (word, document, part) entries over all barrels.
    pub entries: u64,
    /// Bytes of the barrel files.
    pub bytes: u64,
    /// Bytes the records' word headers take here (varint word delta and hit count).
    pub header_bytes: u64,
    /// Bytes they would take in the paper's layout (24-bit word offset, 8-bit
    /// count, escape 255 + two bytes).
    pub paper_header_bytes: u64,
}

/// One unit's records for each barrel: bytes, and per record (end, hits).
struct BarrelBytes {
    bytes: Vec<u8>,
    records: Vec<(usize, u64)>,
}

/// What a unit of the forward pass made beside its barrel records: its
/// figures, its input bytes, its field-length records.
type UnitOutput = (ForwardStats, u64, Vec<(u64, u64)>);

/// Pass 2: writes every document's hits into the forward barrels
/// `dir/fwd-BBB.wm` (one per barrel of `plan`), with blocks of about
/// `block_bytes`, and its hits per field into `lengths` as `(docID · 8 +
/// field, hits)` ([`fieldlens`](super::fieldlens); the sort's combine adds
/// equal keys); the units in flight hold about a quarter of the blocks'
/// bytes of input. The units pass 1 `carried` come from memory, the others
/// are read again. Returns what it wrote.
#[allow(clippy::too_many_arguments)]
pub fn write_forward(
    sources: &Sources,
    stem: Stem,
    ids: &WordIds,
    plan: &WordPlan,
    dir: &Path,
    block_bytes: usize,
    reporter: &SharedReporter,
    lengths: &mut ExternalSorter<(u64, u64)>,
    carried: Carried,
) -> Result<ForwardStats> {
    // The work in flight gets as much memory as the barrels' block buffers.
    let in_flight_bytes = (block_bytes * plan.barrels()) as u64 / 4;
    let inputs = Inputs::open(sources, stem)?;
    let barrels = plan.barrels();
    let mut writers = (0..barrels)
        .map(|b| {
            ForwardWriter::create(
                forward_path(dir, b),
                b as u32,
                plan.firsts[b],
                plan.firsts[b + 1],
                block_bytes,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let task = reporter.task(
        "index: forward barrels",
        Some(inputs.total_bytes()),
        Unit::Bytes,
    );
    let mut stats = ForwardStats::default();
    // Each unit's output buffers and scratch are reused from unit to unit:
    // a fresh set per unit would leave the allocator with freed memory it
    // keeps.
    let reused = Reused::default();
    // Appends a unit's outputs to the barrels (units come in order).
    let mut consume = |(st, bytes, lens): UnitOutput, out: &mut [BarrelBytes]| -> Result<()> {
        for l in lens {
            lengths.push(l)?;
        }
        for (w, b) in writers.iter_mut().zip(out.iter_mut()) {
            let mut start = 0;
            for &(end, hits) in &b.records {
                w.push(&b.bytes[start..end], hits)?;
                start = end;
            }
            b.bytes.clear();
            b.records.clear();
        }
        stats.pass.texts += st.pass.texts;
        stats.pass.fancy_docs += st.pass.fancy_docs;
        stats.pass.plain_hits += st.pass.plain_hits;
        stats.pass.fancy_hits += st.pass.fancy_hits;
        stats.records += st.records;
        stats.entries += st.entries;
        stats.header_bytes += st.header_bytes;
        stats.paper_header_bytes += st.paper_header_bytes;
        task.inc(bytes);
        Ok(())
    };
    let (skip, carried_all) = (carried.units.len(), carried.all);
    forward_units(
        carried.units.into_iter().map(Ok),
        in_flight(u64::MAX),
        |_| 0,
        &reused,
        barrels,
        &mut consume,
        |u, out, scratch| {
            let word_ids = u
                .words
                .iter()
                .map(|w| {
                    match *w {
                        VocabWord::Short(k) => ids.get_packed(k),
                        VocabWord::Long(start, end) => {
                            ids.get(&u.long_text[start as usize..end as usize])
                        }
                    }
                    .ok_or_else(|| missing_word(&u.long_text, w))
                })
                .collect::<Result<Vec<u32>>>()?;
            let mut at = 0;
            for &(doc, part, n) in &u.docs {
                let end = at + n as usize;
                let hits = &u.hits[at..end];
                doc_lengths(doc, part, hits, &mut scratch.st, &mut scratch.lens);
                u.keys(at..end, &word_ids, &mut scratch.doc.keys);
                scratch
                    .doc
                    .emit(doc, part, hits, plan, out, &mut scratch.st);
                at = end;
            }
            Ok(u.input_bytes)
        },
    )?;
    if !carried_all {
        // The units carried were written above (their page map is read
        // all the same, in order).
        let rest = inputs
            .units()
            .enumerate()
            .filter(|(k, u)| *k >= skip || u.is_err())
            .map(|(_, u)| u);
        forward_units(
            rest,
            in_flight(in_flight_bytes),
            |u| inputs.unit_cost(u),
            &reused,
            barrels,
            &mut consume,
            |u, out, scratch| {
                let mut tokens = Tokens::default();
                inputs.visit(&u, &mut tokens, None, |doc, part, words, hits| {
                    doc_lengths(doc, part, hits, &mut scratch.st, &mut scratch.lens);
                    scratch.doc.lookup(words, hits.len(), ids)?;
                    scratch
                        .doc
                        .emit(doc, part, hits, plan, out, &mut scratch.st);
                    Ok(())
                })?;
                Ok(inputs.unit_bytes(&u))
            },
        )?;
    }
    for w in writers {
        stats.bytes += w.finish()?;
    }
    Ok(stats)
}

/// What one unit of the forward pass writes into besides its barrel buffers.
#[derive(Default)]
struct UnitScratch {
    st: ForwardStats,
    doc: DocScratch,
    lens: Vec<(u64, u64)>,
}

/// Buffers reused from unit to unit: fresh ones per unit are mapped and
/// faulted in afresh (the allocator maps every buffer of 128 KiB or more on
/// its own, [`crate::resources::bound_allocator_retention`]).
#[derive(Default)]
struct Reused {
    /// Per unit in flight: its records for each barrel, held until they
    /// are consumed.
    outs: Mutex<Vec<Vec<BarrelBytes>>>,
    /// Per unit at work: the document scratch, given back when its work
    /// ends, so that there are at most one a thread, not one a unit in
    /// flight (the units done and waiting to be consumed need none).
    docs: Mutex<Vec<DocScratch>>,
}

/// Takes a value from a pool of reused ones (or makes one).
fn take_from<T>(pool: &Mutex<Vec<T>>, new: impl FnOnce() -> T) -> T {
    pool.lock()
        .ok()
        .and_then(|mut p| p.pop())
        .unwrap_or_else(new)
}

/// Gives a value back to a pool of reused ones.
fn give_to<T>(pool: &Mutex<Vec<T>>, v: T) {
    if let Ok(mut p) = pool.lock() {
        p.push(v);
    }
}

/// Runs `unit` over `units` on the thread pool ([`pipeline`]), each with
/// buffers from `reused` and its own scratch, and hands the outputs to
/// `consume` in unit order, so the barrels' bytes do not depend on the
/// threads. `unit` returns the unit's input bytes; it takes the unit by
/// value, so a carried unit's memory is freed before the barrels grow.
fn forward_units<U: Send>(
    units: impl Iterator<Item = Result<U>> + Send,
    in_flight: InFlight,
    cost: impl Fn(&U) -> u64 + Sync,
    reused: &Reused,
    barrels: usize,
    consume: &mut (impl FnMut(UnitOutput, &mut [BarrelBytes]) -> Result<()> + Send),
    unit: impl Fn(U, &mut [BarrelBytes], &mut UnitScratch) -> Result<u64> + Sync,
) -> Result<()> {
    pipeline(
        units,
        in_flight,
        cost,
        |u| {
            let mut out = take_from(&reused.outs, || {
                (0..barrels)
                    .map(|_| BarrelBytes {
                        bytes: Vec::new(),
                        records: Vec::new(),
                    })
                    .collect()
            });
            let mut scratch = UnitScratch {
                doc: take_from(&reused.docs, DocScratch::default),
                ..UnitScratch::default()
            };
            let r = unit(u, &mut out, &mut scratch);
            // The scratch of an outsized document is not kept beside later units.
            let doc = scratch.doc;
            if doc.keys.capacity().max(doc.spare.capacity()) <= DocScratch::KEEP_KEYS {
                give_to(&reused.docs, doc);
            }
            (r.map(|bytes| (scratch.st, bytes, scratch.lens)), out)
        },
        |(r, mut out)| {
            let r = r.and_then(|o| consume(o, &mut out));
            give_to(&reused.outs, out);
            r
        },
    )
}

/// Counts a document's hits in `st` and its hits per field into `lens`.
fn doc_lengths(
    doc: u64,
    part: Part,
    hits: &[Hit],
    st: &mut ForwardStats,
    lens: &mut Vec<(u64, u64)>,
) {
    st.pass.add(part, hits.len());
    let mut fields = [0u64; FIELDS];
    for &h in hits {
        fields[field_of_hit(h)] += 1;
    }
    for (f, &n) in fields.iter().enumerate() {
        if n > 0 {
            lens.push((doc * 8 + f as u64, n));
        }
    }
}

/// The error of a carried word the term dictionary lacks.
fn missing_word(long_text: &str, w: &VocabWord) -> Error {
    let w = match *w {
        VocabWord::Short(k) => unpack_word(k),
        VocabWord::Long(start, end) => long_text[start as usize..end as usize].to_string(),
    };
    Error::internal(format!(
        "word {w:?} is missing from the vocabulary counted from the same input"
    ))
}

/// The path of forward barrel `b` in `dir`.
pub fn forward_path(dir: &Path, b: usize) -> PathBuf {
    dir.join(format!("fwd-{b:03}.wm"))
}

/// Per-document buffers of the forward pass.
#[derive(Default)]
struct DocScratch {
    keys: Vec<u64>,
    spare: Vec<u64>,
    counts: Vec<u32>,
    entries: Vec<(u32, std::ops::Range<usize>)>,
}

impl DocScratch {
    /// Most keys a scratch given back for reuse may have room for (512 KiB
    /// with the spare): a typical page's, not an outsized one's (kept up to
    /// 2¹⁸ keys, one a unit in flight, they raised the peak RSS at `--mem
    /// 32M` by up to 7 MB on vtk9-doc at 2 threads).
    const KEEP_KEYS: usize = 1 << 15;

    /// Fills the keys (`wordID · 2³² + index`) of a document's
    /// space-separated `words`, `hits` of them, by looking each up.
    fn lookup(&mut self, words: &str, hits: usize, ids: &WordIds) -> Result<()> {
        self.keys.clear();
        for (i, (w, k)) in SplitWords::new(words).enumerate() {
            let id = ids.get_keyed(w, k).ok_or_else(|| {
                Error::internal(format!(
                    "word {w:?} is missing from the vocabulary counted from the same input"
                ))
            })?;
            self.keys.push(u64::from(id) << 32 | i as u64);
        }
        if self.keys.len() != hits {
            return Err(Error::internal(format!(
                "{} words, {} hits",
                self.keys.len(),
                hits
            )));
        }
        Ok(())
    }

    /// Groups one document's hits by wordID (its keys filled, one per hit)
    /// and appends a record to each barrel that has words of it.
    fn emit(
        &mut self,
        doc: u64,
        part: Part,
        hits: &[Hit],
        plan: &WordPlan,
        out: &mut [BarrelBytes],
        st: &mut ForwardStats,
    ) {
        sort_doc_keys(&mut self.keys, &mut self.spare, &mut self.counts);
        // Each word's run of keys; its hits are gathered through the keys
        // as the record is written, not copied into a buffer first.
        self.entries.clear();
        for (at, &k) in self.keys.iter().enumerate() {
            let w = (k >> 32) as u32;
            match self.entries.last_mut() {
                Some((lw, r)) if *lw == w => r.end = at + 1,
                _ => self.entries.push((w, at..at + 1)),
            }
        }
        let keys = &self.keys;
        let mut e = 0;
        while e < self.entries.len() {
            let b = plan.barrel_of(self.entries[e].0);
            let end = plan.firsts[b + 1];
            let start = e;
            let mut n = 0;
            while e < self.entries.len() && self.entries[e].0 < end {
                let (w, r) = &self.entries[e];
                st.header_bytes += (varint_len(u64::from(*w)) + varint_len(r.len() as u64)) as u64;
                st.paper_header_bytes += if r.len() < 255 { 4 } else { 6 };
                n += r.len();
                e += 1;
            }
            st.entries += (e - start) as u64;
            st.records += 1;
            let bb = &mut out[b];
            let words = self.entries[start..e].iter().map(|(w, r)| {
                let gathered = keys[r.clone()]
                    .iter()
                    .map(|&k| hits[(k & 0xffff_ffff) as usize]);
                (*w, gathered)
            });
            encode_record_with(&mut bb.bytes, doc, part, plan.firsts[b], words);
            bb.records.push((bb.bytes.len(), n as u64));
        }
    }
}

/// Sorts a document's `wordID · 2³² + index` keys, pushed in index order:
/// short lists by comparison, longer ones by a stable LSD radix sort of the
/// wordIDs alone (digits of at most 11 bits), which leaves each word's
/// indices in the order they were pushed — the same order. The comparison
/// sort took 4% of the index build's CPU time on rust-doc.
fn sort_doc_keys(keys: &mut Vec<u64>, spare: &mut Vec<u64>, counts: &mut Vec<u32>) {
    if keys.len() < 256 {
        keys.sort_unstable();
        return;
    }
    let max = keys.iter().map(|k| k >> 32).max().unwrap_or(0);
    let bits = 64 - max.leading_zeros();
    if bits == 0 {
        return;
    }
    let passes = bits.div_ceil(11);
    let digit = bits.div_ceil(passes);
    counts.resize(1 << digit, 0);
    // Every pass writes all of `spare` before reading it: only its growth
    // is zeroed, not all of it again for every long document.
    spare.resize(keys.len(), 0);
    for p in 0..passes {
        radix_pass(keys, spare, counts, 32 + p * digit);
        std::mem::swap(keys, spare);
    }
}

/// One pass of [`sort_doc_keys`]: `src` into `dst` by the digit of
/// `counts.len()` values at `shift`, stably. Slices rather than the
/// vectors: with the vectors' fields the compiler reloaded their lengths
/// and pointers after every store of the scatter.
fn radix_pass(src: &[u64], dst: &mut [u64], counts: &mut [u32], shift: u32) {
    let mask = counts.len() as u64 - 1;
    counts.fill(0);
    for &k in src {
        counts[((k >> shift) & mask) as usize] += 1;
    }
    let mut sum = 0;
    for c in counts.iter_mut() {
        let n = *c;
        *c = sum;
        sum += n;
    }
    for &k in src {
        let c = &mut counts[((k >> shift) & mask) as usize];
        dst[*c as usize] = k;
        *c += 1;
    }
}

/// The words of space-separated `words`, as `words.split(' ')` yields them.
pub fn split_words(words: &str) -> impl Iterator<Item = &str> {
    SplitWords::new(words).map(|(w, _)| w)
}

/// The words of space-separated `words`, as `words.split(' ')` yields them,
/// each with its [`pack_word`] key.
///
/// The spaces are found eight bytes at a time (a word-at-a-time byte
/// compare; each space is then a set bit, taken by `trailing_zeros`), and a
/// short word's key is one masked load of the bytes from its start. The
/// `memchr` iterator this replaces cost a call and its set-up per word, and
/// `pack_word` a branch on the length: together 3% of the index build's
/// instructions on rust-doc, for words of six bytes on average.
struct SplitWords<'a> {
    s: &'a str,
    /// Where the next word starts.
    start: usize,
    /// Offset of the eight bytes `spaces` was computed from.
    chunk: usize,
    /// The spaces of that chunk not yet yielded: bit 8·i + 7 for byte i.
    spaces: u64,
    /// Offset of the next chunk to scan (`s.len()` once the tail is).
    next: usize,
    /// The last word was yielded.
    done: bool,
}

const LOW_7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `v` that is a space. Exact, no borrow
/// between bytes: `(b & 0x7f) + 0x7f` reaches the high bit iff `b & 0x7f`
/// is not 0, and the `| x` adds `b`'s own high bit.
#[inline]
fn spaces_of(v: u64) -> u64 {
    let x = v ^ 0x2020_2020_2020_2020;
    !(((x & LOW_7) + LOW_7) | x) & HIGH
}

impl<'a> SplitWords<'a> {
    fn new(s: &'a str) -> SplitWords<'a> {
        SplitWords {
            s,
            start: 0,
            chunk: 0,
            spaces: 0,
            next: 0,
            done: false,
        }
    }

    /// The word `start..end` with its key.
    #[inline]
    fn word(&self, start: usize, end: usize) -> (&'a str, Option<u64>) {
        let b = self.s.as_bytes();
        let n = end - start;
        let key = match b.get(start..start + 8) {
            // Its bytes, little-endian, and its length in the top byte:
            // what `pack_word` builds.
            Some(v) if n <= 7 => {
                let v = u64::from_le_bytes(v.try_into().unwrap_or([0; 8]));
                Some(v & ((1u64 << (8 * n)) - 1) | (n as u64) << 56)
            }
            _ => pack_word(&self.s[start..end]),
        };
        (&self.s[start..end], key)
    }
}

impl<'a> Iterator for SplitWords<'a> {
    type Item = (&'a str, Option<u64>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let b = self.s.as_bytes();
        loop {
            if self.spaces != 0 {
                let end = self.chunk + (self.spaces.trailing_zeros() / 8) as usize;
                self.spaces &= self.spaces - 1;
                let start = std::mem::replace(&mut self.start, end + 1);
                return Some(self.word(start, end));
            }
            if let Some(c) = b.get(self.next..self.next + 8) {
                self.chunk = self.next;
                self.next += 8;
                self.spaces = spaces_of(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
            } else if self.next < b.len() {
                // The tail, padded with zeros (not spaces).
                let mut c = [0u8; 8];
                c[..b.len() - self.next].copy_from_slice(&b[self.next..]);
                self.chunk = self.next;
                self.next = b.len();
                self.spaces = spaces_of(u64::from_le_bytes(c));
            } else if self.done {
                return None;
            } else {
                self.done = true;
                return Some(self.word(self.start, b.len()));
            }
        }
    }
}

fn varint_len(v: u64) -> usize {
    (64 - v.max(1).leading_zeros() as usize).div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit's local words stay 16-bit while its vocabulary fits, and are
    /// all widened, values kept, once it outgrows 16 bits.
    #[test]
    fn local_words_widen_when_the_vocabulary_outgrows_16_bits() {
        let values = |w: &LocalWords| match w {
            LocalWords::Narrow(v) => (false, v.iter().map(|&t| u32::from(t)).collect()),
            LocalWords::Wide(v) => (true, v.clone()),
        };
        let mut w = LocalWords::default();
        w.extend(&[3, 65_535, 0], 1 << 16);
        assert_eq!(values(&w), (false, vec![3, 65_535, 0]));
        w.extend(&[65_536, 7], (1 << 16) + 1);
        assert_eq!(values(&w), (true, vec![3, 65_535, 0, 65_536, 7]));
        w.extend(&[9], (1 << 16) + 1);
        assert_eq!(values(&w), (true, vec![3, 65_535, 0, 65_536, 7, 9]));
    }

    /// `SeqReader` over anchors in small blocks, several records a key and
    /// keys spanning blocks: a unit's reader started at its first key and
    /// taken up to each of its cuts gives exactly the records of each key
    /// range (those below the start passed over), as a filter of the whole
    /// file does — for readers started at every key, the records below
    /// `end` decoded in the block walk and those past it kept for later.
    #[test]
    fn sequential_reads_take_each_key_range_once() {
        use crate::container::pagefile::PageFileWriter;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("anchors.wm");
        let mut w = PageFileWriter::create(&path, &records::ANCHORS, 64, 1).unwrap();
        let mut all = Vec::new();
        let mut buf = Vec::new();
        let mut seed = 7u64;
        for target in 0..60u64 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // 0 to 5 anchors a target; some targets have none.
            for k in 0..(seed >> 61) {
                let text = format!("t{target}-{k}{}", "x".repeat((seed >> 40) as usize % 9));
                buf.clear();
                records::encode_anchor(target * 10 + k, records::LinkKind::Anchor, &text, &mut buf);
                w.push(target, &buf).unwrap();
                all.push((target, target * 10 + k, text));
            }
        }
        w.finish(&serde_json::json!({})).unwrap();
        let file = PageFile::open(&path, &records::ANCHORS).unwrap();
        assert!(file.container().blocks().len() > 10, "small blocks");
        for start in 0..62u64 {
            let mut r = SeqReader::with_buffer(&file, start, Default::default());
            let mut got = Vec::new();
            for end in [start + 1, start + 3, start + 4, start + 11, 70] {
                let mut part = Vec::new();
                r.take_until(end, |target, input| {
                    let (src, _, text) = records::decode_anchor(input)?;
                    if target >= start {
                        part.push((target, src, text.to_string()));
                    }
                    Ok(())
                })
                .unwrap();
                assert!(part.iter().all(|a| a.0 < end));
                got.extend(part);
            }
            let want: Vec<_> = all.iter().filter(|a| a.0 >= start).cloned().collect();
            assert_eq!(got, want, "start {start}");
        }
    }

    /// `pack_word` against the plain copy into a zeroed array, for every
    /// length and bytes of every value.
    #[test]
    fn packed_words_are_their_bytes_and_length() {
        fn naive(w: &str) -> Option<u64> {
            let b = w.as_bytes();
            if b.len() > 7 {
                return None;
            }
            let mut a = [0u8; 8];
            a[..b.len()].copy_from_slice(b);
            a[7] = b.len() as u8;
            Some(u64::from_le_bytes(a))
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in 0..=9 {
            for _ in 0..200 {
                let w: String = (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        char::from(b'\x01' + (x % 127) as u8)
                    })
                    .collect();
                assert_eq!(pack_word(&w), naive(&w), "{w:?}");
                if let Some(k) = pack_word(&w) {
                    assert_eq!(unpack_word(k), w);
                }
            }
        }
        for w in ["é", "größer", "größere", "日本", "日本語"] {
            assert_eq!(pack_word(w), naive(w), "{w:?}");
        }
    }

    #[test]
    fn word_maps_count_short_and_long_words() {
        let words = [
            "",
            "a",
            "a\u{0}",
            "seven77",
            "eight888",
            "é",
            "größere",
            "größer",
            "a",
        ];
        let mut unit = UnitVocab::default();
        let local: Vec<u32> = words.iter().map(|w| unit.add(w, pack_word(w))).collect();
        // Unit-local indices in the order first met.
        assert_eq!(local, [0, 1, 2, 3, 4, 5, 6, 7, 1]);
        assert_eq!(unit.index.len(), 8);
        assert_eq!(unit.index.get("a"), Some(&1));
        assert_eq!(unit.counts[1], 2);
        assert_eq!(unit.counts[2], 1);
        assert_eq!(unit.index.get("b"), None);
        let mut chunk = WordCounts::default();
        *chunk.get_or_insert("a", || 0).0 += 5;
        // New words: everything but "a", each its length plus 64 bytes.
        let new: usize = words[..8]
            .iter()
            .filter(|w| **w != "a")
            .map(|w| w.len() + 64)
            .sum();
        assert_eq!(chunk.add_counts(&unit), new as u64);
        let mut all: Vec<(String, u64)> = chunk.drain().collect();
        all.sort();
        let mut want: Vec<(String, u64)> = words[..8]
            .iter()
            .filter(|w| **w != "a")
            .map(|w| (w.to_string(), 1))
            .chain([("a".to_string(), 7)])
            .collect();
        want.sort();
        assert_eq!(all, want);
        assert!(chunk.is_empty());
    }

    #[test]
    fn doc_keys_sort_as_a_comparison_sort_does() {
        let (mut spare, mut counts) = (Vec::new(), Vec::new());
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for (n, ids) in [
            (10, 50u64),
            (300, 1),
            (300, 7),
            (1000, 90_000),
            (5000, 1 << 30),
        ] {
            let mut keys: Vec<u64> = (0..n as u64)
                .map(|i| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % ids) << 32 | i
                })
                .collect();
            let mut want = keys.clone();
            want.sort_unstable();
            sort_doc_keys(&mut keys, &mut spare, &mut counts);
            assert_eq!(keys, want, "{n} keys, wordIDs below {ids}");
        }
    }

    #[test]
    fn text_hits_are_relative_to_the_modal_size() {
        let n = flag::NORMAL_SIZE;
        let flags = [6 | flag::CAPITALIZED, n, n | flag::BOLD, 0];
        let mut hits = Vec::new();
        text_hits(&flags, &mut hits);
        assert_eq!(
            hits,
            [
                Hit::plain(true, 6, 0),
                Hit::plain(false, 1, 1),
                Hit::plain(false, 2, 2),
                Hit::plain(false, 0, 3)
            ]
        );
        // A page all in <small>: its body is normal.
        hits.clear();
        text_hits(&[0, 0], &mut hits);
        assert_eq!(hits, [Hit::plain(false, 1, 0), Hit::plain(false, 1, 1)]);
    }

    /// What [`fancy_hits`] gives when every text is cut as it comes.
    fn fancy_hits_cutting_each(
        url: &str,
        title: &str,
        anchors: &[(u64, &str)],
    ) -> (String, Vec<Hit>) {
        let (mut words, mut flags, mut hits) = (String::new(), Vec::new(), Vec::new());
        let mut cut = |text: &str, hit: &dyn Fn(bool, u32) -> Hit| {
            let at = flags.len();
            tokenize(text, &mut words, &mut flags);
            for (j, &f) in flags[at..].iter().enumerate() {
                hits.push(hit(f & flag::CAPITALIZED != 0, j as u32));
            }
        };
        cut(url.split_once("://").map_or(url, |(_, r)| r), &Hit::url);
        cut(title, &Hit::title);
        for &(src, text) in anchors {
            cut(text, &|cap, j| Hit::anchor(cap, src, j));
        }
        (words, hits)
    }

    proptest::proptest! {
        /// Anchor texts repeated (cut into words once, then copied) give
        /// the words and hits that cutting every text gives: texts from a
        /// few, some without words, some empty, with capitals, non-ASCII
        /// letters and separators, in any order, after a URL and a title
        /// with or without words; and a second document through the same
        /// buffers gives its own.
        #[test]
        fn repeated_anchor_texts_give_the_hits_of_each_cut(
            url in 0usize..3,
            title in 0usize..4,
            anchors in proptest::collection::vec((0usize..6, 0u64..50), 0..40),
            second in 0usize..40,
        ) {
            const TEXTS: [&str; 6] = ["", " -- ", "Rust std", "the Vec type", "Ünïcode ß x", "a"];
            const URLS: [&str; 3] = ["https://x.example/a.html", "http://", "-"];
            let anchors: Vec<(u64, &str)> = anchors.iter().map(|&(t, s)| (s, TEXTS[t])).collect();
            let mut t = Tokens::default();
            for docs in [&anchors[..], &anchors[second.min(anchors.len())..]] {
                fancy_hits(URLS[url], TEXTS[title], docs, &mut t);
                let (words, hits) = fancy_hits_cutting_each(URLS[url], TEXTS[title], docs);
                proptest::prop_assert_eq!(&t.words, &words);
                proptest::prop_assert_eq!(&t.hits, &hits);
            }
        }

        /// The word-at-a-time splitter yields what `split(' ')` yields,
        /// each word with its `pack_word` key: words of every length
        /// around 7 and 8 bytes, empty ones (doubled, leading and trailing
        /// spaces), non-ASCII bytes (whose high bit must not read as a
        /// space) and bytes one bit from a space, ending at every offset
        /// of an 8-byte chunk.
        #[test]
        fn split_words_is_split_with_packed_keys(
            words in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec!['a', 'Z', '!', '0', '\u{a0}', 'ß', '€', '\u{1}', '`']),
                    0..12,
                ),
                0..20,
            ),
        ) {
            let s = words
                .iter()
                .map(|w| w.iter().collect::<String>())
                .collect::<Vec<_>>()
                .join(" ");
            let naive: Vec<(&str, Option<u64>)> = s.split(' ').map(|w| (w, pack_word(w))).collect();
            let fast: Vec<(&str, Option<u64>)> = SplitWords::new(&s).collect();
            proptest::prop_assert_eq!(fast, naive);
        }
    }

    #[test]
    fn fancy_hits_of_url_title_and_anchors() {
        let mut t = Tokens::default();
        fancy_hits(
            "https://x.example/Std/vec.html",
            "Vec in std",
            &[(7, "the Vec type")],
            &mut t,
        );
        assert_eq!(t.words, "x example std vec html vec in std the vec type");
        assert_eq!(t.hits[3], Hit::url(false, 3));
        assert_eq!(t.hits[2], Hit::url(true, 2));
        assert_eq!(t.hits[5], Hit::title(true, 0));
        assert_eq!(t.hits[8], Hit::anchor(false, 7, 0));
        assert_eq!(t.hits[9], Hit::anchor(true, 7, 1));
        assert_eq!(t.hits.len(), 11);
        fancy_hits("http://e.org/", "", &[], &mut t);
        for s in ["", "a", "a b", " a  b ", "ab cd e"] {
            assert_eq!(
                split_words(s).collect::<Vec<_>>(),
                s.split(' ').collect::<Vec<_>>()
            );
        }
        assert_eq!(t.words, "e org");
    }
}

//! The lexicon: the `lexicon` container kind (version 2). Word → wordID, and
//! per wordID its document and hit counts and where its doclist is in the
//! full barrels (Brin & Page §4.2.4; the paper's DumpLexicon
//! joined the indexer's word list with the sorter's offsets the same way).
//!
//! # Building it out of core
//!
//! The indexer's first pass counts hits per word in bounded in-memory
//! vocabularies, one chunk of documents at a time, and pushes each chunk's
//! `(word, hits)` pairs into an external sort whose combine adds the counts of
//! equal words ([`VOCABULARY_COMBINE`]): the merged vocabulary streams out in
//! byte order without ever being in memory. [`plan_words`] then sorts it by
//! descending hit count (ties by byte order) and numbers the words in that
//! order, cuts the wordID range into barrels, and sorts `(word, wordID)` back
//! into byte order to build the term dictionary, an `fst::Map` (the `fst`
//! crate's finite state transducer, streaming its output to disk). The
//! per-word counts and doclist locations come from the sorter and are joined
//! in wordID order at the end ([`LexiconWriter`]).
//!
//! # Why wordIDs by descending frequency
//!
//! The barrels are the unit of the sorter's work and of its parallelism, and a
//! barrel's work is its hits. With wordIDs in frequency order the barrel
//! boundaries can be cut at equal shares of the total hit count
//! ([`BarrelCutter`]): each barrel closes once it holds its share of the hits
//! that are left, so a word more frequent than a share fills a barrel alone
//! and the rest are balanced. Byte order would put a whole letter's words in
//! a few barrels and a few very frequent words anywhere. Frequency order also
//! gives the most frequent words the smallest wordIDs, so the indexer keeps a
//! dense table of them in memory for its lookups and goes to the transducer
//! only for the long tail.
//!
//! # Layout
//!
//! Parameters `{"barrels": B, "words": N, "entries_per_block": 2048}`,
//! metadata `{"words": N, "hits": H, "postings": P, "short_postings": S}`.
//! Raw blocks, in this order:
//!
//! ```text
//! block 0      key "fst"      the term dictionary: an fst::Map (fst crate, format 3)
//!                             from each word (UTF-8 bytes) to its wordID
//! block 1      key "barrels"  B + 1 u32: barrel b holds wordIDs [first_b, first_{b+1});
//!                             first_0 = 0 and the last value is N
//! block 2 + k  key wordID k·2048, big-endian u32: the entries of wordIDs
//!              k·2048 .. (k+1)·2048 (fewer in the last block) as six
//!              columns: 6 × u8 widths, then each column's n values
//!              bit-packed at its width (see `bitpack`), in this order:
//!   docs         documents in the doclist (document frequency)
//!   short_docs   documents in its short doclist: those with a title or an
//!                anchor hit of the word (0: none)
//!   hits low     hits in the doclist (collection frequency), low 32 bits …
//!   hits high    … and high 32 bits
//!   full block   where the doclist starts: block of full-BBB.wm …
//!   full entry   … and directory entry in it (see `inverted`)
//! ```
//!
//! An entry is read alone (six packed values); a block of rare words packs
//! into a few bytes per word where fixed 32-bit fields took 24.
//!
//! All integers little-endian. Looking a word up reads the transducer (mapped
//! and checked once at open) and one entry block (mapped and checked on first
//! use); nothing is loaded whole.

use std::fs;
use std::io::Write;
use std::path::Path;

use serde_json::json;

use super::bitpack;
use super::inverted::Location;
use crate::container::{BlockCodec, Container, ContainerWriter, FileKind, MappedContainer};
use crate::error::{Error, IoContext, Result};
use crate::mmap::MappedBytes;
use crate::sort::{Combine, ExternalSorter, SortConfig, Sorted};

/// The `lexicon` kind.
pub const LEXICON: FileKind = FileKind {
    tag: "lexicon",
    version: 2,
    what: "lexicon: word → wordID (fst), per-word frequencies and doclist locations",
    verify: |path| Lexicon::open(path)?.verify(),
    dump,
};
/// Bytes of a per-word entry as the lexicon parts keep it ([`TermInfo::encode`]).
pub const ENTRY_BYTES: usize = 24;
/// Columns of an entry block: docs, short docs, hits (low and high 32
/// bits), full block, full entry.
const ENTRY_COLUMNS: usize = 6;
/// Entries per block.
pub const ENTRIES_PER_BLOCK: usize = 2048;
/// Name of the combine that adds the hit counts of equal words.
pub const VOCABULARY_COMBINE: &str = "sum-hits";

/// A vocabulary record: (word bytes, hits).
pub type VocabRec = (Vec<u8>, u64);

/// The combine of the vocabulary sort: equal words add their hit counts.
pub fn vocabulary_combine() -> Combine<VocabRec> {
    Combine::custom(VOCABULARY_COMBINE, |acc: &mut VocabRec, next: &VocabRec| {
        if acc.0 == next.0 {
            acc.1 += next.1;
            true
        } else {
            false
        }
    })
}

/// One word's entry in the lexicon.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TermInfo {
    /// Documents in the full doclist.
    pub docs: u32,
    /// Documents whose hits of the word include a title or an anchor hit
    /// (its short doclist, read from the full one).
    pub short_docs: u32,
    /// Hits in the full doclist.
    pub hits: u64,
    /// Where the doclist starts in the full barrel.
    pub full: Location,
}

impl TermInfo {
    /// Appends the 24-byte encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.docs.to_le_bytes());
        out.extend_from_slice(&self.short_docs.to_le_bytes());
        out.extend_from_slice(&self.hits.to_le_bytes());
        out.extend_from_slice(&self.full.block.to_le_bytes());
        out.extend_from_slice(&self.full.entry.to_le_bytes());
    }

    /// Decodes 24 bytes.
    pub fn decode(b: &[u8]) -> TermInfo {
        let u = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let mut h = [0u8; 8];
        h.copy_from_slice(&b[8..16]);
        TermInfo {
            docs: u(0),
            short_docs: u(4),
            hits: u64::from_le_bytes(h),
            full: Location {
                block: u(16),
                entry: u(20),
            },
        }
    }
}

/// An entry's values in the columns of an entry block.
fn entry_columns(t: &TermInfo) -> [u32; ENTRY_COLUMNS] {
    [
        t.docs,
        t.short_docs,
        t.hits as u32,
        (t.hits >> 32) as u32,
        t.full.block,
        t.full.entry,
    ]
}

/// Appends `entries` as an entry block: the six columns' widths (one byte
/// each), then each column packed at its width ([`super::bitpack`], the
/// scalar layout), so any entry is read alone.
fn pack_entries(entries: &[TermInfo], out: &mut Vec<u8>) {
    let mut cols: [Vec<u32>; ENTRY_COLUMNS] = Default::default();
    for t in entries {
        for (c, v) in cols.iter_mut().zip(entry_columns(t)) {
            c.push(v);
        }
    }
    let widths = cols.each_ref().map(|c| bitpack::max_width(c));
    out.extend_from_slice(&widths);
    for (c, &w) in cols.iter().zip(&widths) {
        bitpack::pack(c, w, out);
    }
}

/// An entry block of `n` entries, its columns located.
struct EntryBlock<'a> {
    bytes: &'a [u8],
    widths: [u8; ENTRY_COLUMNS],
    at: [usize; ENTRY_COLUMNS],
}

impl<'a> EntryBlock<'a> {
    /// Locates the columns, checking that they fill `bytes` exactly.
    fn parse(bytes: &'a [u8], n: usize) -> std::result::Result<EntryBlock<'a>, String> {
        if bytes.len() < ENTRY_COLUMNS {
            return Err("entry block shorter than its column widths".into());
        }
        let mut widths = [0u8; ENTRY_COLUMNS];
        widths.copy_from_slice(&bytes[..ENTRY_COLUMNS]);
        if let Some(w) = widths.iter().find(|&&w| w > 32) {
            return Err(format!("entry column of width {w} (at most 32)"));
        }
        let mut at = [0usize; ENTRY_COLUMNS];
        let mut end = ENTRY_COLUMNS;
        for (a, &w) in at.iter_mut().zip(&widths) {
            *a = end;
            end += bitpack::packed_len(n, w);
        }
        if end != bytes.len() {
            return Err(format!(
                "{n} entries at widths {widths:?} take {end} bytes, the block has {}",
                bytes.len()
            ));
        }
        Ok(EntryBlock { bytes, widths, at })
    }

    /// Entry `i`.
    fn get(&self, i: usize) -> TermInfo {
        let v = |c: usize| bitpack::get(&self.bytes[self.at[c]..], self.widths[c], i);
        TermInfo {
            docs: v(0),
            short_docs: v(1),
            hits: u64::from(v(2)) | u64::from(v(3)) << 32,
            full: Location {
                block: v(4),
                entry: v(5),
            },
        }
    }
}

/// Cuts wordIDs (in descending hit order) into `barrels` ranges of about
/// equal hits: barrel `b` closes once it holds at least `1 / (barrels − b)`
/// of the hits still unassigned when it opened. Integer arithmetic only.
#[derive(Clone, Debug)]
pub struct BarrelCutter {
    barrels: u32,
    remaining: u64,
    opened_with: u64,
    current: u64,
    firsts: Vec<u32>,
    hits: Vec<u64>,
}

impl BarrelCutter {
    /// A cutter for `barrels` barrels over `total` hits.
    pub fn new(barrels: u32, total: u64) -> BarrelCutter {
        BarrelCutter {
            barrels: barrels.max(1),
            remaining: total,
            opened_with: total,
            current: 0,
            firsts: vec![0],
            hits: Vec::new(),
        }
    }

    /// Adds wordID `word` (the next one) with `hits` hits.
    pub fn add(&mut self, word: u32, hits: u64) {
        self.current += hits;
        self.remaining -= hits.min(self.remaining);
        let b = self.firsts.len() as u32 - 1;
        let left = u64::from(self.barrels - b);
        if b + 1 < self.barrels
            && u128::from(self.current) * u128::from(left) >= u128::from(self.opened_with)
        {
            self.firsts.push(word + 1);
            self.hits.push(self.current);
            self.current = 0;
            self.opened_with = self.remaining;
        }
    }

    /// The first wordID of each barrel followed by `words` (B + 1 values), and
    /// each barrel's hits.
    pub fn finish(mut self, words: u32) -> (Vec<u32>, Vec<u64>) {
        self.hits.push(self.current);
        while self.firsts.len() < self.barrels as usize {
            self.firsts.push(words);
            self.hits.push(0);
        }
        self.firsts.push(words);
        (self.firsts, self.hits)
    }
}

/// What [`plan_words`] decided, kept as the stage's `plan` checkpoint beside
/// the term dictionary.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WordPlan {
    /// Distinct words.
    pub words: u32,
    /// Hits of all words.
    pub hits: u64,
    /// First wordID of each barrel, then `words`.
    pub firsts: Vec<u32>,
    /// Hits of each barrel.
    pub barrel_hits: Vec<u64>,
}

impl WordPlan {
    /// Barrels.
    pub fn barrels(&self) -> usize {
        self.firsts.len() - 1
    }

    /// The barrel holding `word`.
    pub fn barrel_of(&self, word: u32) -> usize {
        self.firsts.partition_point(|&f| f <= word) - 1
    }
}

/// Numbers the words of the vocabulary (sorted by word, hits summed) in
/// descending hit order, cuts them into `barrels` barrels, writes the term
/// dictionary (word → wordID) to `fst_path` and returns the plan. Two
/// external sorts, one after the other: `sorts` are their configurations (by
/// hits, then by word); the first one's merge runs beside the second one's
/// input under `merge_budget`.
pub fn plan_words(
    mut vocabulary: Sorted<VocabRec>,
    barrels: u32,
    sorts: [SortConfig; 2],
    merge_budget: u64,
    fst_path: &Path,
) -> Result<WordPlan> {
    // Interrupted planning starts over: it is two sorts of the vocabulary,
    // small beside the hits.
    for cfg in &sorts {
        crate::sort::remove_sort_dir(&cfg.dir)?;
    }
    let [by_hits_cfg, by_word_cfg] = sorts;
    // By descending hits (u64::MAX − hits), then by word.
    let mut by_hits = ExternalSorter::<(u64, Vec<u8>)>::new(by_hits_cfg, Combine::None)?;
    let mut total = 0u64;
    let mut words = 0u64;
    while let Some((word, hits)) = vocabulary.next_record()? {
        total += hits;
        words += 1;
        by_hits.push((u64::MAX - hits, word))?;
    }
    drop(vocabulary);
    if words >= u64::from(u32::MAX) {
        return Err(Error::usage(format!(
            "{words} distinct words: the index holds fewer than 2³² − 1"
        )));
    }
    by_hits.set_merge_budget(merge_budget);
    let mut sorted = by_hits.finish()?;
    let mut by_word = ExternalSorter::<(Vec<u8>, u32)>::new(by_word_cfg, Combine::None)?;
    let mut cutter = BarrelCutter::new(barrels, total);
    let mut id = 0u32;
    while let Some((inv, word)) = sorted.next_record()? {
        let hits = u64::MAX - inv;
        cutter.add(id, hits);
        by_word.push((word, id))?;
        id += 1;
    }
    drop(sorted);
    let (firsts, barrel_hits) = cutter.finish(id);
    let mut sorted = by_word.finish()?;
    let partial = fst_path.with_extension("fst.partial");
    let file = fs::File::create(&partial).at(&partial)?;
    let fst_err = |e: fst::Error| Error::internal(format!("building the term dictionary: {e}"));
    let mut builder =
        fst::MapBuilder::new(std::io::BufWriter::with_capacity(1 << 20, file)).map_err(fst_err)?;
    while let Some((word, id)) = sorted.next_record()? {
        builder.insert(&word, u64::from(id)).map_err(fst_err)?;
    }
    let mut w = builder.into_inner().map_err(fst_err)?;
    w.flush().at(&partial)?;
    drop(w);
    fs::rename(&partial, fst_path).at(fst_path)?;
    Ok(WordPlan {
        words: id,
        hits: total,
        firsts,
        barrel_hits,
    })
}

/// The term dictionary's bytes, mapped (what `fst::Map` reads).
pub struct FstBytes(MappedBytes);

impl AsRef<[u8]> for FstBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Opens a term dictionary file written by [`plan_words`] (a temporary file;
/// the published one is inside the lexicon).
pub fn open_fst_file(path: &Path) -> Result<fst::Map<FstBytes>> {
    let file = fs::File::open(path).at(path)?;
    let len = file.metadata().at(path)?.len() as usize;
    let map = MappedBytes::map(&file, path, 0, len)?;
    fst::Map::new(FstBytes(map))
        .map_err(|e| Error::corrupt(path, "term dictionary", 0, e.to_string()))
}

/// Writes the lexicon: the term dictionary, the barrel table, then the
/// entries in wordID order.
pub struct LexiconWriter {
    w: ContainerWriter,
    block: Vec<TermInfo>,
    next: u32,
    words: u32,
    hits: u64,
    postings: u64,
    short_postings: u64,
}

impl LexiconWriter {
    /// Starts `path` with the term dictionary in `fst` and the barrel table.
    pub fn create(
        path: impl AsRef<Path>,
        fst: &[u8],
        plan: &WordPlan,
        stem: super::Stem,
    ) -> Result<LexiconWriter> {
        let mut params = json!({
            "barrels": plan.barrels(), "words": plan.words,
            "entries_per_block": ENTRIES_PER_BLOCK,
        });
        // Absent for none: indexes without stemming are as before.
        if stem != super::Stem::None {
            params["stem"] = json!(stem.name());
        }
        let mut w = ContainerWriter::create(path, LEXICON.tag, LEXICON.version, &params)?;
        w.write_block(BlockCodec::Raw, b"fst", 0, fst)?;
        let mut table = Vec::with_capacity(4 * plan.firsts.len());
        for f in &plan.firsts {
            table.extend_from_slice(&f.to_le_bytes());
        }
        w.write_block(
            BlockCodec::Raw,
            b"barrels",
            plan.firsts.len() as u64,
            &table,
        )?;
        Ok(LexiconWriter {
            w,
            block: Vec::with_capacity(ENTRIES_PER_BLOCK),
            next: 0,
            words: plan.words,
            hits: 0,
            postings: 0,
            short_postings: 0,
        })
    }

    /// Appends the entry of the next wordID.
    pub fn push(&mut self, t: &TermInfo) -> Result<()> {
        if self.next >= self.words {
            return Err(Error::internal("more lexicon entries than words"));
        }
        self.block.push(*t);
        self.next += 1;
        self.hits += t.hits;
        self.postings += u64::from(t.docs);
        self.short_postings += u64::from(t.short_docs);
        if self.block.len() == ENTRIES_PER_BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    /// Appends already encoded entries (whole entries, in wordID order).
    pub fn push_encoded(&mut self, entries: &[u8]) -> Result<()> {
        for e in entries.chunks_exact(ENTRY_BYTES) {
            self.push(&TermInfo::decode(e))?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if !self.block.is_empty() {
            let n = self.block.len();
            let first = self.next - n as u32;
            let mut bytes = Vec::new();
            pack_entries(&self.block, &mut bytes);
            self.w
                .write_block(BlockCodec::Raw, &first.to_be_bytes(), n as u64, &bytes)?;
            self.block.clear();
        }
        Ok(())
    }

    /// Publishes the lexicon; returns its size.
    pub fn finish(mut self) -> Result<u64> {
        if self.next != self.words {
            return Err(Error::internal(format!(
                "{} lexicon entries for {} words",
                self.next, self.words
            )));
        }
        self.flush()?;
        let meta = json!({
            "words": self.words, "hits": self.hits,
            "postings": self.postings, "short_postings": self.short_postings,
        });
        Ok(self.w.finish(&meta)?.1)
    }
}

/// A lexicon file's bytes, part by part ([`Lexicon::bytes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LexiconBytes {
    /// The whole file.
    pub file: u64,
    /// The container's own: header, block headers, block index, footer.
    pub container: u64,
    /// The term dictionary (the fst).
    pub dictionary: u64,
    /// The barrel table.
    pub barrel_table: u64,
    /// The per-word entries.
    pub entries: u64,
    /// Words.
    pub words: u64,
}

/// An open lexicon.
pub struct Lexicon {
    m: MappedContainer,
    fst: fst::Map<FstBytes>,
    firsts: Vec<u32>,
    words: u32,
}

impl Lexicon {
    /// Opens a lexicon: checks its structure, maps and checks the term
    /// dictionary and the barrel table; entry blocks are checked on first use.
    pub fn open(path: impl AsRef<Path>) -> Result<Lexicon> {
        let c = LEXICON.open(path)?;
        let bad = |region: &str, detail: String| Error::corrupt(c.path(), region, 0, detail);
        let words = c.params()["words"]
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| bad("header parameters", "bad or missing words".into()))?;
        let blocks = c.blocks();
        let entry_blocks = (words as usize).div_ceil(ENTRIES_PER_BLOCK);
        if blocks.len() != 2 + entry_blocks
            || blocks[0].key != b"fst"
            || blocks[1].key != b"barrels"
        {
            return Err(bad(
                "block index",
                format!("{} blocks, expected the term dictionary, the barrel table and {entry_blocks} entry blocks", blocks.len()),
            ));
        }
        let fst_map = c.map_block(0)?;
        let fst = fst::Map::new(FstBytes(fst_map)).map_err(|e| {
            Error::corrupt(
                c.path(),
                "block 0",
                blocks[0].offset,
                format!("term dictionary: {e}"),
            )
        })?;
        let table = c.read_block(1)?;
        let firsts: Vec<u32> = table
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let barrels = c.params()["barrels"].as_u64().unwrap_or(0) as usize;
        if firsts.len() != barrels + 1
            || table.len() != 4 * firsts.len()
            || firsts[0] != 0
            || firsts[barrels] != words
            || firsts.windows(2).any(|w| w[0] > w[1])
        {
            return Err(Error::corrupt(
                c.path(),
                "block 1",
                blocks[1].offset,
                "bad barrel table",
            ));
        }
        for (k, b) in blocks[2..].iter().enumerate() {
            let first = k * ENTRIES_PER_BLOCK;
            let n = (words as usize - first).min(ENTRIES_PER_BLOCK);
            if b.key != (first as u32).to_be_bytes()
                || b.records != n as u64
                || b.raw < ENTRY_COLUMNS as u64
            {
                return Err(Error::corrupt(
                    c.path(),
                    format!("block {}", k + 2),
                    b.offset,
                    "entry block does not hold the expected wordIDs",
                ));
            }
        }
        Ok(Lexicon {
            m: MappedContainer::new(c)?,
            fst,
            firsts,
            words,
        })
    }

    /// The container.
    pub fn container(&self) -> &Container {
        self.m.container()
    }

    /// The file's bytes, part by part.
    pub fn bytes(&self) -> LexiconBytes {
        let c = self.container();
        let b = c.blocks();
        let entries = b[2..].iter().map(|e| e.raw).sum();
        LexiconBytes {
            file: c.size(),
            container: c.size() - b.iter().map(|e| e.raw).sum::<u64>(),
            dictionary: b[0].raw,
            barrel_table: b[1].raw,
            entries,
            words: u64::from(self.words),
        }
    }

    /// Distinct words.
    pub fn words(&self) -> u32 {
        self.words
    }

    /// Barrels.
    pub fn barrels(&self) -> usize {
        self.firsts.len() - 1
    }

    /// How the indexed words were stemmed (header parameter `"stem"`;
    /// absent: none). A stemmer this build does not know is refused.
    pub fn stem(&self) -> Result<super::Stem> {
        match self
            .container()
            .params()
            .get("stem")
            .and_then(|v| v.as_str())
        {
            None => Ok(super::Stem::None),
            Some(name) => super::Stem::parse(name).map_err(|_| {
                Error::corrupt(
                    self.container().path(),
                    "header parameters",
                    0,
                    format!("stem is {name:?}, expected none or english"),
                )
            }),
        }
    }

    /// The wordIDs of barrel `b`: `first..end`.
    pub fn barrel_words(&self, b: usize) -> (u32, u32) {
        (self.firsts[b], self.firsts[b + 1])
    }

    /// The barrel holding `word`.
    pub fn barrel_of(&self, word: u32) -> usize {
        self.firsts.partition_point(|&f| f <= word) - 1
    }

    /// The wordID of `word` (lowercased as the tokenizer makes words), if any.
    pub fn lookup(&self, word: &str) -> Option<u32> {
        self.fst.get(word).map(|v| v as u32)
    }

    /// The term dictionary.
    pub fn fst(&self) -> &fst::Map<FstBytes> {
        &self.fst
    }

    /// The entry of `word`.
    pub fn entry(&self, word: u32) -> Result<TermInfo> {
        if word >= self.words {
            return Err(Error::usage(format!(
                "wordID {word} is not in the lexicon ({} words)",
                self.words
            )));
        }
        let k = word as usize / ENTRIES_PER_BLOCK;
        let p = self.m.payload(2 + k)?;
        let n = (self.words as usize - k * ENTRIES_PER_BLOCK).min(ENTRIES_PER_BLOCK);
        let block = EntryBlock::parse(p, n).map_err(|d| {
            Error::corrupt(
                self.container().path(),
                format!("block {}", 2 + k),
                self.container().blocks()[2 + k].offset,
                d,
            )
        })?;
        Ok(block.get(word as usize % ENTRIES_PER_BLOCK))
    }

    /// Calls `f(word, wordID)` for every word in byte order.
    pub fn for_each_word(&self, mut f: impl FnMut(&str, u32) -> Result<()>) -> Result<()> {
        use fst::Streamer;
        let mut s = self.fst.stream();
        while let Some((w, id)) = s.next() {
            let word = std::str::from_utf8(w).map_err(|_| {
                Error::corrupt(self.container().path(), "block 0", 0, "a word is not UTF-8")
            })?;
            f(word, id as u32)?;
        }
        Ok(())
    }

    /// Checks every byte and every entry: each wordID below N named exactly
    /// once by the dictionary, entries consistent, totals as in the footer.
    pub fn verify(&self) -> Result<()> {
        let c = self.container();
        c.verify(|_, _, _| Ok(()))?;
        let bad = |region: String, detail: String| Error::corrupt(c.path(), region, 0, detail);
        self.fst
            .as_fst()
            .verify()
            .map_err(|e| bad("block 0".into(), format!("term dictionary: {e}")))?;
        let mut seen = vec![false; self.words as usize];
        self.for_each_word(|w, id| {
            match seen.get_mut(id as usize) {
                Some(s) if !*s => *s = true,
                _ => {
                    return Err(bad(
                        "block 0".into(),
                        format!("word {w:?} has wordID {id}, out of range or taken twice"),
                    ))
                }
            }
            Ok(())
        })?;
        if seen.iter().any(|s| !s) {
            return Err(bad("block 0".into(), "some wordIDs have no word".into()));
        }
        let (mut hits, mut postings, mut short) = (0u64, 0u64, 0u64);
        for w in 0..self.words {
            let t = self.entry(w)?;
            if t.docs == 0 || t.short_docs > t.docs || t.hits < u64::from(t.docs) {
                return Err(bad(
                    format!("block {}", 2 + w as usize / ENTRIES_PER_BLOCK),
                    format!(
                        "wordID {w}: {} docs, {} short docs, {} hits",
                        t.docs, t.short_docs, t.hits
                    ),
                ));
            }
            hits += t.hits;
            postings += u64::from(t.docs);
            short += u64::from(t.short_docs);
        }
        let want = json!({"words": self.words, "hits": hits, "postings": postings, "short_postings": short});
        if c.meta() != &want {
            return Err(c.meta_error(format!("metadata says {}, the entries {want}", c.meta())));
        }
        Ok(())
    }
}

/// Writes the lexicon as TSV, one line per word in byte order.
pub fn dump(path: &Path, out: &mut dyn std::io::Write) -> Result<()> {
    let lex = Lexicon::open(path)?;
    writeln!(
        out,
        "# word\twordid\tbarrel\tdocs\tshort_docs\thits\tfull_block\tfull_entry"
    )
    .at("stdout")?;
    lex.for_each_word(|w, id| {
        let t = lex.entry(id)?;
        writeln!(
            out,
            "{}\t{id}\t{}\t{}\t{}\t{}\t{}\t{}",
            crate::tsv::escape(w),
            lex.barrel_of(id),
            t.docs,
            t.short_docs,
            t.hits,
            t.full.block,
            t.full.entry
        )
        .at("stdout")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutter_balances_and_isolates_heavy_words() {
        // One word with 40% of the hits, then 600 words of 1 hit each.
        let mut hits = vec![400u64];
        hits.extend(std::iter::repeat_n(1, 600));
        let total: u64 = hits.iter().sum();
        let mut c = BarrelCutter::new(4, total);
        for (i, &h) in hits.iter().enumerate() {
            c.add(i as u32, h);
        }
        let (firsts, per) = c.finish(hits.len() as u32);
        assert_eq!(firsts, [0, 1, 201, 401, 601]);
        assert_eq!(per, [400, 200, 200, 200]);
        // Fewer words than barrels: the last barrels are empty.
        let mut c = BarrelCutter::new(4, 3);
        c.add(0, 2);
        c.add(1, 1);
        assert_eq!(c.finish(2).0, [0, 1, 2, 2, 2]);
    }

    /// A lexicon of version 1 (with the short barrels' locations) is
    /// refused, naming the file and both versions.
    #[test]
    fn version_1_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lexicon.wm");
        let w = ContainerWriter::create(&path, LEXICON.tag, 1, &json!({})).unwrap();
        w.finish(&json!({})).unwrap();
        let err = Lexicon::open(&path)
            .err()
            .expect("version 1 refused")
            .to_string();
        assert!(
            err.contains("lexicon.wm") && err.contains("version 1") && err.contains("version 2"),
            "{err}"
        );
    }

    proptest::proptest! {
        /// An entry block gives back every entry alone, whatever the
        /// values' sizes; a block a byte short or long is refused.
        #[test]
        fn entry_blocks_roundtrip(raw in proptest::collection::vec(
            (0u32..5000, 0u32..3, 0u64..(1 << 40), 0u32..300, any_u32()),
            1..=ENTRIES_PER_BLOCK,
        )) {
            let entries: Vec<TermInfo> = raw
                .iter()
                .map(|&(docs, s, hits, block, entry)| TermInfo {
                    docs,
                    short_docs: docs.min(s),
                    hits,
                    full: Location { block, entry },
                })
                .collect();
            let mut bytes = Vec::new();
            pack_entries(&entries, &mut bytes);
            let b = EntryBlock::parse(&bytes, entries.len()).unwrap();
            for (i, t) in entries.iter().enumerate() {
                proptest::prop_assert_eq!(b.get(i), *t);
            }
            proptest::prop_assert!(EntryBlock::parse(&bytes[..bytes.len() - 1], entries.len()).is_err());
            let mut longer = bytes.clone();
            longer.push(0);
            proptest::prop_assert!(EntryBlock::parse(&longer, entries.len()).is_err());
        }
    }

    fn any_u32() -> impl proptest::strategy::Strategy<Value = u32> {
        proptest::prelude::any::<u32>()
    }

    /// The layout, byte by byte: widths, then the columns.
    #[test]
    fn entry_block_layout() {
        let e = |docs, short_docs, hits, block, entry| TermInfo {
            docs,
            short_docs,
            hits,
            full: Location { block, entry },
        };
        let mut bytes = Vec::new();
        pack_entries(&[e(2, 2, 5, 0, 1), e(1, 0, 1, 0, 6)], &mut bytes);
        // docs 2, 1 at 2 bits; short 2, 0 at 2; hits 5, 1 at 3; high 0;
        // block 0; entry 1, 6 at 3 bits.
        assert_eq!(
            bytes,
            [2, 2, 3, 0, 0, 3, 0b01_10, 0b00_10, 0b001_101, 0b110_001]
        );
    }

    #[test]
    fn term_info_roundtrip() {
        let t = TermInfo {
            docs: 7,
            short_docs: 2,
            hits: 1 << 40,
            full: Location { block: 3, entry: 9 },
        };
        let mut b = Vec::new();
        t.encode(&mut b);
        assert_eq!(b.len(), ENTRY_BYTES);
        assert_eq!(TermInfo::decode(&b), t);
    }
}

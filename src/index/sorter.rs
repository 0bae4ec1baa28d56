//! The sorter: a forward barrel re-sorted by (wordID, docID) into an inverted
//! barrel (Brin & Page §4.4, "Sorting").
//!
//! The paper's sorter cut a barrel that did not fit in memory into *baskets*
//! by wordID and docID, sorted each in memory and wrote them out. Here every
//! (word, document, part) entry of the forward barrel goes through the
//! external sort ([`crate::sort`]): its in-memory buffers, sized by the
//! budget, are the baskets, and its merge streams the entries back in
//! (wordID, docID, part) order. A document's part-0 entry (plain hits) and
//! part-1 entry (fancy hits) meet there and become one posting: plain hits,
//! then fancy hits. Every posting goes to the barrel; the lexicon entry counts
//! those whose fancy hits include a title or anchor hit (the word's short
//! doclist, which the searcher reads from the barrel by its count columns).
//!
//! A barrel that fits in its share of the budget (its bytes and 16 bytes per
//! entry) skips the external sort: it is read whole and its entries'
//! (key, hit list location) pairs are radix-sorted in place, in the same
//! order.
//!
//! One barrel is one sort, so barrels are independent: the stage sorts them
//! in parallel when the budget allows, resumes a barrel from the sort runs it
//! already wrote, and skips barrels whose files are published. The output
//! depends only on the forward barrel (the sort's order is total), not on the
//! budget, the threads or interruptions.

use std::path::Path;

use serde_json::json;

use super::forward::{ForwardBarrel, Part};
use super::hit::Hit;
use super::inverted::{BarrelTotals, BarrelWriter, Impacts, Location, NormReader, NO_BOUND};
use super::lexicon::{TermInfo, ENTRY_BYTES};
use super::postings::{hit_classes, ANCHOR, TITLE};
use crate::container::{BlockCodec, Container, ContainerWriter, FileKind};
use crate::error::{Error, Result};
use crate::sort::{Combine, ExternalSorter, Record, SortConfig};
use crate::varint;

/// Hits kept inline in a [`SortEntry`] (most hit lists are short).
const INLINE_HITS: usize = 7;

/// A hit list, inline when short.
#[derive(Clone, Debug)]
enum HitList {
    Inline(u8, [u16; INLINE_HITS]),
    Heap(Box<[u16]>),
}

impl HitList {
    fn from_le_bytes(b: &[u8]) -> HitList {
        let n = b.len() / 2;
        let get = |i: usize| u16::from_le_bytes([b[2 * i], b[2 * i + 1]]);
        if n <= INLINE_HITS {
            let mut a = [0u16; INLINE_HITS];
            for (i, v) in a.iter_mut().enumerate().take(n) {
                *v = get(i);
            }
            HitList::Inline(n as u8, a)
        } else {
            HitList::Heap((0..n).map(get).collect())
        }
    }

    fn as_slice(&self) -> &[u16] {
        match self {
            HitList::Inline(n, a) => &a[..*n as usize],
            HitList::Heap(b) => b,
        }
    }
}

/// One (word, document, part) entry of a forward barrel on its way through
/// the sort.
#[derive(Clone, Debug)]
pub struct SortEntry {
    /// wordID · 2³² + docID.
    key: u64,
    part: u8,
    hits: HitList,
}

impl SortEntry {
    /// Appends the entry's encoding with `hits` as its hit list.
    fn encode_with_hits(&self, out: &mut Vec<u8>, hits: &[u16]) {
        out.extend_from_slice(&self.key.to_le_bytes());
        out.push(self.part);
        varint::put(out, hits.len() as u64);
        for v in hits {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// The wordID.
    pub fn word(&self) -> u32 {
        (self.key >> 32) as u32
    }
    /// The docID.
    pub fn doc(&self) -> u32 {
        self.key as u32
    }
}

impl PartialEq for SortEntry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == std::cmp::Ordering::Equal
    }
}
impl Eq for SortEntry {}
impl PartialOrd for SortEntry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for SortEntry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.key, self.part, self.hits.as_slice()).cmp(&(o.key, o.part, o.hits.as_slice()))
    }
}

impl Record for SortEntry {
    const HAS_HEAP: bool = true;
    const PREFIX_SORT: bool = true;
    const KEY_PREFIX: bool = true;
    fn key_prefix(&self) -> u64 {
        self.key
    }
    fn type_name() -> String {
        "index-entry".into()
    }
    fn heap_bytes(&self) -> usize {
        match &self.hits {
            HitList::Inline(..) => 0,
            HitList::Heap(b) => 2 * b.len(),
        }
    }
    fn encode(&self, out: &mut Vec<u8>) {
        self.encode_with_hits(out, self.hits.as_slice());
    }
    fn encoded_len(&self) -> usize {
        let n = self.hits.as_slice().len();
        9 + varint::len(n as u64) + 2 * n
    }
    /// The hit list is cut like a byte string, in hits (see
    /// [`Record::encode_bounded`]); key and part are whole.
    fn encode_bounded(&self, out: &mut Vec<u8>, budget: &mut usize) -> bool {
        let hits = self.hits.as_slice();
        let cut = *budget / 2;
        let kept = hits.len().min(cut);
        self.encode_with_hits(out, &hits[..kept]);
        *budget -= 2 * kept;
        hits.len() >= cut
    }
    fn least() -> Self {
        SortEntry {
            key: 0,
            part: 0,
            hits: HitList::Inline(0, [0; INLINE_HITS]),
        }
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let (k, rest) = input.split_first_chunk::<8>()?;
        let (&part, mut rest) = rest.split_first()?;
        let n = varint::get(&mut rest)? as usize;
        let len = n.checked_mul(2).filter(|&l| l <= rest.len())?;
        let (h, rest) = rest.split_at(len);
        *input = rest;
        Some(SortEntry {
            key: u64::from_le_bytes(*k),
            part,
            hits: HitList::from_le_bytes(h),
        })
    }
}

/// What sorting one barrel made.
#[derive(Clone, Debug, Default)]
pub struct SortedBarrel {
    /// Lexicon entries written to the part file: one per wordID of the barrel.
    pub words: u64,
    /// Totals of the full barrel.
    pub full: BarrelTotals,
    /// Size in bytes of the barrel file.
    pub bytes: u64,
    /// Sort runs written.
    pub runs: usize,
}

/// Sorts forward barrel `forward` (wordIDs `first..end`) into `full` and
/// `short` by the sort `cfg` (resumed from the runs in its directory, if
/// any), and writes the barrel's lexicon entries to the part file
/// `part` as they come (a barrel of the long tail holds most of the
/// vocabulary, which grows with the collection: its entries are never held
/// in memory).
///
/// A barrel whose bytes and 16 bytes per entry fit in the sort's budget
/// (and whose sort has no runs from an earlier attempt) is sorted in
/// memory without the external sort: the forward barrel is read whole and
/// its entries' (key, hit list location) pairs are radix-sorted, the hit
/// lists staying where they were read (no [`SortEntry`] built, no records
/// moved). The order is the same — (wordID, docID, part), then the hits —
/// so the output is too. `scratch` holds that sort's buffers: a thread
/// sorting barrel after barrel passes the same one, so their pages are
/// faulted in once, not once a barrel (the allocator maps every buffer of
/// 128 KiB or more afresh, [`crate::resources::bound_allocator_retention`]:
/// the faults of fresh buffers took about 4% of rust-doc's build CPU). The
/// buffers are emptied before an external sort, so what they keep never
/// sits beside memory the sort's budget counts.
pub fn sort_barrel(
    forward: &Path,
    cfg: SortConfig,
    full: &Path,
    part: &Path,
    impacts: Option<&Impacts>,
    scratch: &mut SortScratch,
) -> Result<SortedBarrel> {
    let fwd = ForwardBarrel::open(forward)?;
    let p = fwd.container().params();
    let num = |k: &str| {
        p[k].as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0)
    };
    let (barrel, first, end) = (num("barrel"), num("first_word"), num("end_word"));
    let raw = fwd.container().raw_bytes();
    // An entry takes at least 4 of the barrel's bytes (a word delta, a
    // count, a hit), so `raw / 4` entries of 16 bytes bound the memory.
    let fits = raw < 1 << 31 && raw.saturating_mul(5) <= cfg.budget;
    // An earlier attempt's runs can only be in the sort's directory: with
    // none there, a barrel that fits is sorted in memory without opening
    // the external sort, which would create the directory and its
    // manifest only to remove them (two fsyncs a barrel: 128 of rust-doc's
    // 285, about a fifth of a second of the build's wall time).
    let sorter = if fits && !cfg.dir.exists() {
        None
    } else {
        Some(ExternalSorter::<SortEntry>::new(cfg, Combine::None)?)
    };
    let external = match sorter {
        Some(s) if !fits || s.input_complete() || s.resume_point() > 0 => Some(s),
        _ => None,
    };
    let mut out = BarrelOut::create(full, part, barrel, first, end, impacts)?;
    let mut runs = 0;
    if external.is_none() {
        let SortScratch {
            all,
            entries,
            block,
        } = scratch;
        entries.clear();
        entries.reserve((raw / 4) as usize);
        fwd.load(all, block, |doc, part, word, hits, at| {
            let doc = u32::try_from(doc)
                .map_err(|_| Error::record(format!("docID {doc} over 32 bits")))?;
            entries.push(MemEntry {
                key: u64::from(word) << 32 | u64::from(doc),
                at: at as u32,
                len_part: (hits.len() as u32) << 1 | part as u32,
            });
            Ok(())
        })?;
        let hits = |e: &MemEntry| {
            let at = e.at as usize;
            &all[at..at + (e.len_part >> 1) as usize]
        };
        crate::sort::block_radix::sort_by_key_prefix(entries, &|e: &MemEntry| e.key, &|a, b| {
            (a.key, a.len_part & 1)
                .cmp(&(b.key, b.len_part & 1))
                .then_with(|| cmp_hits(hits(a), hits(b)))
        });
        for e in entries.iter() {
            let h = hits(e);
            out.add(
                e.key,
                (e.len_part & 1) as u8,
                h.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])),
            )?;
        }
    } else if let Some(mut sorter) = external {
        *scratch = SortScratch::default();
        if !sorter.input_complete() {
            fwd.for_each(0, |doc, part, word, hits| {
                let doc = u32::try_from(doc)
                    .map_err(|_| Error::record(format!("docID {doc} over 32 bits")))?;
                sorter.push(SortEntry {
                    key: u64::from(word) << 32 | u64::from(doc),
                    part: part as u8,
                    hits: HitList::from_le_bytes(hits),
                })
            })?;
        }
        let mut sorted = sorter.finish()?;
        runs = sorted.stats().runs;
        while let Some(e) = sorted.next_record()? {
            out.add(e.key, e.part, e.hits.as_slice().iter().copied())?;
        }
    }
    let (words, full_totals, full_bytes) = out.finish()?;
    Ok(SortedBarrel {
        words,
        full: full_totals,
        bytes: full_bytes,
        runs,
    })
}

/// The buffers of [`sort_barrel`]'s sort in memory, kept from barrel to
/// barrel: the forward barrel's bytes, its entries and a block on its way.
/// They hold at most what the largest barrel sorted in memory needed, which
/// its budget allowed.
#[derive(Default)]
pub struct SortScratch {
    all: Vec<u8>,
    entries: Vec<MemEntry>,
    block: (Vec<u8>, Vec<u8>),
}

/// An entry of a forward barrel read whole: its key (wordID · 2³² + docID)
/// and where its hit list lies in the barrel's bytes.
#[derive(Clone, Copy)]
struct MemEntry {
    key: u64,
    /// Offset of the hit list.
    at: u32,
    /// Bytes of the hit list · 2 + part.
    len_part: u32,
}

/// Little-endian `u16` hit lists compared as [`SortEntry`]'s order compares
/// them (as `u16` sequences).
fn cmp_hits(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let u = |s: &[u8]| {
        s.chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect::<Vec<_>>()
    };
    u(a).cmp(&u(b))
}

/// One barrel's outputs (the barrel and its lexicon part), fed its entries
/// in (wordID, docID, part) order.
struct BarrelOut<'a> {
    fw: BarrelWriter,
    entries: PartWriter,
    impacts: Option<&'a Impacts>,
    reader: Option<NormReader<'a>>,
    barrel: u32,
    first: u32,
    end: u32,
    next_word: u32,
    current: Option<(u32, TermInfo)>,
    /// The document being gathered (its key) with its plain and fancy hits.
    doc: Option<u64>,
    plain: Vec<Hit>,
    fancy: Vec<Hit>,
}

impl<'a> BarrelOut<'a> {
    fn create(
        full: &Path,
        part: &Path,
        barrel: u32,
        first: u32,
        end: u32,
        impacts: Option<&'a Impacts>,
    ) -> Result<BarrelOut<'a>> {
        Ok(BarrelOut {
            fw: BarrelWriter::create(full, barrel, first, end, impacts.map(|i| &i.params))?,
            entries: PartWriter::create(part, barrel, first, end)?,
            impacts,
            reader: impacts.map(Impacts::reader),
            barrel,
            first,
            end,
            next_word: first,
            current: None,
            doc: None,
            plain: Vec::new(),
            fancy: Vec::new(),
        })
    }

    /// The next entry: a document's hits of one part (a document's parts
    /// follow each other and make one posting).
    fn add(&mut self, key: u64, part: u8, hits: impl Iterator<Item = u16>) -> Result<()> {
        if self.doc != Some(key) {
            self.end_doc()?;
            self.doc = Some(key);
        }
        let hits = hits.map(Hit);
        if part == Part::Text as u8 {
            self.plain.extend(hits)
        } else {
            self.fancy.extend(hits)
        }
        Ok(())
    }

    /// Writes the posting of the document gathered, if any.
    fn end_doc(&mut self) -> Result<()> {
        let Some(key) = self.doc.take() else {
            return Ok(());
        };
        let (word, doc) = ((key >> 32) as u32, key as u32);
        if self.current.as_ref().is_none_or(|(w, _)| *w != word) {
            if let Some((w, t)) = self.current.take() {
                finish_word(&mut self.entries, w, t, &mut self.fw)?;
            }
            if word != self.next_word {
                return Err(Error::internal(format!(
                    "barrel {}: wordID {word} follows {}; every wordID of {}..{} has hits",
                    self.barrel,
                    self.next_word.wrapping_sub(1),
                    self.first,
                    self.end
                )));
            }
            self.next_word += 1;
            let loc = self.fw.begin_word(word)?;
            self.current = Some((
                word,
                TermInfo {
                    full: loc,
                    ..TermInfo::default()
                },
            ));
        }
        let (_, t) = self
            .current
            .as_mut()
            .ok_or_else(|| Error::internal("no current word"))?;
        // The hits per class, counted once for the bound, the short
        // doclist and the postings block.
        let c = hit_classes(&self.plain, &self.fancy);
        let bound = match (self.impacts, &mut self.reader) {
            (Some(i), Some(r)) => i.bytes_of_classes(r, doc, &c)?,
            _ => [NO_BOUND; 2],
        };
        self.fw
            .push_classified(doc, &self.plain, &self.fancy, &c, bound)?;
        t.docs += 1;
        t.hits += (self.plain.len() + self.fancy.len()) as u64;
        if c[TITLE] + c[ANCHOR] > 0 {
            t.short_docs += 1;
        }
        self.plain.clear();
        self.fancy.clear();
        Ok(())
    }

    /// Ends the last word; returns the lexicon entries written and the
    /// barrel's totals and size.
    fn finish(mut self) -> Result<(u64, BarrelTotals, u64)> {
        self.end_doc()?;
        if let Some((w, t)) = self.current.take() {
            finish_word(&mut self.entries, w, t, &mut self.fw)?;
        }
        if self.next_word != self.end {
            return Err(Error::internal(format!(
                "barrel {}: wordIDs {}..{} have no hits",
                self.barrel, self.next_word, self.end
            )));
        }
        let words = self.entries.finish()?;
        let (totals, bytes) = self.fw.finish()?;
        Ok((words, totals, bytes))
    }
}

fn finish_word(
    entries: &mut PartWriter,
    word: u32,
    t: TermInfo,
    fw: &mut BarrelWriter,
) -> Result<()> {
    let stats = fw.end_word()?;
    debug_assert_eq!(stats.docs, t.docs, "word {word}");
    entries.push(&t)
}

/// Kind of the per-barrel lexicon parts the stage keeps in its temporary
/// directory until the lexicon is written: raw blocks of 24-byte entries
/// (the lexicon's layout), parameters `{"barrel", "first_word", "end_word"}`.
pub const LEXPART: FileKind = FileKind {
    tag: "lexpart",
    version: 2,
    what: "one barrel's lexicon entries, 24 bytes per word (temporary)",
    verify: |path| {
        let c = LEXPART.open(path)?;
        c.verify(|i, e, raw| check_part_block(&c, i, e.records, raw))
    },
    dump: |path, out| {
        use crate::error::IoContext;
        let c = LEXPART.open(path)?;
        let first = c.params()["first_word"].as_u64().unwrap_or(0);
        writeln!(
            out,
            "# word_id\tdocs\tshort_docs\thits\tfull_block\tfull_entry"
        )
        .at("stdout")?;
        let mut word = first;
        for i in 0..c.blocks().len() {
            let raw = c.read_block(i)?;
            check_part_block(&c, i, c.blocks()[i].records, &raw)?;
            for e in raw.chunks_exact(ENTRY_BYTES) {
                let t = super::lexicon::TermInfo::decode(e);
                writeln!(
                    out,
                    "{word}\t{}\t{}\t{}\t{}\t{}",
                    t.docs, t.short_docs, t.hits, t.full.block, t.full.entry
                )
                .at("stdout")?;
                word += 1;
            }
        }
        Ok(())
    },
};

/// A part block holds whole 24-byte entries, as many as the index says.
fn check_part_block(c: &Container, i: usize, records: u64, raw: &[u8]) -> Result<()> {
    if !raw.len().is_multiple_of(ENTRY_BYTES) || (raw.len() / ENTRY_BYTES) as u64 != records {
        return Err(crate::Error::corrupt(
            c.path(),
            format!("block {i}"),
            c.blocks()[i].offset,
            format!(
                "{} bytes for {records} entries of {ENTRY_BYTES} bytes",
                raw.len()
            ),
        ));
    }
    Ok(())
}

/// Entries of a part block (the lexicon's own block size).
const PART_BLOCK_ENTRIES: usize = super::lexicon::ENTRIES_PER_BLOCK;

/// Writes a barrel's lexicon entries as a temporary part file, a block at a
/// time.
pub struct PartWriter {
    w: ContainerWriter,
    block: Vec<u8>,
    words: u64,
}

impl PartWriter {
    /// Starts the part of barrel `barrel` (wordIDs `first..end`) at `path`.
    pub fn create(path: &Path, barrel: u32, first: u32, end: u32) -> Result<PartWriter> {
        let params = json!({"barrel": barrel, "first_word": first, "end_word": end});
        let mut w = ContainerWriter::create(path, LEXPART.tag, LEXPART.version, &params)?;
        w.set_durable(false);
        Ok(PartWriter {
            w,
            block: Vec::with_capacity(ENTRY_BYTES * PART_BLOCK_ENTRIES),
            words: 0,
        })
    }

    /// Appends the next word's entry.
    pub fn push(&mut self, t: &TermInfo) -> Result<()> {
        t.encode(&mut self.block);
        self.words += 1;
        if self.block.len() >= ENTRY_BYTES * PART_BLOCK_ENTRIES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if !self.block.is_empty() {
            let n = (self.block.len() / ENTRY_BYTES) as u64;
            self.w.write_block(BlockCodec::Raw, &[], n, &self.block)?;
            self.block.clear();
        }
        Ok(())
    }

    /// Publishes the part; returns its entry count.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        self.w.finish(&json!({}))?;
        Ok(self.words)
    }
}

/// `true` when the part file at `path` is there and whole (every block
/// checked, none kept in memory).
pub fn part_is_complete(path: &Path) -> bool {
    (LEXPART.verify)(path).is_ok()
}

/// Calls `f` with each block of the part file at `path` (whole 24-byte
/// entries, in wordID order), checking each.
pub fn for_each_part_block(path: &Path, mut f: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    let c = LEXPART.open(path)?;
    for i in 0..c.blocks().len() {
        let raw = c.read_block(i)?;
        check_part_block(&c, i, c.blocks()[i].records, &raw)?;
        f(&raw)?;
    }
    Ok(())
}

/// The location of a word that has no short doclist.
pub const NO_LOCATION: Location = Location { block: 0, entry: 0 };

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A barrel sorted in memory and one sorted through the external sort
    /// (a budget that spills runs) are the same bytes, barrel and lexicon
    /// part, documents with both parts included.
    #[test]
    fn memory_and_external_sorts_write_the_same_barrel() {
        use super::super::forward::{encode_record, ForwardWriter};
        let dir = tempfile::tempdir().unwrap();
        let (first, end) = (100u32, 160u32);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let fwd = dir.path().join("fwd.wm");
        let mut w = ForwardWriter::create(&fwd, 3, first, end, 4096).unwrap();
        let docs = 900u64;
        // Part 0 in a scrambled order (pages), part 1 in docID order.
        let mut order: Vec<u64> = (0..docs).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rand(i as u64 + 1) as usize);
        }
        let mut rec = Vec::new();
        for (pass, part) in [(&order, Part::Text), (&(0..docs).collect(), Part::Fancy)] {
            for &doc in pass.iter() {
                if part == Part::Fancy && doc % 3 != 0 {
                    continue;
                }
                // Every wordID of the barrel has hits.
                let mut words: Vec<u32> = vec![first + (doc % u64::from(end - first)) as u32];
                for _ in 0..rand(6) {
                    words.push(first + rand(u64::from(end - first)) as u32);
                }
                words.sort_unstable();
                words.dedup();
                let hits: Vec<Vec<Hit>> = words
                    .iter()
                    .map(|_| {
                        (0..1 + rand(9) as u32)
                            .map(|j| match part {
                                Part::Text => Hit::plain(false, 1, j * 3),
                                Part::Fancy => Hit::title(false, j),
                            })
                            .collect()
                    })
                    .collect();
                let list: Vec<(u32, &[Hit])> =
                    words.iter().zip(&hits).map(|(w, h)| (*w, &h[..])).collect();
                rec.clear();
                encode_record(&mut rec, doc, part, first, &list);
                w.push(&rec, hits.iter().map(|h| h.len() as u64).sum())
                    .unwrap();
            }
        }
        w.finish().unwrap();
        let sort = |name: &str, budget: u64| {
            let cfg = SortConfig::new(dir.path().join(format!("sort-{name}")), budget);
            let full = dir.path().join(format!("full-{name}.wm"));
            let part = dir.path().join(format!("part-{name}.wm"));
            let s =
                sort_barrel(&fwd, cfg, &full, &part, None, &mut SortScratch::default()).unwrap();
            (
                s.runs,
                std::fs::read(full).unwrap(),
                std::fs::read(part).unwrap(),
            )
        };
        let (runs_memory, full_memory, part_memory) = sort("memory", 1 << 30);
        // Sorted in memory, the barrel never opens the external sort.
        assert!(!dir.path().join("sort-memory").exists());
        // An earlier attempt's sort directory without runs: still in memory.
        std::fs::create_dir_all(dir.path().join("sort-again")).unwrap();
        assert!(sort("again", 1 << 30) == (runs_memory, full_memory.clone(), part_memory.clone()));
        let (runs_external, full_external, part_external) = sort("external", 16 << 10);
        assert_eq!(runs_memory, 0);
        assert!(runs_external > 1, "the small budget spills runs");
        assert!(full_memory == full_external, "barrels differ");
        assert!(part_memory == part_external, "lexicon parts differ");
        let b = super::super::inverted::Barrel::open(dir.path().join("full-memory.wm")).unwrap();
        b.verify().unwrap();
    }

    proptest! {
        #[test]
        fn entries_roundtrip(key: u64, part in 0u8..2, hits in proptest::collection::vec(any::<u16>(), 0..20)) {
            let mut b = Vec::new();
            for h in &hits { b.extend_from_slice(&h.to_le_bytes()); }
            let e = SortEntry { key, part, hits: HitList::from_le_bytes(&b) };
            prop_assert_eq!(e.hits.as_slice(), &hits[..]);
            let mut out = Vec::new();
            e.encode(&mut out);
            let mut input = &out[..];
            let back = SortEntry::decode(&mut input).unwrap();
            prop_assert!(input.is_empty());
            prop_assert_eq!(e.encoded_len(), out.len());
            prop_assert_eq!(back, e);
        }

        /// Bounded keys (hit lists cut in hits) keep the order the merge
        /// relies on, for budgets around the lists' lengths, and the least
        /// entry is below all.
        #[test]
        fn entries_have_bounded_keys(
            budget in 0usize..24,
            entries in proptest::collection::vec(
                (0u64..2, 0u8..2, proptest::collection::vec(0u16..3, 0..12)), 1..24),
        ) {
            let entries: Vec<SortEntry> = entries
                .into_iter()
                .map(|(key, part, hits)| {
                    let b: Vec<u8> = hits.iter().flat_map(|h| h.to_le_bytes()).collect();
                    SortEntry { key, part, hits: HitList::from_le_bytes(&b) }
                })
                .collect();
            crate::sort::record::testing::check_bounded_keys(&entries, budget, 9 + 1)?;
            for e in &entries {
                prop_assert!(SortEntry::least() <= *e);
            }
        }
    }
}

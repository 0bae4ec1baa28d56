//! Anchor titles: the `titles` container kind (version 1; the file is
//! `index/titles.wm`), the title a result shows for a page that was never
//! crawled (Brin & Page §2.2: such a page is known by the anchor text of the
//! links to it).
//!
//! The title of a never-crawled page is the commonest non-empty anchor text
//! (trimmed) among the first [`ANCHORS_PER_TITLE`] links to it in the anchor
//! file's order, ties going to the text seen first ([`AnchorVote`]). Working
//! it out at query time decompresses a block of `anchors.wm` and steps
//! through every record before the page's; the `index` stage works it out
//! once, from the anchors its first pass reads (or, resumed after that
//! pass, in one sequential pass over `docs.wm` and `anchors.wm`), and this
//! file keeps it for a lookup in place: one block found in the in-memory
//! block index, a binary search in the mapped block, no decompression.
//!
//! # Layout
//!
//! One record per docID that is not crawled, has an empty title in the doc
//! table and a non-empty anchor title; docIDs strictly increasing. Raw
//! blocks (checksummed, not compressed, so a block is read in place) cut
//! once their texts pass [`BLOCK_TEXT`] bytes; a block's key is its first
//! docID as a big-endian `u64`, its record count the titles in it. A block
//! of `n` titles is three arrays:
//!
//! ```text
//! docid u32 LE × n | end u32 LE × n | texts (UTF-8, concatenated)
//! ```
//!
//! Title `i` is `texts[end[i-1]..end[i]]` (`end[-1]` = 0); the last end is
//! the length of the texts.
//!
//! Header parameters: `{"docs": N, "anchors_per_title": 64}` (N: the doc
//! table's length). Footer metadata: `{"titles": T}`, the records.
//!
//! Invariants (checked by `verify`): docIDs strictly increasing across the
//! file and below N, each block's first docID its key, ends non-decreasing
//! and the last one the texts' length, every title valid UTF-8, non-empty
//! and trimmed, T records.

use std::path::Path;

use serde_json::json;

use crate::container::pagefile::PageFile;
use crate::container::{BlockCodec, Container, ContainerWriter, FileKind, MappedContainer};
use crate::docs::DocTable;
use crate::error::{Error, IoContext, Result};
use crate::ingest::records;

/// Links looked at for the title of a page never crawled.
pub const ANCHORS_PER_TITLE: usize = 64;
/// Text bytes after which a block is cut.
pub const BLOCK_TEXT: usize = 4 << 10;

/// The anchor-titles kind.
pub const TITLES: FileKind = FileKind {
    tag: "titles",
    version: 1,
    what: "per never-crawled docID, its title from the anchor text of the links to it",
    verify: |path| AnchorTitles::open(path)?.verify(),
    dump: |path, out| {
        let t = AnchorTitles::open(path)?;
        writeln!(out, "# docid\ttitle").at("stdout")?;
        for i in 0..t.c.container().blocks().len() {
            let b = t.block(i)?;
            for k in 0..b.len() {
                let (doc, title) = b.get(k)?;
                writeln!(out, "{doc}\t{}", crate::tsv::escape(title)).at("stdout")?;
            }
        }
        Ok(())
    },
};

/// The vote of a page's anchor texts for its title: the commonest non-empty
/// text (trimmed) among the first [`ANCHORS_PER_TITLE`] links counted, ties
/// to the first seen.
#[derive(Clone, Debug, Default)]
pub struct AnchorVote {
    /// Distinct texts in the order first seen, with their counts.
    texts: Vec<(String, u32)>,
    /// Links counted.
    seen: usize,
}

impl AnchorVote {
    /// Starts over (keeps the allocation).
    pub fn clear(&mut self) {
        self.texts.clear();
        self.seen = 0;
    }

    /// Counts the next link's text; returns whether more links count (false
    /// once [`ANCHORS_PER_TITLE`] have been: later calls change nothing).
    pub fn add(&mut self, text: &str) -> bool {
        if self.seen >= ANCHORS_PER_TITLE {
            return false;
        }
        self.seen += 1;
        let text = text.trim();
        if !text.is_empty() {
            match self.texts.iter_mut().find(|(t, _)| t == text) {
                Some((_, n)) => *n += 1,
                None => self.texts.push((text.to_string(), 1)),
            }
        }
        self.seen < ANCHORS_PER_TITLE
    }

    /// The title the links counted so far vote for, if any has text.
    pub fn title(&self) -> Option<&str> {
        self.texts
            .iter()
            .enumerate()
            .max_by_key(|(k, (_, n))| (*n, std::cmp::Reverse(*k)))
            .map(|(_, (t, _))| t.as_str())
    }
}

/// What [`write`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TitleStats {
    /// Titles stored.
    pub titles: u64,
    /// The file's size in bytes.
    pub bytes: u64,
}

/// Works out the anchor title of every never-crawled, untitled doc of
/// `docs` from `anchors` (keyed by target docID) and writes them to `path`:
/// one sequential pass over both, in constant memory (one block and one
/// page's vote).
pub fn write(docs: &DocTable, anchors: &PageFile, path: &Path) -> Result<TitleStats> {
    let n = docs.len();
    let mut w = TitlesWriter::create(path, n)?;
    let mut walk = docs.walk();
    let mut vote = AnchorVote::default();
    let mut current: Option<u64> = None;
    let mut close = |doc: u64, vote: &AnchorVote, w: &mut TitlesWriter| -> Result<()> {
        let d = walk.get(doc)?;
        if !d.crawled && d.title.is_empty() {
            if let Some(t) = vote.title() {
                w.push(doc, t)?;
            }
        }
        Ok(())
    };
    anchors.for_each(|target, input| {
        let (_, _, text) = records::decode_anchor(input)?;
        if target >= n {
            return Err(Error::record(format!(
                "anchor to docID {target}, past the doc table's {n} docs"
            )));
        }
        if current != Some(target) {
            if let Some(c) = current {
                close(c, &vote, &mut w)?;
            }
            vote.clear();
            current = Some(target);
        }
        vote.add(text);
        Ok(())
    })?;
    if let Some(c) = current {
        close(c, &vote, &mut w)?;
    }
    w.finish()
}

/// Writes anchor titles by increasing docID.
pub struct TitlesWriter {
    w: ContainerWriter,
    ids: Vec<u8>,
    ends: Vec<u8>,
    text: Vec<u8>,
    first: u64,
    last: Option<u64>,
    docs: u64,
    titles: u64,
}

impl TitlesWriter {
    /// Starts a file for a doc table of `docs` documents.
    pub fn create(path: impl AsRef<Path>, docs: u64) -> Result<TitlesWriter> {
        Ok(TitlesWriter {
            w: ContainerWriter::create(
                path,
                TITLES.tag,
                TITLES.version,
                &json!({ "docs": docs, "anchors_per_title": ANCHORS_PER_TITLE }),
            )?,
            ids: Vec::new(),
            ends: Vec::new(),
            text: Vec::new(),
            first: 0,
            last: None,
            docs,
            titles: 0,
        })
    }

    /// Appends the title of `doc` (above every docID pushed before).
    pub fn push(&mut self, doc: u64, title: &str) -> Result<()> {
        let bad = |what: String| Error::internal(format!("{}: {what}", self.w.path().display()));
        if self.last.is_some_and(|l| doc <= l) || doc >= self.docs || doc > u64::from(u32::MAX) {
            return Err(bad(format!(
                "title of docID {doc} after {:?} (of {} docs)",
                self.last, self.docs
            )));
        }
        if title.is_empty() || title.trim() != title {
            return Err(bad(format!("title of docID {doc} is empty or not trimmed")));
        }
        if self.ids.is_empty() {
            self.first = doc;
        }
        self.last = Some(doc);
        self.ids.extend_from_slice(&(doc as u32).to_le_bytes());
        self.text.extend_from_slice(title.as_bytes());
        let end = u32::try_from(self.text.len()).map_err(|_| bad("title too long".into()))?;
        self.ends.extend_from_slice(&end.to_le_bytes());
        self.titles += 1;
        if self.text.len() >= BLOCK_TEXT {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.ids.is_empty() {
            return Ok(());
        }
        let n = (self.ids.len() / 4) as u64;
        self.ids.extend_from_slice(&self.ends);
        self.ids.extend_from_slice(&self.text);
        self.w
            .write_block(BlockCodec::Raw, &self.first.to_be_bytes(), n, &self.ids)?;
        self.ids.clear();
        self.ends.clear();
        self.text.clear();
        Ok(())
    }

    /// Publishes the file.
    pub fn finish(mut self) -> Result<TitleStats> {
        self.flush()?;
        let bytes = self.w.finish(&json!({ "titles": self.titles }))?.1;
        Ok(TitleStats {
            titles: self.titles,
            bytes,
        })
    }
}

/// One block of titles, in place.
pub struct TitleBlock<'a> {
    path: &'a Path,
    offset: u64,
    ids: &'a [u8],
    ends: &'a [u8],
    text: &'a [u8],
}

impl<'a> TitleBlock<'a> {
    /// Titles in the block.
    pub fn len(&self) -> usize {
        self.ids.len() / 4
    }

    /// Whether the block holds no title.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    fn u32_at(a: &[u8], k: usize) -> u32 {
        u32::from_le_bytes([a[4 * k], a[4 * k + 1], a[4 * k + 2], a[4 * k + 3]])
    }

    /// The docID of record `k`.
    pub fn doc(&self, k: usize) -> u64 {
        u64::from(Self::u32_at(self.ids, k))
    }

    /// Record `k`: (docID, title).
    pub fn get(&self, k: usize) -> Result<(u64, &'a str)> {
        let start = if k == 0 {
            0
        } else {
            Self::u32_at(self.ends, k - 1) as usize
        };
        let end = Self::u32_at(self.ends, k) as usize;
        let bytes = self.text.get(start..end).ok_or_else(|| {
            Error::corrupt(
                self.path,
                "title block",
                self.offset,
                format!("record {k}: text {start}..{end} past the block's texts"),
            )
        })?;
        let title = std::str::from_utf8(bytes).map_err(|_| {
            Error::corrupt(
                self.path,
                "title block",
                self.offset,
                format!("record {k}: title is not UTF-8"),
            )
        })?;
        Ok((self.doc(k), title))
    }

    /// The title of `doc`, if the block holds one.
    pub fn find(&self, doc: u64) -> Result<Option<&'a str>> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.doc(mid) < doc {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo < self.len() && self.doc(lo) == doc {
            Ok(Some(self.get(lo)?.1))
        } else {
            Ok(None)
        }
    }
}

/// An open anchor-titles file, mapped.
pub struct AnchorTitles {
    c: MappedContainer,
    docs: u64,
}

impl AnchorTitles {
    /// Opens a titles file and checks its structure (each block's
    /// checksum is checked the first time it is read).
    pub fn open(path: impl AsRef<Path>) -> Result<AnchorTitles> {
        let c = TITLES.open(path)?;
        let docs = c.params()["docs"]
            .as_u64()
            .ok_or_else(|| Error::corrupt(c.path(), "header parameters", 0, "no docs count"))?;
        for (i, b) in c.blocks().iter().enumerate() {
            let key = <[u8; 8]>::try_from(b.key.as_slice()).ok();
            if key.is_none()
                || b.stored != b.raw
                || b.records == 0
                || b.records.checked_mul(8).is_none_or(|m| m > b.raw)
            {
                return Err(Error::corrupt(
                    c.path(),
                    format!("block {i}"),
                    b.offset,
                    "not a raw block of titles keyed by an 8-byte docID",
                ));
            }
        }
        Ok(AnchorTitles {
            c: MappedContainer::new(c)?,
            docs,
        })
    }

    /// The doc table's length it was written for.
    pub fn docs(&self) -> u64 {
        self.docs
    }

    /// Titles stored.
    pub fn len(&self) -> u64 {
        self.c.container().records()
    }

    /// Whether it stores no title.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Block `i`, in place.
    pub fn block(&self, i: usize) -> Result<TitleBlock<'_>> {
        let c = self.c.container();
        let e = &c.blocks()[i];
        let payload = self.c.payload(i)?;
        let n = e.records as usize;
        Ok(TitleBlock {
            path: c.path(),
            offset: e.offset,
            ids: &payload[..4 * n],
            ends: &payload[4 * n..8 * n],
            text: &payload[8 * n..],
        })
    }

    /// The anchor title of `doc`: `None` when it was crawled, has a title
    /// of its own, or no link to it has text.
    pub fn get(&self, doc: u64) -> Result<Option<&str>> {
        match self.c.container().find_block(&doc.to_be_bytes()) {
            Some(i) => self.block(i)?.find(doc),
            None => Ok(None),
        }
    }

    /// Checks every block's checksum and the invariants of the layout.
    pub fn verify(&self) -> Result<()> {
        let c: &Container = self.c.container();
        // The container: every checksum, the header's and the blocks' padding.
        c.verify(|_, _, _| Ok(()))?;
        let mut last: Option<u64> = None;
        for i in 0..c.blocks().len() {
            let e = &c.blocks()[i];
            let bad =
                |detail: String| Error::corrupt(c.path(), format!("block {i}"), e.offset, detail);
            let b = self.block(i)?;
            let key = <[u8; 8]>::try_from(e.key.as_slice())
                .map(u64::from_be_bytes)
                .unwrap_or(u64::MAX);
            if b.doc(0) != key {
                return Err(bad(format!("first docID {} but key {key}", b.doc(0))));
            }
            let mut prev_end = 0u32;
            for k in 0..b.len() {
                let doc = b.doc(k);
                if last.is_some_and(|l| doc <= l) || doc >= self.docs {
                    return Err(bad(format!(
                        "record {k}: docID {doc} after {last:?} (of {} docs)",
                        self.docs
                    )));
                }
                last = Some(doc);
                let end = TitleBlock::u32_at(b.ends, k);
                if end < prev_end {
                    return Err(bad(format!("record {k}: end {end} before {prev_end}")));
                }
                prev_end = end;
                let (_, title) = b.get(k)?;
                if title.is_empty() || title.trim() != title {
                    return Err(bad(format!("record {k}: title empty or not trimmed")));
                }
            }
            if prev_end as usize != b.text.len() {
                return Err(bad(format!(
                    "texts are {} bytes, the last end says {prev_end}",
                    b.text.len()
                )));
            }
        }
        let titles = c.meta()["titles"].as_u64();
        if titles != Some(self.len()) {
            return Err(c.meta_error(format!(
                "titles is {titles:?}, the blocks hold {}",
                self.len()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vote_counts_the_first_links_only() {
        let mut v = AnchorVote::default();
        assert_eq!(v.title(), None);
        assert!(v.add(" "));
        assert_eq!(v.title(), None);
        assert!(v.add(" b "));
        assert!(v.add("a"));
        assert!(v.add("a"));
        assert!(v.add("b"));
        // A tie: the first seen.
        assert_eq!(v.title(), Some("b"));
        for _ in 5..ANCHORS_PER_TITLE - 1 {
            assert!(v.add("c"));
        }
        assert!(!v.add("a"));
        // Past the first links nothing counts.
        for _ in 0..200 {
            assert!(!v.add("a"));
        }
        assert_eq!(v.title(), Some("c"));
        v.clear();
        assert!(v.add("z"));
        assert_eq!(v.title(), Some("z"));
    }

    #[test]
    fn round_trip_and_verify() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("titles.wm");
        let docs = 100_000u64;
        let title = |d: u64| format!("page {d} — «{}»", "x".repeat((d % 97) as usize));
        let kept: Vec<u64> = (0..docs).filter(|d| d % 3 == 1).collect();
        let mut w = TitlesWriter::create(&p, docs).unwrap();
        for &d in &kept {
            w.push(d, &title(d)).unwrap();
        }
        assert!(w.push(kept[kept.len() - 1], "again").is_err());
        let stats = w.finish().unwrap();
        assert_eq!(stats.titles, kept.len() as u64);
        let t = AnchorTitles::open(&p).unwrap();
        t.verify().unwrap();
        assert!(t.c.container().blocks().len() > 10);
        for d in 0..docs {
            let want = (d % 3 == 1).then(|| title(d));
            assert_eq!(t.get(d).unwrap().map(str::to_string), want, "doc {d}");
        }
        assert_eq!(t.get(docs + 5).unwrap(), None);
        let mut out = Vec::new();
        (TITLES.dump)(&p, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(out.lines().count(), kept.len() + 1);
        assert!(out.contains("\n4\tpage 4 — «xxxx»\n"));

        // Untrimmed or empty titles are refused.
        let mut w = TitlesWriter::create(dir.path().join("bad.wm"), 10).unwrap();
        assert!(w.push(1, " a").is_err());
        assert!(w.push(1, "").is_err());
        assert!(w.push(10, "past the end").is_err());
    }

    #[test]
    fn a_flipped_byte_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("titles.wm");
        let mut w = TitlesWriter::create(&p, 10).unwrap();
        w.push(3, "three").unwrap();
        w.push(7, "seven").unwrap();
        w.finish().unwrap();
        let mut bytes = std::fs::read(&p).unwrap();
        let at = bytes.windows(5).position(|w| w == b"seven").unwrap();
        bytes[at] ^= 0x20;
        std::fs::write(&p, &bytes).unwrap();
        let t = AnchorTitles::open(&p).unwrap();
        let e = t.get(7).unwrap_err().to_string();
        assert!(e.contains("titles.wm") && e.contains("block 0"), "{e}");
    }
}

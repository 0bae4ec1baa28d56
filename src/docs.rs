//! The doc table: the `docs` container kind (version 2).
//!
//! docID → what is known of the document: its URL (for graph-only jobs, the
//! node's name from the input), whether it was crawled, its size in bytes, its
//! title, where its page is in the repository and its host. DocIDs are dense:
//! the n-th record is docID n.
//!
//! Header parameters: `{"source": …}` (what made the table). Footer metadata:
//! `{"docs": N, "crawled": C}`.
//!
//! # Block layout
//!
//! zstd blocks of about 16 KiB raw. A block's first key is its first docID as a
//! big-endian `u64`; its record count is the number of docs in it, so block `i`
//! covers docIDs `[key, key + records)`. Each record:
//!
//! ```text
//! flags u8           bit 0: crawled; bit 1: has a page; other bits 0
//! varint bytes       document size in bytes (0 when not crawled)
//! varint len, bytes  URL or name, UTF-8
//! varint len, bytes  title, UTF-8 (empty when unknown)
//! varint page        only with bit 1: the page number, i.e. the record of the
//!                    repository (`repository.wm`) holding the page
//! varint host        host number: hosts are numbered in docID order, one
//!                    host's docs are contiguous (0 for graph-only jobs)
//! ```

use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::container::{BlockCodec, Container, ContainerWriter, FileKind};
use crate::error::{Error, IoContext, Result};
use crate::tsv::escape;
use crate::varint;

/// The doc table kind.
pub const DOCS: FileKind = FileKind {
    tag: "docs",
    version: 2,
    what: "doc table: docID → URL (or node name), crawled, bytes, title, page, host",
    verify: |path| DocTable::open(path)?.verify(),
    dump: dump_docs,
};

/// Writes a doc table as TSV: `docid url crawled bytes title`.
fn dump_docs(path: &Path, out: &mut dyn Write) -> Result<()> {
    let t = DocTable::open(path)?;
    writeln!(out, "# docid\turl\tcrawled\tbytes\ttitle").at("stdout")?;
    for doc in t.iter() {
        let (id, d) = doc?;
        writeln!(
            out,
            "{id}\t{}\t{}\t{}\t{}",
            escape(&d.url),
            u8::from(d.crawled),
            d.bytes,
            escape(&d.title)
        )
        .at("stdout")?;
    }
    Ok(())
}
/// Raw bytes after which a block is closed. A lookup decompresses a whole
/// block: at 16 KiB that is ~0.1M instructions (64 KiB took ~0.45M, more
/// than a query's retrieval when each of a search's ten results misses the
/// cache, as it does at web scale), for ~9% more bytes than 64 KiB blocks
/// (rust-doc's doc table).
const BLOCK_BYTES: usize = 16 << 10;

/// One document's entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Doc {
    /// URL, or the node's name for graph-only jobs.
    pub url: String,
    /// Whether the document itself was seen (not only linked to).
    pub crawled: bool,
    /// Size of the document in bytes.
    pub bytes: u64,
    /// Title, empty when unknown.
    pub title: String,
    /// The page number (record of the repository and of the text file), for
    /// docs ingested from pages.
    pub page: Option<u64>,
    /// Host number (one host's docs are contiguous; 0 for graph-only jobs).
    pub host: u64,
}

/// Writes a doc table, docID by docID.
pub struct DocWriter {
    w: ContainerWriter,
    block: Vec<u8>,
    block_first: u64,
    block_docs: u64,
    docs: u64,
    crawled: u64,
}

impl DocWriter {
    /// Starts a doc table; `source` says what made it (e.g. `"import-graph"`).
    pub fn create(path: impl AsRef<Path>, source: &str) -> Result<DocWriter> {
        Ok(DocWriter {
            w: ContainerWriter::create(path, DOCS.tag, DOCS.version, &json!({ "source": source }))?,
            block: Vec::with_capacity(BLOCK_BYTES + 4096),
            block_first: 0,
            block_docs: 0,
            docs: 0,
            crawled: 0,
        })
    }

    /// Appends the next docID's entry.
    pub fn push(&mut self, doc: &Doc) -> Result<()> {
        if self.block_docs == 0 {
            self.block_first = self.docs;
        }
        self.block
            .push(u8::from(doc.crawled) | (u8::from(doc.page.is_some()) << 1));
        varint::put(&mut self.block, doc.bytes);
        varint::put_bytes(&mut self.block, doc.url.as_bytes());
        varint::put_bytes(&mut self.block, doc.title.as_bytes());
        if let Some(page) = doc.page {
            varint::put(&mut self.block, page);
        }
        varint::put(&mut self.block, doc.host);
        self.block_docs += 1;
        self.docs += 1;
        self.crawled += u64::from(doc.crawled);
        if self.block.len() >= BLOCK_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.block_docs > 0 {
            self.w.write_block(
                BlockCodec::Zstd(3),
                &self.block_first.to_be_bytes(),
                self.block_docs,
                &self.block,
            )?;
        }
        self.block.clear();
        self.block_docs = 0;
        Ok(())
    }

    /// Publishes the table; returns (docs, crawled).
    pub fn finish(mut self) -> Result<(u64, u64)> {
        self.flush()?;
        let (docs, crawled) = (self.docs, self.crawled);
        self.w.finish(&json!({"docs": docs, "crawled": crawled}))?;
        Ok((docs, crawled))
    }
}

/// An open doc table.
pub struct DocTable {
    c: Container,
    /// The first docID of each block, by the counts of those before it
    /// (what each block's key must say), worked out once at opening.
    firsts: Vec<u64>,
}

/// A decompressed block of the doc table with where each record starts
/// ([`DocTable::index_block`]): a lookup decodes one record, not the ~400
/// of a block (a search shows ten documents from as many blocks).
pub struct DocBlock {
    block: usize,
    first: u64,
    raw: Vec<u8>,
    starts: Vec<u32>,
}

/// What is wrong with a record ([`RecordRef::read`], [`RecordRef::to_doc`]).
enum RecordFault {
    Cut,
    Flags(u8),
    NotUtf8(&'static str),
}

/// A record as stored, its texts still bytes.
struct RecordRef<'a> {
    flags: u8,
    bytes: u64,
    url: &'a [u8],
    title: &'a [u8],
    page: Option<u64>,
    host: u64,
}

impl<'a> RecordRef<'a> {
    /// Reads the record at the front of `input` and moves past it.
    fn read(input: &mut &'a [u8]) -> std::result::Result<Self, RecordFault> {
        let (&flags, rest) = input.split_first().ok_or(RecordFault::Cut)?;
        *input = rest;
        if flags > 3 {
            return Err(RecordFault::Flags(flags));
        }
        let bytes = varint::get(input).ok_or(RecordFault::Cut)?;
        let url = varint::get_bytes(input).ok_or(RecordFault::Cut)?;
        let title = varint::get_bytes(input).ok_or(RecordFault::Cut)?;
        let page = if flags & 2 != 0 {
            Some(varint::get(input).ok_or(RecordFault::Cut)?)
        } else {
            None
        };
        let host = varint::get(input).ok_or(RecordFault::Cut)?;
        Ok(RecordRef {
            flags,
            bytes,
            url,
            title,
            page,
            host,
        })
    }

    /// The record as a [`Doc`], its texts checked to be UTF-8.
    fn to_doc(&self) -> std::result::Result<Doc, RecordFault> {
        let text =
            |b: &[u8], what| String::from_utf8(b.to_vec()).map_err(|_| RecordFault::NotUtf8(what));
        Ok(Doc {
            url: text(self.url, "URL")?,
            crawled: self.flags & 1 == 1,
            bytes: self.bytes,
            title: text(self.title, "title")?,
            page: self.page,
            host: self.host,
        })
    }
}

impl DocTable {
    /// Opens and checks a doc table.
    pub fn open(path: impl AsRef<Path>) -> Result<DocTable> {
        let c = DOCS.open(path)?;
        let docs = c.meta()["docs"].as_u64();
        if docs != Some(c.records()) {
            return Err(c.meta_error(format!(
                "metadata says {docs:?} docs, the block index {}",
                c.records()
            )));
        }
        let firsts = c
            .blocks()
            .iter()
            .scan(0u64, |next, b| {
                let first = *next;
                *next = next.saturating_add(b.records);
                Some(first)
            })
            .collect();
        Ok(DocTable { c, firsts })
    }

    /// The underlying container.
    pub fn container(&self) -> &Container {
        &self.c
    }

    /// Number of docs.
    pub fn len(&self) -> u64 {
        self.c.records()
    }

    /// `true` if the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Crawled docs.
    pub fn crawled(&self) -> u64 {
        self.c.meta()["crawled"].as_u64().unwrap_or(0)
    }

    /// Decodes block `i` into its docs, checking the encoding.
    pub fn decode_block(&self, i: usize, raw: &[u8]) -> Result<Vec<Doc>> {
        let entry = &self.c.blocks()[i];
        let mut docs = Vec::with_capacity((entry.records as usize).min(raw.len() / 4));
        self.walk_block(i, raw, |n, _, r| {
            docs.push(r.to_doc().map_err(|what| self.bad_record(i, n, what))?);
            Ok(())
        })?;
        Ok(docs)
    }

    /// Block `i`, decompressed (`raw`), with where each record starts: its
    /// docs are then decoded one at a time ([`DocBlock::doc`]). Checks what
    /// [`Self::decode_block`] checks but the records' UTF-8, which is
    /// checked as each is decoded.
    pub fn index_block(&self, i: usize, raw: Vec<u8>) -> Result<DocBlock> {
        let mut starts = Vec::with_capacity(self.c.blocks()[i].records as usize);
        let first = self.walk_block(i, &raw, |_, at, _| {
            starts.push(at);
            Ok(())
        })?;
        Ok(DocBlock {
            block: i,
            first,
            raw,
            starts,
        })
    }

    /// Walks block `i`'s records: `f(n, offset, record)` for the `n`-th, at
    /// `offset` in `raw`. Checks the block's first docID, each record's
    /// framing and the record count; returns the first docID.
    fn walk_block<'a>(
        &self,
        i: usize,
        raw: &'a [u8],
        mut f: impl FnMut(usize, u32, RecordRef<'a>) -> Result<()>,
    ) -> Result<u64> {
        let entry = &self.c.blocks()[i];
        let bad = |detail: String| {
            Error::corrupt(self.c.path(), format!("block {i}"), entry.offset, detail)
        };
        let first = <[u8; 8]>::try_from(entry.key.as_slice())
            .map(u64::from_be_bytes)
            .map_err(|_| bad("first key is not 8 bytes".into()))?;
        if first != self.firsts[i] {
            return Err(bad(format!(
                "first docID is {first}, expected {}",
                self.firsts[i]
            )));
        }
        if u32::try_from(raw.len()).is_err() {
            return Err(bad(format!("{} bytes decoded: too many", raw.len())));
        }
        let mut input = raw;
        let mut n = 0;
        while !input.is_empty() {
            let at = (raw.len() - input.len()) as u32;
            let record = RecordRef::read(&mut input).map_err(|what| self.bad_record(i, n, what))?;
            f(n, at, record)?;
            n += 1;
        }
        if n as u64 != entry.records {
            return Err(bad(format!(
                "{n} docs decoded, the index says {}",
                entry.records
            )));
        }
        Ok(first)
    }

    /// The error for record `n` of block `i`: `what` is wrong with it.
    fn bad_record(&self, i: usize, n: usize, what: RecordFault) -> Error {
        let detail = match what {
            RecordFault::Cut => format!("record {n} is cut short"),
            RecordFault::Flags(flags) => format!("record {n} has unknown flags {flags:#x}"),
            RecordFault::NotUtf8(field) => format!("{field} of record {n} is not UTF-8"),
        };
        Error::corrupt(
            self.c.path(),
            format!("block {i}"),
            self.c.blocks()[i].offset,
            detail,
        )
    }

    /// Document `docid` of `block` (made by [`Self::index_block`] of this
    /// table); `None` when the block does not hold it.
    pub fn doc_in(&self, block: &DocBlock, docid: u64) -> Result<Option<Doc>> {
        let Some((n, &at)) = docid
            .checked_sub(block.first)
            .and_then(|k| usize::try_from(k).ok())
            .and_then(|n| Some((n, block.starts.get(n)?)))
        else {
            return Ok(None);
        };
        let mut input = &block.raw[at as usize..];
        RecordRef::read(&mut input)
            .and_then(|r| r.to_doc())
            .map(Some)
            .map_err(|what| self.bad_record(block.block, n, what))
    }

    /// The block holding `docid`, if the table has it: found by the
    /// blocks' first docIDs (what the container's block index holds, as
    /// numbers rather than byte strings).
    pub fn block_of(&self, docid: u64) -> Option<usize> {
        if docid >= self.len() {
            return None;
        }
        self.firsts.partition_point(|&f| f <= docid).checked_sub(1)
    }

    /// The entry of `docid`: its block is decompressed, and only its record
    /// decoded.
    pub fn get(&self, docid: u64) -> Result<Option<Doc>> {
        let Some(i) = self.block_of(docid) else {
            return Ok(None);
        };
        let block = self.index_block(i, self.c.read_block(i)?)?;
        self.doc_in(&block, docid)
    }

    /// Iterates over all docs in docID order.
    pub fn iter(&self) -> impl Iterator<Item = Result<(u64, Doc)>> + '_ {
        let mut docid = 0u64;
        (0..self.c.blocks().len())
            .map(move |i| {
                self.c
                    .read_block(i)
                    .and_then(|raw| self.decode_block(i, &raw))
            })
            .flat_map(|r| match r {
                Ok(docs) => docs.into_iter().map(Ok).collect::<Vec<_>>(),
                Err(e) => vec![Err(e)],
            })
            .map(move |r| {
                r.map(|d| {
                    let id = docid;
                    docid += 1;
                    (id, d)
                })
            })
    }

    /// A walk through the table by increasing docID: the inner side of a
    /// merge join with a docID-sorted stream.
    pub fn walk(&self) -> DocWalk<'_> {
        DocWalk {
            table: self,
            iter: Box::new(self.iter()),
            current: None,
        }
    }

    /// Reads every block and checks every checksum and record.
    pub fn verify(&self) -> Result<()> {
        let mut crawled = 0;
        self.c.verify(|i, _, raw| {
            crawled += self
                .decode_block(i, raw)?
                .iter()
                .filter(|d| d.crawled)
                .count() as u64;
            Ok(())
        })?;
        if crawled != self.crawled() {
            return Err(self.c.meta_error(format!(
                "metadata says {} crawled, the blocks hold {crawled}",
                self.crawled()
            )));
        }
        Ok(())
    }
}

/// Docs read in one sequential pass, asked for by non-decreasing docID (see
/// [`DocTable::walk`]).
pub struct DocWalk<'a> {
    table: &'a DocTable,
    iter: Box<dyn Iterator<Item = Result<(u64, Doc)>> + 'a>,
    current: Option<(u64, Doc)>,
}

impl DocWalk<'_> {
    /// The doc `id`; `id` must not be below the one asked for before.
    pub fn get(&mut self, id: u64) -> Result<&Doc> {
        while self.current.as_ref().is_none_or(|(c, _)| *c < id) {
            match self.iter.next() {
                Some(r) => self.current = Some(r?),
                None => break,
            }
        }
        match &self.current {
            Some((c, d)) if *c == id => Ok(d),
            _ => Err(Error::corrupt(
                self.table.container().path(),
                "doc table",
                0,
                format!("docID {id} is missing (or was asked for out of order)"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn roundtrip(docs in proptest::collection::vec(
            (".{0,40}", any::<bool>(), any::<u64>(), ".{0,30}", any::<Option<u64>>(), any::<u64>()), 0..3000)) {
            let docs: Vec<Doc> = docs.into_iter()
                .map(|(url, crawled, bytes, title, page, host)| Doc { url, crawled, bytes, title, page, host }).collect();
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("d.wm");
            let mut w = DocWriter::create(&p, "test").unwrap();
            for d in &docs { w.push(d).unwrap(); }
            w.finish().unwrap();
            let t = DocTable::open(&p).unwrap();
            t.verify().unwrap();
            let back: Vec<Doc> = t.iter().map(|r| r.unwrap().1).collect();
            prop_assert_eq!(&back, &docs);
            for id in [0u64, 1, docs.len() as u64 / 2, (docs.len() as u64).saturating_sub(1)] {
                prop_assert_eq!(t.get(id).unwrap(), docs.get(id as usize).cloned());
            }
            prop_assert_eq!(t.get(docs.len() as u64 + 5).unwrap(), None);
            // Every doc read alone from its indexed block, as the store reads
            // them, equals the whole block's decoding.
            let c = t.container();
            for i in 0..c.blocks().len() {
                let block = t.index_block(i, c.read_block(i).unwrap()).unwrap();
                let first = t.firsts[i];
                for (k, d) in t.decode_block(i, &c.read_block(i).unwrap()).unwrap().iter().enumerate() {
                    prop_assert_eq!(t.doc_in(&block, first + k as u64).unwrap(), Some(d.clone()));
                }
                prop_assert_eq!(t.doc_in(&block, first + c.blocks()[i].records).unwrap(), None);
                prop_assert_eq!(t.doc_in(&block, first.wrapping_sub(1)).unwrap(), None);
            }
        }
    }

    /// A table of one block whose records are `records` (each given whole).
    fn raw_table(dir: &Path, records: &[Vec<u8>]) -> std::path::PathBuf {
        let p = dir.join("docs.wm");
        let mut w = ContainerWriter::create(&p, DOCS.tag, DOCS.version, &json!({"source": "test"}))
            .unwrap();
        w.write_block(
            BlockCodec::Zstd(3),
            &0u64.to_be_bytes(),
            records.len() as u64,
            &records.concat(),
        )
        .unwrap();
        let n = records.len();
        w.finish(&json!({"docs": n, "crawled": 0})).unwrap();
        p
    }

    /// A record with `title` as its title's bytes.
    fn record(flags: u8, title: &[u8]) -> Vec<u8> {
        let mut r = vec![flags];
        varint::put(&mut r, 7);
        varint::put_bytes(&mut r, b"http://a.example/");
        varint::put_bytes(&mut r, title);
        varint::put(&mut r, 0);
        r
    }

    #[test]
    fn a_record_not_utf8_is_named_and_its_neighbours_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = raw_table(
            dir.path(),
            &[record(0, b"ok"), record(0, b"\xffbad"), record(0, b"fine")],
        );
        let t = DocTable::open(&p).unwrap();
        assert_eq!(t.get(0).unwrap().unwrap().title, "ok");
        assert_eq!(t.get(2).unwrap().unwrap().title, "fine");
        let e = t.get(1).unwrap_err().to_string();
        assert!(e.contains("docs.wm") && e.contains("block 0"), "{e}");
        assert!(e.contains("title of record 1 is not UTF-8"), "{e}");
        let e = t.verify().unwrap_err().to_string();
        assert!(e.contains("title of record 1 is not UTF-8"), "{e}");
    }

    #[test]
    fn a_block_with_a_bad_frame_is_refused_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut cut = record(0, b"cut");
        cut.truncate(cut.len() - 2);
        for (records, what) in [
            (
                vec![record(0, b"a"), record(0x10, b"b")],
                "record 1 has unknown flags 0x10",
            ),
            (vec![record(0, b"a"), cut], "record 1 is cut short"),
        ] {
            let p = raw_table(dir.path(), &records);
            let t = DocTable::open(&p).unwrap();
            // The first record is sound, but its block's framing is not: a
            // lookup says so rather than trust the block's other offsets.
            let e = t.get(0).unwrap_err().to_string();
            assert!(e.contains("block 0") && e.contains(what), "{e}");
        }
    }
}

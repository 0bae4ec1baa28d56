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
//! zstd blocks of about 64 KiB raw. A block's first key is its first docID as a
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
const BLOCK_BYTES: usize = 64 << 10;

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
        Ok(DocTable { c })
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
        let bad = |detail: String| {
            Error::corrupt(self.c.path(), format!("block {i}"), entry.offset, detail)
        };
        let first = <[u8; 8]>::try_from(entry.key.as_slice())
            .map(u64::from_be_bytes)
            .map_err(|_| bad("first key is not 8 bytes".into()))?;
        let expected_first: u64 = self.c.blocks()[..i].iter().map(|b| b.records).sum();
        if first != expected_first {
            return Err(bad(format!(
                "first docID is {first}, expected {expected_first}"
            )));
        }
        let mut input = raw;
        let mut docs = Vec::with_capacity((entry.records as usize).min(raw.len() / 4));
        while !input.is_empty() {
            let n = docs.len();
            let cut = || bad(format!("record {n} is cut short"));
            let (&flags, rest) = input.split_first().ok_or_else(cut)?;
            input = rest;
            if flags > 3 {
                return Err(bad(format!("record {n} has unknown flags {flags:#x}")));
            }
            let bytes = varint::get(&mut input).ok_or_else(cut)?;
            let text = |input: &mut &[u8], what: &str| -> Result<String> {
                let b = varint::get_bytes(input).ok_or_else(cut)?;
                String::from_utf8(b.to_vec())
                    .map_err(|_| bad(format!("{what} of record {n} is not UTF-8")))
            };
            let url = text(&mut input, "URL")?;
            let title = text(&mut input, "title")?;
            let page = if flags & 2 != 0 {
                Some(varint::get(&mut input).ok_or_else(cut)?)
            } else {
                None
            };
            let host = varint::get(&mut input).ok_or_else(cut)?;
            docs.push(Doc {
                url,
                crawled: flags & 1 == 1,
                bytes,
                title,
                page,
                host,
            });
        }
        if docs.len() as u64 != entry.records {
            return Err(bad(format!(
                "{} docs decoded, the index says {}",
                docs.len(),
                entry.records
            )));
        }
        Ok(docs)
    }

    /// The entry of `docid`.
    pub fn get(&self, docid: u64) -> Result<Option<Doc>> {
        let Some(i) = self.c.find_block(&docid.to_be_bytes()) else {
            return Ok(None);
        };
        let first = self.c.blocks()[i]
            .key
            .as_slice()
            .try_into()
            .map(u64::from_be_bytes)
            .unwrap_or(0);
        let docs = self.decode_block(i, &self.c.read_block(i)?)?;
        Ok(docs.into_iter().nth((docid - first) as usize))
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
        }
    }
}

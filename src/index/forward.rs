//! Forward barrels: the `forward` container kind (version 1), the indexer's
//! output and the sorter's input (Brin & Page §4.2.6).
//!
//! The wordID range is split into barrels ([`super::lexicon`] says how); the
//! indexer writes each document's hits into the barrels of their words: per
//! document and barrel, one record listing the document's words of that
//! barrel (as offsets from the barrel's first wordID) with their hit lists.
//! Like the paper's, the barrels are only partially sorted: records come in
//! the order the indexer meets documents — first the page texts in page
//! order (*part 0*: plain hits), then every document's URL, title and anchor
//! texts in docID order (*part 1*: fancy hits; anchor hits belong to the
//! document the link points to) — and the sorter re-sorts them by (wordID,
//! docID). A document has at most one record of each part per barrel.
//!
//! Forward barrels are temporary: the `index` stage writes them into its
//! temporary directory and removes them when it finishes. While they exist
//! they are ordinary files: `webmill verify` and `webmill dump` read them.
//!
//! # Layout
//!
//! Container parameters `{"barrel": b, "first_word": w₀, "end_word": w₁}`,
//! footer metadata `{"records": R, "hits": H}`. Raw blocks whose key is the
//! big-endian `u64` number of their first record (records numbered from 0 in
//! file order) and whose record count is the records in them; a block closes
//! once it reaches the writer's block size after a record. Records back to
//! back:
//!
//! ```text
//! varint  docID · 2 + part     part 0: page text (plain hits); 1: URL, title, anchors (fancy hits)
//! varint  n ≥ 1                words in the record
//! n × {
//!   varint  wordID − previous  increasing; the first relative to w₀
//!   varint  c ≥ 1              hits
//!   c × u16                    the hits, little-endian (see `hit`)
//! }
//! ```
//!
//! The paper stores each word as a 24-bit wordID offset and an 8-bit hit
//! count (255 escaping to two more bytes); varints are smaller here because
//! the words of a record are increasing (the `index` stage's figures give
//! both sizes as measured on the job).

use std::path::Path;

use serde_json::json;

use super::hit::Hit;
use crate::container::{BlockCodec, Container, ContainerWriter, FileKind};
use crate::error::{Error, Result};
use crate::varint;

/// The `forward` kind.
pub const FORWARD: FileKind = FileKind {
    tag: "forward",
    version: 1,
    what:
        "forward barrel: per docID, its words of one wordID range with their hit lists (temporary)",
    verify: |path| ForwardBarrel::open(path)?.verify().map(drop),
    dump,
};

/// Which part of a document a record holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// The page's visible words: plain hits.
    Text = 0,
    /// The URL, title and anchor texts: fancy hits.
    Fancy = 1,
}

impl Part {
    /// From its bit.
    pub fn from_bit(b: u64) -> Part {
        if b & 1 == 0 {
            Part::Text
        } else {
            Part::Fancy
        }
    }
}

/// Appends one record: `doc`'s words of a barrel starting at `first_word`,
/// as (wordID, hits) with wordIDs increasing and hit lists not empty.
pub fn encode_record(
    out: &mut Vec<u8>,
    doc: u64,
    part: Part,
    first_word: u32,
    words: &[(u32, &[Hit])],
) {
    encode_record_with(
        out,
        doc,
        part,
        first_word,
        words.iter().map(|&(w, hits)| (w, hits.iter().copied())),
    );
}

/// [`encode_record`] of words whose hits come from iterators: the indexer
/// gathers each word's hits from the document through its sorted keys as
/// they are written, instead of copying them into a buffer first.
pub fn encode_record_with<H: ExactSizeIterator<Item = Hit>>(
    out: &mut Vec<u8>,
    doc: u64,
    part: Part,
    first_word: u32,
    words: impl ExactSizeIterator<Item = (u32, H)>,
) {
    varint::put(out, doc << 1 | part as u64);
    varint::put(out, words.len() as u64);
    let mut prev = first_word;
    for (w, hits) in words {
        debug_assert!(w >= prev);
        debug_assert_ne!(hits.len(), 0);
        varint::put(out, u64::from(w - prev));
        prev = w;
        varint::put(out, hits.len() as u64);
        // One resize and fixed two-byte stores, not an `extend_from_slice`
        // (a capacity test and a copy) per hit: `encode_record`, pushing
        // hit by hit, was 3% of the index build's instructions on rust-doc.
        let start = out.len();
        out.resize(start + 2 * hits.len(), 0);
        for (b, h) in out[start..].chunks_exact_mut(2).zip(hits) {
            b.copy_from_slice(&h.0.to_le_bytes());
        }
    }
}

/// Writes a forward barrel from pre-encoded records.
pub struct ForwardWriter {
    w: ContainerWriter,
    block: Vec<u8>,
    block_bytes: usize,
    block_first: u64,
    block_records: u64,
    records: u64,
    hits: u64,
}

impl ForwardWriter {
    /// Starts forward barrel `barrel` (wordIDs `first_word..end_word`) with
    /// blocks of about `block_bytes`.
    pub fn create(
        path: impl AsRef<Path>,
        barrel: u32,
        first_word: u32,
        end_word: u32,
        block_bytes: usize,
    ) -> Result<ForwardWriter> {
        let params = json!({"barrel": barrel, "first_word": first_word, "end_word": end_word});
        let mut w =
            ContainerWriter::create_buffered(path, FORWARD.tag, FORWARD.version, &params, 8 << 10)?;
        w.set_durable(false);
        Ok(ForwardWriter {
            w,
            block: Vec::with_capacity(block_bytes + 1024),
            block_bytes,
            block_first: 0,
            block_records: 0,
            records: 0,
            hits: 0,
        })
    }

    /// Appends one record encoded by [`encode_record`], holding `hits` hits.
    pub fn push(&mut self, record: &[u8], hits: u64) -> Result<()> {
        if self.block_records == 0 {
            self.block_first = self.records;
        }
        self.block.extend_from_slice(record);
        self.block_records += 1;
        self.records += 1;
        self.hits += hits;
        if self.block.len() >= self.block_bytes {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.block_records > 0 {
            self.w.write_block(
                BlockCodec::Raw,
                &self.block_first.to_be_bytes(),
                self.block_records,
                &self.block,
            )?;
        }
        self.block.clear();
        self.block_records = 0;
        Ok(())
    }

    /// Records written.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Publishes the barrel; returns its size in bytes.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        let meta = json!({"records": self.records, "hits": self.hits});
        Ok(self.w.finish(&meta)?.1)
    }
}

/// An open forward barrel.
pub struct ForwardBarrel {
    c: Container,
    first_word: u32,
    end_word: u32,
}

impl ForwardBarrel {
    /// Opens a forward barrel.
    pub fn open(path: impl AsRef<Path>) -> Result<ForwardBarrel> {
        let c = FORWARD.open(path)?;
        let get = |k: &str| {
            c.params()[k]
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| {
                    Error::corrupt(
                        c.path(),
                        "header parameters",
                        0,
                        format!("bad or missing {k}"),
                    )
                })
        };
        let (first_word, end_word) = (get("first_word")?, get("end_word")?);
        Ok(ForwardBarrel {
            c,
            first_word,
            end_word,
        })
    }

    /// The container.
    pub fn container(&self) -> &Container {
        &self.c
    }

    /// Records in the barrel.
    pub fn records(&self) -> u64 {
        self.c.records()
    }

    /// Calls `f(docID, part, wordID, hits)` for every word of every record
    /// in file order, from record `skip` on, checking the encoding.
    pub fn for_each(
        &self,
        skip: u64,
        mut f: impl FnMut(u64, Part, u32, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut raw = Vec::new();
        let mut buf = (Vec::new(), Vec::new());
        self.walk(skip, &mut raw, &mut buf, false, |doc, part, w, hits, _| {
            f(doc, part, w, hits)
        })
    }

    /// Reads the whole barrel into `all` (its blocks' payloads back to back)
    /// and calls `f(docID, part, wordID, hits, at)` for every word of every
    /// record in file order, `at` being where `hits` starts in `all`,
    /// checking the encoding. `buf` holds a block on its way (stored,
    /// decoded). The caller bounds the memory by [`Container::raw_bytes`],
    /// and may pass the same buffers from barrel to barrel: they keep their
    /// capacity, so their pages are not faulted in afresh.
    pub fn load(
        &self,
        all: &mut Vec<u8>,
        buf: &mut (Vec<u8>, Vec<u8>),
        f: impl FnMut(u64, Part, u32, &[u8], usize) -> Result<()>,
    ) -> Result<()> {
        all.clear();
        let raw = usize::try_from(self.c.raw_bytes()).unwrap_or(usize::MAX);
        all.reserve_exact(raw);
        self.walk(0, all, buf, true, f)
    }

    /// [`ForwardBarrel::for_each`] and [`ForwardBarrel::load`]: each block is
    /// read into `raw` (replacing it, or appended when `keep`, through
    /// `buf`).
    fn walk(
        &self,
        skip: u64,
        raw: &mut Vec<u8>,
        buf: &mut (Vec<u8>, Vec<u8>),
        keep: bool,
        mut f: impl FnMut(u64, Part, u32, &[u8], usize) -> Result<()>,
    ) -> Result<()> {
        let (scratch, block) = buf;
        let mut first_record = 0u64;
        for i in 0..self.c.blocks().len() {
            let e = &self.c.blocks()[i];
            let records = e.records;
            let key = <[u8; 8]>::try_from(e.key.as_slice())
                .map(u64::from_be_bytes)
                .ok();
            let bad = |detail: String| {
                Error::corrupt(self.c.path(), format!("block {i}"), e.offset, detail)
            };
            if key != Some(first_record) {
                return Err(bad(format!(
                    "first key {key:?}, expected record {first_record}"
                )));
            }
            if first_record + records <= skip {
                first_record += records;
                continue;
            }
            let start = if keep {
                self.c.read_block_into(i, scratch, block)?;
                let start = raw.len();
                raw.extend_from_slice(block);
                start
            } else {
                self.c.read_block_into(i, scratch, raw)?;
                0
            };
            let base = raw.as_ptr() as usize;
            let mut input = &raw[start..];
            for r in 0..records {
                let n = first_record + r;
                decode_record(
                    &mut input,
                    self.first_word,
                    self.end_word,
                    |doc, part, w, hits| {
                        if n >= skip {
                            f(doc, part, w, hits, hits.as_ptr() as usize - base)
                        } else {
                            Ok(())
                        }
                    },
                )
                .map_err(|e| match e {
                    Error::Record(d) => bad(format!("record {n}: {d}")),
                    e => e,
                })?;
            }
            if !input.is_empty() {
                return Err(bad(format!("{} bytes after the last record", input.len())));
            }
            first_record += records;
        }
        Ok(())
    }

    /// Checks every byte and record; returns (records, hits).
    pub fn verify(&self) -> Result<(u64, u64)> {
        self.c.verify(|_, _, _| Ok(()))?;
        let (mut records, mut hits) = (0u64, 0u64);
        let mut last = None;
        self.for_each(0, |doc, part, _, h| {
            if last != Some((doc, part)) {
                records += 1;
                last = Some((doc, part));
            }
            hits += (h.len() / 2) as u64;
            Ok(())
        })?;
        let want = json!({"records": self.records(), "hits": hits});
        if self.c.meta() != &want || records > self.records() {
            return Err(self.c.meta_error(format!(
                "metadata says {}, the blocks hold {records} records and {hits} hits",
                self.c.meta()
            )));
        }
        Ok((self.records(), hits))
    }
}

/// Writes `path`'s records as TSV, one line per (document, part, word).
pub fn dump(path: &Path, out: &mut dyn std::io::Write) -> Result<()> {
    use crate::error::IoContext;
    let f = ForwardBarrel::open(path)?;
    writeln!(out, "# docid\tpart\twordid\thits").at("stdout")?;
    let mut line = String::new();
    f.for_each(0, |doc, part, word, hits| {
        line.clear();
        for (k, h) in hits.chunks_exact(2).enumerate() {
            if k > 0 {
                line.push(' ');
            }
            line.push_str(&Hit(u16::from_le_bytes([h[0], h[1]])).to_string());
        }
        let part = if part == Part::Text { "text" } else { "fancy" };
        writeln!(out, "{doc}\t{part}\t{word}\t{line}").at("stdout")
    })
}

/// Decodes one record, calling `f(docID, part, wordID, hit bytes)` per word.
/// Errors are [`Error::Record`] for a malformed record.
pub fn decode_record(
    input: &mut &[u8],
    first_word: u32,
    end_word: u32,
    mut f: impl FnMut(u64, Part, u32, &[u8]) -> Result<()>,
) -> Result<()> {
    let cut = || Error::record("record cut short");
    let head = varint::get(input).ok_or_else(cut)?;
    let (doc, part) = (head >> 1, Part::from_bit(head));
    let n = varint::get(input).ok_or_else(cut)?;
    if n == 0 {
        return Err(Error::record("record without words"));
    }
    let mut word = u64::from(first_word);
    for k in 0..n {
        let delta = varint::get(input).ok_or_else(cut)?;
        if k > 0 && delta == 0 {
            return Err(Error::record("words not increasing"));
        }
        word += delta;
        if word >= u64::from(end_word) {
            return Err(Error::record(format!(
                "wordID {word} outside the barrel (end {end_word})"
            )));
        }
        let c = varint::get(input).ok_or_else(cut)?;
        let len = c
            .checked_mul(2)
            .filter(|&l| c > 0 && l <= input.len() as u64)
            .ok_or_else(|| Error::record(format!("hit count {c} does not fit")))?
            as usize;
        let (hits, rest) = input.split_at(len);
        // Every hit checked without an exit per hit, a loop the compiler
        // vectorizes (the sorter reads every hit through here).
        let fancy = part == Part::Fancy;
        let wrong = hits.chunks_exact(2).fold(false, |wrong, h| {
            wrong | (Hit(u16::from_le_bytes([h[0], h[1]])).is_fancy() != fancy)
        });
        if wrong {
            return Err(Error::record(format!(
                "a {} hit in a part-{} record",
                if part == Part::Text { "fancy" } else { "plain" },
                part as u8
            )));
        }
        *input = rest;
        f(doc, part, word as u32, hits)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Rec = (u64, bool, Vec<(u32, Vec<u16>)>);

    fn records() -> impl Strategy<Value = Vec<Rec>> {
        proptest::collection::vec(
            (
                0u64..1 << 40,
                any::<bool>(),
                proptest::collection::btree_map(
                    100u32..2000,
                    proptest::collection::vec(0u16..0x7000, 1..5),
                    1..8,
                ),
            )
                .prop_map(|(doc, fancy, words)| {
                    let words = words
                        .into_iter()
                        .map(|(w, hits)| {
                            let hits = hits
                                .into_iter()
                                .map(|h| if fancy { h | 0x7000 } else { h & 0x6fff })
                                .collect();
                            (w, hits)
                        })
                        .collect();
                    (doc, fancy, words)
                }),
            0..200,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn records_roundtrip(recs in records(), block in 16usize..2000, skip in 0u64..50) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f.wm");
            let mut w = ForwardWriter::create(&path, 1, 100, 2000, block).unwrap();
            let mut want = Vec::new();
            for (k, (doc, fancy, words)) in recs.iter().enumerate() {
                let part = if *fancy { Part::Fancy } else { Part::Text };
                let hits: Vec<Vec<Hit>> = words.iter().map(|(_, h)| h.iter().map(|&v| Hit(v)).collect()).collect();
                let entries: Vec<(u32, &[Hit])> = words.iter().zip(&hits).map(|((wd, _), h)| (*wd, &h[..])).collect();
                let mut rec = Vec::new();
                encode_record(&mut rec, *doc, part, 100, &entries);
                w.push(&rec, hits.iter().map(|h| h.len() as u64).sum()).unwrap();
                if k as u64 >= skip {
                    for (wd, h) in words {
                        want.push((*doc, part, *wd, h.clone()));
                    }
                }
            }
            w.finish().unwrap();
            let f = ForwardBarrel::open(&path).unwrap();
            f.verify().unwrap();
            let mut got = Vec::new();
            f.for_each(skip, |doc, part, wd, hits| {
                got.push((doc, part, wd, hits.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect::<Vec<_>>()));
                Ok(())
            }).unwrap();
            prop_assert_eq!(got, want);
        }
    }
}

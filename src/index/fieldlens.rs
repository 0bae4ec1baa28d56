//! Field lengths: the `fieldlen` container kind (version 1; the file is `fieldlens.wm`), what BM25 and
//! BM25F normalize a word's frequency by.
//!
//! Per docID, the number of hits (words) the index holds of the document in
//! each of five fields, in this order: **title**, **anchor** (the text of
//! the links to it), **URL**, **large** (plain hits in large type, relative
//! font ≥ 3: headings) and **body** (every other plain hit). Dense: the
//! n-th record is docID n; a document without hits has five zeros.
//!
//! # Layout
//!
//! Raw blocks (checksummed, not compressed, so a block is read in place) of
//! at most [`BLOCK_DOCS`] records; a block's first key is its first docID
//! as a big-endian `u64`, its record count the docs in it, and every block
//! but the last is full. A record is five little-endian `u32`, 20 bytes:
//!
//! ```text
//! title u32 | anchor u32 | url u32 | large u32 | body u32
//! ```
//!
//! Header parameters: `{"docs": N, "fields": ["title", "anchor", "url",
//! "large", "body"]}`. Footer metadata: `{"sums": [5 × u64]}`, each field's
//! total over the documents (the averages BM25 needs, without a pass).
//!
//! Invariants (checked by `verify`): N records in docID order; the sums are
//! the columns' sums.

use std::path::Path;

use serde_json::{json, Value};

use super::hit::Hit;
use super::postings;
use crate::container::{BlockCodec, Container, ContainerWriter, FileKind};
use crate::error::{Error, IoContext, Result};
use crate::sort::Sorted;

/// Fields per document.
pub const FIELDS: usize = 5;
/// The fields' names, in record order.
pub const FIELD_NAMES: [&str; FIELDS] = ["title", "anchor", "url", "large", "body"];
/// Records per block (320 KiB).
pub const BLOCK_DOCS: usize = 1 << 14;
const RECORD: usize = 4 * FIELDS;

/// The field of a hit: title, anchor, URL, large type (relative font ≥
/// 3), body (the other plain hits, and meta hits).
///
/// Read from a table of the hit's bits 14..8 (its font, and its type when
/// the font is 7): one load in place of [`Hit::fields`]' branches, for a
/// count that runs once or twice per hit of the index build (1.9% of its
/// instructions on rust-doc). The table is the postings' class table
/// ([`postings::class_of`]) mapped through [`FIELD_OF_CLASS`], so a hit's
/// field and its class cannot disagree.
#[inline]
pub fn field_of_hit(h: Hit) -> usize {
    usize::from(FIELD_OF_HIGH_BITS[usize::from((h.0 >> 8) & 0x7f)])
}

/// The field of each postings class: the three smaller plain fonts and
/// the other fancy hits (meta) are body text.
const FIELD_OF_CLASS: [u8; postings::CLASSES] = {
    let mut t = [4u8; postings::CLASSES];
    t[postings::LARGE] = 3;
    t[postings::URL] = 2;
    t[postings::ANCHOR] = 1;
    t[postings::TITLE] = 0;
    t
};

/// [`field_of_hit`] by the hit's bits 14..8.
const FIELD_OF_HIGH_BITS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        t[i] = FIELD_OF_CLASS[postings::CLASS_OF_HIGH_BITS[i] as usize];
        i += 1;
    }
    t
};

/// Writes the field lengths of `docs` documents to `path` from records
/// `(docID · 8 + field, hits)` in key order (equal keys already added);
/// documents without a record have zeros. Returns the file's size.
pub fn write_sorted(mut sorted: Sorted<(u64, u64)>, docs: u64, path: &Path) -> Result<u64> {
    let mut w = FieldLengthsWriter::create(path, docs)?;
    let mut doc = 0u64;
    let mut cur = [0u32; FIELDS];
    while let Some((key, n)) = sorted.next_record()? {
        let (d, f) = (key / 8, (key % 8) as usize);
        if d >= docs || f >= FIELDS {
            return Err(Error::internal(format!(
                "field length of docID {d} field {f} (of {docs} docs, {FIELDS} fields)"
            )));
        }
        while doc < d {
            w.push(&cur)?;
            cur = [0; FIELDS];
            doc += 1;
        }
        cur[f] = cur[f].saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
    }
    while doc < docs {
        w.push(&cur)?;
        cur = [0; FIELDS];
        doc += 1;
    }
    w.finish()
}

/// The field-lengths kind.
pub const FIELDLENS: FileKind = FileKind {
    tag: "fieldlen",
    version: 1,
    what: "per docID, its hits in the title, anchor, URL, large-type and body fields (BM25F's lengths)",
    verify: |path| FieldLengths::open(path)?.verify(),
    dump: |path, out| {
        let f = FieldLengths::open(path)?;
        writeln!(out, "# docid\t{}", FIELD_NAMES.join("\t")).at("stdout")?;
        let mut doc = 0u64;
        for i in 0..f.c.blocks().len() {
            for r in f.block(i)? {
                let cols: Vec<String> = r.iter().map(u32::to_string).collect();
                writeln!(out, "{doc}\t{}", cols.join("\t")).at("stdout")?;
                doc += 1;
            }
        }
        Ok(())
    },
};

/// Writes field lengths docID by docID.
pub struct FieldLengthsWriter {
    w: ContainerWriter,
    block: Vec<u8>,
    next: u64,
    docs: u64,
    sums: [u64; FIELDS],
}

impl FieldLengthsWriter {
    /// Starts a file for `docs` documents.
    pub fn create(path: impl AsRef<Path>, docs: u64) -> Result<FieldLengthsWriter> {
        Ok(FieldLengthsWriter {
            w: ContainerWriter::create(
                path,
                FIELDLENS.tag,
                FIELDLENS.version,
                &json!({ "docs": docs, "fields": FIELD_NAMES }),
            )?,
            block: Vec::with_capacity(BLOCK_DOCS * RECORD),
            next: 0,
            docs,
            sums: [0; FIELDS],
        })
    }

    /// Appends the next docID's lengths.
    pub fn push(&mut self, lens: &[u32; FIELDS]) -> Result<()> {
        for (s, &l) in self.sums.iter_mut().zip(lens) {
            *s += u64::from(l);
            self.block.extend_from_slice(&l.to_le_bytes());
        }
        self.next += 1;
        if self.block.len() == BLOCK_DOCS * RECORD {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let n = (self.block.len() / RECORD) as u64;
        let first = self.next - n;
        self.w
            .write_block(BlockCodec::Raw, &first.to_be_bytes(), n, &self.block)?;
        self.block.clear();
        Ok(())
    }

    /// Publishes the file; returns its size.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        if self.next != self.docs {
            return Err(Error::internal(format!(
                "{}: {} docs written, {} announced",
                self.w.path().display(),
                self.next,
                self.docs
            )));
        }
        Ok(self.w.finish(&json!({ "sums": self.sums }))?.1)
    }
}

/// An open field-lengths file.
pub struct FieldLengths {
    c: Container,
    docs: u64,
    sums: [u64; FIELDS],
}

impl FieldLengths {
    /// Opens and checks the structure of a field-lengths file.
    pub fn open(path: impl AsRef<Path>) -> Result<FieldLengths> {
        let c = FIELDLENS.open(path)?;
        let docs = c.params()["docs"].as_u64().unwrap_or(u64::MAX);
        if docs != c.records() {
            return Err(Error::corrupt(
                c.path(),
                "header parameters",
                0,
                format!("docs is {docs}, the blocks hold {} records", c.records()),
            ));
        }
        let mut sums = [0u64; FIELDS];
        let meta: &Value = &c.meta()["sums"];
        for (i, s) in sums.iter_mut().enumerate() {
            *s = meta[i].as_u64().ok_or_else(|| {
                c.meta_error(format!("sums[{i}] is {}, expected a count", meta[i]))
            })?;
        }
        let mut expected = 0u64;
        for (i, b) in c.blocks().iter().enumerate() {
            let first = <[u8; 8]>::try_from(b.key.as_slice())
                .map(u64::from_be_bytes)
                .ok();
            let last = i + 1 == c.blocks().len();
            if first != Some(expected)
                || b.records.checked_mul(RECORD as u64) != Some(b.raw)
                || b.stored != b.raw
                || b.records > BLOCK_DOCS as u64
                || (b.records != BLOCK_DOCS as u64 && !last)
            {
                return Err(Error::corrupt(
                    c.path(),
                    format!("block {i}"),
                    b.offset,
                    format!("not a raw block of docs {expected}.. in {BLOCK_DOCS}-doc blocks of {RECORD}-byte records"),
                ));
            }
            expected += b.records;
        }
        Ok(FieldLengths { c, docs, sums })
    }

    /// Documents.
    pub fn docs(&self) -> u64 {
        self.docs
    }

    /// Each field's total over the documents.
    pub fn sums(&self) -> [u64; FIELDS] {
        self.sums
    }

    /// The fields' average lengths over the documents.
    pub fn averages(&self) -> [f64; FIELDS] {
        let n = self.docs.max(1) as f64;
        self.sums.map(|s| s as f64 / n)
    }

    /// Blocks of the file ([`BLOCK_DOCS`] documents each, the last fewer).
    pub fn blocks(&self) -> usize {
        self.c.blocks().len()
    }

    /// The records of block `i`.
    pub fn block(&self, i: usize) -> Result<Vec<[u32; FIELDS]>> {
        let (mut scratch, mut raw) = (Vec::new(), Vec::new());
        self.c.read_block_into(i, &mut scratch, &mut raw)?;
        Ok(raw
            .chunks_exact(RECORD)
            .map(|r| {
                let mut out = [0u32; FIELDS];
                for (o, b) in out.iter_mut().zip(r.chunks_exact(4)) {
                    *o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
                out
            })
            .collect())
    }

    /// Loads every record (docID order).
    pub fn load(&self) -> Result<Vec<[u32; FIELDS]>> {
        let mut all = Vec::with_capacity(self.docs as usize);
        for i in 0..self.c.blocks().len() {
            all.extend(self.block(i)?);
        }
        Ok(all)
    }

    /// The lengths of `doc` (one block read).
    pub fn get(&self, doc: u64) -> Result<[u32; FIELDS]> {
        if doc >= self.docs {
            return Err(Error::internal(format!(
                "docID {doc} past the {} docs of {}",
                self.docs,
                self.c.path().display()
            )));
        }
        let i = (doc / BLOCK_DOCS as u64) as usize;
        let b = self.block(i)?;
        Ok(b[(doc % BLOCK_DOCS as u64) as usize])
    }

    /// Checks every block's checksum and that the sums are the columns'.
    pub fn verify(&self) -> Result<()> {
        let mut sums = [0u64; FIELDS];
        self.c.verify(|_, _, raw| {
            for r in raw.chunks_exact(RECORD) {
                for (s, b) in sums.iter_mut().zip(r.chunks_exact(4)) {
                    *s += u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                }
            }
            Ok(())
        })?;
        if sums != self.sums {
            return Err(self.c.meta_error(format!(
                "sums are {:?}, the records add up to {sums:?}",
                self.sums
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::hit::{FancyType, HitFields};
    use super::*;

    /// The table gives every hit the field its decoded fields say.
    #[test]
    fn field_of_every_hit_is_that_of_its_fields() {
        for v in 0..=u16::MAX {
            let h = Hit(v);
            let by_fields = match h.fields() {
                HitFields::Plain { font, .. } => {
                    if font >= 3 {
                        3
                    } else {
                        4
                    }
                }
                HitFields::Anchor { .. } => 1,
                HitFields::Fancy { kind, .. } => match kind {
                    FancyType::Title => 0,
                    FancyType::Url => 2,
                    _ => 4,
                },
            };
            assert_eq!(field_of_hit(h), by_fields, "{v:#06x}");
        }
    }

    #[test]
    fn round_trip_and_verify() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fieldlens.wm");
        let n = BLOCK_DOCS as u64 * 2 + 7;
        let rec = |d: u64| [d as u32 % 5, 0, 3, (d % 11) as u32, d as u32];
        let mut w = FieldLengthsWriter::create(&p, n).unwrap();
        for d in 0..n {
            w.push(&rec(d)).unwrap();
        }
        w.finish().unwrap();
        let f = FieldLengths::open(&p).unwrap();
        f.verify().unwrap();
        assert_eq!(f.docs(), n);
        assert_eq!(f.get(n - 1).unwrap(), rec(n - 1));
        assert_eq!(f.get(BLOCK_DOCS as u64).unwrap(), rec(BLOCK_DOCS as u64));
        let all = f.load().unwrap();
        assert!(all.iter().enumerate().all(|(d, r)| *r == rec(d as u64)));
        let avg = f.averages();
        assert!((avg[2] - 3.0).abs() < 1e-12);
        assert!(f.get(n).is_err());
        // One record short of what the header announced: refused.
        let mut w = FieldLengthsWriter::create(dir.path().join("short.wm"), 3).unwrap();
        w.push(&rec(0)).unwrap();
        assert!(w.finish().is_err());
    }
}

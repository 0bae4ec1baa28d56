//! The URL table: the `urls` container kind (version 1), fingerprint → docID.
//!
//! Pairs `(fingerprint u64, docID u64)`, little-endian, sorted by fingerprint
//! then docID, in raw (mmap-able) blocks of 4096 pairs whose first key is the
//! block's first fingerprint, big-endian. A lookup finds the block through the
//! index and binary-searches it; several docIDs may share a fingerprint (a
//! 64-bit collision), so callers confirm with the doc table's URL. Being one
//! sorted run, a table is merged with another batch's by a plain merge.
//! Spec: `formats/urls.md`.

use std::path::Path;

use serde_json::json;

use crate::container::{BlockCodec, Container, ContainerWriter, FileKind};
use crate::error::{Error, IoContext, Result};

/// The URL table kind.
pub const URLS: FileKind = FileKind {
    tag: "urls",
    version: 1,
    what: "URL table: (URL fingerprint, docID) pairs sorted by fingerprint",
    verify: |path| {
        let t = UrlTable::open(path)?;
        t.container().verify(|_, _, _| Ok(()))?;
        t.verify()
    },
    dump: |path, out| {
        let t = UrlTable::open(path)?;
        writeln!(out, "# fingerprint\tdocid").at("stdout")?;
        t.for_each(|fp, doc| writeln!(out, "{fp:016x}\t{doc}").at("stdout"))
    },
};
const PAIRS_PER_BLOCK: usize = 4096;

/// Writes a URL table from pairs in sorted order.
pub struct UrlTableWriter {
    w: ContainerWriter,
    block: Vec<u8>,
    first: u64,
    pairs: usize,
    last: Option<(u64, u64)>,
}

impl UrlTableWriter {
    /// Starts a URL table.
    pub fn create(path: impl AsRef<Path>) -> Result<UrlTableWriter> {
        Ok(UrlTableWriter {
            w: ContainerWriter::create(path, URLS.tag, URLS.version, &json!({"hash": "xxh3-64"}))?,
            block: Vec::with_capacity(PAIRS_PER_BLOCK * 16),
            first: 0,
            pairs: 0,
            last: None,
        })
    }

    /// Appends a pair; pairs must come in increasing order.
    pub fn push(&mut self, fp: u64, doc: u64) -> Result<()> {
        if self.last.is_some_and(|l| l >= (fp, doc)) {
            return Err(Error::internal(format!(
                "URL table pair ({fp:016x}, {doc}) out of order"
            )));
        }
        self.last = Some((fp, doc));
        if self.pairs == 0 {
            self.first = fp;
        }
        self.block.extend_from_slice(&fp.to_le_bytes());
        self.block.extend_from_slice(&doc.to_le_bytes());
        self.pairs += 1;
        if self.pairs == PAIRS_PER_BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.pairs > 0 {
            self.w.write_block(
                BlockCodec::Raw,
                &self.first.to_be_bytes(),
                self.pairs as u64,
                &self.block,
            )?;
        }
        self.block.clear();
        self.pairs = 0;
        Ok(())
    }

    /// Publishes the table; returns the number of pairs.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        let n = self.w.records();
        self.w.finish(&json!({ "urls": n }))?;
        Ok(n)
    }
}

/// An open URL table.
pub struct UrlTable {
    c: Container,
}

fn pair(b: &[u8]) -> (u64, u64) {
    let mut fp = [0u8; 8];
    let mut doc = [0u8; 8];
    fp.copy_from_slice(&b[..8]);
    doc.copy_from_slice(&b[8..16]);
    (u64::from_le_bytes(fp), u64::from_le_bytes(doc))
}

impl UrlTable {
    /// Opens a URL table.
    pub fn open(path: impl AsRef<Path>) -> Result<UrlTable> {
        let c = URLS.open(path)?;
        for (i, b) in c.blocks().iter().enumerate() {
            if b.key.len() != 8 || b.raw != b.records * 16 {
                return Err(Error::corrupt(
                    c.path(),
                    format!("block {i}"),
                    b.offset,
                    format!(
                        "{} bytes for {} pairs, key of {} bytes",
                        b.raw,
                        b.records,
                        b.key.len()
                    ),
                ));
            }
        }
        Ok(UrlTable { c })
    }

    /// The container.
    pub fn container(&self) -> &Container {
        &self.c
    }

    /// The docIDs whose URL has fingerprint `fp` (usually one or none).
    pub fn lookup(&self, fp: u64) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        // The pairs for `fp` may start in the block before the first one whose
        // key is `fp` (equal keys can straddle a block boundary).
        let Some(mut i) = self.c.find_block(&fp.to_be_bytes()) else {
            return Ok(out);
        };
        while i > 0 && self.c.blocks()[i].key == fp.to_be_bytes() {
            i -= 1;
        }
        for b in i..self.c.blocks().len() {
            let map = self.c.map_block(b)?;
            let pairs = map.len() / 16;
            let start = partition(pairs, |k| pair(&map[k * 16..]).0 < fp);
            let mut k = start;
            while k < pairs {
                let (f, d) = pair(&map[k * 16..]);
                if f != fp {
                    return Ok(out);
                }
                out.push(d);
                k += 1;
            }
        }
        Ok(out)
    }

    /// Every pair in order (for dumps and checks).
    pub fn for_each(&self, mut f: impl FnMut(u64, u64) -> Result<()>) -> Result<()> {
        for b in 0..self.c.blocks().len() {
            let map = self.c.map_block(b)?;
            for chunk in map.chunks_exact(16) {
                let (fp, d) = pair(chunk);
                f(fp, d)?;
            }
        }
        Ok(())
    }

    /// Checks every block: checksums, order, first keys.
    pub fn verify(&self) -> Result<()> {
        let mut last: Option<(u64, u64)> = None;
        for b in 0..self.c.blocks().len() {
            let map = self.c.map_block(b)?;
            let entry = &self.c.blocks()[b];
            if map.len() < 16 {
                return Err(Error::corrupt(
                    self.c.path(),
                    format!("block {b}"),
                    entry.offset,
                    "empty block".to_string(),
                ));
            }
            let first = pair(&map[..16]).0;
            if entry.key != first.to_be_bytes() {
                return Err(Error::corrupt(
                    self.c.path(),
                    format!("block {b}"),
                    entry.offset,
                    "first key is not the block's first fingerprint".to_string(),
                ));
            }
            for chunk in map.chunks_exact(16) {
                let p = pair(chunk);
                if last.is_some_and(|l| l >= p) {
                    return Err(Error::corrupt(
                        self.c.path(),
                        format!("block {b}"),
                        entry.offset,
                        format!("pair ({:016x}, {}) out of order", p.0, p.1),
                    ));
                }
                last = Some(p);
            }
        }
        Ok(())
    }
}

/// The first index in `0..n` for which `pred` is false (pred true then false).
fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn lookups_match_a_map(mut pairs in proptest::collection::vec((0u64..3000, any::<u64>()), 0..12000)) {
            pairs.sort();
            pairs.dedup();
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("urls.wm");
            let mut w = UrlTableWriter::create(&p).unwrap();
            for &(f, d) in &pairs { w.push(f, d).unwrap(); }
            w.finish().unwrap();
            let t = UrlTable::open(&p).unwrap();
            t.verify().unwrap();
            for fp in [0u64, 1, 17, 1500, 2999, 5000] {
                let want: Vec<u64> = pairs.iter().filter(|p| p.0 == fp).map(|p| p.1).collect();
                prop_assert_eq!(t.lookup(fp).unwrap(), want);
            }
        }
    }
}

//! Rank vectors: the `ranks` container kind (version 1).
//!
//! A dense vector of `f64`, one value per docID, little-endian, stored in *raw*
//! blocks (8-byte aligned, so a block can be memory-mapped and read as
//! `&[f64]`) of [`BLOCK_VALUES`] values each (the last may be shorter). A block's
//! first key is its first docID as a big-endian `u64`; its record count is the
//! number of values in it.
//!
//! Header parameters: whatever the producer records (PageRank's damping,
//! tolerance, …) plus `"len"`, the vector's length. Footer metadata is the
//! producer's (iterations, final L1 change, convergence history).
//!
//! Vectors too large for memory are written and read sequentially, a block at a
//! time, with positioned reads (no mapping, so the resident set stays small).

use std::path::Path;

use serde_json::Value;

use crate::container::{BlockCodec, Container, ContainerWriter, FileKind};
use crate::error::{Error, IoContext, Result};

/// The rank vector kind (PageRank, and the stage's scratch vectors).
pub const RANKS: FileKind = FileKind {
    tag: "ranks",
    version: 1,
    what: "vector of f64 per docID, raw blocks (PageRank)",
    verify: |path| RankVector::open(path)?.verify(),
    dump: |path, out| {
        let v = RankVector::open(path)?;
        writeln!(out, "# docid\tvalue").at("stdout")?;
        let mut r = v.reader();
        for i in 0..v.len() {
            writeln!(out, "{i}\t{:e}", r.get(i)?).at("stdout")?;
        }
        Ok(())
    },
};
/// Values per block (512 KiB).
pub const BLOCK_VALUES: usize = 1 << 16;

/// Writes a vector sequentially, value by value or slice by slice.
pub struct VectorWriter {
    w: ContainerWriter,
    block: Vec<u8>,
    next: u64,
    len: u64,
}

impl VectorWriter {
    /// Starts a vector of `len` values; `params` (a JSON object) gets `"len"` added.
    pub fn create(path: impl AsRef<Path>, len: u64, mut params: Value) -> Result<VectorWriter> {
        if let Value::Object(m) = &mut params {
            m.insert("len".into(), Value::from(len));
        }
        Ok(VectorWriter {
            w: ContainerWriter::create(path, RANKS.tag, RANKS.version, &params)?,
            block: Vec::with_capacity(BLOCK_VALUES * 8),
            next: 0,
            len,
        })
    }

    /// Like [`VectorWriter::create`] for temporary vectors (checkpoints,
    /// contributions): published atomically but not fsynced — they are
    /// verified before reuse and recomputed when damaged.
    pub fn scratch(path: impl AsRef<Path>, len: u64, params: Value) -> Result<VectorWriter> {
        let mut w = VectorWriter::create(path, len, params)?;
        w.set_durable(false);
        Ok(w)
    }

    /// Skips the fsyncs at publication (for checkpoints and scratch vectors,
    /// which are verified before reuse and recomputed when damaged).
    pub fn set_durable(&mut self, durable: bool) {
        self.w.set_durable(durable);
    }

    /// Appends one value.
    #[inline]
    pub fn push(&mut self, v: f64) -> Result<()> {
        self.block.extend_from_slice(&v.to_le_bytes());
        self.next += 1;
        if self.block.len() == BLOCK_VALUES * 8 {
            self.flush()?;
        }
        Ok(())
    }

    /// Appends values.
    pub fn extend(&mut self, values: &[f64]) -> Result<()> {
        for &v in values {
            self.push(v)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let n = (self.block.len() / 8) as u64;
        let first = self.next - n;
        self.w
            .write_block(BlockCodec::Raw, &first.to_be_bytes(), n, &self.block)?;
        self.block.clear();
        Ok(())
    }

    /// Publishes the vector with footer metadata `meta`.
    pub fn finish(mut self, meta: &Value) -> Result<u64> {
        self.flush()?;
        if self.next != self.len {
            return Err(Error::internal(format!(
                "{}: {} values written, {} announced",
                self.w.path().display(),
                self.next,
                self.len
            )));
        }
        Ok(self.w.finish(meta)?.1)
    }
}

/// An open rank vector.
pub struct RankVector {
    c: Container,
    len: u64,
}

impl RankVector {
    /// Opens and checks a vector file.
    pub fn open(path: impl AsRef<Path>) -> Result<RankVector> {
        let c = RANKS.open(path)?;
        let len = c.params()["len"].as_u64().unwrap_or(u64::MAX);
        if len != c.records() {
            return Err(Error::corrupt(
                c.path(),
                "header parameters",
                0,
                format!("len is {len}, the blocks hold {} values", c.records()),
            ));
        }
        let mut expected = 0u64;
        for (i, b) in c.blocks().iter().enumerate() {
            let first = <[u8; 8]>::try_from(b.key.as_slice())
                .map(u64::from_be_bytes)
                .ok();
            let last = i + 1 == c.blocks().len();
            let full = b.records == BLOCK_VALUES as u64;
            if first != Some(expected)
                || b.records.checked_mul(8) != Some(b.raw)
                || b.stored != b.raw
                || b.records > BLOCK_VALUES as u64
                || (!full && !last)
            {
                return Err(Error::corrupt(
                    c.path(),
                    format!("block {i}"),
                    b.offset,
                    format!(
                        "not a raw block of values {expected}.. in {BLOCK_VALUES}-value blocks"
                    ),
                ));
            }
            expected += b.records;
        }
        Ok(RankVector { c, len })
    }

    /// Number of values.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// `true` if empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The container.
    pub fn container(&self) -> &Container {
        &self.c
    }

    /// Reads block `i` (values `i·BLOCK_VALUES ..`) into `out`.
    pub fn read_block(&self, i: usize, scratch: &mut Vec<u8>, out: &mut Vec<f64>) -> Result<()> {
        let mut raw = Vec::new();
        self.c.read_block_into(i, scratch, &mut raw)?;
        out.clear();
        out.extend(
            raw.chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))),
        );
        Ok(())
    }

    /// Loads the whole vector into memory.
    pub fn load(&self) -> Result<Vec<f64>> {
        let mut all = Vec::with_capacity(self.len as usize);
        let (mut scratch, mut block) = (Vec::new(), Vec::new());
        for i in 0..self.c.blocks().len() {
            self.read_block(i, &mut scratch, &mut block)?;
            all.extend_from_slice(&block);
        }
        Ok(all)
    }

    /// A sequential reader.
    pub fn reader(&self) -> VectorReader<'_> {
        VectorReader {
            v: self,
            block: Vec::new(),
            scratch: Vec::new(),
            block_index: usize::MAX,
        }
    }

    /// The `k` highest values with their indices, highest first (ties to
    /// the lower index), in one pass holding `k` entries.
    pub fn top(&self, k: usize) -> Result<Vec<(u64, f64)>> {
        /// Ordered so that a max-heap's top is the smallest entry kept.
        #[derive(PartialEq)]
        struct Entry(f64, u64);
        impl Eq for Entry {}
        impl PartialOrd for Entry {
            fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(o))
            }
        }
        impl Ord for Entry {
            fn cmp(&self, o: &Self) -> std::cmp::Ordering {
                o.0.total_cmp(&self.0).then(self.1.cmp(&o.1))
            }
        }
        let mut heap = std::collections::BinaryHeap::with_capacity(k + 1);
        let (mut scratch, mut block) = (Vec::new(), Vec::new());
        let mut i = 0u64;
        for b in 0..self.c.blocks().len() {
            self.read_block(b, &mut scratch, &mut block)?;
            for &v in &block {
                heap.push(Entry(v, i));
                if heap.len() > k {
                    heap.pop();
                }
                i += 1;
            }
        }
        Ok(heap
            .into_sorted_vec()
            .into_iter()
            .map(|Entry(v, i)| (i, v))
            .collect())
    }

    /// Checks every block and that every value is finite.
    pub fn verify(&self) -> Result<()> {
        self.c.verify(|i, e, raw| {
            for (k, b) in raw.chunks_exact(8).enumerate() {
                let v = f64::from_le_bytes(b.try_into().expect("8 bytes"));
                if !v.is_finite() {
                    return Err(Error::corrupt(
                        self.c.path(),
                        format!("block {i}"),
                        e.offset,
                        format!("value {k} is {v}"),
                    ));
                }
            }
            Ok(())
        })
    }
}

/// Reads values of a vector by increasing index, one block in memory.
pub struct VectorReader<'a> {
    v: &'a RankVector,
    block: Vec<f64>,
    scratch: Vec<u8>,
    block_index: usize,
}

impl VectorReader<'_> {
    /// The values from `i` to the end of `i`'s block (at least one value);
    /// indices must not decrease by more than within a block.
    pub fn run(&mut self, i: u64) -> Result<&[f64]> {
        self.get(i)?;
        Ok(&self.block[i as usize % BLOCK_VALUES..])
    }

    /// The value at `i`; indices must not decrease by more than within a block.
    #[inline]
    pub fn get(&mut self, i: u64) -> Result<f64> {
        let b = (i / BLOCK_VALUES as u64) as usize;
        if b != self.block_index || i >= self.v.len {
            if i >= self.v.len {
                return Err(Error::internal(format!(
                    "{}: index {i} past the end ({} values)",
                    self.v.c.path().display(),
                    self.v.len
                )));
            }
            self.v.read_block(b, &mut self.scratch, &mut self.block)?;
            self.block_index = b;
        }
        self.block
            .get(i as usize % BLOCK_VALUES)
            .copied()
            .ok_or_else(|| {
                Error::corrupt(
                    self.v.c.path(),
                    format!("block {b}"),
                    0,
                    "block shorter than announced",
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn roundtrip(values in proptest::collection::vec(-1e300f64..1e300, 0..200_000)) {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("r.wm");
            let mut w = VectorWriter::create(&p, values.len() as u64, serde_json::json!({})).unwrap();
            w.extend(&values).unwrap();
            w.finish(&serde_json::json!({})).unwrap();
            let v = RankVector::open(&p).unwrap();
            v.verify().unwrap();
            let back = v.load().unwrap();
            prop_assert_eq!(back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), values.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
            let mut r = v.reader();
            for i in (0..values.len()).step_by(997) {
                prop_assert_eq!(r.get(i as u64).unwrap().to_bits(), values[i].to_bits());
            }
            if !values.is_empty() {
                let map = v.container().map_block(0).unwrap();
                prop_assert_eq!(map.as_ptr() as usize % 8, 0);
            }
        }

        #[test]
        fn top_is_a_sort_by_value_then_index(
            values in proptest::collection::vec(0u8..20, 0..3000),
            k in 0usize..40,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("r.wm");
            let values: Vec<f64> = values.into_iter().map(f64::from).collect();
            let mut w = VectorWriter::create(&p, values.len() as u64, serde_json::json!({})).unwrap();
            w.extend(&values).unwrap();
            w.finish(&serde_json::json!({})).unwrap();
            let mut naive: Vec<(u64, f64)> = values.iter().enumerate().map(|(i, &v)| (i as u64, v)).collect();
            naive.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            naive.truncate(k);
            prop_assert_eq!(RankVector::open(&p).unwrap().top(k).unwrap(), naive);
        }
    }
}

//! Checkpoints of the semi-external analyses: the `nodesets` container kind
//! (version 1), the per-node arrays of an interrupted computation with the
//! scalar state beside them. Spec: `formats/nodesets.md`.
//!
//! An analysis keeps a few bit sets and at most one label array per node in
//! memory ([`NodeBits`], [`NodeLabels`]); a checkpoint writes them all, so a
//! resumed run starts from the last one with the same arrays and the same
//! scalar state, and therefore gives the same result as an uninterrupted run.
//!
//! # Layout
//!
//! Raw blocks (uncompressed, checksummed). Block key: 9 bytes, the array's
//! index in the metadata's `arrays` list (`u8`) then the block's first element
//! as a big-endian `u64`, so bytewise key order is (array, element) order.
//! Records: elements in the block. Payload: the elements, little-endian, each
//! `width` bytes (8 for a bit set's 64-bit words, 4 or 8 for labels).
//!
//! Header parameters: the analysis's identity of its inputs (a JSON object,
//! e.g. the node count and the checksums of the edge files); a checkpoint
//! whose parameters differ from the caller's is ignored. Footer metadata:
//! `{"arrays": [{"name", "width", "len"}], "state": …}`, `state` being the
//! analysis's own scalar state (phase, counters, histograms).
//!
//! Checkpoints are temporary files: written atomically but not fsynced
//! (a damaged one fails its checksums at load and is recomputed).

use std::path::Path;

use serde_json::{json, Value};

use super::nodeset::{NodeBits, NodeLabels};
use crate::container::{BlockCodec, ContainerWriter, FileKind};
use crate::error::{Error, Result};

/// The `nodesets` kind: checkpoints of the graph analyses.
pub const NODESETS: FileKind = FileKind {
    tag: "nodesets",
    version: 1,
    what: "per-node bit sets and labels of a graph analysis, a bow-tie checkpoint (temporary)",
    verify,
    dump,
};
/// Elements per block (512 KiB of 8-byte words).
const BLOCK_ELEMENTS: usize = 1 << 16;

/// The arrays of a checkpoint, borrowed for saving.
pub struct Arrays<'a> {
    /// Named bit sets.
    pub bits: Vec<(&'static str, &'a NodeBits)>,
    /// A named label array, if any.
    pub labels: Option<(&'static str, &'a NodeLabels)>,
}

/// The arrays of a checkpoint, borrowed for loading.
pub struct ArraysMut<'a> {
    /// Named bit sets (of the right size already).
    pub bits: Vec<(&'static str, &'a mut NodeBits)>,
    /// A named label array, if any (of the right size and width already).
    pub labels: Option<(&'static str, &'a mut NodeLabels)>,
}

fn key(array: usize, first: u64) -> [u8; 9] {
    let mut k = [0u8; 9];
    k[0] = array as u8;
    k[1..].copy_from_slice(&first.to_be_bytes());
    k
}

/// Writes a checkpoint to `path` (atomically replacing an older one).
pub fn save(path: &Path, params: &Value, state: &Value, arrays: &Arrays<'_>) -> Result<()> {
    let mut w = ContainerWriter::create(path, NODESETS.tag, NODESETS.version, params)?;
    w.set_durable(false);
    let mut described = Vec::new();
    for (i, (name, bits)) in arrays.bits.iter().enumerate() {
        let mut first = 0u64;
        let mut buf = Vec::with_capacity(BLOCK_ELEMENTS * 8);
        for chunk in bits.words().chunks(BLOCK_ELEMENTS) {
            buf.clear();
            chunk
                .iter()
                .for_each(|x| buf.extend_from_slice(&x.to_le_bytes()));
            w.write_block(BlockCodec::Raw, &key(i, first), chunk.len() as u64, &buf)?;
            first += chunk.len() as u64;
        }
        described.push(json!({"name": name, "width": 8, "len": bits.words().len()}));
    }
    if let Some((name, labels)) = arrays.labels {
        let i = arrays.bits.len();
        let mut first = 0u64;
        let width = labels.width();
        labels.for_each_chunk(BLOCK_ELEMENTS, |bytes| {
            let n = (bytes.len() / width) as u64;
            w.write_block(BlockCodec::Raw, &key(i, first), n, bytes)?;
            first += n;
            Ok(())
        })?;
        described.push(json!({"name": name, "width": width, "len": labels.len()}));
    }
    w.finish(&json!({"arrays": described, "state": state}))?;
    Ok(())
}

/// Loads the checkpoint at `path` into `arrays` and returns its scalar
/// state, or `None` (arrays untouched or partly overwritten — the caller
/// starts afresh) when there is none, it was made with other `params`, its
/// arrays differ in name or size, or it is damaged.
pub fn load(path: &Path, params: &Value, arrays: &mut ArraysMut<'_>) -> Result<Option<Value>> {
    if !path.exists() {
        return Ok(None);
    }
    let Ok(c) = NODESETS.open(path) else {
        return Ok(None);
    };
    if c.params() != params {
        return Ok(None);
    }
    let described = c.meta()["arrays"].as_array().cloned().unwrap_or_default();
    let expect: Vec<(&str, usize, u64)> = arrays
        .bits
        .iter()
        .map(|(n, b)| (*n, 8, b.words().len() as u64))
        .chain(arrays.labels.iter().map(|(n, l)| (*n, l.width(), l.len())))
        .collect();
    let found: Vec<(String, usize, u64)> = described
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap_or("").to_string(),
                d["width"].as_u64().unwrap_or(0) as usize,
                d["len"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    if found.len() != expect.len()
        || found
            .iter()
            .zip(&expect)
            .any(|(f, e)| f.0 != e.0 || f.1 != e.1 || f.2 != e.2)
    {
        return Ok(None);
    }
    let mut filled = vec![0u64; expect.len()];
    let (mut scratch, mut raw) = (Vec::new(), Vec::new());
    for i in 0..c.blocks().len() {
        if c.read_block_into(i, &mut scratch, &mut raw).is_err() {
            return Ok(None);
        }
        let k = &c.blocks()[i].key;
        if k.len() != 9 {
            return Ok(None);
        }
        let array = k[0] as usize;
        let mut first = [0u8; 8];
        first.copy_from_slice(&k[1..]);
        let first = u64::from_be_bytes(first);
        let Some(&(_, width, len)) = expect.get(array) else {
            return Ok(None);
        };
        let n = (raw.len() / width) as u64;
        if raw.len() % width != 0 || first != filled[array] || first + n > len {
            return Ok(None);
        }
        if array < arrays.bits.len() {
            let words = arrays.bits[array].1.words_mut();
            for (j, b) in raw.chunks_exact(8).enumerate() {
                let mut x = [0u8; 8];
                x.copy_from_slice(b);
                words[first as usize + j] = u64::from_le_bytes(x);
            }
        } else if let Some((_, labels)) = arrays.labels.as_mut() {
            labels.load(first, &raw);
        }
        filled[array] += n;
    }
    if filled.iter().zip(&expect).any(|(&f, e)| f != e.2) {
        return Ok(None);
    }
    Ok(Some(c.meta()["state"].clone()))
}

/// Checks a `nodesets` file's structure (for `verify`): block keys in
/// order, each array complete, payload lengths a multiple of the width.
pub fn verify(path: &Path) -> Result<()> {
    let c = NODESETS.open(path)?;
    let described = c.meta()["arrays"].as_array().cloned().unwrap_or_default();
    let mut filled = vec![0u64; described.len()];
    c.verify(|i, e, raw| {
        let bad = |d: String| Error::corrupt(c.path(), format!("block {i}"), e.offset, d);
        if e.key.len() != 9 {
            return Err(bad(format!("key of {} bytes, expected 9", e.key.len())));
        }
        let a = e.key[0] as usize;
        let d = described
            .get(a)
            .ok_or_else(|| bad(format!("array {a} is not described")))?;
        let width = d["width"].as_u64().unwrap_or(0);
        let mut first = [0u8; 8];
        first.copy_from_slice(&e.key[1..]);
        if width == 0 || raw.len() as u64 != e.records * width {
            return Err(bad(format!(
                "{} bytes for {} elements of width {width}",
                raw.len(),
                e.records
            )));
        }
        if u64::from_be_bytes(first) != filled[a] {
            return Err(bad(format!(
                "array {a} continues at element {}, expected {}",
                u64::from_be_bytes(first),
                filled[a]
            )));
        }
        filled[a] += e.records;
        Ok(())
    })?;
    for (d, f) in described.iter().zip(&filled) {
        if d["len"].as_u64() != Some(*f) {
            return Err(c.meta_error(format!(
                "array {} holds {f} elements, metadata says {}",
                d["name"], d["len"]
            )));
        }
    }
    Ok(())
}

/// Writes a `nodesets` file's arrays as TSV: `array element value`, the value
/// in hex (little-endian words of the array's width), after checking it.
pub fn dump(path: &Path, out: &mut dyn std::io::Write) -> Result<()> {
    use crate::error::IoContext;
    verify(path)?;
    let c = NODESETS.open(path)?;
    let described = c.meta()["arrays"].as_array().cloned().unwrap_or_default();
    writeln!(out, "# array\telement\tvalue").at("stdout")?;
    for (i, e) in c.blocks().iter().enumerate() {
        let raw = c.read_block(i)?;
        let a = e.key[0] as usize;
        let d = &described[a];
        let name = d["name"].as_str().unwrap_or("?");
        let width = d["width"].as_u64().unwrap_or(8) as usize;
        let mut first = [0u8; 8];
        first.copy_from_slice(&e.key[1..]);
        let first = u64::from_be_bytes(first);
        for (k, v) in raw.chunks_exact(width).enumerate() {
            let hex: String = v.iter().rev().map(|b| format!("{b:02x}")).collect();
            writeln!(out, "{name}\t{}\t{hex}", first + k as u64).at("stdout")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_and_load_roundtrip_and_reject_other_params() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ck.wm");
        let mut a = NodeBits::new(200_000);
        let mut labels = NodeLabels::new(200_000);
        for v in (0..200_000).step_by(7) {
            a.insert(v);
            labels.set(v, v / 3);
        }
        let params = json!({"nodes": 200_000});
        let state = json!({"phase": 3, "hist": [[1, 5]]});
        save(
            &p,
            &params,
            &state,
            &Arrays {
                bits: vec![("a", &a)],
                labels: Some(("color", &labels)),
            },
        )
        .unwrap();
        verify(&p).unwrap();
        let mut b = NodeBits::new(200_000);
        let mut l2 = NodeLabels::new(200_000);
        let got = load(
            &p,
            &params,
            &mut ArraysMut {
                bits: vec![("a", &mut b)],
                labels: Some(("color", &mut l2)),
            },
        )
        .unwrap();
        assert_eq!(got, Some(state));
        assert_eq!(a, b);
        assert_eq!(labels, l2);
        let other = load(
            &p,
            &json!({"nodes": 1}),
            &mut ArraysMut {
                bits: vec![("a", &mut b)],
                labels: None,
            },
        )
        .unwrap();
        assert_eq!(other, None);
    }
}

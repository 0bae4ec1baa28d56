//! Blocked mode, after Haveliwala, *Efficient Computation of PageRank* (1999).
//!
//! The destination docIDs are cut into blocks of `B` nodes, `B` chosen so that
//! one block of the next vector fits the budget. Once, the arcs are partitioned
//! by destination block with the external sort and written as one edge file per
//! block, sorted by source. Per iteration:
//!
//! 1. the previous vector and the out-degrees are streamed once to write the
//!    contribution vector `c[i] = x[i]/outdeg(i)` to disk (and the dangling mass);
//! 2. per destination block: its arcs are streamed in source order while `c` is
//!    streamed alongside (read once per block), accumulating into the block;
//!    the block is finished with the reset and dangling terms and appended to the
//!    next vector, the previous vector streamed alongside for the L1 change.
//!
//! Memory: one block of `B` values plus a few block buffers, whatever `n` is.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

use super::vector::BLOCK_VALUES;
use super::{
    ChunkedSum, Dangling, Inputs, Iterate, IterationOutcome, NextVector, RankVector, Step,
    VectorWriter,
};
use crate::error::{Error, IoContext, Result};
use crate::graph::{Direction, EdgeFile, EdgeWriter};
use crate::job::Settings;
use crate::progress::Unit;
use crate::publish::write_atomic;
use crate::sort::{Combine, ExternalSorter, SortConfig};

/// The blocked engine.
pub struct BlockedEngine {
    n: u64,
    damping: f64,
    block: u64,
    parts: Vec<PathBuf>,
    degrees: PathBuf,
    preference: Option<PathBuf>,
    dangling: Dangling,
    contrib: PathBuf,
}

/// Nodes per destination block for a budget: half the budget as f64 values,
/// a multiple of the vector file's block, at least one such block.
pub fn block_nodes(mem: u64) -> u64 {
    let per = BLOCK_VALUES as u64;
    ((mem / 2 / 8) / per).max(1) * per
}

impl BlockedEngine {
    /// Partitions the arcs by destination block (once; reused on resume).
    pub fn new(inputs: &Inputs, damping: f64, s: &Settings) -> Result<BlockedEngine> {
        let block = block_nodes(s.mem);
        let k = inputs.n.div_ceil(block);
        let dir = inputs.tmp.join("blocks");
        std::fs::create_dir_all(&dir).at(&dir)?;
        let parts: Vec<PathBuf> = (0..k)
            .map(|b| dir.join(format!("part-{b:05}.wm")))
            .collect();
        let marker = dir.join("partitions.json");
        let identity = json!({"block": block, "blocks": k, "nodes": inputs.n, "arcs": inputs.m});
        let ready = std::fs::read(&marker)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|v| v == identity)
            && parts.iter().all(|p| EdgeFile::open(p).is_ok());
        if !ready {
            let _ = std::fs::remove_file(&marker);
            partition(inputs, block, &parts, &dir, s)?;
            write_atomic(&marker, identity.to_string().as_bytes())?;
        }
        s.reporter.note(&format!(
            "pagerank: blocked mode, {k} destination blocks of {block} nodes"
        ));
        Ok(BlockedEngine {
            n: inputs.n,
            damping,
            block,
            parts,
            degrees: inputs.degrees.clone(),
            preference: inputs.preference.clone(),
            dangling: inputs.dangling,
            contrib: inputs.tmp.join("contrib.wm"),
        })
    }
}

/// Sorts arcs by (destination block, source, destination) and writes one edge
/// file per block.
fn partition(
    inputs: &Inputs,
    block: u64,
    parts: &[PathBuf],
    dir: &Path,
    s: &Settings,
) -> Result<()> {
    let forward = EdgeFile::open(&inputs.forward)?;
    let cfg = SortConfig::new(dir.join("sort"), s.mem)
        .label("pagerank: partitioning arcs by destination block")
        .reporter(Arc::clone(&s.reporter));
    let mut sorter = ExternalSorter::<(u64, u64, u64)>::new(cfg, Combine::None)?;
    let task = s
        .reporter
        .task("pagerank: partitioning arcs", Some(inputs.m), Unit::Records);
    let mut seen = 0u64;
    if !sorter.input_complete() {
        for list in forward.lists() {
            let (src, dsts) = list?;
            for d in dsts {
                sorter.push((d / block, src, d))?;
            }
            seen += 1;
            if seen.is_multiple_of(4096) {
                task.set_position(seen);
            }
        }
    }
    let mut sorted = sorter.finish()?;
    let mut current: Option<(u64, EdgeWriter)> = None;
    let mut next_part = 0u64;
    while let Some((b, src, dst)) = sorted.next_record()? {
        if current.as_ref().is_none_or(|(cb, _)| *cb != b) {
            if let Some((_, w)) = current.take() {
                w.finish()?;
            }
            // Blocks without arcs still get (empty) files.
            while next_part < b {
                EdgeWriter::create(&parts[next_part as usize], Direction::Forward, inputs.n)?
                    .raw_blocks()
                    .finish()?;
                next_part += 1;
            }
            current = Some((
                b,
                EdgeWriter::create(&parts[b as usize], Direction::Forward, inputs.n)?.raw_blocks(),
            ));
            next_part = b + 1;
        }
        if let Some((_, w)) = current.as_mut() {
            w.push(src, dst)?;
        }
    }
    if let Some((_, w)) = current.take() {
        w.finish()?;
    }
    while (next_part as usize) < parts.len() {
        EdgeWriter::create(&parts[next_part as usize], Direction::Forward, inputs.n)?
            .raw_blocks()
            .finish()?;
        next_part += 1;
    }
    crate::sort::remove_sort_dir(&dir.join("sort"))
}

impl Iterate for BlockedEngine {
    fn iterate(
        &mut self,
        _t: u32,
        prev: &Path,
        next: &Path,
        meta: &dyn Fn(IterationOutcome) -> Value,
    ) -> Result<IterationOutcome> {
        let x = RankVector::open(prev)?;
        let deg = RankVector::open(&self.degrees)?;
        if x.len() != self.n || deg.len() != self.n {
            return Err(Error::Invalid(format!(
                "{}: vector length {} for a graph of {} nodes",
                prev.display(),
                x.len(),
                self.n
            )));
        }
        // 1. Contributions and dangling mass.
        let mut dangling = ChunkedSum::default();
        {
            let (mut xr, mut dr) = (x.reader(), deg.reader());
            let mut w =
                VectorWriter::scratch(&self.contrib, self.n, json!({"what": "contributions"}))?;
            for i in 0..self.n {
                let (xi, d) = (xr.get(i)?, dr.get(i)?);
                if d > 0.0 {
                    w.push(xi / d)?;
                } else {
                    dangling.add(i, xi);
                    w.push(0.0)?;
                }
            }
            w.finish(&json!({}))?;
        }
        let step = Step {
            damping: self.damping,
            dangling_mass: dangling.total(),
            uniform: 1.0 / self.n as f64,
        };
        let contrib = RankVector::open(&self.contrib)?;
        let pref = self.preference.as_ref().map(RankVector::open).transpose()?;
        let mut out = NextVector::create(next, self.n, step, self.dangling, pref.as_ref(), &x)?;
        let mut acc = vec![0.0f64; self.block.min(self.n) as usize];
        // 2. Block by block.
        for (b, part) in self.parts.iter().enumerate() {
            let base = b as u64 * self.block;
            let len = self.block.min(self.n - base) as usize;
            acc[..len].iter_mut().for_each(|a| *a = 0.0);
            let arcs = EdgeFile::open(part)?;
            let mut cr = contrib.reader();
            arcs.for_each_list(|src, dsts| {
                let c = cr.get(src)?;
                for &d in dsts {
                    acc[(d - base) as usize] += c;
                }
                Ok(())
            })?;
            for (k, &a) in acc[..len].iter().enumerate() {
                out.push(base + k as u64, a)?;
            }
        }
        out.finish(meta)
    }
}

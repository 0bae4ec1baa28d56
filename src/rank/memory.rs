//! Memory mode: rank vectors in RAM, in-links as a CSR built once from the
//! transposed edge file when the budget allows (streamed from it otherwise).
//! Parallel over destination ranges; each destination's sum is computed by
//! one thread in source order, so the result does not depend on the thread count.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use super::{
    l1_and_sum, ChunkedSum, Inputs, Iterate, IterationOutcome, RankVector, Step, VectorWriter,
};
use crate::error::Result;
use crate::graph::EdgeFile;

/// In-links of every node: `srcs[offsets[j]..offsets[j+1]]`, increasing.
struct Csr {
    offsets: Vec<u64>,
    srcs: Vec<u32>,
}

/// The memory-mode engine.
pub struct MemoryEngine {
    n: u64,
    damping: f64,
    degrees: Vec<f64>,
    preference: Option<Vec<f64>>,
    dangling_uniform: bool,
    csr: Option<Csr>,
    transposed: PathBuf,
    /// The last vector written, to avoid reading it back.
    cache: Option<(PathBuf, Vec<f64>)>,
}

impl MemoryEngine {
    /// Loads degrees and preference; builds the CSR if it fits `csr_budget`.
    pub fn new(inputs: &Inputs, damping: f64, csr_budget: u64) -> Result<MemoryEngine> {
        let degrees = RankVector::open(&inputs.degrees)?.load()?;
        let preference = inputs
            .preference
            .as_ref()
            .map(|p| RankVector::open(p).and_then(|v| v.load()))
            .transpose()?;
        let (_, csr_bytes) = super::memory_mode_bytes(inputs.n, inputs.m, false);
        let csr = if inputs.n <= u32::MAX as u64 && csr_bytes <= csr_budget {
            let t = EdgeFile::open(&inputs.transposed)?;
            let mut offsets = Vec::with_capacity(inputs.n as usize + 1);
            let mut srcs = Vec::with_capacity(inputs.m as usize);
            offsets.push(0);
            for list in t.lists() {
                let (dst, list_srcs) = list?;
                while (offsets.len() as u64) <= dst {
                    offsets.push(srcs.len() as u64);
                }
                srcs.extend(list_srcs.iter().map(|&s| s as u32));
            }
            while (offsets.len() as u64) <= inputs.n {
                offsets.push(srcs.len() as u64);
            }
            Some(Csr { offsets, srcs })
        } else {
            None
        };
        Ok(MemoryEngine {
            n: inputs.n,
            damping,
            degrees,
            preference,
            dangling_uniform: inputs.dangling == super::Dangling::Uniform,
            csr,
            transposed: inputs.transposed.clone(),
            cache: None,
        })
    }

    /// Sums of in-contributions per node, in source order.
    fn in_sums(&self, contrib: &[f64]) -> Result<Vec<f64>> {
        if let Some(csr) = &self.csr {
            let mut acc = vec![0.0f64; self.n as usize];
            acc.par_chunks_mut(4096).enumerate().for_each(|(c, chunk)| {
                let base = c * 4096;
                for (k, a) in chunk.iter_mut().enumerate() {
                    let j = base + k;
                    let (lo, hi) = (csr.offsets[j] as usize, csr.offsets[j + 1] as usize);
                    let mut s = 0.0;
                    for &src in &csr.srcs[lo..hi] {
                        s += contrib[src as usize];
                    }
                    *a = s;
                }
            });
            return Ok(acc);
        }
        // Streaming: decode batches of blocks in parallel, add sequentially
        // (a list split across blocks continues the same sum).
        let t = EdgeFile::open(&self.transposed)?;
        let mut acc = vec![0.0f64; self.n as usize];
        let blocks = t.container().blocks().len();
        let batch = rayon::current_num_threads() * 4;
        for start in (0..blocks).step_by(batch) {
            type Lists = Vec<(u64, Vec<u64>)>;
            let decoded: Vec<Result<Lists>> = (start..(start + batch).min(blocks))
                .into_par_iter()
                .map(|i| t.decode_block(i, &t.container().read_block(i)?))
                .collect();
            for lists in decoded {
                for (dst, srcs) in lists? {
                    let a = &mut acc[dst as usize];
                    for src in srcs {
                        *a += contrib[src as usize];
                    }
                }
            }
        }
        Ok(acc)
    }
}

impl Iterate for MemoryEngine {
    fn iterate(
        &mut self,
        _t: u32,
        prev: &Path,
        next: &Path,
        meta: &dyn Fn(IterationOutcome) -> Value,
    ) -> Result<IterationOutcome> {
        let x = match self.cache.take() {
            Some((p, v)) if p == prev => v,
            _ => RankVector::open(prev)?.load()?,
        };
        let degrees = &self.degrees;
        let contrib: Vec<f64> = x
            .par_iter()
            .zip(degrees.par_iter())
            .map(|(&xi, &d)| if d > 0.0 { xi / d } else { 0.0 })
            .collect();
        let step = Step {
            damping: self.damping,
            dangling_mass: ChunkedSum::of_slice(&x, |i, v| if degrees[i] == 0.0 { v } else { 0.0 }),
            uniform: 1.0 / self.n as f64,
        };
        let acc = self.in_sums(&contrib)?;
        drop(contrib);
        let pref = self.preference.as_deref();
        let uniform_dangling = self.dangling_uniform;
        let new: Vec<f64> = acc
            .par_iter()
            .enumerate()
            .map(|(j, &a)| {
                let v = pref.map_or(step.uniform, |p| p[j]);
                let u = if uniform_dangling { step.uniform } else { v };
                step.value(a, v, u)
            })
            .collect();
        drop(acc);
        let outcome = l1_and_sum(&x, &new);
        let mut w = VectorWriter::scratch(next, self.n, serde_json::json!({}))?;
        w.extend(&new)?;
        w.finish(&meta(outcome))?;
        self.cache = Some((next.to_path_buf(), new));
        Ok(outcome)
    }
}

//! Blocked mode, after Haveliwala, *Efficient Computation of PageRank* (1999).
//!
//! The destination docIDs are cut into blocks of `B` nodes, `B` chosen so that
//! the accumulators of the blocks computed at the same time (one per rayon
//! thread) take half the budget. Once, the arcs are split by destination block
//! into one *part file* per block: the forward edge file is read in source
//! order and each list is cut at block boundaries and appended to its blocks'
//! parts, so every part is in source order without any sort. Per iteration:
//!
//! 1. the previous vector and the out-degrees are streamed once, a vector block
//!    at a time, to write the contribution vector `c[i] = x[i]/outdeg(i)` to
//!    disk (and to sum the dangling mass);
//! 2. the destination blocks are computed in groups of as many blocks as there
//!    are threads, one thread per block: its part is read in large sequential
//!    chunks while `c` is read alongside in source order (a vector block at a
//!    time, each at most once per destination block), and every arc adds its
//!    source's contribution to its destination's f64 accumulator. Arcs come in
//!    increasing source order, so each destination sums its in-contributions in
//!    the same order as the other modes: the bits do not depend on the thread
//!    count or the block size;
//! 3. the group's blocks are finished in docID order with the reset and dangling
//!    terms and appended to the next vector, the previous vector streamed
//!    alongside for the L1 change.
//!
//! # Part files
//!
//! Container kind [`RANKPART`]; raw blocks (chunks) of whole *runs*. A chunk's
//! key is the source of its first run (big-endian `u64`), its record count the
//! arcs in it. A run is `gap: u32le, count: u32le` followed by `count`
//! destinations as `u32le` offsets from the block's first node; `gap` is the
//! run's source minus the previous run's in the chunk (0 for the first run, so
//! a source split across chunks or runs is simply repeated). Fixed-width fields
//! keep decoding to a few loads per arc.
//!
//! Memory: `threads × B` accumulators (half the budget), plus per thread one
//! part chunk (≤ 1 MiB) and one 512 KiB vector block mapped at a time, plus the
//! streamed vectors' block buffers, whatever `n` is. While splitting, each
//! part's writer holds one chunk (together a quarter of the budget, at least
//! 64 KiB each) and a 1 MiB write buffer: with `k` blocks that is `k` MiB more,
//! which stays within the allowance above the budget while `k` ≲ 80.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::{json, Value};

use super::vector::BLOCK_VALUES;
use super::{
    ChunkedSum, Dangling, Inputs, Iterate, IterationOutcome, NextVector, RankVector, Step,
    VectorWriter,
};
use crate::container::{BlockCodec, Container, ContainerWriter, FileKind};
use crate::error::{Error, IoContext, Result};
use crate::graph::EdgeFile;
use crate::job::Settings;
use crate::mmap::MappedBytes;
use crate::progress::Unit;
use crate::publish::write_atomic;

/// Smallest destination block, in nodes.
const MIN_BLOCK: u64 = 4096;
/// Largest chunk of a part file, in bytes.
const MAX_CHUNK: usize = 1 << 20;
/// Smallest chunk of a part file, in bytes.
const MIN_CHUNK: usize = 64 << 10;

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
    /// One accumulator per block computed at the same time.
    accs: Vec<Vec<f64>>,
}

/// Nodes per destination block when the f64 accumulators of `parallel`
/// blocks computed at the same time take `accumulators` bytes. A multiple of
/// 4096, at least 4096, at most `u32::MAX`.
pub fn block_nodes(accumulators: u64, parallel: usize) -> u64 {
    let b = accumulators / 8 / parallel.max(1) as u64;
    ((b / MIN_BLOCK).max(1) * MIN_BLOCK).min(u32::MAX as u64 / MIN_BLOCK * MIN_BLOCK)
}

impl BlockedEngine {
    /// Splits the arcs by destination block (once; reused on resume when the
    /// block size is the same). The accumulators take `accumulators` bytes,
    /// the part writers' chunks together `writers` bytes.
    pub fn new(
        inputs: &Inputs,
        damping: f64,
        accumulators: u64,
        writers: u64,
        s: &Settings,
    ) -> Result<BlockedEngine> {
        let parallel = rayon::current_num_threads().max(1);
        let block = block_nodes(accumulators, parallel).min(inputs.n.max(1));
        let k = inputs.n.div_ceil(block);
        let parallel = parallel.min(k as usize).max(1);
        let dir = inputs.tmp.join("blocks");
        std::fs::create_dir_all(&dir).at(&dir)?;
        let parts: Vec<PathBuf> = (0..k)
            .map(|b| dir.join(format!("part-{b:05}.wm")))
            .collect();
        let marker = dir.join("partitions.json");
        let identity = json!({
            "format": RANKPART.version, "block": block, "blocks": k,
            "nodes": inputs.n, "arcs": inputs.m,
        });
        let ready = std::fs::read(&marker)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|v| v == identity)
            && parts.iter().all(|p| RANKPART.open(p).is_ok());
        if !ready {
            let _ = std::fs::remove_file(&marker);
            // Parts of another block size are useless.
            for entry in std::fs::read_dir(&dir).at(&dir)?.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with("part-") {
                    std::fs::remove_file(entry.path()).at(entry.path())?;
                }
            }
            partition(&inputs.forward, block, &parts, writers, s)?;
            write_atomic(&marker, identity.to_string().as_bytes())?;
        }
        s.reporter.note(&format!(
            "pagerank: blocked mode, {k} destination blocks of {block} nodes, {parallel} at a time"
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
            accs: (0..parallel)
                .map(|_| vec![0.0f64; block as usize])
                .collect(),
        })
    }
}

/// Appends runs to one part file, a chunk at a time.
struct PartWriter {
    w: ContainerWriter,
    chunk: Vec<u8>,
    arcs: u64,
    first_src: u64,
    last_src: u64,
    limit: usize,
}

impl PartWriter {
    fn create(path: &Path, block: u64, b: u64, limit: usize) -> Result<PartWriter> {
        let mut w = ContainerWriter::create(
            path,
            RANKPART.tag,
            RANKPART.version,
            &json!({"block": b, "first": b * block, "nodes": block}),
        )?;
        // A part is rebuilt from the edge file when damaged.
        w.set_durable(false);
        Ok(PartWriter {
            w,
            chunk: Vec::with_capacity(limit + 64),
            arcs: 0,
            first_src: 0,
            last_src: 0,
            limit,
        })
    }

    /// Appends source `src`'s arcs to destinations `dsts` (offsets in the block).
    fn push(&mut self, src: u64, mut dsts: &[u32]) -> Result<()> {
        while !dsts.is_empty() {
            if !self.chunk.is_empty() && src - self.last_src > u32::MAX as u64 {
                self.flush()?;
            }
            if self.chunk.is_empty() {
                self.first_src = src;
                self.last_src = src;
            }
            let room = (self.limit.saturating_sub(self.chunk.len() + 8) / 4).max(1);
            let take = dsts.len().min(room).min(u32::MAX as usize);
            let (now, rest) = dsts.split_at(take);
            self.chunk
                .extend_from_slice(&((src - self.last_src) as u32).to_le_bytes());
            self.chunk.extend_from_slice(&(take as u32).to_le_bytes());
            for &d in now {
                self.chunk.extend_from_slice(&d.to_le_bytes());
            }
            self.arcs += take as u64;
            self.last_src = src;
            dsts = rest;
            if self.chunk.len() >= self.limit {
                self.flush()?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        self.w.write_block(
            BlockCodec::Raw,
            &self.first_src.to_be_bytes(),
            self.arcs,
            &self.chunk,
        )?;
        self.chunk.clear();
        self.arcs = 0;
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.flush()?;
        self.w.finish(&json!({}))?;
        Ok(())
    }
}

/// Reads the forward edge file `forward` once, in source order, cutting each
/// list at block boundaries (every `block` nodes) into part files `parts`
/// (one per destination block, kind [`RANKPART`]); the writers' chunks
/// together take `writers` bytes (each at least 64 KiB, at most 1 MiB).
pub fn partition(
    forward: &Path,
    block: u64,
    parts: &[PathBuf],
    writers: u64,
    s: &Settings,
) -> Result<()> {
    let edges = EdgeFile::open(forward)?;
    let (n, m) = (edges.stats().nodes, edges.stats().arcs);
    let k = parts.len().max(1);
    let limit = (writers as usize / k).clamp(MIN_CHUNK, MAX_CHUNK);
    let mut writers = parts
        .iter()
        .enumerate()
        .map(|(b, p)| PartWriter::create(p, block, b as u64, limit))
        .collect::<Result<Vec<_>>>()?;
    let task = s.reporter.task(
        "pagerank: splitting arcs by destination block",
        Some(m),
        Unit::Records,
    );
    let mut seen = 0u64;
    let mut offsets: Vec<u32> = Vec::new();
    edges.for_each_list(|src, dsts| {
        // `dsts` is increasing: cut it where the block changes.
        let mut rest = dsts;
        while let Some(&first) = rest.first() {
            let b = first / block;
            let end = (b + 1).saturating_mul(block);
            let cut = rest.partition_point(|&d| d < end);
            let base = b * block;
            offsets.clear();
            offsets.extend(rest[..cut].iter().map(|&d| (d - base) as u32));
            let w = writers.get_mut(b as usize).ok_or_else(|| {
                Error::internal(format!(
                    "{}: arc ({src}, {first}) outside the graph's {n} nodes",
                    forward.display(),
                ))
            })?;
            w.push(src, &offsets)?;
            rest = &rest[cut..];
        }
        seen += dsts.len() as u64;
        task.set_position(seen);
        Ok(())
    })?;
    for w in writers {
        w.finish()?;
    }
    Ok(())
}

/// Reads the contribution vector by increasing index, one vector block mapped
/// at a time (checked against its checksum when mapped).
struct ContribWindow<'a> {
    v: &'a RankVector,
    map: Option<MappedBytes>,
    index: usize,
}

impl ContribWindow<'_> {
    #[inline]
    fn get(&mut self, i: u64) -> Result<f64> {
        let b = (i / BLOCK_VALUES as u64) as usize;
        if b != self.index || self.map.is_none() {
            if i >= self.v.len() {
                return Err(Error::internal(format!(
                    "{}: index {i} past the end ({} values)",
                    self.v.container().path().display(),
                    self.v.len()
                )));
            }
            self.map = None;
            self.map = Some(self.v.container().map_block(b)?);
            self.index = b;
        }
        let k = (i as usize % BLOCK_VALUES) * 8;
        self.map
            .as_deref()
            .and_then(|m| m.get(k..k + 8))
            .and_then(|s| <[u8; 8]>::try_from(s).ok())
            .map(f64::from_le_bytes)
            .ok_or_else(|| {
                Error::corrupt(
                    self.v.container().path(),
                    format!("block {b}"),
                    0,
                    "block shorter than announced",
                )
            })
    }
}

/// Decodes chunk `i` of part file `part` (its bytes `raw`): calls `f(src,
/// dsts)` for every run, `dsts` the run's destinations as `u32le` offsets;
/// sources are checked to lie below `n`.
fn for_each_run(
    part: &Container,
    i: usize,
    raw: &[u8],
    n: u64,
    mut f: impl FnMut(u64, &[u8]) -> Result<()>,
) -> Result<()> {
    let entry = &part.blocks()[i];
    let bad =
        |detail: String| Error::corrupt(part.path(), format!("chunk {i}"), entry.offset, detail);
    let mut src = <[u8; 8]>::try_from(entry.key.as_slice())
        .map(u64::from_be_bytes)
        .map_err(|_| bad(format!("key is {} bytes, expected 8", entry.key.len())))?;
    let mut input = raw;
    let mut arcs = 0u64;
    while !input.is_empty() {
        let (head, rest) = input
            .split_first_chunk::<8>()
            .ok_or_else(|| bad("a run header is cut short".into()))?;
        let gap = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as u64;
        let count = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        src = src
            .checked_add(gap)
            .filter(|&s| s < n)
            .ok_or_else(|| bad(format!("source {src} + {gap} outside the graph")))?;
        let bytes = count
            .checked_mul(4)
            .filter(|&b| b <= rest.len())
            .ok_or_else(|| bad(format!("run of {count} arcs is cut short")))?;
        let (dsts, after) = rest.split_at(bytes);
        f(src, dsts).map_err(|e| match e {
            Error::Record(d) => bad(d),
            e => e,
        })?;
        arcs += count as u64;
        input = after;
    }
    if arcs != entry.records {
        return Err(bad(format!(
            "{arcs} arcs decoded, the index says {}",
            entry.records
        )));
    }
    Ok(())
}

/// The header parameters of a part file.
#[derive(serde::Deserialize)]
struct PartParams {
    first: u64,
    nodes: u64,
}

/// The part files of blocked PageRank (temporary, in the stage's directory).
pub const RANKPART: FileKind = FileKind {
    tag: "rankpart",
    version: 1,
    what: "blocked PageRank part: one destination block's arcs in runs by source (temporary)",
    verify: |path| {
        let part = RANKPART.open(path)?;
        let p: PartParams = part.params_as()?;
        part.verify(|i, _, raw| {
            for_each_run(&part, i, raw, u64::MAX, |_, dsts| {
                check_offsets(dsts, p.nodes)
            })
        })
    },
    dump: |path, out| {
        let part = RANKPART.open(path)?;
        let p: PartParams = part.params_as()?;
        writeln!(out, "# src\tdst").at("stdout")?;
        for i in 0..part.blocks().len() {
            let raw = part.read_block(i)?;
            for_each_run(&part, i, &raw, u64::MAX, |src, dsts| {
                check_offsets(dsts, p.nodes)?;
                for d in dsts.chunks_exact(4) {
                    let d = u32::from_le_bytes([d[0], d[1], d[2], d[3]]) as u64;
                    writeln!(out, "{src}\t{}", p.first + d).at("stdout")?;
                }
                Ok(())
            })?;
        }
        Ok(())
    },
};

fn check_offsets(dsts: &[u8], nodes: u64) -> Result<()> {
    for d in dsts.chunks_exact(4) {
        let d = u32::from_le_bytes([d[0], d[1], d[2], d[3]]) as u64;
        if d >= nodes {
            return Err(Error::record(format!(
                "destination offset {d} outside the block of {nodes} nodes"
            )));
        }
    }
    Ok(())
}

/// Adds every arc of part `path` into `acc` (zeroed first): `acc[d] += c[src]`
/// in the part's (increasing) source order.
fn accumulate(path: &Path, n: u64, contrib: &RankVector, acc: &mut [f64]) -> Result<()> {
    acc.iter_mut().for_each(|a| *a = 0.0);
    let part = RANKPART.open(path)?;
    let mut window = ContribWindow {
        v: contrib,
        map: None,
        index: usize::MAX,
    };
    for i in 0..part.blocks().len() {
        // Mapped, not read: no copy; at most one chunk mapped at a time.
        let raw = part.map_block(i)?;
        for_each_run(&part, i, &raw, n, |src, dsts| {
            let c = window.get(src)?;
            for d in dsts.chunks_exact(4) {
                let d = u32::from_le_bytes([d[0], d[1], d[2], d[3]]) as usize;
                match acc.get_mut(d) {
                    Some(a) => *a += c,
                    None => {
                        return Err(Error::record(format!(
                            "destination offset {d} outside the block"
                        )))
                    }
                }
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// Writes the contribution vector `x[i]/outdeg(i)` (0 for dangling nodes) and
/// returns the dangling mass, a vector block at a time.
fn write_contributions(x: &RankVector, deg: &RankVector, path: &Path, n: u64) -> Result<f64> {
    let mut dangling = ChunkedSum::default();
    let mut w = VectorWriter::scratch(path, n, json!({"what": "contributions"}))?;
    let (mut s1, mut s2) = (Vec::new(), Vec::new());
    let (mut xb, mut db, mut cb) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..x.container().blocks().len() {
        x.read_block(i, &mut s1, &mut xb)?;
        deg.read_block(i, &mut s2, &mut db)?;
        if xb.len() != db.len() {
            return Err(Error::internal(format!(
                "{}: block {i} holds {} values, the degrees' {}",
                x.container().path().display(),
                xb.len(),
                db.len()
            )));
        }
        let base = (i * BLOCK_VALUES) as u64;
        cb.clear();
        for (k, (&xi, &d)) in xb.iter().zip(&db).enumerate() {
            if d > 0.0 {
                cb.push(xi / d);
            } else {
                dangling.add(base + k as u64, xi);
                cb.push(0.0);
            }
        }
        w.extend(&cb)?;
    }
    w.finish(&json!({}))?;
    Ok(dangling.total())
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
            return Err(Error::internal(format!(
                "{}: vector length {} for a graph of {} nodes",
                prev.display(),
                x.len(),
                self.n
            )));
        }
        // 1. Contributions and dangling mass.
        let step = Step {
            damping: self.damping,
            dangling_mass: write_contributions(&x, &deg, &self.contrib, self.n)?,
            uniform: 1.0 / self.n as f64,
        };
        let contrib = RankVector::open(&self.contrib)?;
        let pref = self.preference.as_ref().map(RankVector::open).transpose()?;
        let mut out = NextVector::create(next, self.n, step, self.dangling, pref.as_ref(), &x)?;
        // 2–3. Groups of blocks, one per thread, finished in docID order.
        let (n, block) = (self.n, self.block);
        let k = self.parts.len();
        let per_group = self.accs.len();
        for group in (0..k).step_by(per_group) {
            let ids = group..(group + per_group).min(k);
            let width = ids.len();
            let parts = &self.parts[ids.clone()];
            let done: Vec<Result<()>> = self.accs[..width]
                .par_iter_mut()
                .zip(parts.par_iter())
                .map(|(acc, part)| accumulate(part, n, &contrib, acc))
                .collect();
            done.into_iter().collect::<Result<()>>()?;
            for (b, acc) in ids.zip(&self.accs) {
                let base = b as u64 * block;
                let len = block.min(n - base) as usize;
                out.push_slice(base, &acc[..len])?;
            }
        }
        out.finish(meta)
    }
}

//! Edge files: the `edges` container kind (version 1).
//!
//! A docID-sorted adjacency file: for each source node with at least one arc,
//! its destinations in increasing order, without duplicates. The transposed
//! file has the same layout with the roles swapped (for each destination, its
//! sources). Header parameters: `{"direction": "forward"|"transposed",
//! "nodes": N}`. Footer metadata: `{"nodes", "arcs", "lists", "max_degree",
//! "max_degree_node"}` (`lists` = nodes with at least one arc).
//!
//! # Block layout
//!
//! zstd blocks of about 64 KiB of raw bytes. A block's first key is the first
//! node of the block as a big-endian `u64` (so byte order is node order and
//! [`Container::find_block`] seeks by node); its record count is the number of
//! arcs in it. The raw payload is a sequence of *lists*:
//!
//! ```text
//! list := varint(node − previous node)   (for the first list: node − first key, i.e. 0)
//!         varint(d)                        number of arcs in this list, ≥ 1
//!         varint(zigzag(dst₀ − node))      first destination relative to the node
//!         varint(dstᵢ − dstᵢ₋₁ − 1) …      d − 1 gaps
//! ```
//!
//! Inside a block, nodes strictly increase. A list longer than fits a block is
//! split: its continuation starts the next block with the same node (gap 0), and
//! readers concatenate. Gap coding makes the locality of docIDs (one host's pages
//! are contiguous) pay: most gaps are small and take one byte before zstd.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::container::{BlockCodec, Container, ContainerWriter, FileKind};
use crate::error::{Error, IoContext, Result};
use crate::varint;

/// The edge file kind (forward or transposed).
pub const EDGES: FileKind = FileKind {
    tag: "edges",
    version: 1,
    what: "edge file: per node its gap-coded neighbour list (forward or transposed)",
    verify: |path| EdgeFile::open(path)?.verify(),
    dump: dump_edges,
};

/// Writes an edge file as TSV: `node neighbour`, one arc a line.
fn dump_edges(path: &Path, out: &mut dyn std::io::Write) -> Result<()> {
    let f = EdgeFile::open(path)?;
    writeln!(out, "# node\tneighbour").at("stdout")?;
    for list in f.lists() {
        let (node, dsts) = list?;
        for d in dsts {
            writeln!(out, "{node}\t{d}").at("stdout")?;
        }
    }
    Ok(())
}
const BLOCK_BYTES: usize = 64 << 10;
const MAX_LIST_CHUNK: usize = 8192;
const ZSTD_LEVEL: i32 = 6;

/// Which way the arcs point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Source → destinations.
    Forward,
    /// Destination → sources.
    Transposed,
}

impl Direction {
    /// The name stored in the header.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Transposed => "transposed",
        }
    }
}

/// Totals of an edge file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeFileStats {
    /// Nodes of the graph (docIDs are `0..nodes`).
    pub nodes: u64,
    /// Arcs.
    pub arcs: u64,
    /// Nodes with at least one arc in this direction.
    pub lists: u64,
    /// Largest list.
    pub max_degree: u64,
    /// A node with the largest list.
    pub max_degree_node: u64,
    /// File size in bytes.
    pub bytes: u64,
}

/// Writes an edge file from arcs sorted by (node, neighbour), without duplicates.
pub struct EdgeWriter {
    w: ContainerWriter,
    block: Vec<u8>,
    block_first: u64,
    block_arcs: u64,
    prev_in_block: Option<u64>,
    node: Option<u64>,
    list: Vec<u64>,
    list_len: u64,
    last_arc: Option<(u64, u64)>,
    stats: EdgeFileStats,
    codec: BlockCodec,
}

impl EdgeWriter {
    /// Starts an edge file for a graph of `nodes` nodes.
    pub fn create(path: impl AsRef<Path>, direction: Direction, nodes: u64) -> Result<EdgeWriter> {
        let params = json!({"direction": direction.name(), "nodes": nodes});
        Ok(EdgeWriter {
            w: ContainerWriter::create(path, EDGES.tag, EDGES.version, &params)?,
            block: Vec::with_capacity(BLOCK_BYTES + 1024),
            block_first: 0,
            block_arcs: 0,
            prev_in_block: None,
            node: None,
            list: Vec::new(),
            list_len: 0,
            last_arc: None,
            stats: EdgeFileStats {
                nodes,
                ..Default::default()
            },
            codec: BlockCodec::Zstd(ZSTD_LEVEL),
        })
    }

    /// Stores blocks raw (varint-coded but not zstd-compressed): about twice
    /// the bytes, much cheaper to decode. For scratch files read many times,
    /// such as PageRank's per-block partitions; published graphs use zstd.
    pub fn raw_blocks(mut self) -> EdgeWriter {
        self.codec = BlockCodec::Raw;
        self.w.set_durable(false);
        self
    }

    /// Adds an arc; arcs must come in strictly increasing (node, neighbour) order.
    pub fn push(&mut self, node: u64, neighbour: u64) -> Result<()> {
        if self.last_arc.is_some_and(|last| last >= (node, neighbour)) {
            return Err(Error::internal(format!(
                "{}: arcs out of order: ({node}, {neighbour}) after {:?}",
                self.w.path().display(),
                self.last_arc
            )));
        }
        if node >= self.stats.nodes || neighbour >= self.stats.nodes {
            return Err(Error::internal(format!(
                "{}: arc ({node}, {neighbour}) outside the graph's {} nodes",
                self.w.path().display(),
                self.stats.nodes
            )));
        }
        self.last_arc = Some((node, neighbour));
        if self.node != Some(node) {
            self.end_list()?;
            self.node = Some(node);
        }
        self.list.push(neighbour);
        if self.list.len() >= MAX_LIST_CHUNK {
            self.flush_list_chunk()?;
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_list_chunk(&mut self) -> Result<()> {
        let Some(node) = self.node else { return Ok(()) };
        if self.list.is_empty() {
            return Ok(());
        }
        if self.block.is_empty() {
            self.block_first = node;
            self.prev_in_block = None;
        }
        let gap = match self.prev_in_block {
            None => node - self.block_first,
            Some(p) => node - p,
        };
        varint::put(&mut self.block, gap);
        varint::put(&mut self.block, self.list.len() as u64);
        varint::put(
            &mut self.block,
            varint::zigzag(self.list[0] as i64 - node as i64),
        );
        for w in self.list.windows(2) {
            varint::put(&mut self.block, w[1] - w[0] - 1);
        }
        self.prev_in_block = Some(node);
        self.block_arcs += self.list.len() as u64;
        self.list_len += self.list.len() as u64;
        self.list.clear();
        Ok(())
    }

    fn end_list(&mut self) -> Result<()> {
        self.flush_list_chunk()?;
        if let Some(node) = self.node {
            if self.list_len > 0 {
                self.stats.lists += 1;
                self.stats.arcs += self.list_len;
                if self.list_len > self.stats.max_degree {
                    self.stats.max_degree = self.list_len;
                    self.stats.max_degree_node = node;
                }
            }
        }
        self.list_len = 0;
        if self.block.len() >= BLOCK_BYTES {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        self.w.write_block(
            self.codec,
            &self.block_first.to_be_bytes(),
            self.block_arcs,
            &self.block,
        )?;
        self.block.clear();
        self.block_arcs = 0;
        self.prev_in_block = None;
        Ok(())
    }

    /// Publishes the file.
    pub fn finish(mut self) -> Result<EdgeFileStats> {
        self.end_list()?;
        self.flush_block()?;
        let s = &self.stats;
        let meta = json!({
            "nodes": s.nodes, "arcs": s.arcs, "lists": s.lists,
            "max_degree": s.max_degree, "max_degree_node": s.max_degree_node,
        });
        let mut stats = self.stats.clone();
        let (_, bytes) = self.w.finish(&meta)?;
        stats.bytes = bytes;
        Ok(stats)
    }
}

/// An open edge file.
pub struct EdgeFile {
    c: Container,
    direction: Direction,
    stats: EdgeFileStats,
}

impl EdgeFile {
    /// Opens and checks an edge file.
    pub fn open(path: impl AsRef<Path>) -> Result<EdgeFile> {
        let c = EDGES.open(path)?;
        let direction = match c.params()["direction"].as_str() {
            Some("forward") => Direction::Forward,
            Some("transposed") => Direction::Transposed,
            other => {
                return Err(Error::corrupt(
                    c.path(),
                    "header parameters",
                    0,
                    format!("direction is {other:?}, expected \"forward\" or \"transposed\""),
                ))
            }
        };
        let m = c.meta();
        let get = |k: &str| m[k].as_u64().unwrap_or(0);
        let stats = EdgeFileStats {
            nodes: c.params()["nodes"].as_u64().unwrap_or(0),
            arcs: get("arcs"),
            lists: get("lists"),
            max_degree: get("max_degree"),
            max_degree_node: get("max_degree_node"),
            bytes: c.size(),
        };
        if stats.arcs != c.records() {
            return Err(c.meta_error(format!(
                "{} arcs in metadata, {} in the block index",
                stats.arcs,
                c.records()
            )));
        }
        Ok(EdgeFile {
            c,
            direction,
            stats,
        })
    }

    /// The underlying container.
    pub fn container(&self) -> &Container {
        &self.c
    }
    /// Direction of the arcs.
    pub fn direction(&self) -> Direction {
        self.direction
    }
    /// Totals.
    pub fn stats(&self) -> &EdgeFileStats {
        &self.stats
    }
    /// The file's path.
    pub fn path(&self) -> PathBuf {
        self.c.path().to_path_buf()
    }

    /// Decodes block `i` into (node, neighbours) lists, checking its invariants.
    pub fn decode_block(&self, i: usize, raw: &[u8]) -> Result<Vec<(u64, Vec<u64>)>> {
        let mut lists = Vec::new();
        let mut buf = Vec::new();
        self.visit_block(i, raw, &mut buf, &mut |node, dsts| {
            lists.push((node, dsts.to_vec()));
            Ok(())
        })?;
        Ok(lists)
    }

    /// Decodes block `i`, calling `f(node, neighbours)` for each list in it
    /// (`buf` is reused between lists), checking the block's invariants.
    pub fn visit_block(
        &self,
        i: usize,
        raw: &[u8],
        buf: &mut Vec<u64>,
        f: &mut dyn FnMut(u64, &[u64]) -> Result<()>,
    ) -> Result<()> {
        let entry = &self.c.blocks()[i];
        let bad = |detail: String| {
            Error::corrupt(self.c.path(), format!("block {i}"), entry.offset, detail)
        };
        let first = <[u8; 8]>::try_from(entry.key.as_slice())
            .map(u64::from_be_bytes)
            .map_err(|_| {
                bad(format!(
                    "first key is {} bytes, expected 8",
                    entry.key.len()
                ))
            })?;
        let mut input = raw;
        let mut prev: Option<u64> = None;
        let mut arcs = 0u64;
        let nodes = self.stats.nodes;
        while !input.is_empty() {
            let truncated = || bad("a list is cut short".to_string());
            let gap = varint::get(&mut input).ok_or_else(truncated)?;
            let node = match prev {
                None if gap == 0 => first,
                None => return Err(bad(format!("first list starts at gap {gap}, expected 0"))),
                Some(_) if gap == 0 => return Err(bad("node repeated inside a block".into())),
                Some(p) => p
                    .checked_add(gap)
                    .ok_or_else(|| bad("node overflows".into()))?,
            };
            if node >= nodes {
                return Err(bad(format!(
                    "node {node} outside the graph's {nodes} nodes"
                )));
            }
            let degree = varint::get(&mut input).ok_or_else(truncated)?;
            if degree == 0 || degree > input.len() as u64 {
                return Err(bad(format!(
                    "list of node {node} has impossible length {degree}"
                )));
            }
            let first_dst = node as i128
                + varint::unzigzag(varint::get(&mut input).ok_or_else(truncated)?) as i128;
            buf.clear();
            let mut d = first_dst;
            for k in 0..degree {
                if k > 0 {
                    d += varint::get(&mut input).ok_or_else(truncated)? as i128 + 1;
                }
                if d < 0 || d >= nodes as i128 {
                    return Err(bad(format!(
                        "arc ({node}, {d}) outside the graph's {nodes} nodes"
                    )));
                }
                buf.push(d as u64);
            }
            arcs += degree;
            prev = Some(node);
            f(node, buf)?;
        }
        if arcs != entry.records {
            return Err(bad(format!(
                "{arcs} arcs decoded, the index says {}",
                entry.records
            )));
        }
        Ok(())
    }

    /// Calls `f(node, neighbours)` for every list in node order without
    /// allocating per list. A list split across blocks is delivered in pieces
    /// (consecutive calls with the same node).
    pub fn for_each_list(&self, mut f: impl FnMut(u64, &[u64]) -> Result<()>) -> Result<()> {
        let (mut scratch, mut raw, mut buf) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..self.c.blocks().len() {
            self.c.read_block_into(i, &mut scratch, &mut raw)?;
            self.visit_block(i, &raw, &mut buf, &mut f)?;
        }
        Ok(())
    }

    /// Iterates over all (node, neighbours) lists in node order, joining lists
    /// split across blocks.
    pub fn lists(&self) -> ListIter<'_> {
        ListIter {
            file: self,
            next_block: 0,
            pending: std::collections::VecDeque::new(),
            scratch: Vec::new(),
            raw: Vec::new(),
            last: None,
        }
    }

    /// The neighbours of `node` (empty if it has none).
    pub fn neighbours(&self, node: u64) -> Result<Vec<u64>> {
        let Some(mut i) = self.c.find_block(&node.to_be_bytes()) else {
            return Ok(Vec::new());
        };
        // A split list may start in an earlier block whose first key is the same node.
        while i > 0 && self.c.blocks()[i].key == node.to_be_bytes() {
            i -= 1;
        }
        let mut out = Vec::new();
        while i < self.c.blocks().len() {
            let lists = self.decode_block(i, &self.c.read_block(i)?)?;
            for (n, d) in lists {
                if n == node {
                    out.extend(d);
                } else if n > node {
                    return Ok(out);
                }
            }
            i += 1;
        }
        Ok(out)
    }

    /// Reads every block and checks every invariant: checksums, encoding, order,
    /// node range, totals.
    pub fn verify(&self) -> Result<()> {
        let mut last: Option<(u64, u64)> = None;
        let (mut arcs, mut lists) = (0u64, 0u64);
        let mut last_node = None;
        self.c.verify(|i, entry, raw| {
            for (node, dsts) in self.decode_block(i, raw)? {
                if last_node != Some(node) {
                    lists += 1;
                    last_node = Some(node);
                }
                for d in dsts {
                    if last.is_some_and(|l| l >= (node, d)) {
                        return Err(Error::corrupt(
                            self.c.path(),
                            format!("block {i}"),
                            entry.offset,
                            format!("arc ({node}, {d}) is not after {last:?}"),
                        ));
                    }
                    last = Some((node, d));
                    arcs += 1;
                }
            }
            Ok(())
        })?;
        if arcs != self.stats.arcs || lists != self.stats.lists {
            return Err(self.c.meta_error(format!(
                "metadata says {} arcs in {} lists, the blocks hold {arcs} in {lists}",
                self.stats.arcs, self.stats.lists
            )));
        }
        Ok(())
    }
}

/// Iterator over an edge file's lists. Yields `Result<(node, neighbours)>`.
pub struct ListIter<'a> {
    file: &'a EdgeFile,
    next_block: usize,
    pending: std::collections::VecDeque<(u64, Vec<u64>)>,
    scratch: Vec<u8>,
    raw: Vec<u8>,
    last: Option<(u64, Vec<u64>)>,
}

impl ListIter<'_> {
    fn refill(&mut self) -> Result<bool> {
        if self.next_block == self.file.c.blocks().len() {
            return Ok(false);
        }
        let i = self.next_block;
        self.next_block += 1;
        self.file
            .c
            .read_block_into(i, &mut self.scratch, &mut self.raw)?;
        self.pending.extend(self.file.decode_block(i, &self.raw)?);
        Ok(true)
    }

    fn next_list(&mut self) -> Result<Option<(u64, Vec<u64>)>> {
        loop {
            if self.pending.is_empty() && !self.refill()? {
                return Ok(self.last.take());
            }
            while let Some((node, dsts)) = self.pending.pop_front() {
                match &mut self.last {
                    Some((n, d)) if *n == node => d.extend(dsts),
                    _ => {
                        if let Some(done) = self.last.replace((node, dsts)) {
                            return Ok(Some(done));
                        }
                    }
                }
            }
        }
    }
}

impl Iterator for ListIter<'_> {
    type Item = Result<(u64, Vec<u64>)>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_list().transpose()
    }
}

/// Writes the sorted, deduplicated arcs of `sorted` into a new edge file at
/// `path`, advancing `task` as it goes.
pub fn write_sorted(
    mut sorted: crate::sort::Sorted<(u64, u64)>,
    path: &Path,
    direction: Direction,
    nodes: u64,
    task: &dyn crate::progress::Task,
) -> Result<EdgeFileStats> {
    let mut w = EdgeWriter::create(path, direction, nodes)?;
    let mut n = 0u64;
    while let Some((a, b)) = sorted.next_record()? {
        w.push(a, b)?;
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn write(path: &Path, nodes: u64, arcs: &[(u64, u64)]) -> EdgeFileStats {
        let mut w = EdgeWriter::create(path, Direction::Forward, nodes).unwrap();
        for &(s, d) in arcs {
            w.push(s, d).unwrap();
        }
        w.finish().unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn roundtrip(mut arcs in proptest::collection::vec((0u64..300, 0u64..300), 0..3000),
                     hub in proptest::collection::vec(0u64..20000, 0..20000)) {
            // A hub node with a very long list exercises list splitting.
            arcs.extend(hub.into_iter().map(|d| (150, d)));
            arcs.sort();
            arcs.dedup();
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("e.wm");
            let stats = write(&p, 20000, &arcs);
            let f = EdgeFile::open(&p).unwrap();
            f.verify().unwrap();
            prop_assert_eq!(f.stats().arcs, arcs.len() as u64);
            prop_assert_eq!(stats.arcs, arcs.len() as u64);
            let back: Vec<(u64, u64)> = f.lists()
                .flat_map(|l| { let (n, d) = l.unwrap(); d.into_iter().map(move |x| (n, x)) })
                .collect();
            prop_assert_eq!(&back, &arcs);
            for probe in [0u64, 150, 151, 299] {
                let want: Vec<u64> = arcs.iter().filter(|a| a.0 == probe).map(|a| a.1).collect();
                prop_assert_eq!(f.neighbours(probe).unwrap(), want);
            }
        }
    }

    #[test]
    fn rejects_bad_order_and_range() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EdgeWriter::create(dir.path().join("e.wm"), Direction::Forward, 10).unwrap();
        w.push(1, 2).unwrap();
        assert!(w.push(1, 2).is_err());
        assert!(w.push(0, 5).is_err());
        assert!(w.push(3, 10).is_err());
    }
}

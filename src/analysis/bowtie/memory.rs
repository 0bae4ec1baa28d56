//! The bow-tie in memory, for a graph (or the residual of the component
//! search) that fits the budget: the arcs as compressed sparse rows, Tarjan's
//! algorithm for the SCCs, searches for the parts.
//!
//! Same answer as the semi-external drains, by the same rules: the pivot is
//! the node with the largest in-degree × out-degree (smallest id on ties);
//! if another SCC is larger than the pivot's, the bow-tie is taken around the
//! largest one, ties broken by the smallest *root* (the largest node id of
//! the component, which is what a colouring round finds it by).

use rayon::prelude::*;

use super::{Parts, Passes};
use crate::analysis::nodeset::NodeBits;
use crate::error::{Error, Result};
use crate::graph::EdgeFile;

/// Bytes a node costs in memory besides its rows: Tarjan's index, low link,
/// component and stack slots (16), its call frame (16), sizes and roots of
/// components (8), the four part sets and the search stack (5), and the
/// list directory while loading (16).
const BYTES_PER_NODE: u64 = 16 + 16 + 8 + 5 + 16;

/// Compressed sparse rows: the neighbours of `v` are
/// `targets[offsets[v]..offsets[v + 1]]`, increasing.
pub(super) struct Csr {
    offsets: Vec<usize>,
    targets: Vec<u32>,
}

impl Csr {
    /// Bytes of the rows of a graph of `nodes` nodes and `arcs` arcs.
    pub(super) fn bytes_for(nodes: u64, arcs: u64) -> u64 {
        (nodes + 1) * 8 + arcs * 4
    }

    fn nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    #[inline]
    fn row(&self, v: usize) -> &[u32] {
        &self.targets[self.offsets[v]..self.offsets[v + 1]]
    }

    fn degree(&self, v: usize) -> u64 {
        (self.offsets[v + 1] - self.offsets[v]) as u64
    }

    /// Rows from lists delivered in increasing node order (a list may come in
    /// pieces): `fill` calls its argument with `(node, neighbours)`.
    pub(super) fn from_lists(
        nodes: usize,
        arcs: usize,
        fill: impl FnOnce(&mut dyn FnMut(usize, &[u32])) -> Result<()>,
    ) -> Result<Csr> {
        let mut offsets = vec![0usize; nodes + 1];
        let mut targets = Vec::with_capacity(arcs);
        let mut last = 0usize;
        fill(&mut |v, nbrs| {
            for slot in &mut offsets[last + 1..=v] {
                *slot = targets.len();
            }
            last = v;
            targets.extend_from_slice(nbrs);
        })?;
        for slot in &mut offsets[last + 1..] {
            *slot = targets.len();
        }
        Ok(Csr { offsets, targets })
    }

    /// The whole edge file, its blocks decoded in parallel straight into
    /// their places (the block index gives each block's arc count).
    pub(super) fn load(file: &EdgeFile) -> Result<Csr> {
        let n = file.stats().nodes as usize;
        let blocks = file.container().blocks();
        let arcs: u64 = blocks.iter().map(|b| b.records).sum();
        if arcs != file.stats().arcs {
            return Err(Error::corrupt(
                file.path(),
                "block index",
                0,
                format!(
                    "the blocks hold {arcs} arcs, the footer says {}",
                    file.stats().arcs
                ),
            ));
        }
        let mut targets = vec![0u32; arcs as usize];
        let mut pieces: Vec<&mut [u32]> = Vec::with_capacity(blocks.len());
        let mut rest = targets.as_mut_slice();
        for b in blocks {
            let (piece, tail) = rest.split_at_mut(b.records as usize);
            pieces.push(piece);
            rest = tail;
        }
        // Each block's lists: (node, arcs of it in the block).
        let lists: Vec<Vec<(u32, u32)>> = pieces
            .into_par_iter()
            .enumerate()
            .map_init(
                || (Vec::new(), Vec::new(), Vec::new()),
                |(scratch, raw, buf), (i, piece)| {
                    file.container().read_block_into(i, scratch, raw)?;
                    let mut at = 0usize;
                    let mut lists = Vec::new();
                    file.visit_block(i, raw, buf, &mut |node, dsts| {
                        let dst = piece.get_mut(at..at + dsts.len()).ok_or_else(|| {
                            Error::corrupt(
                                file.path(),
                                format!("block {i}"),
                                file.container().blocks()[i].offset,
                                "more arcs than the block index says",
                            )
                        })?;
                        for (d, &s) in dst.iter_mut().zip(dsts) {
                            *d = s as u32;
                        }
                        at += dsts.len();
                        lists.push((node as u32, dsts.len() as u32));
                        Ok(())
                    })?;
                    Ok(lists)
                },
            )
            .collect::<Result<_>>()?;
        let mut offsets = vec![0usize; n + 1];
        for &(node, k) in lists.iter().flatten() {
            offsets[node as usize + 1] += k as usize;
        }
        drop(lists);
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        Ok(Csr { offsets, targets })
    }
}

/// The SCCs found in memory: every node's component, and per component its
/// size and root (largest node).
pub(super) struct Components {
    pub(super) of: Vec<u32>,
    pub(super) size: Vec<u32>,
    pub(super) root: Vec<u32>,
}

impl Components {
    /// The largest component, ties by the smallest root, other than `skip`.
    pub(super) fn largest(&self, skip: Option<u32>) -> Option<u32> {
        (0..self.size.len() as u32)
            .filter(|&c| Some(c) != skip)
            .max_by_key(|&c| {
                (
                    self.size[c as usize],
                    std::cmp::Reverse(self.root[c as usize]),
                )
            })
    }
}

/// Tarjan's algorithm, iterative (Tarjan, *Depth-first search and linear
/// graph algorithms*, 1972): a node visited and not yet in a component is on
/// the stack.
pub(super) fn tarjan(g: &Csr) -> Components {
    const NONE: u32 = u32::MAX;
    let n = g.nodes();
    let mut index = vec![0u32; n]; // 0: not visited; else the visit number
    let mut low = vec![0u32; n];
    let mut of = vec![NONE; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut call: Vec<(u32, usize)> = Vec::new();
    let (mut size, mut root) = (Vec::new(), Vec::new());
    let mut next = 1u32;
    for start in 0..n {
        if index[start] != 0 {
            continue;
        }
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start as u32);
        call.push((start as u32, g.offsets[start]));
        while let Some(top) = call.len().checked_sub(1) {
            let (v, mut pos) = call[top];
            let v = v as usize;
            let end = g.offsets[v + 1];
            let mut descend = None;
            while pos < end {
                let w = g.targets[pos] as usize;
                pos += 1;
                if index[w] == 0 {
                    descend = Some(w);
                    break;
                } else if of[w] == NONE {
                    low[v] = low[v].min(index[w]);
                }
            }
            call[top].1 = pos;
            if let Some(w) = descend {
                index[w] = next;
                low[w] = next;
                next += 1;
                stack.push(w as u32);
                call.push((w as u32, g.offsets[w]));
                continue;
            }
            call.pop();
            if let Some(&(u, _)) = call.last() {
                low[u as usize] = low[u as usize].min(low[v]);
            }
            if low[v] == index[v] {
                let c = size.len() as u32;
                let (mut k, mut top_node) = (0u32, 0u32);
                while let Some(w) = stack.pop() {
                    of[w as usize] = c;
                    k += 1;
                    top_node = top_node.max(w);
                    if w as usize == v {
                        break;
                    }
                }
                size.push(k);
                root.push(top_node);
            }
        }
    }
    Components { of, size, root }
}

/// The nodes reachable from `seeds` along `g`'s rows, entering only nodes
/// that `allowed` accepts (seeds are in whatever `allowed` says).
fn reach(g: &Csr, seeds: &NodeBits, allowed: impl Fn(u64) -> bool) -> NodeBits {
    let mut seen = seeds.clone();
    let mut todo: Vec<u32> = seeds.iter().map(|v| v as u32).collect();
    while let Some(u) = todo.pop() {
        for &w in g.row(u as usize) {
            if !seen.get(w as u64) && allowed(w as u64) {
                seen.insert(w as u64);
                todo.push(w);
            }
        }
    }
    seen
}

/// Bytes of the bow-tie of a whole graph in memory: its rows both ways and
/// the per-node arrays.
pub(super) fn whole_bytes(nodes: u64, arcs: u64) -> u64 {
    2 * Csr::bytes_for(nodes, arcs) + BYTES_PER_NODE * nodes
}

/// Whether the whole graph fits `budget` in memory (and its ids in 32 bits).
pub(super) fn fits(nodes: u64, arcs: u64, budget: u64) -> bool {
    nodes < u32::MAX as u64 && whole_bytes(nodes, arcs) <= budget
}

/// Bytes of the residual pass over `nodes` active nodes and at most `arcs`
/// arcs among them (rows, the node ids, Tarjan).
pub(super) fn residual_bytes(nodes: u64, arcs: u64) -> u64 {
    Csr::bytes_for(nodes, arcs) + 8 * nodes + BYTES_PER_NODE * nodes
}

/// What the in-memory bow-tie finds.
pub(super) struct Found {
    pub(super) parts: Parts,
    pub(super) pivot: u64,
    /// (size, count) of every SCC but the giant one, by size.
    pub(super) sizes: Vec<(u64, u64)>,
    pub(super) passes: Passes,
}

/// The bow-tie of the graph in `fwd` and its transpose `bwd`, in memory
/// (the caller checked [`fits`]).
pub(super) fn bow_tie(fwd: &EdgeFile, bwd: &EdgeFile) -> Result<Found> {
    let n = fwd.stats().nodes;
    let (g, t) = rayon::join(|| Csr::load(fwd), || Csr::load(bwd));
    let (g, t) = (g?, t?);
    let passes = Passes {
        forward_sweeps: 1,
        forward_blocks_read: fwd.container().blocks().len() as u64,
        forward_blocks: fwd.container().blocks().len() as u64,
        transposed_sweeps: 1,
        transposed_blocks_read: bwd.container().blocks().len() as u64,
        transposed_blocks: bwd.container().blocks().len() as u64,
        in_memory_nodes: n,
        ..Passes::default()
    };
    let mut parts = Parts {
        fwd: NodeBits::new(n),
        bwd: NodeBits::new(n),
        ri: NodeBits::new(n),
        ro: NodeBits::new(n),
    };
    if n == 0 {
        return Ok(Found {
            parts,
            pivot: 0,
            sizes: Vec::new(),
            passes,
        });
    }
    let comps = tarjan(&g);
    // The pivot, as the semi-external pass picks it.
    let (mut pivot, mut best) = (0u64, 0u128);
    for v in 0..n as usize {
        let score = g.degree(v) as u128 * t.degree(v) as u128;
        if score > best {
            (pivot, best) = (v as u64, score);
        }
    }
    let mut giant = comps.of[pivot as usize];
    if let Some(c) = comps.largest(Some(giant)) {
        if comps.size[c as usize] > comps.size[giant as usize] {
            giant = c;
            pivot = comps.root[c as usize] as u64;
        }
    }
    let mut sizes = std::collections::BTreeMap::<u64, u64>::new();
    for (c, &s) in comps.size.iter().enumerate() {
        if c as u32 != giant {
            *sizes.entry(s as u64).or_default() += 1;
        }
    }
    drop(comps);
    let mut seed = NodeBits::new(n);
    seed.insert(pivot);
    parts.fwd = reach(&g, &seed, |_| true);
    parts.bwd = reach(&t, &seed, |_| true);
    let outside = |v: u64| !parts.fwd.get(v) && !parts.bwd.get(v);
    let mut ins = parts.bwd.clone();
    ins.subtract(&parts.fwd);
    let mut outs = parts.fwd.clone();
    outs.subtract(&parts.bwd);
    let mut ri = reach(&g, &ins, outside);
    let mut ro = reach(&t, &outs, outside);
    ri.subtract(&ins);
    ro.subtract(&outs);
    parts.ri = ri;
    parts.ro = ro;
    Ok(Found {
        parts,
        pivot,
        sizes: sizes.into_iter().collect(),
        passes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr(n: usize, arcs: &[(usize, u32)]) -> Csr {
        let mut a = arcs.to_vec();
        a.sort_unstable();
        Csr::from_lists(n, a.len(), |f| {
            for &(s, d) in &a {
                f(s, &[d]);
            }
            Ok(())
        })
        .unwrap()
    }

    #[test]
    fn tarjan_finds_cycles_and_singletons() {
        // 0 → 1 → 2 → 0, 2 → 3, 3 → 4 → 3, 5 alone.
        let g = csr(6, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3)]);
        let c = tarjan(&g);
        assert_eq!(c.of[0], c.of[1]);
        assert_eq!(c.of[1], c.of[2]);
        assert_eq!(c.of[3], c.of[4]);
        assert_ne!(c.of[0], c.of[3]);
        let mut sizes = c.size.clone();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![1, 2, 3]);
        assert_eq!(c.root[c.of[0] as usize], 2);
        assert_eq!(c.root[c.of[3] as usize], 4);
        let big = c.largest(None).unwrap();
        assert_eq!(c.size[big as usize], 3);
    }

    #[test]
    fn rows_skip_nodes_without_lists() {
        let g = csr(5, &[(1, 2), (1, 3), (4, 0)]);
        assert_eq!(g.row(0), &[] as &[u32]);
        assert_eq!(g.row(1), &[2, 3]);
        assert_eq!(g.row(2), &[] as &[u32]);
        assert_eq!(g.row(4), &[0]);
    }
}

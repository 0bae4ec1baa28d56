//! Per-node arrays of the semi-external graph analyses: a bit per node
//! ([`NodeBits`]) and a 32- or 64-bit label per node ([`NodeLabels`]), the
//! only things held in memory while the edges stream from disk.

/// One bit per node, in 64-bit words (node `v` is bit `v % 64` of word `v / 64`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeBits {
    words: Vec<u64>,
    nodes: u64,
}

impl NodeBits {
    /// All clear, for `nodes` nodes.
    pub fn new(nodes: u64) -> NodeBits {
        NodeBits {
            words: vec![0; nodes.div_ceil(64) as usize],
            nodes,
        }
    }

    /// Bytes of memory held by a set of `nodes` nodes.
    pub fn bytes_for(nodes: u64) -> u64 {
        nodes.div_ceil(64) * 8
    }

    /// Nodes covered.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The words (for checkpoints).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words, writable (for checkpoints); bits past `nodes` must stay clear.
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// Whether `v` is set.
    #[inline]
    pub fn get(&self, v: u64) -> bool {
        self.words[(v >> 6) as usize] >> (v & 63) & 1 == 1
    }

    /// Sets `v`; returns whether it was clear.
    #[inline]
    pub fn insert(&mut self, v: u64) -> bool {
        let w = &mut self.words[(v >> 6) as usize];
        let bit = 1u64 << (v & 63);
        let was_clear = *w & bit == 0;
        *w |= bit;
        was_clear
    }

    /// Clears `v`.
    #[inline]
    pub fn remove(&mut self, v: u64) {
        self.words[(v >> 6) as usize] &= !(1u64 << (v & 63));
    }

    /// Clears every bit.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Sets every node's bit.
    pub fn fill(&mut self) {
        self.words.fill(u64::MAX);
        self.trim_tail();
    }

    fn trim_tail(&mut self) {
        let r = self.nodes % 64;
        if r != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << r) - 1;
            }
        }
    }

    /// Number of set bits.
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// Whether no bit is set.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Whether some node in `lo..=hi` is set (`hi` is clamped to the last node).
    pub fn any_in(&self, lo: u64, hi: u64) -> bool {
        let hi = hi.min(self.nodes.saturating_sub(1));
        if lo > hi || self.nodes == 0 {
            return false;
        }
        let (wl, wh) = ((lo >> 6) as usize, (hi >> 6) as usize);
        let low_mask = u64::MAX << (lo & 63);
        let high_mask = u64::MAX >> (63 - (hi & 63));
        if wl == wh {
            return self.words[wl] & low_mask & high_mask != 0;
        }
        self.words[wl] & low_mask != 0
            || self.words[wl + 1..wh].iter().any(|&w| w != 0)
            || self.words[wh] & high_mask != 0
    }

    /// Clears the nodes in `lo..hi`.
    pub fn clear_range(&mut self, lo: u64, hi: u64) {
        let hi = hi.min(self.nodes);
        let mut v = lo;
        while v < hi {
            if v & 63 == 0 && hi - v >= 64 {
                self.words[(v >> 6) as usize] = 0;
                v += 64;
            } else {
                self.remove(v);
                v += 1;
            }
        }
    }

    /// `self ∩= other`.
    pub fn and_with(&mut self, other: &NodeBits) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }

    /// `self \= other`.
    pub fn subtract(&mut self, other: &NodeBits) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
    }

    /// `self ∪= other`.
    pub fn or_with(&mut self, other: &NodeBits) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// The set nodes in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as u64;
                w &= w - 1;
                Some(i as u64 * 64 + b)
            })
        })
    }
}

/// A label per node: `u32` while node ids fit (4 bytes a node), `u64` beyond.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeLabels {
    /// Graphs of fewer than 2³² nodes.
    Narrow(Vec<u32>),
    /// Larger graphs.
    Wide(Vec<u64>),
}

impl NodeLabels {
    /// Zeroed labels for `nodes` nodes.
    pub fn new(nodes: u64) -> NodeLabels {
        if nodes <= u32::MAX as u64 {
            NodeLabels::Narrow(vec![0; nodes as usize])
        } else {
            NodeLabels::Wide(vec![0; nodes as usize])
        }
    }

    /// Bytes of memory held for `nodes` nodes.
    pub fn bytes_for(nodes: u64) -> u64 {
        if nodes <= u32::MAX as u64 {
            nodes * 4
        } else {
            nodes * 8
        }
    }

    /// The label of `v`.
    #[inline]
    pub fn get(&self, v: u64) -> u64 {
        match self {
            NodeLabels::Narrow(a) => a[v as usize] as u64,
            NodeLabels::Wide(a) => a[v as usize],
        }
    }

    /// Sets the label of `v` (`x` must fit the width: it is a node id or a
    /// count of nodes).
    #[inline]
    pub fn set(&mut self, v: u64, x: u64) {
        match self {
            NodeLabels::Narrow(a) => a[v as usize] = x as u32,
            NodeLabels::Wide(a) => a[v as usize] = x,
        }
    }

    /// The labels as little-endian bytes, `chunk` labels at a time (for checkpoints).
    pub fn for_each_chunk(
        &self,
        chunk: usize,
        mut f: impl FnMut(&[u8]) -> crate::Result<()>,
    ) -> crate::Result<()> {
        let mut buf = Vec::new();
        match self {
            NodeLabels::Narrow(a) => {
                for c in a.chunks(chunk) {
                    buf.clear();
                    c.iter()
                        .for_each(|x| buf.extend_from_slice(&x.to_le_bytes()));
                    f(&buf)?;
                }
            }
            NodeLabels::Wide(a) => {
                for c in a.chunks(chunk) {
                    buf.clear();
                    c.iter()
                        .for_each(|x| buf.extend_from_slice(&x.to_le_bytes()));
                    f(&buf)?;
                }
            }
        }
        Ok(())
    }

    /// Bytes per label.
    pub fn width(&self) -> usize {
        match self {
            NodeLabels::Narrow(_) => 4,
            NodeLabels::Wide(_) => 8,
        }
    }

    /// Overwrites labels `first..` from little-endian bytes of this width.
    pub fn load(&mut self, first: u64, bytes: &[u8]) {
        let w = self.width();
        for (k, b) in bytes.chunks_exact(w).enumerate() {
            let x = match b.len() {
                4 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
                _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            };
            self.set(first + k as u64, x);
        }
    }

    /// Nodes covered.
    pub fn len(&self) -> u64 {
        match self {
            NodeLabels::Narrow(a) => a.len() as u64,
            NodeLabels::Wide(a) => a.len() as u64,
        }
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn bits_match_a_vec_of_bools(nodes in 1u64..300, ops in proptest::collection::vec((0u8..3, 0u64..300, 0u64..300), 0..200)) {
            let mut b = NodeBits::new(nodes);
            let mut naive = vec![false; nodes as usize];
            for (op, x, y) in ops {
                let (x, y) = (x % nodes, y % nodes);
                match op {
                    0 => { b.insert(x); naive[x as usize] = true; }
                    1 => { b.remove(x); naive[x as usize] = false; }
                    _ => {
                        let (lo, hi) = (x.min(y), x.max(y));
                        prop_assert_eq!(b.any_in(lo, hi), naive[lo as usize..=hi as usize].iter().any(|&z| z));
                        b.clear_range(lo, hi);
                        naive[lo as usize..hi as usize].iter_mut().for_each(|z| *z = false);
                    }
                }
            }
            let want: Vec<u64> = (0..nodes).filter(|&v| naive[v as usize]).collect();
            prop_assert_eq!(b.iter().collect::<Vec<_>>(), want.clone());
            prop_assert_eq!(b.count(), want.len() as u64);
            b.fill();
            prop_assert_eq!(b.count(), nodes);
        }
    }

    #[test]
    fn labels_roundtrip_through_bytes() {
        let mut l = NodeLabels::new(10);
        for v in 0..10 {
            l.set(v, v * 3);
        }
        let mut bytes = Vec::new();
        l.for_each_chunk(4, |c| {
            bytes.extend_from_slice(c);
            Ok(())
        })
        .unwrap();
        let mut m = NodeLabels::new(10);
        m.load(0, &bytes);
        assert_eq!(l, m);
        assert_eq!(l.width(), 4);
    }
}

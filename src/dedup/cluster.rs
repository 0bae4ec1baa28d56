//! Clusters from pairs: union-find over docIDs, and the cluster file with one
//! doc kept per cluster — the one with the highest PageRank (IIR §19.6: keep
//! one representative of each near-duplicate class; Brin & Page's rank picks
//! which).

use std::path::Path;

use serde_json::json;

use crate::dedup::files::CLUSTERS;
use crate::dedup::Alg;
use crate::error::{Error, Result};
use crate::ingest::pagefile::PageFileWriter;
use crate::rank::RankVector;
use crate::varint;

/// What writing the clusters counted.
pub(crate) struct ClusterCounts {
    /// Clusters of two or more docs.
    pub(crate) clusters: u64,
    /// Docs in them.
    pub(crate) docs: u64,
    /// (size, cluster id) of every cluster, largest first, then by id.
    pub(crate) by_size: Vec<(u64, u64)>,
}

/// Writes the clusters of `uf` to `path`: per cluster (id = its smallest
/// docID) its members in docID order, each with a keep flag set on the member
/// with the highest rank in `ranks` (the smallest docID among equals).
pub(crate) fn write_clusters(
    uf: &mut UnionFind,
    ranks: &RankVector,
    alg: Alg,
    path: &Path,
) -> Result<ClusterCounts> {
    let clusters = uf.clusters();
    let mut w = PageFileWriter::create(path, &CLUSTERS, 256 << 10, 3)?;
    let mut by_size: Vec<(u64, u64)> = Vec::new();
    let mut in_clusters = 0u64;
    let mut payload = Vec::new();
    let mut rr = ranks.reader();
    for members in &clusters {
        let mut best = (f64::NEG_INFINITY, members[0]);
        for &m in members {
            let v = rr.get(m)?;
            if v > best.0 {
                best = (v, m);
            }
        }
        for &m in members {
            payload.clear();
            varint::put(&mut payload, m);
            payload.push(u8::from(m == best.1));
            w.push(members[0], &payload)?;
        }
        in_clusters += members.len() as u64;
        by_size.push((members.len() as u64, members[0]));
    }
    w.finish(&json!({"algorithm": alg.name(), "clusters": clusters.len(), "docs": in_clusters}))?;
    by_size.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    Ok(ClusterCounts {
        clusters: clusters.len() as u64,
        docs: in_clusters,
        by_size,
    })
}

/// Union-find over docIDs with path halving and union by size, in an array of
/// the job's docs: 8 bytes per doc, which must fit in the budget.
pub(crate) struct UnionFind {
    parent: Vec<u32>,
    wide: Vec<u64>,
    size: std::collections::HashMap<u64, u32>,
}

impl UnionFind {
    pub(crate) fn new(n: u64, budget: u64) -> Result<UnionFind> {
        let need = n.saturating_mul(if n < u32::MAX as u64 { 4 } else { 8 });
        if need > budget {
            return Err(Error::budget(
                format!("union-find over {n} docs"),
                need,
                budget,
            ));
        }
        Ok(if n < u32::MAX as u64 {
            UnionFind {
                parent: (0..n as u32).collect(),
                wide: Vec::new(),
                size: Default::default(),
            }
        } else {
            UnionFind {
                parent: Vec::new(),
                wide: (0..n).collect(),
                size: Default::default(),
            }
        })
    }

    fn get(&self, i: u64) -> u64 {
        if self.wide.is_empty() {
            u64::from(self.parent[i as usize])
        } else {
            self.wide[i as usize]
        }
    }

    fn set(&mut self, i: u64, p: u64) {
        if self.wide.is_empty() {
            self.parent[i as usize] = p as u32;
        } else {
            self.wide[i as usize] = p;
        }
    }

    fn find(&mut self, mut i: u64) -> u64 {
        while self.get(i) != i {
            let gp = self.get(self.get(i));
            self.set(i, gp);
            i = gp;
        }
        i
    }

    /// Joins the sets of `a` and `b`; the smaller docID becomes the root, so
    /// roots are the clusters' smallest members.
    pub(crate) fn union(&mut self, a: u64, b: u64) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.set(hi, lo);
            let s = self.size.remove(&hi).unwrap_or(1);
            *self.size.entry(lo).or_insert(1) += s;
        }
    }

    /// The clusters of two or more docs, each sorted, ordered by smallest member.
    pub(crate) fn clusters(&mut self) -> Vec<Vec<u64>> {
        let roots: Vec<u64> = self.size.keys().copied().collect();
        let mut map: std::collections::HashMap<u64, Vec<u64>> =
            roots.iter().map(|&r| (r, Vec::new())).collect();
        let n = if self.wide.is_empty() {
            self.parent.len() as u64
        } else {
            self.wide.len() as u64
        };
        for i in 0..n {
            let r = self.find(i);
            if let Some(v) = map.get_mut(&r) {
                v.push(i);
            }
        }
        let mut out: Vec<Vec<u64>> = map.into_values().filter(|v| v.len() >= 2).collect();
        out.sort_by_key(|v| v[0]);
        out
    }
}

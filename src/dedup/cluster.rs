//! Clusters from pairs: union-find over the docs in pairs, and the cluster file with one
//! doc kept per cluster (IIR §19.6: keep one representative of each
//! near-duplicate class), by [`Keep`]: the one with the highest PageRank when
//! the job has ranks (Brin & Page's rank picks which), otherwise the one met
//! first in the input (the smallest page number: what a dataset builder
//! keeps, as datatrove's MinhashDedup does).

use std::path::Path;

use crate::dedup::files::ClusterWriter;
use crate::dedup::Alg;
use crate::error::{Error, Result};
use crate::rank::RankVector;

/// What writing the clusters counted.
pub(crate) struct ClusterCounts {
    /// Clusters of two or more docs.
    pub(crate) clusters: u64,
    /// Docs in them.
    pub(crate) docs: u64,
    /// (size, cluster id) of every cluster, largest first, then by id.
    pub(crate) by_size: Vec<(u64, u64)>,
}

/// Which member of a cluster is kept.
pub(crate) enum Keep<'a> {
    /// The highest rank (the smallest docID among equals).
    Rank(&'a RankVector),
    /// The member whose page came first in the input: the smallest key set
    /// by [`PairDocs::set_keys`] (the docs' page numbers).
    FirstInInput,
}

impl Keep<'_> {
    /// Its name in the figures.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Keep::Rank(_) => "highest PageRank",
            Keep::FirstInInput => "first in input order",
        }
    }
}

/// Writes the clusters of `uf` to `path`: per cluster (id = its smallest
/// docID) its members in docID order, each with a keep flag set on the member
/// `keep` picks.
pub(crate) fn write_clusters(
    uf: &mut PairDocs,
    keep: &Keep,
    alg: Alg,
    path: &Path,
) -> Result<ClusterCounts> {
    let mut w = ClusterWriter::create(path)?;
    let mut by_size: Vec<(u64, u64)> = Vec::new();
    let mut rr = match keep {
        Keep::Rank(ranks) => Some(ranks.reader()),
        Keep::FirstInInput => None,
    };
    uf.for_each_cluster(|members, keys| {
        let best = match &mut rr {
            Some(rr) => {
                let mut best = (f64::NEG_INFINITY, members[0]);
                for &m in members {
                    let v = rr.get(m)?;
                    if v > best.0 {
                        best = (v, m);
                    }
                }
                best
            }
            None => {
                let i = (0..members.len())
                    .min_by_key(|&i| (keys.get(i).copied().unwrap_or(u64::MAX), members[i]))
                    .unwrap_or(0);
                (0.0, members[i])
            }
        };
        for &m in members {
            w.push(members[0], m, m == best.1)?;
        }
        by_size.push((members.len() as u64, members[0]));
        Ok(())
    })?;
    let (clusters, in_clusters) = w.finish(alg.name())?;
    by_size.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    Ok(ClusterCounts {
        clusters,
        docs: in_clusters,
        by_size,
    })
}

/// The docs that occur in pairs, in docID order, with a union-find over their
/// positions (path halving; the smaller root wins, so a cluster's root is its
/// smallest docID). Memory is [`PairDocs::BYTES_PER_DOC`] a doc *in pairs*,
/// whatever the size of the job: a docID, a parent, and a position in the
/// cluster pass.
pub(crate) struct PairDocs {
    docs: Vec<u64>,
    parent: Vec<u32>,
    /// A key per doc (its page number) when [`Keep::FirstInInput`] picks by it.
    keys: Vec<u64>,
}

impl PairDocs {
    /// Bytes held per doc in pairs.
    pub(crate) const BYTES_PER_DOC: u64 = 16;
    /// Bytes held per doc in pairs for its key ([`PairDocs::set_keys`]).
    pub(crate) const BYTES_PER_KEY: u64 = 8;

    /// Over `docs`, strictly increasing.
    pub(crate) fn new(docs: Vec<u64>) -> Result<PairDocs> {
        let n = u32::try_from(docs.len())
            .map_err(|_| Error::internal(format!("{} docs in pairs", docs.len())))?;
        if docs.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::internal("docs in pairs not strictly increasing"));
        }
        Ok(PairDocs {
            docs,
            parent: (0..n).collect(),
            keys: Vec::new(),
        })
    }

    /// The docs, in docID order.
    pub(crate) fn docs(&self) -> &[u64] {
        &self.docs
    }

    /// Sets a key per doc, in the order of [`PairDocs::docs`].
    pub(crate) fn set_keys(&mut self, keys: Vec<u64>) -> Result<()> {
        if keys.len() != self.docs.len() {
            return Err(Error::internal("a key per doc in pairs"));
        }
        self.keys = keys;
        Ok(())
    }

    /// The place of `doc` among the docs.
    pub(crate) fn position(&self, doc: u64) -> Result<u32> {
        self.docs
            .binary_search(&doc)
            .map(|i| i as u32)
            .map_err(|_| Error::internal(format!("doc {doc} of a pair was not counted")))
    }

    fn find(&mut self, mut i: u32) -> u32 {
        while self.parent[i as usize] != i {
            let gp = self.parent[self.parent[i as usize] as usize];
            self.parent[i as usize] = gp;
            i = gp;
        }
        i
    }

    /// Joins the clusters of docs `a` and `b`.
    pub(crate) fn union(&mut self, a: u64, b: u64) -> Result<()> {
        let (pa, pb) = (self.position(a)?, self.position(b)?);
        let (ra, rb) = (self.find(pa), self.find(pb));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[hi as usize] = lo;
        }
        Ok(())
    }

    /// Calls `f` with each cluster's members in docID order and their keys
    /// (none when no keys were set), clusters in the order of their smallest
    /// member. (Every doc here is in a pair, so every cluster has two or
    /// more.)
    pub(crate) fn for_each_cluster(
        &mut self,
        mut f: impl FnMut(&[u64], &[u64]) -> Result<()>,
    ) -> Result<()> {
        let n = self.parent.len() as u32;
        for i in 0..n {
            let r = self.find(i);
            self.parent[i as usize] = r;
        }
        // Positions grouped by root; roots increase with their smallest
        // member, and a stable sort keeps members in order.
        let mut order: Vec<u32> = (0..n).collect();
        order.sort_by_key(|&i| self.parent[i as usize]);
        let mut members = Vec::new();
        let mut keys = Vec::new();
        for group in order.chunk_by(|&x, &y| self.parent[x as usize] == self.parent[y as usize]) {
            members.clear();
            members.extend(group.iter().map(|&i| self.docs[i as usize]));
            keys.clear();
            if !self.keys.is_empty() {
                keys.extend(group.iter().map(|&i| self.keys[i as usize]));
            }
            f(&members, &keys)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// Connected components by graph search, clusters ordered as `PairDocs`
    /// gives them.
    fn naive(pairs: &[(u64, u64)]) -> Vec<Vec<u64>> {
        let mut adj: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for &(a, b) in pairs {
            adj.entry(a).or_default().push(b);
            adj.entry(b).or_default().push(a);
        }
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for &start in adj.keys() {
            if !seen.insert(start) {
                continue;
            }
            let mut comp = vec![start];
            let mut stack = vec![start];
            while let Some(d) = stack.pop() {
                for &e in &adj[&d] {
                    if seen.insert(e) {
                        comp.push(e);
                        stack.push(e);
                    }
                }
            }
            comp.sort_unstable();
            out.push(comp);
        }
        out
    }

    proptest! {
        /// Pairs over sparse docIDs anywhere in `u64` (the job's size does
        /// not matter, only the docs in pairs): the clusters are the pair
        /// graph's connected components, members in docID order, clusters by
        /// smallest member.
        #[test]
        fn clusters_are_the_connected_components(
            raw in prop::collection::vec((0u64..60, 0u64..60), 0..120),
            spread in 1u64..1_000_000_000_000,
        ) {
            let pairs: Vec<(u64, u64)> = raw
                .into_iter()
                .filter(|(a, b)| a != b)
                .map(|(a, b)| (a.min(b) * spread, a.max(b) * spread))
                .collect();
            let docs: BTreeSet<u64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
            let mut uf = PairDocs::new(docs.into_iter().collect()).unwrap();
            for &(a, b) in &pairs {
                uf.union(a, b).unwrap();
            }
            let mut got = Vec::new();
            uf.for_each_cluster(|m, _| {
                got.push(m.to_vec());
                Ok(())
            })
            .unwrap();
            prop_assert_eq!(got, naive(&pairs));
        }
    }

    #[test]
    fn a_doc_outside_the_list_is_an_error() {
        let mut uf = PairDocs::new(vec![3, 7]).unwrap();
        assert!(uf.union(3, 8).is_err());
        assert!(PairDocs::new(vec![7, 3]).is_err());
    }
}

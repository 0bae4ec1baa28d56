//! Searching a sharded index ([`crate::index::shards`]): the query runs on
//! every shard — each a [`Searcher`] over its own lexicon and barrels, the
//! collection's documents, field lengths and PageRank, and the document
//! frequencies summed over the shards — and their answers are merged as
//! the single index would have given them.
//!
//! * Ranked retrieval ([`super::retrieve`]): each shard keeps its best
//!   `keep` matches by (complete, score, docID); the best `keep` of their
//!   union are the single index's, since every shard scores its documents
//!   exactly as the single index does. The totals are the sums of the
//!   shards' (exact when every shard's is: each shard prunes against its
//!   own bar, which is never above the single index's; otherwise marked
//!   estimated, like the single index's when it pruned).
//! * The paper's conjunction ([`super::eval`]), whose answer depends on the
//!   order documents are met in: the short pass runs on every shard in
//!   docID order when every word has short doclists in the collection,
//!   the cut-off counted over all shards; when they found fewer than
//!   wanted, the full pass runs the same way — the passes and cut-off of
//!   one index over the same docIDs.
//!
//! The matches are then grouped (hosts, near-duplicates) and presented
//! as for one index; a result's explanation reads its hits from the shard
//! that holds it. The shards are queried in parallel (rayon).

use std::sync::Arc;

use rayon::prelude::*;

use super::eval::{self, Match, Pass, Term, Work};
use super::query::Query;
use super::{present, retrieve, EmptyReason, QueryWord, Results, Searcher};
use crate::docstore::DocStore;
use crate::error::{Error, Result};
use crate::index::shards::ShardSet;
use crate::index::{BarrelSet, Lexicon};
use crate::job::JobFile;

/// The shards of a sharded index, opened.
pub struct Shards {
    set: ShardSet,
    shards: Vec<Searcher>,
}

/// A word's document frequency over every shard's lexicon.
pub(super) fn document_frequency(lexicons: &[Lexicon], word: &str) -> Result<u32> {
    let mut df = 0u32;
    for l in lexicons {
        if let Some(id) = l.lookup(word) {
            df = df.saturating_add(l.entry(id)?.docs);
        }
    }
    Ok(df)
}

/// Opens the sharded index `set` over the collection's documents `store`.
pub(super) fn open(set: ShardSet, store: Arc<DocStore>) -> Result<Searcher> {
    if set.params().docs != store.len() {
        return Err(Error::corrupt(
            set.dir().join(crate::index::shards::MANIFEST),
            "header parameters",
            0,
            format!(
                "a sharded index of {} documents, the job has {}",
                set.params().docs,
                store.len()
            ),
        ));
    }
    let lexicons = (0..set.len())
        .map(|k| Lexicon::open(set.file(k, JobFile::Lexicon)))
        .collect::<Result<Vec<_>>>()?;
    let lexicons = Arc::new(lexicons);
    let shard = |k: usize| -> Result<Searcher> {
        let mut s = Searcher::of_files(
            &|f| Ok(set.file(k, f)),
            true,
            Arc::clone(&store),
            Some(Arc::clone(&lexicons)),
        )?;
        let r = set.range(k);
        // docIDs are below 2³² (the manifest says so).
        s.docs = r.start as u32..r.end as u32;
        Ok(s)
    };
    let shards = (0..set.len()).map(shard).collect::<Result<Vec<_>>>()?;
    let mut top = shard(0)?;
    top.sharded = Some(Box::new(Shards { set, shards }));
    Ok(top)
}

impl Shards {
    /// The sharded index.
    pub fn set(&self) -> &ShardSet {
        &self.set
    }

    pub(super) fn open_barrels(&self) -> Result<()> {
        self.shards.iter().try_for_each(Searcher::open_barrels)
    }

    /// The shard holding `doc`.
    fn of_doc(&self, doc: u32) -> usize {
        (0..self.set.len())
            .find(|&k| self.set.range(k).contains(&u64::from(doc)))
            .unwrap_or(0)
    }

    /// [`Searcher::search`] over every shard, merged.
    pub(super) fn search(&self, query: &Query, k: usize, offset: usize) -> Result<Results> {
        let first = &self.shards[0];
        let query = &*first.as_indexed(query);
        // Each shard's terms (its wordIDs, the collection's frequencies).
        let terms: Vec<(Vec<QueryWord>, Vec<Term>)> = self
            .shards
            .iter()
            .map(|s| s.terms(&query.words))
            .collect::<Result<_>>()?;
        let words: Vec<QueryWord> = query
            .words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let mut q = QueryWord {
                    word: w.clone(),
                    word_id: None,
                    docs: 0,
                    short_docs: 0,
                };
                for (qw, _) in &terms {
                    q.word_id = q.word_id.or(qw[i].word_id);
                    q.docs += qw[i].docs;
                    q.short_docs += qw[i].short_docs;
                }
                q
            })
            .collect();
        let mut out = Results::start(query, words, first.store.has_ranks());
        if out.decided_early(query) {
            return Ok(out);
        }
        let want = offset.saturating_add(k).max(1);
        let matches = if query.is_paper_conjunction() {
            let cutoff = query.cutoff.max(1);
            let pass = |set: BarrelSet| -> Result<(Vec<Match>, bool, bool)> {
                let mut all = Vec::new();
                let mut work = Work::default();
                for (s, (qw, t)) in self.shards.iter().zip(&terms) {
                    let present = qw.iter().all(|w| w.word_id.is_some())
                        && (set == BarrelSet::Full || t.iter().all(|t| t.info.short_docs > 0));
                    if !present {
                        continue;
                    }
                    let (m, cut, late) = eval::evaluate_pass(
                        s,
                        t,
                        set,
                        cutoff - all.len(),
                        &query.weights,
                        query.deadline,
                        &mut work,
                    )?;
                    all.extend(m);
                    if cut || late {
                        return Ok((all, cut, late));
                    }
                }
                Ok((all, false, false))
            };
            let mut short_matches = 0;
            let mut found = None;
            if out.words.iter().all(|w| w.short_docs > 0) {
                let (m, cut, late) = pass(BarrelSet::Short)?;
                short_matches = m.len();
                if m.len() >= want || cut || late {
                    found = Some((m, Pass::Short, cut, late));
                }
            }
            let (m, p, cut, late) = match found {
                Some(f) => f,
                None => {
                    let (m, cut, late) = pass(BarrelSet::Full)?;
                    (m, Pass::Full, cut, late)
                }
            };
            out.total = m.len() as u64;
            out.timed_out = late;
            out.complete = out.total;
            // The paper's count stops at the cut-off: at least that many.
            let most = if cut { first.doc_count() } else { out.total };
            out.total_bounds = (out.total, most);
            out.complete_bounds = out.total_bounds;
            out.pass = Some(p);
            out.short_matches = short_matches as u64;
            out.cut_off = cut;
            if m.is_empty() {
                out.empty = Some(EmptyReason::NoDocumentHasAll);
                return Ok(out);
            }
            m
        } else {
            let keep = want.max(query.group_window);
            let parts: Vec<retrieve::Retrieved> = self
                .shards
                .par_iter()
                .map(|s| retrieve::retrieve(s, query, keep))
                .collect::<Result<_>>()?;
            let mut m = Vec::new();
            for r in parts {
                out.total += r.total;
                out.complete += r.complete;
                out.total_estimated |= r.estimated;
                // Each shard's bounds hold whatever it skipped: so do
                // their sums.
                out.total_bounds.0 += r.total_bounds.0;
                out.total_bounds.1 += r.total_bounds.1;
                out.complete_bounds.0 += r.complete_bounds.0;
                out.complete_bounds.1 += r.complete_bounds.1;
                out.cut_off |= r.cut_off;
                out.timed_out |= r.timed_out;
                m.extend(r.matches);
            }
            m.sort_by(retrieve::best_first);
            m.truncate(keep);
            out.pass = Some(Pass::Full);
            if m.is_empty() {
                out.no_ranked_match(query);
                return Ok(out);
            }
            m
        };
        let groups = out.group(first, matches, query, want)?;
        out.results = present::results(groups, offset, k, query.heavy(), |g| {
            let k = self.of_doc(g.lead.doc);
            present::result(&self.shards[k], &terms[k].1, query, g)
        })?;
        Ok(out)
    }
}

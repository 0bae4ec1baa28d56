//! The sample of docs (step 1 of the [evaluation](super)) and the reported
//! pairs inside it (step 3).

use std::collections::{BinaryHeap, HashMap, HashSet};

use crate::dedup::files::for_each_pair;
use crate::dedup::Alg;
use crate::error::Result;
use crate::job::{JobFile, JobView};

/// The docs drawn for an evaluation.
pub(super) struct Sample {
    /// Docs with a token stream (non-empty ones when empty ones are left out).
    pub(super) docs: u64,
    /// Docs with an empty token stream left out.
    pub(super) empty_docs: u64,
    /// The sampled docs: (docID, words), in docID order.
    pub(super) pages: Vec<(u64, String)>,
}

/// The `size` docs of `job` whose `xxh3_64(docID as u64 little-endian)` are
/// smallest, read in one pass over the token streams (a bounded max-heap keeps
/// them); with `skip_empty`, docs with an empty token stream are left out.
pub(super) fn draw(job: &JobView, size: usize, skip_empty: bool) -> Result<Sample> {
    let mut heap: BinaryHeap<(u64, u64, String)> = BinaryHeap::new();
    let (mut docs, mut empty_docs) = (0u64, 0u64);
    let (text, pagedoc) = (job.file(JobFile::Text)?, job.file(JobFile::PageDoc)?);
    crate::ingest::text::for_each_page_text(&text, &pagedoc, |_, doc, words| {
        if skip_empty && words.split(' ').all(|w| w.is_empty()) {
            empty_docs += 1;
            return Ok(());
        }
        docs += 1;
        let h = xxhash_rust::xxh3::xxh3_64(&doc.to_le_bytes());
        if heap.len() < size {
            heap.push((h, doc, words.to_string()));
        } else if heap.peek().is_some_and(|top| (h, doc) < (top.0, top.1)) {
            heap.pop();
            heap.push((h, doc, words.to_string()));
        }
        Ok(())
    })?;
    let mut sample: Vec<(u64, String)> = heap.into_iter().map(|(_, d, w)| (d, w)).collect();
    sample.sort_unstable_by_key(|(d, _)| *d);
    Ok(Sample {
        docs,
        empty_docs,
        pages: sample,
    })
}

/// The pairs of `alg`'s pair file with both ends in the sample (`index`: docID
/// to sample index), as `i << 32 | j` with `i < j`, and the number of pairs in
/// the whole file.
pub(super) fn reported_pairs(
    job: &JobView,
    alg: Alg,
    index: &HashMap<u64, u32>,
) -> Result<(HashSet<u64>, u64)> {
    let mut reported: HashSet<u64> = HashSet::new();
    let mut reported_total = 0u64;
    for_each_pair(&job.file(JobFile::Pairs(alg))?, |a, b, _| {
        reported_total += 1;
        if let (Some(&i), Some(&j)) = (index.get(&a), index.get(&b)) {
            let (i, j) = if i < j { (i, j) } else { (j, i) };
            reported.insert(u64::from(i) << 32 | u64::from(j));
        }
        Ok(())
    })?;
    Ok((reported, reported_total))
}

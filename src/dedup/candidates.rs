//! Candidate pairs from groups of docs sharing a sketch key (a fingerprint, a
//! megashingle, a subsketch, a band key), with Henzinger's guard against
//! quadratic blow-up in boilerplate groups.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::sort::{ExternalSorter, Sorted};

/// Counts of one algorithm's grouping (kept as a checkpoint).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct GroupCounts {
    /// Groups of two or more docs sharing a key.
    pub(crate) groups: u64,
    /// Groups larger than the cap.
    pub(crate) capped: u64,
    /// Candidate pairs emitted (before deduplication).
    pub(crate) candidates: u64,
}

/// Step 2: candidate pairs from groups of equal keys.
pub(crate) fn group_pairs(
    mut keys: Sorted<(u64, u64)>,
    max_group: u64,
    out: &mut ExternalSorter<(u64, u64)>,
) -> Result<GroupCounts> {
    let mut c = GroupCounts::default();
    let mut group: Vec<u64> = Vec::new();
    let mut current: Option<u64> = None;
    fn emit(
        group: &mut Vec<u64>,
        c: &mut GroupCounts,
        max_group: u64,
        out: &mut ExternalSorter<(u64, u64)>,
    ) -> Result<()> {
        if group.len() >= 2 {
            c.groups += 1;
            if group.len() as u64 > max_group {
                c.capped += 1;
                for &d in &group[1..] {
                    out.push((group[0], d))?;
                    c.candidates += 1;
                }
            } else {
                for i in 0..group.len() {
                    for j in i + 1..group.len() {
                        out.push((group[i], group[j]))?;
                        c.candidates += 1;
                    }
                }
            }
        }
        group.clear();
        Ok(())
    }
    while let Some((key, doc)) = keys.next_record()? {
        if current != Some(key) {
            emit(&mut group, &mut c, max_group, out)?;
            current = Some(key);
        }
        // Keys come sorted by (key, doc): the group is in docID order, and a
        // doc appears once per key (dedup).
        if group.len() as u64 <= max_group {
            group.push(doc);
        } else {
            // Past the cap: link to the first doc straight away, keep memory flat.
            out.push((group[0], doc))?;
            c.candidates += 1;
        }
    }
    emit(&mut group, &mut c, max_group, out)?;
    Ok(c)
}

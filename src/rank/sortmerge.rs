//! Sort–merge mode: every arc's contribution becomes a message
//! `(dst, src, contribution)`; the messages are sorted with the external sort
//! (within the budget) and merged into the next vector in docID order. Needs no
//! vector in memory at all. Messages are not combined during the sort, so each
//! destination still sums its contributions in source order, as the other modes.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{
    ChunkedSum, Dangling, Inputs, Iterate, IterationOutcome, NextVector, RankVector, Step,
};
use crate::error::Result;
use crate::graph::EdgeFile;
use crate::job::Settings;
use crate::sort::{Combine, ExternalSorter, SortConfig};

/// The sort–merge engine.
pub struct SortMergeEngine {
    n: u64,
    damping: f64,
    forward: std::path::PathBuf,
    degrees: std::path::PathBuf,
    preference: Option<std::path::PathBuf>,
    dangling: Dangling,
    tmp: std::path::PathBuf,
    /// The messages sort's budget, in bytes.
    messages: u64,
    settings: Settings,
}

impl SortMergeEngine {
    /// Sets up the engine; each iteration's messages sort takes `messages`
    /// bytes.
    pub fn new(
        inputs: &Inputs,
        damping: f64,
        messages: u64,
        s: &Settings,
    ) -> Result<SortMergeEngine> {
        Ok(SortMergeEngine {
            n: inputs.n,
            damping,
            forward: inputs.forward.clone(),
            degrees: inputs.degrees.clone(),
            preference: inputs.preference.clone(),
            dangling: inputs.dangling,
            tmp: inputs.tmp.clone(),
            messages,
            settings: s.clone(),
        })
    }
}

impl Iterate for SortMergeEngine {
    fn iterate(
        &mut self,
        t: u32,
        prev: &Path,
        next: &Path,
        meta: &dyn Fn(IterationOutcome) -> Value,
    ) -> Result<IterationOutcome> {
        // Messages of another iteration (left by a crash) are never reused.
        for entry in std::fs::read_dir(&self.tmp).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("messages-") && name != format!("messages-{t:05}") {
                crate::sort::remove_sort_dir(&entry.path())?;
            }
        }
        let dir = self.tmp.join(format!("messages-{t:05}"));
        let s = &self.settings;
        let mut cfg = SortConfig::new(&dir, self.messages)
            .label(format!("pagerank: iteration {t} messages"))
            .reporter(Arc::clone(&s.reporter));
        // Messages live for one iteration and are merged again in every pass:
        // compressing them costs more CPU than the I/O it saves.
        cfg.codec = crate::sort::RunCodec::Raw;
        let mut sorter = ExternalSorter::<(u64, u64, u64)>::new(cfg, Combine::None)?;
        let x = RankVector::open(prev)?;
        let deg = RankVector::open(&self.degrees)?;
        let mut dangling = ChunkedSum::default();
        {
            let (mut xr, mut dr) = (x.reader(), deg.reader());
            let forward = EdgeFile::open(&self.forward)?;
            let mut lists = forward.lists();
            let mut pending = lists.next().transpose()?;
            for i in 0..self.n {
                let (xi, d) = (xr.get(i)?, dr.get(i)?);
                if d == 0.0 {
                    dangling.add(i, xi);
                    continue;
                }
                let c = xi / d;
                if let Some((src, dsts)) = pending.take_if(|(src, _)| *src == i) {
                    if !sorter.input_complete() {
                        for dst in dsts {
                            sorter.push((dst, src, c.to_bits()))?;
                        }
                    }
                    pending = lists.next().transpose()?;
                }
            }
        }
        let step = Step {
            damping: self.damping,
            dangling_mass: dangling.total(),
            uniform: 1.0 / self.n as f64,
        };
        let mut sorted = sorter.finish()?;
        let pref = self.preference.as_ref().map(RankVector::open).transpose()?;
        let mut out = NextVector::create(next, self.n, step, self.dangling, pref.as_ref(), &x)?;
        let mut msg = sorted.next_record()?;
        for j in 0..self.n {
            let mut acc = 0.0;
            while let Some((_, _, bits)) = msg.take_if(|m| m.0 == j) {
                acc += f64::from_bits(bits);
                msg = sorted.next_record()?;
            }
            out.push(j, acc)?;
        }
        let outcome = out.finish(meta)?;
        drop(sorted);
        crate::sort::remove_sort_dir(&dir)?;
        Ok(outcome)
    }
}

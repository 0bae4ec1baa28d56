//! The merge of sorted runs, cut into key ranges merged in parallel and
//! delivered in order.
//!
//! A single k-way merge is one thread's work: on random keys its loser tree
//! waits on a mispredicted branch per comparison, and it was the other half of
//! the sort bench's profile besides run formation. Here the key space is cut
//! into *segments* at splitters picked from the runs' block indexes (each
//! block's key, weighted by the block's record count), so segments hold about
//! the same number of records. Worker threads (as many as rayon's pool has)
//! each take the next segment, position a cursor in every run at the
//! segment's first key (the block index finds the block, a search within the
//! block the record), merge the segment with a loser tree and send it in
//! batches down the segment's own channel. The consumer reads the channels in
//! segment order, so the output is the same sequence a single merge would give:
//! segments are disjoint key ranges, and within one, ties between runs go to
//! the earlier run.
//!
//! # Block keys
//!
//! A block's key is the *bounded key* `t(x)` of its first record `x` (see
//! [`super::record`]), not `x` itself: records may be arbitrarily long, keys
//! are short. Splitters are block keys, so every comparison the merge makes
//! is a record against a key, or a key against a key, and two facts proven in
//! [`super::record`] keep it exact: `t(x) ≤ x`, and `t(x) < y ⇒ x < y` for
//! any key `y`. With keys `k_0 ≤ k_1 ≤ …` of blocks starting with
//! `x_0 ≤ x_1 ≤ …` (`t` is monotone):
//!
//! * a segment `[lo, hi)` starts in block `p - 1`, where `p` is the number of
//!   keys `< lo`: `k_{p-1} < lo` gives `x_{p-1} < lo`, so every record of
//!   earlier blocks (each ≤ `x_{p-1}`) is below the segment; `k_p ≥ lo` gives
//!   `x_p ≥ lo`, so the seek never passes block `p`;
//! * a cursor stops at a block whose key is `≥ hi` (then `x ≥ k ≥ hi`) or at
//!   a record `≥ hi` (records are compared whole).
//!
//! A run may have many blocks with the same key (records sharing a long
//! prefix); splitters are strictly increasing, so such records fall in one
//! segment, which is then merged by one thread.
//!
//! # Memory
//!
//! Memory is bounded twice: a worker may start segment `m` only while the
//! consumer is at most [`Parallelism::ahead`] segments behind, and each
//! segment's channel holds a bounded number of batches, each of a bounded
//! number of records and (for records owning heap memory) about
//! [`BATCH_BYTES`] bytes, so a segment far larger than planned (one key
//! repeated millions of times, long records) is streamed, not buffered. Each
//! cursor holds one decoded block; each run's keys take at most
//! [`MAX_BLOCK_KEY`](super::record::MAX_BLOCK_KEY) string bytes per block.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use super::record::{encode_block_key, Record};
use super::run::{open_run, RunInfo};
use super::{Combine, LoserTree};
use crate::container::Container;
use crate::error::{Error, Result};

/// Bytes of merged records (their heap memory counted) a batch holds before it
/// is sent, whatever its record count.
pub(super) const BATCH_BYTES: usize = 256 << 10;

/// A run opened for merging: its container and each block's key (the bounded
/// key of its first record).
struct MergeRun<T> {
    container: Container,
    firsts: Vec<T>,
}

impl<T: Record> MergeRun<T> {
    fn open(path: &Path) -> Result<MergeRun<T>> {
        let container = open_run::<T>(path)?;
        let mut again = Vec::new();
        let firsts = container
            .blocks()
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let bad = |detail: &str| {
                    Error::corrupt(
                        container.path(),
                        format!("block {i}"),
                        b.offset,
                        detail.to_string(),
                    )
                };
                let mut input = b.key.as_slice();
                let key = match T::decode(&mut input) {
                    Some(r) if input.is_empty() => r,
                    _ => return Err(bad("the index's block key is not one record")),
                };
                // The merge is exact only if keys are bounded keys (see the
                // module docs): fixed points of `encode_block_key`.
                again.clear();
                encode_block_key(&key, &mut again);
                if again != b.key {
                    return Err(bad("the index's block key is not a bounded key"));
                }
                Ok(key)
            })
            .collect::<Result<Vec<T>>>()?;
        Ok(MergeRun { container, firsts })
    }

    fn bad_record(&self, block: usize) -> Error {
        Error::corrupt(
            self.container.path(),
            format!("block {block}"),
            self.container.blocks()[block].offset,
            "undecodable record",
        )
    }
}

/// Reads one run's records within a segment `[lo, hi)`, a block at a time.
struct Cursor<'a, T: Record> {
    run: &'a MergeRun<T>,
    hi: Option<&'a T>,
    hi_prefix: u64,
    block: usize,
    /// The current block's decoded bytes and the read position in them.
    bytes: Vec<u8>,
    pos: usize,
    scratch: Vec<u8>,
    /// The error that ended the cursor early, for [`Cursor::check`].
    failed: Option<Error>,
}

impl<'a, T: Record> Cursor<'a, T> {
    /// A cursor at the first record ≥ `lo` (the run's first if `lo` is `None`).
    fn new(run: &'a MergeRun<T>, lo: Option<&T>, hi: Option<&'a T>) -> Result<Cursor<'a, T>> {
        // Records ≥ `lo` may end the block before the first block whose key
        // is ≥ `lo`, so start at the last block whose key is below it (see
        // the module docs: no earlier block holds a record ≥ `lo`).
        let block = lo.map_or(0, |lo| {
            run.firsts.partition_point(|f| f < lo).saturating_sub(1)
        });
        let mut c = Cursor {
            run,
            hi,
            hi_prefix: hi.map_or(u64::MAX, Record::key_prefix),
            block,
            bytes: Vec::new(),
            pos: 0,
            scratch: Vec::new(),
            failed: None,
        };
        if block < run.firsts.len() {
            c.load()?;
            if let Some(lo) = lo {
                c.seek(lo)?;
            }
        }
        Ok(c)
    }

    fn load(&mut self) -> Result<()> {
        self.run
            .container
            .read_block_into(self.block, &mut self.scratch, &mut self.bytes)?;
        self.pos = 0;
        Ok(())
    }

    /// Moves to the first record ≥ `lo` in the current block: a binary search
    /// over fixed-width records, a scan otherwise.
    fn seek(&mut self, lo: &T) -> Result<()> {
        if let Some(width) = T::WIDTH.filter(|&w| w > 0) {
            let n = self.bytes.len() / width;
            let (mut a, mut b) = (0, n);
            while a < b {
                let mid = (a + b) / 2;
                let mut input = &self.bytes[mid * width..];
                let r = T::decode(&mut input).ok_or_else(|| self.run.bad_record(self.block))?;
                if r < *lo {
                    a = mid + 1;
                } else {
                    b = mid;
                }
            }
            self.pos = a * width;
            return Ok(());
        }
        loop {
            let mut input = &self.bytes[self.pos..];
            if input.is_empty() {
                return Ok(());
            }
            let r = T::decode(&mut input).ok_or_else(|| self.run.bad_record(self.block))?;
            if r >= *lo {
                return Ok(());
            }
            self.pos = self.bytes.len() - input.len();
        }
    }

    /// The next record of the segment, or `None` past its end or after an
    /// error, which [`Cursor::check`] then returns. (Not a `Result`: the
    /// merge's inner loop is leaner without the error type in its values.)
    #[inline]
    fn next_record(&mut self) -> Option<T> {
        if self.pos == self.bytes.len() && !self.next_block() {
            return None;
        }
        let mut input = &self.bytes[self.pos..];
        let Some(r) = T::decode(&mut input) else {
            return self.fail(self.run.bad_record(self.block));
        };
        self.pos = self.bytes.len() - input.len();
        match self.hi {
            // Prefixes follow the order: a smaller prefix means a smaller record.
            Some(hi) if r.key_prefix() >= self.hi_prefix && r >= *hi => {
                // Past the segment: nothing more from this run.
                self.end();
                None
            }
            _ => Some(r),
        }
    }

    /// `Err` with the error that ended the cursor, if one did.
    fn check(&mut self) -> Result<()> {
        self.failed.take().map_or(Ok(()), Err)
    }

    /// Ends the cursor with `e`.
    #[cold]
    #[inline(never)]
    fn fail(&mut self, e: Error) -> Option<T> {
        self.failed = Some(e);
        self.end();
        None
    }

    /// Ends the cursor: no more records.
    fn end(&mut self) {
        self.bytes.clear();
        self.pos = 0;
        self.block = self.run.firsts.len();
    }

    /// Loads the next non-empty block that may hold records of the segment;
    /// `false` at the run's (or the segment's) end, or after an error.
    #[cold]
    #[inline(never)]
    fn next_block(&mut self) -> bool {
        loop {
            if self.block + 1 >= self.run.firsts.len() {
                self.end();
                return false;
            }
            self.block += 1;
            if self.hi.is_some_and(|hi| self.run.firsts[self.block] >= *hi) {
                self.end();
                return false;
            }
            if let Err(e) = self.load() {
                self.fail(e);
                return false;
            }
            if !self.bytes.is_empty() {
                return true;
            }
        }
    }
}

/// How much of the merge runs at once.
#[derive(Clone, Copy, Debug)]
pub(super) struct Parallelism {
    /// Worker threads.
    pub workers: usize,
    /// Segments a worker may be ahead of the consumer.
    pub ahead: usize,
    /// Records per segment, as planned.
    pub segment_records: u64,
    /// Records per batch sent to the consumer.
    pub batch_records: usize,
}

impl Parallelism {
    /// Worker threads: rayon's pool size (`--threads`).
    pub fn workers() -> usize {
        rayon::current_num_threads().max(1)
    }

    /// Bytes each run costs the merge: every worker's cursor holds a block
    /// and the block's stored bytes.
    pub fn per_run_bytes(block_bytes: usize) -> u64 {
        (2 * Self::workers() * block_bytes) as u64 + 4096
    }

    /// Spends the half of `budget` not kept for the cursors (see
    /// [`Parallelism::per_run_bytes`]) on merged records waiting to be
    /// consumed: at most `ahead + 1` segments of them.
    pub fn for_budget<T: Record>(budget: u64) -> Parallelism {
        let workers = Self::workers();
        let ahead = workers;
        let record = std::mem::size_of::<T>().max(1) as u64 + if T::HAS_HEAP { 32 } else { 0 };
        let segment_records = (budget / 2 / (ahead as u64 + 1) / record).max(1024);
        let batch_records = (BATCH_BYTES as u64 / record).clamp(64, segment_records) as usize;
        Parallelism {
            workers,
            ahead,
            segment_records,
            batch_records,
        }
    }
}

/// What a segment's channel carries: batches of merged records, an empty
/// batch at the segment's end, or the error that stopped its worker.
type Batch<T> = Result<Vec<T>>;

/// State shared by the consumer and the workers.
struct Shared<T> {
    runs: Vec<MergeRun<T>>,
    /// Segment `m` is `[splitters[m - 1], splitters[m])`, open at both ends.
    splitters: Vec<T>,
    /// Next segment a worker takes.
    next: AtomicUsize,
    /// Segment the consumer reads, guarded for the workers' wait.
    reading: Mutex<usize>,
    moved: Condvar,
    cancelled: AtomicBool,
    senders: Mutex<Vec<Option<SyncSender<Batch<T>>>>>,
    par: Parallelism,
}

impl<T: Record> Shared<T> {
    fn segments(&self) -> usize {
        self.splitters.len() + 1
    }

    fn worker(&self) {
        loop {
            let m = self.next.fetch_add(1, Ordering::Relaxed);
            if m >= self.segments() {
                return;
            }
            {
                let mut reading = self.reading.lock().unwrap_or_else(|e| e.into_inner());
                while m > *reading + self.par.ahead && !self.cancelled.load(Ordering::Relaxed) {
                    reading = self.moved.wait(reading).unwrap_or_else(|e| e.into_inner());
                }
            }
            if self.cancelled.load(Ordering::Relaxed) {
                return;
            }
            let Some(tx) = self.senders.lock().unwrap_or_else(|e| e.into_inner())[m].take() else {
                return;
            };
            if let Err(e) = self.merge_segment(m, &tx) {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }

    /// Merges segment `m` into batches sent down `tx`; stops early (with
    /// `Ok`) if the consumer has gone.
    fn merge_segment(&self, m: usize, tx: &SyncSender<Batch<T>>) -> Result<()> {
        let lo = m.checked_sub(1).map(|i| &self.splitters[i]);
        let hi = self.splitters.get(m);
        let mut cursors = self
            .runs
            .iter()
            .map(|run| Cursor::new(run, lo, hi))
            .collect::<Result<Vec<_>>>()?;
        let heads = cursors
            .iter_mut()
            .map(|c| {
                let head = c.next_record();
                c.check().map(|()| head)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut tree = LoserTree::new(heads);
        if !self.send_merged(&mut tree, &mut cursors, tx)? {
            return Ok(());
        }
        // The end marker: a segment whose channel closes without it was cut
        // short (its worker died).
        let _ = tx.send(Ok(Vec::new()));
        Ok(())
    }

    /// Merges what `tree` and `cursors` hold into batches sent down `tx`;
    /// `false` if the consumer has gone. The merge's inner loop: cursors
    /// return an `Option` and the tree is told which case it is in, so no
    /// `Result<Option<T>>` is built per record (measured with callgrind on
    /// the sort bench: 15% more instructions in the merge threads when one
    /// was).
    #[inline]
    fn send_merged(
        &self,
        tree: &mut LoserTree<T>,
        cursors: &mut [Cursor<'_, T>],
        tx: &SyncSender<Batch<T>>,
    ) -> Result<bool> {
        let mut batch = Vec::with_capacity(self.par.batch_records);
        let mut heap_bytes = 0;
        while let Some(w) = tree.winner() {
            let out = match cursors[w].next_record() {
                Some(next) => tree.replace_winner_head(next),
                None => {
                    cursors[w].check()?;
                    tree.take_winner()
                }
            };
            if T::HAS_HEAP {
                heap_bytes += out.heap_bytes();
            }
            batch.push(out);
            if batch.len() == self.par.batch_records || (T::HAS_HEAP && heap_bytes >= BATCH_BYTES) {
                let full =
                    std::mem::replace(&mut batch, Vec::with_capacity(self.par.batch_records));
                heap_bytes = 0;
                if tx.send(Ok(full)).is_err() {
                    return Ok(false);
                }
            }
        }
        Ok(batch.is_empty() || tx.send(Ok(batch)).is_ok())
    }
}

/// Picks splitters so that segments hold about `segment_records` records,
/// from the runs' block keys weighted by block sizes. Splitters are strictly
/// increasing block keys.
fn plan_splitters<T: Record>(runs: &[MergeRun<T>], segment_records: u64) -> Result<Vec<T>> {
    let total: u64 = runs.iter().map(|r| r.container.records()).sum();
    if total <= segment_records {
        return Ok(Vec::new());
    }
    // The key of every block but the runs' first (which start at -∞ anyway).
    let mut samples: Vec<(&T, u64)> = runs
        .iter()
        .flat_map(|r| {
            r.firsts
                .iter()
                .zip(r.container.blocks())
                .skip(1)
                .map(|(f, b)| (f, b.records))
        })
        .collect();
    samples.sort_by(|a, b| a.0.cmp(b.0));
    let mut splitters: Vec<T> = Vec::new();
    // Records before the first sample: the runs' first blocks.
    let mut acc: u64 = runs
        .iter()
        .filter_map(|r| r.container.blocks().first())
        .map(|b| b.records)
        .sum();
    let mut copy = Vec::new();
    for (first, records) in samples {
        if acc >= segment_records && splitters.last().is_none_or(|s| s < first) {
            // Records are not `Clone`; their encoding makes the copy.
            copy.clear();
            first.encode(&mut copy);
            let mut input = copy.as_slice();
            splitters.push(T::decode(&mut input).ok_or_else(|| {
                Error::internal(format!(
                    "a {} record does not decode from its own encoding",
                    T::type_name()
                ))
            })?);
            acc = 0;
        }
        acc += records;
    }
    Ok(splitters)
}

/// The merged records of a set of runs, in order, combined as asked.
pub(super) struct Merged<T: Record> {
    shared: Arc<Shared<T>>,
    receivers: Vec<Receiver<Batch<T>>>,
    segment: usize,
    current: std::vec::IntoIter<T>,
    workers: Vec<JoinHandle<()>>,
    combine: Combine<T>,
    pending: Option<T>,
    /// Records taken from the runs so far (before combining).
    pub consumed: u64,
}

impl<T: Record> Merged<T> {
    /// Opens `runs` (in input order) and starts merging them within
    /// `budget` bytes (see [`Parallelism::for_budget`]).
    pub fn open(runs: &[RunInfo], combine: Combine<T>, budget: u64) -> Result<Merged<T>> {
        let par = Parallelism::for_budget::<T>(budget);
        let runs = runs
            .iter()
            .map(|r| MergeRun::open(&r.path))
            .collect::<Result<Vec<_>>>()?;
        let splitters = plan_splitters(&runs, par.segment_records)?;
        let segments = splitters.len() + 1;
        // A segment's channel holds it whole when it is as large as planned.
        let depth = (par.segment_records as usize).div_ceil(par.batch_records) + 1;
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..segments)
            .map(|_| {
                let (tx, rx) = sync_channel(depth);
                (Some(tx), rx)
            })
            .unzip();
        let shared = Arc::new(Shared {
            runs,
            splitters,
            next: AtomicUsize::new(0),
            reading: Mutex::new(0),
            moved: Condvar::new(),
            cancelled: AtomicBool::new(false),
            senders: Mutex::new(senders),
            par,
        });
        let workers = (0..par.workers.min(segments))
            .map(|_| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name("webmill-merge".into())
                    .spawn(move || shared.worker())
                    .map_err(|e| Error::internal(format!("cannot start a merge thread: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Merged {
            shared,
            receivers,
            segment: 0,
            current: Vec::new().into_iter(),
            workers,
            combine,
            pending: None,
            consumed: 0,
        })
    }

    /// Key ranges the merge is cut into.
    pub fn segments(&self) -> usize {
        self.receivers.len()
    }

    /// The next merged record before combining.
    #[inline]
    fn pop(&mut self) -> Result<Option<T>> {
        loop {
            if let Some(r) = self.current.next() {
                self.consumed += 1;
                return Ok(Some(r));
            }
            if !self.next_batch()? {
                return Ok(None);
            }
        }
    }

    /// Waits for the next batch, moving on to the next segment when one ends;
    /// `false` after the last segment.
    #[cold]
    #[inline(never)]
    fn next_batch(&mut self) -> Result<bool> {
        loop {
            let Some(rx) = self.receivers.get(self.segment) else {
                return Ok(false);
            };
            match rx.recv() {
                Ok(Ok(batch)) if !batch.is_empty() => {
                    self.current = batch.into_iter();
                    return Ok(true);
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    return Err(Error::internal(format!(
                        "merge segment {} of {} ended early: its thread stopped",
                        self.segment,
                        self.receivers.len()
                    )))
                }
                Ok(Ok(_)) => {
                    // The end marker: on to the next segment.
                    self.segment += 1;
                    let mut reading = self
                        .shared
                        .reading
                        .lock()
                        .unwrap_or_else(|e| e.into_inner());
                    *reading = self.segment;
                    self.shared.moved.notify_all();
                }
            }
        }
    }

    /// The next record, combined with the following equal ones as asked.
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<T>> {
        if matches!(self.combine, Combine::None) {
            return self.pop();
        }
        let mut acc = match self.pending.take() {
            Some(a) => a,
            None => match self.pop()? {
                Some(a) => a,
                None => return Ok(None),
            },
        };
        while let Some(next) = self.pop()? {
            if !self.combine.fold(&mut acc, &next) {
                self.pending = Some(next);
                break;
            }
        }
        Ok(Some(acc))
    }
}

impl<T: Record> Drop for Merged<T> {
    fn drop(&mut self) {
        self.shared.cancelled.store(true, Ordering::Relaxed);
        {
            let _reading = self
                .shared
                .reading
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            self.shared.moved.notify_all();
        }
        // Workers blocked on a full channel see it closed.
        self.receivers.clear();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sort::record::MAX_BLOCK_KEY;
    use crate::sort::{RunCodec, RunWriter};

    type Rec = (u64, Vec<u8>, u32);

    /// Records whose strings are within two bytes of the key bound, some
    /// differing only past it, with a field after the string: many blocks
    /// share a key, and keys of strings exactly as long as the bound must
    /// lose the field after them.
    fn records_around_the_cut() -> Vec<Rec> {
        let mut strings = Vec::new();
        for len in MAX_BLOCK_KEY - 2..=MAX_BLOCK_KEY + 2 {
            let s = vec![b'a'; len];
            let mut t = s.clone();
            t[len - 1] = b'b';
            strings.extend([s, t]);
        }
        strings.push(b"a".to_vec());
        let mut out = Vec::new();
        for k in 0..2 {
            for s in &strings {
                for v in 0..3 {
                    out.push((k, s.clone(), v));
                }
            }
        }
        out.sort();
        out
    }

    /// A cursor over `[lo, hi)`, for every `lo` and `hi` among the records'
    /// bounded keys (splitters come from other runs' blocks) and the open
    /// ends, reads exactly the run's records in the range: the block search
    /// and the segment end are exact with bounded keys, in a run of blocks of
    /// one to four records.
    #[test]
    fn cursors_find_exact_ranges_with_bounded_keys() {
        let dir = tempfile::tempdir().unwrap();
        let records = records_around_the_cut();
        let n = records.len() as u64;
        let mut w =
            RunWriter::<Rec>::create(dir.path(), 0, 0, n, "none", RunCodec::Raw, 600).unwrap();
        w.write_sorted(&records, None).unwrap();
        let info = w.finish().unwrap();
        let run = MergeRun::<Rec>::open(&info.path).unwrap();
        assert!(run.firsts.len() > 20, "{} blocks", run.firsts.len());
        let mut keys: Vec<Rec> = records
            .iter()
            .map(|r| {
                let mut key = Vec::new();
                encode_block_key(r, &mut key);
                Rec::decode(&mut key.as_slice()).unwrap()
            })
            .collect();
        keys.dedup();
        let mut bounds: Vec<Option<&Rec>> = keys.iter().map(Some).collect();
        bounds.push(None);
        for &lo in &bounds {
            for &hi in &bounds {
                if let (Some(lo), Some(hi)) = (lo, hi) {
                    if lo >= hi {
                        continue;
                    }
                }
                let mut c = Cursor::new(&run, lo, hi).unwrap();
                let mut got = Vec::new();
                while let Some(r) = c.next_record() {
                    got.push(r);
                }
                c.check().unwrap();
                let want: Vec<Rec> = records
                    .iter()
                    .filter(|r| lo.is_none_or(|lo| *r >= lo) && hi.is_none_or(|hi| *r < hi))
                    .cloned()
                    .collect();
                assert!(got == want, "[{lo:?}, {hi:?}): {got:?}");
            }
        }
    }
}

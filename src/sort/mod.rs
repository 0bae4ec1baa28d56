//! External sort under a memory budget in bytes.
//!
//! Records are pushed one by one into an in-memory buffer. When the buffer
//! reaches its share of the budget it is handed to a background thread, which
//! sorts it on the rayon pool (narrow records with an informative key prefix:
//! in-place MSD radix sort, [`block_radix`]; others: median splits with
//! `select_nth_unstable`, one part per thread, each sorted by std's
//! `sort_unstable`; for wide or heap records, 16-byte (key prefix, index)
//! pairs are sorted instead, in place with the same radix sort on the prefix,
//! and the records gathered in that order), combines equal keys if asked, and
//! writes it as a *run*: a checksummed container of blocks, raw by default (see [`SortConfig::new`]
//! for why not zstd), published atomically in the sort's directory. Meanwhile
//! the producer fills the second buffer (two buffers of ~42% of the budget
//! each, or one of 84% without [`SortConfig::overlap`]). After a spill of heap
//! records the freed allocations are handed back to the system
//! (`malloc_trim`).
//!
//! At [`ExternalSorter::finish`], if nothing was spilled the buffer is sorted in
//! memory and streamed. Otherwise the last buffer is spilled like the others
//! and the runs are merged ([`merge`]): the key space is cut into segments of
//! about equal size at keys taken from the runs' block indexes, segments are
//! merged with loser trees by one thread each (as many threads as rayon's
//! pool), and the caller reads them in order. The fan-in is derived from the
//! merge budget (each open run costs each merge thread a block) and capped;
//! while more runs exist than the fan-in allows, consecutive runs are merged
//! into longer runs on disk (multi-pass), and the last merge streams straight
//! to the caller.
//!
//! # Determinism
//!
//! [`Record`]'s `Ord` is a total order in which equal records are identical, and
//! ties between runs are broken by run order, so the output is the same bytes
//! whatever the thread count, budget or run boundaries (provided a custom
//! combine is associative).
//!
//! # Resume
//!
//! Every run's file name records the range `[start, end)` of input record
//! numbers it covers. When a sorter is created over a directory that already
//! holds runs (a crash happened), it picks runs tiling a prefix `[0, n)` of the
//! input, deletes the rest, and drops the first `n` records pushed to it: the
//! caller replays the same input and nothing already sorted is sorted again.
//! [`ExternalSorter::input_complete`] tells when all input was covered (a sort
//! that reached its merge), so the caller can skip producing it at all.

pub mod block_radix;
pub mod loser_tree;
pub(crate) mod memory;
mod merge;
pub mod record;
pub mod run;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use rayon::prelude::*;
use serde_json::json;

use crate::error::{Error, IoContext, Result};
use crate::progress::{silent, SharedReporter, Unit};
use crate::publish::{write_atomic, PARTIAL_SUFFIX};
pub use loser_tree::LoserTree;
pub use record::Record;
pub use run::{RunCodec, RunInfo, RunReader, RunWriter};

/// `f(acc, next)`: folds `next` into `acc` and returns `true` if they share a key.
pub type CombineFn<T> = Arc<dyn Fn(&mut T, &T) -> bool + Send + Sync>;

/// Folds records with equal keys into one during run formation and merging.
pub enum Combine<T> {
    /// Keep every record.
    None,
    /// Keep one of each group of equal records.
    Dedup,
    /// `f(acc, next)` returns `true` if `next` was folded into `acc` (same key),
    /// `false` if `next` starts a new group. The name identifies the function in
    /// run files, so runs made with another function are not reused.
    Custom(&'static str, CombineFn<T>),
}

impl<T: Record> Combine<T> {
    /// A custom combine.
    pub fn custom(
        name: &'static str,
        f: impl Fn(&mut T, &T) -> bool + Send + Sync + 'static,
    ) -> Self {
        Combine::Custom(name, Arc::new(f))
    }

    fn name(&self) -> &'static str {
        match self {
            Combine::None => "none",
            Combine::Dedup => "dedup",
            Combine::Custom(name, _) => name,
        }
    }

    /// Folds `next` into `acc` if they belong together.
    #[inline]
    fn fold(&self, acc: &mut T, next: &T) -> bool {
        match self {
            Combine::None => false,
            Combine::Dedup => *acc == *next,
            Combine::Custom(_, f) => f(acc, next),
        }
    }

    fn apply_sorted(&self, v: &mut Vec<T>) {
        match self {
            Combine::None => {}
            Combine::Dedup => v.dedup(),
            Combine::Custom(_, f) => v.dedup_by(|next, acc| f(acc, next)),
        }
    }
}

impl Combine<(u64, u64)> {
    /// `(key, count)` records: records with equal keys become one whose
    /// count is the sum of theirs.
    pub fn sum() -> Self {
        Combine::custom("sum", |acc: &mut (u64, u64), next: &(u64, u64)| {
            if acc.0 == next.0 {
                acc.1 += next.1;
                true
            } else {
                false
            }
        })
    }
}

impl<T> Clone for Combine<T> {
    fn clone(&self) -> Self {
        match self {
            Combine::None => Combine::None,
            Combine::Dedup => Combine::Dedup,
            Combine::Custom(n, f) => Combine::Custom(n, Arc::clone(f)),
        }
    }
}

/// How a sort uses memory and disk.
#[derive(Clone)]
pub struct SortConfig {
    /// Memory budget in bytes for this sort (buffers and merge readers).
    pub budget: u64,
    /// The sort's own directory (created if missing); its runs live there.
    pub dir: PathBuf,
    /// Upper bound on runs merged at once.
    pub max_fan_in: usize,
    /// How run blocks are stored.
    pub codec: RunCodec,
    /// Label for progress and messages.
    pub label: String,
    /// Where progress goes.
    pub reporter: SharedReporter,
    /// Fill a second buffer while the first is sorted and written (two buffers
    /// of 42% of the budget), or spill synchronously from one buffer of 84%:
    /// half as many runs, so a cheaper merge, but the producer waits during
    /// each spill. Overlap pays when producing records costs about as much as
    /// sorting them (parsing input); not when records are cheap to make.
    pub overlap: bool,
    /// Always write runs, even when everything fits in memory, so that a
    /// finished sort can be merged again (by a resumed job) without its input.
    pub persist: bool,
}

impl SortConfig {
    /// A configuration with defaults: fan-in ≤ 128, raw (checksummed, not
    /// compressed) runs. zstd costs more CPU than it saves I/O on temporary
    /// runs: measured on sorted runs of the bench's record kinds (2.8 GHz Xeon,
    /// one core), level 1 compresses 100-byte gensort records to 29% at
    /// 118 MB/s and decompresses at 348 MB/s (levels -1 to -10: 29–35% at
    /// 134–178 MB/s), and does not compress `(u64, u32)` pairs at all; writing
    /// and reading back raw blocks through the page cache, or to any disk
    /// faster than ~100 MB/s, is cheaper. Set [`SortConfig::codec`] to
    /// [`RunCodec::Auto`] where temporary disk space is scarcer than CPU.
    pub fn new(dir: impl Into<PathBuf>, budget: u64) -> SortConfig {
        SortConfig {
            budget,
            dir: dir.into(),
            max_fan_in: 128,
            codec: RunCodec::Raw,
            label: "sort".into(),
            reporter: silent(),
            persist: false,
            overlap: true,
        }
    }

    /// Sets the label.
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Sets [`SortConfig::persist`].
    pub fn persist(mut self, persist: bool) -> Self {
        self.persist = persist;
        self
    }

    /// Sets the reporter.
    pub fn reporter(mut self, reporter: SharedReporter) -> Self {
        self.reporter = reporter;
        self
    }

    /// Raw bytes per run block: 1/256 of the budget, between 4 KiB and 256 KiB.
    fn block_bytes(&self) -> usize {
        (self.budget / 256).clamp(4 << 10, 256 << 10) as usize
    }

    /// Runs merged at once within `merge_budget`: half of it goes to the
    /// merge threads' cursors, a block and its stored bytes per run and
    /// thread; the other half to merged records waiting to be consumed.
    fn fan_in(&self, merge_budget: u64) -> usize {
        let per_run = merge::Parallelism::per_run_bytes(self.block_bytes());
        ((merge_budget / 2 / per_run) as usize).clamp(2, self.max_fan_in.max(2))
    }
}

/// Figures of a finished sort.
#[derive(Clone, Debug, Default)]
pub struct SortStats {
    /// Records pushed (including those skipped on resume).
    pub input_records: u64,
    /// Runs written from input (0 if the sort stayed in memory).
    pub runs: usize,
    /// Merge passes that wrote intermediate runs.
    pub merge_passes: usize,
    /// Records those passes wrote: with `R` runs and fan-in `F`, at most
    /// `(⌈log_F R⌉ − 1) × input_records`.
    pub merged_records: u64,
    /// Runs reused from an earlier, interrupted attempt.
    pub reused_runs: usize,
    /// Bytes of run files written by this process.
    pub run_bytes: u64,
    /// Records (after combining) sorted in memory and never written, when the
    /// whole input fit in one buffer.
    pub memory_tail: u64,
    /// Key ranges the final merge was cut into (see [`merge`]); 0 if the sort
    /// stayed in memory.
    pub merge_segments: usize,
}

type Spill<T> = JoinHandle<Result<(RunInfo, Vec<T>, u64)>>;

/// Sorts records larger than memory. See the [module docs](self).
pub struct ExternalSorter<T: Record> {
    cfg: SortConfig,
    combine: Combine<T>,
    buf: Vec<T>,
    spare: Option<Vec<T>>,
    buf_bytes: usize,
    chunk_bytes: usize,
    runs: Vec<RunInfo>,
    /// Spills under way, oldest first: at most two, the buffers not being filled.
    pending: std::collections::VecDeque<Spill<T>>,
    pushed: u64,
    skip: u64,
    buf_start: u64,
    complete: bool,
    merge_budget: u64,
    stats: SortStats,
}

const COMPLETE_FILE: &str = "input-complete.json";
const IDENTITY_FILE: &str = "sort.json";

impl<T: Record> ExternalSorter<T> {
    /// Creates a sorter over `cfg.dir`, reusing runs left there by an interrupted
    /// attempt at the same sort.
    pub fn new(cfg: SortConfig, combine: Combine<T>) -> Result<ExternalSorter<T>> {
        fs::create_dir_all(&cfg.dir).at(&cfg.dir)?;
        let identity = json!({"record_type": T::type_name(), "combine": combine.name()});
        let identity_path = cfg.dir.join(IDENTITY_FILE);
        let same = fs::read(&identity_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v == identity);
        if !same {
            clear_dir(&cfg.dir)?;
            write_atomic(&identity_path, identity.to_string().as_bytes())?;
        }
        let runs = recover_runs::<T>(&cfg.dir)?;
        let skip = runs.last().map_or(0, |r| r.end);
        let complete = fs::read(cfg.dir.join(COMPLETE_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["records"].as_u64())
            .is_some_and(|n| n == skip && !runs.is_empty());
        // Two buffers of ~42% each, the rest for encoding and merge buffers.
        let chunk_bytes =
            ((cfg.budget as f64 * if cfg.overlap { 0.42 } else { 0.84 }) as usize).max(4096);
        let stats = SortStats {
            reused_runs: runs.len(),
            ..SortStats::default()
        };
        Ok(ExternalSorter {
            combine,
            buf: Vec::new(),
            spare: None,
            buf_bytes: 0,
            chunk_bytes,
            runs,
            pending: std::collections::VecDeque::new(),
            pushed: 0,
            skip,
            buf_start: skip,
            complete,
            stats,
            merge_budget: cfg.budget,
            cfg,
        })
    }

    /// Records already covered by runs reused from an earlier attempt: the first
    /// this many records pushed are dropped.
    pub fn resume_point(&self) -> u64 {
        self.skip
    }

    /// `true` if an earlier attempt already spilled the whole input: the caller
    /// need not push anything before calling [`finish`](Self::finish).
    pub fn input_complete(&self) -> bool {
        self.complete
    }

    /// Sets the memory the merge may use (default: the whole budget). Lets a
    /// pipeline hand most of its memory to the next sort while this one's output
    /// is being consumed.
    pub fn set_merge_budget(&mut self, bytes: u64) {
        self.merge_budget = bytes;
    }

    /// Adds a record.
    #[inline]
    pub fn push(&mut self, record: T) -> Result<()> {
        self.pushed += 1;
        if self.pushed <= self.skip {
            return Ok(());
        }
        if self.buf.capacity() == 0 && !T::HAS_HEAP {
            // A key-prefix sort needs a 16-byte index entry per record.
            let per_record = std::mem::size_of::<T>().max(1) + if T::PREFIX_SORT { 16 } else { 0 };
            let cap = self.chunk_bytes / per_record;
            self.buf = self.spare.take().unwrap_or_else(|| memory::large_vec(cap));
        }
        if T::HAS_HEAP {
            self.buf_bytes += std::mem::size_of::<T>()
                + record.heap_bytes()
                + if T::PREFIX_SORT { 16 } else { 0 };
        }
        self.buf.push(record);
        let full = if T::HAS_HEAP {
            self.buf_bytes >= self.chunk_bytes
        } else {
            self.buf.len() == self.buf.capacity()
        };
        if full {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes what the buffer holds as a run and frees the buffer, so that a
    /// sort waiting its turn to be finished holds none of the budget (the
    /// sketch pass's sorts of the algorithms finished later).
    pub fn park(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            self.spill()?;
        }
        self.wait_pending()?;
        self.buf = Vec::new();
        self.spare = None;
        Ok(())
    }

    /// Waits for every spill under way.
    fn wait_pending(&mut self) -> Result<()> {
        while !self.pending.is_empty() {
            self.wait_oldest()?;
        }
        Ok(())
    }

    /// Waits for the oldest spill under way and takes its run (and, for
    /// records without heap memory, its buffer for reuse).
    fn wait_oldest(&mut self) -> Result<()> {
        if let Some(handle) = self.pending.pop_front() {
            let (info, spare, bytes) = handle.join().map_err(|_| {
                Error::internal(format!("{}: a sort thread panicked", self.cfg.label))
            })??;
            self.runs.push(info);
            self.stats.runs += 1;
            self.stats.run_bytes += bytes;
            if !T::HAS_HEAP {
                self.spare = Some(spare);
            }
        }
        Ok(())
    }

    /// Hands the buffer to a background thread that sorts it and writes a run.
    /// With [`SortConfig::overlap`] the previous spill may still be writing
    /// while this one sorts; the producer then waits for that one, whose
    /// buffer it fills next. Without, the producer waits for this one.
    fn spill(&mut self) -> Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        self.buf_bytes = 0;
        let (start, end) = (self.buf_start, self.pushed);
        self.buf_start = end;
        let dir = self.cfg.dir.clone();
        let combine = self.combine.clone();
        let codec = self.cfg.codec;
        let block_bytes = self.cfg.block_bytes();
        self.pending.push_back(std::thread::spawn(move || {
            let mut w =
                RunWriter::<T>::create(&dir, 0, start, end, combine.name(), codec, block_bytes)?;
            if T::PREFIX_SORT
                && !matches!(combine, Combine::Custom(..))
                && buf.len() <= u32::MAX as usize
            {
                // Sort 16-byte (key prefix, index) pairs instead of moving wide
                // records around.
                let mut order = prefix_order(&buf);
                if matches!(combine, Combine::Dedup) {
                    order.dedup_by(|a, b| buf[a.1 as usize] == buf[b.1 as usize]);
                }
                w.write_sorted(&buf, Some(&order))?;
            } else {
                par_sort(&mut buf);
                combine.apply_sorted(&mut buf);
                w.write_sorted(&buf, None)?;
            }
            let info = w.finish()?;
            crate::publish::failpoint("sort.run_written")?;
            let bytes = fs::metadata(&info.path).map(|m| m.len()).unwrap_or(0);
            if T::HAS_HEAP {
                // Free the records' allocations (the buffer is not reused for
                // heap records) and hand the pages back.
                buf = Vec::new();
                memory::release_freed_heap();
            }
            buf.clear();
            Ok((info, buf, bytes))
        }));
        let keep = usize::from(self.cfg.overlap);
        while self.pending.len() > keep {
            self.wait_oldest()?;
        }
        Ok(())
    }

    /// Ends the input and returns the records in order.
    pub fn finish(mut self) -> Result<Sorted<T>> {
        self.stats.input_records = self.pushed.max(self.skip);
        if self.runs.is_empty() && self.pending.is_empty() && !self.complete && !self.cfg.persist {
            // Everything fit in memory.
            let mut buf = std::mem::take(&mut self.buf);
            par_sort(&mut buf);
            self.combine.apply_sorted(&mut buf);
            self.stats.memory_tail = buf.len() as u64;
            return Ok(Sorted {
                inner: SortedInner::Memory(buf.into_iter()),
                stats: std::mem::take(&mut self.stats),
            });
        }
        if !self.buf.is_empty()
            || (self.runs.is_empty() && self.pending.is_empty() && !self.complete)
        {
            self.spill()?;
        }
        self.wait_pending()?;
        self.buf = Vec::new();
        self.spare = None;
        if !self.complete {
            if self.pushed < self.skip {
                return Err(Error::internal(format!(
                    "{}: resumed sort received {} records, fewer than the {} already sorted (the input changed?)",
                    self.cfg.label, self.pushed, self.skip
                )));
            }
            let total = self.runs.last().map_or(0, |r| r.end);
            write_atomic(
                self.cfg.dir.join(COMPLETE_FILE),
                json!({ "records": total }).to_string().as_bytes(),
            )?;
        }
        self.reduce_runs(self.cfg.fan_in(self.merge_budget))?;
        let merge = merge::Merged::open(&self.runs, self.combine.clone(), self.merge_budget)?;
        self.stats.merge_segments = merge.segments();
        Ok(Sorted {
            inner: SortedInner::Merge(Box::new(merge)),
            stats: std::mem::take(&mut self.stats),
        })
    }

    /// Merges consecutive runs into longer ones on disk until at most
    /// `fan_in` remain for the final merge.
    ///
    /// Each round walks the runs from the first, replacing groups of up to
    /// `fan_in` consecutive runs by their merge in place, and stops as soon
    /// as few enough remain: a record is rewritten at most once a round, and
    /// `R` runs take at most ⌈log_F R⌉ − 1 rounds. (Merging into the front
    /// run instead would re-merge everything merged so far at every pass,
    /// rewriting O(R²/F) runs' worth of data.) Runs stay in input order, so
    /// they keep tiling `[0, n)` for a resume and ties keep breaking by run
    /// order.
    fn reduce_runs(&mut self, fan_in: usize) -> Result<()> {
        while self.runs.len() > fan_in {
            let mut at = 0;
            while self.runs.len() > fan_in && self.runs.len() - at >= 2 {
                let excess = self.runs.len() - fan_in;
                let count = fan_in.min(excess + 1).min(self.runs.len() - at);
                self.merge_pass(at, count)?;
                at += 1;
            }
        }
        Ok(())
    }

    /// Merges the `count` runs from index `at` into one longer run on disk,
    /// which takes their place.
    fn merge_pass(&mut self, at: usize, count: usize) -> Result<()> {
        let group: Vec<RunInfo> = self.runs.drain(at..at + count).collect();
        let level = group.iter().map(|r| r.level).max().unwrap_or(0) + 1;
        let (start, end) = (group[0].start, group[group.len() - 1].end);
        let total: u64 = group.iter().map(|r| r.records).sum();
        let task = self.cfg.reporter.task(
            &format!("{}: merge pass ({} runs)", self.cfg.label, group.len()),
            Some(total),
            Unit::Records,
        );
        let mut merge = merge::Merged::open(&group, self.combine.clone(), self.merge_budget)?;
        let mut w = RunWriter::<T>::create(
            &self.cfg.dir,
            level,
            start,
            end,
            self.combine.name(),
            self.cfg.codec,
            self.cfg.block_bytes(),
        )?;
        let mut n = 0u64;
        while let Some(r) = merge.next_record()? {
            w.push(r)?;
            n += 1;
            if n.is_multiple_of(65536) {
                task.set_position(merge.consumed);
            }
        }
        let info = w.finish()?;
        crate::publish::failpoint("sort.merge_written")?;
        self.stats.run_bytes += fs::metadata(&info.path).map(|m| m.len()).unwrap_or(0);
        for r in &group {
            fs::remove_file(&r.path).at(&r.path)?;
        }
        self.runs.insert(at, info);
        self.stats.merge_passes += 1;
        self.stats.merged_records += n;
        Ok(())
    }
}

impl<T: Record> Drop for ExternalSorter<T> {
    fn drop(&mut self) {
        for h in self.pending.drain(..) {
            let _ = h.join();
        }
    }
}

/// Sorts `v` on the rayon pool. Records with an informative key prefix and no
/// drop glue (narrow records such as `(u64, u32)`) are radix-sorted in place
/// ([`block_radix`]: a third of the CPU time on random keys); others by
/// [`median_split_sort`].
fn par_sort<T: Record>(v: &mut [T]) {
    if T::KEY_PREFIX && !T::PREFIX_SORT && !std::mem::needs_drop::<T>() {
        block_radix::sort_by_key_prefix(v, &T::key_prefix, &T::cmp);
        return;
    }
    if T::KEY_PREFIX && T::PREFIX_SORT && v.len() <= u32::MAX as usize {
        prefix_sort(v);
        return;
    }
    median_split_sort(v);
}

/// Sorts wide or heap records (those with [`Record::PREFIX_SORT`]) as a
/// spill does: the 16-byte (key prefix, index) pairs are radix-sorted
/// ([`block_radix`]; equal prefixes compare the records), then each record
/// is swapped into place once along the permutation's cycles. The pairs are
/// what the buffer's accounting already reserves for them. On the index's
/// barrel sorts (32-byte entries with a hit list; rust-doc, one thread, in
/// memory) this takes about half the CPU time [`median_split_sort`] did.
fn prefix_sort<T: Record>(v: &mut [T]) {
    let mut order = prefix_order(v);
    // `order[j].1` is the index of the record that belongs at `j`; a
    // position is marked done by pointing it at itself.
    for i in 0..order.len() {
        let mut j = i;
        loop {
            let k = order[j].1 as usize;
            order[j].1 = j as u32;
            if k == i {
                break;
            }
            v.swap(j, k);
            j = k;
        }
    }
}

/// The (key prefix, index) pairs of `recs` in the records' order: radix-sorted
/// by prefix ([`block_radix`]), equal prefixes comparing the records. At most
/// `u32::MAX` records.
fn prefix_order<T: Record>(recs: &[T]) -> Vec<(u64, u32)> {
    let mut order: Vec<(u64, u32)> = memory::large_vec(recs.len());
    order.par_extend(
        recs.par_iter()
            .enumerate()
            .map(|(i, r)| (r.key_prefix(), i as u32)),
    );
    block_radix::sort_by_key_prefix(&mut order, &|e: &(u64, u32)| e.0, &|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| recs[a.1 as usize].cmp(&recs[b.1 as usize]))
    });
    order
}

/// Sorts `v` on the rayon pool by median splits (`select_nth_unstable`, in
/// place, linear) into one part per thread, each sorted by the standard
/// library's unstable sort. Measured on 14M `(u64, u32)` pairs (2-core VM):
/// 0.79–0.86 CPU s against 1.04–1.08 for rayon's `par_sort_unstable`, whose
/// pdqsort is older than std's, and no slower in wall time.
pub fn median_split_sort<T: Ord + Send>(v: &mut [T]) {
    fn split<T: Ord + Send>(v: &mut [T], parts: usize) {
        if parts < 2 || v.len() < 1 << 15 {
            v.sort_unstable();
            return;
        }
        let mid = v.len() / 2;
        v.select_nth_unstable(mid);
        let (a, b) = v.split_at_mut(mid);
        rayon::join(|| split(a, parts / 2), || split(b, parts - parts / 2));
    }
    split(v, rayon::current_num_threads());
}

/// Removes partial files, the completion marker and runs from `dir`.
fn clear_dir(dir: &Path) -> Result<()> {
    for entry in fs::read_dir(dir).at(dir)? {
        let entry = entry.at(dir)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".wms") || name.ends_with(PARTIAL_SUFFIX) || name == COMPLETE_FILE {
            fs::remove_file(entry.path()).at(entry.path())?;
        }
    }
    Ok(())
}

/// Finds runs left by an earlier attempt: picks a set tiling `[0, n)` with the
/// largest `n` (preferring longer runs), deletes every other run and partial file.
fn recover_runs<T: Record>(dir: &Path) -> Result<Vec<RunInfo>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).at(dir)? {
        let entry = entry.at(dir)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(PARTIAL_SUFFIX) {
            fs::remove_file(entry.path()).at(entry.path())?;
            continue;
        }
        if let Some((level, start, end)) = run::parse_run_file_name(&name) {
            // A run that does not verify completely (runs are not fsynced: a
            // power failure may have damaged one) is dropped and will be redone.
            let checked = run::open_run::<T>(&entry.path())
                .and_then(|c| c.verify(|_, _, _| Ok(())).map(|()| c.records()));
            match checked {
                Ok(records) => found.push(RunInfo {
                    path: entry.path(),
                    level,
                    start,
                    end,
                    records,
                }),
                Err(_) => fs::remove_file(entry.path()).at(entry.path())?,
            }
        }
    }
    found.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let mut chosen: Vec<RunInfo> = Vec::new();
    let mut cursor = 0;
    let mut rest = Vec::new();
    for r in found {
        if r.start == cursor && r.end > r.start {
            cursor = r.end;
            chosen.push(r);
        } else {
            rest.push(r);
        }
    }
    for r in rest {
        fs::remove_file(&r.path).at(&r.path)?;
    }
    if chosen.is_empty() {
        let _ = fs::remove_file(dir.join(COMPLETE_FILE));
    }
    Ok(chosen)
}

/// Removes a sort's directory and everything in it.
pub fn remove_sort_dir(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(dir, e)),
    }
}

enum SortedInner<T: Record> {
    Memory(std::vec::IntoIter<T>),
    Merge(Box<merge::Merged<T>>),
}

/// The sorted output: an iterator of `Result<T>` (reading runs can fail).
pub struct Sorted<T: Record> {
    inner: SortedInner<T>,
    stats: SortStats,
}

impl<T: Record> Sorted<T> {
    /// Figures of the sort.
    pub fn stats(&self) -> &SortStats {
        &self.stats
    }

    /// The next record, `Ok(None)` at the end.
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<T>> {
        match &mut self.inner {
            SortedInner::Memory(it) => Ok(it.next()),
            SortedInner::Merge(m) => m.next_record(),
        }
    }
}

impl<T: Record> Iterator for Sorted<T> {
    type Item = Result<T>;
    fn next(&mut self) -> Option<Result<T>> {
        self.next_record().transpose()
    }
}

/// Sorts an iterator's records under `cfg` (a convenience for tests and tools).
pub fn sort_iter<T: Record>(
    cfg: SortConfig,
    combine: Combine<T>,
    input: impl IntoIterator<Item = T>,
) -> Result<Sorted<T>> {
    let mut s = ExternalSorter::new(cfg, combine)?;
    for r in input {
        s.push(r)?;
    }
    s.finish()
}

#[cfg(test)]
mod tests;

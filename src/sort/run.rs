//! Sort runs: the `sortrun` container kind (version 2).
//!
//! A run is a sorted sequence of records of one [`Record`] type, in blocks of
//! as many records as fit in `block_bytes` raw bytes (at least one),
//! zstd-compressed when that pays (see [`RunCodec`]) and raw otherwise. Header
//! parameters: `{"record_type", "combine", "level", "start", "end", "codec"}`
//! where `level` is the merge level (0 = formed from input) and `[start, end)`
//! is the range of input record numbers the run covers (what makes it reusable
//! after a crash). Footer metadata: `{"records": N}`. A block's first key is
//! the *bounded key* of its first record ([`encode_block_key`]: the record
//! with its byte strings cut to [`MAX_BLOCK_KEY`](super::record::MAX_BLOCK_KEY)
//! bytes together, see [`super::record`]), itself a valid record ≤ the first
//! record, and byte for byte the first record when that has no long string;
//! its fields are little-endian, not byte-comparable, so `find_block` does not
//! apply to runs. A block's record count is in the index. Records are
//! concatenated encodings.
//!
//! Version 2 (bounded keys) differs from version 1 (whole first records) only
//! for records whose byte strings reach the bound; the version changed because
//! the key's meaning did, and a version-1 run left by an older build is
//! refused, so a resumed sort redoes it.
//!
//! Runs are temporary: they are published atomically but not fsynced; after a
//! power failure a damaged run fails verification at recovery and is redone.
//!
//! [`RunReader`] reads, checks, decompresses and decodes the next block on a
//! background thread while the merge consumes the current one.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};

use serde_json::json;

use super::record::{encode_block_key, Record};
use crate::container::{BlockCodec, Container, ContainerWriter, EncodedBlock};
use crate::error::{Error, Result};
use crate::par::map_in_order;

/// File kind tag of sort runs.
pub const KIND: &str = "sortrun";
/// Format version of sort runs.
pub const VERSION: u32 = 2;

/// Blocks at least this large are encoded in parallel and read ahead on a
/// background thread; smaller ones (tiny budgets) cost less to handle inline
/// than to hand between threads.
pub const PARALLEL_BLOCK: usize = 64 << 10;

/// Records whose prefixes are loaded together ahead of an index-order gather.
const GATHER_GROUP: usize = 32;

/// How run blocks are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunCodec {
    /// Raw blocks (still checksummed).
    Raw,
    /// zstd at this level.
    Zstd(i32),
    /// zstd at this level if it at least halves the run's first block, raw
    /// otherwise: compression costs CPU on every byte and pays only where it
    /// saves much I/O.
    Auto(i32),
}

impl RunCodec {
    /// The name recorded in run headers: `raw`, `zstd:L` or `auto:L`.
    pub fn name(self) -> String {
        match self {
            RunCodec::Raw => "raw".into(),
            RunCodec::Zstd(level) => format!("zstd:{level}"),
            RunCodec::Auto(level) => format!("auto:{level}"),
        }
    }
}

/// A run on disk.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// Its path.
    pub path: PathBuf,
    /// 0 for runs formed from input, n+1 for runs merged from level-n runs.
    pub level: u32,
    /// First input record number covered.
    pub start: u64,
    /// One past the last input record number covered.
    pub end: u64,
    /// Records in the run (after combining).
    pub records: u64,
}

/// File name of a run, which encodes what it covers.
pub fn run_file_name(level: u32, start: u64, end: u64) -> String {
    format!("run-{level:02}-{start:016x}-{end:016x}.wms")
}

/// Parses a run file name back into (level, start, end).
pub fn parse_run_file_name(name: &str) -> Option<(u32, u64, u64)> {
    let rest = name.strip_prefix("run-")?.strip_suffix(".wms")?;
    let mut parts = rest.split('-');
    let level = parts.next()?.parse().ok()?;
    let start = u64::from_str_radix(parts.next()?, 16).ok()?;
    let end = u64::from_str_radix(parts.next()?, 16).ok()?;
    if parts.next().is_some() || end < start {
        return None;
    }
    Some((level, start, end))
}

/// Writes a sorted sequence of records as a run, encoding blocks in parallel.
pub struct RunWriter<T: Record> {
    writer: ContainerWriter,
    codec: RunCodec,
    block_bytes: usize,
    batch: Vec<T>,
    batch_bytes: usize,
    info: RunInfo,
}

impl<T: Record> RunWriter<T> {
    /// Starts a run file in `dir`.
    pub fn create(
        dir: &Path,
        level: u32,
        start: u64,
        end: u64,
        combine: &str,
        codec: RunCodec,
        block_bytes: usize,
    ) -> Result<RunWriter<T>> {
        let path = dir.join(run_file_name(level, start, end));
        let params = json!({
            "record_type": T::type_name(),
            "combine": combine,
            "level": level,
            "start": start,
            "end": end,
            "codec": codec.name(),
        });
        let mut writer = ContainerWriter::create(&path, KIND, VERSION, &params)?;
        writer.set_durable(false);
        Ok(RunWriter {
            writer,
            codec,
            block_bytes: block_bytes.max(64),
            batch: Vec::new(),
            batch_bytes: 0,
            info: RunInfo {
                path,
                level,
                start,
                end,
                records: 0,
            },
        })
    }

    /// Writes sorted records: `records` in order, or, with `order`, the records
    /// `records[order[k].1]` for k = 0, 1, … (a key-prefix index sort).
    pub fn write_sorted(&mut self, records: &[T], order: Option<&[(u64, u32)]>) -> Result<()> {
        let n = order.map_or(records.len(), <[_]>::len);
        if n == 0 {
            return Ok(());
        }
        let at = |k: usize| -> &T {
            match order {
                Some(o) => &records[o[k].1 as usize],
                None => &records[k],
            }
        };
        let batch_blocks = rayon::current_num_threads() * 2;
        let mut bounds = Vec::with_capacity(batch_blocks + 1);
        let mut start = 0;
        while start < n {
            self.cut_blocks(&at, start, n, batch_blocks, &mut bounds);
            let codec = self.block_codec(&at, bounds[0], bounds[1])?;
            let encode = |(b, e): (usize, usize)| {
                let mut raw = Vec::with_capacity(self.block_bytes + 64);
                let mut key = Vec::new();
                encode_block_key(at(b), &mut key);
                if order.is_some() {
                    // Gathering records scattered over the buffer waits on a
                    // cache miss per record. Touching a group's prefixes
                    // first (short independent loads) lets the misses overlap
                    // before the copies need the bytes.
                    for g in (b..e).step_by(GATHER_GROUP) {
                        let ge = (g + GATHER_GROUP).min(e);
                        let touched = (g..ge).fold(0u64, |acc, k| acc ^ at(k).key_prefix());
                        std::hint::black_box(touched);
                        for k in g..ge {
                            at(k).encode(&mut raw);
                        }
                    }
                } else {
                    for k in b..e {
                        at(k).encode(&mut raw);
                    }
                }
                Ok((key, (e - b) as u64, EncodedBlock::encode_owned(codec, raw)?))
            };
            let blocks = bounds.windows(2).map(|w| (w[0], w[1]));
            // Small blocks are cheaper to encode here than to hand to other threads.
            let encoded = map_in_order(blocks, self.block_bytes >= PARALLEL_BLOCK, encode);
            for e in encoded {
                let (key, count, block) = e?;
                self.writer.append_block(block, &key, count)?;
            }
            start = bounds[bounds.len() - 1];
        }
        self.info.records += n as u64;
        Ok(())
    }

    /// Cuts records `start..n` into at most `blocks` blocks, setting `bounds`
    /// to their boundaries (`start`, then each block's end): each block holds
    /// as many records as fit in `block_bytes` raw bytes, at least one. Fixed
    /// widths make that a count; variable ones are measured record by record,
    /// so a block of short records followed by long ones stays near
    /// `block_bytes`.
    fn cut_blocks<'a>(
        &self,
        at: &impl Fn(usize) -> &'a T,
        start: usize,
        n: usize,
        blocks: usize,
        bounds: &mut Vec<usize>,
    ) where
        T: 'a,
    {
        bounds.clear();
        bounds.push(start);
        if let Some(width) = T::WIDTH {
            let per_block = (self.block_bytes / width.max(1)).max(1);
            let mut b = start;
            while b < n && bounds.len() <= blocks {
                b = (b + per_block).min(n);
                bounds.push(b);
            }
            return;
        }
        let mut k = start;
        while k < n && bounds.len() <= blocks {
            let mut bytes = at(k).encoded_len();
            k += 1;
            while k < n {
                let len = at(k).encoded_len();
                if bytes + len > self.block_bytes {
                    break;
                }
                bytes += len;
                k += 1;
            }
            bounds.push(k);
        }
    }

    /// Settles [`RunCodec::Auto`] on the run's first block.
    fn block_codec<'a>(
        &mut self,
        at: &impl Fn(usize) -> &'a T,
        start: usize,
        end: usize,
    ) -> Result<BlockCodec>
    where
        T: 'a,
    {
        match self.codec {
            RunCodec::Raw => Ok(BlockCodec::Raw),
            RunCodec::Zstd(level) => Ok(BlockCodec::Zstd(level)),
            RunCodec::Auto(level) => {
                let mut raw = Vec::new();
                for k in start..end {
                    at(k).encode(&mut raw);
                }
                let trial = EncodedBlock::encode(BlockCodec::Zstd(level), &raw)?;
                self.codec = if trial.stored_len() * 2 <= raw.len() {
                    RunCodec::Zstd(level)
                } else {
                    RunCodec::Raw
                };
                self.block_codec(at, start, end)
            }
        }
    }

    /// Appends one record (for merges, which produce records one at a time).
    pub fn push(&mut self, record: T) -> Result<()> {
        self.batch_bytes += std::mem::size_of::<T>() + record.heap_bytes();
        self.batch.push(record);
        if self.batch_bytes >= self.block_bytes * 4 {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn flush_batch(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.batch);
        self.write_sorted(&batch, None)?;
        self.batch = batch;
        self.batch.clear();
        self.batch_bytes = 0;
        Ok(())
    }

    /// Publishes the run.
    pub fn finish(mut self) -> Result<RunInfo> {
        self.flush_batch()?;
        let records = self.info.records;
        self.writer.finish(&json!({ "records": records }))?;
        Ok(self.info)
    }
}

/// Opens a run and checks it holds records of type `T`.
pub fn open_run<T: Record>(path: &Path) -> Result<Container> {
    let container = Container::open_kind(path, KIND, VERSION)?;
    let found = container.params()["record_type"].as_str().unwrap_or("");
    if found != T::type_name() {
        return Err(Error::corrupt(
            path,
            "header parameters",
            0,
            format!(
                "run holds records of type {found}, expected {}",
                T::type_name()
            ),
        ));
    }
    Ok(container)
}

/// Decodes block `i` of a run into records.
fn decode_block<T: Record>(c: &Container, i: usize, raw: &[u8]) -> Result<Vec<T>> {
    let entry = &c.blocks()[i];
    let bad = |detail: &str| {
        Error::corrupt(
            c.path(),
            format!("block {i}"),
            entry.offset,
            detail.to_string(),
        )
    };
    let mut input = raw;
    let n = (entry.records as usize).min(raw.len());
    let mut out = Vec::with_capacity(n);
    for _ in 0..entry.records {
        out.push(T::decode(&mut input).ok_or_else(|| bad("undecodable record"))?);
    }
    if !input.is_empty() {
        return Err(bad("bytes left over after the block's last record"));
    }
    Ok(out)
}

/// Where a [`RunReader`] gets its blocks from.
enum Source<T> {
    /// A background thread reading ahead.
    Prefetch(Receiver<Result<Vec<T>>>),
    /// Read on demand, on the caller's thread.
    Inline(Box<InlineSource>),
}

/// State of a run read on the caller's thread.
struct InlineSource {
    container: Container,
    next: usize,
    scratch: Vec<u8>,
    raw: Vec<u8>,
}

/// Streams the records of a run. With blocks of [`PARALLEL_BLOCK`] bytes or
/// more, a background thread reads, checks and decodes the next block while the
/// current one is consumed.
pub struct RunReader<T: Record> {
    source: Source<T>,
    current: std::vec::IntoIter<T>,
    records: u64,
}

impl<T: Record> RunReader<T> {
    /// Opens a run and starts reading it.
    pub fn open(path: &Path) -> Result<RunReader<T>> {
        let container = open_run::<T>(path)?;
        let records = container.records();
        let small =
            container.blocks().iter().map(|b| b.raw).max().unwrap_or(0) < PARALLEL_BLOCK as u64;
        if small {
            return Ok(RunReader {
                source: Source::Inline(Box::new(InlineSource {
                    container,
                    next: 0,
                    scratch: Vec::new(),
                    raw: Vec::new(),
                })),
                current: Vec::new().into_iter(),
                records,
            });
        }
        let (tx, rx) = sync_channel::<Result<Vec<T>>>(1);
        std::thread::Builder::new()
            .name("webmill-run-reader".into())
            .spawn(move || {
                let (mut scratch, mut raw) = (Vec::new(), Vec::new());
                for i in 0..container.blocks().len() {
                    let block = container
                        .read_block_into(i, &mut scratch, &mut raw)
                        .and_then(|()| decode_block::<T>(&container, i, &raw));
                    let failed = block.is_err();
                    if tx.send(block).is_err() || failed {
                        return;
                    }
                }
            })
            .map_err(|e| Error::io(path, e))?;
        Ok(RunReader {
            source: Source::Prefetch(rx),
            current: Vec::new().into_iter(),
            records,
        })
    }

    /// Records in the run.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The next record, or `None` at the end.
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<T>> {
        match self.current.next() {
            Some(r) => Ok(Some(r)),
            None => self.next_block_record(),
        }
    }

    /// Loads the next block and returns its first record.
    #[cold]
    #[inline(never)]
    fn next_block_record(&mut self) -> Result<Option<T>> {
        loop {
            if let Some(r) = self.current.next() {
                return Ok(Some(r));
            }
            match &mut self.source {
                Source::Prefetch(rx) => match rx.recv() {
                    Ok(block) => self.current = block?.into_iter(),
                    Err(_) => return Ok(None),
                },
                Source::Inline(src) => {
                    if src.next == src.container.blocks().len() {
                        return Ok(None);
                    }
                    src.container
                        .read_block_into(src.next, &mut src.scratch, &mut src.raw)?;
                    self.current =
                        decode_block::<T>(&src.container, src.next, &src.raw)?.into_iter();
                    src.next += 1;
                }
            }
        }
    }
}

//! Sort runs: the `sortrun` container kind.
//!
//! A run is a sorted sequence of records of one [`Record`] type, in zstd blocks
//! of about `block_bytes` raw bytes each. Header parameters:
//! `{"record_type", "combine", "level", "start", "end"}` where `[start, end)` is
//! the range of input record numbers the run covers (what makes it reusable after
//! a crash). The first key of a block is the encoding of its first record.
//! Records are concatenated encodings ([`Record::encode`]); the block's record
//! count is in the index.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::json;

use super::record::Record;
use crate::container::{BlockCodec, Container, ContainerWriter, EncodedBlock};
use crate::error::{Error, Result};

/// File kind tag of sort runs.
pub const KIND: &str = "sortrun";
/// Format version of sort runs.
pub const VERSION: u32 = 1;

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

/// Writes a sorted sequence of records as a run, compressing blocks in parallel.
pub struct RunWriter<T: Record> {
    writer: ContainerWriter,
    level: i32,
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
        zstd_level: i32,
        block_bytes: usize,
    ) -> Result<RunWriter<T>> {
        let path = dir.join(run_file_name(level, start, end));
        let params = json!({
            "record_type": T::type_name(),
            "combine": combine,
            "level": level,
            "start": start,
            "end": end,
        });
        let writer = ContainerWriter::create(&path, KIND, VERSION, &params)?;
        Ok(RunWriter {
            writer,
            level: zstd_level,
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

    /// Writes a slice of records (already sorted, continuing what came before).
    pub fn write_slice(&mut self, records: &[T]) -> Result<()>
    where
        T: Sync,
    {
        // Split into blocks of about `block_bytes`, estimating each record's size
        // from the first one; encode and compress a batch of blocks in parallel.
        if records.is_empty() {
            return Ok(());
        }
        let mut probe = Vec::new();
        records[0].encode(&mut probe);
        let per_block = (self.block_bytes / probe.len().max(1)).max(1);
        let batch_blocks = rayon::current_num_threads() * 2;
        for group in records.chunks(per_block * batch_blocks) {
            let encoded: Vec<Result<(Vec<u8>, u64, EncodedBlock)>> = group
                .par_chunks(per_block)
                .map(|chunk| {
                    let mut raw = Vec::with_capacity(self.block_bytes + 64);
                    let mut key = Vec::new();
                    chunk[0].encode(&mut key);
                    for r in chunk {
                        r.encode(&mut raw);
                    }
                    let block = EncodedBlock::encode(BlockCodec::Zstd(self.level), &raw)?;
                    Ok((key, chunk.len() as u64, block))
                })
                .collect();
            for e in encoded {
                let (key, n, block) = e?;
                self.writer.append_block(block, &key, n)?;
            }
        }
        self.info.records += records.len() as u64;
        Ok(())
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
        self.write_slice(&batch)?;
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

/// Streams the records of a run, one block in memory at a time.
pub struct RunReader<T: Record> {
    container: Container,
    next_block: usize,
    scratch: Vec<u8>,
    raw: Vec<u8>,
    pos: usize,
    left_in_block: u64,
    _marker: std::marker::PhantomData<T>,
}

impl<T: Record> RunReader<T> {
    /// Opens a run and checks it holds records of type `T`.
    pub fn open(path: &Path) -> Result<RunReader<T>> {
        let container = Container::open_kind(path, KIND, VERSION)?;
        let found = container.params()["record_type"]
            .as_str()
            .unwrap_or("")
            .to_string();
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
        Ok(RunReader {
            container,
            next_block: 0,
            scratch: Vec::new(),
            raw: Vec::new(),
            pos: 0,
            left_in_block: 0,
            _marker: std::marker::PhantomData,
        })
    }

    /// Records in the run.
    pub fn records(&self) -> u64 {
        self.container.records()
    }

    /// The next record, or `None` at the end.
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<T>> {
        while self.left_in_block == 0 {
            if self.pos != self.raw.len() {
                return Err(self.bad_block("bytes left over after the block's last record"));
            }
            if self.next_block == self.container.blocks().len() {
                return Ok(None);
            }
            let i = self.next_block;
            self.container
                .read_block_into(i, &mut self.scratch, &mut self.raw)?;
            self.left_in_block = self.container.blocks()[i].records;
            self.pos = 0;
            self.next_block += 1;
        }
        let mut input = &self.raw[self.pos..];
        let before = input.len();
        let record = T::decode(&mut input).ok_or_else(|| self.bad_block("undecodable record"))?;
        self.pos += before - input.len();
        self.left_in_block -= 1;
        Ok(Some(record))
    }

    fn bad_block(&self, detail: &str) -> Error {
        let i = self.next_block.saturating_sub(1);
        Error::corrupt(
            self.container.path(),
            format!("block {i}"),
            self.container.blocks().get(i).map_or(0, |b| b.offset),
            detail.to_string(),
        )
    }
}

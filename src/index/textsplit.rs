//! The job's token streams split by shard, so that each shard's index task
//! reads only its own documents' text (`webmill shard index --step split`).
//!
//! `text.wm` is in page order, and a shard is a docID range: the pages of one
//! shard are spread over the whole file, so a shard reading `text.wm` reads
//! every shard's text. The split is an exchange in two waves: split task
//! `j` of `n` takes the `j`-th of `n` equal runs of `text.wm`'s blocks and
//! the page map's records of their pages, and writes, for every shard `k`,
//! `split-J/text-K.wm`: the records of the pages whose doc is in shard
//! `k`'s range and which are their doc's first capture (the only ones the
//! indexer reads), keys and payloads as in `text.wm` (a `text` page file,
//! `formats/pagefiles.md`, with gaps in its page numbers). Shard `k`'s
//! forward task then joins `split-0/text-K.wm`, `split-1/text-K.wm`, … by
//! copying their compressed blocks (`pagefile::concat`: the runs are in page
//! order) and indexes that file instead of `text.wm`. Every byte of text is
//! read twice in all (once by a split task, once by its shard) instead of
//! once per shard.
//!
//! A split task writes under an attempt directory of its own and publishes
//! it by one rename, as every per-shard step does.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::container::pagefile::{PageFile, PageFileWriter};
use crate::error::{Error, Result};
use crate::ingest::records;

/// zstd level of the split files (`text.wm`'s).
const LEVEL: i32 = 3;
/// Largest and smallest block a split file's writer buffers.
const MAX_BLOCK: usize = 256 << 10;
const MIN_BLOCK: usize = 16 << 10;

/// The name of split task `j`'s directory.
pub fn split_name(j: usize) -> String {
    format!("split-{j:04}")
}

/// The file of shard `k` in a split task's directory.
pub fn part_name(k: usize) -> String {
    format!("text-{k:04}.wm")
}

/// The text blocks split task `j` of `n` reads, of `blocks` in all.
pub fn task_blocks(blocks: usize, j: usize, n: usize) -> Range<usize> {
    let cut = |i: usize| ((blocks as u128 * i as u128) / n as u128) as usize;
    cut(j)..cut(j + 1)
}

/// Reads the page map from a page on, one block at a time.
struct PageDocCursor<'a> {
    file: &'a PageFile,
    next_block: usize,
    buf: (Vec<u8>, Vec<u8>),
    /// The current block's (page, docID, first capture).
    records: Vec<(u64, u64, bool)>,
    at: usize,
}

impl<'a> PageDocCursor<'a> {
    fn new(file: &'a PageFile, page: u64) -> PageDocCursor<'a> {
        PageDocCursor {
            file,
            next_block: file.find_block(page).unwrap_or(0),
            buf: Default::default(),
            records: Vec::new(),
            at: 0,
        }
    }

    /// The docID of `page` and whether it is its doc's first capture; pages
    /// must be asked in rising order.
    fn get(&mut self, page: u64) -> Result<(u64, bool)> {
        loop {
            while self.records.get(self.at).is_some_and(|r| r.0 < page) {
                self.at += 1;
            }
            if let Some(&(p, doc, first)) = self.records.get(self.at) {
                if p == page {
                    return Ok((doc, first));
                }
                break;
            }
            if self.next_block >= self.file.container().blocks().len() {
                break;
            }
            self.records.clear();
            self.at = 0;
            let records = &mut self.records;
            self.file
                .visit_block(self.next_block, &mut self.buf, |p, input| {
                    let (doc, first) = records::decode_pagedoc(input)?;
                    records.push((p, doc, first));
                    Ok(())
                })?;
            self.next_block += 1;
        }
        Err(Error::damaged(
            Some(self.file.container().path()),
            format!("page {page} has no docID in the page map"),
        ))
    }
}

/// Split task `j` of `n`: writes into `out` (created) one text file per
/// shard of `ranges` (`part_name(k)`) with the first captures of its docs
/// among the pages of `text`'s blocks [`task_blocks`]`(…, j, n)`. `mem`
/// bounds the writers' buffers. Returns the records written.
pub fn split(
    text: &Path,
    pagedoc: &Path,
    ranges: &[Range<u64>],
    j: usize,
    n: usize,
    mem: u64,
    out: &Path,
) -> Result<u64> {
    let text = PageFile::open(text, &records::TEXT)?;
    let pagedoc = PageFile::open(pagedoc, &records::PAGEDOC)?;
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let block = usize::try_from(mem / 4 / ranges.len().max(1) as u64)
        .unwrap_or(MAX_BLOCK)
        .clamp(MIN_BLOCK, MAX_BLOCK);
    let paths: Vec<PathBuf> = (0..ranges.len()).map(|k| out.join(part_name(k))).collect();
    let mut writers = paths
        .iter()
        .map(|p| {
            let mut w = PageFileWriter::create(p, &records::TEXT, block, LEVEL)?;
            w.set_durable(false);
            Ok(w)
        })
        .collect::<Result<Vec<_>>>()?;
    let blocks = task_blocks(text.container().blocks().len(), j, n);
    let first_page = blocks
        .clone()
        .next()
        .and_then(|b| <[u8; 8]>::try_from(text.container().blocks()[b].key.as_slice()).ok())
        .map_or(0, u64::from_be_bytes);
    let mut cursor = PageDocCursor::new(&pagedoc, first_page);
    let mut buf = Default::default();
    let mut written = 0u64;
    for b in blocks {
        text.visit_block(b, &mut buf, |page, input| {
            let before = *input;
            records::check_record(&records::TEXT, page, input)?;
            let payload = &before[..before.len() - input.len()];
            let (doc, first) = cursor.get(page)?;
            if first {
                // The shard holding `doc`: the last range starting at or before it.
                let k = ranges.partition_point(|r| r.start <= doc);
                if let Some(k) = k.checked_sub(1).filter(|&k| ranges[k].contains(&doc)) {
                    writers[k].push(page, payload)?;
                    written += 1;
                }
            }
            Ok(())
        })?;
    }
    let meta = json!({ "split": j, "of": n });
    for w in writers {
        w.finish(&meta)?;
    }
    Ok(written)
}

/// Shard `k`'s text joined from the `n` split tasks' files under `dir` into
/// `out`.
pub fn join(dir: &Path, k: usize, n: usize, out: &Path) -> Result<()> {
    let parts: Vec<(PathBuf, u64)> = (0..n)
        .map(|j| (dir.join(split_name(j)).join(part_name(k)), 0))
        .collect();
    for (p, _) in &parts {
        if !p.exists() {
            return Err(Error::usage(format!(
                "{} is missing: run `shard index --step split` for every task first",
                p.display()
            )));
        }
    }
    crate::container::pagefile::concat(&parts, &records::TEXT, out, &json!({}))?;
    Ok(())
}

//! Files of per-page records, in page order: the shared layout of the `pages`,
//! `text`, `repo` and `links` kinds (see `formats/pagefiles.md`).
//!
//! Pages are numbered in ingest order (input by input, record by record): the
//! *page number*. A file holds records for increasing page numbers (several
//! per page for `links`, at most one for the others). zstd blocks of about
//! `block_bytes` raw; a block's first key is the page number of its first
//! record (big-endian `u64`), and each record starts with the varint distance
//! from that key to its own page, then the kind's payload. Because records are
//! relative to their block's key, segment files written in parallel are
//! joined by copying their compressed blocks and shifting the keys
//! ([`concat`]): nothing is decompressed.

use std::path::Path;

use serde_json::json;

use crate::container::{BlockCodec, Container, ContainerWriter, FileKind};
use crate::error::{Error, Result};
use crate::varint;

/// Writes a page file.
pub struct PageFileWriter {
    w: ContainerWriter,
    codec: BlockCodec,
    block_bytes: usize,
    block: Vec<u8>,
    first: u64,
    last: u64,
    records: u64,
}

impl PageFileWriter {
    /// Starts a page file of `kind`.
    pub fn create(
        path: impl AsRef<Path>,
        kind: &FileKind,
        block_bytes: usize,
        level: i32,
    ) -> Result<PageFileWriter> {
        Self::with_params(path, kind, &json!({}), block_bytes, level)
    }

    /// Starts a page file of `kind` with header parameters `params`.
    pub fn with_params(
        path: impl AsRef<Path>,
        kind: &FileKind,
        params: &serde_json::Value,
        block_bytes: usize,
        level: i32,
    ) -> Result<PageFileWriter> {
        Ok(PageFileWriter {
            w: ContainerWriter::create(path, kind.tag, kind.version, params)?,
            codec: BlockCodec::Zstd(level),
            block_bytes,
            block: Vec::with_capacity(block_bytes + 1024),
            first: 0,
            last: 0,
            records: 0,
        })
    }

    /// Temporary files skip the fsyncs.
    pub fn set_durable(&mut self, durable: bool) {
        self.w.set_durable(durable);
    }

    /// Appends a record for `page` (pages must not decrease).
    pub fn push(&mut self, page: u64, payload: &[u8]) -> Result<()> {
        if self.records == 0 {
            self.first = page;
        } else if page < self.last {
            return Err(Error::internal(format!(
                "page {page} after page {} in {}",
                self.last,
                self.w.path().display()
            )));
        }
        self.last = page;
        varint::put(&mut self.block, page - self.first);
        self.block.extend_from_slice(payload);
        self.records += 1;
        if self.block.len() >= self.block_bytes {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.records > 0 {
            self.w.write_block(
                self.codec,
                &self.first.to_be_bytes(),
                self.records,
                &self.block,
            )?;
        }
        self.block.clear();
        self.records = 0;
        Ok(())
    }

    /// Publishes the file with `meta` in its footer; returns its size.
    pub fn finish(mut self, meta: &serde_json::Value) -> Result<u64> {
        self.flush()?;
        Ok(self.w.finish(meta)?.1)
    }
}

/// An open page file, with the kind it was opened as.
pub struct PageFile {
    c: Container,
    kind: &'static FileKind,
}

/// A block's first page number.
fn block_key(c: &Container, i: usize) -> Result<u64> {
    let key = &c.blocks()[i].key;
    let bytes: [u8; 8] = key.as_slice().try_into().map_err(|_| {
        Error::corrupt(
            c.path(),
            format!("block {i}"),
            c.blocks()[i].offset,
            format!("first key has {} bytes, expected 8", key.len()),
        )
    })?;
    Ok(u64::from_be_bytes(bytes))
}

impl PageFile {
    /// Opens a page file of `kind`.
    pub fn open(path: impl AsRef<Path>, kind: &'static FileKind) -> Result<PageFile> {
        let c = kind.open(path)?;
        for i in 0..c.blocks().len() {
            block_key(&c, i)?;
        }
        Ok(PageFile { c, kind })
    }

    /// The kind it was opened as.
    pub fn kind(&self) -> &'static FileKind {
        self.kind
    }

    /// The container.
    pub fn container(&self) -> &Container {
        &self.c
    }

    /// Records in the file.
    pub fn records(&self) -> u64 {
        self.c.records()
    }

    /// The last block whose first key is ≤ `page`. For kinds with several
    /// records per key (`links`, `anchors`) a key's records may start in an
    /// earlier block: step back while the previous block's key equals `page`.
    pub fn find_block(&self, page: u64) -> Option<usize> {
        self.c.find_block(&page.to_be_bytes())
    }

    /// Calls `f(page, payload)` for each record of block `i`, with the payload
    /// running to the end of the block (`f` returns how many bytes it used).
    pub fn visit_block(
        &self,
        i: usize,
        buf: &mut (Vec<u8>, Vec<u8>),
        mut f: impl FnMut(u64, &mut &[u8]) -> Result<()>,
    ) -> Result<()> {
        let key = block_key(&self.c, i)?;
        self.c.read_block_into(i, &mut buf.0, &mut buf.1)?;
        let mut input = &buf.1[..];
        let entry = &self.c.blocks()[i];
        let bad = |detail: String| {
            Error::corrupt(self.c.path(), format!("block {i}"), entry.offset, detail)
        };
        let mut last = key;
        for n in 0..entry.records {
            let delta = varint::get(&mut input)
                .ok_or_else(|| bad(format!("record {n}: bad page delta")))?;
            let page = key
                .checked_add(delta)
                .ok_or_else(|| bad(format!("record {n}: page delta {delta} overflows")))?;
            if page < last {
                return Err(bad(format!("record {n}: page {page} after {last}")));
            }
            last = page;
            let before = input.len();
            f(page, &mut input).map_err(|e| match e {
                Error::Record(d) => bad(format!("record {n} (page {page}): {d}")),
                e => e,
            })?;
            debug_assert!(input.len() <= before);
        }
        if !input.is_empty() {
            return Err(bad(format!("{} bytes after the last record", input.len())));
        }
        Ok(())
    }

    /// Calls `f(page, payload)` for the records of every block that may hold
    /// records of `key`: from the first block that may (a key's records can
    /// start in the blocks before the one it opens) to the one whose records
    /// pass `key`. `f` decodes each record it is given (as for
    /// [`visit_block`](Self::visit_block)) and keeps those of `key`; it
    /// returns `false` to stop after the current block (later records of
    /// that block are still passed to it). The lookup of one key's records:
    /// anchors by target, a cluster's members, a page of the repository.
    pub fn visit_key(
        &self,
        key: u64,
        buf: &mut (Vec<u8>, Vec<u8>),
        mut f: impl FnMut(u64, &mut &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let Some(mut i) = self.find_block(key) else {
            return Ok(());
        };
        while i > 0 && self.c.blocks()[i].key == key.to_be_bytes() {
            i -= 1;
        }
        let (mut past, mut more) = (false, true);
        while i < self.c.blocks().len() && !past && more {
            self.visit_block(i, buf, |page, input| {
                past |= page > key;
                more &= f(page, input)?;
                Ok(())
            })?;
            i += 1;
        }
        Ok(())
    }

    /// Calls `f(page, payload)` for every record, in order.
    pub fn for_each(&self, mut f: impl FnMut(u64, &mut &[u8]) -> Result<()>) -> Result<()> {
        let mut buf = (Vec::new(), Vec::new());
        for i in 0..self.c.blocks().len() {
            self.visit_block(i, &mut buf, &mut f)?;
        }
        Ok(())
    }
}

/// Joins page files of `kind` into `out`: part `i`'s page numbers are shifted
/// by `parts[i].1`. Blocks are copied as stored (checked, not decompressed).
/// Returns the size of `out`.
pub fn concat(
    parts: &[(std::path::PathBuf, u64)],
    kind: &FileKind,
    out: &Path,
    meta: &serde_json::Value,
) -> Result<u64> {
    let mut w = ContainerWriter::create(out, kind.tag, kind.version, &json!({}))?;
    let mut next = 0u64;
    for (path, base) in parts {
        let c = kind.open(path)?;
        for i in 0..c.blocks().len() {
            let key = block_key(&c, i)?.checked_add(*base).ok_or_else(|| {
                Error::internal(format!("{}: page numbers overflow", path.display()))
            })?;
            if key < next {
                return Err(Error::internal(format!(
                    "{} starts at page {key}, before page {next}",
                    path.display()
                )));
            }
            next = key;
            let block = c.copy_block(i)?;
            w.append_block(block, &key.to_be_bytes(), c.blocks()[i].records)?;
        }
    }
    Ok(w.finish(meta)?.1)
}

/// Reads a varint field of a payload; `Error::Record` if cut.
pub fn get_u64(input: &mut &[u8], what: &str) -> Result<u64> {
    varint::get(input).ok_or_else(|| Error::record(format!("bad {what}")))
}

/// Reads a length-prefixed field of a payload; `Error::Record` if cut.
pub fn get_bytes<'a>(input: &mut &'a [u8], what: &str) -> Result<&'a [u8]> {
    varint::get_bytes(input).ok_or_else(|| Error::record(format!("bad {what}")))
}

/// Reads a length-prefixed UTF-8 field.
pub fn get_str<'a>(input: &mut &'a [u8], what: &str) -> Result<&'a str> {
    std::str::from_utf8(get_bytes(input, what)?)
        .map_err(|_| Error::record(format!("{what} is not UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page file of length-prefixed payloads (the container knows no
    /// stage's kinds).
    static TEST: FileKind = FileKind {
        tag: "pftest",
        version: 1,
        what: "page file test records",
        verify: |_| Ok(()),
        dump: |_, _| Ok(()),
    };

    fn write(path: &Path, pages: &[(u64, &[u8])], block: usize) {
        let mut w = PageFileWriter::create(path, &TEST, block, 1).unwrap();
        for (p, payload) in pages {
            let mut rec = Vec::new();
            varint::put_bytes(&mut rec, payload);
            w.push(*p, &rec).unwrap();
        }
        w.finish(&json!({})).unwrap();
    }

    fn read(path: &Path) -> Vec<(u64, Vec<u8>)> {
        let f = PageFile::open(path, &TEST).unwrap();
        let mut out = Vec::new();
        f.for_each(|p, input| {
            out.push((p, get_bytes(input, "payload")?.to_vec()));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn concat_shifts_pages_without_decoding() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.wm");
        let b = dir.path().join("b.wm");
        let big = vec![7u8; 300];
        write(&a, &[(0, b"x"), (1, &big), (1, b"y"), (3, &big)], 256);
        write(&b, &[(0, &big), (2, b"z")], 256);
        let out = dir.path().join("all.wm");
        concat(&[(a.clone(), 0), (b.clone(), 4)], &TEST, &out, &json!({})).unwrap();
        let mut want = read(&a);
        want.extend(read(&b).into_iter().map(|(p, v)| (p + 4, v)));
        assert_eq!(read(&out), want);
        let f = PageFile::open(&out, &TEST).unwrap();
        assert!(f.container().blocks().len() >= 4);
        assert_eq!(f.find_block(6), Some(f.container().blocks().len() - 1));
        // Parts out of order are refused.
        assert!(concat(&[(b, 4), (a, 0)], &TEST, &out, &json!({})).is_err());
    }
}

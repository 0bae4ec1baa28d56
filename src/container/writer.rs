//! Writing containers: header first, blocks as they come, footer at the end,
//! published atomically.

use std::path::{Path, PathBuf};

use byteorder::{LittleEndian, WriteBytesExt};

use super::{kind_tag, pad8, CONTAINER_VERSION, MAGIC, TRAILING_MAGIC};
use crate::error::{Error, Result};
use crate::publish::PartialFile;

/// How a block's payload is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockCodec {
    /// Stored as is, 8-byte aligned in the file, so it can be memory-mapped.
    Raw,
    /// zstd-compressed at the given level.
    Zstd(i32),
}

impl BlockCodec {
    pub(crate) fn id(self) -> u8 {
        match self {
            BlockCodec::Raw => 0,
            BlockCodec::Zstd(_) => 1,
        }
    }
}

struct IndexEntry {
    offset: u64,
    stored: u64,
    raw: u64,
    records: u64,
    crc: u32,
    key: Vec<u8>,
}

/// Writes one container file. Nothing is visible under the final name until
/// [`ContainerWriter::finish`] succeeds; dropping the writer discards the file.
pub struct ContainerWriter {
    file: PartialFile,
    index: Vec<IndexEntry>,
    records: u64,
    raw_bytes: u64,
    scratch: Vec<u8>,
}

/// A block encoded (and compressed) but not yet written; lets callers compress
/// blocks in parallel and append them in order.
pub struct EncodedBlock {
    codec: u8,
    raw_len: u64,
    payload: Vec<u8>,
}

/// zstd-compresses with a per-thread context, reused across blocks (creating a
/// context costs more than compressing a small block).
fn compress(raw: &[u8], level: i32) -> Result<Vec<u8>> {
    use std::cell::RefCell;
    thread_local! {
        static COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
    }
    let failed = |e: std::io::Error| Error::internal(format!("zstd compression failed: {e}"));
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|(l, _)| *l != level) {
            *slot = Some((level, zstd::bulk::Compressor::new(level).map_err(failed)?));
        }
        let (_, c) = slot.as_mut().expect("compressor was just created");
        c.compress(raw).map_err(failed)
    })
}

impl EncodedBlock {
    /// Encodes `raw` with `codec`.
    pub fn encode(codec: BlockCodec, raw: &[u8]) -> Result<EncodedBlock> {
        let payload = match codec {
            BlockCodec::Raw => raw.to_vec(),
            BlockCodec::Zstd(level) => compress(raw, level)?,
        };
        Ok(EncodedBlock {
            codec: codec.id(),
            raw_len: raw.len() as u64,
            payload,
        })
    }

    /// Encodes an owned block: a raw one keeps `raw` as its payload, no copy.
    pub fn encode_owned(codec: BlockCodec, raw: Vec<u8>) -> Result<EncodedBlock> {
        match codec {
            BlockCodec::Raw => Ok(EncodedBlock {
                codec: codec.id(),
                raw_len: raw.len() as u64,
                payload: raw,
            }),
            BlockCodec::Zstd(_) => EncodedBlock::encode(codec, &raw),
        }
    }

    /// A block copied as stored from another container (codec id, decoded length, payload).
    pub(crate) fn from_stored(codec: u8, raw_len: u64, payload: Vec<u8>) -> EncodedBlock {
        EncodedBlock {
            codec,
            raw_len,
            payload,
        }
    }

    /// Bytes the payload takes on disk.
    pub fn stored_len(&self) -> usize {
        self.payload.len()
    }
}

impl ContainerWriter {
    /// Starts writing a file of `kind` (≤ 8 ASCII bytes) at `version` with the
    /// given parameters (a JSON object).
    pub fn create(
        path: impl AsRef<Path>,
        kind: &str,
        version: u32,
        params: &serde_json::Value,
    ) -> Result<ContainerWriter> {
        ContainerWriter::create_buffered(path, kind, version, params, 1 << 20)
    }

    /// [`ContainerWriter::create`] with a write buffer of `buffer` bytes
    /// instead of 1 MiB: for writers that keep many files open at once (a
    /// block larger than the buffer goes straight to the file).
    pub fn create_buffered(
        path: impl AsRef<Path>,
        kind: &str,
        version: u32,
        params: &serde_json::Value,
        buffer: usize,
    ) -> Result<ContainerWriter> {
        let mut file = PartialFile::create_buffered(path, buffer)?;
        let params = serde_json::to_vec(params).map_err(|e| Error::internal(e.to_string()))?;
        let mut header = Vec::with_capacity(64 + params.len());
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&kind_tag(kind));
        header.write_u32::<LittleEndian>(version).unwrap();
        header.write_u16::<LittleEndian>(CONTAINER_VERSION).unwrap();
        header.write_u16::<LittleEndian>(0).unwrap();
        header
            .write_u32::<LittleEndian>(params.len() as u32)
            .unwrap();
        header.extend_from_slice(&params);
        let crc = crc32c::crc32c(&header);
        header.write_u32::<LittleEndian>(crc).unwrap();
        header.resize(pad8(header.len() as u64) as usize, 0);
        file.write_all(&header)?;
        Ok(ContainerWriter {
            file,
            index: Vec::new(),
            records: 0,
            raw_bytes: 0,
            scratch: Vec::new(),
        })
    }

    /// Encodes and appends one block holding `records` records whose first key is
    /// `first_key` (kind-defined bytes, at most 65535).
    pub fn write_block(
        &mut self,
        codec: BlockCodec,
        first_key: &[u8],
        records: u64,
        raw: &[u8],
    ) -> Result<()> {
        match codec {
            // Written from `raw` itself: a copy of every raw block (the
            // index's forward barrels: 46 MB on rust-doc, serially, into
            // buffers mapped and faulted in afresh) bought nothing.
            BlockCodec::Raw => {
                self.append_payload(codec.id(), raw.len() as u64, raw, first_key, records)
            }
            BlockCodec::Zstd(_) => {
                self.append_block(EncodedBlock::encode(codec, raw)?, first_key, records)
            }
        }
    }

    /// Appends a block encoded earlier (possibly on another thread). A key
    /// longer than 65535 bytes is refused (an internal error: kinds bound
    /// their keys).
    pub fn append_block(
        &mut self,
        block: EncodedBlock,
        first_key: &[u8],
        records: u64,
    ) -> Result<()> {
        self.append_payload(
            block.codec,
            block.raw_len,
            &block.payload,
            first_key,
            records,
        )
    }

    /// Appends a block of codec `codec` (its id), `raw_len` bytes decoded,
    /// stored as `payload`.
    fn append_payload(
        &mut self,
        codec: u8,
        raw_len: u64,
        payload: &[u8],
        first_key: &[u8],
        records: u64,
    ) -> Result<()> {
        if first_key.len() > u16::MAX as usize {
            return Err(Error::internal(format!(
                "{}: block {} has a key of {} bytes; a container's keys hold at most {}",
                self.path().display(),
                self.index.len(),
                first_key.len(),
                u16::MAX
            )));
        }
        let offset = self.file.position();
        let stored = payload.len() as u64;
        let mut head = Vec::with_capacity(24);
        head.push(codec);
        head.extend_from_slice(&[0, 0, 0]);
        head.write_u32::<LittleEndian>(0).unwrap(); // crc placeholder
        head.write_u64::<LittleEndian>(stored).unwrap();
        head.write_u64::<LittleEndian>(raw_len).unwrap();
        let mut hasher = crc32c::crc32c(&head[0..4]);
        hasher = crc32c::crc32c_append(hasher, &head[8..24]);
        let crc = crc32c::crc32c_append(hasher, payload);
        head[4..8].copy_from_slice(&crc.to_le_bytes());
        self.file.write_all(&head)?;
        self.file.write_all(payload)?;
        let end = self.file.position();
        let pad = (pad8(end) - end) as usize;
        if pad > 0 {
            self.file.write_all(&[0u8; 8][..pad])?;
        }
        self.index.push(IndexEntry {
            offset,
            stored,
            raw: raw_len,
            records,
            crc,
            key: first_key.to_vec(),
        });
        self.records += records;
        self.raw_bytes += raw_len;
        Ok(())
    }

    /// See [`PartialFile::set_durable`]: temporary files skip the fsyncs.
    pub fn set_durable(&mut self, durable: bool) {
        self.file.set_durable(durable);
    }

    /// Blocks written so far.
    pub fn blocks(&self) -> usize {
        self.index.len()
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.file.position()
    }

    /// The final path of the file.
    pub fn path(&self) -> &Path {
        self.file.final_path()
    }

    /// Writes the footer with `meta` (a JSON object), fsyncs and publishes the
    /// file. Returns its final path and size.
    pub fn finish(mut self, meta: &serde_json::Value) -> Result<(PathBuf, u64)> {
        let meta = serde_json::to_vec(meta).map_err(|e| Error::internal(e.to_string()))?;
        let footer_offset = self.file.position();
        let footer = &mut self.scratch;
        footer.clear();
        footer
            .write_u64::<LittleEndian>(self.index.len() as u64)
            .unwrap();
        footer.write_u64::<LittleEndian>(self.records).unwrap();
        footer.write_u64::<LittleEndian>(self.raw_bytes).unwrap();
        footer.write_u32::<LittleEndian>(meta.len() as u32).unwrap();
        footer.extend_from_slice(&meta);
        for e in &self.index {
            footer.write_u64::<LittleEndian>(e.offset).unwrap();
            footer.write_u64::<LittleEndian>(e.stored).unwrap();
            footer.write_u64::<LittleEndian>(e.raw).unwrap();
            footer.write_u64::<LittleEndian>(e.records).unwrap();
            footer.write_u32::<LittleEndian>(e.crc).unwrap();
            footer
                .write_u16::<LittleEndian>(e.key.len() as u16)
                .unwrap();
            footer.extend_from_slice(&e.key);
        }
        let crc = crc32c::crc32c_append(crc32c::crc32c(footer), &footer_offset.to_le_bytes());
        footer.write_u64::<LittleEndian>(footer_offset).unwrap();
        footer.write_u32::<LittleEndian>(crc).unwrap();
        footer.write_u32::<LittleEndian>(0).unwrap();
        footer.extend_from_slice(TRAILING_MAGIC);
        let footer = std::mem::take(&mut self.scratch);
        self.file.write_all(&footer)?;
        let size = self.file.position();
        let path = self.file.publish()?;
        Ok((path, size))
    }
}

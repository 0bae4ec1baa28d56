//! Reading containers: structure checked at open, each block's checksum checked
//! when it is read.

use std::cell::RefCell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{
    pad8, show_bytes, BLOCK_HEADER, CONTAINER_VERSION, FOOTER_FIXED, HEADER_FIXED, MAGIC, TAIL,
    TRAILING_MAGIC,
};
use crate::error::{Error, IoContext, Result};
use crate::mmap::MappedBytes;

/// One entry of a container's block index.
#[derive(Clone, Debug)]
pub struct BlockEntry {
    /// Offset of the block header in the file.
    pub offset: u64,
    /// Stored payload length.
    pub stored: u64,
    /// Decoded payload length.
    pub raw: u64,
    /// Records in the block.
    pub records: u64,
    /// The block's crc32c.
    pub crc: u32,
    /// First key of the block (kind-defined bytes).
    pub key: Vec<u8>,
}

/// An open, structurally validated container file.
pub struct Container {
    path: PathBuf,
    file: File,
    size: u64,
    kind: String,
    version: u32,
    params: serde_json::Value,
    meta: serde_json::Value,
    blocks: Vec<BlockEntry>,
    records: u64,
    raw_bytes: u64,
    header_len: u64,
    footer_offset: u64,
    footer_crc: u32,
    header_crc: u32,
}

/// Fixed part of an index entry: offset, stored, raw, records, crc, key length.
const ENTRY_FIXED: usize = 38;

fn le_u16(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}
fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}
fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

impl Container {
    /// Opens `path` and checks that it is a container of `kind` whose kind
    /// version is `version`.
    pub fn open_kind(path: impl AsRef<Path>, kind: &str, version: u32) -> Result<Container> {
        let c = Container::open(path)?;
        if c.kind != kind {
            return Err(Error::WrongKind {
                path: c.path.clone(),
                expected: kind.to_string(),
                found: c.kind.clone(),
            });
        }
        if c.version != version {
            return Err(Error::Version {
                path: c.path.clone(),
                what: format!("{kind} format"),
                expected: version,
                found: c.version,
            });
        }
        Ok(c)
    }

    /// Opens any container, checking header, footer and the block index.
    pub fn open(path: impl AsRef<Path>) -> Result<Container> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).at(&path)?;
        let size = file.metadata().at(&path)?.len();
        let read_at = |offset: u64, len: usize| -> Result<Vec<u8>> {
            let mut buf = vec![0u8; len];
            file.read_exact_at(&mut buf, offset).at(&path)?;
            Ok(buf)
        };

        // Header.
        if size < (HEADER_FIXED + 4) as u64 {
            return Err(Error::Truncated {
                path,
                detail: format!("file is {size} bytes, shorter than a container header"),
            });
        }
        let fixed = read_at(0, HEADER_FIXED)?;
        if &fixed[0..8] != MAGIC {
            return Err(Error::BadMagic {
                path,
                offset: 0,
                expected: show_bytes(MAGIC),
                found: show_bytes(&fixed[0..8]),
            });
        }
        let kind = String::from_utf8_lossy(&fixed[8..16])
            .trim_end_matches('\0')
            .to_string();
        let version = le_u32(&fixed[16..20]);
        let container_version = le_u16(&fixed[20..22]);
        let params_len = le_u32(&fixed[24..28]) as u64;
        if HEADER_FIXED as u64 + params_len + 4 > size {
            return Err(Error::Truncated {
                path,
                detail: format!(
                    "header announces a {params_len}-byte parameter block, but the file is only {size} bytes"
                ),
            });
        }
        let mut header = fixed;
        header.extend_from_slice(&read_at(HEADER_FIXED as u64, params_len as usize + 4)?);
        let body_end = HEADER_FIXED + params_len as usize;
        let stored_crc = le_u32(&header[body_end..body_end + 4]);
        let header_crc = stored_crc;
        let computed = crc32c::crc32c(&header[..body_end]);
        if stored_crc != computed {
            return Err(Error::Checksum {
                path,
                region: "header".into(),
                offset: 0,
                expected: stored_crc,
                found: computed,
            });
        }
        if container_version != CONTAINER_VERSION {
            return Err(Error::Version {
                path,
                what: "container".into(),
                expected: CONTAINER_VERSION as u32,
                found: container_version as u32,
            });
        }
        if le_u16(&header[22..24]) != 0 {
            return Err(Error::corrupt(
                &path,
                "header",
                22,
                "reserved bytes are not zero",
            ));
        }
        let params: serde_json::Value = serde_json::from_slice(&header[HEADER_FIXED..body_end])
            .map_err(|e| {
                Error::corrupt(
                    &path,
                    "header parameters",
                    HEADER_FIXED as u64,
                    e.to_string(),
                )
            })?;
        let header_len = pad8(body_end as u64 + 4);

        // Tail and footer.
        let unfinished = |detail: String| Error::Truncated {
            path: path.clone(),
            detail,
        };
        if size < header_len + (FOOTER_FIXED + TAIL) as u64 {
            return Err(unfinished(format!(
                "file is {size} bytes, too short to hold a footer (was it cut, or never finished?)"
            )));
        }
        let tail = read_at(size - TAIL as u64, TAIL)?;
        if &tail[16..24] != TRAILING_MAGIC {
            return Err(unfinished(format!(
                "no trailing magic {} at offset {} (found {}): the file was cut or never finished",
                show_bytes(TRAILING_MAGIC),
                size - 8,
                show_bytes(&tail[16..24])
            )));
        }
        let footer_offset = le_u64(&tail[0..8]);
        let footer_crc = le_u32(&tail[8..12]);
        if footer_offset < header_len
            || !footer_offset.is_multiple_of(8)
            || footer_offset + (FOOTER_FIXED + TAIL) as u64 > size
        {
            return Err(Error::corrupt(
                &path,
                "tail",
                size - TAIL as u64,
                format!("footer offset {footer_offset} is outside the file ({size} bytes)"),
            ));
        }
        let footer = read_at(footer_offset, (size - TAIL as u64 - footer_offset) as usize)?;
        let computed = crc32c::crc32c_append(crc32c::crc32c(&footer), &footer_offset.to_le_bytes());
        if computed != footer_crc {
            return Err(Error::Checksum {
                path,
                region: "footer".into(),
                offset: footer_offset,
                expected: footer_crc,
                found: computed,
            });
        }
        if le_u32(&tail[12..16]) != 0 {
            return Err(Error::corrupt(
                &path,
                "tail",
                size - 12,
                "reserved bytes are not zero",
            ));
        }
        let bad_footer = |at: usize, detail: &str| {
            Error::corrupt(&path, "footer", footer_offset + at as u64, detail)
        };
        let n_blocks = le_u64(&footer[0..8]);
        let records = le_u64(&footer[8..16]);
        let raw_bytes = le_u64(&footer[16..24]);
        let meta_len = le_u32(&footer[24..28]) as usize;
        if FOOTER_FIXED + meta_len > footer.len() {
            return Err(bad_footer(24, "metadata length exceeds the footer"));
        }
        let meta: serde_json::Value =
            serde_json::from_slice(&footer[FOOTER_FIXED..FOOTER_FIXED + meta_len])
                .map_err(|e| bad_footer(FOOTER_FIXED, &format!("metadata: {e}")))?;
        let mut pos = FOOTER_FIXED + meta_len;
        // Each entry is at least 38 bytes, which bounds the allocation below.
        if n_blocks > (footer.len() / ENTRY_FIXED) as u64 {
            return Err(bad_footer(
                0,
                "block count exceeds what the footer can hold",
            ));
        }
        let mut blocks = Vec::with_capacity(n_blocks as usize);
        let mut expected_offset = header_len;
        let (mut sum_records, mut sum_raw) = (0u64, 0u64);
        for i in 0..n_blocks {
            if pos + ENTRY_FIXED > footer.len() {
                return Err(bad_footer(pos, &format!("index entry {i} is cut short")));
            }
            let entry_at = pos;
            let e = &footer[pos..];
            let offset = le_u64(&e[0..8]);
            let stored = le_u64(&e[8..16]);
            let raw = le_u64(&e[16..24]);
            let recs = le_u64(&e[24..32]);
            let crc = le_u32(&e[32..36]);
            let key_len = le_u16(&e[36..38]) as usize;
            if pos + ENTRY_FIXED + key_len > footer.len() {
                return Err(bad_footer(
                    pos,
                    &format!("key of index entry {i} is cut short"),
                ));
            }
            let key = e[ENTRY_FIXED..ENTRY_FIXED + key_len].to_vec();
            pos += ENTRY_FIXED + key_len;
            if offset != expected_offset {
                return Err(bad_footer(
                    entry_at,
                    &format!("block {i} is indexed at offset {offset}, expected {expected_offset}"),
                ));
            }
            expected_offset = offset
                .checked_add(BLOCK_HEADER as u64)
                .and_then(|v| v.checked_add(stored))
                .map(pad8)
                .filter(|&end| end <= footer_offset)
                .ok_or_else(|| bad_footer(pos, &format!("block {i} extends past the footer")))?;
            sum_records = sum_records.wrapping_add(recs);
            sum_raw = sum_raw.wrapping_add(raw);
            blocks.push(BlockEntry {
                offset,
                stored,
                raw,
                records: recs,
                crc,
                key,
            });
        }
        if pos != footer.len() {
            return Err(bad_footer(pos, "trailing bytes after the block index"));
        }
        if expected_offset != footer_offset {
            return Err(bad_footer(
                0,
                &format!(
                    "blocks end at offset {expected_offset} but the footer starts at {footer_offset}"
                ),
            ));
        }
        if sum_records != records || sum_raw != raw_bytes {
            return Err(bad_footer(8, "totals disagree with the block index"));
        }
        Ok(Container {
            path,
            file,
            size,
            kind,
            version,
            params,
            meta,
            blocks,
            records,
            raw_bytes,
            header_len,
            footer_offset,
            footer_crc,
            header_crc,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// The file kind tag (e.g. `"edges"`).
    pub fn kind(&self) -> &str {
        &self.kind
    }
    /// The kind's format version.
    pub fn version(&self) -> u32 {
        self.version
    }
    /// Parameters from the header.
    pub fn params(&self) -> &serde_json::Value {
        &self.params
    }
    /// Metadata from the footer.
    pub fn meta(&self) -> &serde_json::Value {
        &self.meta
    }

    /// The header parameters as a typed struct; a missing or mistyped field
    /// is a corrupt header, named as such.
    pub fn params_as<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_value(self.params.clone()).map_err(|e| {
            Error::corrupt(
                &self.path,
                "header parameters",
                super::HEADER_FIXED as u64,
                e.to_string(),
            )
        })
    }

    /// The footer metadata as a typed struct; a missing or mistyped field is
    /// a corrupt footer, named as such.
    pub fn meta_as<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_value(self.meta.clone()).map_err(|e| self.meta_error(e.to_string()))
    }
    /// The error for footer metadata that the file's own contents contradict
    /// (a count the blocks do not hold) or that a reader cannot use: it names
    /// the file and the offset where the metadata starts.
    pub fn meta_error(&self, detail: impl Into<String>) -> Error {
        Error::corrupt(
            &self.path,
            "footer metadata",
            self.footer_offset + FOOTER_FIXED as u64,
            detail,
        )
    }
    /// The block index.
    pub fn blocks(&self) -> &[BlockEntry] {
        &self.blocks
    }
    /// Total records over all blocks.
    pub fn records(&self) -> u64 {
        self.records
    }
    /// Total decoded bytes over all blocks.
    pub fn raw_bytes(&self) -> u64 {
        self.raw_bytes
    }
    /// File size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }
    /// The file's content checksum: crc32c of the header crc followed by the
    /// footer crc. The header crc covers kind, version and parameters; the
    /// footer crc covers the index, which repeats every block's crc; so this
    /// identifies the whole content. It is what job manifests record.
    pub fn checksum(&self) -> u32 {
        let mut both = [0u8; 8];
        both[..4].copy_from_slice(&self.header_crc.to_le_bytes());
        both[4..].copy_from_slice(&self.footer_crc.to_le_bytes());
        crc32c::crc32c(&both)
    }
    /// Length of the header including padding (offset of the first block).
    pub fn header_len(&self) -> u64 {
        self.header_len
    }
    /// Offset of the footer.
    pub fn footer_offset(&self) -> u64 {
        self.footer_offset
    }

    fn block_error(&self, i: usize, detail: String) -> Error {
        Error::corrupt(
            &self.path,
            format!("block {i}"),
            self.blocks[i].offset,
            detail,
        )
    }

    /// Reads block `i`'s stored payload into `payload` (its previous contents
    /// are overwritten, not zeroed first) and checks the block header against
    /// the index and the checksum. Returns the codec.
    fn read_stored(&self, i: usize, payload: &mut Vec<u8>) -> Result<u8> {
        let e = &self.blocks[i];
        let mut buf = [0u8; BLOCK_HEADER];
        self.file.read_exact_at(&mut buf, e.offset).at(&self.path)?;
        payload.resize(e.stored as usize, 0);
        self.file
            .read_exact_at(payload, e.offset + BLOCK_HEADER as u64)
            .at(&self.path)?;
        let codec = buf[0];
        let stored_crc = le_u32(&buf[4..8]);
        let crc = crc32c::crc32c_append(
            crc32c::crc32c_append(crc32c::crc32c(&buf[0..4]), &buf[8..]),
            payload,
        );
        if crc != stored_crc {
            return Err(Error::Checksum {
                path: self.path.clone(),
                region: format!("block {i}"),
                offset: e.offset,
                expected: stored_crc,
                found: crc,
            });
        }
        if buf[1..4] != [0, 0, 0] {
            return Err(self.block_error(i, "reserved bytes are not zero".into()));
        }
        let (stored, raw) = (le_u64(&buf[8..16]), le_u64(&buf[16..24]));
        if stored != e.stored || raw != e.raw || stored_crc != e.crc {
            return Err(self.block_error(
                i,
                format!(
                    "block header says {stored} stored / {raw} raw bytes with crc {stored_crc:08x}, index says {} / {} with crc {:08x}",
                    e.stored, e.raw, e.crc
                ),
            ));
        }
        if codec > 1 {
            return Err(self.block_error(i, format!("unknown codec {codec}")));
        }
        if codec == 0 && stored != raw {
            return Err(self.block_error(i, "raw block with stored length ≠ raw length".into()));
        }
        Ok(codec)
    }

    /// Reads and decodes block `i` into `out` (cleared first). `scratch` holds the
    /// stored bytes and can be reused between calls.
    pub fn read_block_into(
        &self,
        i: usize,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        if self.blocks[i].stored == self.blocks[i].raw {
            // Maybe raw: read it straight into `out`, saving a copy.
            if self.read_stored(i, out)? == 0 {
                return Ok(());
            }
            std::mem::swap(scratch, out);
        } else {
            // A raw block's lengths are equal (read_stored checks it).
            self.read_stored(i, scratch)?;
        }
        let payload = &scratch[..];
        out.clear();
        let raw = self.blocks[i].raw as usize;
        // Bound the allocation by what zstd says the frame holds, so a crafted
        // length cannot exhaust memory.
        let frame = zstd::zstd_safe::get_frame_content_size(payload)
            .ok()
            .flatten();
        if frame != Some(raw as u64) {
            return Err(self.block_error(
                i,
                format!("zstd frame holds {frame:?} bytes, the index says {raw}"),
            ));
        }
        out.try_reserve(raw).map_err(|_| {
            self.block_error(i, format!("cannot allocate {raw} bytes to decode it"))
        })?;
        thread_local! {
            static DECODER: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
        }
        let n = DECODER.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot =
                    Some(zstd::bulk::Decompressor::new().map_err(|e| Error::io(&self.path, e))?);
            }
            let decoder = slot.as_mut().expect("decoder was just created");
            decoder
                .decompress_to_buffer(payload, out)
                .map_err(|e| self.block_error(i, format!("zstd: {e}")))
        })?;
        if n != raw {
            return Err(self.block_error(i, format!("decoded {n} bytes, index says {raw}")));
        }
        Ok(())
    }

    /// Block `i` as stored (checked against its crc, not decoded), ready to be
    /// appended to another container with [`super::ContainerWriter::append_block`].
    pub fn copy_block(&self, i: usize) -> Result<super::EncodedBlock> {
        let mut buf = Vec::new();
        let codec = self.read_stored(i, &mut buf)?;
        Ok(super::EncodedBlock::from_stored(
            codec,
            self.blocks[i].raw,
            buf,
        ))
    }

    /// Reads and decodes block `i`.
    pub fn read_block(&self, i: usize) -> Result<Vec<u8>> {
        let (mut scratch, mut out) = (Vec::new(), Vec::new());
        self.read_block_into(i, &mut scratch, &mut out)?;
        Ok(out)
    }

    /// Maps raw block `i` into memory after checking its checksum. The slice is
    /// 8-byte aligned.
    pub fn map_block(&self, i: usize) -> Result<MappedBytes> {
        let e = &self.blocks[i];
        let map = MappedBytes::map(
            &self.file,
            &self.path,
            e.offset,
            BLOCK_HEADER + e.stored as usize,
        )?;
        self.check_raw_block(i, &map)?;
        Ok(map.skip_prefix(BLOCK_HEADER))
    }

    /// Checks that `bytes` (block `i` as it is in the file: its 24-byte header
    /// and payload, e.g. through a mapping) is a raw block that agrees with the
    /// index and its checksum.
    pub fn check_raw_block(&self, i: usize, bytes: &[u8]) -> Result<()> {
        let e = &self.blocks[i];
        if bytes.len() != BLOCK_HEADER + e.stored as usize {
            return Err(self.block_error(
                i,
                format!(
                    "{} bytes given for a block of {}",
                    bytes.len(),
                    BLOCK_HEADER as u64 + e.stored
                ),
            ));
        }
        if bytes[0] != 0 || bytes[1..4] != [0, 0, 0] {
            return Err(self.block_error(
                i,
                "not a raw block (or reserved bytes set): cannot be mapped".into(),
            ));
        }
        if le_u64(&bytes[8..16]) != e.stored || le_u64(&bytes[16..24]) != e.raw || e.raw != e.stored
        {
            return Err(self.block_error(i, "block header lengths disagree with the index".into()));
        }
        let stored_crc = le_u32(&bytes[4..8]);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&bytes[0..4]), &bytes[8..]);
        if crc != stored_crc || crc != e.crc {
            return Err(Error::Checksum {
                path: self.path.clone(),
                region: format!("block {i}"),
                offset: e.offset,
                expected: e.crc,
                found: crc,
            });
        }
        Ok(())
    }

    /// Maps the file from its start to the footer (every block), without
    /// checking any block: see [`super::MappedContainer`], which checks each
    /// block on first use.
    pub(crate) fn map_body(&self) -> Result<MappedBytes> {
        MappedBytes::map(&self.file, &self.path, 0, self.footer_offset as usize)
    }

    /// Finds the block that may hold `key`: the last block whose first key is
    /// ≤ `key` (keys compared as bytes). `None` if `key` precedes every block.
    pub fn find_block(&self, key: &[u8]) -> Option<usize> {
        let n = self.blocks.partition_point(|b| b.key.as_slice() <= key);
        n.checked_sub(1)
    }

    /// Reads every block, checks every checksum, every decoded length and every
    /// padding byte. Calls `check` on each decoded block for kind-specific checks.
    pub fn verify(
        &self,
        mut check: impl FnMut(usize, &BlockEntry, &[u8]) -> Result<()>,
    ) -> Result<()> {
        // Header padding.
        let header_used = self.header_len as usize;
        let mut head = vec![0u8; header_used];
        self.file.read_exact_at(&mut head, 0).at(&self.path)?;
        let params_end = HEADER_FIXED + le_u32(&head[24..28]) as usize + 4;
        if head[params_end..].iter().any(|&b| b != 0) {
            return Err(Error::corrupt(
                &self.path,
                "header padding",
                params_end as u64,
                "padding bytes are not zero",
            ));
        }
        let (mut scratch, mut out) = (Vec::new(), Vec::new());
        for i in 0..self.blocks.len() {
            self.read_block_into(i, &mut scratch, &mut out)?;
            let e = &self.blocks[i];
            let end = e.offset + (BLOCK_HEADER as u64) + e.stored;
            let pad = (pad8(end) - end) as usize;
            if pad > 0 {
                let mut p = [0u8; 8];
                self.file.read_exact_at(&mut p[..pad], end).at(&self.path)?;
                if p[..pad].iter().any(|&b| b != 0) {
                    return Err(
                        self.block_error(i, "padding bytes after the block are not zero".into())
                    );
                }
            }
            check(i, e, &out)?;
        }
        Ok(())
    }
}

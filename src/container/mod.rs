//! The container: the one file layout every webmill file uses.
//!
//! A container says what it is at both ends, checksums every byte, and can be
//! validated without knowing anything about the records inside. The record
//! encoding of each *kind* (edges, docs, sort runs, …) lives in that kind's module.
//!
//! # Layout (all integers little-endian)
//!
//! ```text
//! header  (at offset 0)
//!   0   8  magic            b"WEBMILL\0"
//!   8   8  kind             ASCII tag, NUL-padded (e.g. b"edges\0\0\0")
//!   16  4  kind version     u32, the record format version of this kind
//!   20  2  container ver.   u16, = 1
//!   22  2  reserved         = 0
//!   24  4  P                u32, length of the parameter block
//!   28  P  parameters       UTF-8 JSON object: the parameters the file was made with
//!   28+P 4 header crc32c    over bytes [0, 28+P)
//!   zero padding to a multiple of 8
//!
//! block   (at a multiple of 8; blocks follow each other without gaps)
//!   0   1  codec            0 = raw (mmap-able), 1 = zstd
//!   1   3  reserved         = 0
//!   4   4  crc32c           over block bytes [0,4) ++ [8, 24+S): everything but itself
//!   8   8  S                u64, stored (on-disk) length of the payload
//!   16  8  R                u64, raw (decoded) length of the payload
//!   24  S  payload
//!   zero padding to a multiple of 8
//!
//! footer  (at offset F, a multiple of 8, right after the last block)
//!   0   8  block count      u64
//!   8   8  record count     u64, sum over blocks
//!   16  8  raw bytes        u64, sum of R over blocks
//!   24  4  M                u32, length of the metadata block
//!   28  M  metadata         UTF-8 JSON object: totals known only at the end
//!   then per block:
//!        8 offset u64 · 8 stored length u64 · 8 raw length u64 · 8 records u64 ·
//!        4 block crc32c u32 (the same value as in the block header) ·
//!        2 key length K u16 · K first key (opaque bytes, kind-defined)
//!
//! tail    (the last 24 bytes of the file)
//!   0   8  F                u64, offset of the footer
//!   8   4  footer crc32c    over bytes [F, end-24) ++ the 8 bytes of F
//!   12  4  reserved         = 0
//!   16  8  trailing magic   b"WMILLEND"
//! ```
//!
//! # Invariants checked by readers
//!
//! * header magic, container version, kind and kind version, header crc;
//! * trailing magic, footer crc, and a block index that tiles the body exactly:
//!   the first block starts at the padded end of the header, each block ends
//!   (padded) where the next begins and the last ends at `F`;
//! * per block, on read: the index agrees with the block header (lengths and
//!   crc), the crc matches the bytes, and the decoded length equals `R`.
//!
//! Because the index repeats every block's crc and the footer crc covers the
//! index, the footer crc identifies the body; together with the header crc it
//! identifies the whole file ([`Container::checksum`], what job manifests
//! record).
//!
//! [`Container::verify`] additionally checks every padding byte is zero, so that
//! any single flipped byte anywhere in a file is detected.

mod kind;
mod mapped;
pub mod pagefile;
mod reader;
mod writer;

pub use kind::FileKind;
pub use mapped::MappedContainer;
pub use reader::{BlockEntry, Container};
pub use writer::{BlockCodec, ContainerWriter, EncodedBlock};

/// Magic at offset 0.
pub const MAGIC: &[u8; 8] = b"WEBMILL\0";
/// Magic in the last 8 bytes.
pub const TRAILING_MAGIC: &[u8; 8] = b"WMILLEND";
/// Version of the container layout described above.
pub const CONTAINER_VERSION: u16 = 1;
/// Length of the fixed header part before the parameter block.
pub const HEADER_FIXED: usize = 28;
/// Length of a block header.
pub const BLOCK_HEADER: usize = 24;
/// Length of the tail.
pub const TAIL: usize = 24;
/// Length of the fixed footer part before the metadata block.
pub const FOOTER_FIXED: usize = 28;

/// Rounds `n` up to a multiple of 8.
pub(crate) fn pad8(n: u64) -> u64 {
    (n + 7) & !7
}

/// Encodes a kind name as the 8-byte tag.
pub(crate) fn kind_tag(kind: &str) -> [u8; 8] {
    assert!(
        kind.len() <= 8 && kind.is_ascii(),
        "kind tags are at most 8 ASCII bytes"
    );
    let mut tag = [0u8; 8];
    tag[..kind.len()].copy_from_slice(kind.as_bytes());
    tag
}

/// Shows bytes as printable ASCII where possible, hex otherwise (for messages).
pub(crate) fn show_bytes(bytes: &[u8]) -> String {
    if bytes
        .iter()
        .all(|&b| b.is_ascii_graphic() || b == b' ' || b == 0)
    {
        format!(
            "{:?}",
            String::from_utf8_lossy(bytes).trim_end_matches('\0')
        )
    } else {
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("0x{}", hex.join(""))
    }
}

#[cfg(test)]
mod tests;

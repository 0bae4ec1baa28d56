//! A container whose raw blocks are mapped once and checked lazily.
//!
//! Random-access readers (the lexicon's table, the inverted barrels) touch a
//! few blocks of a large file per query. Checking every block when the file is
//! opened would read all of it; mapping each block on its own costs a system
//! call per block. [`MappedContainer`] maps the file once, up to its footer,
//! and checks a block's header and crc32c the first time the block is asked
//! for, so a corrupt block is still never used: the error names the file and
//! the block, as [`Container::verify`] does. Only raw blocks can be read this
//! way.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{Container, BLOCK_HEADER};
use crate::error::Result;
use crate::mmap::MappedBytes;

/// An open container with its blocks mapped, each checked on first use.
pub struct MappedContainer {
    c: Container,
    map: MappedBytes,
    checked: Vec<AtomicBool>,
}

impl MappedContainer {
    /// Maps an opened (structurally checked) container.
    pub fn new(c: Container) -> Result<MappedContainer> {
        let map = c.map_body()?;
        let checked = (0..c.blocks().len())
            .map(|_| AtomicBool::new(false))
            .collect();
        Ok(MappedContainer { c, map, checked })
    }

    /// The container (header, footer, block index).
    pub fn container(&self) -> &Container {
        &self.c
    }

    /// The payload of raw block `i`, checked against its crc the first time.
    #[inline]
    pub fn payload(&self, i: usize) -> Result<&[u8]> {
        let e = &self.c.blocks()[i];
        let start = e.offset as usize;
        let end = start + BLOCK_HEADER + e.stored as usize;
        let bytes = &self.map[start..end];
        if !self.checked[i].load(Ordering::Relaxed) {
            self.c.check_raw_block(i, bytes)?;
            self.checked[i].store(true, Ordering::Relaxed);
        }
        Ok(&bytes[BLOCK_HEADER..])
    }
}

//! The one door through which webmill maps files into memory.
//!
//! Mapping a file is `unsafe` in Rust because another process could change or
//! truncate the file while the mapping is alive, and the bytes seen through the
//! slice would change under the program's feet (or the access would fault).
//!
//! # Safety contract
//!
//! webmill only maps files it has *published*: written under a temporary name,
//! fsynced and renamed into place (see [`crate::publish`]). Published files are
//! never modified in place afterwards; a stage that recomputes a file writes a new
//! one and renames it over the old path, which leaves existing mappings of the old
//! inode intact. Users must not edit a job's files while webmill runs. Under that
//! contract the mapped bytes are immutable for the mapping's lifetime, which is
//! what makes handing out `&[u8]` sound.
//!
//! Mapped pages count towards a process's resident set, so webmill maps only what
//! it random-accesses (raw arrays such as rank vectors and offsets) and streams
//! everything else with positioned reads.

use std::fs::File;
use std::ops::Deref;
use std::path::Path;

use crate::error::{IoContext, Result};

/// A read-only memory mapping of a byte range of a published file.
pub struct MappedBytes {
    map: memmap2::Mmap,
    skip: usize,
}

impl MappedBytes {
    /// Maps `len` bytes of `file` starting at `offset`.
    pub fn map(file: &File, path: &Path, offset: u64, len: usize) -> Result<MappedBytes> {
        // SAFETY: see the module's safety contract: the file is a published,
        // immutable webmill file, so its bytes do not change while mapped.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(offset)
                .len(len)
                .map(file)
                .at(path)?
        };
        Ok(MappedBytes { map, skip: 0 })
    }

    /// Hides the first `n` bytes of the mapping (e.g. a block header once checked).
    pub fn skip_prefix(mut self, n: usize) -> MappedBytes {
        self.skip = (self.skip + n).min(self.map.len());
        self
    }
}

impl Deref for MappedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map[self.skip..]
    }
}

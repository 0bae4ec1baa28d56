//! Opening an input file that may be gzip- or zstd-compressed, with a byte
//! counter.
//!
//! The compression is detected from the first bytes (gzip `1f 8b`, zstd
//! `28 b5 2f fd`), never from the name; concatenated gzip members (and zstd
//! frames) are read through. The counter receives
//! the bytes read from the file itself (compressed bytes for gzip), so a
//! progress thread can show how far into the file a reader is.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{IoContext, Result};

/// Counts bytes read through it into a shared counter (for progress).
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Opens a plain, gzip or zstd file for line reading; `counter` receives
/// bytes read from the file itself.
pub fn open_maybe_gzip(path: &Path, counter: Arc<AtomicU64>) -> Result<Box<dyn BufRead + Send>> {
    let mut file = File::open(path).at(path)?;
    let mut magic = [0u8; 4];
    let n = file.read(&mut magic).at(path)?;
    use std::io::Seek;
    file.rewind().at(path)?;
    let counting = Counting {
        inner: file,
        count: counter,
    };
    if n >= 2 && magic[..2] == [0x1f, 0x8b] {
        let gz = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, counting));
        Ok(Box::new(BufReader::with_capacity(1 << 16, gz)))
    } else if n == 4 && magic == [0x28, 0xb5, 0x2f, 0xfd] {
        let zst =
            zstd::stream::read::Decoder::with_buffer(BufReader::with_capacity(1 << 16, counting))
                .at(path)?;
        Ok(Box::new(BufReader::with_capacity(1 << 16, zst)))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 16, counting)))
    }
}

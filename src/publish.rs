//! Atomic publication of files.
//!
//! A file is written under a temporary name next to its final path
//! (`.NAME.partial`), fsynced, renamed into place and the directory fsynced. A
//! crash or a full disk therefore never leaves a half-written file under the final
//! name: either the old file (or nothing) is there, or the complete new one. A
//! writer dropped without [`PartialFile::publish`] removes its temporary file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};

/// Suffix of files being written.
pub const PARTIAL_SUFFIX: &str = ".partial";

/// A file being written under a temporary name.
pub struct PartialFile {
    final_path: PathBuf,
    temp_path: PathBuf,
    writer: Option<BufWriter<File>>,
    written: u64,
    durable: bool,
}

/// The temporary name used while `path` is written.
pub fn partial_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}{PARTIAL_SUFFIX}"))
}

impl PartialFile {
    /// Creates the temporary file for `path` (replacing a stale one).
    pub fn create(path: impl AsRef<Path>) -> Result<PartialFile> {
        PartialFile::create_buffered(path, 1 << 20)
    }

    /// [`PartialFile::create`] with a write buffer of `capacity` bytes (for
    /// writers that keep many files open at once and write whole blocks).
    pub fn create_buffered(path: impl AsRef<Path>, capacity: usize) -> Result<PartialFile> {
        let final_path = path.as_ref().to_path_buf();
        let temp_path = partial_path(&final_path);
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp_path)
            .at(&temp_path)?;
        Ok(PartialFile {
            final_path,
            temp_path,
            writer: Some(BufWriter::with_capacity(capacity, file)),
            written: 0,
            durable: true,
        })
    }

    /// Skips the fsyncs at publication. For temporary files whose loss in a
    /// power failure is detected (by checksums) and repaired (by redoing them):
    /// the rename still makes them appear whole or not at all to other processes
    /// and after a process crash.
    pub fn set_durable(&mut self, durable: bool) {
        self.durable = durable;
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.written
    }

    /// The path the file will have once published.
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Appends bytes.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let w = self.writer.as_mut().expect("write after publish");
        w.write_all(bytes).at(&self.temp_path)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Flushes, fsyncs and renames the file into place, then fsyncs the directory.
    pub fn publish(mut self) -> Result<PathBuf> {
        let writer = self.writer.take().expect("publish twice");
        let file = writer
            .into_inner()
            .map_err(|e| Error::io(&self.temp_path, e.into_error()))?;
        if self.durable {
            file.sync_all().at(&self.temp_path)?;
        }
        drop(file);
        failpoint("publish.before_rename")?;
        fs::rename(&self.temp_path, &self.final_path).at(&self.final_path)?;
        if self.durable {
            sync_dir(&self.final_path)?;
        }
        Ok(self.final_path.clone())
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = fs::remove_file(&self.temp_path);
        }
    }
}

/// Fsyncs the directory holding `path`, so that a rename in it is durable.
pub fn sync_dir(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match File::open(dir).and_then(|d| d.sync_all()) {
        Ok(()) => Ok(()),
        // Some filesystems do not support fsync on directories; the rename still happened.
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(()),
        Err(e) => Err(Error::io(dir, e)),
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    let mut f = PartialFile::create(path)?;
    f.write_all(bytes)?;
    f.publish()?;
    Ok(())
}

/// Crash-test hook: when the environment variable `WEBMILL_FAILPOINT` names
/// `point` (optionally `point:N` to fire on the N-th hit, counting from 1), the
/// process aborts there as if killed; `*:N` aborts at the N-th failpoint hit
/// of any name (so a test can spread aborts over a whole job). When
/// `WEBMILL_FAILPOINT_LOG` names a file, every hit appends its point's name
/// to it, one a line (so a test can count and place the hits of a run).
/// Costs one environment lookup when neither is set.
pub fn failpoint(point: &str) -> Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Mutex, OnceLock};
    static SPEC: OnceLock<Option<(String, u64)>> = OnceLock::new();
    static LOG: OnceLock<Option<Mutex<File>>> = OnceLock::new();
    static HITS: AtomicU64 = AtomicU64::new(0);
    let spec = SPEC.get_or_init(|| {
        let v = std::env::var("WEBMILL_FAILPOINT").ok()?;
        match v.rsplit_once(':') {
            Some((name, n)) if n.parse::<u64>().is_ok() => {
                Some((name.to_string(), n.parse().unwrap_or(1)))
            }
            _ => Some((v, 1)),
        }
    });
    let log = LOG.get_or_init(|| {
        let path = std::env::var_os("WEBMILL_FAILPOINT_LOG")?;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    });
    if let Some(f) = log {
        let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(f, "{point}");
    }
    if let Some((name, nth)) = spec {
        if (name == point || name == "*") && HITS.fetch_add(1, Ordering::SeqCst) + 1 == *nth {
            eprintln!("webmill: failpoint {point} hit, aborting");
            std::process::abort();
        }
    }
    Ok(())
}

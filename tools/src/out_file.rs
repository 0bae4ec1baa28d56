//! Files a command writes for the user (`export -o FILE`, `--plot FILE`),
//! written whole or not at all: the bytes go to a temporary file beside
//! FILE (`.FILE.partial`, the library's naming), which is fsynced and
//! renamed to FILE only when the command succeeded. On failure, or when
//! the process is interrupted, nothing named FILE appears and a previous
//! FILE stays as it was.

use std::fs::File;
use std::path::{Path, PathBuf};

use webmill::error::IoContext;
use webmill::publish::{partial_path, sync_dir};

/// A file being written under its temporary name; removed when dropped
/// without [`OutFile::commit`].
pub struct OutFile {
    path: PathBuf,
    temp: PathBuf,
    committed: bool,
}

impl OutFile {
    /// Creates the temporary file for `path` and returns it with a handle to
    /// write into.
    pub fn create(path: &Path) -> webmill::Result<(OutFile, File)> {
        if path.is_dir() {
            return Err(webmill::Error::usage_at(
                path,
                "is a directory; give the file to write",
            ));
        }
        let temp = partial_path(path);
        let file = File::create(&temp).map_err(|e| {
            // Name the file the user gave, not our temporary one.
            webmill::Error::io(path, e)
        })?;
        Ok((
            OutFile {
                path: path.to_path_buf(),
                temp,
                committed: false,
            },
            file,
        ))
    }

    /// Makes the file durable and gives it its name (every handle to it must
    /// be flushed and closed); returns its size in bytes.
    pub fn commit(mut self) -> webmill::Result<u64> {
        let f = File::open(&self.temp).at(&self.path)?;
        f.sync_all().at(&self.path)?;
        let bytes = f.metadata().at(&self.path)?.len();
        drop(f);
        std::fs::rename(&self.temp, &self.path).at(&self.path)?;
        self.committed = true;
        sync_dir(&self.path)?;
        Ok(bytes)
    }

    /// Writes `bytes` as the whole file.
    pub fn write(path: &Path, bytes: &[u8]) -> webmill::Result<u64> {
        use std::io::Write;
        let (out, mut f) = OutFile::create(path)?;
        f.write_all(bytes).at(path)?;
        drop(f);
        out.commit()
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Tells the user (unless `quiet`) that `path` was written, with its size.
pub fn say_written(path: &Path, bytes: u64, what: &str, quiet: bool) {
    if !quiet {
        eprintln!(
            "wrote {} ({what}, {})",
            path.display(),
            webmill::resources::format_bytes(bytes)
        );
    }
}

//! Typed errors of the engine.
//!
//! Every variant that concerns a file carries its path, and where it matters the
//! byte offset or block, what was expected and what was found, so that a message
//! printed to a user tells them which file is at fault and what to do about it.

use std::io;
use std::path::{Path, PathBuf};

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in webmill's library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operating-system error while touching `path`.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The file does not start (or end) with webmill's magic bytes.
    #[error("{}: not a webmill file: expected magic {expected} at offset {offset}, found {found}", path.display())]
    BadMagic {
        path: PathBuf,
        offset: u64,
        expected: String,
        found: String,
    },

    /// The file is a webmill file, but of another kind than the caller wanted.
    #[error("{}: wrong file kind: expected {expected:?}, found {found:?}", path.display())]
    WrongKind {
        path: PathBuf,
        expected: String,
        found: String,
    },

    /// The file's format version is not one this build can read.
    #[error("{}: unsupported {what} version {found} (this build reads version {expected}); re-create the file with this version of webmill", path.display())]
    Version {
        path: PathBuf,
        what: String,
        expected: u32,
        found: u32,
    },

    /// The file is shorter than its own structure says: it was cut, or never finished.
    #[error("{}: truncated: {detail}", path.display())]
    Truncated { path: PathBuf, detail: String },

    /// A stored checksum does not match the bytes.
    #[error("{}: checksum mismatch in {region} at offset {offset}: stored crc32c {expected:08x}, computed {found:08x} (the file is corrupt; re-create it)", path.display())]
    Checksum {
        path: PathBuf,
        region: String,
        offset: u64,
        expected: u32,
        found: u32,
    },

    /// The bytes are structurally wrong (bad length, bad encoding, broken invariant).
    #[error("{}: corrupt {region} at offset {offset}: {detail}", path.display())]
    Corrupt {
        path: PathBuf,
        region: String,
        offset: u64,
        detail: String,
    },

    /// A line or record of an input file that webmill cannot use.
    #[error("{}: {location}: {detail}", path.display())]
    Input {
        path: PathBuf,
        location: String,
        detail: String,
    },

    /// A job directory that cannot be used as asked (changed parameters, missing stage, lock).
    #[error("job {}: {detail}", path.display())]
    Job { path: PathBuf, detail: String },

    /// An invalid parameter or argument.
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// Wraps an `io::Error` with the path it concerns.
    pub fn io(path: impl AsRef<Path>, source: io::Error) -> Error {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    /// A structural error in `region` of `path` at `offset`.
    pub fn corrupt(
        path: impl AsRef<Path>,
        region: impl Into<String>,
        offset: u64,
        detail: impl Into<String>,
    ) -> Error {
        Error::Corrupt {
            path: path.as_ref().to_path_buf(),
            region: region.into(),
            offset,
            detail: detail.into(),
        }
    }

    /// An error in a job directory.
    pub fn job(path: impl AsRef<Path>, detail: impl Into<String>) -> Error {
        Error::Job {
            path: path.as_ref().to_path_buf(),
            detail: detail.into(),
        }
    }

    /// The path this error names, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::Io { path, .. }
            | Error::BadMagic { path, .. }
            | Error::WrongKind { path, .. }
            | Error::Version { path, .. }
            | Error::Truncated { path, .. }
            | Error::Checksum { path, .. }
            | Error::Corrupt { path, .. }
            | Error::Input { path, .. }
            | Error::Job { path, .. } => Some(path),
            Error::Invalid(_) => None,
        }
    }
}

/// Extension to attach a path to `io::Result`s.
pub trait IoContext<T> {
    /// Maps the error into [`Error::Io`] naming `path`.
    fn at(self, path: impl AsRef<Path>) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}

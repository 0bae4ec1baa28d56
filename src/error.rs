//! Typed errors of the engine.
//!
//! Every variant that concerns a file carries its path as data, and where it
//! matters the byte offset or block, what was expected and what was found, so
//! that a message printed to a user tells them which file is at fault and what
//! to do about it. Variants fall into a few [classes](ErrorClass) — what the
//! user asked, the state of a job, damaged data, the memory budget, the
//! operating system, webmill's own bugs — each with its own process exit code.

use std::io;
use std::path::{Path, PathBuf};

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in webmill's library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operating-system error while touching `path`.
    #[error("{}: {}", path.display(), describe_io(source))]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },

    /// The file does not start (or end) with webmill's magic bytes.
    #[error("{}: not a webmill file: expected magic {expected} at offset {offset}, found {found}", path.display())]
    BadMagic {
        /// The file.
        path: PathBuf,
        /// Where the magic was sought.
        offset: u64,
        /// The magic bytes expected.
        expected: String,
        /// The bytes found.
        found: String,
    },

    /// The file is a webmill file, but of another kind than the caller wanted,
    /// or of a kind this build does not know.
    #[error("{}: wrong file kind: expected {expected}, found {found:?}", path.display())]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// The kind (or kinds) wanted.
        expected: String,
        /// The kind tag found.
        found: String,
    },

    /// The file's format version is not one this build can read.
    #[error("{}: unsupported {what} version {found} (this build reads version {expected}); re-create the file with this version of webmill", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// What has the version (a kind, the manifest).
        what: String,
        /// The version this build reads.
        expected: u32,
        /// The version found.
        found: u32,
    },

    /// The file is shorter than its own structure says: it was cut, or never finished.
    #[error("{}: truncated: {detail}", path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// What is missing.
        detail: String,
    },

    /// A stored checksum does not match the bytes.
    #[error("{}: checksum mismatch in {region} at offset {offset}: stored crc32c {expected:08x}, computed {found:08x} (the file is corrupt; re-create it)", path.display())]
    Checksum {
        /// The file.
        path: PathBuf,
        /// The part of the file ("block 3", "footer").
        region: String,
        /// Byte offset of the region.
        offset: u64,
        /// The stored checksum.
        expected: u32,
        /// The checksum of the bytes.
        found: u32,
    },

    /// The bytes are structurally wrong (bad length, bad encoding, broken invariant).
    #[error("{}: corrupt {region} at offset {offset}: {detail}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The part of the file ("block 3", "header parameters").
        region: String,
        /// Byte offset of the region.
        offset: u64,
        /// What is wrong.
        detail: String,
    },

    /// A record payload that does not decode. Raised by payload decoders, which
    /// do not know where the bytes came from; the file reader that called them
    /// turns it into [`Error::Corrupt`] with the path, block and offset.
    #[error("malformed record: {0}")]
    Record(String),

    /// Damage found at the level of a whole file or input, where no one
    /// offset is at fault: a file that differs from what the job's manifest
    /// records, files that failed verification, bad input `--strict` fails
    /// on once the input was read.
    #[error("{}{detail}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Damaged {
        /// The file or directory at fault, if one is.
        path: Option<PathBuf>,
        /// What is wrong and what to do.
        detail: String,
    },

    /// A line or record of an input file that webmill cannot use (an error
    /// only under `--strict`; otherwise such input is skipped and reported).
    #[error("{}: {location}: {detail}", path.display())]
    Input {
        /// The input file.
        path: PathBuf,
        /// Where in it ("line 12", "offset 4096").
        location: String,
        /// What is wrong.
        detail: String,
    },

    /// A job directory that cannot be used as asked (changed parameters,
    /// missing stage, lock held by another process).
    #[error("job {}: {detail}", path.display())]
    Job {
        /// The job directory.
        path: PathBuf,
        /// What is wrong and what to do.
        detail: String,
    },

    /// What the user asked for is not valid: a bad argument, an input that
    /// cannot be used, a parameter out of range.
    #[error("{}{detail}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Usage {
        /// The file or directory the argument named, if any.
        path: Option<PathBuf>,
        /// What is wrong and what to do.
        detail: String,
    },

    /// The memory budget is too small for what must be held at once.
    #[error("{what} needs {} but the memory budget (--mem) allows {}; raise --mem to at least {}", crate::units::format_bytes(*need), crate::units::format_bytes(*have), crate::units::format_bytes(*need))]
    Budget {
        /// What needs the memory.
        what: String,
        /// Bytes needed.
        need: u64,
        /// Bytes the budget allows for it.
        have: u64,
    },

    /// A broken internal contract: a bug in webmill, not in the input.
    #[error("internal error (a bug in webmill; please report it): {0}")]
    Internal(String),
}

/// An OS error's message without the `(os error N)` suffix repeated by
/// callers that also print the source chain.
fn describe_io(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

/// The classes of errors, each with its own process exit code (documented in
/// `webmill --help`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// A bad argument or parameter: exit code 2 (as for command-line parse errors).
    Usage,
    /// The job cannot be used as asked (changed parameters, missing stage, lock): 3.
    Job,
    /// A damaged webmill file, or bad input under `--strict`: 4.
    Data,
    /// The memory budget is too small: 5.
    Budget,
    /// An operating-system error (missing file, permission, full disk): 6.
    Io,
    /// A bug in webmill: 70.
    Internal,
}

impl ErrorClass {
    /// The process exit code of this class.
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorClass::Usage => 2,
            ErrorClass::Job => 3,
            ErrorClass::Data => 4,
            ErrorClass::Budget => 5,
            ErrorClass::Io => 6,
            ErrorClass::Internal => 70,
        }
    }

    /// Every class, in exit-code order.
    pub const ALL: [ErrorClass; 6] = [
        ErrorClass::Usage,
        ErrorClass::Job,
        ErrorClass::Data,
        ErrorClass::Budget,
        ErrorClass::Io,
        ErrorClass::Internal,
    ];

    /// What the class means, for `--help`.
    pub fn describe(self) -> &'static str {
        match self {
            ErrorClass::Usage => "a bad argument or parameter",
            ErrorClass::Job => {
                "the job cannot be used as asked (parameters changed, a stage missing, locked)"
            }
            ErrorClass::Data => "a damaged webmill file, or bad input under --strict",
            ErrorClass::Budget => "the memory budget (--mem) is too small",
            ErrorClass::Io => "an operating-system error (missing file, permission, disk full)",
            ErrorClass::Internal => "a bug in webmill",
        }
    }
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

    /// A bad argument or parameter.
    pub fn usage(detail: impl Into<String>) -> Error {
        Error::Usage {
            path: None,
            detail: detail.into(),
        }
    }

    /// Damage to `path` as a whole (see [`Error::Damaged`]).
    pub fn damaged(path: Option<&Path>, detail: impl Into<String>) -> Error {
        Error::Damaged {
            path: path.map(Path::to_path_buf),
            detail: detail.into(),
        }
    }

    /// A bad argument naming a file or directory.
    pub fn usage_at(path: impl AsRef<Path>, detail: impl Into<String>) -> Error {
        Error::Usage {
            path: Some(path.as_ref().to_path_buf()),
            detail: detail.into(),
        }
    }

    /// A malformed record payload (see [`Error::Record`]).
    pub fn record(detail: impl Into<String>) -> Error {
        Error::Record(detail.into())
    }

    /// A broken internal contract.
    pub fn internal(detail: impl Into<String>) -> Error {
        Error::Internal(detail.into())
    }

    /// A budget refusal: `what` needs `need` bytes, the budget allows `have`.
    pub fn budget(what: impl Into<String>, need: u64, have: u64) -> Error {
        Error::Budget {
            what: what.into(),
            need,
            have,
        }
    }

    /// The class of this error.
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Io { .. } => ErrorClass::Io,
            Error::BadMagic { .. }
            | Error::WrongKind { .. }
            | Error::Version { .. }
            | Error::Truncated { .. }
            | Error::Checksum { .. }
            | Error::Corrupt { .. }
            | Error::Record(_)
            | Error::Damaged { .. }
            | Error::Input { .. } => ErrorClass::Data,
            Error::Job { .. } => ErrorClass::Job,
            Error::Usage { .. } => ErrorClass::Usage,
            Error::Budget { .. } => ErrorClass::Budget,
            Error::Internal(_) => ErrorClass::Internal,
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
            Error::Usage { path, .. } | Error::Damaged { path, .. } => path.as_deref(),
            Error::Record(_) | Error::Budget { .. } | Error::Internal(_) => None,
        }
    }

    /// Attaches a location to a [`Error::Record`] error: it becomes
    /// [`Error::Corrupt`] naming `path`, `region` and `offset`, its detail
    /// prefixed by `what` (e.g. "record 12 (page 40)"). Other errors pass
    /// through unchanged.
    pub fn in_file(
        self,
        path: impl AsRef<Path>,
        region: impl Into<String>,
        offset: u64,
        what: impl std::fmt::Display,
    ) -> Error {
        match self {
            Error::Record(d) => Error::corrupt(path, region, offset, format!("{what}: {d}")),
            e => e,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_errors_are_printed_once() {
        let e = Error::io(
            "/nowhere/x",
            io::Error::from_raw_os_error(2), // ENOENT
        );
        let s = e.to_string();
        assert_eq!(s, "/nowhere/x: No such file or directory");
        assert_eq!(e.class().exit_code(), 6);
    }

    #[test]
    fn classes_have_distinct_exit_codes() {
        let mut codes: Vec<u8> = ErrorClass::ALL.iter().map(|c| c.exit_code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ErrorClass::ALL.len());
    }

    #[test]
    fn record_errors_get_their_location() {
        let e = Error::record("bad title").in_file("f.wm", "block 3", 4096, "record 7");
        assert_eq!(
            e.to_string(),
            "f.wm: corrupt block 3 at offset 4096: record 7: bad title"
        );
        assert_eq!(e.class(), ErrorClass::Data);
    }

    #[test]
    fn budget_says_what_to_do() {
        let e = Error::budget("union-find over 10 docs", 3 << 20, 1 << 20);
        assert!(
            e.to_string().contains("raise --mem to at least 3.0 MiB"),
            "{e}"
        );
    }
}

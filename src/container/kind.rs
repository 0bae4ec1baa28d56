//! File kinds as values: each kind's tag, format version, description,
//! verifier and record dump, declared once in the module that defines the kind.
//!
//! The container ([`super`]) knows nothing of records; a [`FileKind`] says
//! what a container of its tag holds and how to check and show it. The
//! registry of every kind this build knows is [`crate::kinds::KINDS`]; the
//! `verify`, `dump` and `inspect` tools dispatch on it, and a file whose tag or
//! version is not in it is refused with a message that says so.

use std::io::Write;
use std::path::Path;

use super::Container;
use crate::error::Result;

/// A file kind: what a container with this tag and version holds.
#[derive(Clone, Copy)]
pub struct FileKind {
    /// The tag in the container header (≤ 8 ASCII bytes).
    pub tag: &'static str,
    /// The format version of this kind that this build reads and writes.
    pub version: u32,
    /// One line saying what the file holds, for `inspect`.
    pub what: &'static str,
    /// Checks the file completely: the container (every checksum, padding)
    /// and the kind's own record invariants.
    pub verify: fn(&Path) -> Result<()>,
    /// Writes the file's records as TSV with a `#` header line.
    pub dump: fn(&Path, &mut dyn Write) -> Result<()>,
}

impl FileKind {
    /// Opens `path` as a container of this kind and version; any other kind
    /// or version is refused with an error naming both.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Container> {
        Container::open_kind(path, self.tag, self.version)
    }
}

impl std::fmt::Debug for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} v{}", self.tag, self.version)
    }
}

impl PartialEq for FileKind {
    fn eq(&self, other: &FileKind) -> bool {
        self.tag == other.tag && self.version == other.version
    }
}

impl Eq for FileKind {}

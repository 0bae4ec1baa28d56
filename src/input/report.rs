//! The skip report: every input record or file a stage did not keep, and
//! every cut it made to one it kept, with file, place, kind and reason — the
//! whole list, not the first few (kind `skips`, `formats/skips.md`).
//!
//! A stage's figures count skips by [`SkipKind`] and keep the first few for
//! its summary; the report is where the rest go, so that nothing is dropped
//! silently however much is dropped. It is a page file
//! ([`crate::container::pagefile`]): records in key order in zstd blocks, the
//! key being **the number of records the stage had kept before** the skipped
//! one (for `ingest` the page number the next page gets, so a skip sits
//! between the pages it came between; for a cut, the page number of the page
//! kept). Segments written in parallel are joined by block copy like the
//! other page files. Payload:
//!
//! ```text
//! skip := str  kind       its SkipKind name (`damaged`, `url-too-long`, …)
//!         bytes file      the input file's path, raw (not necessarily UTF-8)
//!         str  location   where in it (`offset 4096`, `line 12`, or empty for a file)
//!         str  detail     what was wrong, for a person
//! ```
//!
//! (`str` and `bytes` are a varint length and that many bytes; `str` is UTF-8.)
//! `webmill export skips JOB` prints every stage's report as TSV.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::skip::{Skip, SkipKind};
use crate::container::pagefile::{get_bytes, get_str, PageFile, PageFileWriter};
use crate::container::FileKind;
use crate::error::{Error, IoContext, Result};
use crate::tsv::escape;
use crate::varint;

/// Raw bytes of a skip report's block.
const BLOCK_BYTES: usize = 64 << 10;

/// The skip report kind.
pub const SKIPS: FileKind = FileKind {
    tag: "skips",
    version: 1,
    what: "skip report: every input record or file not kept, and every cut, with file, place and reason",
    verify: |path| {
        let f = PageFile::open(path, &SKIPS)?;
        f.container().verify(|_, _, _| Ok(()))?;
        f.for_each(|_, input| SkipEntry::decode(input).map(|_| ()))
    },
    dump: |path, out| {
        writeln!(out, "# {HEADER}").at("stdout")?;
        for_each_skip(path, |key, s| {
            writeln!(out, "{}", s.tsv(key)).at("stdout")
        })
    },
};

/// The columns of a dumped skip report.
pub const HEADER: &str = "key\taction\tkind\tfile\tlocation\tdetail";

/// One entry of a skip report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkipEntry {
    /// Why.
    pub kind: SkipKind,
    /// The input file.
    pub file: PathBuf,
    /// Where in it.
    pub location: String,
    /// What was wrong.
    pub detail: String,
}

impl From<Skip> for SkipEntry {
    fn from(s: Skip) -> SkipEntry {
        SkipEntry {
            kind: s.kind,
            file: s.path,
            location: s.location,
            detail: s.reason,
        }
    }
}

impl std::fmt::Display for SkipEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if !self.location.is_empty() {
            write!(f, ": {}", self.location)?;
        }
        write!(f, ": {}", self.detail)
    }
}

impl SkipEntry {
    /// A new entry.
    pub fn new(
        kind: SkipKind,
        file: impl Into<PathBuf>,
        location: impl Into<String>,
        detail: impl Into<String>,
    ) -> SkipEntry {
        SkipEntry {
            kind,
            file: file.into(),
            location: location.into(),
            detail: detail.into(),
        }
    }

    /// Appends the payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        varint::put_bytes(out, self.kind.name().as_bytes());
        varint::put_bytes(out, self.file.as_os_str().as_encoded_bytes());
        varint::put_bytes(out, self.location.as_bytes());
        varint::put_bytes(out, self.detail.as_bytes());
    }

    /// Decodes a payload.
    pub fn decode(input: &mut &[u8]) -> Result<SkipEntry> {
        let name = get_str(input, "skip kind")?;
        let kind = SkipKind::parse(name)
            .ok_or_else(|| Error::record(format!("unknown skip kind {name:?}")))?;
        let file = path_of_bytes(get_bytes(input, "file")?);
        Ok(SkipEntry {
            kind,
            file,
            location: get_str(input, "location")?.to_string(),
            detail: get_str(input, "detail")?.to_string(),
        })
    }

    /// The entry as a TSV line (without the newline) under [`HEADER`].
    pub fn tsv(&self, key: u64) -> String {
        format!(
            "{key}\t{}\t{}\t{}\t{}\t{}",
            if self.kind.is_cut() { "cut" } else { "skipped" },
            self.kind,
            escape(&self.file.to_string_lossy()),
            escape(&self.location),
            escape(&self.detail)
        )
    }
}

#[cfg(unix)]
fn path_of_bytes(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(OsStr::from_bytes(b))
}

#[cfg(not(unix))]
fn path_of_bytes(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

/// Writes a skip report (or a segment of one).
pub struct SkipWriter {
    w: PageFileWriter,
    payload: Vec<u8>,
    records: u64,
}

impl SkipWriter {
    /// Starts a report at `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<SkipWriter> {
        Ok(SkipWriter {
            w: PageFileWriter::create(path, &SKIPS, BLOCK_BYTES, 3)?,
            payload: Vec::new(),
            records: 0,
        })
    }

    /// Temporary files skip the fsyncs.
    pub fn set_durable(&mut self, durable: bool) {
        self.w.set_durable(durable);
    }

    /// Appends `entry` with key `key` (keys must not decrease).
    pub fn push(&mut self, key: u64, entry: &SkipEntry) -> Result<()> {
        self.payload.clear();
        entry.encode(&mut self.payload);
        self.records += 1;
        self.w.push(key, &self.payload)
    }

    /// Entries written.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Publishes the report.
    pub fn finish(self) -> Result<u64> {
        let records = self.records;
        self.w.finish(&json!({ "skips": records }))
    }
}

/// Calls `f(key, entry)` for every entry of the report at `path`, in order.
pub fn for_each_skip(path: &Path, mut f: impl FnMut(u64, &SkipEntry) -> Result<()>) -> Result<()> {
    let file = PageFile::open(path, &SKIPS)?;
    file.for_each(|key, input| f(key, &SkipEntry::decode(input)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry() -> impl Strategy<Value = SkipEntry> {
        (
            0..SkipKind::ALL.len(),
            proptest::collection::vec(1u8..=255, 0..20),
            ".{0,20}",
            ".{0,40}",
        )
            .prop_map(|(k, file, location, detail)| SkipEntry {
                kind: SkipKind::ALL[k],
                file: path_of_bytes(&file),
                location,
                detail,
            })
    }

    proptest! {
        #[test]
        fn entries_round_trip(entries in proptest::collection::vec((0u64..4, entry()), 0..40)) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("skips.wm");
            let mut w = SkipWriter::create(&path).unwrap();
            let mut key = 0;
            let mut want = Vec::new();
            for (step, e) in entries {
                key += step;
                w.push(key, &e).unwrap();
                want.push((key, e));
            }
            w.finish().unwrap();
            (SKIPS.verify)(&path).unwrap();
            let mut got = Vec::new();
            for_each_skip(&path, |k, e| {
                got.push((k, e.clone()));
                Ok(())
            })
            .unwrap();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn kinds_have_distinct_names() {
        for k in SkipKind::ALL {
            assert_eq!(SkipKind::parse(k.name()), Some(k));
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
        }
    }
}

//! The registry of file kinds: every kind this build reads, with its version,
//! verifier and record dump (each declared in its own module as a
//! [`FileKind`]). The `inspect`, `verify` and `dump` tools are built on it; a
//! file of a kind or version it does not know is refused, naming both.

use std::io::Write;
use std::path::Path;

use crate::container::{Container, FileKind};
use crate::error::{Error, IoContext, Result};
use crate::job::JobFile;
use crate::sort::run;
use crate::tsv::escape;

/// Every file kind this build knows.
pub const KINDS: &[&FileKind] = &[
    &crate::ingest::records::PAGES,
    &crate::ingest::records::TEXT,
    &crate::ingest::records::REPO,
    &crate::ingest::records::LINKS,
    &crate::input::SKIPS,
    &crate::docs::DOCS,
    &crate::ingest::urltable::URLS,
    &crate::ingest::records::PAGEDOC,
    &crate::graph::edges::EDGES,
    &crate::ingest::records::ANCHORS,
    &crate::rank::vector::RANKS,
    &crate::rank::blocked::RANKPART,
    &crate::dedup::files::SKETCHES,
    &crate::dedup::files::PAIRS,
    &crate::dedup::files::CLUSTERS,
    &crate::index::lexicon::LEXICON,
    &crate::index::fieldlens::FIELDLENS,
    &crate::index::titles::TITLES,
    &crate::index::inverted::BARREL,
    &crate::index::forward::FORWARD,
    &crate::index::sorter::LEXPART,
    &crate::index::shards::SHARDS,
    &crate::analysis::checkpoint::NODESETS,
    &SORTRUN,
];

/// The kind of a job file; `None` for plots (SVG) and the files of custom
/// stages (opened by their own code). The job layer knows
/// files by name only; the kinds are the stages', so they are resolved here,
/// above them all.
pub fn of(file: JobFile) -> Option<&'static FileKind> {
    use crate::ingest::records;
    Some(match file {
        JobFile::Pages => &records::PAGES,
        JobFile::Text => &records::TEXT,
        JobFile::Repository => &records::REPO,
        JobFile::Links => &records::LINKS,
        JobFile::Docs => &crate::docs::DOCS,
        JobFile::Urls => &crate::ingest::urltable::URLS,
        JobFile::PageDoc => &records::PAGEDOC,
        JobFile::Edges | JobFile::EdgesT => &crate::graph::edges::EDGES,
        JobFile::Anchors => &records::ANCHORS,
        JobFile::Ranks => &crate::rank::vector::RANKS,
        JobFile::Sketches(_) => &crate::dedup::files::SKETCHES,
        JobFile::Lexicon => &crate::index::lexicon::LEXICON,
        JobFile::FieldLengths => &crate::index::fieldlens::FIELDLENS,
        JobFile::AnchorTitles => &crate::index::titles::TITLES,
        JobFile::FullBarrel(_) => &crate::index::inverted::BARREL,
        JobFile::Pairs(_) => &crate::dedup::files::PAIRS,
        JobFile::Skips(_) => &crate::input::SKIPS,
        JobFile::Clusters(_) => &crate::dedup::files::CLUSTERS,
        JobFile::RankPlot | JobFile::DedupPlot(_) | JobFile::Custom { .. } => return None,
    })
}

/// The kind of a tag, if this build knows it.
pub fn kind(tag: &str) -> Option<&'static FileKind> {
    KINDS.iter().copied().find(|k| k.tag == tag)
}

/// Opens `path` as a container of a kind this build knows, at the version it
/// reads; anything else is refused with a message naming what was found.
pub fn open_known(path: &Path) -> Result<(Container, &'static FileKind)> {
    let c = Container::open(path)?;
    let Some(k) = kind(c.kind()) else {
        let known: Vec<&str> = KINDS.iter().map(|k| k.tag).collect();
        return Err(Error::WrongKind {
            path: path.to_path_buf(),
            expected: format!("one of the kinds this build knows ({})", known.join(", ")),
            found: c.kind().to_string(),
        });
    };
    if c.version() != k.version {
        return Err(Error::Version {
            path: path.to_path_buf(),
            what: format!("{} format", k.tag),
            expected: k.version,
            found: c.version(),
        });
    }
    Ok((c, k))
}

/// Verifies `path` completely: container structure, every checksum, padding,
/// and the kind's own record invariants.
pub fn verify_file(path: &Path) -> Result<Container> {
    let (c, k) = open_known(path)?;
    (k.verify)(path)?;
    Ok(c)
}

/// Writes `path`'s records as TSV to `out`, with a `#` header line.
pub fn dump_file(path: &Path, out: &mut dyn Write) -> Result<()> {
    let (_, k) = open_known(path)?;
    (k.dump)(path, out)
}

/// The runs of the external sort (temporary files in a stage's directory).
pub const SORTRUN: FileKind = FileKind {
    tag: run::KIND,
    version: run::VERSION,
    what: "external sort run: records in sorted order (temporary)",
    verify: |path| {
        let c = Container::open_kind(path, run::KIND, run::VERSION)?;
        let fields = run_fields(&c)?;
        c.verify(|i, e, raw| decode_run_block(&c, i, e.records, raw, &fields, None))
    },
    dump: |path, out| {
        let c = Container::open_kind(path, run::KIND, run::VERSION)?;
        let fields = run_fields(&c)?;
        let names: Vec<String> = (0..fields.len()).map(|i| format!("f{i}")).collect();
        writeln!(out, "# {}", names.join("\t")).at("stdout")?;
        for i in 0..c.blocks().len() {
            let raw = c.read_block(i)?;
            decode_run_block(&c, i, c.blocks()[i].records, &raw, &fields, Some(out))?;
        }
        Ok(())
    },
};

/// A field of a sort run's record type, parsed from its type name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    U32,
    U64,
    Bytes,
    Array(usize),
}

fn run_fields(c: &Container) -> Result<Vec<Field>> {
    let name = c.params()["record_type"].as_str().unwrap_or("");
    parse_type(name).ok_or_else(|| {
        Error::corrupt(
            c.path(),
            "header parameters",
            0,
            format!("unknown record type {name:?}"),
        )
    })
}

fn parse_type(name: &str) -> Option<Vec<Field>> {
    let inner = name
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(name);
    let mut fields = Vec::new();
    // Nested tuples are flattened: their encodings are concatenated.
    for part in inner
        .split(',')
        .map(|p| p.trim_matches(|c| c == '(' || c == ')' || c == ' '))
    {
        fields.push(match part {
            "u32" => Field::U32,
            "u64" => Field::U64,
            "bytes" => Field::Bytes,
            p => Field::Array(p.strip_prefix("[u8;")?.strip_suffix(']')?.parse().ok()?),
        });
    }
    Some(fields)
}

fn decode_run_block(
    c: &Container,
    i: usize,
    records: u64,
    raw: &[u8],
    fields: &[Field],
    mut out: Option<&mut dyn Write>,
) -> Result<()> {
    let bad = |detail: String| {
        Error::corrupt(c.path(), format!("block {i}"), c.blocks()[i].offset, detail)
    };
    let mut input = raw;
    let mut line = String::new();
    for r in 0..records {
        line.clear();
        for (k, f) in fields.iter().enumerate() {
            if k > 0 {
                line.push('\t');
            }
            let cut = || bad(format!("record {r} is cut short"));
            match f {
                Field::U32 => {
                    let (h, t) = input.split_first_chunk::<4>().ok_or_else(cut)?;
                    input = t;
                    line.push_str(&u32::from_le_bytes(*h).to_string());
                }
                Field::U64 => {
                    let (h, t) = input.split_first_chunk::<8>().ok_or_else(cut)?;
                    input = t;
                    line.push_str(&u64::from_le_bytes(*h).to_string());
                }
                Field::Bytes => {
                    let b = crate::varint::get_bytes(&mut input).ok_or_else(cut)?;
                    line.push_str(&escape(&String::from_utf8_lossy(b)));
                }
                Field::Array(n) => {
                    if input.len() < *n {
                        return Err(cut());
                    }
                    let (h, t) = input.split_at(*n);
                    input = t;
                    for b in h {
                        line.push_str(&format!("{b:02x}"));
                    }
                }
            }
        }
        if let Some(o) = out.as_deref_mut() {
            writeln!(o, "{line}").at("stdout")?;
        }
    }
    if !input.is_empty() {
        return Err(bad(format!(
            "{} bytes left after {records} records",
            input.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_parse() {
        use crate::sort::Record;
        assert_eq!(
            parse_type(&<(u64, u32)>::type_name()),
            Some(vec![Field::U64, Field::U32])
        );
        assert_eq!(
            parse_type(&<[u8; 10]>::type_name()),
            Some(vec![Field::Array(10)])
        );
        assert_eq!(
            parse_type(&<(u64, Vec<u8>)>::type_name()),
            Some(vec![Field::U64, Field::Bytes])
        );
        assert_eq!(parse_type("f64"), None);
    }
}

//! What webmill knows about each file kind: full verification and record dumps,
//! dispatched on the kind tag in the container header. The `inspect`, `verify`
//! and `dump` tools are built on this.

use std::io::Write;
use std::path::Path;

use crate::container::Container;
use crate::dedup::stage as dedup;
use crate::docs::DocTable;
use crate::error::{Error, IoContext, Result};
use crate::graph::EdgeFile;
use crate::ingest::pagefile::PageFile;
use crate::ingest::records;
use crate::sort::run;
use crate::tsv::escape;

/// Verifies `path` completely: container structure, every checksum, padding,
/// and the kind's own record invariants where the kind is known.
pub fn verify_file(path: &Path) -> Result<Container> {
    let c = Container::open(path)?;
    match c.kind() {
        crate::graph::edges::KIND => EdgeFile::open(path)?.verify()?,
        crate::docs::KIND => DocTable::open(path)?.verify()?,
        run::KIND => {
            let c = Container::open_kind(path, run::KIND, run::VERSION)?;
            let fields = run_fields(&c)?;
            c.verify(|i, e, raw| decode_run_block(&c, i, e.records, raw, &fields, None))?;
        }
        crate::rank::vector::KIND => crate::rank::RankVector::open(path)?.verify()?,
        crate::ingest::urltable::KIND => {
            c.verify(|_, _, _| Ok(()))?;
            crate::ingest::urltable::UrlTable::open(path)?.verify()?
        }
        k if records::KINDS.contains(&k) => {
            c.verify(|_, _, _| Ok(()))?;
            let f = PageFile::open(path, k)?;
            f.for_each(|page, input| records::format_record(k, page, input, None))?;
        }
        k @ (dedup::SKETCH_KIND | dedup::PAIRS_KIND | dedup::CLUSTERS_KIND) => {
            c.verify(|_, _, _| Ok(()))?;
            // The readers check each record's invariants.
            dump_dedup(k, path, &mut std::io::sink())?;
        }
        crate::index::lexicon::KIND => crate::index::Lexicon::open(path)?.verify()?,
        crate::index::inverted::KIND => {
            crate::index::Barrel::open(path)?.verify()?;
        }
        crate::index::forward::KIND => {
            crate::index::forward::ForwardBarrel::open(path)?.verify()?;
        }
        _ => c.verify(|_, _, _| Ok(()))?,
    }
    Ok(c)
}

/// Writes `path`'s records as TSV to `out`, with a `#` header line.
pub fn dump_file(path: &Path, out: &mut dyn Write) -> Result<()> {
    let c = Container::open(path)?;
    let w = |out: &mut dyn Write, s: std::fmt::Arguments| out.write_fmt(s).at("stdout");
    match c.kind() {
        crate::graph::edges::KIND => {
            let f = EdgeFile::open(path)?;
            w(out, format_args!("# node\tneighbour\n"))?;
            for list in f.lists() {
                let (node, dsts) = list?;
                for d in dsts {
                    w(out, format_args!("{node}\t{d}\n"))?;
                }
            }
        }
        crate::docs::KIND => {
            let t = DocTable::open(path)?;
            w(out, format_args!("# docid\turl\tcrawled\tbytes\ttitle\n"))?;
            for doc in t.iter() {
                let (id, d) = doc?;
                w(
                    out,
                    format_args!(
                        "{id}\t{}\t{}\t{}\t{}\n",
                        escape(&d.url),
                        u8::from(d.crawled),
                        d.bytes,
                        escape(&d.title)
                    ),
                )?;
            }
        }
        run::KIND => {
            let fields = run_fields(&c)?;
            let names: Vec<String> = (0..fields.len()).map(|i| format!("f{i}")).collect();
            w(out, format_args!("# {}\n", names.join("\t")))?;
            for i in 0..c.blocks().len() {
                let raw = c.read_block(i)?;
                decode_run_block(&c, i, c.blocks()[i].records, &raw, &fields, Some(out))?;
            }
        }
        crate::rank::vector::KIND => {
            let v = crate::rank::RankVector::open(path)?;
            w(out, format_args!("# docid\tvalue\n"))?;
            let mut r = v.reader();
            for i in 0..v.len() {
                w(out, format_args!("{i}\t{:e}\n", r.get(i)?))?;
            }
        }
        crate::ingest::urltable::KIND => {
            let t = crate::ingest::urltable::UrlTable::open(path)?;
            w(out, format_args!("# fingerprint\tdocid\n"))?;
            t.for_each(|fp, doc| w(out, format_args!("{fp:016x}\t{doc}\n")))?;
        }
        k if records::KINDS.contains(&k) => {
            let f = PageFile::open(path, k)?;
            w(out, format_args!("{}\n", records::dump_header(k)))?;
            let mut line = String::new();
            f.for_each(|page, input| {
                records::format_record(k, page, input, Some(&mut line))?;
                w(out, format_args!("{line}\n"))
            })?;
        }
        k @ (dedup::SKETCH_KIND | dedup::PAIRS_KIND | dedup::CLUSTERS_KIND) => {
            dump_dedup(k, path, out)?
        }
        crate::index::lexicon::KIND => crate::index::lexicon::dump(path, out)?,
        crate::index::inverted::KIND => crate::index::inverted::dump(path, out)?,
        crate::index::forward::KIND => crate::index::forward::dump(path, out)?,
        other => {
            return Err(Error::usage_at(
                path,
                format!(
                    "no record dump for file kind {other:?}; `webmill inspect` shows its blocks"
                ),
            ))
        }
    }
    Ok(())
}

/// Writes the records of a near-duplicate file (sketches, pairs, clusters) as
/// TSV with a header line; the readers check each record on the way.
fn dump_dedup(kind: &str, path: &Path, out: &mut dyn Write) -> Result<()> {
    let w = |out: &mut dyn Write, s: std::fmt::Arguments| out.write_fmt(s).at("stdout");
    match kind {
        dedup::PAIRS_KIND => {
            w(out, format_args!("# docid_a\tdocid_b\tsimilarity\n"))?;
            dedup::for_each_pair(path, |a, b, sim| w(out, format_args!("{a}\t{b}\t{sim}\n")))
        }
        dedup::CLUSTERS_KIND => {
            w(out, format_args!("# cluster_id\tdocid\tkeep\n"))?;
            dedup::for_each_cluster_member(path, |c, d, keep| {
                w(out, format_args!("{c}\t{d}\t{}\n", u8::from(keep)))
            })
        }
        _ => {
            w(out, format_args!("# docid\thost\tsketch_hex\tshingles\n"))?;
            let mut hex = String::new();
            dedup::for_each_sketch(path, |r| {
                hex.clear();
                for b in r.sketch {
                    let _ = std::fmt::Write::write_fmt(&mut hex, format_args!("{b:02x}"));
                }
                let set = r
                    .shingles
                    .map_or("-".to_string(), |s| (s.len() / 8).to_string());
                w(out, format_args!("{}\t{}\t{hex}\t{set}\n", r.doc, r.host))
            })
        }
    }
}

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

//! The deduplicated dataset: a job's input records, those kept by a
//! near-duplicate stage apart from those it removed (`webmill export
//! dataset`).
//!
//! The inputs are read again, in input order, by the same readers `ingest`
//! used (same fields, same per-record limit), so that the n-th record that
//! became a page is page n. A page is **kept** when it is its doc's first
//! capture (`pagedoc.wm`'s canonical flag: a record repeating an earlier
//! record's URL is the same doc) and its doc is not a removed member of a
//! cluster of `clusters-ALG.wm` (every member but the one with the keep
//! flag). Kept records are written byte for byte as they were read (a JSONL
//! line and its line end `\n`; a `\r` before it is kept), in input order;
//! with `cluster`, a record in a cluster gets `"cluster": ID` (the cluster's
//! smallest docID) as its last field. Removed records go to a second writer
//! when one is given. Lines that never became pages (bad JSON, no text) are
//! in neither. Today the inputs must be JSONL document sets.
//!
//! Memory: the removed docs and, with `cluster`, each clustered doc's
//! cluster, 8 and 16 bytes a doc in a cluster (the docs dedup held in memory
//! to cluster them).

use std::io::Write;
use std::path::PathBuf;

use crate::container::pagefile::PageFile;
use crate::dedup::files::for_each_cluster_member;
use crate::dedup::Alg;
use crate::error::{Error, IoContext, Result};
use crate::ingest::dir::list_dir;
use crate::ingest::limits::{RecordGate, RecordLimits};
use crate::ingest::records::{decode_pagedoc, PAGEDOC};
use crate::ingest::source::jsonl::{is_jsonl_name, JsonlFile};
use crate::ingest::source::{Counts, InputKind, Item, Next, ReadContext, Reader};
use crate::ingest::{IngestParams, InputParam};
use crate::job::{JobFile, JobView, Settings, StageId};

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatasetCounts {
    /// Records kept.
    pub kept: u64,
    /// Records removed (near-duplicates, repeated URLs).
    pub removed: u64,
    /// Kept records that are their cluster's kept member.
    pub kept_in_clusters: u64,
}

/// Writes the kept records of `job`'s inputs to `kept` and, when given, the
/// removed ones to `removed` (see the module docs).
pub fn export_dataset(
    job: &JobView,
    alg: Alg,
    cluster: bool,
    kept: &mut dyn Write,
    mut removed: Option<&mut dyn Write>,
) -> Result<DatasetCounts> {
    let ingest = job.published(StageId::Ingest).ok_or_else(|| {
        Error::job(
            job.dir(),
            "this job has no ingest: run `webmill ingest` first",
        )
    })?;
    let params: IngestParams = serde_json::from_value(ingest.params.clone()).map_err(|e| {
        Error::corrupt(
            job.dir().join("job.json"),
            "ingest parameters",
            0,
            e.to_string(),
        )
    })?;
    let fields = params.fields.clone().unwrap_or_default();
    let mut sets: Vec<PathBuf> = Vec::new();
    for input in &params.inputs {
        match input {
            InputParam::Jsonl { jsonl, .. } => sets.push(PathBuf::from(jsonl)),
            InputParam::Dir { dir, .. } => {
                let dir = PathBuf::from(dir);
                for e in list_dir(&dir)? {
                    if e.skip.is_none() && is_jsonl_name(&e.rel) {
                        sets.push(dir.join(&e.rel));
                    } else if e.skip.is_none() {
                        return Err(not_a_set(&dir.join(&e.rel).to_string_lossy()));
                    }
                }
            }
            InputParam::Warc { warc, .. } => return Err(not_a_set(warc)),
            InputParam::Parquet { parquet, .. } => return Err(not_a_set(parquet)),
        }
    }
    // The removed docs, and each clustered doc's cluster, by docID.
    let mut gone: Vec<u64> = Vec::new();
    let mut clusters: Vec<(u64, u64)> = Vec::new();
    for_each_cluster_member(&job.file(JobFile::Clusters(alg))?, |c, d, keep| {
        if !keep {
            gone.push(d);
        }
        if cluster {
            clusters.push((d, c));
        }
        Ok(())
    })?;
    gone.sort_unstable();
    clusters.sort_unstable();
    // Page → (docID, canonical), in page order.
    let pagedoc = PageFile::open(job.file(JobFile::PageDoc)?, &PAGEDOC)?;
    let mut pages: Vec<(u64, bool)> = Vec::new();
    pagedoc.for_each(|_, input| {
        pages.push(decode_pagedoc(input)?);
        Ok(())
    })?;
    let settings = Settings::new(crate::resources::default_budget());
    let mut limits = RecordLimits::from_budget(settings.mem, 1);
    if params.record_bytes > 0 {
        limits.record_bytes = params.record_bytes;
    }
    let cx = ReadContext {
        max_record_bytes: params.max_record_bytes,
        settings: &settings,
        limits,
        gate: RecordGate::new(),
    };
    let mut counts = DatasetCounts::default();
    let mut page = 0usize;
    let mut scratch = Counts::default();
    let mut line = Vec::new();
    for set in &sets {
        let unit = JsonlFile::new(set, &fields);
        let mut reader = unit.open(None, &cx)?;
        loop {
            match reader.next(&mut scratch)? {
                Next::End => break,
                Next::Counted | Next::Item(Item::Skip(_)) => continue,
                Next::Item(Item::Page(_)) => {}
            }
            let &(doc, canonical) = pages.get(page).ok_or_else(|| {
                Error::job(
                    job.dir(),
                    format!(
                        "{} holds more records than the job has pages ({}): the input changed since it was ingested",
                        set.display(),
                        pages.len()
                    ),
                )
            })?;
            page += 1;
            let keep = canonical && gone.binary_search(&doc).is_err();
            line.clear();
            line.extend_from_slice(reader.last_line());
            if cluster {
                if let Ok(i) = clusters.binary_search_by_key(&doc, |&(d, _)| d) {
                    add_field(&mut line, "cluster", clusters[i].1);
                    if keep {
                        counts.kept_in_clusters += 1;
                    }
                }
            }
            line.push(b'\n');
            let out: &mut dyn Write = if keep {
                counts.kept += 1;
                kept
            } else {
                counts.removed += 1;
                match removed.as_deref_mut() {
                    Some(w) => w,
                    None => continue,
                }
            };
            out.write_all(&line).at("the dataset")?;
        }
    }
    if page != pages.len() {
        return Err(Error::job(
            job.dir(),
            format!(
                "the inputs hold {page} records that became pages, the job {}: the input changed since it was ingested",
                pages.len()
            ),
        ));
    }
    Ok(counts)
}

fn not_a_set(path: &str) -> Error {
    Error::usage(format!(
        "{path}: export dataset writes the records of JSONL document sets; this input is not one"
    ))
}

/// Adds `"name": value` as the last field of the JSON object on `line`
/// (whose last non-blank byte is its closing brace).
fn add_field(line: &mut Vec<u8>, name: &str, value: u64) {
    let cr = line.last() == Some(&b'\r');
    if cr {
        line.pop();
    }
    while line.last().is_some_and(u8::is_ascii_whitespace) {
        line.pop();
    }
    if line.last() == Some(&b'}') {
        line.pop();
        let empty = line
            .iter()
            .rev()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'{');
        if !empty {
            line.push(b',');
        }
        line.extend_from_slice(format!("\"{name}\":{value}}}").as_bytes());
    }
    if cr {
        line.push(b'\r');
    }
}

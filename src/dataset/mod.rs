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
//! in neither. Parquet sets are written as Parquet: the rows with every
//! column as read (the first set's schema; each set must have it), zstd, and
//! with `cluster` a last nullable `UInt64` column `cluster`. WARC files (WARC,
//! WET, WAT; given, or found in directories) are written as WARC: each record
//! that became a page whole, byte for byte, a per-record gzip member copied
//! as it is ([`warc`]); records that are not pages (`warcinfo`, `request`,
//! the `metadata` of a WARC, revisits, responses that were skipped) are in
//! neither file; `cluster` does not apply (a record is written whole). The
//! inputs must be all JSONL sets, all Parquet sets or all WARC files.
//!
//! Memory: the removed docs and, with `cluster`, each clustered doc's
//! cluster, 8 and 16 bytes a doc in a cluster (the docs dedup held in memory
//! to cluster them).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{BooleanArray, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use arrow_select::filter::filter_record_batch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::container::pagefile::PageFile;
use crate::dedup::files::for_each_cluster_member;
use crate::dedup::Alg;
use crate::error::{Error, IoContext, Result};
use crate::ingest::dir::list_dir;
use crate::ingest::limits::RecordGate;
use crate::ingest::records::{decode_pagedoc, PAGEDOC};
use crate::ingest::source::jsonl::{is_jsonl_name, JsonlFile};
use crate::ingest::source::parquet::{is_parquet_name, ParquetFile, BATCH_ROWS};
use crate::ingest::source::warc::{is_archive_name, WarcFile};
use crate::ingest::source::{Counts, InputKind, Item, Next, ReadContext, Reader};
use crate::ingest::warc::ArchiveFormat;
use crate::ingest::{record_limits, stage_budget, IngestParams, InputParam};
use crate::job::{JobFile, JobView, Settings, StageId};

pub mod warc;

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
    kept: &mut (dyn Write + Send),
    mut removed: Option<&mut (dyn Write + Send)>,
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
    // The inputs' files in ingest's order (directories listed as ingest
    // lists them).
    let mut sets: Vec<PathBuf> = Vec::new();
    for input in &params.inputs {
        match input {
            InputParam::Jsonl { jsonl: p, .. } | InputParam::Parquet { parquet: p, .. } => {
                sets.push(PathBuf::from(p))
            }
            InputParam::Warc { warc: p, .. } => sets.push(PathBuf::from(p)),
            InputParam::Dir { dir, .. } => {
                let dir = PathBuf::from(dir);
                for e in list_dir(&dir)? {
                    let readable =
                        is_jsonl_name(&e.rel) || is_parquet_name(&e.rel) || is_archive_name(&e.rel);
                    if e.skip.is_none() && readable {
                        sets.push(dir.join(&e.rel));
                    } else if e.skip.is_none() {
                        return Err(not_a_set(&dir.join(&e.rel).to_string_lossy()));
                    }
                }
            }
        }
    }
    let parquet = sets.iter().filter(|p| is_parquet_name(p)).count();
    let jsonl = sets.iter().filter(|p| is_jsonl_name(p)).count();
    let archives = sets.len() - parquet - jsonl;
    if [parquet, jsonl, archives]
        .iter()
        .filter(|&&n| n > 0)
        .count()
        > 1
    {
        return Err(Error::usage(
            "export dataset writes JSONL sets as JSONL, Parquet sets as Parquet and WARC records as WARC: this job's inputs mix them",
        ));
    }
    if archives > 0 && cluster {
        return Err(Error::usage(format!(
            "--cluster does not apply to WARC records, which are written whole, byte for byte; `webmill export clusters {} --alg {}` lists each cluster's docs",
            job.dir().display(),
            alg.name()
        )));
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
    let mut limits = record_limits(&stage_budget(settings.mem)?, 1)?;
    if params.record_bytes > 0 {
        limits.record_bytes = params.record_bytes;
    }
    let cx = ReadContext {
        max_record_bytes: params.max_record_bytes,
        settings: &settings,
        limits,
        gate: RecordGate::new(),
        // Documents are read one at a time here, never batched.
        batch_bytes: 0,
    };
    let mut d = Decider {
        job,
        pages,
        gone,
        clusters,
        page: 0,
        counts: DatasetCounts::default(),
    };
    if parquet > 0 {
        export_parquet(&sets, &fields, &cx, &mut d, cluster, kept, removed)?;
        return d.finish();
    }
    if archives > 0 {
        export_warc(&sets, &cx, &mut d, kept, removed)?;
        return d.finish();
    }
    let mut scratch = Counts::default();
    let mut line = Vec::new();
    for set in &sets {
        let unit = JsonlFile::new(set, &fields);
        let mut reader = unit.open(None, &cx)?;
        while next_page(&mut reader, &mut scratch)? {
            let (keep, in_cluster) = d.next(set)?;
            let Some(out) = side(keep, kept, &mut removed) else {
                continue;
            };
            line.clear();
            line.extend_from_slice(reader.last_line());
            if let (true, Some(c)) = (cluster, in_cluster) {
                add_field(&mut line, "cluster", c);
            }
            line.push(b'\n');
            out.write_all(&line).at("the dataset")?;
        }
    }
    d.finish()
}

/// Decides, record by record in input order, what becomes of the records
/// that became pages, and counts it.
struct Decider<'j> {
    job: &'j JobView,
    /// Page → (docID, canonical), in page order.
    pages: Vec<(u64, bool)>,
    /// The removed docs, sorted.
    gone: Vec<u64>,
    /// (doc, cluster) of the clustered docs, sorted.
    clusters: Vec<(u64, u64)>,
    /// The next page.
    page: usize,
    counts: DatasetCounts,
}

impl Decider<'_> {
    /// The next page's record (read from `set`): kept or not, and its
    /// cluster, if it is in one.
    fn next(&mut self, set: &Path) -> Result<(bool, Option<u64>)> {
        let &(doc, canonical) = self.pages.get(self.page).ok_or_else(|| {
            Error::job(
                self.job.dir(),
                format!(
                    "{} holds more records than the job has pages ({}): the input changed since it was ingested",
                    set.display(),
                    self.pages.len()
                ),
            )
        })?;
        self.page += 1;
        let keep = canonical && self.gone.binary_search(&doc).is_err();
        let cluster = self
            .clusters
            .binary_search_by_key(&doc, |&(d, _)| d)
            .ok()
            .map(|i| self.clusters[i].1);
        if keep {
            self.counts.kept += 1;
            self.counts.kept_in_clusters += u64::from(cluster.is_some());
        } else {
            self.counts.removed += 1;
        }
        Ok((keep, cluster))
    }

    /// The counts, once every page's record was met.
    fn finish(self) -> Result<DatasetCounts> {
        if self.page != self.pages.len() {
            return Err(Error::job(
                self.job.dir(),
                format!(
                    "the inputs hold {} records that became pages, the job {}: the input changed since it was ingested",
                    self.page,
                    self.pages.len()
                ),
            ));
        }
        Ok(self.counts)
    }
}

/// WARC files: each read again by ingest's reader (which records became
/// pages, and where each starts), the records that became pages copied
/// whole (see [`warc`]), gzip when the first file is gzip.
fn export_warc(
    files: &[PathBuf],
    cx: &ReadContext,
    d: &mut Decider,
    kept: &mut (dyn Write + Send),
    mut removed: Option<&mut (dyn Write + Send)>,
) -> Result<()> {
    let mut scratch = Counts::default();
    let mut gzip_out = None;
    for path in files {
        let unit = WarcFile::new(path);
        let mut reader = unit.open(None, cx)?;
        let (gzip, format) = reader.archive();
        if let ArchiveFormat::Arc { .. } = format {
            return Err(Error::usage_at(
                path,
                "an ARC file: export dataset writes WARC records whole, and ARC records are not WARC records",
            ));
        }
        let gzip_out = *gzip_out.get_or_insert(gzip);
        let mut raw = warc::RawRecords::new(path, gzip);
        while next_page(&mut reader, &mut scratch)? {
            let at = reader
                .last_record_at()
                .ok_or_else(|| Error::internal("a WARC page without its record"))?;
            let (keep, _) = d.next(path)?;
            if let Some(out) = side(keep, kept, &mut removed) {
                raw.copy(at, out, gzip_out)?;
            }
        }
    }
    Ok(())
}

/// Reads `reader` on to its next record that became a page: `false` at its
/// end.
fn next_page(reader: &mut impl Reader, scratch: &mut Counts) -> Result<bool> {
    loop {
        match reader.next(scratch)? {
            Next::End => return Ok(false),
            Next::Item(Item::Page(_)) => return Ok(true),
            Next::Counted | Next::Item(Item::Skip(_)) => {}
        }
    }
}

/// Where a record goes: `kept`, or `removed` when it is given.
fn side<'w>(
    keep: bool,
    kept: &'w mut (dyn Write + Send),
    removed: &'w mut Option<&mut (dyn Write + Send)>,
) -> Option<&'w mut dyn Write> {
    if keep {
        Some(kept)
    } else {
        removed.as_deref_mut().map(|w| w as &mut dyn Write)
    }
}

/// The column `export dataset --cluster` adds.
const CLUSTER: &str = "cluster";

/// Parquet sets: each file read again by the ingest's reader (which rows
/// became pages) beside a reader of every column (the rows themselves); the
/// kept rows, with every column as read, to a Parquet file of the sets'
/// schema (plus a nullable `cluster` column with `cluster`), the removed
/// ones to another. Every set must have the first one's schema.
fn export_parquet(
    sets: &[PathBuf],
    fields: &crate::ingest::DocFields,
    cx: &ReadContext,
    d: &mut Decider,
    cluster: bool,
    kept: &mut (dyn Write + Send),
    removed: Option<&mut (dyn Write + Send)>,
) -> Result<()> {
    let mut writers: Option<(SchemaRef, SchemaRef, ParquetOut, Option<ParquetOut>)> = None;
    let mut outs = Some((kept, removed));
    let mut scratch = Counts::default();
    for set in sets {
        let pq = |e: &dyn std::fmt::Display| Error::corrupt(set, "Parquet data", 0, e.to_string());
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(set).at(set)?)
            .map_err(|e| pq(&e))?;
        let schema = Arc::clone(builder.schema());
        if schema.field_with_name(CLUSTER).is_ok() && cluster {
            return Err(Error::usage_at(
                set,
                "the set has a column named \"cluster\" already: --cluster would add a second",
            ));
        }
        let mut all = builder
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| pq(&e))?;
        if writers.is_none() {
            let mut out_fields: Vec<Field> =
                schema.fields().iter().map(|f| f.as_ref().clone()).collect();
            if cluster {
                out_fields.push(Field::new(CLUSTER, DataType::UInt64, true));
            }
            let out_schema = Arc::new(Schema::new_with_metadata(
                out_fields,
                schema.metadata().clone(),
            ));
            let props = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .build();
            let (k, r) = outs.take().expect("the writers are made once");
            let kw = ArrowWriter::try_new(k, Arc::clone(&out_schema), Some(props.clone()))
                .map_err(|e| Error::internal(e.to_string()))?;
            let rw = match r {
                Some(r) => Some(
                    ArrowWriter::try_new(r, Arc::clone(&out_schema), Some(props))
                        .map_err(|e| Error::internal(e.to_string()))?,
                ),
                None => None,
            };
            writers = Some((schema.clone(), out_schema, kw, rw));
        }
        let (first, out_schema, kw, rw) = writers.as_mut().expect("made above");
        if first.fields() != schema.fields() {
            return Err(Error::usage_at(
                set,
                "its columns differ from the first Parquet set's: one dataset holds one schema",
            ));
        }
        let unit = ParquetFile::new(set, fields)?;
        let mut reader = unit.open(None, cx)?;
        // The current batch of every column, its first row, and what
        // becomes of each of its rows.
        let mut batch: Option<RecordBatch> = None;
        let mut start = 0u64;
        let mut fate: Vec<Option<(bool, Option<u64>)>> = Vec::new();
        loop {
            let row = match reader.next(&mut scratch)? {
                Next::End => None,
                Next::Counted | Next::Item(Item::Skip(_)) => continue,
                Next::Item(Item::Page(_)) => Some(reader.last_row().index),
            };
            // Write out the batches before this row (all of them at the end).
            while let Some(b) = &batch {
                if row.is_some_and(|r| r < start + b.num_rows() as u64) {
                    break;
                }
                write_rows(b, &fate, cluster.then_some(&*out_schema), kw, rw.as_mut())?;
                start += b.num_rows() as u64;
                batch = None;
            }
            let Some(row) = row else { break };
            let decided = d.next(set)?;
            while batch.is_none() {
                let b = all
                    .next()
                    .ok_or_else(|| pq(&format!("row {row} cannot be read again")))?
                    .map_err(|e| pq(&e))?;
                if row < start + b.num_rows() as u64 {
                    fate = vec![None; b.num_rows()];
                    batch = Some(b);
                } else {
                    start += b.num_rows() as u64;
                }
            }
            fate[(row - start) as usize] = Some(decided);
        }
    }
    if let Some((_, _, kw, rw)) = writers {
        kw.close().map_err(|e| Error::internal(e.to_string()))?;
        if let Some(rw) = rw {
            rw.close().map_err(|e| Error::internal(e.to_string()))?;
        }
    }
    Ok(())
}

/// A Parquet file of the dataset being written.
type ParquetOut<'w> = ArrowWriter<&'w mut (dyn Write + Send)>;

/// Writes the rows of `b` whose fate is known: the kept ones to `kw`, the
/// removed ones to `rw` (when given), with their cluster in a last column
/// when `with_cluster` gives the output schema.
fn write_rows(
    b: &RecordBatch,
    fate: &[Option<(bool, Option<u64>)>],
    with_cluster: Option<&SchemaRef>,
    kw: &mut ParquetOut,
    rw: Option<&mut ParquetOut>,
) -> Result<()> {
    let side = |w: &mut ParquetOut, keep: bool| -> Result<()> {
        let mask: BooleanArray = fate
            .iter()
            .map(|f| Some(f.is_some_and(|(k, _)| k == keep)))
            .collect();
        let rows = filter_record_batch(b, &mask).map_err(|e| Error::internal(e.to_string()))?;
        if rows.num_rows() == 0 {
            return Ok(());
        }
        let rows = if let Some(schema) = with_cluster {
            let ids: UInt64Array = fate
                .iter()
                .filter_map(|f| f.filter(|(k, _)| *k == keep))
                .map(|(_, c)| c)
                .collect();
            let mut cols = rows.columns().to_vec();
            cols.push(Arc::new(ids));
            RecordBatch::try_new(Arc::clone(schema), cols)
                .map_err(|e| Error::internal(e.to_string()))?
        } else {
            rows
        };
        w.write(&rows)
            .map_err(|e| Error::io("the dataset", std::io::Error::other(e.to_string())))
    };
    side(kw, true)?;
    if let Some(rw) = rw {
        side(rw, false)?;
    }
    Ok(())
}

fn not_a_set(path: &str) -> Error {
    Error::usage(format!(
        "{path}: export dataset writes the records of WARC files and of JSONL and Parquet document sets; this input is none of them (a directory's HTML files are not records)"
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

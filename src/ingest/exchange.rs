//! The exchange tables: the Parquet files a distributed job's global steps
//! shuffle (the normative spec is this doc; `formats/spark.md` repeats it
//! with the Spark side).
//!
//! A task of a distributed ingest ([`super::ingest_unit`]) writes, beside
//! its unit's segments, two tables of what the unit found:
//!
//! - [`PAGES_TABLE`] (`pages.parquet`), one row per page kept, in page
//!   order: `unit` (int32), `page` (int64, the page's number within its
//!   unit, from 0; the job's page number is the unit's first page plus
//!   this), `url` (string, normalized), `key` (binary, the URL's sort key
//!   [`crate::url::sort_key`]: host labels reversed, port, `)`, path, query,
//!   a 0 byte, the URL; webmill numbers URLs in the unsigned byte order of
//!   these keys), `bytes` (int64, the body's size), `title` (string), `fp`
//!   (int64: the bits of the URL's 64-bit fingerprint [`crate::url::fingerprint`],
//!   which keys the job's URL table).
//! - [`LINKS_TABLE`] (`links.parquet`), one row per link kept, in page
//!   order and, within a page, in document order: `unit` (int32), `page`
//!   (int64, the source page within its unit), `source_url` (string),
//!   `target_url` (string), `target_key` (binary, the target's sort key),
//!   `kind` (int8: 0 `<a>`/`<area>`, 1 frame, 2 refresh, 3 redirect),
//!   `anchor` (string, empty when none), `target_fp` (int64, the
//!   target's fingerprint's bits).
//!
//! Both carry the key–value metadata `webmill.table` (`pages` or `links`)
//! and `webmill.version` ([`VERSION`]). Integers are signed so that Spark
//! and pandas read them as plain longs; every column is non-null.
//!
//! The global steps write back (`spark/webmill_spark/shuffle.py` on Spark,
//! read by [`read_numbered`] and friends):
//!
//! - `docs/`: one row per distinct URL (page or link target) in key order:
//!   `doc` (int64, from 0, consecutive), `key` (binary), `host` (int64, the
//!   host's number: hosts numbered in key order from 0), `page` (int64, the
//!   job's page number of the URL's first capture, null when only linked
//!   to), `bytes` (int64) and `title` (string) of that capture (null when
//!   only linked to).
//! - `pagedoc/`: one row per page, in page order: `page` (int64), `doc`
//!   (int64), `first` (bool: the page is its doc's first capture).
//! - `links/`: one row per link: `page` (int64, the job's source page),
//!   `source` (int64, the source page's docID), `target` (int64, the
//!   target's docID), `kind` (int8), `anchor` (string).
//!
//! and, sorted so that webmill writes its own files from them by streaming
//! (no sort of its own; see `resolve_from`):
//!
//! - `urls/`: one row per doc, `fp` (int64, the fingerprint's bits), `doc`
//!   (int64), in the unsigned order of `fp`, then `doc`.
//! - `edges/`: the distinct arcs, self-loops left out: `source`, `target`
//!   (int64), in (source, target) order; `edges-t/`: the same arcs as
//!   `target`, `source`, in (target, source) order.
//! - `anchors/`: the distinct links with anchor text, self-loops left out:
//!   `target`, `source` (int64), `kind` (int8), `anchor` (string), in
//!   (target, source, kind, anchor's UTF-8 bytes) order.
//!
//! A directory's tables are its `part-*.parquet` files in name order.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, Int8Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float32Array, Int64Array, Int8Array, RecordBatch,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::container::pagefile::PageFile;
use crate::error::{Error, IoContext, Result};
use crate::ingest::records::{self, PageRec};
use crate::url;

/// The pages table of a unit.
pub const PAGES_TABLE: &str = "pages.parquet";
/// The links table of a unit.
pub const LINKS_TABLE: &str = "links.parquet";
/// The tables' version (metadata `webmill.version`).
pub const VERSION: &str = "2";

/// Rows per batch handed to the writer, and per row group.
const BATCH_ROWS: usize = 8192;
const GROUP_ROWS: usize = 65536;

pub(crate) fn field(name: &str, t: DataType, nullable: bool) -> Field {
    Field::new(name, t, nullable)
}

pub(crate) fn schema(table: &str, fields: Vec<Field>) -> SchemaRef {
    let meta = [
        ("webmill.table".to_string(), table.to_string()),
        ("webmill.version".to_string(), VERSION.to_string()),
    ];
    let meta: std::collections::HashMap<String, String> = meta.into_iter().collect();
    Arc::new(Schema::new_with_metadata(fields, meta))
}

/// The schema of [`PAGES_TABLE`].
pub fn pages_schema() -> SchemaRef {
    schema(
        "pages",
        vec![
            field("unit", DataType::Int32, false),
            field("page", DataType::Int64, false),
            field("url", DataType::Utf8, false),
            field("key", DataType::Binary, false),
            field("bytes", DataType::Int64, false),
            field("title", DataType::Utf8, false),
            field("fp", DataType::Int64, false),
        ],
    )
}

/// The schema of [`LINKS_TABLE`].
pub fn links_schema() -> SchemaRef {
    schema(
        "links",
        vec![
            field("unit", DataType::Int32, false),
            field("page", DataType::Int64, false),
            field("source_url", DataType::Utf8, false),
            field("target_url", DataType::Utf8, false),
            field("target_key", DataType::Binary, false),
            field("kind", DataType::Int8, false),
            field("anchor", DataType::Utf8, false),
            field("target_fp", DataType::Int64, false),
        ],
    )
}

/// A Parquet file written a batch at a time, published by the caller.
pub(crate) struct TableWriter {
    path: PathBuf,
    w: ArrowWriter<File>,
    schema: SchemaRef,
    rows: u64,
}

impl TableWriter {
    pub(crate) fn create(path: PathBuf, schema: SchemaRef) -> Result<TableWriter> {
        let file = File::create(&path).at(&path)?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_max_row_group_row_count(Some(GROUP_ROWS))
            .set_created_by(format!("webmill {}", env!("CARGO_PKG_VERSION")))
            .build();
        let w = ArrowWriter::try_new(file, Arc::clone(&schema), Some(props))
            .map_err(|e| parquet_error(&path, &e))?;
        Ok(TableWriter {
            path,
            w,
            schema,
            rows: 0,
        })
    }

    pub(crate) fn write(&mut self, columns: Vec<ArrayRef>) -> Result<()> {
        let b = RecordBatch::try_new(Arc::clone(&self.schema), columns)
            .map_err(|e| Error::internal(e.to_string()))?;
        self.rows += b.num_rows() as u64;
        self.w.write(&b).map_err(|e| parquet_error(&self.path, &e))
    }

    pub(crate) fn finish(self) -> Result<u64> {
        let file = self
            .w
            .into_inner()
            .map_err(|e| parquet_error(&self.path, &e))?;
        file.sync_all().at(&self.path)?;
        Ok(self.rows)
    }
}

fn parquet_error(path: &Path, e: &dyn std::fmt::Display) -> Error {
    Error::corrupt(path, "Parquet data", 0, e.to_string())
}

/// The columns of pages being gathered.
#[derive(Default)]
struct PageColumns {
    unit: Int32Builder,
    page: Int64Builder,
    url: StringBuilder,
    key: BinaryBuilder,
    bytes: Int64Builder,
    title: StringBuilder,
    fp: Int64Builder,
    rows: usize,
}

impl PageColumns {
    fn take(&mut self) -> Vec<ArrayRef> {
        self.rows = 0;
        vec![
            Arc::new(self.unit.finish()),
            Arc::new(self.page.finish()),
            Arc::new(self.url.finish()),
            Arc::new(self.key.finish()),
            Arc::new(self.bytes.finish()),
            Arc::new(self.title.finish()),
            Arc::new(self.fp.finish()),
        ]
    }
}

/// The columns of links being gathered.
#[derive(Default)]
struct LinkColumns {
    unit: Int32Builder,
    page: Int64Builder,
    source_url: StringBuilder,
    target_url: StringBuilder,
    target_key: BinaryBuilder,
    kind: Int8Builder,
    anchor: StringBuilder,
    target_fp: Int64Builder,
    rows: usize,
}

impl LinkColumns {
    fn take(&mut self) -> Vec<ArrayRef> {
        self.rows = 0;
        vec![
            Arc::new(self.unit.finish()),
            Arc::new(self.page.finish()),
            Arc::new(self.source_url.finish()),
            Arc::new(self.target_url.finish()),
            Arc::new(self.target_key.finish()),
            Arc::new(self.kind.finish()),
            Arc::new(self.anchor.finish()),
            Arc::new(self.target_fp.finish()),
        ]
    }
}

/// What [`write_unit_tables`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableRows {
    /// Rows of the pages table.
    pub pages: u64,
    /// Rows of the links table.
    pub links: u64,
}

fn as_i64(v: u64, what: &str) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::internal(format!("{what} {v} does not fit an int64")))
}

/// Writes unit `unit`'s [`PAGES_TABLE`] and [`LINKS_TABLE`] into `dir` from
/// its segments `segs` (their `pages` files, in order).
pub fn write_unit_tables(dir: &Path, unit: usize, segs: &[PathBuf]) -> Result<TableRows> {
    let unit =
        i32::try_from(unit).map_err(|_| Error::usage(format!("unit {unit} is too large")))?;
    let mut pw = TableWriter::create(dir.join(PAGES_TABLE), pages_schema())?;
    let mut lw = TableWriter::create(dir.join(LINKS_TABLE), links_schema())?;
    let mut pc = PageColumns::default();
    let mut lc = LinkColumns::default();
    let mut base = 0u64;
    let mut key = Vec::new();
    for seg in segs {
        let pages = PageFile::open(seg, &records::PAGES)?;
        let links = PageFile::open(
            super::segment_file(seg, records::LINKS.tag),
            &records::LINKS,
        )?;
        // The segment's URLs by page, for the links' sources.
        let mut urls = Vec::with_capacity(pages.records() as usize);
        pages.for_each(|page, input| {
            let p = PageRec::decode(input)?;
            key.clear();
            url::sort_key(&p.url, &mut key);
            pc.unit.append_value(unit);
            pc.page.append_value(as_i64(base + page, "page")?);
            pc.url.append_value(&p.url);
            pc.key.append_value(&key);
            pc.bytes.append_value(as_i64(p.bytes, "page size")?);
            pc.title.append_value(&p.title);
            pc.fp.append_value(url::fingerprint(&p.url) as i64);
            pc.rows += 1;
            if pc.rows == BATCH_ROWS {
                pw.write(pc.take())?;
            }
            urls.push(p.url);
            Ok(())
        })?;
        links.for_each(|page, input| {
            let (kind, target, anchor) = records::decode_link(input)?;
            let source = urls.get(page as usize).ok_or_else(|| {
                Error::damaged(
                    Some(seg),
                    format!("a link from page {page}, which the segment lacks"),
                )
            })?;
            key.clear();
            url::sort_key(target, &mut key);
            lc.unit.append_value(unit);
            lc.page.append_value(as_i64(base + page, "page")?);
            lc.source_url.append_value(source);
            lc.target_url.append_value(target);
            lc.target_key.append_value(&key);
            lc.kind.append_value(kind as i8);
            lc.anchor.append_value(anchor);
            lc.target_fp.append_value(url::fingerprint(target) as i64);
            lc.rows += 1;
            if lc.rows == BATCH_ROWS {
                lw.write(lc.take())?;
            }
            Ok(())
        })?;
        base += pages.records();
    }
    if pc.rows > 0 {
        pw.write(pc.take())?;
    }
    if lc.rows > 0 {
        lw.write(lc.take())?;
    }
    Ok(TableRows {
        pages: pw.finish()?,
        links: lw.finish()?,
    })
}

/// The `part-*.parquet` files of the table directory `dir`, in name order
/// (Spark names them by partition, so this is the table's row order).
pub fn parts(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)
        .at(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("part-") && n.ends_with(".parquet")
            })
        })
        .collect();
    parts.sort();
    if parts.is_empty() {
        return Err(Error::usage_at(
            dir,
            "no part-*.parquet files: not a table the global steps wrote",
        ));
    }
    Ok(parts)
}

/// A batch being read, its file and the file's row of its first row.
pub struct Batch<'a> {
    path: &'a Path,
    first_row: u64,
    batch: RecordBatch,
}

impl Batch<'_> {
    /// Rows in the batch.
    pub fn rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// An error about row `row` of the batch, naming its file and row.
    pub fn bad(&self, row: usize, detail: impl std::fmt::Display) -> Error {
        Error::corrupt(
            self.path,
            "Parquet data",
            0,
            format!("row {}: {detail}", self.first_row + row as u64),
        )
    }

    fn column(&self, name: &str, t: &DataType) -> Result<&ArrayRef> {
        let c = self.batch.column_by_name(name).ok_or_else(|| {
            Error::corrupt(
                self.path,
                "Parquet schema",
                0,
                format!("no column `{name}` ({t})"),
            )
        })?;
        if c.data_type() != t {
            return Err(Error::corrupt(
                self.path,
                "Parquet schema",
                0,
                format!("column `{name}` is {}, not {t}", c.data_type()),
            ));
        }
        Ok(c)
    }

    /// Column `name` as int64s (`None` for a null; an error when `required`).
    pub fn i64s(&self, name: &str, required: bool) -> Result<Vec<Option<u64>>> {
        let c = self.column(name, &DataType::Int64)?;
        let a = c.as_primitive::<Int64Type>();
        (0..a.len())
            .map(|i| {
                if a.is_null(i) {
                    if required {
                        return Err(self.bad(i, format!("`{name}` is null")));
                    }
                    return Ok(None);
                }
                let v = a.value(i);
                u64::try_from(v)
                    .map(Some)
                    .map_err(|_| self.bad(i, format!("`{name}` is negative ({v})")))
            })
            .collect()
    }

    /// Each row of column `name` (of type `t`, read as an `A`, none null)
    /// through `value`.
    fn non_null<A: Array + 'static, T>(
        &self,
        name: &str,
        t: &DataType,
        value: impl Fn(&A, usize) -> Result<T>,
    ) -> Result<Vec<T>> {
        let c = self.column(name, t)?;
        let a = c
            .as_any()
            .downcast_ref::<A>()
            .expect("the array of a column of its checked type");
        (0..a.len())
            .map(|i| {
                if a.is_null(i) {
                    return Err(self.bad(i, format!("`{name}` is null")));
                }
                value(a, i)
            })
            .collect()
    }

    /// Column `name` (int64, none null) as the bits of u64s.
    pub fn bits(&self, name: &str) -> Result<Vec<u64>> {
        self.non_null(name, &DataType::Int64, |a: &Int64Array, i| {
            Ok(a.value(i) as u64)
        })
    }

    /// Column `name` as float32s, none null.
    pub fn f32s(&self, name: &str) -> Result<Vec<f32>> {
        self.non_null(name, &DataType::Float32, |a: &Float32Array, i| {
            Ok(a.value(i))
        })
    }

    /// Column `name` as int8s, none null and not negative.
    pub fn i8s(&self, name: &str) -> Result<Vec<u8>> {
        self.non_null(name, &DataType::Int8, |a: &Int8Array, i| {
            u8::try_from(a.value(i)).map_err(|_| self.bad(i, format!("`{name}` is negative")))
        })
    }

    /// Column `name` as booleans, none null.
    pub fn bools(&self, name: &str) -> Result<Vec<bool>> {
        self.non_null(name, &DataType::Boolean, |a: &BooleanArray, i| {
            Ok(a.value(i))
        })
    }

    /// Binary column `name`, none null.
    pub fn binary(&self, name: &str) -> Result<&arrow_array::BinaryArray> {
        let a = self.column(name, &DataType::Binary)?.as_binary::<i32>();
        match (0..a.len()).find(|&i| a.is_null(i)) {
            Some(i) => Err(self.bad(i, format!("`{name}` is null"))),
            None => Ok(a),
        }
    }

    /// String column `name` (nulls allowed: read them as empty).
    pub fn strings(&self, name: &str) -> Result<&arrow_array::StringArray> {
        Ok(self.column(name, &DataType::Utf8)?.as_string::<i32>())
    }
}

/// Calls `f` with each batch of the table in directory `dir`, in order;
/// with `columns`, only those columns are read.
pub fn for_each_batch(
    dir: &Path,
    columns: Option<&[&str]>,
    mut f: impl FnMut(&Batch) -> Result<()>,
) -> Result<()> {
    for path in parts(dir)? {
        for_each_batch_of(&path, columns, &mut f)?;
    }
    Ok(())
}

/// Calls `f` with each batch of the one Parquet file `path`, in order; with
/// `columns`, only those columns are read.
pub fn for_each_batch_of(
    path: &Path,
    columns: Option<&[&str]>,
    mut f: impl FnMut(&Batch) -> Result<()>,
) -> Result<()> {
    let file = File::open(path).at(path)?;
    let mut builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| parquet_error(path, &e))?
        .with_batch_size(BATCH_ROWS);
    if let Some(names) = columns {
        let mask = ProjectionMask::columns(builder.parquet_schema(), names.iter().copied());
        builder = builder.with_projection(mask);
    }
    let reader = builder.build().map_err(|e| parquet_error(path, &e))?;
    let mut first_row = 0u64;
    for b in reader {
        let batch = b.map_err(|e| parquet_error(path, &e))?;
        let b = Batch {
            path,
            first_row,
            batch,
        };
        f(&b)?;
        first_row += b.rows() as u64;
    }
    Ok(())
}

/// A row's error: what is wrong with it, named by file and row.
pub type Bad<'a> = &'a dyn Fn(String) -> Error;

/// A row of the `docs/` table the URL numbering wrote.
pub struct NumberedDoc<'a> {
    /// Its docID.
    pub doc: u64,
    /// Its URL's sort key.
    pub key: &'a [u8],
    /// Its host's number.
    pub host: u64,
    /// The job's page number of its first capture, if crawled.
    pub page: Option<u64>,
    /// That capture's size.
    pub bytes: u64,
    /// That capture's title.
    pub title: &'a str,
}

/// Calls `f` with each row of the `docs/` table in `dir`, with where it is.
pub fn for_each_numbered(
    dir: &Path,
    mut f: impl FnMut(&NumberedDoc, Bad) -> Result<()>,
) -> Result<()> {
    for_each_batch(dir, None, |b| {
        let doc = b.i64s("doc", true)?;
        let host = b.i64s("host", true)?;
        let page = b.i64s("page", false)?;
        let bytes = b.i64s("bytes", false)?;
        let key = b.binary("key")?;
        let title = b.strings("title")?;
        for i in 0..b.rows() {
            let row = NumberedDoc {
                doc: doc[i].unwrap_or_default(),
                key: key.value(i),
                host: host[i].unwrap_or_default(),
                page: page[i],
                bytes: bytes[i].unwrap_or_default(),
                title: if title.is_null(i) { "" } else { title.value(i) },
            };
            f(&row, &|detail| b.bad(i, detail))?;
        }
        Ok(())
    })
}

/// Calls `f(page, doc, first, bad)` with each row of the `pagedoc/` table
/// in `dir`.
pub fn for_each_pagedoc(
    dir: &Path,
    mut f: impl FnMut(u64, u64, bool, Bad) -> Result<()>,
) -> Result<()> {
    for_each_batch(dir, None, |b| {
        let page = b.i64s("page", true)?;
        let doc = b.i64s("doc", true)?;
        let first = b.bools("first")?;
        for i in 0..b.rows() {
            f(
                page[i].unwrap_or_default(),
                doc[i].unwrap_or_default(),
                first[i],
                &|detail| b.bad(i, detail),
            )?;
        }
        Ok(())
    })
}

/// Calls `f(a, b, bad)` with columns `a` and `b` (int64, none null) of
/// each row of the table in `dir`, reading no other column: the `links/`
/// table's `source` and `target`, the arcs of `edges/` and `edges-t/`.
pub fn for_each_pair(
    dir: &Path,
    [a, b]: [&str; 2],
    mut f: impl FnMut(u64, u64, Bad) -> Result<()>,
) -> Result<()> {
    for_each_batch(dir, Some(&[a, b]), |batch| {
        let x = batch.i64s(a, true)?;
        let y = batch.i64s(b, true)?;
        for i in 0..batch.rows() {
            f(
                x[i].unwrap_or_default(),
                y[i].unwrap_or_default(),
                &|detail| batch.bad(i, detail),
            )?;
        }
        Ok(())
    })
}

/// Calls `f(fp, doc, bad)` with each row of the `urls/` table in `dir`
/// (`fp` the fingerprint, from its int64's bits).
pub fn for_each_url(dir: &Path, mut f: impl FnMut(u64, u64, Bad) -> Result<()>) -> Result<()> {
    for_each_batch(dir, Some(&["fp", "doc"]), |b| {
        let fp = b.bits("fp")?;
        let doc = b.i64s("doc", true)?;
        for i in 0..b.rows() {
            f(fp[i], doc[i].unwrap_or_default(), &|detail| {
                b.bad(i, detail)
            })?;
        }
        Ok(())
    })
}

/// Calls `f(target, source, kind, anchor, bad)` with each row of the
/// `anchors/` table in `dir`.
pub fn for_each_anchor(
    dir: &Path,
    mut f: impl FnMut(u64, u64, u8, &str, Bad) -> Result<()>,
) -> Result<()> {
    for_each_batch(dir, None, |b| {
        let target = b.i64s("target", true)?;
        let source = b.i64s("source", true)?;
        let kind = b.i8s("kind")?;
        let anchor = b.strings("anchor")?;
        for i in 0..b.rows() {
            if anchor.is_null(i) {
                return Err(b.bad(i, "`anchor` is null"));
            }
            f(
                target[i].unwrap_or_default(),
                source[i].unwrap_or_default(),
                kind[i],
                anchor.value(i),
                &|detail| b.bad(i, detail),
            )?;
        }
        Ok(())
    })
}

//! Parquet document sets as an input kind (FineWeb, Dolma, RedPajama, the
//! C4 family): one row per document, one unit per file, streamed a row
//! group at a time in batches of [`BATCH_ROWS`] rows of only the columns a
//! page needs (never loaded whole), resumed at a row of a row group.
//!
//! The columns are named by the same [`DocFields`] as a JSONL set's fields
//! (`--text-field`, `--id-field`, `--url-field`; a dotted path goes into
//! struct columns): the text a string column (`Utf8`, `LargeUtf8`,
//! `Utf8View`), the URL a string, the id a string or an integer; the date
//! the string column `date`, `timestamp` or `added` when there is one. A
//! row is a page as a JSONL record is ([`super::jsonl`]): its URL, or
//! `file://` + the file's path + `/` + its id (`row-N` without one). A row
//! whose text is null is a skip (`bad-line`); a text longer than the
//! per-record limit is cut there (the `block-cut` cut). A file without the
//! text column is an error naming the file and its columns, before anything
//! is read; a file whose footer cannot be read is a skip (`damaged`) of the
//! whole file; a row group that breaks mid-way is a skip (`damaged`) of its
//! remaining rows, and the next row group is read.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::ingest::source::jsonl::{document_page, DocFields, DocRecord};
use crate::ingest::source::{cut_detail, Counts, InputKind, Item, Next, ReadContext, Reader};
use crate::input::SkipKind;

/// Rows decoded at a time.
pub const BATCH_ROWS: usize = 64;

/// The columns read for a page's date, the first one present.
const DATE_COLUMNS: [&str; 3] = ["date", "timestamp", "added"];

/// Is `p` a Parquet file by its name?
pub fn is_parquet_name(p: &Path) -> bool {
    p.file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|n| n.ends_with(".parquet"))
}

/// Where a reader of a Parquet file stands: the next row, as a row group
/// and a row within it, and as a row of the file (from 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowPosition {
    /// The row group.
    pub group: u64,
    /// The row within it.
    pub row: u64,
    /// The row of the file.
    pub index: u64,
}

/// One Parquet file.
pub struct ParquetFile {
    path: PathBuf,
    bytes: u64,
    fields: DocFields,
    base: Option<::url::Url>,
    /// Rows of each row group, from the footer.
    groups: Vec<u64>,
    /// Why the footer cannot be read, if it cannot.
    broken: Option<String>,
}

/// The top-level column of a dotted field name.
fn root(field: &str) -> &str {
    field.split('.').next().unwrap_or(field)
}

impl ParquetFile {
    /// The unit of the file at `path`, its rows read by `fields`: reads the
    /// footer, and fails (naming the file and its columns) when the file
    /// has no text column.
    pub fn new(path: &Path, fields: &DocFields) -> Result<ParquetFile> {
        let mut unit = ParquetFile {
            path: path.to_path_buf(),
            bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
            fields: fields.clone(),
            base: std::fs::canonicalize(path)
                .ok()
                .and_then(|abs| ::url::Url::from_file_path(abs).ok()),
            groups: Vec::new(),
            broken: None,
        };
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        match ParquetRecordBatchReaderBuilder::try_new(file) {
            Err(e) => unit.broken = Some(e.to_string()),
            Ok(b) => {
                let schema = b.schema();
                if schema.field_with_name(root(&fields.text)).is_err() {
                    let names: Vec<&str> =
                        schema.fields().iter().map(|f| f.name().as_str()).collect();
                    return Err(Error::usage_at(
                        path,
                        format!(
                            "a Parquet file without the text column {:?} (--text-field); its columns: {}",
                            fields.text,
                            names.join(", ")
                        ),
                    ));
                }
                unit.groups = b
                    .metadata()
                    .row_groups()
                    .iter()
                    .map(|g| g.num_rows().max(0) as u64)
                    .collect();
            }
        }
        Ok(unit)
    }

    fn rows(&self) -> u64 {
        self.groups.iter().sum()
    }

    /// A reader of row group `group` from its row `row`, of the columns a
    /// page needs.
    fn open_group(
        &self,
        group: u64,
        row: u64,
    ) -> std::result::Result<ParquetRecordBatchReader, String> {
        let file = File::open(&self.path).map_err(|e| e.to_string())?;
        let b = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| e.to_string())?;
        let schema = Arc::clone(b.schema());
        let f = &self.fields;
        let wanted: Vec<usize> = schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                let n = c.name().as_str();
                n == root(&f.text)
                    || n == root(&f.id)
                    || n == root(&f.url)
                    || DATE_COLUMNS.contains(&n)
            })
            .map(|(i, _)| i)
            .collect();
        let mask = ProjectionMask::roots(b.parquet_schema(), wanted);
        b.with_projection(mask)
            .with_row_groups(vec![group as usize])
            .with_offset(row as usize)
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| e.to_string())
    }
}

impl InputKind for ParquetFile {
    type Resume = RowPosition;
    type Reader<'a> = ParquetItems<'a>;

    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn open<'a>(
        &'a self,
        at: Option<RowPosition>,
        cx: &'a ReadContext<'a>,
    ) -> Result<ParquetItems<'a>> {
        let mut items = ParquetItems {
            unit: self,
            cx,
            pos: at.unwrap_or_default(),
            reader: None,
            batch: None,
            batch_row: 0,
            done: false,
            last: RowPosition::default(),
        };
        items.skip_empty_groups();
        Ok(items)
    }
}

/// The items of one Parquet file.
pub struct ParquetItems<'a> {
    unit: &'a ParquetFile,
    cx: &'a ReadContext<'a>,
    pos: RowPosition,
    reader: Option<ParquetRecordBatchReader>,
    batch: Option<RecordBatch>,
    batch_row: usize,
    done: bool,
    /// The row of the item handed out last.
    last: RowPosition,
}

/// The column at a dotted path of a batch (into struct columns).
fn column(batch: &RecordBatch, path: &str) -> Option<ArrayRef> {
    let mut parts = path.split('.');
    let mut col = Arc::clone(batch.column_by_name(parts.next()?)?);
    for p in parts {
        let s: &StructArray = col.as_struct_opt()?;
        col = Arc::clone(s.column_by_name(p)?);
    }
    Some(col)
}

/// A string (or, for ids, integer) cell; `None` when null or of another
/// type.
fn cell(col: Option<&ArrayRef>, row: usize, integers: bool) -> Option<String> {
    let col = col?;
    if col.is_null(row) {
        return None;
    }
    Some(match col.data_type() {
        DataType::Utf8 => col.as_string::<i32>().value(row).to_string(),
        DataType::LargeUtf8 => col.as_string::<i64>().value(row).to_string(),
        DataType::Utf8View => col.as_string_view().value(row).to_string(),
        DataType::Int64 if integers => col.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Int32 if integers => col.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int16 if integers => col.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::UInt64 if integers => col.as_primitive::<UInt64Type>().value(row).to_string(),
        DataType::UInt32 if integers => col.as_primitive::<UInt32Type>().value(row).to_string(),
        _ => return None,
    })
}

impl ParquetItems<'_> {
    /// Moves past row groups (from the current one) that have no rows left.
    fn skip_empty_groups(&mut self) {
        let groups = &self.unit.groups;
        while (self.pos.group as usize) < groups.len()
            && self.pos.row >= groups[self.pos.group as usize]
        {
            self.pos.group += 1;
            self.pos.row = 0;
            self.reader = None;
            self.batch = None;
        }
    }

    /// The page (or skip) of row `i` of the current batch.
    fn row_item(&self, batch: &RecordBatch, i: usize, at: RowPosition) -> Next {
        let path = &self.unit.path;
        let place = format!("row {} (row group {}, row {})", at.index, at.group, at.row);
        let f = &self.unit.fields;
        let text_col = column(batch, &f.text);
        let Some(mut text) = cell(text_col.as_ref(), i, false) else {
            let why = match &text_col {
                Some(c) if !c.is_null(i) => format!(
                    "the text column {:?} is of type {}, not a string",
                    f.text,
                    c.data_type()
                ),
                Some(_) => format!("no text: {:?} is null", f.text),
                None => format!("no text column {:?}", f.text),
            };
            return Next::Item(Item::skip(SkipKind::BadLine, path, &place, why));
        };
        let url = cell(column(batch, &f.url).as_ref(), i, false);
        let id = cell(column(batch, &f.id).as_ref(), i, true)
            .unwrap_or_else(|| format!("row-{}", at.index));
        let date = DATE_COLUMNS
            .iter()
            .find_map(|c| cell(column(batch, c).as_ref(), i, false))
            .unwrap_or_default();
        let max = self.cx.limits.record_bytes as usize;
        let len = text.len();
        let cut = len > max;
        if cut {
            let mut end = max;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        let mut next = document_page(
            &self.unit.base,
            DocRecord {
                path,
                place,
                url: url.as_deref(),
                id,
                date: &date,
                text: text.into_bytes(),
            },
        );
        if let (true, Next::Item(Item::Page(p))) = (cut, &mut next) {
            p.cuts.push((
                SkipKind::BlockCut,
                cut_detail("text", len as u64, &self.cx.limits, self.cx.settings),
            ));
        }
        next
    }
}

impl Reader for ParquetItems<'_> {
    type Resume = RowPosition;

    fn next(&mut self, _counts: &mut Counts) -> Result<Next> {
        if self.done {
            return Ok(Next::End);
        }
        if let Some(why) = &self.unit.broken {
            self.done = true;
            return Ok(Next::Item(Item::skip(
                SkipKind::Damaged,
                &self.unit.path,
                "footer",
                format!("not a readable Parquet file ({why}); nothing of it is read"),
            )));
        }
        loop {
            if (self.pos.group as usize) >= self.unit.groups.len() {
                self.done = true;
                return Ok(Next::End);
            }
            if let Some(batch) = &self.batch {
                if self.batch_row < batch.num_rows() {
                    let at = self.pos;
                    self.last = at;
                    let next = self.row_item(batch, self.batch_row, at);
                    self.batch_row += 1;
                    self.pos.row += 1;
                    self.pos.index += 1;
                    self.skip_empty_groups();
                    return Ok(next);
                }
                self.batch = None;
            }
            let reader = match &mut self.reader {
                Some(r) => r,
                None => match self.unit.open_group(self.pos.group, self.pos.row) {
                    Ok(r) => self.reader.insert(r),
                    Err(e) => return Ok(self.lose_group(&e)),
                },
            };
            match reader.next() {
                Some(Ok(b)) => {
                    self.batch = Some(b);
                    self.batch_row = 0;
                }
                Some(Err(e)) => return Ok(self.lose_group(&e.to_string())),
                // The group ended before its footer's row count.
                None => return Ok(self.lose_group("the row group ends early")),
            }
        }
    }

    fn resume_point(&self) -> RowPosition {
        self.pos
    }

    fn bytes_read(&self) -> u64 {
        let rows = self.unit.rows().max(1);
        (self.unit.bytes as u128 * u128::from(self.pos.index.min(rows)) / u128::from(rows)) as u64
    }

    fn at_end(&self) -> bool {
        self.done || (self.pos.group as usize) >= self.unit.groups.len()
    }
}

impl ParquetItems<'_> {
    /// The row of the page handed out last.
    pub fn last_row(&self) -> RowPosition {
        self.last
    }

    /// Skips the rest of the current row group (it cannot be read on):
    /// the next row group is read next.
    fn lose_group(&mut self, why: &str) -> Next {
        let groups = &self.unit.groups;
        let g = self.pos.group as usize;
        let left = groups[g] - self.pos.row;
        let place = format!(
            "row {} (row group {}, row {})",
            self.pos.index, self.pos.group, self.pos.row
        );
        self.pos.index += left;
        self.pos.row = groups[g];
        self.skip_empty_groups();
        self.reader = None;
        self.batch = None;
        Next::Item(Item::skip(
            SkipKind::Damaged,
            &self.unit.path,
            &place,
            format!("cannot read on ({why}); the {left} rows left in this row group are lost"),
        ))
    }
}

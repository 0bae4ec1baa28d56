//! Rows as an Apache Parquet file, through the Arrow crates: one Arrow field
//! per [`Column`] (u64 → UInt64, u32 → UInt32, f64 → Float64, f32 → Float32,
//! bool → Boolean, text → Utf8, none nullable), rows gathered into record
//! batches of at most [`BATCH_ROWS`] rows or [`BATCH_TEXT_BYTES`] of text,
//! each written as a row group, zstd-compressed.

use std::io::{self, Write};
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float32Builder, Float64Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::{Cell, Column, Sink, Type};

/// Most rows in a record batch (and row group).
pub const BATCH_ROWS: usize = 1 << 16;
/// Most bytes of text in a record batch (Utf8 offsets are 32-bit).
pub const BATCH_TEXT_BYTES: usize = 64 << 20;

enum Builder {
    U64(UInt64Builder),
    U32(UInt32Builder),
    F64(Float64Builder),
    F32(Float32Builder),
    Bool(BooleanBuilder),
    Str(StringBuilder),
}

impl Builder {
    fn new(ty: Type) -> Builder {
        match ty {
            Type::U64 => Builder::U64(UInt64Builder::new()),
            Type::U32 => Builder::U32(UInt32Builder::new()),
            Type::F64 => Builder::F64(Float64Builder::new()),
            Type::F32 => Builder::F32(Float32Builder::new()),
            Type::Bool => Builder::Bool(BooleanBuilder::new()),
            Type::Str => Builder::Str(StringBuilder::new()),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::U64(b) => Arc::new(b.finish()),
            Builder::U32(b) => Arc::new(b.finish()),
            Builder::F64(b) => Arc::new(b.finish()),
            Builder::F32(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::Str(b) => Arc::new(b.finish()),
        }
    }
}

fn data_type(ty: Type) -> DataType {
    match ty {
        Type::U64 => DataType::UInt64,
        Type::U32 => DataType::UInt32,
        Type::F64 => DataType::Float64,
        Type::F32 => DataType::Float32,
        Type::Bool => DataType::Boolean,
        Type::Str => DataType::Utf8,
    }
}

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("writing Parquet: {e}"))
}

/// A Parquet sink.
pub struct Parquet<W: Write + Send> {
    writer: ArrowWriter<W>,
    schema: SchemaRef,
    builders: Vec<Builder>,
    rows: usize,
    text_bytes: usize,
}

impl<W: Write + Send> Parquet<W> {
    /// A Parquet file of `columns` written to `out`.
    pub fn new(out: W, columns: &[Column]) -> io::Result<Parquet<W>> {
        let schema: SchemaRef = Arc::new(Schema::new(
            columns
                .iter()
                .map(|c| Field::new(c.name, data_type(c.ty), false))
                .collect::<Vec<_>>(),
        ));
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_created_by(format!("webmill {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(out, Arc::clone(&schema), Some(props)).map_err(other)?;
        Ok(Parquet {
            writer,
            schema,
            builders: columns.iter().map(|c| Builder::new(c.ty)).collect(),
            rows: 0,
            text_bytes: 0,
        })
    }

    fn flush_batch(&mut self) -> io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        let batch = RecordBatch::try_new(Arc::clone(&self.schema), arrays).map_err(other)?;
        self.writer.write(&batch).map_err(other)?;
        self.writer.flush().map_err(other)?;
        self.rows = 0;
        self.text_bytes = 0;
        Ok(())
    }
}

impl<W: Write + Send> Sink for Parquet<W> {
    fn row(&mut self, cells: &[Cell]) -> io::Result<()> {
        for (b, c) in self.builders.iter_mut().zip(cells) {
            match (b, *c) {
                (Builder::U64(b), Cell::U64(v)) => b.append_value(v),
                (Builder::U32(b), Cell::U32(v)) => b.append_value(v),
                (Builder::F64(b), Cell::F64(v)) => b.append_value(v),
                (Builder::F32(b), Cell::F32(v)) => b.append_value(v),
                (Builder::Bool(b), Cell::Bool(v)) => b.append_value(v),
                (Builder::Str(b), Cell::Str(v)) => {
                    self.text_bytes += v.len();
                    b.append_value(v)
                }
                (_, c) => {
                    return Err(io::Error::other(format!(
                        "a cell {c:?} does not match its column's type (a bug in webmill)"
                    )))
                }
            }
        }
        self.rows += 1;
        if self.rows >= BATCH_ROWS || self.text_bytes >= BATCH_TEXT_BYTES {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        self.flush_batch()?;
        let mut out = self.writer.into_inner().map_err(other)?;
        out.flush()
    }
}

//! Tables for other tools: `webmill export` writes every table through a
//! [`Sink`], as TSV (a `#` header line, then one row a line; text escaped as
//! [`webmill::tsv::escape`] does) or as Parquet ([`parquet`]). A table is
//! declared once, as its [`Column`]s; the column names and types are
//! specified in `formats/exports.md`.

pub mod parquet;

use std::io::{self, Write};

use webmill::tsv::escape;

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// Unsigned 64-bit integer (docIDs, counts).
    U64,
    /// Unsigned 32-bit integer.
    U32,
    /// 64-bit float (TSV: shortest exact scientific notation).
    F64,
    /// 32-bit float (TSV: four decimals).
    F32,
    /// Boolean (TSV: 1 or 0).
    Bool,
    /// UTF-8 text.
    Str,
}

/// A column: its name and type.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// Its name (the TSV header's, Parquet's field name).
    pub name: &'static str,
    /// Its type.
    pub ty: Type,
}

/// A column of `ty` named `name`.
pub const fn col(name: &'static str, ty: Type) -> Column {
    Column { name, ty }
}

/// One value of a row, of its column's type.
#[derive(Clone, Copy, Debug)]
pub enum Cell<'a> {
    U64(u64),
    U32(u32),
    F64(f64),
    F32(f32),
    Bool(bool),
    Str(&'a str),
}

/// Where rows go.
pub trait Sink {
    /// Writes one row (its cells in column order and of the columns' types).
    fn row(&mut self, cells: &[Cell]) -> io::Result<()>;
    /// Writes what is buffered and the end of the file.
    fn finish(self: Box<Self>) -> io::Result<()>;
}

/// Rows as TSV.
pub struct Tsv<W: Write> {
    out: W,
    line: String,
}

impl<W: Write> Tsv<W> {
    /// A TSV sink writing the header of `columns` to `out`.
    pub fn new(mut out: W, columns: &[Column]) -> io::Result<Tsv<W>> {
        let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
        writeln!(out, "# {}", names.join("\t"))?;
        Ok(Tsv {
            out,
            line: String::new(),
        })
    }
}

impl<W: Write> Sink for Tsv<W> {
    fn row(&mut self, cells: &[Cell]) -> io::Result<()> {
        use std::fmt::Write as _;
        self.line.clear();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                self.line.push('\t');
            }
            let _ = match c {
                Cell::U64(v) => write!(self.line, "{v}"),
                Cell::U32(v) => write!(self.line, "{v}"),
                Cell::F64(v) => write!(self.line, "{v:e}"),
                Cell::F32(v) => write!(self.line, "{v:.4}"),
                Cell::Bool(v) => write!(self.line, "{}", u8::from(*v)),
                Cell::Str(s) => write!(self.line, "{}", escape(s)),
            };
        }
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_rows_follow_the_column_types() {
        let cols = [
            col("a", Type::U64),
            col("b", Type::F64),
            col("c", Type::F32),
            col("d", Type::Bool),
            col("e", Type::Str),
        ];
        let mut out = Vec::new();
        let mut t = Box::new(Tsv::new(&mut out, &cols).unwrap());
        t.row(&[
            Cell::U64(7),
            Cell::F64(0.00125),
            Cell::F32(0.5),
            Cell::Bool(true),
            Cell::Str("x\ty"),
        ])
        .unwrap();
        t.finish().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "# a\tb\tc\td\te\n7\t1.25e-3\t0.5000\t1\tx\\ty\n"
        );
    }
}

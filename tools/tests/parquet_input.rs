//! Parquet document sets as input: the PostgreSQL pages' texts written as
//! Parquet (snappy, row groups of 100 rows, an extra column) give the same
//! pages as the same records in JSONL; a file without the text column is an
//! error naming the file and its columns; null texts, an unreadable file
//! and a damaged row group are skips with the rest kept; a run killed
//! mid-file resumes to the same bytes.

mod common;

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use common::*;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

/// Writes `docs` to `path` as Parquet rows `id, url, TEXT_COLUMN, date,
/// score`, `group_rows` rows a row group, snappy; the texts of the rows in
/// `nulls` are null.
fn write_parquet(path: &Path, docs: &[Doc], text_column: &str, group_rows: usize, nulls: &[usize]) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("url", DataType::Utf8, false),
        Field::new(text_column, DataType::Utf8, true),
        Field::new("date", DataType::Utf8, false),
        Field::new("score", DataType::Float64, false),
    ]));
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(group_rows))
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        Arc::clone(&schema),
        Some(props),
    )
    .unwrap();
    for (start, chunk) in docs.chunks(group_rows).enumerate() {
        let start = start * group_rows;
        let cols: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(
                (start..start + chunk.len()).map(|i| format!("pg-{i}")),
            )),
            Arc::new(StringArray::from_iter_values(
                chunk.iter().map(|d| d.0.clone()),
            )),
            Arc::new(StringArray::from_iter(chunk.iter().enumerate().map(
                |(i, d)| {
                    (!nulls.contains(&(start + i))).then(|| String::from_utf8(d.1.clone()).unwrap())
                },
            ))),
            Arc::new(StringArray::from_iter_values(
                chunk.iter().map(|_| "2024-02-29T12:00:00Z"),
            )),
            Arc::new(Float64Array::from_iter_values(
                (0..chunk.len()).map(|i| (start + i) as f64 / 7.0),
            )),
        ];
        w.write(&RecordBatch::try_new(Arc::clone(&schema), cols).unwrap())
            .unwrap();
    }
    w.close().unwrap();
}

/// The same records as JSONL lines.
fn write_jsonl(path: &Path, docs: &[Doc]) {
    let mut out = String::new();
    for (i, (url, text)) in docs.iter().enumerate() {
        let rec = serde_json::json!({
            "id": format!("pg-{i}"),
            "url": url,
            "text": String::from_utf8(text.clone()).unwrap(),
            "date": "2024-02-29T12:00:00Z",
        });
        out.push_str(&rec.to_string());
        out.push('\n');
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn parquet_rows_are_the_pages_the_same_jsonl_records_give() {
    let dir = tempfile::tempdir().unwrap();
    let Some(docs) = pg_texts(dir.path()) else {
        return;
    };
    let (pq, jl) = (dir.path().join("pg.parquet"), dir.path().join("pg.jsonl"));
    write_parquet(&pq, &docs, "text", 100, &[]);
    write_jsonl(&jl, &docs);
    let (a, b) = (
        dir.path().join("from-parquet"),
        dir.path().join("from-jsonl"),
    );
    succeeded(&ingest(&a, &pq, &[]));
    succeeded(&ingest(&b, &jl, &[]));
    let got = text_pages(&a);
    assert_eq!(got.len(), docs.len());
    assert!(
        got == text_pages(&b),
        "the Parquet pages differ from the JSONL ones"
    );
    for f in ["pages.wm", "text.wm", "repository.wm", "docs.wm"] {
        assert!(
            std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(),
            "{f} differs"
        );
    }
}

#[test]
fn a_parquet_file_without_the_text_column_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<Doc> = (0..10)
        .map(|i| {
            (
                format!("https://x.example/{i}"),
                format!("text {i}").into_bytes(),
            )
        })
        .collect();
    let pq = dir.path().join("content.parquet");
    write_parquet(&pq, &docs, "content", 4, &[]);
    let out = ingest(&dir.path().join("job"), &pq, &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("content.parquet")
            && err.contains(r#"without the text column "text""#)
            && err.contains("its columns: id, url, content, date, score"),
        "{err}"
    );
    // Named by the flag, it is read.
    let job = dir.path().join("named");
    succeeded(&ingest(&job, &pq, &["--text-field", "content"]));
    assert_eq!(text_pages(&job).len(), 10);
}

#[test]
fn null_texts_unreadable_files_and_damaged_row_groups_keep_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let Some(docs) = pg_texts(dir.path()) else {
        return;
    };
    let set = dir.path().join("set");
    std::fs::create_dir(&set).unwrap();
    // a.parquet: two null texts; b.parquet: not Parquet at its end.
    write_parquet(&set.join("a.parquet"), &docs[..300], "text", 100, &[5, 150]);
    write_parquet(&set.join("b.parquet"), &docs[300..400], "text", 100, &[]);
    let b = std::fs::read(set.join("b.parquet")).unwrap();
    std::fs::write(set.join("b.parquet"), &b[..b.len() - 20]).unwrap();
    let job = dir.path().join("job");
    let err = succeeded(&ingest(&job, &set, &[]));
    assert!(
        err.contains(r#"a.parquet: row 5 (row group 0, row 5): no text: "text" is null"#),
        "{err}"
    );
    assert!(
        err.contains("b.parquet: footer: not a readable Parquet file"),
        "{err}"
    );
    assert_eq!(text_pages(&job).len(), 298);
    assert!(!ingest(&dir.path().join("strict"), &set, &["--strict"])
        .status
        .success());
    // Bytes flipped in a row group's data: that group's rest is lost, the
    // others are read.
    let whole = dir.path().join("whole.parquet");
    write_parquet(&whole, &docs[..400], "text", 100, &[]);
    let mut bytes = std::fs::read(&whole).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 200] {
        *b ^= 0x5a;
    }
    let bad = dir.path().join("bad.parquet");
    std::fs::write(&bad, &bytes).unwrap();
    let job = dir.path().join("damaged");
    let err = succeeded(&ingest(&job, &bad, &[]));
    assert!(
        err.contains("bad.parquet: row ") && err.contains("rows left in this row group are lost"),
        "{err}"
    );
    let n = text_pages(&job).len();
    assert!((200..400).contains(&n), "{n} rows kept");
}

#[test]
fn parquet_ingest_killed_mid_file_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let Some(docs) = pg_texts(dir.path()) else {
        return;
    };
    let pq = dir.path().join("pg.parquet");
    write_parquet(&pq, &docs, "text", 100, &[]);
    assert_resumes_to_the_same_bytes(dir.path(), &pq, 17, TEXT_JOB_FILES);
}

/// Every row of a Parquet file.
fn read_rows(path: &Path) -> Vec<RecordBatch> {
    let r = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(path).unwrap(),
    )
    .unwrap()
    .with_batch_size(1)
    .build()
    .unwrap();
    r.map(Result::unwrap).collect()
}

#[test]
fn dataset_round_trip_kept_plus_removed_is_the_input_row_for_row() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut docs) = pg_texts(dir.path()) else {
        return;
    };
    // Exact copies (under other URLs) of every tenth text: later in input
    // order, so they are the ones removed.
    let copies: Vec<usize> = (0..docs.len()).step_by(10).collect();
    let n = docs.len();
    for &i in &copies {
        let (url, text) = docs[i].clone();
        docs.push((format!("{url}?copy"), text));
    }
    let set = dir.path().join("set.parquet");
    write_parquet(&set, &docs, "text", 100, &[7]);
    let job = dir.path().join("job");
    webmill_ok([
        "run".as_ref(),
        "-q".as_ref(),
        "--mem".as_ref(),
        "32M".as_ref(),
        "--dedup".as_ref(),
        "exact".as_ref(),
        "--no-index".as_ref(),
        "--out".as_ref(),
        job.as_os_str(),
        set.as_os_str(),
    ]);
    let (kept, removed) = (
        dir.path().join("kept.parquet"),
        dir.path().join("removed.parquet"),
    );
    webmill_ok([
        "export".as_ref(),
        "dataset".as_ref(),
        "--alg".as_ref(),
        "exact".as_ref(),
        "-o".as_ref(),
        kept.as_os_str(),
        "--removed".as_ref(),
        removed.as_os_str(),
        job.as_os_str(),
    ]);
    // Kept + removed = the input, row for row, each row with every column
    // as it was, each side in input order; row 7 (null text) never became
    // a page and is in neither.
    let input = read_rows(&set);
    let (k, r) = (read_rows(&kept), read_rows(&removed));
    assert_eq!(k.len() + r.len(), input.len() - 1);
    assert_eq!(k[0].schema(), input[0].schema());
    let (mut k, mut r) = (k.iter().peekable(), r.iter().peekable());
    let mut removed_ids = Vec::new();
    for (i, row) in input.iter().enumerate() {
        if i == 7 {
            continue;
        }
        if k.peek() == Some(&row) {
            k.next();
        } else {
            assert_eq!(
                r.next(),
                Some(row),
                "row {i} neither kept nor removed in order"
            );
            removed_ids.push(i);
        }
    }
    assert!(k.next().is_none() && r.next().is_none());
    for (c, &i) in copies.iter().enumerate() {
        assert!(removed_ids.contains(&(n + c)), "the copy of {i}");
    }
    // With --cluster, a last column: the cluster of rows in one.
    let with = dir.path().join("with.parquet");
    webmill_ok([
        "export".as_ref(),
        "dataset".as_ref(),
        "--cluster".as_ref(),
        "--alg".as_ref(),
        "exact".as_ref(),
        "-o".as_ref(),
        with.as_os_str(),
        job.as_os_str(),
    ]);
    let with = read_rows(&with);
    assert_eq!(with.len(), input.len() - 1 - removed_ids.len());
    let clustered = with
        .iter()
        .filter(|b| b.schema().field(5).name() == "cluster" && !b.column(5).is_null(0))
        .count();
    assert!(clustered >= copies.len(), "{clustered}");
}

//! The exchange tables of a distributed job (`formats/spark.md`): Parquet
//! files, not containers, in `formats/golden/spark/`, laid out as a job's
//! segments directory is:
//!
//! - `unit-000000/pages.parquet`, `unit-000000/links.parquet`: what `webmill
//!   shard ingest --unit 0 --segment-records 2` writes for the golden crawl
//!   (one unit: the crawl's WARC file, two segments). The Parquet writer of
//!   the pinned `parquet` crate is deterministic (no timestamps; the footer's
//!   `created_by` is `webmill VERSION`), so (b) today's writer must make the
//!   same bytes, and (a) the committed tables decode to the schemas and rows
//!   hard-coded here: a column added, renamed, retyped or reordered fails
//!   both.
//! - `shuffle/{docs,pagedoc,links,urls,edges,edges-t,anchors}/part-*.parquet`:
//!   what Spark's global steps (`spark/webmill_spark/shuffle.py`, two
//!   partitions, through `python -m webmill_spark.golden`) write from those
//!   unit tables, part files renamed without Spark's job UUID. Spark's
//!   writer is not byte-deterministic (its footer names Spark's build, its
//!   part names a job UUID), so `tools/tests/spark.rs` checks that Spark
//!   still writes these schemas and rows; here, (e) `webmill shard resolve
//!   --from` reads the committed ones into the resolve stage's golden files,
//!   and (a) their schemas are the ones hard-coded here.
//!
//! `WEBMILL_UPDATE_GOLDEN=1` rewrites the unit tables (the Spark tables:
//! `WEBMILL_UPDATE_GOLDEN=1 cargo test --release -p webmill-cli --test spark
//! golden`).

use std::fs::File;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, Int8Type};
use arrow_array::RecordBatch;
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use webmill::ingest::exchange;
use webmill::ingest::resolve_from::resolve_from;
use webmill::ingest::{ingest_unit, plan_units};

use super::*;

fn spark_golden() -> PathBuf {
    golden_dir().join("spark")
}

/// Each doc's URL's sort key (`formats/urls.md`), written out by hand.
const SORT_KEYS: [&str; 4] = [
    "com,example)/old",
    "jp,xn--r8jz45g)/",
    "org,example)/",
    "org,example)/menu",
];

/// The sort key of a URL of the crawl, from [`SORT_KEYS`].
fn key_of(url: &str) -> Vec<u8> {
    let i = CRAWL_DOCS
        .iter()
        .position(|d| d.0 == url)
        .unwrap_or_else(|| panic!("{url} is no doc of the crawl"));
    [SORT_KEYS[i].as_bytes(), b"\0", url.as_bytes()].concat()
}

fn fp_of(url: &str) -> i64 {
    let i = CRAWL_DOCS.iter().position(|d| d.0 == url).expect("a doc");
    FINGERPRINTS[i] as i64
}

/// A table's schema as (column, type, nullable).
type Columns = Vec<(&'static str, DataType, bool)>;

/// The schemas `formats/spark.md` gives the unit tables.
fn unit_columns(table: &str) -> Columns {
    use DataType::*;
    match table {
        "pages" => vec![
            ("unit", Int32, false),
            ("page", Int64, false),
            ("url", Utf8, false),
            ("key", Binary, false),
            ("bytes", Int64, false),
            ("title", Utf8, false),
            ("fp", Int64, false),
        ],
        _ => vec![
            ("unit", Int32, false),
            ("page", Int64, false),
            ("source_url", Utf8, false),
            ("target_url", Utf8, false),
            ("target_key", Binary, false),
            ("kind", Int8, false),
            ("anchor", Utf8, false),
            ("target_fp", Int64, false),
        ],
    }
}

/// The schemas of the tables Spark writes (`formats/spark.md`), with the
/// nullability Spark gives them.
fn shuffle_columns(table: &str) -> Columns {
    use DataType::*;
    match table {
        "docs" => vec![
            ("doc", Int64, false),
            ("key", Binary, false),
            ("host", Int64, false),
            ("page", Int64, true),
            ("bytes", Int64, true),
            ("title", Utf8, true),
            ("fp", Int64, false),
        ],
        "pagedoc" => vec![
            ("page", Int64, true),
            ("doc", Int64, true),
            ("first", Boolean, true),
        ],
        "links" => vec![
            ("page", Int64, true),
            ("source", Int64, true),
            ("target", Int64, true),
            ("kind", Int8, true),
            ("anchor", Utf8, true),
        ],
        "urls" => vec![("fp", Int64, true), ("doc", Int64, true)],
        "edges" => vec![("source", Int64, true), ("target", Int64, true)],
        "edges-t" => vec![("target", Int64, true), ("source", Int64, true)],
        _ => vec![
            ("target", Int64, true),
            ("source", Int64, true),
            ("kind", Int8, true),
            ("anchor", Utf8, true),
        ],
    }
}

const SHUFFLE_TABLES: [&str; 7] = [
    "docs", "pagedoc", "links", "urls", "edges", "edges-t", "anchors",
];

/// The Parquet file `path`'s schema (as columns) and its `webmill.*` metadata,
/// and its rows as one batch per row group.
fn read_parquet(path: &Path) -> (Columns, Vec<(String, String)>, Vec<RecordBatch>) {
    let file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let b = ParquetRecordBatchReaderBuilder::try_new(file).expect("a Parquet file");
    let schema = b.schema().clone();
    // The schema's metadata (Arrow's schema in the footer carries it).
    let mut meta: Vec<(String, String)> = schema
        .metadata()
        .iter()
        .filter(|(k, _)| k.starts_with("webmill."))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    meta.sort();
    let columns = schema
        .fields()
        .iter()
        .map(|f| {
            let name: &'static str = Box::leak(f.name().clone().into_boxed_str());
            (name, f.data_type().clone(), f.is_nullable())
        })
        .collect();
    let batches = b
        .build()
        .expect("a reader")
        .collect::<Result<Vec<_>, _>>()
        .expect("the rows");
    (columns, meta, batches)
}

fn webmill_meta(table: &str) -> Vec<(String, String)> {
    vec![
        ("webmill.table".into(), table.into()),
        ("webmill.version".into(), "2".into()),
    ]
}

/// The golden crawl's one unit ingested as a Spark task does it, into
/// `dir/segments/unit-000000/`.
fn ingest_crawl_unit(dir: &Path) -> PathBuf {
    let warc = dir.join("crawl.warc");
    fs::write(&warc, crawl_warc()).expect("write the WARC file");
    let opts = IngestOptions {
        inputs: vec![InputSpec::Warc(warc)],
        segment_records: SEGMENT_CAPTURES as u64,
        ..IngestOptions::default()
    };
    assert_eq!(plan_units(&opts).expect("plan").len(), 1);
    let seg = dir.join("segments");
    let report = ingest_unit(&opts, &Settings::new(64 << 20), 0, &seg).expect("ingest unit 0");
    assert_eq!(report.counts.pages, CRAWL.len() as u64);
    seg.join("unit-000000")
}

/// (b) `shard ingest` writes the golden unit tables byte for byte.
#[test]
fn unit_tables_reproduce_the_golden_files() {
    let update = std::env::var("WEBMILL_UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let tmp = tempfile::tempdir().expect("temp dir");
    let unit = ingest_crawl_unit(tmp.path());
    let golden = spark_golden().join("unit-000000");
    for name in [exchange::PAGES_TABLE, exchange::LINKS_TABLE] {
        let made = fs::read(unit.join(name)).expect("read the unit's table");
        let path = golden.join(name);
        if update {
            fs::create_dir_all(&golden).expect("create the golden directory");
            fs::write(&path, &made).expect("write the golden table");
            println!("updated {} ({} bytes)", path.display(), made.len());
            continue;
        }
        let old = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            made == old,
            "{}: today's writer makes different bytes ({} bytes, golden {}, first difference \
             at offset {}). A schema change is a new `webmill.version`: update formats/spark.md \
             and src/ingest/exchange.rs, then rerun with WEBMILL_UPDATE_GOLDEN=1 (a new crate \
             version changes `created_by` in the footer, and so the bytes, too)",
            path.display(),
            made.len(),
            old.len(),
            made.iter()
                .zip(&old)
                .position(|(a, b)| a != b)
                .unwrap_or(made.len().min(old.len()))
        );
    }
}

/// (a) The committed unit tables decode to the crawl's pages and links,
/// with the schemas of `formats/spark.md`.
#[test]
fn unit_golden_tables_decode() {
    let dir = spark_golden().join("unit-000000");
    let (columns, meta, batches) = read_parquet(&dir.join(exchange::PAGES_TABLE));
    assert_eq!(columns, unit_columns("pages"));
    assert_eq!(meta, webmill_meta("pages"));
    type PageRow = (i32, i64, String, Vec<u8>, i64, String, i64);
    let mut got: Vec<PageRow> = Vec::new();
    for b in &batches {
        for i in 0..b.num_rows() {
            got.push((
                b.column(0).as_primitive::<Int32Type>().value(i),
                b.column(1).as_primitive::<Int64Type>().value(i),
                b.column(2).as_string::<i32>().value(i).to_string(),
                b.column(3).as_binary::<i32>().value(i).to_vec(),
                b.column(4).as_primitive::<Int64Type>().value(i),
                b.column(5).as_string::<i32>().value(i).to_string(),
                b.column(6).as_primitive::<Int64Type>().value(i),
            ));
        }
    }
    let want: Vec<PageRow> = (0..)
        .zip(&CRAWL)
        .map(|(page, c)| {
            (
                0,
                page,
                c.url.to_string(),
                key_of(c.url),
                c.body.len() as i64,
                c.title.to_string(),
                fp_of(c.url),
            )
        })
        .collect();
    assert_eq!(got, want);

    let (columns, meta, batches) = read_parquet(&dir.join(exchange::LINKS_TABLE));
    assert_eq!(columns, unit_columns("links"));
    assert_eq!(meta, webmill_meta("links"));
    type LinkRow = (i32, i64, String, String, Vec<u8>, i8, String, i64);
    let mut got: Vec<LinkRow> = Vec::new();
    for b in &batches {
        for i in 0..b.num_rows() {
            got.push((
                b.column(0).as_primitive::<Int32Type>().value(i),
                b.column(1).as_primitive::<Int64Type>().value(i),
                b.column(2).as_string::<i32>().value(i).to_string(),
                b.column(3).as_string::<i32>().value(i).to_string(),
                b.column(4).as_binary::<i32>().value(i).to_vec(),
                b.column(5).as_primitive::<Int8Type>().value(i),
                b.column(6).as_string::<i32>().value(i).to_string(),
                b.column(7).as_primitive::<Int64Type>().value(i),
            ));
        }
    }
    let want: Vec<LinkRow> = (0..)
        .zip(&CRAWL)
        .flat_map(|(page, c)| {
            c.links.iter().map(move |&(kind, target, anchor)| {
                (
                    0,
                    page,
                    c.url.to_string(),
                    target.to_string(),
                    key_of(target),
                    kind as i8,
                    anchor.to_string(),
                    fp_of(target),
                )
            })
        })
        .collect();
    assert_eq!(got, want);
    assert!(
        want.iter().any(|r| r.5 == LinkKind::Redirect as i8) && want.iter().any(|r| r.7 < 0),
        "the crawl has a redirect and a fingerprint with its top bit set"
    );
}

/// (a) The committed Spark tables have the schemas `formats/spark.md` gives
/// them, and (e) `webmill shard resolve --from` reads them into the
/// resolve stage's golden files.
#[test]
fn shard_resolve_from_the_golden_spark_tables_writes_the_golden_files() {
    let shuffle = spark_golden().join("shuffle");
    for table in SHUFFLE_TABLES {
        let parts = exchange::parts(&shuffle.join(table)).expect("the table's parts");
        for part in &parts {
            let (columns, _, _) = read_parquet(part);
            assert_eq!(columns, shuffle_columns(table), "{}", part.display());
        }
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let warc = tmp.path().join("crawl.warc");
    fs::write(&warc, crawl_warc()).expect("write the WARC file");
    let mut job = Job::open(tmp.path().join("job"), true).expect("create the job");
    let s = Settings::new(64 << 20);
    let opts = IngestOptions {
        inputs: vec![InputSpec::Warc(warc)],
        segment_records: SEGMENT_CAPTURES as u64,
        ..IngestOptions::default()
    };
    ingest(&mut job, &opts, &s).unwrap_or_else(|e| panic!("ingest: {e}"));
    resolve_from(&mut job, &s, &shuffle).unwrap_or_else(|e| panic!("resolve --from: {e}"));
    for name in ["pagedoc.wm", "anchors.wm", "urls.wm"] {
        let made = fs::read(job.dir().join(name)).expect("read the job's file");
        let golden = fs::read(golden_path(name)).expect("read the golden file");
        assert!(made == golden, "{name} differs from the golden file");
    }
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).expect("open docs.wm");
    let got: Vec<Doc> = docs
        .iter()
        .map(|r| r.map(|(_, d)| d))
        .collect::<Result<_, _>>()
        .expect("docs");
    assert_eq!(got, crawl_docs());
    for (file, dir) in [
        (JobFile::Edges, Direction::Forward),
        (JobFile::EdgesT, Direction::Transposed),
    ] {
        let edges = EdgeFile::open(job.file(file).unwrap()).expect("open the edge file");
        let mut arcs = Vec::new();
        for list in edges.lists() {
            let (node, dsts) = list.expect("list");
            arcs.extend(dsts.into_iter().map(|d| match dir {
                Direction::Forward => (node, d),
                Direction::Transposed => (d, node),
            }));
        }
        arcs.sort_unstable();
        assert_eq!(arcs, CRAWL_ARCS, "{file:?}");
    }
}

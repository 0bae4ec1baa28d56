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
//! - `dedup/`: near-duplicate detection's tables, webmill's and Spark's, for
//!   a job of six near-duplicate pages (see the section at the end).
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

/// A value of one Parquet cell, read from an Arrow column.
trait Cell {
    fn at(column: &dyn arrow_array::Array, i: usize) -> Self;
}

impl Cell for i8 {
    fn at(column: &dyn arrow_array::Array, i: usize) -> Self {
        column.as_primitive::<Int8Type>().value(i)
    }
}

impl Cell for i32 {
    fn at(column: &dyn arrow_array::Array, i: usize) -> Self {
        column.as_primitive::<Int32Type>().value(i)
    }
}

impl Cell for i64 {
    fn at(column: &dyn arrow_array::Array, i: usize) -> Self {
        column.as_primitive::<Int64Type>().value(i)
    }
}

impl Cell for String {
    fn at(column: &dyn arrow_array::Array, i: usize) -> Self {
        column.as_string::<i32>().value(i).to_string()
    }
}

impl Cell for Vec<u8> {
    fn at(column: &dyn arrow_array::Array, i: usize) -> Self {
        column.as_binary::<i32>().value(i).to_vec()
    }
}

/// A row of the first columns of a batch, as a tuple of [`Cell`]s.
trait Row {
    fn at(batch: &RecordBatch, i: usize) -> Self;
}

macro_rules! row {
    ($($t:ident $n:tt),+) => {
        impl<$($t: Cell),+> Row for ($($t,)+) {
            fn at(batch: &RecordBatch, i: usize) -> Self {
                ($($t::at(batch.column($n).as_ref(), i),)+)
            }
        }
    };
}

row!(A 0, B 1);
row!(A 0, B 1, C 2, D 3);
row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// Every row of `batches`, in order.
fn rows<R: Row>(batches: &[RecordBatch]) -> Vec<R> {
    batches
        .iter()
        .flat_map(|b| (0..b.num_rows()).map(move |i| R::at(b, i)))
        .collect()
}

fn webmill_meta(table: &str) -> Vec<(String, String)> {
    vec![
        ("webmill.table".into(), table.into()),
        ("webmill.version".into(), "2".into()),
    ]
}

/// The batches of a table webmill wrote, after checking its columns and
/// its webmill metadata (`table`, the format version).
fn webmill_table(path: &Path, table: &str, columns: Columns) -> Vec<RecordBatch> {
    let (got, meta, batches) = read_parquet(path);
    assert_eq!(got, columns, "{}", path.display());
    assert_eq!(meta, webmill_meta(table), "{}", path.display());
    batches
}

/// The golden crawl's one unit ingested as a Spark task does it, into
/// `dir/segments/unit-000000/`.
fn ingest_crawl_unit(dir: &Path) -> PathBuf {
    let opts = crawl_options(dir).expect("write the crawl");
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
    let batches = webmill_table(
        &dir.join(exchange::PAGES_TABLE),
        "pages",
        unit_columns("pages"),
    );
    type PageRow = (i32, i64, String, Vec<u8>, i64, String, i64);
    let got: Vec<PageRow> = rows(&batches);
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

    let batches = webmill_table(
        &dir.join(exchange::LINKS_TABLE),
        "links",
        unit_columns("links"),
    );
    type LinkRow = (i32, i64, String, String, Vec<u8>, i8, String, i64);
    let got: Vec<LinkRow> = rows(&batches);
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
    let (mut job, s) = ingested_crawl(tmp.path()).unwrap_or_else(|e| panic!("ingest: {e}"));
    resolve_from(&mut job, &s, &shuffle).unwrap_or_else(|e| panic!("resolve --from: {e}"));
    for name in ["pagedoc.wm", "anchors.wm", "urls.wm"] {
        let made = fs::read(job.dir().join(name)).expect("read the job's file");
        let golden = fs::read(golden_path(name)).expect("read the golden file");
        assert!(made == golden, "{name} differs from the golden file");
    }
    assert_crawl_docs(&job);
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

// ---------------------------------------------------------------------------
// Near-duplicate detection's tables (`dedup/`, formats/spark.md), made from a
// job of six near-duplicate pages (the golden crawl has none), every
// algorithm, groups of more than `DEDUP_MAX_GROUP` docs capped:
//
// - `sketch/shard-000K/`: what `webmill shard dedup --step sketch --shard K
//   --shards 2` writes (keys, sketches, counts): (b) today's writer makes
//   the same bytes;
// - `ALG/candidates/`, `sketches/`, `groups.json`, `ends/`: what Spark's
//   steps (`dedup.py`, through `python -m webmill_spark.golden`) write from
//   the committed shards and verified parts (`tools/tests/spark.rs` checks
//   that Spark still writes these schemas and rows); here, (a) their
//   schemas, and the candidates against the grouping rule recomputed from
//   the committed keys;
// - `ALG/verified/`: what `--step verify` writes from the committed
//   candidates, (b) byte for byte;
// - (e) `--step finish` reads the committed tables into each `dedup-ALG`
//   stage's sketch, pair and cluster files, byte-identical to the
//   one-machine stage's on the same job.
//
// To remake them after a deliberate change, in this order:
// `WEBMILL_UPDATE_GOLDEN=1 cargo test --release --test golden dedup_sketch`,
// `WEBMILL_UPDATE_GOLDEN=1 cargo test --release -p webmill-cli --test spark
// golden`, `WEBMILL_UPDATE_GOLDEN=1 cargo test --release --test golden
// dedup_verify`, and the Spark one again (for `ends/`).

use webmill::dedup::exchange as dedup_exchange;
use webmill::dedup::stage::{dedup, DedupOptions};
use webmill::dedup::Alg;
use webmill::job::JobView;
use webmill::rank::{pagerank, PageRankOptions};

/// Page ranges of the sketch step.
const DEDUP_SHARDS: usize = 2;
/// The group cap (`spark/webmill_spark/golden.py`'s `MAX_GROUP`).
const DEDUP_MAX_GROUP: u64 = 2;
/// Each algorithm's keys per sketched page (formats/spark.md).
const KEYS_PER_PAGE: [(Alg, usize); 4] = [
    (Alg::Exact, 1),
    (Alg::Broder, 15),
    (Alg::Charikar, 13),
    (Alg::MinHash, 20),
];

fn dedup_golden() -> PathBuf {
    spark_golden().join("dedup")
}

fn near_options() -> DedupOptions {
    DedupOptions {
        algs: Alg::ALL.to_vec(),
        max_group: DEDUP_MAX_GROUP,
        ..DedupOptions::default()
    }
}

/// The pages (docs 0 to 5 in this order): a, b and d one text, c that text
/// with one word changed, e another text and f that one with one word
/// changed. So a, b, c and d share keys in groups over the cap (each paired
/// with a only), e and f in groups within it.
fn near_pages() -> Vec<(&'static str, String)> {
    let text = |prefix: &str, changed: Option<usize>| {
        (0..60)
            .map(|i| match changed {
                Some(c) if c == i => "changed".to_string(),
                _ => format!("{prefix}{}", (i * 31 + 7) % 101),
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    vec![
        ("a.html", text("w", None)),
        ("b.html", text("w", None)),
        ("c.html", text("w", Some(30))),
        ("d.html", text("w", None)),
        ("e.html", text("u", None)),
        ("f.html", text("u", Some(5))),
    ]
}

/// A job `dir/job` of [`near_pages`], ingested, resolved and ranked.
fn near_job(dir: &Path) -> (Job, Settings) {
    let site = dir.join("near");
    fs::create_dir_all(&site).expect("create the site");
    for (name, words) in near_pages() {
        let html =
            format!("<html><head><title>{name}</title></head><body><p>{words}</p></body></html>");
        fs::write(site.join(name), html).expect("write a page");
    }
    let opts = IngestOptions {
        inputs: vec![InputSpec::Dir {
            dir: site,
            base: "http://near.example/".into(),
        }],
        ..IngestOptions::default()
    };
    let mut job = Job::open(dir.join("job"), true).expect("a job");
    let s = Settings::new(64 << 20);
    ingest(&mut job, &opts, &s).expect("ingest");
    resolve(&mut job, &s).expect("resolve");
    pagerank(&mut job, &PageRankOptions::default(), &s).expect("pagerank");
    (job, s)
}

/// Every file under `dir`, as paths relative to it, sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.expect("an entry").path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(dir).expect("under dir").to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The files under `made` are those under `golden`, byte for byte; with
/// `WEBMILL_UPDATE_GOLDEN=1`, `golden` becomes a copy of `made`.
fn same_tree(made: &Path, golden: &Path) {
    let files = tree(made);
    if std::env::var("WEBMILL_UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        let _ = fs::remove_dir_all(golden);
        for f in &files {
            let to = golden.join(f);
            fs::create_dir_all(to.parent().unwrap()).expect("create the golden directory");
            fs::copy(made.join(f), &to).expect("write the golden table");
            println!("updated {}", to.display());
        }
        return;
    }
    assert_eq!(files, tree(golden), "the files under {}", golden.display());
    for f in &files {
        let (a, b) = (
            fs::read(made.join(f)).unwrap(),
            fs::read(golden.join(f)).unwrap(),
        );
        assert!(
            a == b,
            "{}: today's writer makes different bytes ({} bytes, golden {}). A schema change is a \
             new `webmill.version`: update formats/spark.md and src/dedup/exchange.rs, then remake \
             the tables (see tests/golden/exchange.rs)",
            golden.join(f).display(),
            a.len(),
            b.len()
        );
    }
}

/// The (int64, int64) rows of columns `x` and `y` of the table `path`
/// (a file, or a directory of part files in name order).
fn pairs_of(path: &Path, x: usize, y: usize) -> Vec<(i64, i64)> {
    let files = if path.is_dir() {
        exchange::parts(path).expect("the table's parts")
    } else {
        vec![path.to_path_buf()]
    };
    let mut out = Vec::new();
    for f in files {
        for b in read_parquet(&f).2 {
            let (a, c) = (b.column(x).as_ref(), b.column(y).as_ref());
            out.extend((0..b.num_rows()).map(|i| (i64::at(a, i), i64::at(c, i))));
        }
    }
    out
}

/// (b) The sketch step writes the golden sketch shards byte for byte, and
/// (a) they hold each algorithm's keys for every page of its range.
#[test]
fn dedup_sketch_tables_reproduce_the_golden_files() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (job, s) = near_job(tmp.path());
    let view = JobView::open(job.dir()).expect("the job");
    let out = tmp.path().join("dedup");
    for k in 0..DEDUP_SHARDS {
        let r = dedup_exchange::sketch(&view, &out, k, DEDUP_SHARDS, &near_options(), &s)
            .expect("sketch");
        assert!(r.published && r.sketched == 3, "{r:?}");
    }
    same_tree(&out.join("sketch"), &dedup_golden().join("sketch"));
    for k in 0..DEDUP_SHARDS {
        let shard = dedup_golden().join(format!("sketch/shard-{k:04}"));
        for (alg, per_page) in KEYS_PER_PAGE {
            let keys = shard.join(format!("keys-{}.parquet", alg.name()));
            let key_doc = vec![
                ("key", DataType::Int64, false),
                ("doc", DataType::Int64, false),
            ];
            webmill_table(&keys, "dedup-keys", key_doc);
            let mut docs: Vec<i64> = pairs_of(&keys, 0, 1).into_iter().map(|r| r.1).collect();
            docs.dedup();
            let range: Vec<i64> = (3 * k as i64..3 * k as i64 + 3).collect();
            assert_eq!(docs, range, "{}", keys.display());
            assert_eq!(
                pairs_of(&keys, 0, 1).len(),
                3 * per_page,
                "{}",
                keys.display()
            );
            let sketches = shard.join(format!("sketches-{}.parquet", alg.name()));
            let doc_sketch = vec![
                ("doc", DataType::Int64, false),
                ("sketch", DataType::Binary, false),
            ];
            let batches = webmill_table(&sketches, "dedup-sketches", doc_sketch);
            let docs: Vec<i64> = batches
                .iter()
                .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
                .collect();
            assert_eq!(docs, range, "{}", sketches.display());
        }
    }
}

/// (a) Spark's tables have the schemas formats/spark.md gives them, and
/// the candidates are the grouping rule's pairs of the committed keys
/// (every pair of a key's docs, or beyond the cap each doc with the
/// group's smallest), with both docs' sketches.
#[test]
fn dedup_spark_golden_tables_follow_the_grouping_rule() {
    use std::collections::{BTreeMap, BTreeSet};
    let golden = dedup_golden();
    let mut capped_somewhere = false;
    for alg in Alg::ALL {
        let dir = golden.join(alg.name());
        let mut groups: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
        let mut sketches = BTreeMap::new();
        for k in 0..DEDUP_SHARDS {
            let shard = golden.join(format!("sketch/shard-{k:04}"));
            for (key, doc) in pairs_of(&shard.join(format!("keys-{}.parquet", alg.name())), 0, 1) {
                groups.entry(key).or_default().insert(doc);
            }
            let table = shard.join(format!("sketches-{}.parquet", alg.name()));
            sketches.extend(rows::<(i64, Vec<u8>)>(&read_parquet(&table).2));
        }
        let mut want = BTreeSet::new();
        for docs in groups.values().filter(|d| d.len() >= 2) {
            let d: Vec<i64> = docs.iter().copied().collect();
            if d.len() as u64 > DEDUP_MAX_GROUP {
                capped_somewhere = true;
                want.extend(d[1..].iter().map(|&x| (d[0], x)));
            } else {
                want.extend(
                    d.iter()
                        .enumerate()
                        .flat_map(|(i, &x)| d[i + 1..].iter().map(move |&y| (x, y))),
                );
            }
        }
        let cand = dir.join("candidates");
        let mut got = Vec::new();
        for part in exchange::parts(&cand).expect("the candidates' parts") {
            let (columns, _, batches) = read_parquet(&part);
            use DataType::*;
            assert_eq!(
                columns,
                vec![
                    ("a", Int64, true),
                    ("b", Int64, true),
                    ("sketch_a", Binary, true),
                    ("sketch_b", Binary, true)
                ],
                "{}",
                part.display()
            );
            for (x, y, sx, sy) in rows::<(i64, i64, Vec<u8>, Vec<u8>)>(&batches) {
                assert_eq!(sx, sketches[&x]);
                assert_eq!(sy, sketches[&y]);
                got.push((x, y));
            }
        }
        assert!(!got.is_empty(), "{}: no candidates", alg.name());
        assert_eq!(
            got,
            want.into_iter().collect::<Vec<_>>(),
            "{}",
            cand.display()
        );
        for part in exchange::parts(&dir.join("sketches")).expect("the sketches' parts") {
            use DataType::*;
            assert_eq!(
                read_parquet(&part).0,
                vec![("doc", Int64, true), ("sketch", Binary, true)]
            );
        }
        let by_doc: Vec<i64> = pairs_of(&dir.join("sketches"), 0, 0)
            .into_iter()
            .map(|r| r.0)
            .collect();
        assert_eq!(by_doc, sketches.keys().copied().collect::<Vec<_>>());
        // The ends: each doc of a verified pair with its number of pairs.
        let mut count: BTreeMap<i64, i64> = BTreeMap::new();
        for (x, y) in pairs_of(&dir.join("verified"), 0, 1) {
            *count.entry(x).or_default() += 1;
            *count.entry(y).or_default() += 1;
        }
        for part in exchange::parts(&dir.join("ends")).expect("the ends' parts") {
            use DataType::*;
            assert_eq!(
                read_parquet(&part).0,
                vec![("doc", Int64, true), ("pairs", Int64, false)]
            );
        }
        assert_eq!(
            pairs_of(&dir.join("ends"), 0, 1),
            count.into_iter().collect::<Vec<_>>()
        );
    }
    assert!(capped_somewhere, "no group over the cap");
}

/// (b) The verify step, fed the committed candidates, writes the committed
/// verified parts byte for byte.
#[test]
fn dedup_verify_of_the_golden_candidates_reproduces_the_golden_files() {
    let tmp = tempfile::tempdir().expect("temp dir");
    for alg in Alg::ALL {
        let golden = dedup_golden().join(alg.name());
        let dir = tmp.path().join(alg.name());
        let cand = dir.join("candidates");
        fs::create_dir_all(&cand).expect("create the table");
        let parts = exchange::parts(&golden.join("candidates")).expect("the candidates' parts");
        for p in &parts {
            fs::copy(p, cand.join(p.file_name().unwrap())).expect("copy a part");
        }
        let mut verified = 0;
        for i in 0..parts.len() {
            let r = dedup_exchange::verify(tmp.path(), alg, i, &near_options()).expect("verify");
            verified += r.verified;
        }
        assert!(verified > 0, "{}: no pair verified", alg.name());
        same_tree(&dir.join("verified"), &golden.join("verified"));
        for part in exchange::parts(&golden.join("verified")).expect("the verified parts") {
            use DataType::*;
            let pair = vec![
                ("a", Int64, false),
                ("b", Int64, false),
                ("similarity", Float32, false),
            ];
            webmill_table(&part, "dedup-verified", pair);
        }
    }
}

/// (e) `--step finish` reads the committed tables into every `dedup-ALG`
/// stage's files, byte-identical to the one-machine stage's.
#[test]
fn dedup_finish_from_the_golden_tables_writes_the_stage_files() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (mut from, s) = near_job(&tmp.path().join("from"));
    dedup_exchange::dedup_from(&mut from, &near_options(), &s, &dedup_golden())
        .unwrap_or_else(|e| panic!("finish from the golden tables: {e}"));
    let (mut local, s) = near_job(&tmp.path().join("local"));
    dedup(&mut local, &near_options(), &s).expect("the one-machine stages");
    for alg in Alg::ALL {
        for file in [
            JobFile::Sketches(alg),
            JobFile::Pairs(alg),
            JobFile::Clusters(alg),
        ] {
            let a = fs::read(from.file(file).unwrap()).expect("read the file");
            let b = fs::read(local.file(file).unwrap()).expect("read the file");
            assert!(a == b, "{file:?} differs from the one-machine stage's");
        }
    }
}

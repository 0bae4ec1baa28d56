//! Near-duplicate detection as a distributed job's steps (`webmill shard
//! dedup`, run by `spark/webmill_spark/dedup.py`): the same `dedup-ALG`
//! stages, with the same files byte for byte, as [`super::stage`] makes on
//! one machine, but the sketch pass runs a task per page range on the
//! executors, the key groups, candidate pairs and their joins with the
//! sketches are Spark shuffles, the verification runs a task per candidate
//! part on the executors, and the driver only streams sorted tables into the
//! stage's files. The tables (Parquet; spec in `formats/spark.md`), under a
//! directory `DIR` every node reads:
//!
//! | step | where | writes |
//! |---|---|---|
//! | [`sketch`] shard K of N | executor | `sketch/shard-K/keys-ALG.parquet` (`key`, `doc`), `sketches-ALG.parquet` (`doc`, `sketch`) |
//! | group, pair, join | Spark | `ALG/sketches/` by doc, `ALG/candidates/` (`a`, `b`, `sketch_a`, `sketch_b`) by (a, b), `ALG/groups.json` |
//! | [`verify`] part I | executor | `ALG/verified/part-I.parquet` (`a`, `b`, `similarity`) |
//! | count the ends | Spark | `ALG/ends/` (`doc`, `pairs`) by doc |
//! | [`dedup_from`] | driver | the stage's sketch, pair and cluster files and plot |
//!
//! A per-task step writes under an attempt name of its own and publishes by
//! one rename (the first attempt to finish wins), so Spark's retries and a
//! killed executor cost only that task. The driver's step checks every
//! table's order and refuses one out of order or inconsistent with another
//! (the ends against the pairs by an order-independent checksum), naming
//! the file and row: union-find and the cluster file then stream over the
//! sorted verified pairs as on one machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow_array::builder::{BinaryBuilder, Float32Builder, Int64Builder};
use arrow_array::ArrayRef;
use arrow_schema::{DataType, SchemaRef};
use serde::{Deserialize, Serialize};

use crate::container::pagefile::PageFile;
use crate::dedup::files::{open_sketches, parse_tail, PairWriter};
use crate::dedup::options::DedupOptions;
use crate::dedup::sketchers::Sketchers;
use crate::dedup::stage::{
    check_options, plot, sketch_pages, ClusterTail, Dedup, DedupFigures, DedupParams, DocsInPairs,
    SketchFileWriter,
};
use crate::dedup::Alg;
use crate::docs::DocTable;
use crate::error::{Error, IoContext, Result};
use crate::index::shards::{attempt_dir, plan, publish};
use crate::ingest::exchange::{
    field, for_each_batch, for_each_batch_of, parts, schema, TableWriter,
};
use crate::job::{
    phase, share, Figure, Job, JobFile, JobView, Outcome, Phase, Settings, Stage, StageContext,
    StageId,
};
use crate::rank::RankVector;

/// The directory of the sketch step's shards under `DIR`.
pub const SKETCH_DIR: &str = "sketch";
/// The group counts Spark leaves in `DIR/ALG/`.
pub const GROUPS: &str = "groups.json";

/// Rows per batch handed to a table writer.
const BATCH_ROWS: usize = 8192;

/// The schema of a shard's `keys-ALG.parquet`: `key` (int64, the key's
/// bits), `doc` (int64).
pub fn keys_schema() -> SchemaRef {
    schema(
        "dedup-keys",
        vec![
            field("key", DataType::Int64, false),
            field("doc", DataType::Int64, false),
        ],
    )
}

/// The schema of a shard's `sketches-ALG.parquet`: `doc` (int64), `sketch`
/// (binary: the sketch file's record after the host, `formats/dedup.md`).
pub fn sketches_schema() -> SchemaRef {
    schema(
        "dedup-sketches",
        vec![
            field("doc", DataType::Int64, false),
            field("sketch", DataType::Binary, false),
        ],
    )
}

/// The schema of a verified part: `a`, `b` (int64, a < b), `similarity`
/// (float32, what the pair file records).
pub fn verified_schema() -> SchemaRef {
    schema(
        "dedup-verified",
        vec![
            field("a", DataType::Int64, false),
            field("b", DataType::Int64, false),
            field("similarity", DataType::Float32, false),
        ],
    )
}

fn shard_dir(dir: &Path, k: usize) -> PathBuf {
    dir.join(SKETCH_DIR).join(format!("shard-{k:04}"))
}

fn alg_dir(dir: &Path, alg: Alg) -> PathBuf {
    dir.join(alg.name())
}

fn as_i64(v: u64) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::internal(format!("{v} does not fit an int64")))
}

/// What the sketch step did (one JSON line of `webmill shard dedup`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SketchReport {
    /// The step.
    pub step: String,
    /// The shard.
    pub shard: usize,
    /// Its pages.
    pub first_page: u64,
    /// One past its last page.
    pub end_page: u64,
    /// Pages sketched (docs' own captures with a token stream).
    pub sketched: u64,
    /// Key rows per algorithm.
    pub keys: BTreeMap<String, u64>,
    /// Each algorithm's stage parameters (the group cap Spark applies).
    pub params: BTreeMap<String, DedupParams>,
    /// This attempt published the result (`false`: another had already).
    pub published: bool,
    /// Seconds the step took.
    pub seconds: f64,
}

/// The algorithms of `opts`, sorted and distinct, checked.
fn algs(opts: &DedupOptions) -> Result<Vec<Alg>> {
    if opts.algs.is_empty() {
        return Err(Error::usage("dedup needs at least one --alg"));
    }
    check_options(opts)?;
    let mut algs = opts.algs.clone();
    algs.sort();
    algs.dedup();
    Ok(algs)
}

/// The sketch step of shard `k` of `n` (page ranges of equal size): each
/// of its pages sketched for every algorithm of `opts`, the keys and
/// sketches written as `DIR/sketch/shard-K/`.
pub fn sketch(
    job: &JobView,
    dir: &Path,
    k: usize,
    n: usize,
    opts: &DedupOptions,
    _s: &Settings,
) -> Result<SketchReport> {
    let t = Instant::now();
    let algs = algs(opts)?;
    let text = job.file(JobFile::Text)?;
    let pagedoc = job.file(JobFile::PageDoc)?;
    let pages = PageFile::open(&pagedoc, &crate::ingest::records::PAGEDOC)?.records();
    let range = plan(pages, n)?.get(k).cloned().ok_or_else(|| {
        Error::usage(format!(
            "shard {k} does not exist: there are {n} (0 to {})",
            n - 1
        ))
    })?;
    let mut report = SketchReport {
        step: "sketch".into(),
        shard: k,
        first_page: range.start,
        end_page: range.end,
        ..SketchReport::default()
    };
    for &alg in &algs {
        let st = Dedup {
            alg,
            opts: opts.clone(),
        };
        report.params.insert(alg.name().into(), st.params()?);
    }
    let target = shard_dir(dir, k);
    let counts = target.join("counts.json");
    if !target.exists() {
        let parent = dir.join(SKETCH_DIR);
        std::fs::create_dir_all(&parent).at(&parent)?;
        let attempt = attempt_dir(&parent, "sketch", k);
        let run = (|| -> Result<(u64, BTreeMap<String, u64>)> {
            std::fs::create_dir_all(&attempt).at(&attempt)?;
            let sketchers = Sketchers::new(opts)?;
            let mut writers = Vec::new();
            for &alg in &algs {
                writers.push(AlgWriters::create(&attempt, alg)?);
            }
            let sketched = sketch_pages(
                &text,
                &pagedoc,
                range.clone(),
                &sketchers,
                &algs,
                |doc, outs| {
                    for (w, out) in writers.iter_mut().zip(outs) {
                        w.push(doc, &out.keys, &out.record)?;
                    }
                    Ok(())
                },
                |_| {},
            )?;
            let mut keys = BTreeMap::new();
            for (w, alg) in writers.into_iter().zip(&algs) {
                keys.insert(alg.name().to_string(), w.finish()?);
            }
            let c = serde_json::json!({"sketched": sketched, "keys": keys});
            crate::publish::write_atomic(attempt.join("counts.json"), c.to_string().as_bytes())?;
            Ok((sketched, keys))
        })();
        if let Err(e) = run {
            let _ = std::fs::remove_dir_all(&attempt);
            return Err(e);
        }
        report.published = publish(&attempt, &target)?;
    }
    // The published shard's counts (this attempt's or an earlier one's).
    let c: serde_json::Value = serde_json::from_slice(&std::fs::read(&counts).at(&counts)?)
        .map_err(|e| Error::usage_at(&counts, e.to_string()))?;
    report.sketched = c["sketched"].as_u64().unwrap_or(0);
    if let Some(keys) = c["keys"].as_object() {
        for (alg, v) in keys {
            report.keys.insert(alg.clone(), v.as_u64().unwrap_or(0));
        }
    }
    report.seconds = t.elapsed().as_secs_f64();
    Ok(report)
}

/// One algorithm's two tables of a sketch shard being written.
struct AlgWriters {
    keys: TableWriter,
    sketches: TableWriter,
    key: Int64Builder,
    key_doc: Int64Builder,
    key_rows: usize,
    doc: Int64Builder,
    sketch: BinaryBuilder,
    sketch_rows: usize,
}

impl AlgWriters {
    fn create(dir: &Path, alg: Alg) -> Result<AlgWriters> {
        Ok(AlgWriters {
            keys: TableWriter::create(
                dir.join(format!("keys-{}.parquet", alg.name())),
                keys_schema(),
            )?,
            sketches: TableWriter::create(
                dir.join(format!("sketches-{}.parquet", alg.name())),
                sketches_schema(),
            )?,
            key: Int64Builder::new(),
            key_doc: Int64Builder::new(),
            key_rows: 0,
            doc: Int64Builder::new(),
            sketch: BinaryBuilder::new(),
            sketch_rows: 0,
        })
    }

    fn push(&mut self, doc: u64, keys: &[u64], record: &[u8]) -> Result<()> {
        let d = as_i64(doc)?;
        for &k in keys {
            self.key.append_value(k as i64);
            self.key_doc.append_value(d);
            self.key_rows += 1;
        }
        if self.key_rows >= BATCH_ROWS {
            self.flush_keys()?;
        }
        if !record.is_empty() {
            self.doc.append_value(d);
            self.sketch.append_value(record);
            self.sketch_rows += 1;
            if self.sketch_rows >= BATCH_ROWS {
                self.flush_sketches()?;
            }
        }
        Ok(())
    }

    fn flush_keys(&mut self) -> Result<()> {
        self.key_rows = 0;
        let cols: Vec<ArrayRef> =
            vec![Arc::new(self.key.finish()), Arc::new(self.key_doc.finish())];
        self.keys.write(cols)
    }

    fn flush_sketches(&mut self) -> Result<()> {
        self.sketch_rows = 0;
        let cols: Vec<ArrayRef> = vec![Arc::new(self.doc.finish()), Arc::new(self.sketch.finish())];
        self.sketches.write(cols)
    }

    /// Finishes both tables; returns the key rows.
    fn finish(mut self) -> Result<u64> {
        if self.key_rows > 0 {
            self.flush_keys()?;
        }
        if self.sketch_rows > 0 {
            self.flush_sketches()?;
        }
        self.sketches.finish()?;
        self.keys.finish()
    }
}

/// What the verification step did (one JSON line of `webmill shard dedup`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// The step.
    pub step: String,
    /// The algorithm.
    pub alg: String,
    /// The candidate part (its place among `ALG/candidates/`'s part files).
    pub part: usize,
    /// Candidates read.
    pub candidates: u64,
    /// Pairs that passed.
    pub verified: u64,
    /// This attempt published the result (`false`: another had already).
    pub published: bool,
    /// Seconds the step took.
    pub seconds: f64,
}

/// The verification of candidate part `part` of `alg` (the `part`-th file
/// of `DIR/ALG/candidates/` in name order): each pair kept when the
/// algorithm says similar, exactly as [`super::stage`] decides, written
/// in the same order as `DIR/ALG/verified/part-PPPPP.parquet`.
pub fn verify(dir: &Path, alg: Alg, part: usize, opts: &DedupOptions) -> Result<VerifyReport> {
    let t = Instant::now();
    let opts = DedupOptions {
        algs: vec![alg],
        ..opts.clone()
    };
    check_options(&opts)?;
    let sketchers = Sketchers::new(&opts)?;
    let with_set = sketchers.set_shingler(alg).is_some();
    let cands = alg_dir(dir, alg).join("candidates");
    let all = parts(&cands)?;
    let src = all.get(part).ok_or_else(|| {
        Error::usage_at(
            &cands,
            format!("no part {part}: it has {} part files", all.len()),
        )
    })?;
    let out = alg_dir(dir, alg).join("verified");
    std::fs::create_dir_all(&out).at(&out)?;
    let target = out.join(format!("part-{part:05}.parquet"));
    let mut report = VerifyReport {
        step: "verify".into(),
        alg: alg.name().into(),
        part,
        ..VerifyReport::default()
    };
    if !target.exists() {
        let attempt = attempt_dir(&out, "verify", part);
        let run = (|| -> Result<()> {
            let mut w = TableWriter::create(attempt.clone(), verified_schema())?;
            let (mut ca, mut cb, mut cs) = (
                Int64Builder::new(),
                Int64Builder::new(),
                Float32Builder::new(),
            );
            let mut rows = 0usize;
            let mut last: Option<(u64, u64)> = None;
            for_each_batch_of(src, None, |b| {
                let a = b.i64s("a", true)?;
                let bb = b.i64s("b", true)?;
                let sa = b.binary("sketch_a")?;
                let sb = b.binary("sketch_b")?;
                for i in 0..b.rows() {
                    let (x, y) = (a[i].unwrap_or_default(), bb[i].unwrap_or_default());
                    if x >= y {
                        return Err(b.bad(i, format!("pair ({x}, {y}) is not a < b")));
                    }
                    if last.is_some_and(|l| l >= (x, y)) {
                        return Err(b.bad(
                            i,
                            format!("pair ({x}, {y}) is not above the previous row's"),
                        ));
                    }
                    last = Some((x, y));
                    report.candidates += 1;
                    let ra = parse_tail(&mut sa.value(i), with_set, true)
                        .map_err(|e| b.bad(i, format!("sketch_a: {e}")))?;
                    let rb = parse_tail(&mut sb.value(i), with_set, true)
                        .map_err(|e| b.bad(i, format!("sketch_b: {e}")))?;
                    if let Some(sim) = sketchers.verify(alg, ra, rb) {
                        ca.append_value(as_i64(x)?);
                        cb.append_value(as_i64(y)?);
                        cs.append_value(sim);
                        rows += 1;
                        report.verified += 1;
                        if rows >= BATCH_ROWS {
                            rows = 0;
                            w.write(vec![
                                Arc::new(ca.finish()),
                                Arc::new(cb.finish()),
                                Arc::new(cs.finish()),
                            ])?;
                        }
                    }
                }
                Ok(())
            })?;
            if rows > 0 {
                w.write(vec![
                    Arc::new(ca.finish()),
                    Arc::new(cb.finish()),
                    Arc::new(cs.finish()),
                ])?;
            }
            w.finish()?;
            Ok(())
        })();
        if let Err(e) = run {
            let _ = std::fs::remove_file(&attempt);
            return Err(e);
        }
        report.published = publish_file(&attempt, &target)?;
    }
    report.seconds = t.elapsed().as_secs_f64();
    Ok(report)
}

/// Moves the file `attempt` to `target` unless another attempt got there
/// first (then removes `attempt`); returns whether this one published.
fn publish_file(attempt: &Path, target: &Path) -> Result<bool> {
    if target.exists() {
        std::fs::remove_file(attempt).at(attempt)?;
        return Ok(false);
    }
    // A hard link fails when the target exists: the first attempt wins.
    match std::fs::hard_link(attempt, target) {
        Ok(()) => {
            std::fs::remove_file(attempt).at(attempt)?;
            Ok(true)
        }
        Err(_) if target.exists() => {
            std::fs::remove_file(attempt).at(attempt)?;
            Ok(false)
        }
        Err(_) => {
            std::fs::rename(attempt, target).at(target)?;
            Ok(true)
        }
    }
}

/// The counts Spark's grouping leaves in `DIR/ALG/groups.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GroupFile {
    /// Pages sketched (the sketch shards' sum).
    pub sketched: u64,
    /// Groups of two or more docs sharing a key.
    pub groups: u64,
    /// Groups over the cap.
    pub capped: u64,
    /// Candidate pairs emitted, before deduplication.
    pub candidates: u64,
    /// The group cap applied.
    pub max_group: u64,
}

/// The `dedup-ALG` stage from the tables under `from` (see the module doc).
pub struct DedupFrom {
    /// The algorithm.
    pub alg: Alg,
    /// The options.
    pub opts: DedupOptions,
    /// The directory holding the tables.
    pub from: PathBuf,
}

impl DedupFrom {
    fn local(&self) -> Dedup {
        Dedup {
            alg: self.alg,
            opts: self.opts.clone(),
        }
    }
}

/// Memory: the union-find over the docs in pairs, and their hosts.
const SHARES: &[Phase] = &[phase("docs in pairs", &[share("union-find", 0.8)])];

impl Stage for DedupFrom {
    type Params = DedupParams;
    type Figures = DedupFigures;

    fn id(&self) -> StageId {
        StageId::Dedup(self.alg)
    }

    fn params(&self) -> Result<DedupParams> {
        self.local().params()
    }

    fn inputs(&self) -> Vec<JobFile> {
        self.local().inputs()
    }

    fn optional_inputs(&self) -> Vec<JobFile> {
        self.local().optional_inputs()
    }

    fn outputs(&self) -> Vec<JobFile> {
        self.local().outputs()
    }

    fn records(f: &DedupFigures) -> u64 {
        Dedup::records(f)
    }

    fn shares(&self) -> &'static [Phase] {
        SHARES
    }

    fn headline(&self, f: &DedupFigures) -> String {
        self.local().headline(f)
    }

    fn stats(&self, f: &DedupFigures) -> Vec<Figure> {
        self.local().stats(f)
    }

    fn run(&self, cx: &mut StageContext) -> Result<DedupFigures> {
        run_from(cx, self)
    }
}

/// Runs (or skips) the `dedup-ALG` stages of `opts.algs` from the tables
/// under `from` (see [`DedupFrom`]), one after the other.
pub fn dedup_from(
    job: &mut Job,
    opts: &DedupOptions,
    s: &Settings,
    from: &Path,
) -> Result<Vec<(Alg, Outcome<DedupFigures>)>> {
    let mut out = Vec::new();
    for alg in algs(opts)? {
        let st = DedupFrom {
            alg,
            opts: opts.clone(),
            from: from.to_path_buf(),
        };
        out.push((alg, job.run(&st, s)?));
    }
    Ok(out)
}

/// An order-independent checksum's term for a doc (as the ends' counts and
/// the pairs' two ends sum it).
fn mix(doc: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&doc.to_le_bytes())
}

fn run_from(cx: &StageContext, st: &DedupFrom) -> Result<DedupFigures> {
    let alg = st.alg;
    let dir = alg_dir(&st.from, alg);
    let params = st.params()?;
    let groups_path = dir.join(GROUPS);
    let g: GroupFile = serde_json::from_slice(&std::fs::read(&groups_path).at(&groups_path)?)
        .map_err(|e| Error::usage_at(&groups_path, format!("not the group counts: {e}")))?;
    if g.max_group != params.max_group {
        return Err(Error::usage_at(
            &groups_path,
            format!(
                "groups capped at {} docs where the stage caps them at {} (--max-group)",
                g.max_group, params.max_group
            ),
        ));
    }
    let sketchers = Sketchers::new(&DedupOptions {
        algs: vec![alg],
        ..st.opts.clone()
    })?;
    let set_k = sketchers.set_shingler(alg).map(|sh| sh.k() as u64);
    let with_set = set_k.is_some();
    let docs = DocTable::open(cx.input(JobFile::Docs)?)?;
    let n_docs = docs.len();

    // The sketch file, from `sketches/` by docID.
    let sketch_path = cx.output(JobFile::Sketches(alg))?;
    {
        let table = dir.join("sketches");
        let mut w = SketchFileWriter::create(&sketch_path, alg, set_k, &docs)?;
        let mut last: Option<u64> = None;
        for_each_batch(&table, None, |b| {
            let doc = b.i64s("doc", true)?;
            let sketch = b.binary("sketch")?;
            for (i, d) in doc.iter().enumerate() {
                let d = d.unwrap_or_default();
                if last.is_some_and(|l| l >= d) {
                    return Err(b.bad(i, format!("docID {d} is not above the previous row's")));
                }
                if d >= n_docs {
                    return Err(b.bad(i, format!("docID {d} beyond the {n_docs} docs")));
                }
                last = Some(d);
                // A well-formed record: sketch [, shingle set], nothing after.
                let mut rec = sketch.value(i);
                parse_tail(&mut rec, with_set, true).map_err(|e| b.bad(i, e.to_string()))?;
                if !rec.is_empty() {
                    return Err(b.bad(i, format!("{} bytes after the sketch", rec.len())));
                }
                w.push(d, sketch.value(i))?;
            }
            Ok(())
        })?;
        w.finish()?;
    }
    let (sketch_file, _) = open_sketches(&sketch_path)?;

    // The docs in pairs with their counts, and their hosts.
    let ranks = cx
        .optional_input(JobFile::Ranks)?
        .map(RankVector::open)
        .transpose()?;
    let mut in_pairs = DocsInPairs::new(cx, ranks.is_some(), 8)?;
    let mut hosts = Vec::new();
    let (mut ends_sum, mut ends_total) = (0u64, 0u64);
    let ends = dir.join("ends");
    {
        let mut walk = docs.walk();
        let mut last: Option<u64> = None;
        for_each_batch(&ends, None, |b| {
            let doc = b.i64s("doc", true)?;
            let pairs = b.i64s("pairs", true)?;
            for i in 0..b.rows() {
                let (d, k) = (doc[i].unwrap_or_default(), pairs[i].unwrap_or_default());
                if last.is_some_and(|l| l >= d) {
                    return Err(b.bad(i, format!("docID {d} is not above the previous row's")));
                }
                if d >= n_docs {
                    return Err(b.bad(i, format!("docID {d} beyond the {n_docs} docs")));
                }
                if k == 0 {
                    return Err(b.bad(i, format!("doc {d} in 0 pairs")));
                }
                last = Some(d);
                if in_pairs.push(d, k) {
                    hosts.push(walk.get(d)?.host);
                }
                ends_sum = ends_sum.wrapping_add(mix(d).wrapping_mul(k));
                ends_total = ends_total.wrapping_add(k);
            }
            Ok(())
        })?;
    }
    let mut uf = in_pairs.union_find()?;

    // The pairs file from `verified/`, in (a, b) order; union-find beside.
    let verified = dir.join("verified");
    let pairs_path = cx.output(JobFile::Pairs(alg))?;
    let mut w = PairWriter::create(&pairs_path)?;
    let (mut pairs_sum, mut same_host) = (0u64, 0u64);
    {
        let mut last: Option<(u64, u64)> = None;
        for_each_batch(&verified, None, |b| {
            let a = b.i64s("a", true)?;
            let bb = b.i64s("b", true)?;
            let sim = b.f32s("similarity")?;
            for i in 0..b.rows() {
                let (x, y, s) = (a[i].unwrap_or_default(), bb[i].unwrap_or_default(), sim[i]);
                if x >= y {
                    return Err(b.bad(i, format!("pair ({x}, {y}) is not a < b")));
                }
                if last.is_some_and(|l| l >= (x, y)) {
                    return Err(b.bad(
                        i,
                        format!("pair ({x}, {y}) is not above the previous row's (a, b)"),
                    ));
                }
                if !(0.0..=1.0).contains(&s) {
                    return Err(b.bad(i, format!("similarity {s} outside [0, 1]")));
                }
                last = Some((x, y));
                let (px, py) = match (uf.position(x), uf.position(y)) {
                    (Ok(px), Ok(py)) => (px, py),
                    _ => {
                        return Err(b.bad(
                            i,
                            format!("pair ({x}, {y}): a doc that ends/ does not list"),
                        ))
                    }
                };
                same_host += u64::from(hosts[px as usize] == hosts[py as usize]);
                uf.union(x, y)?;
                w.push(x, y, s)?;
                pairs_sum = pairs_sum.wrapping_add(mix(x)).wrapping_add(mix(y));
            }
            Ok(())
        })?;
    }
    let n_pairs = w.finish(alg.name())?;
    if pairs_sum != ends_sum || ends_total != n_pairs.wrapping_mul(2) {
        return Err(Error::usage_at(
            &ends,
            format!(
                "its counts ({ends_total} pair ends) are not those of the {n_pairs} pairs of verified/"
            ),
        ));
    }
    let tail = ClusterTail::write(cx, alg, &docs, &mut uf, ranks.as_ref())?;
    plot(cx, alg, &in_pairs.dist)?;
    Ok(DedupFigures {
        verify: matches!(alg, Alg::Broder | Alg::MinHash).then(|| st.opts.verify.name().into()),
        sketch_file_bytes: sketch_file.container().size(),
        docs_sketched: g.sketched,
        groups: g.groups,
        capped_groups: g.capped,
        candidates: g.candidates,
        verified: n_pairs,
        pairs: n_pairs,
        same_host_pairs: same_host,
        cross_host_pairs: n_pairs - same_host.min(n_pairs),
        clusters: tail.clusters,
        docs_in_clusters: tail.docs,
        largest_clusters: tail.largest,
        near_duplicates_per_page: in_pairs.dist.into_iter().collect(),
        plot: JobFile::DedupPlot(alg).name(),
        keep: tail.keep.into(),
    })
}

//! A document-partitioned index: the collection cut into docID ranges, each
//! *shard* a complete index of its documents (Henzinger et al., *Challenges
//! in Web Search Engines*, §4: "subindexes"), built one task per shard (on
//! Spark's executors, see `spark/`) and searched together by
//! [`crate::search::Searcher`], which runs a query on every shard and merges
//! their top k.
//!
//! ```text
//! job's text.wm, pagedoc.wm, docs.wm, anchors.wm
//!   ─ split (per task J, optional) ─► DIR/split-J/text-K.wm  its run of text.wm's blocks,
//!                                                              each shard K's pages apart
//!   ─ forward (per shard K, docIDs first..end) ─► DIR/fwd-K/   pass 1, plan, forward barrels,
//!                                                              field lengths of its docs
//!                                        (its text: the split-J/text-K.wm joined, else text.wm)
//!   ─ gather (once)  ─► DIR/fieldlens.wm   the collection's field lengths (every shard's range)
//!   ─ sort (per shard K) ─► DIR/shard-K/index/  lexicon, barrels (block bounds from the
//!                                              collection's averages), fieldlens.wm
//!   ─ finish (once)  ─► DIR/shards.wm      the shard manifest (`formats/shards.md`)
//! ```
//!
//! A shard keeps the job's docIDs (nothing is renumbered), so its postings,
//! scores and ties are the single index's for the same documents. What a
//! score needs beyond the document is the collection's: the number of
//! documents (the job's doc table), each word's document frequency (the sum
//! of the shards' lexicon counts, the shards being disjoint: summed when a
//! query looks the word up), the average field lengths and every
//! document's lengths (`DIR/fieldlens.wm`, beside each shard's barrels as
//! its `fieldlens.wm`), and PageRank (the job's). So each shard scores a
//! document exactly as the single index does, and its barrels' block
//! bounds are the single index's bounds for its documents.
//!
//! Each per-shard step works under an attempt directory of its own and
//! publishes it by one rename (the first attempt to finish wins; a later
//! one discards its copy), so a retried or speculative task is harmless;
//! `sort` starts from hard links to the published forward step (a copy
//! where links are refused).

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::fieldlens::{FieldLengths, FieldLengthsWriter};
use super::{barrel_file, build_part, textsplit, Index, IndexOptions, Stem, Until};
use crate::container::{BlockCodec, Container, ContainerWriter, FileKind};
use crate::error::{Error, IoContext, Result};
use crate::job::{JobFile, JobView, Settings, Stage, StageContext, StagePaths};

/// The shard manifest's file name in a sharded index's directory.
pub const MANIFEST: &str = "shards.wm";
/// The collection's field lengths in a sharded index's directory.
pub const LENGTHS: &str = "fieldlens.wm";
/// Most shards.
pub const MAX_SHARDS: usize = 4096;

/// The shard manifest's kind.
pub const SHARDS: FileKind = FileKind {
    tag: "shards",
    version: 1,
    what: "a document-partitioned index's shards: their docID ranges and directories (outside the job's manifest)",
    verify: |path| ShardSet::open_manifest(path).map(drop),
    dump: |path, out| {
        let s = ShardSet::open_manifest(path)?;
        writeln!(out, "# shard\tfirst\tend\tdir").at("stdout")?;
        for (k, e) in s.shards.iter().enumerate() {
            writeln!(out, "{k}\t{}\t{}\t{}", e.first, e.end, e.dir).at("stdout")?;
        }
        Ok(())
    },
};

/// A manifest record: `first u64 | end u64 | name length u16 | name`.
fn encode_entries(entries: &[ShardEntry]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in entries {
        out.extend_from_slice(&e.first.to_le_bytes());
        out.extend_from_slice(&e.end.to_le_bytes());
        out.extend_from_slice(&(e.dir.len() as u16).to_le_bytes());
        out.extend_from_slice(e.dir.as_bytes());
    }
    out
}

fn decode_entries(path: &Path, block_offset: u64, raw: &[u8], n: u64) -> Result<Vec<ShardEntry>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    let bad = |at: usize, what: &str| {
        Error::corrupt(
            path,
            "shard record",
            block_offset + at as u64,
            what.to_string(),
        )
    };
    while at < raw.len() {
        let fixed = raw
            .get(at..at + 18)
            .ok_or_else(|| bad(at, "record cut short"))?;
        let first = u64::from_le_bytes(fixed[0..8].try_into().unwrap_or_default());
        let end = u64::from_le_bytes(fixed[8..16].try_into().unwrap_or_default());
        let len = usize::from(u16::from_le_bytes([fixed[16], fixed[17]]));
        let name = raw
            .get(at + 18..at + 18 + len)
            .ok_or_else(|| bad(at, "directory name cut short"))?;
        let dir = std::str::from_utf8(name)
            .map_err(|_| bad(at, "directory name is not UTF-8"))?
            .to_string();
        out.push(ShardEntry { dir, first, end });
        at += 18 + len;
    }
    if out.len() as u64 != n {
        return Err(bad(
            0,
            &format!("{} records, the block says {n}", out.len()),
        ));
    }
    Ok(out)
}

/// Where a job's sharded index lives unless told otherwise.
pub fn default_dir(job: &Path) -> PathBuf {
    job.join("shards")
}

/// One shard in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardEntry {
    /// Its directory, relative to the manifest's.
    pub dir: String,
    /// Its first docID.
    pub first: u64,
    /// One past its last docID.
    pub end: u64,
}

/// The manifest's header parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardParams {
    /// Documents of the collection.
    pub docs: u64,
    /// Barrels per shard.
    pub barrels: u32,
    /// How words are stemmed (every shard alike).
    pub stem: Stem,
}

/// The docID ranges of `n` shards of `docs` documents: consecutive, as
/// equal as integers allow.
pub fn plan(docs: u64, n: usize) -> Result<Vec<Range<u64>>> {
    if n == 0 || n > MAX_SHARDS {
        return Err(Error::usage(format!(
            "--shards must be in 1..={MAX_SHARDS}, got {n}"
        )));
    }
    let n = n as u64;
    let cut = |k: u64| ((u128::from(docs) * u128::from(k)) / u128::from(n)) as u64;
    Ok((0..n).map(|k| cut(k)..cut(k + 1)).collect())
}

fn shard_name(k: usize) -> String {
    format!("shard-{k:04}")
}

fn forward_dir(dir: &Path, k: usize) -> PathBuf {
    dir.join(format!("fwd-{k:04}"))
}

pub(crate) fn attempt_dir(dir: &Path, what: &str, k: usize) -> PathBuf {
    dir.join(format!(
        ".attempt-{what}-{k:04}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ))
}

/// What a per-shard step did (one JSON line of `webmill shard index`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// The step.
    pub step: String,
    /// The shard.
    pub shard: usize,
    /// Its docIDs.
    pub first: u64,
    /// One past its last docID.
    pub end: u64,
    /// This attempt published the result (`false`: another had already).
    pub published: bool,
    /// Seconds the step took.
    pub seconds: f64,
}

impl StepReport {
    /// The report of `step` begun on shard `k` of `n`: its docIDs, from
    /// the job's doc table.
    fn begin(job: &JobView, step: &str, k: usize, n: usize) -> Result<StepReport> {
        let range = shard_range(doc_count(job)?, k, n)?;
        Ok(StepReport {
            step: step.into(),
            shard: k,
            first: range.start,
            end: range.end,
            ..StepReport::default()
        })
    }
}

/// The index stage's inputs in `job`.
fn inputs(job: &JobView) -> Result<BTreeMap<JobFile, PathBuf>> {
    let stage = Index {
        opts: IndexOptions::default(),
    };
    stage
        .inputs()
        .into_iter()
        .map(|f| Ok((f, job.file(f)?)))
        .collect()
}

fn doc_count(job: &JobView) -> Result<u64> {
    Ok(crate::docs::DocTable::open(job.file(JobFile::Docs)?)?.len())
}

/// Moves `attempt` to `target` unless another attempt got there first
/// (then removes `attempt`); returns whether this one published.
pub(crate) fn publish(attempt: &Path, target: &Path) -> Result<bool> {
    if target.exists() {
        std::fs::remove_dir_all(attempt).at(attempt)?;
        return Ok(false);
    }
    match std::fs::rename(attempt, target) {
        Ok(()) => Ok(true),
        Err(_) if target.exists() => {
            std::fs::remove_dir_all(attempt).at(attempt)?;
            Ok(false)
        }
        Err(e) => Err(e).at(target),
    }
}

/// Step 0, task `j` of `n` (optional): the `j`-th run of the job's text
/// blocks split by shard, published as `dir/split-J/` (see
/// [`super::textsplit`]); once all `n` are, each shard's forward step reads
/// only its own documents' text. The report's `first..end` are the pages
/// the task read.
pub fn split(job: &JobView, dir: &Path, j: usize, n: usize, s: &Settings) -> Result<StepReport> {
    let t = Instant::now();
    let docs = doc_count(job)?;
    let ranges = plan(docs, n)?;
    if j >= n {
        return Err(Error::usage(format!(
            "split task {j} does not exist: there are {n} (0 to {})",
            n - 1
        )));
    }
    let text = job.file(JobFile::Text)?;
    let mut report = StepReport {
        step: "split".into(),
        shard: j,
        ..StepReport::default()
    };
    {
        let c = crate::container::pagefile::PageFile::open(&text, &crate::ingest::records::TEXT)?;
        let blocks = textsplit::task_blocks(c.container().blocks().len(), j, n);
        let key = |b: usize| {
            c.container()
                .blocks()
                .get(b)
                .and_then(|e| <[u8; 8]>::try_from(e.key.as_slice()).ok())
                .map(u64::from_be_bytes)
        };
        report.first = key(blocks.start).unwrap_or(0);
        report.end = key(blocks.end).map_or(report.first.max(c.records()), |p| p);
    }
    let target = dir.join(textsplit::split_name(j));
    if !target.exists() && !dir.join(MANIFEST).exists() {
        std::fs::create_dir_all(dir).at(dir)?;
        let attempt = attempt_dir(dir, "split", j);
        let run = textsplit::split(
            &text,
            &job.file(JobFile::PageDoc)?,
            &ranges,
            j,
            n,
            s.mem,
            &attempt,
        );
        if let Err(e) = run.and_then(|_| crate::publish::sync_dir(&attempt)) {
            let _ = std::fs::remove_dir_all(&attempt);
            return Err(e);
        }
        report.published = publish(&attempt, &target)?;
    }
    report.seconds = t.elapsed().as_secs_f64();
    Ok(report)
}

/// Whether the split step's `n` tasks are all published under `dir`.
fn split_done(dir: &Path, n: usize) -> bool {
    (0..n).all(|j| dir.join(textsplit::split_name(j)).is_dir())
}

/// Step 1 of shard `k` of `n`: pass 1, the plan and the forward pass over
/// its documents, with their field lengths, published as `dir/fwd-K/`.
/// After the split step, it reads only its documents' text (joined from the
/// split tasks' files); without it, the whole `text.wm`.
pub fn forward(
    job: &JobView,
    dir: &Path,
    k: usize,
    n: usize,
    opts: &IndexOptions,
    s: &Settings,
) -> Result<StepReport> {
    let t = Instant::now();
    let mut report = StepReport::begin(job, "forward", k, n)?;
    let range = report.first..report.end;
    let target = forward_dir(dir, k);
    if !target.exists() && !dir.join(shard_name(k)).exists() {
        std::fs::create_dir_all(dir).at(dir)?;
        let attempt = attempt_dir(dir, "fwd", k);
        let run = (|| {
            let mut files = inputs(job)?;
            let joined = attempt.join(JobFile::Text.name());
            if split_done(dir, n) {
                std::fs::create_dir_all(&attempt).at(&attempt)?;
                textsplit::join(dir, k, n, &joined)?;
                files.insert(JobFile::Text, joined.clone());
            }
            let cx = context(files, &attempt, opts, s)?;
            build_part(&cx, opts, Some(range.clone()), Until::Forward, None)?;
            // The sort step reads no text.
            if joined.exists() {
                std::fs::remove_file(&joined).at(&joined)?;
            }
            Ok(())
        })();
        if let Err(e) = run {
            let _ = std::fs::remove_dir_all(&attempt);
            return Err(e);
        }
        report.published = publish(&attempt, &target)?;
    }
    report.seconds = t.elapsed().as_secs_f64();
    Ok(report)
}

fn context(
    inputs: BTreeMap<JobFile, PathBuf>,
    attempt: &Path,
    opts: &IndexOptions,
    s: &Settings,
) -> Result<StageContext> {
    StageContext::detached(
        &Index { opts: opts.clone() },
        s,
        StagePaths {
            inputs,
            outputs: attempt.join("out"),
            tmp: attempt.join("tmp"),
        },
    )
}

fn shard_range(docs: u64, k: usize, n: usize) -> Result<Range<u64>> {
    plan(docs, n)?.get(k).cloned().ok_or_else(|| {
        Error::usage(format!(
            "shard {k} does not exist: there are {n} (0 to {})",
            n - 1
        ))
    })
}

/// Step 2, once every shard's forward step is published: the collection's
/// field lengths `dir/fieldlens.wm`, each docID's from the shard holding it.
pub fn gather(job: &JobView, dir: &Path, n: usize) -> Result<()> {
    let docs = doc_count(job)?;
    let out = dir.join(LENGTHS);
    if FieldLengths::open(&out).is_ok_and(|f| f.docs() == docs) {
        return Ok(());
    }
    let tmp = dir.join(format!(".{LENGTHS}.{}", std::process::id()));
    let mut w = FieldLengthsWriter::create(&tmp, docs)?;
    for (k, range) in plan(docs, n)?.into_iter().enumerate() {
        let path = forward_dir(dir, k)
            .join("out")
            .join(JobFile::FieldLengths.name());
        let f = FieldLengths::open(&path)?;
        if f.docs() != docs {
            return Err(Error::corrupt(
                &path,
                "header parameters",
                0,
                format!("{} docs, the job has {docs}", f.docs()),
            ));
        }
        let first_block = (range.start as usize) / super::fieldlens::BLOCK_DOCS;
        let mut doc = (first_block * super::fieldlens::BLOCK_DOCS) as u64;
        'blocks: for b in first_block.. {
            if doc >= range.end {
                break;
            }
            for r in f.block(b)? {
                if doc >= range.end {
                    break 'blocks;
                }
                if doc >= range.start {
                    w.push(&r)?;
                }
                doc += 1;
            }
        }
    }
    w.finish()?;
    std::fs::rename(&tmp, &out).at(&out)
}

/// Hard links (copies where refused) every file under `from` into `to`.
fn link_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).at(to)?;
    for e in std::fs::read_dir(from).at(from)? {
        let e = e.at(from)?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().at(&src)?.is_dir() {
            link_tree(&src, &dst)?;
        } else if std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst).at(&dst)?;
        }
    }
    Ok(())
}

/// Step 3 of shard `k`: its barrel sorts and lexicon, the block bounds
/// from the collection's field lengths (step 2), published as
/// `dir/shard-K/` (the index files under their job names, `index/…`).
pub fn sort(
    job: &JobView,
    dir: &Path,
    k: usize,
    n: usize,
    opts: &IndexOptions,
    s: &Settings,
) -> Result<(StepReport, Option<super::IndexSummary>)> {
    let t = Instant::now();
    let mut report = StepReport::begin(job, "sort", k, n)?;
    let target = dir.join(shard_name(k));
    let mut summary = None;
    if !target.exists() {
        let attempt = attempt_dir(dir, "sort", k);
        let run = (|| {
            let fwd = forward_dir(dir, k);
            if !fwd.is_dir() {
                return Err(Error::usage(format!(
                    "shard {k}'s forward step is not published ({} is missing): run `shard index --step forward --shard {k}` first",
                    fwd.display()
                )));
            }
            link_tree(&fwd, &attempt)?;
            let lengths = attempt.join("out").join(JobFile::FieldLengths.name());
            std::fs::remove_file(&lengths).at(&lengths)?;
            let global = dir.join(LENGTHS);
            if std::fs::hard_link(&global, &lengths).is_err() {
                std::fs::copy(&global, &lengths).at(&lengths)?;
            }
            let cx = context(inputs(job)?, &attempt, opts, s)?;
            let sum = build_part(&cx, opts, None, Until::End, None)?;
            let tmp = attempt.join("tmp");
            std::fs::remove_dir_all(&tmp).at(&tmp)?;
            Ok(sum)
        })();
        match run {
            Ok(sum) => summary = Some(sum),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&attempt);
                return Err(e);
            }
        }
        let out = attempt.join("out");
        report.published = publish(&out, &target)?;
        std::fs::remove_dir_all(&attempt).at(&attempt)?;
    }
    report.seconds = t.elapsed().as_secs_f64();
    Ok((report, summary))
}

/// Step 4, once every shard is published: the manifest `dir/shards.wm`
/// (written last, so a reader finds either no sharded index or a whole
/// one), then the forward steps' directories are removed.
pub fn finish(job: &JobView, dir: &Path, n: usize, opts: &IndexOptions) -> Result<ShardSet> {
    let docs = doc_count(job)?;
    let mut shards = Vec::with_capacity(n);
    for (k, r) in plan(docs, n)?.into_iter().enumerate() {
        let name = shard_name(k);
        if !dir.join(&name).is_dir() {
            return Err(Error::usage(format!(
                "shard {k} is not published ({} is missing)",
                dir.join(&name).display()
            )));
        }
        shards.push(ShardEntry {
            dir: name,
            first: r.start,
            end: r.end,
        });
    }
    let params = ShardParams {
        docs,
        barrels: opts.barrels,
        stem: opts.stem,
    };
    write_manifest(&dir.join(MANIFEST), &params, &shards)?;
    for k in 0..n {
        for f in [forward_dir(dir, k), dir.join(textsplit::split_name(k))] {
            if f.exists() {
                std::fs::remove_dir_all(&f).at(&f)?;
            }
        }
    }
    ShardSet::open(dir)
}

/// Writes a shard manifest (through a temporary file and a rename).
pub fn write_manifest(path: &Path, params: &ShardParams, shards: &[ShardEntry]) -> Result<()> {
    let value = serde_json::to_value(params).map_err(|e| Error::internal(e.to_string()))?;
    let tmp = path.with_extension("wm.tmp");
    let mut w = ContainerWriter::create(&tmp, SHARDS.tag, SHARDS.version, &value)?;
    let first = shards.first().map_or(0, |e| e.first);
    w.write_block(
        BlockCodec::Raw,
        &first.to_be_bytes(),
        shards.len() as u64,
        &encode_entries(shards),
    )?;
    w.finish(&json!({ "shards": shards.len() }))?;
    std::fs::rename(&tmp, path).at(path)
}

/// Every step on this machine, one shard after another: the sharded index
/// of `job` in `dir` (what a Spark run does with a task per shard).
pub fn build_all(
    job: &JobView,
    dir: &Path,
    n: usize,
    opts: &IndexOptions,
    s: &Settings,
) -> Result<ShardSet> {
    plan(doc_count(job)?, n)?;
    for j in 0..n {
        split(job, dir, j, n, s)?;
    }
    for k in 0..n {
        forward(job, dir, k, n, opts, s)?;
    }
    gather(job, dir, n)?;
    for k in 0..n {
        sort(job, dir, k, n, opts, s)?;
    }
    finish(job, dir, n, opts)
}

/// A sharded index, opened (its manifest read).
#[derive(Clone, Debug)]
pub struct ShardSet {
    dir: PathBuf,
    params: ShardParams,
    shards: Vec<ShardEntry>,
}

impl ShardSet {
    /// Opens the sharded index in `dir` (its `shards.wm`).
    pub fn open(dir: &Path) -> Result<ShardSet> {
        ShardSet::open_manifest(&dir.join(MANIFEST))
    }

    /// Opens a shard manifest and checks what it says: shards in docID
    /// order, consecutive, covering the collection.
    pub fn open_manifest(path: &Path) -> Result<ShardSet> {
        let c = SHARDS.open(path)?;
        let params: ShardParams = c.params_as()?;
        let mut shards = Vec::new();
        let mut check = |_: usize, e: &crate::container::BlockEntry, raw: &[u8]| {
            shards.extend(decode_entries(path, e.offset, raw, e.records)?);
            Ok(())
        };
        c.verify(&mut check)?;
        let bad = |what: String| Error::corrupt(path, "shard records", 0, what);
        let mut next = 0;
        for (k, e) in shards.iter().enumerate() {
            if e.first != next || e.end < e.first {
                return Err(bad(format!(
                    "shard {k} holds docIDs {}..{}, expected to start at {next}",
                    e.first, e.end
                )));
            }
            if e.dir.is_empty() || e.dir.contains(['/', '\\']) || e.dir.starts_with('.') {
                return Err(bad(format!(
                    "shard {k}'s directory {:?} is not a name",
                    e.dir
                )));
            }
            next = e.end;
        }
        if next != params.docs || shards.is_empty() {
            return Err(bad(format!(
                "the shards cover docIDs 0..{next}, the collection has {}",
                params.docs
            )));
        }
        if params.docs > u64::from(u32::MAX) {
            return Err(bad(format!("{} docs: docIDs are below 2³²", params.docs)));
        }
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        Ok(ShardSet {
            dir,
            params,
            shards,
        })
    }

    /// The sharded index of `job` in its default place, if there is one.
    pub fn find(job: &Path) -> Result<Option<ShardSet>> {
        let dir = default_dir(job);
        if dir.join(MANIFEST).exists() {
            ShardSet::open(&dir).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest's parameters.
    pub fn params(&self) -> &ShardParams {
        &self.params
    }

    /// Shards.
    pub fn len(&self) -> usize {
        self.shards.len()
    }

    /// Never: a manifest has at least one shard.
    pub fn is_empty(&self) -> bool {
        self.shards.is_empty()
    }

    /// The shards, by docID.
    pub fn shards(&self) -> &[ShardEntry] {
        &self.shards
    }

    /// The docIDs of shard `k`.
    pub fn range(&self, k: usize) -> Range<u64> {
        let e = &self.shards[k];
        e.first..e.end
    }

    /// The path of index file `file` of shard `k` (a lexicon, barrel or
    /// field-lengths file, under its job name).
    pub fn file(&self, k: usize, file: JobFile) -> PathBuf {
        self.dir.join(&self.shards[k].dir).join(file.name())
    }

    /// Every file, with its kind: the manifest, the collection's field
    /// lengths, and each shard's lexicon, field lengths and barrels.
    pub fn files(&self) -> Vec<(PathBuf, &'static FileKind)> {
        let mut v = vec![
            (self.dir.join(MANIFEST), &SHARDS),
            (self.dir.join(LENGTHS), &super::fieldlens::FIELDLENS),
        ];
        for k in 0..self.len() {
            v.push((self.file(k, JobFile::Lexicon), &super::lexicon::LEXICON));
            v.push((
                self.file(k, JobFile::FieldLengths),
                &super::fieldlens::FIELDLENS,
            ));
            for b in 0..self.params.barrels as usize {
                v.push((self.file(k, barrel_file(b)), &super::inverted::BARREL));
            }
        }
        v
    }

    /// Checks every shard's files completely (each kind's own checks, the
    /// barrels' block bounds against the field lengths beside them) and
    /// that they agree with the manifest: the collection's field lengths
    /// in every shard, each lexicon with the manifest's barrels and
    /// stemming.
    pub fn verify(&self) -> Result<()> {
        self.verify_agreement()?;
        for (path, kind) in self.files() {
            (kind.verify)(&path)?;
        }
        Ok(())
    }

    /// The checks of [`Self::verify`] between the files (not each file's
    /// own): the collection's field lengths of the manifest's size and in
    /// every shard, each lexicon with the manifest's barrels and stemming.
    pub fn verify_agreement(&self) -> Result<()> {
        let lengths = FieldLengths::open(self.dir.join(LENGTHS))?;
        if lengths.docs() != self.params.docs {
            return Err(Error::corrupt(
                self.dir.join(LENGTHS),
                "header parameters",
                0,
                format!(
                    "{} docs, the manifest says {}",
                    lengths.docs(),
                    self.params.docs
                ),
            ));
        }
        for k in 0..self.len() {
            let lex = super::Lexicon::open(self.file(k, JobFile::Lexicon))?;
            if lex.barrels() != self.params.barrels as usize || lex.stem()? != self.params.stem {
                return Err(Error::corrupt(
                    self.file(k, JobFile::Lexicon),
                    "header parameters",
                    0,
                    format!(
                        "{} barrels, stemming {:?}; the manifest says {} and {:?}",
                        lex.barrels(),
                        lex.stem()?,
                        self.params.barrels,
                        self.params.stem
                    ),
                ));
            }
            let f = FieldLengths::open(self.file(k, JobFile::FieldLengths))?;
            if f.sums() != lengths.sums() || f.docs() != lengths.docs() {
                return Err(Error::corrupt(
                    self.file(k, JobFile::FieldLengths),
                    "footer metadata",
                    0,
                    format!(
                        "not the collection's field lengths ({})",
                        self.dir.join(LENGTHS).display()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The manifest container of `dir`, for `inspect` and the like.
pub fn manifest(dir: &Path) -> Result<Container> {
    SHARDS.open(dir.join(MANIFEST))
}

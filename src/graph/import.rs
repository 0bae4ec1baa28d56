//! The `import-graph` stage: edge lists → doc table, forward and transposed
//! edge files.
//!
//! Node ids are arbitrary `u64`s, neither contiguous nor sorted. The stage works
//! like Brin & Page's URLresolver, by sorting and merging, never by a lookup
//! table held in memory:
//!
//! 1. **read**: arcs `(src, dst)` go into sort A (by source id, deduplicated),
//!    both ids into sort N (node ids, deduplicated). Self-loops are dropped and
//!    counted (unless kept).
//! 2. **join 1**: A merged against N: the n-th distinct id gets docID n (so
//!    docIDs follow the ids' numeric order, and a graph numbered `0..n` keeps its
//!    numbering); the doc table is written from N; `(dst id, src docID)` go to
//!    sort B.
//! 3. **join 2**: B merged against N again: `(src docID, dst docID)` go to sort
//!    C and `(dst docID, src docID)` to sort D.
//! 4. **write**: C becomes the forward edge file, D the transposed one.
//!
//! Every sort keeps its runs in the stage's temporary directory, so an
//! interrupted import resumes from the last completed step and the runs already
//! written.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::edges::{Direction, EdgeFile, EdgeWriter};
use super::snap::{read_arcs, ReadReport, Skip};
use crate::docs::{Doc, DocTable, DocWriter};
use crate::error::{Error, IoContext, Result};
use crate::job::{Begin, Figures, Job, Settings, StageRecord};
use crate::progress::Unit;
use crate::publish::write_atomic;
use crate::sort::{Combine, ExternalSorter, SortConfig, Sorted};

/// Name of the stage in the job manifest.
pub const STAGE: &str = "import-graph";
/// The doc table.
pub const DOCS_FILE: &str = "docs.wm";
/// The forward edge file.
pub const EDGES_FILE: &str = "edges.wm";
/// The transposed edge file.
pub const TRANSPOSED_FILE: &str = "edges-t.wm";

/// Edge-list formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    /// SNAP: `src<TAB>dst` numeric ids, `#` comments.
    Snap,
}

impl GraphFormat {
    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            GraphFormat::Snap => "snap",
        }
    }
}

/// What to import.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Input format.
    pub format: GraphFormat,
    /// Input files, read in this order.
    pub inputs: Vec<PathBuf>,
    /// Keep arcs from a node to itself (dropped and counted by default).
    pub keep_self_loops: bool,
}

/// Counts from reading the input, kept as a checkpoint.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct ReadCheckpoint {
    lines: u64,
    input_arcs: u64,
    input_bytes: u64,
    self_loops: u64,
    skipped: u64,
    first_skips: Vec<String>,
}

/// How the stage went.
#[derive(Debug)]
pub enum ImportOutcome {
    /// The job already had this import with these parameters.
    AlreadyDone(StageRecord),
    /// The stage ran (possibly resuming) and finished.
    Done {
        /// The manifest record.
        record: StageRecord,
        /// Whether it resumed an interrupted attempt.
        resumed: bool,
        /// Skipped input, first few.
        skips: Vec<String>,
    },
}

fn input_params(opts: &ImportOptions) -> Result<serde_json::Value> {
    let mut inputs = Vec::new();
    for p in &opts.inputs {
        let meta = std::fs::metadata(p).at(p)?;
        if !meta.is_file() {
            return Err(Error::Invalid(format!("{}: not a file", p.display())));
        }
        let abs = std::fs::canonicalize(p).at(p)?;
        inputs.push(json!({"path": abs.to_string_lossy(), "bytes": meta.len()}));
    }
    Ok(json!({
        "format": opts.format.name(),
        "inputs": inputs,
        "keep_self_loops": opts.keep_self_loops,
    }))
}

fn sort_cfg(tmp: &Path, name: &str, budget: u64, s: &Settings) -> SortConfig {
    s.sort_config(tmp, STAGE, name, budget)
}

/// Runs (or resumes, or skips) the import into `job`.
pub fn import_graph(job: &mut Job, opts: &ImportOptions, s: &Settings) -> Result<ImportOutcome> {
    if opts.inputs.is_empty() {
        return Err(Error::Invalid(
            "import-graph needs at least one input file".into(),
        ));
    }
    let params = input_params(opts)?;
    let outputs = [DOCS_FILE, EDGES_FILE, TRANSPOSED_FILE];
    let resumed = match job.begin(STAGE, params, &[], &outputs, s.force)? {
        Begin::Skip(rec) => return Ok(ImportOutcome::AlreadyDone(rec)),
        Begin::Run { resumed } => resumed,
    };
    if resumed {
        s.reporter.note(&format!(
            "{STAGE}: resuming an interrupted run from its checkpoints in {}",
            job.tmp_dir(STAGE).display()
        ));
    }
    let tmp = job.tmp_dir(STAGE);
    let docs_path = job.path(DOCS_FILE);

    let mut fwd = ExternalSorter::<(u64, u64)>::new(
        sort_cfg(&tmp, "forward", s.share(0.4), s),
        Combine::Dedup,
    )?;
    let mut rev = ExternalSorter::<(u64, u64)>::new(
        sort_cfg(&tmp, "transposed", s.share(0.4), s),
        Combine::Dedup,
    )?;
    let node_cfg = sort_cfg(&tmp, "node-ids", s.share(0.3), s).persist(true);
    let read_ckpt_path = tmp.join("read.json");

    if !(fwd.input_complete() && rev.input_complete()) {
        let mut by_dst = ExternalSorter::<(u64, u64)>::new(
            sort_cfg(&tmp, "by-dst", s.share(0.7), s),
            Combine::Dedup,
        )?;
        if !(by_dst.input_complete() && docs_path.exists()) {
            // Steps 1 and 2.
            let mut by_src = ExternalSorter::<(u64, u64)>::new(
                sort_cfg(&tmp, "by-src", s.share(0.6), s),
                Combine::Dedup,
            )?;
            let mut nodes = ExternalSorter::<u64>::new(node_cfg.clone(), Combine::Dedup)?;
            let have_read =
                by_src.input_complete() && nodes.input_complete() && read_ckpt_path.exists();
            if !have_read {
                let ckpt = read_input(opts, s, &mut by_src, &mut nodes)?;
                write_atomic(
                    &read_ckpt_path,
                    &serde_json::to_vec(&ckpt).map_err(|e| Error::Invalid(e.to_string()))?,
                )?;
            }
            by_src.set_merge_budget(s.share(0.1));
            nodes.set_merge_budget(s.share(0.05));
            let by_src = by_src.finish()?;
            let nodes = nodes.finish()?;
            join_sources(by_src, nodes, &docs_path, &mut by_dst, s)?;
            crate::sort::remove_sort_dir(&tmp.join("by-src"))?;
        }
        // Step 3.
        let arcs = read_checkpoint(&read_ckpt_path)?;
        by_dst.set_merge_budget(s.share(0.1));
        let by_dst = by_dst.finish()?;
        let mut nodes = ExternalSorter::<u64>::new(node_cfg, Combine::Dedup)?;
        nodes.set_merge_budget(s.share(0.05));
        if !nodes.input_complete() {
            return Err(Error::job(
                job.dir(),
                "the sorted node ids of this import are missing; re-run with --force",
            ));
        }
        let nodes = nodes.finish()?;
        join_destinations(by_dst, nodes, &mut fwd, &mut rev, arcs.input_arcs, s)?;
    }

    // Step 4.
    let doc_table = DocTable::open(&docs_path)?;
    let n = doc_table.len();
    let crawled = doc_table.crawled();
    let fwd_stats = write_edges(fwd, &job.path(EDGES_FILE), Direction::Forward, n, STAGE, s)?;
    let rev_stats = write_edges(
        rev,
        &job.path(TRANSPOSED_FILE),
        Direction::Transposed,
        n,
        STAGE,
        s,
    )?;
    if fwd_stats.arcs != rev_stats.arcs {
        return Err(Error::Invalid(format!(
            "internal error: {} forward arcs but {} transposed",
            fwd_stats.arcs, rev_stats.arcs
        )));
    }

    let ckpt = read_checkpoint(&read_ckpt_path)?;
    let arcs = fwd_stats.arcs;
    let kept_input = ckpt.input_arcs - ckpt.self_loops;
    let mut figures = Figures {
        records: arcs,
        ..Figures::default()
    };
    let extra = json!({
        "nodes": n,
        "arcs": arcs,
        "crawled": crawled,
        "dangling": n - fwd_stats.lists,
        "self_loops": ckpt.self_loops,
        "duplicate_arcs": kept_input.saturating_sub(arcs),
        "input_arcs": ckpt.input_arcs,
        "input_bytes": ckpt.input_bytes,
        "input_lines": ckpt.lines,
        "skipped": ckpt.skipped,
        "max_out_degree": fwd_stats.max_degree,
        "max_in_degree": rev_stats.max_degree,
        "edges_bytes": fwd_stats.bytes,
        "transposed_bytes": rev_stats.bytes,
        "bits_per_arc": if arcs > 0 { fwd_stats.bytes as f64 * 8.0 / arcs as f64 } else { 0.0 },
    });
    if let serde_json::Value::Object(map) = extra {
        figures.extra = map;
    }
    let record = job.finish(STAGE, &outputs, figures)?;
    Ok(ImportOutcome::Done {
        record,
        resumed,
        skips: ckpt.first_skips,
    })
}

fn read_checkpoint(path: &Path) -> Result<ReadCheckpoint> {
    let bytes = std::fs::read(path).at(path)?;
    serde_json::from_slice(&bytes).map_err(|e| Error::corrupt(path, "checkpoint", 0, e.to_string()))
}

/// Step 1: reads the input into the arc and node-id sorts.
fn read_input(
    opts: &ImportOptions,
    s: &Settings,
    by_src: &mut ExternalSorter<(u64, u64)>,
    nodes: &mut ExternalSorter<u64>,
) -> Result<ReadCheckpoint> {
    let total: u64 = opts
        .inputs
        .iter()
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum();
    let task = s
        .reporter
        .task(&format!("{STAGE}: reading"), Some(total), Unit::Bytes);
    let counter = Arc::new(AtomicU64::new(0));
    let mut self_loops = 0u64;
    let mut seen = 0u64;
    let report: ReadReport =
        read_arcs(&opts.inputs, s.strict, Arc::clone(&counter), |src, dst| {
            seen += 1;
            if seen.is_multiple_of(65536) {
                task.set_position(counter.load(Ordering::Relaxed));
            }
            nodes.push(src)?;
            nodes.push(dst)?;
            if src == dst && !opts.keep_self_loops {
                self_loops += 1;
                return Ok(());
            }
            by_src.push((src, dst))
        })?;
    task.set_position(total);
    for skip in &report.first_skips {
        s.reporter.note(&format!("skipped: {skip}"));
    }
    if report.skipped > report.first_skips.len() as u64 {
        s.reporter.note(&format!(
            "skipped: … and {} more",
            report.skipped - report.first_skips.len() as u64
        ));
    }
    Ok(ReadCheckpoint {
        lines: report.lines,
        input_arcs: report.arcs,
        input_bytes: report.bytes,
        self_loops,
        skipped: report.skipped,
        first_skips: report.first_skips.iter().map(Skip::to_string).collect(),
    })
}

/// Walks the sorted node ids alongside a stream sorted by id, assigning docIDs.
struct DocIds {
    nodes: Sorted<u64>,
    current: Option<(u64, u64)>,
    next_doc: u64,
}

impl DocIds {
    fn new(nodes: Sorted<u64>) -> DocIds {
        DocIds {
            nodes,
            current: None,
            next_doc: 0,
        }
    }

    /// Advances to the next node id, returning (id, docID).
    fn advance(&mut self) -> Result<Option<(u64, u64)>> {
        let Some(id) = self.nodes.next_record()? else {
            return Ok(None);
        };
        self.current = Some((id, self.next_doc));
        self.next_doc += 1;
        Ok(self.current)
    }

    /// The docID of `id`; ids must be asked for in increasing order.
    fn lookup(&mut self, id: u64, mut on_new: impl FnMut(u64) -> Result<()>) -> Result<u64> {
        loop {
            match self.current {
                Some((cur, doc)) if cur == id => return Ok(doc),
                Some((cur, _)) if cur > id => break,
                _ => match self.advance()? {
                    Some((new, _)) => on_new(new)?,
                    None => break,
                },
            }
        }
        Err(Error::Invalid(format!(
            "internal error: node id {id} missing from the sorted node ids"
        )))
    }
}

fn graph_doc(id: u64) -> Doc {
    Doc {
        url: id.to_string(),
        crawled: true,
        ..Doc::default()
    }
}

/// Step 2: docIDs for sources, the doc table, `(dst id, src docID)` into B.
fn join_sources(
    mut by_src: Sorted<(u64, u64)>,
    nodes: Sorted<u64>,
    docs_path: &Path,
    by_dst: &mut ExternalSorter<(u64, u64)>,
    s: &Settings,
) -> Result<()> {
    let task = s
        .reporter
        .task(&format!("{STAGE}: numbering sources"), None, Unit::Records);
    let mut docs = DocWriter::create(docs_path, STAGE)?;
    let mut ids = DocIds::new(nodes);
    let mut n = 0u64;
    while let Some((src, dst)) = by_src.next_record()? {
        let doc = ids.lookup(src, |id| docs.push(&graph_doc(id)))?;
        by_dst.push((dst, doc))?;
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
    }
    while let Some((id, _)) = ids.advance()? {
        docs.push(&graph_doc(id))?;
    }
    docs.finish()?;
    Ok(())
}

/// Step 3: docIDs for destinations; arcs into the forward and transposed sorts.
fn join_destinations(
    mut by_dst: Sorted<(u64, u64)>,
    nodes: Sorted<u64>,
    fwd: &mut ExternalSorter<(u64, u64)>,
    rev: &mut ExternalSorter<(u64, u64)>,
    input_arcs: u64,
    s: &Settings,
) -> Result<()> {
    let task = s.reporter.task(
        &format!("{STAGE}: numbering destinations"),
        Some(input_arcs),
        Unit::Records,
    );
    let mut ids = DocIds::new(nodes);
    let mut n = 0u64;
    while let Some((dst, src_doc)) = by_dst.next_record()? {
        let dst_doc = ids.lookup(dst, |_| Ok(()))?;
        fwd.push((src_doc, dst_doc))?;
        rev.push((dst_doc, src_doc))?;
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
    }
    Ok(())
}

/// Step 4: a sorted arc stream into an edge file (`stage` labels the progress).
pub(crate) fn write_edges(
    sorter: ExternalSorter<(u64, u64)>,
    path: &Path,
    direction: Direction,
    nodes: u64,
    stage: &str,
    s: &Settings,
) -> Result<super::EdgeFileStats> {
    if let Ok(existing) = EdgeFile::open(path) {
        // Published by an interrupted attempt of this same stage.
        drop(sorter);
        return Ok(existing.stats().clone());
    }
    let mut sorted = sorter.finish()?;
    let task = s.reporter.task(
        &format!("{stage}: writing {} edges", direction.name()),
        None,
        Unit::Records,
    );
    let mut w = EdgeWriter::create(path, direction, nodes)?;
    let mut n = 0u64;
    while let Some((a, b)) = sorted.next_record()? {
        w.push(a, b)?;
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
    }
    w.finish()
}

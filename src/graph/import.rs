//! The `import-graph` stage: edge lists → doc table, forward and transposed
//! edge files.
//!
//! Three input formats (see [`GraphFormat`]):
//!
//! - **snap**: numeric node ids, arbitrary `u64`s, neither contiguous nor
//!   sorted ([`super::snap`]). DocIDs follow the ids' numeric order, so a graph
//!   numbered `0..n` keeps its numbering; a node's name is its id.
//! - **tsv**: nodes named by any strings, URLs typically ([`super::names`]).
//!   DocIDs follow the names' byte order, or webmill's host-grouping URL order
//!   ([`NameOrder`]); a node's name is its doc-table URL.
//! - **cc**: Common Crawl's host or domain graph, a vertices file then edges
//!   files ([`super::cc`]). The vertex ids are the docIDs.
//! - **bvgraph**: WebGraph's BVGraph, one basename ([`super::bvgraph`]). Its
//!   nodes `0..n` are the docIDs, every one of them a doc (nodes without
//!   arcs included); a node's name is its id.
//!
//! For snap and tsv the stage numbers nodes like Brin & Page's URLresolver, by
//! sorting and merging, never by a lookup table held in memory. One generic
//! pipeline serves both; a node's *key* is its id (snap) or its name's sort key
//! (tsv, a byte string):
//!
//! 1. **read**: arcs `(src key, dst key)` go into sort A (by source key,
//!    deduplicated), node keys into sort N (deduplicated; for tsv a name seen
//!    on a nearby line is not pushed again, see [`RecentNames`]). Self-loops
//!    (same id, same name) are dropped and counted (unless kept).
//! 2. **join 1**: A merged against N: the n-th distinct key gets docID n; the
//!    doc table is written from N; `(dst key, src docID)` go to sort B.
//! 3. **join 2**: B merged against N again: `(src docID, dst docID)` go to sort
//!    C and `(dst docID, src docID)` to sort D.
//! 4. **write**: C becomes the forward edge file, D the transposed one.
//!
//! For cc, step 1 streams the vertices file into the doc table (ids are dense
//! and sorted already), then the edges files' arcs go straight into sorts C and
//! D; step 4 is the same. For bvgraph, the doc table is the `n` node ids and
//! the decoded lists go straight into sorts C and D.
//!
//! Every sort keeps its runs in the stage's temporary directory, so an
//! interrupted import resumes from the last completed step and the runs already
//! written.

use std::cmp::Ordering as Order;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::bvgraph::{self, BvGraphFiles};
use super::cc;
use super::edges::{Direction, EdgeFile};
use super::names::{read_named_arcs, NameKey, NameOrder, NamedArc, RecentNames};
use super::snap::read_arcs;
use crate::docs::{Doc, DocTable, DocWriter};
use crate::error::{Error, IoContext, Result};
use crate::input::{ReadReport, Skip, KEEP_SKIPS};
use crate::job::{
    phase, share, Figure, FigureList, Job, JobFile, Outcome, Phase, Settings, Stage, StageContext,
    StageId,
};
use crate::progress::Unit;
use crate::sort::{Combine, ExternalSorter, Record, Sorted};
use crate::units::thousands;

/// The stage's name, for progress labels.
const STAGE: &str = "import-graph";

/// Edge-list formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    /// SNAP: `src<TAB>dst` numeric ids, `#` comments ([`super::snap`]).
    Snap,
    /// `src<TAB>dst` with nodes named by any strings, docIDs in the given
    /// order of the names ([`super::names`]).
    Tsv(NameOrder),
    /// Common Crawl's host or domain graph: the first input is the vertices
    /// file, the others are edges files ([`super::cc`]).
    Cc,
    /// WebGraph's BVGraph: the one input is the basename ([`super::bvgraph`]).
    BvGraph,
}

impl GraphFormat {
    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            GraphFormat::Snap => "snap",
            GraphFormat::Tsv(_) => "tsv",
            GraphFormat::Cc => "cc",
            GraphFormat::BvGraph => "bvgraph",
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
    /// cc: docs written from the vertices file.
    nodes: u64,
    /// cc: docIDs given to ids without a vertex line.
    unnamed_nodes: u64,
}

impl ReadCheckpoint {
    /// Itself if the inputs gave at least one arc line; else the error
    /// saying what `format` expects.
    fn require_arcs(self, inputs: &[PathBuf], format: &str) -> Result<ReadCheckpoint> {
        if self.input_arcs > 0 {
            return Ok(self);
        }
        let expected = match format {
            "snap" => "edge lines `src<TAB>dst` with numeric node ids (--format snap)",
            "tsv" => "edge lines `src<TAB>dst` with named nodes (--format tsv)",
            _ => "edge lines `src_id<TAB>dst_id` after the vertices file (--format cc)",
        };
        Err(crate::input::nothing_usable(
            inputs,
            expected,
            &format!("no arc in {} lines", self.lines),
            &self.first_skips,
        ))
    }

    fn new(report: &ReadReport, self_loops: u64) -> ReadCheckpoint {
        ReadCheckpoint {
            lines: report.lines,
            input_arcs: report.arcs,
            input_bytes: report.bytes,
            self_loops,
            skipped: report.skipped,
            first_skips: report.first_skips.iter().map(Skip::to_string).collect(),
            nodes: 0,
            unnamed_nodes: 0,
        }
    }
}

/// An input file as the stage records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputFile {
    /// Absolute path.
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
}

/// The parameters `import-graph` records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportParams {
    /// `snap`, `tsv` or `cc`.
    pub format: String,
    /// The input files, in order.
    pub inputs: Vec<InputFile>,
    /// Whether self-loops were kept.
    pub keep_self_loops: bool,
    /// tsv: the order of the names (`bytes` or `host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

/// What `import-graph` measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportFigures {
    /// Nodes (docs).
    pub nodes: u64,
    /// Distinct arcs kept.
    pub arcs: u64,
    /// Nodes counted as crawled (all of them, for edge lists).
    pub crawled: u64,
    /// Nodes without out-arcs.
    pub dangling: u64,
    /// Arcs from a node to itself, dropped.
    pub self_loops: u64,
    /// Repeated arcs, dropped.
    pub duplicate_arcs: u64,
    /// Arcs read.
    pub input_arcs: u64,
    /// Bytes of input read (compressed size for gzip).
    pub input_bytes: u64,
    /// Lines read.
    pub input_lines: u64,
    /// Lines or streams skipped as bad input.
    pub skipped: u64,
    /// The first skips, with file and line.
    pub first_skips: Vec<String>,
    /// Largest out-degree.
    pub max_out_degree: u64,
    /// Largest in-degree.
    pub max_in_degree: u64,
    /// Bytes of the forward edge file.
    pub edges_bytes: u64,
    /// Bytes of the transposed edge file.
    pub transposed_bytes: u64,
    /// Bits per arc of the forward edge file.
    pub bits_per_arc: f64,
    /// cc: vertex ids without a vertex line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unnamed_nodes: Option<u64>,
}

/// The `import-graph` stage.
pub struct ImportGraph {
    /// What to import.
    pub opts: ImportOptions,
}

/// What holds memory at the same time in `import-graph` (sorts A, N, B of
/// the module doc: `by-src`, `node-ids`, `by-dst`): a sort from its first
/// record until it is finished, then its merge until it is dropped (at its
/// whole share unless it has a merge share of its own).
const SHARES: &[Phase] = &[
    phase(
        "read the arcs",
        &[share("by-src", 0.6), share("node-ids", 0.3)],
    ),
    phase(
        "number the sources",
        &[
            share("by-src merge", 0.1),
            share("node-ids merge", 0.05),
            share("by-dst", 0.7),
        ],
    ),
    phase(
        "number the destinations",
        &[
            share("by-dst merge", 0.1),
            share("node-ids merge", 0.05),
            share("forward", 0.4),
            share("transposed", 0.4),
        ],
    ),
];

impl Stage for ImportGraph {
    type Params = ImportParams;
    type Figures = ImportFigures;

    fn id(&self) -> StageId {
        StageId::ImportGraph
    }

    fn params(&self) -> Result<ImportParams> {
        let opts = &self.opts;
        if opts.inputs.is_empty() {
            return Err(Error::usage("import-graph needs at least one input file"));
        }
        if opts.format == GraphFormat::Cc {
            let Some((vertices, edges)) = opts.inputs.split_first().filter(|(_, e)| !e.is_empty())
            else {
                return Err(Error::usage(
                    "--format cc needs the vertices file first, then at least one edges file",
                ));
            };
            cc::check_roles(vertices, edges)?;
        }
        let files = match opts.format {
            GraphFormat::BvGraph => {
                let [basename] = opts.inputs.as_slice() else {
                    return Err(Error::usage(
                        "--format bvgraph reads one graph: give its BASENAME (for BASENAME.graph and BASENAME.properties)",
                    ));
                };
                let files = BvGraphFiles::new(basename)?;
                files.check_readable()?;
                vec![files.graph, files.properties]
            }
            _ => opts.inputs.clone(),
        };
        let mut inputs = Vec::new();
        for p in &files {
            let meta = std::fs::metadata(p).at(p)?;
            if !meta.is_file() {
                return Err(Error::usage_at(
                    p,
                    "not a file: import-graph reads edge-list files",
                ));
            }
            let abs = std::fs::canonicalize(p).at(p)?;
            inputs.push(InputFile {
                path: abs.to_string_lossy().into_owned(),
                bytes: meta.len(),
            });
        }
        Ok(ImportParams {
            format: opts.format.name().into(),
            inputs,
            keep_self_loops: opts.keep_self_loops,
            order: match opts.format {
                GraphFormat::Tsv(order) => Some(order.name().into()),
                _ => None,
            },
        })
    }

    fn inputs(&self) -> Vec<JobFile> {
        Vec::new()
    }

    fn outputs(&self) -> Vec<JobFile> {
        vec![JobFile::Docs, JobFile::Edges, JobFile::EdgesT]
    }

    fn records(f: &ImportFigures) -> u64 {
        f.arcs
    }

    fn shares(&self) -> &'static [Phase] {
        SHARES
    }

    fn headline(&self, f: &ImportFigures) -> String {
        format!("{} nodes, {} arcs", thousands(f.nodes), thousands(f.arcs))
    }

    fn stats(&self, f: &ImportFigures) -> Vec<Figure> {
        FigureList::new()
            .group("Input")
            .bytes("input_bytes", "input read", f.input_bytes)
            .count("input_arcs", "arc lines", f.input_arcs)
            .count("skipped", "skipped records or lines", f.skipped)
            .group("Link graph")
            .count("self_loops", "self-loops dropped", f.self_loops)
            .count("duplicate_arcs", "duplicate arcs", f.duplicate_arcs)
            .build()
    }

    fn run(&self, cx: &mut StageContext) -> Result<ImportFigures> {
        run_import(&self.opts, cx)
    }
}

/// Runs (or resumes, or skips) the import into `job`.
pub fn import_graph(
    job: &mut Job,
    opts: &ImportOptions,
    s: &Settings,
) -> Result<Outcome<ImportFigures>> {
    job.run(&ImportGraph { opts: opts.clone() }, s)
}

fn run_import(opts: &ImportOptions, cx: &StageContext) -> Result<ImportFigures> {
    let docs_path = cx.output(JobFile::Docs)?;
    let mut fwd = cx.sorter::<(u64, u64)>("forward", Combine::Dedup)?;
    let mut rev = cx.sorter::<(u64, u64)>("transposed", Combine::Dedup)?;

    if !(fwd.input_complete() && rev.input_complete()) {
        let steps = Steps {
            cx,
            docs_path: &docs_path,
        };
        let s = cx.settings();
        match opts.format {
            GraphFormat::Snap => steps.number_by_sort::<u64>(
                &mut fwd,
                &mut rev,
                |by_src, nodes| read_snap(opts, s, by_src, nodes),
                |&id| Ok(graph_doc(id)),
            )?,
            GraphFormat::Tsv(order) => steps.number_by_sort::<NameKey>(
                &mut fwd,
                &mut rev,
                |by_src, nodes| read_tsv(opts, order, s, by_src, nodes),
                |key| named_doc(order, &key.0),
            )?,
            GraphFormat::Cc => steps.number_cc(opts, &mut fwd, &mut rev)?,
            GraphFormat::BvGraph => steps.number_bvgraph(opts, &mut fwd, &mut rev)?,
        }
    }

    // Step 4.
    let doc_table = DocTable::open(&docs_path)?;
    let n = doc_table.len();
    let crawled = doc_table.crawled();
    let fwd_stats = write_edges(fwd, &cx.output(JobFile::Edges)?, Direction::Forward, n, cx)?;
    let rev_stats = write_edges(
        rev,
        &cx.output(JobFile::EdgesT)?,
        Direction::Transposed,
        n,
        cx,
    )?;
    if fwd_stats.arcs != rev_stats.arcs {
        return Err(Error::internal(format!(
            "{} forward arcs but {} transposed",
            fwd_stats.arcs, rev_stats.arcs
        )));
    }

    let ckpt: ReadCheckpoint = cx
        .checkpoint(READ_CHECKPOINT)?
        .ok_or_else(|| Error::internal("the import's read checkpoint is missing"))?;
    let arcs = fwd_stats.arcs;
    let kept_input = ckpt.input_arcs - ckpt.self_loops;
    Ok(ImportFigures {
        nodes: n,
        arcs,
        crawled,
        dangling: n - fwd_stats.lists,
        self_loops: ckpt.self_loops,
        duplicate_arcs: kept_input.saturating_sub(arcs),
        input_arcs: ckpt.input_arcs,
        input_bytes: ckpt.input_bytes,
        input_lines: ckpt.lines,
        skipped: ckpt.skipped,
        first_skips: ckpt.first_skips,
        max_out_degree: fwd_stats.max_degree,
        max_in_degree: rev_stats.max_degree,
        edges_bytes: fwd_stats.bytes,
        transposed_bytes: rev_stats.bytes,
        bits_per_arc: if arcs > 0 {
            fwd_stats.bytes as f64 * 8.0 / arcs as f64
        } else {
            0.0
        },
        unnamed_nodes: (opts.format == GraphFormat::Cc).then_some(ckpt.unnamed_nodes),
    })
}

/// Checkpoint of step 1: what reading the input counted.
const READ_CHECKPOINT: &str = "read";
/// cc: checkpoint of the vertices file read.
const VERTICES_CHECKPOINT: &str = "vertices";

/// Progress of reading the input files.
struct Reading {
    task: Box<dyn crate::progress::Task>,
    counter: Arc<AtomicU64>,
    total: u64,
    seen: u64,
}

impl Reading {
    fn new(s: &Settings, paths: &[PathBuf], what: &str) -> Reading {
        let total: u64 = paths
            .iter()
            .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
            .sum();
        Reading {
            task: s.reporter.task(
                &format!("{STAGE}: reading {what}"),
                Some(total),
                Unit::Bytes,
            ),
            counter: Arc::new(AtomicU64::new(0)),
            total,
            seen: 0,
        }
    }

    #[inline]
    fn tick(&mut self) {
        self.seen += 1;
        if self.seen.is_multiple_of(65536) {
            self.task.set_position(self.counter.load(Ordering::Relaxed));
        }
    }

    /// Ends the progress and prints the first skips.
    fn finish(self, s: &Settings, report: &ReadReport) {
        self.task.set_position(self.total);
        for skip in &report.first_skips {
            s.reporter.note(&format!("skipped: {skip}"));
        }
        if report.skipped > report.first_skips.len() as u64 {
            s.reporter.note(&format!(
                "skipped: … and {} more",
                report.skipped - report.first_skips.len() as u64
            ));
        }
    }
}

/// Step 1 for snap: reads the input into the arc and node-id sorts.
fn read_snap(
    opts: &ImportOptions,
    s: &Settings,
    by_src: &mut ExternalSorter<(u64, u64)>,
    nodes: &mut ExternalSorter<u64>,
) -> Result<ReadCheckpoint> {
    let mut progress = Reading::new(s, &opts.inputs, "edges");
    let mut self_loops = 0u64;
    let report = read_arcs(
        &opts.inputs,
        s.strict,
        Arc::clone(&progress.counter),
        |src, dst| {
            progress.tick();
            nodes.push(src)?;
            nodes.push(dst)?;
            if src == dst && !opts.keep_self_loops {
                self_loops += 1;
                return Ok(());
            }
            by_src.push((src, dst))
        },
    )?;
    progress.finish(s, &report);
    ReadCheckpoint::new(&report, self_loops).require_arcs(&opts.inputs, "snap")
}

/// Step 1 for tsv: names become keys in `order`; arcs by source key into A,
/// keys into N (a key seen on a nearby line is not pushed again, see
/// [`RecentNames`]).
fn read_tsv(
    opts: &ImportOptions,
    order: NameOrder,
    s: &Settings,
    by_src: &mut ExternalSorter<NamedArc>,
    nodes: &mut ExternalSorter<NameKey>,
) -> Result<ReadCheckpoint> {
    let mut progress = Reading::new(s, &opts.inputs, "edges");
    let mut self_loops = 0u64;
    let mut last_src: Option<String> = None;
    let mut src_key = Vec::new();
    let mut dst_key = Vec::new();
    let mut recent = RecentNames::new(order);
    let report = read_named_arcs(
        &opts.inputs,
        s.strict,
        Arc::clone(&progress.counter),
        |src, dst| {
            progress.tick();
            if last_src.as_deref() != Some(src) {
                if !recent.key(src, &mut src_key) {
                    nodes.push(NameKey(src_key.as_slice().into()))?;
                }
                last_src = Some(src.to_string());
            }
            if !recent.key(dst, &mut dst_key) {
                nodes.push(NameKey(dst_key.as_slice().into()))?;
            }
            if src == dst && !opts.keep_self_loops {
                self_loops += 1;
                return Ok(());
            }
            let arc = NamedArc::new(&src_key, &dst_key)
                .ok_or_else(|| Error::usage("a node name longer than 4 GiB"))?;
            by_src.push(arc)
        },
    )?;
    progress.finish(s, &report);
    ReadCheckpoint::new(&report, self_loops).require_arcs(&opts.inputs, "tsv")
}

/// Node keys of the sorted pipeline (snap ids, tsv name keys) and their arc
/// records, sorted by source key.
trait NodeKey: Record {
    /// An arc `(src key, dst key)`, ordered by source key first.
    type Arc: Record;
    /// How `node` compares with the source of `arc`.
    fn cmp_src(node: &Self, arc: &Self::Arc) -> Order;
    /// The destination key of `arc`.
    fn into_dst(arc: Self::Arc) -> Self;
}

impl NodeKey for u64 {
    type Arc = (u64, u64);
    #[inline]
    fn cmp_src(node: &u64, arc: &(u64, u64)) -> Order {
        node.cmp(&arc.0)
    }
    #[inline]
    fn into_dst(arc: (u64, u64)) -> u64 {
        arc.1
    }
}

impl NodeKey for NameKey {
    type Arc = NamedArc;
    #[inline]
    fn cmp_src(node: &NameKey, arc: &NamedArc) -> Order {
        node.0[..].cmp(arc.src())
    }
    #[inline]
    fn into_dst(arc: NamedArc) -> NameKey {
        // A fresh allocation on this thread, not the merge reader's.
        NameKey(arc.dst().into())
    }
}

/// Walks the sorted node keys alongside a stream sorted by key, assigning docIDs.
struct DocIds<K: Record> {
    nodes: Sorted<K>,
    current: Option<(K, u64)>,
    next_doc: u64,
}

impl<K: Record> DocIds<K> {
    fn new(nodes: Sorted<K>) -> DocIds<K> {
        DocIds {
            nodes,
            current: None,
            next_doc: 0,
        }
    }

    /// Advances to the next node key, handing it to `on_new`; `false` at the end.
    fn advance(&mut self, on_new: &mut impl FnMut(&K) -> Result<()>) -> Result<bool> {
        let Some(key) = self.nodes.next_record()? else {
            return Ok(false);
        };
        on_new(&key)?;
        self.current = Some((key, self.next_doc));
        self.next_doc += 1;
        Ok(true)
    }

    /// The docID of the node that `cmp` finds equal (`cmp(node)` tells how a
    /// node compares with the one sought); nodes must be sought in increasing
    /// order. Each node key passed on the way is handed to `on_new`, in order.
    fn lookup(
        &mut self,
        cmp: impl Fn(&K) -> Order,
        on_new: &mut impl FnMut(&K) -> Result<()>,
    ) -> Result<u64> {
        loop {
            if let Some((cur, doc)) = &self.current {
                match cmp(cur) {
                    Order::Equal => return Ok(*doc),
                    Order::Greater => break,
                    Order::Less => {}
                }
            }
            if !self.advance(on_new)? {
                break;
            }
        }
        Err(Error::internal(
            "a node of an arc is missing from the sorted nodes",
        ))
    }
}

fn graph_doc(id: u64) -> Doc {
    Doc {
        url: id.to_string(),
        crawled: true,
        ..Doc::default()
    }
}

fn named_doc(order: NameOrder, key: &[u8]) -> Result<Doc> {
    let name = std::str::from_utf8(order.name_of_key(key))
        .map_err(|_| Error::internal("a node name in the sort is not UTF-8"))?;
    Ok(Doc {
        url: name.to_string(),
        crawled: true,
        ..Doc::default()
    })
}

/// What the numbering steps share.
struct Steps<'a> {
    cx: &'a StageContext,
    docs_path: &'a Path,
}

impl Steps<'_> {
    /// Steps 1–3 for nodes known by sortable keys (snap ids, tsv names):
    /// `read` fills sorts A and N, `doc` makes a node's doc-table entry.
    fn number_by_sort<K: NodeKey>(
        &self,
        fwd: &mut ExternalSorter<(u64, u64)>,
        rev: &mut ExternalSorter<(u64, u64)>,
        read: impl FnOnce(&mut ExternalSorter<K::Arc>, &mut ExternalSorter<K>) -> Result<ReadCheckpoint>,
        doc: impl Fn(&K) -> Result<Doc>,
    ) -> Result<()> {
        let (cx, s) = (self.cx, self.cx.settings());
        let node_cfg = cx.sort_config("node-ids")?.persist(true);
        let mut by_dst = cx.sorter::<(K, u64)>("by-dst", Combine::Dedup)?;
        if !(by_dst.input_complete() && self.docs_path.exists()) {
            // Steps 1 and 2.
            let mut by_src = cx.sorter::<K::Arc>("by-src", Combine::Dedup)?;
            let mut nodes = ExternalSorter::<K>::new(node_cfg.clone(), Combine::Dedup)?;
            let have_read = by_src.input_complete()
                && nodes.input_complete()
                && cx.checkpoint::<ReadCheckpoint>(READ_CHECKPOINT)?.is_some();
            if !have_read {
                cx.save_checkpoint(READ_CHECKPOINT, &read(&mut by_src, &mut nodes)?)?;
            }
            by_src.set_merge_budget(cx.budget().bytes("by-src merge")?);
            nodes.set_merge_budget(cx.budget().bytes("node-ids merge")?);
            let by_src = by_src.finish()?;
            let nodes = nodes.finish()?;
            join_sources(by_src, nodes, self.docs_path, &mut by_dst, &doc, s)?;
            crate::sort::remove_sort_dir(&cx.tmp().join("by-src"))?;
        }
        // Step 3.
        let arcs: ReadCheckpoint = cx
            .checkpoint(READ_CHECKPOINT)?
            .ok_or_else(|| Error::internal("the import's read checkpoint is missing"))?;
        by_dst.set_merge_budget(cx.budget().bytes("by-dst merge")?);
        let by_dst = by_dst.finish()?;
        let mut nodes = ExternalSorter::<K>::new(node_cfg, Combine::Dedup)?;
        nodes.set_merge_budget(cx.budget().bytes("node-ids merge")?);
        if !nodes.input_complete() {
            return Err(Error::internal(
                "the sorted node ids of this import are missing; re-run with --force",
            ));
        }
        let nodes = nodes.finish()?;
        join_destinations(by_dst, nodes, fwd, rev, arcs.input_arcs, s)
    }

    /// Steps 1–3 for cc: the vertices file into the doc table, then the arcs
    /// (already docIDs) into the forward and transposed sorts.
    fn number_cc(
        &self,
        opts: &ImportOptions,
        fwd: &mut ExternalSorter<(u64, u64)>,
        rev: &mut ExternalSorter<(u64, u64)>,
    ) -> Result<()> {
        let (cx, s) = (self.cx, self.cx.settings());
        let Some((vertices, edges)) = opts.inputs.split_first() else {
            return Err(Error::usage("--format cc needs a vertices file"));
        };
        let mut ckpt = match cx.checkpoint::<ReadCheckpoint>(VERTICES_CHECKPOINT)? {
            Some(c) if self.docs_path.exists() => c,
            _ => {
                let c = write_vertices(vertices, self.docs_path, s)?;
                cx.save_checkpoint(VERTICES_CHECKPOINT, &c)?;
                c
            }
        };
        let nodes = ckpt.nodes;
        let mut progress = Reading::new(s, edges, "edges");
        let mut self_loops = 0u64;
        let report = cc::read_edges(
            edges,
            nodes,
            s.strict,
            Arc::clone(&progress.counter),
            |src, dst| {
                progress.tick();
                if src == dst && !opts.keep_self_loops {
                    self_loops += 1;
                    return Ok(());
                }
                fwd.push((src, dst))?;
                rev.push((dst, src))
            },
        )?;
        progress.finish(s, &report);
        // The vertex lines count as input lines and bytes, not as arcs.
        let mut first_skips = std::mem::take(&mut ckpt.first_skips);
        first_skips.extend(report.first_skips.iter().map(Skip::to_string));
        first_skips.truncate(KEEP_SKIPS);
        let read = ReadCheckpoint {
            lines: ckpt.lines + report.lines,
            input_arcs: report.arcs,
            input_bytes: ckpt.input_bytes + report.bytes,
            self_loops,
            skipped: ckpt.skipped + report.skipped,
            first_skips,
            nodes,
            unnamed_nodes: ckpt.unnamed_nodes,
        };
        let read = read.require_arcs(edges, "cc")?;
        cx.save_checkpoint(READ_CHECKPOINT, &read)
    }

    /// Steps 1–3 for bvgraph: the node ids into the doc table, then the
    /// decoded lists into the forward and transposed sorts.
    fn number_bvgraph(
        &self,
        opts: &ImportOptions,
        fwd: &mut ExternalSorter<(u64, u64)>,
        rev: &mut ExternalSorter<(u64, u64)>,
    ) -> Result<()> {
        let (cx, s) = (self.cx, self.cx.settings());
        let [basename] = opts.inputs.as_slice() else {
            return Err(Error::usage("--format bvgraph reads one basename"));
        };
        let files = BvGraphFiles::new(basename)?;
        let task = s.reporter.task(
            &format!("{STAGE}: reading {}", files.graph.display()),
            None,
            Unit::Records,
        );
        let mut docs = DocWriter::create(self.docs_path, STAGE)?;
        let mut self_loops = 0u64;
        let info = bvgraph::read_lists(&files, task.as_ref(), |src, succ| {
            docs.push(&graph_doc(src))?;
            for &dst in succ {
                if src == dst && !opts.keep_self_loops {
                    self_loops += 1;
                    continue;
                }
                fwd.push((src, dst))?;
                rev.push((dst, src))?;
            }
            Ok(())
        })?;
        docs.finish()?;
        let read = ReadCheckpoint {
            lines: info.nodes,
            input_arcs: info.arcs,
            input_bytes: info.graph_bytes,
            self_loops,
            nodes: info.nodes,
            ..ReadCheckpoint::default()
        };
        cx.save_checkpoint(READ_CHECKPOINT, &read)
    }
}

/// cc step 1: streams the vertices file into the doc table; the checkpoint
/// counts the vertex lines and the docs written.
fn write_vertices(path: &Path, docs_path: &Path, s: &Settings) -> Result<ReadCheckpoint> {
    let mut progress = Reading::new(s, std::slice::from_ref(&path.to_path_buf()), "vertices");
    let mut docs = DocWriter::create(docs_path, STAGE)?;
    let mut next = 0u64;
    let mut unnamed = 0u64;
    let report = cc::read_vertices(
        path,
        s.strict,
        Arc::clone(&progress.counter),
        |id, reversed| {
            progress.tick();
            while next < id {
                docs.push(&Doc::default())?;
                next += 1;
                unnamed += 1;
            }
            let mut url = String::with_capacity(reversed.len());
            cc::host_name(reversed, &mut url);
            docs.push(&Doc {
                url,
                crawled: true,
                ..Doc::default()
            })?;
            next += 1;
            Ok(())
        },
    )?;
    docs.finish()?;
    progress.finish(s, &report);
    if unnamed > 0 {
        s.reporter.note(&format!(
            "{STAGE}: {unnamed} vertex ids below the last one have no vertex line; their docs have empty names"
        ));
    }
    let mut ckpt = ReadCheckpoint::new(&report, 0);
    ckpt.nodes = next;
    ckpt.unnamed_nodes = unnamed;
    Ok(ckpt)
}

/// Step 2: docIDs for sources, the doc table, `(dst key, src docID)` into B.
fn join_sources<K: NodeKey>(
    mut by_src: Sorted<K::Arc>,
    nodes: Sorted<K>,
    docs_path: &Path,
    by_dst: &mut ExternalSorter<(K, u64)>,
    doc: &impl Fn(&K) -> Result<Doc>,
    s: &Settings,
) -> Result<()> {
    let task = s
        .reporter
        .task(&format!("{STAGE}: numbering sources"), None, Unit::Records);
    let mut docs = DocWriter::create(docs_path, STAGE)?;
    let mut ids = DocIds::new(nodes);
    let mut write_doc = |key: &K| docs.push(&doc(key)?);
    let mut n = 0u64;
    while let Some(arc) = by_src.next_record()? {
        let src_doc = ids.lookup(|node| K::cmp_src(node, &arc), &mut write_doc)?;
        by_dst.push((K::into_dst(arc), src_doc))?;
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
    }
    while ids.advance(&mut write_doc)? {}
    docs.finish()?;
    Ok(())
}

/// Step 3: docIDs for destinations; arcs into the forward and transposed sorts.
fn join_destinations<K: Record>(
    mut by_dst: Sorted<(K, u64)>,
    nodes: Sorted<K>,
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
        let dst_doc = ids.lookup(|node| node.cmp(&dst), &mut |_| Ok(()))?;
        fwd.push((src_doc, dst_doc))?;
        rev.push((dst_doc, src_doc))?;
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
    }
    Ok(())
}

/// Step 4: a sorted arc stream into an edge file (kept if an interrupted
/// attempt of the stage already wrote it).
pub(crate) fn write_edges(
    sorter: ExternalSorter<(u64, u64)>,
    path: &Path,
    direction: Direction,
    nodes: u64,
    cx: &StageContext,
) -> Result<super::EdgeFileStats> {
    if let Ok(existing) = EdgeFile::open(path) {
        drop(sorter);
        return Ok(existing.stats().clone());
    }
    let task = cx.task(
        &format!("writing {} edges", direction.name()),
        None,
        Unit::Records,
    );
    super::edges::write_sorted(sorter.finish()?, path, direction, nodes, task.as_ref())
}

//! BVGraph in and out: the LAW graphs in WebGraph's format import to the
//! same graph as their edge lists; a job's graph exported and imported again
//! is the same graph; the golden BVGraph reads and writes byte for byte.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use webmill::docs::DocTable;
use webmill::graph::bvgraph::{self, BvGraphFiles};
use webmill::graph::import::{
    import_graph, GraphFormat, ImportFigures, ImportGraph, ImportOptions,
};
use webmill::graph::{Direction, EdgeFile, EdgeWriter};
use webmill::job::{Job, JobFile, Settings, StageId};
use webmill::progress::{Reporter, Silent, Unit};

/// Imports `inputs` as `format` into a fresh job in `dir`.
fn import(dir: &Path, format: GraphFormat, inputs: Vec<PathBuf>, keep_self_loops: bool) -> Job {
    let mut job = Job::open(dir, true).unwrap();
    let opts = ImportOptions {
        format,
        inputs,
        keep_self_loops,
    };
    assert!(import_graph(&mut job, &opts, &Settings::new(64 << 20))
        .unwrap()
        .ran());
    job
}

fn figures(job: &Job) -> ImportFigures {
    job.figures::<ImportGraph>(StageId::ImportGraph)
        .unwrap()
        .expect("the import finished")
}

/// Lists of an edge file: (node, neighbours).
type Lists = Vec<(u64, Vec<u64>)>;

/// Every list of an edge file.
fn lists(path: &Path) -> Lists {
    let f = EdgeFile::open(path).unwrap();
    f.verify().unwrap();
    let mut out: Lists = Vec::new();
    for l in f.lists() {
        let (n, d) = l.unwrap();
        match out.last_mut() {
            Some((m, e)) if *m == n => e.extend(d),
            _ => out.push((n, d)),
        }
    }
    out
}

/// The doc names, the forward and the transposed lists of a job.
fn graph_of(job: &Job) -> (Vec<String>, Lists, Lists) {
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    let names = docs.iter().map(|d| d.unwrap().1.url).collect();
    (
        names,
        lists(&job.file(JobFile::Edges).unwrap()),
        lists(&job.file(JobFile::EdgesT).unwrap()),
    )
}

#[test]
fn law_graphs_import_as_the_same_graph_as_their_edge_lists() {
    let Some(data) = data_dir() else { return };
    for (name, keep_self_loops) in [("cnr-2000", false), ("uk-2007-05@100000", true)] {
        let base = data.join("graphs").join(name);
        let dir = tempfile::tempdir().unwrap();
        let snap = import(
            &dir.path().join("snap"),
            GraphFormat::Snap,
            vec![base.with_extension("tsv.gz")],
            keep_self_loops,
        );
        let bv = import(
            &dir.path().join("bv"),
            GraphFormat::BvGraph,
            vec![base.clone()],
            keep_self_loops,
        );
        let (a, b) = (figures(&snap), figures(&bv));
        assert_eq!(
            (a.nodes, a.arcs, a.self_loops, a.dangling),
            (b.nodes, b.arcs, b.self_loops, b.dangling),
            "{name}"
        );
        assert!(
            graph_of(&snap) == graph_of(&bv),
            "{name}: the graphs differ"
        );
    }
}

#[test]
fn an_exported_graph_imports_back_identical() {
    let Some(data) = data_dir() else { return };
    let input = data.join("graphs").join("cnr-2000.tsv.gz");
    let dir = tempfile::tempdir().unwrap();
    for keep_self_loops in [false, true] {
        let job = import(
            &dir.path().join(format!("job-{keep_self_loops}")),
            GraphFormat::Snap,
            vec![input.clone()],
            keep_self_loops,
        );
        let files = BvGraphFiles::new(&dir.path().join(format!("out-{keep_self_loops}"))).unwrap();
        let edges = EdgeFile::open(job.file(JobFile::Edges).unwrap()).unwrap();
        let task = Silent.task("export", None, Unit::Records);
        let w = bvgraph::write(&edges, &files, task.as_ref()).unwrap();
        assert_eq!((w.nodes, w.arcs), (edges.stats().nodes, edges.stats().arcs));
        // WebGraph's compression: LAW's own file is 2.897 bits/arc with
        // the self-loops.
        assert!(w.bits_per_arc < 3.5, "{w:?}");
        let back = import(
            &dir.path().join(format!("back-{keep_self_loops}")),
            GraphFormat::BvGraph,
            vec![files.basename.clone()],
            true,
        );
        assert!(graph_of(&job) == graph_of(&back), "round trip differs");
        assert_eq!(figures(&back).self_loops, 0);
    }
}

/// The golden graph: 7 nodes, the last without arcs, a self-loop, a list
/// long enough for an interval and one copied from a reference.
const GOLDEN_ARCS: &[(u64, u64)] = &[
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (0, 5),
    (1, 0),
    (1, 2),
    (1, 3),
    (1, 4),
    (1, 5),
    (2, 2),
    (2, 6),
    (4, 0),
    (5, 1),
    (5, 4),
];
const GOLDEN_NODES: u64 = 8;

fn golden_dir() -> PathBuf {
    workspace_root().join("formats/golden/bvgraph")
}

#[test]
fn the_golden_bvgraph_reads_and_writes_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("edges.wm");
    let mut w = EdgeWriter::create(&edges, Direction::Forward, GOLDEN_NODES).unwrap();
    for &(s, d) in GOLDEN_ARCS {
        w.push(s, d).unwrap();
    }
    w.finish().unwrap();
    let out = BvGraphFiles::new(&dir.path().join("golden")).unwrap();
    let task = Silent.task("export", None, Unit::Records);
    bvgraph::write(&EdgeFile::open(&edges).unwrap(), &out, task.as_ref()).unwrap();
    let golden = BvGraphFiles::new(&golden_dir().join("golden")).unwrap();
    if std::env::var_os("WEBMILL_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        for (from, to) in [
            (&out.graph, &golden.graph),
            (&out.properties, &golden.properties),
            (&out.offsets, &golden.offsets),
        ] {
            std::fs::copy(from, to).unwrap();
        }
    }
    for (got, want) in [
        (&out.graph, &golden.graph),
        (&out.properties, &golden.properties),
        (&out.offsets, &golden.offsets),
    ] {
        assert!(
            std::fs::read(got).unwrap() == std::fs::read(want).unwrap(),
            "{} differs from today's writer",
            want.display()
        );
    }
    let mut arcs = Vec::new();
    let info = bvgraph::read_lists(&golden, task.as_ref(), |v, s| {
        arcs.extend(s.iter().map(|&d| (v, d)));
        Ok(())
    })
    .unwrap();
    assert_eq!(
        (info.nodes, info.arcs),
        (GOLDEN_NODES, GOLDEN_ARCS.len() as u64)
    );
    assert_eq!(arcs, GOLDEN_ARCS);
}

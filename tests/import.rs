//! The import-graph stage against a straightforward in-memory reference, on
//! generated graphs with sparse ids (under budgets far below the data, so the
//! external sort spills and merges in several passes) and on real LAW graphs.

mod common;

use common::*;
use webmill::docs::DocTable;
use webmill::graph::import::{
    import_graph, GraphFormat, ImportOptions, ImportOutcome, DOCS_FILE, EDGES_FILE, STAGE,
    TRANSPOSED_FILE,
};
use webmill::graph::EdgeFile;
use webmill::job::{Job, Settings};

fn arcs_of(f: &EdgeFile) -> Vec<(u64, u64)> {
    f.lists()
        .flat_map(|l| {
            let (n, d) = l.unwrap();
            d.into_iter().map(move |x| (n, x))
        })
        .collect()
}

fn import(dir: &std::path::Path, inputs: Vec<std::path::PathBuf>, mem: u64) -> Job {
    let mut job = Job::open(dir, true).unwrap();
    let opts = ImportOptions {
        format: GraphFormat::Snap,
        inputs,
        keep_self_loops: false,
    };
    match import_graph(&mut job, &opts, &Settings::new(mem)).unwrap() {
        ImportOutcome::Done { .. } => {}
        ImportOutcome::AlreadyDone(_) => panic!("fresh job reported as done"),
    }
    job
}

fn check_against_naive(job: &Job, naive: &NaiveGraph) {
    let docs = DocTable::open(job.path(DOCS_FILE)).unwrap();
    let names: Vec<u64> = docs
        .iter()
        .map(|d| d.unwrap().1.url.parse().unwrap())
        .collect();
    assert_eq!(names, naive.ids, "docIDs follow the ids' numeric order");
    let fwd = EdgeFile::open(job.path(EDGES_FILE)).unwrap();
    let rev = EdgeFile::open(job.path(TRANSPOSED_FILE)).unwrap();
    fwd.verify().unwrap();
    rev.verify().unwrap();
    assert_eq!(arcs_of(&fwd), naive.forward);
    assert_eq!(arcs_of(&rev), naive.transposed);
    let fig = &job.stage(STAGE).unwrap().figures.extra;
    assert_eq!(fig["self_loops"], naive.self_loops);
    assert_eq!(fig["arcs"], naive.forward.len() as u64);
    let with_out: std::collections::BTreeSet<u64> = naive.forward.iter().map(|a| a.0).collect();
    assert_eq!(fig["dangling"], (naive.ids.len() - with_out.len()) as u64);
}

#[test]
fn generated_graph_matches_naive_import_under_a_tiny_budget() {
    let dir = tempfile::tempdir().unwrap();
    let arcs = random_graph(7, 150_000);
    // Two inputs, one gzip and one plain, read in order.
    let (a, b) = arcs.split_at(arcs.len() / 3);
    let pa = dir.path().join("part1.tsv.gz");
    let pb = dir.path().join("part2.tsv");
    write_snap(&pa, a, true);
    write_snap(&pb, b, false);
    // ~2.5 MB of arcs in memory, budget 1 MiB: many runs, multi-pass merges.
    let job = import(&dir.path().join("job"), vec![pa, pb], 1 << 20);
    check_against_naive(&job, &naive_import(&arcs));
}

#[test]
fn same_input_same_bytes_whatever_the_budget_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let arcs = random_graph(11, 60_000);
    let input = dir.path().join("g.tsv");
    write_snap(&input, &arcs, false);
    let mut files = Vec::new();
    for (i, (mem, threads)) in [(1u64 << 20, 1), (256 << 20, 2)].into_iter().enumerate() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let job_dir = dir.path().join(format!("job{i}"));
        pool.install(|| import(&job_dir, vec![input.clone()], mem));
        files.push(
            [DOCS_FILE, EDGES_FILE, TRANSPOSED_FILE]
                .map(|f| std::fs::read(job_dir.join(f)).unwrap()),
        );
    }
    assert!(
        files[0] == files[1],
        "outputs differ between budgets/thread counts"
    );
}

#[test]
fn real_graphs_match_naive_import() {
    let Some(data) = data_dir() else { return };
    for (name, nodes, arcs, self_loops) in [
        ("cnr-2000", 325_557u64, 3_128_710u64, 87_442u64),
        ("uk-2007-05@100000", 100_000, 3_034_945, 15_670),
    ] {
        let input = data.join("graphs").join(format!("{name}.tsv.gz"));
        let dir = tempfile::tempdir().unwrap();
        // The arcs take ~50 MB as pairs in memory; the budget is 16 MiB.
        let job = import(&dir.path().join("job"), vec![input.clone()], 16 << 20);
        let fig = &job.stage(STAGE).unwrap().figures.extra;
        assert_eq!(fig["nodes"], nodes, "{name}");
        assert_eq!(fig["arcs"], arcs, "{name}");
        assert_eq!(fig["self_loops"], self_loops, "{name}");
        check_against_naive(&job, &naive_import(&read_snap(&input)));
    }
}

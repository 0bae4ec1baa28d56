//! `webmill export bvgraph` and `import-graph --format bvgraph` end to end:
//! the round trip, the errors naming the file, and — when webgraph-cli is
//! installed (`cargo install webgraph-cli`; on PATH or in $WEBGRAPH_CLI) —
//! WebGraph's own tools reading our export of cnr-2000 and uk-2007-05@100000:
//! `webgraph check ef` on it, `webgraph check eq` against LAW's file of the
//! same graph, and `webgraph-rank pagerank` on its transpose giving our ranks
//! (L1 < 1e-10). Without webgraph-cli it skips, saying so.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command as Std;

use assert_cmd::Command;
use common::*;

fn webmill() -> Command {
    Command::cargo_bin("webmill").unwrap()
}

/// `webmill export edges JOB` as text.
fn edges_tsv(job: &Path) -> String {
    export_tsv("edges", job)
}

/// `webmill export WHAT JOB` as text.
fn export_tsv(what: &str, job: &Path) -> String {
    let out = webmill()
        .args(["export", what, "-q"])
        .arg(job)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// The webgraph-cli binary `name`, if installed.
fn webgraph_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::var_os("WEBGRAPH_CLI")
        .map(|d| vec![PathBuf::from(d)])
        .unwrap_or_default()
        .into_iter()
        .chain(std::env::split_paths(&path));
    let found = dirs.map(|d| d.join(name)).find(|p| p.is_file());
    if found.is_none() {
        eprintln!("SKIPPED: webgraph-cli's {name} not found (cargo install webgraph-cli)");
    }
    found
}

/// `webmill export bvgraph JOB -o BASENAME`, which must succeed.
fn export_bvgraph(job: &Path, basename: &Path) {
    webmill()
        .args(["export", "bvgraph", "-q"])
        .arg(job)
        .arg("-o")
        .arg(basename)
        .assert()
        .success();
}

#[test]
fn export_and_import_round_trip_through_the_command_line() {
    let Some(data) = data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    let base = data.join("graphs/uk-2007-05@100000");
    webmill()
        .args(["import-graph", "-q", "--format", "bvgraph", "--out"])
        .arg(&job)
        .arg(&base)
        .assert()
        .success();
    let out = dir.path().join("uk");
    export_bvgraph(&job, &out);
    for ext in ["graph", "properties", "offsets"] {
        assert!(out.with_extension(ext).is_file(), "{ext} missing");
    }
    let back = dir.path().join("back");
    webmill()
        .args(["import-graph", "-q", "--format", "bvgraph", "--out"])
        .arg(&back)
        .arg(out.with_extension("graph"))
        .assert()
        .success();
    assert!(edges_tsv(&job) == edges_tsv(&back), "round trip differs");
}

#[test]
fn a_missing_or_broken_bvgraph_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("nothing");
    webmill()
        .args(["import-graph", "-q", "--format", "bvgraph", "--out"])
        .arg(dir.path().join("job"))
        .arg(&base)
        .assert()
        .failure()
        .stderr(predicates::str::contains("nothing.graph"))
        .stderr(predicates::str::contains("missing"));
    // A graph file of garbage with a valid properties file.
    std::fs::write(base.with_extension("graph"), [0u8; 3]).unwrap();
    std::fs::write(
        base.with_extension("properties"),
        "graphclass=it.unimi.dsi.webgraph.BVGraph\nversion=0\nnodes=1000\narcs=5000\n",
    )
    .unwrap();
    webmill()
        .args(["import-graph", "-q", "--format", "bvgraph", "--out"])
        .arg(dir.path().join("job2"))
        .arg(&base)
        .assert()
        .failure()
        .stderr(predicates::str::contains("nothing.graph"))
        .stderr(predicates::str::contains("panicked").not());
    // export bvgraph needs -o.
    webmill()
        .args(["export", "bvgraph", "-q"])
        .arg(dir.path().join("job"))
        .assert()
        .failure();
}

/// `webmill export ranks JOB`: the rank of each docID, in docID order.
fn ranks(job: &Path) -> Vec<f64> {
    export_tsv("ranks", job)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.rsplit('\t').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn webgraph_cli_reads_our_export() {
    let Some(data) = data_dir() else { return };
    let Some(webgraph) = webgraph_tool("webgraph") else {
        return;
    };
    let Some(rank) = webgraph_tool("webgraph-rank") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for graph in ["cnr-2000", "uk-2007-05@100000"] {
        let job = dir.path().join(format!("job-{graph}"));
        // With its self-loops, the job's graph is LAW's exactly.
        webmill()
            .args(["import-graph", "-q", "--keep-self-loops", "--out"])
            .arg(&job)
            .arg(data.join(format!("graphs/{graph}.tsv.gz")))
            .assert()
            .success();
        webmill()
            .args(["pagerank", "-q", "--tol", "1e-13"])
            .arg(&job)
            .assert()
            .success();
        let out = dir.path().join(format!("ours-{graph}"));
        export_bvgraph(&job, &out);
        let run = |tool: &Path, args: &[&std::ffi::OsStr]| {
            let status = Std::new(tool).args(args).status().unwrap();
            assert!(status.success(), "{} {args:?} failed", tool.display());
        };
        run(
            &webgraph,
            &["build".as_ref(), "ef".as_ref(), out.as_os_str()],
        );
        run(
            &webgraph,
            &["check".as_ref(), "ef".as_ref(), out.as_os_str()],
        );
        // LAW's file, copied (webgraph wants its .ef beside it).
        let law = dir.path().join(format!("law-{graph}"));
        for ext in ["graph", "properties"] {
            std::fs::copy(
                data.join(format!("graphs/{graph}.{ext}")),
                dir.path().join(format!("law-{graph}.{ext}")),
            )
            .unwrap();
        }
        run(
            &webgraph,
            &["build".as_ref(), "ef".as_ref(), law.as_os_str()],
        );
        run(
            &webgraph,
            &[
                "check".as_ref(),
                "eq".as_ref(),
                out.as_os_str(),
                law.as_os_str(),
            ],
        );
        // webgraph-rank's PageRank of our export (on its transpose) is ours.
        let t = dir.path().join(format!("ours-{graph}-t"));
        run(
            &webgraph,
            &[
                "transform".as_ref(),
                "transpose".as_ref(),
                out.as_os_str(),
                t.as_os_str(),
            ],
        );
        run(&webgraph, &["build".as_ref(), "ef".as_ref(), t.as_os_str()]);
        let theirs = dir.path().join(format!("wg-{graph}.txt"));
        run(
            &rank,
            &[
                "pagerank".as_ref(),
                "--threshold".as_ref(),
                "1e-13".as_ref(),
                "--precision".as_ref(),
                "17".as_ref(),
                "-o".as_ref(),
                theirs.as_os_str(),
                t.as_os_str(),
            ],
        );
        let theirs: Vec<f64> = std::fs::read_to_string(&theirs)
            .unwrap()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        let ours = ranks(&job);
        assert_eq!(ours.len(), theirs.len(), "{graph}");
        let l1: f64 = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).sum();
        eprintln!("{graph}: L1(webmill, webgraph-rank) = {l1:e}");
        assert!(l1 < 1e-10, "{graph}: L1 {l1:e}");
    }
}

use predicates::prelude::PredicateBooleanExt;

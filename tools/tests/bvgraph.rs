//! `webmill export bvgraph` and `import-graph --format bvgraph` end to end:
//! the round trip, the errors naming the file, and — when webgraph-cli is
//! installed (`cargo install webgraph-cli`; on PATH or in $WEBGRAPH_CLI) —
//! WebGraph's own tools reading our export: `webgraph check ef` on it, and
//! `webgraph check eq` against LAW's file of the same graph.

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
    let out = webmill()
        .args(["export", "edges", "-q"])
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

#[test]
fn webgraph_cli_reads_our_export() {
    let Some(data) = data_dir() else { return };
    let Some(webgraph) = webgraph_tool("webgraph") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    // With its self-loops, the job's graph is LAW's cnr-2000 exactly.
    webmill()
        .args(["import-graph", "-q", "--keep-self-loops", "--out"])
        .arg(&job)
        .arg(data.join("graphs/cnr-2000.tsv.gz"))
        .assert()
        .success();
    let out = dir.path().join("cnr");
    export_bvgraph(&job, &out);
    let run = |args: &[&std::ffi::OsStr]| {
        let status = Std::new(&webgraph).args(args).status().unwrap();
        assert!(status.success(), "webgraph {args:?} failed");
    };
    run(&["build".as_ref(), "ef".as_ref(), out.as_os_str()]);
    run(&["check".as_ref(), "ef".as_ref(), out.as_os_str()]);
    // LAW's file, copied (webgraph wants its .ef beside it).
    let law = dir.path().join("law");
    for ext in ["graph", "properties"] {
        std::fs::copy(
            data.join("graphs/cnr-2000").with_extension(ext),
            law.with_extension(ext),
        )
        .unwrap();
    }
    run(&["build".as_ref(), "ef".as_ref(), law.as_os_str()]);
    run(&[
        "check".as_ref(),
        "eq".as_ref(),
        out.as_os_str(),
        law.as_os_str(),
    ]);
}

use predicates::prelude::PredicateBooleanExt;

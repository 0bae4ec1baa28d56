//! The `webmill` command end to end: import, stats, exports, the inspection
//! tools, job semantics (skip, refuse, force), bad input and corrupted files.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::*;
use predicates::prelude::*;

fn webmill() -> Command {
    Command::cargo_bin("webmill").unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let out = webmill()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

fn import(job: &Path, inputs: &[&Path], extra: &[&str]) -> assert_cmd::assert::Assert {
    let mut cmd = webmill();
    cmd.arg("import-graph")
        .arg("--out")
        .arg(job)
        .args(extra)
        .args(inputs);
    cmd.assert()
}

/// A small graph with sparse ids, a self-loop and a duplicate.
fn small_graph(dir: &Path) -> PathBuf {
    let p = dir.join("small.tsv");
    std::fs::write(
        &p,
        "# tiny\n100\t7\n7\t100\n100\t42\n42\t42\n100\t7\n9000000000\t7\n",
    )
    .unwrap();
    p
}

#[test]
fn help_explains_flags_and_defaults() {
    webmill()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("--mem").and(predicate::str::contains("default")));
    webmill()
        .args(["import-graph", "--help"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("--keep-self-loops")
                .and(predicate::str::contains("--strict"))
                .and(predicate::str::contains("default: snap"))
                .and(predicate::str::contains("--threads")),
        );
}

#[test]
fn import_stats_exports_and_tools() {
    let dir = tempfile::tempdir().unwrap();
    let input = small_graph(dir.path());
    let job = dir.path().join("job");
    import(&job, &[&input], &["--mem", "8M"])
        .success()
        .stderr(predicate::str::contains(
            "4 nodes, 4 arcs (1 self-loops dropped, 1 duplicate arcs",
        ));

    let stats: serde_json::Value =
        serde_json::from_str(&stdout_of(&["stats", "--json", job.to_str().unwrap()])).unwrap();
    assert_eq!(stats["nodes"], 4);
    assert_eq!(stats["arcs"], 4);
    assert_eq!(stats["crawled"], 4);
    assert_eq!(stats["dangling"], 1); // 42 only had a self-loop
    let edges_len = std::fs::metadata(job.join("edges.wm")).unwrap().len();
    assert_eq!(stats["edges_bytes"], edges_len);

    // docIDs follow the numeric order of the ids: 7, 42, 100, 9000000000.
    let docs = stdout_of(&["export", "docs", job.to_str().unwrap()]);
    assert_eq!(
        docs,
        "# docid\turl\tcrawled\tbytes\ttitle\n0\t7\t1\t0\t\n1\t42\t1\t0\t\n2\t100\t1\t0\t\n3\t9000000000\t1\t0\t\n"
    );
    let edges = stdout_of(&["export", "edges", job.to_str().unwrap()]);
    assert_eq!(edges, "# src\tdst\n0\t2\n2\t0\n2\t1\n3\t0\n");
    let dumped = stdout_of(&["dump", job.join("edges.wm").to_str().unwrap()]);
    assert_eq!(
        dumped.lines().skip(1).collect::<Vec<_>>(),
        edges.lines().skip(1).collect::<Vec<_>>()
    );
    let transposed = stdout_of(&["dump", job.join("edges-t.wm").to_str().unwrap()]);
    assert_eq!(transposed, "# node\tneighbour\n0\t2\n0\t3\n1\t2\n2\t0\n");

    let inspect = stdout_of(&["inspect", job.join("edges.wm").to_str().unwrap()]);
    assert!(
        inspect.contains("kind        edges (format version 1)"),
        "{inspect}"
    );
    assert!(inspect.contains("records     4"), "{inspect}");
    let inspect_job = stdout_of(&["inspect", job.to_str().unwrap()]);
    assert!(
        inspect_job.contains("stage import-graph: Finished"),
        "{inspect_job}"
    );
    webmill()
        .args(["verify", job.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("ok").count(3));
}

#[test]
fn rerun_skips_changed_parameters_are_refused_force_recomputes() {
    let dir = tempfile::tempdir().unwrap();
    let input = small_graph(dir.path());
    let job = dir.path().join("job");
    import(&job, &[&input], &[]).success();
    import(&job, &[&input], &[]).success().stderr(
        predicate::str::contains("already finished").and(predicate::str::contains("skipped")),
    );
    import(&job, &[&input], &["--keep-self-loops"])
        .failure()
        .stderr(
            predicate::str::contains("other parameters").and(predicate::str::contains("--force")),
        );
    import(&job, &[&input], &["--keep-self-loops", "--force"]).success();
    let stats: serde_json::Value =
        serde_json::from_str(&stdout_of(&["stats", "--json", job.to_str().unwrap()])).unwrap();
    assert_eq!(stats["arcs"], 5);
    assert_eq!(stats["self_loops"], 0);
}

#[test]
fn bad_input_is_reported_and_valid_lines_kept() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.tsv");
    std::fs::write(&junk, b"1\t2\nnot an arc\n2\t3\n\xff\xfe\x00binary\n3\t1\n").unwrap();
    // A gzip file cut in the middle.
    let cut = dir.path().join("cut.tsv.gz");
    let arcs: Vec<(u64, u64)> = (0..50_000u64).map(|i| (i, (i * 7 + 1) % 50_000)).collect();
    write_snap(&cut, &arcs, true);
    let bytes = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();

    let job = dir.path().join("job");
    import(&job, &[&junk, &cut], &[]).success().stderr(
        predicate::str::contains("junk.tsv: line 2")
            .and(predicate::str::contains("junk.tsv: line 4"))
            .and(predicate::str::contains("cut.tsv.gz: after line"))
            .and(predicate::str::contains("3 lines skipped")),
    );
    let stats: serde_json::Value =
        serde_json::from_str(&stdout_of(&["stats", "--json", job.to_str().unwrap()])).unwrap();
    assert_eq!(stats["skipped"], 3);
    let kept = stats["arcs"].as_u64().unwrap();
    assert!(kept > 3 + 1000 && kept < 50_003, "{kept}");

    import(&dir.path().join("strict"), &[&junk], &["--strict"])
        .failure()
        .stderr(
            predicate::str::contains("junk.tsv: line 2").and(predicate::str::contains("--strict")),
        );
    import(
        &dir.path().join("missing"),
        &[&dir.path().join("nope.tsv")],
        &[],
    )
    .failure()
    .stderr(predicate::str::contains("nope.tsv"));
}

#[test]
fn corrupted_or_truncated_job_files_fail_verification_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv.gz");
    write_snap(&input, &random_graph(3, 20_000), true);
    let job = dir.path().join("job");
    import(&job, &[&input], &[]).success();
    let mut rng = Rng(99);
    for name in ["docs.wm", "edges.wm", "edges-t.wm"] {
        let path = job.join(name);
        let good = std::fs::read(&path).unwrap();
        let mut positions = vec![0, 8, 20, good.len() / 2, good.len() - 30, good.len() - 1];
        positions.extend((0..24).map(|_| rng.below(good.len() as u64) as usize));
        for pos in positions {
            let mut bad = good.clone();
            bad[pos] ^= 1 << rng.below(8);
            std::fs::write(&path, &bad).unwrap();
            webmill()
                .args(["verify", job.to_str().unwrap()])
                .assert()
                .failure()
                .stderr(predicate::str::contains(name));
            webmill()
                .args(["verify", path.to_str().unwrap()])
                .assert()
                .failure()
                .stderr(predicate::str::contains(name));
        }
        for len in [0, 10, good.len() / 2, good.len() - 1] {
            std::fs::write(&path, &good[..len]).unwrap();
            webmill()
                .args(["verify", job.to_str().unwrap()])
                .assert()
                .failure()
                .stderr(predicate::str::contains(name));
        }
        // Readers fail cleanly too, no panic.
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        webmill()
            .args(["export", "edges", job.to_str().unwrap()])
            .assert()
            .code(predicate::ne(101));
        std::fs::write(&path, &good).unwrap();
    }
    webmill()
        .args(["verify", job.to_str().unwrap()])
        .assert()
        .success();
}

#[test]
fn real_graph_under_a_small_budget() {
    let Some(data) = data_dir() else { return };
    let input = data.join("graphs/uk-2007-05@100000.tsv.gz");
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("uk");
    import(&job, &[&input], &["--mem", "16M", "-q"])
        .success()
        .stderr("");
    let stats: serde_json::Value =
        serde_json::from_str(&stdout_of(&["stats", "--json", job.to_str().unwrap()])).unwrap();
    assert_eq!(stats["nodes"], 100_000);
    assert_eq!(stats["arcs"], 3_034_945);
    assert_eq!(stats["self_loops"], 15_670);
    assert!(stats["bits_per_arc"].as_f64().unwrap() < 8.0);
    webmill()
        .args(["verify", job.to_str().unwrap()])
        .assert()
        .success();
}

#[test]
fn pagerank_top_export_and_job_rules() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.tsv");
    write_snap(&input, &random_graph(4, 30_000), false);
    let job = dir.path().join("job");
    let j = job.to_str().unwrap();
    import(&job, &[&input], &[]).success();
    webmill()
        .args(["pagerank", j, "--mem", "64M"])
        .assert()
        .success()
        .stderr(
            predicate::str::contains("pagerank: converged after")
                .and(predicate::str::contains("memory mode")),
        );
    webmill()
        .args(["pagerank", j])
        .assert()
        .success()
        .stderr(predicate::str::contains("already finished"));
    webmill()
        .args(["pagerank", j, "--damping", "0.9"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--force"));
    webmill()
        .args(["pagerank", j, "--damping", "1.5", "--force"])
        .assert()
        .failure();
    let ranks = stdout_of(&["export", "ranks", j]);
    let values: Vec<f64> = ranks
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(values.len() as u64, {
        let s: serde_json::Value =
            serde_json::from_str(&stdout_of(&["stats", "--json", j])).unwrap();
        s["nodes"].as_u64().unwrap()
    });
    assert!((values.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    let top = stdout_of(&["top", j, "-k", "5"]);
    let rows: Vec<&str> = top.lines().skip(1).collect();
    assert_eq!(rows.len(), 5);
    let best = values.iter().cloned().fold(0.0, f64::max);
    let first: f64 = rows[0].split('\t').next().unwrap().parse().unwrap();
    assert!((first - best).abs() / best < 1e-5, "{first} vs {best}");
    let svg = std::fs::read_to_string(job.join("pagerank-convergence.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("polyline"));
    webmill()
        .args(["verify", j])
        .assert()
        .success()
        .stdout(predicate::str::contains("ranks.wm"));
    // Recomputing the graph invalidates the ranks.
    import(&job, &[&input], &["--keep-self-loops", "--force"]).success();
    webmill()
        .args(["top", j])
        .assert()
        .failure()
        .stderr(predicate::str::contains("pagerank"));
}

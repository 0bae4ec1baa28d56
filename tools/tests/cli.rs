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

/// A reader that stops early (`webmill stats JOB | head -1`) ends the output
/// quietly: no panic message about a broken pipe.
#[test]
fn closed_stdout_pipe_is_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    import(&job, &[&small_graph(dir.path())], &[]).success();
    for cmd in ["stats", "inspect"] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("webmill"))
            .arg(cmd)
            .arg(&job)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Closed before the command writes its first line.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{cmd}: {stderr}");
    }
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

/// The flags of a command's `--help`, each with its explanation: flag → its
/// block of help lines.
fn flag_blocks(args: &[&str]) -> std::collections::BTreeMap<String, String> {
    let help = stdout_of(args);
    let mut blocks = std::collections::BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in help.lines() {
        let t = line.trim_start();
        let starts = line.starts_with("  ") && (t.starts_with("--") || t.starts_with('-'));
        let indent = line.len() - t.len();
        if starts && indent <= 6 {
            if let Some((k, v)) = current.take() {
                blocks.insert(k, v);
            }
            let name = t
                .split([' ', ',', '='])
                .find(|w| w.starts_with("--"))
                .unwrap_or(t)
                .to_string();
            current = Some((name, format!("{t}\n")));
        } else if !line.starts_with(' ') && !line.is_empty() {
            // A section header ("Options:", "Arguments:").
            if let Some((k, v)) = current.take() {
                blocks.insert(k, v);
            }
        } else if let Some((_, v)) = current.as_mut() {
            v.push_str(t);
            v.push('\n');
        }
    }
    if let Some((k, v)) = current.take() {
        blocks.insert(k, v);
    }
    // The same words whatever the layout (clap wraps a command's help
    // beside the flags or below them).
    blocks
        .into_iter()
        .map(|(k, v)| (k, v.split_whitespace().collect::<Vec<_>>().join(" ")))
        .collect()
}

/// Ingest's flags are one struct, flattened into `ingest`, `shard` and
/// `run`: each of `ingest --help`'s own flags appears in `run --help` and in
/// `shard plan --help` with the same explanation and default, so the three
/// cannot drift apart.
#[test]
fn ingest_flags_are_the_same_in_ingest_shard_and_run() {
    let ingest = flag_blocks(&["ingest", "--help"]);
    let run = flag_blocks(&["run", "--help"]);
    let shard = flag_blocks(&["shard", "plan", "--help"]);
    // The job's own flags, which `run` words for the whole job, and the
    // global ones (--mem, --threads…).
    let job_flags = ["--out", "--segments-from", "--strict", "--force", "--help"];
    let global = flag_blocks(&["--help"]);
    let own: Vec<&String> = ingest
        .keys()
        .filter(|k| !job_flags.contains(&k.as_str()) && !global.contains_key(*k))
        .collect();
    for flag in [
        "--base-url",
        "--segment-records",
        "--max-record-bytes",
        "--text-field",
    ] {
        assert!(own.iter().any(|k| *k == flag), "{flag} missing: {ingest:?}");
    }
    for flag in own {
        let block = &ingest[flag];
        assert_eq!(run.get(flag), Some(block), "run --help differs on {flag}");
        assert_eq!(
            shard.get(flag),
            Some(block),
            "shard plan --help differs on {flag}"
        );
        assert!(
            block.contains("[default"),
            "{flag} has no default in --help: {block}"
        );
    }
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
        inspect_job.contains("stage import-graph: finished"),
        "{inspect_job}"
    );
    webmill()
        .args(["verify", job.to_str().unwrap()])
        .assert()
        .success()
        // The manifest (its own checksum), then the three files.
        .stdout(predicate::str::contains("ok").count(4));
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

// ---------------------------------------------------------------------------
// --format tsv and --format cc end to end.

#[test]
fn import_graph_help_explains_every_format() {
    webmill()
        .args(["import-graph", "--help"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("snap:")
                .and(predicate::str::contains("tsv:"))
                .and(predicate::str::contains("cc:"))
                .and(predicate::str::contains("--order"))
                .and(predicate::str::contains("vertices file"))
                .and(predicate::str::contains("host name")),
        );
}

/// A random graph with URL-like names (and some that are not URLs), as tsv.
fn named_tsv(path: &Path, seed: u64, arcs: usize) {
    let name = |id: u64| match id % 4 {
        0 => format!("http://h{}.example/page {id}", id % 97),
        1 => format!("https://www.h{}.example/p/{id}?q=ü", id % 31),
        2 => format!("node «{id}»"),
        _ => format!("http://h{}.example/", id % 13),
    };
    let mut text = String::from("# src\tdst\n");
    for (s, d) in random_graph(seed, arcs) {
        text.push_str(&format!("{}\t{}\n", name(s), name(d)));
    }
    std::fs::write(path, text).unwrap();
}

/// A Common Crawl-like vertices file of `n` hosts and an edges file.
fn cc_files(dir: &Path, n: u64, arcs: usize) -> (PathBuf, PathBuf) {
    let v = dir.join("vertices.txt");
    let e = dir.join("edges.txt");
    let mut text = String::new();
    for id in 0..n {
        text.push_str(&format!("{id}\tcom.example{:07}.www\n", id));
    }
    std::fs::write(&v, text).unwrap();
    let mut rng = Rng(9);
    let mut text = String::new();
    for _ in 0..arcs {
        let s = rng.below(n);
        let d = if rng.below(3) == 0 {
            rng.below(n)
        } else {
            (s + rng.below(30)).min(n - 1)
        };
        text.push_str(&format!("{s}\t{d}\n"));
    }
    std::fs::write(&e, text).unwrap();
    (v, e)
}

#[test]
fn tsv_and_cc_imports_report_bad_lines_and_roles() {
    let dir = tempfile::tempdir().unwrap();
    let tsv = dir.path().join("named.tsv");
    std::fs::write(
        &tsv,
        b"# named\nhttp://a.example/\thttp://b.example/ x\nno tab\n\tempty\nb\t\xff\nhttp://b.example/ x\thttp://a.example/\n",
    )
    .unwrap();
    let job = dir.path().join("tsv");
    import(&job, &[&tsv], &["--format", "tsv"])
        .success()
        .stderr(
            predicate::str::contains("named.tsv: line 3")
                .and(predicate::str::contains("named.tsv: line 4"))
                .and(predicate::str::contains("named.tsv: line 5"))
                .and(predicate::str::contains("2 nodes, 2 arcs"))
                .and(predicate::str::contains("3 lines skipped")),
        );
    let docs = stdout_of(&["export", "docs", job.to_str().unwrap()]);
    assert!(docs.contains("http://b.example/ x"), "{docs}");
    import(
        &dir.path().join("strict"),
        &[&tsv],
        &["--format", "tsv", "--strict"],
    )
    .failure()
    .stderr(
        predicate::str::contains("named.tsv: line 3").and(predicate::str::contains("--strict")),
    );
    import(&dir.path().join("order"), &[&tsv], &["--order", "host"])
        .failure()
        .stderr(predicate::str::contains("--format tsv only"));

    let (v, e) = cc_files(dir.path(), 50, 200);
    let job = dir.path().join("cc");
    import(&job, &[&v, &e], &["--format", "cc"])
        .success()
        .stderr(predicate::str::contains("50 nodes"));
    let docs = stdout_of(&["export", "docs", job.to_str().unwrap()]);
    assert!(docs.contains("www.example0000049.com"), "{docs}");
    import(&dir.path().join("swapped"), &[&e, &v], &["--format", "cc"])
        .failure()
        .stderr(
            predicate::str::contains("edges.txt")
                .and(predicate::str::contains("looks like an edges file")),
        );
    import(&dir.path().join("alone"), &[&v], &["--format", "cc"])
        .failure()
        .stderr(predicate::str::contains("at least one edges file"));
    let beyond = dir.path().join("beyond.txt");
    std::fs::write(&beyond, "1\t2\n3\t50\n").unwrap();
    import(
        &dir.path().join("beyond"),
        &[&v, &beyond],
        &["--format", "cc"],
    )
    .success()
    .stderr(predicate::str::contains(
        "beyond.txt: line 2: arc names vertex id 50",
    ));
}

fn job_outputs(job: &Path) -> Vec<Vec<u8>> {
    ["docs.wm", "edges.wm", "edges-t.wm"]
        .iter()
        .map(|f| std::fs::read(job.join(f)).unwrap())
        .collect()
}

/// Aborted at failpoints (a sort run written, a merge pass, a file about to be
/// published), then resumed under another budget: tsv and cc imports end
/// byte-identical to uninterrupted runs.
#[test]
fn tsv_and_cc_imports_resume_after_failpoints() {
    let dir = tempfile::tempdir().unwrap();
    let tsv = dir.path().join("named.tsv");
    named_tsv(&tsv, 12, 60_000);
    let (v, e) = cc_files(dir.path(), 20_000, 250_000);
    let cases: [(&str, Vec<&Path>, &[&str]); 2] = [
        (
            "tsv",
            vec![&tsv],
            &[
                "sort.run_written:3",
                "sort.run_written:25",
                "sort.merge_written:2",
                "publish.before_rename:2",
            ],
        ),
        (
            "cc",
            vec![&v, &e],
            &[
                "sort.run_written:2",
                "sort.run_written:30",
                "publish.before_rename:2",
            ],
        ),
    ];
    for (format, inputs, points) in cases {
        let reference = dir.path().join(format!("{format}-reference"));
        import(
            &reference,
            &inputs,
            &["--format", format, "--mem", "1M", "-q"],
        )
        .success();
        let want = job_outputs(&reference);
        for point in points {
            let job = dir.path().join(format!("{format}-{point}"));
            let mut cmd = webmill();
            cmd.args([
                "import-graph",
                "-q",
                "--format",
                format,
                "--mem",
                "1M",
                "--out",
            ])
            .arg(&job)
            .args(&inputs)
            .env("WEBMILL_FAILPOINT", point);
            let out = cmd.output().unwrap();
            assert!(
                !out.status.success(),
                "{format}: failpoint {point} was never reached"
            );
            import(&job, &inputs, &["--format", format, "--mem", "3M", "-q"]).success();
            assert!(
                job_outputs(&job) == want,
                "{format}: outputs differ after failpoint {point}"
            );
            let manifest: serde_json::Value =
                serde_json::from_slice(&std::fs::read(job.join("job.json")).unwrap()).unwrap();
            if point.starts_with("sort.") {
                assert_eq!(
                    manifest["stages"]["import-graph"]["published"]["attempts"], 2,
                    "{format} {point}"
                );
            }
            assert!(
                !job.join("tmp").exists(),
                "{format}: temporary files left after {point}"
            );
        }
    }
}

/// PageRank with `--mem` smaller than one rank vector: cnr-2000's vector is
/// 325,557 × 8 B = 2.5 MiB, the budget 1 MiB. Blocked and sort-merge finish
/// within the allowance (peak RSS ≤ budget + 10% + 100 MiB, as the stage
/// records it) and give the same bits as memory mode.
#[test]
fn pagerank_below_one_vector_stays_within_the_budget() {
    let Some(data) = data_dir() else { return };
    let input = data.join("graphs/cnr-2000.tsv.gz");
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("cnr");
    let j = job.to_str().unwrap();
    import(&job, &[&input], &["--mem", "64M", "-q"]).success();
    let budget = 1u64 << 20;
    let mut ranks = Vec::new();
    for mode in ["memory", "blocked", "sort-merge"] {
        let mem = if mode == "memory" { "64M" } else { "1M" };
        webmill()
            .args(["pagerank", j, "-q", "--force", "--mode", mode])
            .args(["--mem", mem, "--max-iter", "3"])
            .assert()
            .success();
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(job.join("job.json")).unwrap()).unwrap();
        let rss = manifest["stages"]["pagerank"]["published"]["figures"]["peak_rss"]
            .as_u64()
            .unwrap();
        eprintln!("{mode} at --mem {mem}: peak RSS {rss} bytes");
        if mode != "memory" {
            assert!(
                rss <= budget * 11 / 10 + (100 << 20),
                "{mode}: peak RSS {rss} over the allowance"
            );
        }
        ranks.push(std::fs::read(job.join("ranks.wm")).unwrap());
    }
    assert!(ranks[0] == ranks[1], "blocked differs from memory mode");
    assert!(ranks[0] == ranks[2], "sort-merge differs from memory mode");
}

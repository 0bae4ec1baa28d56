//! The analysis commands end to end: `bowtie` against Tarjan's algorithm on
//! the LAW graphs and within its budget on a generated graph 20× larger than
//! the budget, resumed after a crash; `overlap`, `layout` and `dedup-report`
//! on an ingested site.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;
use common::*;

#[path = "../../tests/common/tarjan.rs"]
mod tarjan;
use serde_json::Value;
use tarjan::tarjan;

fn webmill() -> Command {
    Command::cargo_bin("webmill").unwrap()
}

fn json_of(cmd: &mut Command) -> Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

/// SCC size → count by Tarjan's algorithm in memory.
fn tarjan_sizes(n: usize, arcs: &[(u64, u64)]) -> BTreeMap<u64, u64> {
    let mut adj = vec![Vec::new(); n];
    for &(s, d) in arcs {
        if s != d {
            adj[s as usize].push(d as usize);
        }
    }
    let mut size: BTreeMap<usize, u64> = BTreeMap::new();
    for c in tarjan(n, &adj) {
        *size.entry(c).or_default() += 1;
    }
    let mut sizes = BTreeMap::new();
    for s in size.into_values() {
        *sizes.entry(s).or_insert(0) += 1;
    }
    sizes
}

fn sizes_of(v: &Value) -> BTreeMap<u64, u64> {
    v["scc_sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
        .collect()
}

fn import(job: &Path, input: &Path) {
    webmill()
        .args(["import-graph", "-q", "--mem", "64M", "--out"])
        .arg(job)
        .arg(input)
        .assert()
        .success();
}

/// The LAW graphs: the SCC sizes of Tarjan's algorithm (those
/// `webgraph-sccs` reports too: 112,023 and 100,977 SCCs for cnr-2000, 53,856
/// and 5,504 for uk-2007-05@100000), and the six parts summing to the nodes.
#[test]
fn bowtie_on_the_law_graphs_matches_tarjan() {
    let Some(data) = data_dir() else { return };
    for (name, largest, count) in [
        ("cnr-2000", 112_023, 100_977),
        ("uk-2007-05@100000", 53_856, 5_504),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join(name);
        let input = data.join(format!("graphs/{name}.tsv.gz"));
        import(&job, &input);
        let v = json_of(
            webmill()
                .args(["bowtie", "--json", "-q", "--mem", "8M"])
                .arg(&job),
        );
        let arcs = read_snap(&input);
        let n = v["nodes"].as_u64().unwrap();
        assert_eq!(sizes_of(&v), tarjan_sizes(n as usize, &arcs), "{name}");
        assert_eq!(v["largest_scc"], largest, "{name}");
        assert_eq!(v["scc_count"], count, "{name}");
        let parts: u64 = [
            "largest_scc",
            "in",
            "out",
            "tendrils",
            "tubes",
            "disconnected",
        ]
        .iter()
        .map(|k| v[k].as_u64().unwrap())
        .sum();
        assert_eq!(parts, n, "{name}: {v}");
    }
}

/// A generated web graph of 100,000 nodes and 7.5M arcs (60 MB as pairs of
/// 32-bit ids, 20× the 3 MiB budget): the peak RSS stays within the budget
/// (and 2 MiB of slack) over the process's own, measured as the peak RSS of
/// the same command on a graph of 100 nodes; killed at its third
/// checkpoint and run again, it reports what an uninterrupted run does.
#[test]
fn bowtie_within_its_budget_and_resumed_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    // A graph of `nodes` and `arcs` made by webmill-gen, imported as job `name`.
    let generated = |name: &str, nodes: &str, arcs: &str| {
        let tsv = dir.path().join(format!("{name}.tsv"));
        Command::cargo_bin("webmill-gen")
            .unwrap()
            .args(["--nodes", nodes, "--arcs", arcs, "--seed", "3", "-o"])
            .arg(&tsv)
            .assert()
            .success();
        let job = dir.path().join(name);
        import(&job, &tsv);
        job
    };
    let bowtie = |job: &Path| {
        json_of(
            webmill()
                .args(["bowtie", "--json", "-q", "--mem", "3M"])
                .arg(job),
        )
    };
    let job = generated("gen", "100000", "7500000");
    let budget = 3u64 << 20;
    let whole = bowtie(&job);
    let rss = whole["peak_rss"].as_u64().unwrap();
    // The process's own peak (code, allocator, buffers of fixed size)
    // grows with the binary; a tiny graph's run measures it.
    let own = bowtie(&generated("tiny", "100", "500"))["peak_rss"]
        .as_u64()
        .unwrap();
    eprintln!("bowtie at --mem 3M: peak RSS {rss} bytes (on 100 nodes: {own})");
    assert!(
        rss <= own + budget + (2 << 20),
        "peak RSS {rss} over the process's own {own} plus the budget"
    );
    webmill()
        .args(["bowtie", "-q", "--mem", "3M"])
        .arg(&job)
        .env("WEBMILL_FAILPOINT", "bowtie.checkpoint:3")
        .assert()
        .failure();
    assert!(job.join("tmp/bowtie/bowtie-state.wm").exists());
    let resumed = bowtie(&job);
    for key in [
        "scc_sizes",
        "largest_scc",
        "in",
        "out",
        "tendrils",
        "tubes",
        "passes",
    ] {
        assert_eq!(resumed[key], whole[key], "{key}");
    }
    assert!(!job.join("tmp").exists(), "checkpoints left behind");
    // Below its arrays the command is refused with the budget's exit code.
    webmill()
        .args(["bowtie", "-q", "--mem", "1M"])
        .arg(&job)
        .assert()
        .failure()
        .stderr(predicates::str::contains("bowtie"));
}

/// `overlap`, `layout` and `dedup-report` on two overlapping samples of one
/// generated site: the exact overlap is right and inside the estimate's
/// interval; the layout meets Henzinger's bound; every report parses.
#[test]
fn overlap_layout_and_dedup_report_on_a_site() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let pages = write_site(&site, 400, 5);
    // Two crawls: overlapping subsets of the site's files.
    let (a_dir, b_dir) = (dir.path().join("a"), dir.path().join("b"));
    let (mut in_a, mut in_b) = (0u64, 0u64);
    let mut both = 0u64;
    for (i, p) in pages.iter().enumerate() {
        let (a, b) = (i % 3 != 0, i % 2 == 0);
        for (on, d) in [(a, &a_dir), (b, &b_dir)] {
            if on {
                let dst = d.join(p);
                std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
                std::fs::copy(site.join(p), dst).unwrap();
            }
        }
        in_a += a as u64;
        in_b += b as u64;
        both += (a && b) as u64;
    }
    let ingest = |job: &Path, d: &Path| {
        webmill()
            .args(["ingest", "-q", "--mem", "64M", "--out"])
            .arg(job)
            .arg(format!("http://site.example/={}", d.display()))
            .assert()
            .success();
    };
    let (ja, jb) = (dir.path().join("ja"), dir.path().join("jb"));
    ingest(&ja, &a_dir);
    ingest(&jb, &b_dir);
    let v = json_of(
        webmill()
            .args(["overlap", "--json", "--sample", "60"])
            .arg(&ja)
            .arg(&jb),
    );
    assert_eq!(v["pages_a"], in_a);
    assert_eq!(v["pages_b"], in_b);
    assert_eq!(v["both"], both);
    let exact = v["exact"].as_f64().unwrap();
    assert!((exact - in_a as f64 / in_b as f64).abs() < 1e-12);
    assert!(
        v["ci_low"].as_f64().unwrap() <= exact && exact <= v["ci_high"].as_f64().unwrap(),
        "{v}"
    );
    let help = webmill()
        .args(["overlap", "--help"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let help = String::from_utf8(help).unwrap();
    for bias in ["uniform", "Duplicates", "normalisation", "Independence"] {
        assert!(help.contains(bias), "--help does not explain {bias}");
    }

    // Without an index the loads are the proxy; with one, the searcher's
    // work on each subindex (and --load df still gives the proxy).
    let layout = |extra: &[&str]| {
        json_of(
            webmill()
                .args([
                    "layout",
                    "--json",
                    "--machines",
                    "3",
                    "--query-count",
                    "200",
                ])
                .args(extra)
                .arg(&ja),
        )
    };
    let proxy = layout(&[]);
    webmill().args(["index", "-q"]).arg(&ja).assert().success();
    let searched = layout(&[]);
    assert_eq!(layout(&["--load", "df"]), proxy);
    assert!(proxy["load"].as_str().unwrap().contains("proxy"), "{proxy}");
    assert!(
        searched["load"].as_str().unwrap().contains("searcher"),
        "{searched}"
    );
    assert_eq!(layout(&[]), searched, "work loads are reproducible");
    for l in [&proxy, &searched] {
        for key in [
            "max_load",
            "lower_bound",
            "no_duplication_max_load",
            "hand_duplication_max_load",
            "alpha",
            "beta",
        ] {
            assert!(l[key].is_number(), "layout --json lacks {key}: {l}");
        }
        assert_eq!(l["bound_holds"], true);
        assert!(l["max_load"].as_f64().unwrap() >= l["lower_bound"].as_f64().unwrap() - 1e-9);
    }
    assert_ne!(proxy["index_loads"], searched["index_loads"]);

    // Dedup keeps each cluster's highest-ranked page, so it reads the ranks.
    webmill()
        .args(["pagerank", "-q"])
        .arg(&ja)
        .assert()
        .success();
    webmill()
        .args(["dedup", "-q", "--alg", "broder", "--alg", "charikar"])
        .arg(&ja)
        .assert()
        .success();
    let plot = dir.path().join("n.svg");
    let r = json_of(
        webmill()
            .args(["dedup-report", "--json", "--plot"])
            .arg(&plot)
            .arg(&ja),
    );
    assert_eq!(r.as_array().unwrap().len(), 2);
    assert!(std::fs::read_to_string(&plot)
        .unwrap()
        .contains("broder: all"));
}

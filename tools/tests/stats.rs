//! `webmill stats` degree distributions and exponents, its `--plot`, and
//! `webmill-warc` (a WARC of a site must ingest exactly like the site's
//! directory).

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::*;
use serde_json::Value;

fn webmill() -> Command {
    Command::cargo_bin("webmill").unwrap()
}

fn webmill_warc() -> Command {
    Command::cargo_bin("webmill-warc").unwrap()
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).unwrap()
}

fn stats_json(job: &Path, extra: &[&str]) -> Value {
    let text = stdout_of(webmill().args(["stats", "--json"]).args(extra).arg(job));
    serde_json::from_str(&text).unwrap()
}

/// Uniform in (0, 1].
fn unit(rng: &mut Rng) -> f64 {
    ((rng.next() >> 11) + 1) as f64 / (1u64 << 53) as f64
}

/// An exact draw from P(k) ∝ k^-a, k ≥ 1 (Devroye's rejection method).
fn zipf(rng: &mut Rng, a: f64) -> u64 {
    let b = 2f64.powf(a - 1.0);
    loop {
        let (u, v) = (unit(rng), unit(rng));
        let x = u.powf(-1.0 / (a - 1.0)).floor();
        if !(1.0..1e15).contains(&x) {
            continue;
        }
        let t = (1.0 + 1.0 / x).powf(a - 1.0);
        if v * x * (t - 1.0) / (b - 1.0) <= t / b {
            return x as u64;
        }
    }
}

/// A graph on `n` nodes whose in-degrees are drawn from k^-alpha (capped at
/// n − 1), each in-link from a distinct random source other than the node.
fn power_law_in_degrees(n: u64, alpha: f64, seed: u64) -> Vec<(u64, u64)> {
    let mut rng = Rng(seed);
    let mut arcs = Vec::new();
    for dst in 0..n {
        let k = zipf(&mut rng, alpha).min(n - 1);
        let mut sources = HashSet::new();
        while (sources.len() as u64) < k {
            let s = rng.below(n);
            if s != dst {
                sources.insert(s);
            }
        }
        arcs.extend(sources.into_iter().map(|s| (s, dst)));
    }
    arcs
}

#[test]
fn exponent_and_plot_of_a_job_with_power_law_in_degrees() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000;
    let arcs = power_law_in_degrees(n, 2.1, 7);
    let snap = dir.path().join("g.tsv");
    write_snap(&snap, &arcs, false);
    let job = dir.path().join("job");
    webmill()
        .args(["-q", "import-graph", "--out"])
        .arg(&job)
        .arg(&snap)
        .assert()
        .success();
    let svg_path = dir.path().join("deg.svg");
    let v = stats_json(&job, &["--plot", svg_path.to_str().unwrap()]);

    // The exponent the graph was drawn with comes back through the edge files.
    let alpha = v["in_degree_exponent"].as_f64().expect("an in-degree fit");
    eprintln!(
        "drawn with 2.1: alpha {alpha} ± {} for k >= {}, {} nodes",
        v["in_degree_exponent_error"], v["in_degree_kmin"], v["in_degree_tail_nodes"]
    );
    assert!((alpha - 2.1).abs() <= 0.1, "{v}");
    let k_min = v["in_degree_kmin"].as_u64().unwrap();
    let tail = v["in_degree_tail_nodes"].as_u64().unwrap();
    // Independent counts from the arcs.
    let mut indeg = vec![0u64; n as usize];
    let mut outdeg = vec![0u64; n as usize];
    for &(s, d) in &arcs {
        indeg[d as usize] += 1;
        outdeg[s as usize] += 1;
    }
    assert_eq!(
        tail,
        indeg.iter().filter(|&&k| k >= k_min).count() as u64,
        "{v}"
    );
    let distinct = |deg: &[u64]| deg.iter().collect::<HashSet<_>>().len() as u64;
    assert_eq!(v["in_degree_distinct"].as_u64(), Some(distinct(&indeg)));
    assert_eq!(v["out_degree_distinct"].as_u64(), Some(distinct(&outdeg)));
    for key in [
        "out_degree_exponent",
        "out_degree_kmin",
        "in_degree_ks",
        "in_degree_exponent_error",
        "nodes",
        "arcs",
        "dangling",
        "edges_bytes",
    ] {
        assert!(v.get(key).is_some(), "{key} missing from {v}");
    }

    // The plot: one dot per distinct non-zero degree of each direction (plus
    // one per legend entry of dots), both fitted lines, log axes.
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.ends_with("</svg>\n"));
    let nonzero = |deg: &[u64]| deg.iter().filter(|&&k| k > 0).collect::<HashSet<_>>().len();
    assert_eq!(
        svg.matches("<circle").count(),
        nonzero(&indeg) + nonzero(&outdeg) + 2
    );
    assert!(svg.matches("stroke-dasharray").count() >= 2, "fitted lines");
    assert!(svg.contains("in-degree fit: α = 2.") && svg.contains("(log scale)"));
    // Well-formed enough: every element opened is closed.
    assert_eq!(svg.matches("<g ").count(), svg.matches("</g>").count());
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());

    // The table form shows the same fit; --no-degrees leaves it out.
    let table = stdout_of(webmill().arg("stats").arg(&job));
    assert!(
        table.contains(&format!(
            "in-degree                  α = {} ±",
            v["in_degree_exponent"]
        )),
        "{table}"
    );
    let quick = stats_json(&job, &["--no-degrees"]);
    assert!(quick.get("in_degree_exponent").is_none());
    assert_eq!(quick["arcs"], v["arcs"]);
}

/// ζ(α, k_min) by direct summation to 10⁵ and an Euler–Maclaurin remainder.
fn naive_zeta(alpha: f64, k_min: u64) -> f64 {
    let end = 100_000u64.max(k_min + 1);
    let sum: f64 = (k_min..end).map(|k| (k as f64).powf(-alpha)).sum();
    let e = end as f64;
    sum + e.powf(1.0 - alpha) / (alpha - 1.0) + 0.5 * e.powf(-alpha)
}

/// The discrete power-law MLE at a given k_min, by golden-section search on
/// the log-likelihood computed with `naive_zeta`.
fn naive_mle(degrees: &[u64], k_min: u64) -> f64 {
    let tail: Vec<f64> = degrees
        .iter()
        .filter(|&&k| k >= k_min)
        .map(|&k| k as f64)
        .collect();
    let n = tail.len() as f64;
    let sum_ln: f64 = tail.iter().map(|k| k.ln()).sum();
    let ll = |a: f64| -n * naive_zeta(a, k_min).ln() - a * sum_ln;
    let (mut lo, mut hi) = (1.05, 5.0);
    for _ in 0..60 {
        let m1 = lo + (hi - lo) / 3.0;
        let m2 = hi - (hi - lo) / 3.0;
        if ll(m1) < ll(m2) {
            lo = m1;
        } else {
            hi = m2;
        }
    }
    (lo + hi) / 2.0
}

#[test]
fn cnr_2000_exponents_match_a_naive_mle() {
    let Some(data) = data_dir() else { return };
    let input = data.join("graphs/cnr-2000.tsv.gz");
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("cnr");
    webmill()
        .args([
            "-q",
            "--mem",
            "256M",
            "import-graph",
            "--keep-self-loops",
            "--out",
        ])
        .arg(&job)
        .arg(&input)
        .assert()
        .success();
    let v = stats_json(&job, &[]);
    let nodes = v["nodes"].as_u64().unwrap() as usize;
    let edges = stdout_of(webmill().args(["export", "edges"]).arg(&job));
    let (mut indeg, mut outdeg) = (vec![0u64; nodes], vec![0u64; nodes]);
    for line in edges.lines().filter(|l| !l.starts_with('#')) {
        let (s, d) = line.split_once('\t').unwrap();
        outdeg[s.parse::<usize>().unwrap()] += 1;
        indeg[d.parse::<usize>().unwrap()] += 1;
    }
    for (dir, deg) in [("in", &indeg), ("out", &outdeg)] {
        let alpha = v[format!("{dir}_degree_exponent")].as_f64().unwrap();
        let k_min = v[format!("{dir}_degree_kmin")].as_u64().unwrap();
        let tail = v[format!("{dir}_degree_tail_nodes")].as_u64().unwrap();
        assert_eq!(
            tail,
            deg.iter().filter(|&&k| k >= k_min).count() as u64,
            "{dir}"
        );
        let naive = naive_mle(deg, k_min);
        eprintln!("cnr-2000 {dir}-degree: alpha {alpha} (naive MLE {naive:.4}) for k >= {k_min}, {tail} nodes");
        assert!((alpha - naive).abs() < 0.002, "{dir}: {alpha} vs {naive}");
        assert!((1.5..4.0).contains(&alpha), "{dir}: {alpha}");
    }
}

/// A small site: nested directories, names that need escaping, a page
/// linking elsewhere, a style sheet and a symbolic link.
fn small_site(root: &Path) -> PathBuf {
    let site = root.join("site");
    std::fs::create_dir_all(site.join("sub/deeper")).unwrap();
    std::fs::create_dir_all(site.join("a b")).unwrap();
    let pages = [
        (
            "index.html",
            r#"<html><head><title>Home</title></head><body><a href="sub/p.html">p</a> <a href="a%20b/c.html">c</a> <a href="https://other.example/x">out</a> <a href="macro.env!.html">env</a></body></html>"#,
        ),
        (
            "macro.env!.html",
            r#"<title>env!</title><a href="index.html">home</a>"#,
        ),
        (
            "sub/p.html",
            r#"<p>p <a href="../index.html">home</a> <a href="deeper/q.htm">q</a>"#,
        ),
        ("sub/deeper/q.htm", r#"<p>q <a href="/site/">root</a>"#),
        ("a b/c.html", "<p>caf\u{e9} <a href='../sub/p.html'>p</a>"),
        ("style.css", "body { color: black }"),
    ];
    for (rel, text) in pages {
        std::fs::write(site.join(rel), text).unwrap();
    }
    std::os::unix::fs::symlink("../index.html", site.join("sub/home.html")).unwrap();
    site
}

fn ingest(job: &Path, input: &str) {
    webmill()
        .args(["-q", "ingest", "--out"])
        .arg(job)
        .arg(input)
        .assert()
        .success();
}

fn export(what: &str, job: &Path) -> String {
    stdout_of(webmill().args(["export", what]).arg(job))
}

/// `warcio check FILE` if warcio is installed; `None` (with a reason) if not.
fn warcio_check(file: &Path) -> Option<bool> {
    match std::process::Command::new("warcio")
        .arg("check")
        .arg(file)
        .output()
    {
        Ok(o) => Some(o.status.success() && o.stdout.is_empty() && o.stderr.is_empty()),
        Err(_) => {
            eprintln!("warcio not installed: independent WARC check skipped (pip install warcio)");
            None
        }
    }
}

#[test]
fn warc_of_a_site_ingests_like_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let site = small_site(dir.path());
    let base = "http://site.example/docs/";
    let dir_job = dir.path().join("dir-job");
    ingest(&dir_job, &format!("{base}={}", site.display()));
    let (edges, docs) = (export("edges", &dir_job), export("docs", &dir_job));
    assert!(edges.lines().count() > 5, "{edges}");

    for (name, mode) in [
        ("r.warc.gz", "record"),
        ("f.warc.gz", "file"),
        ("p.warc", "none"),
    ] {
        let warc = dir.path().join(name);
        webmill_warc()
            .args(["-q", "--base", base, "--gzip", mode, "-o"])
            .arg(&warc)
            .arg(&site)
            .assert()
            .success();
        let job = dir.path().join(format!("job-{mode}"));
        ingest(&job, warc.to_str().unwrap());
        assert_eq!(export("edges", &job), edges, "{mode}");
        assert_eq!(export("docs", &job), docs, "{mode}");
        let v = stats_json(&job, &["--no-degrees"]);
        // 7 files: 6 HTML pages (one through the symbolic link), 1 style sheet.
        assert_eq!(v["records"]["response"], 7, "{v}");
        assert_eq!(v["records"]["warcinfo"], 1, "{v}");
        assert_eq!(v["not_html"], 1, "{v}");
        assert_eq!(v["pages"], 6, "{v}");
        if mode != "file" {
            // warcio refuses whole-file gzip (it cannot seek in it), by design.
            if let Some(ok) = warcio_check(&warc) {
                assert!(ok, "warcio check failed on {}", warc.display());
            }
        }
    }

    // Deterministic: the same bytes again, whatever the thread count.
    let once = std::fs::read(dir.path().join("r.warc.gz")).unwrap();
    let again = dir.path().join("again");
    std::fs::create_dir(&again).unwrap();
    let warc = again.join("r.warc.gz");
    webmill_warc()
        .args(["-q", "--threads", "1", "--base", base, "-o"])
        .arg(&warc)
        .arg(&site)
        .assert()
        .success();
    assert_eq!(std::fs::read(&warc).unwrap(), once);
    // A plain WARC is readable text with one record per file plus warcinfo.
    let plain = std::fs::read(dir.path().join("p.warc")).unwrap();
    let text = String::from_utf8_lossy(&plain);
    assert_eq!(text.matches("WARC/1.0\r\n").count(), 8);
    assert!(text.contains("WARC-Target-URI: http://site.example/docs/a%20b/c.html\r\n"));
    assert!(text.contains("WARC-Target-URI: http://site.example/docs/macro.env!.html\r\n"));
    assert!(text.contains("Content-Type: text/css\r\n"));

    // Bad input is an error naming it, and leaves no output behind.
    webmill_warc()
        .args(["--base", "ftp://x/", "-o"])
        .arg(dir.path().join("bad.warc"))
        .arg(&site)
        .assert()
        .failure()
        .stderr(predicates::str::contains("--base"));
    webmill_warc()
        .args(["--base", base, "-o"])
        .arg(dir.path().join("bad.warc"))
        .arg(dir.path().join("missing"))
        .assert()
        .failure()
        .stderr(predicates::str::contains("missing"));
    assert!(!dir.path().join("bad.warc").exists());
    assert!(!dir.path().join("bad.warc.partial").exists());
}

#[test]
fn warc_of_the_postgresql_docs_ingests_like_the_directory() {
    let Some(pkg) = corpus_dir("postgresql-doc-15") else {
        return;
    };
    let corpus = pkg.join("usr/share/doc/postgresql-doc-15/html");
    let dir = tempfile::tempdir().unwrap();
    let base = "https://www.postgresql.org/docs/15/";
    let warc = dir.path().join("pg.warc.gz");
    webmill_warc()
        .args(["-q", "--base", base, "-o"])
        .arg(&warc)
        .arg(&corpus)
        .assert()
        .success();
    if let Some(ok) = warcio_check(&warc) {
        assert!(ok, "warcio check failed on {}", warc.display());
    }
    let (a, b) = (dir.path().join("dir"), dir.path().join("warc"));
    ingest(&a, &format!("{base}={}", corpus.display()));
    ingest(&b, warc.to_str().unwrap());
    let edges = export("edges", &a);
    assert!(edges.lines().count() > 10_000);
    assert_eq!(export("edges", &b), edges);
    assert_eq!(export("docs", &b), export("docs", &a));
    let (va, vb) = (stats_json(&a, &[]), stats_json(&b, &[]));
    assert_eq!(va["html_bytes"], vb["html_bytes"]);
    assert_eq!(va["in_degree_exponent"], vb["in_degree_exponent"]);
}

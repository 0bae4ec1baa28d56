//! `webmill export`: every table as TSV and as Parquet, the Parquet files
//! read back by an independent reader (pyarrow) and compared cell by cell
//! with the TSV; `export pairs --urls` against a join by hand.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

fn webmill(args: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("webmill"));
    c.args(args).stdin(Stdio::null());
    c
}

fn stdout_of(args: &[&str]) -> String {
    let out = webmill(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The tables, each with its columns as pyarrow names their types.
const TABLES: [(&str, &[(&str, &str)]); 8] = [
    (
        "docs",
        &[
            ("docid", "uint64"),
            ("url", "string"),
            ("crawled", "bool"),
            ("bytes", "uint64"),
            ("title", "string"),
        ],
    ),
    ("edges", &[("src", "uint64"), ("dst", "uint64")]),
    (
        "ranks",
        &[("docid", "uint64"), ("url", "string"), ("rank", "double")],
    ),
    (
        "text",
        &[("docid", "uint64"), ("url", "string"), ("tokens", "string")],
    ),
    (
        "pairs",
        &[
            ("docid_a", "uint64"),
            ("docid_b", "uint64"),
            ("similarity", "float"),
        ],
    ),
    (
        "clusters",
        &[
            ("cluster_id", "uint64"),
            ("docid", "uint64"),
            ("keep", "bool"),
        ],
    ),
    (
        "anchors",
        &[
            ("dst", "uint64"),
            ("src", "uint64"),
            ("kind", "string"),
            ("text", "string"),
        ],
    ),
    (
        "postings",
        &[("term", "string"), ("docid", "uint64"), ("tf", "uint32")],
    ),
];

/// A TSV field back to its text.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(c) => out.push(c),
            None => out.push('\\'),
        }
    }
    out
}

/// A job of a generated site with planted duplicates, every stage run.
fn job(dir: &Path) -> std::path::PathBuf {
    let site = dir.join("site");
    write_site(&site, 200, 11);
    // Copies of a few pages: near-duplicate pairs and clusters to export.
    for i in 0..6 {
        let from = site.join(format!("s{}/d{}/p{i}.html", i % 3, i % 7));
        std::fs::copy(&from, site.join(format!("copy{i}.html"))).unwrap();
    }
    let job = dir.join("job");
    let out = webmill(&["run", "-q", "--mem", "16M", "--dedup", "minhash", "--out"])
        .arg(&job)
        .arg(format!("http://site.example/={}", site.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    job
}

#[test]
fn parquet_reads_back_with_pyarrow_as_the_tsv_says() {
    let have = Command::new("python3")
        .args(["-c", "import pyarrow"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have {
        eprintln!("SKIPPED: python3 with pyarrow not found (pip install pyarrow); the Parquet files are not read back");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let job = job(dir.path());
    let j = job.to_str().unwrap();
    // pyarrow prints each file as JSON: its schema and its rows.
    let script = r#"
import json, sys
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
print(json.dumps({"schema": [[f.name, str(f.type), f.nullable] for f in t.schema],
                  "rows": [list(r.values()) for r in t.to_pylist()]}))
"#;
    for (what, cols) in TABLES {
        let file = dir.path().join(format!("{what}.parquet"));
        stdout_of(&[
            "export",
            what,
            j,
            "--format",
            "parquet",
            "-o",
            file.to_str().unwrap(),
        ]);
        let out = Command::new("python3")
            .args(["-c", script])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let schema: Vec<(String, String, bool)> =
            serde_json::from_value(got["schema"].clone()).unwrap();
        let want: Vec<(String, String, bool)> = cols
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string(), false))
            .collect();
        assert_eq!(schema, want, "{what}: schema");
        let rows = got["rows"].as_array().unwrap();
        let tsv = stdout_of(&["export", what, j]);
        let mut lines = tsv.lines();
        let header: Vec<&str> = cols.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            lines.next(),
            Some(format!("# {}", header.join("\t")).as_str())
        );
        let lines: Vec<&str> = lines.collect();
        assert_eq!(rows.len(), lines.len(), "{what}: rows");
        assert!(!rows.is_empty(), "{what}: empty");
        for (row, line) in rows.iter().zip(&lines) {
            let fields: Vec<&str> = line.split('\t').collect();
            for (((name, ty), v), f) in cols.iter().zip(row.as_array().unwrap()).zip(&fields) {
                let ok = match *ty {
                    "string" => v.as_str() == Some(unescape(f).as_str()),
                    "bool" => v.as_bool() == Some(*f == "1"),
                    "double" | "float" => {
                        let x: f64 = f.parse().unwrap();
                        (v.as_f64().unwrap() - x).abs() <= 1e-4 * x.abs().max(1e-12) + 5e-5
                    }
                    _ => v.as_u64() == Some(f.parse().unwrap()),
                };
                assert!(ok, "{what}.{name}: parquet {v}, tsv {f}");
            }
        }
    }
}

#[test]
fn pairs_with_urls_join_the_doc_table() {
    let dir = tempfile::tempdir().unwrap();
    let job = job(dir.path());
    let j = job.to_str().unwrap();
    let urls: BTreeMap<String, String> = stdout_of(&["export", "docs", j])
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].to_string())
        })
        .collect();
    let pairs = stdout_of(&["export", "pairs", j]);
    let joined = stdout_of(&["--mem", "1M", "export", "pairs", "--urls", j]);
    let mut by_hand = String::from("# docid_a\tdocid_b\tsimilarity\turl_a\turl_b\n");
    for l in pairs.lines().skip(1) {
        let f: Vec<&str> = l.split('\t').collect();
        by_hand.push_str(&format!("{l}\t{}\t{}\n", urls[f[0]], urls[f[1]]));
    }
    assert!(pairs.lines().count() > 3, "{pairs}");
    assert_eq!(joined, by_hand);
}

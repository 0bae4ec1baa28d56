//! `webmill export`: every table as TSV and as Parquet, the Parquet files
//! read back by an independent reader (pyarrow) and compared cell by cell
//! with the TSV; `export pairs --urls` against a join by hand.

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
    succeeded(&out);
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

/// The records of a WARC file as they are in it: for gzip, each member's
/// compressed bytes and what it inflates to; for a plain file, the records
/// cut at each `WARC/1.` version line that starts a line (compressed bytes
/// empty). Read independently of webmill's reader (flate2, one member at a
/// time).
fn warc_members(bytes: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    use std::io::Read;
    let mut out = Vec::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let mut dec = flate2::bufread::GzDecoder::new(rest);
            let mut plain = Vec::new();
            dec.read_to_end(&mut plain).unwrap();
            let left = dec.into_inner().len();
            out.push((rest[..rest.len() - left].to_vec(), plain));
            rest = &rest[rest.len() - left..];
        }
    } else {
        let starts: Vec<usize> = (0..bytes.len())
            .filter(|&i| bytes[i..].starts_with(b"WARC/1.") && (i == 0 || bytes[i - 1] == b'\n'))
            .collect();
        for (k, &s) in starts.iter().enumerate() {
            let e = starts.get(k + 1).copied().unwrap_or(bytes.len());
            out.push((Vec::new(), bytes[s..e].to_vec()));
        }
    }
    out
}

/// A WARC record's `WARC-Type`.
fn warc_type(record: &[u8]) -> String {
    let head = String::from_utf8_lossy(&record[..record.len().min(4096)]).to_string();
    head.lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("WARC-Type")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// `export dataset` of a job of real WARC files: kept + removed = the
/// records that became pages, each side in input order, each record byte
/// for byte (a per-record gzip member as it is in the input); a file given
/// twice has its second copy's records removed (repeated URLs); `--cluster`
/// is refused; a plain WARC and a whole-file gzip WARC give their records'
/// bytes.
#[test]
fn warc_dataset_round_trip_kept_plus_removed_are_the_page_records() {
    let Some(data) = data_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let warc = data.join("warc");
    let copy = dir.path().join("iana-again.warc.gz");
    std::fs::copy(warc.join("iana.warc.gz"), &copy).unwrap();
    let plain = std::fs::read(warc.join("example.warc")).unwrap();
    let whole = dir.path().join("whole.warc.gz");
    {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&plain).unwrap();
        std::fs::write(&whole, gz.finish().unwrap()).unwrap();
    }
    let cases: [(&str, Vec<std::path::PathBuf>); 3] = [
        (
            "gzip",
            vec![
                warc.join("iana.warc.gz"),
                warc.join("dupes.warc.gz"),
                warc.join("example-wpull.warc.gz"),
                copy.clone(),
            ],
        ),
        ("plain", vec![warc.join("example.warc")]),
        ("whole", vec![whole.clone()]),
    ];
    for (name, inputs) in cases {
        let job = dir.path().join(format!("job-{name}"));
        let mut run = webmill(&[
            "run",
            "-q",
            "--mem",
            "32M",
            "--dedup",
            "exact",
            "--no-index",
            "--out",
        ]);
        run.arg(&job).args(&inputs);
        let out = run.output().unwrap();
        succeeded(&out);
        let kept = dir.path().join(format!("kept-{name}.warc.gz"));
        let removed = dir.path().join(format!("removed-{name}.warc.gz"));
        let mut export = webmill(&["export", "dataset", "--alg", "exact", "-o"]);
        export.arg(&kept).arg("--removed").arg(&removed).arg(&job);
        let out = export.output().unwrap();
        succeeded(&out);
        let figures: serde_json::Value =
            serde_json::from_slice(&std::fs::read(job.join("job.json")).unwrap()).unwrap();
        let pages = figures["stages"]["ingest"]["published"]["figures"]["extra"]["pages"]
            .as_u64()
            .unwrap();
        let kept = warc_members(&std::fs::read(&kept).unwrap());
        let removed = warc_members(&std::fs::read(&removed).unwrap());
        assert_eq!((kept.len() + removed.len()) as u64, pages, "{name}");
        assert!(!kept.is_empty(), "{name}");
        // Kept and removed interleave into a subsequence of the input's
        // records, each byte for byte (the gzip member too, for per-record
        // gzip inputs).
        let mut input: Vec<(usize, Vec<u8>, Vec<u8>)> = Vec::new();
        for (i, p) in inputs.iter().enumerate() {
            let bytes = std::fs::read(p).unwrap();
            let bytes = if name == "whole" {
                use std::io::Read;
                let mut plain = Vec::new();
                flate2::read::MultiGzDecoder::new(&bytes[..])
                    .read_to_end(&mut plain)
                    .unwrap();
                plain
            } else {
                bytes
            };
            input.extend(warc_members(&bytes).into_iter().map(|(c, d)| (i, c, d)));
        }
        let same = |(c, d): &(Vec<u8>, Vec<u8>), (_, ic, id): &(usize, Vec<u8>, Vec<u8>)| {
            if name == "gzip" {
                c == ic
            } else {
                // The record and the CR/LF after it, not what follows.
                id.starts_with(d) && id[d.len()..].iter().all(|b| b"\r\n".contains(b))
            }
        };
        let (mut k, mut r) = (kept.iter().peekable(), removed.iter().peekable());
        let mut from_copy = (0, 0);
        for rec in &input {
            let side = if k.peek().is_some_and(|m| same(m, rec)) {
                k.next();
                0
            } else if r.peek().is_some_and(|m| same(m, rec)) {
                r.next();
                1
            } else {
                continue;
            };
            assert!(
                ["response", "resource", "conversion", "metadata"]
                    .contains(&warc_type(&rec.2).as_str()),
                "{name}: {}",
                warc_type(&rec.2)
            );
            if inputs[rec.0] == copy {
                // The second copy of a file repeats its URLs: removed.
                assert_eq!(side, 1, "a record of the repeated file was kept");
                from_copy.1 += 1;
            } else if inputs[rec.0] == warc.join("iana.warc.gz") {
                from_copy.0 += 1;
            }
        }
        assert!(
            k.next().is_none() && r.next().is_none(),
            "{name}: a record out of order or not from the input"
        );
        assert_eq!(from_copy.0, from_copy.1, "{name}");
        if name == "gzip" {
            assert!(from_copy.0 > 0, "{from_copy:?}");
            // --cluster does not apply to WARC records.
            let mut c = webmill(&["export", "dataset", "--cluster", "--alg", "exact", "-o"]);
            c.arg(dir.path().join("c.warc.gz")).arg(&job);
            let out = c.output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success() && err.contains("--cluster"), "{err}");
        }
    }
}

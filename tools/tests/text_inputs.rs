//! Inputs that are text already. WET (Common Crawl's extracted text,
//! `conversion` records): WET files written from the Debian PostgreSQL pages
//! by `webmill-warc --wet`, read back against an independent reader of the
//! records; a damaged file keeps its valid records and names the damage; a
//! run killed mid-file resumes to the same bytes; `run` leaves PageRank out
//! and dedup keeps the first doc. JSONL document sets (plain, gzip, zstd)
//! written from the same texts: the same pages whatever the compression, bad
//! lines and truncated streams reported with the rest kept, resumed mid-file
//! to the same bytes, fields by flag.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use webmill::job::{JobFile, JobView};

#[test]
fn wet_of_the_postgresql_pages_is_their_text_without_links() {
    let dir = tempfile::tempdir().unwrap();
    let Some((wet, html)) = pg_archive(dir.path(), &["--wet"], "pg.warc.wet.gz") else {
        return;
    };
    let want = read_wet(&wet);
    let html_files = webmill::ingest::list_files(&html)
        .unwrap()
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "html"))
        .count();
    assert_eq!(want.len(), html_files, "a conversion record per HTML page");
    assert!(want.len() > 1000);
    let job = dir.path().join("job");
    succeeded(&ingest(&job, &wet, &[]));
    let got = text_pages(&job);
    assert_eq!(got.len(), want.len());
    for (uri, text) in &want {
        let url = webmill::url::normalize(uri).unwrap();
        let (words, body) = &got[&url];
        assert_eq!(body, text, "{url}: the repository holds the text");
        let (mut w, mut f) = (String::new(), Vec::new());
        webmill::ingest::html::tokenize(&String::from_utf8_lossy(text), &mut w, &mut f);
        assert_eq!(words, &w, "{url}: words");
    }
    let figures: serde_json::Value =
        serde_json::from_slice(&std::fs::read(job.join("job.json")).unwrap()).unwrap();
    let x = &figures["stages"]["ingest"]["published"]["figures"]["extra"];
    assert_eq!(x["text_pages"].as_u64(), Some(want.len() as u64));
    assert_eq!(x["records"]["conversion"].as_u64(), Some(want.len() as u64));
}

#[test]
fn run_on_wet_leaves_pagerank_out_and_dedup_keeps_the_first_doc() {
    let dir = tempfile::tempdir().unwrap();
    let Some((wet, _)) = pg_archive(dir.path(), &["--wet"], "pg.warc.wet.gz") else {
        return;
    };
    let job = dir.path().join("job");
    let out = webmill()
        .args(["run", "--mem", "32M", "--dedup", "exact", "--out"])
        .arg(&job)
        .arg(&wet)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("pagerank left out"), "{err}");
    let view = JobView::open(&job).unwrap();
    assert!(!view.has(JobFile::Ranks));
    assert!(view.has(JobFile::Lexicon), "the text is indexed");
    let m = view.manifest();
    let d = m.stages["dedup-exact"].published.as_ref().unwrap();
    assert_eq!(d.figures.extra["keep"], "first in input order");
    assert_eq!(d.inputs["ranks.wm"], "", "ranks recorded as absent");
    // The search finds a page by a word of its text.
    let found = webmill()
        .args(["search", "-k", "3"])
        .arg(&job)
        .arg("vacuum")
        .output()
        .unwrap();
    assert!(found.status.success());
    assert!(String::from_utf8_lossy(&found.stdout).contains("postgresql.org"));
}

#[test]
fn a_damaged_wet_file_keeps_its_valid_records_and_names_the_damage() {
    let dir = tempfile::tempdir().unwrap();
    let Some((wet, _)) = pg_archive(dir.path(), &["--wet"], "pg.warc.wet.gz") else {
        return;
    };
    let all = read_wet(&wet).len();
    // Flip bytes in the middle of the file: one gzip member is damaged.
    let mut bytes = std::fs::read(&wet).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 64] {
        *b ^= 0x5a;
    }
    // And cut the end: the last member is truncated.
    bytes.truncate(bytes.len() - 100);
    let bad = dir.path().join("bad.warc.wet.gz");
    std::fs::write(&bad, &bytes).unwrap();
    let job = dir.path().join("job");
    let err = succeeded(&ingest(&job, &bad, &[]));
    assert!(err.contains("bad.warc.wet.gz: offset"), "{err}");
    let got = text_pages(&job).len();
    assert!(got < all && got + 4 >= all, "{got} of {all} records kept");
    let strict = ingest(&dir.path().join("strict"), &bad, &["--strict"]);
    assert!(!strict.status.success());
}

#[test]
fn ingest_killed_mid_file_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let Some((wet, _)) = pg_archive(dir.path(), &["--wet"], "pg.warc.wet.gz") else {
        return;
    };
    assert_resumes_to_the_same_bytes(dir.path(), &wet, 7, TEXT_JOB_FILES);
}

/// The PostgreSQL texts as JSONL records `{"id", "url", "text"}`, one per
/// line (the WET file's records, in order), as bytes.
fn pg_jsonl(dir: &Path) -> Option<(Vec<Doc>, Vec<u8>)> {
    let (wet, _) = pg_archive(dir, &["--wet"], "pg.warc.wet.gz")?;
    let docs = read_wet(&wet);
    let mut out = Vec::new();
    for (i, (uri, text)) in docs.iter().enumerate() {
        let rec = serde_json::json!({
            "id": format!("pg-{i}"),
            "url": uri,
            "text": String::from_utf8(text.clone()).unwrap(),
            "date": "2024-02-29T12:00:00Z",
        });
        out.extend_from_slice(rec.to_string().as_bytes());
        out.push(b'\n');
    }
    Some((docs, out))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn zstd(dir: &Path, bytes: &[u8]) -> Vec<u8> {
    let plain = dir.join("for-zstd.jsonl");
    std::fs::write(&plain, bytes).unwrap();
    let out = std::process::Command::new("zstd")
        .args(["-q", "-c"])
        .arg(&plain)
        .output()
        .expect("the zstd command");
    assert!(out.status.success());
    out.stdout
}

#[test]
fn jsonl_sets_plain_gzip_and_zstd_give_the_same_pages() {
    let dir = tempfile::tempdir().unwrap();
    let Some((docs, jsonl)) = pg_jsonl(dir.path()) else {
        return;
    };
    let files = [
        ("pg.jsonl", jsonl.clone()),
        ("pg.jsonl.gz", gzip(&jsonl)),
        ("pg.jsonl.zst", zstd(dir.path(), &jsonl)),
    ];
    let mut first: Option<BTreeMap<String, (String, Vec<u8>)>> = None;
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let job = dir.path().join(format!("job-{name}"));
        succeeded(&ingest(&job, &path, &[]));
        let got = text_pages(&job);
        assert_eq!(got.len(), docs.len(), "{name}");
        for (uri, text) in &docs {
            let url = webmill::url::normalize(uri).unwrap();
            let (words, body) = &got[&url];
            assert_eq!(body, text, "{name} {url}");
            let (mut w, mut f) = (String::new(), Vec::new());
            webmill::ingest::html::tokenize(&String::from_utf8_lossy(text), &mut w, &mut f);
            assert_eq!(words, &w, "{name} {url}");
        }
        match &first {
            None => first = Some(got),
            Some(f) => assert!(f == &got, "{name} differs from the plain file"),
        }
    }
}

#[test]
fn jsonl_bad_lines_and_a_truncated_stream_keep_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"id": "a", "text": "First document, kept."}"#,
        r#"{"id": "b", "text": "Second one #"#,
        r#"["not", "an", "object"]"#,
        r#"{"id": "c", "body": "no text field"}"#,
        r#"{"id": "d", "meta": {"text": "nested"}, "text": "Fourth, kept too."}"#,
        "",
        r#"{"id": 7, "url": "https://x.example/seven", "text": "Seventh, its own URL."}"#,
    ];
    let path = dir.path().join("set.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let job = dir.path().join("job");
    let err = succeeded(&ingest(&job, &path, &[]));
    assert!(
        err.contains("set.jsonl: line 2 (offset 45): bad JSON"),
        "{err}"
    );
    assert!(
        err.contains("line 3 (offset 79): not a JSON object"),
        "{err}"
    );
    assert!(
        err.contains(r#"line 4 (offset 103): no string field "text""#),
        "{err}"
    );
    let got = text_pages(&job);
    let abs = std::fs::canonicalize(&path).unwrap();
    let url = |id: &str| format!("file://{}/{id}", abs.display());
    assert_eq!(got.len(), 3, "{:?}", got.keys());
    assert!(got.contains_key(&url("a")) && got.contains_key(&url("d")));
    assert!(got.contains_key("https://x.example/seven"));
    // The nested field by a dotted path.
    let nested = dir.path().join("nested");
    let out = ingest(&nested, &path, &["--text-field", "meta.text"]);
    assert!(out.status.success());
    let got = text_pages(&nested);
    assert_eq!(got.len(), 1);
    assert_eq!(got[&url("d")].0, "nested");
    // A truncated gzip stream: the lines before the break are kept.
    let mut many = String::new();
    for i in 0..2000 {
        many.push_str(&format!(
            "{{\"id\": \"{i}\", \"text\": \"document number {i} with words\"}}\n"
        ));
    }
    let gz = gzip(many.as_bytes());
    let cut = dir.path().join("cut.jsonl.gz");
    std::fs::write(&cut, &gz[..gz.len() * 2 / 3]).unwrap();
    let job = dir.path().join("cut");
    let err = succeeded(&ingest(&job, &cut, &[]));
    assert!(
        err.contains("cut.jsonl.gz: line") && err.contains("the rest of the file is lost"),
        "{err}"
    );
    let n = text_pages(&job).len();
    assert!(n > 500 && n < 2000, "{n} lines kept before the break");
    assert!(!ingest(&dir.path().join("strict"), &cut, &["--strict"])
        .status
        .success());
}

#[test]
fn jsonl_ingest_killed_mid_file_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, jsonl)) = pg_jsonl(dir.path()) else {
        return;
    };
    let set = dir.path().join("pg.jsonl.gz");
    std::fs::write(&set, gzip(&jsonl)).unwrap();
    assert_resumes_to_the_same_bytes(dir.path(), &set, 11, TEXT_JOB_FILES);
}

#[test]
fn dataset_round_trip_kept_plus_removed_is_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let Some((docs, _)) = pg_jsonl(dir.path()) else {
        return;
    };
    // The texts without URLs (ids make them), then exact copies of every
    // tenth: the copies come later in input order, so they are the ones
    // removed.
    let mut lines: Vec<String> = Vec::new();
    for (i, (_, text)) in docs.iter().enumerate() {
        let text = String::from_utf8(text.clone()).unwrap();
        lines.push(serde_json::json!({"id": format!("doc-{i}"), "text": text}).to_string());
    }
    let copies: Vec<usize> = (0..docs.len()).step_by(10).collect();
    for &i in &copies {
        let text = String::from_utf8(docs[i].1.clone()).unwrap();
        lines.push(serde_json::json!({"text": text, "id": format!("copy-{i}")}).to_string());
    }
    let input = lines.join("\n") + "\n";
    let set = dir.path().join("set.jsonl");
    std::fs::write(&set, &input).unwrap();
    let job = dir.path().join("job");
    let out = webmill()
        .args([
            "run",
            "-q",
            "--mem",
            "32M",
            "--dedup",
            "exact",
            "--no-index",
            "--out",
        ])
        .arg(&job)
        .arg(&set)
        .output()
        .unwrap();
    succeeded(&out);
    let (kept, removed) = (
        dir.path().join("kept.jsonl"),
        dir.path().join("removed.jsonl"),
    );
    succeeded(
        &webmill()
            .args(["export", "dataset", "--alg", "exact", "-o"])
            .arg(&kept)
            .arg("--removed")
            .arg(&removed)
            .arg(&job)
            .output()
            .unwrap(),
    );
    let kept = std::fs::read_to_string(&kept).unwrap();
    let removed = std::fs::read_to_string(&removed).unwrap();
    // Kept + removed = the input, line for line, each line as it was, each
    // side in input order.
    let (mut k, mut r) = (kept.lines().peekable(), removed.lines().peekable());
    for line in input.lines() {
        if k.peek() == Some(&line) {
            k.next();
        } else {
            assert_eq!(
                r.next(),
                Some(line),
                "a line neither kept nor removed in order"
            );
        }
    }
    assert!(k.next().is_none() && r.next().is_none());
    // Every copy is removed (and maybe other exact duplicates of the pages).
    for &i in &copies {
        assert!(
            removed.contains(&format!("\"id\":\"copy-{i}\"")),
            "copy {i}"
        );
    }
    assert!(removed.lines().count() >= copies.len());
    // With --cluster, records in a cluster carry it.
    let with = dir.path().join("with.jsonl");
    let out = webmill()
        .args(["export", "dataset", "--cluster", "--alg", "exact", "-o"])
        .arg(&with)
        .arg(&job)
        .output()
        .unwrap();
    assert!(out.status.success());
    let with = std::fs::read_to_string(&with).unwrap();
    assert_eq!(with.lines().count(), kept.lines().count());
    let clustered = with
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["cluster"].is_u64())
        .count();
    assert!(clustered >= copies.len(), "{clustered}");
}

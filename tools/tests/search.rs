//! `webmill search` and `webmill export ciff` as a user runs them: text and
//! JSON results, answers to queries without results, `--explain`, and a
//! corrupt index making `search` fail with `verify`'s message and exit code.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

fn webmill(args: &[&str], job: &Path) -> Output {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("webmill"));
    let (first, rest) = args.split_first().unwrap();
    c.arg(first).arg("-q").arg(job).args(rest);
    c.output().unwrap()
}

/// A generated site ingested, ranked and indexed by the CLI.
fn indexed(dir: &Path) -> PathBuf {
    let site = dir.join("site");
    write_site(&site, 120, 3);
    let job = dir.join("job");
    let st = Command::new(assert_cmd::cargo::cargo_bin("webmill"))
        .args(["ingest", "-q", "--out"])
        .arg(&job)
        .arg(format!("http://site.example/={}", site.display()))
        .status()
        .unwrap();
    assert!(st.success());
    for cmd in [&["pagerank"][..], &["index", "--barrels", "4"]] {
        let out = webmill(cmd, &job);
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    job
}

#[test]
fn search_prints_results_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let job = indexed(dir.path());
    let out = webmill(&["search", "alpha beta", "-k", "3", "--json"], &job);
    succeeded(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["total"].as_u64().unwrap() > 3);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    for r in results {
        for key in [
            "docid",
            "url",
            "title",
            "score",
            "snippet",
            "host_more",
            "similar",
        ] {
            assert!(!r[key].is_null(), "{key} missing in {r}");
        }
        assert!(r["url"].as_str().unwrap().starts_with("http://"));
        assert!(r["host_more"].is_u64() && r["similar"].is_u64());
    }
    let scores: Vec<f64> = results
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");

    let text = webmill(&["search", "alpha beta", "--explain", "-k", "2"], &job);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("matching documents") && text.contains("1. "),
        "{text}"
    );
    assert!(
        text.contains("word \"alpha\": df ") && text.contains("bm25f "),
        "{text}"
    );
    let paper = webmill(
        &[
            "search",
            "alpha beta",
            "--explain",
            "-k",
            "2",
            "--ranking",
            "paper",
        ],
        &job,
    );
    let paper = String::from_utf8(paper.stdout).unwrap();
    assert!(
        paper.contains("word \"alpha\"") && paper.contains("IR "),
        "{paper}"
    );
    assert!(
        text.contains("*alpha*") || text.contains("*beta*"),
        "marked words: {text}"
    );

    for (query, answer) in [
        ("", "No results: the query has no words."),
        ("?! --", "No results: the query has no words."),
        ("alpha qqqzzz", "No results: no document contains qqqzzz."),
    ] {
        let out = webmill(&["search", query, "--match", "all"], &job);
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), answer);
    }
    // By default a word no document has leaves the others' results.
    let out = webmill(&["search", "alpha qqqzzz", "--json"], &job);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["total"].as_u64().unwrap() > 0 && v["complete"] == 0,
        "{v}"
    );

    // Batch: a TREC run and JSON lines, one query a line.
    let queries = dir.path().join("queries.tsv");
    std::fs::write(&queries, "q1\talpha beta\nq2\tqqqzzz\n\nalpha\n").unwrap();
    let q = queries.to_str().unwrap();
    let out = webmill(&["search", "--queries", q, "--trec", "-k", "5"], &job);
    succeeded(&out);
    let run = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Vec<&str>> = run.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 10, "{run}");
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l.len(), 6, "{run}");
        assert_eq!(l[0], if i < 5 { "q1" } else { "4" }, "{run}");
        assert_eq!((l[1], l[5]), ("Q0", "webmill"));
        assert_eq!(l[3], (i % 5 + 1).to_string());
        assert!(l[2].starts_with("http://") && l[4].parse::<f64>().is_ok());
    }
    let out = webmill(&["search", "--queries", q, "--json", "-k", "2"], &job);
    let objs: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objs.len(), 3);
    assert_eq!(
        (objs[0]["qid"].as_str(), objs[2]["qid"].as_str()),
        (Some("q1"), Some("4"))
    );
    assert!(objs
        .iter()
        .all(|o| o["seconds"].as_f64().is_some_and(|s| s >= 0.0)));
    assert_eq!(objs[1]["total"], 0);
    assert_eq!(objs[0]["results"].as_array().map(Vec::len), Some(2));

    let long: String = (0..1000).map(|i| format!("alpha{i} ")).collect();
    let out = webmill(&["search", &long], &job);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("968 more ignored"));
}

#[test]
fn corrupt_index_makes_search_fail_like_verify() {
    let dir = tempfile::tempdir().unwrap();
    let job = indexed(dir.path());
    let lexicon = job.join("index/lexicon.wm");
    let c = webmill::container::Container::open(&lexicon).unwrap();
    let at = c.blocks()[2].offset as usize + 30;
    drop(c);
    let mut bytes = std::fs::read(&lexicon).unwrap();
    bytes[at] ^= 1;
    std::fs::write(&lexicon, bytes).unwrap();
    let verify = webmill(&["verify"], &job);
    let search = webmill(&["search", "alpha"], &job);
    assert!(!verify.status.success() && !search.status.success());
    assert_eq!(verify.status.code(), search.status.code());
    let v = String::from_utf8_lossy(&verify.stderr);
    let s = String::from_utf8_lossy(&search.stderr);
    let msg = s.trim().trim_start_matches("webmill: error: ");
    assert!(msg.contains("lexicon.wm") && msg.contains("block 2"), "{s}");
    assert!(v.contains(msg), "verify: {v}\nsearch: {s}");
}

#[test]
fn export_ciff_writes_a_strict_ciff_stream() {
    let dir = tempfile::tempdir().unwrap();
    let job = indexed(dir.path());
    let out = Command::new(assert_cmd::cargo::cargo_bin("webmill"))
        .args(["export", "-q", "ciff"])
        .arg(&job)
        .output()
        .unwrap();
    succeeded(&out);
    let c = webmill::index::ciff::check(&out.stdout[..], |_| {}).unwrap();
    let lex = webmill::index::Lexicon::open(job.join("index/lexicon.wm")).unwrap();
    assert_eq!(c.header.num_postings_lists as u32, lex.words());
    assert_eq!(c.header.total_terms_in_collection as u64, c.tf_sum);
    assert!(
        !job.join("tmp").exists() || std::fs::read_dir(job.join("tmp")).unwrap().next().is_none()
    );
}

/// Complete matches rank first whatever their scores; the text output says
/// where the pages with only some of the words start, and within each part
/// the scores descend. The count of an estimate comes with its bounds.
#[test]
fn partial_matches_are_marked_where_they_start() {
    let dir = tempfile::tempdir().unwrap();
    let job = indexed(dir.path());
    let out = webmill(
        &["search", "alpha beta", "-k", "200", "--json", "--no-prune"],
        &job,
    );
    succeeded(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = v["results"].as_array().unwrap();
    let complete = v["complete"].as_u64().unwrap() as usize;
    assert!(complete > 0 && complete < results.len(), "{complete}");
    let key = |r: &serde_json::Value| {
        (
            r["complete"].as_bool().unwrap(),
            r["score"].as_f64().unwrap(),
        )
    };
    for w in results.windows(2) {
        let (a, b) = (key(&w[0]), key(&w[1]));
        assert!(
            (a.0 && !b.0) || (a.0 == b.0 && a.1 >= b.1),
            "{a:?} before {b:?}"
        );
    }
    assert!(results[..complete].iter().all(|r| r["complete"] == true));
    let text = webmill(&["search", "alpha beta", "-k", "200", "--no-prune"], &job);
    let text = String::from_utf8(text.stdout).unwrap();
    let at = text
        .find("pages with only some of the words")
        .unwrap_or_else(|| panic!("no line before the partial matches: {text}"));
    let after = &text[at..];
    assert!(
        after.contains(&format!("\n{}. ", complete + 1))
            && !after.contains(&format!("\n{}. ", complete)),
        "the line stands before result {}: {text}",
        complete + 1
    );
    // A page of complete matches only has no such line.
    let first = webmill(&["search", "alpha beta", "-k", "1"], &job);
    assert!(!String::from_utf8(first.stdout)
        .unwrap()
        .contains("pages with only some"));
    // An estimated count is shown with the bounds it surely lies within.
    let out = webmill(&["search", "alpha OR beta", "-k", "1", "--json"], &job);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (lo, hi) = (
        v["total_bounds"][0].as_u64().unwrap(),
        v["total_bounds"][1].as_u64().unwrap(),
    );
    let total = v["total"].as_u64().unwrap();
    assert!(lo <= total && total <= hi, "{v}");
    if v["total_estimated"] == true {
        let text = webmill(&["search", "alpha OR beta", "-k", "1"], &job);
        let text = String::from_utf8(text.stdout).unwrap();
        assert!(text.starts_with("about ") && text.contains('–'), "{text}");
    }
}

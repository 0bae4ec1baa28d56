//! WAT input (Common Crawl's metadata records: each page's title and links
//! with anchor text). WAT files written from the Debian PostgreSQL pages by
//! `webmill-warc --wat`, read back against an independent reader of their
//! JSON and against the WARC of the same pages: a WAT-only job has the
//! WARC's page graph, PageRank, anchors and titles and an index of them;
//! WARC + WAT together give what the WARC alone gives; bad JSON is a skip
//! naming the file and the record's offset; a run killed mid-file resumes
//! to the same bytes.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;

/// The PostgreSQL pages as a WARC and as a WAT file in `dir`.
fn pg_warc_and_wat(dir: &Path, wat_name: &str) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let (warc, _) = pg_archive(dir, &[], "pg.warc.gz")?;
    let (wat, _) = pg_archive(dir, &["--wat"], wat_name)?;
    Some((warc, wat))
}

/// An independent reader of a WAT file (gzip or plain): for each response's
/// metadata, (target URI, title, links of the kinds webmill keeps), from the
/// records' own Content-Length and `serde_json`.
fn read_wat(path: &Path) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    for (head, block) in warc_records(path) {
        assert_eq!(head["WARC-Type"], "metadata");
        assert_eq!(head["Content-Type"], "application/json");
        let v: serde_json::Value = serde_json::from_slice(&block).unwrap();
        let env = &v["Envelope"];
        if env["WARC-Header-Metadata"]["WARC-Type"] != "response" {
            continue;
        }
        let html = &env["Payload-Metadata"]["HTTP-Response-Metadata"]["HTML-Metadata"];
        if html.is_null() {
            continue;
        }
        let links = html["Links"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| {
                ["A@/href", "AREA@/href", "FRAME@/src", "IFRAME@/src"]
                    .contains(&l["path"].as_str().unwrap())
            })
            .count();
        let refreshes = html["Head"]["Metas"].as_array().map_or(0, Vec::len);
        out.push((
            env["WARC-Header-Metadata"]["WARC-Target-URI"]
                .as_str()
                .unwrap()
                .to_string(),
            html["Head"]["Title"].as_str().unwrap_or("").to_string(),
            links + refreshes,
        ));
    }
    out
}

fn run(job: &Path, inputs: &[&Path]) {
    let mut args: Vec<std::ffi::OsString> = ["run", "-q", "--mem", "64M", "--out"]
        .map(Into::into)
        .to_vec();
    args.push(job.into());
    args.extend(inputs.iter().map(|p| p.as_os_str().to_owned()));
    webmill_ok(args);
}

fn ingest_figures(job: &Path) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(job.join("job.json")).unwrap()).unwrap();
    v["stages"]["ingest"]["published"]["figures"]["extra"].clone()
}

/// `export docs` as url → (crawled, title), the byte counts left out.
fn docs(job: &Path) -> BTreeMap<String, (String, String)> {
    let out = webmill_ok(["export".as_ref(), "docs".as_ref(), job.as_os_str()]);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[1].to_string(), (f[2].to_string(), f[4].to_string()))
        })
        .collect()
}

fn same(a: &Path, b: &Path, f: &str) -> bool {
    std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap()
}

#[test]
fn a_wat_only_job_has_the_warcs_graph_ranks_anchors_and_titles() {
    let dir = tempfile::tempdir().unwrap();
    let Some((warc, wat)) = pg_warc_and_wat(dir.path(), "pg.warc.wat.gz") else {
        return;
    };
    let want = read_wat(&wat);
    assert!(want.len() > 1000, "{} HTML pages", want.len());
    let (from_warc, from_wat) = (dir.path().join("warc"), dir.path().join("wat"));
    run(&from_warc, &[&warc]);
    run(&from_wat, &[&wat]);
    // Every HTML page is a page; its links as the WAT lists them (kept, or
    // dropped as not web: mailto:…).
    let x = ingest_figures(&from_wat);
    assert_eq!(x["pages"].as_u64(), Some(want.len() as u64));
    assert_eq!(x["meta_pages"].as_u64(), Some(want.len() as u64));
    let listed: usize = want.iter().map(|w| w.2).sum();
    assert_eq!(
        x["links"].as_u64().unwrap() + x["dropped_links"].as_u64().unwrap(),
        listed as u64
    );
    // The same graph, ranks and anchors as the WARC of the same pages.
    for f in [
        "edges.wm",
        "edges-t.wm",
        "anchors.wm",
        "urls.wm",
        "ranks.wm",
    ] {
        assert!(
            same(&from_warc, &from_wat, f),
            "{f} differs from the WARC job's"
        );
    }
    // The same docs and titles; each title the WAT's.
    let d = docs(&from_wat);
    assert_eq!(d, docs(&from_warc));
    for (uri, title, _) in &want {
        let url = webmill::url::normalize(uri).unwrap();
        assert_eq!(&d[&url], &("1".to_string(), title.clone()), "{url}");
    }
    // No text, but an index of titles and anchors: `VACUUM` is the title of
    // sql-vacuum.html and the anchor text of links to it.
    assert_eq!(x["text_pages"].as_u64(), Some(0));
    let found = webmill_ok([
        "search".as_ref(),
        "-k".as_ref(),
        "3".as_ref(),
        from_wat.as_os_str(),
        "vacuum".as_ref(),
    ]);
    let found = String::from_utf8_lossy(&found.stdout);
    assert!(found.contains("docs/15/sql-vacuum.html"), "{found}");
}

/// WARC + WAT of the same crawl give what the WARC alone gives, in either
/// order: a WAT page (no body) never displaces the WARC page of its URL.
#[test]
fn warc_and_wat_of_the_same_crawl_give_what_the_warc_alone_gives() {
    let dir = tempfile::tempdir().unwrap();
    let Some((made_warc, made_wat)) = pg_warc_and_wat(dir.path(), "pg.warc.wat.gz") else {
        return;
    };
    let (alone, both) = (dir.path().join("alone"), dir.path().join("both"));
    run(&alone, &[&made_warc]);
    // In a directory's sorted order, as Common Crawl names them
    // (X.warc.gz before X.warc.wat.gz).
    let crawl = dir.path().join("crawl");
    std::fs::create_dir(&crawl).unwrap();
    let (warc, wat) = (crawl.join("pg.warc.gz"), crawl.join("pg.warc.wat.gz"));
    std::fs::rename(&made_warc, &warc).unwrap();
    std::fs::rename(&made_wat, &wat).unwrap();
    run(&both, &[&crawl]);
    // The WAT first: its pages are numbered first.
    let wat_first = dir.path().join("wat-first");
    run(&wat_first, &[&wat, &warc]);
    // Everything but the per-page files (and the plots) is the same; with
    // the WAT first, the doc table's page numbers are those of the same
    // WARC pages, after the WAT's.
    let per_page = [
        "pages.wm",
        "pagedoc.wm",
        "links.wm",
        "text.wm",
        "repository.wm",
        "skips-ingest.wm",
    ];
    let a = job_files(&alone);
    let pages = ingest_figures(&alone)["pages"].as_u64().unwrap();
    for (job, shift) in [(&both, 0), (&wat_first, pages)] {
        let b = job_files(job);
        let mut compared = 0;
        for (f, bytes) in &a {
            if per_page.contains(&f.as_str()) || f.ends_with(".svg") {
                continue;
            }
            if f == "docs.wm" && shift > 0 {
                continue;
            }
            assert!(b.get(f) == Some(bytes), "{f} differs ({})", job.display());
            compared += 1;
        }
        assert!(compared >= 20, "{compared} files compared");
        // Both were read: every page twice, the WAT's as further captures.
        let x = ingest_figures(job);
        assert_eq!(x["pages"], pages * 2);
        let docs = |j: &Path| -> Vec<webmill::docs::Doc> {
            let t = webmill::docs::DocTable::open(j.join("docs.wm")).unwrap();
            t.iter().map(|d| d.unwrap().1).collect()
        };
        let want: Vec<webmill::docs::Doc> = docs(&alone)
            .into_iter()
            .map(|mut d| {
                d.page = d.page.map(|p| p + shift);
                d
            })
            .collect();
        assert_eq!(docs(job), want, "{}", job.display());
    }
}

#[test]
fn bad_wat_json_is_a_skip_naming_the_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let Some((wat, _)) = pg_archive(dir.path(), &["--wat", "--gzip", "none"], "pg.warc.wat") else {
        return;
    };
    let all = read_wat(&wat).len();
    let mut bytes = std::fs::read(&wat).unwrap();
    // Break the JSON of the third record, its length unchanged.
    let starts: Vec<usize> = bytes
        .windows(9)
        .enumerate()
        .filter(|(_, w)| w == b"WARC/1.0\r")
        .map(|(i, _)| i)
        .collect();
    let at = starts[3];
    let json = at
        + bytes[at..]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap()
        + 4;
    assert_eq!(&bytes[json..json + 13], b"{\"Container\":");
    bytes[json + 12] = b';';
    let bad = dir.path().join("bad.warc.wat");
    std::fs::write(&bad, &bytes).unwrap();
    let job = dir.path().join("job");
    let out = ingest(&job, &bad, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("bad.warc.wat: offset {at}: bad WAT JSON")),
        "{err}"
    );
    let x = ingest_figures(&job);
    assert_eq!(x["pages"].as_u64(), Some(all as u64 - 1));
    assert_eq!(x["skips"]["bad-metadata"].as_u64(), Some(1));
    assert!(!ingest(&dir.path().join("strict"), &bad, &["--strict"])
        .status
        .success());
}

#[test]
fn wat_ingest_killed_mid_file_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let Some((wat, _)) = pg_archive(dir.path(), &["--wat"], "pg.warc.wat.gz") else {
        return;
    };
    assert_resumes_to_the_same_bytes(
        dir.path(),
        &wat,
        13,
        &[
            "pages.wm",
            "repository.wm",
            "links.wm",
            "docs.wm",
            "anchors.wm",
            "edges.wm",
        ],
    );
}

//! Ingest + resolve against a naive in-memory reference, on generated sites
//! and on real WARC captures and Debian HTML documentation.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::*;
use webmill::container::pagefile::PageFile;
use webmill::docs::DocTable;
use webmill::graph::EdgeFile;
use webmill::ingest::html::Extractor;
use webmill::ingest::resolve::resolve;
use webmill::ingest::urltable::UrlTable;
use webmill::ingest::{ingest, records, IngestOptions, InputSpec};
use webmill::job::{Job, JobFile, Settings, StageId};

/// What a job should hold, computed without sorting files: every URL in a map.
#[derive(Debug, Default)]
struct Naive {
    /// URL → (crawled, title), in docID order once sorted by key.
    urls: BTreeMap<Vec<u8>, (bool, String)>,
    /// (src URL, dst URL).
    arcs: BTreeSet<(String, String)>,
    /// (dst URL, src URL, anchor text).
    anchors: BTreeSet<(String, String, String)>,
}

fn key(u: &str) -> Vec<u8> {
    let mut k = Vec::new();
    webmill::url::sort_key(u, &mut k);
    k
}

/// The naive reference for directory inputs: (base URL, dir) in order.
fn naive_dirs(inputs: &[(&str, &Path)]) -> Naive {
    let mut n = Naive::default();
    let mut ex = Extractor::new();
    for (base, dir) in inputs {
        let base = url::Url::parse(base).unwrap();
        let mut files = Vec::new();
        walk(dir, Path::new(""), &mut files);
        files.sort();
        for rel in files {
            if !rel.ends_with(".html") {
                continue;
            }
            let body = std::fs::read(dir.join(&rel)).unwrap();
            let Ok(page) = ex.extract(&body, None) else {
                continue;
            };
            let page_url = base.join(&rel).unwrap().to_string();
            let e = n
                .urls
                .entry(key(&page_url))
                .or_insert((true, String::new()));
            if !e.0 || e.1.is_empty() {
                *e = (true, page.title.clone());
            }
            let pu = url::Url::parse(&page_url).unwrap();
            let link_base = page
                .base_href
                .as_deref()
                .and_then(|b| pu.join(b.trim()).ok())
                .unwrap_or(pu);
            for l in &page.links {
                let Some(t) = webmill::url::resolve(&link_base, &l.href) else {
                    continue;
                };
                n.urls.entry(key(&t)).or_insert((false, String::new()));
                if t != page_url {
                    n.arcs.insert((page_url.clone(), t.clone()));
                    if !l.anchor.is_empty() {
                        n.anchors.insert((t, page_url.clone(), l.anchor.clone()));
                    }
                }
            }
        }
    }
    n
}

fn walk(root: &Path, rel: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(root.join(rel)).unwrap() {
        let e = e.unwrap();
        let r = rel.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            walk(root, &r, out);
        } else {
            out.push(r.to_string_lossy().into_owned());
        }
    }
}

/// Reads back what the job holds, by URL.
fn job_view(job: &Job) -> Naive {
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    docs.verify().unwrap();
    let mut urls = Vec::new();
    let mut n = Naive::default();
    for d in docs.iter() {
        let (_, d) = d.unwrap();
        n.urls.insert(key(&d.url), (d.crawled, d.title.clone()));
        urls.push(d.url);
    }
    // DocIDs follow the key order.
    let keys: Vec<Vec<u8>> = urls.iter().map(|u| key(u)).collect();
    assert!(
        keys.windows(2).all(|w| w[0] < w[1]),
        "docIDs not in key order"
    );
    let fwd = EdgeFile::open(job.file(JobFile::Edges).unwrap()).unwrap();
    fwd.for_each_list(|src, dsts| {
        for &d in dsts {
            assert_ne!(src, d, "self-loop kept");
            n.arcs
                .insert((urls[src as usize].clone(), urls[d as usize].clone()));
        }
        Ok(())
    })
    .unwrap();
    let rev = EdgeFile::open(job.file(JobFile::EdgesT).unwrap()).unwrap();
    let mut transposed = BTreeSet::new();
    rev.for_each_list(|dst, srcs| {
        for &s in srcs {
            transposed.insert((urls[s as usize].clone(), urls[dst as usize].clone()));
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(
        transposed, n.arcs,
        "transposed edges differ from forward ones"
    );
    let anchors = PageFile::open(job.file(JobFile::Anchors).unwrap(), &records::ANCHORS).unwrap();
    anchors
        .for_each(|dst, input| {
            let (src, _, text) = records::decode_anchor(input)?;
            n.anchors.insert((
                urls[dst as usize].clone(),
                urls[src as usize].clone(),
                text.to_string(),
            ));
            Ok(())
        })
        .unwrap();
    // The URL table finds every doc by its URL's fingerprint.
    let table = UrlTable::open(job.file(JobFile::Urls).unwrap()).unwrap();
    table.verify().unwrap();
    for (id, u) in urls.iter().enumerate() {
        let fp = webmill::url::fingerprint(u);
        assert!(table.lookup(fp).unwrap().contains(&(id as u64)), "{u}");
    }
    n
}

fn settings(mem: u64) -> Settings {
    Settings::new(mem)
}

fn run(job_dir: &Path, inputs: Vec<InputSpec>, segment: u64, mem: u64) -> Job {
    let mut job = Job::open(job_dir, true).unwrap();
    let opts = IngestOptions {
        inputs,
        segment_records: segment,
        ..IngestOptions::default()
    };
    let s = settings(mem);
    assert!(
        ingest(&mut job, &opts, &s).unwrap().ran(),
        "fresh job already done"
    );
    resolve(&mut job, &s).unwrap();
    job
}

fn assert_same(got: &Naive, want: &Naive) {
    assert_eq!(got.urls.len(), want.urls.len(), "number of docs");
    for (k, v) in &want.urls {
        assert_eq!(got.urls.get(k), Some(v), "{}", String::from_utf8_lossy(k));
    }
    assert_eq!(got.arcs.len(), want.arcs.len(), "number of arcs");
    assert_eq!(got.arcs, want.arcs);
    assert_eq!(got.anchors, want.anchors);
}

fn file_bytes(job: &Job, names: &[&str]) -> Vec<Vec<u8>> {
    names
        .iter()
        .map(|n| std::fs::read(job.dir().join(n)).unwrap())
        .collect()
}

const ALL_OUTPUTS: [&str; 10] = [
    "pages.wm",
    "text.wm",
    "repository.wm",
    "links.wm",
    "docs.wm",
    "urls.wm",
    "pagedoc.wm",
    "edges.wm",
    "edges-t.wm",
    "anchors.wm",
];

#[test]
fn generated_site_matches_the_naive_reference_under_a_tiny_budget() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    write_site(&site, 1500, 7);
    let base = "http://site.example/docs/";
    let want = naive_dirs(&[(base, &site)]);
    assert!(want.arcs.len() > 3000, "generator too small");
    // 1 MiB for everything: the sorts spill many runs.
    let job = run(
        &dir.path().join("job"),
        vec![InputSpec::parse(&format!("{base}={}", site.display()), None).unwrap()],
        200,
        1 << 20,
    );
    assert_same(&job_view(&job), &want);
    let ingest = job.published(StageId::parse("ingest").unwrap()).unwrap();
    let x = |k: &str| ingest.figures.extra[k].as_u64().unwrap();
    assert_eq!(x("pages"), 1500);
    // The binary .html file and the two files that are not HTML by name:
    // each is skipped and listed in the skip report.
    assert_eq!(
        x("skipped"),
        3,
        "the binary .html file and the other files are reported"
    );
    assert_eq!(x("other_files"), 2);
    // Every page's text and repository record is there, in page order.
    let text = PageFile::open(job.file(JobFile::Text).unwrap(), &records::TEXT).unwrap();
    assert_eq!(text.records(), 1500);
    let repo = PageFile::open(job.file(JobFile::Repository).unwrap(), &records::REPO).unwrap();
    assert_eq!(repo.records(), 1500);
    for f in ALL_OUTPUTS {
        webmill::kinds::verify_file(&job.dir().join(f)).unwrap();
    }
    // The page map points every doc with a page back at it.
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    let map = PageFile::open(job.file(JobFile::PageDoc).unwrap(), &records::PAGEDOC).unwrap();
    map.for_each(|page, input| {
        let (doc, canonical) = records::decode_pagedoc(input)?;
        assert!(canonical);
        assert_eq!(docs.get(doc)?.unwrap().page, Some(page));
        Ok(())
    })
    .unwrap();

    // Same outputs with other segment sizes' checkpoints? No: segments number
    // pages the same way, so even another budget gives the same bytes.
    let again = run(
        &dir.path().join("job-big"),
        vec![InputSpec::parse(&format!("{base}={}", site.display()), None).unwrap()],
        200,
        256 << 20,
    );
    assert_eq!(
        file_bytes(&job, &ALL_OUTPUTS),
        file_bytes(&again, &ALL_OUTPUTS),
        "outputs depend on the budget"
    );
}

#[test]
fn two_releases_under_two_base_urls_in_one_job() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    write_site(&site, 300, 3);
    let (b1, b2) = ("http://h.example/v1/", "http://h.example/v2/");
    let want = naive_dirs(&[(b1, &site), (b2, &site)]);
    let job = run(
        &dir.path().join("job"),
        vec![
            InputSpec::parse(&format!("{b1}={}", site.display()), None).unwrap(),
            InputSpec::parse(&format!("{b2}={}", site.display()), None).unwrap(),
        ],
        10_000,
        8 << 20,
    );
    assert_same(&job_view(&job), &want);
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    let crawled: Vec<String> = docs
        .iter()
        .map(|d| d.unwrap().1)
        .filter(|d| d.crawled)
        .map(|d| d.url)
        .collect();
    assert_eq!(crawled.len(), 600);
    // One host: v1's pages all come before v2's (contiguous by path).
    let first_v2 = crawled.iter().position(|u| u.contains("/v2/")).unwrap();
    assert!(crawled[..first_v2].iter().all(|u| u.contains("/v1/")));
    assert!(crawled[first_v2..].iter().all(|u| u.contains("/v2/")));
}

#[test]
fn real_debian_documentation_matches_the_naive_reference() {
    let Some(pkg) = corpus_dir("postgresql-doc-15") else {
        return;
    };
    let html = pkg.join("usr/share/doc/postgresql-doc-15/html");
    let base = "http://postgresql.example/docs/";
    let want = naive_dirs(&[(base, &html)]);
    let dir = tempfile::tempdir().unwrap();
    // 32 MiB: a record may take 2 MiB, more than the largest page, so no
    // page is cut and the reference (which reads whole files) applies; under
    // 4 MiB the largest pages are cut at 256 KiB, with their links, and the
    // cuts reported (tools/tests/hostile.rs covers those).
    let job = run(
        &dir.path().join("job"),
        vec![InputSpec::parse(&format!("{base}={}", html.display()), None).unwrap()],
        500,
        32 << 20,
    );
    let ingest = job.published(StageId::parse("ingest").unwrap()).unwrap();
    assert_eq!(
        ingest.figures.extra["cut"].as_u64(),
        Some(0),
        "no page is cut"
    );
    let got = job_view(&job);
    assert_same(&got, &want);
    let r = job.published(StageId::parse("resolve").unwrap()).unwrap();
    let x = |k: &str| r.figures.extra[k].as_u64().unwrap();
    eprintln!(
        "postgresql-doc-15: {} docs, {} crawled, {} arcs, {} anchors",
        x("nodes"),
        x("crawled"),
        x("arcs"),
        x("anchors")
    );
    assert!(x("crawled") > 1000 && x("arcs") > 10_000);
}

/// The real captures a directory test copies: WARC and ARC, per-record and
/// whole-file gzip, plain.
const ARCHIVES: [&str; 5] = [
    "iana.warc.gz",
    "example.warc",
    "example.arc.gz",
    "example-wget-1-14.warc.gz",
    "example-wpull.warc.gz",
];

#[test]
fn a_directory_of_archives_is_read_as_if_they_were_given_one_by_one() {
    let Some(data) = data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("crawl");
    // Nested, with names out of order on purpose, and a file that is neither.
    let names = [
        "b/iana.warc.gz",
        "a.warc",
        "b/c/example.arc.gz",
        "WGET.WARC.GZ",
        "z-wpull.warc.gz",
    ];
    for (name, src) in names.iter().zip(ARCHIVES) {
        let p = crawl.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::copy(data.join("warc").join(src), &p).unwrap();
    }
    std::fs::write(crawl.join("README"), "not an archive").unwrap();
    let whole = run(
        &dir.path().join("whole"),
        vec![InputSpec::parse(&crawl.to_string_lossy(), None).unwrap()],
        50,
        64 << 20,
    );
    // One by one, in byte order of the relative paths.
    let mut rels: Vec<&str> = names.to_vec();
    rels.sort();
    let canonical = std::fs::canonicalize(&crawl).unwrap();
    let one_by_one = run(
        &dir.path().join("one-by-one"),
        rels.iter()
            .map(|r| InputSpec::parse(&canonical.join(r).to_string_lossy(), None).unwrap())
            .collect(),
        50,
        64 << 20,
    );
    assert_eq!(
        file_bytes(&whole, &ALL_OUTPUTS),
        file_bytes(&one_by_one, &ALL_OUTPUTS),
        "a directory of archives differs from its archives given one by one"
    );
    let x = |job: &Job, k: &str| {
        job.published(StageId::Ingest).unwrap().figures.extra[k]
            .as_u64()
            .unwrap()
    };
    assert_eq!(x(&whole, "pages"), 25, "the captures hold 25 HTML pages");
    // The README is listed as another file, not read.
    assert_eq!(x(&whole, "other_files"), 1);
    assert_eq!(x(&whole, "skipped"), x(&one_by_one, "skipped") + 1);
}

#[test]
fn a_directory_with_pages_and_archives_takes_both() {
    let Some(data) = data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    write_site(&site, 200, 3);
    std::fs::copy(
        data.join("warc/iana.warc.gz"),
        site.join("m-capture.warc.gz"),
    )
    .unwrap();
    let base = "http://site.example/";
    let spec = format!("{base}={}", site.display());
    let both = run(
        &dir.path().join("both"),
        vec![InputSpec::parse(&spec, None).unwrap()],
        64,
        64 << 20,
    );
    let warc_only = run(
        &dir.path().join("warc"),
        vec![InputSpec::parse(&site.join("m-capture.warc.gz").to_string_lossy(), None).unwrap()],
        64,
        64 << 20,
    );
    std::fs::remove_file(site.join("m-capture.warc.gz")).unwrap();
    let html_only = run(
        &dir.path().join("html"),
        vec![InputSpec::parse(&spec, None).unwrap()],
        64,
        64 << 20,
    );
    let x = |job: &Job, k: &str| {
        job.published(StageId::Ingest).unwrap().figures.extra[k]
            .as_u64()
            .unwrap()
    };
    assert_eq!(
        x(&both, "pages"),
        x(&warc_only, "pages") + x(&html_only, "pages")
    );
    assert_eq!(x(&both, "files"), x(&html_only, "files"));
    assert!(x(&warc_only, "pages") > 0 && x(&html_only, "pages") > 0);
    // The same docs as the naive reference of the pages plus the capture's.
    let docs = |job: &Job| {
        DocTable::open(job.file(JobFile::Docs).unwrap())
            .unwrap()
            .crawled()
    };
    assert_eq!(docs(&both), docs(&warc_only) + docs(&html_only));
}

//! Golden files: one tiny file per on-disk format version, made by today's
//! writers and committed in `formats/golden/` (described in `formats/README.md`
//! and dissected byte by byte in `formats/*.md`).
//!
//! For every golden file this proves that:
//!
//! * (a) today's reader opens it and decodes exactly the records hard-coded
//!   below, so files written by earlier builds stay readable;
//! * (b) today's writer, given the same records, produces the same bytes, so a
//!   format change cannot slip in unnoticed: it must be made on purpose (bump the
//!   kind's version, update `formats/*.md`, regenerate the golden files);
//! * (c) `webmill::kinds::verify_file` accepts it;
//! * (d) changing any single byte of it makes both `Container::open` + `verify`
//!   and `verify_file` fail, with a message naming the file;
//! * (e) for the kinds of stages `ingest` and `resolve`: the real stages, run
//!   on the golden crawl written as a WARC file, write the golden files byte
//!   for byte, so the records hard-coded here are what the pipeline makes.
//!   The `sketches` golden file is made by the real `dedup` stage (min-hash,
//!   `--verify exact`) on that crawl, and its records are checked against
//!   sketches and shingle sets computed independently from the crawl's words.
//!
//! To regenerate the files after a deliberate format change:
//! `WEBMILL_UPDATE_GOLDEN=1 cargo test --release --test golden -- --test-threads=1 --nocapture`
//! (test (b) then rewrites `formats/golden/` instead of comparing).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use webmill::analysis::checkpoint;
use webmill::analysis::nodeset::{NodeBits, NodeLabels};
use webmill::container::pagefile::{self, PageFile, PageFileWriter};
use webmill::container::{BlockCodec, Container, ContainerWriter, FileKind};
use webmill::docs::{Doc, DocTable, DocWriter};
use webmill::graph::{Direction, EdgeFile, EdgeWriter};
use webmill::ingest::html::flag;
use webmill::ingest::records::{self, LinkKind, PageRec};
use webmill::ingest::resolve::resolve;
use webmill::ingest::urltable::{UrlTable, UrlTableWriter};
use webmill::ingest::{ingest, IngestOptions, InputSpec};
use webmill::input::{for_each_skip, SkipEntry, SkipKind, SkipWriter};
use webmill::job::{Job, JobFile, Settings};
use webmill::kinds::verify_file;
use webmill::rank::{RankVector, VectorWriter};
use webmill::sort::{RunCodec, RunReader, RunWriter};

/// The exchange tables of a distributed job (Parquet, `formats/spark.md`).
#[path = "golden/exchange.rs"]
mod exchange;

/// A golden file: its name in `formats/golden/` and how to write it into a
/// directory (returning the path written).
struct Golden {
    name: &'static str,
    write: fn(&Path) -> webmill::Result<PathBuf>,
}

const GOLDEN: &[Golden] = &[
    Golden {
        name: "container.wm",
        write: write_container,
    },
    Golden {
        name: "edges.wm",
        write: write_edges,
    },
    Golden {
        name: "docs.wm",
        write: write_docs,
    },
    Golden {
        name: "sortrun.wm",
        write: write_sortrun,
    },
    Golden {
        name: "sortrun-long.wm",
        write: write_sortrun_long,
    },
    Golden {
        name: "ranks.wm",
        write: write_ranks,
    },
    Golden {
        name: "nodesets.wm",
        write: write_nodesets,
    },
    Golden {
        name: "pages.wm",
        write: write_pages,
    },
    Golden {
        name: "text.wm",
        write: write_text,
    },
    Golden {
        name: "repository.wm",
        write: write_repo,
    },
    Golden {
        name: "links.wm",
        write: write_links,
    },
    Golden {
        name: "pagedoc.wm",
        write: write_pagedoc,
    },
    Golden {
        name: "anchors.wm",
        write: write_anchors,
    },
    Golden {
        name: "urls.wm",
        write: write_urls,
    },
    Golden {
        name: "sketches.wm",
        write: write_sketches,
    },
    Golden {
        name: "forward.wm",
        write: write_forward_barrel,
    },
    Golden {
        name: "lexicon.wm",
        write: write_lexicon,
    },
    Golden {
        name: "barrel-full.wm",
        write: write_full_barrel,
    },
    Golden {
        name: "skips.wm",
        write: write_skips,
    },
    Golden {
        name: "pairs.wm",
        write: write_pairs,
    },
    Golden {
        name: "clusters.wm",
        write: write_clusters,
    },
    Golden {
        name: "lexpart.wm",
        write: write_lexpart,
    },
    Golden {
        name: "rankpart.wm",
        write: write_rankpart,
    },
    Golden {
        name: "fieldlens.wm",
        write: write_field_lengths,
    },
    Golden {
        name: "shards.wm",
        write: write_shards,
    },
    Golden {
        name: "titles.wm",
        write: write_titles,
    },
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("formats/golden")
}

fn golden_path(name: &str) -> PathBuf {
    golden_dir().join(name)
}

// ---------------------------------------------------------------------------
// container.wm: a generic container of kind "golden".

const CONTAINER_KIND: &str = "golden";
const CONTAINER_KIND_VERSION: u32 = 1;
/// Block 0, zstd level 3: six words (6 records).
const ZSTD_PAYLOAD: &[u8] = b"golden golden golden golden golden golden\n";
/// Block 1, raw: three little-endian u32 (3 records).
const RAW_PAYLOAD: &[u8] = &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0];

fn write_container(dir: &Path) -> webmill::Result<PathBuf> {
    let path = dir.join("container.wm");
    let params = json!({"made_by": "tests/golden.rs"});
    let mut w = ContainerWriter::create(&path, CONTAINER_KIND, CONTAINER_KIND_VERSION, &params)?;
    w.write_block(BlockCodec::Zstd(3), b"a", 6, ZSTD_PAYLOAD)?;
    w.write_block(BlockCodec::Raw, b"b", 3, RAW_PAYLOAD)?;
    w.write_block(BlockCodec::Raw, b"c", 0, b"")?;
    w.finish(&json!({"records": 9}))?;
    Ok(path)
}

#[test]
fn container_golden_decodes() {
    let c = Container::open_kind(
        golden_path("container.wm"),
        CONTAINER_KIND,
        CONTAINER_KIND_VERSION,
    )
    .expect("open container.wm");
    assert_eq!(c.params(), &json!({"made_by": "tests/golden.rs"}));
    assert_eq!(c.meta(), &json!({"records": 9}));
    assert_eq!(c.records(), 9);
    assert_eq!(
        c.raw_bytes(),
        (ZSTD_PAYLOAD.len() + RAW_PAYLOAD.len()) as u64
    );
    let index: Vec<(&[u8], u64, u64)> = c
        .blocks()
        .iter()
        .map(|b| (b.key.as_slice(), b.records, b.raw))
        .collect();
    assert_eq!(
        index,
        [
            (&b"a"[..], 6, ZSTD_PAYLOAD.len() as u64),
            (&b"b"[..], 3, RAW_PAYLOAD.len() as u64),
            (&b"c"[..], 0, 0),
        ]
    );
    assert_eq!(c.read_block(0).expect("block 0"), ZSTD_PAYLOAD);
    assert_eq!(c.read_block(1).expect("block 1"), RAW_PAYLOAD);
    assert_eq!(&*c.map_block(1).expect("map block 1"), RAW_PAYLOAD);
    assert!(c.read_block(2).expect("block 2").is_empty());
}

// ---------------------------------------------------------------------------
// edges.wm: a forward edge file of 6 nodes; nodes 2 and 4 have no out-arcs.

const EDGE_NODES: u64 = 6;
const EDGE_LISTS: &[(u64, &[u64])] = &[(0, &[1, 2, 5]), (1, &[0]), (3, &[2, 4]), (5, &[0, 4])];

fn write_edges(dir: &Path) -> webmill::Result<PathBuf> {
    let path = dir.join("edges.wm");
    let mut w = EdgeWriter::create(&path, Direction::Forward, EDGE_NODES)?;
    for &(node, dsts) in EDGE_LISTS {
        for &d in dsts {
            w.push(node, d)?;
        }
    }
    w.finish()?;
    Ok(path)
}

#[test]
fn edges_golden_decodes() {
    let f = EdgeFile::open(golden_path("edges.wm")).expect("open edges.wm");
    assert_eq!(f.direction(), Direction::Forward);
    let s = f.stats();
    assert_eq!(
        (s.nodes, s.arcs, s.lists, s.max_degree, s.max_degree_node),
        (6, 8, 4, 3, 0)
    );
    let lists: Vec<(u64, Vec<u64>)> = f.lists().collect::<Result<_, _>>().expect("lists");
    let expected: Vec<(u64, Vec<u64>)> = EDGE_LISTS.iter().map(|&(n, d)| (n, d.to_vec())).collect();
    assert_eq!(lists, expected);
    assert_eq!(f.neighbours(3).expect("neighbours of 3"), [2, 4]);
    assert!(f.neighbours(4).expect("neighbours of 4").is_empty());
    let keys: Vec<&[u8]> = f
        .container()
        .blocks()
        .iter()
        .map(|b| b.key.as_slice())
        .collect();
    assert_eq!(keys, [&0u64.to_be_bytes()[..]]);
}

// ---------------------------------------------------------------------------
// docs.wm: four docs, one not crawled, titles with non-ASCII text.

fn golden_docs() -> Vec<Doc> {
    let doc = |url: &str, crawled, bytes, title: &str| Doc {
        url: url.to_string(),
        crawled,
        bytes,
        title: title.to_string(),
        page: crawled.then_some(bytes % 7),
        host: url.len() as u64 % 3,
    };
    vec![
        doc("https://example.org/", true, 1256, "Example"),
        doc("https://example.org/café", true, 300, "Café — menu"),
        doc("https://example.com/missing", false, 0, ""),
        doc("https://例え.jp/", true, 70000, "日本語"),
    ]
}

fn write_docs(dir: &Path) -> webmill::Result<PathBuf> {
    let path = dir.join("docs.wm");
    let mut w = DocWriter::create(&path, "golden")?;
    for d in golden_docs() {
        w.push(&d)?;
    }
    w.finish()?;
    Ok(path)
}

#[test]
fn docs_golden_decodes() {
    let t = DocTable::open(golden_path("docs.wm")).expect("open docs.wm");
    assert_eq!(t.container().params(), &json!({"source": "golden"}));
    assert_eq!((t.len(), t.crawled()), (4, 3));
    let docs: Vec<(u64, Doc)> = t.iter().collect::<Result<_, _>>().expect("docs");
    let expected: Vec<(u64, Doc)> = (0..).zip(golden_docs()).collect();
    assert_eq!(docs, expected);
    assert_eq!(t.get(1).expect("get 1"), Some(golden_docs()[1].clone()));
    assert_eq!(t.get(4).expect("get 4"), None);
}

// ---------------------------------------------------------------------------
// sortrun.wm: a level-0 run of seven (u64, u32) records covering input records
// [0, 7), in blocks of at most 64 raw bytes (five 12-byte records).
// sortrun-long.wm: three (u64, bytes, u32) records whose strings are shorter
// than, as long as, and longer than the block key's bound (256 bytes), a
// block each: the keys keep, keep but end the key at, and cut the string.

const RUN_RECORDS: [(u64, u32); 7] = [(1, 7), (1, 9), (2, 0), (5, 3), (8, 1), (13, 2), (21, 4)];

type LongRun = (u64, Vec<u8>, u32);

fn long_run_records() -> Vec<LongRun> {
    let cut = vec![b'a'; 256];
    let longer = [&cut[..], &[b'b'; 44][..]].concat();
    vec![(1, b"abc".to_vec(), 9), (2, cut, 5), (2, longer, 1)]
}

/// Writes `records` as a level-0 zstd run in blocks of at most 64 raw bytes,
/// named `name` in `dir`.
fn write_run<T: webmill::sort::Record>(
    dir: &Path,
    name: &str,
    records: &[T],
) -> webmill::Result<PathBuf> {
    // The writer names its file after what it covers; write it aside and rename.
    let aside = dir.join(name).with_extension("aside");
    fs::create_dir_all(&aside).map_err(|e| webmill::Error::io(&aside, e))?;
    let n = records.len() as u64;
    let mut w = RunWriter::<T>::create(&aside, 0, 0, n, "none", RunCodec::Zstd(3), 64)?;
    w.write_sorted(records, None)?;
    let info = w.finish()?;
    let path = dir.join(name);
    fs::rename(&info.path, &path).map_err(|e| webmill::Error::io(&path, e))?;
    Ok(path)
}

fn write_sortrun(dir: &Path) -> webmill::Result<PathBuf> {
    write_run(dir, "sortrun.wm", &RUN_RECORDS)
}

fn write_sortrun_long(dir: &Path) -> webmill::Result<PathBuf> {
    write_run(dir, "sortrun-long.wm", &long_run_records())
}

/// Opens the golden run `name` of `record_type` with `n` records: checks its
/// header and footer, returns each block's (key, record count) and the
/// records.
fn read_golden_run<T: webmill::sort::Record>(
    name: &str,
    record_type: &str,
) -> (Vec<(Vec<u8>, u64)>, Vec<T>) {
    let path = golden_path(name);
    let c = Container::open_kind(&path, "sortrun", 2).expect("open the golden run");
    let mut r = RunReader::<T>::open(&path).expect("open run");
    let n = r.records();
    assert_eq!(
        c.params(),
        &json!({"record_type": record_type, "combine": "none", "level": 0, "start": 0, "end": n,
                "codec": "zstd:3"})
    );
    assert_eq!(c.meta(), &json!({ "records": n }));
    let index = c
        .blocks()
        .iter()
        .map(|b| (b.key.clone(), b.records))
        .collect();
    let mut records = Vec::new();
    while let Some(rec) = r.next_record().expect("record") {
        records.push(rec);
    }
    (index, records)
}

#[test]
fn sortrun_golden_decodes() {
    let (index, records) = read_golden_run::<(u64, u32)>("sortrun.wm", "(u64,u32)");
    // Fixed-width records are their own block keys.
    let key = |(a, b): (u64, u32)| [&a.to_le_bytes()[..], &b.to_le_bytes()[..]].concat();
    assert_eq!(index, [(key(RUN_RECORDS[0]), 5), (key(RUN_RECORDS[5]), 2)]);
    assert_eq!(records, RUN_RECORDS);
}

#[test]
fn sortrun_long_golden_decodes() {
    let (index, records) = read_golden_run::<LongRun>("sortrun-long.wm", "(u64,bytes,u32)");
    assert_eq!(records, long_run_records());
    // Keys written out by hand: u64 LE, varint length, bytes, u32 LE.
    let key = |a: u64, len: &[u8], bytes: &[u8], b: u32| {
        [&a.to_le_bytes()[..], len, bytes, &b.to_le_bytes()[..]].concat()
    };
    let cut = [b'a'; 256];
    assert_eq!(
        index,
        [
            (key(1, &[3], b"abc", 9), 1),
            // 256 = 0x80 0x02 as a varint; the string reached the bound, so the
            // field after it is 0.
            (key(2, &[0x80, 0x02], &cut, 0), 1),
            (key(2, &[0x80, 0x02], &cut, 0), 1),
        ]
    );
}

// ---------------------------------------------------------------------------
// ranks.wm: a PageRank-style vector of five values (exact binary fractions
// summing to 1), one raw block, with PageRank's parameters and metadata.

const RANKS: [f64; 5] = [0.125, 0.25, 0.375, 0.0625, 0.1875];

fn ranks_params() -> serde_json::Value {
    json!({"damping": 0.85, "dangling": "uniform", "max_iter": 100, "personalize": null,
           "tol": 0.05})
}

fn ranks_meta() -> serde_json::Value {
    json!({"iterations": 3, "l1": 0.03125, "converged": true, "sum": 1.0,
           "history": [0.75, 0.125, 0.03125]})
}

fn write_ranks(dir: &Path) -> webmill::Result<PathBuf> {
    let path = dir.join("ranks.wm");
    let mut w = VectorWriter::create(&path, RANKS.len() as u64, ranks_params())?;
    w.push(RANKS[0])?;
    w.extend(&RANKS[1..])?;
    w.finish(&ranks_meta())?;
    Ok(path)
}

// ---------------------------------------------------------------------------
// nodesets.wm: an analysis checkpoint of a 70-node graph: one bit set (nodes
// 0, 3 and 64 set: two words) and a 32-bit label per node (label v = 2v).

fn nodesets_arrays() -> (NodeBits, NodeLabels) {
    let mut bits = NodeBits::new(70);
    for v in [0, 3, 64] {
        bits.insert(v);
    }
    let mut labels = NodeLabels::new(70);
    for v in 0..70 {
        labels.set(v, 2 * v);
    }
    (bits, labels)
}

fn write_nodesets(dir: &Path) -> webmill::Result<PathBuf> {
    let path = dir.join("nodesets.wm");
    let (bits, labels) = nodesets_arrays();
    checkpoint::save(
        &path,
        &json!({"nodes": 70}),
        &json!({"step": "Components"}),
        &checkpoint::Arrays {
            bits: vec![("active", &bits)],
            labels: Some(("labels", &labels)),
        },
    )?;
    Ok(path)
}

// ---------------------------------------------------------------------------
// skips.wm: a skip report of three entries: a damaged record skipped before
// page 0, a page (2) kept with its body cut, and a FIFO whose name is not
// UTF-8, skipped before page 3.

fn skip_entries() -> Vec<(u64, SkipEntry)> {
    #[cfg(unix)]
    let fifo = {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(b"site/pipe\xff.html"))
    };
    #[cfg(not(unix))]
    let fifo = PathBuf::from("site/pipe\u{fffd}.html");
    vec![
        (
            0,
            SkipEntry::new(
                SkipKind::Damaged,
                "crawl.warc.gz",
                "offset 0",
                "not a WARC record: no WARC/1.x version line",
            ),
        ),
        (
            2,
            SkipEntry::new(
                SkipKind::BodyCut,
                "crawl.warc.gz",
                "offset 5120",
                "body decoded only up to its first 1048576 bytes",
            ),
        ),
        (
            3,
            SkipEntry::new(SkipKind::SpecialFile, fifo, "", "a FIFO, not read"),
        ),
    ]
}

fn write_skips(dir: &Path) -> webmill::Result<PathBuf> {
    let path = dir.join("skips.wm");
    let mut w = SkipWriter::create(&path)?;
    for (key, e) in skip_entries() {
        w.push(key, &e)?;
    }
    w.finish()?;
    Ok(path)
}

#[test]
fn skips_golden_decodes() {
    let path = golden_path("skips.wm");
    let mut got = Vec::new();
    for_each_skip(&path, |key, e| {
        got.push((key, e.clone()));
        Ok(())
    })
    .expect("read skips.wm");
    assert_eq!(got, skip_entries());
    let c = Container::open(&path).expect("open skips.wm");
    assert_eq!(c.meta(), &json!({"skips": 3}));
    assert_eq!(got[1].1.tsv(2), "2\tcut\tbody-cut\tcrawl.warc.gz\toffset 5120\tbody decoded only up to its first 1048576 bytes");
}

#[test]
fn nodesets_golden_decodes() {
    let path = golden_path("nodesets.wm");
    checkpoint::verify(&path).expect("verify nodesets.wm");
    let (mut bits, mut labels) = (NodeBits::new(70), NodeLabels::new(70));
    let state = checkpoint::load(
        &path,
        &json!({"nodes": 70}),
        &mut checkpoint::ArraysMut {
            bits: vec![("active", &mut bits)],
            labels: Some(("labels", &mut labels)),
        },
    )
    .expect("load nodesets.wm");
    assert_eq!(state, Some(json!({"step": "Components"})));
    assert_eq!((bits, labels), nodesets_arrays());
}

#[test]
fn ranks_golden_decodes() {
    let v = RankVector::open(golden_path("ranks.wm")).expect("open ranks.wm");
    assert_eq!(v.len(), RANKS.len() as u64);
    let c = v.container();
    let mut params = ranks_params();
    params["len"] = json!(RANKS.len());
    assert_eq!(c.params(), &params);
    assert_eq!(c.meta(), &ranks_meta());
    let index: Vec<(&[u8], u64, u64, u64)> = c
        .blocks()
        .iter()
        .map(|b| (b.key.as_slice(), b.records, b.stored, b.raw))
        .collect();
    assert_eq!(index, [(&0u64.to_be_bytes()[..], 5, 40, 40)]);
    let bits = |values: &[f64]| values.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&v.load().expect("load")), bits(&RANKS));
    let mut r = v.reader();
    for (i, &x) in (0..).zip(&RANKS) {
        assert_eq!(r.get(i).expect("get").to_bits(), x.to_bits());
    }
    let map = c.map_block(0).expect("map block 0");
    assert_eq!(
        map.as_ptr() as usize % 8,
        0,
        "a raw block is 8-byte aligned"
    );
    let mapped: Vec<f64> = map
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect();
    assert_eq!(bits(&mapped), bits(&RANKS));
}

// ---------------------------------------------------------------------------
// The files of stages `ingest` (pages.wm, text.wm, repository.wm, links.wm) and
// `resolve` (pagedoc.wm, anchors.wm, urls.wm) for a crawl of four captures: a
// French page, a redirect to it, a Japanese page under an IDN host, and a
// second capture of the first page under a differently written URL. The
// content is what `webmill ingest --segment-records 2` and `resolve` make of
// that crawl, as `ingest_and_resolve_reproduce_the_golden_files` checks: two
// segments of two captures each, joined by `pagefile::concat`, so every ingest
// file has two blocks and its second block's key is shifted by 2.

/// One capture of the crawl: its WARC response record, and what ingest keeps.
struct Capture {
    /// `WARC-Target-URI` as captured.
    uri: &'static str,
    /// The URL after normalization.
    url: &'static str,
    status: u16,
    reason: &'static str,
    date: &'static str,
    /// The HTTP `Content-Type` ("" when the response has none).
    content_type: &'static str,
    /// The HTTP `Location` of a redirect.
    location: Option<&'static str>,
    body: &'static str,
    title: &'static str,
    /// Words and flag bytes; `None` when the page has no HTML (the redirect).
    text: Option<(&'static str, &'static [u8])>,
    /// The links kept: (kind, normalized target, anchor text).
    links: &'static [(LinkKind, &'static str, &'static str)],
}

const CRAWL: [Capture; 4] = [
    Capture {
        uri: "https://example.org/",
        url: "https://example.org/",
        status: 200,
        reason: "OK",
        date: "2024-05-01T10:00:00Z",
        content_type: "text/html; charset=utf-8",
        location: None,
        body: "<title>Café — menu</title><h1>Café</h1><p>Crème <b>brûlée</b> <small>5 €</small>\
               </p><a href=\"/menu#top\">Full menu</a> <a href=\"https://例え.jp/\">日本語</a> \
               <a href=\"/\">home</a> <a href=\"mailto:chef@example.org\">mail</a>",
        title: "Café — menu",
        text: Some((
            "café crème brûlée 5 full menu 日本語 home mail",
            &[0x0e, 0x09, 0x11, 0x00, 0x29, 0x21, 0x21, 0x21, 0x21],
        )),
        // The mailto: link is dropped.
        links: &[
            (LinkKind::Anchor, "https://example.org/menu", "Full menu"),
            (LinkKind::Anchor, "https://xn--r8jz45g.jp/", "日本語"),
            (LinkKind::Anchor, "https://example.org/", "home"),
        ],
    },
    Capture {
        uri: "http://example.com/old",
        url: "http://example.com/old",
        status: 301,
        reason: "Moved Permanently",
        date: "2024-05-01T10:00:05Z",
        content_type: "",
        location: Some("https://example.org/"),
        body: "",
        title: "",
        text: None,
        links: &[(LinkKind::Redirect, "https://example.org/", "")],
    },
    Capture {
        uri: "https://例え.jp/",
        url: "https://xn--r8jz45g.jp/",
        status: 200,
        reason: "OK",
        date: "2024-05-01T10:01:00Z",
        content_type: "text/html",
        location: None,
        body: "<meta charset=\"utf-8\"><title>日本語</title><p>日本語のページ。\
               <a href=\"https://example.org/\">Example</a></p>",
        title: "日本語",
        text: Some(("日本語のページ example", &[0x01, 0x29])),
        links: &[(LinkKind::Anchor, "https://example.org/", "Example")],
    },
    Capture {
        uri: "https://EXAMPLE.org:443/",
        url: "https://example.org/",
        status: 200,
        reason: "OK",
        date: "2024-06-01T09:30:00Z",
        content_type: "text/html; charset=UTF-8",
        location: None,
        body: "<title>Café</title><p>Fermé. Ελληνικά</p><a href=\"menu\">Menu</a>",
        title: "Café",
        text: Some(("fermé ελληνικά menu", &[0x09, 0x09, 0x29])),
        links: &[(LinkKind::Anchor, "https://example.org/menu", "Menu")],
    },
];

/// Captures per ingest segment.
const SEGMENT_CAPTURES: usize = 2;
/// Block size and zstd level of the ingest files (as `webmill ingest` writes them).
const INGEST_BLOCK_BYTES: usize = 256 << 10;
/// Block size of the page map and the anchors (as `resolve` writes them).
const RESOLVE_BLOCK_BYTES: usize = 64 << 10;
const PAGE_FILE_LEVEL: i32 = 3;

/// The docs `resolve` numbers, in sort-key order (`com,example)` <
/// `jp,xn--r8jz45g)` < `org,example)`): (URL, its page, host number).
const CRAWL_DOCS: [(&str, Option<u64>, u64); 4] = [
    ("http://example.com/old", Some(1), 0),
    ("https://xn--r8jz45g.jp/", Some(2), 1),
    ("https://example.org/", Some(0), 2),
    ("https://example.org/menu", None, 2),
];
/// xxh3-64 of each doc's URL (from `xxhsum -H3`, an independent implementation).
const FINGERPRINTS: [u64; 4] = [
    0x1c0f_4884_dba5_66e5,
    0xf48d_47f6_7da0_ab5e,
    0x8e2c_3c29_14c7_cb49,
    0x1038_d090_a469_54e7,
];
/// Page → (docID, canonical): page 3 is a second capture of doc 2.
const PAGEDOC: [(u64, bool); 4] = [(2, true), (0, true), (1, true), (2, false)];
/// (target docID, source docID, kind, text), sorted. The self-link `home` and
/// the redirect (no text) have no anchor.
const ANCHORS: [(u64, u64, LinkKind, &str); 4] = [
    (1, 2, LinkKind::Anchor, "日本語"),
    (2, 1, LinkKind::Anchor, "Example"),
    (3, 2, LinkKind::Anchor, "Full menu"),
    (3, 2, LinkKind::Anchor, "Menu"),
];
/// The forward arcs (self-loop 2 → 2 dropped, 2 → 3 deduplicated).
const CRAWL_ARCS: [(u64, u64); 4] = [(0, 2), (1, 2), (2, 1), (2, 3)];

/// Asserts that `job`'s doc table holds the crawl's docs, in order.
fn assert_crawl_docs(job: &Job) {
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).expect("open docs.wm");
    let got: Vec<Doc> = docs
        .iter()
        .map(|r| r.map(|(_, d)| d))
        .collect::<Result<_, _>>()
        .expect("docs");
    assert_eq!(got, crawl_docs());
}

fn crawl_docs() -> Vec<Doc> {
    CRAWL_DOCS
        .iter()
        .map(|&(url, page, host)| {
            let capture = page.map(|p| &CRAWL[p as usize]);
            Doc {
                url: url.to_string(),
                crawled: capture.is_some(),
                bytes: capture.map_or(0, |c| c.body.len() as u64),
                title: capture.map_or("", |c| c.title).to_string(),
                page,
                host,
            }
        })
        .collect()
}

fn page_rec(c: &Capture) -> PageRec {
    PageRec {
        url: c.url.to_string(),
        title: c.title.to_string(),
        bytes: c.body.len() as u64,
        status: c.status,
        date: c.date.to_string(),
    }
}

/// Writes an ingest file as `webmill ingest` does: one page file per segment
/// (page numbers from 0 in each), then the segments joined with their page
/// numbers shifted.
fn write_ingested(
    dir: &Path,
    name: &str,
    kind: &FileKind,
    payloads: fn(&Capture) -> Vec<Vec<u8>>,
) -> webmill::Result<PathBuf> {
    let seg_dir = dir.join(format!("{name}.segments"));
    fs::create_dir_all(&seg_dir).map_err(|e| webmill::Error::io(&seg_dir, e))?;
    let mut parts = Vec::new();
    for (s, captures) in CRAWL.chunks(SEGMENT_CAPTURES).enumerate() {
        let path = seg_dir.join(format!("{s:06}.{}.wm", kind.tag));
        let mut w = PageFileWriter::create(&path, kind, INGEST_BLOCK_BYTES, PAGE_FILE_LEVEL)?;
        for (page, c) in (0u64..).zip(captures) {
            for payload in payloads(c) {
                w.push(page, &payload)?;
            }
        }
        w.finish(&json!({}))?;
        parts.push((path, (s * SEGMENT_CAPTURES) as u64));
    }
    let path = dir.join(name);
    pagefile::concat(&parts, kind, &path, &json!({"pages": CRAWL.len()}))?;
    Ok(path)
}

fn write_pages(dir: &Path) -> webmill::Result<PathBuf> {
    write_ingested(dir, "pages.wm", &records::PAGES, |c| {
        let mut p = Vec::new();
        page_rec(c).encode(&mut p);
        vec![p]
    })
}

fn write_text(dir: &Path) -> webmill::Result<PathBuf> {
    write_ingested(dir, "text.wm", &records::TEXT, |c| {
        c.text
            .iter()
            .map(|&(words, flags)| {
                let mut p = Vec::new();
                records::encode_text(words, flags, &mut p);
                p
            })
            .collect()
    })
}

fn write_repo(dir: &Path) -> webmill::Result<PathBuf> {
    write_ingested(dir, "repository.wm", &records::REPO, |c| {
        let mut p = Vec::new();
        records::encode_repo(c.content_type, c.body.as_bytes(), &mut p);
        vec![p]
    })
}

fn write_links(dir: &Path) -> webmill::Result<PathBuf> {
    write_ingested(dir, "links.wm", &records::LINKS, |c| {
        c.links
            .iter()
            .map(|&(kind, target, anchor)| {
                let mut p = Vec::new();
                records::encode_link(kind, target, anchor, &mut p);
                p
            })
            .collect()
    })
}

fn write_pagedoc(dir: &Path) -> webmill::Result<PathBuf> {
    let path = dir.join("pagedoc.wm");
    let mut w = PageFileWriter::create(
        &path,
        &records::PAGEDOC,
        RESOLVE_BLOCK_BYTES,
        PAGE_FILE_LEVEL,
    )?;
    for (page, &(doc, canonical)) in (0u64..).zip(&PAGEDOC) {
        let mut p = Vec::new();
        records::encode_pagedoc(doc, canonical, &mut p);
        w.push(page, &p)?;
    }
    w.finish(&json!({"pages": PAGEDOC.len()}))?;
    Ok(path)
}

fn write_anchors(dir: &Path) -> webmill::Result<PathBuf> {
    let path = dir.join("anchors.wm");
    let mut w = PageFileWriter::create(
        &path,
        &records::ANCHORS,
        RESOLVE_BLOCK_BYTES,
        PAGE_FILE_LEVEL,
    )?;
    for &(dst, src, kind, text) in &ANCHORS {
        let mut p = Vec::new();
        records::encode_anchor(src, kind, text, &mut p);
        w.push(dst, &p)?;
    }
    w.finish(&json!({"anchors": ANCHORS.len()}))?;
    Ok(path)
}

/// The URL table's pairs: (fingerprint, docID), sorted.
fn url_pairs() -> Vec<(u64, u64)> {
    let mut pairs: Vec<(u64, u64)> = FINGERPRINTS.iter().copied().zip(0..).collect();
    pairs.sort();
    pairs
}

fn write_urls(dir: &Path) -> webmill::Result<PathBuf> {
    let path = dir.join("urls.wm");
    let mut w = UrlTableWriter::create(&path)?;
    for (fp, doc) in url_pairs() {
        w.push(fp, doc)?;
    }
    w.finish()?;
    Ok(path)
}

/// Opens golden page file `name` of `kind`, checks its parameters, metadata and
/// block index (first key, records), and decodes every record with `decode`.
fn read_golden_page_file<T>(
    name: &str,
    kind: &'static FileKind,
    meta: serde_json::Value,
    index: &[(u64, u64)],
    mut decode: impl FnMut(&mut &[u8]) -> webmill::Result<T>,
) -> Vec<(u64, T)> {
    let f = PageFile::open(golden_path(name), kind).unwrap_or_else(|e| panic!("{e}"));
    let c = f.container();
    assert_eq!(c.params(), &json!({}), "{name}");
    assert_eq!(c.meta(), &meta, "{name}");
    let blocks: Vec<(u64, u64)> = c
        .blocks()
        .iter()
        .map(|b| {
            let key: [u8; 8] = b.key.as_slice().try_into().expect("8-byte key");
            (u64::from_be_bytes(key), b.records)
        })
        .collect();
    assert_eq!(blocks, index, "{name}: (first key, records) of each block");
    let mut out = Vec::new();
    f.for_each(|key, input| {
        out.push((key, decode(input)?));
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    out
}

#[test]
fn pages_golden_decodes() {
    let got = read_golden_page_file(
        "pages.wm",
        &records::PAGES,
        json!({"pages": 4}),
        &[(0, 2), (2, 2)],
        PageRec::decode,
    );
    let want: Vec<(u64, PageRec)> = (0..).zip(CRAWL.iter().map(page_rec)).collect();
    assert_eq!(got, want);
}

#[test]
fn text_golden_decodes() {
    let got = read_golden_page_file(
        "text.wm",
        &records::TEXT,
        json!({"pages": 4}),
        &[(0, 1), (2, 2)],
        |input| {
            let (words, flags) = records::decode_text(input)?;
            Ok((words.to_string(), flags.to_vec()))
        },
    );
    let want: Vec<(u64, (String, Vec<u8>))> = (0..)
        .zip(&CRAWL)
        .filter_map(|(page, c)| c.text.map(|(w, f)| (page, (w.to_string(), f.to_vec()))))
        .collect();
    assert_eq!(got, want);
    // The flag bytes mean what formats/pagefiles.md says (bits 0-2 font size,
    // 3 capitalized, 4 bold, 5 anchor), with the extractor's own constants.
    let meaning = |f: u8| {
        (
            flag::size(f),
            f & flag::CAPITALIZED != 0,
            f & flag::BOLD != 0,
            f & flag::ANCHOR != 0,
        )
    };
    let page0: Vec<_> = got[0].1 .1.iter().map(|&f| meaning(f)).collect();
    assert_eq!(
        page0,
        [
            (6, true, false, false),  // café, in <h1>
            (1, true, false, false),  // crème
            (1, false, true, false),  // brûlée, in <b>
            (0, false, false, false), // 5, in <small>
            (1, true, false, true),   // full, in <a>
            (1, false, false, true),  // menu
            (1, false, false, true),  // 日本語 (no case)
            (1, false, false, true),  // home
            (1, false, false, true),  // mail
        ]
    );
}

#[test]
fn repository_golden_decodes() {
    let got = read_golden_page_file(
        "repository.wm",
        &records::REPO,
        json!({"pages": 4}),
        &[(0, 2), (2, 2)],
        |input| {
            let (ct, body) = records::decode_repo(input)?;
            Ok((ct.to_string(), body.to_vec()))
        },
    );
    let want: Vec<(u64, (String, Vec<u8>))> = (0..)
        .zip(&CRAWL)
        .map(|(page, c)| {
            (
                page,
                (c.content_type.to_string(), c.body.as_bytes().to_vec()),
            )
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn links_golden_decodes() {
    let got = read_golden_page_file(
        "links.wm",
        &records::LINKS,
        json!({"pages": 4}),
        &[(0, 4), (2, 2)],
        |input| {
            let (kind, target, anchor) = records::decode_link(input)?;
            Ok((kind, target.to_string(), anchor.to_string()))
        },
    );
    let want: Vec<(u64, (LinkKind, String, String))> = (0..)
        .zip(&CRAWL)
        .flat_map(|(page, c)| {
            c.links
                .iter()
                .map(move |&(k, t, a)| (page, (k, t.to_string(), a.to_string())))
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn pagedoc_golden_decodes() {
    let got = read_golden_page_file(
        "pagedoc.wm",
        &records::PAGEDOC,
        json!({"pages": 4}),
        &[(0, 4)],
        records::decode_pagedoc,
    );
    let want: Vec<(u64, (u64, bool))> = (0..).zip(PAGEDOC).collect();
    assert_eq!(got, want);
    // A doc's own page is the one its doc-table entry names.
    for (page, (doc, canonical)) in got {
        assert_eq!(
            CRAWL_DOCS[doc as usize].1 == Some(page),
            canonical,
            "page {page}"
        );
    }
}

#[test]
fn anchors_golden_decodes() {
    let got = read_golden_page_file(
        "anchors.wm",
        &records::ANCHORS,
        json!({"anchors": 4}),
        &[(1, 4)],
        |input| {
            let (src, kind, text) = records::decode_anchor(input)?;
            Ok((src, kind, text.to_string()))
        },
    );
    let want: Vec<(u64, (u64, LinkKind, String))> = ANCHORS
        .iter()
        .map(|&(dst, src, k, t)| (dst, (src, k, t.to_string())))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn urls_golden_decodes() {
    for ((url, _, _), fp) in CRAWL_DOCS.iter().zip(FINGERPRINTS) {
        assert_eq!(webmill::url::fingerprint(url), fp, "{url}");
        assert_eq!(xxhash_rust::xxh3::xxh3_64(url.as_bytes()), fp, "{url}");
    }
    let t = UrlTable::open(golden_path("urls.wm")).expect("open urls.wm");
    t.verify().expect("verify urls.wm");
    let c = t.container();
    assert_eq!(c.params(), &json!({"hash": "xxh3-64"}));
    assert_eq!(c.meta(), &json!({"urls": 4}));
    let pairs = url_pairs();
    let index: Vec<(&[u8], u64, u64, u64)> = c
        .blocks()
        .iter()
        .map(|b| (b.key.as_slice(), b.records, b.stored, b.raw))
        .collect();
    assert_eq!(index, [(&pairs[0].0.to_be_bytes()[..], 4, 64, 64)]);
    let mut got = Vec::new();
    t.for_each(|fp, doc| {
        got.push((fp, doc));
        Ok(())
    })
    .expect("pairs");
    assert_eq!(got, pairs);
    for (doc, fp) in (0..).zip(FINGERPRINTS) {
        assert_eq!(t.lookup(fp).expect("lookup"), [doc]);
    }
    assert!(t.lookup(0x2d06_8005_38d3_94c2).expect("lookup").is_empty());
}

/// The crawl as a plain WARC file: one `response` record per capture.
fn crawl_warc() -> Vec<u8> {
    let mut out = Vec::new();
    for (i, c) in CRAWL.iter().enumerate() {
        let mut http = format!("HTTP/1.1 {} {}\r\n", c.status, c.reason);
        if !c.content_type.is_empty() {
            http += &format!("Content-Type: {}\r\n", c.content_type);
        }
        if let Some(l) = c.location {
            http += &format!("Location: {l}\r\n");
        }
        http += &format!("Content-Length: {}\r\n\r\n{}", c.body.len(), c.body);
        out.extend_from_slice(
            format!(
                "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {}\r\nWARC-Date: {}\r\n\
                 WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-00000000000{i}>\r\n\
                 Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
                c.uri,
                c.date,
                http.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(http.as_bytes());
        out.extend_from_slice(b"\r\n\r\n");
    }
    out
}

/// Options that ingest the golden crawl, written to `dir/crawl.warc`, as
/// the golden files were made (segments of `SEGMENT_CAPTURES` captures).
fn crawl_options(dir: &Path) -> webmill::Result<IngestOptions> {
    let warc = dir.join("crawl.warc");
    fs::write(&warc, crawl_warc()).map_err(|e| webmill::Error::io(&warc, e))?;
    Ok(IngestOptions {
        inputs: vec![InputSpec::Warc(warc)],
        segment_records: SEGMENT_CAPTURES as u64,
        ..IngestOptions::default()
    })
}

/// A job `dir/job` holding the golden crawl ingested, and its settings.
fn ingested_crawl(dir: &Path) -> webmill::Result<(Job, Settings)> {
    let opts = crawl_options(dir)?;
    let mut job = Job::open(dir.join("job"), true)?;
    let s = Settings::new(64 << 20);
    ingest(&mut job, &opts, &s)?;
    Ok((job, s))
}

/// (e) The golden files of the ingest and resolve kinds are exactly what
/// `webmill ingest` and `resolve` write for the crawl: the records hard-coded
/// above (words and flags, normalized URLs, docIDs, canonical flags, anchors)
/// are the pipeline's, not hand-made.
#[test]
fn ingest_and_resolve_reproduce_the_golden_files() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (mut job, s) = ingested_crawl(tmp.path()).unwrap_or_else(|e| panic!("ingest: {e}"));
    resolve(&mut job, &s).unwrap_or_else(|e| panic!("resolve: {e}"));
    for name in [
        "pages.wm",
        "text.wm",
        "repository.wm",
        "links.wm",
        "pagedoc.wm",
        "anchors.wm",
        "urls.wm",
    ] {
        let made = fs::read(job.dir().join(name)).expect("read the job's file");
        let golden = fs::read(golden_path(name)).expect("read the golden file");
        assert!(
            made == golden,
            "{name}: the pipeline writes {} bytes, the golden file has {} (first difference \
             at offset {})",
            made.len(),
            golden.len(),
            made.iter()
                .zip(&golden)
                .position(|(a, b)| a != b)
                .unwrap_or(made.len().min(golden.len()))
        );
    }
    assert_crawl_docs(&job);
    let edges = EdgeFile::open(job.file(JobFile::Edges).unwrap()).expect("open edges.wm");
    let mut arcs = Vec::new();
    for list in edges.lists() {
        let (node, dsts) = list.expect("list");
        arcs.extend(dsts.into_iter().map(|d| (node, d)));
    }
    assert_eq!(arcs, CRAWL_ARCS);
}

// ---------------------------------------------------------------------------
// sketches.wm: what `webmill dedup --alg minhash --verify exact` keeps of the
// golden crawl's two docs with words (doc 1, the Japanese page: 2 words, one
// short shingle; doc 2, the French page's first capture: 9 words, 6
// shingles): per doc its host, its 200 min-values and its 4-shingle set.

fn write_sketches(dir: &Path) -> webmill::Result<PathBuf> {
    use webmill::dedup::stage::{dedup, DedupOptions, Verify};
    use webmill::dedup::Alg;
    use webmill::rank::{pagerank, PageRankOptions};
    let work = dir.join("sketches-crawl");
    fs::create_dir_all(&work).map_err(|e| webmill::Error::io(&work, e))?;
    let (mut job, s) = ingested_crawl(&work)?;
    resolve(&mut job, &s)?;
    pagerank(&mut job, &PageRankOptions::default(), &s)?;
    let opts = DedupOptions {
        algs: vec![Alg::MinHash],
        verify: Verify::Exact,
        ..DedupOptions::default()
    };
    dedup(&mut job, &opts, &s)?;
    let path = dir.join("sketches.wm");
    fs::copy(job.file(JobFile::Sketches(Alg::MinHash)).unwrap(), &path)
        .map_err(|e| webmill::Error::io(&path, e))?;
    Ok(path)
}

#[test]
fn sketches_golden_decodes() {
    use webmill::dedup::files::{for_each_sketch, SKETCHES};
    use webmill::dedup::shingle::{shingle_set, Scratch};
    use webmill::dedup::MinHasher;
    let path = golden_path("sketches.wm");
    let f = PageFile::open(&path, &SKETCHES).expect("open sketches.wm");
    assert_eq!(
        f.container().params(),
        &json!({"algorithm": "minhash", "shingle_set": 4})
    );
    assert_eq!(
        f.container().meta(),
        &json!({"algorithm": "minhash", "docs": 2})
    );
    // The docs with words, from the crawl (canonical captures only).
    let docs = crawl_docs();
    let expected: Vec<(u64, u64, &str)> = CRAWL_DOCS
        .iter()
        .enumerate()
        .filter_map(|(id, &(_, page, host))| {
            let (words, _) = CRAWL[page? as usize].text?;
            Some((id as u64, host, words))
        })
        .collect();
    assert_eq!(expected.len(), 2);
    let minhasher = MinHasher::new();
    let mut got = Vec::new();
    for_each_sketch(&path, |r| {
        got.push((
            r.doc,
            r.host,
            r.sketch.to_vec(),
            r.shingle_set().expect("a set"),
        ));
        Ok(())
    })
    .expect("read sketches.wm");
    assert_eq!(got.len(), expected.len());
    for ((doc, host, sketch, set), &(want_doc, want_host, words)) in got.iter().zip(&expected) {
        assert_eq!((*doc, *host), (want_doc, want_host));
        assert_eq!(docs[*doc as usize].host, *host);
        let words: Vec<&str> = words.split(' ').collect();
        let mh = minhasher
            .sketch(&words, &mut Scratch::new())
            .expect("a sketch");
        let le: Vec<u8> = mh.0.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(sketch, &le, "doc {doc}: min-values");
        assert_eq!(
            set,
            &shingle_set(&words, 4).unwrap(),
            "doc {doc}: shingle set"
        );
    }
    assert_eq!(got[0].3.len(), 1, "a 2-word page has one (short) shingle");
    assert_eq!(got[1].3.len(), 6, "9 words: 6 4-shingles");
}

// ---------------------------------------------------------------------------
// The index of the golden crawl (stage `index`, one barrel): the forward
// barrel, the lexicon and the inverted barrel, made by the
// real pipeline from the golden ingest and resolve files above. Their
// records are checked against the dumps below, which `formats/barrel.md`,
// `formats/lexicon.md` and `formats/forward.md` walk through.

/// The golden crawl's files as the index reads them; its doc table (what
/// `resolve` makes of the crawl, not the `docs.wm` golden file) is written
/// into `dir`.
fn golden_sources(dir: &Path) -> webmill::Result<webmill::index::Sources> {
    let docs = dir.join("crawl-docs.wm");
    let mut w = DocWriter::create(&docs, "resolve")?;
    for d in crawl_docs() {
        w.push(&d)?;
    }
    w.finish()?;
    Ok(webmill::index::Sources {
        text: golden_path("text.wm"),
        pagedoc: golden_path("pagedoc.wm"),
        docs,
        anchors: golden_path("anchors.wm"),
        docs_range: None,
    })
}

fn write_forward_barrel(dir: &Path) -> webmill::Result<PathBuf> {
    use webmill::index::{indexer, lexicon, Stem};
    use webmill::sort::{ExternalSorter, SortConfig};
    let tmp = dir.join("forward-build");
    let sources = golden_sources(dir)?;
    let reporter = webmill::progress::silent();
    let mut vocab = ExternalSorter::new(
        SortConfig::new(tmp.join("vocab"), 1 << 20),
        lexicon::vocabulary_combine(),
    )?;
    let (_, carried) = indexer::count_vocabulary(
        &sources,
        Stem::None,
        &mut vocab,
        1 << 20,
        1 << 20,
        &reporter,
        None,
    )?;
    let fst = tmp.join("terms.fst");
    let sorts = ["by-hits", "by-bytes"].map(|n| SortConfig::new(tmp.join(n), 512 << 10));
    let plan = lexicon::plan_words(vocab.finish()?, 1, sorts, 256 << 10, &fst)?;
    let ids = indexer::WordIds::new(lexicon::open_fst_file(&fst)?, 1 << 20);
    let mut lengths = ExternalSorter::new(
        SortConfig::new(tmp.join("lengths"), 1 << 20),
        webmill::sort::Combine::sum(),
    )?;
    indexer::write_forward(
        &sources,
        Stem::None,
        &ids,
        &plan,
        &tmp,
        256 << 10,
        &reporter,
        &mut lengths,
        carried,
    )?;
    let path = dir.join("forward.wm");
    fs::copy(indexer::forward_path(&tmp, 0), &path).map_err(|e| webmill::Error::io(&path, e))?;
    Ok(path)
}

/// Builds the golden crawl's index (one barrel) in `dir` and copies `file` of
/// it to `name`.
fn write_index_file(dir: &Path, file: JobFile, name: &str) -> webmill::Result<PathBuf> {
    use webmill::index::{Index, IndexOptions};
    use webmill::job::{Stage, StageContext, StagePaths};
    let out = dir.join(format!("index-of-{name}"));
    let sources = golden_sources(dir)?;
    let inputs = [
        (JobFile::Text, sources.text),
        (JobFile::PageDoc, sources.pagedoc),
        (JobFile::Docs, sources.docs),
        (JobFile::Anchors, sources.anchors),
    ];
    let stage = Index {
        opts: IndexOptions {
            barrels: 1,
            ..Default::default()
        },
    };
    let paths = StagePaths {
        inputs: inputs.into_iter().collect(),
        outputs: out.clone(),
        tmp: dir.join(format!("tmp-{name}")),
    };
    let mut cx = StageContext::detached(&stage, &Settings::new(1 << 20), paths)?;
    stage.run(&mut cx)?;
    let path = dir.join(name);
    fs::copy(out.join(file.name()), &path).map_err(|e| webmill::Error::io(&path, e))?;
    Ok(path)
}

fn write_field_lengths(dir: &Path) -> webmill::Result<PathBuf> {
    write_index_file(dir, JobFile::FieldLengths, "fieldlens.wm")
}

fn write_titles(dir: &Path) -> webmill::Result<PathBuf> {
    write_index_file(dir, JobFile::AnchorTitles, "titles.wm")
}

/// The golden crawl's one page never crawled, titled by the links to it.
#[test]
fn titles_golden_dumps() {
    assert_eq!(dump_golden("titles.wm"), "# docid\ttitle\n3\tFull menu\n");
}

/// A sharded index's manifest: 10 documents in two shards of 4 and 6.
fn write_shards(dir: &Path) -> webmill::Result<PathBuf> {
    use webmill::index::shards::{write_manifest, ShardEntry, ShardParams};
    let path = dir.join("shards.wm");
    let params = ShardParams {
        docs: 10,
        barrels: 2,
        stem: webmill::index::Stem::English,
    };
    let entries = [
        ShardEntry {
            dir: "shard-0000".into(),
            first: 0,
            end: 4,
        },
        ShardEntry {
            dir: "shard-0001".into(),
            first: 4,
            end: 10,
        },
    ];
    write_manifest(&path, &params, &entries)?;
    Ok(path)
}

#[test]
fn shards_golden_dumps() {
    assert_eq!(
        dump_golden("shards.wm"),
        "# shard\tfirst\tend\tdir\n0\t0\t4\tshard-0000\n1\t4\t10\tshard-0001\n"
    );
}

fn write_lexicon(dir: &Path) -> webmill::Result<PathBuf> {
    write_index_file(dir, JobFile::Lexicon, "lexicon.wm")
}

fn write_full_barrel(dir: &Path) -> webmill::Result<PathBuf> {
    write_index_file(dir, JobFile::FullBarrel(0), "barrel-full.wm")
}

fn dump_golden(name: &str) -> String {
    let mut out = Vec::new();
    webmill::kinds::dump_file(&golden_path(name), &mut out).unwrap_or_else(|e| panic!("{e}"));
    String::from_utf8(out).expect("UTF-8 dump")
}

/// The lexicon of the golden crawl: wordIDs by descending hits (ties in byte
/// order), and each word's counts and doclist locations.
const LEXICON_DUMP: &str = "\
# word\twordid\tbarrel\tdocs\tshort_docs\thits\tfull_block\tfull_entry\n\
5\t6\t0\t1\t0\t1\t0\t6\n\
brûlée\t7\t0\t1\t0\t1\t0\t7\n\
café\t3\t0\t1\t1\t2\t0\t3\n\
com\t8\t0\t1\t0\t1\t0\t8\n\
crème\t9\t0\t1\t0\t1\t0\t9\n\
example\t0\t0\t4\t1\t5\t0\t0\n\
full\t4\t0\t2\t1\t2\t0\t4\n\
home\t10\t0\t1\t0\t1\t0\t10\n\
jp\t11\t0\t1\t0\t1\t0\t11\n\
mail\t12\t0\t1\t0\t1\t0\t12\n\
menu\t1\t0\t2\t2\t5\t0\t1\n\
old\t13\t0\t1\t0\t1\t0\t13\n\
org\t5\t0\t2\t0\t2\t0\t5\n\
r8jz45g\t14\t0\t1\t0\t1\t0\t14\n\
xn\t15\t0\t1\t0\t1\t0\t15\n\
日本語\t2\t0\t2\t1\t3\t0\t2\n\
日本語のページ\t16\t0\t1\t0\t1\t0\t16\n\
";
/// The full barrel: every posting with its hits.
const FULL_DUMP: &str = "\
# wordid\tword\tdocid\thits\n\
0\texample\t0\turl0\n\
0\texample\t1\tP1\n\
0\texample\t2\turl0 ANCHOR0#9\n\
0\texample\t3\turl0\n\
1\tmenu\t2\tp5 title1\n\
1\tmenu\t3\turl2 ANCHOR0#3 anchor1#3\n\
2\t日本語\t1\ttitle0 anchor0#3\n\
2\t日本語\t2\tp6\n\
3\tcafé\t2\tP0f6 TITLE0\n\
4\tfull\t2\tP4\n\
4\tfull\t3\tANCHOR0#3\n\
5\torg\t2\turl1\n\
5\torg\t3\turl1\n\
6\t5\t2\tp3f0\n\
7\tbrûlée\t2\tp2f2\n\
8\tcom\t0\turl1\n\
9\tcrème\t2\tP1\n\
10\thome\t2\tp7\n\
11\tjp\t1\turl2\n\
12\tmail\t2\tp8\n\
13\told\t0\turl2\n\
14\tr8jz45g\t1\turl1\n\
15\txn\t1\turl0\n\
16\t日本語のページ\t1\tp0\n\
";
/// The short doclists: the postings with a title or anchor hit (read from
/// the full barrel by its count columns; shown as the full barrel's dump).
const SHORT_DUMP: &str = "\
# wordid\tword\tdocid\thits\n\
0\texample\t2\turl0 ANCHOR0#9\n\
1\tmenu\t2\tp5 title1\n\
1\tmenu\t3\turl2 ANCHOR0#3 anchor1#3\n\
2\t日本語\t1\ttitle0 anchor0#3\n\
3\tcafé\t2\tP0f6 TITLE0\n\
4\tfull\t3\tANCHOR0#3\n\
";
/// The forward barrel: per document and part, its words and hits.
const FORWARD_DUMP: &str = "\
# docid\tpart\twordid\thits\n\
2\ttext\t1\tp5\n\
2\ttext\t2\tp6\n\
2\ttext\t3\tP0f6\n\
2\ttext\t4\tP4\n\
2\ttext\t6\tp3f0\n\
2\ttext\t7\tp2f2\n\
2\ttext\t9\tP1\n\
2\ttext\t10\tp7\n\
2\ttext\t12\tp8\n\
1\ttext\t0\tP1\n\
1\ttext\t16\tp0\n\
0\tfancy\t0\turl0\n\
0\tfancy\t8\turl1\n\
0\tfancy\t13\turl2\n\
1\tfancy\t2\ttitle0 anchor0#3\n\
1\tfancy\t11\turl2\n\
1\tfancy\t14\turl1\n\
1\tfancy\t15\turl0\n\
2\tfancy\t0\turl0 ANCHOR0#9\n\
2\tfancy\t1\ttitle1\n\
2\tfancy\t3\tTITLE0\n\
2\tfancy\t5\turl1\n\
3\tfancy\t0\turl0\n\
3\tfancy\t1\turl2 anchor1#3 ANCHOR0#3\n\
3\tfancy\t4\tANCHOR0#3\n\
3\tfancy\t5\turl1\n\
";

#[test]
fn index_goldens_decode() {
    for (name, want) in [
        ("lexicon.wm", LEXICON_DUMP),
        ("barrel-full.wm", FULL_DUMP),
        ("forward.wm", FORWARD_DUMP),
    ] {
        let got = dump_golden(name);
        if std::env::var("WEBMILL_PRINT_GOLDEN").is_ok() {
            println!("== {name}\n{got}");
            continue;
        }
        assert_eq!(got, want, "{name}");
    }
    // Reading through the lexicon and a cursor, as a searcher does.
    let lex = webmill::index::Lexicon::open(golden_path("lexicon.wm")).expect("lexicon");
    let barrel = webmill::index::Barrel::open(golden_path("barrel-full.wm")).expect("barrel");
    let id = lex.lookup("menu").expect("menu");
    let t = lex.entry(id).expect("entry");
    let mut c = barrel.doclist(id, t.full, t.docs).expect("cursor");
    assert_eq!(c.seek(3).expect("seek"), Some(3));
    let mut hits = Vec::new();
    c.hits(&mut hits).expect("hits");
    assert!(hits.iter().any(|h| h.is_title_or_anchor()));
    // The short doclists, word by word, are the lines of SHORT_DUMP.
    let mut short = String::from("# wordid\tword\tdocid\thits\n");
    for id in 0..lex.words() {
        let t = lex.entry(id).expect("entry");
        let mut c = barrel
            .short_doclist(id, t.full, t.short_docs)
            .expect("cursor");
        let mut n = 0;
        while let Some(d) = c.next().expect("next") {
            n += 1;
            let line = FULL_DUMP
                .lines()
                .find(|l| {
                    l.starts_with(&format!("{id}\t"))
                        && l.split('\t').nth(2) == Some(&d.to_string())
                })
                .expect("a posting of the full barrel");
            short.push_str(line);
            short.push('\n');
        }
        assert_eq!(n, t.short_docs, "word {id}");
    }
    assert_eq!(short, SHORT_DUMP);
}

// ---------------------------------------------------------------------------
// pairs.wm and clusters.wm: what a `dedup-ALG` stage writes, for pairs among
// docs 0, 1, 3 and 2, 200 (a gap of two varint bytes), and the two clusters
// they make, each keeping one member (as the highest-ranked one would be).

/// (a, b, similarity), sorted by (a, b).
const PAIRS: [(u64, u64, f32); 4] = [(0, 1, 1.0), (0, 3, 0.75), (1, 3, 0.8125), (2, 200, 0.5)];
/// The docs kept: one per cluster.
const KEPT: [u64; 2] = [1, 200];

fn write_pairs(dir: &Path) -> webmill::Result<PathBuf> {
    use webmill::dedup::files::PairWriter;
    let path = dir.join("pairs.wm");
    let mut w = PairWriter::create(&path)?;
    for (a, b, sim) in PAIRS {
        w.push(a, b, sim)?;
    }
    w.finish("minhash")?;
    Ok(path)
}

/// The clusters of [`PAIRS`], computed here by a plain search over the pairs
/// (not the stage's union-find): (cluster id, member, keep) in file order.
fn pair_clusters() -> Vec<(u64, u64, bool)> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut next: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for (a, b, _) in PAIRS {
        next.entry(a).or_default().insert(b);
        next.entry(b).or_default().insert(a);
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for &start in next.keys() {
        if !seen.insert(start) {
            continue;
        }
        let mut members = BTreeSet::from([start]);
        let mut todo = vec![start];
        while let Some(d) = todo.pop() {
            for &e in &next[&d] {
                if seen.insert(e) {
                    members.insert(e);
                    todo.push(e);
                }
            }
        }
        out.extend(members.iter().map(|&m| (start, m, KEPT.contains(&m))));
    }
    out
}

fn write_clusters(dir: &Path) -> webmill::Result<PathBuf> {
    use webmill::dedup::files::ClusterWriter;
    let path = dir.join("clusters.wm");
    let mut w = ClusterWriter::create(&path)?;
    for (c, d, keep) in pair_clusters() {
        w.push(c, d, keep)?;
    }
    w.finish("minhash")?;
    Ok(path)
}

#[test]
fn pairs_golden_decodes() {
    use webmill::dedup::files::{for_each_pair, PAIRS as KIND};
    let path = golden_path("pairs.wm");
    let f = PageFile::open(&path, &KIND).expect("open pairs.wm");
    assert_eq!(f.container().params(), &json!({}));
    assert_eq!(
        f.container().meta(),
        &json!({"algorithm": "minhash", "pairs": 4})
    );
    let mut got = Vec::new();
    for_each_pair(&path, |a, b, sim| {
        got.push((a, b, sim));
        Ok(())
    })
    .expect("read pairs.wm");
    assert_eq!(got, PAIRS);
    // The last record by hand: key 2 (its block's first key is 0), then
    // varint 198 and 0.5 as f32 LE.
    let mut raw = Vec::new();
    f.for_each(|key, input| {
        if key == 2 {
            raw = input.to_vec();
            *input = &[];
        } else {
            let _ = webmill::container::pagefile::get_u64(input, "gap");
            *input = &input[4..];
        }
        Ok(())
    })
    .expect("read the records");
    assert_eq!(raw, [0xc6, 0x01, 0x00, 0x00, 0x00, 0x3f]);
}

#[test]
fn clusters_golden_decodes() {
    use webmill::dedup::files::{for_each_cluster_member, CLUSTERS};
    let path = golden_path("clusters.wm");
    let f = PageFile::open(&path, &CLUSTERS).expect("open clusters.wm");
    assert_eq!(
        f.container().meta(),
        &json!({"algorithm": "minhash", "clusters": 2, "docs": 5})
    );
    let mut got = Vec::new();
    for_each_cluster_member(&path, |c, d, keep| {
        got.push((c, d, keep));
        Ok(())
    })
    .expect("read clusters.wm");
    assert_eq!(
        got,
        [
            (0, 0, false),
            (0, 1, true),
            (0, 3, false),
            (2, 2, false),
            (2, 200, true)
        ]
    );
    assert_eq!(got, pair_clusters());
}

// ---------------------------------------------------------------------------
// lexpart.wm: the lexicon part the index stage keeps for a sorted barrel,
// here barrel 0 of the golden index (all 17 words): the lexicon's entries
// as fixed 24-byte records, in wordID order.

fn write_lexpart(dir: &Path) -> webmill::Result<PathBuf> {
    use webmill::index::sorter::PartWriter;
    let lex = webmill::index::Lexicon::open(golden_path("lexicon.wm"))?;
    let path = dir.join("lexpart.wm");
    let mut w = PartWriter::create(&path, 0, 0, lex.words())?;
    for id in 0..lex.words() {
        w.push(&lex.entry(id)?)?;
    }
    w.finish()?;
    Ok(path)
}

#[test]
fn lexpart_golden_decodes() {
    use webmill::index::sorter::for_each_part_block;
    use webmill::index::TermInfo;
    let lex = webmill::index::Lexicon::open(golden_path("lexicon.wm")).expect("lexicon");
    let path = golden_path("lexpart.wm");
    let c = Container::open(&path).expect("open lexpart.wm");
    assert_eq!(
        c.params(),
        &json!({"barrel": 0, "first_word": 0, "end_word": 17})
    );
    let mut got = Vec::new();
    for_each_part_block(&path, |raw| {
        got.extend(
            raw.chunks_exact(webmill::index::lexicon::ENTRY_BYTES)
                .map(TermInfo::decode),
        );
        Ok(())
    })
    .expect("read lexpart.wm");
    let want: Vec<TermInfo> = (0..lex.words()).map(|w| lex.entry(w).unwrap()).collect();
    assert_eq!(got, want);
    // The dump's rows are the lexicon dump's entry columns, by wordID.
    let mut rows: Vec<(u32, String)> = LEXICON_DUMP
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[1].parse().unwrap(), f[3..].join("\t"))
        })
        .collect();
    rows.sort();
    let want: String = rows.iter().map(|(w, r)| format!("{w}\t{r}\n")).collect();
    let got = dump_golden("lexpart.wm");
    assert_eq!(
        got.lines().skip(1).collect::<Vec<_>>(),
        want.lines().collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------------------
// rankpart.wm: the first part blocked PageRank splits the golden edge file
// (edges.wm's 6 nodes and 8 arcs) into with destination blocks of 4 nodes:
// the arcs into nodes 0..4, in runs by source.

/// Destination block size of the golden part.
const RANKPART_BLOCK: u64 = 4;

fn write_rankpart(dir: &Path) -> webmill::Result<PathBuf> {
    let edges = write_edges(dir)?;
    let parts = [dir.join("rankpart.wm"), dir.join("rankpart-1.wm")];
    webmill::rank::blocked::partition(
        &edges,
        RANKPART_BLOCK,
        &parts,
        1 << 20,
        &Settings::new(1 << 20),
    )?;
    Ok(parts[0].clone())
}

#[test]
fn rankpart_golden_decodes() {
    let path = golden_path("rankpart.wm");
    let c = Container::open(&path).expect("open rankpart.wm");
    assert_eq!(c.params(), &json!({"block": 0, "first": 0, "nodes": 4}));
    // One raw chunk keyed by its first source, 0; four runs.
    assert_eq!(c.blocks().len(), 1);
    assert_eq!(c.blocks()[0].key, 0u64.to_be_bytes());
    let raw = c.read_block(0).expect("chunk");
    let le = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    // (gap, count, destinations): 0 → 1, 2; 1 → 0; 3 → 2; 5 → 0.
    assert_eq!(raw, le(&[0, 2, 1, 2, 1, 1, 0, 2, 1, 2, 2, 1, 0]));
    // The dump lists the arcs into the block, from the edge lists.
    let want: String = EDGE_LISTS
        .iter()
        .flat_map(|&(s, d)| {
            d.iter()
                .filter(|&&d| d < RANKPART_BLOCK)
                .map(move |d| (s, *d))
        })
        .map(|(s, d)| format!("{s}\t{d}\n"))
        .collect();
    assert_eq!(dump_golden("rankpart.wm"), format!("# src\tdst\n{want}"));
}

// ---------------------------------------------------------------------------
// Properties shared by all golden files.

/// (b) Today's writers reproduce the golden files byte for byte (or, with
/// `WEBMILL_UPDATE_GOLDEN=1`, rewrite them).
#[test]
fn writers_reproduce_golden_bytes() {
    let update = std::env::var("WEBMILL_UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let tmp = tempfile::tempdir().expect("temp dir");
    for g in GOLDEN {
        let made = (g.write)(tmp.path()).unwrap_or_else(|e| panic!("writing {}: {e}", g.name));
        let new = fs::read(&made).expect("read the new file");
        let golden = golden_path(g.name);
        if update {
            // Stage next to the target and rename, so that tests reading the
            // golden files concurrently see the old or the new file, never half.
            fs::create_dir_all(golden_dir()).expect("create formats/golden");
            let staged = golden_dir().join(format!(".{}.new", g.name));
            fs::write(&staged, &new).expect("write staged golden file");
            fs::rename(&staged, &golden).expect("rename golden file");
            println!("updated {} ({} bytes)", golden.display(), new.len());
            continue;
        }
        let old = fs::read(&golden).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run with WEBMILL_UPDATE_GOLDEN=1 to create it)",
                golden.display()
            )
        });
        if old != new {
            let at = old.iter().zip(&new).position(|(a, b)| a != b);
            panic!(
                "{}: today's writer makes different bytes ({} bytes, golden {} bytes, first \
                 difference at offset {}). If the format change is deliberate, bump the kind's \
                 version, update formats/*.md and rerun with WEBMILL_UPDATE_GOLDEN=1",
                golden.display(),
                new.len(),
                old.len(),
                at.unwrap_or(old.len().min(new.len()))
            );
        }
    }
}

/// (c) The full verifier accepts every golden file of a kind webmill knows;
/// the container's own golden file (kind `golden`, which no stage writes) is
/// checked by the container layer and refused by the kind registry, naming
/// its kind.
#[test]
fn verify_file_accepts_golden_files() {
    for g in GOLDEN {
        let path = golden_path(g.name);
        if g.name == "container.wm" {
            let c = Container::open(&path).expect("open container.wm");
            c.verify(|_, _, _| Ok(())).expect("verify container.wm");
            let err = verify_file(&path).map(drop).unwrap_err();
            assert!(err.to_string().contains("\"golden\""), "{err}");
            continue;
        }
        let c = verify_file(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(c.records() > 0, "{}", g.name);
    }
}

/// (d) Any single changed byte, anywhere in a golden file, is detected by the
/// container layer alone and by the full verifier, and the error names the file.
#[test]
fn every_changed_byte_is_detected() {
    let tmp = tempfile::tempdir().expect("temp dir");
    for g in GOLDEN {
        let good = fs::read(golden_path(g.name)).expect("read golden file");
        let path = tmp.path().join(g.name);
        let name = path.display().to_string();
        for at in 0..good.len() {
            // Flip the lowest bit, then every bit, of the byte at `at`.
            for mask in [0x01u8, 0xff] {
                let mut bad = good.clone();
                bad[at] ^= mask;
                fs::write(&path, &bad).expect("write mutated copy");
                let container = Container::open(&path).and_then(|c| c.verify(|_, _, _| Ok(())));
                let full = verify_file(&path).map(drop);
                for (check, result) in [("Container::verify", container), ("verify_file", full)] {
                    match result {
                        Ok(()) => panic!("{}: {check} accepts byte {at} xor {mask:#04x}", g.name),
                        Err(e) => assert!(
                            e.to_string().contains(&name),
                            "{}: byte {at} xor {mask:#04x}: {check} error does not name the \
                             file: {e}",
                            g.name
                        ),
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The registry, the job files, the specs and the golden files, tied.

/// A job file's name as its spec writes it: the algorithm as `ALG`, the
/// barrel number as `BBB`, the stage as `STAGE`, without the `index/` folder.
fn spec_name(f: JobFile) -> String {
    let name = f.name();
    let name = name.rsplit('/').next().unwrap_or(&name).to_string();
    match f {
        JobFile::Sketches(a) | JobFile::Pairs(a) | JobFile::Clusters(a) => {
            name.replace(a.name(), "ALG")
        }
        JobFile::FullBarrel(b) => name.replace(&format!("{b:03}"), "BBB"),
        JobFile::Skips(s) => name.replace(&s.name(), "STAGE"),
        _ => name,
    }
}

/// Every container a job can hold resolves to a registered kind, and every
/// registered kind has: the job files that resolve to it (or it is a stage's
/// temporary file, or a file a job directory holds outside its manifest —
/// a sharded index's manifest —, its description says so), a row in `formats/README.md`
/// naming it with its current version, a spec page (that row's link) that
/// names it and its job files, and a golden file of its kind and version in
/// [`GOLDEN`] (so the tests above check it), linked from that row. A kind
/// added without one of these fails here, saying which.
#[test]
fn every_kind_has_its_job_files_spec_and_golden_file() {
    use webmill::kinds::{self, KINDS};
    let files: Vec<JobFile> = JobFile::all()
        .into_iter()
        .filter(|f| !matches!(f, JobFile::FullBarrel(b) if *b > 1))
        .collect();
    for &f in &files {
        match (f.is_container(), kinds::of(f)) {
            (true, Some(k)) => assert!(KINDS.contains(&k), "{f}: kind {k:?} not in KINDS"),
            (false, None) => {}
            (c, k) => panic!("{f}: a container: {c}, of kind {k:?}"),
        }
    }
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("formats");
    let readme = fs::read_to_string(formats.join("README.md")).expect("formats/README.md");
    let goldens: Vec<(&str, String, u32)> = GOLDEN
        .iter()
        .filter_map(|g| {
            let c = Container::open(golden_path(g.name)).ok()?;
            Some((g.name, c.kind().to_string(), c.version()))
        })
        .collect();
    let mut wrong = Vec::new();
    for &k in KINDS {
        let tag = format!("`{}`", k.tag);
        let own: Vec<JobFile> = files
            .iter()
            .copied()
            .filter(|&f| kinds::of(f) == Some(k))
            .collect();
        if own.is_empty()
            && !k.what.ends_with("(temporary)")
            && !k.what.ends_with("(outside the job's manifest)")
        {
            wrong.push(format!(
                "{}: no job file resolves to it (kinds::of) and its description does not end \
                 in \"(temporary)\" or \"(outside the job's manifest)\"",
                k.tag
            ));
        }
        // | what | `tag` N, … | [spec.md](spec.md) | source | [`golden/…`](…) |
        let row = readme.lines().find_map(|l| {
            let cells: Vec<&str> = l.split('|').collect();
            (cells.len() >= 6 && cells[2].contains(&tag)).then_some(cells)
        });
        let Some(cells) = row else {
            wrong.push(format!("{}: no row of formats/README.md names it", k.tag));
            continue;
        };
        let after = &cells[2][cells[2].find(&tag).unwrap() + tag.len()..];
        let version: String = after
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(char::is_ascii_digit)
            .collect();
        if version != k.version.to_string() {
            wrong.push(format!(
                "{}: formats/README.md says version {version:?}, the build's is {}",
                k.tag, k.version
            ));
        }
        let spec = cells[3]
            .split("](")
            .nth(1)
            .and_then(|s| s.split([')', '#']).next())
            .map(|s| formats.join(s));
        match spec.as_deref().map(fs::read_to_string) {
            Some(Ok(text)) => {
                if !text.contains(&tag) {
                    wrong.push(format!("{}: its spec page does not name it", k.tag));
                }
                for &f in &own {
                    let (name, general) = (f.name(), spec_name(f));
                    if !text.contains(&general) && !text.contains(&name) {
                        wrong.push(format!(
                            "{}: its spec page does not name its job file {general}",
                            k.tag
                        ));
                    }
                }
            }
            _ => wrong.push(format!("{}: no spec page ({spec:?})", k.tag)),
        }
        match goldens
            .iter()
            .find(|(_, t, v)| t == k.tag && *v == k.version)
        {
            Some((name, _, _)) if cells[5].contains(&format!("golden/{name}")) => {}
            Some((name, _, _)) => wrong.push(format!(
                "{}: formats/README.md does not link its golden file {name}",
                k.tag
            )),
            None => wrong.push(format!(
                "{}: no golden file of version {} in GOLDEN",
                k.tag, k.version
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------
// job.json: the manifest of `import-graph` + `pagerank` on a 3-node graph
// (the example of formats/job-manifest.md), with its checksum line.

#[test]
fn job_manifest_golden_reads_and_writes_back() {
    use webmill::job::Manifest;
    let bytes = std::fs::read(golden_path("job.json")).unwrap();
    let m = Manifest::from_bytes(&bytes).unwrap();
    assert_eq!(m.version, 3);
    assert_eq!(m.generation, 2);
    let names: Vec<&str> = m.stages.keys().map(String::as_str).collect();
    assert_eq!(names, ["import-graph", "pagerank"]);
    // Today's writer makes the same bytes, checksum included.
    assert!(m.to_bytes() == bytes, "the manifest writer changed");
    // One byte changed anywhere before the checksum line is refused.
    let mut bad = bytes.clone();
    let at = bytes.len() / 2;
    bad[at] = if bad[at] == b'1' { b'2' } else { b'1' };
    assert!(Manifest::from_bytes(&bad).is_err());
}

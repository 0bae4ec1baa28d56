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
//!   and `verify_file` fail, with a message naming the file.
//!
//! To regenerate the files after a deliberate format change:
//! `WEBMILL_UPDATE_GOLDEN=1 cargo test --test golden -- --nocapture`
//! (test (b) then rewrites `formats/golden/` instead of comparing).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use webmill::container::{BlockCodec, Container, ContainerWriter};
use webmill::docs::{Doc, DocTable, DocWriter};
use webmill::graph::{Direction, EdgeFile, EdgeWriter};
use webmill::kinds::verify_file;
use webmill::rank::{RankVector, VectorWriter};
use webmill::sort::{RunCodec, RunReader, RunWriter};

/// A golden file: its name in `formats/golden/` and how to write it into a
/// directory (returning the path written).
struct Golden {
    name: &'static str,
    write: fn(&Path) -> webmill::Result<PathBuf>,
}

const GOLDEN: [Golden; 5] = [
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
        name: "ranks.wm",
        write: write_ranks,
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

const RUN_RECORDS: [(u64, u32); 7] = [(1, 7), (1, 9), (2, 0), (5, 3), (8, 1), (13, 2), (21, 4)];

fn write_sortrun(dir: &Path) -> webmill::Result<PathBuf> {
    // The writer names its file after what it covers; write it aside and rename.
    let aside = dir.join("sortrun");
    fs::create_dir_all(&aside).map_err(|e| webmill::Error::io(&aside, e))?;
    let mut w = RunWriter::<(u64, u32)>::create(&aside, 0, 0, 7, "none", RunCodec::Zstd(3), 64)?;
    w.write_sorted(&RUN_RECORDS, None)?;
    let info = w.finish()?;
    let path = dir.join("sortrun.wm");
    fs::rename(&info.path, &path).map_err(|e| webmill::Error::io(&path, e))?;
    Ok(path)
}

#[test]
fn sortrun_golden_decodes() {
    let path = golden_path("sortrun.wm");
    let c = Container::open_kind(&path, "sortrun", 1).expect("open sortrun.wm");
    assert_eq!(
        c.params(),
        &json!({"record_type": "(u64,u32)", "combine": "none", "level": 0, "start": 0, "end": 7,
                "codec": "zstd:3"})
    );
    assert_eq!(c.meta(), &json!({"records": 7}));
    let index: Vec<(Vec<u8>, u64)> = c
        .blocks()
        .iter()
        .map(|b| (b.key.clone(), b.records))
        .collect();
    let key = |(a, b): (u64, u32)| [&a.to_le_bytes()[..], &b.to_le_bytes()[..]].concat();
    assert_eq!(index, [(key(RUN_RECORDS[0]), 5), (key(RUN_RECORDS[5]), 2)]);

    let mut r = RunReader::<(u64, u32)>::open(&path).expect("open run");
    assert_eq!(r.records(), 7);
    let mut records = Vec::new();
    while let Some(rec) = r.next_record().expect("record") {
        records.push(rec);
    }
    assert_eq!(records, RUN_RECORDS);
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
// Properties shared by all golden files.

/// (b) Today's writers reproduce the golden files byte for byte (or, with
/// `WEBMILL_UPDATE_GOLDEN=1`, rewrite them).
#[test]
fn writers_reproduce_golden_bytes() {
    let update = std::env::var("WEBMILL_UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let tmp = tempfile::tempdir().expect("temp dir");
    for g in &GOLDEN {
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

/// (c) The full verifier accepts every golden file.
#[test]
fn verify_file_accepts_golden_files() {
    for g in &GOLDEN {
        let c = verify_file(&golden_path(g.name)).unwrap_or_else(|e| panic!("{e}"));
        assert!(c.records() > 0, "{}", g.name);
    }
}

/// (d) Any single changed byte, anywhere in a golden file, is detected by the
/// container layer alone and by the full verifier, and the error names the file.
#[test]
fn every_changed_byte_is_detected() {
    let tmp = tempfile::tempdir().expect("temp dir");
    for g in &GOLDEN {
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

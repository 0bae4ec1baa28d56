//! CIFF: the strict reader on a file written by Anserini (the `ciff`
//! crate's toy index), the export of a generated site against the naive
//! index of its token streams, and — when `ciff2pisa` is installed (`cargo
//! install ciff`) — PISA's converter reading our export to the same
//! postings, frequencies, sizes, terms and titles.

mod common;
#[path = "common/site.rs"]
mod site;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use site::*;
use webmill::docs::DocTable;
use webmill::index::ciff::{check, PostingsList};
use webmill::index::{build_index, IndexOptions};
use webmill::job::{JobFile, JobView, Settings};

fn toy() -> PathBuf {
    common::workspace_root().join("tests/data/ciff/toy-complete-20200309.ciff")
}

/// Anserini's toy export, as the `ciff` crate's own test describes it.
#[test]
fn strict_reader_reads_anserinis_toy_index() {
    let bytes = std::fs::read(toy()).unwrap();
    let mut lists: Vec<PostingsList> = Vec::new();
    let c = check(&bytes[..], |p| lists.push(p.clone())).unwrap();
    assert_eq!(c.header.version, 1);
    assert_eq!((c.header.num_postings_lists, c.header.num_docs), (9, 3));
    assert_eq!(c.header.total_terms_in_collection, 16);
    assert!((c.header.average_doclength - 16.0 / 3.0).abs() < 1e-12);
    assert!(c.header.description.contains("Anserini"));
    let terms: Vec<&[u8]> = lists.iter().map(|p| &p.term[..]).collect();
    assert_eq!(
        terms,
        [
            &b"01"[..],
            b"03",
            b"30",
            b"content",
            b"enough",
            b"head",
            b"simpl",
            b"text",
            b"veri"
        ]
    );
    assert_eq!(lists[4].postings, [(2, 1)]);
    assert_eq!(lists[5].postings, [(0, 1), (1, 1), (2, 1)]);
    assert_eq!(lists[7].postings, [(0, 1), (1, 1), (2, 3)]);
    assert_eq!((lists[7].df, lists[7].cf), (3, 5));
    assert_eq!((c.postings, c.tf_sum, c.doclength_sum), (14, 16, 16));
    // Damage anywhere: an error, never a panic; most of it is caught.
    let mut caught = 0;
    for at in 0..bytes.len() {
        for bit in [0x01, 0x80] {
            let mut bad = bytes.clone();
            bad[at] ^= bit;
            caught += usize::from(check(&bad[..], |_| {}).is_err());
        }
    }
    assert!(
        caught > bytes.len(),
        "{caught} of {} flips caught",
        2 * bytes.len()
    );
}

/// An indexed generated site and its CIFF export.
fn exported(root: &Path) -> (webmill::job::Job, Vec<u8>) {
    let mut job = site_job(root, 90, 17);
    let s = Settings {
        reporter: Arc::new(webmill::progress::Silent),
        ..Settings::new(16 << 20)
    };
    build_index(
        &mut job,
        &IndexOptions {
            barrels: 3,
            ..Default::default()
        },
        &s,
    )
    .unwrap();
    let view = JobView::open(job.dir()).unwrap();
    let mut out = Vec::new();
    let summary =
        webmill::index::ciff::export(&view, &mut out, &root.join("scratch"), 1 << 20).unwrap();
    assert_eq!(summary.bytes, out.len() as u64);
    (job, out)
}

/// The export is the token streams inverted: every word in byte order with
/// its documents and hit counts, every doc with its URL and length.
#[test]
fn export_is_the_naive_index() {
    let dir = tempfile::tempdir().unwrap();
    let (job, out) = exported(dir.path());
    let naive = naive_index(&job);
    let mut lists = Vec::new();
    let c = check(&out[..], |p| lists.push(p.clone())).unwrap();
    assert_eq!(lists.len(), naive.len());
    let mut lengths = vec![0i64; c.header.num_docs as usize];
    for (p, (word, docs)) in lists.iter().zip(&naive) {
        assert_eq!(p.term, word.as_bytes());
        let want: Vec<(i32, i32)> = docs
            .iter()
            .map(|(d, (pl, f))| (*d as i32, (pl.len() + f.len()) as i32))
            .collect();
        assert_eq!(p.postings, want, "{word}");
        for &(d, tf) in &want {
            lengths[d as usize] += i64::from(tf);
        }
    }
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    assert_eq!(c.header.num_docs as u64, docs.len());
    assert_eq!(
        c.header.total_terms_in_collection,
        lengths.iter().sum::<i64>()
    );
    assert_eq!(c.doclength_sum as i64, c.header.total_terms_in_collection);
    // The doc records, decoded independently of `check`.
    let mut rd = webmill::index::ciff::CiffReader::new(&out[..]);
    rd.header().unwrap();
    for _ in 0..lists.len() {
        rd.postings_list().unwrap();
    }
    for d in docs.iter() {
        let (id, d) = d.unwrap();
        let r = rd.doc_record().unwrap();
        assert_eq!(r.docid as u64, id);
        assert_eq!(r.collection_docid, d.url);
        assert_eq!(i64::from(r.doclength), lengths[id as usize]);
    }
    assert!(rd.at_end().unwrap());
}

/// `ciff2pisa` on PATH or in cargo's bin directory.
fn ciff2pisa() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo/bin"));
    }
    dirs.into_iter()
        .map(|d| d.join("ciff2pisa"))
        .find(|p| p.is_file())
}

fn u32s(path: &Path) -> Vec<u32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// PISA's converter reads our export (and Anserini's toy, as a control) to
/// the postings, frequencies, sizes, terms and titles of the naive index.
#[test]
fn ciff2pisa_reads_the_export() {
    let Some(tool) = ciff2pisa() else {
        eprintln!("SKIPPED: ciff2pisa not installed (cargo install ciff)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let run = |input: &Path, base: &Path| {
        let st = std::process::Command::new(&tool)
            .arg("--ciff-file")
            .arg(input)
            .arg("--output")
            .arg(base)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "ciff2pisa {} failed", input.display());
    };
    let toy_base = dir.path().join("toy");
    run(&toy(), &toy_base);
    assert_eq!(u32s(&toy_base.with_extension("sizes")), [3, 6, 4, 6]);

    let (job, out) = exported(&dir.path().join("site"));
    let file = dir.path().join("site.ciff");
    std::fs::write(&file, &out).unwrap();
    let base = dir.path().join("coll");
    run(&file, &base);
    let naive = naive_index(&job);
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    let n = docs.len() as u32;
    let (mut want_docs, mut want_freqs, mut sizes) =
        (vec![1, n], Vec::new(), vec![0u32; n as usize]);
    for docs in naive.values() {
        want_docs.push(docs.len() as u32);
        want_freqs.push(docs.len() as u32);
        for (d, (p, f)) in docs {
            want_docs.push(*d);
            want_freqs.push((p.len() + f.len()) as u32);
            sizes[*d as usize] += (p.len() + f.len()) as u32;
        }
    }
    assert_eq!(u32s(&base.with_extension("docs")), want_docs);
    assert_eq!(u32s(&base.with_extension("freqs")), want_freqs);
    let mut want_sizes = vec![n];
    want_sizes.extend(sizes);
    assert_eq!(u32s(&base.with_extension("sizes")), want_sizes);
    let terms = std::fs::read_to_string(base.with_extension("terms")).unwrap();
    assert!(terms.lines().eq(naive.keys().map(String::as_str)));
    let titles = std::fs::read_to_string(base.with_extension("documents")).unwrap();
    let urls: Vec<String> = docs.iter().map(|d| d.unwrap().1.url).collect();
    assert!(titles.lines().eq(urls.iter().map(String::as_str)));
}

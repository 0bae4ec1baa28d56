//! The `index` stage against naive in-memory indexes of generated sites:
//! the inverted barrels are the forward barrels re-sorted, the whole index is
//! the token streams inverted, the short doclists hold exactly the postings
//! with title or anchor hits, pages never crawled are found by their anchors,
//! and the files do not depend on threads, budget or interruptions.

mod common;
#[path = "common/site.rs"]
mod site;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use site::*;
use webmill::docs::DocTable;
use webmill::index::forward::{ForwardBarrel, Part};
use webmill::index::hit::Hit;
use webmill::index::indexer::{self, WordIds};
use webmill::index::lexicon::{self, WordPlan};
use webmill::index::sizes::IndexBytes;
use webmill::index::{build, build_index, Barrel, BarrelSet, Index, IndexOptions, Lexicon, Stem};
use webmill::job::{Job, Settings, Stage, StageContext, StagePaths};
use webmill::progress::silent;
use webmill::sort::{ExternalSorter, SortConfig};

/// Reads every doclist of the index through the lexicon and cursors:
/// word → doc → (plain, fancy), for the full or the short doclists.
fn read_index(dir: &Path, set: BarrelSet) -> Naive {
    let lex = Lexicon::open(dir.join("lexicon.wm")).unwrap();
    let barrels: Vec<Barrel> = (0..lex.barrels())
        .map(|b| Barrel::open(dir.join(format!("full-{b:03}.wm"))).unwrap())
        .collect();
    let mut out = Naive::new();
    let mut words = Vec::new();
    lex.for_each_word(|w, id| {
        words.push((w.to_string(), id));
        Ok(())
    })
    .unwrap();
    for (w, id) in words {
        let t = lex.entry(id).unwrap();
        let b = &barrels[lex.barrel_of(id)];
        let (mut c, docs) = match set {
            BarrelSet::Full => (b.doclist(id, t.full, t.docs).unwrap(), t.docs),
            BarrelSet::Short => (
                b.short_doclist(id, t.full, t.short_docs).unwrap(),
                t.short_docs,
            ),
        };
        if docs == 0 {
            continue;
        }
        let list = out.entry(w).or_default();
        let mut hits = Vec::new();
        while let Some(d) = c.next().unwrap() {
            hits.clear();
            c.hits(&mut hits).unwrap();
            let np = c.hit_counts().unwrap().0 as usize;
            list.insert(d, (hits[..np].to_vec(), hits[np..].to_vec()));
        }
        assert_eq!(list.len(), docs as usize);
    }
    out
}

/// Runs the `index` stage (8 barrels) on `job`'s files outside the job: its
/// outputs in `root` (the index in `root/index`), its checkpoints in `tmp`.
fn build_into(job: &Job, root: &Path, tmp: &Path, mem: u64) -> webmill::index::IndexSummary {
    let stage = Index {
        opts: IndexOptions {
            barrels: 8,
            ..Default::default()
        },
    };
    let inputs = stage
        .inputs()
        .into_iter()
        .map(|f| (f, job.file(f).unwrap()))
        .collect();
    let paths = StagePaths {
        inputs,
        outputs: root.to_path_buf(),
        tmp: tmp.to_path_buf(),
    };
    let cx = StageContext::detached(&stage, &Settings::new(mem), paths).unwrap();
    build(
        &cx,
        &IndexOptions {
            barrels: 8,
            ..Default::default()
        },
    )
    .unwrap()
}

/// The index read back through lexicon and cursors is the token streams
/// inverted; the short doclists hold exactly the postings with a title or
/// anchor hit; wordIDs go by descending hits.
#[test]
fn index_is_the_token_streams_inverted() {
    let dir = tempfile::tempdir().unwrap();
    let job = site_job(dir.path(), 240, 7);
    let summary = build_into(
        &job,
        &dir.path().join("built"),
        &dir.path().join("tmp"),
        8 << 20,
    );
    let out = dir.path().join("built/index");
    let naive = naive_index(&job);
    let full = read_index(&out, BarrelSet::Full);
    assert_eq!(full.len(), naive.len(), "words");
    assert!(
        full == naive,
        "the full barrels differ from the naive index"
    );
    let short = read_index(&out, BarrelSet::Short);
    let want_short: Naive = naive
        .iter()
        .map(|(w, docs)| {
            let kept: BTreeMap<_, _> = docs
                .iter()
                .filter(|(_, (_, fancy))| fancy.iter().any(|h| h.is_title_or_anchor()))
                .map(|(d, v)| (*d, v.clone()))
                .collect();
            (w.clone(), kept)
        })
        .filter(|(_, d)| !d.is_empty())
        .collect();
    assert!(
        short == want_short,
        "the short doclists are not the title/anchor postings"
    );
    // wordIDs by descending hits, ties in byte order.
    let lex = Lexicon::open(out.join("lexicon.wm")).unwrap();
    let mut by_hits: Vec<(u64, &String)> = naive
        .iter()
        .map(|(w, docs)| {
            (
                docs.values().map(|(p, f)| (p.len() + f.len()) as u64).sum(),
                w,
            )
        })
        .collect();
    by_hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    for (id, (hits, w)) in by_hits.iter().enumerate() {
        assert_eq!(lex.lookup(w), Some(id as u32), "{w}");
        let t = lex.entry(id as u32).unwrap();
        assert_eq!(t.hits, *hits);
        assert_eq!(t.docs as usize, naive[*w].len());
    }
    assert_eq!(lex.lookup("nosuchword"), None);
    assert_eq!(summary.words as usize, naive.len());
    assert!(summary.postings.1 > 0 && summary.postings.1 < summary.postings.0);
    for b in 0..8 {
        webmill::kinds::verify_file(&out.join(format!("full-{b:03}.wm"))).unwrap();
    }
    webmill::kinds::verify_file(&out.join("lexicon.wm")).unwrap();
    // The byte breakdown adds up to the files and counts what the naive
    // index holds.
    let bytes = IndexBytes::of_dir(&out).unwrap();
    let file_len = |name: String| std::fs::metadata(out.join(name)).unwrap().len();
    let b = &bytes.barrels;
    let files: u64 = (0..8).map(|i| file_len(format!("full-{i:03}.wm"))).sum();
    assert_eq!(b.file, files);
    assert_eq!(b.container + b.directory + b.postings.total(), files);
    assert!(b.container > 0 && b.directory > 0 && b.postings.runs > 0);
    let f = &b.postings;
    assert_eq!(f.docs, summary.postings.0);
    assert_eq!(
        (f.plain_hits, f.fancy_hits + f.other_hits),
        summary.full_hits
    );
    let short_docs: usize = want_short.values().map(|d| d.len()).sum();
    assert_eq!(summary.postings.1, short_docs as u64);
    let naive_hits: usize = naive
        .values()
        .flat_map(|d| d.values())
        .map(|(p, _)| p.len())
        .sum();
    assert_eq!(f.plain_hits, naive_hits as u64);
    let l = &bytes.lexicon;
    assert_eq!(l.file, file_len("lexicon.wm".into()));
    assert_eq!(
        l.container + l.dictionary + l.barrel_table + l.entries,
        l.file
    );
    assert_eq!(l.words, naive.len() as u64);
    let table = bytes.table();
    assert!(
        table.contains("positions") && table.contains("term dictionary"),
        "{table}"
    );
}

/// Pages never crawled are in the index, found by their anchor text (and URL).
#[test]
fn uncrawled_pages_are_found_by_their_anchors() {
    let dir = tempfile::tempdir().unwrap();
    let job = site_job(dir.path(), 60, 3);
    build_into(
        &job,
        &dir.path().join("built"),
        &dir.path().join("tmp"),
        8 << 20,
    );
    let out = dir.path().join("built/index");
    let docs = DocTable::open(job.file(webmill::job::JobFile::Docs).unwrap()).unwrap();
    let uncrawled: Vec<u32> = docs
        .iter()
        .filter_map(|d| d.ok())
        .filter(|(_, d)| !d.crawled && d.url.contains("elsewhere"))
        .map(|(id, _)| id as u32)
        .collect();
    assert!(!uncrawled.is_empty());
    let lex = Lexicon::open(out.join("lexicon.wm")).unwrap();
    let id = lex.lookup("outside").expect("the anchor word `outside`");
    let t = lex.entry(id).unwrap();
    let barrel = Barrel::open(out.join(format!("full-{:03}.wm", lex.barrel_of(id)))).unwrap();
    let mut c = barrel.short_doclist(id, t.full, t.short_docs).unwrap();
    let mut found = Vec::new();
    let mut hits = Vec::new();
    while let Some(d) = c.next().unwrap() {
        hits.clear();
        c.hits(&mut hits).unwrap();
        if uncrawled.contains(&d) {
            assert!(hits.iter().all(|h| h.is_title_or_anchor() || h.is_fancy()));
            found.push(d);
        }
    }
    assert_eq!(
        found, uncrawled,
        "every uncrawled page is found by `outside`"
    );
}

/// Reads a forward barrel into (wordID, docID) → (plain, fancy), the plain
/// hits in the order a barrel gives them back.
fn invert_forward(path: &Path) -> BTreeMap<(u32, u32), (Vec<Hit>, Vec<Hit>)> {
    let mut m: BTreeMap<(u32, u32), (Vec<Hit>, Vec<Hit>)> = BTreeMap::new();
    ForwardBarrel::open(path)
        .unwrap()
        .for_each(0, |doc, part, word, hits| {
            let e = m.entry((word, doc as u32)).or_default();
            let list = if part == Part::Text {
                &mut e.0
            } else {
                &mut e.1
            };
            assert!(
                list.is_empty(),
                "two records of one part for ({word}, {doc})"
            );
            list.extend(
                hits.chunks_exact(2)
                    .map(|b| Hit(u16::from_le_bytes([b[0], b[1]]))),
            );
            Ok(())
        })
        .unwrap();
    for (plain, fancy) in m.values_mut() {
        barrel_order(plain, fancy);
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5))]
    /// Each inverted barrel is its forward barrel re-sorted (a naive
    /// in-memory inversion), at budgets that make the sort spill or not.
    #[test]
    fn inverted_barrels_are_the_forward_barrels_resorted(seed in 0u64..1000, pages in 20usize..120, barrels in 1u32..6, small in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let job = site_job(dir.path(), pages, seed);
        let src = sources(&job);
        let tmp = dir.path().join("tmp");
        let reporter = silent();
        let mut vocab = ExternalSorter::new(SortConfig::new(tmp.join("vocab"), 4 << 20), lexicon::vocabulary_combine()).unwrap();
        // Pass 1 carries no unit, some or all of them into the forward pass.
        let carry = [0, 16 << 10, u64::MAX][(seed % 3) as usize];
        let (_, carried) = indexer::count_vocabulary(&src, Stem::None, &mut vocab, 1 << 20, carry, &reporter, None).unwrap();
        let sorts = ["by-hits", "by-bytes"].map(|n| SortConfig::new(tmp.join(n), 2 << 20));
        let plan: WordPlan = lexicon::plan_words(vocab.finish().unwrap(), barrels, sorts, 1 << 20, &tmp.join("t.fst")).unwrap();
        let ids = WordIds::new(lexicon::open_fst_file(&tmp.join("t.fst")).unwrap(), 1 << 10);
        let fwd = tmp.join("fwd");
        std::fs::create_dir_all(&fwd).unwrap();
        let mut lengths = ExternalSorter::new(SortConfig::new(tmp.join("lengths"), 1 << 20), webmill::sort::Combine::sum()).unwrap();
        indexer::write_forward(&src, Stem::None, &ids, &plan, &fwd, 4096, &reporter, &mut lengths, carried).unwrap();
        // One scratch for every barrel, as a sorting thread keeps it; with
        // `small`, even barrels spill, so a barrel sorted in memory follows
        // one sorted externally, and the other way round.
        let mut scratch = webmill::index::sorter::SortScratch::default();
        for b in 0..plan.barrels() {
            let path = indexer::forward_path(&fwd, b);
            webmill::kinds::verify_file(&path).unwrap();
            let want = invert_forward(&path);
            let full = tmp.join(format!("full{b}.wm"));
            let budget = if small && b % 2 == 0 { 64 << 10 } else { 64 << 20 };
            let part = tmp.join(format!("part{b}.wm"));
            let cfg = SortConfig::new(tmp.join(format!("s{b}")), budget);
            let sorted = webmill::index::sorter::sort_barrel(&path, cfg, &full, &part, None, &mut scratch).unwrap();
            let words = u64::from(plan.firsts[b + 1] - plan.firsts[b]);
            prop_assert_eq!(sorted.words, words);
            let mut entries = 0;
            webmill::index::sorter::for_each_part_block(&part, |block| {
                entries += (block.len() / lexicon::ENTRY_BYTES) as u64;
                Ok(())
            }).unwrap();
            prop_assert_eq!(entries, words);
            let barrel = Barrel::open(&full).unwrap();
            barrel.verify().unwrap();
            let mut got = BTreeMap::new();
            barrel.for_each_block(|_, word, postings| {
                for (doc, p, f) in postings {
                    got.insert((word, doc), (p, f));
                }
                Ok(())
            }).unwrap();
            prop_assert!(got == want, "barrel {} is not its forward barrel re-sorted", b);
        }
    }
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p: PathBuf = e.unwrap().path();
        out.insert(
            p.file_name().unwrap().to_string_lossy().into_owned(),
            std::fs::read(&p).unwrap(),
        );
    }
    out
}

/// One thread or two, a budget that makes the sorts spill or one that spills
/// none: the same bytes.
#[test]
fn same_bytes_whatever_the_threads_and_budget() {
    let dir = tempfile::tempdir().unwrap();
    let job = site_job(dir.path(), 150, 11);
    let run = |name: &str, threads: usize, mem: u64| {
        let out = dir.path().join(name);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let summary =
            pool.install(|| build_into(&job, &out, &dir.path().join(format!("tmp-{name}")), mem));
        (files(&out.join("index")), summary)
    };
    let (a, sa) = run("a", 1, 256 << 20);
    let (b, sb) = run("b", 2, 256 << 10);
    assert_eq!(sa.runs, 0);
    // Pass 1 carries the first units into the forward pass, fewer of them
    // at the small budget.
    assert!(sb.carried_units < sa.carried_units, "{sb:?} {sa:?}");
    // The barrels of this small job fit in memory even at 256 KiB (their
    // sort through spilled runs writes the same bytes:
    // `sorter::tests::memory_and_external_sorts_write_the_same_barrel`).
    // 8 barrels, the lexicon, the field lengths and the titles.
    assert_eq!(a.len(), 11);
    assert!(a.contains_key("fieldlens.wm"), "{:?}", a.keys());
    assert!(a.contains_key("titles.wm"), "{:?}", a.keys());
    assert!(
        a == b,
        "outputs differ between 1 thread / 256 MiB and 2 threads / 256 KiB"
    );
}

/// The stage: runs, skips when finished, and a corrupt barrel or lexicon
/// makes `verify` name the file and the block.
#[test]
fn stage_and_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let mut job = site_job(dir.path(), 80, 5);
    let s = Settings {
        reporter: Arc::new(webmill::progress::Silent),
        ..Settings::new(16 << 20)
    };
    let opts = IndexOptions {
        barrels: 4,
        ..Default::default()
    };
    assert!(matches!(
        build_index(&mut job, &opts, &s).unwrap(),
        webmill::job::Outcome::Done { .. }
    ));
    assert!(matches!(
        build_index(&mut job, &opts, &s).unwrap(),
        webmill::job::Outcome::Skipped { .. }
    ));
    assert!(!job.dir().join("tmp").exists());
    let rec = job.published(webmill::job::StageId::Index).unwrap();
    // 4 barrels, the lexicon, the field lengths and the titles.
    assert_eq!(rec.outputs.len(), 7);
    for name in ["index/full-001.wm", "index/lexicon.wm"] {
        let path = job.dir().join(name);
        let good = std::fs::read(&path).unwrap();
        let c = webmill::container::Container::open(&path).unwrap();
        let last = c.blocks().len() - 1;
        let at = c.blocks()[last].offset as usize + 24 + 5;
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        std::fs::write(&path, &bad).unwrap();
        let err = webmill::kinds::verify_file(&path)
            .err()
            .expect("corruption is detected")
            .to_string();
        assert!(
            err.contains(name) && err.contains(&format!("block {last}")),
            "{err}"
        );
        std::fs::write(&path, &good).unwrap();
    }
}

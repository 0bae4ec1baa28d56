//! A document-partitioned index (`index::shards`) answers as the single
//! index does: the same job indexed whole and as shards (1, 3 and 4 docID
//! ranges, built step by step as Spark's tasks build them) gives, for ~100
//! random queries — AND, OR, phrases, exclusions, `site:`, under every
//! matching mode and ranking, the paper's conjunction with its short pass
//! and cut-off, pruning on and off — the same results bit for bit: docIDs,
//! scores, groups and totals. The steps are idempotent (a second attempt
//! publishes nothing and changes nothing), `verify` checks every shard and
//! refuses a damaged one, and a damaged manifest is refused naming it.

mod common;
#[path = "common/site.rs"]
mod site;

use std::path::Path;
use std::sync::Arc;

use common::{random_query, tree_files, Rng};
use site::*;
use webmill::index::shards::{self, ShardSet};
use webmill::index::{build_index, IndexOptions};
use webmill::job::{JobView, Settings};
use webmill::search::{Matching, Query, Ranking, Results, Searcher};

fn settings() -> Settings {
    Settings {
        reporter: Arc::new(webmill::progress::Silent),
        ..Settings::new(16 << 20)
    }
}

fn opts() -> IndexOptions {
    IndexOptions {
        barrels: 3,
        ..Default::default()
    }
}

/// The answer without the wordIDs, which are each index's own.
fn comparable(mut r: Results) -> Results {
    for w in &mut r.words {
        w.word_id = w.word_id.map(|_| 0);
    }
    r
}

/// Builds the sharded index of `job` in `dir` the way a Spark run does:
/// each per-shard step as its own call, the shards out of order, one
/// forward and one sort step run twice.
fn build_stepwise(view: &JobView, dir: &Path, n: usize) -> ShardSet {
    let (o, s) = (opts(), settings());
    let order: Vec<usize> = (0..n).rev().collect();
    for &k in &order {
        let r = shards::forward(view, dir, k, n, &o, &s).unwrap();
        assert!(r.published, "shard {k}: {r:?}");
    }
    let again = shards::forward(view, dir, 0, n, &o, &s).unwrap();
    assert!(!again.published, "a second attempt publishes nothing");
    shards::gather(view, dir, n).unwrap();
    for &k in &order {
        let (r, _) = shards::sort(view, dir, k, n, &o, &s).unwrap();
        assert!(r.published);
    }
    let (again, _) = shards::sort(view, dir, n - 1, n, &o, &s).unwrap();
    assert!(!again.published);
    let set = shards::finish(view, dir, n, &o).unwrap();
    let leftovers: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') || n.starts_with("fwd-") || n.starts_with("split-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    set
}

#[test]
fn shards_answer_as_the_single_index() {
    let dir = tempfile::tempdir().unwrap();
    // Common words' doclists span several postings blocks, so pruning has
    // blocks to skip in the single index and in the shards.
    let mut job = site_job(dir.path(), 700, 5);
    build_index(&mut job, &opts(), &settings()).unwrap();
    let view = JobView::open(job.dir()).unwrap();
    let single = Searcher::open(&view).unwrap();
    let mut sharded = Vec::new();
    for n in [1usize, 3, 4] {
        let d = dir.path().join(format!("shards-{n}"));
        let set = if n == 3 {
            build_stepwise(&view, &d, n)
        } else {
            shards::build_all(&view, &d, n, &opts(), &settings()).unwrap()
        };
        assert_eq!(set.len(), n);
        set.verify().unwrap();
        let s = Searcher::open_shards(&view, &d).unwrap();
        s.open_barrels().unwrap();
        sharded.push((n, s));
    }
    let vocab: Vec<String> = WORDS
        .iter()
        .map(|w| w.to_lowercase())
        .chain(["page", "outside", "html", "unheardof"].map(String::from))
        .collect();
    let mut rng = Rng(11);
    let (mut compared, mut paper, mut nonempty, mut exact_totals) = (0, 0, 0, 0);
    for round in 0..110 {
        let text = if round % 7 == 6 {
            // Plain words: the paper's conjunction under --match all.
            let n = 1 + rng.below(2) as usize;
            (0..n)
                .map(|_| vocab[rng.below(vocab.len() as u64) as usize].clone())
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            random_query(&mut rng, &vocab, 4)
        };
        let mut q = Query::parse(&text);
        q.matching = [Matching::All, Matching::Any][round % 2];
        q.ranking = [Ranking::Paper, Ranking::Bm25, Ranking::Bm25f][(round / 2) % 3];
        if round % 7 == 6 {
            q.matching = Matching::All;
            q.ranking = Ranking::Paper;
        }
        if round % 14 == 13 {
            // A small cut-off: the conjunction stops at the same document.
            // (Ranked retrieval's cut-off is a safety valve per shard, far
            // above what real queries reach.)
            q.cutoff = 7;
        }
        let k = [1, 5, 10, 10, 40][rng.below(5) as usize];
        let offset = [0, 0, 0, 3][rng.below(4) as usize];
        paper += usize::from(q.is_paper_conjunction());
        for prune in [true, false] {
            q.prune = prune;
            let want = comparable(single.search(&q, k, offset).unwrap());
            nonempty += usize::from(!want.results.is_empty());
            for (n, s) in &sharded {
                let got = comparable(s.search(&q, k, offset).unwrap());
                let ids = |r: &Results| -> Vec<(u64, u64)> {
                    r.results
                        .iter()
                        .map(|x| (x.docid, x.score.to_bits()))
                        .collect()
                };
                assert_eq!(
                    ids(&got),
                    ids(&want),
                    "{text:?} {:?} {:?} k {k} offset {offset} prune {prune}, {n} shards",
                    q.matching,
                    q.ranking
                );
                if want.total_estimated || got.total_estimated {
                    // Pruning skipped documents uncounted: estimates on
                    // both sides, the results above still exact.
                    assert!(prune, "{text:?}: estimated without pruning");
                    // An exact total lies within the other's bounds.
                    for (a, b) in [(&got, &want), (&want, &got)] {
                        if !a.total_estimated {
                            let (lo, hi) = b.total_bounds;
                            assert!(lo <= a.total && a.total <= hi, "{text:?}, {n} shards");
                        }
                    }
                    continue;
                }
                exact_totals += 1;
                assert_eq!(
                    got, want,
                    "{text:?} {:?} {:?} k {k} offset {offset} prune {prune}, {n} shards",
                    q.matching, q.ranking
                );
                compared += 1;
            }
        }
    }
    assert!(paper >= 15, "{paper} paper conjunctions");
    assert!(nonempty >= 100, "{nonempty} answers with results");
    assert!(
        compared >= 500 && exact_totals >= 500,
        "{compared} compared"
    );
}

#[test]
fn verify_refuses_a_damaged_shard_and_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let job = site_job(dir.path(), 120, 3);
    let view = JobView::open(job.dir()).unwrap();
    let d = shards::default_dir(job.dir());
    let set = shards::build_all(&view, &d, 2, &opts(), &settings()).unwrap();
    set.verify().unwrap();
    // The job has no index of its own: search finds the shards.
    let s = Searcher::open(&view).unwrap();
    assert!(!s
        .search(&Query::parse("page"), 10, 0)
        .unwrap()
        .results
        .is_empty());
    assert!(Searcher::has_index(&view));

    // A flipped byte inside a shard's barrel: verify names the file.
    let barrel = set.file(1, webmill::job::JobFile::FullBarrel(0));
    let good = std::fs::read(&barrel).unwrap();
    let mut bad = good.clone();
    let at = bad.len() / 2;
    bad[at] ^= 0x40;
    std::fs::write(&barrel, &bad).unwrap();
    let e = set.verify().unwrap_err().to_string();
    assert!(e.contains("full-000.wm"), "{e}");
    std::fs::write(&barrel, &good).unwrap();

    // Field lengths that are not the collection's.
    let lens = set.file(0, webmill::job::JobFile::FieldLengths);
    std::fs::remove_file(&lens).unwrap();
    let other = tempfile::tempdir().unwrap();
    let w = webmill::index::fieldlens::FieldLengthsWriter::create(
        other.path().join("f.wm"),
        set.params().docs,
    )
    .unwrap();
    let mut w = w;
    for _ in 0..set.params().docs {
        w.push(&[1, 1, 1, 1, 1]).unwrap();
    }
    w.finish().unwrap();
    std::fs::copy(other.path().join("f.wm"), &lens).unwrap();
    let e = set.verify().unwrap_err().to_string();
    assert!(e.contains("not the collection's field lengths"), "{e}");

    // A damaged manifest is refused, naming it.
    let m = d.join(shards::MANIFEST);
    let mut bytes = std::fs::read(&m).unwrap();
    bytes[40] ^= 1;
    std::fs::write(&m, &bytes).unwrap();
    let e = ShardSet::open(&d).unwrap_err().to_string();
    assert!(e.contains("shards.wm"), "{e}");
    let e = Searcher::open(&view).err().unwrap().to_string();
    assert!(e.contains("shards.wm"), "{e}");
}

#[test]
fn a_job_indexed_only_as_shards_is_searched_and_refuses_ciff_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let job = site_job(dir.path(), 60, 3);
    let view = JobView::open(job.dir()).unwrap();
    let d = shards::default_dir(job.dir());
    shards::build_all(&view, &d, 2, &opts(), &settings()).unwrap();
    // No index of the stage's own: search finds the shards.
    assert!(Searcher::has_index(&view));
    let s = Searcher::open(&view).unwrap();
    let r = s.search(&Query::parse("page"), 5, 0).unwrap();
    assert!(!r.results.is_empty());
    // CIFF is one index's postings: refused, naming the shards, not
    // reported as a missing lexicon.
    let e = webmill::index::ciff::export(&view, &mut Vec::new(), dir.path(), 16 << 20)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("split into shards") && e.contains("shards"),
        "{e}"
    );
}

/// With the split step, each shard's forward step reads only its own
/// documents' text: every split file holds the first captures of its
/// shard's docs and nothing else, each page once over the split tasks, and
/// the shards built from them are byte for byte those built from the whole
/// `text.wm`.
#[test]
fn split_text_gives_the_shards_of_the_whole_text() {
    use webmill::container::pagefile::PageFile;
    use webmill::index::textsplit;
    use webmill::ingest::records;
    use webmill::job::JobFile;
    let dir = tempfile::tempdir().unwrap();
    let job = site_job(dir.path(), 300, 4);
    let view = JobView::open(job.dir()).unwrap();
    let n = 3;
    let (o, s) = (opts(), settings());
    let whole = dir.path().join("whole");
    build_stepwise(&view, &whole, n);
    let split = dir.path().join("split");
    for j in (0..n).rev() {
        let r = shards::split(&view, &split, j, n, &s).unwrap();
        assert!(r.published && r.step == "split", "{r:?}");
    }
    assert!(!shards::split(&view, &split, 1, n, &s).unwrap().published);
    // The page map: each page's doc, if it is the doc's first capture.
    let mut first_of = std::collections::BTreeMap::new();
    PageFile::open(view.file(JobFile::PageDoc).unwrap(), &records::PAGEDOC)
        .unwrap()
        .for_each(|page, input| {
            let (doc, first) = records::decode_pagedoc(input)?;
            if first {
                first_of.insert(page, doc);
            }
            Ok(())
        })
        .unwrap();
    let docs = webmill::docs::DocTable::open(view.file(JobFile::Docs).unwrap())
        .unwrap()
        .len();
    let ranges = shards::plan(docs, n).unwrap();
    let mut text_pages = std::collections::BTreeSet::new();
    PageFile::open(view.file(JobFile::Text).unwrap(), &records::TEXT)
        .unwrap()
        .for_each(|page, input| {
            records::decode_text(input)?;
            if first_of.contains_key(&page) {
                text_pages.insert(page);
            }
            Ok(())
        })
        .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for j in 0..n {
        for (k, range) in ranges.iter().enumerate() {
            let f = split
                .join(textsplit::split_name(j))
                .join(textsplit::part_name(k));
            PageFile::open(&f, &records::TEXT)
                .unwrap()
                .for_each(|page, input| {
                    records::decode_text(input)?;
                    let doc = first_of[&page];
                    assert!(
                        range.contains(&doc),
                        "page {page}: doc {doc} not in shard {k}"
                    );
                    assert!(seen.insert(page), "page {page} twice");
                    Ok(())
                })
                .unwrap();
        }
    }
    assert_eq!(seen, text_pages);
    for k in 0..n {
        assert!(
            shards::forward(&view, &split, k, n, &o, &s)
                .unwrap()
                .published
        );
    }
    shards::gather(&view, &split, n).unwrap();
    for k in 0..n {
        shards::sort(&view, &split, k, n, &o, &s).unwrap();
    }
    shards::finish(&view, &split, n, &o).unwrap();
    let (a, b) = (tree_files(&whole), tree_files(&split));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(b[name] == *bytes, "{name} differs");
    }
}

//! The searcher against a brute-force scan of the token streams: random
//! 1–3 word queries on generated sites give the same documents, scores and
//! order as the naive index scored with the same function and Figure 4's
//! short-then-full rule; pages never crawled are found by their anchors;
//! queries without answers get one; corrupt files make `search` refuse with
//! `verify`'s message.

mod common;
#[path = "common/site.rs"]
mod site;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::Rng;
use site::*;
use webmill::index::hit::Hit;
use webmill::index::{build_index, IndexOptions, Lexicon};
use webmill::job::{Job, JobFile, JobView, Settings};
use webmill::search::rank::Scorer;
use webmill::search::{EmptyReason, Matching, Pass, Query, Ranking, RankingWeights, Searcher};

/// A query answered as the paper does (`--match all --ranking paper`): what
/// this file's brute-force scans compute.
fn paper(text: &str) -> Query {
    let mut q = Query::parse(text);
    q.matching = Matching::All;
    q.ranking = Ranking::Paper;
    q
}

fn indexed_site(root: &std::path::Path, pages: usize, seed: u64, barrels: u32) -> Job {
    let mut job = site_job(root, pages, seed);
    index_job(&mut job, barrels);
    job
}

/// Builds `job`'s index in `barrels` barrels under a 16 MiB budget.
fn index_job(job: &mut Job, barrels: u32) {
    let s = Settings {
        reporter: Arc::new(webmill::progress::Silent),
        ..Settings::new(16 << 20)
    };
    build_index(
        job,
        &IndexOptions {
            barrels,
            ..Default::default()
        },
        &s,
    )
    .unwrap();
}

/// Ranked (docID, score) of a page, the pass, the matches.
type BrutePage = (Vec<(u64, f64)>, Pass, usize);

/// Figure 4 over the naive index: the matching docIDs (in docID order, at
/// most `cutoff`), with the pass they came from.
struct Brute {
    naive: Naive,
    ranks: Vec<f64>,
    docs: u64,
}

impl Brute {
    fn new(job: &Job) -> Brute {
        let ranks = webmill::rank::RankVector::open(job.file(JobFile::Ranks).unwrap())
            .unwrap()
            .load()
            .unwrap();
        Brute {
            naive: naive_index(job),
            docs: ranks.len() as u64,
            ranks,
        }
    }

    /// (docID, score) of the ranked results `offset..offset + k`, the pass,
    /// the matches; `None` when a word is unknown.
    fn search(
        &self,
        words: &[String],
        k: usize,
        offset: usize,
        cutoff: usize,
        w: &RankingWeights,
    ) -> Option<BrutePage> {
        let lists: Vec<_> = words
            .iter()
            .map(|q| self.naive.get(q))
            .collect::<Option<_>>()?;
        let (pass, docs) = Self::matched(&lists, 0..u32::MAX, offset + k, cutoff);
        let mut scorer = Scorer::new();
        let mut scored: Vec<(u64, f64)> = docs
            .iter()
            .map(|&d| {
                let hits: Vec<Vec<Hit>> = lists
                    .iter()
                    .map(|l| {
                        let (p, f) = &l[&d];
                        p.iter().chain(f).copied().collect()
                    })
                    .collect();
                scorer.load(hits.iter().map(Vec::as_slice));
                let ir = scorer.ir(w);
                (
                    u64::from(d),
                    w.combine(ir, Some(self.ranks[d as usize]), self.docs),
                )
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let n = scored.len();
        Some((scored.into_iter().skip(offset).take(k).collect(), pass, n))
    }

    /// Figure 4's matching within `range`: the pass and the matching docIDs
    /// (in docID order, at most `cutoff`).
    fn matched(
        lists: &[&NaiveList],
        range: std::ops::Range<u32>,
        want: usize,
        cutoff: usize,
    ) -> (Pass, Vec<u32>) {
        let all: BTreeSet<u32> = lists[0]
            .keys()
            .copied()
            .filter(|d| range.contains(d) && lists.iter().all(|l| l.contains_key(d)))
            .collect();
        let short_of = |d: &u32| {
            lists
                .iter()
                .all(|l| l[d].1.iter().any(|h| h.is_title_or_anchor()))
        };
        let every_word_short = lists.iter().all(|l| {
            l.values()
                .any(|(_, f)| f.iter().any(|h| h.is_title_or_anchor()))
        });
        let short: Vec<u32> = all.iter().copied().filter(short_of).collect();
        let (pass, mut docs) = if every_word_short && (short.len() >= want || short.len() >= cutoff)
        {
            (Pass::Short, short)
        } else {
            (Pass::Full, all.into_iter().collect())
        };
        docs.truncate(cutoff);
        (pass, docs)
    }
}

/// Random 1–3 word queries, several page sizes, offsets and cut-offs: the
/// searcher's results are the brute-force scan's, score for score.
#[test]
fn results_equal_a_brute_force_scan() {
    let dir = tempfile::tempdir().unwrap();
    let job = indexed_site(dir.path(), 160, 21, 4);
    let brute = Brute::new(&job);
    let view = JobView::open(job.dir()).unwrap();
    let searcher = Searcher::open(&view).unwrap();
    assert!(searcher.doc_count() > 160);
    let vocab: Vec<String> = WORDS
        .iter()
        .map(|w| w.to_lowercase())
        .chain(["page", "outside", "p3", "html", "site"].map(String::from))
        .chain((0..8).map(|i| format!("alpha{i}")))
        .collect();
    let mut rng = Rng(99);
    let (mut passes, mut checked, mut cut) = ([0usize; 2], 0, 0);
    for round in 0..400 {
        let n = 1 + rng.below(3) as usize;
        let words: Vec<String> = (0..n)
            .map(|_| vocab[rng.below(vocab.len() as u64) as usize].clone())
            .collect();
        let k = [1, 3, 10, 1000][round % 4];
        let offset = [0, 0, 2, 7][rng.below(4) as usize];
        let cutoff = if round % 5 == 0 {
            1 + rng.below(20) as usize
        } else {
            40_000
        };
        let mut q = paper(&words.join(" ")).ranking_only();
        q.cutoff = cutoff;
        let got = searcher.search(&q, k, offset).unwrap();
        match brute.search(&q.words, k, offset, cutoff, &q.weights) {
            None => {
                assert!(
                    matches!(got.empty, Some(EmptyReason::UnknownWords(_))),
                    "{words:?}"
                );
            }
            Some((want, pass, total)) => {
                let got_list: Vec<(u64, f64)> =
                    got.results.iter().map(|r| (r.docid, r.score)).collect();
                assert_eq!(
                    got_list, want,
                    "{words:?} k {k} offset {offset} cutoff {cutoff}"
                );
                assert_eq!(got.total as usize, total, "{words:?}");
                if total > 0 {
                    assert_eq!(got.pass, Some(pass), "{words:?} k {k} cutoff {cutoff}");
                    passes[usize::from(pass == Pass::Full)] += 1;
                    cut += usize::from(got.cut_off);
                } else {
                    assert_eq!(got.empty, Some(EmptyReason::NoDocumentHasAll));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked} queries compared");
    assert!(
        passes[0] > 20 && passes[1] > 20,
        "short/full passes: {passes:?}"
    );
    assert!(cut > 10, "{cut} queries cut off");
}

/// The searcher on a docID range alone (what `webmill layout` measures a
/// subindex's load with): random queries and ranges give the brute-force
/// scan's matches within the range, with its pass, and the work counts what
/// was read; `SearcherCost` holds exactly that work per subindex.
#[test]
fn evaluation_within_a_docid_range_equals_a_brute_force_scan() {
    use webmill::analysis::layout::{self, Load, SearcherCost, SubindexCost};
    let dir = tempfile::tempdir().unwrap();
    let job = indexed_site(dir.path(), 160, 23, 3);
    let brute = Brute::new(&job);
    let view = JobView::open(job.dir()).unwrap();
    let searcher = Searcher::open(&view).unwrap();
    let docs = searcher.doc_count() as u32;
    let vocab: Vec<String> = WORDS
        .iter()
        .map(|w| w.to_lowercase())
        .chain(["page", "site", "p3"].map(String::from))
        .collect();
    let mut rng = Rng(7);
    let (mut passes, mut nonempty) = ([0usize; 2], 0);
    for round in 0..300 {
        let n = 1 + rng.below(3) as usize;
        let words: Vec<String> = (0..n)
            .map(|_| vocab[rng.below(vocab.len() as u64) as usize].clone())
            .collect();
        let a = rng.below(u64::from(docs) + 1) as u32;
        let b = rng.below(u64::from(docs) + 1) as u32;
        let range = a.min(b)..a.max(b) + u32::from(round % 3 == 0) * docs;
        let want = [1, 10, 1000][round % 3];
        let mut q = paper(&words.join(" ")).ranking_only();
        q.cutoff = if round % 7 == 0 { 3 } else { 40_000 };
        let got = searcher.evaluate_in(&q, range.clone(), want).unwrap();
        let lists: Option<Vec<&NaiveList>> = q.words.iter().map(|w| brute.naive.get(w)).collect();
        let (Some(got), Some(lists)) = (got, lists) else {
            continue;
        };
        let (pass, expect) = Brute::matched(&lists, range.clone(), want, q.cutoff);
        let found: Vec<u32> = got.matches.iter().map(|m| m.doc).collect();
        assert_eq!(found, expect, "{words:?} in {range:?}");
        assert_eq!(got.pass, pass, "{words:?} in {range:?} want {want}");
        passes[usize::from(pass == Pass::Full)] += 1;
        nonempty += usize::from(!found.is_empty());
        // Work: every match scored, each with a hit per word, each from a
        // decoded posting; nothing decoded beyond the doclists.
        let w = got.work;
        assert!(w.matches >= found.len() as u64);
        assert!(w.hits >= found.len() as u64 * lists.len() as u64);
        assert!(w.postings >= found.len() as u64);
        let doclists: u64 = lists.iter().map(|l| l.len() as u64).sum();
        assert!(w.postings <= 2 * doclists, "{w:?} of {doclists}");
    }
    assert!(
        nonempty > 60 && passes[0] > 10 && passes[1] > 10,
        "{nonempty} {passes:?}"
    );

    // A narrow range skips the blocks before it: on a site whose commonest
    // word spans several postings blocks, a query on the last docIDs decodes
    // fewer postings (and scores fewer docs) than on all of them.
    {
        let dir = tempfile::tempdir().unwrap();
        let big = indexed_site(dir.path(), 900, 29, 2);
        let view = JobView::open(big.dir()).unwrap();
        let s = Searcher::open(&view).unwrap();
        let n = s.doc_count() as u32;
        let q = paper("page").ranking_only();
        let all = s.evaluate_in(&q, 0..n, 100_000).unwrap().unwrap();
        let tail = s.evaluate_in(&q, n - 5..n, 100_000).unwrap().unwrap();
        assert!(all.work.postings >= 4 * 128, "{:?}", all.work);
        assert!(
            tail.work.postings * 2 < all.work.postings,
            "{:?} vs {:?}",
            tail.work,
            all.work
        );
        assert!(tail.work.matches < all.work.matches);
    }

    let cuts = vec![0, u64::from(docs) / 3, u64::from(docs) / 2, u64::from(docs)];
    let queries: Vec<layout::Query> = ["page site", "p3", "page", "zzzqqqx"]
        .iter()
        .map(|t| layout::Query {
            words: t.split(' ').map(String::from).collect(),
        })
        .collect();
    let cost = SearcherCost::measure(&searcher, &cuts, &queries, 10, Load::Work, 1 << 20).unwrap();
    assert_eq!(cost.subindices(), 3);
    for q in &queries {
        for j in 0..3 {
            let range = cuts[j] as u32..cuts[j + 1] as u32;
            let e = searcher
                .evaluate_in(&paper(&q.words.join(" ")), range, 10)
                .unwrap()
                .map(|e| e.work.entries())
                .unwrap_or(0);
            assert_eq!(cost.cost(j, q), e as f64, "{q:?} on {j}");
            assert_eq!(cost.work(j, q).entries(), e);
        }
    }
    assert!(cost.cost(0, &queries[2]) > 0.0);
    assert_eq!(cost.cost(1, &queries[3]), 0.0);
    assert!(SearcherCost::measure(&searcher, &cuts, &queries, 10, Load::Work, 10).is_err());
}

/// A page never crawled is found by the words of the anchors pointing at
/// it, and shown with that anchor text as its title.
#[test]
fn never_crawled_pages_are_found_by_their_anchor_text() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("a.html"),
        "<title>Start</title><p>links below</p><a href=\"http://far.example/x\">quasar telescope</a>",
    )
    .unwrap();
    std::fs::write(
        site.join("b.html"),
        "<title>Other</title><p>more text</p><a href=\"http://far.example/x\">quasar telescope</a><a href=\"a.html\">start</a>",
    )
    .unwrap();
    let mut job = common::ingested_job(
        &dir.path().join("job"),
        &[format!("http://near.example/={}", site.display())],
        16 << 20,
    );
    index_job(&mut job, 2);
    let view = JobView::open(job.dir()).unwrap();
    let s = Searcher::open(&view).unwrap();
    let r = s.search(&paper("Quasar telescope"), 10, 0).unwrap();
    // The linking pages have the words too (anchor text is page text); the
    // page they link to ranks first.
    assert_eq!(r.results.len(), 3, "{r:?}");
    let x = &r.results[0];
    assert_eq!(x.url, "http://far.example/x");
    assert!(!x.crawled && x.title_from_anchor);
    assert_eq!(x.title, "quasar telescope");
    assert_eq!(
        r.pass,
        Some(Pass::Full),
        "fewer than k matches in the short barrels"
    );
    let one = s.search(&paper("quasar"), 1, 0).unwrap();
    assert_eq!(one.pass, Some(Pass::Short));
    assert_eq!(one.results[0].url, "http://far.example/x");
}

/// The anchor title of every doc of a generated job, against the anchor
/// file read directly: the commonest non-empty text (trimmed) among each
/// target's first 64 links, ties to the first seen, for docs not crawled
/// and untitled. Both ways the store has of knowing it agree with that: the
/// index's titles file and, before the index exists, the anchors. Links
/// to one target run over several anchor blocks, so the cut at 64 links
/// falls inside a block and across blocks.
#[test]
fn anchor_titles_are_the_vote_of_the_first_links() {
    use webmill::container::pagefile::PageFile;
    use webmill::docstore::DocStore;
    use webmill::ingest::records;
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    let mut rng = Rng(21);
    let texts = [
        "alpha beta",
        "  alpha beta ",
        "gamma",
        "",
        "  ",
        "\u{394}elta",
    ];
    for i in 0..400 {
        let mut html = if i % 5 == 0 {
            String::new()
        } else {
            format!("<title>page {i}</title>")
        };
        html += "<p>some words</p>";
        for j in 0..10 {
            let t = rng.below(4);
            let text = match rng.below(10) {
                0..=4 => texts[rng.below(texts.len() as u64) as usize].to_string(),
                5 | 6 => format!("long anchor text number {i} {j} {}", "x".repeat(20)),
                _ => WORDS[rng.below(12) as usize].to_string(),
            };
            html += &format!("<a href=\"http://far.example/t{t}\">{text}</a> ");
            // Pages p400… do not exist: never crawled, on the site's host.
            html += &format!("<a href=\"p{}.html\">{text}</a> ", rng.below(420));
        }
        html += "<a href=\"http://far.example/empty\"> </a>";
        std::fs::write(site.join(format!("p{i}.html")), html).unwrap();
    }
    let mut job = common::ingested_job(
        &dir.path().join("job"),
        &[format!("http://near.example/={}", site.display())],
        16 << 20,
    );
    // The reference, from the anchor file and the doc table.
    let anchors = PageFile::open(job.file(JobFile::Anchors).unwrap(), &records::ANCHORS).unwrap();
    assert!(anchors.container().blocks().len() > 2, "links span blocks");
    let mut first: std::collections::BTreeMap<u64, Vec<String>> = Default::default();
    anchors
        .for_each(|target, input| {
            let (_, _, text) = records::decode_anchor(input)?;
            let l = first.entry(target).or_default();
            if l.len() < 64 {
                l.push(text.trim().to_string());
            }
            Ok(())
        })
        .unwrap();
    let table = webmill::docs::DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    let mut want = Vec::new();
    for d in table.iter() {
        let (id, d) = d.unwrap();
        let mut best: Option<(usize, usize, &str)> = None;
        if !d.crawled && d.title.is_empty() {
            let l = first.get(&id).map(Vec::as_slice).unwrap_or_default();
            for t in l {
                let n = l.iter().filter(|u| *u == t).count();
                let seen = l.iter().position(|u| u == t).unwrap();
                if !t.is_empty() && best.is_none_or(|(bn, bk, _)| n > bn || (n == bn && seen < bk))
                {
                    best = Some((n, seen, t));
                }
            }
        }
        want.push(best.map(|(_, _, t)| t.to_string()));
    }
    let titled = want.iter().filter(|t| t.is_some()).count();
    assert!(titled >= 20, "{titled} anchor titles");
    assert!(
        first.values().any(|l| l.len() == 64),
        "a target past the cut"
    );
    let check = |store: &DocStore, stored: bool| {
        assert_eq!(store.has_stored_titles(), stored);
        for (d, w) in want.iter().enumerate() {
            assert_eq!(
                &store.anchor_title(d as u64).unwrap(),
                w,
                "doc {d} (stored: {stored})"
            );
        }
    };
    check(
        &DocStore::open(&JobView::open(job.dir()).unwrap()).unwrap(),
        false,
    );
    index_job(&mut job, 2);
    let view = JobView::open(job.dir()).unwrap();
    check(&DocStore::open(&view).unwrap(), true);
    let file = view.file(JobFile::AnchorTitles).unwrap();
    webmill::kinds::verify_file(&file).unwrap();
    // The searcher shows it.
    let s = Searcher::open(&view).unwrap();
    let r = s.search(&Query::parse("gamma"), 100, 0).unwrap();
    let far = r
        .results
        .iter()
        .find(|x| !x.crawled && x.url.starts_with("http://far.example/t"));
    let far = far.expect("a far page among the results");
    assert!(far.title_from_anchor);
    assert_eq!(Some(&far.title), want[far.docid as usize].as_ref());
}

/// Empty, punctuation-only, unknown-word and 1,000-word queries: an
/// answer, not an error.
#[test]
fn queries_without_answers_get_one() {
    let dir = tempfile::tempdir().unwrap();
    let job = indexed_site(dir.path(), 30, 4, 2);
    let view = JobView::open(job.dir()).unwrap();
    let s = Searcher::open(&view).unwrap();
    for text in ["", "   ", "!!! ... — ;;", "\u{200b}"] {
        let r = s.search(&paper(text), 10, 0).unwrap();
        assert_eq!(r.empty, Some(EmptyReason::NoWords), "{text:?}");
    }
    let r = s.search(&paper("alpha zzyzx qqq"), 10, 0).unwrap();
    assert_eq!(
        r.empty,
        Some(EmptyReason::UnknownWords(vec![
            "zzyzx".into(),
            "qqq".into()
        ]))
    );
    assert!(r.results.is_empty());
    let many: String = (0..1000).map(|i| format!("alpha w{i} ")).collect();
    let r = s.search(&paper(&many), 10, 0).unwrap();
    assert_eq!(r.words.len(), 32);
    assert_eq!(r.ignored_words, 1001 - 32);
    assert!(r.empty.is_some());
    let r = s.search(&paper(&"alpha ".repeat(1000)), 10, 0).unwrap();
    assert_eq!(r.words.len(), 1);
    assert!(!r.results.is_empty());
    // k = 0 counts.
    let r = s.search(&paper("alpha"), 0, 0).unwrap();
    assert!(r.total > 0 && r.results.is_empty());
    // Past the last result: an empty page, the total still known.
    let r = s.search(&paper("alpha"), 10, 100_000).unwrap();
    assert!(r.total > 0 && r.results.is_empty());
}

/// A corrupt barrel block or lexicon block: `verify` names the file and
/// block, and a search that reads it refuses with the same message.
#[test]
fn corrupt_files_make_search_refuse_with_verifys_message() {
    let dir = tempfile::tempdir().unwrap();
    let job = indexed_site(dir.path(), 80, 5, 2);
    let lex = Lexicon::open(job.file(JobFile::Lexicon).unwrap()).unwrap();
    let id = lex.lookup("alpha").unwrap();
    let info = lex.entry(id).unwrap();
    let barrel = lex.barrel_of(id) as u16;
    drop(lex);
    let cases = [
        (JobFile::FullBarrel(barrel), info.full.block as usize),
        (JobFile::Lexicon, 2 + id as usize / 1024),
        (JobFile::Lexicon, 0),
    ];
    for (file, block) in cases {
        let path = job.file(file).unwrap();
        let good = std::fs::read(&path).unwrap();
        let c = webmill::container::Container::open(&path).unwrap();
        let at = c.blocks()[block].offset as usize + 24 + 3;
        drop(c);
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        std::fs::write(&path, &bad).unwrap();
        let verify = webmill::kinds::verify_file(&path)
            .err()
            .expect("verify finds the damage")
            .to_string();
        assert!(
            verify.contains(&path.display().to_string())
                && verify.contains(&format!("block {block}")),
            "{verify}"
        );
        let view = JobView::open(job.dir()).unwrap();
        // All of alpha's doclist: more than the short barrels hold.
        let search = Searcher::open(&view)
            .and_then(|s| s.search(&paper("alpha").ranking_only(), 100_000, 0))
            .expect_err("search refuses")
            .to_string();
        assert_eq!(search, verify, "{file:?}");
        std::fs::write(&path, &good).unwrap();
    }
}

/// The title-query measurement on a generated site: every page with a
/// distinctive title is queried, found and counted.
#[test]
fn title_queries_find_pages_by_their_titles() {
    let dir = tempfile::tempdir().unwrap();
    let job = indexed_site(dir.path(), 120, 8, 4);
    let view = JobView::open(job.dir()).unwrap();
    let s = Searcher::open(&view).unwrap();
    let r = webmill::search::titles::title_queries(&s, 0, &Query::parse("")).unwrap();
    // Titles are "W1 W2 page i" on 4 pages of 5: all distinct.
    assert_eq!(r.titled, 96);
    assert_eq!(r.distinctive, 96);
    assert_eq!(r.queried, 96);
    assert!(r.rate >= 0.9, "{r:?}");
    assert!(r.mrr > 0.5 && r.mrr <= 1.0, "{r:?}");
    let half = webmill::search::titles::title_queries(&s, 10, &Query::parse("")).unwrap();
    assert!(half.queried >= 10 && half.queried <= 11, "{half:?}");
}

/// Two hosts and copies of one page: the copies collapse into one result
/// (`similar`) once a dedup stage ran, and each host's other matches are
/// listed under its best one (`host_more`).
#[test]
fn hosts_cluster_and_near_duplicates_collapse() {
    use webmill::dedup::{stage::dedup, stage::DedupOptions, Alg};
    use webmill::search::HostClustering;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let body: String = (0..60).map(|i| format!("lorem{i} ")).collect();
    for i in 0..3 {
        std::fs::write(
            a.join(format!("copy{i}.html")),
            format!("<title>Zebra facts</title><p>zebra {body}</p>"),
        )
        .unwrap();
    }
    std::fs::write(
        a.join("other.html"),
        "<p>a zebra here and there, nothing else</p>",
    )
    .unwrap();
    std::fs::write(
        b.join("one.html"),
        "<title>Zebra</title><p>zebra stripes</p>",
    )
    .unwrap();
    std::fs::write(b.join("two.html"), "<p>one zebra</p>").unwrap();
    let inputs = [
        format!("http://a.example/={}", a.display()),
        format!("http://b.example/={}", b.display()),
    ];
    let mut job = common::ingested_job(&dir.path().join("job"), &inputs, 16 << 20);
    index_job(&mut job, 2);
    let search = |job: &Job, q: &Query| {
        let view = JobView::open(job.dir()).unwrap();
        Searcher::open(&view).unwrap().search(q, 10, 0).unwrap()
    };
    // Two crawled hosts: grouped by host, best first.
    let r = search(&job, &paper("zebra"));
    assert!(r.host_clusters);
    assert_eq!((r.total, r.groups), (6, 2), "{r:?}");
    let more: Vec<usize> = r.results.iter().map(|x| x.host_more.len()).collect();
    let hosts: BTreeSet<&str> = r.results.iter().map(|x| &x.url[..16]).collect();
    assert_eq!(hosts.len(), 2, "{r:?}");
    assert_eq!(more.iter().sum::<usize>(), 4);
    assert!(r.results.iter().all(|x| x.similar.is_empty()));
    let mut off = paper("zebra");
    off.hosts = HostClustering::Off;
    assert_eq!(search(&job, &off).groups, 6);
    // After dedup: the three copies are one result.
    let opts = DedupOptions {
        algs: vec![Alg::Exact],
        ..DedupOptions::default()
    };
    dedup(&mut job, &opts, &Settings::new(16 << 20)).unwrap();
    let r = search(&job, &off);
    assert_eq!(r.similar_by.as_deref(), Some("exact"));
    assert_eq!(r.groups, 4, "{r:?}");
    let copies = r.results.iter().find(|x| x.url.contains("copy")).unwrap();
    assert_eq!(copies.similar.len(), 2);
    off.collapse_similar = false;
    assert_eq!(search(&job, &off).groups, 6);
    // One crawled host only: auto does not group.
    let r = search(&job, &paper("lorem5"));
    assert!(!r.host_clusters);
}

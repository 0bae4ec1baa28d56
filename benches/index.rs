//! The `index` stage and the searcher on real sites, side by side with
//! tantivy: build throughput, peak RSS against the budget, file sizes and
//! conjunctive query latency.
//!
//! Data: Debian HTML documentation packages, looked for under
//! `$WEBMILL_CORPUS`, `/work/corpus`, `/tmp/corpus` and `target/corpus`
//! (fetch them with `../shared/data/fetch-debian-docs.sh`);
//! `WEBMILL_BENCH_SITES` names them (default `rust-doc,vtk9-doc`, missing
//! ones skipped). Each site is ingested and ranked once (not timed), then:
//!
//! * **build** — `index::build` at each budget of `WEBMILL_BENCH_MEM`
//!   (default `32M,1G`) with 1 and 2 threads, `RUNS` times each (default
//!   3): median wall and CPU seconds, MB of HTML per CPU second, peak RSS
//!   (VmHWM, reset before each run); then the sizes of the lexicon and
//!   the barrels next to the repository and the raw HTML, and where the
//!   bytes go (`webmill inspect --bytes`: every part of the lexicon and
//!   field of the postings blocks), beside tantivy's files by kind.
//! * **tantivy** (0.24, same machine, same run) — the same tokens: each
//!   docID is one document with a `body` field holding every token our
//!   index holds for it (page words, URL words, title words, anchor texts of
//!   links to it) and a `title` field with its title words, both indexed
//!   with frequencies and positions by a whitespace tokenizer (our tokens
//!   are already lowercased words). Its input is a TSV file of those tokens
//!   written once before timing (ours reads the job's compressed token
//!   streams). Indexing at 1 and 2 threads with a 64 MiB arena per thread,
//!   commit, merges finished: median wall, CPU, peak RSS; index size; then
//!   a merge into one segment (timed apart) and its size.
//! * **queries** — `QUERIES` (default 1000) queries of each class: 1, 2
//!   and 3 words, sampled by document frequency (a random posting's
//!   document, then distinct random tokens of that document, so words come
//!   about in proportion to their document frequency), run as AND and (2
//!   and 3 words) OR; and phrases of 2 and 3 consecutive words of a random
//!   posting's page text. Warm cache, one thread: each query run once per
//!   engine to warm, then timed. Ours: `Searcher::search` with the bare
//!   ranking (no snippets, hosts or duplicates) and the default BM25F,
//!   `--match all` for AND and phrases, `--match any` for OR (the
//!   documents holding every word first), pruning on, top 10; tantivy: the
//!   intersection or union of `TermQuery`s, or a `PhraseQuery`, on `body`
//!   with BM25 and `TopDocs(10)` (no `Count`, which would turn off its
//!   block-max WAND), on the merged index. Prints p50/p99 per class and
//!   their ratios, and (untimed, from `retrieve`'s `Work` counts) the
//!   median and p99 per query of the candidates evaluated, of those whose
//!   hit lists were read and of those that entered the top 10: where the
//!   time goes is in those counts. `WEBMILL_BENCH_SLOW=N` prints each
//!   class's N slowest queries with theirs; `WEBMILL_BENCH_TOPS=FILE`
//!   appends every query's top 10 (docID and score bits) to FILE, to check
//!   that a change to the evaluation keeps the results bit-identical.
//!
//! * **PISA** — `benches/pisa_latency.py` (needs `pip install
//!   pyterrier-pisa`; `WEBMILL_BENCH_PISA=0` skips it): PISA indexes the
//!   same tokens (pre-tokenised, no stemming or stopwords) and runs the same
//!   1–3 word queries with BM25 and top 10, block_max_wand for OR and
//!   block_max_ranked_and for AND, each query timed around PISA's C++ call;
//!   prints p50/p99 per class and the ratios to ours and tantivy's.
//!
//! `WEBMILL_BENCH_QUERIES=DIR` writes each class's queries to
//! `DIR/SITE-CLASS.tsv` for `webmill search --queries` (to profile the
//! queries the bench times).
//!
//! `WEBMILL_BENCH_KEEP=DIR` keeps the ranked job, the token file and
//! tantivy's index in `DIR/SITE` for the next run, which then indexes a
//! fresh copy of the job; with `RUNS=0` it times the queries only.
//!
//! `cargo bench --bench index`

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use webmill::container::pagefile::PageFile;
use webmill::index::indexer::{fancy_hits, Tokens};
use webmill::index::sizes::IndexBytes;
use webmill::index::{build, Index, IndexOptions};
use webmill::ingest::records;
use webmill::job::{Job, JobFile, JobView, Settings, Stage, StageContext, StagePaths};
use webmill::resources::{
    format_bytes, parse_bytes, peak_rss, release_freed_memory, reset_peak_rss,
};
use webmill::search::{HitType, Matching, Query, Searcher};

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, r)| r)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn html_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "html" || x == "htm") {
                total += e.metadata().map_or(0, |m| m.len());
            }
        }
    }
    total
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// The bytes of `dir`'s files summed by extension (tantivy's `.idx`
/// doclists and term frequencies, `.pos` positions, `.term` dictionary,
/// `.fieldnorm`, …), largest first.
fn bytes_by_extension(dir: &Path) -> String {
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let (Ok(m), p) = (e.metadata(), e.path()) else {
            continue;
        };
        if m.is_file() {
            let ext = p
                .extension()
                .map_or("(none)".into(), |x| x.to_string_lossy().into_owned());
            *by.entry(ext).or_default() += m.len();
        }
    }
    let mut v: Vec<(String, u64)> = by.into_iter().collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1));
    v.iter()
        .map(|(ext, n)| format!(".{ext} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Every docID's tokens as our index holds them, written as TSV lines
/// `title words \t all words` in docID order (tantivy's input), and the
/// sampled queries.
fn write_tokens(job: &Job, out: &Path, queries: usize) -> Vec<Sampled> {
    let docs = webmill::docs::DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    let mut text: Vec<String> = vec![String::new(); docs.len() as usize];
    webmill::ingest::text::for_each_page_text(
        &job.file(JobFile::Text).unwrap(),
        &job.file(JobFile::PageDoc).unwrap(),
        |_, doc, words| {
            text[doc as usize] = words.to_string();
            Ok(())
        },
    )
    .unwrap();
    let mut anchors: Vec<Vec<(u64, String)>> = vec![Vec::new(); docs.len() as usize];
    PageFile::open(job.file(JobFile::Anchors).unwrap(), &records::ANCHORS)
        .unwrap()
        .for_each(|target, input| {
            let (src, _, t) = records::decode_anchor(input)?;
            anchors[target as usize].push((src, t.to_string()));
            Ok(())
        })
        .unwrap();
    let mut w = BufWriter::new(std::fs::File::create(out).unwrap());
    let mut t = Tokens::default();
    let mut bodies: Vec<Vec<String>> = Vec::new();
    // Per document, how many of its tokens are the page's text (phrases
    // are sampled there, where positions are consecutive in one field).
    let mut texts: Vec<usize> = Vec::new();
    for d in docs.iter() {
        let (id, d) = d.unwrap();
        let list: Vec<(u64, &str)> = anchors[id as usize]
            .iter()
            .map(|(s, x)| (*s, x.as_str()))
            .collect();
        fancy_hits(&d.url, &d.title, &list, &mut t);
        let title: Vec<&str> = t
            .words
            .split(' ')
            .zip(&t.hits)
            .filter(|(_, h)| HitType::of(**h) == HitType::Title)
            .map(|(w, _)| w)
            .collect();
        let mut body = std::mem::take(&mut text[id as usize]);
        if !t.words.is_empty() {
            if !body.is_empty() {
                body.push(' ');
            }
            body.push_str(&t.words);
        }
        writeln!(w, "{}\t{}", title.join(" "), body).unwrap();
        if queries > 0 {
            let page_words = body.len() - t.words.len();
            texts.push(
                body[..page_words]
                    .split(' ')
                    .filter(|x| !x.is_empty())
                    .count(),
            );
            bodies.push(
                body.split(' ')
                    .filter(|x| !x.is_empty())
                    .map(String::from)
                    .collect(),
            );
        }
    }
    w.flush().unwrap();
    // Queries: a random posting's document, then distinct random tokens of it.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let postings: Vec<usize> = bodies
        .iter()
        .enumerate()
        .flat_map(|(i, b)| {
            let distinct: std::collections::BTreeSet<&String> = b.iter().collect();
            std::iter::repeat_n(i, distinct.len())
        })
        .collect();
    let mut out = Vec::new();
    for n in 1..=3 {
        let mut made = 0;
        while made < queries {
            let doc = &bodies[postings[rng.below(postings.len() as u64) as usize]];
            let mut q: Vec<String> = Vec::new();
            for _ in 0..16 {
                let w = &doc[rng.below(doc.len() as u64) as usize];
                if !q.contains(w) {
                    q.push(w.clone());
                }
                if q.len() == n {
                    break;
                }
            }
            if q.len() == n {
                out.push(Sampled {
                    words: q,
                    phrase: false,
                });
                made += 1;
            }
        }
    }
    // Phrases: 2 or 3 consecutive words of a random posting's page text
    // (positions below 4,000: ours stores plain positions up to 4,095).
    for n in 2..=3 {
        let mut made = 0;
        while made < queries {
            let i = postings[rng.below(postings.len() as u64) as usize];
            let len = texts[i].min(4000);
            if len < n {
                continue;
            }
            let at = rng.below((len - n + 1) as u64) as usize;
            out.push(Sampled {
                words: bodies[i][at..at + n].to_vec(),
                phrase: true,
            });
            made += 1;
        }
    }
    out
}

/// A sampled query: words, or a phrase of them.
struct Sampled {
    words: Vec<String>,
    phrase: bool,
}

/// The query classes timed: (name, words, phrase, conjunctive).
const CLASSES: [(&str, usize, bool, bool); 7] = [
    ("1 word", 1, false, true),
    ("2-word AND", 2, false, true),
    ("3-word AND", 3, false, true),
    ("2-word OR", 2, false, false),
    ("3-word OR", 3, false, false),
    ("2-word phrase", 2, true, true),
    ("3-word phrase", 3, true, true),
];

/// tantivy side by side.
mod tv {
    use super::*;
    use tantivy::collector::TopDocs;
    use tantivy::query::{BooleanQuery, PhraseQuery, Query, TermQuery};
    use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
    use tantivy::tokenizer::{TextAnalyzer, WhitespaceTokenizer};
    use tantivy::{doc, Index, IndexWriter, ReloadPolicy, Term};

    pub struct Built {
        pub index: Index,
        pub body: Field,
    }

    fn schema() -> (Schema, Field, Field) {
        let mut b = Schema::builder();
        let opts = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("ws")
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let title = b.add_text_field("title", opts.clone());
        let body = b.add_text_field("body", opts);
        (b.build(), title, body)
    }

    /// Indexes the TSV at `tokens` into `dir` with `threads` threads.
    pub fn build(tokens: &Path, dir: &Path, threads: usize) -> Built {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).unwrap();
        let (schema, title, body) = schema();
        let index = Index::create_in_dir(dir, schema).unwrap();
        index
            .tokenizers()
            .register("ws", TextAnalyzer::from(WhitespaceTokenizer::default()));
        let mut w: IndexWriter = index
            .writer_with_num_threads(threads, threads * (64 << 20))
            .unwrap();
        let f = std::io::BufReader::new(std::fs::File::open(tokens).unwrap());
        for line in f.lines() {
            let line = line.unwrap();
            let (t, b) = line.split_once('\t').unwrap();
            w.add_document(doc!(title => t, body => b)).unwrap();
        }
        w.commit().unwrap();
        w.wait_merging_threads().unwrap();
        Built { index, body }
    }

    /// The index a former run built in `dir`.
    pub fn open(dir: &Path) -> Built {
        let index = Index::open_in_dir(dir).unwrap();
        index
            .tokenizers()
            .register("ws", TextAnalyzer::from(WhitespaceTokenizer::default()));
        let body = index.schema().get_field("body").unwrap();
        Built { index, body }
    }

    /// Merges every segment into one.
    pub fn merge(b: &Built) {
        let ids = b.index.searchable_segment_ids().unwrap();
        let mut w: IndexWriter = b.index.writer_with_num_threads(1, 64 << 20).unwrap();
        if ids.len() > 1 {
            w.merge(&ids).wait().unwrap();
        }
        w.wait_merging_threads().unwrap();
    }

    pub fn segments(b: &Built) -> usize {
        b.index.searchable_segment_ids().unwrap().len()
    }

    /// A function running one query — the words' intersection (`and`),
    /// union (`!and`) or phrase — with BM25, top 10 (no count: it would
    /// turn off tantivy's block-max WAND): the results' length.
    pub fn searcher(b: &Built) -> impl Fn(&[String], bool, bool) -> usize + '_ {
        let reader = b
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .unwrap();
        let body = b.body;
        move |words: &[String], phrase: bool, and: bool| {
            let s = reader.searcher();
            let terms: Vec<Term> = words
                .iter()
                .map(|w| Term::from_field_text(body, w))
                .collect();
            let q: Box<dyn Query> = if phrase {
                Box::new(PhraseQuery::new(terms))
            } else {
                let subs: Vec<Box<dyn Query>> = terms
                    .into_iter()
                    .map(|t| {
                        Box::new(TermQuery::new(t, IndexRecordOption::WithFreqs)) as Box<dyn Query>
                    })
                    .collect();
                Box::new(if and {
                    BooleanQuery::intersection(subs)
                } else {
                    BooleanQuery::union(subs)
                })
            };
            s.search(&q, &TopDocs::with_limit(10)).unwrap().len()
        }
    }
}

fn bench_site(site: &str, html: &Path, runs: usize, mems: &[u64], queries: usize) {
    // `WEBMILL_BENCH_KEEP=DIR`: the ranked job, the token file and
    // tantivy's index stay in DIR/SITE and are reused by the next run (with
    // `RUNS=0`, only the queries are timed).
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = match std::env::var_os("WEBMILL_BENCH_KEEP") {
        Some(d) => Path::new(&d).join(site),
        None => tmp.path().to_path_buf(),
    };
    std::fs::create_dir_all(&root).expect("bench dir");
    let job_dir = root.join("job");
    let ranked = root.join("ranked-job");
    if !ranked.join("ok").exists() {
        let _ = std::fs::remove_dir_all(&ranked);
        drop(common::ranked_site_job(&ranked, site, html));
        std::fs::write(ranked.join("ok"), b"").expect("marker");
    }
    // Each run indexes a fresh copy of the ranked job.
    let _ = std::fs::remove_dir_all(&job_dir);
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&ranked)
        .arg(&job_dir)
        .status()
        .expect("cp");
    assert!(copied.success(), "copying the ranked job");
    let mut job = Job::open(&job_dir, false).expect("ranked job");
    let stage = Index {
        opts: IndexOptions::default(),
    };
    let inputs: BTreeMap<JobFile, PathBuf> = stage
        .inputs()
        .into_iter()
        .map(|f| (f, job.file(f).unwrap()))
        .collect();
    let html_total = html_bytes(html);
    let repo = std::fs::metadata(job.file(JobFile::Repository).unwrap()).map_or(0, |m| m.len());
    let text = std::fs::metadata(job.file(JobFile::Text).unwrap()).map_or(0, |m| m.len());
    println!(
        "== {site}: {} of HTML, repository {}, token streams {}",
        format_bytes(html_total),
        format_bytes(repo),
        format_bytes(text)
    );
    let mut summary = None;
    let mut breakdown = None;
    let mut ours_cpu = [0.0f64; 2];
    let mut ours_wall = [0.0f64; 2];
    for &mem in mems.iter().filter(|_| runs > 0) {
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            let (mut wall, mut cpu, mut rss) = (Vec::new(), Vec::new(), Vec::new());
            for r in 0..runs {
                let out = tmp.path().join(format!("out-{mem}-{threads}-{r}"));
                let work = tmp.path().join(format!("tmp-{mem}-{threads}-{r}"));
                release_freed_memory();
                reset_peak_rss();
                let (t, c) = (Instant::now(), cpu_seconds());
                let paths = StagePaths {
                    inputs: inputs.clone(),
                    outputs: out.clone(),
                    tmp: work.clone(),
                };
                let cx =
                    StageContext::detached(&stage, &Settings::new(mem), paths).expect("context");
                let s = pool
                    .install(|| build(&cx, &IndexOptions::default()))
                    .expect("build");
                wall.push(t.elapsed().as_secs_f64());
                cpu.push(cpu_seconds() - c);
                rss.push(peak_rss().unwrap_or(0) as f64);
                summary = Some(s);
                if threads == 1 && r == 0 && mem == *mems.last().unwrap_or(&mem) {
                    breakdown = Some(IndexBytes::of_dir(&out.join("index")).expect("index bytes"));
                }
                let _ = std::fs::remove_dir_all(&out);
                let _ = std::fs::remove_dir_all(&work);
            }
            let (w, c, m) = (median(&mut wall), median(&mut cpu), median(&mut rss));
            if mem == *mems.last().unwrap_or(&mem) {
                ours_cpu[threads - 1] = c;
                ours_wall[threads - 1] = w;
            }
            println!(
                "webmill index --mem {:>9}  threads {threads}: wall {w:.2} s, cpu {c:.2} s, {:.0} MB of HTML per CPU s, peak RSS {}",
                format_bytes(mem),
                html_total as f64 / 1e6 / c,
                format_bytes(m as u64)
            );
        }
    }
    let mut ours_size = 0;
    if let Some(b) = breakdown {
        println!(
            "where webmill's bytes go (`webmill inspect --bytes`):\n{}",
            b.table()
        );
    }
    if let Some(s) = summary {
        println!(
            "words {}, postings {} ({} with a title or anchor hit: the short doclists), hits {} ({} plain, {} fancy)",
            s.words, s.postings.0, s.postings.1, s.hits, s.full_hits.0, s.full_hits.1
        );
        ours_size = s.lexicon_bytes + s.full_bytes;
        println!(
            "sizes: lexicon {} (term dictionary {}), barrels {}; together {} = {:.1}% of the HTML, {:.2}× the repository",
            format_bytes(s.lexicon_bytes),
            format_bytes(s.fst_bytes),
            format_bytes(s.full_bytes),
            format_bytes(ours_size),
            100.0 * ours_size as f64 / html_total as f64,
            ours_size as f64 / repo as f64
        );
        println!(
            "barrels: {:.2} bytes per hit (the paper's hits alone: 2), {:.2} bytes per posting",
            s.full_bytes as f64 / s.hits as f64,
            s.full_bytes as f64 / s.postings.0 as f64,
        );
    }

    // tantivy, from the same tokens.
    let tokens = root.join("tokens.tsv");
    let qs = write_tokens(&job, &tokens, queries);
    let mut tantivy_cpu = [0.0f64; 2];
    let mut tantivy_wall = [0.0f64; 2];
    let mut built = None;
    for threads in [1, 2].into_iter().filter(|_| runs > 0) {
        let (mut wall, mut cpu, mut rss) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..runs {
            let dir = root.join(format!("tantivy-{threads}-{r}"));
            release_freed_memory();
            reset_peak_rss();
            let (t, c) = (Instant::now(), cpu_seconds());
            let b = tv::build(&tokens, &dir, threads);
            wall.push(t.elapsed().as_secs_f64());
            cpu.push(cpu_seconds() - c);
            rss.push(peak_rss().unwrap_or(0) as f64);
            if threads == 1 && r == 0 {
                built = Some((b, dir));
            } else {
                drop(b);
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
        let (w, c, m) = (median(&mut wall), median(&mut cpu), median(&mut rss));
        tantivy_cpu[threads - 1] = c;
        tantivy_wall[threads - 1] = w;
        println!(
            "tantivy                     threads {threads}: wall {w:.2} s, cpu {c:.2} s, {:.0} MB of HTML per CPU s, peak RSS {}",
            html_total as f64 / 1e6 / c,
            format_bytes(m as u64)
        );
    }
    let kept = root.join("tantivy-1-0");
    let Some((b, dir)) = built.or_else(|| {
        kept.join("meta.json")
            .exists()
            .then(|| (tv::open(&kept), kept.clone()))
    }) else {
        return;
    };
    let (segments, size) = (tv::segments(&b), dir_bytes(&dir));
    let t = Instant::now();
    tv::merge(&b);
    let merge_s = t.elapsed().as_secs_f64();
    let merged = dir_bytes(&dir);
    println!(
        "tantivy's merged index by file kind: {}",
        bytes_by_extension(&dir)
    );
    println!(
        "tantivy size: {} in {segments} segments; merged into one ({merge_s:.2} s): {}",
        format_bytes(size),
        format_bytes(merged)
    );
    if ours_size > 0 {
        println!(
        "ratios webmill/tantivy: build CPU {:.2} (1 thread) {:.2} (2 threads), wall {:.2} / {:.2}; size {:.2} (vs merged {:.2})",
        ours_cpu[0] / tantivy_cpu[0],
        ours_cpu[1] / tantivy_cpu[1],
        ours_wall[0] / tantivy_wall[0],
        ours_wall[1] / tantivy_wall[1],
        ours_size as f64 / size as f64,
        ours_size as f64 / merged as f64
    );
    }
    if queries == 0 {
        return;
    }

    // Queries, one thread, warm.
    let s = Settings::new(1 << 30);
    webmill::index::build_index(&mut job, &webmill::index::IndexOptions::default(), &s)
        .expect("index");
    let view = JobView::open(&job_dir).unwrap();
    let searcher = Searcher::open(&view).unwrap();
    let tsearch = tv::searcher(&b);
    if let Some(dir) = std::env::var_os("WEBMILL_BENCH_QUERIES") {
        write_query_files(Path::new(&dir), site, &qs);
    }
    let query_of = |q: &Sampled, and: bool| {
        let mut query = Query::parse(&query_text(q, and)).ranking_only();
        query.matching = if and { Matching::All } else { Matching::Any };
        query
    };
    let run_ours = |q: &Sampled, and: bool| {
        let r = searcher.search(&query_of(q, and), 10, 0).unwrap();
        (r.results.len(), r.total_estimated)
    };
    // Warm: every query once, both engines.
    for q in &qs {
        for and in [true, false] {
            run_ours(q, and);
            tsearch(&q.words, q.phrase, and);
        }
    }
    let mut figures: Vec<(&str, f64, f64, f64, f64)> = Vec::new();
    for (name, n, phrase, and) in CLASSES {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let (mut shorter, mut estimated) = (0, 0);
        for q in qs
            .iter()
            .filter(|q| q.words.len() == n && q.phrase == phrase)
        {
            let t = Instant::now();
            let (len, est) = run_ours(q, and);
            ours.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let tlen = tsearch(&q.words, phrase, and);
            theirs.push(t.elapsed().as_secs_f64() * 1e3);
            shorter += usize::from(len != tlen);
            estimated += usize::from(est);
        }
        work_report(&searcher, name, &qs, n, phrase, &ours, &|q| {
            query_of(q, and)
        });
        let (o50, t50) = (percentile(&mut ours, 0.5), percentile(&mut theirs, 0.5));
        let (o99, t99) = (percentile(&mut ours, 0.99), percentile(&mut theirs, 0.99));
        println!(
            "{name:<14} ({} queries): webmill p50 {o50:.3} ms p99 {o99:.3} ms; tantivy p50 {t50:.3} ms p99 {t99:.3} ms; ratios p50 {:.2} p99 {:.2}; top-10 lengths differing {shorter}; totals estimated {estimated}",
            ours.len(),
            o50 / t50,
            o99 / t99,
        );
        figures.push((name, o50, o99, t50, t99));
    }
    pisa_side(&root, &tokens, &qs, &figures);
}

/// A sampled query as its text: a phrase quoted, words as they are
/// (`and`) or joined by `OR`.
fn query_text(q: &Sampled, and: bool) -> String {
    if q.phrase {
        format!("\"{}\"", q.words.join(" "))
    } else if and {
        q.words.join(" ")
    } else {
        q.words.join(" OR ")
    }
}

/// `WEBMILL_BENCH_QUERIES=DIR`: each class's queries as
/// `DIR/SITE-CLASS.tsv` (`id<TAB>query`, what `webmill search --queries`
/// reads; run the AND and phrase files with `--match all`), so that a
/// profile of the command line (callgrind) sees the queries the bench
/// times. Sampling the distinct words of a page instead, as a script
/// might, gives mostly rare words with short hit lists: a query mix whose
/// costs are not the bench's.
fn write_query_files(dir: &Path, site: &str, qs: &[Sampled]) {
    std::fs::create_dir_all(dir).expect("queries dir");
    for (name, n, phrase, and) in CLASSES {
        let slug = name.to_lowercase().replace(' ', "-");
        let path = dir.join(format!("{site}-{slug}.tsv"));
        let mut f = BufWriter::new(std::fs::File::create(&path).expect("queries file"));
        let class = qs
            .iter()
            .filter(|q| q.words.len() == n && q.phrase == phrase);
        for (i, q) in class.enumerate() {
            writeln!(f, "{}\t{}", i + 1, query_text(q, and)).expect("queries file");
        }
        f.flush().expect("queries file");
    }
    println!("queries written to {}", dir.display());
}

/// What a class's queries cost in candidates (untimed, after the timed
/// runs): the median and p99 of the candidates evaluated and of those whose
/// hits were read, per query; with `WEBMILL_BENCH_SLOW=N` the N slowest
/// queries with theirs; with `WEBMILL_BENCH_TOPS=FILE` every query's top 10
/// (docID, score bits) appended to FILE, to compare two builds' results.
fn work_report(
    searcher: &Searcher,
    class: &str,
    qs: &[Sampled],
    n: usize,
    phrase: bool,
    ms: &[f64],
    query_of: &dyn Fn(&Sampled) -> Query,
) {
    let class_qs: Vec<&Sampled> = qs
        .iter()
        .filter(|q| q.words.len() == n && q.phrase == phrase)
        .collect();
    let mut tops = std::env::var_os("WEBMILL_BENCH_TOPS").map(|f| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(f)
            .expect("tops file")
    });
    let mut works = Vec::new();
    for q in &class_qs {
        let query = query_of(q);
        let r = webmill::search::retrieve::retrieve(searcher, &query, 10).expect("retrieve");
        if let Some(f) = &mut tops {
            let top: Vec<String> = r
                .matches
                .iter()
                .map(|m| format!("{}:{:x}", m.doc, m.score.to_bits()))
                .collect();
            writeln!(f, "{class}\t{}\t{}", q.words.join(" "), top.join(" ")).expect("tops");
        }
        works.push(r.work);
    }
    let mut cands: Vec<f64> = works.iter().map(|w| w.candidates as f64).collect();
    let mut placed: Vec<f64> = works.iter().map(|w| w.placed as f64).collect();
    let mut entered: Vec<f64> = works.iter().map(|w| w.entered as f64).collect();
    println!(
        "{class:<14} per query: candidates median {:.0} p99 {:.0}; hits read for median {:.0} p99 {:.0}; entered the top 10 median {:.0} p99 {:.0}",
        percentile(&mut cands.clone(), 0.5),
        percentile(&mut cands, 0.99),
        percentile(&mut placed.clone(), 0.5),
        percentile(&mut placed, 0.99),
        percentile(&mut entered.clone(), 0.5),
        percentile(&mut entered, 0.99),
    );
    let slow: usize = std::env::var("WEBMILL_BENCH_SLOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut order: Vec<usize> = (0..ms.len().min(works.len())).collect();
    order.sort_by(|&a, &b| ms[b].total_cmp(&ms[a]));
    for &i in order.iter().take(slow) {
        let w = &works[i];
        println!(
            "  slow {:.3} ms {:?}: candidates {} hits read for {} entered {}; hits {} postings {} block skips {}",
            ms[i],
            class_qs[i].words,
            w.candidates,
            w.placed,
            w.entered,
            w.hits,
            w.postings,
            w.block_skips
        );
    }
}

/// PISA (`benches/pisa_latency.py`, the `pyterrier-pisa` package) on the
/// same tokens and queries: block_max_wand for the OR classes,
/// block_max_ranked_and for AND, BM25, top 10, one thread, warm. Skipped
/// with a printed reason when the package is absent or
/// `WEBMILL_BENCH_PISA=0`. `figures` are this run's (class, webmill p50,
/// p99, tantivy p50, p99) in ms.
fn pisa_side(root: &Path, tokens: &Path, qs: &[Sampled], figures: &[(&str, f64, f64, f64, f64)]) {
    if std::env::var("WEBMILL_BENCH_PISA").is_ok_and(|v| v == "0") {
        return;
    }
    let queries = root.join("queries.tsv");
    let mut w = BufWriter::new(std::fs::File::create(&queries).unwrap());
    for (name, n, phrase, _) in CLASSES.iter().filter(|c| !c.2) {
        for q in qs
            .iter()
            .filter(|q| q.words.len() == *n && q.phrase == *phrase)
        {
            writeln!(w, "{name}\t{}", q.words.join(" ")).unwrap();
        }
    }
    w.flush().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/pisa_latency.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg("--tokens")
        .arg(tokens)
        .arg("--queries")
        .arg(&queries)
        .arg("--work")
        .arg(root.join("pisa"))
        .stderr(std::process::Stdio::null())
        .output();
    let lines: Vec<serde_json::Value> = match &out {
        Ok(o) if o.status.success() => o
            .stdout
            .as_slice()
            .lines()
            .map_while(Result::ok)
            .filter_map(|l| serde_json::from_str(&l).ok())
            .collect(),
        _ => Vec::new(),
    };
    if lines.is_empty() {
        println!("PISA: SKIPPED (python3 benches/pisa_latency.py gave no figures; pip install pyterrier-pisa)");
        return;
    }
    let ms = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    for v in &lines {
        match v["pisa"].as_str().unwrap_or("") {
            "index" => println!(
                "PISA index: {} (compressed lists, block maxima, lexicons; no positions), built in {}",
                format_bytes(v["bytes"].as_u64().unwrap_or(0)),
                v["build_s"]
                    .as_f64()
                    .map_or("(reused)".into(), |s| format!("{s:.1} s by pyterrier's Python inverter"))
            ),
            "call" => println!(
                "PISA call overhead from Python (a query of no word): p50 {:.4} ms",
                ms(v, "p50_ms")
            ),
            class => {
                let Some((_, o50, o99, t50, t99)) = figures.iter().find(|f| f.0 == class) else {
                    continue;
                };
                let (p50, p99) = (ms(v, "p50_ms"), ms(v, "p99_ms"));
                println!(
                    "{class:<14} PISA {}: p50 {p50:.3} ms p99 {p99:.3} ms; webmill/PISA p50 {:.2} p99 {:.2}; tantivy/PISA p50 {:.2} p99 {:.2}",
                    v["algorithm"].as_str().unwrap_or("?"),
                    o50 / p50,
                    o99 / p99,
                    t50 / p50,
                    t99 / p99,
                );
            }
        }
    }
}

fn main() {
    let sites = std::env::var("WEBMILL_BENCH_SITES").unwrap_or_else(|_| "rust-doc,vtk9-doc".into());
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let queries: usize = std::env::var("QUERIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mems: Vec<u64> = std::env::var("WEBMILL_BENCH_MEM")
        .unwrap_or_else(|_| "32M,1G".into())
        .split(',')
        .map(|m| parse_bytes(m).expect("a size"))
        .collect();
    for site in sites.split(',') {
        match common::site_html(site) {
            Some(html) => bench_site(site, &html, runs, &mems, queries),
            None => eprintln!(
                "SKIPPED: {site} not found (fetch it with ../shared/data/fetch-debian-docs.sh)"
            ),
        }
    }
}

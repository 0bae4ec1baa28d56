//! `webmill search`: query a job's index (Brin & Page's searcher).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use webmill::search::{
    Bm25Weights, Explanation, HostClustering, Matching, Query, Ranking, RankingWeights, Results,
    SearchResult, Searcher, Snippet, DEFAULT_CUTOFF, DEFAULT_K, MAX_QUERY_WORDS,
};

use webmill::error::IoContext;

use super::{flush, stdout};
use crate::Global;
use webmill::job::JobView;

/// Search a job's index, in the query language people use.
///
/// QUERY LANGUAGE
///   vacuum full          documents with every word, then documents with some
///                        of them, rarer words weighing more (--match all: only
///                        documents with every word)
///   "write ahead log"    a phrase: the words consecutive, in order, in one field
///                        (in a page's text, within its first 4,095 words: hits
///                        keep 12-bit positions, later ones match as words only)
///   -word  -"a phrase"   no document with the word, or the phrase
///   backup OR restore    either; OR (in capitals) joins words, phrases or
///                        parenthesised groups: (point in time) OR pitr
///   site:HOST            pages of the host or its subdomains (site:example.org
///                        takes www.example.org)
///
/// Words are cut as pages were (lowercased, split at punctuation; `std::vec` is
/// the phrase "std vec"); a query keeps its first 32 words. Malformed operators
/// are read as text, never refused: an unclosed quote runs to the end, a lone
/// `-` or `)` is ignored, an OR with nothing on a side is the word "or".
///
/// Ranking: --ranking paper is Brin & Page's (hit types, count-weights,
/// proximity, PageRank); bm25 and bm25f (fields: title, anchor, URL, large
/// type, body) add the paper's proximity and PageRank. With --match all and
/// --ranking paper, a query of plain words is the paper's evaluation: short
/// barrels (title and anchor hits) first, the full barrels when they hold fewer
/// than --offset + -k matches, stopping at --cutoff. BM25 and BM25F skip the
/// documents that cannot enter the top results (dynamic pruning; the results
/// are the same as without it): the count is then an estimate, shown as
/// "about N (least–most)" with the bounds it surely lies within. Documents
/// satisfying the whole query (a question's function words — how, do, I, a,
/// of, my, … — optional) rank before those with only some of its words,
/// whatever their scores; a line says where those start. Results show the URL, the
/// title (for pages never crawled, the anchor text of links to them), the
/// score, a snippet with the query words marked, `+N more from this host` and,
/// when a dedup stage ran, `+N similar`. Reads the job without a lock.
///
/// Batch: --queries FILE runs one query a line (`id<TAB>query`, or a query
/// whose id is its line number), printing a TREC run with --trec (`qid Q0 URL
/// rank score webmill`) or one JSON object a line with --json (`{"qid",
/// "seconds", "total", "results"}`, seconds the query's own time).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (indexed with `webmill index`)
    job: PathBuf,
    /// The query, e.g. "vec push" (quote it to pass several words)
    #[arg(required_unless_present = "queries")]
    query: Option<String>,
    /// Run every query of FILE (one a line: `id<TAB>query` or a query)
    #[arg(long, value_name = "FILE", conflicts_with = "query")]
    queries: Option<PathBuf>,
    /// With --queries: print a TREC run (`qid Q0 URL rank score webmill`)
    #[arg(long, requires = "queries", conflicts_with = "json")]
    trec: bool,
    /// Results to show (0: only count the matches)
    #[arg(short = 'k', long = "k", default_value_t = DEFAULT_K, value_name = "N")]
    k: usize,
    /// Results to skip first (the second page of 10 is --offset 10)
    #[arg(long, default_value_t = 0, value_name = "N")]
    offset: usize,
    /// Which documents match: all = those satisfying the whole query; any =
    /// those first, then documents with some of its words
    #[arg(long = "match", value_enum, default_value = "any", value_name = "HOW")]
    matching: MatchArg,
    /// The ranking function
    #[arg(long, value_enum, default_value = "bm25f", value_name = "NAME")]
    ranking: RankingArg,
    /// The paper's conjunctive evaluation stops after this many matching
    /// documents (its response-time limit; the top results are then the best
    /// of these); ranked retrieval after scoring this many (a safety valve:
    /// the results say "cut off" when it fired)
    #[arg(long, default_value_t = DEFAULT_CUTOFF as u64, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    cutoff: u64,
    /// Print {"total", "results": [{"docid", "url", "title", "score",
    /// "snippet", "host_more", "similar"}, …]} (plus the marks, the docIDs
    /// behind the counts, and the explanation with --explain) instead of
    /// text; with --queries, one object a line with "qid" and "seconds"
    #[arg(long)]
    json: bool,
    /// Show per result the numbers behind its score: hit counts, weights,
    /// proximity and PageRank (paper), or per word idf, field frequencies and
    /// lengths (bm25, bm25f)
    #[arg(long)]
    explain: bool,
    /// Group results by host: auto = when the crawled pages among the matches
    /// come from more than one host
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    host_clusters: When,
    /// The paper ranking's weights as JSON (`type_weight`, `knee`, `cap`,
    /// `type_prox_weight`, `pagerank_weight`; see `--explain`), instead of
    /// the defaults
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
    /// BM25's and BM25F's parameters as JSON (`k1`, `b`, `field_weight`,
    /// `field_b`, `proximity_weight`, `proximity_k`, `pagerank_weight`).
    /// The index's per-block score bounds assume the default `k1`, `b`,
    /// `field_weight` and `field_b`: other values lose block-level pruning
    /// (results stay exact, queries are slower)
    #[arg(long, value_name = "FILE")]
    bm25_weights: Option<PathBuf>,
    /// Do not collapse near-duplicates (dedup clusters) into one result
    #[arg(long)]
    no_collapse: bool,
    /// Score every candidate (bm25, bm25f): the same results, slower; the
    /// totals are then always exact rather than "about N (least–most)"
    #[arg(long)]
    no_prune: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum When {
    Auto,
    Always,
    Never,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum MatchArg {
    All,
    Any,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum RankingArg {
    Paper,
    Bm25,
    Bm25f,
}

/// The settings every query of this run shares.
struct Settings {
    matching: Matching,
    ranking: Ranking,
    cutoff: usize,
    explain: bool,
    collapse: bool,
    prune: bool,
    hosts: HostClustering,
    weights: Option<RankingWeights>,
    bm25: Option<Bm25Weights>,
}

impl Settings {
    fn of(args: &Args) -> anyhow::Result<Settings> {
        let json_file = |f: &PathBuf, what: &str| -> anyhow::Result<String> {
            let text = std::fs::read_to_string(f).at(f)?;
            let _ = what;
            Ok(text)
        };
        let weights = match &args.weights {
            Some(f) => Some(
                serde_json::from_str(&json_file(f, "weights")?).map_err(|e| {
                    webmill::Error::usage_at(f, format!("not ranking weights: {e}"))
                })?,
            ),
            None => None,
        };
        let bm25 = match &args.bm25_weights {
            Some(f) => Some(
                serde_json::from_str(&json_file(f, "bm25")?)
                    .map_err(|e| webmill::Error::usage_at(f, format!("not BM25 weights: {e}")))?,
            ),
            None => None,
        };
        Ok(Settings {
            matching: match args.matching {
                MatchArg::All => Matching::All,
                MatchArg::Any => Matching::Any,
            },
            ranking: match args.ranking {
                RankingArg::Paper => Ranking::Paper,
                RankingArg::Bm25 => Ranking::Bm25,
                RankingArg::Bm25f => Ranking::Bm25f,
            },
            cutoff: usize::try_from(args.cutoff).unwrap_or(usize::MAX),
            explain: args.explain,
            collapse: !args.no_collapse,
            prune: !args.no_prune,
            hosts: match args.host_clusters {
                When::Auto => HostClustering::Auto,
                When::Always => HostClustering::On,
                When::Never => HostClustering::Off,
            },
            weights,
            bm25,
        })
    }

    fn query(&self, text: &str) -> Query {
        let mut q = Query::parse(text);
        q.matching = self.matching;
        q.ranking = self.ranking;
        q.cutoff = self.cutoff;
        q.explain = self.explain;
        q.collapse_similar = self.collapse;
        q.prune = self.prune;
        q.hosts = self.hosts;
        if let Some(w) = &self.weights {
            q.weights = w.clone();
        }
        if let Some(w) = &self.bm25 {
            q.bm25 = w.clone();
        }
        q
    }
}

pub fn run(args: Args, _g: &Global) -> anyhow::Result<ExitCode> {
    let settings = Settings::of(&args)?;
    if let Some(file) = &args.queries {
        // One generation of the job for the whole batch: every file is
        // opened (the barrels too) before the first query.
        let searcher = JobView::read_whole(&args.job, |job| {
            let s = Searcher::open(job)?;
            s.open_barrels()?;
            Ok(s)
        })?;
        return batch(&args, &settings, &searcher, file);
    }
    let query = settings.query(args.query.as_deref().unwrap_or_default());
    // One generation of the job: a search that a writer's publication
    // overtook (its lexicon from one, a barrel or the clusters from
    // another) is done again on the job as it is now.
    let (r, seconds) = JobView::read_whole(&args.job, |job| {
        let t = std::time::Instant::now();
        let r = Searcher::open(job)?.search(&query, args.k, args.offset)?;
        Ok((r, t.elapsed().as_secs_f64()))
    })?;
    let mut out = stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &to_json(&r))?;
        writeln!(out)?;
    } else {
        print_text(&mut out, &r, args.offset, seconds)?;
    }
    flush(out)?;
    Ok(ExitCode::SUCCESS)
}

/// The queries of a batch file: (id, query) per non-empty line; a line
/// without a tab has its line number as id.
fn read_queries(file: &PathBuf) -> anyhow::Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(file).at(file)?;
    Ok(text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| match l.split_once('\t') {
            Some((id, q)) => (id.trim().to_string(), q.to_string()),
            None => ((i + 1).to_string(), l.to_string()),
        })
        .collect())
}

/// `--queries`: every query of the file, as a TREC run, JSON lines or text.
fn batch(
    args: &Args,
    settings: &Settings,
    searcher: &Searcher,
    file: &PathBuf,
) -> anyhow::Result<ExitCode> {
    let queries = read_queries(file)?;
    let mut out = stdout();
    for (qid, text) in &queries {
        let mut q = settings.query(text);
        if args.trec {
            q = q.ranking_only();
        }
        let t = std::time::Instant::now();
        let r = searcher.search(&q, args.k, args.offset)?;
        let seconds = t.elapsed().as_secs_f64();
        if args.trec {
            for (i, x) in r.results.iter().enumerate() {
                writeln!(
                    out,
                    "{qid} Q0 {} {} {} webmill",
                    x.url,
                    args.offset + i + 1,
                    x.score
                )?;
            }
        } else if args.json {
            let mut v = to_json(&r);
            v["qid"] = json!(qid);
            v["seconds"] = json!(seconds);
            serde_json::to_writer(&mut out, &v)?;
            writeln!(out)?;
        } else {
            writeln!(out, "## {qid}\t{text}")?;
            print_text(&mut out, &r, args.offset, seconds)?;
            writeln!(out)?;
        }
    }
    flush(out)?;
    Ok(ExitCode::SUCCESS)
}

fn to_json(r: &Results) -> serde_json::Value {
    let results: Vec<serde_json::Value> = r
        .results
        .iter()
        .map(|x| {
            let mut v = json!({
                "docid": x.docid,
                "url": x.url,
                "title": x.title,
                "score": x.score,
                "snippet": x.snippet.as_ref().map_or("", |s| s.text.as_str()),
                "host_more": x.host_more.len(),
                "similar": x.similar.len(),
                "snippet_marks": x.snippet.as_ref().map(|s| &s.marks),
                "host_more_docids": x.host_more,
                "similar_docids": x.similar,
                "title_from_anchor": x.title_from_anchor,
                "ir": x.ir,
                "pagerank": x.pagerank,
                "complete": x.complete,
            });
            if let Some(e) = &x.explain {
                v["explain"] = serde_json::to_value(e).unwrap_or_default();
            }
            v
        })
        .collect();
    json!({
        "total": r.total,
        "complete": r.complete,
        "total_estimated": r.total_estimated,
        "total_bounds": [r.total_bounds.0, r.total_bounds.1],
        "complete_bounds": [r.complete_bounds.0, r.complete_bounds.1],
        "matching": r.matching,
        "ranking": r.ranking,
        "notes": r.notes,
        "groups": r.groups,
        "pass": r.pass,
        "cut_off": r.cut_off,
        "timed_out": r.timed_out,
        "empty": r.empty,
        "words": r.words,
        "ignored_words": r.ignored_words,
        "host_clusters": r.host_clusters,
        "similar_by": r.similar_by,
        "results": results,
    })
}

/// The snippet with its marks in bold (terminal) or `*word*`.
fn render(s: &Snippet, tty: bool) -> String {
    let (on, off) = if tty {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("*", "*")
    };
    let mut out = String::with_capacity(s.text.len() + 8 * s.marks.len());
    let mut at = 0;
    for &(a, b) in &s.marks {
        out.push_str(&s.text[at..a]);
        out.push_str(on);
        out.push_str(&s.text[a..b]);
        out.push_str(off);
        at = b;
    }
    out.push_str(&s.text[at..]);
    out
}

/// The line before the first result holding only some of the query's
/// words (they rank after every complete match, whatever their scores).
pub const PARTIAL_MATCHES: &str =
    "— pages with only some of the words (ranked after those with all of them) —";

fn print_text(
    out: &mut impl Write,
    r: &Results,
    offset: usize,
    seconds: f64,
) -> anyhow::Result<()> {
    let tty = std::io::stdout().is_terminal();
    if r.ignored_words > 0 {
        writeln!(
            out,
            "(searching the first {MAX_QUERY_WORDS} words of the query; {} more ignored)",
            r.ignored_words
        )?;
    }
    if let Some(why) = &r.empty {
        writeln!(out, "No results: {why}.")?;
        return Ok(());
    }
    let pass = match r.pass {
        Some(webmill::search::Pass::Full) => "full doclists",
        _ => "short doclists",
    };
    writeln!(
        out,
        "{} matching documents{} ({pass}), {} results; showing {}–{} ({:.1} ms)",
        if r.total_estimated {
            crate::cmd::about_within(r.total, r.total_bounds.0, r.total_bounds.1)
        } else {
            crate::cmd::thousands(r.total)
        },
        if r.cut_off { " (cut off)" } else { "" },
        crate::cmd::thousands(r.groups),
        crate::cmd::thousands((offset as u64 + 1).min(r.groups)),
        crate::cmd::thousands((offset + r.results.len()) as u64),
        seconds * 1e3
    )?;
    for (i, x) in r.results.iter().enumerate() {
        // Complete matches come first whatever their scores: say where
        // the others start, so the order of the scores reads right.
        let after_complete = match i {
            0 => r.complete > 0,
            _ => r.results[i - 1].complete,
        };
        if !x.complete && after_complete {
            writeln!(out, "\n{PARTIAL_MATCHES}")?;
        }
        print_result(out, offset + i + 1, x, r, tty)?;
    }
    Ok(())
}

fn print_result(
    out: &mut impl Write,
    n: usize,
    x: &SearchResult,
    r: &Results,
    tty: bool,
) -> anyhow::Result<()> {
    writeln!(out)?;
    let title = if x.title.is_empty() {
        "(no title)"
    } else {
        &x.title
    };
    let anchor = if x.title_from_anchor {
        " [anchor text; not crawled]"
    } else {
        ""
    };
    writeln!(out, "{n}. {title}{anchor}")?;
    writeln!(out, "   {}  [doc {}, score {:.2}]", x.url, x.docid, x.score)?;
    if let Some(s) = &x.snippet {
        if !s.text.is_empty() {
            writeln!(out, "   {}", render(s, tty))?;
        }
    }
    let mut more = Vec::new();
    if !x.host_more.is_empty() {
        more.push(format!("+{} more from this host", x.host_more.len()));
    }
    if !x.similar.is_empty() {
        more.push(format!(
            "+{} similar ({})",
            x.similar.len(),
            r.similar_by.as_deref().unwrap_or("dedup")
        ));
    }
    if !more.is_empty() {
        writeln!(out, "   {}", more.join(", "))?;
    }
    match &x.explain {
        Some(Explanation::Paper(e)) => {
            for w in &e.words {
                let parts: Vec<String> = w
                    .types
                    .iter()
                    .map(|(t, c, cw, tw, v)| format!("{}×{c} cw {cw:.2} · {tw} = {v:.2}", t.name()))
                    .collect();
                writeln!(out, "   word {:?}: {}", w.word, parts.join("; "))?;
            }
            for p in &e.proximity {
                writeln!(
                    out,
                    "   proximity {} bin {}: {} sets, cw {:.2} · {} = {:.2}",
                    p.ty.name(),
                    p.bin,
                    p.count,
                    p.count_weight,
                    p.weight,
                    p.contribution
                )?;
            }
            match e.pagerank {
                Some(pr) => writeln!(
                    out,
                    "   IR {:.2} × (1 + w · ln(1 + N · PageRank {pr:.3e})) = {:.2} × {:.3} = {:.2}",
                    e.ir, e.ir, e.pagerank_factor, e.score
                )?,
                None => writeln!(out, "   IR {:.2} (no PageRank) = {:.2}", e.ir, e.score)?,
            }
        }
        Some(Explanation::Bm25(e)) => {
            if let Some(l) = &e.lengths {
                let names = webmill::search::bm25::FIELD_NAMES;
                let parts: Vec<String> = names
                    .iter()
                    .zip(l)
                    .zip(e.avg_lengths.unwrap_or_default())
                    .map(|((n, l), a)| format!("{n} {l} (avg {a:.1})"))
                    .collect();
                writeln!(out, "   lengths: {}", parts.join(", "))?;
            }
            for w in &e.words {
                let tf: Vec<String> = webmill::search::bm25::FIELD_NAMES
                    .iter()
                    .zip(w.tf)
                    .filter(|(_, c)| *c > 0)
                    .map(|(n, c)| format!("{n}×{c}"))
                    .collect();
                writeln!(
                    out,
                    "   word {:?}: df {} idf {:.3}; {}; tf {:.2} → {:.3}",
                    w.word,
                    w.df,
                    w.idf,
                    tf.join(" "),
                    w.pseudo_tf,
                    w.score
                )?;
            }
            let pr = match e.pagerank {
                Some(pr) => format!(
                    " × (1 + w · ln(1 + N · PageRank {pr:.3e})) {:.3}",
                    e.pagerank_factor
                ),
                None => String::new(),
            };
            writeln!(
                out,
                "   {} {:.3} + proximity {:.3} (paper's {:.1}){pr} = {:.3}",
                e.ranking, e.text, e.proximity, e.proximity_raw, e.score
            )?;
        }
        None => {}
    }
    Ok(())
}

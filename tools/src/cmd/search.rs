//! `webmill search`: query a job's index (Brin & Page's searcher).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use webmill::search::{
    HostClustering, Query, Results, SearchResult, Searcher, Snippet, DEFAULT_CUTOFF, DEFAULT_K,
    MAX_QUERY_WORDS,
};

use webmill::error::IoContext;

use super::{flush, stdout};
use crate::Global;
use webmill::job::JobView;

/// Search a job's index: the documents containing every query word, ranked by
/// their hits (type, count, proximity) and PageRank, clustered by host.
///
/// The query is cut into words as pages were (lowercased, split at
/// punctuation); words past the 32nd are ignored (and counted). The short
/// barrels (title and anchor hits) are searched first; when they hold fewer
/// than --offset + -k matches the full barrels are. Results show the URL, the
/// title (for pages never crawled, the anchor text of links to them), the
/// score, a snippet with the query words marked, `+N more from this host`
/// and, when a dedup stage ran, `+N similar`. Reads the job without a lock.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (indexed with `webmill index`)
    job: PathBuf,
    /// The query, e.g. "vec push" (quote it to pass several words)
    query: String,
    /// Results to show (0: only count the matches)
    #[arg(short = 'k', long = "k", default_value_t = DEFAULT_K, value_name = "N")]
    k: usize,
    /// Results to skip first (the second page of 10 is --offset 10)
    #[arg(long, default_value_t = 0, value_name = "N")]
    offset: usize,
    /// Stop matching after this many matching documents (the paper's
    /// response-time limit; the top results are then the best of these)
    #[arg(long, default_value_t = DEFAULT_CUTOFF as u64, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    cutoff: u64,
    /// Print {"total", "results": [{"docid", "url", "title", "score",
    /// "snippet", "host_more", "similar"}, …]} (plus the marks, the docIDs
    /// behind the counts, and the explanation with --explain) instead of text
    #[arg(long)]
    json: bool,
    /// Show per result the hit counts per type, their count-weights, the
    /// proximity bins, the IR score, the PageRank and how they combine
    #[arg(long)]
    explain: bool,
    /// Group results by host: auto = when the crawled pages among the matches
    /// come from more than one host
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    host_clusters: When,
    /// The ranking weights as JSON (`type_weight`, `knee`, `cap`,
    /// `type_prox_weight`, `pagerank_weight`; see `--explain`), instead of
    /// the defaults
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
    /// Do not collapse near-duplicates (dedup clusters) into one result
    #[arg(long)]
    no_collapse: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum When {
    Auto,
    Always,
    Never,
}

pub fn run(args: Args, _g: &Global) -> anyhow::Result<ExitCode> {
    let mut query = Query::parse(&args.query);
    query.cutoff = usize::try_from(args.cutoff).unwrap_or(usize::MAX);
    query.explain = args.explain;
    query.collapse_similar = !args.no_collapse;
    query.hosts = match args.host_clusters {
        When::Auto => HostClustering::Auto,
        When::Always => HostClustering::On,
        When::Never => HostClustering::Off,
    };
    if let Some(f) = &args.weights {
        let text = std::fs::read_to_string(f).at(f)?;
        query.weights = serde_json::from_str(&text)
            .map_err(|e| webmill::Error::usage_at(f, format!("not ranking weights: {e}")))?;
    }
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
            });
            if let Some(e) = &x.explain {
                v["explain"] = serde_json::to_value(e).unwrap_or_default();
            }
            v
        })
        .collect();
    json!({
        "total": r.total,
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
        Some(webmill::search::Pass::Full) => "full barrels",
        _ => "short barrels",
    };
    writeln!(
        out,
        "{} matching documents{} ({pass}), {} results; showing {}–{} ({:.1} ms)",
        r.total,
        if r.cut_off { " (cut off)" } else { "" },
        r.groups,
        (offset + 1).min(r.groups as usize),
        offset + r.results.len(),
        seconds * 1e3
    )?;
    for (i, x) in r.results.iter().enumerate() {
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
    if let Some(e) = &x.explain {
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
    Ok(())
}

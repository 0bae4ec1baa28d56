//! `webmill layout`: Henzinger's index-server layout, simulated on a job.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::analysis::layout::{
    read_queries, sample_queries, simulate, split_docs, DocFrequencyCost, Load, SearcherCost,
    Split, SubindexCost,
};
use webmill::ingest::text::for_each_page_text;
use webmill::job::JobFile;
use webmill::search::Searcher;

use crate::Global;

/// Place an index split into subindices on machines with Henzinger's layout
/// algorithm with imaginary index loads, schedule a query log greedily, and
/// compare the maximum machine load with the lower bound and two baselines
/// (Henzinger, Combinatorial Algorithms for Web Search Engines, §4).
///
/// The docs are split into --subindices docID ranges of equal numbers of
/// crawled docs (--split host: no host cut in two). Every query sends one
/// request to every subindex; what a request costs is measured by running
/// the searcher on that subindex alone: the query's conjunctive evaluation
/// (short doclists, then full ones when they give too few matches) over the
/// subindex's docID range, its load the postings it decoded plus the hits it
/// read (--load work; deterministic) or its time (--load time). --load df
/// takes the proxy of jobs without an index: the sum of the query words'
/// document frequencies in the subindex, from the token streams. Without
/// --queries, a log is made from the job's vocabulary (1–3 words of randomly
/// chosen pages).
///
/// The layout: each subindex carries an imaginary load of 1; each machine
/// takes n div m whole subindices, and the rest are poured over the
/// machines to fill each to n/m, a subindex split between two machines being
/// stored on both. The greedy scheduler sends each request to the least
/// loaded machine holding its subindex. Henzinger: ML* ≤ 2(1+α)·Opt + 2β,
/// α the spread of the subindices' total loads, β the largest request; the
/// report checks it against the lower bound max(Σ loads / m, β) ≤ Opt.
/// Baselines: no duplication (each subindex once, heaviest first on the
/// least loaded machine) and hand duplication (the same plus copies of the
/// heaviest subindices, as many as the imaginary layout makes).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (after `webmill ingest`)
    job: PathBuf,
    /// Machines
    #[arg(long, value_name = "M")]
    machines: usize,
    /// Subindices per machine [default: subindices div machines + 2, the
    /// paper's assumption]
    #[arg(long, value_name = "S")]
    slots: Option<usize>,
    /// Subindices [default: 4 × machines + 1]
    #[arg(long, value_name = "N")]
    subindices: Option<usize>,
    /// How docs are cut into subindices: range (equal crawled docs) or host
    /// (the same, no host split)
    #[arg(long, default_value = "range", value_parser = ["range", "host"])]
    split: String,
    /// Query log: one query a line, words separated by spaces
    #[arg(long, value_name = "FILE")]
    queries: Option<PathBuf>,
    /// Queries generated from the vocabulary when --queries is not given
    #[arg(long, value_name = "Q", default_value_t = 1000)]
    query_count: usize,
    /// Seed of the generated queries
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A request's load: work = postings decoded + hits read by the searcher
    /// on the subindex (needs `webmill index`); time = the searcher's time
    /// on it in µs, median of 3 (not reproducible); df = the words'
    /// document frequencies in it (no index needed); auto = work when the
    /// job has an index, else df
    #[arg(long, value_name = "HOW", default_value = "auto", value_parser = ["auto", "work", "time", "df"])]
    load: String,
    /// Matches each request wants, as a search for the first K results
    #[arg(long, value_name = "K", default_value_t = 10)]
    results: usize,
    /// Print one JSON object: max_load, lower_bound, no_duplication_max_load,
    /// hand_duplication_max_load, alpha, beta, bound, … and the layout
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let job = g.open_view(&args.job)?;
    let (text, pagedoc) = (job.file(JobFile::Text)?, job.file(JobFile::PageDoc)?);
    let m = args.machines;
    let n = args.subindices.unwrap_or(4 * m + 1);
    let slots = args.slots.unwrap_or(n / m.max(1) + 2);
    let split = if args.split == "host" {
        Split::Host
    } else {
        Split::Range
    };
    let texts = |f: &mut dyn FnMut(u64, &str) -> webmill::Result<()>| {
        for_each_page_text(&text, &pagedoc, |_, doc, words| f(doc, words))
    };
    let queries = match &args.queries {
        Some(p) => read_queries(p)?,
        None => sample_queries(args.query_count, args.seed, texts)?,
    };
    let cuts = split_docs(&job.file(JobFile::Docs)?, n, split)?;
    let how = match args.load.as_str() {
        "auto" if job.has(JobFile::Lexicon) => "work",
        "auto" => {
            if !g.quiet {
                eprintln!(
                    "webmill layout: the job has no index, so loads are the words' document frequencies (--load df); run `webmill index` for the searcher's own"
                );
            }
            "df"
        }
        how => how,
    };
    let cost: Box<dyn SubindexCost> = match how {
        "df" => Box::new(DocFrequencyCost::measure(&cuts, &queries, texts)?),
        how => {
            if !job.has(JobFile::Lexicon) {
                anyhow::bail!(
                    "{}: --load {how} runs the searcher, and the job has no index; run `webmill index {}` first, or use --load df",
                    args.job.display(),
                    args.job.display()
                );
            }
            let searcher = Searcher::open(&job)?;
            let load = if how == "time" {
                Load::Time
            } else {
                Load::Work
            };
            Box::new(SearcherCost::measure(
                &searcher,
                &cuts,
                &queries,
                args.results,
                load,
                g.mem(),
            )?)
        }
    };
    let report = simulate(cost.as_ref(), &queries, m, slots, g.mem())?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.table());
    }
    Ok(ExitCode::SUCCESS)
}

//! `webmill dedup-report`: Henzinger's near-duplicate report.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::analysis::dedup_report::{
    dedup_report, plot_svg, table, AlgPairs, ReportOptions, DEFAULT_JUDGE_SHINGLE,
    DEFAULT_JUDGE_THRESHOLD, DEFAULT_SAMPLE_PER_BIN,
};
use webmill::dedup::Alg;
use webmill::ingest::text::for_each_page_text;
use webmill::job::{JobFile, StageId};

use crate::Global;

/// Henzinger's near-duplicate report for the finished `dedup` algorithms of a
/// job, side by side (Alg. B vs Alg. C as in her comparison, and min-hash):
/// the distribution of the number of near-duplicates N(u) of a page, with its
/// same-host and cross-host parts, on log-log axes (--plot); and the
/// precision of each algorithm on a labelled sample — up to --sample pairs
/// drawn per bin of the similarity the algorithm recorded, judged correct
/// when the exact Jaccard coefficient of their --shingle-word shingle sets
/// reaches --threshold — overall, on same-host pairs and on cross-host pairs
/// (weighted by the pairs in each bin).
///
/// Out of core: hosts are attached to pairs by two sort–merge joins with the
/// doc table and N(u) counted by a sort of the pairs' ends; the sampled
/// pages' words are read in one pass over the token streams.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (after `webmill dedup`)
    job: PathBuf,
    /// Algorithms to report [default: every finished one except exact]
    #[arg(long, value_name = "ALG")]
    alg: Vec<String>,
    /// Pairs judged per similarity bin and algorithm
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SAMPLE_PER_BIN)]
    sample: usize,
    /// Shingle length (words) of the judge
    #[arg(long, value_name = "K", default_value_t = DEFAULT_JUDGE_SHINGLE)]
    shingle: usize,
    /// Exact Jaccard coefficient a judged pair must reach to be correct
    #[arg(long, value_name = "T", default_value_t = DEFAULT_JUDGE_THRESHOLD)]
    threshold: f64,
    /// Seed of the sample
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print the reports as JSON (one object per algorithm in an array)
    #[arg(long)]
    json: bool,
    /// Write the SVG log-log plot of N(u) to FILE
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let job = g.open_view(&args.job)?;
    let algs: Vec<Alg> = if args.alg.is_empty() {
        Alg::ALL
            .into_iter()
            .filter(|&a| a != Alg::Exact && job.published(StageId::Dedup(a)).is_some())
            .collect()
    } else {
        args.alg
            .iter()
            .map(|a| Alg::parse(a))
            .collect::<webmill::Result<_>>()?
    };
    if algs.is_empty() {
        anyhow::bail!("no finished near-duplicate stage in this job: run `webmill dedup` first");
    }
    let mut inputs = Vec::new();
    for a in &algs {
        inputs.push(AlgPairs {
            name: a.name().to_string(),
            pairs: job.file(JobFile::Pairs(*a))?,
        });
    }
    let opts = ReportOptions {
        sample_per_bin: args.sample,
        judge_shingle: args.shingle,
        judge_threshold: args.threshold,
        seed: args.seed,
    };
    let tmp = g.scratch_dir()?;
    let (text, pagedoc) = (job.file(JobFile::Text)?, job.file(JobFile::PageDoc)?);
    let reports = dedup_report(
        &inputs,
        &job.file(JobFile::Docs)?,
        |f| for_each_page_text(&text, &pagedoc, |_, doc, words| f(doc, words)),
        &tmp,
        g.mem(),
        &g.reporter(),
        &opts,
    )?;
    let _ = std::fs::remove_dir_all(&tmp);
    if let Some(path) = &args.plot {
        let title = format!("Near-duplicates per page in {}", super::job_name(&args.job));
        super::write_plot(path, plot_svg(&reports, &title), g.quiet())?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        print!("{}", table(&reports, &opts));
    }
    Ok(ExitCode::SUCCESS)
}

//! `webmill overlap`: the relative size of two crawls by capture–recapture.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::analysis::overlap::{overlap, Crawl, OverlapOptions, DEFAULT_SAMPLE};
use webmill::job::JobFile;

use crate::Global;

/// Estimate |A|/|B| for two crawls by capture–recapture (IIR §19.5), and
/// count the truth.
///
/// Samples --sample pages uniformly from each crawl's URL table (crawled
/// pages only: the table's link targets were never fetched), tests each for
/// membership in the other crawl by a sort–merge join, and estimates
/// |A|/|B| = y/x, x being the share of A's sample found in B and y that of
/// B's sample in A, with a 95% confidence interval (delta method on ln y/x,
/// sampling without replacement). The same merged pass counts both crawls and
/// their intersection, so the exact ratio is printed beside the estimate.
///
/// Biases IIR lists and what becomes of them here:
///
/// * Sampling that is not uniform (random queries favour long and
///   highly-ranked pages, random IP addresses small hosts, random walks
///   well-linked pages): removed; the sample is uniform over each table.
///
/// * The checking phase (the other engine mishandles the test query, refuses
///   it, times out): removed; membership is equality of URL fingerprints.
///
/// * Independence of the two collections: not needed for the ratio
///   (x·|A| = |A∩B| = y·|B| for any two sets), only for extrapolating to
///   the Web's size, which this tool does not do.
///
/// * Duplicates (one content under several URLs): not removed; a page B
///   holds under another URL counts as missing. `webmill dedup` shows how
///   many there are.
///
/// * Different URL normalisation: partly removed; both crawls' URLs went
///   through webmill's normalisation (scheme and host case, default ports,
///   fragments, percent-encoding), but www./bare hosts, http/https,
///   index.html vs / and session ids still make different pages.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// First crawl's job directory (after `webmill ingest`)
    job_a: PathBuf,
    /// Second crawl's job directory
    job_b: PathBuf,
    /// Pages sampled from each crawl (all of a smaller crawl)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SAMPLE)]
    sample: u64,
    /// Seed of the samples
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
    /// Print one JSON object: sample, estimate, ci_low, ci_high, exact, and
    /// the counts behind them
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let crawl = |dir: &PathBuf| -> anyhow::Result<Crawl> {
        let job = g.open_view(dir)?;
        Ok(Crawl {
            urls: job.file(JobFile::Urls)?,
            docs: job.file(JobFile::Docs)?,
        })
    };
    let a = crawl(&args.job_a)?;
    let b = crawl(&args.job_b)?;
    let opts = OverlapOptions {
        sample: args.sample,
        seed: args.seed,
    };
    let r = overlap(&a, &b, g.mem(), g.reporter().as_ref(), &opts)?;
    if args.json {
        let mut v = serde_json::to_value(&r)?;
        v["sample"] = serde_json::json!(args.sample);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", r.table());
    }
    Ok(ExitCode::SUCCESS)
}

//! `webmill stats`: figures of a job, its degree distributions and their
//! fitted power-law exponents, and optionally their plot.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Global;

/// Print a job's figures: nodes, crawled, arcs, dangling, edges_bytes, …
///
/// Besides the figures recorded by the stages, reads both edge files once to
/// get the in- and out-degree distributions (a histogram, not a per-node
/// array) and fits a discrete power law to each tail by maximum likelihood,
/// choosing k_min as the degree whose tail is closest to its fitted law in
/// Kolmogorov–Smirnov distance, over every observed degree (Clauset, Shalizi
/// and Newman 2009): in_degree_exponent, out_degree_exponent, their standard
/// errors, k_min and tail sizes. Each fit is then tested by CSN's bootstrap:
/// --bootstrap N synthetic data sets drawn from the fitted model and fitted
/// the same way; the p-value is the share whose KS distance is at least the
/// data's, and a power law is ruled out (…_power_law_plausible = false) when
/// p ≤ 0.1. IIR §19.2.1's in-degree exponent, 2.1, is printed beside the
/// fit. --plot FILE.svg draws both distributions (the fraction of nodes with
/// degree ≥ k, where P(k) ∝ k^-α is a line of slope 1 − α) on log-log axes
/// with the fitted laws and IIR's; nothing is written into the job.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory
    job: PathBuf,
    /// Print one JSON object instead of a table
    #[arg(long)]
    json: bool,
    /// Write an SVG log-log plot of the in- and out-degree distributions
    /// (complementary CDFs) with their fitted power laws to FILE
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Skip the degree distributions and exponents (they take one pass over
    /// both edge files)
    #[arg(long, conflicts_with = "plot")]
    no_degrees: bool,
    /// Synthetic data sets of the goodness-of-fit test (0: no test; the
    /// p-value is good to about ±1/(2√N))
    #[arg(long, value_name = "N", default_value_t = webmill::stats::DEFAULT_BOOTSTRAP)]
    bootstrap: u32,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let job = g.open_view(&args.job)?;
    let mut stats = webmill::stats::graph_stats(&job)?;
    if !args.no_degrees {
        let dist = webmill::stats::degree_distributions(&job, args.bootstrap)?;
        stats.extend(dist.figures());
        if let Some(path) = &args.plot {
            let title = format!("Degree distributions of {}", super::job_name(&args.job));
            super::write_plot(path, dist.plot_svg(&title))?;
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
    } else {
        let width = stats.keys().map(|k| k.len()).max().unwrap_or(0);
        for (k, v) in &stats {
            println!("{k:width$}  {v}");
        }
        if let (Some(a), Some(k)) = (
            stats.get("in_degree_exponent").and_then(|v| v.as_f64()),
            stats.get("in_degree_kmin").and_then(|v| v.as_u64()),
        ) {
            let verdict = match stats
                .get("in_degree_power_law_plausible")
                .and_then(|v| v.as_bool())
            {
                Some(true) => "a power law is plausible (p > 0.1)",
                Some(false) => "a power law is ruled out (p ≤ 0.1)",
                None => "not tested (--bootstrap 0)",
            };
            println!(
                "\nin-degree tail k ≥ {k}: α = {a} (IIR §19.2.1: {}); {verdict}",
                webmill::stats::IIR_IN_DEGREE_EXPONENT
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

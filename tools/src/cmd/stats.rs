//! `webmill stats`: figures of a job, its degree distributions and their
//! fitted power-law exponents, and optionally their plot.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::Global;

/// Print a job's figures: nodes, crawled, arcs, dangling, edges_bytes, …
///
/// Besides the figures recorded by the stages, reads both edge files once to
/// get the in- and out-degree distributions (a histogram, not a per-node
/// array) and fits a discrete power law to each tail by maximum likelihood,
/// choosing k_min by the Kolmogorov–Smirnov distance (Clauset, Shalizi and
/// Newman 2009): in_degree_exponent, out_degree_exponent, their standard
/// errors, k_min and tail sizes. --plot FILE.svg draws both distributions (the
/// fraction of nodes with degree ≥ k, where P(k) ∝ k^-α is a line of slope
/// 1 − α) on log-log axes with the fitted laws; nothing is written into the
/// job.
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
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let job = g.open_view(&args.job)?;
    let mut stats = webmill::stats::graph_stats(&job)?;
    if !args.no_degrees {
        let dist = webmill::stats::degree_distributions(&job)?;
        stats.extend(dist.figures());
        if let Some(path) = &args.plot {
            let name = args.job.file_name().map_or_else(
                || args.job.display().to_string(),
                |n| n.to_string_lossy().into(),
            );
            let svg = dist.plot_svg(&format!("Degree distributions of {name}"));
            std::fs::write(path, svg)
                .with_context(|| format!("cannot write the plot to {}", path.display()))?;
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
    } else {
        let width = stats.keys().map(|k| k.len()).max().unwrap_or(0);
        for (k, v) in &stats {
            println!("{k:width$}  {v}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

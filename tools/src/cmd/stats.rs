//! `webmill stats`: figures of a job.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Global;

/// Print a job's figures: nodes, crawled, arcs, dangling, edges_bytes, …
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory
    job: PathBuf,
    /// Print one JSON object instead of a table
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let job = g.open_job(&args.job, false)?;
    let stats = webmill::stats::graph_stats(&job)?;
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

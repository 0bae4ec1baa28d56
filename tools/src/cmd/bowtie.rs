//! `webmill bowtie`: the SCCs and the bow-tie of a job's link graph.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::analysis::bowtie::{bow_tie, BowTieOptions};
use webmill::job::JobFile;

use crate::Global;

/// The strongly connected components and the bow-tie of the link graph (IIR
/// §19.2, Broder et al. 2000): the largest SCC; IN, the pages that reach it;
/// OUT, the pages reached from it; tubes from IN to OUT outside it; tendrils
/// hanging from IN or into OUT; and the disconnected rest; with the number
/// of SCCs and their size distribution.
///
/// Semi-external: about 5 bytes per node in memory (seven bit sets and a
/// 32-bit label), refused when that exceeds --mem; the arcs are streamed from
/// edges.wm and edges-t.wm by forward–backward search from a pivot for the
/// giant component, then trimming and colouring for the rest. Checkpoints go
/// to the job's temporary directory: an interrupted run resumes from the last
/// one. Nothing is written into the job.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (after `webmill import-graph` or `webmill ingest`)
    job: PathBuf,
    /// Print one JSON object: nodes, scc_count, largest_scc, in, out,
    /// tendrils, tubes, disconnected, scc_sizes ([[size, count], …]), passes
    #[arg(long)]
    json: bool,
    /// Write an SVG log-log plot of the SCC size distribution to FILE
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    // The lock keeps two runs from sharing the checkpoints.
    let job = g.open_job(&args.job, false)?;
    let tmp = job.tmp_root().join("bowtie");
    let started = std::time::Instant::now();
    let reporter = g.reporter();
    let result = bow_tie(
        &job.file(JobFile::Edges)?,
        &job.file(JobFile::EdgesT)?,
        &tmp,
        g.mem(),
        reporter.as_ref(),
        &BowTieOptions::default(),
    )?;
    let seconds = started.elapsed().as_secs_f64();
    webmill::sort::remove_sort_dir(&tmp)?;
    let _ = std::fs::remove_dir(job.tmp_root());
    if let Some(path) = &args.plot {
        let title = format!("SCC sizes of {}", super::job_name(&args.job));
        super::write_plot(path, result.plot_svg(&title), g.quiet())?;
    }
    let peak = webmill::resources::peak_rss().unwrap_or(0);
    if args.json {
        let mut v = result.json();
        v["seconds"] = serde_json::json!((seconds * 1000.0).round() / 1000.0);
        v["peak_rss"] = serde_json::json!(peak);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", result.table());
        println!(
            "time         {seconds:.2} s, peak RSS {}",
            webmill::resources::format_bytes(peak)
        );
    }
    Ok(ExitCode::SUCCESS)
}

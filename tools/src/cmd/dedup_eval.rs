//! `webmill dedup-eval`: measured detection rates of a near-duplicate run next
//! to the algorithm's theoretical curve.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::dedup::eval::{evaluate, EvalOptions, DEFAULT_SAMPLE};
use webmill::dedup::Alg;

use crate::Global;

/// Evaluate a finished `webmill dedup --alg ALG` run against exact similarities.
///
/// Takes a deterministic sample of the job's docs (the N whose xxh3 of the
/// docID is smallest; all docs when there are fewer), computes the exact
/// similarity of every pair of the sample — Jaccard of the k-word shingle sets
/// for broder and minhash (k from the stage's parameters), cosine of the
/// term-frequency vectors for charikar, equality for exact — and bins the
/// pairs by it. Per bin: pairs, pairs in the stage's pair file, the detection
/// rate and the theoretical probability averaged over the bin (minhash: band
/// candidate AND threshold, their exact joint probability). Then recall on
/// pairs with similarity ≥ 0.9 and precision (reported pairs at or above the
/// target similarity).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (after `webmill dedup`)
    job: PathBuf,
    /// The algorithm whose run is evaluated: exact, broder, charikar, minhash
    #[arg(long, value_name = "ALG", value_parser = parse_alg)]
    alg: Alg,
    /// Docs in the sample (all pairs of the sample are compared: N²/2 pairs)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SAMPLE)]
    sample: usize,
    /// Precision target: reported pairs at or above this true similarity count
    /// as correct [default: the minhash threshold; broder 0.8; charikar 0.98;
    /// exact 1]
    #[arg(long, value_name = "S")]
    target: Option<f64>,
    /// Print the report as JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Write an SVG of the measured detection rate per bin against the curve
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

fn parse_alg(s: &str) -> Result<Alg, String> {
    Alg::parse(s).map_err(|e| e.to_string())
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let job = g.open_view(&args.job)?;
    let opts = EvalOptions {
        alg: args.alg,
        sample: args.sample,
        target: args.target,
    };
    let report = evaluate(&job, &opts)?;
    if let Some(path) = &args.plot {
        webmill::publish::write_atomic(path, report.plot_svg().as_bytes())?;
    }
    let mut out = super::stdout();
    use std::io::Write;
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", report.table())?;
    }
    super::flush(out)?;
    Ok(ExitCode::SUCCESS)
}

//! `webmill stats`: figures of a job, its degree distributions and their
//! fitted power-law exponents, and optionally their plot.

use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use webmill::job::figure::grouped;
use webmill::job::Figure;
use webmill::stats::{round, DegreeDistributions, IIR_IN_DEGREE_EXPONENT};

use super::thousands;

use crate::Global;

/// Print a job's figures, grouped and in units (--json: one object with every
/// figure under its machine name: nodes, crawled, arcs, dangling, edges_bytes, …).
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
    // The figures of one generation of the job (read again if a writer
    // replaced a file meanwhile).
    let (figures, degrees) = webmill::job::JobView::read_whole(&args.job, |job| {
        let figures = webmill::stats::graph_stats(job)?;
        let degrees = (!args.no_degrees)
            .then(|| webmill::stats::degree_distributions(job, args.bootstrap))
            .transpose()?;
        Ok((figures, degrees))
    })?;
    let mut json = webmill::stats::figures_json(&figures);
    if let Some(dist) = &degrees {
        json.extend(dist.figures());
        if let Some(path) = &args.plot {
            let title = format!("Degree distributions of {}", super::job_name(&args.job));
            super::write_plot(path, dist.plot_svg(&title), g.quiet())?;
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print!("{}", describe(figures, degrees.as_ref()));
    }
    Ok(ExitCode::SUCCESS)
}

/// The figures grouped and labelled in their units, the degree distributions
/// after the link graph.
fn describe(figures: Vec<Figure>, degrees: Option<&DegreeDistributions>) -> String {
    let mut o = String::new();
    for (group, figures) in grouped(figures) {
        if group == "Resources" {
            if let Some(d) = degrees {
                describe_degrees(&mut o, d);
            }
        }
        let _ = writeln!(o, "{group}");
        for f in figures {
            let _ = writeln!(o, "  {:<26} {}", f.label, f.amount.show());
        }
        o.push('\n');
    }
    o
}

/// One line per direction: the fitted exponent and the verdict on it.
fn describe_degrees(o: &mut String, d: &DegreeDistributions) {
    let _ = writeln!(
        o,
        "Degree distributions (power-law tails, Clauset–Shalizi–Newman)"
    );
    for (dir, fit, gof) in [
        ("in", &d.in_fit, &d.in_gof),
        ("out", &d.out_fit, &d.out_gof),
    ] {
        let line = match fit {
            None => "too few nodes in the tail to fit".to_string(),
            Some(f) => {
                let verdict = match gof {
                    Some(g) if g.plausible() => format!(
                        "plausible (p = {} > 0.1, {} bootstraps)",
                        round(g.p_value, 3),
                        g.replicates
                    ),
                    Some(g) => format!(
                        "ruled out (p = {} ≤ 0.1, {} bootstraps)",
                        round(g.p_value, 3),
                        g.replicates
                    ),
                    None => "not tested (--bootstrap 0)".into(),
                };
                format!(
                    "α = {} ± {} for k ≥ {} ({} nodes in the tail, KS distance {}); a power law is {verdict}",
                    round(f.alpha, 3),
                    round(f.alpha_error, 4),
                    thousands(f.k_min),
                    thousands(f.tail_nodes),
                    round(f.ks, 4),
                )
            }
        };
        let _ = writeln!(o, "  {:<26} {line}", format!("{dir}-degree"));
    }
    let _ = writeln!(
        o,
        "  {:<26} in-degree α = {IIR_IN_DEGREE_EXPONENT} (IIR §19.2.1)",
        "for comparison"
    );
    o.push('\n');
}

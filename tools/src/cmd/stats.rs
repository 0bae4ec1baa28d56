//! `webmill stats`: figures of a job, its degree distributions and their
//! fitted power-law exponents, and optionally their plot.

use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Map, Value};
use webmill::resources::format_bytes;

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
    let (stats, dist) = webmill::job::JobView::read_whole(&args.job, |job| {
        let stats = webmill::stats::graph_stats(job)?;
        let dist = (!args.no_degrees)
            .then(|| webmill::stats::degree_distributions(job, args.bootstrap))
            .transpose()?;
        Ok((stats, dist))
    })?;
    let mut stats = stats;
    if let Some(dist) = dist {
        stats.extend(dist.figures());
        if let Some(path) = &args.plot {
            let title = format!("Degree distributions of {}", super::job_name(&args.job));
            super::write_plot(path, dist.plot_svg(&title), g.quiet())?;
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
    } else {
        print!("{}", describe(&stats));
    }
    Ok(ExitCode::SUCCESS)
}

/// How a figure is shown.
#[derive(Clone, Copy)]
enum Unit {
    Count,
    Bytes,
    Seconds,
    Plain,
}

/// A line of the text output: the figure's key, its label, its unit.
type Line = (&'static str, &'static str, Unit);

/// The groups of the text output: title, then its lines.
const GROUPS: &[(&str, &[Line])] = &[
    (
        "Input",
        &[
            ("input_bytes", "input read", Unit::Bytes),
            ("records", "WARC records", Unit::Plain),
            ("files", "HTML files", Unit::Count),
            ("other_files", "other files (not read)", Unit::Count),
            ("input_arcs", "arc lines", Unit::Count),
            ("skipped", "skipped records or lines", Unit::Count),
        ],
    ),
    (
        "Pages",
        &[
            ("pages", "pages", Unit::Count),
            ("html_bytes", "HTML", Unit::Bytes),
            ("not_html", "responses not HTML", Unit::Count),
            ("error_status", "error statuses", Unit::Count),
            ("redirects", "redirects", Unit::Count),
            ("duplicate_captures", "duplicate captures", Unit::Count),
            ("links", "links", Unit::Count),
            ("dropped_links", "links dropped", Unit::Count),
            ("anchors", "anchors", Unit::Count),
            ("hosts", "hosts", Unit::Count),
        ],
    ),
    (
        "Link graph",
        &[
            ("graph_stage", "made by", Unit::Plain),
            ("nodes", "docs (nodes)", Unit::Count),
            ("crawled", "crawled", Unit::Count),
            ("arcs", "arcs", Unit::Count),
            ("self_loops", "self-loops dropped", Unit::Count),
            ("duplicate_arcs", "duplicate arcs", Unit::Count),
            ("dangling", "dangling (no out-links)", Unit::Count),
            ("no_in_links", "no in-links", Unit::Count),
            ("max_out_degree", "largest out-degree", Unit::Count),
            ("max_in_degree", "largest in-degree", Unit::Count),
            ("edges_bytes", "edges.wm", Unit::Bytes),
            ("transposed_bytes", "edges-t.wm", Unit::Bytes),
            ("bits_per_arc", "bits per arc", Unit::Plain),
        ],
    ),
];

/// One figure as shown.
fn show(v: &Value, unit: Unit) -> String {
    match (unit, v.as_u64(), v.as_f64()) {
        (Unit::Count, Some(n), _) => thousands(n),
        (Unit::Bytes, Some(n), _) => format!("{} ({} bytes)", format_bytes(n), thousands(n)),
        (Unit::Seconds, _, Some(x)) => format!("{x:.1} s"),
        _ => match v {
            Value::String(s) => s.clone(),
            Value::Object(m) if m.is_empty() => "none".into(),
            Value::Object(m) => m
                .iter()
                .map(|(k, v)| format!("{} {k}", show(v, Unit::Count)))
                .collect::<Vec<_>>()
                .join(", "),
            Value::Null => "—".into(),
            v => v.to_string(),
        },
    }
}

/// The figures grouped, labelled and in units; figures the groups do not
/// name are listed last under their machine names.
fn describe(stats: &Map<String, Value>) -> String {
    let mut o = String::new();
    let mut shown: Vec<&str> = Vec::new();
    for (title, lines) in GROUPS {
        let present: Vec<_> = lines
            .iter()
            .filter(|(k, ..)| stats.contains_key(*k))
            .collect();
        if present.is_empty() {
            continue;
        }
        let _ = writeln!(o, "{title}");
        for (key, label, unit) in present {
            let _ = writeln!(o, "  {label:<26} {}", show(&stats[*key], *unit));
            shown.push(key);
        }
        o.push('\n');
    }
    // Degree distributions: one line per direction.
    if stats.contains_key("in_degree_distinct") {
        let _ = writeln!(
            o,
            "Degree distributions (power-law tails, Clauset–Shalizi–Newman)"
        );
        for dir in ["in", "out"] {
            let get = |k: &str| {
                stats
                    .get(&format!("{dir}_degree_{k}"))
                    .cloned()
                    .unwrap_or(Value::Null)
            };
            let line = match get("exponent").as_f64() {
                None => "too few nodes in the tail to fit".to_string(),
                Some(a) => {
                    let verdict = match get("power_law_plausible").as_bool() {
                        Some(true) => format!(
                            "plausible (p = {} > 0.1, {} bootstraps)",
                            get("p_value"),
                            get("bootstrap")
                        ),
                        Some(false) => format!(
                            "ruled out (p = {} ≤ 0.1, {} bootstraps)",
                            get("p_value"),
                            get("bootstrap")
                        ),
                        None => "not tested (--bootstrap 0)".into(),
                    };
                    format!(
                        "α = {a} ± {} for k ≥ {} ({} nodes in the tail, KS distance {}); a power law is {verdict}",
                        get("exponent_error"),
                        show(&get("kmin"), Unit::Count),
                        show(&get("tail_nodes"), Unit::Count),
                        get("ks"),
                    )
                }
            };
            let _ = writeln!(o, "  {:<26} {line}", format!("{dir}-degree"));
            shown.extend(
                [
                    "exponent",
                    "exponent_error",
                    "kmin",
                    "tail_nodes",
                    "ks",
                    "distinct",
                    "p_value",
                    "bootstrap",
                    "power_law_plausible",
                ]
                .map(|k| {
                    stats
                        .get_key_value(&format!("{dir}_degree_{k}"))
                        .map_or("", |(k, _)| k.as_str())
                }),
            );
        }
        if let Some(iir) = stats.get("iir_in_degree_exponent") {
            let _ = writeln!(
                o,
                "  {:<26} in-degree α = {iir} (IIR §19.2.1)",
                "for comparison"
            );
            shown.push("iir_in_degree_exponent");
        }
        o.push('\n');
    }
    // Time and memory of the stages.
    let resources: Vec<(&String, &Value)> = stats
        .iter()
        .filter(|(k, _)| k.ends_with("_seconds") || k.ends_with("_peak_rss"))
        .collect();
    if !resources.is_empty() {
        let _ = writeln!(o, "Resources");
        for (k, v) in resources {
            let (stage, unit, what) = match k.strip_suffix("_seconds") {
                Some(s) => (s, Unit::Seconds, "time"),
                None => (k.trim_end_matches("_peak_rss"), Unit::Bytes, "peak RSS"),
            };
            let _ = writeln!(o, "  {:<26} {}", format!("{stage} {what}"), show(v, unit));
            shown.push(k);
        }
        o.push('\n');
    }
    let rest: Vec<(&String, &Value)> = stats
        .iter()
        .filter(|(k, _)| !shown.contains(&k.as_str()))
        .collect();
    if !rest.is_empty() {
        let _ = writeln!(o, "Other");
        for (k, v) in rest {
            let _ = writeln!(o, "  {k:<26} {}", show(v, Unit::Plain));
        }
    }
    o
}

//! `webmill import-graph`: edge lists → doc table + forward and transposed edges.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::graph::import::{import_graph, GraphFormat, ImportOptions, ImportOutcome};
use webmill::job::Settings;
use webmill::resources::format_bytes;

use super::thousands;
use crate::Global;

/// Import a hyperlink edge list as a link graph.
///
/// Nodes get docIDs in the numeric order of their ids (a graph numbered 0..n
/// keeps its numbering); each node's original id becomes its name (the url
/// column of exports). Arcs are sorted externally into a deduplicated,
/// gap-coded forward edge file and a transposed one, within --mem. Re-running
/// on the same job skips a finished import or resumes an interrupted one.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (created if missing)
    #[arg(long, value_name = "JOB")]
    out: PathBuf,
    /// Input format: snap = one `src<TAB>dst` pair of unsigned ids per line
    /// (tab or spaces), `#`/`%` comment lines, plain or gzip
    #[arg(long, value_enum, default_value = "snap")]
    format: Format,
    /// Keep arcs from a node to itself (by default they are dropped and counted)
    #[arg(long)]
    keep_self_loops: bool,
    /// Fail on the first malformed line or unreadable stream instead of
    /// skipping it (skips are always counted and reported)
    #[arg(long)]
    strict: bool,
    /// Recompute although the job already has this stage finished, or discard
    /// an interrupted run's checkpoints when parameters changed
    #[arg(long)]
    force: bool,
    /// Edge list files, read in this order
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Format {
    Snap,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let mut job = g.open_job(&args.out, true)?;
    let reporter = g.reporter();
    let settings = Settings {
        mem: g.mem(),
        reporter: reporter.clone(),
        force: args.force,
        strict: args.strict,
    };
    let opts = ImportOptions {
        format: match args.format {
            Format::Snap => GraphFormat::Snap,
        },
        inputs: args.files,
        keep_self_loops: args.keep_self_loops,
    };
    let (record, resumed) = match import_graph(&mut job, &opts, &settings)? {
        ImportOutcome::AlreadyDone(_) => {
            reporter.note(&format!(
                "import-graph: already finished in {} with these parameters; skipped (--force recomputes)",
                args.out.display()
            ));
            return Ok(ExitCode::SUCCESS);
        }
        ImportOutcome::Done {
            record, resumed, ..
        } => (record, resumed),
    };
    let f = &record.figures;
    let x = |k: &str| f.extra.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
    let secs = f.seconds.max(1e-9);
    reporter.note(&format!(
        "import-graph: {} nodes, {} arcs ({} self-loops dropped, {} duplicate arcs, {} lines skipped) in {:.1} s{}: {:.0} arcs/s; edges {} ({:.2} bits/arc), peak RSS {} at --mem {}",
        thousands(x("nodes")),
        thousands(x("arcs")),
        thousands(x("self_loops")),
        thousands(x("duplicate_arcs")),
        thousands(x("skipped")),
        f.seconds,
        if resumed { " (resumed)" } else { "" },
        x("input_arcs") as f64 / secs,
        format_bytes(x("edges_bytes")),
        f.extra.get("bits_per_arc").and_then(|v| v.as_f64()).unwrap_or(0.0),
        format_bytes(f.peak_rss),
        format_bytes(settings.mem),
    ));
    Ok(ExitCode::SUCCESS)
}

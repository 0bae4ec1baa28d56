//! `webmill import-graph`: edge lists → doc table + forward and transposed edges.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::graph::import::{import_graph, GraphFormat, ImportOptions};
use webmill::graph::names::NameOrder;
use webmill::job::Outcome;
use webmill::resources::format_bytes;

use super::thousands;
use crate::Global;

/// Import a hyperlink edge list as a link graph.
///
/// Nodes get dense docIDs 0..n; the node names become the url column of the
/// doc table (and of exports). Arcs are sorted externally into a
/// deduplicated, gap-coded forward edge file and a transposed one, within
/// --mem. Re-running on the same job skips a finished import or resumes an
/// interrupted one.
///
/// Formats (all text, plain or gzip, detected by content; a bad line is
/// skipped and reported as FILE: line N, or fails the import with --strict):
///
/// snap: `src<TAB>dst`, unsigned integer node ids (tab or spaces), `#`/`%`
/// comments. DocIDs follow the ids' numeric order (a graph numbered 0..n keeps
/// its numbering); a node's name is its id.
///
/// tsv: `src<TAB>dst`, nodes named by any UTF-8 strings (URLs typically);
/// only TAB separates, so names may hold spaces; nothing is trimmed or
/// normalized; fields after a second TAB are ignored; lines end with LF or
/// CRLF; empty lines and lines starting with `#` are comments. Names are
/// sorted externally, never held in memory all at once.
/// DocIDs follow the names' byte order (--order bytes: the URLs under one
/// `scheme://host/` are contiguous) or webmill's host-grouped URL order
/// (--order host: SURT-style reversed host, then path, as `webmill ingest`
/// numbers URLs; names that are not URLs with a host come first). A node's
/// name is its doc-table URL. Lines without a TAB, with an empty name or with
/// invalid UTF-8 are skipped.
///
/// cc: Common Crawl's host or domain web graph: FILE... is the vertices file
/// (`id<TAB>reversed.host.name`, e.g. `0<TAB>com.example.www`; further columns
/// ignored), then one or more edges files (`src_id<TAB>dst_id`), in that order
/// (checked by content). The vertex ids are the docIDs; a node's name is its
/// host name the usual way round (`www.example.com`). Vertex ids must
/// increase; ids skipped by the vertices file get docs with empty names; arcs
/// naming an id beyond the last vertex are skipped and reported. The vertices
/// file is streamed, never held in memory.
///
/// bvgraph: WebGraph's compressed graph (the LAW datasets, `webmill export
/// bvgraph`): FILE is its BASENAME (or BASENAME.graph), for BASENAME.graph
/// and BASENAME.properties, big- or little-endian. Nodes 0..n are the docIDs,
/// nodes without arcs included; a node's name is its id. The stream is read
/// in node order from a memory map; a missing file or a stream that does not
/// decode fails the import, naming the file.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (created if missing)
    #[arg(long, value_name = "JOB")]
    out: PathBuf,
    /// Input format: snap (numeric ids), tsv (named nodes, e.g. URLs), cc
    /// (Common Crawl vertices + edges files) or bvgraph (WebGraph's BVGraph,
    /// by basename); see above
    #[arg(long, value_enum, default_value = "snap")]
    format: Format,
    #[command(flatten)]
    flags: GraphArgs,
    /// Fail on the first malformed line or unreadable stream instead of
    /// skipping it (skips are always counted and reported)
    #[arg(long)]
    strict: bool,
    /// Recompute although the job already has this stage finished, or discard
    /// an interrupted run's checkpoints when parameters changed
    #[arg(long)]
    force: bool,
    /// Input files, read in this order (cc: the vertices file, then the edges
    /// files; bvgraph: the graph's BASENAME)
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// The `import-graph` stage's flags but the format (also those of `webmill
/// run --graph FORMAT`).
#[derive(clap::Args, Debug)]
pub struct GraphArgs {
    /// Graph input: docID order of tsv's names: bytes (byte order of the
    /// names) or host (host-grouped URL order) [default: bytes]
    #[arg(long, value_enum, value_name = "ORDER")]
    order: Option<Order>,
    /// Graph input: keep arcs from a node to itself (by default they are
    /// dropped and counted)
    #[arg(long)]
    keep_self_loops: bool,
}

impl GraphArgs {
    /// `true` when any of these flags was given.
    pub fn given(&self) -> bool {
        self.order.is_some() || self.keep_self_loops
    }

    /// As the library takes them, for inputs `files` in `format` (given by
    /// the flag `format_flag`, for messages).
    pub fn options(
        &self,
        format: Format,
        format_flag: &str,
        files: Vec<PathBuf>,
    ) -> anyhow::Result<ImportOptions> {
        let format = match (format, self.order) {
            (Format::Snap, None) => GraphFormat::Snap,
            (Format::Cc, None) => GraphFormat::Cc,
            (Format::Bvgraph, None) => GraphFormat::BvGraph,
            (Format::Tsv, order) => GraphFormat::Tsv(match order {
                None | Some(Order::Bytes) => NameOrder::Bytes,
                Some(Order::Host) => NameOrder::Host,
            }),
            (_, Some(_)) => anyhow::bail!("--order applies to {format_flag} tsv only"),
        };
        Ok(ImportOptions {
            format,
            inputs: files,
            keep_self_loops: self.keep_self_loops,
        })
    }
}

/// A graph input format.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Format {
    Snap,
    Tsv,
    Cc,
    Bvgraph,
}

/// The docID order of named nodes.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Order {
    Bytes,
    Host,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let opts = args.flags.options(args.format, "--format", args.files)?;
    let mut job = g.open_job(&args.out, true)?;
    let settings = g.settings(args.force, args.strict);
    let reporter = settings.reporter.clone();
    let outcome = import_graph(&mut job, &opts, &settings)?;
    let Outcome::Done {
        figures: x,
        record,
        resumed,
    } = outcome
    else {
        return Ok(ExitCode::SUCCESS);
    };
    let f = &record.figures;
    let secs = f.seconds.max(1e-9);
    reporter.note(&format!(
        "import-graph: {} nodes, {} arcs ({} self-loops dropped, {} duplicate arcs, {} lines skipped) in {:.1} s{}: {:.0} arcs/s; edges {} ({:.2} bits/arc), peak RSS {} at --mem {}",
        thousands(x.nodes),
        thousands(x.arcs),
        thousands(x.self_loops),
        thousands(x.duplicate_arcs),
        thousands(x.skipped),
        f.seconds,
        if resumed { " (resumed)" } else { "" },
        x.input_arcs as f64 / secs,
        format_bytes(x.edges_bytes),
        x.bits_per_arc,
        format_bytes(f.peak_rss),
        format_bytes(settings.mem),
    ));
    Ok(ExitCode::SUCCESS)
}

//! `webmill ingest`: WARC files and directories of HTML → repository, token
//! streams, links; then the URL resolver → docIDs, doc and URL tables, edges,
//! anchors.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::ingest::resolve::resolve;
use webmill::ingest::{ingest, DocFields, IngestOptions, InputSpec};
use webmill::job::{JobFile, Outcome, StageId};
use webmill::resources::format_bytes;

use super::thousands;
use crate::Global;

/// Ingest web dumps: WARC files and site mirrors, into a job.
///
/// Runs two stages. `ingest` reads every input (in parallel), parses each HTML
/// page (title, words with capitalization and font size, links with anchor
/// text) and writes the page list, the token streams, the repository (zstd)
/// and the raw links, checkpointing every --segment-records records. `resolve`
/// sorts every URL seen (pages and link targets) by host-reversed key, hands
/// out docIDs so that a host's pages are contiguous, and writes the doc table,
/// the URL table, the forward and transposed edge files and the anchors, by
/// external sorts and merge joins within --mem. Bad records are counted,
/// reported with file and offset, and skipped. Re-running on the same job
/// skips finished stages or resumes an interrupted one.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (created if missing)
    #[arg(long, value_name = "JOB")]
    out: PathBuf,
    #[command(flatten)]
    source: SourceArgs,
    /// Segments already made by `webmill shard ingest` tasks (a distributed
    /// ingest, see spark/): a unit whose segments are in DIR is not read
    /// again. The outputs are the same as without it
    #[arg(long, value_name = "DIR")]
    segments_from: Vec<PathBuf>,
    /// Fail on the first bad record instead of skipping it (skips are always
    /// counted and reported)
    #[arg(long)]
    strict: bool,
    /// Recompute although the job already has these stages finished, or
    /// discard an interrupted run's checkpoints when parameters changed
    #[arg(long)]
    force: bool,
}

/// What to read (shared by `ingest` and `shard`): the inputs and ingest's
/// flags.
#[derive(clap::Args, Debug)]
pub struct SourceArgs {
    #[command(flatten)]
    flags: IngestArgs,
    /// Inputs, read in this order: a WARC file (.warc or .warc.gz, per-record
    /// or whole-file gzip; WET and WAT files too), an ARC file, a JSONL
    /// (.jsonl, .jsonl.gz, .jsonl.zst) or Parquet document set, a directory of
    /// .html files and of such files (read recursively in byte order of the
    /// paths, each file as if given on its own), or BASE_URL=DIR
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,
}

impl SourceArgs {
    /// As the library takes them.
    pub fn options(&self) -> webmill::Result<IngestOptions> {
        self.flags.options(&self.inputs)
    }
}

/// Ingest's flags: how the inputs are read and cut (one struct, flattened
/// into `ingest`, `shard` and `run`).
#[derive(clap::Args, Debug)]
pub struct IngestArgs {
    /// Base URL for directory inputs given without one (`BASE_URL=DIR` sets it
    /// per directory) [default: file:// + the directory's absolute path]
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Ingest's checkpoint interval: WARC records (or directory files, or
    /// document set records) per segment
    #[arg(long, value_name = "N", default_value_t = IngestOptions::default().segment_records)]
    segment_records: u64,
    /// Largest WARC record read (K, M, G suffixes); bigger ones are skipped
    /// and reported. Of a record up to this size, at most ingest's per-record
    /// share of --mem (1/16) is kept in memory: the rest is cut (and reported)
    #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = parse_size)]
    max_record_bytes: u64,
    #[command(flatten)]
    fields: FieldArgs,
}

impl IngestArgs {
    /// As the library takes them, for `inputs` (as given on the command line).
    pub fn options(&self, inputs: &[String]) -> webmill::Result<IngestOptions> {
        Ok(IngestOptions {
            inputs: inputs
                .iter()
                .map(|a| InputSpec::parse(a, self.base_url.as_deref()))
                .collect::<webmill::Result<Vec<_>>>()?,
            segment_records: self.segment_records,
            max_record_bytes: self.max_record_bytes,
            fields: self.fields.doc_fields(),
            segments_from: Vec::new(),
        })
    }

    /// `true` when a flag that only ingest reads was given (`--base-url`;
    /// the others have defaults).
    pub fn given(&self) -> bool {
        self.base_url.is_some()
    }
}

/// The fields of document set records (part of [`IngestArgs`]).
#[derive(clap::Args, Debug)]
pub struct FieldArgs {
    /// JSONL and Parquet document sets: the field (column) holding a record's text (a dotted
    /// path such as `metadata.text` reaches into nested objects)
    #[arg(long, value_name = "NAME", default_value = "text")]
    text_field: String,
    /// JSONL and Parquet document sets: the field (column) holding a record's id (its URL is made
    /// from it when it has none)
    #[arg(long, value_name = "NAME", default_value = "id")]
    id_field: String,
    /// JSONL and Parquet document sets: the field (column) holding a record's URL
    #[arg(long, value_name = "NAME", default_value = "url")]
    url_field: String,
}

impl FieldArgs {
    /// As the library takes them.
    pub fn doc_fields(&self) -> DocFields {
        DocFields {
            text: self.text_field.clone(),
            id: self.id_field.clone(),
            url: self.url_field.clone(),
        }
    }
}

fn parse_size(s: &str) -> Result<u64, String> {
    webmill::resources::parse_bytes(s).map_err(|e| e.to_string())
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let opts = IngestOptions {
        segments_from: args.segments_from.clone(),
        ..args.source.options()?
    };
    let mut job = g.open_job(&args.out, true)?;
    let settings = g.settings(args.force, args.strict);
    let reporter = settings.reporter.clone();
    if let Outcome::Done {
        figures: x,
        record,
        resumed,
    } = ingest(&mut job, &opts, &settings)?
    {
        let f = &record.figures;
        let c = &x.counts;
        for s in &x.first_skips {
            reporter.note(&format!("skipped: {s}"));
        }
        if c.skipped > x.first_skips.len() as u64 {
            reporter.note(&format!(
                "skipped: … and {} more",
                c.skipped - x.first_skips.len() as u64
            ));
        }
        let records: u64 = c.records.values().sum();
        reporter.note(&format!(
            "ingest: {} pages ({} of HTML), {} links from {} WARC records and {} files in {:.1} s{}: {:.1} MB/s; {} redirects; peak RSS {}",
            thousands(c.pages),
            format_bytes(c.html_bytes),
            thousands(c.links),
            thousands(records),
            thousands(c.files),
            f.seconds,
            if resumed { " (resumed)" } else { "" },
            x.input_bytes as f64 / f.seconds.max(1e-9) / 1e6,
            thousands(c.redirects),
            format_bytes(f.peak_rss),
        ));
        if c.skipped + c.cut > 0 {
            let by_kind: Vec<String> = c
                .skips
                .iter()
                .map(|(k, n)| format!("{} {k}", thousands(*n)))
                .collect();
            reporter.note(&format!(
                "ingest: {} records or files not kept, {} pages cut ({}); every one is listed in {} (`webmill export skips {}`)",
                thousands(c.skipped),
                thousands(c.cut),
                by_kind.join(", "),
                args.out.join(JobFile::Skips(StageId::Ingest).name()).display(),
                args.out.display(),
            ));
        }
    }
    // --force applies to ingest; resolve runs again because its inputs changed.
    let settings = settings.forced(false);
    if let Outcome::Done {
        figures: x,
        record,
        resumed,
    } = resolve(&mut job, &settings)?
    {
        let f = &record.figures;
        reporter.note(&format!(
            "resolve: {} docs ({} crawled) on {} hosts, {} arcs ({} self-loops dropped), {} anchors in {:.1} s{}; edges {} ({:.2} bits/arc), peak RSS {} at --mem {}",
            thousands(x.nodes),
            thousands(x.crawled),
            thousands(x.hosts),
            thousands(x.arcs),
            thousands(x.self_loops),
            thousands(x.anchors),
            f.seconds,
            if resumed { " (resumed)" } else { "" },
            format_bytes(x.edges_bytes),
            x.bits_per_arc,
            format_bytes(f.peak_rss),
            format_bytes(settings.mem),
        ));
        if x.duplicate_captures > 0 {
            reporter.note(&format!(
                "resolve: {} pages are further captures of a URL captured before: each is kept as a page of the same doc, whose canonical capture is the first with a body, else the first (the others have canonical 0 in {}: `webmill dump` it)",
                thousands(x.duplicate_captures),
                args.out.join(JobFile::PageDoc.name()).display(),
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

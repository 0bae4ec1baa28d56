//! `webmill run`: the whole job in one command.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use webmill::dedup::stage::{DedupOptions, Verify};
use webmill::dedup::Alg;
use webmill::graph::import::{GraphFormat, ImportOptions};
use webmill::graph::names::NameOrder;
use webmill::index::IndexOptions;
use webmill::ingest::{IngestOptions, InputSpec};
use webmill::job::{JobView, StageId};
use webmill::pipeline::{How, JobSummary, Pipeline, PipelineOptions, Source};
use webmill::progress::Reporter;
use webmill::rank::{Dangling, Mode, PageRankOptions};
use webmill::resources::format_bytes;

use super::ingest::FieldArgs;
use super::thousands;
use crate::job_display::{JobDisplay, Running};
use crate::progress::BarReporter;
use crate::Global;

/// Run every stage of a job: web dumps → pages, link graph, PageRank, index
/// and near-duplicates; or edge lists → link graph and PageRank.
///
/// Web dumps (WARC/ARC files, directories of HTML, BASE_URL=DIR) go through
/// ingest → resolve → pagerank → index → dedup (minhash and broder unless
/// --dedup or --no-dedup say otherwise); edge lists (--graph FORMAT) through
/// import-graph → pagerank. The order comes from what each stage reads. A
/// stage that finished with the same parameters and inputs is skipped, an
/// interrupted one resumes from its checkpoints: after any interruption
/// (Ctrl-C, kill -9, a full disk) run the same command again and the job
/// ends byte for byte as an uninterrupted run would. The flags of the stages
/// are the same as those of `webmill ingest`, `pagerank`, `index` and `dedup`
/// (see their --help), with the same defaults. Progress goes to stderr, the
/// summary to stdout.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (created if missing; a job already there is resumed, its
    /// finished stages skipped)
    #[arg(long, value_name = "JOB")]
    out: PathBuf,
    /// Inputs, in this order: WARC or ARC files (plain or gzip), directories
    /// of HTML files and WARC/ARC files (read recursively, in byte order of
    /// the paths), BASE_URL=DIR; with --graph, edge-list files
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,

    /// The inputs are edge lists in this format (snap, tsv or cc; see
    /// `webmill import-graph --help`): import-graph and pagerank only
    #[arg(long, value_name = "FORMAT", value_parser = ["snap", "tsv", "cc"])]
    graph: Option<String>,
    /// --graph tsv: docID order of the names, bytes or host [default: bytes]
    #[arg(long, value_name = "ORDER", value_parser = ["bytes", "host"], requires = "graph")]
    order: Option<String>,
    /// --graph: keep arcs from a node to itself
    #[arg(long, requires = "graph")]
    keep_self_loops: bool,

    /// Base URL for directory inputs given without one (`BASE_URL=DIR` sets
    /// it per directory) [default: file:// + the directory's absolute path]
    #[arg(long, value_name = "URL", conflicts_with = "graph")]
    base_url: Option<String>,
    /// Ingest's checkpoint interval: WARC records (or files) per segment
    #[arg(long, value_name = "N", default_value_t = IngestOptions::default().segment_records)]
    segment_records: u64,
    /// Largest WARC record read (K, M, G suffixes); bigger ones are skipped
    #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = parse_size)]
    max_record_bytes: u64,
    #[command(flatten)]
    fields: FieldArgs,

    /// PageRank: probability of following a link
    #[arg(long, default_value_t = PageRankOptions::default().damping)]
    damping: f64,
    /// PageRank: stop when the L1 change between iterations is below this
    #[arg(long, default_value = "1e-10")]
    tol: f64,
    /// PageRank: most iterations
    #[arg(long, value_name = "N", default_value_t = PageRankOptions::default().max_iter)]
    max_iter: u32,
    /// PageRank: personalization file (`docid-or-URL<TAB>weight` lines)
    #[arg(long, value_name = "FILE")]
    personalize: Option<PathBuf>,
    /// PageRank: where dangling nodes' rank goes (uniform, preference)
    #[arg(long, value_name = "HOW", default_value = "uniform", value_parser = ["uniform", "preference"])]
    dangling: String,
    /// PageRank: auto, memory, blocked or sort-merge (all give the same bits)
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = ["auto", "memory", "blocked", "sort-merge"])]
    mode: String,

    /// Index: barrels the wordID range is cut into
    #[arg(long, value_name = "N", default_value_t = IndexOptions::default().barrels)]
    barrels: u32,
    /// Index: stem words (and queries): none, or english (Snowball)
    #[arg(long, value_name = "HOW", default_value = "none",
          value_parser = ["none", "english"])]
    stem: String,
    /// No index
    #[arg(long)]
    no_index: bool,

    /// Near-duplicate algorithms, comma-separated (exact, broder, charikar,
    /// minhash) [default: minhash,broder]
    #[arg(long, value_name = "ALG,…", value_delimiter = ',', value_parser = parse_alg, conflicts_with = "no_dedup")]
    dedup: Vec<Alg>,
    /// No near-duplicate detection
    #[arg(long)]
    no_dedup: bool,
    /// Near-duplicates: shingle length in words [default: 10 for broder, 4
    /// for minhash]
    #[arg(long, value_name = "K")]
    shingle: Option<usize>,
    /// Near-duplicates: minhash's similarity threshold (with --verify exact,
    /// the exact Jaccard coefficient)
    #[arg(long, value_name = "T", default_value_t = DedupOptions::default().threshold)]
    threshold: f64,
    /// Near-duplicates: verify candidates by sketch or exact
    #[arg(long, value_name = "HOW", default_value = "sketch", value_parser = parse_verify)]
    verify: Verify,
    /// Near-duplicates: largest group of docs sharing a key paired with
    /// each other
    #[arg(long, value_name = "N", default_value_t = DedupOptions::default().max_group)]
    max_group: u64,

    /// Fail on the first bad input record instead of skipping it, and fail
    /// at the end if the job holds skipped records
    #[arg(long)]
    strict: bool,
    /// Recompute the stages whose parameters changed since they finished
    /// (and what depends on them); without it such a change is refused
    #[arg(long)]
    force: bool,
    /// Pages listed in the summary, highest PageRank first
    #[arg(long, value_name = "K", default_value_t = 10)]
    top: usize,
}

fn parse_size(s: &str) -> Result<u64, String> {
    webmill::resources::parse_bytes(s).map_err(|e| e.to_string())
}

fn parse_alg(s: &str) -> Result<Alg, String> {
    Alg::parse(s).map_err(|e| e.to_string())
}

fn parse_verify(s: &str) -> Result<Verify, String> {
    Verify::parse(s).map_err(|e| e.to_string())
}

/// The pipeline the flags ask for.
fn options(args: &Args) -> anyhow::Result<PipelineOptions> {
    let source = match args.graph.as_deref() {
        Some(format) => Source::Graph(ImportOptions {
            format: match (format, args.order.as_deref()) {
                ("snap", None) => GraphFormat::Snap,
                ("cc", None) => GraphFormat::Cc,
                ("tsv", Some("host")) => GraphFormat::Tsv(NameOrder::Host),
                ("tsv", _) => GraphFormat::Tsv(NameOrder::Bytes),
                _ => anyhow::bail!("--order applies to --graph tsv only"),
            },
            inputs: args.inputs.iter().map(PathBuf::from).collect(),
            keep_self_loops: args.keep_self_loops,
        }),
        None => Source::Web(IngestOptions {
            inputs: args
                .inputs
                .iter()
                .map(|a| InputSpec::parse(a, args.base_url.as_deref()))
                .collect::<webmill::Result<Vec<_>>>()?,
            segment_records: args.segment_records,
            max_record_bytes: args.max_record_bytes,
            fields: args.fields.doc_fields(),
            segments_from: Vec::new(),
        }),
    };
    let web = matches!(source, Source::Web(_));
    let algs = if args.dedup.is_empty() {
        if web && !args.no_dedup {
            vec![Alg::MinHash, Alg::Broder]
        } else {
            Vec::new()
        }
    } else {
        args.dedup.clone()
    };
    Ok(PipelineOptions {
        source,
        pagerank: PageRankOptions {
            damping: args.damping,
            tol: args.tol,
            max_iter: args.max_iter,
            personalize: args.personalize.clone(),
            dangling: match args.dangling.as_str() {
                "preference" => Dangling::Preference,
                _ => Dangling::Uniform,
            },
            mode: match args.mode.as_str() {
                "memory" => Mode::Memory,
                "blocked" => Mode::Blocked,
                "sort-merge" => Mode::SortMerge,
                _ => Mode::Auto,
            },
        },
        index: (web && !args.no_index).then_some(IndexOptions {
            barrels: args.barrels,
            stem: webmill::index::Stem::parse(&args.stem)?,
        }),
        dedup: (!algs.is_empty()).then_some(DedupOptions {
            algs,
            shingle: args.shingle,
            threshold: args.threshold,
            max_group: args.max_group,
            verify: args.verify,
        }),
    })
}

/// This process's command line, quoted for a shell: the command that
/// resumes it.
/// The program as the user invoked it (`target/release/webmill` after the
/// README's build, `webmill` when on the PATH), for commands to copy.
fn program() -> String {
    std::env::args()
        .next()
        .filter(|a| !a.is_empty() && !a.contains(char::is_whitespace))
        .unwrap_or_else(|| "webmill".into())
}

fn command_line() -> String {
    std::env::args()
        .map(|a| {
            let plain = !a.is_empty()
                && a.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"_-./,:=@%+".contains(&c));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// On Ctrl-C: says what was interrupted and how to resume, then exits 130
/// (what finished is published; the interrupted stage resumes from its
/// checkpoints, as after `kill -9`).
fn on_interrupt(running: Running, multi: indicatif::MultiProgress) {
    let resume = command_line();
    let handler = move || {
        let _ = multi.clear();
        let stages = running.lock().map(|r| r.clone()).unwrap_or_default();
        let what = if stages.is_empty() {
            "between stages".to_string()
        } else {
            let names: Vec<String> = stages.iter().map(|s| s.name()).collect();
            format!("during {}", names.join(", "))
        };
        eprintln!(
            "\nwebmill: interrupted {what}; the finished stages are kept and an interrupted one resumes from its checkpoints.\nResume with:\n  {resume}"
        );
        std::process::exit(130);
    };
    if let Err(e) = ctrlc::set_handler(handler) {
        eprintln!("webmill: cannot catch Ctrl-C ({e}); an interrupted run still resumes");
    }
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let opts = options(&args)?;
    let pipeline = Pipeline::new(&opts, g.mem())?;
    let mut job = g.open_job(&args.out, true)?;
    // The stage lines say which stages were skipped.
    let reporter = Arc::new(
        BarReporter::new(g.quiet)
            .logging_when_hidden()
            .hiding_notes("already finished with these parameters and inputs"),
    );
    let mut settings = g.settings(args.force, args.strict);
    settings.reporter = reporter.clone();
    let mut display = JobDisplay::new(
        reporter.clone(),
        &args.out.display().to_string(),
        &pipeline.stages(),
        job.manifest(),
        g.quiet,
    );
    for note in pipeline.notes() {
        reporter.note(note);
    }
    on_interrupt(display.running(), reporter.multi().clone());
    if let Err(e) = pipeline.run(&mut job, &settings, &mut display) {
        display.failed();
        display.finish();
        if !matches!(
            e.class(),
            webmill::error::ErrorClass::Job | webmill::error::ErrorClass::Usage
        ) {
            eprintln!(
                "webmill: the finished stages are kept; once the cause is fixed, resume with:\n  {}",
                command_line()
            );
        }
        return Err(e.into());
    }
    display.finish();
    drop(job);
    let view = JobView::open(&args.out)?;
    let summary = JobSummary::of(&view, args.top)?;
    if !g.quiet {
        print!("{}", describe(&summary, &view, &args.out, &display));
    }
    if args.strict && summary.bad_input > 0 {
        return Err(webmill::Error::Input {
            path: args.out.clone(),
            location: "job".into(),
            detail: format!(
                "{} input records were skipped as bad input when the job was made (--strict)",
                thousands(summary.bad_input)
            ),
        }
        .into());
    }
    Ok(ExitCode::SUCCESS)
}

/// The summary a person reads at the end of a run.
fn describe(s: &JobSummary, view: &JobView, job: &Path, display: &JobDisplay) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let count = |how: How| display.ended().iter().filter(|(_, h)| *h == how).count();
    let _ = writeln!(
        o,
        "\nJob {} is complete: {} stages ({} ran, {} resumed, {} skipped as finished before) in {:.1} s.\n",
        job.display(),
        display.ended().len(),
        count(How::Ran),
        count(How::Resumed),
        count(How::Skipped),
        display.elapsed().as_secs_f64()
    );
    if let (Some(pages), Some(links)) = (s.pages, s.links) {
        let _ = writeln!(
            o,
            "  pages       {} fetched, {} links{}",
            thousands(pages),
            thousands(links),
            s.hosts
                .map(|h| format!(", {} hosts", thousands(h)))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        o,
        "  link graph  {} docs, {} arcs",
        thousands(s.docs),
        thousands(s.arcs)
    );
    if let Some((iters, converged)) = s.pagerank {
        let _ = writeln!(
            o,
            "  PageRank    {} after {iters} iterations; top pages:",
            if converged {
                "converged"
            } else {
                "stopped at --max-iter"
            }
        );
        for (i, p) in s.top.iter().enumerate() {
            let _ = writeln!(o, "      {:>2}. {:.3e}  {}", i + 1, p.rank, p.url);
        }
    }
    for d in &s.dedup {
        let _ = writeln!(
            o,
            "  {:<11} {} near-duplicate clusters holding {} pages ({} pairs)",
            format!("dup {}", d.alg),
            thousands(d.clusters),
            thousands(d.docs_in_clusters),
            thousands(d.pairs)
        );
        if let Some((alg, p)) = Alg::parse(&d.alg)
            .ok()
            .and_then(|a| Some((a, view.published(StageId::Dedup(a))?)))
        {
            let _ = writeln!(
                o,
                "              pairs are {}",
                super::dedup::rule_in_words(alg, &p.params)
            );
        }
    }
    if s.dedup.len() > 1 {
        let _ = writeln!(
            o,
            "              (the methods compare different things at different thresholds, hence different counts; `{} dedup-eval {} --alg ALG` measures each one's precision and recall)",
            program(),
            job.display()
        );
    }
    if let Some((words, postings, bytes)) = s.index {
        let _ = writeln!(
            o,
            "  index       {} words, {} postings, {} (lexicon and barrels)",
            thousands(u64::from(words)),
            thousands(postings),
            format_bytes(bytes)
        );
    }
    // Stages beyond the built-in ones (registered by a library user).
    for st in s
        .stages
        .iter()
        .filter(|st| webmill::job::StageId::parse(&st.stage).is_none())
    {
        let _ = writeln!(o, "  {:<11} {}", st.stage, st.headline);
    }
    if s.skipped + s.cut == 0 {
        let _ = writeln!(o, "  skipped     no input record");
    } else {
        let kinds: Vec<String> = s
            .skip_kinds
            .iter()
            .map(|(k, n)| format!("{} {k}", thousands(*n)))
            .collect();
        let _ = writeln!(
            o,
            "  skipped     {} input records ({} bad input, which --strict makes an error; the rest left out by policy), {} pages cut: {}",
            thousands(s.skipped),
            thousands(s.bad_input),
            thousands(s.cut),
            kinds.join(", ")
        );
        for sk in &s.first_skips {
            let _ = writeln!(o, "      {sk}");
        }
        if s.skipped + s.cut > s.first_skips.len() as u64 {
            let _ = writeln!(
                o,
                "      … {} more; all are listed by `{} export skips {}`",
                thousands(s.skipped + s.cut - s.first_skips.len() as u64),
                program(),
                job.display()
            );
        }
    }
    let total: u64 = s.files.iter().map(|f| f.bytes).sum();
    let _ = writeln!(
        o,
        "\nOutputs in {} ({} in {} files):",
        job.display(),
        format_bytes(total),
        s.files.len()
    );
    let mut stages: Vec<&str> = s.files.iter().map(|f| f.stage.as_str()).collect();
    stages.dedup();
    for stage in stages {
        let files: Vec<&webmill::pipeline::FileSummary> =
            s.files.iter().filter(|f| f.stage == stage).collect();
        let bytes: u64 = files.iter().map(|f| f.bytes).sum();
        let names: Vec<String> = files
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix(job)
                    .unwrap_or(&f.path)
                    .display()
                    .to_string()
            })
            .collect();
        let shown = if names.len() > 4 {
            format!("{}, … ({} files)", names[..3].join(", "), names.len())
        } else {
            names.join(", ")
        };
        let _ = writeln!(o, "  {stage:<15} {:>10}  {shown}", format_bytes(bytes));
    }
    let j = job.display();
    let w = program();
    let _ = writeln!(o, "\nNext:");
    let mut next: Vec<(String, &str)> = Vec::new();
    if s.index.is_some() {
        next.push((format!("{w} search {j} WORDS…"), "search the index"));
        next.push((
            format!("{w} serve {j}"),
            "search it in the browser (http://127.0.0.1:8080/)",
        ));
    } else {
        // A graph without text (an edge list): what works on a graph.
        next.push((
            format!("{w} serve {j}"),
            "browse the documents, their links and ranks in the browser (http://127.0.0.1:8080/)",
        ));
        next.push((
            format!("{w} bowtie {j}"),
            "the graph's bow-tie: SCC, IN, OUT, tendrils",
        ));
    }
    if s.pagerank.is_some() {
        next.push((format!("{w} top {j} -k 20"), "the highest-ranked pages"));
    }
    next.push((
        format!("{w} stats {j}"),
        "the job's figures and degree distributions",
    ));
    next.push((
        format!(
            "{w} export {} {j} --format parquet -o {}.parquet",
            if s.index.is_some() { "docs" } else { "ranks" },
            if s.index.is_some() { "docs" } else { "ranks" }
        ),
        if s.index.is_some() {
            "tables for other tools (docs, edges, ranks, pairs, clusters, anchors, postings, skips)"
        } else {
            "tables for other tools (docs, edges, ranks, skips)"
        },
    ));
    for (cmd, what) in next {
        let _ = writeln!(o, "  {cmd:<58} {what}");
    }
    o
}

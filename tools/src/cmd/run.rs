//! `webmill run`: the whole job in one command.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use webmill::dedup::Alg;
use webmill::job::{JobView, StageId};
use webmill::pipeline::{How, JobSummary, Pipeline, PipelineOptions, Source};
use webmill::progress::Reporter;
use webmill::resources::format_bytes;

use super::dedup::{parse_alg, DedupArgs};
use super::import_graph::{Format, GraphArgs};
use super::index::IndexArgs;
use super::ingest::IngestArgs;
use super::pagerank::PageRankArgs;
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

    /// The inputs are edge lists in this format (snap, tsv, cc or bvgraph;
    /// see `webmill import-graph --help`): import-graph and pagerank only
    #[arg(long, value_enum, value_name = "FORMAT")]
    graph: Option<Format>,
    #[command(flatten)]
    graph_flags: GraphArgs,

    #[command(flatten)]
    ingest: IngestArgs,
    #[command(flatten)]
    pagerank: PageRankArgs,
    #[command(flatten)]
    index: IndexArgs,
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
    #[command(flatten)]
    dedup_flags: DedupArgs,

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

/// The pipeline the flags ask for.
fn options(args: &Args) -> anyhow::Result<PipelineOptions> {
    if args.graph.is_none() && args.graph_flags.given() {
        anyhow::bail!("--order and --keep-self-loops apply to --graph edge lists only");
    }
    if args.graph.is_some() && args.ingest.given() {
        anyhow::bail!("--base-url applies to web inputs, not to --graph edge lists");
    }
    let source = match args.graph {
        Some(format) => Source::Graph(args.graph_flags.options(
            format,
            "--graph",
            args.inputs.iter().map(PathBuf::from).collect(),
        )?),
        None => Source::Web(args.ingest.options(&args.inputs)?),
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
        pagerank: args.pagerank.options(),
        index: (web && !args.no_index).then(|| args.index.options()),
        dedup: (!algs.is_empty()).then(|| args.dedup_flags.options(algs)),
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

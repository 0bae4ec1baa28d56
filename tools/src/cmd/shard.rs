//! `webmill shard`: the steps of a distributed job (see `spark/`): `plan`
//! lists an ingest's units, `ingest` runs one of them into a directory every
//! node reads (what a Spark executor runs); on the driver, `join` joins
//! them into a job exactly as if it had read them itself and `resolve` runs
//! the resolve stage from the tables Spark numbered and sorted; `index`
//! builds a document-partitioned index a shard per task; `dedup` runs
//! near-duplicate detection's per-task steps and its driver step.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use webmill::ingest::resolve_from::resolve_from;
use webmill::ingest::{ingest, ingest_unit, plan_units, IngestOptions};

use webmill::dedup::exchange as dedup_exchange;
use webmill::dedup::Alg;
use webmill::index::shards;

use super::dedup::{parse_alg, DedupArgs};

use super::index::IndexArgs;
use super::ingest::SourceArgs;
use crate::Global;

/// The per-task steps of a distributed job (run by `spark/`'s
/// `webmill_spark run` on each executor).
///
/// An ingest is cut into units (a WARC, WET, WAT, JSONL or Parquet file each; runs of a
/// directory's HTML files of --segment-records each) that depend on nothing
/// but their input: `shard plan` lists them, `shard ingest --unit K` writes
/// unit K's segments under `--segments DIR/unit-K/` (each task under an
/// attempt directory of its own, published by one rename, so retries and
/// speculative copies are harmless), and `webmill ingest --segments-from DIR`
/// joins them into the job (`webmill run` then runs the later stages). The job's outputs are
/// byte-identical to a one-machine `webmill run` with the same inputs and
/// flags (same --mem: it sets the per-record limit).
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    step: Step,
}

#[derive(Subcommand, Debug)]
enum Step {
    /// Lists the ingest's units as JSON lines `{"unit": K, "bytes": N}`
    Plan {
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Ingests unit K alone into DIR/unit-K/ and prints what it did as one
    /// JSON line (unit, segments, counts, first_skips, published)
    Ingest {
        /// The unit to ingest (from `shard plan`)
        #[arg(long, value_name = "K")]
        unit: usize,
        /// Where units are published (a directory every node can read)
        #[arg(long, value_name = "DIR")]
        segments: PathBuf,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Runs the job's `ingest` stage alone (not `resolve`, unlike `webmill
    /// ingest`), taking the units' segments published under
    /// --segments-from and joining them in input order
    Join {
        /// Where the units were published (`shard ingest --segments`)
        #[arg(long, value_name = "DIR")]
        segments_from: PathBuf,
        /// The job directory (created if missing)
        #[arg(long, value_name = "JOB")]
        out: PathBuf,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Runs the job's `resolve` stage from the tables the global steps
    /// wrote as Parquet under --from (`docs/`, `pagedoc/`, `links/`,
    /// `urls/`, `edges/`, `edges-t/`, `anchors/`: formats/spark.md), each
    /// file streamed from its sorted table, no sort of its own; the outputs
    /// are the stage's own, byte for byte
    Resolve {
        /// The directory of the numbering's tables
        #[arg(long, value_name = "DIR")]
        from: PathBuf,
        /// The job (its ingest done)
        job: PathBuf,
    },
    /// Builds the job's index as --shards N document-partitioned shards
    /// (docID ranges) in --dir (default JOB/shards/), which `search`,
    /// `serve` and `verify` then use: `split` (optional, per task K of N:
    /// the K-th run of the job's text split by shard, so that each shard
    /// then reads only its own documents' text), `forward` (per shard:
    /// pass 1 and the forward pass of its documents), `gather` (once: the collection's
    /// field lengths), `sort` (per shard: its barrels and lexicon), `finish`
    /// (once: the manifest), or `all` of them here. A per-shard step works
    /// under an attempt directory and publishes it by rename; it prints one
    /// JSON line
    Index {
        /// The step
        #[arg(long, value_enum, default_value = "all")]
        step: IndexStep,
        /// The shard (per-shard steps; for `split`, the task)
        #[arg(long, value_name = "K")]
        shard: Option<usize>,
        /// Shards (docID ranges of equal size)
        #[arg(long, value_name = "N")]
        shards: usize,
        /// Where the sharded index is written (a directory every node can
        /// read)
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        #[command(flatten)]
        flags: IndexArgs,
        /// The job (resolved)
        job: PathBuf,
    },
    /// Near-duplicate detection with its sorts on Spark
    /// (`spark/webmill_spark/dedup.py`, formats/spark.md): `sketch` (per
    /// page range K of --shards N: every page's keys and sketch for each
    /// --alg, as Parquet under DIR/sketch/shard-K/), `verify` (per part I of
    /// DIR/ALG/candidates/, which Spark grouped and joined: the pairs that
    /// pass, as DIR/ALG/verified/part-I.parquet), `finish` (on the driver:
    /// each `dedup-ALG` stage from DIR/ALG/'s sorted tables, streamed, its
    /// files the one-machine stage's byte for byte). A per-task step works
    /// under an attempt name and publishes by rename; it prints one JSON line
    Dedup {
        /// The step
        #[arg(long, value_enum)]
        step: DedupStep,
        /// The page range (sketch)
        #[arg(long, value_name = "K")]
        shard: Option<usize>,
        /// Page ranges of equal size (sketch)
        #[arg(long, value_name = "N")]
        shards: Option<usize>,
        /// The candidate part (verify)
        #[arg(long, value_name = "I")]
        part: Option<usize>,
        /// The tables' directory (every node reads it)
        #[arg(long, value_name = "DIR")]
        dir: PathBuf,
        /// Algorithms, comma-separated (exact, broder, charikar, minhash);
        /// verify takes one
        #[arg(long = "alg", value_name = "ALG,…", value_delimiter = ',', required = true, value_parser = parse_alg)]
        algs: Vec<Alg>,
        #[command(flatten)]
        flags: DedupArgs,
        /// The job (resolved; with ranks when PageRank is to pick the doc
        /// kept of each cluster)
        job: PathBuf,
    },
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum DedupStep {
    Sketch,
    Verify,
    Finish,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum IndexStep {
    Split,
    Forward,
    Gather,
    Sort,
    Finish,
    All,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    match args.step {
        Step::Plan { source } => {
            for u in plan_units(&source.options()?)? {
                println!("{}", serde_json::to_string(&u)?);
            }
        }
        Step::Ingest {
            unit,
            segments,
            source,
        } => {
            let report = ingest_unit(
                &source.options()?,
                &g.settings(false, false),
                unit,
                &segments,
            )?;
            println!("{}", serde_json::to_string(&report)?);
        }
        Step::Join {
            segments_from,
            out,
            source,
        } => {
            let opts = IngestOptions {
                segments_from: vec![segments_from],
                ..source.options()?
            };
            let mut job = g.open_job(&out, true)?;
            ingest(&mut job, &opts, &g.settings(false, false))?;
        }
        Step::Resolve { from, job } => {
            let mut job = g.open_job(&job, false)?;
            resolve_from(&mut job, &g.settings(false, false), &from)?;
        }
        Step::Index {
            step,
            shard,
            shards: n,
            dir,
            flags,
            job,
        } => {
            let dir = dir.unwrap_or_else(|| shards::default_dir(&job));
            let view = g.open_view(&job)?;
            let opts = flags.options();
            let settings = g.settings(false, false);
            let one = || shard.ok_or_else(|| anyhow::anyhow!("--step {step:?} needs --shard K"));
            match step {
                IndexStep::Split => {
                    let r = shards::split(&view, &dir, one()?, n, &settings)?;
                    println!("{}", serde_json::to_string(&r)?);
                }
                IndexStep::Forward => {
                    let r = shards::forward(&view, &dir, one()?, n, &opts, &settings)?;
                    println!("{}", serde_json::to_string(&r)?);
                }
                IndexStep::Gather => shards::gather(&view, &dir, n)?,
                IndexStep::Sort => {
                    let (r, _) = shards::sort(&view, &dir, one()?, n, &opts, &settings)?;
                    println!("{}", serde_json::to_string(&r)?);
                }
                IndexStep::Finish => {
                    shards::finish(&view, &dir, n, &opts)?;
                }
                IndexStep::All => {
                    let set = shards::build_all(&view, &dir, n, &opts, &settings)?;
                    settings.reporter.note(&format!(
                        "index: {} shards of {} documents in {}",
                        set.len(),
                        set.params().docs,
                        dir.display()
                    ));
                }
            }
        }
        Step::Dedup {
            step,
            shard,
            shards: n,
            part,
            dir,
            algs,
            flags,
            job,
        } => {
            let opts = flags.options(algs.clone());
            let settings = g.settings(false, false);
            match step {
                DedupStep::Sketch => {
                    let (Some(k), Some(n)) = (shard, n) else {
                        anyhow::bail!("--step sketch needs --shard K and --shards N");
                    };
                    let view = g.open_view(&job)?;
                    let r = dedup_exchange::sketch(&view, &dir, k, n, &opts, &settings)?;
                    println!("{}", serde_json::to_string(&r)?);
                }
                DedupStep::Verify => {
                    let (Some(i), [alg]) = (part, algs.as_slice()) else {
                        anyhow::bail!("--step verify needs --part I and one --alg");
                    };
                    let r = dedup_exchange::verify(&dir, *alg, i, &opts)?;
                    println!("{}", serde_json::to_string(&r)?);
                }
                DedupStep::Finish => {
                    let mut job = g.open_job(&job, false)?;
                    dedup_exchange::dedup_from(&mut job, &opts, &settings, &dir)?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

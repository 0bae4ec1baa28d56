//! `webmill export`: a job's data as TSV on stdout.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use webmill::dedup::files::{for_each_cluster_member, for_each_pair};
use webmill::dedup::Alg;
use webmill::docs::DocTable;
use webmill::graph::EdgeFile;
use webmill::input::for_each_skip;
use webmill::job::{JobFile, StageId};
use webmill::sort::SortConfig;
use webmill::tsv::escape;

use super::{flush, stdout};
use crate::Global;

/// Write a job's data as TSV to stdout (a header line starting with `#`, then
/// one record a line; text fields escape \, tab and newlines).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to export: docs = `docid url crawled bytes title`, edges = `src
    /// dst`, ranks = `docid url rank` (after `webmill pagerank`), text =
    /// `docid url tokens` (the page's lowercased words separated by spaces, the
    /// stream near-duplicate detection sees; ingested jobs only), pairs =
    /// `docid_a docid_b similarity` (a < b, sorted; after `webmill dedup`),
    /// clusters = `cluster_id docid keep` (cluster id = its smallest docID;
    /// keep = 1 for the one doc kept per cluster), skips = `stage key action
    /// kind file location detail` (every input record or file a stage did not
    /// keep and every cut it made, from `ingest` and `import-graph`; key = the
    /// records kept before it, for a cut the record cut)
    #[arg(value_enum)]
    what: What,
    /// Job directory
    job: PathBuf,
    /// For pairs and clusters: the algorithm whose results to export
    #[arg(long, value_name = "ALG", default_value = "minhash")]
    alg: String,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum What {
    Docs,
    Edges,
    Text,
    Pairs,
    Clusters,
    Ranks,
    Skips,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let job = g.open_view(&args.job)?;
    let mut out = stdout();
    match args.what {
        // The doc table's own record dump is exactly the export format.
        What::Docs => webmill::kinds::dump_file(&job.file(JobFile::Docs)?, &mut out)?,
        What::Ranks => {
            let ranks = webmill::rank::RankVector::open(job.file(JobFile::Ranks)?)?;
            let t = DocTable::open(job.file(JobFile::Docs)?)?;
            let mut r = ranks.reader();
            writeln!(out, "# docid\turl\trank")?;
            for doc in t.iter() {
                let (id, d) = doc?;
                writeln!(out, "{id}\t{}\t{:e}", escape(&d.url), r.get(id)?)?;
            }
        }
        What::Text => {
            writeln!(out, "# docid\turl\ttokens")?;
            let scratch = g.scratch_dir(job.dir())?;
            let cfg = SortConfig::new(scratch.join("by-doc"), g.mem())
                .label("export text: sorting by docID")
                .reporter(g.reporter());
            let result = webmill::ingest::text::for_each_doc_text(
                &job.file(JobFile::Text)?,
                &job.file(JobFile::PageDoc)?,
                &job.file(JobFile::Docs)?,
                cfg,
                |doc, url, words| {
                    writeln!(out, "{doc}\t{}\t{words}", escape(url))
                        .map_err(|e| webmill::Error::io("stdout", e))
                },
            );
            let _ = std::fs::remove_dir_all(&scratch);
            result?;
        }
        What::Pairs => {
            let alg = Alg::parse(&args.alg)?;
            writeln!(out, "# docid_a\tdocid_b\tsimilarity")?;
            for_each_pair(&job.file(JobFile::Pairs(alg))?, |a, b, sim| {
                writeln!(out, "{a}\t{b}\t{sim:.4}").map_err(|e| webmill::Error::io("stdout", e))
            })?;
        }
        What::Clusters => {
            let alg = Alg::parse(&args.alg)?;
            writeln!(out, "# cluster_id\tdocid\tkeep")?;
            for_each_cluster_member(&job.file(JobFile::Clusters(alg))?, |c, d, keep| {
                writeln!(out, "{c}\t{d}\t{}", u8::from(keep))
                    .map_err(|e| webmill::Error::io("stdout", e))
            })?;
        }
        What::Skips => {
            writeln!(out, "# stage\t{}", webmill::input::report::HEADER)?;
            let mut any = false;
            for stage in [StageId::Ingest, StageId::ImportGraph] {
                let file = JobFile::Skips(stage);
                if !job.has(file) {
                    continue;
                }
                any = true;
                for_each_skip(&job.file(file)?, |key, s| {
                    writeln!(out, "{stage}\t{}", s.tsv(key))
                        .map_err(|e| webmill::Error::io("stdout", e))
                })?;
            }
            if !any {
                // Names what to run.
                job.file(JobFile::Skips(StageId::Ingest))?;
            }
        }
        What::Edges => {
            let f = EdgeFile::open(job.file(JobFile::Edges)?)?;
            writeln!(out, "# src\tdst")?;
            for list in f.lists() {
                let (src, dsts) = list?;
                for d in dsts {
                    writeln!(out, "{src}\t{d}")?;
                }
            }
        }
    }
    flush(out)?;
    Ok(ExitCode::SUCCESS)
}

//! `webmill top`: the highest-ranked pages.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::docs::DocTable;
use webmill::graph::EdgeFile;
use webmill::job::JobFile;
use webmill::rank::RankVector;
use webmill::tsv::escape;

use crate::Global;

/// Print the k highest-ranked pages as TSV, best first: a header line, then
/// per page `rank docid url in_degree out_degree` (rank: its PageRank;
/// in_degree, out_degree: its in- and out-links in the link graph).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (after `webmill pagerank`)
    job: PathBuf,
    /// How many pages
    #[arg(short, default_value_t = 20)]
    k: usize,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let job = g.open_view(&args.job)?;
    let ranks = RankVector::open(job.file(JobFile::Ranks)?)?;
    let docs = DocTable::open(job.file(JobFile::Docs)?)?;
    let fwd = EdgeFile::open(job.file(JobFile::Edges)?)?;
    let rev = EdgeFile::open(job.file(JobFile::EdgesT)?)?;
    println!("# rank\tdocid\turl\tin_degree\tout_degree");
    for (id, rank) in ranks.top(args.k)? {
        let url = docs.get(id)?.map(|d| d.url).unwrap_or_default();
        println!(
            "{rank:.6e}\t{id}\t{}\t{}\t{}",
            escape(&url),
            rev.neighbours(id)?.len(),
            fwd.neighbours(id)?.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

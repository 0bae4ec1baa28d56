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
/// per page `rank docid url in_degree out_degree crawled` (rank: its
/// PageRank; in_degree, out_degree: its in- and out-links in the link
/// graph; crawled: yes for a page the crawl fetched, no for a link target
/// it never fetched — such a page can rank high on the links to it alone,
/// as navigation links do; --crawled leaves them out).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (after `webmill pagerank`)
    job: PathBuf,
    /// How many pages
    #[arg(short, default_value_t = 20)]
    k: usize,
    /// Only pages the crawl fetched (leave out link targets never crawled)
    #[arg(long)]
    crawled: bool,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let job = g.open_view(&args.job)?;
    let ranks = RankVector::open(job.file(JobFile::Ranks)?)?;
    let docs = DocTable::open(job.file(JobFile::Docs)?)?;
    let fwd = EdgeFile::open(job.file(JobFile::Edges)?)?;
    let rev = EdgeFile::open(job.file(JobFile::EdgesT)?)?;
    // With --crawled, widen the search until k crawled pages are found (or
    // every page was looked at).
    let mut want = args.k;
    let rows = loop {
        let mut rows = Vec::with_capacity(args.k);
        let top = ranks.top(want)?;
        for &(id, rank) in &top {
            let doc = docs.get(id)?;
            let crawled = doc.as_ref().is_some_and(|d| d.crawled);
            if args.crawled && !crawled {
                continue;
            }
            if rows.len() < args.k {
                rows.push((id, rank, doc.map(|d| d.url).unwrap_or_default(), crawled));
            }
        }
        if rows.len() >= args.k || top.len() < want || want as u64 >= docs.len() {
            break rows;
        }
        want = want.saturating_mul(4);
    };
    println!("# rank\tdocid\turl\tin_degree\tout_degree\tcrawled");
    for (id, rank, url, crawled) in rows {
        println!(
            "{rank:.6e}\t{id}\t{}\t{}\t{}\t{}",
            escape(&url),
            rev.neighbours(id)?.len(),
            fwd.neighbours(id)?.len(),
            if crawled { "yes" } else { "no" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

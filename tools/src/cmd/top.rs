//! `webmill top`: the highest-ranked pages.

use std::collections::BinaryHeap;
use std::path::PathBuf;
use std::process::ExitCode;

use webmill::docs::DocTable;
use webmill::graph::EdgeFile;
use webmill::job::JobFile;
use webmill::rank::RankVector;
use webmill::tsv::escape;

use crate::Global;

/// Print the k highest-ranked pages: rank, URL, in-degree, out-degree.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (after `webmill pagerank`)
    job: PathBuf,
    /// How many pages
    #[arg(short, default_value_t = 20)]
    k: usize,
}

/// A (rank, docID) pair ordered so the heap keeps the k largest ranks, ties
/// going to the lower docID.
#[derive(PartialEq)]
struct Entry(f64, u64);
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        // Reversed: the heap's top is the smallest kept entry.
        o.0.total_cmp(&self.0).then(self.1.cmp(&o.1))
    }
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let job = g.open_view(&args.job)?;
    let ranks = RankVector::open(job.file(JobFile::Ranks)?)?;
    let mut heap = BinaryHeap::with_capacity(args.k + 1);
    let mut r = ranks.reader();
    for i in 0..ranks.len() {
        heap.push(Entry(r.get(i)?, i));
        if heap.len() > args.k {
            heap.pop();
        }
    }
    let mut top = heap.into_sorted_vec();
    top.truncate(args.k);
    let docs = DocTable::open(job.file(JobFile::Docs)?)?;
    let fwd = EdgeFile::open(job.file(JobFile::Edges)?)?;
    let rev = EdgeFile::open(job.file(JobFile::EdgesT)?)?;
    println!("# rank\tdocid\turl\tin_degree\tout_degree");
    for Entry(rank, id) in top {
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

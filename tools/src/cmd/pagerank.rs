//! `webmill pagerank`: PageRank over a job's link graph.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::job::{JobFile, Outcome};
use webmill::rank::{pagerank, Dangling, Mode, PageRankOptions};
use webmill::resources::format_bytes;

use crate::Global;

/// Compute PageRank over the job's link graph, out of core if need be.
///
/// PR = (1−d)·v + d·(Mᵀ·PR + dangling mass·u), iterated from v until the L1
/// change falls below --tol or --max-iter is reached. The vector is
/// checkpointed after every iteration: interrupt it and run the same command
/// to continue, with bit-identical results. Writes ranks.wm and a convergence
/// plot (pagerank-convergence.svg) into the job.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (with an imported or ingested graph)
    job: PathBuf,
    #[command(flatten)]
    flags: PageRankArgs,
    /// Recompute although finished, or discard checkpoints made with other
    /// parameters
    #[arg(long)]
    force: bool,
}

/// The `pagerank` stage's flags (also those of `webmill run`).
#[derive(clap::Args, Debug)]
pub struct PageRankArgs {
    /// PageRank: probability of following a link, as in Brin & Page.
    /// Henzinger's formula writes the reset probability instead: her d = 1 −
    /// this value (her example d = 1/8 is --damping 0.875)
    #[arg(long, value_name = "D", default_value_t = PageRankOptions::default().damping)]
    damping: f64,
    /// PageRank: stop when the L1 change between iterations is below this
    #[arg(long, value_name = "L1", default_value = "1e-10")]
    tol: f64,
    /// PageRank: stop after this many iterations at most. Power iteration
    /// gains a factor ~0.85 per iteration: on the LAW web graphs the default
    /// --tol is reached after 110–116 iterations (L1 distance to the fixed
    /// point ≤ 1e-9), while 100 iterations leave it at ~2.5e-9
    #[arg(long, value_name = "N", default_value_t = PageRankOptions::default().max_iter)]
    max_iter: u32,
    /// PageRank: personalize with a file of `docid-or-URL<TAB>weight` lines
    /// (all-digit first field = docID) giving the reset (preference) vector,
    /// normalized; topic-flavoured or personalized PageRank [default:
    /// uniform]
    #[arg(long, value_name = "FILE")]
    personalize: Option<PathBuf>,
    /// PageRank: where dangling nodes' rank goes: spread uniformly, or like
    /// the preference vector
    #[arg(long, value_enum, default_value = "uniform")]
    dangling: DanglingArg,
    /// PageRank: memory: vectors in RAM; blocked: Haveliwala's destination
    /// blocks, source vector streamed per block; sort-merge: contributions
    /// sorted externally; auto: memory if its vectors fit --mem, else
    /// blocked. All modes give the same bits
    #[arg(long, value_enum, default_value = "auto")]
    mode: ModeArg,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum DanglingArg {
    Uniform,
    Preference,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum ModeArg {
    Auto,
    Memory,
    Blocked,
    SortMerge,
}

impl PageRankArgs {
    /// As the library takes them.
    pub fn options(&self) -> PageRankOptions {
        PageRankOptions {
            damping: self.damping,
            tol: self.tol,
            max_iter: self.max_iter,
            personalize: self.personalize.clone(),
            dangling: match self.dangling {
                DanglingArg::Uniform => Dangling::Uniform,
                DanglingArg::Preference => Dangling::Preference,
            },
            mode: match self.mode {
                ModeArg::Auto => Mode::Auto,
                ModeArg::Memory => Mode::Memory,
                ModeArg::Blocked => Mode::Blocked,
                ModeArg::SortMerge => Mode::SortMerge,
            },
        }
    }
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let mut job = g.open_job(&args.job, false)?;
    let settings = g.settings(args.force, false);
    let reporter = settings.reporter.clone();
    let opts = args.flags.options();
    if let Outcome::Done {
        figures: x, record, ..
    } = pagerank(&mut job, &opts, &settings)?
    {
        let f = &record.figures;
        let iters = u64::from(x.iterations);
        let done_here = iters - u64::from(x.resumed_from.unwrap_or(0));
        reporter.note(&format!(
            "pagerank: {} after {iters} iterations{} (L1 change {:.3e}), {} mode, {:.1} s: {:.1} ns/arc/iteration; peak RSS {} at --mem {}; plot in {}",
            if x.converged { "converged" } else { "stopped at --max-iter" },
            x.resumed_from.map_or(String::new(), |t| format!(" (resumed after {t})")),
            x.l1,
            x.mode.name(),
            f.seconds,
            f.seconds * 1e9 / (x.arcs.max(1) * done_here.max(1)) as f64,
            format_bytes(f.peak_rss),
            format_bytes(settings.mem),
            job.file(JobFile::RankPlot)?.display(),
        ));
    }
    Ok(ExitCode::SUCCESS)
}

//! The `webmill` command: every stage of the engine plus the bundled
//! inspection tools (`inspect`, `verify`, `dump`), as a thin layer over the
//! `webmill` library. One module per subcommand in `cmd/`.

mod cmd;
mod job_display;
mod out_file;
mod progress;
mod serve;
mod table;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

/// webmill: an out-of-core batch engine for web-scale dumps.
///
/// Turns web data (WARC files, site mirrors, edge lists) into what a search
/// engine is built from — docIDs, a compressed repository, a docID-sorted link
/// graph, PageRank, and more — within a memory budget, resumable after a crash. A job is a directory; re-run
/// a command on it to resume or skip finished stages.
#[derive(Parser, Debug)]
#[command(name = "webmill", version, max_term_width = 100, after_help = cmd::exit_codes_help())]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Flags every subcommand accepts.
#[derive(clap::Args, Debug, Clone)]
pub struct Global {
    /// Memory budget in bytes for a stage's data structures, e.g. 512M or 2G
    /// (K, M, G, T are powers of 1024) [default: a quarter of the machine's RAM]
    #[arg(long, global = true, value_name = "BYTES", value_parser = parse_mem)]
    mem: Option<u64>,
    /// Worker threads for sorting and compression [default: all cores]
    #[arg(long, global = true, value_name = "N")]
    threads: Option<usize>,
    /// Directory for temporary files (sort runs, checkpoints) [default: JOB/tmp;
    /// for read-only commands that sort, such as `export text`, the system's
    /// temporary directory]
    #[arg(long, global = true, value_name = "DIR")]
    tmp_dir: Option<PathBuf>,
    /// No progress bars and no summary lines (errors are still printed)
    #[arg(short, long, global = true)]
    quiet: bool,
}

fn parse_mem(s: &str) -> Result<u64, String> {
    let v = webmill::resources::parse_bytes(s).map_err(|e| e.to_string())?;
    if v < 1 << 20 {
        return Err(format!("{s} is below the minimum budget of 1M"));
    }
    Ok(v)
}

impl Global {
    /// `--threads`, if given.
    pub fn threads_opt(&self) -> Option<usize> {
        self.threads
    }

    /// `-q`.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// The memory budget in bytes.
    pub fn mem(&self) -> u64 {
        self.mem.unwrap_or_else(webmill::resources::default_budget)
    }

    /// The reporter for progress and notes.
    pub fn reporter(&self) -> webmill::progress::SharedReporter {
        Arc::new(progress::BarReporter::new(self.quiet))
    }

    /// Opens a job for writing (taking its lock), applying `--tmp-dir`.
    pub fn open_job(
        &self,
        dir: &std::path::Path,
        create: bool,
    ) -> webmill::Result<webmill::job::Job> {
        let mut job = webmill::job::Job::open(dir, create)?;
        if let Some(t) = &self.tmp_dir {
            job.set_tmp_root(t)?;
        }
        Ok(job)
    }

    /// Opens a job for reading: no lock, nothing written.
    pub fn open_view(&self, dir: &std::path::Path) -> webmill::Result<webmill::job::JobView> {
        webmill::job::JobView::open(dir)
    }

    /// A scratch directory for a read-only command's external sort: under
    /// `--tmp-dir` if given, else in the system's temporary directory
    /// (`$TMPDIR`), never in the job (a view writes nothing there, so it
    /// works on a read-only job), named after this process so that
    /// concurrent commands do not collide.
    pub fn scratch_dir(&self) -> webmill::Result<PathBuf> {
        let root = match &self.tmp_dir {
            Some(t) if !t.is_dir() => {
                return Err(webmill::Error::usage_at(
                    t,
                    "the --tmp-dir directory does not exist (create it first)",
                ))
            }
            Some(t) => t.clone(),
            None => std::env::temp_dir(),
        };
        let dir = root.join(format!("webmill-scratch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| {
            webmill::Error::usage_at(
                &dir,
                format!("cannot make a scratch directory ({e}); give --tmp-dir on a writable disk"),
            )
        })?;
        Ok(dir)
    }

    /// The settings of a stage command.
    pub fn settings(&self, force: bool, strict: bool) -> webmill::job::Settings {
        webmill::job::Settings {
            mem: self.mem(),
            reporter: self.reporter(),
            force,
            strict,
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    Run(Box<cmd::run::Args>),
    Ingest(cmd::ingest::Args),
    Bowtie(cmd::bowtie::Args),
    Overlap(cmd::overlap::Args),
    Layout(cmd::layout::Args),
    ImportGraph(cmd::import_graph::Args),
    Pagerank(cmd::pagerank::Args),
    Index(cmd::index::Args),
    Dedup(cmd::dedup::Args),
    DedupEval(cmd::dedup_eval::Args),
    DedupReport(cmd::dedup_report::Args),
    Top(cmd::top::Args),
    Stats(cmd::stats::Args),
    Export(cmd::export::Args),
    Search(cmd::search::Args),
    Serve(cmd::serve::Args),
    Shard(cmd::shard::Args),
    Inspect(cmd::inspect::Args),
    Verify(cmd::verify::Args),
    Dump(cmd::dump::Args),
}

/// Lets a closed pipe (`webmill export edges JOB | head`) end the process
/// quietly, as it ends other Unix tools: Rust programs ignore SIGPIPE, so
/// `println!` would panic on the write error instead.
fn die_on_closed_pipe() {
    #[cfg(unix)]
    {
        extern "C" {
            fn signal(signum: std::ffi::c_int, handler: usize) -> usize;
        }
        const SIGPIPE: std::ffi::c_int = 13;
        const SIG_DFL: usize = 0;
        // SAFETY: restores the default disposition of one signal before any
        // other thread exists; no handler code of ours is involved.
        unsafe {
            signal(SIGPIPE, SIG_DFL);
        }
    }
}

fn main() -> ExitCode {
    webmill::resources::bound_allocator_retention();
    die_on_closed_pipe();
    let cli = Cli::parse();
    if let Some(n) = cli.global.threads {
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
        {
            eprintln!("webmill: cannot start {n} threads: {e}");
            return ExitCode::FAILURE;
        }
    }
    let g = &cli.global;
    let result = match cli.command {
        Command::Run(a) => cmd::run::run(*a, g),
        Command::Ingest(a) => cmd::ingest::run(a, g),
        Command::Shard(a) => cmd::shard::run(a, g),
        Command::Bowtie(a) => cmd::bowtie::run(a, g),
        Command::Overlap(a) => cmd::overlap::run(a, g),
        Command::Layout(a) => cmd::layout::run(a, g),
        Command::ImportGraph(a) => cmd::import_graph::run(a, g),
        Command::Pagerank(a) => cmd::pagerank::run(a, g),
        Command::Index(a) => cmd::index::run(a, g),
        Command::Dedup(a) => cmd::dedup::run(a, g),
        Command::DedupEval(a) => cmd::dedup_eval::run(a, g),
        Command::DedupReport(a) => cmd::dedup_report::run(a, g),
        Command::Top(a) => cmd::top::run(a, g),
        Command::Stats(a) => cmd::stats::run(a, g),
        Command::Export(a) => cmd::export::run(a, g),
        Command::Search(a) => cmd::search::run(a, g),
        Command::Serve(a) => cmd::serve::run(a, g),
        Command::Inspect(a) => cmd::inspect::run(a, g),
        Command::Verify(a) => cmd::verify::run(a, g),
        Command::Dump(a) => cmd::dump::run(a, g),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if cmd::is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("webmill: error: {}", cmd::describe_error(&e));
            ExitCode::from(cmd::exit_code(&e))
        }
    }
}

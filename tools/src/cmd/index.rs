//! `webmill index`: the lexicon and the inverted barrels.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::index::{build_index, IndexOptions, Stem, DEFAULT_BARRELS};
use webmill::job::Outcome;
use webmill::resources::format_bytes;

use crate::Global;

/// Build Brin & Page's index of an ingested job: lexicon, forward barrels,
/// and, sorted barrel by barrel, the short (title and anchor hits) and full
/// inverted barrels in JOB/index/.
///
/// Page words become plain hits; URL, title and anchor words fancy hits of
/// the page the link points to (uncrawled pages too). Runs under --mem;
/// interrupt it and run the same command to resume, with byte-identical
/// results.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (ingested and resolved)
    job: PathBuf,
    #[command(flatten)]
    flags: IndexArgs,
    /// Recompute although finished, or discard checkpoints made with other
    /// parameters
    #[arg(long)]
    force: bool,
}

/// The `index` stage's flags (also those of `webmill run`).
#[derive(clap::Args, Debug)]
pub struct IndexArgs {
    /// Index: barrels the wordID range is cut into, at equal shares of the
    /// hits
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BARRELS)]
    barrels: u32,
    /// Index: stem words (pages, titles, URLs, anchors, and queries alike):
    /// english = Snowball's English stemmer, so `vacuuming` finds `vacuum`
    #[arg(long, value_name = "HOW", default_value = "none", value_parser = parse_stem)]
    stem: Stem,
}

fn parse_stem(s: &str) -> Result<Stem, String> {
    Stem::parse(s).map_err(|e| e.to_string())
}

impl IndexArgs {
    /// As the library takes them.
    pub fn options(&self) -> IndexOptions {
        IndexOptions {
            barrels: self.barrels,
            stem: self.stem,
        }
    }
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let mut job = g.open_job(&args.job, false)?;
    let settings = g.settings(args.force, false);
    let reporter = settings.reporter.clone();
    let opts = args.flags.options();
    match build_index(&mut job, &opts, &settings)? {
        Outcome::Skipped { .. } => {}
        Outcome::Done {
            record,
            resumed,
            figures: s,
        } => {
            let f = &record.figures;
            reporter.note(&format!(
                "index: {} words, {} postings ({} with title or anchor hits), {} hits in {:.1} s{}; lexicon {}, barrels {}; peak RSS {} at --mem {}",
                s.words,
                s.postings.0,
                s.postings.1,
                s.hits,
                f.seconds,
                if resumed { " (resumed)" } else { "" },
                format_bytes(s.lexicon_bytes),
                format_bytes(s.full_bytes),
                format_bytes(f.peak_rss),
                format_bytes(settings.mem),
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

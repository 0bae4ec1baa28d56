//! `webmill index`: the lexicon and the short and full inverted barrels.

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
    /// Barrels the wordID range is cut into, at equal shares of the hits
    #[arg(long, default_value_t = DEFAULT_BARRELS)]
    barrels: u32,
    /// Stem words (pages, titles, URLs, anchors, and queries alike):
    /// english = Snowball's English stemmer, so `vacuuming` finds `vacuum`
    #[arg(long, value_name = "HOW", default_value = "none",
          value_parser = ["none", "english"])]
    stem: String,
    /// Recompute although finished, or discard checkpoints made with other
    /// parameters
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let mut job = g.open_job(&args.job, false)?;
    let settings = g.settings(args.force, false);
    let reporter = settings.reporter.clone();
    let opts = IndexOptions {
        barrels: args.barrels,
        stem: Stem::parse(&args.stem)?,
    };
    match build_index(&mut job, &opts, &settings)? {
        Outcome::Skipped { .. } => {}
        Outcome::Done {
            record,
            resumed,
            figures: s,
        } => {
            let f = &record.figures;
            reporter.note(&format!(
                "index: {} words, {} postings ({} short), {} hits in {:.1} s{}; lexicon {}, full barrels {}, short {}; peak RSS {} at --mem {}",
                s.words,
                s.postings.0,
                s.postings.1,
                s.hits,
                f.seconds,
                if resumed { " (resumed)" } else { "" },
                format_bytes(s.lexicon_bytes),
                format_bytes(s.barrel_bytes.0),
                format_bytes(s.barrel_bytes.1),
                format_bytes(f.peak_rss),
                format_bytes(settings.mem),
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

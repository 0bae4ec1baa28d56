//! `webmill dedup`: near-duplicate pairs and clusters by sorting sketches.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::dedup::stage::{dedup, DedupOptions, Verify};
use webmill::dedup::Alg;
use webmill::job::{JobFile, Outcome, StageId};
use webmill::resources::format_bytes;

use super::thousands;
use crate::Global;

/// Find duplicate and near-duplicate pages of an ingested job.
///
/// One parallel pass sketches every page for all chosen algorithms; sketch
/// keys are sorted externally (within --mem), docs sharing a key become
/// candidate pairs, candidates are verified against the whole sketches (or,
/// with --verify exact, the pages' shingle sets) by sort–merge joins, and union-find turns pairs into clusters with a keep-list
/// (highest PageRank when the job has ranks, else smallest docID). Each
/// algorithm is a stage `dedup-ALG`; its outputs are sketches-ALG.wm,
/// pairs-ALG.wm, clusters-ALG.wm and a log-log plot dedup-ALG-per-page.svg of
/// the number of near-duplicates per page. See `webmill export pairs|clusters`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (after `webmill ingest`)
    job: PathBuf,
    /// Algorithm, repeatable: exact (64-bit fingerprint of the token
    /// sequence), broder (Alg. B: 84 min-values of 10-word Rabin-fingerprinted
    /// shingles, 6 supershingles, 15 megashingles; similar = ≥ 2 equal
    /// supershingles), charikar (Alg. C: 384-bit random-projection sketch,
    /// 13 subsketches; similar = ≥ 372 equal bits), minhash (200 min-values of
    /// 4-word shingles, 20 bands of 10; similar = ≥ --threshold equal entries)
    #[arg(long = "alg", value_name = "ALG", required = true, value_parser = parse_alg)]
    algs: Vec<Alg>,
    #[command(flatten)]
    flags: DedupArgs,
    /// Recompute although the job already has these stages finished
    #[arg(long)]
    force: bool,
}

/// The `dedup-ALG` stages' flags but the algorithms (also those of
/// `webmill run`, where `--dedup` names the algorithms).
#[derive(clap::Args, Debug)]
pub struct DedupArgs {
    /// Near-duplicates: shingle length in words for broder and minhash [default: 10 for
    /// broder, 4 for minhash]
    #[arg(long, value_name = "K")]
    shingle: Option<usize>,
    /// Near-duplicates, minhash: the fraction of equal sketch entries that makes a pair
    /// similar; with --verify exact, the exact Jaccard coefficient a broder or
    /// minhash pair must reach
    #[arg(long, value_name = "T", default_value_t = DedupOptions::default().threshold)]
    threshold: f64,
    /// Near-duplicates: how broder and minhash verify candidate pairs: sketch (the sketches'
    /// own test; the pair file records their estimate) or exact (the exact
    /// Jaccard coefficient of the two pages' k-shingle sets, the one
    /// dedup-eval measures: no false positives, recall the candidates', never
    /// below sketch's). Exact costs 8 bytes per distinct shingle of every
    /// page in the sketch sort and sketches-ALG.wm (about 8 bytes per word,
    /// 10x a min-hash sketch on 1000-word pages) and again per candidate pair
    /// in the verification sort, plus a merge of two sorted sets per
    /// candidate: on llvm-15+16-doc, 1.5-2x the stage's time and 22x the sketch
    /// file. Not for charikar
    #[arg(long, value_name = "HOW", default_value = "sketch", value_parser = parse_verify)]
    verify: Verify,
    /// Near-duplicates: docs sharing one key beyond this many are not paired with each other
    /// but linked to the group's first doc (boilerplate guard; counted)
    #[arg(long, value_name = "N", default_value_t = DedupOptions::default().max_group)]
    max_group: u64,
}

impl DedupArgs {
    /// As the library takes them, for algorithms `algs`.
    pub fn options(&self, algs: Vec<Alg>) -> DedupOptions {
        DedupOptions {
            algs,
            shingle: self.shingle,
            threshold: self.threshold,
            max_group: self.max_group,
            verify: self.verify,
        }
    }
}

pub fn parse_verify(s: &str) -> Result<Verify, String> {
    Verify::parse(s).map_err(|e| e.to_string())
}

pub fn parse_alg(s: &str) -> Result<Alg, String> {
    Alg::parse(s).map_err(|e| e.to_string())
}

/// What a `dedup-ALG` stage's pairs are, in words, from its recorded
/// parameters: the methods differ in what they compare and where they draw
/// the line, which is why they report different numbers of pairs.
pub fn rule_in_words(alg: Alg, params: &serde_json::Value) -> String {
    let k = params["shingle"].as_u64().unwrap_or(0);
    let t = params["threshold"].as_f64();
    let exact = params["verify"].as_str() == Some("exact");
    match alg {
        Alg::Exact => "pages with identical word sequences".to_string(),
        Alg::MinHash => format!(
            "pages whose {k}-word shingle sets are {} at Jaccard resemblance ≥ {}",
            if exact { "measured" } else { "estimated" },
            t.map_or("?".into(), |t| t.to_string())
        ),
        Alg::Broder if exact => format!(
            "pages sharing a megashingle of {k}-word shingles, kept at measured Jaccard resemblance ≥ {}",
            t.map_or("?".into(), |t| t.to_string())
        ),
        Alg::Broder => format!(
            "pages sharing a megashingle: two of six supershingles of their {k}-word shingles agree (each with probability J^14, so mostly pages of resemblance J above ~0.9)"
        ),
        Alg::Charikar => format!(
            "pages whose term vectors' random projections agree on ≥ {} of 384 bits (an angle of at most ~{:.1}°, cosine ≥ ~{:.3})",
            webmill::dedup::charikar::CHARIKAR_THRESHOLD,
            180.0 * f64::from(384 - webmill::dedup::charikar::CHARIKAR_THRESHOLD) / 384.0,
            (std::f64::consts::PI * f64::from(384 - webmill::dedup::charikar::CHARIKAR_THRESHOLD) / 384.0).cos()
        ),
    }
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let mut job = g.open_job(&args.job, false)?;
    let settings = g.settings(args.force, false);
    let reporter = settings.reporter.clone();
    let opts = args.flags.options(args.algs);
    for (alg, outcome) in dedup(&mut job, &opts, &settings)? {
        let Outcome::Done {
            figures: x, record, ..
        } = outcome
        else {
            continue;
        };
        let f = &record.figures;
        reporter.note(&format!(
            "{}: {} docs sketched, {} candidate pairs from {} groups ({} capped), {} pairs verified by {} ({} same host, {} cross-host), {} clusters holding {} docs in {:.1} s; sketch file {}; peak RSS {} at --mem {}",
            StageId::Dedup(alg),
            thousands(x.docs_sketched),
            thousands(x.candidates),
            thousands(x.groups),
            thousands(x.capped_groups),
            thousands(x.pairs),
            x.verify
                .as_deref()
                .unwrap_or(if alg == Alg::Exact { "fingerprint" } else { "sketch" }),
            thousands(x.same_host_pairs),
            thousands(x.cross_host_pairs),
            thousands(x.clusters),
            thousands(x.docs_in_clusters),
            f.seconds,
            format_bytes(x.sketch_file_bytes),
            format_bytes(f.peak_rss),
            format_bytes(settings.mem),
        ));
        reporter.note(&format!(
            "  pairs are {}; `webmill dedup-eval {} --alg {}` measures precision and recall on a sample",
            rule_in_words(alg, &record.params),
            args.job.display(),
            alg.name()
        ));
        reporter.note(&format!(
            "  near-duplicates per page (log-log): {}",
            job.file(JobFile::DedupPlot(alg))?.display()
        ));
        for c in x.largest_clusters.iter().take(5) {
            reporter.note(&format!(
                "  cluster {} of {} docs, e.g. {}",
                c.cluster, c.size, c.example
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

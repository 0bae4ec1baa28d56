//! Evaluation of a near-duplicate run against exact similarities
//! (`webmill dedup-eval`).
//!
//! A sketch only *estimates* a similarity, so an algorithm reports a pair with
//! a probability that depends on the pair's true similarity — the curves of
//! [`theory`](super::theory). This module measures that curve on a job:
//!
//! 1. **Sample.** The `N` docs (2,000 by default; all when the job has fewer)
//!    whose `xxh3_64(docID as u64 little-endian)` are smallest, among the docs
//!    with a token stream — and, for the sketching algorithms, a non-empty one:
//!    an empty page has no sketch (see [`super`]), so it cannot be reported and
//!    is left out. The choice depends only on the docIDs, so it is the same on
//!    every run and every machine. The sample's token streams are read in one
//!    pass over `text.wm` (a bounded max-heap keeps the `N` smallest hashes);
//!    `N` is small, so the sample lives in memory.
//! 2. **Truth.** For every pair of the sample, the exact similarity the
//!    algorithm estimates, with its parameters from the stage's record in
//!    `job.json`: the Jaccard coefficient of the `k`-word shingle sets (the same
//!    Rabin fingerprints as the sketches; `k` = 4 for min-hash and 10 for Alg. B by
//!    default) for `broder` and `minhash`, the cosine of the term-frequency
//!    vectors (words identified by their fingerprints, as Alg. C's token vectors
//!    are) for `charikar`, and equality of the token sequences (1 or 0) for
//!    `exact`. The `N(N−1)/2` pairs are enumerated in parallel (rayon) and only
//!    counted: memory stays linear in `N`.
//! 3. **Reported.** The stage's pair file is streamed; the pairs with both ends
//!    in the sample are kept (a hash set; at most a few per sampled doc).
//! 4. **Bins.** Pairs are binned by true similarity (`[0, 0.5)`, `[0.5, 0.6)`, …,
//!    `[0.95, 1)`, `[1]` for Jaccard; finer near 1 for cosine, where Alg. C's
//!    curve lives). Per bin: the pairs, the reported ones, the detection rate, and
//!    the theoretical probability averaged over the bin's pairs, with the
//!    expected number of reported pairs and the z-score of the difference
//!    (`(reported − Σp) / √Σp(1−p)`: pairs reported independently).
//! 5. **Summary.** Recall on the pairs of similarity ≥ 0.9 and precision: the
//!    reported pairs whose true similarity reaches the algorithm's *target*
//!    ([`default_target`]) over all reported pairs of the sample.
//!
//! # The theoretical curves
//!
//! * `minhash`: a pair is reported when it becomes a candidate (one of the 20
//!   band keys of 10 entries equal) **and** passes verification (at least
//!   `⌈threshold · 200⌉` of the 200 entries equal). The two events are not
//!   independent — a fully equal band contributes 10 equal entries — so they are
//!   not multiplied: under the model of entries equal independently with
//!   probability `J`, the bands' equal-entry counts are independent
//!   `Binomial(10, J)`, and a dynamic programme over the bands, on the state
//!   (equal entries so far, some band fully equal), gives the joint probability
//!   exactly ([`minhash_detection_probability`](super::theory::minhash_detection_probability)). It lies below both the banding
//!   S-curve ([`banding_probability`](super::theory::banding_probability)) and CS124's curve
//!   ([`minhash_probability`](super::theory::minhash_probability)).
//! * `broder`: [`broder_probability`](super::theory::broder_probability) (≥ 2 of 6 supershingles equal);
//!   `charikar`: [`charikar_probability`](super::theory::charikar_probability) (≥ 372 of 384 bits); `exact`: 1 for
//!   equal token sequences, 0 otherwise (a 64-bit fingerprint collision aside).
//! * With `--verify exact` (stage parameter `"verify": "exact"`), `minhash` and
//!   `broder` keep a candidate when the exact Jaccard coefficient of its shingle
//!   sets — the very similarity measured here — reaches the threshold: the curve
//!   is the candidate curve ([`banding_probability`](super::theory::banding_probability) for min-hash,
//!   [`broder_probability`](super::theory::broder_probability) for Alg. B) for `J ≥ threshold`, and 0 below it; the
//!   default precision target is the threshold, so precision is 1 by
//!   construction.
//!
//! Curves are tabulated once on a grid of 10,001 points and interpolated
//! linearly (error far below the sampling noise of any bin).
//!
//! Limits of the comparison: groups of docs sharing a key beyond the stage's
//! `max_group` are linked to their first doc only, so pairs inside such a group
//! may be missing from the pair file by design (the stage's `capped_groups`
//! figure, printed with the report); and the curves assume the entries of two
//! sketches agree independently, which is what the measured rates test.
//!
//! # Layout
//!
//! This file holds the options and [`evaluate`], which runs the steps above;
//! `sample` draws the sample and finds the reported pairs inside it (steps 1
//! and 3), `similarity` the exact similarity of two sampled docs (step 2),
//! `curve` the theoretical curve of the stage and its tabulation, `bins` the
//! bins and the count over all pairs (step 4), `report` the [`EvalReport`]
//! with its table and plot.

use std::collections::HashMap;
use std::time::Instant;

use rayon::prelude::*;

use super::broder::BRODER_SHINGLE_LEN;
use super::minhash::MINHASH_SHINGLE_LEN;
use super::shingle::Shingler;
use super::stage::Dedup;
use super::Alg;
use crate::error::{Error, Result};
use crate::job::{JobView, StageId};

mod bins;
mod curve;
mod report;
mod sample;
mod similarity;

pub use bins::{COSINE_EDGES, JACCARD_EDGES};
pub use curve::{default_target, theory_at, EvalSetup};
pub use report::{BinReport, EvalReport};

use sample::Sample;
use similarity::{profile, Measure, Profile};

/// Default sample size.
pub const DEFAULT_SAMPLE: usize = 2000;
/// Recall is measured on the pairs at or above this similarity.
pub const RECALL_AT: f64 = 0.9;

/// How to evaluate.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// The algorithm whose finished `dedup-ALG` stage is evaluated.
    pub alg: Alg,
    /// Sample size (all docs when the job has fewer).
    pub sample: usize,
    /// Precision target; `None`: [`default_target`].
    pub target: Option<f64>,
}

impl EvalOptions {
    /// The default sample for `alg`.
    pub fn new(alg: Alg) -> EvalOptions {
        EvalOptions {
            alg,
            sample: DEFAULT_SAMPLE,
            target: None,
        }
    }
}

/// Evaluates the finished `dedup-ALG` stage of `job` on a sample of its docs.
pub fn evaluate(job: &JobView, opts: &EvalOptions) -> Result<EvalReport> {
    let started = Instant::now();
    let alg = opts.alg;
    if opts.sample < 2 {
        return Err(Error::usage(format!(
            "--sample must be at least 2 docs, got {}",
            opts.sample
        )));
    }
    let stage = StageId::Dedup(alg);
    let rec = job.require(stage)?;
    let params: super::stage::DedupParams =
        serde_json::from_value(rec.params.clone()).map_err(|e| {
            Error::corrupt(
                job.dir().join("job.json"),
                format!("parameters of {stage}"),
                0,
                e.to_string(),
            )
        })?;
    let capped_groups = job.figures::<Dedup>(stage)?.map_or(0, |f| f.capped_groups);
    let shingle = match alg {
        Alg::Broder | Alg::MinHash => Some(params.shingle.unwrap_or(if alg == Alg::Broder {
            BRODER_SHINGLE_LEN
        } else {
            MINHASH_SHINGLE_LEN
        })),
        _ => None,
    };
    let verify = params.verify.clone();
    let exact_verify = verify.as_deref() == Some("exact");
    let threshold = (alg == Alg::MinHash || exact_verify).then(|| {
        params
            .threshold
            .unwrap_or(super::minhash::MINHASH_THRESHOLD)
    });
    let target = opts.target.unwrap_or_else(|| match threshold {
        Some(t) if exact_verify => t,
        _ => default_target(alg, threshold.unwrap_or(0.8)),
    });
    if !(target > 0.0 && target <= 1.0) {
        return Err(Error::usage(format!(
            "--target must be in (0, 1], got {target}"
        )));
    }
    let measure = match alg {
        Alg::Exact => Measure::Equal,
        Alg::Charikar => Measure::Cosine,
        Alg::Broder | Alg::MinHash => Measure::Jaccard(shingle.unwrap_or(MINHASH_SHINGLE_LEN)),
    };
    let (similarity_name, theory_name, curve) =
        curve::stage_curve(alg, measure, threshold, exact_verify);

    // 1. The sample: the N smallest xxh3(docID), in one pass.
    let Sample {
        docs,
        empty_docs,
        pages,
    } = sample::draw(job, opts.sample, alg != Alg::Exact)?;
    let n = pages.len();
    let index: HashMap<u64, u32> = pages
        .iter()
        .enumerate()
        .map(|(i, (d, _))| (*d, i as u32))
        .collect();

    // 2. Profiles, in parallel.
    let shingler = match measure {
        Measure::Jaccard(k) => Some(Shingler::new(k)?),
        _ => None,
    };
    let profiles: Vec<Profile> = pages
        .par_iter()
        .map(|(_, w)| profile(measure, w, shingler.as_ref()))
        .collect();
    drop(pages);

    // 3. Reported pairs inside the sample.
    let (reported, reported_total) = sample::reported_pairs(job, alg, &index)?;

    // 4. All pairs, in parallel, counted only.
    let edges = bins::edges(measure);
    let acc = bins::count_pairs(&profiles, &reported, &curve, edges, target);
    let bin_reports = bins::bin_reports(&acc, edges);
    let ratio = |x: u64, y: u64| (y > 0).then(|| x as f64 / y as f64);
    Ok(EvalReport {
        setup: EvalSetup {
            algorithm: alg.name().to_string(),
            similarity: similarity_name,
            shingle,
            threshold,
            verify,
            theory: theory_name,
            target,
            recall_at: RECALL_AT,
        },
        docs,
        empty_docs,
        sample: n as u64,
        pairs: (n as u64) * (n as u64).saturating_sub(1) / 2,
        reported_total,
        reported: reported.len() as u64,
        capped_groups,
        bins: bin_reports,
        relevant: acc.relevant,
        relevant_reported: acc.relevant_reported,
        recall: ratio(acc.relevant_reported, acc.relevant),
        expected_recall: (acc.relevant > 0).then(|| acc.relevant_p / acc.relevant as f64),
        reported_on_target: acc.reported_on_target,
        precision: ratio(acc.reported_on_target, acc.reported),
        expected_precision: (acc.p_total > 0.0).then(|| acc.p_on_target / acc.p_total),
        seconds: started.elapsed().as_secs_f64(),
    })
}

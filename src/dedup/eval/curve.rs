//! The theoretical curve a stage is compared with, chosen from its parameters
//! (see "The theoretical curves" in the [module docs](super)), and its
//! tabulation on a grid for the count over all pairs.

use rayon::prelude::*;
use serde::Serialize;

use super::similarity::Measure;
use crate::dedup::minhash::{DEFAULT_BANDS, DEFAULT_ROWS, MINHASH_LEN};
use crate::dedup::theory::{
    banding_probability, broder_probability, charikar_probability, minhash_detection_probability,
};
use crate::dedup::Alg;

/// What `dedup-eval` compares and against which curve, from the stage's
/// parameters.
#[derive(Clone, Debug, Serialize)]
pub struct EvalSetup {
    /// The algorithm.
    pub algorithm: String,
    /// The true similarity measured.
    pub similarity: String,
    /// Shingle length in words (broder, minhash).
    pub shingle: Option<usize>,
    /// Min-hash threshold; with exact verification, the Jaccard coefficient a
    /// broder or minhash pair must reach.
    pub threshold: Option<f64>,
    /// How candidates were verified (`"sketch"` or `"exact"`; broder and
    /// minhash).
    pub verify: Option<String>,
    /// The theoretical curve, in words.
    pub theory: String,
    /// The precision target.
    pub target: f64,
    /// Recall is measured on pairs at or above this similarity.
    pub recall_at: f64,
}

/// Points of the tabulated theoretical curves.
const GRID: usize = 10_000;

/// The precision target of an algorithm: a reported pair counts as correct when
/// its true similarity reaches it.
///
/// * `minhash`: its threshold (0.8 by default): the similarity it is asked to find.
/// * `broder`: Jaccard 0.8 of 10-shingles, where Alg. B's curve is 2.6%: a pair
///   below it is reported only by chance.
/// * `charikar`: cosine 0.98, where Alg. C's curve is 0.5% (its 50% point is
///   cosine 0.995, 372 of 384 bits).
/// * `exact`: 1 (equal token sequences).
pub fn default_target(alg: Alg, minhash_threshold: f64) -> f64 {
    match alg {
        Alg::MinHash => minhash_threshold,
        Alg::Broder => 0.8,
        Alg::Charikar => 0.98,
        Alg::Exact => 1.0,
    }
}

/// A theoretical curve, tabulated; 0 below `floor` (exact verification's
/// threshold, a step that interpolation would blur).
pub(super) struct Curve {
    step: bool,
    table: Vec<f64>,
    floor: Option<f64>,
}

impl Curve {
    /// `f` tabulated, 0 below `floor` (less 1e-12, the tolerance of the stage
    /// and of the precision target).
    pub(super) fn with_floor(f: impl Fn(f64) -> f64 + Sync, floor: Option<f64>) -> Curve {
        Curve {
            floor,
            ..Curve::new(f, false)
        }
    }

    pub(super) fn new(f: impl Fn(f64) -> f64 + Sync, step: bool) -> Curve {
        let table = if step {
            Vec::new()
        } else {
            (0..=GRID)
                .into_par_iter()
                .map(|i| f(i as f64 / GRID as f64))
                .collect()
        };
        Curve {
            step,
            table,
            floor: None,
        }
    }

    #[inline]
    pub(super) fn at(&self, s: f64) -> f64 {
        if self.floor.is_some_and(|t| s < t - 1e-12) {
            return 0.0;
        }
        if self.step {
            return if s >= 1.0 { 1.0 } else { 0.0 };
        }
        let x = s.clamp(0.0, 1.0) * GRID as f64;
        let i = (x.floor() as usize).min(GRID - 1);
        let f = x - i as f64;
        self.table[i] * (1.0 - f) + self.table[i + 1] * f
    }
}

/// The true similarity measured, the theoretical curve in words, and the curve
/// tabulated, for a stage of `alg` measured by `measure`; `threshold` is the
/// min-hash threshold or, with `exact_verify`, the Jaccard coefficient a pair
/// must reach.
pub(super) fn stage_curve(
    alg: Alg,
    measure: Measure,
    threshold: Option<f64>,
    exact_verify: bool,
) -> (String, String, Curve) {
    let floor = threshold.filter(|_| exact_verify);
    match (alg, measure) {
        (Alg::MinHash, Measure::Jaccard(k)) if exact_verify => (
            format!("Jaccard of {k}-word shingle sets"),
            format!(
                "P(one of {DEFAULT_BANDS} bands of {DEFAULT_ROWS} entries equal) = 1 − (1 − J^{DEFAULT_ROWS})^{DEFAULT_BANDS} for J ≥ {t}, 0 below (exact verification)",
                t = threshold.unwrap_or(0.8)
            ),
            Curve::with_floor(
                |s| banding_probability(s, DEFAULT_BANDS, DEFAULT_ROWS),
                floor,
            ),
        ),
        (Alg::Broder, Measure::Jaccard(k)) if exact_verify => (
            format!("Jaccard of {k}-word shingle sets"),
            format!(
                "P(≥ 2 of 6 supershingles of 14 min-values equal) = 1 − (1−J^14)^6 − 6 J^14 (1−J^14)^5 for J ≥ {t}, 0 below (exact verification)",
                t = threshold.unwrap_or(0.8)
            ),
            Curve::with_floor(broder_probability, floor),
        ),
        (Alg::MinHash, Measure::Jaccard(k)) => {
            let t = threshold.unwrap_or(0.8);
            let need = (t * MINHASH_LEN as f64 - 1e-9).ceil();
            (
                format!("Jaccard of {k}-word shingle sets"),
                format!(
                    "P(one of {DEFAULT_BANDS} bands of {DEFAULT_ROWS} entries equal AND ≥ {need} of {MINHASH_LEN} entries equal), entries equal independently with probability J (exact joint probability)"
                ),
                Curve::new(
                    move |s| {
                        minhash_detection_probability(
                            s,
                            DEFAULT_BANDS,
                            DEFAULT_ROWS,
                            MINHASH_LEN,
                            t,
                        )
                    },
                    false,
                ),
            )
        }
        (_, Measure::Jaccard(k)) => (
            format!("Jaccard of {k}-word shingle sets"),
            "P(≥ 2 of 6 supershingles of 14 min-values equal) = 1 − (1−J^14)^6 − 6 J^14 (1−J^14)^5"
                .to_string(),
            Curve::new(broder_probability, false),
        ),
        (_, Measure::Cosine) => (
            "cosine of term-frequency vectors".to_string(),
            "P(Binomial(384, 1 − arccos(cos)/π) ≥ 372)".to_string(),
            Curve::new(charikar_probability, false),
        ),
        (_, Measure::Equal) => (
            "equality of token sequences (1 or 0)".to_string(),
            "1 for equal token sequences, 0 otherwise".to_string(),
            Curve::new(|s| s, true),
        ),
    }
}

/// The theoretical detection probability of `report`'s algorithm at true
/// similarity `s`, with its parameters (untabulated).
pub fn theory_at(setup: &EvalSetup, s: f64) -> f64 {
    if setup.verify.as_deref() == Some("exact") {
        let t = setup.threshold.unwrap_or(0.8);
        if s < t - 1e-12 {
            return 0.0;
        }
        match setup.algorithm.as_str() {
            "minhash" => return banding_probability(s, DEFAULT_BANDS, DEFAULT_ROWS),
            "broder" => return broder_probability(s),
            _ => {}
        }
    }
    match setup.algorithm.as_str() {
        "minhash" => minhash_detection_probability(
            s,
            DEFAULT_BANDS,
            DEFAULT_ROWS,
            MINHASH_LEN,
            setup.threshold.unwrap_or(0.8),
        ),
        "broder" => broder_probability(s),
        "charikar" => charikar_probability(s),
        _ => {
            if s >= 1.0 {
                1.0
            } else {
                0.0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabulated_curves_are_close_to_the_functions() {
        let c = Curve::new(charikar_probability, false);
        for i in 0..=1000 {
            let s = 0.95 + 0.05 * i as f64 / 1000.0;
            assert!((c.at(s) - charikar_probability(s)).abs() < 2e-3, "{s}");
        }
        let m = Curve::new(
            |s| minhash_detection_probability(s, 20, 10, 200, 0.8),
            false,
        );
        for s in [0.5, 0.7, 0.77, 0.8, 0.83, 0.9] {
            let want = minhash_detection_probability(s, 20, 10, 200, 0.8);
            assert!((m.at(s) - want).abs() < 1e-4, "{s}");
        }
    }
}

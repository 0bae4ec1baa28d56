//! The result of an evaluation ([`EvalReport`]): what was compared, the bins,
//! recall and precision next to what the curve predicts; as a text table and
//! an SVG plot.

use std::fmt::Write as _;

use serde::Serialize;

use super::curve::{theory_at, EvalSetup};

/// One similarity bin of the report.
#[derive(Clone, Debug, Serialize)]
pub struct BinReport {
    /// Lower edge (inclusive).
    pub lo: f64,
    /// Upper edge (exclusive, except for the last bin `[1, 1]`).
    pub hi: f64,
    /// The bin as text, e.g. `[0.80, 0.85)`.
    pub label: String,
    /// Sample pairs whose true similarity falls in the bin.
    pub pairs: u64,
    /// Of those, the pairs in the algorithm's pair file.
    pub reported: u64,
    /// `reported / pairs` (`None` for an empty bin).
    pub rate: Option<f64>,
    /// The theoretical detection probability averaged over the bin's pairs.
    pub theory: Option<f64>,
    /// The expected number of reported pairs, `Σ p`.
    pub expected: f64,
    /// `(reported − Σp) / √Σp(1−p)`, `None` when the variance is 0.
    pub z: Option<f64>,
    /// The mean true similarity of the bin's pairs.
    pub mean_similarity: Option<f64>,
}

/// The result of an evaluation.
#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    /// What was compared.
    pub setup: EvalSetup,
    /// Docs with a token stream (non-empty for the sketching algorithms).
    pub docs: u64,
    /// Docs with an empty token stream left out (sketching algorithms).
    pub empty_docs: u64,
    /// Docs in the sample.
    pub sample: u64,
    /// Pairs of the sample, `n(n−1)/2`.
    pub pairs: u64,
    /// Pairs of the whole pair file.
    pub reported_total: u64,
    /// Pairs of the pair file with both ends in the sample.
    pub reported: u64,
    /// The stage's capped groups (pairs inside them may be missing by design).
    pub capped_groups: u64,
    /// The bins.
    pub bins: Vec<BinReport>,
    /// Sample pairs with similarity ≥ `recall_at`.
    pub relevant: u64,
    /// Of those, the reported ones.
    pub relevant_reported: u64,
    /// `relevant_reported / relevant`.
    pub recall: Option<f64>,
    /// The expected recall on those pairs (mean theoretical probability).
    pub expected_recall: Option<f64>,
    /// Reported pairs whose true similarity reaches the target.
    pub reported_on_target: u64,
    /// `reported_on_target / reported`.
    pub precision: Option<f64>,
    /// The precision the curve predicts on this sample: `Σ p` over the pairs
    /// at or above the target over `Σ p` over all pairs. A curve that rises
    /// at the target (min-hash's) reports pairs just below it by design.
    pub expected_precision: Option<f64>,
    /// Seconds the evaluation took.
    pub seconds: f64,
}

impl EvalReport {
    /// The report as a text table with its summary lines.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let s = &self.setup;
        let _ = writeln!(
            out,
            "dedup-eval {}: {} of {} docs sampled (smallest xxh3 of docID{}), {} pairs; {} pairs reported in all, {} inside the sample",
            s.algorithm,
            self.sample,
            self.docs,
            if self.empty_docs > 0 {
                format!("; {} empty docs left out", self.empty_docs)
            } else {
                String::new()
            },
            self.pairs,
            self.reported_total,
            self.reported
        );
        let _ = writeln!(out, "similarity: {}", s.similarity);
        if let Some(v) = &s.verify {
            let _ = writeln!(out, "verification: {v}");
        }
        let _ = writeln!(out, "theory: {}", s.theory);
        let _ = writeln!(
            out,
            "{:<16} {:>12} {:>9} {:>8} {:>8} {:>10} {:>7}",
            "bin", "pairs", "reported", "rate", "theory", "expected", "z"
        );
        let f = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.4}"));
        for b in &self.bins {
            let _ = writeln!(
                out,
                "{:<16} {:>12} {:>9} {:>8} {:>8} {:>10.1} {:>7}",
                b.label,
                b.pairs,
                b.reported,
                f(b.rate),
                f(b.theory),
                b.expected,
                b.z.map_or("-".to_string(), |z| format!("{z:+.2}"))
            );
        }
        let _ = writeln!(
            out,
            "recall on pairs with similarity ≥ {}: {} of {} = {} (theory {})",
            s.recall_at,
            self.relevant_reported,
            self.relevant,
            f(self.recall),
            f(self.expected_recall)
        );
        let _ = writeln!(
            out,
            "precision (reported pairs with similarity ≥ {}): {} of {} = {} (theory {})",
            s.target,
            self.reported_on_target,
            self.reported,
            f(self.precision),
            f(self.expected_precision)
        );
        if self.capped_groups > 0 {
            let _ = writeln!(
                out,
                "note: the stage capped {} groups (pairs inside them are linked to the group's first doc only)",
                self.capped_groups
            );
        }
        let _ = writeln!(out, "evaluated in {:.1} s", self.seconds);
        out
    }

    /// An SVG of the measured detection rate per bin (at the bin's mean
    /// similarity) against the theoretical curve and its per-bin average.
    pub fn plot_svg(&self) -> String {
        // The first bin is a catch-all: start the x axis at the second edge.
        let x0 = self.bins.get(1).map_or(0.0, |b| b.lo);
        let curve: Vec<(f64, f64)> = (0..=400)
            .map(|i| {
                let x = x0 + (1.0 - x0) * i as f64 / 400.0;
                (x, theory_at(&self.setup, x))
            })
            .collect();
        let pick = |v: fn(&BinReport) -> Option<f64>| -> Vec<(f64, f64)> {
            self.bins
                .iter()
                .filter(|b| b.lo >= x0)
                .filter_map(|b| Some((b.mean_similarity?, v(b)?)))
                .collect()
        };
        let measured = pick(|b| b.rate);
        let averaged = pick(|b| b.theory);
        use crate::plot::SeriesStyle;
        crate::plot::series_plot_svg(
            &format!(
                "dedup-eval {}: detection rate per bin ({} docs, {} pairs)",
                self.setup.algorithm, self.sample, self.pairs
            ),
            &self.setup.similarity,
            "P(reported)",
            &[
                crate::plot::Series {
                    label: "theory".into(),
                    color: "#1f77b4".into(),
                    style: SeriesStyle::Line,
                    points: curve,
                },
                crate::plot::Series {
                    label: "theory, bin average".into(),
                    color: "#2ca02c".into(),
                    style: SeriesStyle::LineDots,
                    points: averaged,
                },
                crate::plot::Series {
                    label: "measured".into(),
                    color: "#d62728".into(),
                    style: SeriesStyle::LineDots,
                    points: measured,
                },
            ],
            (x0, 1.0),
            (0.0, 1.0),
        )
    }
}

//! Bins by true similarity and the count over all pairs of the sample (step 4
//! of the [evaluation](super)): per bin the pairs, the reported ones and the
//! sums behind the expected count and the z-score; the recall and precision
//! sums beside them.

use std::collections::HashSet;

use rayon::prelude::*;

use super::curve::Curve;
use super::report::BinReport;
use super::similarity::{similarity, Measure, Profile};
use super::RECALL_AT;

/// Bin edges for Jaccard coefficients (`broder`, `minhash`, `exact`): bins
/// `[e_i, e_{i+1})`, then `[1]`.
pub const JACCARD_EDGES: [f64; 10] = [0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0];
/// Bin edges for cosines (`charikar`): Alg. C's curve rises between 0.98 and 1.
pub const COSINE_EDGES: [f64; 11] = [
    0.0, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 1.0,
];

/// Per-bin sums.
#[derive(Clone, Copy, Default)]
struct BinAcc {
    pairs: u64,
    reported: u64,
    sum_s: f64,
    sum_p: f64,
    sum_var: f64,
}

/// The sums over the pairs: per bin, and those behind recall and precision.
#[derive(Clone, Default)]
pub(super) struct Acc {
    bins: Vec<BinAcc>,
    /// Pairs at or above [`RECALL_AT`], reported ones, and their `Σ p`.
    pub(super) relevant: u64,
    pub(super) relevant_reported: u64,
    pub(super) relevant_p: f64,
    /// Reported pairs, and those at or above the precision target.
    pub(super) reported: u64,
    pub(super) reported_on_target: u64,
    /// `Σ p` over all pairs, and over those at or above the target.
    pub(super) p_total: f64,
    pub(super) p_on_target: f64,
}

impl Acc {
    fn new(bins: usize) -> Acc {
        Acc {
            bins: vec![BinAcc::default(); bins],
            ..Acc::default()
        }
    }

    fn merge(mut self, o: Acc) -> Acc {
        for (a, b) in self.bins.iter_mut().zip(&o.bins) {
            a.pairs += b.pairs;
            a.reported += b.reported;
            a.sum_s += b.sum_s;
            a.sum_p += b.sum_p;
            a.sum_var += b.sum_var;
        }
        self.relevant += o.relevant;
        self.relevant_reported += o.relevant_reported;
        self.relevant_p += o.relevant_p;
        self.reported += o.reported;
        self.reported_on_target += o.reported_on_target;
        self.p_total += o.p_total;
        self.p_on_target += o.p_on_target;
        self
    }
}

/// Bin edges and label format for a measure.
pub(super) fn edges(measure: Measure) -> &'static [f64] {
    match measure {
        Measure::Cosine => &COSINE_EDGES,
        _ => &JACCARD_EDGES,
    }
}

/// Index of the bin of `s`: `[e_i, e_{i+1})`, the last bin `[1]`.
#[inline]
fn bin_of(edges: &[f64], s: f64) -> usize {
    if s >= 1.0 {
        return edges.len() - 1;
    }
    edges.partition_point(|&e| e <= s).saturating_sub(1)
}

/// Counts every pair of the sample (`profiles`) into its bin, with its
/// theoretical probability from `curve`; `reported` holds the reported pairs
/// as `i << 32 | j`, `i < j`. In parallel (rayon), counted only: memory stays
/// linear in the sample.
pub(super) fn count_pairs(
    profiles: &[Profile],
    reported: &HashSet<u64>,
    curve: &Curve,
    edges: &[f64],
    target: f64,
) -> Acc {
    let n = profiles.len();
    let nbins = edges.len();
    let acc = (0..n)
        .into_par_iter()
        .fold(
            || Acc::new(nbins),
            |mut acc, i| {
                let pi = &profiles[i];
                for (j, pj) in profiles.iter().enumerate().skip(i + 1) {
                    let s = similarity(pi, pj);
                    let p = curve.at(s);
                    let hit = reported.contains(&((i as u64) << 32 | j as u64));
                    let b = &mut acc.bins[bin_of(edges, s)];
                    b.pairs += 1;
                    b.reported += u64::from(hit);
                    b.sum_s += s;
                    b.sum_p += p;
                    b.sum_var += p * (1.0 - p);
                    if s >= RECALL_AT {
                        acc.relevant += 1;
                        acc.relevant_reported += u64::from(hit);
                        acc.relevant_p += p;
                    }
                    let on_target = s >= target - 1e-12;
                    acc.p_total += p;
                    if on_target {
                        acc.p_on_target += p;
                    }
                    if hit {
                        acc.reported += 1;
                        acc.reported_on_target += u64::from(on_target);
                    }
                }
                acc
            },
        )
        .reduce(|| Acc::new(nbins), Acc::merge);
    debug_assert_eq!(acc.reported, reported.len() as u64);

    acc
}

/// The report of each bin of `acc`.
pub(super) fn bin_reports(acc: &Acc, edges: &[f64]) -> Vec<BinReport> {
    let nbins = edges.len();
    let label = |i: usize| {
        if i + 1 == nbins {
            return "[1]".to_string();
        }
        let two = |x: f64| ((x * 100.0).round() / 100.0 - x).abs() < 1e-9;
        let prec = if two(edges[i]) && two(edges[i + 1]) {
            2
        } else {
            3
        };
        format!("[{:.prec$}, {:.prec$})", edges[i], edges[i + 1])
    };
    acc.bins
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let some = b.pairs > 0;
            BinReport {
                lo: edges[i],
                hi: if i + 1 == nbins { 1.0 } else { edges[i + 1] },
                label: label(i),
                pairs: b.pairs,
                reported: b.reported,
                rate: some.then(|| b.reported as f64 / b.pairs as f64),
                theory: some.then(|| b.sum_p / b.pairs as f64),
                expected: b.sum_p,
                z: (b.sum_var > 1e-12).then(|| (b.reported as f64 - b.sum_p) / b.sum_var.sqrt()),
                mean_similarity: some.then(|| b.sum_s / b.pairs as f64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_half_open_with_a_bin_for_one() {
        let e = &JACCARD_EDGES;
        assert_eq!(bin_of(e, 0.0), 0);
        assert_eq!(bin_of(e, 0.4999), 0);
        assert_eq!(bin_of(e, 0.5), 1);
        assert_eq!(bin_of(e, 0.9), 7);
        assert_eq!(bin_of(e, 0.99999), 8);
        assert_eq!(bin_of(e, 1.0), 9);
        let c = &COSINE_EDGES;
        assert_eq!(bin_of(c, 0.9995), 9);
        assert_eq!(bin_of(c, 1.0), 10);
    }
}

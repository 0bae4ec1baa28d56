//! Job statistics, read from the job's files (the source of truth) and the
//! manifest's figures; and the degree distributions of the link graph with
//! their fitted power-law exponents.
//!
//! # Degree distributions
//!
//! [`DegreeHistogram::from_edge_file`] streams an edge file (forward for
//! out-degrees, transposed for in-degrees) list by list and keeps only a
//! histogram degree → number of nodes: its memory is one entry per distinct
//! degree (a few thousand on real web graphs), never one per node.
//!
//! # Power-law fit
//!
//! [`fit_power_law`] follows Clauset, Shalizi and Newman, *Power-law
//! distributions in empirical data* (SIAM Review 51, 2009), for discrete data:
//!
//! * For a lower bound `k_min`, the tail `k ≥ k_min` is modelled as
//!   `P(k) = k^-α / ζ(α, k_min)` (ζ the Hurwitz zeta function), and `α` is the
//!   exact maximum-likelihood estimate: the maximum of the concave
//!   log-likelihood `−n ln ζ(α, k_min) − α Σ ln kᵢ` over `α ∈ (1, 10]`, found by
//!   golden-section search (to 10⁻⁹). This is the estimator their
//!   approximation `α ≈ 1 + n / Σ ln(kᵢ / (k_min − ½))` stands for, without
//!   its bias at small `k_min`.
//! * `k_min` is the candidate whose fitted law is closest to the data in
//!   Kolmogorov–Smirnov distance over the tail: `D = max_k |F_data(k) −
//!   F_fit(k)|` over every integer `k ≥ k_min` (between two observed degrees
//!   the data's CDF is flat and the model's grows, so both ends of each gap are
//!   checked). Every observed degree is a candidate, as CSN prescribe, as long
//!   as at least [`MIN_TAIL`] nodes lie at or above it (a fit to a handful of
//!   hubs would win on KS distance and mean nothing).
//! * The standard error of `α` is given as `(α − 1) / √n`, `n` the nodes in
//!   the tail: CSN's large-`k_min` approximation (at `k_min = 1` the spread of
//!   the estimate over samples of a known law is 1.0× it for α = 2.1 and 1.3×
//!   for α = 2.7).
//! * **Goodness of fit** ([`bootstrap_p_value`], CSN §4.1): synthetic data
//!   sets of the same size are drawn from the fitted model — each value, with
//!   the probability of the tail's share, from the fitted law above `k_min`,
//!   otherwise uniformly from the observed degrees below `k_min` — and each
//!   is fitted the same way, `k_min` chosen again. The p-value is the share of
//!   synthetic KS distances at least the data's. CSN rule a power law out
//!   when `p ≤ 0.1` ([`PLAUSIBLE_P`]); `p` is known to about `±1/(2√R)` with `R`
//!   replicates. Draws above `k_min` invert the exact discrete CCDF
//!   `ζ(α, k)/ζ(α, k_min)` (tabulated, bisection beyond the table); every
//!   replicate has its own seeded generator, so the p-value does not depend
//!   on the thread count.
//!
//! IIR §19.2.1 quotes α ≈ 2.1 for in-degrees ([`IIR_IN_DEGREE_EXPONENT`],
//! from Kumar et al. and Broder et al., who fitted lines to log-log
//! histograms, a method CSN show to be biased); `webmill stats` prints the
//! fitted exponent beside it.
//!
//! The exponent describes the tail only: web graphs' out-degrees are often not
//! a power law below a few dozen links (navigation menus), which is why
//! `k_min` is reported beside it.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::docs::DocTable;
use crate::error::Result;
use crate::graph::EdgeFile;
use crate::job::{Amount, Figure, JobFile, JobView};
use crate::plot::{loglog_plot_svg, Series, SeriesStyle};
use crate::registry::Registry;

/// A job's figures, typed: those of its link graph, read from the edge files
/// and the doc table (`nodes`, `arcs`, `crawled`, `dangling`, `edges_bytes`,
/// `transposed_bytes`, `bits_per_arc`, degree maxima), what every published
/// stage `registry` knows recorded (its [`stats`](crate::job::Stage::stats)),
/// and each stage's time and peak memory.
pub fn job_stats(job: &JobView, registry: &Registry) -> Result<Vec<Figure>> {
    let graph_stage = job.graph_stage()?;
    let docs = DocTable::open(job.file(JobFile::Docs)?)?;
    let fwd = EdgeFile::open(job.file(JobFile::Edges)?)?;
    let rev = EdgeFile::open(job.file(JobFile::EdgesT)?)?;
    let (f, r) = (fwd.stats(), rev.stats());
    let bpa = if f.arcs > 0 {
        f.bytes as f64 * 8.0 / f.arcs as f64
    } else {
        0.0
    };
    let graph =
        |key: &str, label: &str, amount: Amount| Figure::new("Link graph", key, label, amount);
    let mut out = vec![
        graph("graph_stage", "made by", Amount::Text(graph_stage.name())),
        graph("nodes", "docs (nodes)", Amount::Count(docs.len())),
        graph("crawled", "crawled", Amount::Count(docs.crawled())),
        graph("arcs", "arcs", Amount::Count(f.arcs)),
    ];
    out.extend(registry.figures(job)?);
    out.extend([
        graph(
            "dangling",
            "dangling (no out-links)",
            Amount::Count(f.nodes - f.lists),
        ),
        graph(
            "no_in_links",
            "no in-links",
            Amount::Count(r.nodes - r.lists),
        ),
        graph(
            "max_out_degree",
            "largest out-degree",
            Amount::Count(f.max_degree),
        ),
        graph(
            "max_in_degree",
            "largest in-degree",
            Amount::Count(r.max_degree),
        ),
        graph("edges_bytes", "edges.wm", Amount::Bytes(f.bytes)),
        graph("transposed_bytes", "edges-t.wm", Amount::Bytes(r.bytes)),
        graph(
            "bits_per_arc",
            "bits per arc",
            Amount::Number((bpa * 1000.0).round() / 1000.0),
        ),
    ]);
    for (stage, p) in registry.published(job) {
        let name = stage.id().name();
        out.push(Figure::new(
            "Resources",
            format!("{name}_seconds"),
            format!("{name} time"),
            Amount::Seconds(p.figures.seconds),
        ));
        out.push(Figure::new(
            "Resources",
            format!("{name}_peak_rss"),
            format!("{name} peak RSS"),
            Amount::Bytes(p.figures.peak_rss),
        ));
    }
    Ok(out)
}

/// [`job_stats`] with the built-in stages.
pub fn graph_stats(job: &JobView) -> Result<Vec<Figure>> {
    job_stats(job, &Registry::standard())
}

/// Figures as one JSON object, key → value (a later figure of a key wins).
pub fn figures_json(figures: &[Figure]) -> Map<String, Value> {
    let mut m = Map::new();
    for f in figures {
        m.insert(f.key.clone(), json!(f.amount));
    }
    m
}

/// Fewest nodes in a tail fitted by [`fit_power_law`].
pub const MIN_TAIL: u64 = 50;
/// CSN's threshold: a power law is ruled out when the goodness-of-fit
/// p-value is at most this.
pub const PLAUSIBLE_P: f64 = 0.1;
/// The in-degree exponent IIR §19.2.1 reports.
pub const IIR_IN_DEGREE_EXPONENT: f64 = 2.1;
/// Bootstrap replicates of `webmill stats` by default (p to about ±0.05).
pub const DEFAULT_BOOTSTRAP: u32 = 100;
/// Degrees below this are counted in an array, the rest in a map.
const DENSE_DEGREES: usize = 1 << 12;

/// A degree distribution: how many nodes have each degree. Memory is one
/// entry per distinct degree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DegreeHistogram {
    /// Degree → nodes with that degree (degree 0 included when counted).
    counts: BTreeMap<u64, u64>,
}

impl DegreeHistogram {
    /// The histogram of `degrees`, one per node.
    pub fn from_degrees(degrees: impl IntoIterator<Item = u64>) -> DegreeHistogram {
        let mut acc = Accumulator::default();
        for d in degrees {
            acc.add(d, 1);
        }
        acc.finish()
    }

    /// The degree distribution of an edge file's direction: out-degrees for a
    /// forward file, in-degrees for a transposed one; nodes without a list
    /// count as degree 0. Streams the file block by block.
    pub fn from_edge_file(file: &EdgeFile) -> Result<DegreeHistogram> {
        let mut acc = Accumulator::default();
        let mut current: Option<(u64, u64)> = None;
        let mut lists = 0u64;
        file.for_each_list(|node, dsts| {
            // A list split across blocks arrives in pieces with the same node.
            match &mut current {
                Some((n, d)) if *n == node => *d += dsts.len() as u64,
                _ => {
                    if let Some((_, d)) = current.replace((node, dsts.len() as u64)) {
                        acc.add(d, 1);
                        lists += 1;
                    }
                }
            }
            Ok(())
        })?;
        if let Some((_, d)) = current {
            acc.add(d, 1);
            lists += 1;
        }
        let nodes = file.stats().nodes;
        acc.add(0, nodes.saturating_sub(lists));
        Ok(acc.finish())
    }

    /// (degree, nodes) pairs in increasing degree, zero counts left out.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().map(|(&k, &c)| (k, c))
    }

    /// Nodes counted.
    pub fn nodes(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Nodes of degree `k`.
    pub fn count(&self, k: u64) -> u64 {
        self.counts.get(&k).copied().unwrap_or(0)
    }

    /// Sum of the degrees (the arcs, for an edge file).
    pub fn arcs(&self) -> u64 {
        self.iter().map(|(k, c)| k * c).sum()
    }

    /// The largest degree (0 if empty).
    pub fn max_degree(&self) -> u64 {
        self.counts.keys().next_back().copied().unwrap_or(0)
    }

    /// Distinct degrees observed.
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }
}

/// Counts degrees: an array for small ones, a map beyond.
#[derive(Default)]
struct Accumulator {
    dense: Vec<u64>,
    sparse: BTreeMap<u64, u64>,
}

impl Accumulator {
    fn add(&mut self, degree: u64, nodes: u64) {
        if nodes == 0 {
            return;
        }
        if degree < DENSE_DEGREES as u64 {
            if self.dense.is_empty() {
                self.dense = vec![0; DENSE_DEGREES];
            }
            self.dense[degree as usize] += nodes;
        } else {
            *self.sparse.entry(degree).or_default() += nodes;
        }
    }

    fn finish(self) -> DegreeHistogram {
        let mut counts = self.sparse;
        for (k, &c) in self.dense.iter().enumerate() {
            if c > 0 {
                counts.insert(k as u64, c);
            }
        }
        DegreeHistogram { counts }
    }
}

/// A discrete power law fitted to the tail of a degree distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PowerLawFit {
    /// The exponent: `P(k) ∝ k^-alpha` for `k ≥ k_min`.
    pub alpha: f64,
    /// The smallest degree of the tail.
    pub k_min: u64,
    /// Nodes with degree ≥ `k_min`.
    pub tail_nodes: u64,
    /// Kolmogorov–Smirnov distance between the tail and the fitted law.
    pub ks: f64,
    /// Standard error of `alpha`: `(alpha − 1) / √tail_nodes`.
    pub alpha_error: f64,
}

impl PowerLawFit {
    /// The fitted share of *all* `all_nodes` nodes with degree ≥ `k`, for
    /// `k ≥ k_min`: the tail's share times `ζ(α, k) / ζ(α, k_min)`.
    pub fn ccdf(&self, k: u64, all_nodes: u64) -> f64 {
        if k < self.k_min || all_nodes == 0 {
            return 0.0;
        }
        let share = self.tail_nodes as f64 / all_nodes as f64;
        share * hurwitz_zeta(self.alpha, k as f64) / hurwitz_zeta(self.alpha, self.k_min as f64)
    }
}

/// The Hurwitz zeta function `ζ(s, q) = Σ_{j ≥ 0} (q + j)^-s` for `s > 1`,
/// `q > 0`, by Euler–Maclaurin summation (direct terms until `q + j ≥ 10`,
/// then the integral, half the first term and seven Bernoulli corrections):
/// relative error below 10⁻¹³. `s ≤ 1` gives infinity.
pub fn hurwitz_zeta(s: f64, q: f64) -> f64 {
    // B₂ₖ / (2k)!, k = 1..=7.
    const BERNOULLI: [f64; 7] = [
        1.0 / 12.0,
        -1.0 / 720.0,
        1.0 / 30_240.0,
        -1.0 / 1_209_600.0,
        1.0 / 47_900_160.0,
        -691.0 / 1_307_674_368_000.0,
        1.0 / 74_724_249_600.0,
    ];
    if s <= 1.0 || q <= 0.0 || s.is_nan() || q.is_nan() {
        return f64::INFINITY;
    }
    let mut sum = 0.0;
    let mut a = q;
    while a < 10.0 {
        sum += a.powf(-s);
        a += 1.0;
    }
    let a_s = a.powf(-s);
    sum += a * a_s / (s - 1.0) + 0.5 * a_s;
    // Term k: B₂ₖ/(2k)! · s(s+1)…(s+2k−2) · a^(−s−2k+1).
    let mut rising = s;
    let mut power = a_s / a;
    for (k, b) in BERNOULLI.iter().enumerate() {
        sum += b * rising * power;
        let m = 2.0 * k as f64;
        rising *= (s + m + 1.0) * (s + m + 2.0);
        power /= a * a;
    }
    sum
}

/// The maximum-likelihood exponent of a discrete power law over the tail
/// `k ≥ k_min` holding `n` nodes whose log-degrees sum to `sum_ln`.
fn mle_alpha(k_min: u64, n: f64, sum_ln: f64) -> f64 {
    let q = k_min as f64;
    let log_lik = |a: f64| -n * hurwitz_zeta(a, q).ln() - a * sum_ln;
    let (mut lo, mut hi) = (1.0 + 1e-6, 10.0);
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    let mut x1 = hi - phi * (hi - lo);
    let mut x2 = lo + phi * (hi - lo);
    let (mut f1, mut f2) = (log_lik(x1), log_lik(x2));
    while hi - lo > 1e-9 {
        if f1 < f2 {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + phi * (hi - lo);
            f2 = log_lik(x2);
        } else {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - phi * (hi - lo);
            f1 = log_lik(x1);
        }
    }
    (lo + hi) / 2.0
}

/// Kolmogorov–Smirnov distance between the tail `tail` ((degree, nodes) in
/// increasing degree, `n` nodes) and the law `k^-alpha` from `tail[0].0` on.
fn ks_distance(tail: &[(u64, u64)], n: f64, alpha: f64) -> f64 {
    let k_min = tail[0].0 as f64;
    let z = hurwitz_zeta(alpha, k_min);
    // The model's CDF at integer x ≥ k_min: 1 − ζ(α, x + 1) / ζ(α, k_min).
    let model = |x: u64| 1.0 - hurwitz_zeta(alpha, x as f64 + 1.0) / z;
    let mut seen = 0u64;
    let mut d = 0f64;
    for (i, &(k, c)) in tail.iter().enumerate() {
        seen += c;
        let data = seen as f64 / n;
        d = d.max((data - model(k)).abs());
        // Up to the next observed degree the data's CDF stays at `data`.
        if let Some(&(next, _)) = tail.get(i + 1) {
            if next > k + 1 {
                d = d.max((data - model(next - 1)).abs());
            }
        }
    }
    d
}

/// Fits a discrete power law to the tail of `hist` (degrees ≥ 1), choosing
/// `k_min` by the Kolmogorov–Smirnov distance (see the module doc). `None`
/// when fewer than [`MIN_TAIL`] nodes have a degree ≥ 1 or all tails are a
/// single degree.
pub fn fit_power_law(hist: &DegreeHistogram) -> Option<PowerLawFit> {
    let data: Vec<(u64, u64)> = hist.iter().filter(|&(k, _)| k >= 1).collect();
    // Tail sums from the top: nodes and Σ count·ln k at and above each index.
    let mut tail_n = vec![0u64; data.len() + 1];
    let mut tail_ln = vec![0f64; data.len() + 1];
    for i in (0..data.len()).rev() {
        let (k, c) = data[i];
        tail_n[i] = tail_n[i + 1] + c;
        tail_ln[i] = tail_ln[i + 1] + c as f64 * (k as f64).ln();
    }
    let candidates = (0..data.len()).filter(|&i| tail_n[i] >= MIN_TAIL && i + 1 < data.len());
    let mut best: Option<PowerLawFit> = None;
    for i in candidates {
        let n = tail_n[i] as f64;
        let k_min = data[i].0;
        let alpha = mle_alpha(k_min, n, tail_ln[i]);
        let ks = ks_distance(&data[i..], n, alpha);
        if best.is_none_or(|b| ks < b.ks) {
            best = Some(PowerLawFit {
                alpha,
                k_min,
                tail_nodes: tail_n[i],
                ks,
                alpha_error: (alpha - 1.0) / n.sqrt(),
            });
        }
    }
    best
}

/// The bootstrap goodness-of-fit test of a power-law fit (CSN §4.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GoodnessOfFit {
    /// Share of synthetic data sets whose KS distance is at least the data's.
    pub p_value: f64,
    /// Synthetic data sets drawn.
    pub replicates: u32,
}

impl GoodnessOfFit {
    /// Whether a power law is a plausible model: `p > 0.1`.
    pub fn plausible(&self) -> bool {
        self.p_value > PLAUSIBLE_P
    }
}

/// splitmix64, the generator of the bootstrap (one stream per replicate).
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        crate::dedup::minwise::splitmix64(&mut self.0)
    }
    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// Exact draws from the discrete power law `k^-α / ζ(α, k_min)`, `k ≥ k_min`,
/// by inverting its CCDF.
struct PowerLawSampler {
    alpha: f64,
    k_min: u64,
    z: f64,
    /// `ccdf[j]` = P(K ≥ k_min + j), decreasing.
    ccdf: Vec<f64>,
}

/// Degrees tabulated by [`PowerLawSampler`] above `k_min`.
const SAMPLER_TABLE: u64 = 1 << 16;

impl PowerLawSampler {
    fn new(alpha: f64, k_min: u64) -> PowerLawSampler {
        let z = hurwitz_zeta(alpha, k_min as f64);
        let ccdf = (0..SAMPLER_TABLE)
            .map(|j| hurwitz_zeta(alpha, (k_min + j) as f64) / z)
            .collect();
        PowerLawSampler {
            alpha,
            k_min,
            z,
            ccdf,
        }
    }

    /// The `k` with P(K ≥ k) ≥ u > P(K ≥ k + 1), for u in (0, 1].
    fn draw(&self, u: f64) -> u64 {
        let at_least = self.ccdf.partition_point(|&c| c >= u) as u64;
        if at_least < SAMPLER_TABLE {
            return self.k_min + at_least.saturating_sub(1);
        }
        // Beyond the table: bracket, then bisect on the exact CCDF.
        let ccdf = |k: u64| hurwitz_zeta(self.alpha, k as f64) / self.z;
        let mut lo = self.k_min + SAMPLER_TABLE - 1;
        let mut hi = lo.saturating_mul(2);
        while ccdf(hi) >= u && hi < u64::MAX / 4 {
            lo = hi;
            hi = hi.saturating_mul(2);
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if ccdf(mid) >= u {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// The goodness-of-fit p-value of `fit` to `hist` by `replicates`
/// synthetic data sets (see the module doc), seeded by `seed`; replicates
/// run in parallel and the result does not depend on the thread count.
pub fn bootstrap_p_value(
    hist: &DegreeHistogram,
    fit: &PowerLawFit,
    replicates: u32,
    seed: u64,
) -> GoodnessOfFit {
    use rayon::prelude::*;
    let body: Vec<(u64, u64)> = hist
        .iter()
        .filter(|&(k, _)| k >= 1 && k < fit.k_min)
        .collect();
    let n: u64 = hist.iter().filter(|&(k, _)| k >= 1).map(|(_, c)| c).sum();
    let body_n = n - fit.tail_nodes;
    // Cumulative body counts, for uniform draws from the observed values.
    let mut body_cum = Vec::with_capacity(body.len());
    let mut acc = 0u64;
    for &(_, c) in &body {
        acc += c;
        body_cum.push(acc);
    }
    let sampler = PowerLawSampler::new(fit.alpha, fit.k_min);
    let tail_share = fit.tail_nodes as f64 / n.max(1) as f64;
    let at_least = (0..replicates)
        .into_par_iter()
        .map(|r| {
            let mut rng = SplitMix(seed ^ (r as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03));
            let mut acc = Accumulator::default();
            for _ in 0..n {
                let k = if body_n == 0 || rng.unit() <= tail_share {
                    sampler.draw(rng.unit())
                } else {
                    let x = rng.next_u64() % body_n;
                    body[body_cum.partition_point(|&c| c <= x)].0
                };
                acc.add(k, 1);
            }
            match fit_power_law(&acc.finish()) {
                Some(f) => f.ks >= fit.ks,
                None => true,
            }
        })
        .filter(|&worse| worse)
        .count();
    GoodnessOfFit {
        p_value: if replicates == 0 {
            f64::NAN
        } else {
            at_least as f64 / replicates as f64
        },
        replicates,
    }
}

/// The in- and out-degree distributions of a job's link graph, with their
/// power-law fits.
#[derive(Clone, Debug)]
pub struct DegreeDistributions {
    /// Out-degrees, from the forward edge file.
    pub out_degree: DegreeHistogram,
    /// In-degrees, from the transposed edge file.
    pub in_degree: DegreeHistogram,
    /// The fit of the out-degree tail.
    pub out_fit: Option<PowerLawFit>,
    /// The fit of the in-degree tail.
    pub in_fit: Option<PowerLawFit>,
    /// The goodness of the out-degree fit (when bootstrapped).
    pub out_gof: Option<GoodnessOfFit>,
    /// The goodness of the in-degree fit (when bootstrapped).
    pub in_gof: Option<GoodnessOfFit>,
}

/// Reads both edge files of `job`'s graph (in parallel) into degree
/// histograms, fits their tails and tests each fit with `bootstrap`
/// synthetic data sets (none when 0). One pass over each file; memory is the
/// histograms and a block of each file.
pub fn degree_distributions(job: &JobView, bootstrap: u32) -> Result<DegreeDistributions> {
    let fwd = EdgeFile::open(job.file(JobFile::Edges)?)?;
    let rev = EdgeFile::open(job.file(JobFile::EdgesT)?)?;
    degree_distributions_of(&fwd, &rev, bootstrap)
}

/// [`degree_distributions`] of a graph already open: `fwd` in source
/// order, `rev` its transpose.
pub fn degree_distributions_of(
    fwd: &EdgeFile,
    rev: &EdgeFile,
    bootstrap: u32,
) -> Result<DegreeDistributions> {
    let (out_degree, in_degree) = rayon::join(
        || DegreeHistogram::from_edge_file(fwd),
        || DegreeHistogram::from_edge_file(rev),
    );
    let (out_degree, in_degree) = (out_degree?, in_degree?);
    let (out_fit, in_fit) =
        rayon::join(|| fit_power_law(&out_degree), || fit_power_law(&in_degree));
    let gof = |hist: &DegreeHistogram, fit: &Option<PowerLawFit>, seed: u64| {
        fit.as_ref()
            .filter(|_| bootstrap > 0)
            .map(|f| bootstrap_p_value(hist, f, bootstrap, seed))
    };
    let in_gof = gof(&in_degree, &in_fit, 0x1ee7);
    let out_gof = gof(&out_degree, &out_fit, 0x0b7);
    Ok(DegreeDistributions {
        out_degree,
        in_degree,
        out_fit,
        in_fit,
        out_gof,
        in_gof,
    })
}

/// `x` rounded to `digits` decimal digits (as the figures are shown).
pub fn round(x: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (x * m).round() / m
}

impl DegreeDistributions {
    /// The figures for `webmill stats`: per direction (`in`, `out`) the
    /// exponent `{dir}_degree_exponent` (null when no fit), its standard error,
    /// `k_min`, the nodes in the tail, the KS distance, the number of
    /// distinct degrees, and with a bootstrap the p-value, the replicates and
    /// whether a power law is plausible (`p > 0.1`); and IIR's in-degree
    /// exponent beside ours (`iir_in_degree_exponent`).
    pub fn figures(&self) -> Map<String, Value> {
        let mut m = Map::new();
        for (dir, hist, fit, gof) in [
            ("in", &self.in_degree, &self.in_fit, &self.in_gof),
            ("out", &self.out_degree, &self.out_fit, &self.out_gof),
        ] {
            m.insert(
                format!("{dir}_degree_p_value"),
                json!(gof.map(|g| round(g.p_value, 3))),
            );
            m.insert(
                format!("{dir}_degree_bootstrap"),
                json!(gof.map(|g| g.replicates)),
            );
            m.insert(
                format!("{dir}_degree_power_law_plausible"),
                json!(gof.map(|g| g.plausible())),
            );
            let f = fit.as_ref();
            m.insert(
                format!("{dir}_degree_exponent"),
                json!(f.map(|f| round(f.alpha, 3))),
            );
            m.insert(
                format!("{dir}_degree_exponent_error"),
                json!(f.map(|f| round(f.alpha_error, 4))),
            );
            m.insert(format!("{dir}_degree_kmin"), json!(f.map(|f| f.k_min)));
            m.insert(
                format!("{dir}_degree_tail_nodes"),
                json!(f.map(|f| f.tail_nodes)),
            );
            m.insert(format!("{dir}_degree_ks"), json!(f.map(|f| round(f.ks, 4))));
            m.insert(format!("{dir}_degree_distinct"), json!(hist.distinct()));
        }
        m.insert(
            "iir_in_degree_exponent".into(),
            json!(IIR_IN_DEGREE_EXPONENT),
        );
        m
    }

    /// A log-log SVG plot of both distributions as complementary CDFs (the
    /// fraction of nodes with degree ≥ `k`, one dot per observed degree
    /// `k ≥ 1`), with the fitted laws from `k_min` to the largest degree. On
    /// these axes a power law `P(k) ∝ k^-α` is a line of slope `1 − α`; the
    /// CCDF is used rather than `P(k)` itself, as Clauset, Shalizi and
    /// Newman do, because it needs no binning and its tail is not drowned in
    /// the noise of degrees seen once.
    pub fn plot_svg(&self, title: &str) -> String {
        let mut series = Vec::new();
        for (name, hist, fit, gof, color) in [
            (
                "in-degree",
                &self.in_degree,
                &self.in_fit,
                &self.in_gof,
                "#1f77b4",
            ),
            (
                "out-degree",
                &self.out_degree,
                &self.out_fit,
                &self.out_gof,
                "#d62728",
            ),
        ] {
            let n = hist.nodes();
            if n == 0 {
                continue;
            }
            let mut at_least = hist
                .iter()
                .filter(|&(k, _)| k >= 1)
                .map(|(_, c)| c)
                .sum::<u64>();
            let mut points = Vec::with_capacity(hist.distinct());
            for (k, c) in hist.iter().filter(|&(k, _)| k >= 1) {
                points.push((k as f64, at_least as f64 / n as f64));
                at_least -= c;
            }
            series.push(Series {
                label: name.to_string(),
                color: color.to_string(),
                style: SeriesStyle::Dots,
                points,
            });
            if let Some(f) = fit {
                // The fitted curve at 50 points spaced evenly in log k.
                let (lo, hi) = (f.k_min as f64, hist.max_degree().max(f.k_min) as f64);
                let mut ks: Vec<u64> = (0..=50)
                    .map(|i| (lo * (hi / lo).powf(i as f64 / 50.0)).round() as u64)
                    .collect();
                ks.dedup();
                series.push(Series {
                    label: format!(
                        "{name} fit: α = {:.2} ± {:.2}, k ≥ {}{}",
                        f.alpha,
                        f.alpha_error,
                        f.k_min,
                        gof.map_or(String::new(), |g| format!(", p = {:.2}", g.p_value))
                    ),
                    color: color.to_string(),
                    style: SeriesStyle::Dashed,
                    points: ks.iter().map(|&k| (k as f64, f.ccdf(k, n))).collect(),
                });
                if name == "in-degree" {
                    // IIR's exponent, through the same first point.
                    let iir = PowerLawFit {
                        alpha: IIR_IN_DEGREE_EXPONENT,
                        ..*f
                    };
                    series.push(Series {
                        label: format!("IIR §19.2: α = {IIR_IN_DEGREE_EXPONENT}"),
                        color: "#7f7f7f".to_string(),
                        style: SeriesStyle::Line,
                        points: ks.iter().map(|&k| (k as f64, iir.ccdf(k, n))).collect(),
                    });
                }
            }
        }
        loglog_plot_svg(
            title,
            "degree k",
            "fraction of nodes with degree ≥ k",
            &series,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::SplitMix as Rng;

    /// An exact draw from P(k) ∝ k^-a, k ≥ 1: Devroye's rejection algorithm
    /// for the Zipf law (Non-Uniform Random Variate Generation, 1986,
    /// p. 551). Independent of the code under test (no zeta function).
    fn zipf(rng: &mut Rng, a: f64) -> u64 {
        let b = 2f64.powf(a - 1.0);
        loop {
            let (u, v) = (rng.unit(), rng.unit());
            let x = u.powf(-1.0 / (a - 1.0)).floor();
            if !(1.0..1e15).contains(&x) {
                continue;
            }
            let t = (1.0 + 1.0 / x).powf(a - 1.0);
            if v * x * (t - 1.0) / (b - 1.0) <= t / b {
                return x as u64;
            }
        }
    }

    #[test]
    fn hurwitz_zeta_matches_mpmath() {
        // mpmath.zeta(s, q) at 25 digits.
        for (s, q, want) in [
            (2.0, 1.0, 1.644_934_066_848_226_4),
            (2.1, 1.0, 1.560_216_533_503_362),
            (1.2, 1.0, 5.591_582_441_177_752),
            (1.5, 1000.0, 0.063_261_368_544_514_93),
            (2.5, 3.0, 0.164_710_561_954_280_3),
            (1.01, 7.0, 98.144_633_696_095_64),
            (3.7, 123_456.0, 6.630_679_562_425_775e-15),
        ] {
            let got = hurwitz_zeta(s, q);
            assert!(
                ((got - want) / want).abs() < 1e-12,
                "zeta({s}, {q}) = {got}, want {want}"
            );
        }
        assert!(hurwitz_zeta(1.0, 1.0).is_infinite());
    }

    #[test]
    fn recovers_the_exponent_of_a_pure_power_law() {
        for (seed, alpha) in [(1, 2.1), (2, 2.1), (3, 2.7), (4, 1.8)] {
            let mut rng = Rng(seed);
            let hist = DegreeHistogram::from_degrees((0..100_000).map(|_| zipf(&mut rng, alpha)));
            let fit = fit_power_law(&hist).expect("a fit");
            eprintln!("alpha {alpha}, seed {seed}: {fit:?}");
            assert!(
                (fit.alpha - alpha).abs() < 0.1,
                "seed {seed}: fitted {fit:?} for alpha {alpha}"
            );
            // A pure power law from 1 on: the chosen tail is most of the data.
            assert!(fit.tail_nodes > 10_000, "{fit:?}");
            assert!(fit.ks < 0.05, "{fit:?}");
        }
    }

    #[test]
    fn finds_k_min_under_a_body_that_is_no_power_law() {
        // 60% of the nodes have a degree uniform in 1..=9 (navigation
        // links); the rest follow k^-2.1 from 10 on.
        let mut rng = Rng(42);
        let degrees = (0..200_000).map(|_| {
            if rng.unit() < 0.6 {
                1 + rng.next_u64() % 9
            } else {
                loop {
                    let k = zipf(&mut rng, 2.1);
                    if k >= 10 {
                        break k;
                    }
                }
            }
        });
        let hist = DegreeHistogram::from_degrees(degrees.collect::<Vec<_>>());
        let fit = fit_power_law(&hist).expect("a fit");
        eprintln!("body 1..=9, tail 2.1 from 10: {fit:?}");
        assert!((fit.alpha - 2.1).abs() < 0.1, "{fit:?}");
        assert!((10..=20).contains(&fit.k_min), "{fit:?}");
        // The fitted CCDF starts at the tail's share and falls.
        let n_all = hist.nodes();
        let share = fit.tail_nodes as f64 / n_all as f64;
        assert!((fit.ccdf(fit.k_min, n_all) - share).abs() < 1e-12);
        assert!(fit.ccdf(fit.k_min * 10, n_all) < share * 0.2);
        assert_eq!(fit.ccdf(fit.k_min - 1, n_all), 0.0);
        // The approximation CSN give, as a cross-check of the exact MLE.
        let (n, s) =
            hist.iter()
                .filter(|&(k, _)| k >= fit.k_min)
                .fold((0.0, 0.0), |(n, s), (k, c)| {
                    let c = c as f64;
                    (n + c, s + c * (k as f64 / (fit.k_min as f64 - 0.5)).ln())
                });
        assert!(
            (1.0 + n / s - fit.alpha).abs() < 0.02,
            "{} vs {fit:?}",
            1.0 + n / s
        );
    }

    #[test]
    fn no_fit_without_enough_data() {
        assert!(fit_power_law(&DegreeHistogram::default()).is_none());
        assert!(fit_power_law(&DegreeHistogram::from_degrees([3; 1000])).is_none());
        assert!(fit_power_law(&DegreeHistogram::from_degrees(1..20)).is_none());
    }

    #[test]
    fn histogram_from_an_edge_file_counts_split_lists_once() {
        use crate::graph::{Direction, EdgeWriter};
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e.wm");
        let nodes = 50_000u64;
        // Node 7 has a list far longer than a block; node 3 none.
        let mut arcs: Vec<(u64, u64)> = (0..40_000).map(|d| (7, d)).collect();
        for s in 0..1000u64 {
            if s != 3 && s != 7 {
                for d in 0..(s % 5) {
                    arcs.push((s, d * 11 + 1));
                }
            }
        }
        arcs.sort();
        let mut w = EdgeWriter::create(&p, Direction::Forward, nodes).unwrap();
        for &(s, d) in &arcs {
            w.push(s, d).unwrap();
        }
        w.finish().unwrap();
        let f = EdgeFile::open(&p).unwrap();
        assert!(f.container().blocks().len() > 2);
        let hist = DegreeHistogram::from_edge_file(&f).unwrap();
        let mut degree = vec![0u64; nodes as usize];
        for &(s, _) in &arcs {
            degree[s as usize] += 1;
        }
        assert_eq!(hist, DegreeHistogram::from_degrees(degree));
        assert_eq!(hist.count(40_000), 1);
        assert_eq!(hist.arcs(), arcs.len() as u64);
        assert_eq!(hist.nodes(), nodes);
    }
}

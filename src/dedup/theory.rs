//! Theoretical detection curves: the probability that each algorithm reports a
//! pair, as a function of the pair's true similarity. `dedup-eval` draws measured
//! precision and recall per similarity bin against these.
//!
//! All assume that the sketch's entries agree independently (for min-values:
//! each with probability `J`; for Charikar's bits: each with probability
//! `1 − θ/π`), which the tests check for webmill's hash functions.
//!
//! Min-hash reports a pair when a band key is equal **and** enough entries are
//! equal; the two events are dependent (an equal band is 10 equal entries), so
//! its curve is not the product of the banding S-curve
//! ([`banding_probability`]) and CS124's curve ([`minhash_probability`]):
//! [`minhash_detection_probability`] gives the joint probability exactly, by a
//! dynamic programme over the bands, and lies below both ([`minhash_bounds`]).

use super::broder::{MIN_VALUES, SUPERSHINGLES};
use super::charikar::{CHARIKAR_BITS, CHARIKAR_THRESHOLD};
use super::minhash::{DEFAULT_BANDS, DEFAULT_ROWS, MINHASH_LEN};

/// `P(X ≥ k)` for `X ~ Binomial(n, p)`, by summing the terms in log space.
/// `p` is clamped to `[0, 1]`.
pub fn binomial_tail(n: u64, p: f64, k: u64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n {
        return 0.0;
    }
    let p = p.clamp(0.0, 1.0);
    if p == 0.0 {
        return 0.0;
    }
    if p == 1.0 {
        return 1.0;
    }
    // ln C(n, i) = ln n! − ln i! − ln (n−i)!, with ln m! by summation (n is small:
    // hundreds for sketches).
    let mut ln_fact = Vec::with_capacity(n as usize + 1);
    let mut acc = 0f64;
    ln_fact.push(0.0);
    for m in 1..=n {
        acc += (m as f64).ln();
        ln_fact.push(acc);
    }
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let sum: f64 = (k..=n)
        .map(|i| {
            let (i_, n_) = (i as usize, n as usize);
            (ln_fact[n_] - ln_fact[i_] - ln_fact[n_ - i_] + i as f64 * lp + (n - i) as f64 * lq)
                .exp()
        })
        .sum();
    sum.min(1.0)
}

/// Alg. B: the probability that two pages with Jaccard coefficient `jaccard` share a
/// megashingle, i.e. that at least 2 of the 6 supershingles agree when each of the
/// 14 min-values behind a supershingle agrees with probability `J`:
/// `p = J^14`, `P = 1 − (1 − p)^6 − 6 p (1 − p)^5`.
pub fn broder_probability(jaccard: f64) -> f64 {
    let run = (MIN_VALUES / SUPERSHINGLES) as i32;
    let p = jaccard.clamp(0.0, 1.0).powi(run);
    let q = 1.0 - p;
    let s = SUPERSHINGLES as i32;
    (1.0 - q.powi(s) - f64::from(s) * p * q.powi(s - 1)).clamp(0.0, 1.0)
}

/// The probability that one of Charikar's bits agrees for two pages of cosine
/// similarity `cosine`: `1 − θ/π`, `θ = arccos(cosine)`.
pub fn charikar_bit_probability(cosine: f64) -> f64 {
    1.0 - cosine.clamp(-1.0, 1.0).acos() / std::f64::consts::PI
}

/// Alg. C: the probability that two pages of cosine similarity `cosine` agree on at
/// least 372 of 384 bits, `P(Binomial(384, 1 − θ/π) ≥ 372)`.
pub fn charikar_probability(cosine: f64) -> f64 {
    binomial_tail(
        CHARIKAR_BITS as u64,
        charikar_bit_probability(cosine),
        u64::from(CHARIKAR_THRESHOLD),
    )
}

/// Min-hash: the probability that two pages with Jaccard coefficient `jaccard` have
/// at least `⌈threshold · n⌉` equal entries out of `n`, `P(Binomial(n, J) ≥
/// ⌈threshold · n⌉)` (CS124's curve, with `n = 100, threshold = 0.9` there).
pub fn minhash_probability(jaccard: f64, threshold: f64, n: usize) -> f64 {
    let need = (threshold.clamp(0.0, 1.0) * n as f64 - 1e-9)
        .ceil()
        .max(0.0) as u64;
    binomial_tail(n as u64, jaccard, need)
}

/// Min-hash banding: the probability that two pages with Jaccard coefficient `s`
/// share at least one of `bands` band keys of `rows` entries, `1 − (1 − s^r)^b`.
pub fn banding_probability(s: f64, bands: usize, rows: usize) -> f64 {
    let s = s.clamp(0.0, 1.0);
    let band = s.powi(rows.min(i32::MAX as usize) as i32);
    1.0 - (1.0 - band).powi(bands.min(i32::MAX as usize) as i32)
}

/// The probability that min-hash reports a pair of Jaccard coefficient `s`:
/// some band of `rows` entries (of `bands`) fully equal **and** at least
/// `⌈threshold · n⌉` of the `n` entries equal, each entry equal independently
/// with probability `s`. The entries beyond `bands · rows` (if any) count
/// towards the threshold only. Exact, by a dynamic programme over the bands.
pub fn minhash_detection_probability(
    s: f64,
    bands: usize,
    rows: usize,
    n: usize,
    threshold: f64,
) -> f64 {
    let s = s.clamp(0.0, 1.0);
    let need = (threshold.clamp(0.0, 1.0) * n as f64 - 1e-9)
        .ceil()
        .max(0.0) as usize;
    let banded = (bands * rows).min(n);
    let bands = banded / rows.max(1);
    if bands == 0 {
        return 0.0;
    }
    if s >= 1.0 {
        return 1.0;
    }
    let binom = |m: usize| -> Vec<f64> {
        // P(X = x), X ~ Binomial(m, s), by the recurrence on x.
        let mut out = Vec::with_capacity(m + 1);
        let mut c = 1f64; // C(m, x)
        for x in 0..=m {
            out.push(c * s.powi(x as i32) * (1.0 - s).powi((m - x) as i32));
            c = c * (m - x) as f64 / (x + 1) as f64;
        }
        out
    };
    let band = binom(rows);
    // dist[flag][t]: t equal entries so far; flag = some band fully equal.
    let mut dist = [vec![0f64; n + 1], vec![0f64; n + 1]];
    dist[0][0] = 1.0;
    let mut top = 0;
    for _ in 0..bands {
        let mut next = [vec![0f64; n + 1], vec![0f64; n + 1]];
        for (flag, row) in dist.iter().enumerate() {
            for (t, &p) in row.iter().enumerate().take(top + 1) {
                if p == 0.0 {
                    continue;
                }
                for (x, &q) in band.iter().enumerate() {
                    let f = if x == rows { 1 } else { flag };
                    next[f][t + x] += p * q;
                }
            }
        }
        dist = next;
        top += rows;
    }
    let rest = n - bands * rows;
    let tail = binom(rest);
    // P(flag ∧ T + R ≥ need), R ~ Binomial(rest, s).
    let mut total = 0.0;
    for (t, &p) in dist[1].iter().enumerate().take(top + 1) {
        if p == 0.0 {
            continue;
        }
        let r_need = need.saturating_sub(t);
        let q: f64 = tail.iter().skip(r_need).sum();
        total += p * q;
    }
    total.clamp(0.0, 1.0)
}

/// The S-curve and CS124's curve, for reference next to the min-hash curve.
pub fn minhash_bounds(s: f64, threshold: f64) -> (f64, f64) {
    (
        banding_probability(s, DEFAULT_BANDS, DEFAULT_ROWS),
        minhash_probability(s, threshold, MINHASH_LEN),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn binomial_tail_against_direct_sums() {
        // n = 6, p = 0.3: P(X ≥ 2) = 1 − 0.7^6 − 6·0.3·0.7^5.
        let direct = 1.0 - 0.7f64.powi(6) - 6.0 * 0.3 * 0.7f64.powi(5);
        assert!(close(binomial_tail(6, 0.3, 2), direct, 1e-12));
        assert_eq!(binomial_tail(10, 0.5, 0), 1.0);
        assert_eq!(binomial_tail(10, 0.5, 11), 0.0);
        assert!(close(binomial_tail(10, 0.5, 10), 0.5f64.powi(10), 1e-15));
        // Symmetry: P(X ≥ 6) for Bin(10, .5) = P(X ≤ 4) = 1 − P(X ≥ 5).
        assert!(close(
            binomial_tail(10, 0.5, 6),
            1.0 - binomial_tail(10, 0.5, 5),
            1e-12
        ));
    }

    #[test]
    fn cs124_figures() {
        // CS124 lecture 12: 90 of 100 entries; resemblance 0.8 → < 0.006; 0.95 →
        // > 0.988; 0.96 → > 0.997; 0.5 → about 1e-18 ("almost 10^-18").
        assert!(minhash_probability(0.8, 0.9, 100) < 0.006);
        assert!(minhash_probability(0.95, 0.9, 100) > 0.988);
        assert!(minhash_probability(0.96, 0.9, 100) > 0.997);
        let p = minhash_probability(0.5, 0.9, 100);
        assert!(p > 1e-19 && p < 1e-16, "{p}");
    }

    #[test]
    fn broder_curve() {
        assert_eq!(broder_probability(1.0), 1.0);
        assert_eq!(broder_probability(0.0), 0.0);
        let p = 0.9f64.powi(14);
        let expected = 1.0 - (1.0 - p).powi(6) - 6.0 * p * (1.0 - p).powi(5);
        assert!(close(broder_probability(0.9), expected, 1e-15));
        assert!(close(
            broder_probability(0.9),
            binomial_tail(6, p, 2),
            1e-12
        ));
        assert!(broder_probability(0.95) > broder_probability(0.9));
    }

    #[test]
    fn charikar_curve() {
        assert!(close(charikar_bit_probability(1.0), 1.0, 1e-12));
        assert!(close(charikar_bit_probability(0.0), 0.5, 1e-12));
        assert!(close(charikar_probability(1.0), 1.0, 1e-12));
        // Same angle gives each bit q; the curve is increasing.
        assert!(charikar_probability(0.99) > charikar_probability(0.95));
        assert!(charikar_probability(0.5) < 1e-30);
    }

    #[test]
    fn banding_table_in_the_minhash_doc() {
        let b = |s| banding_probability(s, 20, 10);
        assert!(close(b(0.3), 0.00012, 0.00001));
        assert!(close(b(0.5), 0.019, 0.001));
        assert!(close(b(0.6), 0.11, 0.01));
        assert!(close(b(0.7), 0.44, 0.01));
        assert!(close(b(0.8), 0.897, 0.001));
        assert!(b(0.9) >= 0.9998 && b(0.9) >= 0.99);
        assert!(close(banding_probability(0.8, 16, 12), 0.68, 0.01));
        assert!(close(banding_probability(0.5, 16, 12), 0.004, 0.001));
    }

    #[test]
    fn joint_minhash_probability_by_simulation() {
        // Monte Carlo with a splitmix64 stream: entries equal with probability s.
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for &s in &[0.7, 0.75, 0.8, 0.85, 0.9] {
            let trials = 20_000;
            let mut hits = 0;
            for _ in 0..trials {
                let eq: Vec<bool> = (0..200)
                    .map(|_| (next() >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - s)
                    .collect();
                let band = eq.chunks(10).any(|c| c.iter().all(|&e| e));
                let total = eq.iter().filter(|&&e| e).count();
                hits += usize::from(band && total >= 160);
            }
            let p = minhash_detection_probability(s, 20, 10, 200, 0.8);
            let m = hits as f64 / trials as f64;
            let sd = (p * (1.0 - p) / trials as f64).sqrt();
            assert!((m - p).abs() <= 4.0 * sd + 1e-3, "s={s}: {m} vs {p}");
            let (band, cs) = minhash_bounds(s, 0.8);
            assert!(p <= band + 1e-12 && p <= cs + 1e-12);
        }
    }

    #[test]
    fn joint_minhash_probability_limits() {
        assert_eq!(minhash_detection_probability(1.0, 20, 10, 200, 0.8), 1.0);
        assert_eq!(minhash_detection_probability(0.0, 20, 10, 200, 0.8), 0.0);
        // Threshold 0: the banding curve alone.
        for s in [0.3, 0.6, 0.8] {
            let a = minhash_detection_probability(s, 20, 10, 200, 0.0);
            assert!((a - banding_probability(s, 20, 10)).abs() < 1e-12);
        }
        // One band of all entries: s^200 whatever the threshold.
        let a = minhash_detection_probability(0.99, 1, 200, 200, 0.8);
        assert!((a - 0.99f64.powi(200)).abs() < 1e-12);
        // Unbanded entries count towards the threshold only: 16 bands of 12
        // leave 8 entries.
        let a = minhash_detection_probability(0.9, 16, 12, 200, 0.0);
        assert!((a - banding_probability(0.9, 16, 12)).abs() < 1e-12);
    }
}

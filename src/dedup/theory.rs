//! Theoretical detection curves: the probability that each algorithm reports a
//! pair, as a function of the pair's true similarity. `dedup-eval` draws measured
//! precision and recall per similarity bin against these.
//!
//! All assume that the sketch's entries agree independently (for min-values:
//! each with probability `J`; for Charikar's bits: each with probability
//! `1 − θ/π`), which the tests check for webmill's hash functions.

use super::broder::{MIN_VALUES, SUPERSHINGLES};
use super::charikar::{CHARIKAR_BITS, CHARIKAR_THRESHOLD};

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
}

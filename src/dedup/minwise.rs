//! The families of "random permutations" behind min-values (Alg. B's 84
//! fingerprint functions, min-hash's 200 permutations).
//!
//! Function `i` maps a shingle fingerprint `s` to `f_i(s) = a_i · μ(s) + b_i mod 2^64`,
//! where `μ` is the murmur3 64-bit finalizer and `a_i` (odd), `b_i` come from
//! splitmix64 of a seed. Why this is a sound stand-in for Broder's random
//! permutations:
//!
//! * every `f_i` is a **bijection** of the 64-bit values (`μ` is invertible — its
//!   xor-shifts and odd multiplications are — and so is `x ↦ a x + b` for odd `a`),
//!   so two distinct shingles never tie for a minimum: the minimum of `f_i` over a
//!   set names exactly one element, as a permutation's would;
//! * `μ` scrambles the structure of Rabin fingerprints (which are GF(2)-linear in the
//!   text) into values that behave as uniform and independent per distinct
//!   shingle, and `x ↦ a x + b` with random odd `a` is Dietzfelbinger's
//!   multiply-add family, universal on the high bits that decide a minimum;
//!   different `(a_i, b_i)` then order the same set differently enough that the
//!   events "function i picks a shared shingle" behave as independent with
//!   probability `J` each.
//!
//! That is an engineering claim, so the tests measure it rather than assume it:
//! the fraction of equal min-values matches exact Jaccard, its spread over many
//! pairs matches the binomial variance `J(1−J)/n` (what independent functions give
//! and what `broder_probability` / `minhash_probability` assume), and Alg. B's
//! hit rate follows its theoretical curve.

/// Murmur3's 64-bit finalizer: a bijection with good avalanche.
#[inline]
pub(crate) fn mix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// splitmix64: the generator of the functions' parameters (and of Alg. C's token
/// vectors).
#[inline]
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `N` min-wise hash functions, `f_i(s) = a_i · mix64(s) + b_i`.
#[derive(Clone)]
pub(crate) struct MinwiseFamily<const N: usize> {
    mul: [u64; N],
    add: [u64; N],
}

impl<const N: usize> MinwiseFamily<N> {
    /// The family drawn from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        let mut state = seed;
        let mut mul = [0u64; N];
        let mut add = [0u64; N];
        for (m, a) in mul.iter_mut().zip(add.iter_mut()) {
            *m = splitmix64(&mut state) | 1;
            *a = splitmix64(&mut state);
        }
        MinwiseFamily { mul, add }
    }

    /// Folds shingle fingerprint `s` into the running minima.
    #[inline]
    pub(crate) fn update(&self, mins: &mut [u64; N], s: u64) {
        let y = mix64(s);
        for ((m, &a), &b) in mins.iter_mut().zip(&self.mul).zip(&self.add) {
            let v = a.wrapping_mul(y).wrapping_add(b);
            if v < *m {
                *m = v;
            }
        }
    }
}

impl<const N: usize> std::fmt::Debug for MinwiseFamily<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MinwiseFamily<{N}>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix64_is_invertible_on_samples() {
        // Inverse of the finalizer (inverse multipliers and xor-shift inverses).
        fn unmix(mut x: u64) -> u64 {
            x ^= x >> 33;
            x = x.wrapping_mul(0x9cb4_b2f8_1293_37db); // inverse of 0xc4ceb9fe1a85ec53
            x ^= x >> 33;
            x = x.wrapping_mul(0x4f74_430c_22a5_4005); // inverse of 0xff51afd7ed558ccd
            x ^ (x >> 33)
        }
        assert_eq!(
            0xc4ce_b9fe_1a85_ec53u64.wrapping_mul(0x9cb4_b2f8_1293_37db),
            1
        );
        assert_eq!(
            0xff51_afd7_ed55_8ccdu64.wrapping_mul(0x4f74_430c_22a5_4005),
            1
        );
        let mut s = 7;
        for _ in 0..1000 {
            let x = splitmix64(&mut s);
            assert_eq!(unmix(mix64(x)), x);
        }
    }

    #[test]
    fn each_function_picks_a_uniform_element() {
        // Over many random sets of 20 elements, the position of the minimum under a
        // function is uniform: a necessary condition of min-wise independence.
        let family = MinwiseFamily::<16>::new(42);
        let mut counts = [0u32; 20];
        let mut s = 1;
        let trials = 4000;
        for _ in 0..trials {
            let set: Vec<u64> = (0..20).map(|_| splitmix64(&mut s)).collect();
            for f in 0..16 {
                let arg = (0..20)
                    .min_by_key(|&i| {
                        family.mul[f]
                            .wrapping_mul(mix64(set[i]))
                            .wrapping_add(family.add[f])
                    })
                    .unwrap();
                counts[arg] += 1;
            }
        }
        let expected = f64::from(trials * 16) / 20.0;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (f64::from(c) - expected).powi(2) / expected)
            .sum();
        // 19 degrees of freedom: the 0.999 quantile is 43.8.
        assert!(chi2 < 43.8, "chi2 = {chi2}, counts = {counts:?}");
    }
}

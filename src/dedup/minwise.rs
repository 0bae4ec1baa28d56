//! The families of "random permutations" behind min-values (Alg. B's 84
//! fingerprint functions, min-hash's 200 permutations).
//!
//! A shingle's 64-bit Rabin fingerprint `s` is first mixed into a 32-bit **key**
//! `y = high 32 bits of μ(s)`, `μ` the murmur3 64-bit finalizer; function `i` maps it
//! to `f_i(y) = a_i · y + b_i mod 2^32`, with `a_i` odd and `b_i` from splitmix64 of a
//! seed. A min-value is `min_s f_i(y(s))` over the page's shingles.
//!
//! Why this is a sound stand-in for Broder's random permutations:
//!
//! * every `f_i` is a **bijection** of the 32-bit keys (`x ↦ a x + b` with odd `a`),
//!   so keys never tie for a minimum: the minimum of `f_i` over a page names one
//!   key, as a permutation's would;
//! * `μ` scrambles the structure of Rabin fingerprints (GF(2)-linear in the text)
//!   into keys that behave as uniform and independent per distinct shingle, and
//!   `y ↦ a y + b` with random odd `a` is Dietzfelbinger's multiply-shift family
//!   (plus an offset), 2-approximately universal on the high bits that decide a
//!   minimum; different `(a_i, b_i)` order
//!   the same keys differently enough that the events "function i picks a shared
//!   shingle" behave as independent, each with probability `J`.
//!
//! **Why 32 bits suffice.** Two distinct shingles of one page share a key with
//! probability 2^-32 (one merged pair per ~10^4 pages of 1000 words: harmless). Two
//! pages' min-values can be equal without coming from the same shingle when two
//! different keys map to the same value: the minimum of `n` uniform 32-bit values
//! is about `2^32 / n`, so two independent minima coincide with probability about
//! `n / 2^33` — 1.2·10^-7 per entry for 1000-shingle pages, far below the ±0.03 the
//! estimates are good to. In exchange the values take half the space and eight
//! functions fit a 256-bit vector register.
//!
//! That is an engineering claim, so the tests measure it rather than assume it:
//! the fraction of equal min-values matches exact Jaccard, its spread over many
//! pairs matches the binomial variance `J(1−J)/n` (what independent functions give
//! and what `broder_probability` / `minhash_probability` assume), and Alg. B's
//! hit rate follows its theoretical curve.
//!
//! **Speed.** [`MinwiseFamily::min_values`] runs function by function, each a
//! min-reduction over the page's keys that the compiler vectorizes. x86-64's
//! baseline (SSE2) has neither a 32-bit multiply nor an unsigned minimum on vectors,
//! so on CPUs with AVX2 or else SSE4.1 (checked at run time) the same loop runs
//! compiled for that extension. All paths compute exactly the same integers.

/// Murmur3's 64-bit finalizer: a bijection with good avalanche.
#[inline]
pub(crate) fn mix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The 32-bit key of a shingle fingerprint: the high half of `mix64`.
#[inline]
pub(crate) fn shingle_key(s: u64) -> u32 {
    (mix64(s) >> 32) as u32
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

/// `N` min-wise hash functions on 32-bit keys, `f_i(y) = a_i · y + b_i mod 2^32`.
#[derive(Clone)]
pub(crate) struct MinwiseFamily<const N: usize> {
    mul: [u32; N],
    add: [u32; N],
}

impl<const N: usize> MinwiseFamily<N> {
    /// The family drawn from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        let mut state = seed;
        let mut mul = [0u32; N];
        let mut add = [0u32; N];
        for (m, a) in mul.iter_mut().zip(add.iter_mut()) {
            let r = splitmix64(&mut state);
            *m = (r as u32) | 1;
            *a = (r >> 32) as u32;
        }
        MinwiseFamily { mul, add }
    }

    /// Function `i` applied to key `y`.
    #[cfg(test)]
    pub(crate) fn apply(&self, i: usize, y: u32) -> u32 {
        self.mul[i].wrapping_mul(y).wrapping_add(self.add[i])
    }

    /// The `N` min-values `min_y f_i(y)` over `keys` (`u32::MAX` each if empty).
    pub(crate) fn min_values(&self, keys: &[u32]) -> [u32; N] {
        let mut mins = [u32::MAX; N];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: calling a `#[target_feature(enable = "avx2")]` function
                // requires a CPU with AVX2, which was checked just above.
                unsafe { min_values_avx2(&self.mul, &self.add, keys, &mut mins) };
                return mins;
            }
            if std::arch::is_x86_feature_detected!("sse4.1") {
                // SAFETY: as above, for SSE4.1.
                unsafe { min_values_sse41(&self.mul, &self.add, keys, &mut mins) };
                return mins;
            }
        }
        min_values_portable(&self.mul, &self.add, keys, &mut mins);
        mins
    }
}

/// The loop of [`MinwiseFamily::min_values`], compiled for the baseline target.
#[inline(always)]
fn min_values_portable(mul: &[u32], add: &[u32], keys: &[u32], mins: &mut [u32]) {
    for ((m, &a), &b) in mins.iter_mut().zip(mul).zip(add) {
        *m = keys
            .iter()
            .fold(*m, |acc, &y| acc.min(a.wrapping_mul(y).wrapping_add(b)));
    }
}

/// The same loop compiled for AVX2 (8 keys per instruction).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn min_values_avx2(mul: &[u32], add: &[u32], keys: &[u32], mins: &mut [u32]) {
    min_values_portable(mul, add, keys, mins)
}

/// The same loop compiled for SSE4.1 (which adds the 32-bit vector multiply and
/// unsigned minimum that SSE2 lacks; x86-64 CPUs without AVX2 mostly have it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.1")]
fn min_values_sse41(mul: &[u32], add: &[u32], keys: &[u32], mins: &mut [u32]) {
    min_values_portable(mul, add, keys, mins)
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
    fn vector_and_portable_paths_agree() {
        let family = MinwiseFamily::<84>::new(9);
        let mut s = 3;
        for n in [0usize, 1, 7, 8, 9, 100, 1001] {
            let keys: Vec<u32> = (0..n).map(|_| splitmix64(&mut s) as u32).collect();
            let mut slow = [u32::MAX; 84];
            for (i, m) in slow.iter_mut().enumerate() {
                for &y in &keys {
                    *m = (*m).min(family.apply(i, y));
                }
            }
            assert_eq!(family.min_values(&keys), slow, "{n} keys");
            let mut portable = [u32::MAX; 84];
            min_values_portable(&family.mul, &family.add, &keys, &mut portable);
            assert_eq!(portable, slow);
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("sse4.1") {
                    let mut sse = [u32::MAX; 84];
                    // SAFETY: SSE4.1 was detected just above.
                    unsafe { min_values_sse41(&family.mul, &family.add, &keys, &mut sse) };
                    assert_eq!(sse, slow);
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut avx = [u32::MAX; 84];
                    // SAFETY: AVX2 was detected just above.
                    unsafe { min_values_avx2(&family.mul, &family.add, &keys, &mut avx) };
                    assert_eq!(avx, slow);
                }
            }
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
            let keys: Vec<u32> = (0..20).map(|_| shingle_key(splitmix64(&mut s))).collect();
            let mins = family.min_values(&keys);
            for (f, &m) in mins.iter().enumerate() {
                let arg = (0..20).position(|i| family.apply(f, keys[i]) == m).unwrap();
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

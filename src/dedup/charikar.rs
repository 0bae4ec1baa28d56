//! Alg. C: Charikar's random projections ("simhash"), as Henzinger describes it,
//! with `b = 384` bits and threshold `t = 372`.
//!
//! Each token is projected into `b`-dimensional space by a fixed **token vector**
//! with entries in `[−1, 1]`; the page vector is the sum of its tokens' vectors, a
//! token occurring `j` times added `j` times; the sketch keeps the sign bits (1 for a
//! positive entry, 0 otherwise). Each bit is the side of a random hyperplane, so
//! two pages agree on a bit with probability `1 − θ/π`, `θ` the angle between their
//! term-frequency vectors (exactly so for Gaussian hyperplanes; for entries uniform
//! in `[−1, 1]`, as here and in the source, very nearly so once a page has more than
//! a handful of tokens — the tests measure it). Two pages are *C-similar* when at
//! least `t = 372` of the 384 bits agree.
//!
//! # Token vectors
//!
//! Token `w` (word fingerprint `f(w)`, see [`shingle`](super::shingle)) has the
//! 32-bit key `κ = high half of mix64(f(w) ⊕ seed)`; the 96 words `mix32(κ + i ·
//! 0x9e3779b9)`, `mix32` Wellons' lowbias32 hash, give 384 bytes `β_i`
//! (little-endian within each word), and the entries are `(2β_i − 255) / 255`: odd
//! multiples of 1/255, uniform over 256 levels of `[−1, 1]`, never zero. (Two
//! tokens with the same key — probability 2^-32 per pair — would act as one token;
//! a 32-bit counter-based generator is what lets the vector be made 8 words at a
//! time.) The page
//! vector is accumulated in integers (`Σ tf · (2β − 255)`), so it is exact and
//! independent of summation order — a sketch is bit-for-bit reproducible on any
//! machine. Within a page each distinct token's vector is made once (word
//! fingerprints sorted, runs counted). Accumulators are `i32` up to 8,000,000 words
//! a page (|sum| ≤ 255 · words < 2^31) and `i64` beyond.
//!
//! # Subsketches
//!
//! C-similar sketches differ in at most `b − t = 12` bits, so when the 384 bits are
//! cut into `b − t + 1 = 13` disjoint pieces, at least one piece is equal
//! (pigeonhole). The pieces are as equal as possible: pieces 0–6 have 30 bits,
//! pieces 7–12 have 29 (7·30 + 6·29 = 384), bit `i` of the sketch being bit `i % 64`
//! of word `i / 64`. A piece with its index is a [`Subsketch`]; sorting subsketches
//! and comparing whole sketches of pages that share one finds every C-similar
//! pair.

use super::minwise::mix64;
use super::shingle::Scratch;

/// Sketch length `b` in bits.
pub const CHARIKAR_BITS: usize = 384;
/// Words of 64 bits in a sketch.
pub const CHARIKAR_WORDS: usize = CHARIKAR_BITS / 64;
/// Henzinger's threshold `t`: C-similar means at least this many agreeing bits.
pub const CHARIKAR_THRESHOLD: u32 = 372;
/// Number of subsketches, `b − t + 1`.
pub const SUBSKETCHES: usize = CHARIKAR_BITS - CHARIKAR_THRESHOLD as usize + 1;
/// The seed of the token vectors ("fixed for the token throughout the algorithm").
pub const CHARIKAR_SEED: u64 = 0x4368_6172_696b_6172; // "Charikar"

/// lowbias32 (C. Wellons' 32-bit integer hash): a bijection with good avalanche.
#[inline(always)]
fn mix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

/// The 384 bytes behind a token's vector: `mix32(key + i · 0x9e3779b9)` for
/// `i = 0..96`, each little-endian (a counter-based generator, so the 96 words are
/// computed independently — 8 at a time with AVX2).
#[inline(always)]
fn token_bytes(key: u32) -> [u8; CHARIKAR_BITS] {
    let mut out = [0u8; CHARIKAR_BITS];
    for (i, chunk) in out.chunks_exact_mut(4).enumerate() {
        let w = mix32(key.wrapping_add((i as u32).wrapping_mul(0x9e37_79b9)));
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// Pages up to this many words accumulate in `i32` without overflow.
const I32_SAFE_WORDS: usize = 8_000_000;

/// Alg. C's sketch: 384 sign bits, bit `i` in bit `i % 64` of word `i / 64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CharikarSketch(pub [u64; CHARIKAR_WORDS]);

impl CharikarSketch {
    /// Bit `i`.
    ///
    /// # Panics
    ///
    /// If `i ≥ 384`.
    pub fn bit(&self, i: usize) -> bool {
        (self.0[i / 64] >> (i % 64)) & 1 == 1
    }

    /// The number of bits on which the two sketches agree (C-similarity).
    pub fn agreeing_bits(&self, other: &CharikarSketch) -> u32 {
        agreeing_bits(self, other)
    }

    /// Whether the two sketches agree on at least [`CHARIKAR_THRESHOLD`] bits.
    pub fn is_c_similar(&self, other: &CharikarSketch) -> bool {
        agreeing_bits(self, other) >= CHARIKAR_THRESHOLD
    }
}

/// The number of bits on which `a` and `b` agree, `384 − popcount(a ⊕ b)`.
pub fn agreeing_bits(a: &CharikarSketch, b: &CharikarSketch) -> u32 {
    let differing: u32 =
        a.0.iter()
            .zip(&b.0)
            .map(|(x, y)| (x ^ y).count_ones())
            .sum();
    CHARIKAR_BITS as u32 - differing
}

/// One of the 13 pieces of a sketch with its index: pages sharing a subsketch are
/// candidates for C-similarity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Subsketch {
    /// The piece's number, 0..13.
    pub index: u8,
    /// The piece's bits (29 or 30), right-aligned.
    pub piece: u64,
}

impl Subsketch {
    /// Index and piece in one sortable `u64`: `index << 32 | piece`.
    pub fn key(&self) -> u64 {
        (u64::from(self.index) << 32) | self.piece
    }
}

/// First bit and length of piece `p` (0 ≤ p < 13): 30 bits for p < 7, 29 after.
/// (Meaningless for `p ≥ 13`.)
pub fn piece_bounds(p: usize) -> (usize, usize) {
    let long = CHARIKAR_BITS % SUBSKETCHES; // 7 pieces one bit longer
    let short = CHARIKAR_BITS / SUBSKETCHES; // 29
    if p < long {
        (p * (short + 1), short + 1)
    } else {
        (long * (short + 1) + (p - long) * short, short)
    }
}

/// Bits `start .. start + len` (len ≤ 64) of a sketch, right-aligned.
fn bits(words: &[u64; CHARIKAR_WORDS], start: usize, len: usize) -> u64 {
    let (w, off) = (start / 64, start % 64);
    let mut v = words[w] >> off;
    if off + len > 64 && w + 1 < CHARIKAR_WORDS {
        v |= words[w + 1] << (64 - off);
    }
    if len == 64 {
        v
    } else {
        v & ((1u64 << len) - 1)
    }
}

/// The 13 subsketches of a sketch.
pub fn subsketches(sketch: &CharikarSketch) -> [Subsketch; SUBSKETCHES] {
    let mut out = [Subsketch { index: 0, piece: 0 }; SUBSKETCHES];
    for (p, s) in out.iter_mut().enumerate() {
        let (start, len) = piece_bounds(p);
        *s = Subsketch {
            index: p as u8,
            piece: bits(&sketch.0, start, len),
        };
    }
    out
}

/// Computes Alg. C sketches. Immutable (the token vectors are a pure function of the
/// seed and the token), so one instance serves every thread.
#[derive(Debug, Clone)]
pub struct CharikarSketcher {
    seed: u64,
}

impl Default for CharikarSketcher {
    fn default() -> Self {
        Self::new()
    }
}

/// The page-vector accumulator: i32 for ordinary pages, i64 for enormous ones.
trait Acc: Copy + Default + std::ops::AddAssign + PartialOrd {
    fn from_i32(v: i32) -> Self;
    fn from_count(tf: usize) -> Self;
    fn mul(self, other: Self) -> Self;
}

impl Acc for i32 {
    #[inline]
    fn from_i32(v: i32) -> Self {
        v
    }
    #[inline]
    fn from_count(tf: usize) -> Self {
        tf as i32 // callers guarantee tf ≤ I32_SAFE_WORDS
    }
    #[inline]
    fn mul(self, other: Self) -> Self {
        self * other
    }
}

impl Acc for i64 {
    #[inline]
    fn from_i32(v: i32) -> Self {
        i64::from(v)
    }
    #[inline]
    fn from_count(tf: usize) -> Self {
        tf as i64
    }
    #[inline]
    fn mul(self, other: Self) -> Self {
        self.saturating_mul(other)
    }
}

impl CharikarSketcher {
    /// Token vectors from [`CHARIKAR_SEED`].
    pub fn new() -> CharikarSketcher {
        Self::with_seed(CHARIKAR_SEED)
    }

    /// Token vectors from `seed`.
    pub fn with_seed(seed: u64) -> CharikarSketcher {
        CharikarSketcher { seed }
    }

    /// The 32-bit key of a token: the high half of `mix64(f(w) ⊕ seed)`.
    #[inline]
    fn token_key(&self, word_fp: u64) -> u32 {
        (mix64(word_fp ^ self.seed) >> 32) as u32
    }

    /// The vector of a token, given its word fingerprint: 384 entries in `[−1, 1]`.
    pub fn token_vector(&self, word_fp: u64) -> [f32; CHARIKAR_BITS] {
        let mut v = [0f32; CHARIKAR_BITS];
        for (e, b) in v.iter_mut().zip(token_bytes(self.token_key(word_fp))) {
            *e = (2 * i32::from(b) - 255) as f32 / 255.0;
        }
        v
    }

    /// The sketch of a page given as words; `None` for an empty page.
    pub fn sketch<I>(&self, words: I, scratch: &mut Scratch) -> Option<CharikarSketch>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        scratch.with_word_fingerprints(words, |fps, scratch| self.sketch_fingerprints(fps, scratch))
    }

    /// The sketch of a page given as its word fingerprints; `None` if empty.
    pub fn sketch_fingerprints(
        &self,
        words: &[u64],
        scratch: &mut Scratch,
    ) -> Option<CharikarSketch> {
        if words.is_empty() {
            return None;
        }
        scratch.sorted.clear();
        scratch.sorted.extend_from_slice(words);
        scratch.sorted.sort_unstable();
        Some(if words.len() <= I32_SAFE_WORDS {
            self.accumulate_i32(&scratch.sorted)
        } else {
            self.accumulate::<i64>(&scratch.sorted)
        })
    }

    /// [`accumulate`](Self::accumulate) in `i32`, compiled for AVX2 or else SSE4.1
    /// where the CPU has it (the baseline x86-64 target has no 32-bit vector
    /// multiply); all paths compute the same integers.
    fn accumulate_i32(&self, sorted: &[u64]) -> CharikarSketch {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: calling a `#[target_feature(enable = "avx2")]` function
                // requires a CPU with AVX2, which was checked just above.
                return unsafe { self.accumulate_i32_avx2(sorted) };
            }
            if std::arch::is_x86_feature_detected!("sse4.1") {
                // SAFETY: as above, for SSE4.1.
                return unsafe { self.accumulate_i32_sse41(sorted) };
            }
        }
        self.accumulate::<i32>(sorted)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn accumulate_i32_avx2(&self, sorted: &[u64]) -> CharikarSketch {
        self.accumulate::<i32>(sorted)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse4.1")]
    fn accumulate_i32_sse41(&self, sorted: &[u64]) -> CharikarSketch {
        self.accumulate::<i32>(sorted)
    }

    /// The sketch from the page's sorted word fingerprints: each distinct token's
    /// vector made once and added times its frequency.
    #[inline(always)]
    fn accumulate<T: Acc>(&self, sorted: &[u64]) -> CharikarSketch {
        let mut acc = [T::default(); CHARIKAR_BITS];
        let mut i = 0;
        while i < sorted.len() {
            let token = sorted[i];
            let run = sorted[i..].iter().take_while(|&&w| w == token).count();
            i += run;
            let bytes = token_bytes(self.token_key(token));
            if run == 1 {
                for (a, &b) in acc.iter_mut().zip(&bytes) {
                    *a += T::from_i32(2 * i32::from(b) - 255);
                }
            } else {
                let tf = T::from_count(run);
                for (a, &b) in acc.iter_mut().zip(&bytes) {
                    *a += tf.mul(T::from_i32(2 * i32::from(b) - 255));
                }
            }
        }
        let mut sketch = [0u64; CHARIKAR_WORDS];
        for (i, a) in acc.iter().enumerate() {
            if *a > T::default() {
                sketch[i / 64] |= 1 << (i % 64);
            }
        }
        CharikarSketch(sketch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pieces_partition_the_sketch() {
        let mut next = 0;
        for p in 0..SUBSKETCHES {
            let (start, len) = piece_bounds(p);
            assert_eq!(start, next);
            assert!(len == 29 || len == 30);
            next = start + len;
        }
        assert_eq!(next, CHARIKAR_BITS);
    }

    proptest! {
        #[test]
        fn subsketches_reassemble_the_sketch(words in any::<[u64; 6]>()) {
            let sketch = CharikarSketch(words);
            let mut rebuilt = [0u64; 6];
            for s in subsketches(&sketch) {
                let (start, len) = piece_bounds(usize::from(s.index));
                prop_assert!(s.piece < (1 << len));
                for b in 0..len {
                    if (s.piece >> b) & 1 == 1 {
                        let i = start + b;
                        rebuilt[i / 64] |= 1 << (i % 64);
                    }
                }
            }
            prop_assert_eq!(rebuilt, words);
        }

        /// Pigeonhole: sketches agreeing on ≥ 372 bits share a subsketch. The flips
        /// are concentrated (up to 16 of them) so both sides of the threshold occur.
        #[test]
        fn c_similar_sketches_share_a_subsketch(
            words in any::<[u64; 6]>(),
            flips in proptest::collection::vec(0usize..CHARIKAR_BITS, 0..16),
        ) {
            let a = CharikarSketch(words);
            let mut b = a;
            for &i in &flips {
                b.0[i / 64] ^= 1 << (i % 64);
            }
            let shared = subsketches(&a).iter().zip(subsketches(&b).iter()).any(|(x, y)| x == y);
            if a.agreeing_bits(&b) >= CHARIKAR_THRESHOLD {
                prop_assert!(shared);
            }
            prop_assert_eq!(a.agreeing_bits(&b) as usize + (0..CHARIKAR_BITS).filter(|&i| a.bit(i) != b.bit(i)).count(), CHARIKAR_BITS);
        }
    }

    #[test]
    fn threshold_is_tight_for_13_differing_bits() {
        // One flip per piece: 13 differing bits (371 agreeing) and no shared piece.
        let a = CharikarSketch([0; 6]);
        let mut b = a;
        for p in 0..SUBSKETCHES {
            let (start, _) = piece_bounds(p);
            b.0[start / 64] ^= 1 << (start % 64);
        }
        assert_eq!(a.agreeing_bits(&b), 371);
        assert!(subsketches(&a)
            .iter()
            .zip(subsketches(&b).iter())
            .all(|(x, y)| x != y));
    }

    #[test]
    fn token_vectors_are_in_range_and_fixed() {
        let c = CharikarSketcher::new();
        let v = c.token_vector(12345);
        assert!(v.iter().all(|e| (-1.0..=1.0).contains(e) && *e != 0.0));
        let mean = v.iter().map(|&e| f64::from(e)).sum::<f64>() / 384.0;
        assert!(mean.abs() < 0.1, "mean {mean}");
        assert_eq!(v, CharikarSketcher::new().token_vector(12345));
        assert_ne!(v, c.token_vector(12346));
    }

    #[test]
    fn sketch_is_the_sign_of_the_float_page_vector() {
        // Independent path: sum the token vectors token by token, in text order (in
        // units of 1/255, exact in f64, so that a sum of exactly 0 gives bit 0).
        let c = CharikarSketcher::new();
        let words: Vec<String> = (0..300).map(|i| format!("w{}", (i * 7) % 41)).collect();
        let mut scratch = Scratch::new();
        let sketch = c.sketch(&words, &mut scratch).unwrap();
        let mut v = [0f64; CHARIKAR_BITS];
        for w in &words {
            let tv = c.token_vector(super::super::shingle::word_fingerprint(w));
            for (a, e) in v.iter_mut().zip(tv) {
                *a += (f64::from(e) * 255.0).round();
            }
        }
        for (i, a) in v.iter().enumerate() {
            assert_eq!(sketch.bit(i), *a > 0.0, "bit {i}, sum {a}");
        }
        // Word order does not matter, frequency does.
        let mut reversed = words.clone();
        reversed.reverse();
        assert_eq!(c.sketch(&reversed, &mut scratch), Some(sketch));
        assert_eq!(c.sketch(Vec::<&str>::new(), &mut scratch), None);
    }

    #[test]
    fn all_accumulation_paths_agree() {
        let c = CharikarSketcher::new();
        let mut sorted: Vec<u64> = (0..500u64).map(|i| i % 97).collect();
        sorted.sort_unstable();
        assert_eq!(c.accumulate::<i32>(&sorted), c.accumulate::<i64>(&sorted));
        assert_eq!(c.accumulate_i32(&sorted), c.accumulate::<i64>(&sorted));
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("sse4.1") {
                // SAFETY: SSE4.1 was detected just above.
                let sse = unsafe { c.accumulate_i32_sse41(&sorted) };
                assert_eq!(sse, c.accumulate::<i64>(&sorted));
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 was detected just above.
                let avx = unsafe { c.accumulate_i32_avx2(&sorted) };
                assert_eq!(avx, c.accumulate::<i64>(&sorted));
            }
        }
    }
}

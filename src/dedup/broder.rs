//! Alg. B: Broder's shingling with supershingles and megashingles, as Henzinger
//! describes it (*Combinatorial Algorithms for Web Search Engines*, and *Finding
//! near-duplicate web pages*, SIGIR 2006), with the parameters she gives: `k = 10`,
//! `m = 84`, `m' = 6`.
//!
//! 1. Every `k`-word shingle gets its 64-bit Rabin fingerprint ([`Shingler`]).
//! 2. `m = 84` fingerprint functions `f_i` — bijective min-wise hash functions of a
//!    32-bit key mixed from the shingle fingerprint, drawn once from a fixed seed and
//!    the same for every page (see `minwise` for the family, why it preserves the
//!    min-wise property and why 32-bit min-values suffice) —
//!    give 84 **min-values** `min_s f_i(s)`. Repeated shingles count once, as in
//!    Broder's set resemblance. For two pages, each min-value agrees with
//!    probability equal to the Jaccard coefficient `J` of their shingle sets.
//! 3. The **supershingle** `j` (0 ≤ j < 6) is the Rabin fingerprint of `1 ‖ j ‖
//!    min_{14j} ‖ … ‖ min_{14j+13}` (one byte for `j`, 4 big-endian bytes per
//!    32-bit min-value): "yet another fingerprinting function", one per position, so
//!    supershingles of different positions never meet. It agrees with probability
//!    `J^14`.
//! 4. The 15 **megashingles** are the Rabin fingerprints of `1 ‖ s_a ‖ s_b` for the
//!    pairs `a < b` in lexicographic order ([`megashingle_pair`]). Two pages are
//!    *B-similar* (≥ 2 equal supershingles) iff they share a megashingle — up to a
//!    fingerprint collision — so sorting `(megashingle, docID)` finds all B-similar
//!    pairs. Probability: [`broder_probability`](super::theory::broder_probability).
//!
//! Pages with fewer than `k` words have one shingle (see [`shingle`](super::shingle));
//! empty pages have no sketch.

use std::num::NonZeroUsize;

use super::minwise::MinwiseFamily;
use super::rabin::Rabin;
use super::shingle::{Scratch, Shingler};
use crate::error::Result;

/// Henzinger's shingle length for Alg. B, in words.
pub const BRODER_SHINGLE_LEN: usize = 10;
const BRODER_K: NonZeroUsize = match NonZeroUsize::new(BRODER_SHINGLE_LEN) {
    Some(k) => k,
    None => panic!("BRODER_SHINGLE_LEN is not zero"),
};
/// Number of fingerprint functions (min-values), `m`.
pub const MIN_VALUES: usize = 84;
/// Number of supershingles, `m'`.
pub const SUPERSHINGLES: usize = 6;
/// Min-values per supershingle, `m / m'`.
pub const SUPERSHINGLE_RUN: usize = MIN_VALUES / SUPERSHINGLES;
/// Number of megashingles, one per pair of supershingles: `6 · 5 / 2`.
pub const MEGASHINGLES: usize = SUPERSHINGLES * (SUPERSHINGLES - 1) / 2;
/// The seed of the 84 fingerprint functions ("the same for all pages").
pub const BRODER_SEED: u64 = 0x4272_6f64_6572_4231; // "BroderB1"

/// The supershingle pair `(a, b)`, `a < b`, that megashingle `index` fingerprints
/// (lexicographic order: (0,1), (0,2), …, (4,5)). `None` if `index ≥ 15`.
pub fn megashingle_pair(index: usize) -> Option<(usize, usize)> {
    let mut i = 0;
    for a in 0..SUPERSHINGLES {
        for b in a + 1..SUPERSHINGLES {
            if i == index {
                return Some((a, b));
            }
            i += 1;
        }
    }
    None
}

/// Alg. B's sketch of one page, with its intermediate values for evaluation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BroderSketch {
    /// The 84 min-values (32-bit: see `minwise` for why that suffices).
    pub min_values: [u32; MIN_VALUES],
    /// The 6 supershingles.
    pub supershingles: [u64; SUPERSHINGLES],
    /// The 15 megashingles: the sketch proper, what the dedup stage sorts.
    pub megashingles: [u64; MEGASHINGLES],
}

impl BroderSketch {
    /// B-similarity: the number of equal supershingles (same position).
    pub fn b_similarity(&self, other: &BroderSketch) -> usize {
        self.supershingles
            .iter()
            .zip(&other.supershingles)
            .filter(|(a, b)| a == b)
            .count()
    }

    /// Whether the two pages share a megashingle at the same position — what sorting
    /// megashingles finds; equivalent to `b_similarity ≥ 2` barring a collision.
    pub fn shares_megashingle(&self, other: &BroderSketch) -> bool {
        self.megashingles
            .iter()
            .zip(&other.megashingles)
            .any(|(a, b)| a == b)
    }

    /// The fraction of equal min-values: an estimate of the Jaccard coefficient.
    pub fn estimate(&self, other: &BroderSketch) -> f64 {
        let equal = self
            .min_values
            .iter()
            .zip(&other.min_values)
            .filter(|(a, b)| a == b)
            .count();
        equal as f64 / MIN_VALUES as f64
    }
}

/// Computes Alg. B sketches. Holds the rolling-window table and the 84 functions;
/// immutable, so one instance serves every thread.
#[derive(Debug, Clone)]
pub struct BroderSketcher {
    shingler: Shingler,
    family: MinwiseFamily<MIN_VALUES>,
}

impl Default for BroderSketcher {
    fn default() -> Self {
        Self::new()
    }
}

impl BroderSketcher {
    /// Henzinger's parameters: `k = 10`, 84 functions from [`BRODER_SEED`].
    pub fn new() -> BroderSketcher {
        BroderSketcher {
            shingler: Shingler::with_len(BRODER_K),
            family: MinwiseFamily::new(BRODER_SEED),
        }
    }

    /// Shingles of `k` words (≥ 1, else [`Error::Usage`](crate::Error::Usage)) and
    /// fingerprint functions drawn from `seed`.
    pub fn with_params(k: usize, seed: u64) -> Result<BroderSketcher> {
        Ok(BroderSketcher {
            shingler: Shingler::new(k)?,
            family: MinwiseFamily::new(seed),
        })
    }

    /// The shingle length in words.
    pub fn shingle_len(&self) -> usize {
        self.shingler.k()
    }

    /// The sketch of a page given as words (`None` for an empty page). Reuse
    /// `scratch` across pages to avoid allocating.
    pub fn sketch<I>(&self, words: I, scratch: &mut Scratch) -> Option<BroderSketch>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        scratch.with_word_fingerprints(words, |fps, scratch| self.sketch_fingerprints(fps, scratch))
    }

    /// The sketch of a page given as its word fingerprints
    /// ([`word_fingerprints`](super::shingle::word_fingerprints)); `None` if it is empty.
    pub fn sketch_fingerprints(
        &self,
        words: &[u64],
        scratch: &mut Scratch,
    ) -> Option<BroderSketch> {
        let min_values = self.min_values(words, scratch)?;
        let rabin = Rabin::standard();
        let mut supershingles = [0u64; SUPERSHINGLES];
        for (j, (s, run)) in supershingles
            .iter_mut()
            .zip(min_values.chunks_exact(SUPERSHINGLE_RUN))
            .enumerate()
        {
            let fp = rabin.extend(1, &[j as u8]);
            *s = run.iter().fold(fp, |fp, &v| rabin.extend_u32(fp, v));
        }
        let mut megashingles = [0u64; MEGASHINGLES];
        let mut i = 0;
        for a in 0..SUPERSHINGLES {
            for b in a + 1..SUPERSHINGLES {
                let fp = rabin.extend_u64(1, supershingles[a]);
                megashingles[i] = rabin.extend_u64(fp, supershingles[b]);
                i += 1;
            }
        }
        Some(BroderSketch {
            min_values,
            supershingles,
            megashingles,
        })
    }

    /// The 84 min-values of a page given as word fingerprints; `None` if empty.
    pub fn min_values(&self, words: &[u64], scratch: &mut Scratch) -> Option<[u32; MIN_VALUES]> {
        if words.is_empty() {
            return None;
        }
        self.shingler.keys_into(words, &mut scratch.keys);
        Some(self.family.min_values(&scratch.keys))
    }
}

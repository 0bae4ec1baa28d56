//! Min-hash sketches of 200 values with banding (IIR ch. 19.6; CS124 lecture 12).
//!
//! The sketch of a page is `ψ = (min_s π_1(s), …, min_s π_200(s))` over the
//! fingerprints `s` of its `k`-word shingles (`k = 4` by default), the `π_i`
//! bijective min-wise hash functions drawn from a seed, with 32-bit values (see
//! `minwise` for the functions and for why 32 bits suffice: a false equal entry has
//! probability about 10^-7). For two
//! pages each entry is equal with probability `J`, the Jaccard coefficient of their
//! shingle sets, so the fraction of equal entries estimates `J`
//! ([`MinHashSketch::estimate`]); a pair is similar when that fraction reaches the
//! threshold (0.8 by default: 160 of 200 entries, IIR's example).
//!
//! # Candidates by banding
//!
//! Comparing all pairs is quadratic, so the dedup stage sorts **band keys**: the 200
//! entries are cut into `b` bands of `r` consecutive entries, and band `i`'s key is
//! the Rabin fingerprint of `1 ‖ i ‖ entries` (one byte, then 4 big-endian bytes per
//! entry; [`MinHasher::bands`]). Two pages are
//! candidates when a band key is equal, which happens with probability
//!
//! ```text
//! P(candidate | J = s) = 1 − (1 − s^r)^b           (the S-curve)
//! ```
//!
//! The default `b = 20, r = 10` uses all 200 entries and gives:
//!
//! | s    | 0.3      | 0.5    | 0.6    | 0.7   | 0.8   | 0.9     | 0.95  |
//! |------|----------|--------|--------|-------|-------|---------|-------|
//! | P    | 0.00012  | 0.019  | 0.11   | 0.44  | 0.897 | 0.9998  | 1.0000|
//!
//! Pairs with `J ≥ 0.9` become candidates with probability ≥ 0.999 (the goal was
//! 0.99), pairs at the 0.8 threshold with 0.9, while unrelated pages (J ≲ 0.3) almost
//! never do. The steep part of the curve, `(1/b)^(1/r) ≈ 0.74`, sits just below the
//! threshold, so few true pairs are lost to banding and the false candidates it
//! lets through are removed by comparing the whole sketches. (`b = 16, r = 12` would
//! cut false candidates at J = 0.5 from 1.9% to 0.4% but catch J = 0.8 pairs only
//! 68% of the time.)

use std::num::NonZeroUsize;

use super::minwise::MinwiseFamily;
use super::rabin::Rabin;
use super::shingle::{Scratch, Shingler};
use crate::error::{Error, Result};

/// Entries in a min-hash sketch (IIR's "200 random permutations").
pub const MINHASH_LEN: usize = 200;
/// Default shingle length in words.
pub const MINHASH_SHINGLE_LEN: usize = 4;
/// Default similarity threshold: the fraction of equal entries.
pub const MINHASH_THRESHOLD: f64 = 0.8;
/// Default number of bands `b`.
pub const DEFAULT_BANDS: usize = 20;
/// Default rows (entries) per band `r`.
pub const DEFAULT_ROWS: usize = 10;
/// Default seed of the 200 hash functions.
pub const MINHASH_SEED: u64 = 0x4d69_6e48_6173_6831; // "MinHash1"

const DEFAULT_K: NonZeroUsize = match NonZeroUsize::new(MINHASH_SHINGLE_LEN) {
    Some(k) => k,
    None => panic!("MINHASH_SHINGLE_LEN is not zero"),
};

/// A min-hash sketch: the 200 min-values (32-bit: see `minwise` for why that
/// suffices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinHashSketch(pub [u32; MINHASH_LEN]);

impl MinHashSketch {
    /// The number of equal entries (same position).
    pub fn equal_entries(&self, other: &MinHashSketch) -> usize {
        self.0.iter().zip(&other.0).filter(|(a, b)| a == b).count()
    }

    /// The fraction of equal entries: the estimate of the Jaccard coefficient.
    pub fn estimate(&self, other: &MinHashSketch) -> f64 {
        self.equal_entries(other) as f64 / MINHASH_LEN as f64
    }

    /// Whether at least `threshold` of the entries are equal (within 1e-9, so that
    /// 0.8 means 160 of 200).
    pub fn is_similar(&self, other: &MinHashSketch, threshold: f64) -> bool {
        self.equal_entries(other) as f64 >= threshold * MINHASH_LEN as f64 - 1e-9
    }
}

/// The fraction of equal entries of two sketches (see [`MinHashSketch::estimate`]).
pub fn estimate(a: &MinHashSketch, b: &MinHashSketch) -> f64 {
    a.estimate(b)
}

/// Computes min-hash sketches and their band keys. Immutable: share one instance.
#[derive(Debug, Clone)]
pub struct MinHasher {
    shingler: Shingler,
    family: MinwiseFamily<MINHASH_LEN>,
    bands: usize,
    rows: usize,
}

impl Default for MinHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl MinHasher {
    /// The defaults: 4-word shingles, [`MINHASH_SEED`], 20 bands of 10 rows.
    pub fn new() -> MinHasher {
        MinHasher {
            shingler: Shingler::with_len(DEFAULT_K),
            family: MinwiseFamily::new(MINHASH_SEED),
            bands: DEFAULT_BANDS,
            rows: DEFAULT_ROWS,
        }
    }

    /// Shingles of `k ≥ 1` words and hash functions drawn from `seed`, with the
    /// default banding.
    pub fn with_params(k: usize, seed: u64) -> Result<MinHasher> {
        Ok(MinHasher {
            shingler: Shingler::new(k)?,
            family: MinwiseFamily::new(seed),
            bands: DEFAULT_BANDS,
            rows: DEFAULT_ROWS,
        })
    }

    /// The same sketches with `bands` bands of `rows` entries (both ≥ 1, at most 200
    /// entries in all, at most 256 bands).
    pub fn with_banding(mut self, bands: usize, rows: usize) -> Result<MinHasher> {
        let total = bands.checked_mul(rows);
        if bands == 0 || rows == 0 || bands > 256 || total.is_none_or(|t| t > MINHASH_LEN) {
            return Err(Error::usage(format!(
                "min-hash banding {bands} bands × {rows} rows: need at least 1 of each, at most 256 bands and at most {MINHASH_LEN} entries in all"
            )));
        }
        self.bands = bands;
        self.rows = rows;
        Ok(self)
    }

    /// The shingle length in words.
    pub fn shingle_len(&self) -> usize {
        self.shingler.k()
    }

    /// `(bands, rows)`. Two pages of Jaccard coefficient `s` share a band key
    /// with probability `1 − (1 − s^r)^b`
    /// ([`banding_probability`](super::theory::banding_probability)).
    pub fn banding(&self) -> (usize, usize) {
        (self.bands, self.rows)
    }

    /// The sketch of a page given as words (`None` if empty). Reuse `scratch`
    /// across pages to avoid allocating.
    pub fn sketch<I>(&self, words: I, scratch: &mut Scratch) -> Option<MinHashSketch>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        scratch.with_word_fingerprints(words, |fps, scratch| self.sketch_fingerprints(fps, scratch))
    }

    /// The sketch of a page given as word fingerprints; `None` if empty.
    pub fn sketch_fingerprints(
        &self,
        words: &[u64],
        scratch: &mut Scratch,
    ) -> Option<MinHashSketch> {
        if words.is_empty() {
            return None;
        }
        self.shingler.keys_into(words, &mut scratch.keys);
        Some(MinHashSketch(self.family.min_values(&scratch.keys)))
    }

    /// The band keys of a sketch: `(band index, key)` for each of the `b` bands.
    pub fn bands<'a>(&'a self, sketch: &'a MinHashSketch) -> impl Iterator<Item = (u8, u64)> + 'a {
        let rabin = Rabin::standard();
        sketch
            .0
            .chunks_exact(self.rows)
            .take(self.bands)
            .enumerate()
            .map(move |(i, rows)| {
                let fp = rabin.extend(1, &[i as u8]);
                (
                    i as u8,
                    rows.iter().fold(fp, |fp, &v| rabin.extend_u32(fp, v)),
                )
            })
    }
}

//! Near-duplicates by sorting sketches: the per-page math.
//!
//! A page is its extracted words, lowercased. This module turns them into
//! fixed-size sketches whose equal parts the dedup stage finds by sorting (the
//! stage itself — sort, pairs, union-find, export — builds on these pure
//! functions):
//!
//! | algorithm | source | sketch | sorted records per page | similar when |
//! |---|---|---|---|---|
//! | exact | IIR 19.6 | [`exact_fingerprint`] (64-bit Rabin) | 1 | equal |
//! | Alg. B | Broder; Henzinger | [`BroderSketch`]: 84 min-values → 6 supershingles → 15 megashingles | 15 megashingles | ≥ 2 equal supershingles |
//! | Alg. C | Charikar; Henzinger | [`CharikarSketch`]: 384 sign bits | 13 [`Subsketch`]es | ≥ 372 agreeing bits |
//! | min-hash | IIR 19.6; CS124 | [`MinHashSketch`]: 200 32-bit min-values of 4-shingles | 20 band keys | ≥ 80% equal entries |
//!
//! With `--verify exact` ([`options::Verify::Exact`]), Alg. B and min-hash keep
//! their candidates but decide by the exact Jaccard coefficient of the two
//! pages' shingle sets ([`shingle_set`], [`jaccard`]) against the threshold.
//!
//! * [`rabin`]: Rabin fingerprints modulo a fixed irreducible polynomial of degree
//!   64, table-driven, with the irreducibility test that vouches for it.
//! * [`shingle`]: word, page and rolling shingle fingerprints; the exact references
//!   ([`shingle_set`], [`jaccard`], [`cosine`]).
//! * [`broder`], [`charikar`], [`minhash`]: the sketchers. Each is an immutable
//!   struct holding its tables (`Sync`: one instance serves all threads) with a
//!   `sketch(words, &mut Scratch)` entry point and a `sketch_fingerprints` one for
//!   callers that compute the word fingerprints once for several sketches
//!   ([`word_fingerprints`]); a [`Scratch`] per thread holds the buffers. An
//!   empty page has no sketch (`None`); its exact fingerprint still groups it with
//!   the other empty pages.
//! * `minwise` (private): the 84 / 200 hash functions behind min-values, why they
//!   stand in for random permutations, and why 32-bit min-values suffice.
//! * [`theory`]: the detection probability of each algorithm as a function of the
//!   true similarity, for evaluation.
//!
//! Everything is deterministic: the same words give the same bits on every machine
//! and run (integer arithmetic throughout, fixed seeds, no global state). The two
//! hot loops (min-values, Alg. C's page vector) are compiled three times on x86-64,
//! for the baseline, SSE4.1 and AVX2, chosen at run time; all give the same
//! integers.
//!
//! Speed, one core, real pages of 500–2000 words (`benches/sketch.rs`): about 50
//! µs per 1000 words for min-hash, 40 for Alg. B, 65 for Alg. C, 18 for the exact
//! fingerprint, on a shared 2.8 GHz Xeon.

pub mod broder;
mod candidates;
pub mod charikar;
mod cluster;
pub mod eval;
pub mod exchange;
pub mod files;
pub mod minhash;
pub(crate) mod minwise;
pub mod options;
pub mod rabin;
pub mod shingle;
mod sketchers;
pub mod stage;
pub mod theory;

#[cfg(test)]
mod tests;

pub use crate::job::Alg;
pub use broder::{BroderSketch, BroderSketcher};
pub use charikar::{agreeing_bits, subsketches, CharikarSketch, CharikarSketcher, Subsketch};
pub use minhash::{estimate, MinHashSketch, MinHasher};
pub use rabin::Rabin;
pub use shingle::{
    cosine, exact_fingerprint, jaccard, shingle_set, word_fingerprints, Scratch, Shingler,
};
pub use theory::{
    banding_probability, broder_probability, charikar_probability, minhash_detection_probability,
    minhash_probability,
};

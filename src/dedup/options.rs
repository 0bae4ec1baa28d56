//! What a near-duplicate run is asked for: the algorithms, shingle length,
//! threshold, group cap and verification. Below both the stage
//! ([`super::stage`]) and the sketchers ([`super::sketchers`]), which read it.

use crate::dedup::Alg;
use crate::error::{Error, Result};

/// How candidate pairs are verified (broder and minhash).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Verify {
    /// By the sketches: the algorithm's own test on the two sketches (Alg. B:
    /// ≥ 2 equal supershingles; min-hash: ≥ `threshold` equal entries); the pair
    /// file records the sketch's similarity estimate.
    #[default]
    Sketch,
    /// By the exact Jaccard coefficient of the two pages' shingle sets, kept
    /// beside the sketches: similar when it reaches `threshold`; the pair file
    /// records it. Not defined for charikar (whose similarity is the sketch's
    /// bit agreement); exact needs no verification.
    Exact,
}

impl Verify {
    /// Its name on the command line and in the stage parameters.
    pub fn name(self) -> &'static str {
        match self {
            Verify::Sketch => "sketch",
            Verify::Exact => "exact",
        }
    }

    /// Parses a name.
    pub fn parse(s: &str) -> Result<Verify> {
        match s {
            "sketch" => Ok(Verify::Sketch),
            "exact" => Ok(Verify::Exact),
            _ => Err(Error::usage(format!(
                "unknown verification {s:?} (sketch, exact)"
            ))),
        }
    }
}

/// How to find near-duplicates.
#[derive(Clone, Debug)]
pub struct DedupOptions {
    /// Algorithms to run.
    pub algs: Vec<Alg>,
    /// Shingle length in words for broder and minhash (default 10 and 4).
    pub shingle: Option<usize>,
    /// Min-hash: fraction of equal entries for a pair to be similar; with
    /// [`Verify::Exact`], the exact Jaccard coefficient a broder or minhash
    /// pair must reach.
    pub threshold: f64,
    /// Groups sharing a key larger than this are linked to their first doc only.
    pub max_group: u64,
    /// How broder and minhash verify their candidates.
    pub verify: Verify,
}

impl Default for DedupOptions {
    fn default() -> Self {
        DedupOptions {
            algs: vec![Alg::MinHash],
            shingle: None,
            threshold: crate::dedup::minhash::MINHASH_THRESHOLD,
            max_group: 1000,
            verify: Verify::Sketch,
        }
    }
}

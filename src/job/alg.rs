//! The near-duplicate algorithms, by name: what the `dedup-ALG` stages and
//! their files are called (named here, beside the other stages and files;
//! the algorithms themselves are `crate::dedup`'s).

use crate::error::{Error, Result};

/// A near-duplicate algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Alg {
    /// Equal token sequences.
    Exact,
    /// Broder's megashingles (Henzinger's Alg. B).
    Broder,
    /// Charikar's random projections (Henzinger's Alg. C).
    Charikar,
    /// Min-hash with banding (IIR ch. 19).
    MinHash,
}

impl Alg {
    /// All algorithms.
    pub const ALL: [Alg; 4] = [Alg::Exact, Alg::Broder, Alg::Charikar, Alg::MinHash];

    /// Its name on the command line and in file and stage names.
    pub fn name(self) -> &'static str {
        match self {
            Alg::Exact => "exact",
            Alg::Broder => "broder",
            Alg::Charikar => "charikar",
            Alg::MinHash => "minhash",
        }
    }

    /// Parses a name.
    pub fn parse(s: &str) -> Result<Alg> {
        Alg::ALL.into_iter().find(|a| a.name() == s).ok_or_else(|| {
            Error::usage(format!(
                "unknown algorithm {s:?} (exact, broder, charikar, minhash)"
            ))
        })
    }
}

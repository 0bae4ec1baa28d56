//! Tokens, shingles and exact similarities: what the sketches summarize.
//!
//! A page is a sequence of words (the extracted text, lowercased). Three
//! fingerprints are built from it with the [`Rabin`] fingerprint of [`POLY`](super::rabin::POLY):
//!
//! * **word fingerprint**: `Rabin::extend(1, word bytes)`, the fingerprint of the bit
//!   string `1 ‖ word` (the leading 1 makes NUL bytes and the empty word count);
//! * **exact fingerprint** of the page: the Rabin fingerprint of `1 ‖ w_1 ‖ 0xff ‖ w_2 ‖
//!   0xff ‖ … ‖ w_n ‖ 0xff` — every word followed by the byte `0xff`, which UTF-8 never
//!   contains, so distinct word sequences are distinct byte strings and Rabin's
//!   collision bound applies to them directly;
//! * **shingle fingerprint** of `k` consecutive words: the Rabin fingerprint of the
//!   `8k` bytes `f(w_i) ‖ … ‖ f(w_{i+k-1})`, the big-endian word fingerprints. A
//!   fixed-width window rolls in two table passes per word (append the new word,
//!   drop the oldest with a [`ShiftTable`]), whatever the words' lengths. Two
//!   shingles collide only if two words' fingerprints do or the two 8k-byte strings
//!   do.
//!
//! **Short pages.** A page with `1 ≤ n < k` words has one shingle, the fingerprint
//! of its `n` word fingerprints (so a short page is still near-duplicate of its
//! copies); an empty page has no shingles and no sketch.
//!
//! The exact references the sketches are measured against live here too:
//! [`shingle_set`] + [`jaccard`] (Broder's resemblance, what Alg. B and min-hash
//! estimate) and [`cosine`] of term-frequency vectors (what Alg. C estimates).

use std::collections::HashMap;
use std::num::NonZeroUsize;

use super::minwise::shingle_key;
use super::rabin::{Rabin, ShiftTable};
use crate::error::{Error, Result};

/// Reusable buffers for the sketchers (word fingerprints, shingle keys, a sorted
/// copy): one per thread, passed to every `sketch` call, so that sketching a page
/// allocates nothing once the buffers have grown.
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    pub(crate) words: Vec<u64>,
    pub(crate) keys: Vec<u32>,
    pub(crate) sorted: Vec<u64>,
}

impl Scratch {
    /// Fingerprints `words` into the scratch's word buffer and calls
    /// `f(fingerprints, self)`: how the sketchers turn a page's words into
    /// their input without allocating.
    pub fn with_word_fingerprints<I, R>(
        &mut self,
        words: I,
        f: impl FnOnce(&[u64], &mut Scratch) -> R,
    ) -> R
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let mut fps = std::mem::take(&mut self.words);
        word_fingerprints(words, &mut fps);
        let r = f(&fps, self);
        self.words = fps;
        r
    }

    /// Empty buffers.
    pub fn new() -> Scratch {
        Scratch::default()
    }
}

/// The fingerprint of one word: the Rabin fingerprint of `1 ‖ word`.
#[inline]
pub fn word_fingerprint(word: &str) -> u64 {
    Rabin::standard().extend(1, word.as_bytes())
}

/// Replaces the contents of `out` with the fingerprints of `words`, in order.
pub fn word_fingerprints<I>(words: I, out: &mut Vec<u64>)
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    out.clear();
    out.extend(words.into_iter().map(|w| word_fingerprint(w.as_ref())));
}

/// The 64-bit fingerprint of the word sequence, for exact duplicates: the Rabin
/// fingerprint of `1 ‖ w_1 ‖ 0xff ‖ … ‖ w_n ‖ 0xff` (see the module doc). The empty
/// page has fingerprint `1`.
pub fn exact_fingerprint<I>(words: I) -> u64
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let rabin = Rabin::standard();
    let mut fp = 1;
    for w in words {
        fp = rabin.extend(fp, w.as_ref().as_bytes());
        fp = rabin.extend(fp, &[0xff]);
    }
    fp
}

/// Rolling fingerprints of the `k`-word shingles of a page, from its word
/// fingerprints. Holds the table that drops the oldest word; share it freely.
#[derive(Debug, Clone)]
pub struct Shingler {
    k: usize,
    drop: ShiftTable,
}

impl Shingler {
    /// Shingles of `k` words; `k` must be at least 1 ([`Error::Usage`]).
    pub fn new(k: usize) -> Result<Shingler> {
        match NonZeroUsize::new(k) {
            Some(k) => Ok(Shingler::with_len(k)),
            None => Err(Error::usage("shingle length must be at least 1 word")),
        }
    }

    /// Shingles of `k` words.
    pub fn with_len(k: NonZeroUsize) -> Shingler {
        let k = k.get();
        Shingler {
            k,
            drop: Rabin::standard().shift_table(8 * k as u128),
        }
    }

    /// The shingle length in words.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Calls `f` with the fingerprint of every shingle of the page whose word
    /// fingerprints are `words`, in order (repeats included): `n − k + 1` shingles,
    /// one if `1 ≤ n < k`, none if the page is empty.
    #[inline]
    pub fn for_each(&self, words: &[u64], mut f: impl FnMut(u64)) {
        let rabin = Rabin::standard();
        let k = self.k;
        if words.len() <= k {
            if !words.is_empty() {
                f(words.iter().fold(0, |s, &w| rabin.extend_u64(s, w)));
            }
            return;
        }
        let mut s = words[..k].iter().fold(0, |s, &w| rabin.extend_u64(s, w));
        f(s);
        for (&new, &old) in words[k..].iter().zip(words) {
            s = rabin.extend_u64(s, new) ^ self.drop.shift(old);
            f(s);
        }
    }

    /// Replaces the contents of `out` with the 32-bit min-wise keys of the page's
    /// shingles (see `minwise`), in order.
    pub(crate) fn keys_into(&self, words: &[u64], out: &mut Vec<u32>) {
        out.clear();
        out.reserve((words.len() + 1).saturating_sub(self.k).max(1));
        self.for_each(words, |s| out.push(shingle_key(s)));
    }

    /// The shingle fingerprints of a page, in order, appended to `out`.
    pub fn shingles_into(&self, words: &[u64], out: &mut Vec<u64>) {
        out.reserve((words.len() + 1).saturating_sub(self.k).max(1));
        self.for_each(words, |s| out.push(s));
    }

    /// Replaces the contents of `out` with the page's shingle set: its
    /// shingle fingerprints sorted and distinct (see [`shingle_set`]).
    pub fn set_into(&self, words: &[u64], out: &mut Vec<u64>) {
        out.clear();
        self.shingles_into(words, out);
        out.sort_unstable();
        out.dedup();
    }
}

/// The set of `k`-shingle fingerprints of a page, sorted and distinct: the exact
/// reference min-hash and Alg. B estimate (with the same fingerprints they use).
pub fn shingle_set<I>(words: I, k: usize) -> Result<Vec<u64>>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let shingler = Shingler::new(k)?;
    let mut fps = Vec::new();
    word_fingerprints(words, &mut fps);
    let mut set = Vec::new();
    shingler.set_into(&fps, &mut set);
    Ok(set)
}

/// Jaccard coefficient `|A ∩ B| / |A ∪ B|` of two sorted, distinct sets (as made
/// by [`shingle_set`]). Two empty sets are identical: 1.0.
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    if union == 0 {
        1.0
    } else {
        common as f64 / union as f64
    }
}

/// Cosine of the term-frequency vectors of two pages (words compared as strings):
/// what Alg. C's agreeing bits estimate. 1.0 if both pages are empty, 0.0 if one is.
pub fn cosine<A, B>(words_a: A, words_b: B) -> f64
where
    A: IntoIterator,
    A::Item: AsRef<str>,
    B: IntoIterator,
    B::Item: AsRef<str>,
{
    let mut tf: HashMap<String, (u64, u64)> = HashMap::new();
    for w in words_a {
        tf.entry(w.as_ref().to_owned()).or_default().0 += 1;
    }
    for w in words_b {
        tf.entry(w.as_ref().to_owned()).or_default().1 += 1;
    }
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for &(x, y) in tf.values() {
        let (x, y) = (x as f64, y as f64);
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    match (na == 0.0, nb == 0.0) {
        (true, true) => 1.0,
        (true, false) | (false, true) => 0.0,
        _ => (dot / (na.sqrt() * nb.sqrt())).min(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn concat_fps(words: &[u64]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    proptest! {
        #[test]
        fn rolling_shingles_are_rabin_fingerprints_of_the_window(
            words in proptest::collection::vec(any::<u64>(), 0..40),
            k in 1usize..12,
        ) {
            let shingler = Shingler::new(k).unwrap();
            let mut got = Vec::new();
            shingler.shingles_into(&words, &mut got);
            let rabin = Rabin::standard();
            let expected: Vec<u64> = if words.is_empty() {
                vec![]
            } else if words.len() < k {
                vec![rabin.fingerprint(&concat_fps(&words))]
            } else {
                words.windows(k).map(|w| rabin.fingerprint(&concat_fps(w))).collect()
            };
            prop_assert_eq!(got, expected);
        }

        #[test]
        fn exact_fingerprint_is_rabin_of_the_encoding(words in proptest::collection::vec(".{0,6}", 0..10)) {
            let mut bytes = vec![];
            for w in &words {
                bytes.extend_from_slice(w.as_bytes());
                bytes.push(0xff);
            }
            prop_assert_eq!(exact_fingerprint(&words), Rabin::standard().extend(1, &bytes));
        }

        #[test]
        fn jaccard_matches_hash_sets(a in proptest::collection::btree_set(0u64..50, 0..30), b in proptest::collection::btree_set(0u64..50, 0..30)) {
            let av: Vec<u64> = a.iter().copied().collect();
            let bv: Vec<u64> = b.iter().copied().collect();
            let inter = a.intersection(&b).count() as f64;
            let union = a.union(&b).count() as f64;
            let expected = if union == 0.0 { 1.0 } else { inter / union };
            prop_assert!((jaccard(&av, &bv) - expected).abs() < 1e-12);
        }
    }

    #[test]
    fn exact_fingerprint_separates_word_boundaries() {
        let a = exact_fingerprint(["ab", "c"]);
        let b = exact_fingerprint(["a", "bc"]);
        let c = exact_fingerprint(["abc"]);
        let d = exact_fingerprint(["abc", ""]);
        assert!(a != b && b != c && a != c && c != d);
        assert_eq!(exact_fingerprint(["ab", "c"]), a);
        assert_eq!(exact_fingerprint(Vec::<&str>::new()), 1);
    }

    #[test]
    fn word_fingerprints_distinguish_nul_and_empty() {
        assert_ne!(word_fingerprint(""), word_fingerprint("\0"));
        assert_ne!(word_fingerprint("a"), word_fingerprint("\0a"));
    }

    #[test]
    fn shingle_set_of_a_rose() {
        // IIR 19.6: "a rose is a rose is a rose" has three distinct 4-shingles.
        let words = "a rose is a rose is a rose".split(' ');
        let set = shingle_set(words, 4).unwrap();
        assert_eq!(set.len(), 3);
        assert!(Shingler::new(0).is_err());
        assert_eq!(shingle_set(["only", "two"], 4).unwrap().len(), 1);
        assert!(shingle_set(Vec::<&str>::new(), 4).unwrap().is_empty());
    }

    #[test]
    fn cosine_of_small_vectors() {
        let c = cosine(["a", "b", "a"], ["a", "c"]);
        // (2,1,0)·(1,0,1) = 2; |.| = √5, √2.
        assert!((c - 2.0 / (5f64.sqrt() * 2f64.sqrt())).abs() < 1e-12);
        assert_eq!(cosine(["x"], ["x", "x"]), 1.0);
        assert_eq!(cosine(Vec::<&str>::new(), ["x"]), 0.0);
        assert_eq!(cosine(Vec::<&str>::new(), Vec::<&str>::new()), 1.0);
    }
}

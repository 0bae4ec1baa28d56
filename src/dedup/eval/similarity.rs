//! The true similarity of two sampled docs (step 2 of the
//! [evaluation](super)): the Jaccard coefficient of their shingle sets, the
//! cosine of their term-frequency vectors, or equality of their token
//! sequences. Each doc is turned into a [`Profile`] once; pairs are then
//! compared by merging sorted lists.

use crate::dedup::shingle::{exact_fingerprint, word_fingerprints, Shingler};

/// The measure of true similarity.
#[derive(Clone, Copy, Debug)]
pub(super) enum Measure {
    Jaccard(usize),
    Cosine,
    Equal,
}

/// A sampled doc, ready for pairwise comparison.
pub(super) enum Profile {
    /// Sorted, distinct shingle fingerprints.
    Shingles(Vec<u64>),
    /// Sorted (word fingerprint, count), and the squared norm.
    Terms(Vec<(u64, u32)>, f64),
    /// Exact fingerprint and the normalized token sequence.
    Tokens(u64, String),
}

/// The size of the intersection of two sorted, distinct sets; gallops through
/// the larger one when the sizes are far apart.
fn intersection(a: &[u64], b: &[u64]) -> usize {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if small.is_empty() {
        return 0;
    }
    if large.len() / small.len() >= 16 {
        let mut rest = large;
        let mut n = 0;
        for &x in small {
            // Exponential search for x in rest.
            let mut hi = 1;
            while hi < rest.len() && rest[hi] < x {
                hi *= 2;
            }
            let lo = hi / 2;
            let hi = hi.min(rest.len());
            let pos = lo + rest[lo..hi].partition_point(|&y| y < x);
            if pos < rest.len() && rest[pos] == x {
                n += 1;
                rest = &rest[pos + 1..];
            } else {
                rest = &rest[pos..];
            }
            if rest.is_empty() {
                break;
            }
        }
        return n;
    }
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        n += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    n
}

/// The true similarity of two docs of the same measure (0 for profiles of
/// different measures).
pub(super) fn similarity(a: &Profile, b: &Profile) -> f64 {
    match (a, b) {
        (Profile::Shingles(x), Profile::Shingles(y)) => {
            let common = intersection(x, y);
            let union = x.len() + y.len() - common;
            if union == 0 {
                1.0
            } else {
                common as f64 / union as f64
            }
        }
        (Profile::Terms(x, nx), Profile::Terms(y, ny)) => {
            if *nx == 0.0 || *ny == 0.0 {
                return if *nx == *ny { 1.0 } else { 0.0 };
            }
            let (mut i, mut j, mut dot) = (0, 0, 0f64);
            while i < x.len() && j < y.len() {
                match x[i].0.cmp(&y[j].0) {
                    std::cmp::Ordering::Less => i += 1,
                    std::cmp::Ordering::Greater => j += 1,
                    std::cmp::Ordering::Equal => {
                        dot += f64::from(x[i].1) * f64::from(y[j].1);
                        i += 1;
                        j += 1;
                    }
                }
            }
            let c = dot / (nx * ny).sqrt();
            if c >= 1.0 - 1e-12 {
                1.0
            } else {
                c
            }
        }
        (Profile::Tokens(fa, wa), Profile::Tokens(fb, wb)) if fa == fb && wa == wb => 1.0,
        _ => 0.0,
    }
}

/// The profile of a doc's words for `measure` (`shingler` for Jaccard).
pub(super) fn profile(measure: Measure, words: &str, shingler: Option<&Shingler>) -> Profile {
    let tokens = || words.split(' ').filter(|w| !w.is_empty());
    match measure {
        Measure::Jaccard(_) => {
            let mut fps = Vec::new();
            word_fingerprints(tokens(), &mut fps);
            let mut set = Vec::new();
            if let Some(sh) = shingler {
                sh.set_into(&fps, &mut set);
            }
            set.shrink_to_fit();
            Profile::Shingles(set)
        }
        Measure::Cosine => {
            let mut fps = Vec::new();
            word_fingerprints(tokens(), &mut fps);
            fps.sort_unstable();
            let mut terms: Vec<(u64, u32)> = Vec::new();
            for fp in fps {
                match terms.last_mut() {
                    Some((f, c)) if *f == fp => *c += 1,
                    _ => terms.push((fp, 1)),
                }
            }
            let norm = terms
                .iter()
                .map(|&(_, c)| f64::from(c) * f64::from(c))
                .sum();
            terms.shrink_to_fit();
            Profile::Terms(terms, norm)
        }
        Measure::Equal => {
            let normalized: Vec<&str> = tokens().collect();
            Profile::Tokens(exact_fingerprint(tokens()), normalized.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersection_counts_both_ways() {
        let a: Vec<u64> = (0..1000).map(|i| i * 3).collect();
        let b: Vec<u64> = (0..40).map(|i| i * 7).collect();
        let naive = b.iter().filter(|x| a.contains(x)).count();
        assert_eq!(intersection(&a, &b), naive);
        assert_eq!(intersection(&b, &a), naive);
        assert_eq!(
            intersection(&a[..50], &b),
            b.iter().filter(|x| a[..50].contains(x)).count()
        );
        assert_eq!(intersection(&[], &a), 0);
        assert_eq!(intersection(&a, &a), a.len());
    }
}

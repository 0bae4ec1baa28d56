//! The sketchers of the chosen algorithms, run together on each page (its
//! words fingerprinted once), and the verdict on a candidate pair from its two
//! sketch-file records.

use crate::dedup::broder::{BroderSketcher, MIN_VALUES};
use crate::dedup::charikar::{CharikarSketch, CharikarSketcher, CHARIKAR_BITS};
use crate::dedup::minhash::{MinHasher, MINHASH_LEN};
use crate::dedup::options::{DedupOptions, Verify};
use crate::dedup::shingle::{exact_fingerprint, word_fingerprints, Scratch, Shingler};
use crate::dedup::Alg;
use crate::error::Result;
use crate::varint;

/// The sketchers of the chosen algorithms.
pub(crate) struct Sketchers {
    broder: Option<BroderSketcher>,
    charikar: Option<CharikarSketcher>,
    minhash: Option<MinHasher>,
    threshold: f64,
    /// With [`Verify::Exact`]: the shinglers of broder's and minhash's sets.
    broder_sets: Option<Shingler>,
    minhash_sets: Option<Shingler>,
}

/// One page's keys and sketch-file record tail for one algorithm.
#[derive(Default)]
pub(crate) struct AlgOut {
    pub(crate) keys: Vec<u64>,
    /// `bytes(sketch)`, then `bytes(shingle set)` with [`Verify::Exact`]; empty
    /// when the page has no sketch.
    pub(crate) record: Vec<u8>,
}

/// Per-thread buffers.
#[derive(Default)]
pub(crate) struct Buffers {
    fps: Vec<u64>,
    scratch: Scratch,
    sketch: Vec<u8>,
    set: Vec<u64>,
}

/// The exact Jaccard coefficient of two sets of `u64` little-endian values,
/// each strictly increasing (a merge); 1.0 for two empty sets, as
/// [`crate::dedup::shingle::jaccard`].
fn jaccard_le(a: &[u8], b: &[u8]) -> f64 {
    let get = |s: &[u8], i: usize| {
        let mut v = [0u8; 8];
        v.copy_from_slice(&s[8 * i..8 * i + 8]);
        u64::from_le_bytes(v)
    };
    let (n, m) = (a.len() / 8, b.len() / 8);
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < n && j < m {
        let (x, y) = (get(a, i), get(b, j));
        common += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    let union = n + m - common;
    if union == 0 {
        1.0
    } else {
        common as f64 / union as f64
    }
}

impl Sketchers {
    pub(crate) fn new(opts: &DedupOptions) -> Result<Sketchers> {
        let has = |a| opts.algs.contains(&a);
        // The shingle sets kept for exact verification (`default_k` unless
        // --shingle says otherwise).
        let sets = |a, default_k| -> Result<Option<Shingler>> {
            (opts.verify == Verify::Exact && has(a))
                .then(|| Shingler::new(opts.shingle.unwrap_or(default_k)))
                .transpose()
        };
        Ok(Sketchers {
            broder: if has(Alg::Broder) {
                Some(match opts.shingle {
                    Some(k) => BroderSketcher::with_params(k, crate::dedup::broder::BRODER_SEED)?,
                    None => BroderSketcher::new(),
                })
            } else {
                None
            },
            charikar: has(Alg::Charikar).then(CharikarSketcher::new),
            minhash: if has(Alg::MinHash) {
                Some(match opts.shingle {
                    Some(k) => MinHasher::with_params(k, crate::dedup::minhash::MINHASH_SEED)?,
                    None => MinHasher::new(),
                })
            } else {
                None
            },
            threshold: opts.threshold,
            broder_sets: sets(Alg::Broder, crate::dedup::broder::BRODER_SHINGLE_LEN)?,
            minhash_sets: sets(Alg::MinHash, crate::dedup::minhash::MINHASH_SHINGLE_LEN)?,
        })
    }

    /// The shinger of `alg`'s exact sets, if it verifies exactly.
    pub(crate) fn set_shingler(&self, alg: Alg) -> Option<&Shingler> {
        match alg {
            Alg::Broder => self.broder_sets.as_ref(),
            Alg::MinHash => self.minhash_sets.as_ref(),
            _ => None,
        }
    }

    /// Sketches one page for every algorithm in `algs`.
    pub(crate) fn sketch(&self, algs: &[Alg], words: &str, b: &mut Buffers) -> Vec<AlgOut> {
        let tokens = || words.split(' ').filter(|w| !w.is_empty());
        word_fingerprints(tokens(), &mut b.fps);
        algs.iter()
            .map(|&alg| {
                let mut out = AlgOut::default();
                b.sketch.clear();
                match alg {
                    Alg::Exact => {
                        let fp = exact_fingerprint(tokens());
                        out.keys.push(fp);
                        b.sketch.extend_from_slice(&fp.to_le_bytes());
                    }
                    Alg::Broder => {
                        let s = self.broder.as_ref().expect("broder sketcher");
                        if let Some(sk) = s.sketch_fingerprints(&b.fps, &mut b.scratch) {
                            out.keys.extend_from_slice(&sk.megashingles);
                            for v in sk.min_values {
                                b.sketch.extend_from_slice(&v.to_le_bytes());
                            }
                        }
                    }
                    Alg::Charikar => {
                        let s = self.charikar.as_ref().expect("charikar sketcher");
                        if let Some(sk) = s.sketch_fingerprints(&b.fps, &mut b.scratch) {
                            out.keys.extend(
                                crate::dedup::charikar::subsketches(&sk)
                                    .iter()
                                    .map(|p| p.key()),
                            );
                            for w in sk.0 {
                                b.sketch.extend_from_slice(&w.to_le_bytes());
                            }
                        }
                    }
                    Alg::MinHash => {
                        let s = self.minhash.as_ref().expect("minhash sketcher");
                        if let Some(sk) = s.sketch_fingerprints(&b.fps, &mut b.scratch) {
                            out.keys.extend(s.bands(&sk).map(|(_, k)| k));
                            for v in sk.0 {
                                b.sketch.extend_from_slice(&v.to_le_bytes());
                            }
                        }
                    }
                }
                if !b.sketch.is_empty() {
                    varint::put_bytes(&mut out.record, &b.sketch);
                    if let Some(shingler) = self.set_shingler(alg) {
                        // The set of shingle_set(): sorted, distinct.
                        shingler.set_into(&b.fps, &mut b.set);
                        varint::put(&mut out.record, 8 * b.set.len() as u64);
                        out.record.reserve(8 * b.set.len());
                        for v in &b.set {
                            out.record.extend_from_slice(&v.to_le_bytes());
                        }
                    }
                }
                out
            })
            .collect()
    }

    /// Verifies a candidate pair from its two sketch-file records (sketch,
    /// shingle set): the similarity, or `None` when the pair is not similar.
    /// With shingle sets (broder and minhash under [`Verify::Exact`]): their
    /// exact Jaccard coefficient, similar when it reaches the threshold.
    pub(crate) fn verify(
        &self,
        alg: Alg,
        (a, set_a): (&[u8], Option<&[u8]>),
        (b, set_b): (&[u8], Option<&[u8]>),
    ) -> Option<f32> {
        if let (Some(x), Some(y)) = (set_a, set_b) {
            let j = jaccard_le(x, y);
            // The same tolerance as dedup-eval's precision target.
            return (j >= self.threshold - 1e-12).then_some(j as f32);
        }
        // Min-values are stored little-endian at the sketchers' width (the
        // sketch length tells it).
        let equal_values = |n: usize| {
            let w = (a.len() / n).max(1);
            a.chunks_exact(w)
                .zip(b.chunks_exact(w))
                .take(n)
                .filter(|(x, y)| x == y)
                .count()
        };
        match alg {
            Alg::Exact => (a == b).then_some(1.0),
            Alg::Broder => {
                // ≥ 2 equal supershingles: runs of 14 equal min-values.
                let run = MIN_VALUES / crate::dedup::broder::SUPERSHINGLES;
                let equal_runs = a
                    .chunks_exact(a.len() / MIN_VALUES * run)
                    .zip(b.chunks_exact(a.len() / MIN_VALUES * run))
                    .filter(|(x, y)| x == y)
                    .count();
                (equal_runs >= 2).then(|| equal_values(MIN_VALUES) as f32 / MIN_VALUES as f32)
            }
            Alg::Charikar => {
                let words = |s: &[u8]| {
                    let mut w = [0u64; CHARIKAR_BITS / 64];
                    for (d, c) in w.iter_mut().zip(s.chunks_exact(8)) {
                        *d = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                    }
                    CharikarSketch(w)
                };
                let agree = words(a).agreeing_bits(&words(b));
                (agree >= crate::dedup::charikar::CHARIKAR_THRESHOLD)
                    .then_some(agree as f32 / CHARIKAR_BITS as f32)
            }
            Alg::MinHash => {
                let eq = equal_values(MINHASH_LEN) as f64 / MINHASH_LEN as f64;
                (eq >= self.threshold - 1e-12).then_some(eq as f32)
            }
        }
    }
}

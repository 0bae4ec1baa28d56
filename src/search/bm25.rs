//! BM25 and BM25F over the hit lists, with the paper's proximity and
//! PageRank.
//!
//! A word's hits in a document fall into five **fields** by their
//! [`HitType`]: title, anchor (the text of links to the document), URL,
//! large type (headings, relative font ≥ 3) and body (the other plain
//! hits). A document's field lengths (its hits per field, every word
//! counted) come from the index's `fieldlens` file ([`crate::index::fieldlens`]).
//!
//! * **BM25** (Robertson et al., Okapi at TREC-3): the word's frequency is
//!   its plain hits (large type and body: the page's text), the length the
//!   document's plain hits;
//!   `idf(t) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · len / avglen))`.
//! * **BM25F** (Robertson, Zaragoza & Taylor 2004, the "simple BM25F" of
//!   Zaragoza et al. at TREC-13): per field a length-normalized frequency
//!   `tf_f / (1 − b_f + b_f · len_f / avglen_f)`, summed with the field
//!   weights into one pseudo-frequency `tf~`, saturated once:
//!   `idf(t) · tf~ · (k1 + 1) / (tf~ + k1)`.
//!
//! `idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))` (Lucene's, never
//! negative). To either, with several words, the paper's proximity
//! ([`super::rank::Scorer::proximity`]) adds `proximity_weight ·
//! prox / (prox + proximity_k)` times the words' mean idf (saturated, so a
//! phrase repeated many times cannot outweigh the words' own evidence), and
//! PageRank multiplies as in the paper: `· (1 + pagerank_weight · ln(1 + N ·
//! pr))`.
//!
//! Without a `fieldlens` file (an index built before it existed) every
//! length is taken to be the average, i.e. `b = 0`.

use serde::{Deserialize, Serialize};

use super::rank::{HitType, RankingWeights, HIT_TYPES};

/// Fields of BM25F: those of the index's field lengths.
pub const N_FIELDS: usize = crate::index::fieldlens::FIELDS;

/// The field names, in table order.
pub const FIELD_NAMES: [&str; N_FIELDS] = crate::index::fieldlens::FIELD_NAMES;

/// The field of each [`HitType`] (in [`HitType::ALL`] order), as
/// [`crate::index::fieldlens::field_of_hit`] counts the lengths.
pub const FIELD_OF_TYPE: [usize; HIT_TYPES] = [0, 1, 2, 3, 4, 4, 4];

/// The field of a hit type.
#[inline]
pub fn field_of(t: HitType) -> usize {
    FIELD_OF_TYPE[t.index()]
}

/// Parameters of BM25 and BM25F.
///
/// The defaults were measured on the development half of Cranfield
/// (`benches/cranfield.py`; ARCHITECTURE.md, "Search quality", has the
/// table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bm25Weights {
    /// Term-frequency saturation.
    pub k1: f64,
    /// Length normalization of BM25 (0: none, 1: full).
    pub b: f64,
    /// BM25F: the weight of a hit in each field.
    pub field_weight: [f64; N_FIELDS],
    /// BM25F: the length normalization of each field.
    pub field_b: [f64; N_FIELDS],
    /// Weight of the proximity bonus (0: none).
    pub proximity_weight: f64,
    /// Half-saturation point of the proximity score.
    pub proximity_k: f64,
    /// How much PageRank scales the score (0: not at all).
    pub pagerank_weight: f64,
}

impl Default for Bm25Weights {
    fn default() -> Self {
        let text = crate::index::inverted::BoundParams::default_weights(None);
        Bm25Weights {
            k1: text.k1,
            b: text.b,
            field_weight: text.field_weight,
            field_b: text.field_b,
            proximity_weight: 0.5,
            proximity_k: 50.0,
            pagerank_weight: 0.1,
        }
    }
}

/// The collection's statistics BM25 needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CollectionStats {
    /// Documents.
    pub docs: u64,
    /// Average field lengths (`None`: unknown, every length is the
    /// average).
    pub avg_len: Option<[f64; N_FIELDS]>,
}

impl CollectionStats {
    /// `ln(1 + (N − df + 0.5) / (df + 0.5))`.
    pub fn idf(&self, df: u32) -> f64 {
        let n = self.docs as f64;
        let df = f64::from(df).min(n);
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// `len / avglen` of field `f` (1 when unknown).
    fn ratio(&self, f: usize, lens: Option<&[u32; N_FIELDS]>) -> f64 {
        match (self.avg_len, lens) {
            (Some(avg), Some(l)) if avg[f] > 0.0 => f64::from(l[f]) / avg[f],
            _ => 1.0,
        }
    }
}

/// One word's part of a BM25 score.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Bm25Word {
    /// The word.
    pub word: String,
    /// Documents with it.
    pub df: u32,
    /// Its idf.
    pub idf: f64,
    /// Its hits per field.
    pub tf: [u32; N_FIELDS],
    /// The frequency after field weights and length normalization (BM25:
    /// the plain hits' count).
    pub pseudo_tf: f64,
    /// `idf · saturated tf`.
    pub score: f64,
}

/// The numbers behind a BM25 or BM25F score.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Bm25Explain {
    /// The ranking: "bm25" or "bm25f".
    pub ranking: String,
    /// Per query word found in the document.
    pub words: Vec<Bm25Word>,
    /// The document's field lengths (`None`: unknown).
    pub lengths: Option<[u32; N_FIELDS]>,
    /// The collection's average field lengths (`None`: unknown).
    pub avg_lengths: Option<[f64; N_FIELDS]>,
    /// The sum of the words' scores.
    pub text: f64,
    /// The paper's proximity score of the document (several words).
    pub proximity_raw: f64,
    /// The bonus it adds.
    pub proximity: f64,
    /// The document's PageRank, when the job has ranks.
    pub pagerank: Option<f64>,
    /// `1 + pagerank_weight · ln(1 + N · pr)` (1 without ranks).
    pub pagerank_factor: f64,
    /// `(text + proximity) · pagerank_factor`.
    pub score: f64,
}

/// What scoring one document needs of one word.
pub struct WordInDoc<'a> {
    /// The word.
    pub word: &'a str,
    /// Documents with it.
    pub df: u32,
    /// Its idf, [`CollectionStats::idf`] of `df` (worked out once a query,
    /// not once a document).
    pub idf: f64,
    /// Its hits per [`HitType`] in the document (zero when absent).
    pub counts: [u32; HIT_TYPES],
}

/// PageRank's factor of a document's score, `1 + pagerank_weight · ln(1 +
/// N · pr)` (1 without ranks).
pub fn pagerank_factor(w: &Bm25Weights, docs: u64, pagerank: Option<f64>) -> f64 {
    pagerank.map_or(1.0, |pr| {
        RankingWeights {
            pagerank_weight: w.pagerank_weight,
            ..RankingWeights::default()
        }
        .pagerank_factor(pr, docs)
    })
}

/// Scores a document: BM25 (`fielded` false) or BM25F; `prox_raw` is the
/// paper's proximity score of the document's words (0 for one word).
#[allow(clippy::too_many_arguments)]
pub fn score(
    w: &Bm25Weights,
    fielded: bool,
    stats: &CollectionStats,
    words: &[WordInDoc<'_>],
    lens: Option<&[u32; N_FIELDS]>,
    prox_raw: f64,
    pagerank: Option<f64>,
    explain: bool,
) -> (f64, Option<Bm25Explain>) {
    let factor = pagerank_factor(w, stats.docs, pagerank);
    score_with(
        w,
        fielded,
        stats,
        words,
        lens,
        prox_raw,
        (pagerank, factor),
        explain,
    )
}

/// [`score`] with PageRank's factor already worked out
/// ([`pagerank_factor`]): `(pagerank, factor)`.
#[allow(clippy::too_many_arguments)]
pub fn score_with(
    w: &Bm25Weights,
    fielded: bool,
    stats: &CollectionStats,
    words: &[WordInDoc<'_>],
    lens: Option<&[u32; N_FIELDS]>,
    prox_raw: f64,
    (pagerank, factor): (Option<f64>, f64),
    explain: bool,
) -> (f64, Option<Bm25Explain>) {
    if !explain {
        let text = text_part(w, fielded, stats, words, lens);
        return (text.total(w, prox_raw, factor), None);
    }
    let mut text = TextPart::default();
    let mut norms = DocNorms::new(lens);
    let mut e = Bm25Explain {
        ranking: if fielded { "bm25f" } else { "bm25" }.to_string(),
        lengths: lens.copied(),
        avg_lengths: stats.avg_len,
        ..Bm25Explain::default()
    };
    for wd in words {
        let Some((tf, pseudo, s)) = word_score(w, fielded, stats, wd, &mut norms) else {
            continue;
        };
        text.add(wd.idf, s);
        e.words.push(Bm25Word {
            word: wd.word.to_string(),
            df: wd.df,
            idf: wd.idf,
            tf,
            pseudo_tf: pseudo,
            score: s,
        });
    }
    let total = text.total(w, prox_raw, factor);
    e.text = text.text;
    e.proximity_raw = prox_raw;
    e.proximity = text.proximity(w, prox_raw);
    e.pagerank = pagerank;
    e.pagerank_factor = factor;
    e.score = total;
    (total, Some(e))
}

/// The words' part of a document's BM25 or BM25F score, and what its
/// proximity bonus needs: [`score_with`] is [`TextPart::total`] of it, so
/// a document's text is scored once whatever proximity score it is then
/// given (a bound, then the placed one).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TextPart {
    /// The sum of the words' scores, in word order.
    pub text: f64,
    /// The sum of the idfs of the words scoring above 0.
    idf_sum: f64,
    /// Words scoring above 0.
    present: usize,
}

impl TextPart {
    fn add(&mut self, idf: f64, s: f64) {
        if s > 0.0 {
            self.present += 1;
            self.idf_sum += idf;
        }
        self.text += s;
    }

    /// The proximity bonus of a document whose paper's proximity score is
    /// `prox_raw`.
    fn proximity(&self, w: &Bm25Weights, prox_raw: f64) -> f64 {
        if self.present > 1 && prox_raw > 0.0 {
            let mean_idf = self.idf_sum / self.present as f64;
            w.proximity_weight * mean_idf * prox_raw / (prox_raw + w.proximity_k)
        } else {
            0.0
        }
    }

    /// `(text + proximity) · factor`: the document's score.
    pub fn total(&self, w: &Bm25Weights, prox_raw: f64, factor: f64) -> f64 {
        (self.text + self.proximity(w, prox_raw)) * factor
    }

    /// At least [`Self::total`] with any proximity score, without one: the
    /// bonus at its limit, the proximity weight times the mean idf (the
    /// saturation `prox / (prox + proximity_k)` stays at most 1), raised
    /// by a relative 1e-12 so that the roundings of [`Self::proximity`]
    /// (a few ulps) cannot put `total` above it. Non-negative weights and
    /// factor assumed, as pruning's bounds are.
    pub fn total_at_most(&self, w: &Bm25Weights, factor: f64) -> f64 {
        let prox = if self.present > 1 {
            let mean_idf = self.idf_sum / self.present as f64;
            w.proximity_weight * mean_idf * (1.0 + 1e-12)
        } else {
            0.0
        };
        (self.text + prox) * factor
    }
}

/// The words' part of a document's score (see [`TextPart`]).
pub fn text_part(
    w: &Bm25Weights,
    fielded: bool,
    stats: &CollectionStats,
    words: &[WordInDoc<'_>],
    lens: Option<&[u32; N_FIELDS]>,
) -> TextPart {
    let mut text = TextPart::default();
    let mut norms = DocNorms::new(lens);
    for wd in words {
        if let Some((_, _, s)) = word_score(w, fielded, stats, wd, &mut norms) {
            text.add(wd.idf, s);
        }
    }
    text
}

/// A document's length normalizations, each worked out on first use and
/// kept for its other words.
struct DocNorms<'l> {
    lens: Option<&'l [u32; N_FIELDS]>,
    /// BM25F: per field, `1 − b_f + b_f · len_f / avglen_f` (valid where
    /// `have` has the field's bit).
    field: [f64; N_FIELDS],
    have: u8,
    /// BM25: `k1 · (1 − b + b · len / avglen)`.
    plain: Option<f64>,
}

impl<'l> DocNorms<'l> {
    fn new(lens: Option<&'l [u32; N_FIELDS]>) -> DocNorms<'l> {
        DocNorms {
            lens,
            field: [0.0; N_FIELDS],
            have: 0,
            plain: None,
        }
    }

    #[inline]
    fn field(&mut self, w: &Bm25Weights, stats: &CollectionStats, f: usize) -> f64 {
        if self.have >> f & 1 == 0 {
            self.field[f] = 1.0 - w.field_b[f] + w.field_b[f] * stats.ratio(f, self.lens);
            self.have |= 1 << f;
        }
        self.field[f]
    }

    #[inline]
    fn plain(&mut self, w: &Bm25Weights, stats: &CollectionStats) -> f64 {
        *self.plain.get_or_insert_with(|| {
            let ratio = match (stats.avg_len, self.lens) {
                (Some(avg), Some(l)) if avg[3] + avg[4] > 0.0 => {
                    f64::from(l[3] + l[4]) / (avg[3] + avg[4])
                }
                _ => 1.0,
            };
            w.k1 * (1.0 - w.b + w.b * ratio)
        })
    }
}

/// One word's hits per field, pseudo-frequency and score in a document
/// (`None` when it has no hit there).
#[inline]
fn word_score(
    w: &Bm25Weights,
    fielded: bool,
    stats: &CollectionStats,
    wd: &WordInDoc<'_>,
    norms: &mut DocNorms<'_>,
) -> Option<([u32; N_FIELDS], f64, f64)> {
    let mut tf = [0u32; N_FIELDS];
    for t in HitType::ALL {
        tf[field_of(t)] += wd.counts[t.index()];
    }
    if tf.iter().all(|&c| c == 0) {
        return None;
    }
    let idf = wd.idf;
    Some(if fielded {
        let mut p = 0.0;
        for (f, &c) in tf.iter().enumerate() {
            if c > 0 {
                let norm = norms.field(w, stats, f);
                p += w.field_weight[f] * f64::from(c) / norm.max(1e-9);
            }
        }
        (tf, p, idf * p * (w.k1 + 1.0) / (p + w.k1))
    } else {
        let c = f64::from(tf[3] + tf[4]);
        let norm = norms.plain(w, stats);
        (tf, c, idf * c * (w.k1 + 1.0) / (c + norm).max(1e-9))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(plain: u32, title: u32) -> [u32; HIT_TYPES] {
        let mut c = [0; HIT_TYPES];
        c[HitType::Plain.index()] = plain;
        c[HitType::Title.index()] = title;
        c
    }

    /// BM25 against the formula written out by hand (Lucene's idf).
    #[test]
    fn bm25_is_the_textbook_formula() {
        let w = Bm25Weights {
            k1: 0.9,
            b: 0.4,
            pagerank_weight: 0.0,
            proximity_weight: 0.0,
            ..Bm25Weights::default()
        };
        let stats = CollectionStats {
            docs: 1000,
            avg_len: Some([1.0, 1.0, 1.0, 0.0, 100.0]),
        };
        let lens = [3, 0, 5, 0, 150];
        let words = [
            WordInDoc {
                word: "a",
                df: 10,
                idf: stats.idf(10),
                counts: counts(3, 1),
            },
            WordInDoc {
                word: "b",
                df: 500,
                idf: stats.idf(500),
                counts: counts(1, 0),
            },
        ];
        let (s, e) = score(&w, false, &stats, &words, Some(&lens), 0.0, None, true);
        let bm = |tf: f64, df: f64| {
            let idf = (1.0 + (1000.0 - df + 0.5) / (df + 0.5)).ln();
            idf * tf * 1.9 / (tf + 0.9 * (1.0 - 0.4 + 0.4 * 1.5))
        };
        let want = bm(3.0, 10.0) + bm(1.0, 500.0);
        assert!((s - want).abs() < 1e-12, "{s} {want}");
        let e = e.unwrap();
        assert_eq!(e.words.len(), 2);
        assert_eq!(e.words[0].tf, [1, 0, 0, 0, 3]);
        // A rarer word weighs more.
        assert!(e.words[0].score > e.words[1].score);
    }

    #[test]
    fn bm25f_weighs_fields_and_saturates_once() {
        let w = Bm25Weights {
            pagerank_weight: 0.0,
            ..Bm25Weights::default()
        };
        let stats = CollectionStats {
            docs: 100,
            avg_len: None,
        };
        let one = |c| {
            score(
                &w,
                true,
                &stats,
                &[WordInDoc {
                    word: "x",
                    df: 5,
                    idf: stats.idf(5),
                    counts: c,
                }],
                None,
                0.0,
                None,
                false,
            )
            .0
        };
        // A title hit is worth field_weight[title] body hits.
        let title = one(counts(0, 1));
        let body2 = one(counts(2, 0));
        assert!((title - body2).abs() < 1e-12);
        // Saturation: never more than idf · (k1 + 1).
        let many = one(counts(100_000, 100));
        assert!(many < stats.idf(5) * (w.k1 + 1.0));
        assert_eq!(one(counts(0, 0)), 0.0);
    }
}

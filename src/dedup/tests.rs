//! Statistical tests of the sketches against exact similarities and their
//! theoretical curves, on synthetic pages with controlled overlap and on real pages
//! (the same LLVM manual page in versions 15 and 16).

use super::broder::{BroderSketcher, MEGASHINGLES, SUPERSHINGLE_RUN};
use super::charikar::{subsketches, CharikarSketcher, CHARIKAR_BITS};
use super::minhash::{MinHasher, MINHASH_LEN};
use super::minwise::splitmix64;
use super::shingle::{cosine, jaccard, shingle_set, Scratch};
use super::theory::{
    banding_probability, broder_probability, charikar_bit_probability, charikar_probability,
    minhash_probability,
};

/// Deterministic word generator.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A word from a vocabulary of a million: pages built from these have
    /// distinct shingles.
    fn rare_word(&mut self) -> String {
        format!("w{}", self.below(1_000_000))
    }
    /// A word from a Zipf-like vocabulary of 2000 (frequent words repeat).
    fn zipf_word(&mut self) -> String {
        // Inverse of a continuous 1/x law on [1, 2001).
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        let rank = (2001f64.powf(u)) as u64;
        format!("z{rank}")
    }
    fn page(&mut self, n: usize, zipf: bool) -> Vec<String> {
        (0..n)
            .map(|_| {
                if zipf {
                    self.zipf_word()
                } else {
                    self.rare_word()
                }
            })
            .collect()
    }
    /// A copy of `page` with `edits` words replaced at random positions.
    fn edit(&mut self, page: &[String], edits: usize, zipf: bool) -> Vec<String> {
        let mut out = page.to_vec();
        for _ in 0..edits {
            let i = self.below(out.len() as u64) as usize;
            out[i] = if zipf {
                self.zipf_word()
            } else {
                self.rare_word()
            };
        }
        out
    }
    /// Two pages `X ‖ Y_a` and `X ‖ Y_b` whose k-shingle sets have Jaccard close to
    /// `target`: `c` shared shingles and `d` own ones each, `J = c / (c + 2d)`.
    fn pair_with_jaccard(
        &mut self,
        target: f64,
        shared: usize,
        k: usize,
    ) -> (Vec<String>, Vec<String>) {
        let d = (shared as f64 * (1.0 - target) / (2.0 * target)).round() as usize;
        let x = self.page(shared + k - 1, false);
        let mut a = x.clone();
        a.extend(self.page(d, false));
        let mut b = x;
        b.extend(self.page(d, false));
        (a, b)
    }
}

#[test]
fn sketchers_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<BroderSketcher>();
    shared::<CharikarSketcher>();
    shared::<MinHasher>();
    shared::<super::rabin::Rabin>();
    shared::<super::shingle::Shingler>();
}

#[test]
fn minhash_estimates_exact_jaccard() {
    let hasher = MinHasher::new();
    let mut g = Gen(1);
    let mut scratch = Scratch::new();
    let (mut abs_err, mut bias, mut sq_dev, mut var) = (0f64, 0f64, 0f64, 0f64);
    let pairs = 300;
    for i in 0..pairs {
        let a = g.page(400, false);
        // 0 to 100 edits: Jaccard from 1 down to about 0.2.
        let b = g.edit(&a, i % 101, false);
        let j = jaccard(&shingle_set(&a, 4).unwrap(), &shingle_set(&b, 4).unwrap());
        let sa = hasher.sketch(&a, &mut scratch).unwrap();
        let sb = hasher.sketch(&b, &mut scratch).unwrap();
        let est = sa.estimate(&sb);
        abs_err += (est - j).abs();
        bias += est - j;
        let n = MINHASH_LEN as f64;
        sq_dev += (est * n - j * n).powi(2);
        var += n * j * (1.0 - j);
    }
    let mae = abs_err / pairs as f64;
    println!(
        "min-hash over {pairs} pairs: MAE {mae:.4}, bias {:.4}, variance ratio {:.3}",
        bias / pairs as f64,
        sq_dev / var
    );
    assert!(mae <= 0.03, "mean absolute error {mae}");
    // Unbiased: the mean error is within 4 standard errors of 0.
    let se = (var / (MINHASH_LEN as f64).powi(2)).sqrt() / pairs as f64;
    assert!(
        (bias / pairs as f64).abs() <= 4.0 * se,
        "bias {} (se {se})",
        bias / pairs as f64
    );
    // Independent functions: the spread is binomial (ratio 1 ± 4·sqrt(2/pairs)).
    let ratio = sq_dev / var;
    assert!((0.67..1.33).contains(&ratio), "variance ratio {ratio}");
}

#[test]
fn minhash_identical_and_unrelated_pages() {
    let hasher = MinHasher::new();
    let mut g = Gen(2);
    let mut scratch = Scratch::new();
    let a = g.page(300, false);
    let b = g.page(300, false);
    let sa = hasher.sketch(&a, &mut scratch).unwrap();
    let sb = hasher.sketch(&b, &mut scratch).unwrap();
    assert_eq!(
        sa.equal_entries(&hasher.sketch(&a, &mut scratch).unwrap()),
        MINHASH_LEN
    );
    assert_eq!(sa.equal_entries(&sb), 0);
    assert!(hasher
        .bands(&sa)
        .zip(hasher.bands(&sb))
        .all(|(x, y)| x != y));
    assert_eq!(hasher.bands(&sa).count(), 20);
    assert!(hasher.sketch(Vec::<&str>::new(), &mut scratch).is_none());
    // A page shorter than k still has a sketch, equal to its copy's.
    let short = hasher.sketch(["two", "words"], &mut scratch).unwrap();
    assert_eq!(
        short,
        hasher.sketch(["two", "words"], &mut scratch).unwrap()
    );
}

#[test]
fn minhash_banding_and_threshold_follow_their_curves() {
    // Pairs at J ≈ 0.9, 0.8, 0.7: the fraction sharing a band key and the fraction
    // reaching 160 equal entries against 1 − (1 − s^10)^20 and P(Bin(200, J) ≥ 160).
    let hasher = MinHasher::new();
    let mut g = Gen(3);
    let mut scratch = Scratch::new();
    for target in [0.9, 0.8, 0.7] {
        let (mut cand, mut cand_expected, mut cand_var) = (0f64, 0f64, 0f64);
        let (mut sim, mut sim_expected, mut sim_var) = (0f64, 0f64, 0f64);
        for _ in 0..200 {
            let (a, b) = g.pair_with_jaccard(target, 300, 4);
            let j = jaccard(&shingle_set(&a, 4).unwrap(), &shingle_set(&b, 4).unwrap());
            let sa = hasher.sketch(&a, &mut scratch).unwrap();
            let sb = hasher.sketch(&b, &mut scratch).unwrap();
            let shares = hasher
                .bands(&sa)
                .zip(hasher.bands(&sb))
                .any(|(x, y)| x == y);
            let (bands, rows) = hasher.banding();
            let p = banding_probability(j, bands, rows);
            cand += f64::from(u8::from(shares));
            cand_expected += p;
            cand_var += p * (1.0 - p);
            let q = minhash_probability(j, 0.8, MINHASH_LEN);
            sim += f64::from(u8::from(sa.is_similar(&sb, 0.8)));
            sim_expected += q;
            sim_var += q * (1.0 - q);
        }
        println!(
            "min-hash J ≈ {target}: candidates {cand} vs {cand_expected:.1}, similar {sim} vs {sim_expected:.1} (of 200)"
        );
        assert!(
            (cand - cand_expected).abs() <= 4.0 * cand_var.sqrt() + 1.0,
            "J ≈ {target}: {cand} candidates, expected {cand_expected:.1}"
        );
        assert!(
            (sim - sim_expected).abs() <= 4.0 * sim_var.sqrt() + 1.0,
            "J ≈ {target}: {sim} similar, expected {sim_expected:.1}"
        );
    }
}

#[test]
fn broder_identical_unrelated_and_short_pages() {
    let sketcher = BroderSketcher::new();
    let mut g = Gen(4);
    let mut scratch = Scratch::new();
    let a = g.page(500, false);
    let sa = sketcher.sketch(&a, &mut scratch).unwrap();
    let again = sketcher.sketch(&a, &mut scratch).unwrap();
    assert_eq!(sa, again);
    assert_eq!(sa.b_similarity(&again), 6);
    for _ in 0..200 {
        let b = g.page(500, false);
        let sb = sketcher.sketch(&b, &mut scratch).unwrap();
        assert_eq!(sa.b_similarity(&sb), 0);
        assert!(!sa.shares_megashingle(&sb));
        assert!(sa.megashingles.iter().all(|m| !sb.megashingles.contains(m)));
    }
    assert!(sketcher.sketch(Vec::<&str>::new(), &mut scratch).is_none());
    let short = ["a", "short", "page"];
    assert_eq!(
        sketcher.sketch(short, &mut scratch),
        sketcher.sketch(short, &mut scratch)
    );
    assert_eq!(sa.megashingles.len(), MEGASHINGLES);
}

#[test]
fn broder_hit_rate_follows_theory() {
    // Henzinger's parameters; pairs at J ≈ 0.95, 0.9, 0.8. The number of pairs
    // sharing a megashingle is compared with Σ broder_probability(J) (variance
    // Σ p(1 − p)); supershingle agreement with Σ J^14.
    let sketcher = BroderSketcher::new();
    let mut g = Gen(5);
    let mut scratch = Scratch::new();
    for target in [0.95, 0.9, 0.8] {
        let (mut hits, mut expected, mut var) = (0f64, 0f64, 0f64);
        let (mut supers, mut supers_expected) = (0f64, 0f64);
        let (mut abs_err, mut expected_abs_err, mut pairs) = (0f64, 0f64, 0f64);
        for _ in 0..400 {
            let (a, b) = g.pair_with_jaccard(target, 400, 10);
            let j = jaccard(&shingle_set(&a, 10).unwrap(), &shingle_set(&b, 10).unwrap());
            let sa = sketcher.sketch(&a, &mut scratch).unwrap();
            let sb = sketcher.sketch(&b, &mut scratch).unwrap();
            let p = broder_probability(j);
            hits += f64::from(u8::from(sa.shares_megashingle(&sb)));
            assert_eq!(sa.shares_megashingle(&sb), sa.b_similarity(&sb) >= 2);
            expected += p;
            var += p * (1.0 - p);
            supers += sa.b_similarity(&sb) as f64;
            supers_expected += 6.0 * j.powi(SUPERSHINGLE_RUN as i32);
            abs_err += (sa.estimate(&sb) - j).abs();
            // E|X − μ| ≈ σ·sqrt(2/π) for the binomial fraction of 84 values.
            expected_abs_err += (j * (1.0 - j) / 84.0).sqrt() * (2.0 / std::f64::consts::PI).sqrt();
            pairs += 1.0;
        }
        println!(
            "Alg. B J ≈ {target}: megashingle hits {hits} vs {expected:.1} ± {:.1}, equal supershingles {supers} vs {supers_expected:.1}, estimate MAE {:.4} (binomial {:.4}), of 400",
            var.sqrt(),
            abs_err / pairs,
            expected_abs_err / pairs
        );
        assert!(
            (hits - expected).abs() <= 4.0 * var.sqrt() + 1.0,
            "J ≈ {target}: {hits} hits, expected {expected:.1} ± {:.1}",
            var.sqrt()
        );
        let s_sd = (supers_expected * (1.0 - target.powi(14))).sqrt();
        assert!(
            (supers - supers_expected).abs() <= 4.0 * s_sd + 1.0,
            "J ≈ {target}: {supers} equal supershingles, expected {supers_expected:.1}"
        );
        assert!(
            abs_err <= 1.2 * expected_abs_err,
            "84-value estimate: mean error {}, binomial {}",
            abs_err / pairs,
            expected_abs_err / pairs
        );
    }
}

/// Agreement of Charikar bits against 1 − θ/π, on Zipf-like pages (frequencies
/// matter) with edits from none to nearly all of the page.
#[test]
fn charikar_agreement_follows_angle() {
    let sketcher = CharikarSketcher::new();
    let mut g = Gen(6);
    let mut scratch = Scratch::new();
    let mut bins = [(0f64, 0f64, 0usize); 5]; // (observed, expected, pairs) by cosine
    for i in 0..400 {
        let a = g.page(600, true);
        // Replacing words by rare ones spreads the cosines over (0, 1].
        let b = g.edit(&a, (i * 7) % 1400, false);
        let cos = cosine(&a, &b);
        let sa = sketcher.sketch(&a, &mut scratch).unwrap();
        let sb = sketcher.sketch(&b, &mut scratch).unwrap();
        let bin = ((cos * 5.0) as usize).min(4);
        bins[bin].0 += f64::from(sa.agreeing_bits(&sb)) / CHARIKAR_BITS as f64;
        bins[bin].1 += charikar_bit_probability(cos);
        bins[bin].2 += 1;
    }
    for (i, &(obs, exp, n)) in bins.iter().enumerate() {
        if n < 20 {
            continue;
        }
        let (obs, exp) = (obs / n as f64, exp / n as f64);
        println!("Alg. C cosine bin {i}: agreement {obs:.4} vs 1 − θ/π {exp:.4} over {n} pairs");
        assert!(
            (obs - exp).abs() < 0.01,
            "cosine bin {i}: agreement {obs:.4}, 1 − θ/π = {exp:.4} over {n} pairs"
        );
    }
    // Near-duplicates: the number of C-similar pairs (≥ 372 bits) against
    // Σ P(Binomial(384, 1 − θ/π) ≥ 372); every C-similar pair shares a subsketch.
    let (mut similar, mut expected, mut var) = (0f64, 0f64, 0f64);
    for i in 0..300 {
        let a = g.page(1000, true);
        let b = g.edit(&a, i, false);
        let cos = cosine(&a, &b);
        let sa = sketcher.sketch(&a, &mut scratch).unwrap();
        let sb = sketcher.sketch(&b, &mut scratch).unwrap();
        let p = charikar_probability(cos);
        similar += f64::from(u8::from(sa.is_c_similar(&sb)));
        expected += p;
        var += p * (1.0 - p);
        if sa.is_c_similar(&sb) {
            assert!(subsketches(&sa)
                .iter()
                .zip(&subsketches(&sb))
                .any(|(x, y)| x == y));
        }
    }
    println!("Alg. C near-duplicates: {similar} C-similar of 300, expected {expected:.1}");
    assert!(
        (similar - expected).abs() <= 4.0 * var.sqrt() + 2.0,
        "{similar} C-similar pairs, expected {expected:.1} ± {:.1}",
        var.sqrt()
    );
    // Identical and reordered pages: all bits agree.
    let a = g.page(300, true);
    let mut b = a.clone();
    b.reverse();
    let sa = sketcher.sketch(&a, &mut scratch).unwrap();
    assert_eq!(
        sa.agreeing_bits(&sketcher.sketch(&b, &mut scratch).unwrap()),
        384
    );
}

// ---------------------------------------------------------------------------
// Real pages: the same LLVM document in the Debian packages of versions 15 and 16.

/// Crude text of an HTML page: drop tags, scripts and styles; split on
/// non-alphanumerics; lowercase.
fn crude_words(html: &str) -> Vec<String> {
    let mut text = String::with_capacity(html.len());
    let lower = html.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(start) = rest.find('<') {
        text.push_str(&rest[..start]);
        text.push(' ');
        let tag = &rest[start..];
        let skip_to = if tag.starts_with("<script") {
            tag.find("</script>").map(|i| i + 9)
        } else if tag.starts_with("<style") {
            tag.find("</style>").map(|i| i + 8)
        } else {
            tag.find('>').map(|i| i + 1)
        };
        match skip_to {
            Some(n) => rest = &tag[n..],
            None => {
                rest = "";
                break;
            }
        }
    }
    text.push_str(rest);
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn real_pages_across_llvm_versions() {
    let root15 = "/work/corpus/llvm-15-doc/usr/share/doc/llvm-15-doc/html";
    let root16 = "/work/corpus/llvm-16-doc/usr/share/doc/llvm-16-doc/html";
    let (Ok(entries), true) = (
        std::fs::read_dir(root15),
        std::path::Path::new(root16).is_dir(),
    ) else {
        println!("skipped: the LLVM documentation corpus is not under /work/corpus");
        return;
    };
    let mut names: Vec<_> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().ends_with(".html"))
        .collect();
    names.sort();
    let minhash = MinHasher::new();
    let broder = BroderSketcher::new();
    let mut scratch = Scratch::new();
    let (mut pairs, mut abs_err) = (0usize, 0f64);
    let (mut hits, mut expected, mut var) = (0f64, 0f64, 0f64);
    for name in names.iter().take(150) {
        let (Ok(a), Ok(b)) = (
            std::fs::read_to_string(std::path::Path::new(root15).join(name)),
            std::fs::read_to_string(std::path::Path::new(root16).join(name)),
        ) else {
            continue;
        };
        let (a, b) = (crude_words(&a), crude_words(&b));
        if a.len() < 50 || b.len() < 50 {
            continue;
        }
        let j4 = jaccard(&shingle_set(&a, 4).unwrap(), &shingle_set(&b, 4).unwrap());
        let (Some(sa), Some(sb)) = (
            minhash.sketch(&a, &mut scratch),
            minhash.sketch(&b, &mut scratch),
        ) else {
            continue;
        };
        abs_err += (sa.estimate(&sb) - j4).abs();
        let j10 = jaccard(&shingle_set(&a, 10).unwrap(), &shingle_set(&b, 10).unwrap());
        let (Some(ba), Some(bb)) = (
            broder.sketch(&a, &mut scratch),
            broder.sketch(&b, &mut scratch),
        ) else {
            continue;
        };
        let p = broder_probability(j10);
        hits += f64::from(u8::from(ba.shares_megashingle(&bb)));
        expected += p;
        var += p * (1.0 - p);
        pairs += 1;
    }
    if pairs < 30 {
        println!("skipped: only {pairs} page pairs found in both LLVM versions");
        return;
    }
    let mae = abs_err / pairs as f64;
    println!(
        "{pairs} real pairs: min-hash MAE {mae:.4}; Alg. B hits {hits} vs expected {expected:.1}"
    );
    assert!(
        mae <= 0.03,
        "min-hash mean absolute error on real pages: {mae}"
    );
    assert!(
        (hits - expected).abs() <= 4.0 * var.sqrt() + 2.0,
        "Alg. B: {hits} hits on real pairs, expected {expected:.1}"
    );
}

/// The same checks as `broder_hit_rate_follows_theory` and
/// `minhash_estimates_exact_jaccard` on 20 times more pairs, where a small
/// systematic departure from the independence model would show (about 30 s in
/// release mode): `cargo test --release --lib dedup::tests::large -- --ignored --nocapture`.
#[test]
#[ignore]
fn large_sample_against_independence_model() {
    let sketcher = BroderSketcher::new();
    let minhash = MinHasher::new();
    let mut g = Gen(7);
    let mut scratch = Scratch::new();
    for target in [0.95, 0.9, 0.85] {
        let (mut hits, mut expected, mut var) = (0f64, 0f64, 0f64);
        let (mut supers, mut s_expected, mut s_var) = (0f64, 0f64, 0f64);
        let (mut m_sq, mut m_var, mut m_bias) = (0f64, 0f64, 0f64);
        let pairs = 8000;
        for _ in 0..pairs {
            let (a, b) = g.pair_with_jaccard(target, 300, 10);
            let j = jaccard(&shingle_set(&a, 10).unwrap(), &shingle_set(&b, 10).unwrap());
            let sa = sketcher.sketch(&a, &mut scratch).unwrap();
            let sb = sketcher.sketch(&b, &mut scratch).unwrap();
            let p = broder_probability(j);
            hits += f64::from(u8::from(sa.shares_megashingle(&sb)));
            expected += p;
            var += p * (1.0 - p);
            let q = j.powi(SUPERSHINGLE_RUN as i32);
            supers += sa.b_similarity(&sb) as f64;
            s_expected += 6.0 * q;
            s_var += 6.0 * q * (1.0 - q);
            let j4 = jaccard(&shingle_set(&a, 4).unwrap(), &shingle_set(&b, 4).unwrap());
            let ma = minhash.sketch(&a, &mut scratch).unwrap();
            let mb = minhash.sketch(&b, &mut scratch).unwrap();
            let x = ma.equal_entries(&mb) as f64;
            m_sq += (x - 200.0 * j4).powi(2);
            m_var += 200.0 * j4 * (1.0 - j4);
            m_bias += x - 200.0 * j4;
        }
        println!(
            "J ≈ {target}: megashingle hits z = {:+.2}, supershingles z = {:+.2}, min-hash bias z = {:+.2}, variance ratio {:.3}",
            (hits - expected) / var.sqrt(),
            (supers - s_expected) / s_var.sqrt(),
            m_bias / m_var.sqrt(),
            m_sq / m_var
        );
        assert!((hits - expected).abs() <= 4.0 * var.sqrt());
        assert!((supers - s_expected).abs() <= 4.0 * s_var.sqrt() * 1.5);
        assert!(m_bias.abs() <= 4.0 * m_var.sqrt());
        let ratio = m_sq / m_var;
        assert!((0.9..1.1).contains(&ratio), "variance ratio {ratio}");
    }
}

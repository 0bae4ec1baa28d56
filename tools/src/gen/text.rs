//! The text model of the generators (`webmill-corpus`, `webmill-gen
//! --format warc`): Zipf words and planted near-duplicates.
//!
//! Doc `d` draws from its own splitmix64 streams keyed by `(seed, d,
//! purpose)`:
//!
//! * its **base page**: a length uniform in `--words MIN..=MAX` and words drawn
//!   from a Zipf law (`P(rank r) ∝ 1/r`) over `--vocab` words spelled in
//!   base 26 (`aa`, `ab`, …), like running text;
//! * with probability `--dup-fraction`, it is a **copy** of a source doc `s`
//!   drawn uniformly from all docs — unless `s` is itself a copy, in which case
//!   `d` stays an original (no chains): the page is `s`'s base page with `m`
//!   words replaced by fresh Zipf draws, `m` uniform in `0..=--max-edits-pct`%
//!   of the page's length (0 gives an exact copy).
//!
//! A source with several copies makes a cluster. Everything is a pure
//! function of the flags: the output does not depend on the thread count.

/// The text flags both generators take.
#[derive(clap::Args, Debug, Clone)]
pub struct TextArgs {
    /// Page length in words: MIN..=MAX, uniform
    #[arg(long, default_value = "50..150", value_parser = parse_range)]
    pub words: (u64, u64),
    /// Vocabulary size (Zipf law over it)
    #[arg(long, default_value_t = 100_000)]
    pub vocab: u64,
    /// Fraction of docs drawn as copies of another doc
    #[arg(long, default_value_t = 0.1)]
    pub dup_fraction: f64,
    /// Copies get up to this percentage of their words replaced
    #[arg(long, default_value_t = 10)]
    pub max_edits_pct: u64,
}

/// Parses `MIN..MAX` (or `MIN..=MAX`), `1 ≤ MIN ≤ MAX`.
pub fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?}: expected MIN..MAX"))?;
    let a: u64 = a.parse().map_err(|e| format!("{a:?}: {e}"))?;
    let b: u64 = b
        .trim_start_matches('=')
        .parse()
        .map_err(|e| format!("{b:?}: {e}"))?;
    if a == 0 || b < a {
        return Err(format!("{s:?}: need 1 ≤ MIN ≤ MAX"));
    }
    Ok((a, b))
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A splitmix64 stream.
pub struct Stream(u64);

impl Stream {
    /// The stream of doc `d` for `purpose`.
    pub fn new(seed: u64, d: u64, purpose: u64) -> Stream {
        Stream(mix(seed ^ mix(d.wrapping_add(purpose << 56))))
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The stream purposes of the model (others may use larger ones).
const BASE: u64 = 1;
const COPY: u64 = 2;
const EDITS: u64 = 3;

/// The model's fixed tables.
pub struct TextModel {
    seed: u64,
    docs: u64,
    args: TextArgs,
    /// Zipf CDF over ranks, scaled to u64.
    cdf: Vec<u64>,
    /// Spelled words by rank.
    pub spelled: Vec<String>,
}

impl TextModel {
    /// The model of `docs` docs.
    pub fn new(seed: u64, docs: u64, args: &TextArgs) -> TextModel {
        let v = args.vocab.max(1) as usize;
        let h: f64 = (1..=v).map(|r| 1.0 / r as f64).sum();
        let mut acc = 0.0;
        let cdf = (1..=v)
            .map(|r| {
                acc += 1.0 / r as f64 / h;
                (acc.min(1.0) * u64::MAX as f64) as u64
            })
            .collect();
        let spelled = (0..v as u64)
            .map(|r| {
                let mut s = Vec::new();
                let mut x = r;
                loop {
                    s.push(b'a' + (x % 26) as u8);
                    x /= 26;
                    if x == 0 && s.len() >= 2 {
                        break;
                    }
                }
                String::from_utf8(s).expect("ascii")
            })
            .collect();
        TextModel {
            seed,
            docs,
            args: args.clone(),
            cdf,
            spelled,
        }
    }

    /// A Zipf draw: a word's rank.
    pub fn word(&self, st: &mut Stream) -> u32 {
        let u = st.next();
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1) as u32
    }

    /// The base page of `d`.
    pub fn base(&self, d: u64) -> Vec<u32> {
        let mut st = Stream::new(self.seed, d, BASE);
        let (lo, hi) = self.args.words;
        let n = lo + st.below(hi - lo + 1);
        (0..n).map(|_| self.word(&mut st)).collect()
    }

    /// `Some(source)` if `d` is a copy.
    pub fn source(&self, d: u64) -> Option<u64> {
        let draw = |d: u64| {
            let mut st = Stream::new(self.seed, d, COPY);
            (st.unit() < self.args.dup_fraction).then(|| st.below(self.docs))
        };
        match draw(d) {
            Some(s) if s != d && draw(s).is_none() => Some(s),
            _ => None,
        }
    }

    /// The page of `d` and, for a copy, `(source, edits)`.
    pub fn page(&self, d: u64) -> (Vec<u32>, Option<(u64, u64)>) {
        match self.source(d) {
            None => (self.base(d), None),
            Some(s) => {
                let mut words = self.base(s);
                let mut st = Stream::new(self.seed, d, EDITS);
                let max = words.len() as u64 * self.args.max_edits_pct / 100;
                let m = st.below(max + 1);
                for _ in 0..m {
                    let i = st.below(words.len() as u64) as usize;
                    words[i] = self.word(&mut st);
                }
                (words, Some((s, m)))
            }
        }
    }
}

//! `webmill-gen`: a synthetic web-like graph as a SNAP edge list, for
//! benchmarks at sizes the real graphs in `../shared/data` do not reach.
//!
//! # The model
//!
//! Nodes `0..N` are numbered host by host, like a crawl sorted by URL (the LAW
//! graphs' order), so ids have host locality.
//!
//! * **Hosts.** Host sizes are drawn one after the other from a discrete Pareto
//!   law, `P(size ≥ s) ∝ s^-(host_exponent − 1)` for `s ≥ --min-host`, capped at
//!   `--max-host`, until the `N` nodes are used up.
//! * **Dangling pages.** A fraction `--dangling` of the pages (never a host's
//!   first page, its home page) has no out-links.
//! * **Navigation links.** Every other page links to the next pages of its host up
//!   to and including the next page that is not dangling; the last such page of a
//!   host links to the next host's home page (the last host's to node 0). That is
//!   exactly one in-link per node, so every node of `0..N` occurs in the list and
//!   `--nodes` is exact.
//! * **Content links.** Besides, a non-dangling page has `floor(X)` links (at
//!   most `--max-out`), `X` Pareto with `P(X ≥ x) ∝ x^-(out_exponent − 1)`: an
//!   out-degree law `P(k) ∝ k^-out_exponent` (2.7 by default, as measured on web
//!   crawls). The scale is solved for so that the expected total is `--arcs`.
//!   Each link is aimed at the source's host with probability `--local` (0.85):
//!   at the home page with probability `--home`, else at a distance `δ` from
//!   the source with `P(δ) ∝ δ^-distance_exponent` (either direction, wrapping
//!   inside the host); where these draws repeat themselves, the nearest pages not
//!   linked yet are taken instead. A page links to at most all the other pages of
//!   its host, so small hosts send the surplus out: with the defaults about 80%
//!   of all arcs stay in their host. The other links go anywhere, to the page of
//!   popularity rank `r` with `P(r) ∝ r^-1/(in_exponent − 1)`, which gives the
//!   popular pages an in-degree law `P(k) ∝ k^-in_exponent` (2.1 by default);
//!   ranks map to nodes through a keyed pseudo-random permutation of `0..N`.
//!
//! A page's targets are distinct and never itself, and are written in
//! increasing order; sources are written in increasing order.
//!
//! # Determinism, memory, speed
//!
//! The output depends only on the flags (and `--seed`), not on the thread count:
//! every node draws from its own splitmix64 stream keyed by `(seed, node)`, host
//! sizes from one stream of their own. Nodes are generated in chunks of
//! consecutive ids, in parallel, and written in order as soon as a batch of
//! chunks is done, so memory stays at a few batches of text whatever `--arcs`
//! is. Plain output runs at tens of millions of arcs per second; `--gzip` pipes
//! the text through the system's `gzip` (the tools crate links no compressor).
//!
//! ```text
//! webmill-gen --nodes 10000000 --arcs 100000000 -o web-100M.tsv
//! webmill-gen --nodes 100000 --arcs 1000000 --gzip -o small.tsv.gz --seed 7
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use rayon::prelude::*;

#[path = "../gen/pages.rs"]
mod pages;
#[path = "../gen/text.rs"]
mod text;

/// Generate a web-like graph as a SNAP edge list (`src<TAB>dst` lines).
///
/// Pages are grouped into hosts of power-law sizes and numbered host by host;
/// out-degrees follow a power law (exponent --out-exponent); most links stay in
/// the host near their source (--local), the others go to popular pages
/// anywhere, which skews in-degrees (exponent --in-exponent). Every node
/// 0..N-1 occurs; the arc count is close to --arcs. Deterministic from --seed;
/// streams its output in bounded memory.
#[derive(Parser, Debug, Clone)]
#[command(name = "webmill-gen", version, max_term_width = 100)]
struct Args {
    /// Number of nodes (exact: every node 0..N-1 occurs in the list)
    #[arg(long, default_value_t = 1_000_000)]
    nodes: u64,
    /// Target number of arcs (approximate: within about 1% for large graphs;
    /// at least about one per node)
    #[arg(long, default_value_t = 10_000_000)]
    arcs: u64,
    /// Seed of the pseudo-random generator: same flags and seed, same bytes
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file; `-` writes to standard output
    #[arg(short, long, default_value = "-", value_name = "FILE")]
    output: PathBuf,
    /// Compress the output with gzip (through the system's `gzip` command)
    #[arg(long)]
    gzip: bool,
    /// gzip compression level, 1 (fast) to 9 (small)
    #[arg(long, default_value_t = 6, value_name = "1-9",
          value_parser = clap::value_parser!(u32).range(1..=9))]
    gzip_level: u32,
    /// Exponent of the out-degree law P(k) ∝ k^-e (must be > 1)
    #[arg(long, default_value_t = 2.7)]
    out_exponent: f64,
    /// Exponent of the in-degree law of popular pages P(k) ∝ k^-e (must be > 1)
    #[arg(long, default_value_t = 2.1)]
    in_exponent: f64,
    /// Fraction of content links aimed at the source's host (a small host
    /// cannot take them all: with the defaults about 80% of all arcs stay in
    /// their host)
    #[arg(long, default_value_t = 0.85)]
    local: f64,
    /// Fraction of in-host content links that go to the host's home page
    #[arg(long, default_value_t = 0.1)]
    home: f64,
    /// Exponent of the distance law of in-host links P(δ) ∝ δ^-e (must be > 1)
    #[arg(long, default_value_t = 2.0)]
    distance_exponent: f64,
    /// Exponent of the host size law P(s) ∝ s^-e (must be > 1)
    #[arg(long, default_value_t = 2.0)]
    host_exponent: f64,
    /// Smallest host size drawn (pages)
    #[arg(long, default_value_t = 5)]
    min_host: u64,
    /// Largest host size (pages)
    #[arg(long, default_value_t = 100_000)]
    max_host: u64,
    /// Fraction of pages without out-links (home pages always have some)
    #[arg(long, default_value_t = 0.2)]
    dangling: f64,
    /// Largest number of content links of a page
    #[arg(long, default_value_t = 10_000)]
    max_out: u64,
    /// Worker threads [default: all cores]
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// No summary on standard error
    #[arg(short, long)]
    quiet: bool,
    /// Output: `snap` (an edge list) or `warc` (every node as an HTML page
    /// with its links, words and planted near-duplicates, in a WARC file;
    /// --gzip then compresses each record as its own member)
    #[arg(long, value_enum, default_value_t = Format::Snap)]
    format: Format,
    /// warc: the pages' words and planted near-duplicates
    #[command(flatten)]
    text: text::TextArgs,
}

/// What `webmill-gen` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// `src<TAB>dst` lines.
    Snap,
    /// A WARC file of HTML pages.
    Warc,
}

// ---------------------------------------------------------------------------
// Pseudo-random numbers

/// The splitmix64 finalizer: a bijective 64-bit mixer.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// splitmix64 (Steele, Lea & Flood 2014): small, fast, and good enough for
/// sampling; seeded per node so that nodes can be generated in any order.
struct SplitMix64(u64);

impl SplitMix64 {
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

    fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(Self::GAMMA);
        mix64(self.0)
    }

    /// Uniform in (0, 1]: never 0, so negative powers stay finite.
    #[inline]
    fn unit(&mut self) -> f64 {
        unit_of(self.next_u64())
    }

    /// `true` with probability `below / 2^64` (see [`probability`]).
    #[inline]
    fn chance(&mut self, below: u64) -> bool {
        self.next_u64() < below
    }
}

/// The top 53 bits of `r` as a number in (0, 1]; the low bits stay free for
/// other uses.
#[inline]
fn unit_of(r: u64) -> f64 {
    // Through i64: a signed conversion is one instruction, an unsigned one several.
    (((r >> 11) + 1) as i64) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A probability as a threshold for [`SplitMix64::chance`].
fn probability(p: f64) -> u64 {
    (p * 2f64.powi(64)) as u64
}

/// A keyed pseudo-random permutation of `0..n`: a 4-round Feistel network on
/// the smallest even number of bits covering `n`, with cycle walking.
struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    fn new(n: u64, seed: u64) -> Self {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let mut rng = SplitMix64::new(seed ^ 0x5045_524d_5554_4521);
        Permutation {
            n,
            half_bits,
            keys: std::array::from_fn(|_| rng.next_u64()),
        }
    }

    #[inline]
    fn apply(&self, mut x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        loop {
            let (mut l, mut r) = (x >> self.half_bits, x & mask);
            for k in self.keys {
                let f = mix64(r ^ k) & mask;
                (l, r) = (r, l ^ f);
            }
            x = (l << self.half_bits) | r;
            if x < self.n {
                return x;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The model

/// A host: its pages are `start..start + len`; `next_home` is the page its
/// last navigation link goes to.
#[derive(Clone, Copy, Debug)]
struct Host {
    start: u64,
    len: u64,
    next_home: u64,
}

impl Host {
    fn end(&self) -> u64 {
        self.start + self.len
    }
}

/// Host sizes, drawn in order from their own stream.
struct HostStream {
    rng: SplitMix64,
    next_start: u64,
    n: u64,
    min: f64,
    max: u64,
    inv_tail: f64,
}

impl HostStream {
    fn new(a: &Args) -> Self {
        HostStream {
            rng: SplitMix64::new(mix64(a.seed ^ 0x484f_5354_5349_5a45)),
            next_start: 0,
            n: a.nodes,
            min: a.min_host.max(1) as f64,
            max: a.max_host.max(1),
            inv_tail: 1.0 / (a.host_exponent - 1.0),
        }
    }
}

impl Iterator for HostStream {
    type Item = Host;

    fn next(&mut self) -> Option<Host> {
        if self.next_start >= self.n {
            return None;
        }
        let drawn = (self.min * self.rng.unit().powf(-self.inv_tail)).floor();
        let len = (drawn.min(self.max as f64) as u64)
            .clamp(1, self.max)
            .min(self.n - self.next_start);
        let start = self.next_start;
        self.next_start += len;
        let next_home = if self.next_start < self.n {
            self.next_start
        } else {
            0
        };
        Some(Host {
            start,
            len,
            next_home,
        })
    }
}

/// Everything a node's links depend on, derived once from the flags.
struct Model {
    n: u64,
    seed: u64,
    dangling_below: u64,
    out_scale: f64,
    out_inv_tail: f64,
    max_out: u64,
    local_below: u64,
    home_below: u64,
    distance_inv_tail: f64,
    zipf_s: f64,
    zipf_base: f64,
    perm: Permutation,
}

/// Expected content links of a page, `E[min(floor(X), cap)]` for `X` Pareto
/// with scale `x_min` and tail index `a`: `Σ_{k=1..cap} P(X ≥ k)`.
fn expected_out(x_min: f64, a: f64, cap: u64) -> f64 {
    (1..=cap).map(|k| (x_min / k as f64).powf(a).min(1.0)).sum()
}

impl Model {
    fn new(a: &Args) -> anyhow::Result<Model> {
        if a.nodes < 2 {
            bail!("--nodes must be at least 2, got {}", a.nodes);
        }
        for (name, v) in [
            ("--out-exponent", a.out_exponent),
            ("--in-exponent", a.in_exponent),
            ("--distance-exponent", a.distance_exponent),
            ("--host-exponent", a.host_exponent),
        ] {
            if !(v > 1.0 && v.is_finite()) {
                bail!("{name} must be a finite number > 1, got {v}");
            }
        }
        for (name, v) in [
            ("--local", a.local),
            ("--home", a.home),
            ("--dangling", a.dangling),
        ] {
            if !(0.0..=1.0).contains(&v) {
                bail!("{name} must be in [0, 1], got {v}");
            }
        }
        if a.dangling >= 1.0 {
            bail!("--dangling must be below 1: some pages must have links");
        }
        if a.min_host > a.max_host {
            bail!(
                "--min-host {} is larger than --max-host {}",
                a.min_host,
                a.max_host
            );
        }
        let n = a.nodes;
        let max_out = a.max_out.min(n - 1);
        let out_tail = a.out_exponent - 1.0;
        // Navigation links are exactly n; content links make up the rest,
        // spread over the non-dangling pages.
        let per_page = a.arcs.saturating_sub(n) as f64 / (n as f64 * (1.0 - a.dangling));
        let out_scale = if per_page <= 0.0 {
            0.0
        } else if per_page >= expected_out(max_out as f64, out_tail, max_out) {
            max_out as f64
        } else {
            let (mut lo, mut hi) = (0.0, max_out as f64);
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if expected_out(mid, out_tail, max_out) < per_page {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            0.5 * (lo + hi)
        };
        let zipf_s = 1.0 / (a.in_exponent - 1.0);
        Ok(Model {
            n,
            seed: a.seed,
            dangling_below: probability(a.dangling),
            out_scale,
            out_inv_tail: 1.0 / out_tail,
            max_out,
            local_below: probability(a.local),
            home_below: probability(a.home),
            distance_inv_tail: 1.0 / (a.distance_exponent - 1.0),
            zipf_s,
            zipf_base: if (zipf_s - 1.0).abs() < 1e-12 {
                ((n + 1) as f64).ln()
            } else {
                ((n + 1) as f64).powf(1.0 - zipf_s) - 1.0
            },
            perm: Permutation::new(n, a.seed),
        })
    }

    /// Whether a page has no out-links (home pages always have some).
    #[inline]
    fn is_dangling(&self, node: u64, host: &Host) -> bool {
        node != host.start && mix64(node ^ mix64(self.seed ^ 0x4441_4e47)) < self.dangling_below
    }

    /// A node's private stream.
    fn rng(&self, node: u64) -> SplitMix64 {
        SplitMix64::new(mix64(self.seed) ^ mix64(node.wrapping_add(0x4e4f_4445)))
    }

    /// Number of content links of a non-dangling page.
    #[inline]
    fn content_links(&self, rng: &mut SplitMix64) -> u64 {
        if self.out_scale <= 0.0 {
            return 0;
        }
        let x = self.out_scale * rng.unit().powf(-self.out_inv_tail);
        (x.min(self.max_out as f64) as u64).min(self.max_out)
    }

    /// A popularity rank in `0..n`, Zipf with exponent `zipf_s`, by inverting
    /// the continuous law on `[1, n + 1)`.
    #[inline]
    fn popular_rank(&self, rng: &mut SplitMix64) -> u64 {
        let u = rng.unit();
        let x = if (self.zipf_s - 1.0).abs() < 1e-12 {
            (u * self.zipf_base).exp()
        } else {
            (1.0 + u * self.zipf_base).powf(1.0 / (1.0 - self.zipf_s))
        };
        ((x as u64).saturating_sub(1)).min(self.n - 1)
    }

    /// An in-host content link of `node` (the host has at least two pages).
    #[inline]
    fn local_target(&self, node: u64, host: &Host, rng: &mut SplitMix64) -> u64 {
        if node != host.start && rng.chance(self.home_below) {
            return host.start;
        }
        let span = host.len - 1;
        let r = rng.next_u64();
        let u = unit_of(r);
        let drawn = if self.distance_inv_tail == 1.0 {
            1.0 / u
        } else {
            u.powf(-self.distance_inv_tail)
        };
        let delta = (drawn.min(span as f64) as u64).clamp(1, span);
        let k = node - host.start;
        let t = if r & 1 == 0 {
            k + delta
        } else {
            k + host.len - delta
        };
        host.start + if t >= host.len { t - host.len } else { t }
    }

    /// A link to a popular page anywhere.
    #[inline]
    fn popular_target(&self, rng: &mut SplitMix64) -> u64 {
        self.perm.apply(self.popular_rank(rng))
    }

    /// The sorted, distinct out-links of `node` into `out` (cleared first);
    /// `extra` is scratch space.
    fn links(&self, node: u64, host: &Host, out: &mut Vec<u64>, extra: &mut Vec<u64>) {
        out.clear();
        extra.clear();
        if self.is_dangling(node, host) {
            return;
        }
        // Navigation: the following dangling pages, then the next live one
        // (or the next host's home page).
        let mut j = node + 1;
        while j < host.end() && self.is_dangling(j, host) {
            out.push(j);
            j += 1;
        }
        if j < host.end() {
            out.push(j);
        } else if host.next_home != node {
            extra.push(host.next_home);
        }
        let mut rng = self.rng(node);
        let content = self.content_links(&mut rng);
        let mut local = 0u64;
        if host.len > 1 {
            for _ in 0..content {
                local += u64::from(rng.chance(self.local_below));
            }
        }
        // In-host links: at most every other page of the host; the rest of
        // the content links go to popular pages.
        let span = host.len - 1;
        let local_want = (out.len() as u64 + local).min(span) as usize;
        let popular = content - (local_want - out.len()) as u64;
        for round in 0..2 {
            let missing = local_want - out.len();
            if missing == 0 {
                break;
            }
            if round == 0 {
                for _ in 0..missing {
                    out.push(self.local_target(node, host, &mut rng));
                }
                out.sort_unstable();
                out.dedup();
            } else {
                // The distance law keeps hitting the same pages: take the
                // nearest pages not linked yet, alternating sides.
                let k = node - host.start;
                let before = out.len();
                let mut e = 1;
                while out.len() < local_want && e <= host.len / 2 {
                    for delta in [e, host.len - e] {
                        let t = k + delta;
                        let t = host.start + if t >= host.len { t - host.len } else { t };
                        if out.len() < local_want && out[..before].binary_search(&t).is_err() {
                            out.push(t);
                        }
                        if 2 * e == host.len {
                            break;
                        }
                    }
                    e += 1;
                }
                out.sort_unstable();
            }
        }
        // Links to popular pages (which may fall in the host, or repeat).
        let want = (out.len() + extra.len() + popular as usize).min(self.n as usize - 1);
        for _ in 0..popular {
            extra.push(self.popular_target(&mut rng));
        }
        out.append(extra);
        for round in 0..5 {
            out.sort_unstable();
            out.dedup();
            if let Ok(i) = out.binary_search(&node) {
                out.remove(i);
            }
            if round == 4 || out.len() >= want {
                break;
            }
            for _ in out.len()..want {
                out.push(self.popular_target(&mut rng));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Output

/// Figures of a generated graph.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Stats {
    nodes: u64,
    arcs: u64,
    hosts: u64,
    dangling: u64,
    in_host: u64,
    max_out: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.nodes += o.nodes;
        self.arcs += o.arcs;
        self.hosts += o.hosts;
        self.dangling += o.dangling;
        self.in_host += o.in_host;
        self.max_out = self.max_out.max(o.max_out);
    }

    /// Counts node `node` of `host` and its out-links `links`.
    fn count_node(&mut self, node: u64, host: &Host, links: &[u64]) {
        if node == host.start {
            self.hosts += 1;
        }
        self.nodes += 1;
        self.arcs += links.len() as u64;
        self.max_out = self.max_out.max(links.len() as u64);
        if links.is_empty() {
            self.dangling += 1;
        }
        let own = host.start..host.end();
        self.in_host += links.iter().filter(|t| own.contains(t)).count() as u64;
    }
}

/// Consecutive nodes `start..end` and the hosts that hold them.
struct Chunk {
    start: u64,
    end: u64,
    hosts: Vec<Host>,
}

/// Nodes per chunk: a few MB of text each.
const CHUNK_NODES: u64 = 1 << 14;

/// Two-digit decimal pairs "00".."99".
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `v` in decimal into `line` from `at`; returns the end.
#[inline]
fn decimal(line: &mut [u8], at: usize, mut v: u64) -> usize {
    let end = at + v.checked_ilog10().unwrap_or(0) as usize + 1;
    let mut i = end;
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        line[i..i + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        line[i - 2..i].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    } else {
        line[i - 1] = b'0' + v as u8;
    }
    end
}

/// Room for one line: two 20-digit numbers, a tab and a newline.
const LINE: usize = 48;

fn render(model: &Model, chunk: &Chunk) -> (Vec<u8>, Stats) {
    let mut buf = Vec::with_capacity((chunk.end - chunk.start) as usize * 160);
    let mut st = Stats::default();
    let (mut links, mut extra) = (Vec::new(), Vec::new());
    let mut hosts = chunk.hosts.iter();
    let mut host = *hosts.next().expect("a chunk has a host");
    for node in chunk.start..chunk.end {
        while node >= host.end() {
            host = *hosts.next().expect("hosts cover the chunk");
        }
        model.links(node, &host, &mut links, &mut extra);
        st.count_node(node, &host, &links);
        // One line = the source's digits and a tab (written once per node),
        // then the target's digits and a newline. A whole fixed-size line is
        // appended, the target written into it in place, and the tail cut
        // off again: cheaper than copying a variable number of bytes.
        let mut line = [0u8; LINE];
        let prefix = decimal(&mut line, 0, node);
        line[prefix] = b'\t';
        for &t in &links {
            let len = buf.len();
            buf.extend_from_slice(&line);
            let tail = &mut buf[len..];
            let end = decimal(tail, prefix + 1, t);
            tail[end] = b'\n';
            buf.truncate(len + end + 1);
        }
    }
    (buf, st)
}

/// The pages of a chunk as WARC records: `hosts` are all the hosts (to name
/// a link's target), `text` the words' model.
fn render_warc(
    model: &Model,
    chunk: &Chunk,
    hosts: &[Host],
    text: &text::TextModel,
    seed: u64,
    gzip: bool,
) -> (Vec<u8>, Stats) {
    let mut buf = Vec::with_capacity((chunk.end - chunk.start) as usize * 1500);
    let mut st = Stats::default();
    let (mut links, mut extra) = (Vec::new(), Vec::new());
    let (mut targets, mut html, mut uri, mut scratch) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let host_of = |t: u64| hosts.partition_point(|h| h.start <= t) as u64 - 1;
    let mut h = host_of(chunk.start);
    for node in chunk.start..chunk.end {
        while node >= hosts[h as usize].end() {
            h += 1;
        }
        let host = hosts[h as usize];
        model.links(node, &host, &mut links, &mut extra);
        st.count_node(node, &host, &links);
        targets.clear();
        let own = host.start..host.end();
        targets.extend(
            links
                .iter()
                .map(|&t| (if own.contains(&t) { h } else { host_of(t) }, t)),
        );
        html.clear();
        pages::html(text, seed, node, &targets, &mut html);
        uri.clear();
        pages::url(h, node, &mut uri);
        pages::record(&uri, &html, gzip, &mut scratch, &mut buf);
    }
    (buf, st)
}

/// Writes the graph described by `args` to `out`; returns its figures.
fn generate(args: &Args, out: &mut dyn Write) -> anyhow::Result<Stats> {
    let model = Model::new(args)?;
    if args.format == Format::Warc {
        return generate_warc(args, &model, out);
    }
    writeln!(
        out,
        "# webmill-gen {}: web-like graph, nodes={} arcs≈{} seed={} out-exponent={} \
         in-exponent={} local={} home={} distance-exponent={} host-exponent={} \
         min-host={} max-host={} dangling={} max-out={}\n# src\tdst",
        env!("CARGO_PKG_VERSION"),
        args.nodes,
        args.arcs,
        args.seed,
        args.out_exponent,
        args.in_exponent,
        args.local,
        args.home,
        args.distance_exponent,
        args.host_exponent,
        args.min_host,
        args.max_host,
        args.dangling,
        args.max_out,
    )?;
    let batch = rayon::current_num_threads() * 2;
    let mut hosts = HostStream::new(args).peekable();
    let mut stats = Stats::default();
    let mut next = 0u64;
    while next < model.n {
        let mut chunks = Vec::with_capacity(batch);
        while chunks.len() < batch && next < model.n {
            let end = (next + CHUNK_NODES).min(model.n);
            let mut held = Vec::new();
            while let Some(h) = hosts.peek() {
                if h.start >= end {
                    break;
                }
                held.push(*h);
                if h.end() <= end {
                    hosts.next();
                } else {
                    break;
                }
            }
            chunks.push(Chunk {
                start: next,
                end,
                hosts: held,
            });
            next = end;
        }
        let rendered: Vec<(Vec<u8>, Stats)> =
            chunks.par_iter().map(|c| render(&model, c)).collect();
        for (text, st) in rendered {
            out.write_all(&text)?;
            stats.add(&st);
        }
    }
    out.flush()?;
    Ok(stats)
}

/// `generate` for `--format warc`: all hosts first (a link names its
/// target's host), then the pages chunk by chunk, in parallel, in order.
fn generate_warc(args: &Args, model: &Model, out: &mut dyn Write) -> anyhow::Result<Stats> {
    let hosts: Vec<Host> = HostStream::new(args).collect();
    let text = text::TextModel::new(args.seed, args.nodes, &args.text);
    out.write_all(&pages::warcinfo(
        &format!(
            "web-like pages: nodes={} arcs~{} seed={} words={}..{} vocab={} dup-fraction={} max-edits-pct={}",
            args.nodes, args.arcs, args.seed, args.text.words.0, args.text.words.1, args.text.vocab,
            args.text.dup_fraction, args.text.max_edits_pct
        ),
        args.gzip,
    ))?;
    let batch = rayon::current_num_threads() * 2;
    let chunk_nodes = CHUNK_NODES / 16;
    let mut stats = Stats::default();
    let mut next = 0u64;
    while next < model.n {
        let mut chunks = Vec::with_capacity(batch);
        while chunks.len() < batch && next < model.n {
            let end = (next + chunk_nodes).min(model.n);
            chunks.push(Chunk {
                start: next,
                end,
                hosts: Vec::new(),
            });
            next = end;
        }
        let rendered: Vec<(Vec<u8>, Stats)> = chunks
            .par_iter()
            .map(|c| render_warc(model, c, &hosts, &text, args.seed, args.gzip))
            .collect();
        for (bytes, st) in rendered {
            out.write_all(&bytes)?;
            stats.add(&st);
        }
    }
    out.flush()?;
    Ok(stats)
}

/// Where the text goes: a file or stdout, possibly through a `gzip` child
/// (never for WARC, whose records are compressed one by one).
fn open_output(args: &Args) -> anyhow::Result<(Box<dyn Write>, Option<Child>)> {
    let to_stdout = args.output.as_os_str() == "-";
    if !args.gzip || args.format == Format::Warc {
        let w: Box<dyn Write> = if to_stdout {
            Box::new(BufWriter::with_capacity(1 << 20, io::stdout().lock()))
        } else {
            let f = File::create(&args.output)
                .with_context(|| format!("cannot create {}", args.output.display()))?;
            Box::new(BufWriter::with_capacity(1 << 20, f))
        };
        return Ok((w, None));
    }
    let stdout = if to_stdout {
        Stdio::inherit()
    } else {
        Stdio::from(
            File::create(&args.output)
                .with_context(|| format!("cannot create {}", args.output.display()))?,
        )
    };
    let mut child = Command::new("gzip")
        .arg("-c")
        .arg(format!("-{}", args.gzip_level))
        .stdin(Stdio::piped())
        .stdout(stdout)
        .spawn()
        .context("--gzip needs the `gzip` command on the PATH")?;
    let stdin = child.stdin.take().context("gzip's standard input")?;
    Ok((
        Box::new(BufWriter::with_capacity(1 << 20, stdin)),
        Some(child),
    ))
}

fn run(args: &Args) -> anyhow::Result<()> {
    if let Some(t) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .context("thread pool")?;
    }
    let started = Instant::now();
    let (mut out, child) = open_output(args)?;
    let stats =
        generate(args, &mut out).with_context(|| format!("writing {}", args.output.display()))?;
    drop(out);
    if let Some(mut child) = child {
        let status = child.wait().context("waiting for gzip")?;
        if !status.success() {
            bail!("gzip failed ({status})");
        }
    }
    if !args.quiet {
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "webmill-gen: {} nodes, {} arcs ({:.2}/node, {:.1}% in-host), {} hosts, {} dangling, \
             max out-degree {}; {:.1} s, {:.1} M arcs/s",
            stats.nodes,
            stats.arcs,
            stats.arcs as f64 / stats.nodes as f64,
            100.0 * stats.in_host as f64 / stats.arcs.max(1) as f64,
            stats.hosts,
            stats.dangling,
            stats.max_out,
            secs,
            stats.arcs as f64 / secs / 1e6
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e)
            if e.downcast_ref::<io::Error>().map(io::Error::kind)
                == Some(io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("webmill-gen: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> Args {
        let mut v = vec!["webmill-gen"];
        v.extend_from_slice(extra);
        Args::parse_from(v)
    }

    fn arcs_of(text: &[u8]) -> Vec<(u64, u64)> {
        std::str::from_utf8(text)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let (a, b) = l.split_once('\t').unwrap();
                (a.parse().unwrap(), b.parse().unwrap())
            })
            .collect()
    }

    fn gen(a: &Args) -> (Vec<u8>, Stats) {
        let mut out = Vec::new();
        let st = generate(a, &mut out).unwrap();
        (out, st)
    }

    #[test]
    fn deterministic_from_the_seed() {
        let a = args(&["--nodes", "50000", "--arcs", "500000", "--seed", "3"]);
        let (x, sx) = gen(&a);
        let (y, sy) = gen(&a);
        assert_eq!(x, y);
        assert_eq!(sx, sy);
        // The same bytes with one thread as with the pool.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let (z, _) = pool.install(|| gen(&a));
        assert_eq!(x, z);
        let (w, _) = gen(&args(&[
            "--nodes", "50000", "--arcs", "500000", "--seed", "4",
        ]));
        assert_ne!(x, w);
    }

    #[test]
    fn simple_graph_every_node_skewed_degrees_host_locality() {
        let n = 200_000u64;
        let a = args(&["--nodes", "200000", "--arcs", "2000000", "--seed", "11"]);
        let (text, st) = gen(&a);
        let arcs = arcs_of(&text);
        assert_eq!(arcs.len() as u64, st.arcs);
        // Close to the target.
        let ratio = st.arcs as f64 / 2e6;
        assert!((0.9..1.1).contains(&ratio), "{} arcs", st.arcs);
        // Sorted, distinct, no self-loops; every node occurs.
        assert!(arcs.windows(2).all(|w| w[0] < w[1]));
        assert!(arcs.iter().all(|&(s, d)| s != d && s < n && d < n));
        let mut seen = vec![false; n as usize];
        let (mut outd, mut ind) = (vec![0u64; n as usize], vec![0u64; n as usize]);
        for &(s, d) in &arcs {
            seen[s as usize] = true;
            seen[d as usize] = true;
            outd[s as usize] += 1;
            ind[d as usize] += 1;
        }
        assert!(seen.iter().all(|&x| x));
        // Heavy tails: the largest degrees dwarf the mean, and the top 1% of
        // pages by in-degree hold a large share of the in-links (about 2.5%
        // if in-degrees were Poisson around the mean).
        let mean = st.arcs as f64 / n as f64;
        assert!(*outd.iter().max().unwrap() as f64 > 50.0 * mean);
        assert!(*ind.iter().max().unwrap() as f64 > 500.0 * mean);
        ind.sort_unstable_by(|a, b| b.cmp(a));
        let top: u64 = ind[..(n / 100) as usize].iter().sum();
        assert!(top as f64 > 0.1 * st.arcs as f64, "top 1% hold {top}");
        // Dangling pages and host locality as asked.
        let dangling = outd.iter().filter(|&&d| d == 0).count() as f64 / n as f64;
        assert!((0.15..0.25).contains(&dangling), "{dangling}");
        let local = st.in_host as f64 / st.arcs as f64;
        assert!((0.75..0.9).contains(&local), "{local}");
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [2u64, 3, 17, 1000, 4097] {
            let p = Permutation::new(n, 9);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x);
                assert!(!seen[y as usize]);
                seen[y as usize] = true;
            }
        }
    }
}

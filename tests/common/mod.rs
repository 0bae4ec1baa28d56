//! Helpers shared by the integration tests (library and CLI).
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `../shared/data` (or `$WEBMILL_DATA`), or `None` with a printed reason.
pub fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("WEBMILL_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/data"));
    if dir.join("graphs").is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: real data not found at {} (set WEBMILL_DATA)",
            dir.display()
        );
        None
    }
}

/// The workspace root (the directory holding the root Cargo.toml).
pub fn workspace_root() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !dir.join("formats").is_dir() {
        if !dir.pop() {
            panic!(
                "workspace root not found above {}",
                env!("CARGO_MANIFEST_DIR")
            );
        }
    }
    dir
}

/// A small deterministic PRNG (splitmix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A web-like random graph on sparse, unsorted node ids: hosts of consecutive
/// pages, mostly local links, some self-loops and duplicate arcs.
pub fn random_graph(seed: u64, arcs: usize) -> Vec<(u64, u64)> {
    let mut rng = Rng(seed);
    let nodes = (arcs / 8).max(10) as u64;
    // Sparse ids: node i is known by a scrambled 40-bit number.
    let id = |i: u64| (i.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 24) | 1;
    let mut out = Vec::with_capacity(arcs);
    for _ in 0..arcs {
        let s = rng.below(nodes);
        let d = match rng.below(10) {
            0 => s,                                      // self-loop
            1..=6 => (s + rng.below(50)).min(nodes - 1), // same host
            _ => rng.below(nodes),                       // anywhere
        };
        out.push((id(s), id(d)));
        if rng.below(20) == 0 {
            out.push((id(s), id(d))); // duplicate
        }
    }
    out
}

/// Writes arcs as a SNAP file, gzip-compressed if `gzip`.
pub fn write_snap(path: &Path, arcs: &[(u64, u64)], gzip: bool) {
    let mut text = Vec::new();
    writeln!(text, "# generated test graph\n# FromNodeId\tToNodeId").unwrap();
    for (s, d) in arcs {
        writeln!(text, "{s}\t{d}").unwrap();
    }
    if gzip {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&text).unwrap();
        std::fs::write(path, enc.finish().unwrap()).unwrap();
    } else {
        std::fs::write(path, text).unwrap();
    }
}

/// The straightforward in-memory import: (node ids in docID order, forward
/// arcs, transposed arcs, self-loops dropped).
pub struct NaiveGraph {
    pub ids: Vec<u64>,
    pub forward: Vec<(u64, u64)>,
    pub transposed: Vec<(u64, u64)>,
    pub self_loops: u64,
}

pub fn naive_import(arcs: &[(u64, u64)]) -> NaiveGraph {
    let ids: BTreeSet<u64> = arcs.iter().flat_map(|&(s, d)| [s, d]).collect();
    let doc: BTreeMap<u64, u64> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| (id, i as u64))
        .collect();
    let mut fwd = BTreeSet::new();
    let mut self_loops = 0;
    for &(s, d) in arcs {
        if s == d {
            self_loops += 1;
        } else {
            fwd.insert((doc[&s], doc[&d]));
        }
    }
    let mut transposed: Vec<(u64, u64)> = fwd.iter().map(|&(s, d)| (d, s)).collect();
    transposed.sort();
    NaiveGraph {
        ids: ids.into_iter().collect(),
        forward: fwd.into_iter().collect(),
        transposed,
        self_loops,
    }
}

/// Reads a SNAP file the simple way (for comparing real data).
pub fn read_snap(path: &Path) -> Vec<(u64, u64)> {
    use std::io::{BufRead, BufReader};
    let file = std::fs::File::open(path).unwrap();
    let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    reader
        .lines()
        .map(|l| l.unwrap())
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut it = l.split_whitespace().map(|f| f.parse::<u64>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect()
}

/// Straightforward PageRank by power iteration over an arc list (push style),
/// the independent reference for the engine's three modes. `pref` is the
/// normalized reset vector (uniform when `None`); dangling mass follows `pref`
/// when `dangling_pref`, else is spread uniformly. Stops when the L1 change is
/// below `tol` or after `max_iter` iterations.
pub fn naive_pagerank(
    n: usize,
    arcs: &[(u64, u64)],
    damping: f64,
    tol: f64,
    max_iter: u32,
    pref: Option<&[f64]>,
    dangling_pref: bool,
) -> Vec<f64> {
    let uniform = vec![1.0 / n as f64; n];
    let v: Vec<f64> = pref.map_or(uniform.clone(), <[f64]>::to_vec);
    let u = if dangling_pref { v.clone() } else { uniform };
    let mut deg = vec![0u64; n];
    for &(s, _) in arcs {
        deg[s as usize] += 1;
    }
    let mut x = v.clone();
    for _ in 0..max_iter {
        let dangling: f64 = (0..n).filter(|&i| deg[i] == 0).map(|i| x[i]).sum();
        let mut next: Vec<f64> = (0..n)
            .map(|j| (1.0 - damping) * v[j] + damping * dangling * u[j])
            .collect();
        for &(s, t) in arcs {
            next[t as usize] += damping * x[s as usize] / deg[s as usize] as f64;
        }
        let change: f64 = next.iter().zip(&x).map(|(a, b)| (a - b).abs()).sum();
        x = next;
        if change < tol {
            break;
        }
    }
    x
}

/// L1 distance.
pub fn l1(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum()
}

/// Words for generated pages.
const WORDS: [&str; 24] = [
    "alpha", "Beta", "gamma", "delta", "Epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega",
];

/// Writes a generated site of `pages` HTML files under `dir` (in nested
/// directories), with relative, root-relative, absolute and external links,
/// fragments, self-links, duplicate links, frames, meta refresh, a `<base>`,
/// `mailto:` links, a few non-HTML files and one binary file named `.html`.
/// Returns the relative paths of the HTML files.
pub fn write_site(dir: &Path, pages: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng(seed);
    let path_of = |i: usize| format!("s{}/d{}/p{i}.html", i % 3, i % 7);
    let rel: Vec<String> = (0..pages).map(path_of).collect();
    for (i, r) in rel.iter().enumerate() {
        let mut html = String::new();
        html.push_str(&format!(
            "<!DOCTYPE html><html><head><title>Page {i} — {}</title>",
            WORDS[i % WORDS.len()]
        ));
        if i % 11 == 0 {
            html.push_str("<base href=\"/s0/\">");
        }
        if i % 13 == 0 {
            html.push_str(&format!(
                "<meta http-equiv=\"refresh\" content=\"5; url=/{}\">",
                path_of((i + 1) % pages)
            ));
        }
        html.push_str("</head><body><h1>Heading ");
        html.push_str(WORDS[(i * 7) % WORDS.len()]);
        html.push_str("</h1><p>");
        for _ in 0..(20 + rng.below(60)) {
            html.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
            html.push(' ');
        }
        html.push_str("</p>");
        for _ in 0..rng.below(12) {
            let t = rng.below(pages as u64) as usize;
            let anchor = format!("{} {}", WORDS[t % WORDS.len()], t);
            let href = match rng.below(7) {
                0 => format!("/{}", path_of(t)),
                1 => format!("/{}#sec{}", path_of(t), rng.below(3)),
                2 => format!("http://external{}.example/x/{}", t % 5, t % 17),
                3 => "mailto:someone@example.org".to_string(),
                4 => format!("../../{}", path_of(t)),
                5 => format!("p{i}.html"),
                _ => format!("/{}?q={}", path_of(t), t % 3),
            };
            html.push_str(&format!("<a href=\"{href}\">{anchor}</a> "));
        }
        if i % 17 == 0 {
            html.push_str(&format!("<iframe src=\"/{}\"></iframe>", path_of(0)));
        }
        html.push_str("</body></html>\n");
        let p = dir.join(r);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, html).unwrap();
    }
    std::fs::write(dir.join("style.css"), "body { color: red }").unwrap();
    std::fs::write(dir.join("s0/logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    std::fs::write(
        dir.join("s1/binary.html"),
        b"\x89PNG\r\n\x1a\n\0\0\0\0\0\0\0\0junk",
    )
    .unwrap();
    rel
}

/// The extracted Debian documentation package `package` (see
/// `../shared/data/README.md`), under `$WEBMILL_CORPUS` or the workspace's
/// `target/corpus`. A package not there yet is fetched with
/// `fetch-debian-docs.sh` from the data directory (Debian's package registry
/// is reachable here and in CI); when that fails, `None` with the reason
/// printed.
pub fn corpus_dir(package: &str) -> Option<PathBuf> {
    let root = std::env::var_os("WEBMILL_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/corpus"));
    let dir = root.join(package);
    if dir.is_dir() {
        return Some(dir);
    }
    let skip = |why: String| {
        eprintln!(
            "SKIPPED: Debian package {package} is not under {} and {why}",
            root.display()
        );
        None
    };
    let Some(data) = data_dir() else {
        return skip("the data directory with fetch-debian-docs.sh is missing".into());
    };
    if let Err(e) = std::fs::create_dir_all(&root) {
        return skip(format!("{} cannot be made: {e}", root.display()));
    }
    // One fetch at a time: tests run in parallel, in several processes.
    let lock = match std::fs::File::create(root.join(".fetch.lock")) {
        Ok(f) => f,
        Err(e) => return skip(format!("cannot lock it: {e}")),
    };
    let _ = lock.lock();
    if dir.is_dir() {
        return Some(dir);
    }
    let fetched = std::process::Command::new("bash")
        .arg(data.join("fetch-debian-docs.sh"))
        .arg(&root)
        .arg(package)
        .status();
    match fetched {
        Ok(st) if st.success() && dir.is_dir() => Some(dir),
        Ok(st) => skip(format!("fetch-debian-docs.sh failed ({st})")),
        Err(e) => skip(format!("fetch-debian-docs.sh could not start: {e}")),
    }
}

/// Writes each `(relative path, words)` of `pages` under `dir` as an HTML
/// page holding the words in one paragraph.
pub fn write_word_pages(dir: &Path, pages: &BTreeMap<String, Vec<String>>) {
    for (rel, words) in pages {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(
            &p,
            format!("<html><body><p>{}</p></body></html>", words.join(" ")),
        )
        .unwrap();
    }
}

/// A new job at `job_dir` with `inputs` (as on the command line) ingested,
/// resolved and ranked (what near-duplicate detection needs) under a budget
/// of `mem` bytes.
pub fn ingested_job(job_dir: &Path, inputs: &[String], mem: u64) -> webmill::job::Job {
    use webmill::ingest::{ingest, resolve::resolve, IngestOptions, InputSpec};
    let mut job = webmill::job::Job::open(job_dir, true).unwrap();
    let s = webmill::job::Settings::new(mem);
    let opts = IngestOptions {
        inputs: inputs
            .iter()
            .map(|i| InputSpec::parse(i, None).unwrap())
            .collect(),
        ..IngestOptions::default()
    };
    ingest(&mut job, &opts, &s).unwrap();
    resolve(&mut job, &s).unwrap();
    webmill::rank::pagerank(&mut job, &webmill::rank::PageRankOptions::default(), &s).unwrap();
    job
}

/// `f(page, docID, words)` for every page of `job` with a token stream.
pub fn job_page_texts(
    job: &webmill::job::JobView,
    f: impl FnMut(u64, u64, &str) -> webmill::Result<()>,
) -> webmill::Result<()> {
    use webmill::job::JobFile;
    webmill::ingest::text::for_each_page_text(
        &job.file(JobFile::Text)?,
        &job.file(JobFile::PageDoc)?,
        f,
    )
}

/// The clusters of a `clusters-ALG.wm` file: cluster id → its members in
/// file order, each with its keep flag.
pub fn clusters_of(path: &Path) -> BTreeMap<u64, Vec<(u64, bool)>> {
    let mut clusters: BTreeMap<u64, Vec<(u64, bool)>> = BTreeMap::new();
    webmill::dedup::files::for_each_cluster_member(path, |c, d, keep| {
        clusters.entry(c).or_default().push((d, keep));
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    clusters
}

/// Every file under the job directory `job` but its manifest (whose figures
/// hold times) and lock, by path relative to `job`.
pub fn job_files(job: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = tree_files(job);
    out.remove("job.json");
    out.remove(".lock");
    out
}

/// Every file under `dir`, by path relative to `dir`.
pub fn tree_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Starts `command()` again and again, killing each run with SIGKILL after
/// `min_ms` plus a random delay below `spread_ms` (doubled every eight
/// kills), until a run ends by itself; asserts that it succeeded and
/// returns how many runs were killed (fewer than 40, or the test fails).
pub fn kill_until_done(
    mut command: impl FnMut() -> std::process::Command,
    rng: &mut Rng,
    min_ms: u64,
    spread_ms: u64,
) -> u32 {
    let mut kills = 0;
    loop {
        let mut child = command().spawn().unwrap();
        // The spread doubles every eight kills: a machine busier than
        // when `spread_ms` was timed (CI beside other test binaries) can
        // make each run's unit of progress outlast every moment drawn, and
        // then kills would land forever; longer moments let one finish.
        let spread = spread_ms.max(1) << (kills / 8).min(8);
        std::thread::sleep(std::time::Duration::from_millis(min_ms + rng.below(spread)));
        match child.try_wait().unwrap() {
            Some(status) => {
                assert!(status.success(), "the run failed after {kills} kills");
                return kills;
            }
            None => {
                child.kill().unwrap();
                child.wait().unwrap();
                kills += 1;
                assert!(kills < 40, "never finished");
            }
        }
    }
}

/// A random query text over `vocab`: 1–3 parts, each a phrase, an
/// exclusion (of a word or a phrase), an OR of words or of a group, a
/// `site:` or `-site:` of the hand-made site's host or another, or, for
/// `plain` of every `8 + plain` parts, a plain word.
pub fn random_query(rng: &mut Rng, vocab: &[String], plain: u64) -> String {
    let mut parts = Vec::new();
    let n = 1 + rng.below(3);
    for _ in 0..n {
        let mut w = || vocab[rng.below(vocab.len() as u64) as usize].clone();
        let (a, b, c) = (w(), w(), w());
        parts.push(match rng.below(8 + plain) {
            0 => format!("\"{a} {b}\""),
            1 => format!("-{a}"),
            2 => format!("-\"{a} {b}\""),
            3 => format!("{a} OR {b}"),
            4 => format!("({a} {b}) OR {c}"),
            5 => "site:site.example".to_string(),
            6 => "site:elsewhere.example".to_string(),
            7 => "-site:elsewhere.example".to_string(),
            _ => a,
        });
    }
    parts.join(" ")
}

//! The `index` stage on a real site: build throughput, peak RSS against the
//! budget, and the sizes of the lexicon and the barrels next to the
//! repository and the raw HTML.
//!
//! Data: a Debian HTML documentation package under `$WEBMILL_CORPUS`
//! (default `/work/corpus`), `rust-doc` unless `WEBMILL_BENCH_SITE` names
//! another; fetch it with `../shared/data/fetch-debian-docs.sh`. It is
//! ingested once (not timed), then indexed at each budget in
//! `WEBMILL_BENCH_MEM` (default `32M,1G`) with 1 and 2 threads, `RUNS` times
//! each (default 3). Prints, per configuration, the median wall and CPU
//! seconds, MB of HTML per CPU second, peak RSS (VmHWM, reset before each
//! run), and once the file sizes.
//!
//! `cargo bench --bench index`

use std::path::{Path, PathBuf};
use std::time::Instant;

use webmill::index::{build, Sources};
use webmill::resources::{format_bytes, parse_bytes, peak_rss, reset_peak_rss};

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, r)| r)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn html_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "html" || x == "htm") {
                total += e.metadata().map_or(0, |m| m.len());
            }
        }
    }
    total
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let site = std::env::var("WEBMILL_BENCH_SITE").unwrap_or_else(|_| "rust-doc".into());
    let root = std::env::var_os("WEBMILL_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/corpus"));
    let Some(html) = std::fs::read_dir(root.join(&site).join("usr/share/doc"))
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
        .map(|e| e.path().join("html"))
        .filter(|p| p.is_dir())
    else {
        eprintln!(
            "SKIPPED: {site} not found under {} (see ../shared/data/README.md)",
            root.display()
        );
        return;
    };
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mems: Vec<u64> = std::env::var("WEBMILL_BENCH_MEM")
        .unwrap_or_else(|_| "32M,1G".into())
        .split(',')
        .map(|m| parse_bytes(m).expect("a size"))
        .collect();
    let tmp = tempfile::tempdir().expect("temp dir");
    let job_dir = tmp.path().join("job");
    let mut job = webmill::job::Job::open(&job_dir, true).expect("job");
    let s = webmill::job::Settings::new(1 << 30);
    let opts = webmill::ingest::IngestOptions {
        inputs: vec![webmill::ingest::InputSpec::parse(
            &format!("http://x.example/={}", html.display()),
            None,
        )
        .expect("input")],
        ..Default::default()
    };
    webmill::ingest::ingest(&mut job, &opts, &s).expect("ingest");
    webmill::ingest::resolve::resolve(&mut job, &s).expect("resolve");
    let sources = Sources {
        text: job.file(webmill::job::JobFile::Text).unwrap(),
        pagedoc: job.file(webmill::job::JobFile::PageDoc).unwrap(),
        docs: job.file(webmill::job::JobFile::Docs).unwrap(),
        anchors: job.file(webmill::job::JobFile::Anchors).unwrap(),
    };
    let html_total = html_bytes(&html);
    let repo = std::fs::metadata(job.file(webmill::job::JobFile::Repository).unwrap())
        .map_or(0, |m| m.len());
    println!(
        "index bench: {site}, {} of HTML, repository {}",
        format_bytes(html_total),
        format_bytes(repo)
    );
    let mut summary = None;
    for &mem in &mems {
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            let (mut wall, mut cpu, mut rss) = (Vec::new(), Vec::new(), Vec::new());
            for r in 0..runs {
                let out = tmp.path().join(format!("out-{mem}-{threads}-{r}"));
                let work = tmp.path().join(format!("tmp-{mem}-{threads}-{r}"));
                reset_peak_rss();
                let (t, c) = (Instant::now(), cpu_seconds());
                let s = pool
                    .install(|| build(&sources, &out, &work, 64, mem, &webmill::progress::silent()))
                    .expect("build");
                wall.push(t.elapsed().as_secs_f64());
                cpu.push(cpu_seconds() - c);
                rss.push(peak_rss().unwrap_or(0) as f64);
                summary = Some(s);
                let _ = std::fs::remove_dir_all(&out);
                let _ = std::fs::remove_dir_all(&work);
            }
            let (w, c, m) = (median(&mut wall), median(&mut cpu), median(&mut rss));
            println!(
                "--mem {:>9}  threads {threads}: wall {w:.2} s, cpu {c:.2} s, {:.0} MB of HTML per CPU s, peak RSS {}",
                format_bytes(mem),
                html_total as f64 / 1e6 / c,
                format_bytes(m as u64)
            );
        }
    }
    if let Some(s) = summary {
        println!(
            "words {}, postings {} full / {} short, hits {} ({} plain, {} fancy)",
            s.words, s.postings.0, s.postings.1, s.hits, s.full_hits.0, s.full_hits.1
        );
        println!(
            "sizes: lexicon {} (term dictionary {}), full barrels {}, short barrels {}; forward barrels (temporary) {}",
            format_bytes(s.lexicon_bytes),
            format_bytes(s.fst_bytes),
            format_bytes(s.barrel_bytes.0),
            format_bytes(s.barrel_bytes.1),
            format_bytes(s.forward.bytes)
        );
        println!(
            "full barrels: {:.2} bytes per hit (the paper's hits alone: 2), {:.2} bytes per posting; forward word headers {} (paper layout {})",
            s.barrel_bytes.0 as f64 / s.hits as f64,
            s.barrel_bytes.0 as f64 / s.postings.0 as f64,
            format_bytes(s.forward.header_bytes),
            format_bytes(s.forward.paper_header_bytes)
        );
    }
}

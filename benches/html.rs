//! Benchmark: HTML extraction (`ingest::html::Extractor`: charset sniffing,
//! tokenizing, title, words with flags, links with anchor text) on real pages.
//!
//! Data: every `*.html` under the Debian doc trees in `../corpus` or
//! `/work/corpus` (override with `WEBMILL_CORPUS`): `rust-doc` (32,101 pages, 478 MB) and
//! `postgresql-doc-15` (1,167 pages, 16 MB), read into memory first. Skips with
//! a message when the corpus is missing.
//!
//! Prints, per corpus and run, single-thread MB/s (input bytes) and pages/s, by
//! wall time and by the thread's CPU time (`/proc/thread-self/schedstat`; on a
//! shared machine the CPU figure is the one that says "per core"), words and
//! links extracted, then the medians over the runs. With `--baseline` it also
//! times `lol_html` with the handlers our extraction would need (a document
//! text handler copying the text out, an `*` element handler registering an
//! end-tag handler to follow nesting, an `a[href]` handler reading the href):
//! the figure that made us write our own tokenizer (see the module docs).
//!
//! ```text
//! cargo bench --bench html                    # 3 runs per corpus
//! cargo bench --bench html -- --runs 5 --baseline
//! ```

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use webmill::ingest::html::Extractor;

/// `WEBMILL_CORPUS`, else `../corpus` next to the crate, else `/work/corpus`.
fn corpus_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("WEBMILL_CORPUS") {
        return PathBuf::from(dir);
    }
    let next_to_crate = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    if next_to_crate.is_dir() {
        next_to_crate
    } else {
        PathBuf::from("/work/corpus")
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
}

fn load(dir: &Path) -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// CPU time of this thread in nanoseconds, if the kernel tells.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Times `f`: (wall seconds, CPU seconds or wall if unknown).
fn timed<T>(f: impl FnOnce() -> T) -> (f64, f64, T) {
    let c0 = cpu_ns();
    let t = Instant::now();
    let out = f();
    let wall = t.elapsed().as_secs_f64();
    let cpu = match (c0, cpu_ns()) {
        (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e9,
        _ => wall,
    };
    (wall, cpu, out)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One pass of our extractor; returns (words, links, not-HTML pages).
fn run_ours(pages: &[Vec<u8>]) -> (u64, u64, u64) {
    let mut ex = Extractor::new();
    let (mut words, mut links, mut rejected) = (0u64, 0u64, 0u64);
    for page in pages {
        match ex.extract(page, None) {
            Ok(p) => {
                words += p.word_count() as u64;
                links += p.links.len() as u64;
            }
            Err(_) => rejected += 1,
        }
    }
    (words, links, rejected)
}

/// One pass of the lol_html baseline; returns (text bytes, hrefs).
fn run_lol(pages: &[Vec<u8>]) -> (u64, u64) {
    use lol_html::html_content::{Element, TextChunk};
    use lol_html::{
        DocumentContentHandlers, ElementContentHandlers, HtmlRewriter, Selector, Settings,
    };
    let all: Selector = "*".parse().expect("selector");
    let a_href: Selector = "a[href]".parse().expect("selector");
    let (mut text_bytes, mut hrefs) = (0u64, 0u64);
    for page in pages {
        let text = Rc::new(std::cell::RefCell::new(String::new()));
        let depth = Rc::new(Cell::new(0i64));
        let links = Rc::new(Cell::new(0u64));
        let (t2, d2, l2) = (text.clone(), depth.clone(), links.clone());
        let settings = Settings {
            element_content_handlers: vec![
                (
                    std::borrow::Cow::Borrowed(&all),
                    ElementContentHandlers::default().element(move |el: &mut Element| {
                        d2.set(d2.get() + 1);
                        if let Some(h) = el.end_tag_handlers() {
                            let d3 = d2.clone();
                            h.push(Box::new(move |_| {
                                d3.set(d3.get() - 1);
                                Ok(())
                            }));
                        }
                        Ok(())
                    }),
                ),
                (
                    std::borrow::Cow::Borrowed(&a_href),
                    ElementContentHandlers::default().element(move |el: &mut Element| {
                        if el.get_attribute("href").is_some() {
                            l2.set(l2.get() + 1);
                        }
                        Ok(())
                    }),
                ),
            ],
            document_content_handlers: vec![DocumentContentHandlers::default().text(
                move |c: &mut TextChunk| {
                    t2.borrow_mut().push_str(c.as_str());
                    Ok(())
                },
            )],
            ..Settings::new()
        };
        let mut rw = HtmlRewriter::new(settings, |_: &[u8]| {});
        if rw.write(page).is_ok() {
            let _ = rw.end();
        }
        text_bytes += text.borrow().len() as u64;
        hrefs += links.get();
    }
    (text_bytes, hrefs)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|k| args.get(k + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let baseline = args.iter().any(|a| a == "--baseline");
    let root = corpus_root();
    if !root.is_dir() {
        println!(
            "skipped: corpus {} not found (set WEBMILL_CORPUS)",
            root.display()
        );
        return;
    }
    for name in ["rust-doc", "postgresql-doc-15"] {
        let dir = root.join(name);
        let pages = load(&dir);
        if pages.is_empty() {
            println!("{name}: skipped, no *.html under {}", dir.display());
            continue;
        }
        let bytes: usize = pages.iter().map(Vec::len).sum();
        let mb = bytes as f64 / 1e6;
        println!("{name}: {} pages, {mb:.1} MB in memory", pages.len());
        let np = pages.len() as f64;
        let (mut wall, mut cpu) = (Vec::new(), Vec::new());
        for r in 0..runs {
            let (w, c, (words, links, rejected)) = timed(|| run_ours(&pages));
            println!(
                "  webmill run {}: wall {w:.2} s = {:.1} MB/s; cpu {c:.2} s = {:.1} MB/s, {:.0} pages/s ({words} words, {links} links, {rejected} not HTML)",
                r + 1,
                mb / w,
                mb / c,
                np / c
            );
            wall.push(w);
            cpu.push(c);
        }
        let (w, c) = (median(wall), median(cpu));
        println!(
            "  webmill median of {runs}: {:.1} MB/s per core (cpu), {:.0} pages/s; wall {:.1} MB/s, {:.0} pages/s",
            mb / c,
            np / c,
            mb / w,
            np / w
        );
        if baseline {
            let (mut wall, mut cpu) = (Vec::new(), Vec::new());
            for r in 0..runs {
                let (w, c, (text, hrefs)) = timed(|| run_lol(&pages));
                println!(
                    "  lol_html baseline run {}: wall {w:.2} s = {:.1} MB/s; cpu {c:.2} s = {:.1} MB/s ({text} text bytes, {hrefs} hrefs)",
                    r + 1,
                    mb / w,
                    mb / c
                );
                wall.push(w);
                cpu.push(c);
            }
            let (w, c) = (median(wall), median(cpu));
            println!(
                "  lol_html baseline median of {runs}: {:.1} MB/s per core (cpu), {:.0} pages/s; wall {:.1} MB/s",
                mb / c,
                np / c,
                mb / w
            );
        }
    }
}

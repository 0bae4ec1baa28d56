//! Benchmark: HTML extraction (`ingest::html::Extractor`: charset sniffing,
//! tokenizing, title, words with flags, links with anchor text) on real pages.
//!
//! Data: every `*.html` under the Debian doc trees in `/work/corpus` (override
//! with `WEBMILL_CORPUS`): `rust-doc` (32,101 pages, 478 MB) and
//! `postgresql-doc-15` (1,167 pages, 16 MB), read into memory first. Skips with
//! a message when the corpus is missing.
//!
//! Prints, per corpus and run, single-thread MB/s (input bytes), pages/s, words
//! and links extracted, then the median over the runs. With `--baseline` it also
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

fn corpus_root() -> PathBuf {
    std::env::var_os("WEBMILL_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus"))
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One pass of our extractor; returns (seconds, words, links, not-HTML pages).
fn run_ours(pages: &[Vec<u8>]) -> (f64, u64, u64, u64) {
    let mut ex = Extractor::new();
    let (mut words, mut links, mut rejected) = (0u64, 0u64, 0u64);
    let t = Instant::now();
    for page in pages {
        match ex.extract(page, None) {
            Ok(p) => {
                words += p.word_count() as u64;
                links += p.links.len() as u64;
            }
            Err(_) => rejected += 1,
        }
    }
    (t.elapsed().as_secs_f64(), words, links, rejected)
}

/// One pass of the lol_html baseline; returns (seconds, text bytes, hrefs).
fn run_lol(pages: &[Vec<u8>]) -> (f64, u64, u64) {
    use lol_html::html_content::{Element, TextChunk};
    use lol_html::{
        DocumentContentHandlers, ElementContentHandlers, HtmlRewriter, Selector, Settings,
    };
    let all: Selector = "*".parse().expect("selector");
    let a_href: Selector = "a[href]".parse().expect("selector");
    let (mut text_bytes, mut hrefs) = (0u64, 0u64);
    let t = Instant::now();
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
    (t.elapsed().as_secs_f64(), text_bytes, hrefs)
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
        let (mut mbs, mut pps) = (Vec::new(), Vec::new());
        for r in 0..runs {
            let (secs, words, links, rejected) = run_ours(&pages);
            println!(
                "  webmill run {}: {secs:.2} s, {:.1} MB/s, {:.0} pages/s ({words} words, {links} links, {rejected} not HTML)",
                r + 1,
                mb / secs,
                pages.len() as f64 / secs
            );
            mbs.push(mb / secs);
            pps.push(pages.len() as f64 / secs);
        }
        println!(
            "  webmill median of {runs}: {:.1} MB/s per core, {:.0} pages/s",
            median(mbs),
            median(pps)
        );
        if baseline {
            let mut mbs = Vec::new();
            for r in 0..runs {
                let (secs, text, hrefs) = run_lol(&pages);
                println!(
                    "  lol_html baseline run {}: {secs:.2} s, {:.1} MB/s ({text} text bytes, {hrefs} hrefs)",
                    r + 1,
                    mb / secs
                );
                mbs.push(mb / secs);
            }
            println!(
                "  lol_html baseline median of {runs}: {:.1} MB/s per core",
                median(mbs)
            );
        }
    }
}

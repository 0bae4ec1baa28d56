//! Whole-page tests of the extractor, the `lol_html` reference it is compared
//! with, and the comparisons on real pages (the Debian doc trees and a WARC
//! crawl of iana.org, when present). The helpers here ([`page`], [`words`],
//! [`links`], [`check_invariants`]) serve the tests of the submodules too.

use super::tokenizer::find;
use super::*;
use proptest::prelude::*;

mod reference;

pub(super) fn page(html: &str) -> Page {
    Extractor::new()
        .extract(html.as_bytes(), None)
        .expect("html")
        .clone()
}

pub(super) fn words(p: &Page) -> Vec<&str> {
    p.words().collect()
}

pub(super) fn links(p: &Page) -> Vec<(LinkKind, &str, &str)> {
    p.links
        .iter()
        .map(|l| (l.kind, l.href.as_str(), l.anchor.as_str()))
        .collect()
}

/// Checks the invariants every page must satisfy.
pub(super) fn check_invariants(p: &Page) {
    assert_eq!(p.words().count(), p.flags.len(), "one flag byte per word");
    for w in p.words() {
        assert!(!w.is_empty() && w.len() <= MAX_WORD_BYTES, "{w:?}");
        // Lowercasing may add combining marks ('İ' gives "i\u{307}").
        assert!(w.chars().next().is_some_and(char::is_alphanumeric), "{w:?}");
        assert!(!w.contains(char::is_whitespace), "{w:?}");
    }
    if !p.words.is_empty() {
        assert!(!p.words.starts_with(' ') && !p.words.ends_with(' '));
        assert!(!p.words.contains("  "));
    }
    for &f in &p.flags {
        assert!(flag::size(f) <= 6 && f & 0b1100_0000 == 0, "{f:#b}");
    }
    assert!(p.title.len() <= MAX_TITLE_BYTES);
    assert!(!p.title.starts_with(' ') && !p.title.ends_with(' '));
    for l in &p.links {
        assert!(l.anchor.len() <= MAX_ANCHOR_BYTES);
        assert!(l.href.len() <= MAX_HREF_BYTES);
        assert_eq!(l.href.trim_matches(|c: char| c <= ' '), l.href);
        assert!(!l.anchor.starts_with(' ') && !l.anchor.ends_with(' '));
    }
}

#[test]
fn title_words_and_links() {
    let p = page(
        "<!DOCTYPE html><html><head><title>  The\n Page &amp; <b>Title</b> </title></head>\
         <body><p>Hello, World! It's 2024.</p></body></html>",
    );
    assert_eq!(p.title, "The Page & <b>Title</b>");
    assert_eq!(words(&p), ["hello", "world", "it", "s", "2024"]);
    assert_eq!(p.flags[0], flag::NORMAL_SIZE | flag::CAPITALIZED);
    assert_eq!(p.flags[2], flag::NORMAL_SIZE | flag::CAPITALIZED);
    assert_eq!(p.flags[3], flag::NORMAL_SIZE);
    assert_eq!(p.charset, "UTF-8");
    assert_eq!(p.charset_source, CharsetSource::Default);
    check_invariants(&p);
}

#[test]
fn first_title_wins_and_svg_title_is_not_the_title() {
    let p = page("<svg><title>icon</title></svg><title>Real</title><title>Second</title>x");
    assert_eq!(p.title, "Real");
    assert_eq!(words(&p), ["x"]);
}

#[test]
fn extractor_is_reusable() {
    let mut ex = Extractor::new();
    let a = ex
        .extract(
            b"<base href=b><title>A</title><meta name=robots content=noindex><a href=1>one</a>",
            None,
        )
        .expect("html")
        .clone();
    let b = ex.extract(b"<a href=2>two", None).expect("html").clone();
    assert_eq!(a.base_href.as_deref(), Some("b"));
    assert_eq!(b.base_href, None);
    assert_eq!(b.title, "");
    assert!(a.noindex && !b.noindex);
    assert_eq!(links(&b), [(LinkKind::A, "2", "two")]);
    assert_eq!(words(&b), ["two"]);
}

/// The Debian doc trees, if present (`WEBMILL_CORPUS`, `../corpus` next to
/// the crate, or `/work/corpus`).
fn corpus(name: &str) -> Option<std::path::PathBuf> {
    let roots = [
        std::env::var_os("WEBMILL_CORPUS").map(std::path::PathBuf::from),
        Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")),
        Some(std::path::PathBuf::from("/work/corpus")),
    ];
    let found = roots
        .into_iter()
        .flatten()
        .map(|r| r.join(name))
        .find(|d| d.is_dir());
    if found.is_none() {
        println!("skipped: corpus {name} not found (set WEBMILL_CORPUS)");
    }
    found
}

fn html_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => walk(&p, out),
                Ok(_) if p.extension().is_some_and(|x| x == "html") => out.push(p),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// Compares our extraction with the `lol_html` reference on every
/// `step`-th page of a corpus; returns (pages, mismatching pages).
fn agree_with_reference(name: &str, step: usize) -> Option<(usize, Vec<String>)> {
    let dir = corpus(name)?;
    let mut ex = Extractor::new();
    let mut bad = Vec::new();
    let files = html_files(&dir);
    let mut n = 0;
    for path in files.iter().step_by(step) {
        let body = std::fs::read(path).expect("read");
        let Ok(text) = std::str::from_utf8(&body) else {
            continue;
        };
        let p = ex.extract(&body, None).expect("html");
        let r = reference::extract(text);
        n += 1;
        let mut why = Vec::new();
        if p.title != r.title.clone().unwrap_or_default() {
            why.push(format!("title {:?} vs {:?}", p.title, r.title));
        }
        if p.links != r.links {
            let k = p
                .links
                .iter()
                .zip(&r.links)
                .position(|(a, b)| a != b)
                .unwrap_or(p.links.len().min(r.links.len()));
            why.push(format!(
                "links differ at {k}: {:?} vs {:?}",
                p.links.get(k),
                r.links.get(k)
            ));
        }
        if p.words != r.words {
            let (a, b): (Vec<_>, Vec<_>) = (
                p.words().collect(),
                r.words.split_ascii_whitespace().collect(),
            );
            let k = a
                .iter()
                .zip(&b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            why.push(format!(
                "words differ at {k}: {:?} vs {:?}",
                &a[k.saturating_sub(3)..(k + 3).min(a.len())],
                &b[k.saturating_sub(3)..(k + 3).min(b.len())]
            ));
        }
        if !why.is_empty() {
            bad.push(format!("{}: {}", path.display(), why.join("; ")));
        }
    }
    Some((n, bad))
}

#[test]
fn reference_agrees_on_handwritten_pages() {
    for html in [
        "<title>T &amp; x</title><p>Hello <b>bold</b> w<i>or</i>ld</p><a href='a&amp;b'>x <img alt=y> z</a>",
        "<table><tr><td>a<td>b</table><ul><li>c<li>d</ul><a href=1>e<a href=2>f</a>",
        "<script>if (a < b) { x = '</div>' }</script>after <style>p{}</style><!-- c --> end",
        "<svg><title>s</title><a href=svg.html><text>t</text></a></svg><iframe src=i>no</iframe>ok",
        "<template><a href=t>t</a></template><textarea>ta</textarea><xmp><a href=x></xmp>fine",
        "<meta http-equiv=refresh content='0;url=r.html'><frame src=f.html><map><area href=m alt=M></map>",
    ] {
        let p = page(html);
        let r = reference::extract(html);
        assert_eq!(p.title, r.title.unwrap_or_default(), "{html}");
        assert_eq!(p.links, r.links, "{html}");
        assert_eq!(p.words, r.words, "{html}");
    }
}

/// Every page of every corpus (slow: run by hand with `--ignored`).
#[test]
#[ignore]
fn reference_agrees_on_all_pages() {
    for name in [
        "postgresql-doc-15",
        "rust-doc",
        "llvm-15-doc",
        "llvm-16-doc",
    ] {
        let Some((n, bad)) = agree_with_reference(name, 1) else {
            continue;
        };
        println!("{name}: {n} pages compared, {} differ", bad.len());
        for b in bad.iter().take(20) {
            println!("  {b}");
        }
    }
}

/// HTTP responses of a gzipped WARC file: (Content-Type, body), with
/// chunked transfer coding undone. Just enough WARC for this test (the
/// real reader is `ingest::warc`).
fn warc_responses(path: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let mut data = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).expect("open"))
        .read_to_end(&mut data)
        .expect("gunzip");
    let find = |from: usize, pat: &[u8]| find(&data, from, pat);
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(h) = find(i, b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&data[i..h]).to_string();
        let field = |name: &str| {
            head.lines().find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.trim().to_string())
            })
        };
        let len: usize = field("Content-Length")
            .and_then(|v| v.parse().ok())
            .expect("Content-Length");
        let block = &data[h + 4..h + 4 + len];
        i = h + 4 + len + 4;
        if field("WARC-Type").as_deref() != Some("response") {
            continue;
        }
        let Some(hh) = find_in_slice(block, b"\r\n\r\n") else {
            continue;
        };
        let http = String::from_utf8_lossy(&block[..hh]).to_string();
        let hfield = |name: &str| {
            http.lines().find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.trim().to_string())
            })
        };
        let mut body = block[hh + 4..].to_vec();
        // Some archivers store the body de-chunked but keep the header.
        let looks_chunked = find_in_slice(&body, b"\r\n")
            .is_some_and(|e| e > 0 && e <= 8 && body[..e].iter().all(u8::is_ascii_hexdigit));
        if looks_chunked
            && hfield("Transfer-Encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
        {
            let (mut plain, mut k) = (Vec::new(), 0);
            while let Some(e) = find_in_slice(&body[k..], b"\r\n") {
                let size_line = String::from_utf8_lossy(&body[k..k + e]).to_string();
                let size =
                    usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                        .unwrap_or(0);
                if size == 0 {
                    break;
                }
                let start = k + e + 2;
                plain.extend_from_slice(&body[start..(start + size).min(body.len())]);
                k = start + size + 2;
                if k >= body.len() {
                    break;
                }
            }
            body = plain;
        }
        out.push((hfield("Content-Type").unwrap_or_default(), body));
    }
    out
}

fn find_in_slice(s: &[u8], pat: &[u8]) -> Option<usize> {
    find(s, 0, pat)
}

#[test]
fn iana_warc_responses() {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/data/warc/iana.warc.gz"
    ));
    if !path.exists() {
        println!("skipped: {} not found", path.display());
        return;
    }
    let mut ex = Extractor::new();
    let (mut pages, mut binary) = (0, 0);
    let mut titles = Vec::new();
    for (ctype, body) in warc_responses(path) {
        let charset = ctype
            .split(';')
            .find_map(|p| p.trim().strip_prefix("charset="))
            .map(str::to_string);
        let outcome = ex.extract(&body, charset.as_deref());
        if ctype.starts_with("image/png") || ctype.starts_with("application/octet-stream") {
            // PNG, ICO and web fonts.
            assert!(outcome.is_err(), "{ctype} taken for HTML");
            binary += 1;
            continue;
        }
        // Text (HTML, CSS, JS, SVG) is never rejected.
        let p = outcome.expect("text is not binary");
        check_invariants(p);
        if ctype.starts_with("text/html") && !body.is_empty() {
            pages += 1;
            assert!(!p.title.is_empty() && !p.links.is_empty());
            titles.push(p.title.clone());
            if let Ok(text) = std::str::from_utf8(&body) {
                let r = reference::extract(text);
                assert_eq!(p.title, r.title.unwrap_or_default());
                assert_eq!(p.links, r.links);
                assert_eq!(p.words, r.words);
            }
        }
    }
    println!("iana.warc.gz: {pages} HTML pages, {binary} binary bodies");
    assert!(pages >= 15 && binary >= 5, "{pages} pages, {binary} binary");
    assert!(
        titles
            .iter()
            .any(|t| t == "Internet Assigned Numbers Authority"),
        "{titles:?}"
    );
}

#[test]
fn postgresql_doc_pages() {
    let Some(dir) = corpus("postgresql-doc-15") else {
        return;
    };
    let files = html_files(&dir);
    assert!(files.len() > 1000, "{} pages", files.len());
    let mut ex = Extractor::new();
    let (mut links, mut words, mut without_links) = (0, 0, 0);
    for path in &files {
        let body = std::fs::read(path).expect("read");
        let p = ex.extract(&body, None).expect("html");
        check_invariants(p);
        assert!(!p.title.is_empty(), "{}: no title", path.display());
        if p.links.is_empty() {
            // Only pages without any <a> (legalnotice.html: just <link>s).
            assert!(
                !body.windows(3).any(|w| w.eq_ignore_ascii_case(b"<a ")),
                "{}: no links",
                path.display()
            );
            without_links += 1;
        }
        assert_eq!(
            (p.charset, p.charset_source),
            ("UTF-8", CharsetSource::Meta),
            "{}",
            path.display()
        );
        links += p.links.len();
        words += p.word_count();
    }
    println!(
        "postgresql-doc-15: {} pages, {links} links, {words} words",
        files.len()
    );
    assert!(
        links > 20_000 && words > 1_000_000,
        "{links} links, {words} words"
    );
    assert!(without_links <= 2, "{without_links} pages without links");

    let path = files
        .iter()
        .find(|p| p.ends_with("tutorial-join.html"))
        .expect("tutorial-join.html");
    let p = ex
        .extract(&std::fs::read(path).expect("read"), None)
        .expect("html");
    assert_eq!(p.title, "2.6. Joins Between Tables");
    let first: Vec<&str> = p.words().take(14).collect();
    assert_eq!(
        first,
        [
            "2", "6", "joins", "between", "tables", "prev", "up", "chapter", "2", "the", "sql",
            "language", "home", "next"
        ]
    );
    // Navigation links carry the anchor flag, the <h2> heading has size 5.
    assert_eq!(
        p.flags[5],
        flag::NORMAL_SIZE | flag::CAPITALIZED | flag::ANCHOR
    );
    let heading: Vec<(&str, u8)> = p
        .hits()
        .skip(14)
        .take(5)
        .map(|(w, f)| (w, flag::size(f)))
        .collect();
    assert_eq!(
        heading,
        [
            ("2", 5),
            ("6", 5),
            ("joins", 5),
            ("between", 5),
            ("tables", 5)
        ]
    );
    assert_eq!(
        p.links[0],
        Link {
            kind: LinkKind::A,
            href: "tutorial-select.html".into(),
            anchor: "Prev".into()
        }
    );
    assert!(p
        .links
        .iter()
        .any(|l| l.href == "index.html" && l.anchor == "Home"));
    assert!(p
        .words()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w == ["join", "queries"]));
}

#[test]
fn reference_agrees_on_real_pages() {
    let mut total = 0;
    for (name, step) in [
        ("postgresql-doc-15", 1),
        ("rust-doc", 100),
        ("llvm-16-doc", 8),
    ] {
        let Some((n, bad)) = agree_with_reference(name, step) else {
            continue;
        };
        println!("{name}: {n} pages compared, {} differ", bad.len());
        for b in bad.iter().take(10) {
            println!("  {b}");
        }
        assert!(
            bad.is_empty(),
            "{name}: {} of {n} pages differ from the lol_html reference",
            bad.len()
        );
        total += n;
    }
    println!("{total} real pages agree with the lol_html reference");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..600),
                                   header in proptest::option::of("[a-zA-Z0-9_-]{0,12}")) {
        let mut ex = Extractor::new();
        if let Ok(p) = ex.extract(&body, header.as_deref()) {
            check_invariants(p);
        }
    }

    #[test]
    fn html_like_soup_never_panics(parts in proptest::collection::vec(prop_oneof![
        Just("<".to_string()), Just(">".to_string()), Just("</".to_string()), Just("/>".to_string()),
        Just("&".to_string()), Just(";".to_string()), Just("#x".to_string()), Just("'".to_string()),
        Just("\"".to_string()), Just("=".to_string()), Just(" ".to_string()), Just("<!--".to_string()),
        Just("-->".to_string()), Just("<![CDATA[".to_string()), Just("]]>".to_string()),
        Just("<a href=".to_string()), Just("</a>".to_string()), Just("<img alt=".to_string()),
        Just("<script>".to_string()), Just("</script>".to_string()), Just("<title>".to_string()),
        Just("</title>".to_string()), Just("<svg>".to_string()), Just("</svg>".to_string()),
        Just("<template>".to_string()), Just("<h1>".to_string()), Just("<small>".to_string()),
        Just("<meta http-equiv=refresh content='0;url=".to_string()), Just("<base href=".to_string()),
        Just("<meta charset=".to_string()), Just("<plaintext>".to_string()), Just("amp".to_string()),
        Just("copy".to_string()), Just("<area href=".to_string()), Just("<frame src=".to_string()),
        "[a-zA-Zé東0-9 ]{0,8}",
    ], 0..60)) {
        let html = parts.concat();
        let mut ex = Extractor::new();
        if let Ok(p) = ex.extract(html.as_bytes(), None) {
            check_invariants(p);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// A read stopped after `max` words is the full read's beginning: its
    /// first words and their flags, links and text so far, and it says it
    /// was cut exactly when the page has more words.
    #[test]
    fn reading_stops_at_max_words_with_the_pages_beginning(parts in proptest::collection::vec(prop_oneof![
        Just("<b>".to_string()), Just("</b>".to_string()), Just("<p>".to_string()),
        Just("&amp;".to_string()), Just("&eacute;".to_string()), Just(" ".to_string()),
        Just("<a href=x>".to_string()), Just("</a>".to_string()), Just("<h1>".to_string()),
        Just("</h1>".to_string()), Just("<script>x y</script>".to_string()),
        Just("<title>".to_string()), Just("</title>".to_string()),
        "[a-zA-Zé東0-9 ]{0,8}",
    ], 0..60), max in 0usize..24) {
        let html = parts.concat();
        let mut ex = Extractor::new();
        ex.set_keep_text(true);
        let full = ex.extract(html.as_bytes(), None).expect("html").clone();
        ex.set_max_words(Some(max));
        let cut = ex.extract(html.as_bytes(), None).expect("html").clone();
        check_invariants(&cut);
        prop_assert!(!full.words_cut);
        prop_assert_eq!(cut.words_cut, full.word_count() > cut.word_count());
        prop_assert_eq!(cut.word_count(), full.word_count().min(max));
        prop_assert_eq!(&cut.flags[..], &full.flags[..cut.word_count()]);
        prop_assert_eq!(words(&cut), &words(&full)[..cut.word_count()]);
        prop_assert!(full.text.starts_with(&cut.text));
        prop_assert!(cut.links.len() <= full.links.len());
        for (a, b) in cut.links.iter().zip(&full.links) {
            prop_assert_eq!(&a.href, &b.href);
        }
        // The extractor reads the next page whole again.
        ex.set_max_words(None);
        prop_assert_eq!(&ex.extract(html.as_bytes(), None).expect("html").words, &full.words);
    }
}

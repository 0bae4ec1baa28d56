//! The HTML extractor on arbitrary bodies, with and without a header
//! charset and a link limit: never panics; one flag byte per word, at most
//! the limit of links, words and anchors within their documented caps.

use webmill::ingest::html::{Extractor, MAX_ANCHOR_BYTES, MAX_TITLE_BYTES, MAX_WORD_BYTES};

/// The check: panics on a violated property, returns on anything else.
pub fn check(data: &[u8]) {
    let (charset, body) = match data.split_first() {
        Some((b, rest)) if b % 4 == 1 => (Some("windows-1252"), rest),
        Some((b, rest)) if b % 4 == 2 => (Some("shift_jis"), rest),
        Some((b, rest)) if b % 4 == 3 => (Some("utf-16le"), rest),
        _ => (None, data),
    };
    let mut ex = Extractor::new();
    ex.set_max_links(16);
    if let Ok(page) = ex.extract(body, charset) {
        assert_eq!(page.words().count(), page.flags.len());
        assert!(page.words().all(|w| w.len() <= MAX_WORD_BYTES));
        assert!(page.title.len() <= MAX_TITLE_BYTES);
        assert!(page.links.len() <= 16);
        assert!(page
            .links
            .iter()
            .all(|l| l.anchor.len() <= MAX_ANCHOR_BYTES));
    }
}

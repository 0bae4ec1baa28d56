//! One fetched page → what ingest keeps of it: the page record, its token
//! stream, its body for the repository and its links, resolved and normalized.

use url::Url;

use crate::ingest::html::{Extractor, LinkKind as HtmlLinkKind, MAX_HREF_BYTES};
use crate::ingest::records::{self, LinkKind, PageRec};
use crate::input::SkipKind;
use crate::url::{self as wurl, UrlVerdict};

/// Cuts made to a kept page: each with its kind and what was cut.
pub type Cuts = Vec<(SkipKind, String)>;

/// What one page yields (payloads ready for the page files).
#[derive(Default)]
pub struct PageOut {
    /// The `pages` payload.
    pub page: Vec<u8>,
    /// The `text` payload (absent when the page had no HTML).
    pub text: Option<Vec<u8>>,
    /// The `repo` payload.
    pub repo: Vec<u8>,
    /// The `links` payloads.
    pub links: Vec<Vec<u8>>,
    /// Body bytes (for figures).
    pub body_bytes: u64,
    /// Links dropped: not http(s)/file, unparsable, or too long.
    pub dropped_links: u64,
    /// What was cut from the page (it is kept): links beyond the per-page
    /// limit, links whose URL is too long; each with a detail for the report.
    pub cuts: Cuts,
}

/// A page to process: its URL (normalized), HTTP status (0 for files), date,
/// content type, charset from the HTTP header, body, and a redirect target.
pub struct Fetched<'a> {
    /// The normalized URL.
    pub url: &'a str,
    /// HTTP status, 0 for files from a directory.
    pub status: u16,
    /// WARC-Date, or empty.
    pub date: &'a str,
    /// Content-Type (or a type guessed from the file name).
    pub content_type: &'a str,
    /// The charset parameter of the HTTP Content-Type, if any.
    pub charset: Option<&'a str>,
    /// The body (HTML).
    pub body: &'a [u8],
    /// `Location` of a redirect, if any.
    pub location: Option<&'a str>,
}

/// Why a page was not kept.
#[derive(Debug)]
pub struct NotHtml {
    /// As a kind, for the figures and the skip report.
    pub kind: SkipKind,
    /// For a person.
    pub reason: String,
}

/// Caps on what is kept of a page.
const MAX_ANCHOR_BYTES: usize = 256;

/// Resolves and encodes a page's links into its [`PageOut`], counting what
/// it drops: links to other schemes, unparsable or too long URLs (the
/// `link-url-too-long` cut, reported by [`LinkSink::finish`]).
#[derive(Default)]
struct LinkSink {
    too_long: u64,
    longest: usize,
}

impl LinkSink {
    /// Resolves `href` against `base` and keeps the link, its anchor cut at
    /// [`MAX_ANCHOR_BYTES`] (at a character boundary).
    fn push(&mut self, out: &mut PageOut, base: &Url, kind: LinkKind, href: &str, anchor: &str) {
        match wurl::resolve_checked(base, href) {
            UrlVerdict::Kept(target) => {
                let mut anchor = anchor;
                if anchor.len() > MAX_ANCHOR_BYTES {
                    let mut end = MAX_ANCHOR_BYTES;
                    while !anchor.is_char_boundary(end) {
                        end -= 1;
                    }
                    anchor = &anchor[..end];
                }
                let mut p = Vec::with_capacity(target.len() + anchor.len() + 4);
                records::encode_link(kind, &target, anchor, &mut p);
                out.links.push(p);
            }
            UrlVerdict::TooLong(n) => {
                out.dropped_links += 1;
                self.too_long += 1;
                self.longest = self.longest.max(n);
            }
            UrlVerdict::NotWeb => out.dropped_links += 1,
        }
    }

    /// Counts `n` hrefs dropped before resolution for being over
    /// [`MAX_HREF_BYTES`].
    fn hrefs_dropped(&mut self, out: &mut PageOut, n: u64) {
        if n > 0 {
            self.too_long += n;
            self.longest = self.longest.max(MAX_HREF_BYTES + 1);
            out.dropped_links += n;
        }
    }

    /// Reports the links dropped for their length as a cut of the page.
    fn finish(self, out: &mut PageOut) {
        if self.too_long > 0 {
            out.cuts.push((
                SkipKind::LinkUrlTooLong,
                format!(
                    "{} links dropped: their URLs are longer than {} bytes (the longest {}{})",
                    self.too_long,
                    wurl::MAX_URL_BYTES,
                    self.longest,
                    if self.longest > MAX_HREF_BYTES {
                        " or more"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
}

/// Processes one fetched page with `ex` (reused across pages).
pub fn process(ex: &mut Extractor, f: &Fetched<'_>) -> Result<PageOut, NotHtml> {
    let page_url = Url::parse(f.url).map_err(|e| NotHtml {
        kind: SkipKind::NotWeb,
        reason: format!("bad page URL: {e}"),
    })?;
    let mut out = PageOut {
        body_bytes: f.body.len() as u64,
        ..PageOut::default()
    };
    let mut rec = PageRec {
        url: f.url.to_string(),
        bytes: f.body.len() as u64,
        status: f.status,
        date: f.date.to_string(),
        title: String::new(),
    };
    let mut links = LinkSink::default();
    if let Some(loc) = f.location {
        links.push(&mut out, &page_url, LinkKind::Redirect, loc, "");
    }
    if !f.body.is_empty() && !(300..400).contains(&f.status) {
        let page = ex.extract(f.body, f.charset).map_err(|e| NotHtml {
            kind: SkipKind::Binary,
            reason: e.to_string(),
        })?;
        rec.title = page.title.clone();
        let base = page
            .base_href
            .as_deref()
            .and_then(|b| page_url.join(b.trim()).ok())
            .unwrap_or_else(|| page_url.clone());
        for link in &page.links {
            let kind = match link.kind {
                HtmlLinkKind::A | HtmlLinkKind::Area => LinkKind::Anchor,
                HtmlLinkKind::Frame | HtmlLinkKind::Iframe => LinkKind::Frame,
                HtmlLinkKind::MetaRefresh => LinkKind::Refresh,
            };
            links.push(&mut out, &base, kind, &link.href, &link.anchor);
        }
        if page.links_cut > 0 {
            out.cuts.push((
                SkipKind::LinksCut,
                format!(
                    "{} links kept, {} more dropped: the per-page limit under this --mem",
                    page.links.len(),
                    page.links_cut
                ),
            ));
        }
        links.hrefs_dropped(&mut out, u64::from(page.hrefs_dropped));
        let mut text = Vec::with_capacity(page.words.len() + page.flags.len() + 8);
        records::encode_text(&page.words, &page.flags, &mut text);
        out.text = Some(text);
    }
    links.finish(&mut out);
    rec.encode(&mut out.page);
    records::encode_repo(f.content_type, f.body, &mut out.repo);
    Ok(out)
}

/// A page that is already text: a WET `conversion` record.
pub struct TextPage<'a> {
    /// The normalized URL.
    pub url: &'a str,
    /// Capture date, or empty.
    pub date: &'a str,
    /// The title, when the input gives one.
    pub title: &'a str,
    /// The media type kept in the repository.
    pub content_type: &'a str,
    /// The text (UTF-8; invalid bytes are replaced by U+FFFD).
    pub text: &'a [u8],
}

/// Processes a page that is already text: its words by the tokenizer's rules
/// for plain text ([`crate::ingest::html::tokenize`]: normal font size, the
/// capitalized bit), no links, the text itself in the repository. The
/// status is 0 (no HTTP response was kept).
pub fn text(f: &TextPage<'_>) -> PageOut {
    let text = String::from_utf8_lossy(f.text);
    let mut words = String::new();
    let mut flags = Vec::new();
    crate::ingest::html::tokenize(&text, &mut words, &mut flags);
    let mut encoded = Vec::with_capacity(words.len() + flags.len() + 8);
    records::encode_text(&words, &flags, &mut encoded);
    let mut out = PageOut {
        body_bytes: f.text.len() as u64,
        text: Some(encoded),
        ..PageOut::default()
    };
    PageRec {
        url: f.url.to_string(),
        bytes: f.text.len() as u64,
        status: 0,
        date: f.date.to_string(),
        title: f.title.to_string(),
    }
    .encode(&mut out.page);
    records::encode_repo(f.content_type, f.text, &mut out.repo);
    out
}

/// A link as a metadata record gives it: not resolved yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawLink {
    /// What kind of element it came from.
    pub kind: LinkKind,
    /// The href as written in the page (trimmed).
    pub href: String,
    /// The anchor text.
    pub anchor: String,
}

/// A page known only by its metadata (a WAT record): title and links, no
/// body.
pub struct MetaPage<'a> {
    /// The normalized URL.
    pub url: &'a str,
    /// HTTP status.
    pub status: u16,
    /// Capture date, or empty.
    pub date: &'a str,
    /// The HTTP Content-Type, kept in the repository.
    pub content_type: &'a str,
    /// The title.
    pub title: &'a str,
    /// `<base href>`, if any.
    pub base: Option<&'a str>,
    /// `Location` of a redirect, if any.
    pub location: Option<&'a str>,
    /// The links, in page order, already within the per-page limit.
    pub links: &'a [RawLink],
    /// Hrefs dropped for being longer than [`MAX_HREF_BYTES`].
    pub hrefs_dropped: u64,
}

/// Processes a page known by its metadata: the page record (its title; 0
/// bytes, as no body is held), no token stream, an empty body in the
/// repository under the response's content type, and its links resolved
/// against `<base href>` (or the page URL) exactly as
/// [`process`] resolves an HTML page's.
pub fn metadata(f: &MetaPage<'_>) -> Result<PageOut, NotHtml> {
    let page_url = Url::parse(f.url).map_err(|e| NotHtml {
        kind: SkipKind::NotWeb,
        reason: format!("bad page URL: {e}"),
    })?;
    let mut out = PageOut::default();
    let mut links = LinkSink::default();
    if let Some(loc) = f.location {
        links.push(&mut out, &page_url, LinkKind::Redirect, loc, "");
    }
    let base = f
        .base
        .and_then(|b| page_url.join(b.trim()).ok())
        .unwrap_or_else(|| page_url.clone());
    for l in f.links {
        links.push(&mut out, &base, l.kind, &l.href, &l.anchor);
    }
    links.hrefs_dropped(&mut out, f.hrefs_dropped);
    links.finish(&mut out);
    PageRec {
        url: f.url.to_string(),
        bytes: 0,
        status: f.status,
        date: f.date.to_string(),
        title: f.title.to_string(),
    }
    .encode(&mut out.page);
    records::encode_repo(f.content_type, b"", &mut out.repo);
    Ok(out)
}

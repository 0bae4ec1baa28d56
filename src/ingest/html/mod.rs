//! Extracting what a search engine needs from one HTML page: charset, title,
//! the visible words with their hit flags, and the outgoing links with anchor
//! text.
//!
//! [`Extractor::extract`] takes the raw HTTP body and returns a [`Page`] (or
//! [`NotHtml`] for binary junk). It never panics, whatever the bytes; its memory
//! is bounded by a small multiple of the page size, and an `Extractor` reused
//! across pages keeps its buffers, so steady-state extraction allocates little.
//!
//! # Why a tokenizer of our own
//!
//! The first choice was `lol_html` (a streaming rewriter), measured first. On
//! the rust-doc corpus (32,101 pages, 478 MB), one core, it reached 90 MB/s with
//! only a document text handler copying the text out, and 45 MB/s of CPU time
//! once the element handlers needed to follow bold, headings and anchors were
//! added (an end-tag handler per element, the `href` of each `a`), before any
//! word or link work: below the 50 MB/s/core goal. `lol_html` also hands out
//! text and attribute values undecoded, so we would have needed our own
//! character-reference decoder anyway. This module therefore has its own
//! streaming tokenizer that follows the WHATWG tokenizer in the states that
//! matter for extraction (data, tag open, tag and attribute names, attribute
//! values quoted and unquoted, comments, `<!DOCTYPE>`, bogus comments, CDATA in
//! SVG/MathML, RCDATA for `title`/`textarea`, raw text for `script`, `style`,
//! `xmp`, `iframe`, `noembed`, `noframes`, `noscript`, and `plaintext`), plus a
//! tiny open-element stack instead of a tree builder. With the full extraction
//! it does 190–225 MB/s of CPU time on the same corpus (`cargo bench --bench
//! html -- --baseline` prints both). The tests compare its title, links (with
//! anchor text) and words with a `lol_html`-based reference: identical on all
//! 35,498 pages of the four Debian doc trees and on the HTML of a real 2014
//! crawl of iana.org.
//!
//! Known simplifications against a browser: the script-data escape states
//! (`<!--<script>` inside a script) are not followed (a script ends at the
//! first `</script`); there is no tree builder, so misnested formatting is
//! resolved by popping the open-element stack to the matching element (close to
//! what the adoption agency does for real pages) and the stray-HTML "breakout" of
//! SVG content is not done; `<font size>` and CSS are ignored.
//!
//! # Charset
//!
//! In the order of the WHATWG encoding sniffing algorithm: a byte order mark
//! (UTF-8, UTF-16LE/BE) wins; then the `charset` parameter of the HTTP
//! `Content-Type` header (`header_charset`), if it is a label `encoding_rs`
//! knows; then the `<meta charset>` / `<meta http-equiv=Content-Type
//! content="…; charset=…">` prescan of the first 1024 bytes (a declared UTF-16
//! there means UTF-8, `x-user-defined` means windows-1252, as the spec says);
//! otherwise UTF-8. Invalid bytes decode to U+FFFD. [`Page::charset`] is the
//! name of the encoding used and [`Page::charset_source`] where it came from.
//! (The BOM is put before the header because that is what browsers do: a page
//! with a UTF-8 BOM is displayed as UTF-8 whatever the server says.)
//!
//! # Not HTML
//!
//! A body that starts with a known binary signature (PNG, GIF, JPEG, PDF, gzip,
//! zip, zstd, bzip2, 7z, ELF, WebAssembly, RIFF, Ogg, MP3/ID3, Matroska, ICO, MP4)
//! is rejected with [`NotHtml::Signature`]. For ASCII-compatible encodings the
//! first KiB is also sampled: 4 or more NUL bytes, or more than 10% C0 control
//! bytes other than TAB, LF, FF, CR and ESC (ESC is legal in ISO-2022-JP), give
//! [`NotHtml::ControlBytes`]. Plain text without tags is *not* rejected: its
//! words are extracted as if it were the body of a page.
//!
//! # Words and their flags
//!
//! A word is a maximal run of characters with [`char::is_alphanumeric`] (letters
//! and digits of every script; underscores, apostrophes, hyphens and all other
//! punctuation separate words: `don't` gives `don` `t`, `as_str` gives `as`
//! `str`). Words are lowercased with [`char::to_lowercase`] and cut to
//! [`MAX_WORD_BYTES`] bytes (at a character boundary; the rest of the run is
//! dropped, not made into a second word). Scripts without spaces (Chinese,
//! Japanese, Thai) are not segmented: a run is one word, cut at the limit.
//! Words are kept in [`Page::words`], separated by single spaces, and their flags
//! in [`Page::flags`], one byte per word; the position of a word is its index.
//!
//! Tags break words, except the inline ones that do not break a line in a
//! browser (`abbr acronym b bdi bdo big cite code data del dfn em font i ins kbd
//! label mark q s samp small span strike strong sub sup time tt u var wbr`), so
//! `x<sup>2</sup>` is the word `x2` and `a<br>b` two words. `<a>` and `</a>`
//! break words although `a` is inline: adjacent links are separate items (menus
//! styled by CSS), and a word is then wholly inside or outside an anchor.
//! Comments do not break words. Character references are decoded first (`caf&eacute;` is one
//! word; `&nbsp;` separates).
//!
//! Visible text is everything outside `script`, `style`, `template`, `noscript`,
//! `noembed`, `noframes`, `xmp`, `iframe`, `textarea`, `title` and `svg` (icons;
//! their `<title>` is a tooltip, not the page's). Text inside `<head>` that is
//! not in one of these is visible (a browser moves it into the body). The text
//! of `<title>` goes to [`Page::title`], not to the words; `alt` text of images
//! goes only to anchor text. MathML text is visible.
//!
//! The flag byte of a word, after Brin & Page's hit encoding (see [`flag`]):
//! bits 0–2 the font size 0..=6, bit 3 capitalized (the first character of the
//! word as written is uppercase), bit 4 bold (inside `b` or `strong`), bit 5
//! inside the anchor of a link. The font size is that of the heading the word is
//! in (`h1` 6, `h2` 5, `h3` 4, `h4` 3, `h5` 2, `h6` 2; outside headings 1), plus
//! one per enclosing `big`, minus one per enclosing `small`, clamped to 0..=6.
//! So normal text is 1, `<small>` text 0, and `<h1><big>` text 6. The flags
//! are taken when a word starts.
//!
//! # Links
//!
//! [`Link`]s are returned in document order with their [`LinkKind`]: `<a href>`
//! and `<area href>` (anchor text: for `a`, the visible text inside the element
//! plus the `alt` of images in it; for `area`, its `alt`), `<frame src>`,
//! `<iframe src>`, and the URL of `<meta http-equiv=refresh content="5;
//! url=…">`. Anchor text has its whitespace collapsed (control characters count
//! as whitespace) and is cut at [`MAX_ANCHOR_BYTES`]; tags that break words put a
//! space in it. Attribute values are decoded (character references, with the
//! attribute rules for legacy references without `;`), then ASCII whitespace and
//! C0 controls are trimmed at both ends. Nothing is resolved or filtered here:
//! `javascript:`, `mailto:`, empty and fragment-only hrefs are all returned raw,
//! and the caller resolves them against [`Page::base_href`] (the first
//! `<base href>`) or the page URL and decides what to keep. Hrefs longer than
//! [`MAX_HREF_BYTES`] (huge `data:` URLs) are dropped and counted in
//! [`Page::hrefs_dropped`]. Links inside `<template>` are ignored. A new `<a>`
//! closes an open one.
//!
//! `<meta name=robots content=…>` sets [`Page::noindex`] / [`Page::nofollow`]
//! (`none` sets both).
//!
//! # Character references
//!
//! Numeric references (decimal and hex, `;` optional) with the spec's fixes
//! (0, surrogates and values past U+10FFFF give U+FFFD; 0x80–0x9F are read as
//! windows-1252). Named references: the 252 of HTML 4, `&apos;`, the HTML 5
//! names of ASCII punctuation (`&lpar;`, `&colon;`, …) and the uppercase
//! `&AMP; &LT; &GT; &QUOT; &COPY; &REG;`. The legacy names (those of Latin-1) are
//! also recognized without `;`, by longest prefix, except in an attribute value
//! when followed by `=` or an alphanumeric (so `?a=1&copy=2` stays as written).
//! Unknown references are left as written.
//!
//! # Example
//!
//! ```
//! use webmill::ingest::html::{Extractor, LinkKind};
//! let mut ex = Extractor::new();
//! let page = ex
//!     .extract(b"<title>Hi</title><h1>Big News</h1><a href='/x?a=1&amp;b=2'>more <b>here</b></a>", None)
//!     .unwrap();
//! assert_eq!(page.title, "Hi");
//! assert_eq!(page.words().collect::<Vec<_>>(), ["big", "news", "more", "here"]);
//! assert_eq!(page.links[0].kind, LinkKind::A);
//! assert_eq!(page.links[0].href, "/x?a=1&b=2");
//! assert_eq!(page.links[0].anchor, "more here");
//! ```
//!
//! # Layout
//!
//! This file holds the public API and the extraction state ([`Extractor`]
//! owns one `Sink`, reset for each page); the submodules implement it:
//!
//! - `sniff`: binary signatures, control bytes, the charset (BOM, header,
//!   `<meta>` prescan) and decoding to UTF-8;
//! - `tokenizer`: the byte classes, the tokenizer states, the raw-text
//!   elements and the open-element stack;
//! - `entities`: character references;
//! - `words`: words and their flag bytes, and whitespace-collapsed text
//!   (title, anchor text);
//! - `links`: links, anchor text, `<meta>` refresh and robots.

use encoding_rs::{Encoding, UTF_8};

mod classes;
mod entities;
mod links;
mod sniff;
#[cfg(test)]
mod tests;
mod tokenizer;
mod words;

pub use links::{refresh_url, trim_url};
use sniff::{binary_signature, check_control_bytes, decode, sniff_charset};
use tokenizer::{Attr, Tag};
use words::{Collapse, WordState};

/// Longest title kept, in bytes (cut at a character boundary).
pub const MAX_TITLE_BYTES: usize = 1024;
/// Longest word kept, in bytes (cut at a character boundary).
pub const MAX_WORD_BYTES: usize = 64;
/// Longest anchor text kept, in bytes (cut at a character boundary).
pub const MAX_ANCHOR_BYTES: usize = 256;
/// Hrefs longer than this, in bytes, are dropped (and counted in
/// [`Page::hrefs_dropped`]): the longest URL ingest keeps.
pub const MAX_HREF_BYTES: usize = crate::ingest::url::MAX_URL_BYTES;
/// How many bytes the `<meta charset>` prescan and the binary sniffing look at.
pub const SNIFF_BYTES: usize = 1024;

/// The bits of a word's flag byte in [`Page::flags`].
pub mod flag {
    /// Bits 0–2: font size 0..=6 (1 is normal text).
    pub const SIZE_MASK: u8 = 0b111;
    /// Font size of normal text.
    pub const NORMAL_SIZE: u8 = 1;
    /// The first character of the word as written is uppercase.
    pub const CAPITALIZED: u8 = 1 << 3;
    /// The word is inside `<b>` or `<strong>`.
    pub const BOLD: u8 = 1 << 4;
    /// The word is inside the anchor (`<a href>`) of a link.
    pub const ANCHOR: u8 = 1 << 5;

    /// The font size (0..=6) in a flag byte.
    pub fn size(flags: u8) -> u8 {
        flags & SIZE_MASK
    }
}

/// What kind of element a [`Link`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkKind {
    /// `<a href>`.
    A,
    /// `<area href>` of an image map.
    Area,
    /// `<frame src>`.
    Frame,
    /// `<iframe src>`.
    Iframe,
    /// The URL of `<meta http-equiv=refresh content="N; url=…">`.
    MetaRefresh,
}

impl LinkKind {
    /// A short lowercase name (`a`, `area`, `frame`, `iframe`, `refresh`).
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::A => "a",
            LinkKind::Area => "area",
            LinkKind::Frame => "frame",
            LinkKind::Iframe => "iframe",
            LinkKind::MetaRefresh => "refresh",
        }
    }
}

/// One outgoing link of a page, unresolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// Where the link comes from.
    pub kind: LinkKind,
    /// The attribute value, decoded and trimmed, not resolved.
    pub href: String,
    /// Anchor text, whitespace collapsed, at most [`MAX_ANCHOR_BYTES`] bytes;
    /// empty for frames and refreshes.
    pub anchor: String,
}

/// Where the charset of a page was taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CharsetSource {
    /// A byte order mark.
    Bom,
    /// The charset given by the caller from the HTTP `Content-Type` header.
    Header,
    /// A `<meta>` in the first [`SNIFF_BYTES`] bytes.
    Meta,
    /// Nothing said: UTF-8.
    Default,
}

/// Why a body was not parsed as HTML.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotHtml {
    /// The body starts with the signature of a binary format.
    #[error("not HTML: starts with the signature of {0}")]
    Signature(&'static str),
    /// Too many NUL or control bytes in the first [`SNIFF_BYTES`] bytes.
    #[error("not HTML: {nul} NUL and {control} other control bytes in the first {sampled} bytes")]
    ControlBytes {
        /// NUL bytes seen.
        nul: u32,
        /// Other C0 control bytes seen (not TAB, LF, FF, CR, ESC).
        control: u32,
        /// Bytes sampled.
        sampled: u32,
    },
}

/// What was extracted from one page. See the [module docs](self) for the rules.
#[derive(Clone, Debug)]
pub struct Page {
    /// Text of the first `<title>` outside SVG, entities decoded, whitespace
    /// collapsed, at most [`MAX_TITLE_BYTES`] bytes; empty if none.
    pub title: String,
    /// The visible words, lowercased, separated by single spaces.
    pub words: String,
    /// One flag byte per word (see [`flag`]).
    pub flags: Vec<u8>,
    /// Outgoing links in document order.
    pub links: Vec<Link>,
    /// The `href` of the first `<base href>`, decoded and trimmed.
    pub base_href: Option<String>,
    /// Name of the encoding the body was decoded with (`encoding_rs` name, e.g.
    /// `UTF-8`, `windows-1252`, `Shift_JIS`).
    pub charset: &'static str,
    /// Where [`Page::charset`] came from.
    pub charset_source: CharsetSource,
    /// Decoding met malformed bytes and replaced them with U+FFFD.
    pub had_replacements: bool,
    /// `<meta name=robots>` says `noindex` (or `none`).
    pub noindex: bool,
    /// `<meta name=robots>` says `nofollow` (or `none`).
    pub nofollow: bool,
    /// Links dropped because their href was longer than [`MAX_HREF_BYTES`].
    pub hrefs_dropped: u32,
    /// Links dropped because the page already had
    /// [`Extractor::set_max_links`] links.
    pub links_cut: u64,
    /// With [`Extractor::set_keep_text`]: the visible text as written
    /// (entities decoded, whitespace collapsed to single spaces, a space
    /// where a tag separates words), at most [`MAX_KEPT_TEXT`] bytes; its
    /// words are [`Page::words`]. Empty otherwise.
    pub text: String,
    /// With [`Extractor::set_max_words`]: reading stopped there, and the
    /// page has more words.
    pub words_cut: bool,
}

/// Most bytes of visible text kept by [`Extractor::set_keep_text`].
pub const MAX_KEPT_TEXT: usize = 1 << 20;

/// `text` as the extractor keeps a title or an anchor text: runs of
/// whitespace and control characters collapsed to one space, trimmed, cut at
/// `cap` bytes (at a character boundary). Its own output is left unchanged.
pub fn collapse(text: &str, cap: usize) -> String {
    let mut out = String::new();
    Collapse::default().push(&mut out, cap, text);
    out
}

impl Default for Page {
    fn default() -> Page {
        Page {
            title: String::new(),
            words: String::new(),
            flags: Vec::new(),
            links: Vec::new(),
            base_href: None,
            charset: UTF_8.name(),
            charset_source: CharsetSource::Default,
            had_replacements: false,
            noindex: false,
            nofollow: false,
            hrefs_dropped: 0,
            links_cut: 0,
            text: String::new(),
            words_cut: false,
        }
    }
}

impl Page {
    /// The words in order; the n-th is at position n and has flags `flags[n]`.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.words.split_ascii_whitespace()
    }

    /// The words with their flag bytes.
    pub fn hits(&self) -> impl Iterator<Item = (&str, u8)> {
        self.words().zip(self.flags.iter().copied())
    }

    /// Number of words.
    pub fn word_count(&self) -> usize {
        self.flags.len()
    }
}

/// Appends the words of `text` to `words` (space-separated, lowercased) and
/// their flags to `flags`, with the same rules as the page words; the flags
/// have the normal font size and the capitalized bit. For the title and anchor
/// texts, which the indexer wants as words too.
pub fn tokenize(text: &str, words: &mut String, flags: &mut Vec<u8>) {
    let mut w = WordState::default();
    w.feed::<false>(text, 0, words, flags, flag::NORMAL_SIZE);
}

/// Turns page bodies into [`Page`]s, keeping its buffers from page to page.
///
/// One per thread (it is `Send`): the returned [`Page`] borrows the extractor
/// and is overwritten by the next call, so copy out what must outlive it.
#[derive(Default)]
pub struct Extractor {
    decoded: String,
    sink: Sink,
}

impl Extractor {
    /// A new extractor.
    pub fn new() -> Extractor {
        Extractor::default()
    }

    /// Keeps at most `n` links of a page; the others are counted in
    /// [`Page::links_cut`] (so that a page of a million links costs what its
    /// first `n` cost; see [`crate::ingest::limits`]).
    pub fn set_max_links(&mut self, n: usize) {
        self.sink.max_links = Some(n);
    }

    /// Keeps only a page's first `n` words (`None`: all of them), and stops
    /// reading at the first tag or entity after its word `n + 1` begins,
    /// saying so in [`Page::words_cut`]: a snippet looks for its window in
    /// a page's beginning before reading a page of megabytes to its end.
    /// The words kept are those a full read gives first, with their flags;
    /// the title, links and text are those read so far.
    pub fn set_max_words(&mut self, n: Option<usize>) {
        self.sink.max_words = n;
    }

    /// Also keeps the page's visible text as written ([`Page::text`]), for
    /// snippets in the page's own case and punctuation.
    pub fn set_keep_text(&mut self, keep: bool) {
        self.sink.keep_text = keep;
    }

    /// Extracts title, words and links from `body`, the bytes of one page.
    /// `header_charset` is the `charset` parameter of the HTTP `Content-Type`
    /// header, if any (unknown labels are ignored). Returns [`NotHtml`] for
    /// binary bodies. Never panics.
    pub fn extract(&mut self, body: &[u8], header_charset: Option<&str>) -> Result<&Page, NotHtml> {
        self.sink.reset();
        if let Some(kind) = binary_signature(body) {
            return Err(NotHtml::Signature(kind));
        }
        let (enc, source, bom_len) = sniff_charset(body, header_charset);
        let body = body.get(bom_len..).unwrap_or_default();
        if enc.is_ascii_compatible() {
            check_control_bytes(body)?;
        }
        let page = &mut self.sink.page;
        page.charset = enc.name();
        page.charset_source = source;
        let text: &str = if enc == UTF_8 {
            match std::str::from_utf8(body) {
                Ok(s) => s,
                Err(_) => {
                    page.had_replacements = decode(enc, body, &mut self.decoded);
                    &self.decoded
                }
            }
        } else if enc.is_ascii_compatible() && Encoding::ascii_valid_up_to(body) == body.len() {
            // Pure ASCII reads the same in every ASCII-compatible encoding
            // except ISO-2022-JP, which is not ASCII-compatible for encoding_rs.
            std::str::from_utf8(body).unwrap_or_default()
        } else {
            page.had_replacements = decode(enc, body, &mut self.decoded);
            &self.decoded
        };
        self.sink.run(text);
        Ok(&self.sink.page)
    }
}

/// The state of one extraction, reused across pages.
#[derive(Default)]
struct Sink {
    page: Page,
    /// Most links kept (unlimited when `None`).
    max_links: Option<usize>,
    /// Words after which reading stops (all when `None`).
    max_words: Option<usize>,
    spare: Vec<Link>,
    stack: Vec<Tag>,
    attrs: Vec<Attr>,
    scratch: String,
    word: WordState,
    bold: u32,
    big: u32,
    small: u32,
    heading: u8,
    a_open: u32,
    template: u32,
    svg: u32,
    foreign: u32,
    /// Index in `page.links` of the link whose anchor text is being collected.
    anchor: Option<usize>,
    anchor_text: Collapse,
    /// Keep the visible text ([`Page::text`]).
    keep_text: bool,
    visible_text: Collapse,
    title_seen: bool,
}

impl Sink {
    fn reset(&mut self) {
        let p = &mut self.page;
        p.title.clear();
        p.words.clear();
        p.flags.clear();
        self.spare.append(&mut p.links);
        p.base_href = None;
        p.charset = UTF_8.name();
        p.charset_source = CharsetSource::Default;
        p.had_replacements = false;
        p.noindex = false;
        p.nofollow = false;
        p.hrefs_dropped = 0;
        p.links_cut = 0;
        p.words_cut = false;
        self.stack.clear();
        self.attrs.clear();
        self.word = WordState::default();
        self.bold = 0;
        self.big = 0;
        self.small = 0;
        self.heading = 0;
        self.a_open = 0;
        self.template = 0;
        self.svg = 0;
        self.foreign = 0;
        self.anchor = None;
        self.anchor_text = Collapse::default();
        p.text.clear();
        self.visible_text = Collapse::default();
        self.title_seen = false;
    }
}

//! The streaming tokenizer and its open-element stack.
//!
//! It follows the WHATWG tokenizer in the states that matter for extraction:
//! data, tag open, tag and attribute names, attribute values quoted and
//! unquoted, comments, `<!DOCTYPE>`, bogus comments, CDATA in SVG/MathML,
//! RCDATA for `title`/`textarea`, and raw text for `script`, `style`, `xmp`,
//! `iframe`, `noembed`, `noframes`, `noscript` and `plaintext` (skipped to
//! their end tag). Instead of a tree builder, a small stack of the open
//! elements that change a word's flags or visibility ([`Tag`]), with counters
//! per kind. Bytes are classified by one table ([`class`]), also used by the
//! charset prescan and the word splitter. See the [module docs](super) for
//! what is simplified against a browser.

use super::classes::{class, is_space, C_ATTR_END, C_NAME_END, C_VALUE_END};
use super::entities::{char_ref, decode_refs};
use super::links::trim_url;
use super::words::Collapse;
use super::{LinkKind, Sink, MAX_ANCHOR_BYTES, MAX_TITLE_BYTES};

/// Depth of the open-element stack; formatting elements beyond it are ignored.
const MAX_OPEN: usize = 256;

/// Tags the extractor tells apart.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Tag {
    A,
    Area,
    B,
    Strong,
    Big,
    Small,
    H(u8),
    Img,
    Frame,
    Iframe,
    Meta,
    Base,
    Title,
    Textarea,
    /// script, style, xmp, noembed, noframes, noscript (lowercase name).
    RawText(&'static [u8]),
    Plaintext,
    Template,
    Svg,
    Math,
    /// Other inline tags: do not break words.
    Inline,
    /// Everything else: breaks words.
    Other,
}

impl Tag {
    pub(super) fn of(name: &[u8]) -> Tag {
        match name {
            b"a" => Tag::A,
            b"area" => Tag::Area,
            b"b" => Tag::B,
            b"strong" => Tag::Strong,
            b"big" => Tag::Big,
            b"small" => Tag::Small,
            b"h1" => Tag::H(1),
            b"h2" => Tag::H(2),
            b"h3" => Tag::H(3),
            b"h4" => Tag::H(4),
            b"h5" => Tag::H(5),
            b"h6" => Tag::H(6),
            b"img" => Tag::Img,
            b"frame" => Tag::Frame,
            b"iframe" => Tag::Iframe,
            b"meta" => Tag::Meta,
            b"base" => Tag::Base,
            b"title" => Tag::Title,
            b"textarea" => Tag::Textarea,
            b"script" => Tag::RawText(b"script"),
            b"style" => Tag::RawText(b"style"),
            b"xmp" => Tag::RawText(b"xmp"),
            b"noembed" => Tag::RawText(b"noembed"),
            b"noframes" => Tag::RawText(b"noframes"),
            b"noscript" => Tag::RawText(b"noscript"),
            b"plaintext" => Tag::Plaintext,
            b"template" => Tag::Template,
            b"svg" => Tag::Svg,
            b"math" => Tag::Math,
            b"abbr" | b"acronym" | b"bdi" | b"bdo" | b"cite" | b"code" | b"data" | b"del"
            | b"dfn" | b"em" | b"font" | b"i" | b"ins" | b"kbd" | b"label" | b"mark" | b"q"
            | b"s" | b"samp" | b"span" | b"strike" | b"sub" | b"sup" | b"time" | b"tt" | b"u"
            | b"var" | b"wbr" => Tag::Inline,
            _ => Tag::Other,
        }
    }

    pub(super) fn breaks_words(self) -> bool {
        !matches!(
            self,
            Tag::B | Tag::Strong | Tag::Big | Tag::Small | Tag::Inline
        )
    }

    fn wants_attrs(self) -> bool {
        matches!(
            self,
            Tag::A | Tag::Area | Tag::Img | Tag::Frame | Tag::Iframe | Tag::Meta | Tag::Base
        )
    }
}

/// The attributes the extractor reads.
const WANTED_ATTRS: [&str; 7] = [
    "href",
    "src",
    "alt",
    "http-equiv",
    "content",
    "name",
    "charset",
];

/// An attribute of the current tag: byte ranges of name and raw value.
#[derive(Clone, Copy)]
pub(super) struct Attr {
    name: (usize, usize),
    value: (usize, usize),
}

fn sub(s: &str, (a, b): (usize, usize)) -> &str {
    s.get(a..b).unwrap_or_default()
}

impl Sink {
    /// Whether text here is visible (outside `template` and `svg`).
    pub(super) fn visible(&self) -> bool {
        self.template == 0 && self.svg == 0
    }

    /// The raw value of the current tag's attribute `name`, if kept.
    pub(super) fn attr<'s>(&self, src: &'s str, name: &str) -> Option<&'s str> {
        self.attrs
            .iter()
            .find(|a| sub(src, a.name).eq_ignore_ascii_case(name))
            .map(|a| sub(src, a.value))
    }

    fn push(&mut self, tag: Tag) -> bool {
        if self.stack.len() >= MAX_OPEN {
            return false;
        }
        self.stack.push(tag);
        match tag {
            Tag::A => self.a_open += 1,
            Tag::B | Tag::Strong => self.bold += 1,
            Tag::Big => self.big += 1,
            Tag::Small => self.small += 1,
            Tag::H(n) => self.heading = n,
            Tag::Template => self.template += 1,
            Tag::Svg => {
                self.svg += 1;
                self.foreign += 1;
            }
            Tag::Math => self.foreign += 1,
            _ => {}
        }
        true
    }

    /// Pops the stack down to and including the topmost entry matching `m`.
    fn pop_through(&mut self, m: impl Fn(Tag) -> bool) {
        let Some(k) = self.stack.iter().rposition(|&t| m(t)) else {
            return;
        };
        while self.stack.len() > k {
            let Some(t) = self.stack.pop() else { break };
            match t {
                Tag::A => {
                    self.a_open = self.a_open.saturating_sub(1);
                    self.anchor = None;
                }
                Tag::B | Tag::Strong => self.bold = self.bold.saturating_sub(1),
                Tag::Big => self.big = self.big.saturating_sub(1),
                Tag::Small => self.small = self.small.saturating_sub(1),
                Tag::H(_) => self.heading = 0,
                Tag::Template => self.template = self.template.saturating_sub(1),
                Tag::Svg => {
                    self.svg = self.svg.saturating_sub(1);
                    self.foreign = self.foreign.saturating_sub(1);
                }
                Tag::Math => self.foreign = self.foreign.saturating_sub(1),
                _ => {}
            }
        }
    }

    /// Parses the whole (decoded) document.
    pub(super) fn run(&mut self, src: &str) {
        let s = src.as_bytes();
        let n = s.len();
        let mut i = 0;
        while i < n {
            if !self.visible() {
                match find_byte(src, i, b'<') {
                    Some(lt) => i = self.markup(src, lt),
                    None => break,
                }
                continue;
            }
            let base = self.flags();
            let stop =
                self.word
                    .feed::<true>(src, i, &mut self.page.words, &mut self.page.flags, base);
            if self.keep_text {
                self.visible_text.push(
                    &mut self.page.text,
                    super::MAX_KEPT_TEXT,
                    sub(src, (i, stop)),
                );
            }
            if let Some(k) = self.anchor {
                if let Some(link) = self.page.links.get_mut(k) {
                    self.anchor_text
                        .push(&mut link.anchor, MAX_ANCHOR_BYTES, sub(src, (i, stop)));
                }
            }
            if self.cut_at_max_words() || stop >= n {
                break;
            }
            if s[stop] == b'&' {
                match char_ref(s, stop, false) {
                    Some((c, next)) => {
                        self.text_char(c);
                        i = next;
                    }
                    None => {
                        self.text("&");
                        i = stop + 1;
                    }
                }
            } else {
                i = self.markup(src, stop);
            }
        }
        // Words begun by entities after the last run.
        self.cut_at_max_words();
    }

    /// With `max_words`: when the page has more words than that, drops
    /// those past it and says the page was cut. A word past the last one
    /// kept has begun, so the kept ones are whole.
    fn cut_at_max_words(&mut self) -> bool {
        let Some(m) = self.max_words.filter(|&m| self.page.flags.len() > m) else {
            return false;
        };
        let p = &mut self.page;
        let extra = p.flags.len() - m;
        let end = p
            .words
            .rmatch_indices(' ')
            .nth(extra - 1)
            .map_or(0, |(i, _)| i);
        p.words.truncate(end);
        p.flags.truncate(m);
        p.words_cut = true;
        true
    }

    /// At `s[i] == b'<'`: a tag, comment, doctype or a literal `<`. Returns the
    /// position after it.
    fn markup(&mut self, src: &str, i: usize) -> usize {
        let s = src.as_bytes();
        let n = s.len();
        match s.get(i + 1) {
            Some(c) if c.is_ascii_alphabetic() => self.tag(src, i + 1, false),
            Some(b'/') => match s.get(i + 2) {
                Some(c) if c.is_ascii_alphabetic() => self.tag(src, i + 2, true),
                Some(b'>') => i + 3,
                Some(_) => skip_past(s, i + 2, b'>'),
                None => {
                    self.text("</");
                    n
                }
            },
            Some(b'!') => {
                let rest = &s[i + 2..];
                if rest.starts_with(b"--") {
                    comment_end(s, i + 4)
                } else if rest.len() >= 7 && rest[..7].eq_ignore_ascii_case(b"doctype") {
                    skip_past(s, i + 9, b'>')
                } else if self.foreign > 0 && rest.starts_with(b"[CDATA[") {
                    let from = i + 9;
                    match find(s, from, b"]]>") {
                        Some(e) => {
                            self.text(sub(src, (from, e)));
                            e + 3
                        }
                        None => {
                            self.text(sub(src, (from, n)));
                            n
                        }
                    }
                } else {
                    skip_past(s, i + 2, b'>')
                }
            }
            Some(b'?') => skip_past(s, i + 1, b'>'),
            _ => {
                self.text("<");
                i + 1
            }
        }
    }

    /// A start or end tag whose name starts at `i`. Returns the position after
    /// the tag (or after the raw text it starts).
    fn tag(&mut self, src: &str, i: usize, end: bool) -> usize {
        let s = src.as_bytes();
        let n = s.len();
        let mut j = i;
        while j < n && class(s[j]) & C_NAME_END == 0 {
            j += 1;
        }
        let tag = {
            let name = &s[i..j];
            let mut buf = [0u8; 10];
            if name.len() <= buf.len() {
                let buf = &mut buf[..name.len()];
                buf.copy_from_slice(name);
                buf.make_ascii_lowercase();
                Tag::of(buf)
            } else {
                Tag::Other
            }
        };
        let capture = !end && tag.wants_attrs();
        self.attrs.clear();
        let self_closing;
        // Attributes, until '>'.
        loop {
            let mut slash = false;
            while j < n && (is_space(s[j]) || s[j] == b'/') {
                slash = s[j] == b'/';
                j += 1;
            }
            if j >= n {
                return n; // EOF in a tag: the tag is dropped.
            }
            if s[j] == b'>' {
                self_closing = slash;
                j += 1;
                break;
            }
            let name_start = j;
            j += 1;
            while j < n && class(s[j]) & C_ATTR_END == 0 {
                j += 1;
            }
            let name = (name_start, j);
            while j < n && is_space(s[j]) {
                j += 1;
            }
            let mut value = (j, j);
            if j < n && s[j] == b'=' {
                j += 1;
                while j < n && is_space(s[j]) {
                    j += 1;
                }
                if j >= n {
                    return n;
                }
                match s[j] {
                    // Values are short: a plain loop beats memchr's setup.
                    q @ (b'"' | b'\'') => match find_in(s, j + 1, q) {
                        Some(p) => {
                            value = (j + 1, p);
                            j = p + 1;
                        }
                        None => return n,
                    },
                    b'>' => value = (j, j),
                    _ => {
                        let v = j;
                        while j < n && class(s[j]) & C_VALUE_END == 0 {
                            j += 1;
                        }
                        value = (v, j);
                    }
                }
            }
            // Only the few attributes we read are kept (so at most 7, and a tag
            // with a million attributes costs no more than its bytes); the
            // first of duplicates wins, as in the spec.
            if capture {
                let n = sub(src, name);
                if WANTED_ATTRS.iter().any(|w| n.eq_ignore_ascii_case(w))
                    && !self
                        .attrs
                        .iter()
                        .any(|a| sub(src, a.name).eq_ignore_ascii_case(n))
                {
                    self.attrs.push(Attr { name, value });
                }
            }
        }
        if end {
            self.end_tag(tag);
            j
        } else {
            self.start_tag(src, tag, self_closing, j)
        }
    }

    fn end_tag(&mut self, tag: Tag) {
        if tag.breaks_words() {
            self.word_break();
        }
        if !self.is_open(tag) {
            // Also keeps a flood of stray end tags linear.
            return;
        }
        match tag {
            Tag::H(_) => self.pop_through(|t| matches!(t, Tag::H(_))),
            _ => self.pop_through(|t| t == tag),
        }
    }

    /// Whether an element of this kind is on the stack (by the counters).
    fn is_open(&self, tag: Tag) -> bool {
        match tag {
            Tag::A => self.a_open > 0,
            Tag::B | Tag::Strong => self.bold > 0,
            Tag::Big => self.big > 0,
            Tag::Small => self.small > 0,
            Tag::H(_) => self.heading > 0,
            Tag::Template => self.template > 0,
            Tag::Svg => self.svg > 0,
            Tag::Math => self.foreign > self.svg,
            _ => false,
        }
    }

    /// Handles a start tag that ended at `j`; returns where parsing goes on.
    fn start_tag(&mut self, src: &str, tag: Tag, self_closing: bool, j: usize) -> usize {
        if tag.breaks_words() {
            self.word_break();
        }
        let html = self.foreign == 0;
        match tag {
            Tag::A => {
                if self.a_open > 0 {
                    self.pop_through(|t| t == Tag::A);
                }
                if self.push(Tag::A) && self.template == 0 {
                    if let Some(href) = self.attr(src, "href") {
                        self.anchor = self.add_link(LinkKind::A, href);
                        self.anchor_text = Collapse::default();
                    }
                }
            }
            Tag::Area if self.template == 0 => self.area(src),
            Tag::Img => {
                if let (Some(k), true) = (self.anchor, self.visible()) {
                    if let Some(alt) = self.attr(src, "alt") {
                        self.scratch.clear();
                        decode_refs(alt, &mut self.scratch, true);
                        if let Some(link) = self.page.links.get_mut(k) {
                            self.anchor_text.pending = true;
                            self.anchor_text.push(
                                &mut link.anchor,
                                MAX_ANCHOR_BYTES,
                                &self.scratch,
                            );
                            self.anchor_text.pending = true;
                        }
                    }
                }
            }
            Tag::Frame | Tag::Iframe => {
                if self.template == 0 {
                    if let Some(src_attr) = self.attr(src, "src") {
                        let kind = if tag == Tag::Frame {
                            LinkKind::Frame
                        } else {
                            LinkKind::Iframe
                        };
                        self.add_link(kind, src_attr);
                    }
                }
                if tag == Tag::Iframe && html {
                    return self.skip_raw_text(src, j, b"iframe");
                }
            }
            Tag::Meta => self.meta(src),
            Tag::Base if self.page.base_href.is_none() => {
                if let Some(href) = self.attr(src, "href") {
                    self.scratch.clear();
                    decode_refs(href, &mut self.scratch, true);
                    self.page.base_href = Some(trim_url(&self.scratch).to_string());
                }
            }
            Tag::B | Tag::Strong | Tag::Big | Tag::Small | Tag::Template | Tag::Math
                if html || !self_closing =>
            {
                self.push(tag);
            }
            Tag::Svg if !self_closing => {
                self.push(tag);
            }
            Tag::H(_) => {
                if self.heading > 0 {
                    self.pop_through(|t| matches!(t, Tag::H(_)));
                }
                if html || !self_closing {
                    self.push(tag);
                }
            }
            Tag::Title if html => {
                let s = src.as_bytes();
                let end = find_end_tag(s, j, b"title");
                if !self.title_seen {
                    self.title_seen = true;
                    self.scratch.clear();
                    decode_refs(
                        sub(src, (j, end.unwrap_or(s.len()))),
                        &mut self.scratch,
                        false,
                    );
                    let mut c = Collapse::default();
                    c.push(&mut self.page.title, MAX_TITLE_BYTES, &self.scratch);
                }
                return end.unwrap_or(s.len());
            }
            Tag::Textarea if html => return self.skip_raw_text(src, j, b"textarea"),
            Tag::RawText(name) if html => return self.skip_raw_text(src, j, name),
            Tag::Plaintext if html => {
                self.text(sub(src, (j, src.len())));
                return src.len();
            }
            _ => {}
        }
        j
    }

    fn skip_raw_text(&mut self, src: &str, j: usize, name: &[u8]) -> usize {
        find_end_tag(src.as_bytes(), j, name).unwrap_or(src.len())
    }
}

/// Position of the next ASCII byte `c` at or after `from` (core's memchr,
/// through `str::find`).
fn find_byte(s: &str, from: usize, c: u8) -> Option<usize> {
    s.get(from..)?.find(c as char).map(|p| from + p)
}

/// Position of the next `c` at or after `from` in bytes.
fn find_in(s: &[u8], from: usize, c: u8) -> Option<usize> {
    s.get(from..)?
        .iter()
        .position(|&x| x == c)
        .map(|p| from + p)
}

/// Position after the next `c` at or after `from`, or the end.
fn skip_past(s: &[u8], from: usize, c: u8) -> usize {
    match find_in(s, from, c) {
        Some(p) => p + 1,
        None => s.len(),
    }
}

/// Position of the next `pat` at or after `from`.
pub(super) fn find(s: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    let first = *pat.first()?;
    let mut i = from;
    loop {
        let p = s.get(i..)?.iter().position(|&c| c == first)?;
        i += p;
        if s.get(i..i + pat.len())? == pat {
            return Some(i);
        }
        i += 1;
    }
}

/// End of a comment whose text starts at `from` (after `<!--`): after `-->`
/// or `--!>`, `<!-->` and `<!--->` being complete comments; the end of input
/// if unclosed.
fn comment_end(s: &[u8], from: usize) -> usize {
    let n = s.len();
    if s.get(from) == Some(&b'>') {
        return from + 1;
    }
    if s.get(from..from + 2) == Some(b"->") {
        return from + 2;
    }
    let mut i = from;
    while let Some(k) = find(s, i, b"--") {
        match s.get(k + 2) {
            Some(b'>') => return k + 3,
            Some(b'!') if s.get(k + 3) == Some(&b'>') => return k + 4,
            Some(_) => i = k + 1,
            None => return n,
        }
    }
    n
}

/// Position of the `<` of the end tag `</name` (any case) followed by
/// whitespace, `/` or `>`, at or after `from`.
fn find_end_tag(s: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let mut i = from;
    loop {
        let k = find(s, i, b"</")?;
        let after = k + 2 + name.len();
        if let Some(cand) = s.get(k + 2..after) {
            if cand.eq_ignore_ascii_case(name)
                && s.get(after)
                    .is_some_and(|&c| is_space(c) || c == b'/' || c == b'>')
            {
                return Some(k);
            }
        }
        i = k + 2;
    }
}

#[cfg(test)]
mod tests {
    use crate::ingest::html::tests::{check_invariants, links, page, words};
    use crate::ingest::html::{flag, Extractor, LinkKind};

    #[test]
    fn invisible_content_is_skipped() {
        let p = page(
            "<head><title>T</title><script>var a = \"<a href='no'>x</a>\"; if (a<b) {}</script>\
             <style>p { color: red }</style><noscript>enable js</noscript></head>\
             <body>one<!-- hidden comment -->two <SCRIPT type=x>hidden()</SCRIPT >three\
             <template><p>tpl <a href=tpl.html>t</a></p></template>\
             <textarea>typed &amp; text</textarea><xmp><b>raw</b></xmp>\
             <svg><text>drawn</text><![CDATA[cdata]]></svg><math><mi>x</mi><![CDATA[y]]></math>\
             <noframes>nf</noframes><noembed>ne</noembed>four<![CDATA[bogus]]>five</body>",
        );
        assert_eq!(words(&p), ["onetwo", "three", "x", "y", "fourfive"]);
        assert!(p.links.is_empty(), "{:?}", p.links);
    }

    #[test]
    fn malformed_and_truncated() {
        for html in [
            "",
            "<",
            "</",
            "<a",
            "<a href",
            "<a href=",
            "<a href='x",
            "<a href=\"x\"",
            "<!",
            "<!-",
            "<!--",
            "<!-- x -",
            "<!DOCTYPE",
            "<title>",
            "<title>x",
            "<script>x",
            "<script>x</script",
            "&",
            "&#",
            "&#x",
            "&am",
            "<svg><![CDATA[x",
            "</>",
            "<?xml",
            "<a href=x>text",
            "<b><b><b>",
            "</b></b>",
            "<plaintext><b>x",
            "<<<>>>",
            "<\u{e9}>",
            "<a\u{e9}=\u{e9}>é",
            "<h1></h6>x",
        ] {
            let p = page(html);
            check_invariants(&p);
        }
        assert_eq!(
            words(&page(
                "a <!-->b <!--->c <!-- -- -->d <!-- x --!>e <!-- <p> -->f <!--g"
            )),
            ["a", "b", "c", "d", "e", "f"]
        );
        // "</ " opens a bogus comment that runs to the next '>'.
        assert_eq!(words(&page("1 < 2 <3 </ 4 <x")), ["1", "2", "3"]);
        assert_eq!(words(&page("1 </ 4 > 5")), ["1", "5"]);
        assert_eq!(words(&page("<plaintext><b>x</b>")), ["b", "x", "b"]);
        assert_eq!(links(&page("<a href=x>text")), [(LinkKind::A, "x", "text")]);
        assert_eq!(words(&page("<a href='x>y'>z</a>")), ["z"]);
        assert!(
            page("<a href='x").links.is_empty(),
            "a tag cut by EOF is dropped"
        );
        assert_eq!(page("<title>open").title, "open");
        assert_eq!(
            words(&page("<p title='a > b'>c</p><br/>d<img src=x/>e")),
            ["c", "d", "e"]
        );
        // Deep nesting stays bounded.
        let deep = "<b><big>".repeat(10_000) + "x" + &"</big></b>".repeat(10_000) + " y";
        let p = page(&deep);
        assert_eq!(words(&p), ["x", "y"]);
        assert_eq!(p.flags[1], flag::NORMAL_SIZE);
    }

    /// Inputs built to make a careless tokenizer quadratic: each megabyte must
    /// go through in well under a second (a quadratic pass would take hours).
    #[test]
    fn adversarial_inputs_stay_linear() {
        let mb = 1 << 20;
        let cases: Vec<(&str, String)> = vec![
            (
                "many attributes",
                format!("<a {}>", "href=x ".repeat(mb / 7)),
            ),
            (
                "many distinct attributes",
                format!(
                    "<a {}>",
                    (0..mb / 8).map(|i| format!("x{i} ")).collect::<String>()
                ),
            ),
            (
                "stray end tags",
                format!("{}{}", "<big>".repeat(300), "</b>".repeat(mb / 4)),
            ),
            ("nested anchors", "<a href=x>".repeat(mb / 10)),
            ("dashes in a comment", format!("<!--{}", "-".repeat(mb))),
            ("unclosed quotes", "<a href='".repeat(mb / 9)),
            ("ampersands", "&amp".repeat(mb / 4)),
            ("long entity-like names", format!("&{}", "a".repeat(mb))),
            ("lt runs", "<".repeat(mb)),
            (
                "end tag openers in script",
                format!("<script>{}", "</scrip".repeat(mb / 7)),
            ),
            ("bogus comments", "</ x".repeat(mb / 4)),
            ("one long word", "x".repeat(mb)),
            ("headings", "<h1><h2>".repeat(mb / 8)),
            ("titles", "<title>a</title>".repeat(mb / 16)),
        ];
        let mut ex = Extractor::new();
        for (what, html) in cases {
            let t = std::time::Instant::now();
            let p = ex.extract(html.as_bytes(), None).expect("html");
            check_invariants(p);
            let secs = t.elapsed().as_secs_f64();
            assert!(secs < 2.0, "{what}: {secs:.2} s for {} bytes", html.len());
        }
    }
}

//! Links and their anchor text: `<a href>` and `<area href>`, `<frame src>`
//! and `<iframe src>`, the URL of `<meta http-equiv=refresh>`, and
//! `<meta name=robots>`. Hrefs are decoded and trimmed here, never resolved.
//! The rules are in the [module docs](super) (`# Links`).

use super::entities::decode_refs;
use super::words::Collapse;
use super::{Link, LinkKind, Sink, MAX_ANCHOR_BYTES, MAX_HREF_BYTES};

/// `s` without leading and trailing ASCII whitespace and C0 controls.
pub fn trim_url(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

impl Sink {
    pub(super) fn add_link(&mut self, kind: LinkKind, raw_href: &str) -> Option<usize> {
        self.scratch.clear();
        decode_refs(raw_href, &mut self.scratch, true);
        let href = trim_url(&self.scratch);
        if href.len() > MAX_HREF_BYTES {
            self.page.hrefs_dropped += 1;
            return None;
        }
        if self.max_links.is_some_and(|m| self.page.links.len() >= m) {
            self.page.links_cut += 1;
            return None;
        }
        let mut link = self.spare.pop().unwrap_or(Link {
            kind,
            href: String::new(),
            anchor: String::new(),
        });
        link.kind = kind;
        link.href.clear();
        link.href.push_str(href);
        link.anchor.clear();
        self.page.links.push(link);
        Some(self.page.links.len() - 1)
    }

    /// `<area href alt>`: a link whose anchor text is its `alt`.
    pub(super) fn area(&mut self, src: &str) {
        let Some(href) = self.attr(src, "href") else {
            return;
        };
        let Some(k) = self.add_link(LinkKind::Area, href) else {
            return;
        };
        if let Some(alt) = self.attr(src, "alt") {
            self.scratch.clear();
            decode_refs(alt, &mut self.scratch, true);
            if let Some(link) = self.page.links.get_mut(k) {
                Collapse::default().push(&mut link.anchor, MAX_ANCHOR_BYTES, &self.scratch);
            }
        }
    }

    pub(super) fn meta(&mut self, src: &str) {
        let content = self.attr(src, "content");
        if let (Some(equiv), Some(content)) = (self.attr(src, "http-equiv"), content) {
            if trim_url(equiv).eq_ignore_ascii_case("refresh") && self.template == 0 {
                let mut decoded = String::new();
                decode_refs(content, &mut decoded, true);
                if let Some(url) = refresh_url(&decoded) {
                    self.add_link(LinkKind::MetaRefresh, url);
                }
            }
        }
        if let (Some(name), Some(content)) = (self.attr(src, "name"), content) {
            if trim_url(name).eq_ignore_ascii_case("robots") {
                for token in content.split(|c: char| c == ',' || c.is_ascii_whitespace()) {
                    if token.eq_ignore_ascii_case("noindex") {
                        self.page.noindex = true;
                    } else if token.eq_ignore_ascii_case("nofollow") {
                        self.page.nofollow = true;
                    } else if token.eq_ignore_ascii_case("none") {
                        self.page.noindex = true;
                        self.page.nofollow = true;
                    }
                }
            }
        }
    }
}

/// The URL of a `<meta http-equiv=refresh>` content (`5; url=…`), after the
/// WHATWG "shared declarative refresh steps"; `None` for a plain reload.
pub fn refresh_url(content: &str) -> Option<&str> {
    let s = content.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let t = s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    if t.len() == s.len() {
        return None;
    }
    let t = t.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let t = t.strip_prefix([';', ',']).unwrap_or(t);
    let t = t.trim_start_matches(|c: char| c.is_ascii_whitespace());
    if t.is_empty() {
        return None;
    }
    let mut url = t;
    if t.len() >= 3 && t.as_bytes()[..3].eq_ignore_ascii_case(b"url") {
        let r = t[3..].trim_start_matches(|c: char| c.is_ascii_whitespace());
        if let Some(r) = r.strip_prefix('=') {
            url = r.trim_start_matches(|c: char| c.is_ascii_whitespace());
        }
    }
    if let Some(q) = url.chars().next().filter(|&c| c == '"' || c == '\'') {
        let inner = &url[1..];
        url = match inner.find(q) {
            Some(p) => &inner[..p],
            None => inner,
        };
    }
    let url = trim_url(url);
    (!url.is_empty()).then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::html::flag;
    use crate::ingest::html::tests::{check_invariants, links, page, words};

    #[test]
    fn hrefs_are_decoded_and_trimmed() {
        let p = page(
            "<a href=' /a?x=1&amp;y=2&copy=3&copy;&#x2F;z\n'>A</a>\
             <A HREF=\"javascript:void(0)\">js</A><a href=mailto:x@y.z>mail</a><a href=\"\">self</a>\
             <a name=top>no href</a><a href = \"spaced\" >s</a><a href=x href=y>dup</a>",
        );
        assert_eq!(
            links(&p),
            [
                (LinkKind::A, "/a?x=1&y=2&copy=3©/z", "A"),
                (LinkKind::A, "javascript:void(0)", "js"),
                (LinkKind::A, "mailto:x@y.z", "mail"),
                (LinkKind::A, "", "self"),
                (LinkKind::A, "spaced", "s"),
                (LinkKind::A, "x", "dup"),
            ]
        );
        assert_eq!(
            p.flags.iter().filter(|&&f| f & flag::ANCHOR != 0).count(),
            6
        );
        assert_eq!(p.flags[4] & flag::ANCHOR, 0, "'no href' is not in a link");
        assert_eq!(p.flags[5] & flag::ANCHOR, 0, "'no href' is not in a link");
    }

    #[test]
    fn anchor_text() {
        let p = page(
            "<a href=1><img src=logo.png alt=\"The &amp; Logo\"> Home\n\n <b>page</b></a>\
             <a href=2>first<a href=3>second</a>after\
             <a href=4><div>block</div><div>two</div><script>no</script></a>\
             <a href=5><img alt=''><img></a><map><area href=6 alt='Region &lt;1&gt;'><area nohref></map>",
        );
        assert_eq!(
            links(&p),
            [
                (LinkKind::A, "1", "The & Logo Home page"),
                (LinkKind::A, "2", "first"),
                (LinkKind::A, "3", "second"),
                (LinkKind::A, "4", "block two"),
                (LinkKind::A, "5", ""),
                (LinkKind::Area, "6", "Region <1>"),
            ]
        );
        assert_eq!(
            words(&p),
            ["home", "page", "first", "second", "after", "block", "two"]
        );
        let anchored: Vec<bool> = p.flags.iter().map(|&f| f & flag::ANCHOR != 0).collect();
        assert_eq!(anchored, [true, true, true, true, false, true, true]);
        let long = format!("<a href=x>{}</a>", "word ".repeat(100));
        let p = page(&long);
        assert_eq!(p.links[0].anchor.len(), MAX_ANCHOR_BYTES);
        assert!(p.links[0].anchor.ends_with(" word w"));
        check_invariants(&p);
    }

    #[test]
    fn frames_iframes_refresh_base() {
        let p = page(
            "<head><base href=' http://example.com/dir/?a&amp;b '><base href=second>\
             <meta http-equiv=Refresh content=\"5; URL='next.html'\">\
             <meta http-equiv=refresh content=\"10\"></head>\
             <frameset><frame src=left.html><frame name=x src=\"right.html\"></frameset>\
             <iframe src=ad.html>fallback <a href=no>x</a></iframe>after",
        );
        assert_eq!(p.base_href.as_deref(), Some("http://example.com/dir/?a&b"));
        assert_eq!(
            links(&p),
            [
                (LinkKind::MetaRefresh, "next.html", ""),
                (LinkKind::Frame, "left.html", ""),
                (LinkKind::Frame, "right.html", ""),
                (LinkKind::Iframe, "ad.html", ""),
            ]
        );
        assert_eq!(words(&p), ["after"]);
    }

    #[test]
    fn refresh_forms() {
        assert_eq!(refresh_url("0; url=a.html"), Some("a.html"));
        assert_eq!(refresh_url("0;URL=\"b.html\" "), Some("b.html"));
        assert_eq!(refresh_url("  3 , url = c.html"), Some("c.html"));
        assert_eq!(refresh_url("0; d.html"), Some("d.html"));
        assert_eq!(refresh_url("1.5;url='e.html"), Some("e.html"));
        assert_eq!(refresh_url("0; urlx.html"), Some("urlx.html"));
        assert_eq!(refresh_url("5"), None);
        assert_eq!(refresh_url("5;"), None);
        assert_eq!(refresh_url("url=f.html"), None);
        assert_eq!(refresh_url(""), None);
    }

    #[test]
    fn robots_meta() {
        let p = page("<meta name=ROBOTS content='NOINDEX, follow'>");
        assert!(p.noindex && !p.nofollow);
        let p = page("<meta name=robots content=none>");
        assert!(p.noindex && p.nofollow);
        let p = page("<meta name=googlebot content=noindex>");
        assert!(!p.noindex);
    }

    #[test]
    fn links_beyond_the_limit_are_counted() {
        let html = "<a href=x>a</a>".repeat(10);
        let mut ex = crate::ingest::html::Extractor::new();
        ex.set_max_links(3);
        let p = ex.extract(html.as_bytes(), None).unwrap();
        assert_eq!(p.links.len(), 3);
        assert_eq!(p.links_cut, 7);
        assert_eq!(p.word_count(), 10);
    }

    #[test]
    fn huge_hrefs_are_dropped_and_counted() {
        let p = page(&format!(
            "<a href='data:,{}'>x</a><a href=ok>y</a>",
            "a".repeat(MAX_HREF_BYTES)
        ));
        assert_eq!(links(&p), [(LinkKind::A, "ok", "y")]);
        assert_eq!(p.hrefs_dropped, 1);
        assert_eq!(words(&p), ["x", "y"]);
    }
}

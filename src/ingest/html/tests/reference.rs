//! A second extractor on `lol_html`'s tokenizer (with our word, reference
//! and collapsing rules): the real-data tests compare the two, so every
//! tokenizer state (tags, attributes, comments, raw text, RCDATA, foreign
//! content) is checked against an independent implementation.

use crate::ingest::html::entities::decode_refs;
use crate::ingest::html::links::{refresh_url, trim_url};
use crate::ingest::html::tokenizer::Tag;
use crate::ingest::html::words::Collapse;
use crate::ingest::html::{
    tokenize, Link, LinkKind, MAX_ANCHOR_BYTES, MAX_HREF_BYTES, MAX_TITLE_BYTES,
};
use lol_html::html_content::{Element, TextChunk, TextType};
use lol_html::{DocumentContentHandlers, ElementContentHandlers, HtmlRewriter, Settings};
use std::cell::RefCell;
use std::rc::Rc;

#[derive(Default)]
pub struct Ref {
    pub title: Option<String>,
    pub words: String,
    pub links: Vec<Link>,
    flags: Vec<u8>,
    pending: String,
    anchor: Option<usize>,
    anchor_raw: String,
    anchor_text: String,
    title_raw: Option<String>,
    template: i32,
    svg: i32,
}

impl Ref {
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let mut t = String::new();
            decode_refs(&self.pending, &mut t, false);
            tokenize(&t, &mut self.words, &mut self.flags);
            self.pending.clear();
        }
    }

    fn anchor_piece(&mut self, extra: &str) {
        if self.anchor.is_some() {
            decode_refs(&self.anchor_raw, &mut self.anchor_text, false);
            self.anchor_raw.clear();
            self.anchor_text.push_str(extra);
        }
    }

    fn close_anchor(&mut self) {
        self.anchor_piece("");
        if let Some(k) = self.anchor.take() {
            let mut c = Collapse::default();
            c.push(
                &mut self.links[k].anchor,
                MAX_ANCHOR_BYTES,
                &self.anchor_text,
            );
        }
        self.anchor_text.clear();
    }

    fn link(&mut self, kind: LinkKind, raw: &str) -> Option<usize> {
        let mut href = String::new();
        decode_refs(raw, &mut href, true);
        let href = trim_url(&href);
        if href.len() > MAX_HREF_BYTES {
            return None;
        }
        self.links.push(Link {
            kind,
            href: href.to_string(),
            anchor: String::new(),
        });
        Some(self.links.len() - 1)
    }

    fn visible(&self) -> bool {
        self.template == 0 && self.svg == 0
    }
}

fn start(st: &Rc<RefCell<Ref>>, el: &mut Element) {
    let name = el.tag_name();
    let tag = Tag::of(name.as_bytes());
    let mut r = st.borrow_mut();
    if tag.breaks_words() {
        r.flush();
        r.anchor_piece(" ");
    }
    let attr = |n: &str| el.get_attribute(n);
    match tag {
        Tag::A => {
            r.close_anchor();
            if r.template == 0 {
                if let Some(h) = attr("href") {
                    r.anchor = r.link(LinkKind::A, &h);
                }
            }
        }
        Tag::Area if r.template == 0 => {
            if let Some(h) = attr("href") {
                if let Some(k) = r.link(LinkKind::Area, &h) {
                    if let Some(alt) = attr("alt") {
                        let mut t = String::new();
                        decode_refs(&alt, &mut t, true);
                        Collapse::default().push(&mut r.links[k].anchor, MAX_ANCHOR_BYTES, &t);
                    }
                }
            }
        }
        Tag::Img if r.visible() && r.anchor.is_some() => {
            if let Some(alt) = attr("alt") {
                let mut t = String::from(" ");
                decode_refs(&alt, &mut t, true);
                t.push(' ');
                r.anchor_piece(&t);
            }
        }
        Tag::Frame | Tag::Iframe if r.template == 0 => {
            if let Some(h) = attr("src") {
                let kind = if tag == Tag::Frame {
                    LinkKind::Frame
                } else {
                    LinkKind::Iframe
                };
                r.link(kind, &h);
            }
        }
        Tag::Meta if r.template == 0 => {
            let equiv = attr("http-equiv").unwrap_or_default();
            if let (true, Some(content)) = (
                trim_url(&equiv).eq_ignore_ascii_case("refresh"),
                attr("content"),
            ) {
                let mut t = String::new();
                decode_refs(&content, &mut t, true);
                if let Some(u) = refresh_url(&t) {
                    r.link(LinkKind::MetaRefresh, u);
                }
            }
        }
        Tag::Title
            if r.title_raw.is_none()
                && r.svg == 0
                && el.namespace_uri() == "http://www.w3.org/1999/xhtml" =>
        {
            r.title_raw = Some(String::new());
        }
        Tag::Template => r.template += 1,
        Tag::Svg => r.svg += 1,
        _ => {}
    }
    drop(r);
    if let Some(handlers) = el.end_tag_handlers() {
        let st = st.clone();
        handlers.push(Box::new(move |_| {
            let mut r = st.borrow_mut();
            if tag.breaks_words() {
                r.flush();
                r.anchor_piece(" ");
            }
            match tag {
                Tag::A => r.close_anchor(),
                Tag::Template => r.template -= 1,
                Tag::Svg => r.svg -= 1,
                Tag::Title => {
                    if let Some(raw) = r.title_raw.clone() {
                        if r.title.is_none() {
                            let mut t = String::new();
                            decode_refs(&raw, &mut t, false);
                            let mut title = String::new();
                            Collapse::default().push(&mut title, MAX_TITLE_BYTES, &t);
                            r.title = Some(title);
                        }
                    }
                }
                _ => {}
            }
            Ok(())
        }));
    }
}

/// Title, words and links of a UTF-8 page by way of `lol_html`.
pub fn extract(html: &str) -> Ref {
    let st = Rc::new(RefCell::new(Ref::default()));
    let (s1, s2) = (st.clone(), st.clone());
    let all: lol_html::Selector = "*".parse().expect("selector");
    let settings = Settings {
        element_content_handlers: vec![(
            std::borrow::Cow::Owned(all),
            ElementContentHandlers::default().element(move |el: &mut Element| {
                start(&s1, el);
                Ok(())
            }),
        )],
        document_content_handlers: vec![DocumentContentHandlers::default().text(
            move |t: &mut TextChunk| {
                let mut r = s2.borrow_mut();
                match t.text_type() {
                    TextType::Data if r.visible() => {
                        r.pending.push_str(t.as_str());
                        if r.anchor.is_some() {
                            r.anchor_raw.push_str(t.as_str());
                        }
                    }
                    TextType::RCData if r.title.is_none() => {
                        if let Some(raw) = r.title_raw.as_mut() {
                            raw.push_str(t.as_str());
                        }
                    }
                    _ => {}
                }
                Ok(())
            },
        )],
        ..Settings::new()
    };
    let mut rw = HtmlRewriter::new(settings, |_: &[u8]| {});
    rw.write(html.as_bytes()).expect("lol_html write");
    rw.end().expect("lol_html end");
    let mut r = std::mem::take(&mut *st.borrow_mut());
    r.flush();
    r.close_anchor();
    r
}

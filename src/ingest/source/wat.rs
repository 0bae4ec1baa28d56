//! WAT records (Common Crawl's metadata files, `*.warc.wat.gz`): a
//! `metadata` record of `Content-Type: application/json` whose JSON
//! describes another record of the crawl. Read inside a WARC file
//! ([`super::warc`]: same units, same resume points), so that a WAT file is
//! an input as any WARC file is; `formats/wat.md` is the layout.
//!
//! Only the JSON of a `response` (`Envelope` → `WARC-Header-Metadata` →
//! `WARC-Type`) with HTTP metadata (`Payload-Metadata` →
//! `HTTP-Response-Metadata`) becomes a page; those of requests, `warcinfo`
//! and `metadata` records only count. The page: its URL the enveloped
//! record's `WARC-Target-URI` (else the WAT record's), its date the
//! enveloped `WARC-Date` (else the record's), its status
//! `Response-Message` → `Status`; a 3xx with a `Location` header is a
//! redirect (its one link), another status outside 2xx a skip
//! (`error-status`), a `Content-Type` header that is not HTML a skip
//! (`not-html`). From `HTML-Metadata`: the title (`Head` → `Title`), the
//! base (`Head` → `Base`), and the links kept, in this order:
//! `Head` → `Metas` with `http-equiv: refresh` (the URL of their content, as
//! the HTML extractor reads `<meta http-equiv=refresh>`), then the `Links`
//! entries of paths `A@/href` (anchor text: `text`), `AREA@/href` (anchor
//! text: `alt`), `FRAME@/src` and `IFRAME@/src` (no anchor text) — the
//! links the HTML extractor keeps. Other paths (`IMG@/src`, `LINK@/href`,
//! `SCRIPT@/src`, `FORM@/action`…) are not links of the page graph and are
//! left out. Titles and anchor texts are collapsed and cut as the extractor
//! keeps them, hrefs trimmed, the per-page link limit applied.
//!
//! JSON that does not parse (or does not have this shape) is a skip
//! (`bad-metadata`) naming the file and the record's offset; a record cut at
//! the per-record limit cannot be read whole and is a skip (`too-large`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::ingest::html::{
    collapse, refresh_url, trim_url, MAX_ANCHOR_BYTES, MAX_HREF_BYTES, MAX_TITLE_BYTES,
};
use crate::ingest::page::RawLink;
use crate::ingest::records::LinkKind;
use crate::ingest::source::{
    checked_url, is_html_type, Content, Counts, Item, MetaContent, PageItem, ReadContext,
};
use crate::ingest::warc::{self, WarcRecord};
use crate::input::SkipKind;

/// Is `rec` (a `metadata` record) a WAT record: JSON by its content type?
pub fn is_wat_record(rec: &WarcRecord) -> bool {
    rec.content_type()
        .and_then(warc::media_type)
        .is_some_and(|m| m == "application/json")
}

/// The parts of a WAT record's JSON that make a page; everything else is
/// ignored.
#[derive(Deserialize)]
struct Wat {
    #[serde(rename = "Envelope")]
    envelope: Envelope,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "WARC-Header-Metadata", default)]
    warc: WarcHeader,
    #[serde(rename = "Payload-Metadata", default)]
    payload: Payload,
}

#[derive(Deserialize, Default)]
struct WarcHeader {
    #[serde(rename = "WARC-Type")]
    kind: Option<String>,
    #[serde(rename = "WARC-Target-URI")]
    target: Option<String>,
    #[serde(rename = "WARC-Date")]
    date: Option<String>,
}

#[derive(Deserialize, Default)]
struct Payload {
    #[serde(rename = "HTTP-Response-Metadata")]
    http: Option<HttpResponse>,
}

#[derive(Deserialize)]
struct HttpResponse {
    #[serde(rename = "Response-Message")]
    message: Option<ResponseMessage>,
    #[serde(rename = "Headers", default)]
    headers: BTreeMap<String, Value>,
    #[serde(rename = "HTML-Metadata")]
    html: Option<HtmlMetadata>,
}

#[derive(Deserialize)]
struct ResponseMessage {
    #[serde(rename = "Status")]
    status: Option<Value>,
}

#[derive(Deserialize, Default)]
struct HtmlMetadata {
    #[serde(rename = "Head", default)]
    head: Head,
    #[serde(rename = "Links", default)]
    links: Vec<WatLink>,
}

#[derive(Deserialize, Default)]
struct Head {
    #[serde(rename = "Title")]
    title: Option<String>,
    #[serde(rename = "Base")]
    base: Option<String>,
    #[serde(rename = "Metas", default)]
    metas: Vec<BTreeMap<String, Value>>,
}

#[derive(Deserialize)]
struct WatLink {
    #[serde(default)]
    path: String,
    url: Option<String>,
    text: Option<String>,
    alt: Option<String>,
}

/// A header's value (names compared without case; the first of a list).
fn header<'a>(headers: &'a BTreeMap<String, Value>, name: &str) -> Option<&'a str> {
    let v = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))?
        .1;
    match v {
        Value::String(s) => Some(s),
        Value::Array(a) => a.first().and_then(Value::as_str),
        _ => None,
    }
}

/// The kind of a `Links` entry by its path; `None` for paths that are not
/// links of the page graph.
fn link_kind(path: &str) -> Option<LinkKind> {
    let (elem, attr) = path.split_once("@/")?;
    let (elem, attr) = (elem.to_ascii_uppercase(), attr.to_ascii_lowercase());
    match (elem.as_str(), attr.as_str()) {
        ("A", "href") | ("AREA", "href") => Some(LinkKind::Anchor),
        ("FRAME", "src") | ("IFRAME", "src") => Some(LinkKind::Frame),
        _ => None,
    }
}

/// The links of a page's HTML metadata, in the order kept (refreshes, then
/// `Links`), within `max` links: (links, hrefs too long, links over the
/// limit).
fn links(html: &HtmlMetadata, max: usize) -> (Vec<RawLink>, u64, u64) {
    let refreshes = html.head.metas.iter().filter_map(|m| {
        let equiv = header(m, "http-equiv")?;
        if !trim_url(equiv).eq_ignore_ascii_case("refresh") {
            return None;
        }
        Some((LinkKind::Refresh, refresh_url(header(m, "content")?)?, ""))
    });
    let anchors = html.links.iter().filter_map(|l| {
        let kind = link_kind(&l.path)?;
        let anchor = match kind {
            LinkKind::Anchor if l.path.to_ascii_uppercase().starts_with("AREA@") => {
                l.alt.as_deref().or(l.text.as_deref())
            }
            LinkKind::Anchor => l.text.as_deref(),
            _ => None,
        };
        Some((kind, trim_url(l.url.as_deref()?), anchor.unwrap_or("")))
    });
    let (mut out, mut too_long, mut cut) = (Vec::new(), 0u64, 0u64);
    for (kind, href, anchor) in refreshes.chain(anchors) {
        if href.len() > MAX_HREF_BYTES {
            too_long += 1;
        } else if out.len() >= max {
            cut += 1;
        } else {
            out.push(RawLink {
                kind,
                href: href.to_string(),
                anchor: collapse(anchor, MAX_ANCHOR_BYTES),
            });
        }
    }
    (out, too_long, cut)
}

/// What a WAT record becomes: a page known by its title and links, a skip,
/// or only a count (the metadata of requests, `warcinfo` and `metadata`
/// records, of non-HTTP responses).
pub(super) fn wat_item(
    path: &Path,
    rec: WarcRecord,
    ctx: &ReadContext,
    counts: &mut Counts,
) -> Option<Item> {
    let place = rec.pos.to_string();
    let skip = |kind: SkipKind, detail: String| Some(Item::skip(kind, path, &place, detail));
    if rec.is_cut() {
        return skip(
            SkipKind::TooLarge,
            format!(
                "WAT record of {} bytes, over the per-record limit of {} bytes under this --mem: its JSON cannot be read whole",
                rec.length, ctx.limits.record_bytes
            ),
        );
    }
    let wat: Wat = match serde_json::from_slice(&rec.block) {
        Ok(w) => w,
        Err(e) => return skip(SkipKind::BadMetadata, format!("bad WAT JSON: {e}")),
    };
    let env = wat.envelope;
    if !env
        .warc
        .kind
        .as_deref()
        .is_some_and(|k| k.eq_ignore_ascii_case("response"))
    {
        return None;
    }
    let http = env.payload.http?;
    let target = env.warc.target.as_deref().or(rec.target_uri());
    let url = match checked_url(path, target, "WAT response", &place, counts) {
        Ok(u) => u,
        Err(item) => return Some(item),
    };
    let status = http.message.as_ref().and_then(|m| match &m.status {
        Some(Value::String(s)) => s.trim().parse::<u16>().ok(),
        Some(Value::Number(n)) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
        _ => None,
    });
    let Some(status) = status else {
        return skip(
            SkipKind::BadMetadata,
            "WAT response without a Response-Message status".into(),
        );
    };
    let location = header(&http.headers, "location").map(str::to_string);
    let content_type = header(&http.headers, "content-type")
        .unwrap_or("")
        .to_string();
    let redirect = (300..400).contains(&status) && location.is_some();
    if !redirect {
        if !(200..300).contains(&status) {
            counts.error_status += 1;
            return skip(SkipKind::ErrorStatus, format!("HTTP status {status}"));
        }
        let media = warc::media_type(&content_type).unwrap_or_default();
        if !is_html_type(&media) {
            counts.not_html += 1;
            return skip(
                SkipKind::NotHtml,
                format!("media type {media:?} is not HTML"),
            );
        }
    }
    // A redirect's body is not read (as for a WARC response): its one link
    // is its Location.
    let html = if redirect {
        HtmlMetadata::default()
    } else {
        http.html.unwrap_or_default()
    };
    let (kept, hrefs_dropped, cut) = links(&html, ctx.limits.links);
    let mut cuts = Vec::new();
    if cut > 0 {
        cuts.push((
            SkipKind::LinksCut,
            format!(
                "{} links kept, {cut} more dropped: the per-page limit under this --mem",
                kept.len()
            ),
        ));
    }
    let date = env
        .warc
        .date
        .as_deref()
        .or(rec.date())
        .unwrap_or("")
        .to_string();
    Some(Item::Page(Box::new(PageItem {
        url,
        status,
        date,
        location: if redirect { location } else { None },
        content: Content::Meta(Box::new(MetaContent {
            content_type,
            title: collapse(html.head.title.as_deref().unwrap_or(""), MAX_TITLE_BYTES),
            base: html.head.base,
            links: kept,
            hrefs_dropped,
        })),
        file: path.to_path_buf(),
        place,
        cuts,
        permit: None,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(json: serde_json::Value) -> HtmlMetadata {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn link_paths_kept_and_left_out() {
        let h = html(serde_json::json!({
            "Head": {
                "Title": "  Two\n words ",
                "Metas": [
                    {"name": "robots", "content": "noindex"},
                    {"http-equiv": "Refresh", "content": "5; url='next.html'"},
                    {"http-equiv": "refresh", "content": "30"}
                ]
            },
            "Links": [
                {"path": "A@/href", "url": " a.html ", "text": "the  a\tlink"},
                {"path": "IMG@/src", "url": "i.png", "alt": "image"},
                {"path": "AREA@/href", "url": "map.html", "alt": "region"},
                {"path": "LINK@/href", "url": "style.css"},
                {"path": "IFRAME@/src", "url": "frame.html"},
                {"path": "FORM@/action", "url": "post"},
                {"path": "A@/href", "text": "no url"}
            ]
        }));
        let (l, long, cut) = links(&h, 100);
        let got: Vec<_> = l
            .iter()
            .map(|l| (l.kind, l.href.as_str(), l.anchor.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (LinkKind::Refresh, "next.html", ""),
                (LinkKind::Anchor, "a.html", "the a link"),
                (LinkKind::Anchor, "map.html", "region"),
                (LinkKind::Frame, "frame.html", ""),
            ]
        );
        assert_eq!((long, cut), (0, 0));
        let (l, _, cut) = links(&h, 2);
        assert_eq!((l.len(), cut), (2, 2));
    }

    #[test]
    fn headers_by_any_case_and_lists() {
        let h: BTreeMap<String, Value> = serde_json::from_value(serde_json::json!({
            "content-TYPE": "text/html; charset=utf-8",
            "Location": ["/a", "/b"]
        }))
        .unwrap();
        assert_eq!(header(&h, "Content-Type"), Some("text/html; charset=utf-8"));
        assert_eq!(header(&h, "location"), Some("/a"));
        assert_eq!(header(&h, "server"), None);
    }
}

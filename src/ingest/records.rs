//! The payloads of the per-page files ingest writes and resolve reads (see
//! `formats/pagefiles.md`). Each kind shares the page-file layout of
//! [`super::pagefile`]; these are the kind-specific fields after the page delta.

use crate::error::Result;
use crate::ingest::pagefile::{get_bytes, get_str, get_u64};
use crate::varint;

/// Kind of the page list: one record per page.
pub const PAGES_KIND: &str = "pages";
/// Kind of the token streams: one record per page that had HTML.
pub const TEXT_KIND: &str = "text";
/// Kind of the repository: one record per page, its body.
pub const REPO_KIND: &str = "repo";
/// Kind of the raw links: any number of records per page.
pub const LINKS_KIND: &str = "links";
/// Kind of the page → docID map: one record per page.
pub const PAGEDOC_KIND: &str = "pagedoc";
/// Kind of the anchors: records keyed by target docID.
pub const ANCHORS_KIND: &str = "anchors";

/// A page as listed in `pages.wm`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageRec {
    /// The page's normalized URL.
    pub url: String,
    /// Title, empty when none.
    pub title: String,
    /// Body bytes.
    pub bytes: u64,
    /// HTTP status (0 for files from a directory).
    pub status: u16,
    /// Capture date (WARC-Date), empty for files from a directory.
    pub date: String,
}

impl PageRec {
    /// Appends the payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        varint::put(out, u64::from(self.status));
        varint::put(out, self.bytes);
        varint::put_bytes(out, self.url.as_bytes());
        varint::put_bytes(out, self.title.as_bytes());
        varint::put_bytes(out, self.date.as_bytes());
    }

    /// Decodes a payload.
    pub fn decode(input: &mut &[u8]) -> Result<PageRec> {
        let status = get_u64(input, "status")?;
        Ok(PageRec {
            status: u16::try_from(status)
                .map_err(|_| crate::Error::record(format!("status {status} out of range")))?,
            bytes: get_u64(input, "byte count")?,
            url: get_str(input, "URL")?.to_string(),
            title: get_str(input, "title")?.to_string(),
            date: get_str(input, "date")?.to_string(),
        })
    }
}

/// What kind of element a link came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum LinkKind {
    /// `<a href>` or `<area href>`.
    Anchor = 0,
    /// `<frame src>` or `<iframe src>`.
    Frame = 1,
    /// `<meta http-equiv=refresh>`.
    Refresh = 2,
    /// An HTTP redirect (`Location` of a 3xx response).
    Redirect = 3,
}

impl LinkKind {
    /// From its stored byte.
    pub fn from_u8(b: u8) -> Option<LinkKind> {
        Some(match b {
            0 => LinkKind::Anchor,
            1 => LinkKind::Frame,
            2 => LinkKind::Refresh,
            3 => LinkKind::Redirect,
            _ => return None,
        })
    }

    /// Its name in dumps.
    pub fn name(self) -> &'static str {
        match self {
            LinkKind::Anchor => "a",
            LinkKind::Frame => "frame",
            LinkKind::Refresh => "refresh",
            LinkKind::Redirect => "redirect",
        }
    }
}

/// Reads a link kind byte.
pub fn get_kind(input: &mut &[u8]) -> Result<LinkKind> {
    let (&b, rest) = input
        .split_first()
        .ok_or_else(|| crate::Error::record("bad link kind"))?;
    *input = rest;
    LinkKind::from_u8(b).ok_or_else(|| crate::Error::record(format!("unknown link kind {b}")))
}

/// A link as listed in `links.wm`: from the record's page to `target`.
pub fn encode_link(kind: LinkKind, target: &str, anchor: &str, out: &mut Vec<u8>) {
    out.push(kind as u8);
    varint::put_bytes(out, target.as_bytes());
    varint::put_bytes(out, anchor.as_bytes());
}

/// Decodes a link payload: (kind, target, anchor).
pub fn decode_link<'a>(input: &mut &'a [u8]) -> Result<(LinkKind, &'a str, &'a str)> {
    let kind = get_kind(input)?;
    Ok((kind, get_str(input, "target")?, get_str(input, "anchor")?))
}

/// A token stream as stored in `text.wm`: words separated by single spaces,
/// and one flags byte per word (see [`crate::ingest::html`]).
pub fn encode_text(words: &str, flags: &[u8], out: &mut Vec<u8>) {
    varint::put_bytes(out, words.as_bytes());
    varint::put_bytes(out, flags);
}

/// Decodes a text payload: (words, flags).
pub fn decode_text<'a>(input: &mut &'a [u8]) -> Result<(&'a str, &'a [u8])> {
    let words = get_str(input, "words")?;
    let flags = get_bytes(input, "flags")?;
    let n = if words.is_empty() {
        0
    } else {
        words.split(' ').count()
    };
    if n != flags.len() {
        return Err(crate::Error::record(format!(
            "{n} words but {} flags",
            flags.len()
        )));
    }
    Ok((words, flags))
}

/// A repository payload: content type and body.
pub fn encode_repo(content_type: &str, body: &[u8], out: &mut Vec<u8>) {
    varint::put_bytes(out, content_type.as_bytes());
    varint::put_bytes(out, body);
}

/// Decodes a repository payload: (content type, body).
pub fn decode_repo<'a>(input: &mut &'a [u8]) -> Result<(&'a str, &'a [u8])> {
    Ok((get_str(input, "content type")?, get_bytes(input, "body")?))
}

/// A `pagedoc` payload: the page's docID, and whether the doc's entry points
/// back at this page (`false` for a second capture of the same URL).
pub fn encode_pagedoc(doc: u64, canonical: bool, out: &mut Vec<u8>) {
    varint::put(out, doc << 1 | u64::from(canonical));
}

/// Decodes a `pagedoc` payload.
pub fn decode_pagedoc(input: &mut &[u8]) -> Result<(u64, bool)> {
    let v = get_u64(input, "docID")?;
    Ok((v >> 1, v & 1 == 1))
}

/// An `anchors` payload (the record's key is the target docID).
pub fn encode_anchor(src: u64, kind: LinkKind, text: &str, out: &mut Vec<u8>) {
    varint::put(out, src);
    out.push(kind as u8);
    varint::put_bytes(out, text.as_bytes());
}

/// Decodes an `anchors` payload: (source docID, kind, text).
pub fn decode_anchor<'a>(input: &mut &'a [u8]) -> Result<(u64, LinkKind, &'a str)> {
    let src = get_u64(input, "source docID")?;
    let kind = get_kind(input)?;
    Ok((src, kind, get_str(input, "anchor text")?))
}

/// The page-file kinds.
pub const KINDS: [&str; 6] = [
    PAGES_KIND,
    TEXT_KIND,
    REPO_KIND,
    LINKS_KIND,
    PAGEDOC_KIND,
    ANCHORS_KIND,
];

/// The TSV header of a kind's record dump.
pub fn dump_header(kind: &str) -> &'static str {
    match kind {
        PAGES_KIND => "# page\turl\tstatus\tbytes\tdate\ttitle",
        TEXT_KIND => "# page\twords\tflags",
        REPO_KIND => "# page\tcontent_type\tbytes\tbody",
        LINKS_KIND => "# page\tkind\ttarget\tanchor",
        PAGEDOC_KIND => "# page\tdocid\tcanonical",
        ANCHORS_KIND => "# target\tsource\tkind\ttext",
        _ => "#",
    }
}

/// Decodes one payload of `kind` (checking it) and, when `line` is given,
/// formats the record as a TSV line (without the newline).
pub fn format_record(
    kind: &str,
    key: u64,
    input: &mut &[u8],
    line: Option<&mut String>,
) -> Result<()> {
    use crate::tsv::escape;
    use std::fmt::Write;
    let s = match kind {
        PAGES_KIND => {
            let p = PageRec::decode(input)?;
            line.is_some().then(|| {
                format!(
                    "{key}\t{}\t{}\t{}\t{}\t{}",
                    escape(&p.url),
                    p.status,
                    p.bytes,
                    escape(&p.date),
                    escape(&p.title)
                )
            })
        }
        TEXT_KIND => {
            let (words, flags) = decode_text(input)?;
            line.is_some().then(|| {
                let mut f = String::with_capacity(flags.len() * 3);
                for (i, b) in flags.iter().enumerate() {
                    if i > 0 {
                        f.push(' ');
                    }
                    let _ = write!(f, "{b:02x}");
                }
                format!("{key}\t{}\t{f}", escape(words))
            })
        }
        REPO_KIND => {
            let (ct, body) = decode_repo(input)?;
            line.is_some().then(|| {
                format!(
                    "{key}\t{}\t{}\t{}",
                    escape(ct),
                    body.len(),
                    escape(&String::from_utf8_lossy(body))
                )
            })
        }
        LINKS_KIND => {
            let (k, target, anchor) = decode_link(input)?;
            line.is_some().then(|| {
                format!(
                    "{key}\t{}\t{}\t{}",
                    k.name(),
                    escape(target),
                    escape(anchor)
                )
            })
        }
        PAGEDOC_KIND => {
            let (doc, canonical) = decode_pagedoc(input)?;
            line.is_some()
                .then(|| format!("{key}\t{doc}\t{}", u8::from(canonical)))
        }
        ANCHORS_KIND => {
            let (src, k, text) = decode_anchor(input)?;
            line.is_some()
                .then(|| format!("{key}\t{src}\t{}\t{}", k.name(), escape(text)))
        }
        other => {
            return Err(crate::Error::record(format!(
                "not a page-file kind: {other:?}"
            )))
        }
    };
    if let (Some(l), Some(s)) = (line, s) {
        *l = s;
    }
    Ok(())
}

//! The payloads of the per-page files ingest writes and resolve reads (see
//! `formats/pagefiles.md`). Each kind shares the page-file layout of
//! [`crate::container::pagefile`]; these are the kind-specific fields after the page delta.

use std::io::Write;
use std::path::Path;

use crate::container::pagefile::{get_bytes, get_str, get_u64, PageFile};
use crate::container::FileKind;
use crate::error::{IoContext, Result};
use crate::tsv::escape;
use crate::varint;

/// A page-file kind: its [`FileKind`] from the payload's record formatter
/// (which checks a payload and, when asked, formats it as a TSV line) and the
/// dump's header line.
macro_rules! page_kind {
    ($(#[$doc:meta])* $name:ident, $tag:literal, $version:literal, $what:literal, $format:path, $header:literal) => {
        $(#[$doc])*
        pub const $name: FileKind = FileKind {
            tag: $tag,
            version: $version,
            what: $what,
            verify: |path| verify_records(path, &$name, $format),
            dump: |path, out| dump_records(path, &$name, $header, $format, out),
        };
    };
}

page_kind!(
    /// The page list: one record per page.
    PAGES, "pages", 1, "page list: per page its URL, status, size, date and title",
    format_page, "# page\turl\tstatus\tbytes\tdate\ttitle"
);
page_kind!(
    /// The token streams: one record per page that had HTML.
    TEXT, "text", 1, "token streams: per page its words and their flag bytes",
    format_text, "# page\twords\tflags"
);
page_kind!(
    /// The repository: one record per page, its body.
    REPO, "repo", 1, "repository: per page its content type and body",
    format_repo, "# page\tcontent_type\tbytes\tbody"
);
page_kind!(
    /// The raw links: any number of records per page.
    LINKS, "links", 1, "raw links: per page its links (kind, target URL, anchor text)",
    format_link, "# page\tkind\ttarget\tanchor"
);
page_kind!(
    /// The page → docID map: one record per page.
    PAGEDOC, "pagedoc", 1, "page map: per page its docID and whether it is the doc's canonical capture",
    format_pagedoc, "# page\tdocid\tcanonical"
);
page_kind!(
    /// The anchors: records keyed by target docID.
    ANCHORS, "anchors", 1, "anchors by target docID: source docID, link kind, anchor text",
    format_anchor, "# target\tsource\tkind\ttext"
);

/// Decodes (and so checks) one payload of page-file kind `kind`, advancing
/// `input` past it: how a reader finds where a record of a self-delimiting
/// kind ends.
pub fn check_record(kind: &FileKind, key: u64, input: &mut &[u8]) -> Result<()> {
    let format: FormatRecord = match kind.tag {
        "pages" => format_page,
        "text" => format_text,
        "repo" => format_repo,
        "links" => format_link,
        "pagedoc" => format_pagedoc,
        "anchors" => format_anchor,
        other => {
            return Err(crate::Error::internal(format!(
                "{other} is not a page-file kind"
            )))
        }
    };
    format(key, input, None)
}

/// A record formatter: decodes (and so checks) one payload of key `key`;
/// with `line`, formats the record as a TSV line without the newline.
type FormatRecord = fn(u64, &mut &[u8], Option<&mut String>) -> Result<()>;

fn verify_records(path: &Path, kind: &'static FileKind, format: FormatRecord) -> Result<()> {
    let f = PageFile::open(path, kind)?;
    f.container().verify(|_, _, _| Ok(()))?;
    f.for_each(|key, input| format(key, input, None))
}

fn dump_records(
    path: &Path,
    kind: &'static FileKind,
    header: &str,
    format: FormatRecord,
    out: &mut dyn Write,
) -> Result<()> {
    let f = PageFile::open(path, kind)?;
    writeln!(out, "{header}").at("stdout")?;
    let mut line = String::new();
    f.for_each(|key, input| {
        format(key, input, Some(&mut line))?;
        writeln!(out, "{line}").at("stdout")
    })
}

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
        // A byte count the compiler vectorises (`split(' ')` would call a
        // `memchr` per word).
        1 + words.bytes().filter(|&b| b == b' ').count()
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

fn format_page(key: u64, input: &mut &[u8], line: Option<&mut String>) -> Result<()> {
    let p = PageRec::decode(input)?;
    if let Some(l) = line {
        *l = format!(
            "{key}\t{}\t{}\t{}\t{}\t{}",
            escape(&p.url),
            p.status,
            p.bytes,
            escape(&p.date),
            escape(&p.title)
        );
    }
    Ok(())
}

fn format_text(key: u64, input: &mut &[u8], line: Option<&mut String>) -> Result<()> {
    use std::fmt::Write;
    let (words, flags) = decode_text(input)?;
    if let Some(l) = line {
        let mut f = String::with_capacity(flags.len() * 3);
        for (i, b) in flags.iter().enumerate() {
            if i > 0 {
                f.push(' ');
            }
            let _ = write!(f, "{b:02x}");
        }
        *l = format!("{key}\t{}\t{f}", escape(words));
    }
    Ok(())
}

fn format_repo(key: u64, input: &mut &[u8], line: Option<&mut String>) -> Result<()> {
    let (ct, body) = decode_repo(input)?;
    if let Some(l) = line {
        *l = format!(
            "{key}\t{}\t{}\t{}",
            escape(ct),
            body.len(),
            escape(&String::from_utf8_lossy(body))
        );
    }
    Ok(())
}

fn format_link(key: u64, input: &mut &[u8], line: Option<&mut String>) -> Result<()> {
    let (k, target, anchor) = decode_link(input)?;
    if let Some(l) = line {
        *l = format!(
            "{key}\t{}\t{}\t{}",
            k.name(),
            escape(target),
            escape(anchor)
        );
    }
    Ok(())
}

fn format_pagedoc(key: u64, input: &mut &[u8], line: Option<&mut String>) -> Result<()> {
    let (doc, canonical) = decode_pagedoc(input)?;
    if let Some(l) = line {
        *l = format!("{key}\t{doc}\t{}", u8::from(canonical));
    }
    Ok(())
}

fn format_anchor(key: u64, input: &mut &[u8], line: Option<&mut String>) -> Result<()> {
    let (src, k, text) = decode_anchor(input)?;
    if let Some(l) = line {
        *l = format!("{key}\t{src}\t{}\t{}", k.name(), escape(text));
    }
    Ok(())
}

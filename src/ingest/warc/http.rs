//! HTTP responses as crawlers store them: [`parse_http_response`] takes a
//! `response` record's block apart (status line, header fields, body with
//! chunked transfer coding and gzip/deflate content coding undone), tolerant
//! of what is found in real captures.

use std::borrow::Cow;
use std::io::Read;

use super::stream::GZIP_MAGIC;
use super::truncate;

/// An HTTP response taken apart (from a `response` record's block).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse<'a> {
    /// The protocol, e.g. `HTTP/1.1`.
    pub version: Cow<'a, str>,
    /// The status code (e.g. 200).
    pub status: u16,
    /// The reason phrase, possibly empty.
    pub reason: Cow<'a, str>,
    /// Header fields in order, names as written; folded lines are joined.
    pub headers: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    /// The body, with chunked transfer coding and gzip/deflate content coding
    /// undone.
    pub body: Cow<'a, [u8]>,
    /// Set when the body could not be decoded fully (corrupt or truncated
    /// chunks or compressed data, output over `max_bytes`, unknown coding):
    /// `body` then holds what could be had.
    pub body_note: Option<String>,
    /// `true` when the body was cut at the `max_bytes` given to
    /// [`parse_http_response`] (its decoded form was longer).
    pub body_cut: bool,
}

impl<'a> HttpResponse<'a> {
    /// A `resource` record seen as a response: status 200, `Content-Type` as
    /// the only header, the block as body.
    pub fn from_resource(content_type: Option<&'a str>, block: &'a [u8]) -> HttpResponse<'a> {
        HttpResponse {
            version: Cow::Borrowed(""),
            status: 200,
            reason: Cow::Borrowed(""),
            headers: content_type
                .map(|ct| (Cow::Borrowed("Content-Type"), Cow::Borrowed(ct)))
                .into_iter()
                .collect(),
            body: Cow::Borrowed(block),
            body_note: None,
            body_cut: false,
        }
    }

    /// The value of the first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }

    /// The `Content-Type` header.
    pub fn content_type(&self) -> Option<&str> {
        self.header("Content-Type")
    }

    /// The media type of `Content-Type`, lowercase, without parameters
    /// (e.g. `text/html`).
    pub fn media_type(&self) -> Option<String> {
        self.content_type().and_then(media_type)
    }

    /// The `charset` parameter of `Content-Type`, without quotes.
    pub fn charset(&self) -> Option<&str> {
        self.content_type().and_then(charset_param)
    }
}

/// The media type of a `Content-Type` value, lowercase and without parameters;
/// `None` when empty.
pub fn media_type(content_type: &str) -> Option<String> {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if essence.is_empty() {
        None
    } else {
        Some(essence.to_ascii_lowercase())
    }
}

/// The `charset` parameter of a `Content-Type` value, without quotes.
pub fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        (!value.is_empty()).then_some(value)
    })
}

/// Does the data start like an HTTP status line (`HTTP`, any case, then the
/// version: `HTTP/1.1`, and the mangled `HTTPX/1.1` or `http/1.0` seen in
/// captures)?
pub(super) fn starts_with_http(data: &[u8]) -> bool {
    data.len() >= 5 && data[..4].eq_ignore_ascii_case(b"HTTP")
}

/// Splits off one line (up to LF, trailing CRs dropped); the rest follows.
fn split_line(data: &[u8]) -> (&[u8], &[u8]) {
    let (mut line, rest) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[data.len()..]),
    };
    while let [head @ .., b'\r'] = line {
        line = head;
    }
    (line, rest)
}

/// Parses an HTTP response (status line, headers, body) from a WARC block.
///
/// Tolerates what crawlers store: a missing reason phrase, a mangled protocol
/// name (`HTTPX/1.1`, `http/1.0`), bare LF (or
/// CR CR LF) line ends, a block that ends inside the headers (empty body),
/// folded header lines, lines without a colon (ignored). The body is de-chunked
/// when `Transfer-Encoding` says `chunked` and looks chunked (some writers
/// store it de-chunked but keep the header), and decoded when
/// `Content-Encoding` is `gzip`, `x-gzip` or `deflate` and the data is
/// compressed; decoded output is cut at `max_bytes`. Problems with the body
/// are reported in [`HttpResponse::body_note`], not as errors. Errors: no
/// status line.
pub fn parse_http_response(
    block: &[u8],
    max_bytes: u64,
) -> std::result::Result<HttpResponse<'_>, String> {
    let start = block
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(block.len());
    let (status_line, mut rest) = split_line(&block[start..]);
    if !starts_with_http(status_line) {
        let shown = String::from_utf8_lossy(&status_line[..status_line.len().min(60)]).into_owned();
        return Err(format!("not an HTTP response: status line {shown:?}"));
    }
    let status_text = String::from_utf8_lossy(status_line);
    let (version, after) = match status_text.split_once([' ', '\t']) {
        Some((v, a)) => (v.to_string(), a.trim_start()),
        None => (status_text.to_string(), ""),
    };
    let digits: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
    let status: u16 = match digits.parse() {
        Ok(s) if digits.len() == 3 => s,
        _ => {
            return Err(format!(
                "bad HTTP status line {:?}",
                truncate(&status_text, 80)
            ))
        }
    };
    let reason = after[digits.len()..].trim().to_string();
    let mut headers: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
    loop {
        if rest.is_empty() {
            break;
        }
        let (line, next) = split_line(rest);
        rest = next;
        if line.is_empty() {
            break;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            if let Some((_, value)) = headers.last_mut() {
                let more = String::from_utf8_lossy(line);
                let joined = format!("{} {}", value, more.trim());
                *value = Cow::Owned(joined);
            }
            continue;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let name = trim_cow(String::from_utf8_lossy(&line[..colon]));
        let value = trim_cow(String::from_utf8_lossy(&line[colon + 1..]));
        headers.push((name, value));
    }
    let mut resp = HttpResponse {
        version: Cow::Owned(version),
        status,
        reason: Cow::Owned(reason),
        headers,
        body: Cow::Borrowed(rest),
        body_note: None,
        body_cut: false,
    };
    let chunked = resp
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("Transfer-Encoding"))
        .any(|(_, v)| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        if let Some((body, note)) = dechunk(rest) {
            resp.body = Cow::Owned(body);
            resp.body_note = note;
        }
    }
    let codings: Vec<String> = resp
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("Content-Encoding"))
        .flat_map(|(_, v)| {
            v.split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    // Codings apply in order, so they are undone from the last.
    for coding in codings.iter().rev() {
        match decode_content(&resp.body, coding, max_bytes) {
            Decoded::Done(body, note, cut) => {
                resp.body = Cow::Owned(body);
                resp.body_cut |= cut;
                if note.is_some() {
                    resp.body_note = note;
                }
            }
            Decoded::NotEncoded => {}
            Decoded::Unsupported => {
                resp.body_note = Some(format!(
                    "unsupported Content-Encoding {coding:?}: body left encoded"
                ));
                break;
            }
        }
    }
    if resp.body.len() as u64 > max_bytes {
        let cut = max_bytes as usize;
        resp.body = match resp.body {
            Cow::Borrowed(b) => Cow::Borrowed(&b[..cut]),
            Cow::Owned(mut v) => {
                v.truncate(cut);
                Cow::Owned(v)
            }
        };
        resp.body_note = Some(format!("body cut at max_bytes ({max_bytes})"));
        resp.body_cut = true;
    }
    Ok(resp)
}

fn trim_cow(s: Cow<'_, str>) -> Cow<'_, str> {
    match s {
        Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
        Cow::Owned(o) => Cow::Owned(o.trim().to_string()),
    }
}

/// Undoes chunked transfer coding; `None` when the data does not start like a
/// chunked body (then it is taken as already de-chunked).
fn dechunk(mut data: &[u8]) -> Option<(Vec<u8>, Option<String>)> {
    let mut out = Vec::with_capacity(data.len());
    let mut first = true;
    loop {
        let (line, rest) = split_line(data);
        let size_text = String::from_utf8_lossy(line);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = if size_text.is_empty() || size_text.len() > 15 {
            None
        } else {
            usize::from_str_radix(size_text, 16).ok()
        };
        let Some(size) = size else {
            if first {
                return None;
            }
            if line.is_empty() && rest.is_empty() {
                return Some((out, Some("chunked body ends without its last chunk".into())));
            }
            return Some((
                out,
                Some("malformed chunk size line: body cut there".into()),
            ));
        };
        first = false;
        if size == 0 {
            return Some((out, None));
        }
        if rest.len() < size {
            out.extend_from_slice(rest);
            return Some((out, Some("chunked body is truncated".into())));
        }
        out.extend_from_slice(&rest[..size]);
        data = &rest[size..];
        // The CRLF after the chunk data (tolerate LF only, or nothing).
        if let Some(after) = data.strip_prefix(b"\r\n") {
            data = after;
        } else if let Some(after) = data.strip_prefix(b"\n") {
            data = after;
        }
    }
}

enum Decoded {
    Done(Vec<u8>, Option<String>, bool),
    NotEncoded,
    Unsupported,
}

fn decode_content(body: &[u8], coding: &str, max_bytes: u64) -> Decoded {
    fn run<R: Read>(mut decoder: R, max_bytes: u64) -> (Vec<u8>, Option<String>, bool) {
        let mut out = Vec::new();
        let result = (&mut decoder)
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut out);
        let mut note = None;
        let mut cut = false;
        if let Err(e) = result {
            note = Some(format!(
                "compressed body is corrupt or truncated ({e}): kept the {} bytes decoded",
                out.len()
            ));
        }
        if out.len() as u64 > max_bytes {
            out.truncate(max_bytes as usize);
            note = Some(format!("decoded body cut at max_bytes ({max_bytes})"));
            cut = true;
        }
        (out, note, cut)
    }
    match coding {
        "gzip" | "x-gzip" => {
            if !body.starts_with(&GZIP_MAGIC[..2]) {
                return Decoded::NotEncoded;
            }
            let (out, note, cut) = run(flate2::read::MultiGzDecoder::new(body), max_bytes);
            Decoded::Done(out, note, cut)
        }
        "deflate" => {
            // RFC 9110 says zlib, but many servers send raw deflate.
            let zlib = body.len() >= 2
                && body[0] & 0x0f == 8
                && (u16::from(body[0]) << 8 | u16::from(body[1])) % 31 == 0;
            let (out, note, cut) = if zlib {
                run(flate2::read::ZlibDecoder::new(body), max_bytes)
            } else {
                run(flate2::read::DeflateDecoder::new(body), max_bytes)
            };
            if out.is_empty() && note.is_some() {
                return Decoded::NotEncoded;
            }
            Decoded::Done(out, note, cut)
        }
        _ => Decoded::Unsupported,
    }
}

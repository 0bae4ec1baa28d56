//! WARC records: the record types, the header fields, and reading a record's
//! version line and header from the stream (the block is read by the reader,
//! [`super::WarcReader`]).

use serde::{Deserialize, Serialize};

use crate::ingest::limits::Permit;

use super::http::{parse_http_response, starts_with_http, HttpResponse};
use super::stream::Stop;
use super::{Line, WarcEvent, WarcPosition, WarcReader};

/// Longest accepted WARC header (version line and fields).
const MAX_HEADER_BYTES: usize = 1 << 20;
/// Longest accepted version line.
pub(super) const MAX_VERSION_LINE: usize = 64;

/// The `WARC-Type` of a record.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RecordType {
    /// Information about the file or the crawl (also an ARC file's version block).
    Warcinfo,
    /// A full response from a server (usually an HTTP response).
    Response,
    /// A resource without protocol envelope (a file, or a DNS answer).
    Resource,
    /// The request sent.
    Request,
    /// Metadata about another record.
    Metadata,
    /// A revisit: the content was seen before (see `WARC-Refers-To-*`).
    Revisit,
    /// An alternative version of another record's content.
    Conversion,
    /// A segment of a record split across files.
    Continuation,
    /// Any other value (kept as written), or an empty string when missing.
    Other(String),
}

impl RecordType {
    /// The type named by a `WARC-Type` value (compared without case).
    pub fn from_name(name: &str) -> RecordType {
        let name = name.trim();
        const KNOWN: [(&str, RecordType); 8] = [
            ("warcinfo", RecordType::Warcinfo),
            ("response", RecordType::Response),
            ("resource", RecordType::Resource),
            ("request", RecordType::Request),
            ("metadata", RecordType::Metadata),
            ("revisit", RecordType::Revisit),
            ("conversion", RecordType::Conversion),
            ("continuation", RecordType::Continuation),
        ];
        for (known, kind) in KNOWN {
            if name.eq_ignore_ascii_case(known) {
                return kind;
            }
        }
        RecordType::Other(name.to_string())
    }

    /// The lowercase `WARC-Type` value.
    pub fn as_str(&self) -> &str {
        match self {
            RecordType::Warcinfo => "warcinfo",
            RecordType::Response => "response",
            RecordType::Resource => "resource",
            RecordType::Request => "request",
            RecordType::Metadata => "metadata",
            RecordType::Revisit => "revisit",
            RecordType::Conversion => "conversion",
            RecordType::Continuation => "continuation",
            RecordType::Other(s) => s,
        }
    }
}

/// One record of a WARC (or ARC) file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarcRecord {
    /// Where the record starts (see [`WarcPosition`]).
    pub pos: WarcPosition,
    /// Its `WARC-Type`.
    pub kind: RecordType,
    /// The version line, e.g. `WARC/1.0`; `ARC/1` or `ARC/2` for ARC records.
    pub version: String,
    /// Header fields in file order, names as written (look them up with
    /// [`WarcRecord::header`]). ARC records get synthesized WARC fields.
    pub headers: Vec<(String, String)>,
    /// The block: exactly `Content-Length` bytes, or its first
    /// [`WarcOptions::keep_block_bytes`](super::WarcOptions) when it is longer.
    pub block: Vec<u8>,
    /// The block's length as written (`Content-Length`): more than
    /// `block.len()` when the reader kept only the first part.
    pub length: u64,
    /// Held while this big record is in memory (see [`WarcReader::set_gate`]).
    pub permit: Option<Permit>,
}

/// A block as the reader read it: its kept bytes, its whole length, and the
/// gate's permit when it is big.
pub(super) struct Block {
    pub(super) data: Vec<u8>,
    pub(super) length: u64,
    pub(super) permit: Option<Permit>,
}

impl WarcRecord {
    /// The value of the first header field called `name` (any case), trimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `WARC-Target-URI`, without the `<>` some writers put around it.
    pub fn target_uri(&self) -> Option<&str> {
        self.header("WARC-Target-URI").map(strip_angle_brackets)
    }

    /// `WARC-Date` (ISO 8601, e.g. `2014-01-03T03:03:21Z`).
    pub fn date(&self) -> Option<&str> {
        self.header("WARC-Date")
    }

    /// `WARC-Record-ID` (e.g. `<urn:uuid:...>`).
    pub fn record_id(&self) -> Option<&str> {
        self.header("WARC-Record-ID")
    }

    /// `Content-Type` of the block (e.g. `application/http; msgtype=response`).
    pub fn content_type(&self) -> Option<&str> {
        self.header("Content-Type")
    }

    /// `WARC-Refers-To-Target-URI` (revisit records), without `<>`.
    pub fn refers_to_target_uri(&self) -> Option<&str> {
        self.header("WARC-Refers-To-Target-URI")
            .map(strip_angle_brackets)
    }

    /// `true` when the reader kept only the first part of the block.
    pub fn is_cut(&self) -> bool {
        (self.block.len() as u64) < self.length
    }

    /// The document this record holds, as an HTTP response:
    /// - a `response` record whose block is an HTTP response: the block parsed
    ///   by [`parse_http_response`] (errors are the parser's);
    /// - a `resource` record: status 200, the record's `Content-Type` as the
    ///   only header, the block as the body;
    /// - anything else (requests, DNS responses, metadata...): `None`.
    pub fn http_response(
        &self,
        max_bytes: u64,
    ) -> Option<std::result::Result<HttpResponse<'_>, String>> {
        match self.kind {
            RecordType::Response => {
                let start = self
                    .block
                    .iter()
                    .position(|&b| b != b'\r' && b != b'\n')
                    .unwrap_or(self.block.len());
                if starts_with_http(&self.block[start..]) {
                    Some(parse_http_response(&self.block, max_bytes))
                } else {
                    None
                }
            }
            RecordType::Resource => Some(Ok(HttpResponse::from_resource(
                self.content_type(),
                &self.block,
            ))),
            _ => None,
        }
    }
}

fn strip_angle_brackets(s: &str) -> &str {
    let s = s.trim();
    s.strip_prefix('<')
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(s)
        .trim()
}

/// Does `w` start with a whole version line: `WARC/` digits `.` digits, then
/// optional spaces, tabs or CRs, then LF?
pub(super) fn is_version_line(w: &[u8]) -> bool {
    let Some(rest) = w.strip_prefix(b"WARC/") else {
        return false;
    };
    let major = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if major == 0 || rest.get(major) != Some(&b'.') {
        return false;
    }
    let rest = &rest[major + 1..];
    let minor = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if minor == 0 {
        return false;
    }
    let rest = &rest[minor..];
    let pad = rest
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t' || b == b'\r')
        .count();
    // No longer than `read_warc` reads: a longer one would be found here
    // again and again by the resync after `read_warc` refused it.
    rest.get(pad) == Some(&b'\n') && "WARC/".len() + major + 1 + minor + pad <= MAX_VERSION_LINE
}

/// `WARC/` digits `.` digits.
fn valid_version(v: &str) -> bool {
    let Some(rest) = v.strip_prefix("WARC/") else {
        return false;
    };
    let mut parts = rest.splitn(2, '.');
    let major = parts.next().unwrap_or("");
    let minor = parts.next().unwrap_or("");
    !major.is_empty()
        && !minor.is_empty()
        && major.bytes().all(|b| b.is_ascii_digit())
        && minor.bytes().all(|b| b.is_ascii_digit())
}

/// A decimal number with optional surrounding whitespace.
pub(super) fn parse_decimal(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl WarcReader {
    /// Reads a WARC record whose version line starts at `at`.
    pub(super) fn read_warc(&mut self, at: WarcPosition) -> std::result::Result<WarcEvent, Stop> {
        let mut line = Vec::new();
        match self.read_line(&mut line, MAX_VERSION_LINE)? {
            Line::Complete => {}
            Line::TooLong => return self.bad_record(at, "version line is too long".into(), false),
            Line::End(end) => return Ok(self.cut_short(at, end, "version line")),
        }
        let version = String::from_utf8_lossy(&line).trim().to_string();
        if !valid_version(&version) {
            return self.bad_record(at, format!("bad version line {version:?}"), true);
        }
        let mut headers: Vec<(String, String)> = Vec::new();
        let mut budget = MAX_HEADER_BYTES;
        loop {
            match self.read_line(&mut line, budget)? {
                Line::Complete => {}
                Line::TooLong => {
                    return self.bad_record(
                        at,
                        format!("header is longer than {MAX_HEADER_BYTES} bytes"),
                        false,
                    )
                }
                Line::End(end) => return Ok(self.cut_short(at, end, "header")),
            }
            budget = budget.saturating_sub(line.len() + 1);
            if line.is_empty() {
                break;
            }
            if line[0] == b' ' || line[0] == b'\t' {
                if let Some((_, value)) = headers.last_mut() {
                    let more = String::from_utf8_lossy(&line);
                    value.push(' ');
                    value.push_str(more.trim());
                }
                continue;
            }
            // A line without a colon is not a field; it is ignored.
            if let Some(colon) = line.iter().position(|&b| b == b':') {
                let name = String::from_utf8_lossy(&line[..colon]).trim().to_string();
                let value = String::from_utf8_lossy(&line[colon + 1..])
                    .trim()
                    .to_string();
                headers.push((name, value));
            }
        }
        let length = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("Content-Length"))
            .map(|(_, v)| v.clone());
        let length = match length.as_deref().map(parse_decimal) {
            Some(Some(n)) => n,
            Some(None) => {
                let v = length.unwrap_or_default();
                return self.bad_record(at, format!("invalid Content-Length {v:?}"), true);
            }
            None => return self.bad_record(at, "no Content-Length field".into(), true),
        };
        let block = match self.read_record_block(at, length)? {
            Ok(block) => block,
            Err(skip) => return Ok(skip),
        };
        let kind = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("WARC-Type"))
            .map(|(_, v)| RecordType::from_name(v))
            .unwrap_or(RecordType::Other(String::new()));
        Ok(WarcEvent::Record(WarcRecord {
            pos: at,
            kind,
            version,
            headers,
            block: block.data,
            length: block.length,
            permit: block.permit,
        }))
    }
}

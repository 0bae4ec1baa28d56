//! ARC files, the Internet Archive's format before WARC: telling them from WARC
//! by their first line, parsing ARC header lines (versions 1 and 2), and
//! turning ARC records into WARC-like records with synthesized headers (see
//! the [module docs](super), `# Inputs`).

use super::http::starts_with_http;
use super::record::Block;
use super::record::{parse_decimal, RecordType, WarcRecord};
use super::stream::{Stop, Stream};
use super::{truncate, ArchiveFormat, Line, WarcEvent, WarcPosition, WarcReader};

/// Longest ARC header line.
pub(super) const MAX_ARC_LINE: usize = 8 * 1024;

/// A parsed ARC header line.
struct ArcHeader {
    url: String,
    ip: String,
    date: String,
    content_type: String,
    length: u64,
}

/// Is this line shaped like an ARC header (five or more fields, a URL first,
/// the length last)? The length need not be valid.
pub(super) fn looks_like_arc_header(line: &[u8]) -> bool {
    let text = String::from_utf8_lossy(line);
    let fields: Vec<&str> = text.split_ascii_whitespace().collect();
    fields.len() >= 5
        && fields[0].contains(':')
        && fields[0]
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
}

impl ArcHeader {
    fn parse(line: &[u8], version: u8) -> std::result::Result<ArcHeader, String> {
        let text = String::from_utf8_lossy(line);
        let fields: Vec<&str> = text.split_ascii_whitespace().collect();
        if !looks_like_arc_header(line) {
            return Err(format!("bad ARC header line {:?}", truncate(&text, 200)));
        }
        let n = fields.len();
        let last = fields[n - 1];
        let length = parse_decimal(last)
            .ok_or_else(|| format!("ARC header line has an invalid length {last:?}"))?;
        // Fields counted from the right, so a URL with spaces stays whole.
        let (url_end, ip, date, ct) = if version == 2 && n >= 10 {
            (n - 9, fields[n - 9], fields[n - 8], fields[n - 7])
        } else {
            (n - 4, fields[n - 4], fields[n - 3], fields[n - 2])
        };
        Ok(ArcHeader {
            url: fields[..url_end].join(" "),
            ip: ip.to_string(),
            date: date.to_string(),
            content_type: ct.to_string(),
            length,
        })
    }

    fn into_record(self, at: WarcPosition, version: u8, block: Block) -> WarcRecord {
        let Block {
            data: block,
            length,
            permit,
        } = block;
        let (kind, content_type) = if self.url.starts_with("filedesc:") {
            (RecordType::Warcinfo, self.content_type)
        } else if self.url.starts_with("http") && starts_with_http(&block) {
            (
                RecordType::Response,
                "application/http; msgtype=response".to_string(),
            )
        } else {
            (RecordType::Resource, self.content_type)
        };
        let headers = vec![
            ("WARC-Type".to_string(), kind.as_str().to_string()),
            ("WARC-Target-URI".to_string(), self.url),
            ("WARC-Date".to_string(), arc_date_to_iso(&self.date)),
            ("WARC-IP-Address".to_string(), self.ip),
            ("Content-Type".to_string(), content_type),
            ("Content-Length".to_string(), length.to_string()),
        ];
        WarcRecord {
            pos: at,
            kind,
            version: format!("ARC/{version}"),
            headers,
            block,
            length,
            permit,
        }
    }
}

/// `20140216050221` (or longer) as `2014-02-16T05:02:21Z`; other text unchanged.
fn arc_date_to_iso(d: &str) -> String {
    let b = d.as_bytes();
    if b.len() >= 14 && b.iter().all(|c| c.is_ascii_digit()) {
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            &d[0..4],
            &d[4..6],
            &d[6..8],
            &d[8..10],
            &d[10..12],
            &d[12..14]
        )
    } else {
        d.to_string()
    }
}

/// Tells WARC from ARC by the first line of the file (ARC version from the
/// `filedesc://` block). Leaves the stream anywhere: the caller seeks after.
pub(super) fn sniff_format(stream: &mut Stream) -> std::result::Result<ArchiveFormat, Stop> {
    // Skip leading blank lines.
    loop {
        if stream.window().is_empty() {
            if stream.fill_unit()? {
                continue;
            }
            if !stream.next_member()? {
                return Ok(ArchiveFormat::Warc);
            }
            continue;
        }
        let w = stream.window();
        let n = w.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
        stream.consume(n);
        if !stream.window().is_empty() {
            break;
        }
    }
    stream.ensure(MAX_ARC_LINE)?;
    let w = stream.window();
    let Some(end) = w.iter().position(|&b| b == b'\n') else {
        return Ok(ArchiveFormat::Warc);
    };
    if !looks_like_arc_header(&w[..end]) {
        return Ok(ArchiveFormat::Warc);
    }
    let mut version = 1;
    if w.starts_with(b"filedesc:") {
        // The version block's first line: "1 0 name" or "2 0 name".
        let rest = &w[end + 1..];
        if rest.first() == Some(&b'2') && rest.get(1).is_some_and(|b| b.is_ascii_whitespace()) {
            version = 2;
        }
    }
    Ok(ArchiveFormat::Arc { version })
}

impl WarcReader {
    /// Reads an ARC record whose header line starts at `at`.
    pub(super) fn read_arc(&mut self, at: WarcPosition) -> std::result::Result<WarcEvent, Stop> {
        let mut line = Vec::new();
        match self.read_line(&mut line, MAX_ARC_LINE)? {
            Line::Complete => {}
            Line::TooLong => {
                return self.bad_record(at, "ARC header line is too long".into(), false)
            }
            Line::End(end) => return Ok(self.cut_short(at, end, "ARC header line")),
        }
        let version = match self.format {
            ArchiveFormat::Arc { version } => version,
            ArchiveFormat::Warc => 1,
        };
        let header = match ArcHeader::parse(&line, version) {
            Ok(h) => h,
            Err(reason) => return self.bad_record(at, reason, true),
        };
        let block = match self.read_record_block(at, header.length)? {
            Ok(block) => block,
            Err(skip) => return Ok(skip),
        };
        Ok(WarcEvent::Record(header.into_record(at, version, block)))
    }
}

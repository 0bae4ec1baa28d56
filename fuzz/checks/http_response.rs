//! The HTTP response parser (status line, headers, chunked bodies, gzip and
//! deflate content coding) on arbitrary blocks: never panics, never returns
//! a body over its limit.

use webmill::ingest::warc::parse_http_response;

/// The check: panics on a violated property, returns on anything else.
pub fn check(data: &[u8]) {
    if let Ok(resp) = parse_http_response(data, 1 << 16) {
        assert!(resp.body.len() <= 1 << 16);
        let _ = (resp.media_type(), resp.charset());
    }
}

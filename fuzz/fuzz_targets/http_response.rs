//! The HTTP response parser (status line, headers, chunked bodies, gzip and
//! deflate content coding) on arbitrary blocks: never panics, never returns
//! a body over its limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webmill::ingest::warc::parse_http_response;

fuzz_target!(|data: &[u8]| {
    if let Ok(resp) = parse_http_response(data, 1 << 16) {
        assert!(resp.body.len() <= 1 << 16);
        let _ = (resp.media_type(), resp.charset());
    }
});

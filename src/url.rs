//! URLs: resolution, normalization, fingerprints and the host-grouping sort key.
//!
//! Every URL webmill keeps goes through [`normalize`] (or [`resolve`] for a
//! link relative to its page): a WHATWG parse (the `url` crate), which already
//! lowercases the scheme and host, drops the scheme's default port and
//! percent-encodes what must be; then the fragment is dropped. Only `http`,
//! `https` and `file` URLs are kept; `mailto:`, `javascript:` and the like are
//! not pages.
//!
//! [`sort_key`] orders URLs so that one host's pages are contiguous and a site's
//! pages sit next to each other by path: the host's labels reversed (SURT
//! style, `org,example,www`), the port if any, `)`, the path and query, then a
//! NUL and the URL itself, which keeps distinct URLs distinct and makes the key
//! decodable ([`url_of_key`]). DocIDs are handed out in this order.

use ::url::Url;

/// Schemes whose URLs are kept.
const SCHEMES: [&str; 3] = ["http", "https", "file"];

/// Longest URL kept, in bytes (32 KiB: 8× the 4 KiB most servers accept,
/// so real URLs, even long query strings, are kept). A page whose URL is
/// longer is skipped and a link to one dropped, both reported
/// ([`UrlVerdict::TooLong`]), never silently.
pub const MAX_URL_BYTES: usize = 32 << 10;

/// What [`normalize_checked`] and [`resolve_checked`] made of a URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UrlVerdict {
    /// The normalized URL.
    Kept(String),
    /// Normalized, it has this many bytes, more than [`MAX_URL_BYTES`].
    TooLong(usize),
    /// Not a URL webmill keeps: unparsable, another scheme, no host, empty
    /// or fragment-only.
    NotWeb,
}

impl UrlVerdict {
    /// The URL, if kept.
    pub fn kept(self) -> Option<String> {
        match self {
            UrlVerdict::Kept(s) => Some(s),
            _ => None,
        }
    }
}

fn finish(mut url: Url) -> UrlVerdict {
    if !SCHEMES.contains(&url.scheme()) {
        return UrlVerdict::NotWeb;
    }
    if url.scheme() != "file" && url.host_str().is_none_or(str::is_empty) {
        return UrlVerdict::NotWeb;
    }
    url.set_fragment(None);
    let s = String::from(url);
    if s.len() <= MAX_URL_BYTES {
        UrlVerdict::Kept(s)
    } else {
        UrlVerdict::TooLong(s.len())
    }
}

/// Parses and normalizes an absolute URL, saying why when it is not kept.
pub fn normalize_checked(raw: &str) -> UrlVerdict {
    match Url::parse(raw.trim()) {
        Ok(u) => finish(u),
        Err(_) => UrlVerdict::NotWeb,
    }
}

/// Parses and normalizes an absolute URL; `None` if it is not a URL webmill keeps.
pub fn normalize(raw: &str) -> Option<String> {
    normalize_checked(raw).kept()
}

/// Resolves `href` (as found in a page) against `base`, saying why when it
/// is not kept.
pub fn resolve_checked(base: &Url, href: &str) -> UrlVerdict {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') {
        return UrlVerdict::NotWeb;
    }
    match base.join(href) {
        Ok(u) => finish(u),
        Err(_) => UrlVerdict::NotWeb,
    }
}

/// Resolves `href` (as found in a page) against `base`; normalized, or `None`.
pub fn resolve(base: &Url, href: &str) -> Option<String> {
    resolve_checked(base, href).kept()
}

/// The 64-bit fingerprint of a normalized URL (xxh3).
pub fn fingerprint(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
}

/// The host part of a sort key: reversed labels and port, up to and including `)`.
fn host_key(url: &Url, out: &mut Vec<u8>) {
    if let Some(host) = url.host_str() {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let is_name = matches!(url.host(), Some(url::Host::Domain(_)));
        if is_name {
            for (i, label) in host.rsplit('.').enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(label.as_bytes());
            }
        } else {
            out.extend_from_slice(host.as_bytes());
        }
    }
    if let Some(port) = url.port() {
        out.push(b':');
        out.extend_from_slice(port.to_string().as_bytes());
    }
    out.push(b')');
}

/// The sort key of a normalized URL (see the module docs). Appends to `out`.
pub fn sort_key(url: &str, out: &mut Vec<u8>) {
    match Url::parse(url) {
        Ok(u) => {
            host_key(&u, out);
            out.extend_from_slice(u.path().as_bytes());
            if let Some(q) = u.query() {
                out.push(b'?');
                out.extend_from_slice(q.as_bytes());
            }
        }
        // Not reachable for normalized URLs; still a valid key.
        Err(_) => out.push(b')'),
    }
    out.push(0);
    out.extend_from_slice(url.as_bytes());
}

/// The URL inside a sort key.
pub fn url_of_key(key: &[u8]) -> &[u8] {
    match key.iter().position(|&b| b == 0) {
        Some(i) => &key[i + 1..],
        None => key,
    }
}

/// The host part of a sort key (reversed labels, port, `)`): pages with equal
/// host parts belong to one host.
pub fn host_of_key(key: &[u8]) -> &[u8] {
    match key.iter().position(|&b| b == b')') {
        Some(i) => &key[..=i],
        None => key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_like_whatwg() {
        assert_eq!(
            normalize("HTTP://Example.COM:80/a/../b?x=1#frag").as_deref(),
            Some("http://example.com/b?x=1")
        );
        assert_eq!(
            normalize("https://example.com:443").as_deref(),
            Some("https://example.com/")
        );
        assert_eq!(
            normalize("https://example.com:8443/").as_deref(),
            Some("https://example.com:8443/")
        );
        assert_eq!(normalize("mailto:a@b.c"), None);
        assert_eq!(normalize("javascript:void(0)"), None);
        assert_eq!(normalize("not a url"), None);
        let long = format!("http://h.example/{}", "x".repeat(MAX_URL_BYTES));
        assert_eq!(
            normalize_checked(&long),
            UrlVerdict::TooLong(MAX_URL_BYTES + 17)
        );
        let kept = format!("http://h.example/{}", "x".repeat(10_000));
        assert_eq!(normalize(&kept), Some(kept.clone()));
        assert_eq!(
            normalize("file:///tmp/x y.html").as_deref(),
            Some("file:///tmp/x%20y.html")
        );
    }

    #[test]
    fn resolves_relative_links() {
        let base = Url::parse("http://h.example/docs/a/index.html").unwrap();
        assert_eq!(
            resolve(&base, "../b.html#x").as_deref(),
            Some("http://h.example/docs/b.html")
        );
        assert_eq!(resolve(&base, "#top"), None);
        assert_eq!(resolve(&base, "  "), None);
        assert_eq!(
            resolve(&base, "//other.example/").as_deref(),
            Some("http://other.example/")
        );
        assert_eq!(resolve(&base, "mailto:x@y"), None);
    }

    #[test]
    fn sort_keys_group_hosts() {
        let key = |u: &str| {
            let mut k = Vec::new();
            sort_key(u, &mut k);
            k
        };
        let a = key("http://www.example.com/z");
        let b = key("https://example.com/a");
        let c = key("http://example.com:8080/a");
        let d = key("http://www.example.com/a");
        assert_eq!(host_of_key(&a), b"com,example,www)");
        assert_eq!(host_of_key(&c), b"com,example:8080)");
        assert_eq!(url_of_key(&d), b"http://www.example.com/a");
        // Same host → contiguous, ordered by path; `)` ends the host part and
        // sorts before `,` and `:`, so a host's keys never interleave with another's.
        let mut keys = [a.clone(), b.clone(), c.clone(), d.clone()];
        keys.sort();
        assert_eq!(keys, [b, d, a, c]);
        assert_eq!(host_of_key(&key("file:///x/y.html")), b")");
    }
}

//! URL normalization, resolution and sort keys on arbitrary strings: a kept
//! URL is within the limit, normalizing it again gives it back, and its sort
//! key gives the URL back.

use webmill::ingest::url::{self, UrlVerdict, MAX_URL_BYTES};

/// The check: panics on a violated property, returns on anything else.
pub fn check(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let base = ::url::Url::parse("http://base.example/a/b.html").expect("base");
    for v in [url::normalize_checked(s), url::resolve_checked(&base, s)] {
        if let UrlVerdict::Kept(u) = v {
            assert!(u.len() <= MAX_URL_BYTES);
            assert_eq!(
                url::normalize(&u).as_deref(),
                Some(u.as_str()),
                "not idempotent"
            );
            let mut key = Vec::new();
            url::sort_key(&u, &mut key);
            assert_eq!(url::url_of_key(&key), u.as_bytes());
            let _ = url::host_of_key(&key);
            let _ = url::fingerprint(&u);
        }
    }
}

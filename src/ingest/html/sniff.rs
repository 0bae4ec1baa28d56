//! What a body is before it is parsed: the signatures of binary formats, too
//! many control bytes, and its charset (a byte order mark, the HTTP header, the
//! WHATWG `<meta>` prescan of the first [`SNIFF_BYTES`] bytes), then decoding
//! to UTF-8. The rules are in the [module docs](super) (`# Charset`, `# Not
//! HTML`).

use encoding_rs::{CoderResult, Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252};

use super::classes::is_space;
use super::{CharsetSource, NotHtml, SNIFF_BYTES};

/// Decodes `body` with `enc` into `out` (cleared first); true if any malformed
/// sequence was replaced.
pub(super) fn decode(enc: &'static Encoding, body: &[u8], out: &mut String) -> bool {
    out.clear();
    let mut decoder = enc.new_decoder_without_bom_handling();
    let want = decoder
        .max_utf8_buffer_length(body.len())
        .unwrap_or(body.len().saturating_mul(3));
    out.reserve(want);
    let mut src = body;
    let mut replaced = false;
    loop {
        let (result, read, rep) = decoder.decode_to_string(src, out, true);
        replaced |= rep;
        src = src.get(read..).unwrap_or_default();
        match result {
            CoderResult::InputEmpty => return replaced,
            CoderResult::OutputFull => out.reserve(src.len().saturating_mul(3).max(64)),
        }
    }
}

/// Signatures of binary formats, checked at offset 0 (bzip2 and MP3, whose
/// signatures could start a text, are checked in [`binary_signature`]).
const SIGNATURES: &[(&[u8], &str)] = &[
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"%PDF-", "PDF"),
    (b"\x1f\x8b", "gzip"),
    (b"PK\x03\x04", "zip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x7fELF", "ELF"),
    (b"\x00asm", "WebAssembly"),
    (b"RIFF", "RIFF"),
    (b"OggS", "Ogg"),
    (b"\x1a\x45\xdf\xa3", "Matroska"),
    (b"\x00\x00\x01\x00", "ICO"),
    (b"wOFF", "WOFF"),
    (b"wOF2", "WOFF2"),
];

pub(super) fn binary_signature(body: &[u8]) -> Option<&'static str> {
    for &(magic, name) in SIGNATURES {
        if body.starts_with(magic) {
            return Some(name);
        }
    }
    // "BZh" + block size digit + the block magic 0x314159265359.
    if body.len() >= 10
        && body.starts_with(b"BZh")
        && (b'1'..=b'9').contains(&body[3])
        && &body[4..10] == b"1AY&SY"
    {
        return Some("bzip2");
    }
    // "ID3" + major version 2..=4 + revision.
    if body.len() >= 5 && body.starts_with(b"ID3") && (2..=4).contains(&body[3]) && body[4] < 0x10 {
        return Some("MP3");
    }
    if body.len() >= 12 && &body[4..8] == b"ftyp" {
        return Some("MP4");
    }
    None
}

pub(super) fn check_control_bytes(body: &[u8]) -> Result<(), NotHtml> {
    let sample = &body[..body.len().min(SNIFF_BYTES)];
    let mut nul = 0u32;
    let mut control = 0u32;
    for &b in sample {
        match b {
            0 => nul += 1,
            b'\t' | b'\n' | 0x0c | b'\r' | 0x1b => {}
            1..=0x1f => control += 1,
            _ => {}
        }
    }
    let sampled = sample.len() as u32;
    if nul >= 4 || (nul + control) * 10 > sampled {
        return Err(NotHtml::ControlBytes {
            nul,
            control,
            sampled,
        });
    }
    Ok(())
}

/// Chooses the encoding: BOM, header, meta prescan, UTF-8. Returns the
/// encoding, where it came from and the length of the BOM to skip.
pub(super) fn sniff_charset(
    body: &[u8],
    header: Option<&str>,
) -> (&'static Encoding, CharsetSource, usize) {
    if let Some((enc, len)) = Encoding::for_bom(body) {
        return (enc, CharsetSource::Bom, len);
    }
    if let Some(label) = header {
        let label = label.trim().trim_matches(|c| c == '"' || c == '\'');
        if let Some(enc) = Encoding::for_label(label.as_bytes()) {
            return (enc, CharsetSource::Header, 0);
        }
    }
    if let Some(enc) = prescan(&body[..body.len().min(SNIFF_BYTES)]) {
        return (enc, CharsetSource::Meta, 0);
    }
    (UTF_8, CharsetSource::Default, 0)
}

/// The WHATWG "prescan a byte stream to determine its encoding" over `b`.
fn prescan(b: &[u8]) -> Option<&'static Encoding> {
    let n = b.len();
    let mut i = 0;
    while i < n {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            // The first '>' preceded by "--", counting from the "<!--" itself.
            let mut j = i + 2;
            loop {
                match b.get(j..j + 3) {
                    Some(b"-->") => break,
                    Some(_) => j += 1,
                    None => return None,
                }
            }
            i = j + 3;
        } else if rest.len() >= 6
            && rest[1..5].eq_ignore_ascii_case(b"meta")
            && (is_space(rest[5]) || rest[5] == b'/')
        {
            let mut j = i + 6;
            let mut got_pragma = false;
            let mut need_pragma: Option<bool> = None;
            let mut charset: Option<&'static Encoding> = None;
            let mut seen: Vec<Vec<u8>> = Vec::new();
            while let Some((name, value, next)) = prescan_attr(b, j) {
                j = next;
                if seen.contains(&name) {
                    continue;
                }
                match name.as_slice() {
                    b"http-equiv" if value.eq_ignore_ascii_case(b"content-type") => {
                        got_pragma = true;
                    }
                    b"content" if charset.is_none() => {
                        if let Some(enc) = charset_from_content(&value) {
                            charset = Some(enc);
                            need_pragma = Some(true);
                        }
                    }
                    b"charset" => {
                        let label = trim_space(&value);
                        charset = Encoding::for_label(label);
                        need_pragma = Some(false);
                    }
                    _ => {}
                }
                seen.push(name);
            }
            let ok = match need_pragma {
                None => false,
                Some(true) => got_pragma,
                Some(false) => true,
            };
            if let (true, Some(enc)) = (ok, charset) {
                return Some(if enc == UTF_16BE || enc == UTF_16LE {
                    UTF_8
                } else if enc == encoding_rs::X_USER_DEFINED {
                    WINDOWS_1252
                } else {
                    enc
                });
            }
            i = j;
        } else if rest.len() >= 2
            && (rest[1].is_ascii_alphabetic()
                || (rest[1] == b'/' && rest.get(2).is_some_and(|c| c.is_ascii_alphabetic())))
        {
            let mut j = i + 2;
            while j < n && !is_space(b[j]) && b[j] != b'>' {
                j += 1;
            }
            while let Some((_, _, next)) = prescan_attr(b, j) {
                j = next;
            }
            i = j;
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            match b[i..].iter().position(|&c| c == b'>') {
                Some(p) => i += p + 1,
                None => return None,
            }
        } else {
            i += 1;
        }
    }
    None
}

fn trim_space(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|&c| !is_space(c)).unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(start, |p| p + 1);
    &v[start..end.max(start)]
}

/// "Get an attribute" of the prescan: (lowercased name, value, next position),
/// or `None` at `>` or the end of the sample.
fn prescan_attr(b: &[u8], mut i: usize) -> Option<(Vec<u8>, Vec<u8>, usize)> {
    let n = b.len();
    while i < n && (is_space(b[i]) || b[i] == b'/') {
        i += 1;
    }
    if i >= n || b[i] == b'>' {
        return None;
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    loop {
        let c = *b.get(i)?;
        if c == b'=' && !name.is_empty() {
            i += 1;
            break;
        } else if is_space(c) {
            while i < n && is_space(b[i]) {
                i += 1;
            }
            if b.get(i) != Some(&b'=') {
                return Some((name, value, i));
            }
            i += 1;
            break;
        } else if c == b'/' || c == b'>' {
            return Some((name, value, i));
        } else {
            name.push(c.to_ascii_lowercase());
            i += 1;
        }
    }
    while i < n && is_space(b[i]) {
        i += 1;
    }
    let c = *b.get(i)?;
    if c == b'"' || c == b'\'' {
        let close = b[i + 1..].iter().position(|&x| x == c)?;
        value.extend(
            b[i + 1..i + 1 + close]
                .iter()
                .map(|x| x.to_ascii_lowercase()),
        );
        return Some((name, value, i + close + 2));
    }
    if c == b'>' {
        return Some((name, value, i));
    }
    while i < n && !is_space(b[i]) && b[i] != b'>' {
        value.push(b[i].to_ascii_lowercase());
        i += 1;
    }
    if i >= n {
        return None;
    }
    Some((name, value, i))
}

/// "Extract a character encoding from a meta element" (`…;charset=x`).
fn charset_from_content(v: &[u8]) -> Option<&'static Encoding> {
    let mut i = 0;
    loop {
        let p = v
            .get(i..)?
            .windows(7)
            .position(|w| w.eq_ignore_ascii_case(b"charset"))?;
        i += p + 7;
        while i < v.len() && is_space(v[i]) {
            i += 1;
        }
        if v.get(i) == Some(&b'=') {
            i += 1;
            break;
        }
    }
    while i < v.len() && is_space(v[i]) {
        i += 1;
    }
    let c = *v.get(i)?;
    let label = if c == b'"' || c == b'\'' {
        let close = v[i + 1..].iter().position(|&x| x == c)?;
        &v[i + 1..i + 1 + close]
    } else {
        let end = v[i..]
            .iter()
            .position(|&x| is_space(x) || x == b';')
            .map_or(v.len(), |p| i + p);
        &v[i..end]
    };
    Encoding::for_label(label)
}

#[cfg(test)]
mod tests {
    use crate::ingest::html::tests::{links, words};
    use crate::ingest::html::{flag, CharsetSource, Extractor, LinkKind, NotHtml};

    #[test]
    fn charset_from_header_meta_bom() {
        let mut ex = Extractor::new();
        let body = b"<p>Caf\xe9 \x93quoted\x94 \x80 100</p>";
        let p = ex.extract(body, Some("ISO-8859-1")).expect("html");
        assert_eq!(
            (p.charset, p.charset_source),
            ("windows-1252", CharsetSource::Header)
        );
        assert_eq!(words(p), ["café", "quoted", "100"]);
        assert!(!p.had_replacements);
        // Without a header: UTF-8 with replacement characters.
        let p = ex.extract(body, None).expect("html");
        assert_eq!(
            (p.charset, p.charset_source),
            ("UTF-8", CharsetSource::Default)
        );
        assert_eq!(words(p), ["caf", "quoted", "100"]);
        assert!(p.had_replacements);
        // Unknown header labels are ignored.
        let p = ex
            .extract(b"<meta charset=koi8-r>\xf0\xd2\xc9", Some("no-such"))
            .expect("html");
        assert_eq!(
            (p.charset, p.charset_source),
            ("KOI8-R", CharsetSource::Meta)
        );
        assert_eq!(words(p), ["при"]);
        // http-equiv form, attributes in any order, after a comment with a decoy.
        let body = b"<!-- <meta charset=big5> --><meta content='text/html; charset=\"windows-1251\"' http-equiv=Content-Type>\xcf\xf0\xe8";
        let p = ex.extract(body, None).expect("html");
        assert_eq!(
            (p.charset, p.charset_source),
            ("windows-1251", CharsetSource::Meta)
        );
        assert_eq!(words(p), ["при"]);
        // content charset without http-equiv does not count.
        let p = ex
            .extract(b"<meta content='charset=windows-1251'>x", None)
            .expect("html");
        assert_eq!(p.charset_source, CharsetSource::Default);
        // A meta after the first 1024 bytes is not seen.
        let late = format!("{}<meta charset=windows-1251>", " ".repeat(1100));
        let p = ex.extract(late.as_bytes(), None).expect("html");
        assert_eq!(p.charset_source, CharsetSource::Default);
        // A declared UTF-16 in meta means UTF-8.
        let p = ex
            .extract("<meta charset=utf-16>é".as_bytes(), None)
            .expect("html");
        assert_eq!(
            (p.charset, p.charset_source),
            ("UTF-8", CharsetSource::Meta)
        );
        assert_eq!(words(p), ["é"]);
        // A BOM wins over header and meta.
        let p = ex
            .extract(
                b"\xef\xbb\xbf<meta charset=windows-1252>\xc3\xa9t\xc3\xa9",
                Some("iso-8859-1"),
            )
            .expect("html");
        assert_eq!((p.charset, p.charset_source), ("UTF-8", CharsetSource::Bom));
        assert_eq!(words(p), ["été"]);
        // UTF-16LE with BOM (has NUL bytes, is still HTML).
        let mut body = vec![0xff, 0xfe];
        for u in "<title>Ünï</title><p>Wörter</p>".encode_utf16() {
            body.extend_from_slice(&u.to_le_bytes());
        }
        let p = ex.extract(&body, None).expect("html");
        assert_eq!(
            (p.charset, p.charset_source),
            ("UTF-16LE", CharsetSource::Bom)
        );
        assert_eq!(p.title, "Ünï");
        assert_eq!(words(p), ["wörter"]);
    }

    #[test]
    fn shift_jis_page() {
        let html = "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=Shift_JIS\">\
                    <title>日本語のページ</title></head><body><h1>東京タワー</h1><p>Tokyo 「観光」</p>\
                    <a href=\"/検索?q=塔\">検索</a></body></html>";
        let (bytes, _, bad) = encoding_rs::SHIFT_JIS.encode(html);
        assert!(!bad);
        let mut ex = Extractor::new();
        let p = ex.extract(&bytes, None).expect("html");
        assert_eq!(
            (p.charset, p.charset_source),
            ("Shift_JIS", CharsetSource::Meta)
        );
        assert_eq!(p.title, "日本語のページ");
        assert_eq!(words(p), ["東京タワー", "tokyo", "観光", "検索"]);
        assert_eq!(flag::size(p.flags[0]), 6);
        assert_eq!(links(p), [(LinkKind::A, "/検索?q=塔", "検索")]);
        // The same bytes with the header saying so.
        let p = ex.extract(&bytes, Some("shift_jis")).expect("html");
        assert_eq!(p.charset_source, CharsetSource::Header);
        assert_eq!(p.title, "日本語のページ");
    }

    #[test]
    fn not_html() {
        let mut ex = Extractor::new();
        for (body, kind) in [
            (&b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"[..], "PNG"),
            (b"GIF89a\x01\x00", "GIF"),
            (b"\xff\xd8\xff\xe0\0\x10JFIF", "JPEG"),
            (b"%PDF-1.4\n%\xe2\xe3", "PDF"),
            (b"\x1f\x8b\x08\0\0\0\0\0", "gzip"),
            (b"BZh91AY&SY", "bzip2"),
            (b"ID3\x04\0\0\0\0\x0f", "MP3"),
            (b"\0\0\0\x20ftypisom", "MP4"),
        ] {
            assert_eq!(
                ex.extract(body, None).map(|_| ()),
                Err(NotHtml::Signature(kind))
            );
        }
        let mut bin = b"<html>".to_vec();
        bin.extend([0u8, 1, 2, 3, 0, 0, 0, 5]);
        assert!(matches!(
            ex.extract(&bin, None),
            Err(NotHtml::ControlBytes { nul: 4, .. })
        ));
        let noisy: Vec<u8> = (0..200u32)
            .map(|i| if i % 5 == 0 { 7 } else { b'a' })
            .collect();
        assert!(matches!(
            ex.extract(&noisy, None),
            Err(NotHtml::ControlBytes {
                nul: 0,
                control: 40,
                sampled: 200
            })
        ));
        // Text that starts like a signature, plain text, one stray NUL, empty: HTML.
        for ok in [
            &b"BZhello world"[..],
            b"ID3 tags explained",
            b"just text, no tags",
            b"<p>a stray \0 NUL in a page of text</p>",
            b"",
        ] {
            assert!(ex.extract(ok, None).is_ok(), "{ok:?}");
        }
        assert_eq!(
            words(ex.extract(b"just text, no tags", None).expect("text")),
            ["just", "text", "no", "tags"]
        );
    }
}

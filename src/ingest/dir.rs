//! Directory inputs: listing a site mirror, and the URL of each file.
//!
//! [`list_dir`] walks a directory recursively and returns every entry in byte
//! order of the relative paths (the order ingest numbers a directory's pages
//! in): regular files and symbolic links to regular files are read; every
//! other entry is listed too, with why it is not ([`SkipKind::Symlink`] for a
//! link to a directory — not followed, so a link cycle cannot make the walk
//! endless — or to nothing; [`SkipKind::SpecialFile`] for a FIFO, socket or
//! device, which would block or make no sense as a page). Nothing in the
//! directory is passed over silently.
//!
//! [`file_url`] makes a file's URL from its relative path under the base URL.
//! File names are bytes on Unix, not always UTF-8: a name's valid UTF-8 runs
//! are kept as characters and every byte of an invalid sequence is
//! percent-encoded (`a\xff.html` → `a%FF.html`), so names that differ only in
//! invalid bytes get distinct URLs.

use std::path::{Path, PathBuf};

use crate::error::{IoContext, Result};
use crate::ingest::url::{self, UrlVerdict};
use crate::input::SkipKind;

/// One entry of a directory input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The path relative to the directory.
    pub rel: PathBuf,
    /// `None` for a file to read; otherwise why it is not read.
    pub skip: Option<(SkipKind, String)>,
}

/// Lists `dir` recursively (see the module docs), in byte order of the
/// relative paths.
pub fn list_dir(dir: &Path) -> Result<Vec<DirEntry>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let full = dir.join(&rel);
        for e in std::fs::read_dir(&full).at(&full)? {
            let e = e.at(&full)?;
            let ft = e.file_type().at(e.path())?;
            let r = rel.join(e.file_name());
            let skip = if ft.is_dir() {
                stack.push(r);
                continue;
            } else if ft.is_file() {
                None
            } else if ft.is_symlink() {
                match std::fs::metadata(e.path()) {
                    Ok(m) if m.is_file() => None,
                    Ok(m) if m.is_dir() => Some((
                        SkipKind::Symlink,
                        "a symbolic link to a directory: not followed".to_string(),
                    )),
                    Ok(_) => Some((
                        SkipKind::SpecialFile,
                        "a symbolic link to a FIFO, socket or device: not read".to_string(),
                    )),
                    Err(err) => Some((
                        SkipKind::Symlink,
                        format!("a symbolic link that leads nowhere ({err})"),
                    )),
                }
            } else {
                Some((SkipKind::SpecialFile, special_kind(&ft).to_string()))
            };
            out.push(DirEntry { rel: r, skip });
        }
    }
    out.sort_by(|a, b| {
        a.rel
            .as_os_str()
            .as_encoded_bytes()
            .cmp(b.rel.as_os_str().as_encoded_bytes())
    });
    Ok(out)
}

#[cfg(unix)]
fn special_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        "a FIFO (named pipe): not read"
    } else if ft.is_socket() {
        "a socket: not read"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device: not read"
    } else {
        "not a regular file: not read"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "not a regular file: not read"
}

/// The raw bytes of a path component.
#[cfg(unix)]
fn raw_bytes(s: &std::ffi::OsStr) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    s.as_bytes()
}

#[cfg(not(unix))]
fn raw_bytes(s: &std::ffi::OsStr) -> &[u8] {
    s.as_encoded_bytes()
}

/// The URL path of a relative file path: components joined by `/`, each
/// character a URL path must not hold raw (`%`, `#`, `?`, `\`) and each byte
/// of invalid UTF-8 percent-encoded.
pub fn url_path(rel: &Path) -> String {
    let mut path = String::new();
    for (i, c) in rel.components().enumerate() {
        if i > 0 {
            path.push('/');
        }
        for chunk in raw_bytes(c.as_os_str()).utf8_chunks() {
            for ch in chunk.valid().chars() {
                match ch {
                    '%' => path.push_str("%25"),
                    '#' => path.push_str("%23"),
                    '?' => path.push_str("%3F"),
                    '\\' => path.push_str("%5C"),
                    c => path.push(c),
                }
            }
            for b in chunk.invalid() {
                path.push_str(&format!("%{b:02X}"));
            }
        }
    }
    path
}

/// A file's URL under `base` (see [`url_path`]), or why none is kept.
pub fn file_url(base: &::url::Url, rel: &Path) -> UrlVerdict {
    url::resolve_checked(base, &url_path(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn invalid_utf8_names_get_distinct_urls() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let base = ::url::Url::parse("http://h.example/d/").unwrap();
        let a = file_url(&base, Path::new(OsStr::from_bytes(b"a\xff.html")));
        let b = file_url(&base, Path::new(OsStr::from_bytes(b"a\xfe.html")));
        assert_eq!(a, UrlVerdict::Kept("http://h.example/d/a%FF.html".into()));
        assert_eq!(b, UrlVerdict::Kept("http://h.example/d/a%FE.html".into()));
        let c = file_url(&base, Path::new("sub/x y#1?.html"));
        assert_eq!(
            c,
            UrlVerdict::Kept("http://h.example/d/sub/x%20y%231%3F.html".into())
        );
        let d = file_url(&base, Path::new(OsStr::from_bytes("é\u{e9}".as_bytes())));
        assert_eq!(
            d,
            UrlVerdict::Kept("http://h.example/d/%C3%A9%C3%A9".into())
        );
    }

    #[cfg(unix)]
    #[test]
    fn odd_entries_are_listed_with_why() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.html"), "x").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/b.html"), "y").unwrap();
        std::os::unix::fs::symlink("a.html", d.join("l-file")).unwrap();
        std::os::unix::fs::symlink("sub", d.join("l-dir")).unwrap();
        std::os::unix::fs::symlink("nowhere", d.join("l-none")).unwrap();
        std::os::unix::fs::symlink("l-loop", d.join("l-loop")).unwrap();
        let fifo = d.join("pipe");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let got: Vec<(String, Option<SkipKind>)> = list_dir(d)
            .unwrap()
            .into_iter()
            .map(|e| (e.rel.display().to_string(), e.skip.map(|s| s.0)))
            .collect();
        assert_eq!(
            got,
            [
                ("a.html".into(), None),
                ("l-dir".into(), Some(SkipKind::Symlink)),
                ("l-file".into(), None),
                ("l-loop".into(), Some(SkipKind::Symlink)),
                ("l-none".into(), Some(SkipKind::Symlink)),
                ("pipe".into(), Some(SkipKind::SpecialFile)),
                ("sub/b.html".into(), None),
            ]
        );
    }
}

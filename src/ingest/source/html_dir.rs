//! Directories of HTML files as an input kind. A directory is listed
//! recursively in byte order of the relative paths ([`crate::ingest::dir::list_dir`]); its
//! archives are units of their own ([`super::warc`]), the runs of other
//! entries between them are cut into units of consecutive entries; a unit is
//! resumed at the index of its next entry. A file whose name ends in one of [`HTML_EXTENSIONS`] is a page
//! (its URL from the base URL and its relative path, [`file_url`]); every other
//! entry is a skip (another file, a link to a directory, a FIFO…), so that
//! nothing in the directory is passed over silently.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::ingest::dir::{file_url, DirEntry};
use crate::ingest::limits::Permit;
use crate::ingest::source::warc::ARCHIVE_SUFFIXES;
use crate::ingest::source::{
    cut_detail, Content, Counts, Cuts, InputKind, Item, Next, PageItem, ReadContext, Reader,
};
use crate::input::SkipKind;
use crate::url::{self, UrlVerdict};

/// File name extensions read as HTML in directory inputs.
pub const HTML_EXTENSIONS: [&str; 4] = ["html", "htm", "xhtml", "shtml"];

/// Is `p` an HTML file by its name?
pub fn is_html_name(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| HTML_EXTENSIONS.iter().any(|h| e.eq_ignore_ascii_case(h)))
}

/// Consecutive entries of one directory listing.
pub struct HtmlFiles {
    dir: PathBuf,
    base: ::url::Url,
    files: Vec<DirEntry>,
    bytes: u64,
}

impl HtmlFiles {
    /// The unit of `files` (entries of [`list_dir`] of `dir`), served under
    /// `base`.
    ///
    /// [`list_dir`]: crate::ingest::dir::list_dir
    pub fn new(dir: &Path, base: &::url::Url, files: Vec<DirEntry>) -> HtmlFiles {
        let bytes = files.iter().map(|f| entry_size(dir, f)).sum();
        HtmlFiles {
            dir: dir.to_path_buf(),
            base: base.clone(),
            files,
            bytes,
        }
    }
}

/// The size of an entry that is read (0 for an entry the listing skips).
fn entry_size(dir: &Path, f: &DirEntry) -> u64 {
    if f.skip.is_some() {
        0
    } else {
        std::fs::metadata(dir.join(&f.rel)).map_or(0, |m| m.len())
    }
}

impl InputKind for HtmlFiles {
    /// The index of the next entry.
    type Resume = u64;
    type Reader<'a> = FileItems<'a>;

    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn open<'a>(&'a self, at: Option<u64>, cx: &'a ReadContext<'a>) -> Result<FileItems<'a>> {
        let next = at.unwrap_or(0).min(self.files.len() as u64) as usize;
        let read = self.files[..next]
            .iter()
            .map(|f| entry_size(&self.dir, f))
            .sum();
        Ok(FileItems {
            unit: self,
            next,
            read,
            cx,
        })
    }
}

/// The items of one directory unit.
pub struct FileItems<'a> {
    unit: &'a HtmlFiles,
    next: usize,
    read: u64,
    cx: &'a ReadContext<'a>,
}

impl Reader for FileItems<'_> {
    type Resume = u64;

    fn next(&mut self, counts: &mut Counts) -> Result<Next> {
        let Some(entry) = self.unit.files.get(self.next) else {
            return Ok(Next::End);
        };
        self.next += 1;
        self.read += entry_size(&self.unit.dir, entry);
        let path = self.unit.dir.join(&entry.rel);
        let skip = |kind: SkipKind, detail: String| Item::skip(kind, &path, "", detail);
        let base = &self.unit.base;
        let item = if let Some((kind, detail)) = &entry.skip {
            skip(*kind, detail.clone())
        } else if !is_html_name(&entry.rel) {
            counts.other_files += 1;
            skip(
                SkipKind::OtherFile,
                format!(
                    "not read: its name does not end in .{} (pages) or {} (archives)",
                    HTML_EXTENSIONS.join(", ."),
                    ARCHIVE_SUFFIXES.join(", ")
                ),
            )
        } else {
            counts.files += 1;
            match file_url(base, &entry.rel) {
                UrlVerdict::NotWeb => skip(
                    SkipKind::NotWeb,
                    format!("no URL can be made for it under {base}"),
                ),
                UrlVerdict::TooLong(n) => skip(
                    SkipKind::UrlTooLong,
                    format!(
                        "its URL would have {n} bytes, more than {}",
                        url::MAX_URL_BYTES
                    ),
                ),
                UrlVerdict::Kept(url) => match read_file(&path, self.cx) {
                    Err(e) => skip(SkipKind::Unreadable, format!("cannot read: {e}")),
                    Ok((body, cuts, permit)) => Item::Page(Box::new(PageItem {
                        url,
                        status: 0,
                        date: String::new(),
                        location: None,
                        content: Content::Html {
                            content_type: "text/html".into(),
                            charset: None,
                            body,
                        },
                        file: path.clone(),
                        place: "offset 0".into(),
                        cuts,
                        permit,
                    })),
                },
            }
        };
        Ok(Next::Item(item))
    }

    fn resume_point(&self) -> u64 {
        self.next as u64
    }

    fn bytes_read(&self) -> u64 {
        self.read
    }

    fn at_end(&self) -> bool {
        self.next >= self.unit.files.len()
    }
}

/// Reads at most `limits.record_bytes` of a directory file (through the gate
/// when big): its bytes, what was cut, the permit.
pub(crate) fn read_file(
    path: &Path,
    cx: &ReadContext,
) -> std::io::Result<(Vec<u8>, Cuts, Option<Permit>)> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let keep = len.min(cx.limits.record_bytes);
    let permit = (keep > cx.limits.gate_bytes).then(|| cx.gate.enter());
    let mut body = Vec::with_capacity(keep as usize);
    file.take(cx.limits.record_bytes + 1)
        .read_to_end(&mut body)?;
    let mut cuts = Vec::new();
    if body.len() as u64 > cx.limits.record_bytes {
        body.truncate(cx.limits.record_bytes as usize);
        cuts.push((
            SkipKind::BlockCut,
            cut_detail("file", len, &cx.limits, cx.settings),
        ));
    }
    Ok((body, cuts, permit))
}

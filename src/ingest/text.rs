//! Reading the token streams of a job's pages with their docIDs: the input of
//! the near-duplicate stage and of `webmill export text`.

use std::ops::Range;
use std::path::Path;

use crate::container::pagefile::PageFile;
use crate::docs::DocTable;
use crate::error::{Error, Result};
use crate::ingest::records;
use crate::sort::{Combine, ExternalSorter, SortConfig};

/// Calls `f(page, docID, words)` for every page with a token stream, in page
/// order, skipping second captures of a URL (only the doc's own page counts).
/// Walks the token streams (`text`, a `text.wm`) and the page map
/// (`pagedoc`, a `pagedoc.wm`) side by side: no lookups.
pub fn for_each_page_text(
    text: &Path,
    pagedoc: &Path,
    f: impl FnMut(u64, u64, &str) -> Result<()>,
) -> Result<()> {
    for_each_page_text_in(text, pagedoc, 0..u64::MAX, f)
}

/// [`for_each_page_text`] for the pages of `pages` only: both files are
/// read from the block holding the range's first page to the one past its
/// end (a shard of a distributed job reads its share, not the whole job).
pub fn for_each_page_text_in(
    text: &Path,
    pagedoc: &Path,
    pages: Range<u64>,
    mut f: impl FnMut(u64, u64, &str) -> Result<()>,
) -> Result<()> {
    let text = PageFile::open(text, &records::TEXT)?;
    let map = PageFile::open(pagedoc, &records::PAGEDOC)?;
    let mut blocks = map.find_block(pages.start).unwrap_or(0)..map.container().blocks().len();
    let mut pending: std::collections::VecDeque<(u64, u64, bool)> = Default::default();
    let mut buf = (Vec::new(), Vec::new());
    let mut text_buf = (Vec::new(), Vec::new());
    let past = std::cell::Cell::new(false);
    let mut visit = |page: u64, input: &mut &[u8]| -> Result<()> {
        let (words, _) = records::decode_text(input)?;
        if page < pages.start || past.get() {
            return Ok(());
        }
        if page >= pages.end {
            past.set(true);
            return Ok(());
        }
        loop {
            match pending.front() {
                Some(&(p, _, _)) if p < page => {
                    pending.pop_front();
                }
                Some(&(p, doc, canonical)) if p == page => {
                    if canonical {
                        f(page, doc, words)?;
                    }
                    return Ok(());
                }
                Some(_) => break,
                None => match blocks.next() {
                    Some(b) => map.visit_block(b, &mut buf, |p, inp| {
                        let (doc, canonical) = records::decode_pagedoc(inp)?;
                        pending.push_back((p, doc, canonical));
                        Ok(())
                    })?,
                    None => break,
                },
            }
        }
        Err(Error::corrupt(
            map.container().path(),
            "page map",
            0,
            format!(
                "page {page} has a token stream in {} but no docID",
                text.container().path().display()
            ),
        ))
    };
    for i in text.find_block(pages.start).unwrap_or(0)..text.container().blocks().len() {
        text.visit_block(i, &mut text_buf, &mut visit)?;
        if past.get() {
            break;
        }
    }
    Ok(())
}

/// Calls `f(docID, url, words)` for every doc with a token stream, in docID
/// order: the page-ordered streams are sorted by docID externally (by the
/// sort `cfg`, whose directory is removed at the end) and walked beside the
/// doc table `docs`.
pub fn for_each_doc_text(
    text: &Path,
    pagedoc: &Path,
    docs: &Path,
    cfg: SortConfig,
    mut f: impl FnMut(u64, &str, &str) -> Result<()>,
) -> Result<()> {
    let tmp = cfg.dir.clone();
    let mut sorter = ExternalSorter::<(u64, Vec<u8>)>::new(cfg, Combine::None)?;
    for_each_page_text(text, pagedoc, |_, doc, words| {
        sorter.push((doc, words.as_bytes().to_vec()))
    })?;
    let mut sorted = sorter.finish()?;
    let docs = DocTable::open(docs)?;
    let mut walk = docs.walk();
    while let Some((doc, words)) = sorted.next_record()? {
        let url = &walk.get(doc)?.url;
        let words =
            std::str::from_utf8(&words).map_err(|_| Error::internal("words are not UTF-8"))?;
        f(doc, url, words)?;
    }
    drop(sorted);
    crate::sort::remove_sort_dir(&tmp)?;
    Ok(())
}

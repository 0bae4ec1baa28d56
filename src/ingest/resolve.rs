//! The URL resolver: the `resolve` stage. Ingested pages and links → docIDs,
//! the doc table, the URL table, the page → docID map, the link graph and the
//! anchors.
//!
//! Every step is an external sort and a merge; nothing is looked up at random:
//!
//! 1. Every URL seen goes into one sort keyed by [`url::sort_key`] (host
//!    reversed, then path): crawled pages as `(key, page, title + size)`, link
//!    targets as `(key, MAX, source page + kind + anchor)`. A URL's crawled
//!    captures come first (lowest page first), then the links to it.
//! 2. Walking that order hands out docIDs: one per distinct URL, so one host's
//!    docs are contiguous. Each doc goes to the doc table; `(fingerprint,
//!    docID)` to the URL-table sort; `(page, docID)` to the page-map sort; each
//!    link as `(source page, target docID, kind + anchor)` to the link sort —
//!    the join of links with their targets comes free with step 1's order.
//! 3. The page map is written in page order; the link sort, also in page order,
//!    is walked beside it: each link gets its source docID (a merge join).
//!    Arcs go to the forward and transposed sorts (deduplicated, self-loops
//!    dropped), anchors with text to the anchor sort, keyed by target.
//! 4. The edge files, the anchor file and the URL table are written.
//!
//! Resume: each sort keeps its runs in the stage's temporary directory; a step
//! whose successor's sorts already hold all their input is skipped, and a sort
//! interrupted mid-input drops the records its runs already cover (see
//! [`crate::sort`]), so a re-run replays its input and finishes byte-identical.

use std::path::Path;

use serde_json::json;

use crate::docs::{Doc, DocWriter};
use crate::error::{Error, Result};
use crate::graph::import::{write_edges, DOCS_FILE, EDGES_FILE, TRANSPOSED_FILE};
use crate::graph::Direction;
use crate::ingest::pagefile::{PageFile, PageFileWriter};
use crate::ingest::records::{self, PageRec};
use crate::ingest::url;
use crate::ingest::urltable::UrlTableWriter;
use crate::job::{Begin, Figures, Job, Settings, StageRecord};
use crate::progress::Unit;
use crate::sort::{Combine, ExternalSorter, SortConfig, Sorted};
use crate::varint;

/// Stage name in the job manifest.
pub const STAGE: &str = "resolve";
/// The URL table: fingerprint → docID.
pub const URLS_FILE: &str = "urls.wm";
/// The page → docID map.
pub const PAGEDOC_FILE: &str = "pagedoc.wm";
/// The anchors: (target docID, source docID, kind, text).
pub const ANCHORS_FILE: &str = "anchors.wm";

/// Step 1's records: (sort key, page or `u64::MAX` for a link, payload).
type UrlRec = (Vec<u8>, u64, Vec<u8>);
/// Step 2's link records: (source page, target docID, kind + anchor).
type LinkRec = (u64, u64, Vec<u8>);
/// Anchor records: (target docID, source docID, kind + text).
type AnchorRec = (u64, u64, Vec<u8>);

const LINK_TAG: u64 = u64::MAX;

/// How resolve ended.
pub enum ResolveOutcome {
    /// It ran (or resumed) and finished.
    Done {
        /// The manifest record.
        record: StageRecord,
        /// Whether an interrupted run was resumed.
        resumed: bool,
    },
    /// It had finished before with the same parameters.
    AlreadyDone(StageRecord),
}

fn sort_cfg(tmp: &Path, name: &str, budget: u64, s: &Settings) -> SortConfig {
    s.sort_config(tmp, STAGE, name, budget)
}

/// Runs (or resumes, or skips) the resolver over `job`'s ingested pages.
pub fn resolve(job: &mut Job, s: &Settings) -> Result<ResolveOutcome> {
    let ingest = job.finished_stage(super::STAGE)?;
    let pages_path = job.path(super::PAGES_FILE);
    let links_path = job.path(super::LINKS_FILE);
    let params = json!({
        "pages": ingest.outputs.iter().find(|o| o.path == super::PAGES_FILE).map(|o| o.checksum.clone()),
        "links": ingest.outputs.iter().find(|o| o.path == super::LINKS_FILE).map(|o| o.checksum.clone()),
    });
    let outputs = [
        DOCS_FILE,
        URLS_FILE,
        PAGEDOC_FILE,
        EDGES_FILE,
        TRANSPOSED_FILE,
        ANCHORS_FILE,
    ];
    let resumed = match job.begin(STAGE, params, &[super::STAGE], &outputs, s.force)? {
        Begin::Skip(rec) => return Ok(ResolveOutcome::AlreadyDone(rec)),
        Begin::Run { resumed } => resumed,
    };
    if resumed {
        s.reporter.note(&format!(
            "{STAGE}: resuming an interrupted run from its checkpoints in {}",
            job.tmp_dir(STAGE).display()
        ));
    }
    let tmp = job.tmp_dir(STAGE);
    let pages = PageFile::open(&pages_path, records::PAGES_KIND)?;
    let links = PageFile::open(&links_path, records::LINKS_KIND)?;

    let mut fwd = ExternalSorter::<(u64, u64)>::new(
        sort_cfg(&tmp, "forward", s.share(0.25), s),
        Combine::Dedup,
    )?;
    let mut rev = ExternalSorter::<(u64, u64)>::new(
        sort_cfg(&tmp, "transposed", s.share(0.25), s),
        Combine::Dedup,
    )?;
    let mut anchors = ExternalSorter::<AnchorRec>::new(
        sort_cfg(&tmp, "anchors", s.share(0.2), s),
        Combine::Dedup,
    )?;
    let mut counts = Counts::load(&tmp)?;
    if !(fwd.input_complete() && rev.input_complete() && anchors.input_complete()) {
        let mut url_sort = ExternalSorter::<(u64, u64)>::new(
            sort_cfg(&tmp, "url-table", s.share(0.15), s),
            Combine::None,
        )?;
        let mut page_sort = ExternalSorter::<(u64, u64)>::new(
            sort_cfg(&tmp, "page-map", s.share(0.1), s),
            Combine::None,
        )?;
        let mut link_sort = ExternalSorter::<LinkRec>::new(
            sort_cfg(&tmp, "links", s.share(0.35), s),
            Combine::Dedup,
        )?;
        let step2_done = url_sort.input_complete()
            && page_sort.input_complete()
            && link_sort.input_complete()
            && job.path(DOCS_FILE).exists();
        if !step2_done {
            let mut urls = ExternalSorter::<UrlRec>::new(
                sort_cfg(&tmp, "urls", s.share(0.5), s),
                Combine::Dedup,
            )?;
            if !urls.input_complete() {
                collect_urls(&pages, &links, &mut urls, s)?;
            }
            urls.set_merge_budget(s.share(0.1));
            let urls = urls.finish()?;
            counts = number_urls(
                urls,
                &job.path(DOCS_FILE),
                &mut url_sort,
                &mut page_sort,
                &mut link_sort,
                s,
            )?;
            counts.save(&tmp)?;
        }
        // Publish the page map and the URL table first, so that their sorts'
        // memory is free before the link join fills the arc sorts.
        page_sort.set_merge_budget(s.share(0.05));
        let page_sorted = page_sort.finish()?;
        write_pagedoc(page_sorted, &job.path(PAGEDOC_FILE), pages.records())?;
        if !job.path(URLS_FILE).exists() {
            url_sort.set_merge_budget(s.share(0.05));
            let mut sorted = url_sort.finish()?;
            let mut w = UrlTableWriter::create(job.path(URLS_FILE))?;
            while let Some((fp, doc)) = sorted.next_record()? {
                w.push(fp, doc)?;
            }
            w.finish()?;
        } else {
            drop(url_sort);
        }
        link_sort.set_merge_budget(s.share(0.1));
        let link_sorted = link_sort.finish()?;
        let arcs = join_sources(
            link_sorted,
            &job.path(PAGEDOC_FILE),
            &mut fwd,
            &mut rev,
            &mut anchors,
            s,
        )?;
        counts.self_loops = arcs.self_loops;
        counts.save(&tmp)?;
    }
    let nodes = counts.docs;
    let f = write_edges(
        fwd,
        &job.path(EDGES_FILE),
        Direction::Forward,
        nodes,
        STAGE,
        s,
    )?;
    let r = write_edges(
        rev,
        &job.path(TRANSPOSED_FILE),
        Direction::Transposed,
        nodes,
        STAGE,
        s,
    )?;
    if !job.path(ANCHORS_FILE).exists() {
        write_anchors(anchors, &job.path(ANCHORS_FILE))?;
    }
    let anchor_file = PageFile::open(job.path(ANCHORS_FILE), records::ANCHORS_KIND)?;
    let mut figures = Figures {
        records: nodes,
        ..Figures::default()
    };
    let extra = json!({
        "nodes": nodes,
        "crawled": counts.crawled,
        "hosts": counts.hosts,
        "pages": pages.records(),
        "duplicate_captures": counts.duplicate_captures,
        "links": links.records(),
        "arcs": f.arcs,
        "self_loops": counts.self_loops,
        "dangling": nodes - f.lists,
        "anchors": anchor_file.records(),
        "edges_bytes": f.bytes,
        "transposed_bytes": r.bytes,
        "bits_per_arc": if f.arcs > 0 { f.bytes as f64 * 8.0 / f.arcs as f64 } else { 0.0 },
        "max_out_degree": f.max_degree,
        "max_in_degree": r.max_degree,
    });
    if let serde_json::Value::Object(map) = extra {
        figures.extra = map;
    }
    let record = job.finish(STAGE, &outputs, figures)?;
    Ok(ResolveOutcome::Done { record, resumed })
}

/// What the numbering found, kept across a resume.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Counts {
    docs: u64,
    crawled: u64,
    hosts: u64,
    duplicate_captures: u64,
    self_loops: u64,
}

const COUNTS_FILE: &str = "counts.json";

impl Counts {
    fn load(tmp: &Path) -> Result<Counts> {
        let p = tmp.join(COUNTS_FILE);
        match std::fs::read(&p) {
            Ok(b) => serde_json::from_slice(&b)
                .map_err(|e| Error::corrupt(&p, "checkpoint", 0, e.to_string())),
            Err(_) => Ok(Counts::default()),
        }
    }

    fn save(&self, tmp: &Path) -> Result<()> {
        let bytes = serde_json::to_vec(self).map_err(|e| Error::internal(e.to_string()))?;
        crate::publish::write_atomic(tmp.join(COUNTS_FILE), &bytes)
    }
}

/// Step 1: every page URL and link target into the URL sort.
fn collect_urls(
    pages: &PageFile,
    links: &PageFile,
    urls: &mut ExternalSorter<UrlRec>,
    s: &Settings,
) -> Result<()> {
    let total = pages.records() + links.records();
    let task = s.reporter.task(
        &format!("{STAGE}: collecting URLs"),
        Some(total),
        Unit::Records,
    );
    let mut n = 0u64;
    pages.for_each(|page, input| {
        let p = PageRec::decode(input)?;
        let mut key = Vec::with_capacity(2 * p.url.len() + 16);
        url::sort_key(&p.url, &mut key);
        let mut payload = Vec::with_capacity(p.title.len() + 8);
        varint::put(&mut payload, p.bytes);
        varint::put_bytes(&mut payload, p.title.as_bytes());
        urls.push((key, page, payload))?;
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
        Ok(())
    })?;
    links.for_each(|page, input| {
        let (kind, target, anchor) = records::decode_link(input)?;
        let mut key = Vec::with_capacity(2 * target.len() + 16);
        url::sort_key(target, &mut key);
        let mut payload = Vec::with_capacity(anchor.len() + 8);
        varint::put(&mut payload, page);
        payload.push(kind as u8);
        payload.extend_from_slice(anchor.as_bytes());
        urls.push((key, LINK_TAG, payload))?;
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
        Ok(())
    })?;
    task.set_position(total);
    Ok(())
}

fn bad_record(what: &str) -> Error {
    Error::internal(format!("malformed {what} record in the URL sort"))
}

/// Step 2: docIDs in key order.
fn number_urls(
    mut urls: Sorted<UrlRec>,
    docs_path: &Path,
    url_sort: &mut ExternalSorter<(u64, u64)>,
    page_sort: &mut ExternalSorter<(u64, u64)>,
    link_sort: &mut ExternalSorter<LinkRec>,
    s: &Settings,
) -> Result<Counts> {
    let task = s
        .reporter
        .task(&format!("{STAGE}: numbering URLs"), None, Unit::Records);
    let mut docs = DocWriter::create(docs_path, STAGE)?;
    let mut c = Counts::default();
    let mut current: Option<(Vec<u8>, Doc)> = None;
    let mut host: Option<Vec<u8>> = None;
    let mut n = 0u64;
    while let Some((key, tag, payload)) = urls.next_record()? {
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
        if current.as_ref().is_none_or(|(k, _)| *k != key) {
            if let Some((_, doc)) = current.take() {
                docs.push(&doc)?;
                c.docs += 1;
            }
            let h = url::host_of_key(&key);
            if host.as_deref() != Some(h) {
                if host.is_some() {
                    c.hosts += 1;
                }
                host = Some(h.to_vec());
            }
            let u =
                String::from_utf8(url::url_of_key(&key).to_vec()).map_err(|_| bad_record("URL"))?;
            url_sort.push((url::fingerprint(&u), c.docs))?;
            let mut doc = Doc {
                url: u,
                host: c.hosts,
                ..Doc::default()
            };
            if tag != LINK_TAG {
                let mut input = &payload[..];
                doc.bytes = varint::get(&mut input).ok_or_else(|| bad_record("page"))?;
                doc.title = String::from_utf8(
                    varint::get_bytes(&mut input)
                        .ok_or_else(|| bad_record("page"))?
                        .to_vec(),
                )
                .map_err(|_| bad_record("page"))?;
                doc.crawled = true;
                doc.page = Some(tag);
                c.crawled += 1;
                page_sort.push((tag, c.docs << 1 | 1))?;
            }
            current = Some((key, doc));
            if tag != LINK_TAG {
                continue;
            }
        } else if tag != LINK_TAG {
            // Another capture of the same URL: same doc, not its page.
            c.duplicate_captures += 1;
            page_sort.push((tag, c.docs << 1))?;
            continue;
        }
        let mut input = &payload[..];
        let src = varint::get(&mut input).ok_or_else(|| bad_record("link"))?;
        link_sort.push((src, c.docs, input.to_vec()))?;
    }
    if let Some((_, doc)) = current.take() {
        docs.push(&doc)?;
        c.docs += 1;
    }
    if host.is_some() {
        c.hosts += 1;
    }
    docs.finish()?;
    Ok(c)
}

/// Step 3a: the page map, in page order.
fn write_pagedoc(mut sorted: Sorted<(u64, u64)>, path: &Path, pages: u64) -> Result<()> {
    if PageFile::open(path, records::PAGEDOC_KIND).is_ok() {
        return Ok(());
    }
    let mut w = PageFileWriter::create(path, records::PAGEDOC_KIND, 64 << 10, 3)?;
    let mut expect = 0u64;
    let mut payload = Vec::new();
    while let Some((page, v)) = sorted.next_record()? {
        if page != expect {
            return Err(Error::internal(format!(
                "page map has page {page} where page {expect} was expected"
            )));
        }
        expect += 1;
        payload.clear();
        records::encode_pagedoc(v >> 1, v & 1 == 1, &mut payload);
        w.push(page, &payload)?;
    }
    if expect != pages {
        return Err(Error::internal(format!(
            "page map has {expect} pages, the page list {pages}"
        )));
    }
    w.finish(&json!({ "pages": pages }))?;
    Ok(())
}

struct JoinCounts {
    self_loops: u64,
}

/// Step 3b: source docIDs for the links, walking the page map beside them.
fn join_sources(
    mut links: Sorted<LinkRec>,
    pagedoc_path: &Path,
    fwd: &mut ExternalSorter<(u64, u64)>,
    rev: &mut ExternalSorter<(u64, u64)>,
    anchors: &mut ExternalSorter<AnchorRec>,
    s: &Settings,
) -> Result<JoinCounts> {
    let task = s.reporter.task(
        &format!("{STAGE}: joining link sources"),
        None,
        Unit::Records,
    );
    let map = PageFile::open(pagedoc_path, records::PAGEDOC_KIND)?;
    let mut block = 0usize;
    let mut decoded: std::collections::VecDeque<(u64, u64)> = Default::default();
    let mut buf = (Vec::new(), Vec::new());
    let mut cur: Option<(u64, u64)> = None;
    let mut self_loops = 0u64;
    let mut n = 0u64;
    while let Some((page, dst, rest)) = links.next_record()? {
        while cur.is_none_or(|(p, _)| p < page) {
            if decoded.is_empty() {
                if block == map.container().blocks().len() {
                    return Err(Error::internal(format!(
                        "link from page {page}, which the page map lacks"
                    )));
                }
                map.visit_block(block, &mut buf, |p, input| {
                    decoded.push_back((p, records::decode_pagedoc(input)?.0));
                    Ok(())
                })?;
                block += 1;
            }
            cur = decoded.pop_front();
        }
        let src = cur.map_or(0, |(_, d)| d);
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
        if src == dst {
            self_loops += 1;
            continue;
        }
        fwd.push((src, dst))?;
        rev.push((dst, src))?;
        // `rest` is kind byte + anchor text; keep anchors that have text.
        if rest.len() > 1 {
            anchors.push((dst, src, rest))?;
        }
    }
    Ok(JoinCounts { self_loops })
}

/// Step 4: the anchor file, keyed by target docID.
fn write_anchors(sorter: ExternalSorter<AnchorRec>, path: &Path) -> Result<()> {
    let mut sorted = sorter.finish()?;
    let mut w = PageFileWriter::create(path, records::ANCHORS_KIND, 64 << 10, 3)?;
    let mut payload = Vec::new();
    let mut n = 0u64;
    while let Some((dst, src, rest)) = sorted.next_record()? {
        let (&kind, text) = rest.split_first().ok_or_else(|| bad_record("anchor"))?;
        let kind = records::LinkKind::from_u8(kind).ok_or_else(|| bad_record("anchor"))?;
        let text = std::str::from_utf8(text).map_err(|_| bad_record("anchor"))?;
        payload.clear();
        records::encode_anchor(src, kind, text, &mut payload);
        w.push(dst, &payload)?;
        n += 1;
    }
    w.finish(&json!({ "anchors": n }))?;
    Ok(())
}

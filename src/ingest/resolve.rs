//! The URL resolver: the `resolve` stage. Ingested pages and links → docIDs,
//! the doc table, the URL table, the page → docID map, the link graph and the
//! anchors.
//!
//! Every step is an external sort and a merge; nothing is looked up at random:
//!
//! 1. Every URL seen goes into one sort keyed by [`url::sort_key`] (host
//!    reversed, then path): crawled pages as `(key, page, title + size)`, link
//!    targets as `(key, MAX, source page + kind + anchor)`. A URL's crawled
//!    captures come first: those with a body (lowest page first), then those
//!    without one (a WAT record's page, an empty response; tagged
//!    [`NO_BODY`]), then the links to it. The first is the doc's canonical
//!    capture, so a WAT page never displaces the WARC page of its URL,
//!    whichever input came first.
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

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::container::pagefile::{PageFile, PageFileWriter};
use crate::docs::{Doc, DocWriter};
use crate::error::{Error, Result};
use crate::graph::import::write_edges;
use crate::graph::Direction;
use crate::ingest::records::{self, PageRec};
use crate::ingest::urltable::UrlTableWriter;
use crate::job::{
    phase, share, Figure, FigureList, Job, JobFile, Outcome, Phase, Settings, Stage, StageContext,
    StageId,
};
use crate::progress::Unit;
use crate::sort::{Combine, ExternalSorter, Sorted};
use crate::units::thousands;
use crate::url;
use crate::varint;

/// Step 1's records: (sort key, page or `u64::MAX` for a link, payload).
type UrlRec = (Vec<u8>, u64, Vec<u8>);
/// Step 2's link records: (source page, target docID, kind + anchor).
type LinkRec = (u64, u64, Vec<u8>);
/// Anchor records: (target docID, source docID, kind + text).
type AnchorRec = (u64, u64, Vec<u8>);

const LINK_TAG: u64 = u64::MAX;
/// Set in a page's tag when the page has no body (0 bytes): such captures
/// sort after a URL's captures with a body. Page numbers stay below it.
const NO_BODY: u64 = 1 << 62;

/// `resolve` has no parameters of its own: what it computes depends only on
/// its inputs, whose checksums the manifest records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolveParams {}

/// What `resolve` measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResolveFigures {
    /// Docs: distinct URLs, crawled or only linked to.
    pub nodes: u64,
    /// Docs with a crawled page.
    pub crawled: u64,
    /// Distinct hosts.
    pub hosts: u64,
    /// Pages ingested.
    pub pages: u64,
    /// Further captures of a URL already crawled.
    pub duplicate_captures: u64,
    /// Raw links.
    pub links: u64,
    /// Distinct arcs.
    pub arcs: u64,
    /// Links from a doc to itself, dropped.
    pub self_loops: u64,
    /// Docs without out-arcs.
    pub dangling: u64,
    /// Anchors with text.
    pub anchors: u64,
    /// Bytes of the forward edge file.
    pub edges_bytes: u64,
    /// Bytes of the transposed edge file.
    pub transposed_bytes: u64,
    /// Bits per arc of the forward edge file.
    pub bits_per_arc: f64,
    /// Largest out-degree.
    pub max_out_degree: u64,
    /// Largest in-degree.
    pub max_in_degree: u64,
}

/// The `resolve` stage: the URL resolver.
pub struct Resolve;

/// What holds memory at the same time in `resolve`: a sort from its first
/// record until it is finished, then its merge until it is dropped (at its
/// whole share unless it has a merge share of its own).
const SHARES: &[Phase] = &[
    phase("collect URLs", &[share("urls", 0.5)]),
    phase(
        "number URLs",
        &[
            share("urls merge", 0.1),
            share("url-table", 0.15),
            share("page-map", 0.1),
            share("links", 0.35),
        ],
    ),
    phase(
        "write the page map and the URL table",
        &[
            share("page-map merge", 0.05),
            share("url-table merge", 0.05),
            share("links", 0.35),
        ],
    ),
    phase(
        "join links with their sources",
        &[
            share("links merge", 0.1),
            share("forward", 0.25),
            share("transposed", 0.25),
            share("anchors", 0.2),
        ],
    ),
];

impl Stage for Resolve {
    type Params = ResolveParams;
    type Figures = ResolveFigures;

    fn id(&self) -> StageId {
        StageId::Resolve
    }

    fn params(&self) -> Result<ResolveParams> {
        Ok(ResolveParams {})
    }

    fn inputs(&self) -> Vec<JobFile> {
        vec![JobFile::Pages, JobFile::Links]
    }

    fn outputs(&self) -> Vec<JobFile> {
        vec![
            JobFile::Docs,
            JobFile::Urls,
            JobFile::PageDoc,
            JobFile::Edges,
            JobFile::EdgesT,
            JobFile::Anchors,
        ]
    }

    fn records(f: &ResolveFigures) -> u64 {
        f.nodes
    }

    fn shares(&self) -> &'static [Phase] {
        SHARES
    }

    fn headline(&self, f: &ResolveFigures) -> String {
        format!(
            "{} docs on {} hosts, {} arcs",
            thousands(f.nodes),
            thousands(f.hosts),
            thousands(f.arcs)
        )
    }

    fn stats(&self, f: &ResolveFigures) -> Vec<Figure> {
        FigureList::new()
            .group("Pages")
            .count("pages", "pages", f.pages)
            .count(
                "duplicate_captures",
                "duplicate captures",
                f.duplicate_captures,
            )
            .count("links", "links", f.links)
            .count("anchors", "anchors", f.anchors)
            .count("hosts", "hosts", f.hosts)
            .group("Link graph")
            .count("self_loops", "self-loops dropped", f.self_loops)
            .build()
    }

    fn run(&self, cx: &mut StageContext) -> Result<ResolveFigures> {
        run_resolve(cx)
    }
}

/// Runs (or resumes, or skips) the resolver over `job`'s ingested pages.
pub fn resolve(job: &mut Job, s: &Settings) -> Result<Outcome<ResolveFigures>> {
    job.run(&Resolve, s)
}

fn run_resolve(cx: &StageContext) -> Result<ResolveFigures> {
    let pages = PageFile::open(cx.input(JobFile::Pages)?, &records::PAGES)?;
    let links = PageFile::open(cx.input(JobFile::Links)?, &records::LINKS)?;
    let docs_path = cx.output(JobFile::Docs)?;
    let pagedoc_path = cx.output(JobFile::PageDoc)?;
    let urls_path = cx.output(JobFile::Urls)?;
    let anchors_path = cx.output(JobFile::Anchors)?;

    let mut fwd = cx.sorter::<(u64, u64)>("forward", Combine::Dedup)?;
    let mut rev = cx.sorter::<(u64, u64)>("transposed", Combine::Dedup)?;
    let mut anchors = cx.sorter::<AnchorRec>("anchors", Combine::Dedup)?;
    let mut counts: Counts = cx.checkpoint(COUNTS)?.unwrap_or_default();
    if !(fwd.input_complete() && rev.input_complete() && anchors.input_complete()) {
        let mut url_sort = cx.sorter::<(u64, u64)>("url-table", Combine::None)?;
        let mut page_sort = cx.sorter::<(u64, u64)>("page-map", Combine::None)?;
        let mut link_sort = cx.sorter::<LinkRec>("links", Combine::Dedup)?;
        let step2_done = url_sort.input_complete()
            && page_sort.input_complete()
            && link_sort.input_complete()
            && docs_path.exists();
        if !step2_done {
            let mut out = Numbering {
                docs_path: &docs_path,
                url_sort: &mut url_sort,
                page_sort: &mut page_sort,
                link_sort: &mut link_sort,
            };
            let mut urls = cx.sorter::<UrlRec>("urls", Combine::Dedup)?;
            if !urls.input_complete() {
                collect_urls(&pages, &links, &mut urls, cx)?;
            }
            urls.set_merge_budget(cx.budget().bytes("urls merge")?);
            counts = number_urls(urls.finish()?, &mut out, cx)?;
            cx.save_checkpoint(COUNTS, &counts)?;
        }
        // Publish the page map and the URL table first, so that their sorts'
        // memory is free before the link join fills the arc sorts.
        page_sort.set_merge_budget(cx.budget().bytes("page-map merge")?);
        let page_sorted = page_sort.finish()?;
        write_pagedoc(page_sorted, &pagedoc_path, pages.records())?;
        if !urls_path.exists() {
            url_sort.set_merge_budget(cx.budget().bytes("url-table merge")?);
            let mut sorted = url_sort.finish()?;
            let mut w = UrlTableWriter::create(&urls_path)?;
            while let Some((fp, doc)) = sorted.next_record()? {
                w.push(fp, doc)?;
            }
            w.finish()?;
        } else {
            drop(url_sort);
        }
        let mut arcs = Arcs {
            fwd: &mut fwd,
            rev: &mut rev,
            anchors: &mut anchors,
            self_loops: 0,
        };
        link_sort.set_merge_budget(cx.budget().bytes("links merge")?);
        join_sources(link_sort.finish()?, &pagedoc_path, &mut arcs, cx)?;
        counts.self_loops = arcs.self_loops;
        cx.save_checkpoint(COUNTS, &counts)?;
    }
    let nodes = counts.docs;
    let f = write_edges(
        fwd,
        &cx.output(JobFile::Edges)?,
        Direction::Forward,
        nodes,
        cx,
    )?;
    let r = write_edges(
        rev,
        &cx.output(JobFile::EdgesT)?,
        Direction::Transposed,
        nodes,
        cx,
    )?;
    if !anchors_path.exists() {
        write_anchors(anchors, &anchors_path)?;
    }
    let anchor_file = PageFile::open(&anchors_path, &records::ANCHORS)?;
    Ok(ResolveFigures {
        nodes,
        crawled: counts.crawled,
        hosts: counts.hosts,
        pages: pages.records(),
        duplicate_captures: counts.duplicate_captures,
        links: links.records(),
        arcs: f.arcs,
        self_loops: counts.self_loops,
        dangling: nodes - f.lists,
        anchors: anchor_file.records(),
        edges_bytes: f.bytes,
        transposed_bytes: r.bytes,
        bits_per_arc: if f.arcs > 0 {
            f.bytes as f64 * 8.0 / f.arcs as f64
        } else {
            0.0
        },
        max_out_degree: f.max_degree,
        max_in_degree: r.max_degree,
    })
}

/// What the numbering found, kept across a resume (checkpoint [`COUNTS`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Counts {
    docs: u64,
    crawled: u64,
    hosts: u64,
    duplicate_captures: u64,
    self_loops: u64,
}

/// The checkpoint of the numbering's counts.
const COUNTS: &str = "counts";

/// Step 1: every page URL and link target into the URL sort.
fn collect_urls(
    pages: &PageFile,
    links: &PageFile,
    urls: &mut ExternalSorter<UrlRec>,
    cx: &StageContext,
) -> Result<()> {
    let total = pages.records() + links.records();
    let task = cx.task("collecting URLs", Some(total), Unit::Records);
    let mut n = 0u64;
    pages.for_each(|page, input| {
        let p = PageRec::decode(input)?;
        let mut key = Vec::with_capacity(2 * p.url.len() + 16);
        url::sort_key(&p.url, &mut key);
        let mut payload = Vec::with_capacity(p.title.len() + 8);
        varint::put(&mut payload, p.bytes);
        varint::put_bytes(&mut payload, p.title.as_bytes());
        let tag = if p.bytes == 0 { page | NO_BODY } else { page };
        urls.push((key, tag, payload))?;
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

/// Where step 2 writes: the doc table and the sorts of step 3.
struct Numbering<'a> {
    docs_path: &'a Path,
    url_sort: &'a mut ExternalSorter<(u64, u64)>,
    page_sort: &'a mut ExternalSorter<(u64, u64)>,
    link_sort: &'a mut ExternalSorter<LinkRec>,
}

/// Step 2: docIDs in key order.
fn number_urls(mut urls: Sorted<UrlRec>, out: &mut Numbering, cx: &StageContext) -> Result<Counts> {
    let Numbering {
        docs_path,
        url_sort,
        page_sort,
        link_sort,
    } = out;
    let task = cx.task("numbering URLs", None, Unit::Records);
    let mut docs = DocWriter::create(docs_path, &StageId::Resolve.name())?;
    let mut c = Counts::default();
    let mut current: Option<(Vec<u8>, Doc)> = None;
    let mut host: Option<Vec<u8>> = None;
    let mut n = 0u64;
    while let Some((key, tag, payload)) = urls.next_record()? {
        let page = if tag == LINK_TAG { tag } else { tag & !NO_BODY };
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
                doc.page = Some(page);
                c.crawled += 1;
                page_sort.push((page, c.docs << 1 | 1))?;
            }
            current = Some((key, doc));
            if tag != LINK_TAG {
                continue;
            }
        } else if tag != LINK_TAG {
            // Another capture of the same URL: same doc, not its page.
            c.duplicate_captures += 1;
            page_sort.push((page, c.docs << 1))?;
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
    if PageFile::open(path, &records::PAGEDOC).is_ok() {
        return Ok(());
    }
    let mut w = PageFileWriter::create(path, &records::PAGEDOC, 64 << 10, 3)?;
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

/// Step 3b: source docIDs for the links, walking the page map beside them.
fn join_sources(
    mut links: Sorted<LinkRec>,
    pagedoc_path: &Path,
    arcs: &mut Arcs,
    cx: &StageContext,
) -> Result<()> {
    let task = cx.task("joining link sources", None, Unit::Records);
    let map = PageFile::open(pagedoc_path, &records::PAGEDOC)?;
    let mut block = 0usize;
    let mut decoded: std::collections::VecDeque<(u64, u64)> = Default::default();
    let mut buf = (Vec::new(), Vec::new());
    let mut cur: Option<(u64, u64)> = None;
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
        arcs.push(src, dst, rest)?;
    }
    Ok(())
}

/// Where the joined links go: the arc sorts and the anchor sort.
struct Arcs<'a> {
    fwd: &'a mut ExternalSorter<(u64, u64)>,
    rev: &'a mut ExternalSorter<(u64, u64)>,
    anchors: &'a mut ExternalSorter<AnchorRec>,
    self_loops: u64,
}

impl Arcs<'_> {
    /// A link from `src` to `dst`; `rest` is its kind byte + anchor text.
    fn push(&mut self, src: u64, dst: u64, rest: Vec<u8>) -> Result<()> {
        if src == dst {
            self.self_loops += 1;
            return Ok(());
        }
        self.fwd.push((src, dst))?;
        self.rev.push((dst, src))?;
        // Keep anchors that have text.
        if rest.len() > 1 {
            self.anchors.push((dst, src, rest))?;
        }
        Ok(())
    }
}

/// Step 4: the anchor file, keyed by target docID.
fn write_anchors(sorter: ExternalSorter<AnchorRec>, path: &Path) -> Result<()> {
    let mut sorted = sorter.finish()?;
    let mut w = PageFileWriter::create(path, &records::ANCHORS, 64 << 10, 3)?;
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

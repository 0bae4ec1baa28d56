//! The `resolve` stage from a distributed job's tables (`webmill shard
//! resolve --from DIR`): the same stage, with the same files byte for byte,
//! as [`Resolve`] makes on one machine, but every sort it needs was done by
//! the global steps (Spark, `spark/webmill_spark/shuffle.py`), which wrote
//! their results as the Parquet tables of [`crate::ingest::exchange`] under
//! `DIR`. Each of the stage's files is written by one streaming pass over
//! its table, in the table's order (its part files in name order): no
//! external sort runs here, and memory does not grow with the job.
//!
//! | table | file | order checked |
//! |---|---|---|
//! | `docs/` | doc table | docIDs 0, 1, …; keys strictly rising; host numbers |
//! | `pagedoc/` | page map | pages 0, 1, … |
//! | `urls/` | URL table | (fingerprint, docID) strictly rising, unsigned |
//! | `edges/`, `edges-t/` | edge files | arcs strictly rising, no self-loop |
//! | `anchors/` | anchors | (target, source, kind, text) strictly rising |
//!
//! Tables that disagree are refused too: each page once in the page map and
//! each doc's first capture there, as many rows in `links/` as the job has
//! links, the URL table's pairs those of the doc table, the transposed arcs
//! those of the forward ones (order-independent checksums, so in constant
//! memory). An error names the table's file and row.
//!
//! Resume: each file is published whole; a re-run skips the files that
//! exist and rereads only the tables of the others (the counts of the
//! first three passes, and the arcs' checksum, are checkpoints).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::container::pagefile::{PageFile, PageFileWriter};
use crate::docs::{Doc, DocWriter};
use crate::error::{Error, Result};
use crate::graph::edges::{EdgeFile, EdgeFileStats, EdgeWriter};
use crate::graph::Direction;
use crate::ingest::exchange::{self, Bad};
use crate::ingest::records;
use crate::ingest::resolve::{Resolve, ResolveFigures, ResolveParams};
use crate::ingest::urltable::UrlTableWriter;
use crate::job::{Figure, Job, JobFile, Outcome, Phase, Settings, Stage, StageContext, StageId};
use crate::progress::Unit;
use crate::url;

/// The `resolve` stage from the tables under `from` (see the module doc).
pub struct ResolveFrom {
    /// The directory holding the tables.
    pub from: PathBuf,
}

impl Stage for ResolveFrom {
    type Params = ResolveParams;
    type Figures = ResolveFigures;

    fn id(&self) -> StageId {
        Resolve.id()
    }

    fn params(&self) -> Result<ResolveParams> {
        Resolve.params()
    }

    fn inputs(&self) -> Vec<JobFile> {
        Resolve.inputs()
    }

    fn outputs(&self) -> Vec<JobFile> {
        Resolve.outputs()
    }

    fn records(f: &ResolveFigures) -> u64 {
        Resolve::records(f)
    }

    fn shares(&self) -> &'static [Phase] {
        // Streaming passes only: no sort holds memory.
        &[]
    }

    fn headline(&self, f: &ResolveFigures) -> String {
        Resolve.headline(f)
    }

    fn stats(&self, f: &ResolveFigures) -> Vec<Figure> {
        Resolve.stats(f)
    }

    fn run(&self, cx: &mut StageContext) -> Result<ResolveFigures> {
        run_from(cx, &self.from)
    }
}

/// Runs (or resumes, or skips) the resolver from the tables under `from`
/// (see [`ResolveFrom`]).
pub fn resolve_from(job: &mut Job, s: &Settings, from: &Path) -> Result<Outcome<ResolveFigures>> {
    job.run(
        &ResolveFrom {
            from: from.to_path_buf(),
        },
        s,
    )
}

/// What the first passes found, kept across a resume.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Counts {
    docs: u64,
    crawled: u64,
    hosts: u64,
    duplicate_captures: u64,
    self_loops: u64,
    /// Checksum of the doc table's (fingerprint, docID) pairs.
    urls_sum: u64,
    /// Checksum of the doc table's (first capture's page, docID) pairs.
    firsts_sum: u64,
    /// Checksum of the forward arcs, once the forward edge file is written.
    arcs_sum: Option<u64>,
}

const COUNTS: &str = "counts-from";

/// An order-independent checksum's term for the pair `(a, b)`: the sum of
/// these (wrapping) over a set of pairs is the set's checksum.
fn mix(a: u64, b: u64) -> u64 {
    let mut x = [0u8; 16];
    x[..8].copy_from_slice(&a.to_le_bytes());
    x[8..].copy_from_slice(&b.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&x)
}

fn refuse(table: &Path, detail: String) -> Error {
    Error::usage_at(table, detail)
}

fn run_from(cx: &StageContext, dir: &Path) -> Result<ResolveFigures> {
    let pages = PageFile::open(cx.input(JobFile::Pages)?, &records::PAGES)?;
    let links = PageFile::open(cx.input(JobFile::Links)?, &records::LINKS)?;
    let mut c: Counts = match cx.checkpoint(COUNTS)? {
        Some(c) => c,
        None => {
            let mut c = numbered_docs(dir, &cx.output(JobFile::Docs)?, cx)?;
            page_map(dir, &cx.output(JobFile::PageDoc)?, pages.records(), &mut c)?;
            link_counts(dir, links.records(), &mut c, cx)?;
            cx.save_checkpoint(COUNTS, &c)?;
            c
        }
    };
    let urls_path = cx.output(JobFile::Urls)?;
    if !urls_path.exists() {
        url_table(dir, &urls_path, &c, cx)?;
    }
    let nodes = c.docs;
    let edges = cx.output(JobFile::Edges)?;
    let forward_sum = match c.arcs_sum {
        Some(sum) if EdgeFile::open(&edges).is_ok() => sum,
        _ => {
            let sum = arcs(dir, &edges, Direction::Forward, nodes, None, cx)?;
            c.arcs_sum = Some(sum);
            cx.save_checkpoint(COUNTS, &c)?;
            sum
        }
    };
    let edges_t = cx.output(JobFile::EdgesT)?;
    if EdgeFile::open(&edges_t).is_err() {
        arcs(
            dir,
            &edges_t,
            Direction::Transposed,
            nodes,
            Some(forward_sum),
            cx,
        )?;
    }
    let f = EdgeFile::open(&edges)?.stats().clone();
    let r = EdgeFile::open(&edges_t)?.stats().clone();
    let anchors_path = cx.output(JobFile::Anchors)?;
    if PageFile::open(&anchors_path, &records::ANCHORS).is_err() {
        anchors(dir, &anchors_path, nodes, cx)?;
    }
    let anchor_file = PageFile::open(&anchors_path, &records::ANCHORS)?;
    Ok(figures(&c, &f, &r, &pages, &links, anchor_file.records()))
}

fn figures(
    c: &Counts,
    f: &EdgeFileStats,
    r: &EdgeFileStats,
    pages: &PageFile,
    links: &PageFile,
    anchors: u64,
) -> ResolveFigures {
    ResolveFigures {
        nodes: c.docs,
        crawled: c.crawled,
        hosts: c.hosts,
        pages: pages.records(),
        duplicate_captures: c.duplicate_captures,
        links: links.records(),
        arcs: f.arcs,
        self_loops: c.self_loops,
        dangling: c.docs - f.lists,
        anchors,
        edges_bytes: f.bytes,
        transposed_bytes: r.bytes,
        bits_per_arc: if f.arcs > 0 {
            f.bytes as f64 * 8.0 / f.arcs as f64
        } else {
            0.0
        },
        max_out_degree: f.max_degree,
        max_in_degree: r.max_degree,
    }
}

/// `docs/` → the doc table (unless an earlier attempt wrote it), checked:
/// docIDs consecutive, keys strictly rising in unsigned byte order, host
/// numbers following the keys' hosts. Also sums the (page, docID) pairs of
/// the first captures and the (fingerprint, docID) pairs.
fn numbered_docs(dir: &Path, docs_path: &Path, cx: &StageContext) -> Result<Counts> {
    let task = cx.task("reading the numbered URLs", None, Unit::Records);
    let mut docs = match docs_path.exists() {
        true => None,
        false => Some(DocWriter::create(docs_path, &StageId::Resolve.name())?),
    };
    let mut c = Counts::default();
    let mut last: Option<Vec<u8>> = None;
    let mut host = 0u64;
    exchange::for_each_numbered(&dir.join("docs"), |d, bad| {
        if d.doc != c.docs {
            return Err(bad(format!(
                "docID {} where {} was expected",
                d.doc, c.docs
            )));
        }
        if let Some(prev) = &last {
            if prev.as_slice() >= d.key {
                return Err(bad(
                    "its key is not above the previous row's (unsigned byte order)".into(),
                ));
            }
            if url::host_of_key(prev) != url::host_of_key(d.key) {
                host += 1;
            }
        }
        if d.host != host {
            return Err(bad(format!("host {} where {host} was expected", d.host)));
        }
        let u = std::str::from_utf8(url::url_of_key(d.key))
            .map_err(|_| bad("its key's URL is not UTF-8".into()))?;
        c.urls_sum = c.urls_sum.wrapping_add(mix(url::fingerprint(u), d.doc));
        if let Some(page) = d.page {
            c.crawled += 1;
            c.firsts_sum = c.firsts_sum.wrapping_add(mix(page, d.doc));
        }
        if let Some(w) = docs.as_mut() {
            w.push(&Doc {
                url: u.to_string(),
                crawled: d.page.is_some(),
                bytes: d.bytes,
                title: d.title.to_string(),
                page: d.page,
                host,
            })?;
        }
        c.docs += 1;
        if c.docs.is_multiple_of(65536) {
            task.set_position(c.docs);
        }
        last = Some(d.key.to_vec());
        Ok(())
    })?;
    if last.is_some() {
        c.hosts = host + 1;
    }
    if let Some(w) = docs {
        w.finish()?;
    }
    Ok(c)
}

/// `pagedoc/` → the page map (unless written), checked: pages 0, 1, … as
/// many as the job has, docIDs in range, the first captures those of the
/// doc table.
fn page_map(dir: &Path, path: &Path, pages: u64, c: &mut Counts) -> Result<()> {
    let table = dir.join("pagedoc");
    let mut w = match PageFile::open(path, &records::PAGEDOC) {
        Ok(_) => None,
        Err(_) => Some(PageFileWriter::create(
            path,
            &records::PAGEDOC,
            64 << 10,
            3,
        )?),
    };
    let mut sum = 0u64;
    let (mut expect, mut firsts) = (0u64, 0u64);
    let mut payload = Vec::new();
    exchange::for_each_pagedoc(&table, |page, doc, first, bad| {
        if page != expect {
            return Err(bad(format!("page {page} where page {expect} was expected")));
        }
        if doc >= c.docs {
            return Err(bad(format!("docID {doc} beyond the {} docs", c.docs)));
        }
        expect += 1;
        if first {
            firsts += 1;
            sum = sum.wrapping_add(mix(page, doc));
        }
        if let Some(w) = w.as_mut() {
            payload.clear();
            records::encode_pagedoc(doc, first, &mut payload);
            w.push(page, &payload)?;
        }
        Ok(())
    })?;
    if expect != pages {
        return Err(refuse(
            &table,
            format!("{expect} pages where the job has {pages}"),
        ));
    }
    if firsts != c.crawled || sum != c.firsts_sum {
        return Err(refuse(
            &table,
            "its first captures are not the doc table's (docs/ column `page`)".into(),
        ));
    }
    c.duplicate_captures = pages - firsts;
    if let Some(w) = w {
        w.finish(&json!({ "pages": pages }))?;
    }
    Ok(())
}

/// `links/`' `source` and `target` only: as many rows as the job has
/// links, docIDs in range; counts the self-loops.
fn link_counts(dir: &Path, links: u64, c: &mut Counts, cx: &StageContext) -> Result<()> {
    let task = cx.task("counting the joined links", Some(links), Unit::Records);
    let table = dir.join("links");
    let mut n = 0u64;
    let docs = c.docs;
    exchange::for_each_pair(&table, ["source", "target"], |s, t, bad| {
        if s >= docs || t >= docs {
            return Err(bad(format!("docID beyond the {docs} docs ({s} → {t})")));
        }
        c.self_loops += u64::from(s == t);
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
        Ok(())
    })?;
    if n != links {
        return Err(refuse(
            &table,
            format!("{n} links where the job has {links}"),
        ));
    }
    Ok(())
}

/// `urls/` → the URL table: pairs strictly rising, one per doc, the doc
/// table's pairs (by checksum).
fn url_table(dir: &Path, path: &Path, c: &Counts, cx: &StageContext) -> Result<()> {
    let task = cx.task("writing the URL table", Some(c.docs), Unit::Records);
    let table = dir.join("urls");
    let mut w = UrlTableWriter::create(path)?;
    let mut last: Option<(u64, u64)> = None;
    let (mut n, mut sum) = (0u64, 0u64);
    exchange::for_each_url(&table, |fp, doc, bad| {
        if last.is_some_and(|l| l >= (fp, doc)) {
            return Err(bad(format!(
                "({fp:016x}, {doc}) is not above the previous row's (unsigned fingerprint, docID)"
            )));
        }
        if doc >= c.docs {
            return Err(bad(format!("docID {doc} beyond the {} docs", c.docs)));
        }
        last = Some((fp, doc));
        sum = sum.wrapping_add(mix(fp, doc));
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
        w.push(fp, doc)
    })?;
    if n != c.docs || sum != c.urls_sum {
        return Err(refuse(
            &table,
            format!(
                "{n} rows that are not the {} docs' (fingerprint, docID) pairs",
                c.docs
            ),
        ));
    }
    w.finish()?;
    Ok(())
}

/// `edges/` or `edges-t/` → its edge file, checked: arcs strictly rising,
/// no self-loop, docIDs in range; for the transposed arcs, the forward
/// arcs' checksum `forward`. Returns the arcs' checksum, (source, target)
/// pairs.
fn arcs(
    dir: &Path,
    path: &Path,
    direction: Direction,
    nodes: u64,
    forward: Option<u64>,
    cx: &StageContext,
) -> Result<u64> {
    let (name, cols) = match direction {
        Direction::Forward => ("edges", ["source", "target"]),
        Direction::Transposed => ("edges-t", ["target", "source"]),
    };
    let table = dir.join(name);
    let task = cx.task(
        &format!("writing {} edges", direction.name()),
        None,
        Unit::Records,
    );
    // A file of an earlier attempt is kept; its checksum is recomputed.
    let mut w = match EdgeFile::open(path) {
        Ok(_) => None,
        Err(_) => Some(EdgeWriter::create(path, direction, nodes)?),
    };
    let mut last: Option<(u64, u64)> = None;
    let (mut n, mut sum) = (0u64, 0u64);
    exchange::for_each_pair(&table, cols, |a, b, bad: Bad| {
        if last.is_some_and(|l| l >= (a, b)) {
            return Err(bad(format!(
                "arc ({a}, {b}) is not above the previous row's ({} order)",
                cols.join(", ")
            )));
        }
        if a == b {
            return Err(bad(format!("a self-loop on {a}")));
        }
        if a >= nodes || b >= nodes {
            return Err(bad(format!("docID beyond the {nodes} docs ({a}, {b})")));
        }
        last = Some((a, b));
        let (s, t) = match direction {
            Direction::Forward => (a, b),
            Direction::Transposed => (b, a),
        };
        sum = sum.wrapping_add(mix(s, t));
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
        match w.as_mut() {
            Some(w) => w.push(a, b),
            None => Ok(()),
        }
    })?;
    if forward.is_some_and(|f| f != sum) {
        return Err(refuse(
            &table,
            "its arcs are not those of edges/ reversed".into(),
        ));
    }
    if let Some(w) = w {
        w.finish()?;
    }
    Ok(sum)
}

/// `anchors/` → the anchor file, checked: (target, source, kind, text)
/// strictly rising, text not empty, no self-loop, docIDs in range.
fn anchors(dir: &Path, path: &Path, nodes: u64, cx: &StageContext) -> Result<()> {
    let task = cx.task("writing the anchors", None, Unit::Records);
    let table = dir.join("anchors");
    let mut w = PageFileWriter::create(path, &records::ANCHORS, 64 << 10, 3)?;
    let mut last: Option<(u64, u64, u8)> = None;
    let mut last_text: Vec<u8> = Vec::new();
    let mut payload = Vec::new();
    let mut n = 0u64;
    exchange::for_each_anchor(&table, |target, source, kind, text, bad| {
        let k = records::LinkKind::from_u8(kind)
            .ok_or_else(|| bad(format!("link kind {kind} is none of 0–3")))?;
        if text.is_empty() {
            return Err(bad("an empty anchor text".into()));
        }
        if target == source {
            return Err(bad(format!("a self-loop on {target}")));
        }
        if target >= nodes || source >= nodes {
            return Err(bad(format!(
                "docID beyond the {nodes} docs ({source} → {target})"
            )));
        }
        let here = (target, source, kind);
        if last.is_some_and(|l| (l, last_text.as_slice()) >= (here, text.as_bytes())) {
            return Err(bad(
                "not above the previous row (target, source, kind, text's bytes)".into(),
            ));
        }
        last = Some(here);
        last_text.clear();
        last_text.extend_from_slice(text.as_bytes());
        payload.clear();
        records::encode_anchor(source, k, text, &mut payload);
        w.push(target, &payload)?;
        n += 1;
        if n.is_multiple_of(65536) {
            task.set_position(n);
        }
        Ok(())
    })?;
    w.finish(&json!({ "anchors": n }))?;
    Ok(())
}

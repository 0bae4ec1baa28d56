//! The document store: everything a job knows of one document, opened once
//! and shared by the searcher, the server and the exports.
//!
//! * the doc table (`docs.wm`), read through a cache of decompressed
//!   blocks, one record decoded a lookup;
//! * PageRank (`ranks.wm`), loaded whole on first use up to
//!   [`MAX_RANKS_IN_MEMORY`], else read from disk; a vector of another
//!   length than the doc table (a stale one) is not used;
//! * the repository (`repository.wm`): a document's stored bytes, and its
//!   text as the ingest extractor reads it;
//! * anchors (`anchors.wm`): the links to a document with their text;
//! * the anchor title of a page never crawled (the paper's §2.2), read in
//!   place from the index's `index/titles.wm` (worked out once by the
//!   `index` stage); a job without that file (indexed before it existed, or
//!   sharded) works it out from `anchors.wm` at each lookup, the same way;
//! * near-duplicate clusters (`clusters-ALG.wm`) of every dedup algorithm
//!   that ran: a doc → cluster map, loaded on first use (up to
//!   [`MAX_CLUSTER_MEMBERS`] members; larger files are not mapped and the
//!   store says so), and the members of a document's cluster.
//!
//! Opening reads only the files' headers and footers; the rest is read as
//! it is asked for, so an export that streams one file pays nothing for the
//! others.
//!
//! Everything is read-only and through a [`JobView`] (no lock). A store is
//! `Sync`: a server shares one between its threads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::container::pagefile::PageFile;
use crate::dedup::files::{decode_cluster_member, for_each_cluster_member, CLUSTERS};
use crate::dedup::Alg;
use crate::docs::{Doc, DocBlock, DocTable};
use crate::error::{Error, Result};
use crate::index::titles::{AnchorTitles, AnchorVote};
use crate::ingest::html::{Extractor, Page};
use crate::ingest::records;
use crate::ingest::warc::charset_param;
use crate::job::{JobFile, JobView};
use crate::rank::RankVector;

/// Largest PageRank vector loaded into memory (bytes).
pub const MAX_RANKS_IN_MEMORY: u64 = 256 << 20;
/// Largest near-duplicate map loaded (members).
pub const MAX_CLUSTER_MEMBERS: u64 = 16 << 20;
/// Decompressed doc-table blocks kept between lookups (~16 KiB each).
const DOC_BLOCK_CACHE: usize = 1024;

/// The cache of decompressed doc-table blocks, by block number. Hashed with
/// foldhash: a result's lookup hashed its block number with SipHash, ~150
/// instructions of the ~1,400 a cached lookup cost.
type DocBlocks = hashbrown::HashMap<usize, Arc<DocBlock>, foldhash::fast::RandomState>;

/// Largest decompressed repository block whose buffers (and the
/// extractor's) a thread keeps for its next [`DocStore::with_extracted`].
const KEPT_EXTRACT_BYTES: usize = 8 << 20;

/// A thread's scratch for [`DocStore::with_extracted`]: an extractor that
/// keeps the page text, and the repository block's buffers.
type ExtractScratch = Box<(Extractor, (Vec<u8>, Vec<u8>))>;

thread_local! {
    static EXTRACT_SCRATCH: std::cell::Cell<Option<ExtractScratch>> =
        const { std::cell::Cell::new(None) };
}

/// A stored page being read ([`DocStore::with_extracted`]).
pub struct Extracting<'a> {
    x: &'a mut Extractor,
    charset: Option<&'a str>,
    body: &'a [u8],
}

impl<'a> Extracting<'a> {
    /// `body` (with the HTTP header's `charset`, if any) to be read by
    /// `x` (which keeps the page's text when told to,
    /// [`Extractor::set_keep_text`]).
    pub fn new(x: &'a mut Extractor, body: &'a [u8], charset: Option<&'a str>) -> Self {
        Extracting { x, charset, body }
    }

    /// The page as the ingest extractor reads it, with its text as written,
    /// stopping after `max_words` words (see [`Extractor::set_max_words`]);
    /// `None` when it is not HTML.
    pub fn read(&mut self, max_words: Option<usize>) -> Option<&Page> {
        self.x.set_max_words(max_words);
        self.x.extract(self.body, self.charset).ok()
    }
}

/// A PageRank lookup for docIDs in increasing order.
pub type PageRankLookup<'a> = Box<dyn FnMut(u32) -> Result<f64> + 'a>;

/// PageRank by docID, asked in increasing order ([`DocStore::pageranks`]).
pub enum PageRanks<'a> {
    /// The vector, in memory.
    Memory(&'a [f64]),
    /// The file, read sequentially.
    File(crate::rank::VectorReader<'a>),
}

impl PageRanks<'_> {
    /// The PageRank of `d`.
    #[inline]
    pub fn get(&mut self, d: u32) -> Result<f64> {
        match self {
            PageRanks::Memory(v) => v
                .get(d as usize)
                .copied()
                .ok_or_else(|| Error::internal(format!("docID {d} past the PageRank vector"))),
            PageRanks::File(r) => r.get(u64::from(d)),
        }
    }
}

/// The PageRank vector, copied into memory on first use when it is small
/// enough.
struct Ranks {
    file: RankVector,
    memory: OnceLock<Vec<f64>>,
    loading: Mutex<()>,
}

impl Ranks {
    /// The vector in memory, loaded on first use; `None` when it is larger
    /// than [`MAX_RANKS_IN_MEMORY`].
    fn memory(&self) -> Result<Option<&[f64]>> {
        if self.file.len() * 8 > MAX_RANKS_IN_MEMORY {
            return Ok(None);
        }
        if let Some(v) = self.memory.get() {
            return Ok(Some(v));
        }
        let _one = self
            .loading
            .lock()
            .map_err(|_| Error::internal("ranks lock"))?;
        if let Some(v) = self.memory.get() {
            return Ok(Some(v));
        }
        let v = self.file.load()?;
        Ok(Some(self.memory.get_or_init(|| v)))
    }
}

/// One dedup algorithm's clusters.
pub struct Clusters {
    /// The algorithm.
    pub alg: Alg,
    path: std::path::PathBuf,
    file: PageFile,
    /// doc → cluster id, loaded on first use; `None` inside when the file
    /// has more than [`MAX_CLUSTER_MEMBERS`] members.
    of_doc: OnceLock<Option<HashMap<u32, u32>>>,
    loading: Mutex<()>,
}

impl Clusters {
    fn open(alg: Alg, path: &std::path::Path) -> Result<Clusters> {
        Ok(Clusters {
            alg,
            path: path.to_path_buf(),
            file: PageFile::open(path, &CLUSTERS)?,
            of_doc: OnceLock::new(),
            loading: Mutex::new(()),
        })
    }

    /// The doc → cluster map, loaded on first use (one reader of the file
    /// at a time); `None` when the file is too large to map.
    fn map(&self) -> Result<Option<&HashMap<u32, u32>>> {
        if let Some(m) = self.of_doc.get() {
            return Ok(m.as_ref());
        }
        let _one = self
            .loading
            .lock()
            .map_err(|_| Error::internal("cluster map lock"))?;
        if let Some(m) = self.of_doc.get() {
            return Ok(m.as_ref());
        }
        let loaded = if self.file.records() > MAX_CLUSTER_MEMBERS {
            None
        } else {
            let mut map = HashMap::with_capacity(self.file.records() as usize);
            for_each_cluster_member(&self.path, |c, d, _| {
                if let (Ok(c), Ok(d)) = (u32::try_from(c), u32::try_from(d)) {
                    map.insert(d, c);
                }
                Ok(())
            })?;
            Some(map)
        };
        Ok(self.of_doc.get_or_init(|| loaded).as_ref())
    }

    /// Whether the doc → cluster map can be loaded (the file has at most
    /// [`MAX_CLUSTER_MEMBERS`] members).
    pub fn mapped(&self) -> bool {
        self.file.records() <= MAX_CLUSTER_MEMBERS
    }

    /// The cluster of `doc`, when it is in one (and the file is mapped).
    pub fn cluster(&self, doc: u32) -> Result<Option<u32>> {
        Ok(self.map()?.and_then(|m| m.get(&doc).copied()))
    }

    /// The docs of `doc`'s cluster, itself included; empty when it is in
    /// none (or the file is not mapped).
    pub fn members_with(&self, doc: u64) -> Result<Vec<u64>> {
        let Ok(d) = u32::try_from(doc) else {
            return Ok(Vec::new());
        };
        let Some(cluster) = self.cluster(d)? else {
            return Ok(Vec::new());
        };
        let cluster = u64::from(cluster);
        let mut members = Vec::new();
        let mut buf = (Vec::new(), Vec::new());
        self.file.visit_key(cluster, &mut buf, |id, input| {
            let (d, _) = decode_cluster_member(id, input)?;
            if id == cluster {
                members.push(d);
            }
            Ok(id <= cluster)
        })?;
        Ok(members)
    }
}

/// Links to a document: (source docID, anchor text) for the first `shown`,
/// how many were counted, and whether counting stopped at its cap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InLinks {
    /// (source docID, anchor text, trimmed), in the anchor file's order.
    pub links: Vec<(u64, String)>,
    /// Links counted.
    pub count: u64,
    /// Counting stopped at the cap: there are more.
    pub capped: bool,
}

/// A job's documents, opened once.
pub struct DocStore {
    docs: DocTable,
    doc_blocks: Mutex<DocBlocks>,
    ranks: Option<Ranks>,
    repository: Option<PageFile>,
    anchors: Option<PageFile>,
    titles: Option<AnchorTitles>,
    clusters: Vec<Clusters>,
}

/// A server shares one store between its threads.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<DocStore>();
};

impl DocStore {
    /// Opens the documents of `job` (which must have a doc table), with
    /// whichever of ranks, repository, anchors and clusters it has.
    pub fn open(job: &JobView) -> Result<DocStore> {
        let docs = DocTable::open(job.file(JobFile::Docs)?)?;
        let opt = |f: JobFile| job.has(f).then(|| job.file(f)).transpose();
        let ranks = match opt(JobFile::Ranks)? {
            None => None,
            Some(p) => Some(RankVector::open(p)?)
                .filter(|v| v.len() == docs.len())
                .map(|file| Ranks {
                    file,
                    memory: OnceLock::new(),
                    loading: Mutex::new(()),
                }),
        };
        let repository = opt(JobFile::Repository)?
            .map(|p| PageFile::open(p, &records::REPO))
            .transpose()?;
        let anchors = opt(JobFile::Anchors)?
            .map(|p| PageFile::open(p, &records::ANCHORS))
            .transpose()?;
        // Titles written for another doc table (a stale index) are not used.
        let titles = opt(JobFile::AnchorTitles)?
            .map(AnchorTitles::open)
            .transpose()?
            .filter(|t| t.docs() == docs.len());
        let mut clusters = Vec::new();
        for alg in Alg::ALL {
            if let Some(p) = opt(JobFile::Clusters(alg))? {
                clusters.push(Clusters::open(alg, &p)?);
            }
        }
        Ok(DocStore {
            docs,
            doc_blocks: Mutex::new(DocBlocks::default()),
            ranks,
            repository,
            anchors,
            titles,
            clusters,
        })
    }

    /// The doc table.
    pub fn table(&self) -> &DocTable {
        &self.docs
    }

    /// Documents in the job.
    pub fn len(&self) -> u64 {
        self.docs.len()
    }

    /// Whether the job has no documents.
    pub fn is_empty(&self) -> bool {
        self.docs.len() == 0
    }

    /// Crawled documents.
    pub fn crawled(&self) -> u64 {
        self.docs.crawled()
    }

    /// The doc table entry of `doc`, through a cache of decompressed blocks
    /// of which only `doc`'s record is decoded.
    pub fn doc(&self, doc: u64) -> Result<Doc> {
        let c = self.docs.container();
        let i = self
            .docs
            .block_of(doc)
            .ok_or_else(|| Error::internal(format!("docID {doc} is not in the doc table")))?;
        let cached = self.doc_blocks.lock().ok().and_then(|m| m.get(&i).cloned());
        let block = match cached {
            Some(b) => b,
            None => {
                let b = Arc::new(self.docs.index_block(i, c.read_block(i)?)?);
                if let Ok(mut m) = self.doc_blocks.lock() {
                    if m.len() >= DOC_BLOCK_CACHE {
                        m.clear();
                    }
                    m.insert(i, Arc::clone(&b));
                }
                b
            }
        };
        self.docs.doc_in(&block, doc)?.ok_or_else(|| {
            Error::corrupt(
                c.path(),
                format!("block {i}"),
                c.blocks()[i].offset,
                format!("docID {doc} missing from its block"),
            )
        })
    }

    /// Whether the job has PageRank (of this doc table's length).
    pub fn has_ranks(&self) -> bool {
        self.ranks.is_some()
    }

    /// PageRank of `doc`, when the job has ranks.
    pub fn rank(&self, doc: u64) -> Result<Option<f64>> {
        let Some(r) = &self.ranks else {
            return Ok(None);
        };
        match r.memory()? {
            Some(v) => v
                .get(doc as usize)
                .copied()
                .map(Some)
                .ok_or_else(|| Error::internal(format!("docID {doc} past the PageRank vector"))),
            None => r.file.reader().get(doc).map(Some),
        }
    }

    /// A PageRank lookup for docIDs asked in increasing order (`None`: no
    /// ranks); a vector too large for memory is read sequentially.
    pub fn pagerank_lookup(&self) -> Result<Option<PageRankLookup<'_>>> {
        Ok(self
            .pageranks()?
            .map(|mut p| Box::new(move |d: u32| p.get(d)) as PageRankLookup<'_>))
    }

    /// [`Self::pagerank_lookup`] as a value rather than a boxed closure,
    /// for a query's candidate loop: a vector in memory is then read by an
    /// index the caller inlines (through the box it was a call per
    /// candidate).
    pub fn pageranks(&self) -> Result<Option<PageRanks<'_>>> {
        let Some(r) = &self.ranks else {
            return Ok(None);
        };
        Ok(Some(match r.memory()? {
            Some(v) => PageRanks::Memory(v),
            None => PageRanks::File(r.file.reader()),
        }))
    }

    /// Whether the job has a repository.
    pub fn has_repository(&self) -> bool {
        self.repository.is_some()
    }

    /// Repository page `page` as stored: (content type, body); `None` when
    /// the job has no repository or not that page.
    pub fn page(&self, page: u64) -> Result<Option<(String, Vec<u8>)>> {
        let mut buf = (Vec::new(), Vec::new());
        self.visit_page(page, &mut buf, |ct, body| (ct.to_string(), body.to_vec()))
    }

    /// The stored bytes of document `doc`'s page: (content type, body);
    /// `None` for a doc not crawled, not in the repository or not in the job.
    pub fn raw(&self, doc: u64) -> Result<Option<(String, Vec<u8>)>> {
        match self.page_of(doc)? {
            Some(page) => self.page(page),
            None => Ok(None),
        }
    }

    /// Document `doc`'s repository page; `None` when the job has no
    /// repository, not that document, or no stored page for it.
    fn page_of(&self, doc: u64) -> Result<Option<u64>> {
        if self.repository.is_none() || doc >= self.docs.len() {
            return Ok(None);
        }
        Ok(self.doc(doc)?.page)
    }

    /// `f(content type, body)` of repository page `page`, its block
    /// decompressed into `buf`; `None` when the job has no repository or
    /// not that page. The records read on the way are decoded too, so a
    /// corrupt one before the page is reported, not skipped.
    fn visit_page<T>(
        &self,
        page: u64,
        buf: &mut (Vec<u8>, Vec<u8>),
        f: impl FnOnce(&str, &[u8]) -> T,
    ) -> Result<Option<T>> {
        let Some(repo) = &self.repository else {
            return Ok(None);
        };
        let (mut f, mut out) = (Some(f), None);
        repo.visit_key(page, buf, |p, input| {
            let (content_type, body) = records::decode_repo(input)?;
            if p == page {
                if let Some(f) = f.take() {
                    out = Some(f(content_type, body));
                }
                return Ok(false);
            }
            Ok(p < page)
        })?;
        Ok(out)
    }

    /// Document `doc`'s page read by the ingest extractor (its words as
    /// indexed, their flags, title, links, and its visible text as written,
    /// [`Page::text`]); `None` when there is no stored page or it is not
    /// HTML.
    pub fn extract(&self, doc: u64) -> Result<Option<Page>> {
        Ok(self
            .with_extracted(doc, |e| e.read(None).cloned())?
            .flatten())
    }

    /// `f` of document `doc`'s stored page, which it reads with the ingest
    /// extractor as [`Self::extract`] does ([`Extracting::read`]), whole or
    /// its beginning, as often as it likes, without copying the page or the
    /// stored bytes: the decompressed block and the extractor's buffers are
    /// the calling thread's, kept from call to call (a search extracts ten
    /// pages, a server thousands). `None` when there is no stored page.
    pub fn with_extracted<T>(
        &self,
        doc: u64,
        f: impl FnOnce(&mut Extracting<'_>) -> T,
    ) -> Result<Option<T>> {
        let Some(page) = self.page_of(doc)? else {
            return Ok(None);
        };
        // Taken out of the thread's slot for the call, so that `f` may
        // extract another page (it gets fresh buffers) and a panic leaves
        // no half-used scratch behind.
        let mut scratch = EXTRACT_SCRATCH.take().unwrap_or_else(|| {
            let mut x = Extractor::new();
            x.set_keep_text(true);
            Box::new((x, (Vec::new(), Vec::new())))
        });
        let (x, buf) = &mut *scratch;
        let out = self.visit_page(page, buf, |content_type, body| {
            f(&mut Extracting::new(
                &mut *x,
                body,
                charset_param(content_type),
            ))
        })?;
        // A huge page's buffers are not worth keeping for the next one.
        if buf.1.capacity() <= KEPT_EXTRACT_BYTES {
            EXTRACT_SCRATCH.set(Some(scratch));
        }
        Ok(out)
    }

    /// Whether the job has anchors.
    pub fn has_anchors(&self) -> bool {
        self.anchors.is_some()
    }

    /// Calls `f(target docID, source docID, link kind, anchor text)` for
    /// every anchor of the job, in target order.
    pub fn for_each_anchor(
        &self,
        mut f: impl FnMut(u64, u64, records::LinkKind, &str) -> Result<()>,
    ) -> Result<()> {
        let Some(anchors) = &self.anchors else {
            return Ok(());
        };
        anchors.for_each(|dst, input| {
            let (src, kind, text) = records::decode_anchor(input)?;
            f(dst, src, kind, text)
        })
    }

    /// Calls `f(source docID, anchor text)` for the links to `doc` in the
    /// anchor file's order, until it returns false (it is not called again
    /// after that, even for later links of the same block).
    pub fn visit_anchors(&self, doc: u64, mut f: impl FnMut(u64, &str) -> bool) -> Result<()> {
        let Some(anchors) = &self.anchors else {
            return Ok(());
        };
        let mut buf = (Vec::new(), Vec::new());
        let mut more = true;
        anchors.visit_key(doc, &mut buf, |target, input| {
            let (src, _kind, text) = records::decode_anchor(input)?;
            if target == doc && more {
                more = f(src, text);
                return Ok(more);
            }
            Ok(more && target <= doc)
        })
    }

    /// The links to `doc`: the first `shown` with their text, counted up to
    /// `cap`.
    pub fn in_links(&self, doc: u64, shown: usize, cap: u64) -> Result<InLinks> {
        let mut out = InLinks::default();
        self.visit_anchors(doc, |src, text| {
            out.count += 1;
            if out.links.len() < shown {
                out.links.push((src, text.trim().to_string()));
            }
            out.count < cap
        })?;
        out.capped = out.count >= cap;
        Ok(out)
    }

    /// Whether anchor titles are read from the index's titles file (else
    /// worked out from the anchors at each lookup).
    pub fn has_stored_titles(&self) -> bool {
        self.titles.is_some()
    }

    /// The title of a page never crawled: the anchor text most of the first
    /// [`crate::index::titles::ANCHORS_PER_TITLE`] links to `doc` use (ties:
    /// the first seen). `None` for a crawled page or one with a title of
    /// its own in the doc table, and when no link to it has text. Read in
    /// place from the titles file when the job has one.
    pub fn anchor_title(&self, doc: u64) -> Result<Option<String>> {
        if let Some(t) = &self.titles {
            return Ok(t.get(doc)?.map(str::to_string));
        }
        let d = self.doc(doc)?;
        if d.crawled || !d.title.is_empty() {
            return Ok(None);
        }
        let mut vote = AnchorVote::default();
        self.visit_anchors(doc, |_, text| vote.add(text))?;
        Ok(vote.title().map(str::to_string))
    }

    /// The clusters of every dedup algorithm the job ran, in [`Alg::ALL`]
    /// order.
    pub fn clusters(&self) -> &[Clusters] {
        &self.clusters
    }

    /// The clusters that collapse near-duplicates in results: the first
    /// mapped of minhash, broder, exact, charikar.
    pub fn similar(&self) -> Option<&Clusters> {
        [Alg::MinHash, Alg::Broder, Alg::Exact, Alg::Charikar]
            .iter()
            .find_map(|&a| self.clusters.iter().find(|c| c.alg == a))
            .filter(|c| c.mapped())
    }
}

//! The searcher: Brin & Page's query evaluation (Figure 4) and ranking
//! (§4.5.1) over the `index` stage's lexicon and barrels, with results as
//! Google showed them in 1998 — title, URL, a snippet with the query words
//! marked, clustered by host, near-duplicates collapsed.
//!
//! ```text
//! "Query words" ─ tokenize ─► words ─ lexicon (fst) ─► wordIDs, doclist locations
//!   ─► short barrels: leapfrog the doclists, rank each match  (eval)
//!      └ fewer than offset + k matches ─► the same on the full barrels
//!   ─► sort by score ─► collapse near-duplicates ─► group by host ─► page
//!   ─► per result: doc table (URL, title, host), anchors (never-crawled
//!      pages), repository page → extractor → snippet            (present)
//! ```
//!
//! * [`query`] — the query's words, with the indexer's own tokenizer;
//! * [`rank`] — hit types, count-weights, proximity bins, the weight table
//!   and `--explain`;
//! * [`eval`] — Figure 4 over the doclist cursors;
//! * [`present`] — result pages: host clusters, near-duplicate groups,
//!   titles, snippets;
//! * [`titles`] — the title-query measurement of the ranking.
//!
//! # API
//!
//! ```no_run
//! # fn main() -> webmill::Result<()> {
//! use webmill::search::{Query, Searcher};
//! let job = webmill::job::JobView::open(std::path::Path::new("JOB"))?;
//! let searcher = Searcher::open(&job)?;
//! let results = searcher.search(&Query::parse("vec push"), 10, 0)?;
//! for r in &results.results {
//!     println!("{} {} {:.2}", r.url, r.title, r.score);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Answers without results
//!
//! An empty or punctuation-only query, and a query with a word the lexicon
//! does not have, return no results and an [`EmptyReason`] (every word must
//! match). A query of more than [`MAX_QUERY_WORDS`] distinct words searches
//! the first ones and reports how many it ignored. Corrupt files are errors
//! naming the file and block, the same message `webmill verify` gives.
//!
//! # Reading
//!
//! A [`Searcher`] reads a job through a [`JobView`] (no lock; another process
//! may be writing other stages). It maps the lexicon and opens barrels as
//! queries first need them; nothing is loaded whole except the PageRank
//! vector (8 bytes a doc, read up to 256 MiB) and the near-duplicate map (a
//! doc → cluster table of the duplicated docs, up to 16 M members; larger
//! ones are not used and the results say so). It is `Sync`: a server shares
//! one between threads.

pub mod eval;
pub mod present;
pub mod query;
pub mod rank;
pub mod titles;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::dedup::Alg;
use crate::docs::{Doc, DocTable};
use crate::error::{Error, Result};
use crate::index::{Barrel, BarrelSet, Lexicon};
use crate::ingest::pagefile::PageFile;
use crate::ingest::records;
use crate::job::{JobFile, JobView};
use crate::rank::RankVector;
pub use eval::{Evaluation, Match, Pass, Term, Work};
pub use present::Snippet;
pub use query::{HostClustering, Query, DEFAULT_CUTOFF, MAX_QUERY_WORDS};
pub use rank::{Explain, HitType, RankingWeights};

/// Results per page.
pub const DEFAULT_K: usize = 10;
/// Largest PageRank vector loaded into memory (bytes).
const MAX_RANKS_IN_MEMORY: u64 = 256 << 20;
/// Largest near-duplicate map loaded (members).
const MAX_CLUSTER_MEMBERS: u64 = 16 << 20;

/// A query word and what the lexicon says of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueryWord {
    /// The word, as tokenized.
    pub word: String,
    /// Its wordID, `None` when not in the lexicon.
    pub word_id: Option<u32>,
    /// Documents containing it.
    pub docs: u32,
    /// Documents with it in their title or anchors (its short doclist).
    pub short_docs: u32,
}

/// Why a search has no results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason", content = "words")]
pub enum EmptyReason {
    /// The query has no words (empty, or only punctuation).
    NoWords,
    /// These words are in no document.
    UnknownWords(Vec<String>),
    /// Every word is known, but no document has them all.
    NoDocumentHasAll,
}

impl std::fmt::Display for EmptyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmptyReason::NoWords => f.write_str("the query has no words"),
            EmptyReason::UnknownWords(w) => {
                write!(f, "no document contains {}", w.join(", "))
            }
            EmptyReason::NoDocumentHasAll => f.write_str("no document contains all the words"),
        }
    }
}

/// One result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchResult {
    /// docID.
    pub docid: u64,
    /// URL.
    pub url: String,
    /// Title, or for a page never crawled the anchor text of a link to it.
    pub title: String,
    /// The title is anchor text.
    pub title_from_anchor: bool,
    /// Whether the page was crawled.
    pub crawled: bool,
    /// Final score.
    pub score: f64,
    /// IR score.
    pub ir: f64,
    /// PageRank, when the job has ranks.
    pub pagerank: Option<f64>,
    /// Snippet from the repository (crawled pages, when asked for).
    pub snippet: Option<Snippet>,
    /// Other matches from the same host, best first.
    pub host_more: Vec<u64>,
    /// Near-duplicates of this page among the matches, best first.
    pub similar: Vec<u64>,
    /// The numbers behind the score (when asked for).
    pub explain: Option<Explain>,
}

/// A page of results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Results {
    /// The query's words.
    pub words: Vec<QueryWord>,
    /// Query words past [`MAX_QUERY_WORDS`], not searched.
    pub ignored_words: usize,
    /// Matching documents found (at most the cut-off).
    pub total: u64,
    /// Result groups (after collapsing near-duplicates and hosts).
    pub groups: u64,
    /// The barrels the matches came from.
    pub pass: Option<Pass>,
    /// Matches found in the short barrels.
    pub short_matches: u64,
    /// Matching stopped at the cut-off.
    pub cut_off: bool,
    /// Matching stopped at the query's deadline: a partial answer, from
    /// the documents matched by then.
    pub timed_out: bool,
    /// Why there are no results, if there are none.
    pub empty: Option<EmptyReason>,
    /// Results were grouped by host.
    pub host_clusters: bool,
    /// The dedup algorithm whose clusters collapsed near-duplicates.
    pub similar_by: Option<String>,
    /// The job has PageRank and it was combined into the scores.
    pub pagerank: bool,
    /// The results of this page.
    pub results: Vec<SearchResult>,
}

enum Ranks {
    Memory(Vec<f64>),
    Disk(RankVector),
}

/// A searcher over one job's index.
pub struct Searcher {
    lexicon: Lexicon,
    barrel_paths: Vec<[PathBuf; 2]>,
    barrels: Mutex<HashMap<(usize, bool), Arc<Barrel>>>,
    docs: DocTable,
    doc_blocks: Mutex<HashMap<usize, Arc<Vec<Doc>>>>,
    ranks: Option<Ranks>,
    repository: Option<PageFile>,
    anchors: Option<PageFile>,
    clusters: Option<(Alg, HashMap<u32, u32>)>,
}

/// Decoded doc-table blocks kept between queries.
const DOC_BLOCK_CACHE: usize = 256;

impl Searcher {
    /// Opens the index of `job` (which must have run `index`), with its doc
    /// table, PageRank and repository when it has them, and the clusters of
    /// the first dedup stage it ran of minhash, broder, exact, charikar.
    pub fn open(job: &JobView) -> Result<Searcher> {
        let lexicon = Lexicon::open(job.file(JobFile::Lexicon)?)?;
        let mut barrel_paths = Vec::with_capacity(lexicon.barrels());
        for b in 0..lexicon.barrels() {
            let b16 = u16::try_from(b).map_err(|_| Error::internal("barrel number"))?;
            barrel_paths.push([
                job.file(JobFile::ShortBarrel(b16))?,
                job.file(JobFile::FullBarrel(b16))?,
            ]);
        }
        let docs = DocTable::open(job.file(JobFile::Docs)?)?;
        let ranks = if job.has(JobFile::Ranks) {
            let v = RankVector::open(job.file(JobFile::Ranks)?)?;
            if v.len() != docs.len() {
                None
            } else if v.len() * 8 <= MAX_RANKS_IN_MEMORY {
                Some(Ranks::Memory(v.load()?))
            } else {
                Some(Ranks::Disk(v))
            }
        } else {
            None
        };
        let open_opt = |f: JobFile, kind| -> Result<Option<PageFile>> {
            if job.has(f) {
                Ok(Some(PageFile::open(job.file(f)?, kind)?))
            } else {
                Ok(None)
            }
        };
        let repository = open_opt(JobFile::Repository, &records::REPO)?;
        let anchors = open_opt(JobFile::Anchors, &records::ANCHORS)?;
        let mut clusters = None;
        for alg in [Alg::MinHash, Alg::Broder, Alg::Exact, Alg::Charikar] {
            if job.has(JobFile::Clusters(alg)) {
                clusters = present::load_clusters(
                    &job.file(JobFile::Clusters(alg))?,
                    MAX_CLUSTER_MEMBERS,
                )?
                .map(|m| (alg, m));
                break;
            }
        }
        Ok(Searcher {
            lexicon,
            barrel_paths,
            barrels: Mutex::new(HashMap::new()),
            docs,
            doc_blocks: Mutex::new(HashMap::new()),
            ranks,
            repository,
            anchors,
            clusters,
        })
    }

    /// Opens every barrel now rather than when a query first needs it: a
    /// reader that must hold one generation of the job (a server, see
    /// `JobView::read_whole`) has then opened all its files at once.
    pub fn open_barrels(&self) -> Result<()> {
        for b in 0..self.barrel_paths.len() {
            for set in [BarrelSet::Short, BarrelSet::Full] {
                eval::Sources::barrel(self, set, b)?;
            }
        }
        Ok(())
    }

    /// The doc table's path.
    pub fn docs_path(&self) -> &std::path::Path {
        self.docs.container().path()
    }

    /// The lexicon.
    pub fn lexicon(&self) -> &Lexicon {
        &self.lexicon
    }

    /// Documents in the collection.
    pub fn doc_count(&self) -> u64 {
        self.docs.len()
    }

    /// The words of `query` with their lexicon entries: (words, terms found).
    pub fn terms(&self, words: &[String]) -> Result<(Vec<QueryWord>, Vec<Term>)> {
        let mut qw = Vec::with_capacity(words.len());
        let mut terms = Vec::with_capacity(words.len());
        for w in words {
            match self.lexicon.lookup(w) {
                Some(id) => {
                    let info = self.lexicon.entry(id)?;
                    qw.push(QueryWord {
                        word: w.clone(),
                        word_id: Some(id),
                        docs: info.docs,
                        short_docs: info.short_docs,
                    });
                    terms.push(Term {
                        word: w.clone(),
                        id,
                        info,
                        barrel: self.lexicon.barrel_of(id),
                    });
                }
                None => qw.push(QueryWord {
                    word: w.clone(),
                    word_id: None,
                    docs: 0,
                    short_docs: 0,
                }),
            }
        }
        Ok((qw, terms))
    }

    /// Searches: results `offset..offset + k` of `query` (k = 0 only
    /// counts the matches).
    pub fn search(&self, query: &Query, k: usize, offset: usize) -> Result<Results> {
        let (qwords, terms) = self.terms(&query.words)?;
        let mut out = Results {
            words: qwords,
            ignored_words: query.ignored_words,
            total: 0,
            groups: 0,
            pass: None,
            short_matches: 0,
            cut_off: false,
            timed_out: false,
            empty: None,
            host_clusters: false,
            similar_by: None,
            pagerank: self.ranks.is_some(),
            results: Vec::new(),
        };
        if query.words.is_empty() {
            out.empty = Some(EmptyReason::NoWords);
            return Ok(out);
        }
        let unknown: Vec<String> = out
            .words
            .iter()
            .filter(|w| w.word_id.is_none())
            .map(|w| w.word.clone())
            .collect();
        if !unknown.is_empty() {
            out.empty = Some(EmptyReason::UnknownWords(unknown));
            return Ok(out);
        }
        let want = offset.saturating_add(k).max(1);
        let ev = eval::evaluate_until(
            self,
            &terms,
            0..u32::MAX,
            want,
            query.cutoff.max(1),
            &query.weights,
            query.deadline,
        )?;
        out.total = ev.matches.len() as u64;
        out.pass = Some(ev.pass);
        out.short_matches = ev.short_matches as u64;
        out.cut_off = ev.cut_off;
        out.timed_out = ev.timed_out;
        if ev.matches.is_empty() {
            out.empty = Some(EmptyReason::NoDocumentHasAll);
            return Ok(out);
        }
        let grouped = present::group(self, ev.matches, query, want)?;
        out.groups = grouped.groups.len() as u64;
        out.host_clusters = grouped.by_host;
        out.similar_by = match &self.clusters {
            Some((alg, _)) if query.collapse_similar => Some(alg.name().to_string()),
            _ => None,
        };
        for g in grouped.groups.into_iter().skip(offset).take(k) {
            out.results.push(present::result(self, &terms, query, g)?);
        }
        Ok(out)
    }

    /// Matches `query` against the documents `docs` only, as a server
    /// holding that docID range would, returning the matches (unranked) and
    /// the [`Work`] it took; `None` when a word is not in the lexicon (no
    /// server would read anything). `want` as for [`Self::search`]'s
    /// offset + k.
    pub fn evaluate_in(
        &self,
        query: &Query,
        docs: std::ops::Range<u32>,
        want: usize,
    ) -> Result<Option<Evaluation>> {
        let (qwords, terms) = self.terms(&query.words)?;
        if terms.is_empty() || qwords.iter().any(|w| w.word_id.is_none()) {
            return Ok(None);
        }
        eval::evaluate_in(
            self,
            &terms,
            docs,
            want.max(1),
            query.cutoff.max(1),
            &query.weights,
        )
        .map(Some)
    }

    /// The doc table entry of `doc`, through a cache of decoded blocks.
    pub fn doc(&self, doc: u64) -> Result<Doc> {
        let c = self.docs.container();
        let i = c
            .find_block(&doc.to_be_bytes())
            .filter(|_| doc < self.docs.len())
            .ok_or_else(|| Error::internal(format!("docID {doc} is not in the doc table")))?;
        let cached = self.doc_blocks.lock().ok().and_then(|m| m.get(&i).cloned());
        let block = match cached {
            Some(b) => b,
            None => {
                let b = Arc::new(self.docs.decode_block(i, &c.read_block(i)?)?);
                if let Ok(mut m) = self.doc_blocks.lock() {
                    if m.len() >= DOC_BLOCK_CACHE {
                        m.clear();
                    }
                    m.insert(i, Arc::clone(&b));
                }
                b
            }
        };
        let first = c.blocks()[i]
            .key
            .as_slice()
            .try_into()
            .map(u64::from_be_bytes)
            .unwrap_or(0);
        block.get((doc - first) as usize).cloned().ok_or_else(|| {
            Error::corrupt(
                c.path(),
                format!("block {i}"),
                c.blocks()[i].offset,
                format!("docID {doc} missing from its block"),
            )
        })
    }
}

/// A server shares one searcher between its threads.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<Searcher>();
};

impl eval::Sources for Searcher {
    fn barrel(&self, set: BarrelSet, b: usize) -> Result<Arc<Barrel>> {
        let full = set == BarrelSet::Full;
        if let Some(x) = self
            .barrels
            .lock()
            .ok()
            .and_then(|m| m.get(&(b, full)).cloned())
        {
            return Ok(x);
        }
        let path = &self.barrel_paths.get(b).ok_or_else(|| {
            Error::internal(format!(
                "barrel {b} asked of an index of {}",
                self.barrel_paths.len()
            ))
        })?[usize::from(full)];
        let barrel = Arc::new(Barrel::open(path)?);
        if let Ok(mut m) = self.barrels.lock() {
            m.insert((b, full), Arc::clone(&barrel));
        }
        Ok(barrel)
    }

    fn pagerank(&self) -> Result<Option<eval::PageRankLookup<'_>>> {
        Ok(match &self.ranks {
            None => None,
            Some(Ranks::Memory(v)) => Some(Box::new(move |d: u32| {
                v.get(d as usize)
                    .copied()
                    .ok_or_else(|| Error::internal(format!("docID {d} past the PageRank vector")))
            })),
            Some(Ranks::Disk(v)) => {
                let mut r = v.reader();
                Some(Box::new(move |d: u32| r.get(u64::from(d))))
            }
        })
    }

    fn docs(&self) -> u64 {
        self.docs.len()
    }
}

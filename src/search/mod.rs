//! The searcher: Brin & Page's query evaluation (Figure 4) and ranking
//! (§4.5.1) over the `index` stage's lexicon and barrels, with results as
//! Google showed them in 1998 — title, URL, a snippet with the query words
//! marked, clustered by host, near-duplicates collapsed.
//!
//! ```text
//! "Query words" ─ tokenize ─► words ─ lexicon (fst) ─► wordIDs, doclist locations
//!   ─► short doclists: leapfrog the doclists, rank each match  (eval)
//!      └ fewer than offset + k matches ─► the same on the full doclists
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
//! queries first need them; the documents (doc table, PageRank, repository,
//! anchors, near-duplicate clusters) are a [`DocStore`], which a server
//! shares with its document pages. It is `Sync`: a server shares one
//! between threads.

pub mod bm25;
pub mod eval;
pub mod present;
pub mod query;
pub mod rank;
pub mod retrieve;
pub mod sharded;
pub mod titles;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;

use crate::docs::Doc;
use crate::docstore::DocStore;
use crate::error::{Error, Result};
use crate::index::fieldlens::FieldLengths;
use crate::index::stem::Stemmer;
use crate::index::{Barrel, Lexicon};
use crate::job::{JobFile, JobView};
pub use bm25::{Bm25Explain, Bm25Weights};
pub use eval::{Evaluation, Match, Pass, Term, Work};
pub use present::Snippet;
pub use query::{HostClustering, Matching, Node, Query, Ranking, DEFAULT_CUTOFF, MAX_QUERY_WORDS};
pub use rank::{Explain, HitType, RankingWeights};
pub use retrieve::Explanation;

/// Results per page.
pub const DEFAULT_K: usize = 10;
/// Largest field-lengths table loaded into memory (bytes); larger ones are
/// read a block per lookup.
const MAX_LENGTHS_IN_MEMORY: u64 = 256 << 20;

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
    /// No document satisfies the query (its phrases, exclusions, `site:`s
    /// or `OR`s), nor, with `--match any`, holds any of its words without
    /// breaking its exclusions and `site:`s.
    NoMatch,
}

impl std::fmt::Display for EmptyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmptyReason::NoWords => f.write_str("the query has no words"),
            EmptyReason::UnknownWords(w) => {
                write!(f, "no document contains {}", w.join(", "))
            }
            EmptyReason::NoDocumentHasAll => f.write_str("no document contains all the words"),
            EmptyReason::NoMatch => f.write_str("no document matches the query"),
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
    /// Whether it satisfies the whole query (with `--match any`, the
    /// documents holding only some of its words follow those that do).
    pub complete: bool,
    /// The numbers behind the score (when asked for).
    pub explain: Option<Explanation>,
}

/// A page of results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Results {
    /// The query's words.
    pub words: Vec<QueryWord>,
    /// Query words past [`MAX_QUERY_WORDS`], not searched.
    pub ignored_words: usize,
    /// Matching documents found (the paper's conjunctive evaluation: at
    /// most the cut-off; otherwise exact).
    pub total: u64,
    /// Of them, the documents satisfying the whole query.
    pub complete: u64,
    /// The totals are estimates: pruning skipped documents that could not
    /// enter the results, uncounted (shown as "about N").
    pub total_estimated: bool,
    /// The least and the most [`Self::total`] can be, whatever the
    /// documents pruning skipped were (both `total` when exact).
    pub total_bounds: (u64, u64),
    /// The same for [`Self::complete`].
    pub complete_bounds: (u64, u64),
    /// How documents matched.
    pub matching: Matching,
    /// The ranking.
    pub ranking: Ranking,
    /// What the query parser read otherwise than written.
    pub notes: Vec<String>,
    /// Result groups (after collapsing near-duplicates and hosts).
    pub groups: u64,
    /// The barrels the matches came from.
    pub pass: Option<Pass>,
    /// Matches found in the short doclists.
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

impl Results {
    /// The answer a search starts from: `words` reported as the query's,
    /// nothing matched yet, and [`EmptyReason::NoWords`] already set when
    /// the query has neither a word nor a `site:` to look for.
    fn start(query: &Query, words: Vec<QueryWord>, pagerank: bool) -> Results {
        let mut has_site = false;
        query.expr.visit_sites(&mut |_| has_site = true);
        Results {
            words,
            ignored_words: query.ignored_words,
            total: 0,
            complete: 0,
            total_estimated: false,
            total_bounds: (0, 0),
            complete_bounds: (0, 0),
            matching: query.matching,
            ranking: query.ranking,
            notes: query.notes.clone(),
            groups: 0,
            pass: None,
            short_matches: 0,
            cut_off: false,
            timed_out: false,
            empty: (query.words.is_empty() && !has_site).then_some(EmptyReason::NoWords),
            host_clusters: false,
            similar_by: None,
            pagerank,
            results: Vec::new(),
        }
    }

    /// The query's words that no document holds.
    fn unknown_words(&self) -> Vec<String> {
        self.words
            .iter()
            .filter(|w| w.word_id.is_none())
            .map(|w| w.word.clone())
            .collect()
    }

    /// Whether the answer is decided before a posting is read: nothing to
    /// search for, or the paper's conjunction with a word no document
    /// holds.
    fn decided_early(&mut self, query: &Query) -> bool {
        if self.empty.is_none() && query.is_paper_conjunction() {
            let unknown = self.unknown_words();
            if !unknown.is_empty() {
                self.empty = Some(EmptyReason::UnknownWords(unknown));
            }
        }
        self.empty.is_some()
    }

    /// Says why a ranked query matched nothing: its unknown words where
    /// they are the reason (all of them unknown, or every word required),
    /// otherwise that no document matched.
    fn no_ranked_match(&mut self, query: &Query) {
        let unknown = self.unknown_words();
        let why_unknown = unknown.len() == query.words.len() || query.matching == Matching::All;
        self.empty = Some(if !unknown.is_empty() && why_unknown {
            EmptyReason::UnknownWords(unknown)
        } else {
            EmptyReason::NoMatch
        });
    }

    /// Ranks and groups `matches` (see [`present::group`]), noting how they
    /// were grouped; the groups come back best first.
    fn group(
        &mut self,
        s: &Searcher,
        matches: Vec<Match>,
        query: &Query,
        want: usize,
    ) -> Result<Vec<present::Group>> {
        let grouped = present::group(s, matches, query, want)?;
        self.groups = grouped.groups.len() as u64;
        self.host_clusters = grouped.by_host;
        self.similar_by = match s.store.similar() {
            Some(c) if query.collapse_similar => Some(c.alg.name().to_string()),
            _ => None,
        };
        Ok(grouped.groups)
    }
}

/// Per docID field lengths as [`Searcher::lengths_view`] found them.
pub enum LengthsView<'a> {
    /// The index has none.
    Absent,
    /// In memory, by docID (a docID past the end has none).
    Memory(&'a [[u32; bm25::N_FIELDS]]),
    /// In the file.
    File(&'a FieldLengths),
}

impl LengthsView<'_> {
    /// Document `doc`'s field lengths (`None`: none known).
    #[inline]
    pub fn get(&self, doc: u32) -> Result<Option<[u32; bm25::N_FIELDS]>> {
        match self {
            LengthsView::Absent => Ok(None),
            LengthsView::Memory(all) => Ok(all.get(doc as usize).copied()),
            LengthsView::File(f) => f.get(u64::from(doc)).map(Some),
        }
    }
}

/// A searcher over one job's index.
pub struct Searcher {
    lexicon: Lexicon,
    /// The index's stemmer, which query words go through too.
    stemmer: Option<Stemmer>,
    /// A question's function words ([`present::QUESTION_STOPWORDS`]) as
    /// the index spells them (stemmed when it stems), sorted.
    stopwords: Vec<String>,
    /// Per docID its field lengths, and the averages (BM25, BM25F).
    lengths: Option<(
        FieldLengths,
        Vec<[u32; bm25::N_FIELDS]>,
        [f64; bm25::N_FIELDS],
    )>,
    /// Documents with any hit (a field length), or all when unknown.
    text_docs: u64,
    barrel_paths: Vec<PathBuf>,
    /// Per barrel of `barrel_paths`, opened on first use (a slot, not a
    /// locked map: each query's words look their barrels up).
    barrels: Vec<OnceLock<Arc<Barrel>>>,
    store: Arc<DocStore>,
    /// The largest PageRank of every docID range (pruning's bounds),
    /// found on first use.
    rank_bounds: std::sync::OnceLock<Option<RankBounds>>,
    /// For a shard of a sharded index: every shard's lexicon, whose counts
    /// sum to a word's document frequency in the collection.
    peers: Option<Arc<Vec<Lexicon>>>,
    /// For a sharded index: its shards, which [`Self::search`] queries and
    /// merges (this searcher's own files are then its first shard's).
    sharded: Option<Box<sharded::Shards>>,
    /// The docIDs its index holds (a shard's range; all for a job's own
    /// index).
    docs: std::ops::Range<u32>,
}

impl Searcher {
    /// Opens the index of `job` (which must have run `index`) with its
    /// documents ([`DocStore`]: doc table, PageRank, repository, anchors,
    /// near-duplicate clusters).
    pub fn open(job: &JobView) -> Result<Searcher> {
        Searcher::with_store(job, Arc::new(DocStore::open(job)?))
    }

    /// Opens the index of `job` over a document store already open (a
    /// server's, shared with its other pages).
    /// A job without the `index` stage's files but with a sharded index
    /// ([`crate::index::shards`], in `JOB/shards/`) is searched through its
    /// shards.
    pub fn with_store(job: &JobView, store: Arc<DocStore>) -> Result<Searcher> {
        if !job.has(JobFile::Lexicon) {
            if let Some(set) = crate::index::shards::ShardSet::find(job.dir())? {
                return sharded::open(set, store);
            }
        }
        Searcher::of_files(
            &|f| job.file(f),
            job.has(JobFile::FieldLengths),
            store,
            None,
        )
    }

    /// Opens the sharded index in `dir` ([`crate::index::shards`], built
    /// from `job`) over `job`'s documents, whatever index the job holds.
    pub fn open_shards(job: &JobView, dir: &std::path::Path) -> Result<Searcher> {
        sharded::open(
            crate::index::shards::ShardSet::open(dir)?,
            Arc::new(DocStore::open(job)?),
        )
    }

    /// Whether `job` has an index to search: the `index` stage's, or a
    /// sharded one.
    pub fn has_index(job: &JobView) -> bool {
        job.has(JobFile::Lexicon)
            || crate::index::shards::default_dir(job.dir())
                .join(crate::index::shards::MANIFEST)
                .exists()
    }

    /// The searcher of the index files `file` names (`has_lengths`: the
    /// field lengths are among them).
    fn of_files(
        file: &dyn Fn(JobFile) -> Result<PathBuf>,
        has_lengths: bool,
        store: Arc<DocStore>,
        peers: Option<Arc<Vec<Lexicon>>>,
    ) -> Result<Searcher> {
        let lexicon = Lexicon::open(file(JobFile::Lexicon)?)?;
        let mut barrel_paths = Vec::with_capacity(lexicon.barrels());
        for b in 0..lexicon.barrels() {
            let b16 = u16::try_from(b).map_err(|_| Error::internal("barrel number"))?;
            barrel_paths.push(file(JobFile::FullBarrel(b16))?);
        }
        let stemmer = lexicon.stem()?.stemmer();
        let lengths = if has_lengths {
            let f = FieldLengths::open(file(JobFile::FieldLengths)?)?;
            if f.docs() != store.len() {
                None
            } else {
                let avg = f.averages();
                let all = if f.docs() * 20 <= MAX_LENGTHS_IN_MEMORY {
                    f.load()?
                } else {
                    Vec::new()
                };
                Some((f, all, avg))
            }
        } else {
            None
        };
        let text_docs = match &lengths {
            Some((_, all, _)) if !all.is_empty() => {
                all.iter().filter(|l| l.iter().any(|&x| x > 0)).count() as u64
            }
            _ => store.len(),
        };
        let mut stopwords: Vec<String> = present::QUESTION_STOPWORDS
            .iter()
            .map(|w| match &stemmer {
                Some(st) => st.word(w).into_owned(),
                None => w.to_string(),
            })
            .collect();
        stopwords.sort_unstable();
        stopwords.dedup();
        let barrels = barrel_paths.iter().map(|_| OnceLock::new()).collect();
        Ok(Searcher {
            lexicon,
            stemmer,
            stopwords,
            text_docs,
            lengths,
            barrel_paths,
            barrels,
            store,
            rank_bounds: std::sync::OnceLock::new(),
            peers,
            sharded: None,
            docs: 0..u32::MAX,
        })
    }

    /// The job's documents.
    pub fn store(&self) -> &Arc<DocStore> {
        &self.store
    }

    /// The collection's average field lengths for BM25 (`None` when the
    /// index has no field lengths).
    pub fn average_field_lengths(&self) -> Option<[f64; bm25::N_FIELDS]> {
        self.lengths.as_ref().map(|l| l.2)
    }

    /// Document `doc`'s field lengths (`None` when the index has none).
    pub fn field_lengths(&self, doc: u32) -> Result<Option<[u32; bm25::N_FIELDS]>> {
        self.lengths_view().get(doc)
    }

    /// Where [`Self::field_lengths`] reads from, found once: for a loop
    /// that asks per candidate (a one-word query's), which otherwise
    /// looked through the optional tuple and tested the vector for
    /// emptiness every time.
    pub fn lengths_view(&self) -> LengthsView<'_> {
        match &self.lengths {
            None => LengthsView::Absent,
            Some((_, all, _)) if !all.is_empty() => LengthsView::Memory(all),
            Some((f, _, _)) => LengthsView::File(f),
        }
    }

    /// PageRank by docID for a query's walk in increasing docID order
    /// (`None`: no ranks); see [`DocStore::pageranks`].
    pub fn pageranks(&self) -> Result<Option<crate::docstore::PageRanks<'_>>> {
        self.store.pageranks()
    }

    /// The largest PageRank of the collection (`None`: no ranks); read
    /// once, on first use.
    pub fn pagerank_max(&self) -> Result<Option<f64>> {
        Ok(self.rank_bounds()?.map(|r| r.max()))
    }

    /// The largest PageRank of every docID range (`None`: no ranks); read
    /// once, on first use.
    pub fn rank_bounds(&self) -> Result<Option<&RankBounds>> {
        if let Some(m) = self.rank_bounds.get() {
            return Ok(m.as_ref());
        }
        let m = match self.store.pagerank_lookup()? {
            None => None,
            Some(mut f) => {
                let n = u32::try_from(self.store.len()).unwrap_or(u32::MAX);
                let mut chunks = Vec::with_capacity((n as usize).div_ceil(RankBounds::CHUNK));
                for d in 0..n {
                    let pr = f(d)?;
                    if (d as usize).is_multiple_of(RankBounds::CHUNK) {
                        chunks.push(pr);
                    } else if let Some(m) = chunks.last_mut() {
                        *m = m.max(pr);
                    }
                }
                Some(RankBounds::new(chunks))
            }
        };
        Ok(self.rank_bounds.get_or_init(|| m).as_ref())
    }

    /// The index's stemmer, if it stems.
    pub fn stemmer(&self) -> Option<&Stemmer> {
        self.stemmer.as_ref()
    }

    /// Whether `w` (as the index spells it) is one of a question's function
    /// words ([`present::QUESTION_STOPWORDS`]), optional for a complete
    /// match ([`Query::required`]).
    pub fn is_question_stopword(&self, w: &str) -> bool {
        self.stopwords
            .binary_search_by(|x| x.as_str().cmp(w))
            .is_ok()
    }

    /// `query` with its words as the index spells them (stemmed when the
    /// index is).
    fn as_indexed<'q>(&self, query: &'q Query) -> std::borrow::Cow<'q, Query> {
        match &self.stemmer {
            Some(st) => std::borrow::Cow::Owned(query.map_words(|w| st.word(w).into_owned())),
            None => std::borrow::Cow::Borrowed(query),
        }
    }

    /// Opens every barrel now rather than when a query first needs it: a
    /// reader that must hold one generation of the job (a server, see
    /// `JobView::read_whole`) has then opened all its files at once.
    pub fn open_barrels(&self) -> Result<()> {
        if let Some(sh) = &self.sharded {
            return sh.open_barrels();
        }
        for b in 0..self.barrel_paths.len() {
            eval::Sources::barrel(self, b)?;
        }
        Ok(())
    }

    /// The docID ranges of `host` and its subdomains
    /// ([`retrieve::site_ranges`]) within the docIDs this index holds.
    pub fn site_ranges(&self, host: &str) -> Result<Vec<std::ops::Range<u32>>> {
        let mut r = retrieve::site_ranges(&self.store, host)?;
        r.retain_mut(|x| {
            *x = x.start.max(self.docs.start)..x.end.min(self.docs.end);
            x.start < x.end
        });
        Ok(r)
    }

    /// The doc table's path.
    pub fn docs_path(&self) -> &std::path::Path {
        self.store.table().container().path()
    }

    /// The lexicon.
    pub fn lexicon(&self) -> &Lexicon {
        &self.lexicon
    }

    /// Documents in the collection.
    pub fn doc_count(&self) -> u64 {
        self.store.len()
    }

    /// Documents with any indexed word (a field length above zero): those
    /// any doclist can hold. The collection's size when the field lengths
    /// are not in memory.
    pub fn text_docs(&self) -> u64 {
        self.text_docs
    }

    /// The words of `query` with their lexicon entries: (words, terms found).
    pub fn terms(&self, words: &[String]) -> Result<(Vec<QueryWord>, Vec<Term>)> {
        let mut qw = Vec::with_capacity(words.len());
        let mut terms = Vec::with_capacity(words.len());
        for w in words {
            match self.lexicon.lookup(w) {
                Some(id) => {
                    let info = self.lexicon.entry(id)?;
                    let df = match &self.peers {
                        None => info.docs,
                        Some(all) => sharded::document_frequency(all, w)?,
                    };
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
                        df,
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
        if let Some(sh) = &self.sharded {
            return sh.search(query, k, offset);
        }
        let query = &*self.as_indexed(query);
        let (qwords, terms) = self.terms(&query.words)?;
        let mut out = Results::start(query, qwords, self.store.has_ranks());
        if out.decided_early(query) {
            return Ok(out);
        }
        let want = offset.saturating_add(k).max(1);
        let matches = if query.is_paper_conjunction() {
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
            out.timed_out = ev.timed_out;
            out.complete = out.total;
            // The paper's count stops at the cut-off: at least that many.
            let most = if ev.cut_off {
                self.doc_count()
            } else {
                out.total
            };
            out.total_bounds = (out.total, most);
            out.complete_bounds = out.total_bounds;
            out.pass = Some(ev.pass);
            out.short_matches = ev.short_matches as u64;
            out.cut_off = ev.cut_off;
            if ev.matches.is_empty() {
                out.empty = Some(EmptyReason::NoDocumentHasAll);
                return Ok(out);
            }
            ev.matches
        } else {
            let r = retrieve::retrieve_with(self, query, &terms, want.max(query.group_window))?;
            out.total = r.total;
            out.complete = r.complete;
            out.total_estimated = r.estimated;
            out.total_bounds = r.total_bounds;
            out.complete_bounds = r.complete_bounds;
            out.cut_off = r.cut_off;
            out.timed_out = r.timed_out;
            out.pass = Some(Pass::Full);
            if r.matches.is_empty() {
                out.no_ranked_match(query);
                return Ok(out);
            }
            r.matches
        };
        let groups = out.group(self, matches, query, want)?;
        out.results = present::results(groups, offset, k, query.heavy(), |g| {
            present::result(self, &terms, query, g)
        })?;
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
        if self.sharded.is_some() {
            return Err(Error::usage(
                "this index is sharded: its layout is executed, not simulated",
            ));
        }
        let query = &*self.as_indexed(query);
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

    /// The doc table entry of `doc`, through the store's cache of decoded
    /// blocks.
    pub fn doc(&self, doc: u64) -> Result<Doc> {
        self.store.doc(doc)
    }
}

/// The largest PageRank of any range of docIDs: the maxima of chunks of
/// [`Self::CHUNK`] docIDs in a segment tree (`2n` numbers for `n` chunks),
/// so a range's is found in `O(log n)` steps. Pruning bounds PageRank's share
/// of a score by it over the docIDs a postings block spans.
pub struct RankBounds {
    chunks: usize,
    tree: Vec<f64>,
    /// The last tables of [`Self::chunk_factors`] and of
    /// [`Self::doc_factors`]: queries with the same PageRank weight share
    /// them.
    chunk_table: FactorTable,
    doc_table: FactorTable,
}

/// A table of factors and the key it was made for.
type KeyedFactors = ([u64; 2], Arc<[f64]>);

/// The table of factors last made, if any.
#[derive(Default)]
struct FactorTable(Mutex<Option<KeyedFactors>>);

impl FactorTable {
    /// The table for `key`: the one kept, else `make`'s, kept from then on.
    fn get(&self, key: [u64; 2], make: impl FnOnce() -> Arc<[f64]>) -> Arc<[f64]> {
        let mut kept = self.0.lock().ok();
        if let Some(Some((k, t))) = kept.as_deref() {
            if *k == key {
                return Arc::clone(t);
            }
        }
        let t = make();
        if let Some(kept) = kept.as_deref_mut() {
            *kept = Some((key, Arc::clone(&t)));
        }
        t
    }
}

impl RankBounds {
    /// DocIDs per chunk.
    pub const CHUNK: usize = 64;

    fn new(chunks: Vec<f64>) -> RankBounds {
        let n = chunks.len();
        let mut tree = vec![0.0; n];
        tree.extend(chunks);
        for i in (1..n).rev() {
            tree[i] = tree[2 * i].max(tree[2 * i + 1]);
        }
        RankBounds {
            chunks: n,
            tree,
            chunk_table: FactorTable::default(),
            doc_table: FactorTable::default(),
        }
    }

    /// `factor(largest PageRank of chunk c)` for every chunk `c`, made on
    /// first use and kept while the queries' `key` (what `factor` depends
    /// on) stays the same. Pruning asks a chunk's factor for most
    /// candidates and for each chunk a block-max skip walks: a table read
    /// where it was a range-maximum search and a logarithm's bound.
    pub fn chunk_factors(&self, key: [u64; 2], factor: impl Fn(f64) -> f64) -> Arc<[f64]> {
        self.chunk_table.get(key, || {
            self.tree[self.chunks..]
                .iter()
                .map(|&m| factor(m))
                .collect()
        })
    }

    /// `factor(PageRank of d)` for every docID `d` of `ranks` (the
    /// searcher's PageRank vector, in memory: this table is as large),
    /// kept as [`Self::chunk_factors`] is. The one-word loop bounds each
    /// candidate with its own PageRank's factor from the start: a load
    /// where it was its chunk's factor, then for the third of candidates
    /// that bound passed, a PageRank read and a logarithm's bound.
    pub fn doc_factors(
        &self,
        key: [u64; 2],
        ranks: &[f64],
        factor: impl Fn(f64) -> f64,
    ) -> Arc<[f64]> {
        self.doc_table
            .get(key, || ranks.iter().map(|&pr| factor(pr)).collect())
    }

    /// The largest PageRank of the collection.
    pub fn max(&self) -> f64 {
        self.max_in(0, u32::MAX)
    }

    /// The largest PageRank of docIDs `first..=last` (at least every
    /// docID's of the chunks they touch).
    pub fn max_in(&self, first: u32, last: u32) -> f64 {
        if self.chunks == 0 {
            return 0.0;
        }
        let c = |d: u32| (d as usize / Self::CHUNK).min(self.chunks - 1);
        let (mut l, mut r) = (c(first) + self.chunks, c(last.max(first)) + self.chunks + 1);
        let mut m = 0.0f64;
        while l < r {
            if l & 1 == 1 {
                m = m.max(self.tree[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                m = m.max(self.tree[r]);
            }
            l /= 2;
            r /= 2;
        }
        m
    }
}

/// A server shares one searcher between its threads.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<Searcher>();
};

impl eval::Sources for Searcher {
    fn barrel(&self, b: usize) -> Result<Arc<Barrel>> {
        if let Some(x) = self.barrels.get(b).and_then(|x| x.get()) {
            return Ok(Arc::clone(x));
        }
        let (path, slot) = self
            .barrel_paths
            .get(b)
            .zip(self.barrels.get(b))
            .ok_or_else(|| {
                Error::internal(format!(
                    "barrel {b} asked of an index of {}",
                    self.barrel_paths.len()
                ))
            })?;
        let barrel = Arc::new(Barrel::open(path)?);
        Ok(Arc::clone(slot.get_or_init(|| barrel)))
    }

    fn pagerank(&self) -> Result<Option<eval::PageRankLookup<'_>>> {
        self.store.pagerank_lookup()
    }

    fn docs(&self) -> u64 {
        self.store.len()
    }
}

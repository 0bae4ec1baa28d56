//! Every stage and every file a job can hold, named in one place (as tantivy's
//! `SegmentComponent` names a segment's files).
//!
//! A stage never spells a file name: it declares the [`JobFile`]s it reads and
//! writes, and gets their paths from its [context](super::StageContext). The
//! manifest records outputs under [`JobFile::name`]; the tools find a file's
//! kind and producers here.

use crate::container::FileKind;
use crate::dedup::Alg;

/// A stage of the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StageId {
    /// Web dumps → pages, token streams, repository, raw links.
    Ingest,
    /// The URL resolver: docIDs, doc and URL tables, edges, anchors.
    Resolve,
    /// Edge lists → doc table and edges.
    ImportGraph,
    /// PageRank.
    PageRank,
    /// The lexicon and the inverted barrels.
    Index,
    /// Near-duplicates by one algorithm.
    Dedup(Alg),
}

impl StageId {
    /// Every stage, in pipeline order (the order `inspect` lists them in).
    pub fn all() -> Vec<StageId> {
        let mut v = vec![
            StageId::Ingest,
            StageId::Resolve,
            StageId::ImportGraph,
            StageId::PageRank,
            StageId::Index,
        ];
        v.extend(Alg::ALL.map(StageId::Dedup));
        v
    }

    /// Its name in the manifest (`ingest`, `dedup-minhash`, …).
    pub fn name(self) -> String {
        match self {
            StageId::Ingest => "ingest".into(),
            StageId::Resolve => "resolve".into(),
            StageId::ImportGraph => "import-graph".into(),
            StageId::PageRank => "pagerank".into(),
            StageId::Index => "index".into(),
            StageId::Dedup(a) => format!("dedup-{}", a.name()),
        }
    }

    /// The stage of a manifest name.
    pub fn parse(name: &str) -> Option<StageId> {
        StageId::all().into_iter().find(|s| s.name() == name)
    }

    /// The command that runs it, for messages ("run `…` first").
    pub fn command(self) -> String {
        match self {
            StageId::Ingest | StageId::Resolve => "webmill ingest --out JOB INPUT…".into(),
            StageId::ImportGraph => "webmill import-graph --out JOB FILE…".into(),
            StageId::PageRank => "webmill pagerank JOB".into(),
            StageId::Index => "webmill index JOB".into(),
            StageId::Dedup(a) => format!("webmill dedup JOB --alg {}", a.name()),
        }
    }

    /// Its position in [`StageId::all`].
    pub fn order(self) -> usize {
        StageId::all()
            .iter()
            .position(|&s| s == self)
            .unwrap_or(usize::MAX)
    }
}

impl std::fmt::Display for StageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// A file a job can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JobFile {
    /// `pages.wm`: the page list (ingest).
    Pages,
    /// `text.wm`: the token streams (ingest).
    Text,
    /// `repository.wm`: the page bodies (ingest).
    Repository,
    /// `links.wm`: the raw links (ingest).
    Links,
    /// `docs.wm`: the doc table (resolve or import-graph).
    Docs,
    /// `urls.wm`: URL fingerprint → docID (resolve).
    Urls,
    /// `pagedoc.wm`: page → docID (resolve).
    PageDoc,
    /// `edges.wm`: the forward edge file (resolve or import-graph).
    Edges,
    /// `edges-t.wm`: the transposed edge file (resolve or import-graph).
    EdgesT,
    /// `anchors.wm`: anchors by target docID (resolve).
    Anchors,
    /// `ranks.wm`: the PageRank vector (pagerank).
    Ranks,
    /// `pagerank-convergence.svg`: the L1 change per iteration (pagerank).
    RankPlot,
    /// `sketches-ALG.wm`: per docID its sketch (dedup-ALG).
    Sketches(Alg),
    /// `pairs-ALG.wm`: the near-duplicate pairs (dedup-ALG).
    Pairs(Alg),
    /// `clusters-ALG.wm`: the clusters with their keep flags (dedup-ALG).
    Clusters(Alg),
    /// `dedup-ALG-per-page.svg`: near-duplicates per page, log-log (dedup-ALG).
    DedupPlot(Alg),
    /// `index/lexicon.wm`: word → wordID, frequencies, doclist locations (index).
    Lexicon,
    /// `index/fieldlens.wm`: per docID its hits per field, BM25F's lengths
    /// (index).
    FieldLengths,
    /// `index/full-BBB.wm`: inverted barrel `BBB` with all hits (index).
    FullBarrel(u16),
    /// `index/short-BBB.wm`: inverted barrel `BBB` with the postings that
    /// have title or anchor hits (index).
    ShortBarrel(u16),
    /// `skips-STAGE.wm`: the skip report of a stage that reads external
    /// input (`ingest`, `import-graph`): every record or file not kept, every
    /// cut, with file, place and reason.
    Skips(StageId),
}

/// The stages that write a skip report.
const REPORTING: [StageId; 2] = [StageId::Ingest, StageId::ImportGraph];

/// Most barrels an index may have (so that every barrel file has a name here).
pub const MAX_BARRELS: u16 = 4096;

impl JobFile {
    /// Every file a job can hold.
    pub fn all() -> Vec<JobFile> {
        let mut v = vec![
            JobFile::Pages,
            JobFile::Text,
            JobFile::Repository,
            JobFile::Links,
            JobFile::Skips(StageId::Ingest),
            JobFile::Docs,
            JobFile::Urls,
            JobFile::PageDoc,
            JobFile::Edges,
            JobFile::EdgesT,
            JobFile::Anchors,
            JobFile::Skips(StageId::ImportGraph),
            JobFile::Ranks,
            JobFile::RankPlot,
        ];
        for a in Alg::ALL {
            v.extend([
                JobFile::Sketches(a),
                JobFile::Pairs(a),
                JobFile::Clusters(a),
                JobFile::DedupPlot(a),
            ]);
        }
        v.push(JobFile::Lexicon);
        v.push(JobFile::FieldLengths);
        for b in 0..MAX_BARRELS {
            v.extend([JobFile::FullBarrel(b), JobFile::ShortBarrel(b)]);
        }
        v
    }

    /// Its path relative to the job directory.
    pub fn name(self) -> String {
        match self {
            JobFile::Pages => "pages.wm".into(),
            JobFile::Text => "text.wm".into(),
            JobFile::Repository => "repository.wm".into(),
            JobFile::Links => "links.wm".into(),
            JobFile::Docs => "docs.wm".into(),
            JobFile::Urls => "urls.wm".into(),
            JobFile::PageDoc => "pagedoc.wm".into(),
            JobFile::Edges => "edges.wm".into(),
            JobFile::EdgesT => "edges-t.wm".into(),
            JobFile::Anchors => "anchors.wm".into(),
            JobFile::Ranks => "ranks.wm".into(),
            JobFile::RankPlot => "pagerank-convergence.svg".into(),
            JobFile::Sketches(a) => format!("sketches-{}.wm", a.name()),
            JobFile::Pairs(a) => format!("pairs-{}.wm", a.name()),
            JobFile::Clusters(a) => format!("clusters-{}.wm", a.name()),
            JobFile::DedupPlot(a) => format!("dedup-{}-per-page.svg", a.name()),
            JobFile::Lexicon => "index/lexicon.wm".into(),
            JobFile::FieldLengths => "index/fieldlens.wm".into(),
            JobFile::FullBarrel(b) => format!("index/full-{b:03}.wm"),
            JobFile::ShortBarrel(b) => format!("index/short-{b:03}.wm"),
            JobFile::Skips(s) => format!("skips-{}.wm", s.name()),
        }
    }

    /// The file of a name, if a job can hold it.
    pub fn from_name(name: &str) -> Option<JobFile> {
        let barrel = |prefix: &str| {
            name.strip_prefix(prefix)?
                .strip_suffix(".wm")
                .filter(|n| n.len() >= 3 && n.bytes().all(|c| c.is_ascii_digit()))?
                .parse::<u16>()
                .ok()
                .filter(|&b| b < MAX_BARRELS)
        };
        if let Some(b) = barrel("index/full-") {
            return Some(JobFile::FullBarrel(b)).filter(|f| f.name() == name);
        }
        if let Some(b) = barrel("index/short-") {
            return Some(JobFile::ShortBarrel(b)).filter(|f| f.name() == name);
        }
        JobFile::all()
            .into_iter()
            .take_while(|f| !matches!(f, JobFile::FullBarrel(_)))
            .find(|f| f.name() == name)
    }

    /// Its container kind; `None` for plots (SVG).
    pub fn kind(self) -> Option<&'static FileKind> {
        use crate::ingest::records;
        Some(match self {
            JobFile::Pages => &records::PAGES,
            JobFile::Text => &records::TEXT,
            JobFile::Repository => &records::REPO,
            JobFile::Links => &records::LINKS,
            JobFile::Docs => &crate::docs::DOCS,
            JobFile::Urls => &crate::ingest::urltable::URLS,
            JobFile::PageDoc => &records::PAGEDOC,
            JobFile::Edges | JobFile::EdgesT => &crate::graph::edges::EDGES,
            JobFile::Anchors => &records::ANCHORS,
            JobFile::Ranks => &crate::rank::vector::RANKS,
            JobFile::Sketches(_) => &crate::dedup::files::SKETCHES,
            JobFile::Lexicon => &crate::index::lexicon::LEXICON,
            JobFile::FieldLengths => &crate::index::fieldlens::FIELDLENS,
            JobFile::FullBarrel(_) | JobFile::ShortBarrel(_) => &crate::index::inverted::BARREL,
            JobFile::Pairs(_) => &crate::dedup::files::PAIRS,
            JobFile::Skips(_) => &crate::input::SKIPS,
            JobFile::Clusters(_) => &crate::dedup::files::CLUSTERS,
            JobFile::RankPlot | JobFile::DedupPlot(_) => return None,
        })
    }

    /// The stages that can produce it (a job's link graph comes from either
    /// `resolve` or `import-graph`).
    pub fn producers(self) -> &'static [StageId] {
        match self {
            JobFile::Pages | JobFile::Text | JobFile::Repository | JobFile::Links => {
                &[StageId::Ingest]
            }
            JobFile::Skips(stage) => match REPORTING.iter().position(|&s| s == stage) {
                Some(i) => &REPORTING[i..=i],
                None => &[],
            },
            JobFile::Docs | JobFile::Edges | JobFile::EdgesT => {
                &[StageId::Resolve, StageId::ImportGraph]
            }
            JobFile::Urls | JobFile::PageDoc | JobFile::Anchors => &[StageId::Resolve],
            JobFile::Ranks | JobFile::RankPlot => &[StageId::PageRank],
            JobFile::Lexicon
            | JobFile::FieldLengths
            | JobFile::FullBarrel(_)
            | JobFile::ShortBarrel(_) => &[StageId::Index],
            JobFile::Sketches(a)
            | JobFile::Pairs(a)
            | JobFile::Clusters(a)
            | JobFile::DedupPlot(a) => match a {
                Alg::Exact => &[StageId::Dedup(Alg::Exact)],
                Alg::Broder => &[StageId::Dedup(Alg::Broder)],
                Alg::Charikar => &[StageId::Dedup(Alg::Charikar)],
                Alg::MinHash => &[StageId::Dedup(Alg::MinHash)],
            },
        }
    }
}

impl std::fmt::Display for JobFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        let files = JobFile::all();
        let mut names: Vec<String> = files.iter().map(|f| f.name()).collect();
        for f in &files {
            assert_eq!(JobFile::from_name(&f.name()), Some(*f));
            assert!(!f.producers().is_empty(), "{f} has no producer");
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), files.len());
        for s in StageId::all() {
            assert_eq!(StageId::parse(&s.name()), Some(s));
        }
    }
}

//! Every stage and every file a job can hold, named in one place (as tantivy's
//! `SegmentComponent` names a segment's files).
//!
//! A stage never spells a file name: it declares the [`JobFile`]s it reads and
//! writes, and gets their paths from its [context](super::StageContext). The
//! manifest records outputs under [`JobFile::name`]; the tools find a file's
//! kind and producers here.

use super::Alg;

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
    /// A stage from outside the built-in set, registered with
    /// `crate::registry::Registry::with`: its name in the manifest.
    Custom(&'static str),
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
            StageId::Custom(name) => name.into(),
        }
    }

    /// The stage of a manifest name (built-in stages only).
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
            StageId::Custom(_) => "webmill run --out JOB INPUT…".into(),
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
    /// `index/titles.wm`: per never-crawled docID its title from the anchor
    /// text of the links to it (index).
    AnchorTitles,
    /// `index/full-BBB.wm`: inverted barrel `BBB` with all hits (index).
    FullBarrel(u16),
    /// `skips-STAGE.wm`: the skip report of a stage that reads external
    /// input (`ingest`, `import-graph`): every record or file not kept, every
    /// cut, with file, place and reason.
    Skips(StageId),
    /// A container written by a [custom stage](StageId::Custom).
    Custom {
        /// The stage that writes it.
        stage: &'static str,
        /// Its path in the job.
        name: &'static str,
    },
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
        v.push(JobFile::AnchorTitles);
        for b in 0..MAX_BARRELS {
            v.push(JobFile::FullBarrel(b));
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
            JobFile::AnchorTitles => "index/titles.wm".into(),
            JobFile::FullBarrel(b) => format!("index/full-{b:03}.wm"),
            JobFile::Skips(s) => format!("skips-{}.wm", s.name()),
            JobFile::Custom { name, .. } => name.into(),
        }
    }

    /// The file of a name, if a job can hold it (built-in files only).
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
        JobFile::all()
            .into_iter()
            .take_while(|f| !matches!(f, JobFile::FullBarrel(_)))
            .find(|f| f.name() == name)
    }

    /// `true` for a webmill container, `false` for a plot (SVG). Its kind is
    /// the registry's (`crate::kinds::of`), above every stage.
    pub fn is_container(self) -> bool {
        !matches!(self, JobFile::RankPlot | JobFile::DedupPlot(_))
    }

    /// The stages that can produce it (a job's link graph comes from either
    /// `resolve` or `import-graph`).
    pub fn producers(self) -> Vec<StageId> {
        match self {
            JobFile::Pages | JobFile::Text | JobFile::Repository | JobFile::Links => {
                vec![StageId::Ingest]
            }
            JobFile::Skips(stage) => REPORTING.into_iter().filter(|&s| s == stage).collect(),
            JobFile::Docs | JobFile::Edges | JobFile::EdgesT => {
                vec![StageId::Resolve, StageId::ImportGraph]
            }
            JobFile::Urls | JobFile::PageDoc | JobFile::Anchors => vec![StageId::Resolve],
            JobFile::Ranks | JobFile::RankPlot => vec![StageId::PageRank],
            JobFile::Lexicon
            | JobFile::FieldLengths
            | JobFile::AnchorTitles
            | JobFile::FullBarrel(_) => {
                vec![StageId::Index]
            }
            JobFile::Custom { stage, .. } => vec![StageId::Custom(stage)],
            JobFile::Sketches(a)
            | JobFile::Pairs(a)
            | JobFile::Clusters(a)
            | JobFile::DedupPlot(a) => vec![StageId::Dedup(a)],
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

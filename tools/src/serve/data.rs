//! What the served pages show, read from the job's files: the searcher, a
//! document with its links, anchors, rank, near-duplicates and cached text,
//! the stages' figures and plots. Everything here is blocking disk work; the
//! handlers run it on tokio's blocking pool.

use std::sync::{Arc, OnceLock};

use webmill::dedup::Alg;
use webmill::docs::Doc;
use webmill::docstore::DocStore;
use webmill::graph::edges::EdgeFile;
use webmill::job::{Figure, JobFile, JobView, Published};
use webmill::search::Searcher;
use webmill::{Error, Result};

/// A finished stage as the statistics page shows it.
pub struct StageFigures<'a> {
    /// Its name.
    pub name: String,
    /// Its manifest record.
    pub record: &'a Published,
    /// Its result in a few words.
    pub headline: String,
    /// Its own figures, typed.
    pub figures: Vec<Figure>,
}

/// In-links, out-links and near-duplicates listed on a document's page.
pub const LINKS_SHOWN: usize = 200;
/// In-links counted before the page says "more than".
const IN_LINKS_COUNTED: u64 = 100_000;
/// Bytes of cached text shown.
const TEXT_SHOWN: usize = 64 << 10;

/// One generation of a job opened for serving: read-only (no lock), shared
/// by the requests that began while it was current. Every file a page may
/// read is opened here, at once (the searcher's barrels too, and the
/// document store's files), so whatever the job's writers do afterwards,
/// this keeps reading the files of the generation it was opened on.
pub struct Served {
    /// Its name, for titles.
    pub name: String,
    view: JobView,
    /// The searcher, or why there is none (no index yet).
    pub searcher: std::result::Result<Searcher, String>,
    store: Arc<DocStore>,
    forward: Option<EdgeFile>,
    /// The graph in both directions, for the degree plot.
    edges: Option<(EdgeFile, EdgeFile)>,
    degree_plot: OnceLock<std::result::Result<String, String>>,
    /// The SVG plots the stages published, by name in `/plot/NAME`.
    svgs: Vec<(String, String)>,
}

/// A document as its page shows it.
pub struct DocInfo {
    /// docID.
    pub docid: u64,
    /// The doc table's entry.
    pub doc: Doc,
    /// PageRank, when the job has ranks.
    pub rank: Option<f64>,
    /// Links to it: (source docID, source doc, anchor text), at most
    /// [`LINKS_SHOWN`].
    pub in_links: Vec<(u64, Doc, String)>,
    /// Links to it counted (up to a cap; `in_capped` when there are more).
    pub in_count: u64,
    /// More links to it than counted.
    pub in_capped: bool,
    /// Its out-links (docIDs with their docs), at most [`LINKS_SHOWN`].
    pub out_links: Vec<(u64, Doc)>,
    /// Out-links in all.
    pub out_count: u64,
    /// Per dedup algorithm, the other members of its cluster.
    pub similar: Vec<(Alg, Vec<(u64, Doc)>)>,
    /// The page's words as indexed (lowercased), cut at [`TEXT_SHOWN`].
    pub text: Option<String>,
}

impl Served {
    /// Opens the job `view` read, every file at once (to be called through
    /// [`JobView::read_whole`]). A job without an index is served
    /// (documents, stats) with search answering why it cannot.
    pub fn open(view: &JobView) -> Result<Served> {
        let view = view.clone();
        let dir = view.dir();
        let store = Arc::new(DocStore::open(&view)?);
        let searcher = if Searcher::has_index(&view) {
            // A damaged index is a page saying so, not a server that does
            // not start; every barrel is opened now, not when a query
            // first needs it.
            Searcher::with_store(&view, Arc::clone(&store))
                .and_then(|s| s.open_barrels().map(|()| s))
                .map_err(|e| e.to_string())
        } else {
            Err(format!(
                "this job has no index yet: run `webmill index {}`",
                dir.display()
            ))
        };
        let opt = |f: JobFile| view.has(f).then(|| view.file(f)).transpose();
        let forward = opt(JobFile::Edges)?.map(EdgeFile::open).transpose()?;
        let edges = match (opt(JobFile::Edges)?, opt(JobFile::EdgesT)?) {
            (Some(f), Some(t)) => Some((EdgeFile::open(f)?, EdgeFile::open(t)?)),
            _ => None,
        };
        let mut svgs = Vec::new();
        let mut plot_files = vec![("pagerank.svg".to_string(), JobFile::RankPlot)];
        for c in store.clusters() {
            plot_files.push((
                format!("dedup-{}.svg", c.alg.name()),
                JobFile::DedupPlot(c.alg),
            ));
        }
        for (name, file) in plot_files {
            if let Some(path) = opt(file)? {
                let svg = std::fs::read_to_string(&path).map_err(|e| {
                    Error::corrupt(&path, "file", 0, format!("cannot read the plot: {e}"))
                })?;
                // A plot with nothing to draw is left out of the page.
                if !svg.contains(webmill::plot::TOO_LITTLE) {
                    svgs.push((name, svg));
                }
            }
        }
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        Ok(Served {
            name,
            view,
            searcher,
            store,
            forward,
            edges,
            degree_plot: OnceLock::new(),
            svgs,
        })
    }

    /// The generation of the job this holds.
    pub fn generation(&self) -> u64 {
        self.view.generation()
    }

    /// Documents in the job.
    pub fn doc_count(&self) -> u64 {
        self.store.len()
    }

    /// Crawled documents.
    pub fn crawled(&self) -> u64 {
        self.store.crawled()
    }

    /// Links in the graph, when there is one.
    pub fn arcs(&self) -> Option<u64> {
        self.forward.as_ref().map(|f| f.stats().arcs)
    }

    /// The doc table entry of `doc`.
    pub fn doc(&self, doc: u64) -> Result<Doc> {
        self.store.doc(doc)
    }

    /// PageRank of `doc`.
    pub fn rank(&self, doc: u64) -> Result<Option<f64>> {
        self.store.rank(doc)
    }

    /// Everything a document's page shows; `None` for a docID the job does
    /// not have.
    pub fn doc_info(&self, docid: u64) -> Result<Option<DocInfo>> {
        if docid >= self.store.len() {
            return Ok(None);
        }
        let doc = self.doc(docid)?;
        let links = self.store.in_links(docid, LINKS_SHOWN, IN_LINKS_COUNTED)?;
        let in_links = links
            .links
            .into_iter()
            .map(|(s, t)| Ok((s, self.doc(s)?, t)))
            .collect::<Result<Vec<_>>>()?;
        let (out_links, out_count) = match &self.forward {
            Some(f) => {
                let all = f.neighbours(docid)?;
                let shown = all
                    .iter()
                    .take(LINKS_SHOWN)
                    .map(|&d| Ok((d, self.doc(d)?)))
                    .collect::<Result<Vec<_>>>()?;
                (shown, all.len() as u64)
            }
            None => (Vec::new(), 0),
        };
        let mut similar = Vec::new();
        for c in self.store.clusters() {
            let members = c.members_with(docid)?;
            let others = members
                .into_iter()
                .filter(|&d| d != docid)
                .take(LINKS_SHOWN)
                .map(|d| Ok((d, self.doc(d)?)))
                .collect::<Result<Vec<_>>>()?;
            similar.push((c.alg, others));
        }
        let text = self.store.extract(docid)?.map(|page| {
            let mut t = page.words;
            if t.len() > TEXT_SHOWN {
                let mut cut = TEXT_SHOWN;
                while !t.is_char_boundary(cut) {
                    cut -= 1;
                }
                t.truncate(cut);
                t.push_str(" …");
            }
            t
        });
        Ok(Some(DocInfo {
            docid,
            rank: self.rank(docid)?,
            doc,
            in_links,
            in_count: links.count,
            in_capped: links.capped,
            out_links,
            out_count,
            similar,
            text,
        }))
    }

    /// The stored bytes of `doc`'s page: (content type, body).
    pub fn raw(&self, docid: u64) -> Result<Option<(String, Vec<u8>)>> {
        self.store.raw(docid)
    }

    /// The finished stages this build knows, in pipeline order: name,
    /// record, headline and typed figures.
    pub fn stages(&self) -> Result<Vec<StageFigures<'_>>> {
        let registry = webmill::registry::Registry::standard();
        let mut out = Vec::new();
        for (stage, record) in registry.published(&self.view) {
            out.push(StageFigures {
                name: stage.id().name(),
                record,
                headline: stage.recorded_headline(self.view.dir(), record)?,
                figures: stage.recorded_stats(self.view.dir(), record)?,
            });
        }
        Ok(out)
    }

    /// The plots this job can show: (name in `/plot/NAME`, caption).
    pub fn plots(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if self.forward.is_some() {
            out.push((
                "degrees.svg".to_string(),
                "In- and out-degree distributions with their fitted power laws".to_string(),
            ));
        }
        for (name, _) in &self.svgs {
            let caption = match name
                .strip_prefix("dedup-")
                .and_then(|n| n.strip_suffix(".svg"))
            {
                Some(alg) => format!("Near-duplicates per page ({alg})"),
                None => "PageRank convergence (L1 change per iteration)".to_string(),
            };
            out.push((name.clone(), caption));
        }
        out
    }

    /// The SVG of plot `name` (one of [`plots`](Self::plots)); `None` for
    /// any other name. Names are matched, never used as paths.
    pub fn plot(&self, name: &str) -> Result<Option<String>> {
        if !self.plots().iter().any(|(n, _)| n == name) {
            return Ok(None);
        }
        if name == "degrees.svg" {
            let svg = self.degree_plot.get_or_init(|| {
                let Some((fwd, rev)) = &self.edges else {
                    return Err("this job has no link graph".into());
                };
                webmill::stats::degree_distributions_of(fwd, rev, 0)
                    .map(|d| d.plot_svg(&format!("Degree distributions of {}", self.name)))
                    .map_err(|e| e.to_string())
            });
            return svg.clone().map(Some).map_err(Error::internal);
        }
        Ok(self
            .svgs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, svg)| svg.clone()))
    }
}

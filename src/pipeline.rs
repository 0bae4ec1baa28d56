//! The whole job in one call: every stage a source needs, in the order their
//! declared inputs give ([`crate::job::plan`]).
//!
//! Web dumps (WARC files, site mirrors) go through ingest → resolve →
//! pagerank → index → dedup-ALG (one shared sketch pass for all the chosen
//! algorithms); text without links (WET files) the same without pagerank
//! ([`Pipeline::notes`] says so); edge lists through import-graph → pagerank. Each stage goes
//! through [`Job::run`]'s lifecycle, so a finished stage with the same
//! parameters and inputs is skipped and an interrupted one resumes from its
//! checkpoints: running the same pipeline again after any interruption
//! finishes the job with the outputs of an uninterrupted run. What happens is
//! told to an [`Observer`] (the command line draws it); [`JobSummary`] says
//! what a finished job holds, for a person.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::dedup::stage::{Dedup, DedupFigures, DedupOptions};
use crate::dedup::Alg;
use crate::docs::DocTable;
use crate::error::{Error, Result};
use crate::graph::import::{ImportFigures, ImportGraph, ImportOptions};
use crate::index::{Index, IndexOptions, IndexSummary};
use crate::ingest::resolve::{Resolve, ResolveFigures};
use crate::ingest::{Ingest, IngestFigures, IngestOptions};
use crate::job::plan::{order, Declared};
pub use crate::job::How;
use crate::job::{DynStage, Job, JobFile, JobView, Published, Settings, StageId};
use crate::rank::{PageRank, PageRankFigures, PageRankOptions, RankVector};
use crate::registry::Registry;

/// What the pipeline starts from.
#[derive(Clone, Debug)]
pub enum Source {
    /// Web dumps: ingest, then the URL resolver.
    Web(IngestOptions),
    /// Edge lists: import-graph.
    Graph(ImportOptions),
}

/// What to run.
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    /// The inputs.
    pub source: Source,
    /// PageRank's options.
    pub pagerank: PageRankOptions,
    /// The index's options; `None`: no index (always `None` for edge lists,
    /// which have no text).
    pub index: Option<IndexOptions>,
    /// Near-duplicate detection's options; `None`: none (edge lists have no
    /// text).
    pub dedup: Option<DedupOptions>,
}

/// Told what a pipeline does, as it does it.
pub trait Observer {
    /// `stages` start (several at once when they share work: the
    /// near-duplicate algorithms' one sketch pass).
    fn starting(&mut self, stages: &[StageId]);
    /// `stage` ended: skipped, ran or resumed, with its manifest record.
    fn finished(&mut self, stage: StageId, how: How, record: &Published);
}

/// An observer that ignores everything.
pub struct Unobserved;

impl Observer for Unobserved {
    fn starting(&mut self, _: &[StageId]) {}
    fn finished(&mut self, _: StageId, _: How, _: &Published) {}
}

/// The stages of one job, in run order.
pub struct Pipeline {
    stages: Vec<Arc<dyn DynStage>>,
    notes: Vec<String>,
}

impl Pipeline {
    /// Plans `opts` for a run within `mem` bytes: the stages its source
    /// needs, ordered by their declared inputs. Refused when a chosen stage
    /// reads what the source cannot give (an index or near-duplicates of an
    /// edge list). (`mem` is a parameter of `ingest`: it sets the per-record
    /// limits.)
    pub fn new(opts: &PipelineOptions, mem: u64) -> Result<Pipeline> {
        Pipeline::with_registry(opts, mem, &Registry::standard())
    }

    /// As [`Pipeline::new`], with the custom stages of `registry` (those
    /// beyond the built-in ones) planned too, in the order their declared
    /// inputs give.
    pub fn with_registry(
        opts: &PipelineOptions,
        mem: u64,
        registry: &Registry,
    ) -> Result<Pipeline> {
        let mut stages: Vec<Arc<dyn DynStage>> = Vec::new();
        let mut notes = Vec::new();
        let mut ranked = true;
        match &opts.source {
            Source::Web(o) => {
                stages.push(Arc::new(Ingest {
                    opts: o.clone(),
                    mem,
                }));
                stages.push(Arc::new(Resolve));
                if !o.may_hold_links()? {
                    ranked = false;
                    notes.push(
                        "pagerank left out: the inputs are text without links (WET files, JSONL document sets), so there is no graph to rank; near-duplicate clusters keep the doc met first in the input".to_string(),
                    );
                }
            }
            Source::Graph(o) => stages.push(Arc::new(ImportGraph { opts: o.clone() })),
        }
        if ranked {
            stages.push(Arc::new(PageRank {
                opts: opts.pagerank.clone(),
            }));
        }
        if let Some(o) = &opts.index {
            stages.push(Arc::new(Index { opts: o.clone() }));
        }
        if let Some(o) = &opts.dedup {
            let mut algs = o.algs.clone();
            algs.sort();
            algs.dedup();
            for alg in algs {
                stages.push(Arc::new(Dedup {
                    alg,
                    opts: o.clone(),
                }));
            }
        }
        stages.extend(registry.custom());
        let declared: Vec<Declared> = stages.iter().map(|s| Declared::of(&**s)).collect();
        let run_order = order(&declared, |_| false).map_err(|e| match (&opts.source, e) {
            (Source::Graph(_), Error::Usage { detail, .. }) => Error::usage(format!(
                "{detail}; an edge list has no page text, so there is no index or near-duplicates to compute (leave out --dedup and the index)"
            )),
            (_, e) => e,
        })?;
        let mut slots: Vec<Option<Arc<dyn DynStage>>> = stages.into_iter().map(Some).collect();
        let stages = run_order
            .into_iter()
            .filter_map(|i| slots[i].take())
            .collect();
        Ok(Pipeline { stages, notes })
    }

    /// What the plan left out, and why (for a person).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The stages, in the order they run.
    pub fn stages(&self) -> Vec<StageId> {
        self.stages.iter().map(|s| s.id()).collect()
    }

    /// Runs every stage in order on `job`: skips the finished ones, resumes
    /// an interrupted one, runs the rest. With `settings.force`, the stages
    /// whose parameters changed since they finished are recomputed (and,
    /// through their inputs, whatever depends on them); without it such a
    /// stage is refused, naming the parameter.
    pub fn run(
        &self,
        job: &mut Job,
        settings: &Settings,
        observer: &mut dyn Observer,
    ) -> Result<()> {
        let mut i = 0;
        while i < self.stages.len() {
            let stage = &self.stages[i];
            i += 1;
            if let Some(key) = stage.work_group() {
                // Stages sharing work (one sketch pass) run together.
                let mut group = vec![stage];
                while let Some(next) = self.stages.get(i) {
                    if next.work_group() != Some(key) {
                        break;
                    }
                    group.push(next);
                    i += 1;
                }
                run_together(job, settings, &group, observer)?;
                continue;
            }
            let id = stage.id();
            let s = settings.forced(settings.force && stage.params_changed(job)?);
            observer.starting(&[id]);
            let (how, record) = stage.run_in(job, &s)?;
            observer.finished(id, how, &record);
        }
        Ok(())
    }
}

/// Runs the stages of one work group together (two runs when `--force`
/// recomputes some of them and not the others).
fn run_together(
    job: &mut Job,
    settings: &Settings,
    group: &[&Arc<dyn DynStage>],
    observer: &mut dyn Observer,
) -> Result<()> {
    let mut forced = Vec::new();
    let mut kept = Vec::new();
    for s in group {
        let changed = settings.force && s.params_changed(job)?;
        if changed { &mut forced } else { &mut kept }.push(s.id());
    }
    for (ids, force) in [(kept, false), (forced, true)] {
        if ids.is_empty() {
            continue;
        }
        observer.starting(&ids);
        for (id, how, record) in group[0].run_together(&ids, job, &settings.forced(force))? {
            observer.finished(id, how, &record);
        }
    }
    Ok(())
}

/// One page among the highest-ranked.
#[derive(Clone, Debug, Serialize)]
pub struct TopPage {
    /// Its docID.
    pub docid: u64,
    /// Its URL (or node name).
    pub url: String,
    /// Its PageRank.
    pub rank: f64,
}

/// One near-duplicate algorithm's result.
#[derive(Clone, Debug, Serialize)]
pub struct DedupSummary {
    /// The algorithm.
    pub alg: String,
    /// Near-duplicate pairs.
    pub pairs: u64,
    /// Clusters.
    pub clusters: u64,
    /// Docs in clusters.
    pub docs_in_clusters: u64,
}

/// A published file.
#[derive(Clone, Debug, Serialize)]
pub struct FileSummary {
    /// Its path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// The stage that wrote it.
    pub stage: String,
}

/// Skips of each class a [`JobSummary`] shows.
pub const SHOWN_SKIPS: usize = 10;

/// A published stage's line in a [`JobSummary`].
#[derive(Clone, Debug, Serialize)]
pub struct StageLine {
    /// The stage's name.
    pub stage: String,
    /// Its result in a few words.
    pub headline: String,
}

/// What a job holds, for a person: the end of `webmill run`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct JobSummary {
    /// Every published stage the registry knows, in pipeline order.
    pub stages: Vec<StageLine>,
    /// Pages fetched (ingested jobs).
    pub pages: Option<u64>,
    /// Links found in them (ingested jobs).
    pub links: Option<u64>,
    /// Docs: URLs crawled or linked to, or nodes of an edge list.
    pub docs: u64,
    /// Arcs of the link graph.
    pub arcs: u64,
    /// Distinct hosts (ingested jobs).
    pub hosts: Option<u64>,
    /// PageRank's iterations, and whether it converged.
    pub pagerank: Option<(u32, bool)>,
    /// The highest-ranked pages, best first.
    pub top: Vec<TopPage>,
    /// Per near-duplicate algorithm.
    pub dedup: Vec<DedupSummary>,
    /// The index: words, postings, and bytes of lexicon and barrels.
    pub index: Option<(u32, u64, u64)>,
    /// Skipped input records or lines.
    pub skipped: u64,
    /// Of those, bad input (what `--strict` fails on); the others were left
    /// out by policy (not HTML, error statuses, other files…).
    pub bad_input: u64,
    /// Pages kept with a part cut at a per-record limit.
    pub cut: u64,
    /// Skips and cuts by kind, most frequent first.
    pub skip_kinds: Vec<(String, u64)>,
    /// The first bad-input skips, then the first policy skips and cuts (at
    /// most [`SHOWN_SKIPS`] each; file and where in it).
    pub first_skips: Vec<String>,
    /// The skip reports that list every one.
    pub skip_reports: Vec<PathBuf>,
    /// Every published file.
    pub files: Vec<FileSummary>,
}

impl JobSummary {
    /// The summary of the job `view` with its `top` highest-ranked pages.
    pub fn of(view: &JobView, top: usize) -> Result<JobSummary> {
        JobSummary::with_registry(view, top, &Registry::standard())
    }

    /// As [`JobSummary::of`], with the stages of `registry`.
    pub fn with_registry(view: &JobView, top: usize, registry: &Registry) -> Result<JobSummary> {
        let mut s = JobSummary::default();
        for (stage, record) in registry.published(view) {
            s.stages.push(StageLine {
                stage: stage.id().name(),
                headline: stage.recorded_headline(view.dir(), record)?,
            });
        }
        if let Some(f) = view.figures::<Ingest>(StageId::Ingest)? {
            let f: IngestFigures = f;
            s.pages = Some(f.counts.pages);
            s.links = Some(f.counts.links);
            s.skipped += f.counts.skipped;
            s.cut += f.counts.cut;
            let mut kinds: Vec<(String, u64)> = Vec::new();
            for (k, n) in &f.counts.skips {
                if !k.is_policy() {
                    s.bad_input += n;
                }
                kinds.push((k.name().to_string(), *n));
            }
            kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            s.skip_kinds = kinds;
        }
        if let Some(f) = view.figures::<Resolve>(StageId::Resolve)? {
            let f: ResolveFigures = f;
            s.docs = f.nodes;
            s.arcs = f.arcs;
            s.hosts = Some(f.hosts);
        }
        if let Some(f) = view.figures::<ImportGraph>(StageId::ImportGraph)? {
            let f: ImportFigures = f;
            s.docs = f.nodes;
            s.arcs = f.arcs;
            s.skipped += f.skipped;
            s.bad_input += f.skipped;
            if f.skipped > 0 {
                s.skip_kinds.push(("bad-line".into(), f.skipped));
            }
        }
        s.first_skips = first_skips(view, &mut s.skip_reports)?;
        if let Some(f) = view.figures::<PageRank>(StageId::PageRank)? {
            let f: PageRankFigures = f;
            s.pagerank = Some((f.iterations, f.converged));
            let ranks = RankVector::open(view.file(JobFile::Ranks)?)?;
            let docs = DocTable::open(view.file(JobFile::Docs)?)?;
            for (docid, rank) in ranks.top(top)? {
                let url = docs.get(docid)?.map(|d| d.url).unwrap_or_default();
                s.top.push(TopPage { docid, url, rank });
            }
        }
        if let Some(f) = view.figures::<Index>(StageId::Index)? {
            let f: IndexSummary = f;
            s.index = Some((f.words, f.postings.0, f.lexicon_bytes + f.full_bytes));
        }
        for alg in Alg::ALL {
            if let Some(f) = view.figures::<Dedup>(StageId::Dedup(alg))? {
                let f: DedupFigures = f;
                s.dedup.push(DedupSummary {
                    alg: alg.name().into(),
                    pairs: f.pairs,
                    clusters: f.clusters,
                    docs_in_clusters: f.docs_in_clusters,
                });
            }
        }
        for (stage, p) in view.manifest().finished_in_order() {
            for o in &p.outputs {
                s.files.push(FileSummary {
                    path: view.dir().join(&o.path),
                    bytes: o.bytes,
                    stage: stage.clone(),
                });
            }
        }
        Ok(s)
    }
}

/// The first [`SHOWN_SKIPS`] bad-input skips of the job's skip reports, then
/// the first [`SHOWN_SKIPS`] policy skips and cuts; the reports read are
/// added to `reports`. One pass over each report.
fn first_skips(view: &JobView, reports: &mut Vec<PathBuf>) -> Result<Vec<String>> {
    let (mut bad, mut policy) = (Vec::new(), Vec::new());
    for stage in [StageId::Ingest, StageId::ImportGraph] {
        let file = JobFile::Skips(stage);
        if !view.has(file) {
            continue;
        }
        let path = view.file(file)?;
        crate::input::for_each_skip(&path, |_, e| {
            let list = if e.kind.is_policy() {
                &mut policy
            } else {
                &mut bad
            };
            if list.len() < SHOWN_SKIPS {
                list.push(format!("{e} [{}]", e.kind));
            }
            Ok(())
        })?;
        reports.push(path);
    }
    bad.extend(policy);
    Ok(bad)
}

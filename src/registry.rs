//! The stages this build knows, registered once. The pipeline, `webmill
//! run`'s display, the job summary, `webmill stats` and the server's
//! statistics page iterate a [`Registry`] instead of listing the stages by
//! hand: a new stage is its own module plus one line in
//! [`Registry::standard`] (or, from outside the library, one
//! [`Registry::with`]).

use std::path::Path;
use std::sync::Arc;

use crate::dedup::stage::{Dedup, DedupOptions};
use crate::dedup::Alg;
use crate::error::Result;
use crate::graph::import::{GraphFormat, ImportGraph, ImportOptions};
use crate::index::{Index, IndexOptions};
use crate::ingest::resolve::Resolve;
use crate::ingest::{Ingest, IngestOptions};
use crate::job::{DynStage, Figure, JobView, Published, StageId};
use crate::rank::{PageRank, PageRankOptions};

/// Stages by id, in pipeline order.
#[derive(Clone)]
pub struct Registry {
    stages: Vec<Arc<dyn DynStage>>,
}

impl Registry {
    /// Every built-in stage, with its default options (what the views read
    /// from a stage, its figures, does not depend on them).
    pub fn standard() -> Registry {
        let mut r = Registry { stages: Vec::new() }
            .with(Ingest {
                opts: IngestOptions::default(),
                mem: 0,
            })
            .with(Resolve)
            .with(ImportGraph {
                opts: ImportOptions {
                    format: GraphFormat::Snap,
                    inputs: Vec::new(),
                    keep_self_loops: false,
                },
            })
            .with(PageRank {
                opts: PageRankOptions::default(),
            })
            .with(Index {
                opts: IndexOptions::default(),
            });
        for alg in Alg::ALL {
            r = r.with(Dedup {
                alg,
                opts: DedupOptions::default(),
            });
        }
        r
    }

    /// This registry with `stage` added (or replacing the stage of its id).
    pub fn with(mut self, stage: impl DynStage + 'static) -> Registry {
        let id = stage.id();
        match self.stages.iter().position(|s| s.id() == id) {
            Some(i) => self.stages[i] = Arc::new(stage),
            None => self.stages.push(Arc::new(stage)),
        }
        self
    }

    /// The stage of `id`.
    pub fn get(&self, id: StageId) -> Option<&dyn DynStage> {
        self.stages.iter().find(|s| s.id() == id).map(|s| &**s)
    }

    /// Every registered stage, in pipeline order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn DynStage> {
        self.stages.iter().map(|s| &**s)
    }

    /// The stages registered beyond the built-in ones, in registration
    /// order.
    pub fn custom(&self) -> Vec<Arc<dyn DynStage>> {
        self.stages
            .iter()
            .filter(|s| matches!(s.id(), StageId::Custom(_)))
            .cloned()
            .collect()
    }

    /// The stages `job` has published, with their records, in pipeline
    /// order.
    pub fn published<'j>(&self, job: &'j JobView) -> Vec<(&dyn DynStage, &'j Published)> {
        self.iter()
            .filter_map(|s| job.published(s.id()).map(|p| (s, p)))
            .collect()
    }

    /// A stage's result in a few words, from the record it published in the
    /// job at `dir`; a stage this registry does not know gets its record
    /// count.
    pub fn headline(&self, dir: &Path, id: StageId, record: &Published) -> Result<String> {
        match self.get(id) {
            Some(s) => s.recorded_headline(dir, record),
            None => Ok(format!(
                "{} records",
                crate::units::thousands(record.figures.records)
            )),
        }
    }

    /// The figures of every stage `job` has published, typed, stage by stage.
    pub fn figures(&self, job: &JobView) -> Result<Vec<Figure>> {
        let mut out = Vec::new();
        for (s, p) in self.published(job) {
            out.extend(s.recorded_stats(job.dir(), p)?);
        }
        Ok(out)
    }
}

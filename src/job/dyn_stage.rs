//! Stages as objects: what the pipeline, `webmill run`'s display, the job
//! summary, `webmill stats` and the server's statistics page iterate, so a
//! stage is registered once ([`crate::registry`]) instead of being listed by
//! hand in each of them.
//!
//! [`DynStage`] is the object-safe face of a [`Stage`]: every `Stage` is one,
//! through the blanket implementation here.

use std::path::Path;

use serde::Serialize;

use super::figure::Figure;
use super::manifest::Published;
use super::stage::{Outcome, Stage};
use super::{figures_of, Job, JobFile, JobView, Settings, StageId};
use crate::error::{Error, Result};

/// How a stage ended in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum How {
    /// Finished before with the same parameters and inputs: nothing done.
    Skipped,
    /// Ran from the start.
    Ran,
    /// Resumed an interrupted run.
    Resumed,
}

impl How {
    /// How `o` came about.
    pub fn of<F>(o: &Outcome<F>) -> How {
        match o {
            Outcome::Skipped { .. } => How::Skipped,
            Outcome::Done { resumed: true, .. } => How::Resumed,
            Outcome::Done { .. } => How::Ran,
        }
    }
}

/// A stage, object-safe: its declaration, its run through the job's
/// lifecycle, and its recorded figures read back typed.
pub trait DynStage: Send + Sync {
    /// Which stage this is.
    fn id(&self) -> StageId;
    /// The job files it reads.
    fn inputs(&self) -> Vec<JobFile>;
    /// The job files it reads when the job holds them.
    fn optional_inputs(&self) -> Vec<JobFile>;
    /// The job files it writes.
    fn outputs(&self) -> Vec<JobFile>;
    /// `true` if it finished in `job`, or began a run that did not finish,
    /// with other parameters than it has now (whatever state it was left
    /// in, `--force` then starts it over).
    fn params_changed(&self, job: &JobView) -> Result<bool>;
    /// Runs (or resumes, or skips) it in `job`: how it ended, and its record.
    fn run_in(&self, job: &mut Job, settings: &Settings) -> Result<(How, Published)>;
    /// Its result in a few words, from a record it published in the job at
    /// `dir`.
    fn recorded_headline(&self, dir: &Path, record: &Published) -> Result<String>;
    /// Its figures, typed, from a record it published in the job at `dir`.
    fn recorded_stats(&self, dir: &Path, record: &Published) -> Result<Vec<Figure>>;
}

impl<S: Stage + Send + Sync> DynStage for S {
    fn id(&self) -> StageId {
        Stage::id(self)
    }

    fn inputs(&self) -> Vec<JobFile> {
        Stage::inputs(self)
    }

    fn optional_inputs(&self) -> Vec<JobFile> {
        Stage::optional_inputs(self)
    }

    fn outputs(&self) -> Vec<JobFile> {
        Stage::outputs(self)
    }

    fn params_changed(&self, job: &JobView) -> Result<bool> {
        let Some(rec) = job.manifest().record(Stage::id(self)) else {
            return Ok(false);
        };
        let now =
            serde_json::to_value(self.params()?).map_err(|e| Error::internal(e.to_string()))?;
        Ok(rec.published.as_ref().is_some_and(|p| p.params != now)
            || rec.running.as_ref().is_some_and(|a| a.params != now))
    }

    fn run_in(&self, job: &mut Job, settings: &Settings) -> Result<(How, Published)> {
        let o = job.run(self, settings)?;
        Ok((How::of(&o), o.record().clone()))
    }

    fn recorded_headline(&self, dir: &Path, record: &Published) -> Result<String> {
        let f = figures_of::<S>(dir, Stage::id(self), record)?;
        Ok(self.headline(&f))
    }

    fn recorded_stats(&self, dir: &Path, record: &Published) -> Result<Vec<Figure>> {
        let f = figures_of::<S>(dir, Stage::id(self), record)?;
        Ok(self.stats(&f))
    }
}

//! Stages as types, and the context a running stage works in.
//!
//! A [`Stage`] is its algorithm plus a declaration: its [`StageId`], its
//! parameters and figures as serde structs, the job files it reads
//! ([`Stage::inputs`]) and writes ([`Stage::outputs`]). Everything else —
//! deciding whether to skip, resume, refuse or re-run; temporary directories;
//! sorts under the budget; typed checkpoints; progress; building the outputs
//! beside the published ones and swapping them in when complete — is the
//! job's ([`super::Job::run`]) and the [`StageContext`]'s.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::files::{JobFile, StageId};
use super::manifest::Published;
use super::Settings;
use crate::container::Container;
use crate::error::{Error, IoContext, Result};
use crate::progress::{Task, Unit};
use crate::sort::{Combine, ExternalSorter, Record, SortConfig};

/// A stage of the pipeline.
pub trait Stage {
    /// The parameters that determine its outputs, recorded in the manifest: a
    /// finished stage is skipped when they are equal, refused without
    /// `--force` when they differ.
    type Params: Serialize + DeserializeOwned + PartialEq + Debug;
    /// What it measured, recorded in the manifest.
    type Figures: Serialize + DeserializeOwned + Debug;

    /// Which stage this is.
    fn id(&self) -> StageId;
    /// Its parameters (may read the identity of external input files).
    fn params(&self) -> Result<Self::Params>;
    /// The job files it reads: they must be published by finished stages, and
    /// their checksums are recorded, so that a stage whose inputs changed is
    /// run again instead of being reused.
    fn inputs(&self) -> Vec<JobFile>;
    /// The job files it reads when the job holds them (the ranks dedup keeps
    /// a document of each cluster by). One held is recorded like an input;
    /// one missing is recorded as absent, so that when it appears later the
    /// stage's results are stale and it runs again, as for a changed input.
    fn optional_inputs(&self) -> Vec<JobFile> {
        Vec::new()
    }
    /// The job files it writes, every one of them.
    fn outputs(&self) -> Vec<JobFile>;
    /// The count recorded as the stage's `records` figure.
    fn records(figures: &Self::Figures) -> u64;
    /// Its result in a few words (`"1,234 pages, 5,678 links"`), for `webmill
    /// run`'s display and the job summary.
    /// By default: its record count.
    fn headline(&self, figures: &Self::Figures) -> String {
        format!(
            "{} records",
            crate::units::thousands(Self::records(figures))
        )
    }
    /// Its figures, typed (key, label, group, unit), for `webmill stats`, the
    /// job summary and the server's statistics page. By default: none
    /// beyond the records, time and memory every stage has.
    fn stats(&self, figures: &Self::Figures) -> Vec<super::Figure> {
        let _ = figures;
        Vec::new()
    }
    /// Does the work: reads its inputs and writes its outputs through `cx`.
    fn run(&self, cx: &mut StageContext) -> Result<Self::Figures>;
}

/// How [`super::Job::run`] ended.
#[derive(Debug)]
pub enum Outcome<F> {
    /// Finished earlier with the same parameters and inputs: nothing was done.
    Skipped {
        /// The figures it published then.
        figures: F,
        /// Its manifest record.
        record: Published,
    },
    /// It ran (or resumed) and published.
    Done {
        /// Its figures.
        figures: F,
        /// Its manifest record.
        record: Published,
        /// An interrupted run was resumed.
        resumed: bool,
    },
}

impl<F> Outcome<F> {
    /// The stage's figures, whether it ran now or before.
    pub fn figures(&self) -> &F {
        match self {
            Outcome::Skipped { figures, .. } | Outcome::Done { figures, .. } => figures,
        }
    }

    /// The manifest record.
    pub fn record(&self) -> &Published {
        match self {
            Outcome::Skipped { record, .. } | Outcome::Done { record, .. } => record,
        }
    }

    /// `true` if it ran now.
    pub fn ran(&self) -> bool {
        matches!(self, Outcome::Done { .. })
    }
}

/// Where a stage's files are: the storage seam. A stage never builds a path
/// itself; its [`StageContext`] hands out these. A job fills them from its
/// manifest (inputs: the published files; outputs: the stage's staging
/// directory, swapped in when it publishes; tmp: `JOB/tmp/STAGE`). A shard of
/// a distributed job fills them with the shard's own directories (its inputs
/// as the executor sees them, an attempt directory published by rename), and
/// runs the same stage code (see "Storage seam" in ARCHITECTURE.md).
#[derive(Clone, Debug)]
pub struct StagePaths {
    /// Every declared input's path.
    pub inputs: BTreeMap<JobFile, PathBuf>,
    /// The directory outputs are written into, each at `outputs/NAME` with
    /// NAME its [`JobFile::name`].
    pub outputs: PathBuf,
    /// The stage's temporary directory: checkpoints and sort runs.
    pub tmp: PathBuf,
}

/// What a running stage may touch: its declared inputs (read-only, published
/// by finished stages), its declared outputs (built in a staging directory
/// inside the job and swapped in when the stage publishes), a temporary
/// directory for checkpoints and sort runs, its share of the memory budget,
/// and the reporter.
pub struct StageContext {
    stage: StageId,
    settings: Settings,
    tmp: PathBuf,
    staging: PathBuf,
    inputs: BTreeMap<JobFile, PathBuf>,
    optional: BTreeSet<JobFile>,
    outputs: BTreeSet<JobFile>,
    resumed: bool,
    pub(super) started: Instant,
}

/// The smallest budget a sort is given, whatever the share.
const MIN_SORT_BUDGET: u64 = 64 << 10;

impl StageContext {
    pub(super) fn new(
        stage: StageId,
        settings: &Settings,
        paths: StagePaths,
        outputs: BTreeSet<JobFile>,
        resumed: bool,
    ) -> StageContext {
        StageContext {
            stage,
            settings: settings.clone(),
            tmp: paths.tmp,
            staging: paths.outputs,
            inputs: paths.inputs,
            optional: BTreeSet::new(),
            outputs,
            resumed,
            started: Instant::now(),
        }
    }

    /// Declares `optional` as the stage's optional inputs (those held are
    /// among its inputs).
    pub(super) fn with_optional(mut self, optional: BTreeSet<JobFile>) -> StageContext {
        self.optional = optional;
        self
    }

    /// The context of `stage` outside a job: its files where `paths` says
    /// (every input the stage declares must be there), no manifest. It
    /// resumes from what `paths.tmp` holds. For a shard of a distributed job,
    /// and for tests and benchmarks that run one stage on files of their own;
    /// the outputs are left in `paths.outputs`.
    pub fn detached<S: Stage>(
        stage: &S,
        settings: &Settings,
        paths: StagePaths,
    ) -> Result<StageContext> {
        for file in stage.inputs() {
            if !paths.inputs.contains_key(&file) {
                return Err(Error::usage(format!(
                    "stage {} needs its input {file}, which was not given",
                    stage.id()
                )));
            }
        }
        let resumed = std::fs::read_dir(&paths.tmp).is_ok_and(|mut d| d.next().is_some());
        let cx = StageContext::new(
            stage.id(),
            settings,
            paths,
            stage.outputs().into_iter().collect(),
            resumed,
        )
        .with_optional(stage.optional_inputs().into_iter().collect());
        cx.prepare()?;
        Ok(cx)
    }

    /// The stage.
    pub fn stage(&self) -> StageId {
        self.stage
    }

    /// The path of a declared input.
    pub fn input(&self, file: JobFile) -> Result<&Path> {
        self.inputs.get(&file).map(PathBuf::as_path).ok_or_else(|| {
            Error::internal(format!(
                "stage {} read {file}, which it did not declare as an input",
                self.stage
            ))
        })
    }

    /// The path of a declared optional input, `None` when the job did not
    /// hold it when the stage began.
    pub fn optional_input(&self, file: JobFile) -> Result<Option<&Path>> {
        if !self.optional.contains(&file) {
            return Err(Error::internal(format!(
                "stage {} read {file}, which it did not declare as an optional input",
                self.stage
            )));
        }
        Ok(self.inputs.get(&file).map(PathBuf::as_path))
    }

    /// The path a declared output is written to (in the staging directory;
    /// it is moved into the job when the stage publishes). Its directory
    /// exists.
    pub fn output(&self, file: JobFile) -> Result<PathBuf> {
        if !self.outputs.contains(&file) {
            return Err(Error::internal(format!(
                "stage {} wrote {file}, which it did not declare as an output",
                self.stage
            )));
        }
        let path = self.staging.join(file.name());
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).at(dir)?;
        }
        Ok(path)
    }

    /// `true` if an earlier, interrupted attempt already wrote `file` (a
    /// container whose structure checks out), so a resumed stage can skip
    /// writing it again.
    pub fn output_done(&self, file: JobFile) -> Result<bool> {
        let path = self.output(file)?;
        Ok(if file.is_container() {
            Container::open(&path).is_ok()
        } else {
            path.exists()
        })
    }

    /// `true` if this run resumes an interrupted one.
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// The stage's temporary directory (checkpoints, sort runs): unique to
    /// this job and stage, removed when the stage publishes.
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The memory budget in bytes.
    pub fn mem(&self) -> u64 {
        self.settings.mem
    }

    /// `share` (0 < share ≤ 1) of the budget, in bytes.
    pub fn share(&self, share: f64) -> u64 {
        (self.settings.mem as f64 * share.clamp(0.0, 1.0)) as u64
    }

    /// Whether bad input is an error rather than a skip.
    pub fn strict(&self) -> bool {
        self.settings.strict
    }

    /// The configuration of the stage's sort `name`: its runs in `tmp/name`,
    /// `share` of the budget (at least 64 KiB), progress labelled `stage: name`.
    pub fn sort_config(&self, name: &str, share: f64) -> SortConfig {
        SortConfig::new(self.tmp.join(name), self.share(share).max(MIN_SORT_BUDGET))
            .label(format!("{}: {name}", self.stage))
            .reporter(Arc::clone(&self.settings.reporter))
    }

    /// The stage's external sort `name` with `share` of the budget, resuming
    /// from the runs an interrupted attempt left in its directory.
    pub fn sorter<T: Record>(
        &self,
        name: &str,
        share: f64,
        combine: Combine<T>,
    ) -> Result<ExternalSorter<T>> {
        ExternalSorter::new(self.sort_config(name, share), combine)
    }

    fn checkpoint_path(&self, name: &str) -> PathBuf {
        self.tmp.join(format!("{name}.checkpoint.json"))
    }

    /// The checkpoint `name` saved by this run or an interrupted one, if any.
    /// A checkpoint that does not read back as `T` is an error (never a
    /// silent default): re-run with `--force` to start the stage over.
    pub fn checkpoint<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>> {
        let path = self.checkpoint_path(name);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                Error::corrupt(
                    &path,
                    "checkpoint",
                    0,
                    format!("{e}; run the stage with --force to start it over"),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(&path, e)),
        }
    }

    /// Saves checkpoint `name` atomically.
    pub fn save_checkpoint<T: Serialize>(&self, name: &str, value: &T) -> Result<()> {
        let bytes = serde_json::to_vec(value).map_err(|e| Error::internal(e.to_string()))?;
        crate::publish::write_atomic(self.checkpoint_path(name), &bytes)
    }

    /// A step that runs once: the first time `f` runs and its result is saved
    /// as checkpoint `name`; a resumed run gets the saved result back without
    /// running `f` again.
    pub fn step<T: Serialize + DeserializeOwned>(
        &self,
        name: &str,
        f: impl FnOnce(&Self) -> Result<T>,
    ) -> Result<T> {
        if let Some(v) = self.checkpoint(name)? {
            return Ok(v);
        }
        let v = f(self)?;
        self.save_checkpoint(name, &v)?;
        Ok(v)
    }

    /// Starts a progress task labelled `stage: label`.
    pub fn task(&self, label: &str, total: Option<u64>, unit: Unit) -> Box<dyn Task> {
        self.settings
            .reporter
            .task(&format!("{}: {label}", self.stage), total, unit)
    }

    /// A line for the user, prefixed with the stage's name.
    pub fn note(&self, line: &str) {
        self.settings
            .reporter
            .note(&format!("{}: {line}", self.stage));
    }

    /// Makes the directories the stage writes into.
    pub(super) fn prepare(&self) -> Result<()> {
        std::fs::create_dir_all(&self.tmp).at(&self.tmp)?;
        std::fs::create_dir_all(&self.staging).at(&self.staging)
    }

    pub(super) fn staging(&self) -> &Path {
        &self.staging
    }

    pub(super) fn declared_outputs(&self) -> &BTreeSet<JobFile> {
        &self.outputs
    }
}

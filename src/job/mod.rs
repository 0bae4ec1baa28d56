//! Jobs: a directory of published files plus a manifest of its stages, and the
//! one lifecycle every stage runs through.
//!
//! `job.json` ([`manifest`]) records, per stage, what it published — the
//! parameters it ran with, the checksum of every job file it read, its
//! outputs with their checksums, its figures — and the attempt under way, if
//! any. [`Job::run`] decides for a [`Stage`]:
//!
//! - **skip** when it finished with the same parameters and the same inputs
//!   and its outputs are in place;
//! - **re-run** when its inputs changed since (a new ingest, a forced
//!   PageRank): outputs computed from old inputs are never reused;
//! - **refuse** a change of parameters without `--force`, naming what changed;
//! - **resume** an interrupted attempt with the same parameters and inputs
//!   from its checkpoints (sort runs, steps) in its temporary directory.
//!
//! A running stage writes its outputs into `JOB/.staging/STAGE/`, beside the
//! published ones. Publication records the new result in the manifest (the
//! commit point), then moves the files into the job directory; a crash
//! between the two is finished by the next [`Job::open`]. So a forced re-run
//! that fails, is killed, or hits a full disk leaves the previous results
//! published and valid. When a stage publishes, every stage whose recorded
//! inputs no longer match the published files is dropped with its outputs
//! (recursively): what the job publishes is always what a fresh job would
//! compute from its current inputs.
//!
//! A lock file keeps two writing processes apart; read-only views
//! ([`JobView`]) take no lock, so `stats`, `export` or `verify` work while
//! another process writes the job, and on a read-only copy.

mod alg;
pub mod budget;
mod dyn_stage;
pub mod figure;
pub mod files;
pub mod manifest;
pub mod plan;
pub mod stage;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use alg::Alg;
pub use budget::{phase, share, Budget, Phase, Share};
pub use dyn_stage::{DynStage, How};
pub use figure::{Amount, Figure, FigureList};
pub use files::{JobFile, StageId};
pub use manifest::{
    Attempt, Figures, Manifest, Output, Published, StageRecord, MANIFEST, MANIFEST_VERSION,
};
pub use stage::{Outcome, Stage, StageContext, StagePaths};

use crate::container::Container;
use crate::error::{Error, IoContext, Result};
use crate::publish::{failpoint, sync_dir, write_atomic};
use crate::resources;

/// How a stage is run: the resources it may use and how it treats the job.
#[derive(Clone)]
pub struct Settings {
    /// Memory budget in bytes for the stage's data structures.
    pub mem: u64,
    /// Where progress and notes go.
    pub reporter: crate::progress::SharedReporter,
    /// Recompute a finished stage, or discard an interrupted one's checkpoints.
    pub force: bool,
    /// Fail on the first bad input record instead of skipping it.
    pub strict: bool,
}

impl Settings {
    /// Settings with `mem` bytes, silent, not forced, not strict.
    pub fn new(mem: u64) -> Settings {
        Settings {
            mem,
            reporter: crate::progress::silent(),
            force: false,
            strict: false,
        }
    }

    /// The same settings, forced or not.
    pub fn forced(&self, force: bool) -> Settings {
        Settings {
            force,
            ..self.clone()
        }
    }
}

/// Name of the directory, inside the job, where running stages build their
/// outputs.
pub const STAGING_DIR: &str = ".staging";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Reads and checks `job.json`; `None` when the directory has none.
fn read_manifest_opt(dir: &Path) -> Result<Option<Manifest>> {
    let path = dir.join(MANIFEST);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    Manifest::from_bytes(&bytes)
        .map(Some)
        .map_err(|f| f.at(&path))
}

fn read_manifest(dir: &Path) -> Result<Manifest> {
    read_manifest_opt(dir)?.ok_or_else(|| {
        Error::job(
            dir,
            "not a webmill job (no job.json); make one with `webmill ingest --out DIR …` or `webmill import-graph --out DIR …`",
        )
    })
}

/// The name of a stage whose publication is under way (`moving`), if any.
fn moving_stage(m: &Manifest) -> Option<&str> {
    m.stages
        .iter()
        .find(|(_, r)| r.moving)
        .map(|(n, _)| n.as_str())
}

/// How long a reader waits for a publication under way before refusing
/// (a publication renames a few files; one that lasts longer was
/// interrupted, and only a writer can finish it).
const PUBLICATION_WAIT: Duration = Duration::from_secs(3);
/// How long a writer waits for the job's lock before saying another process
/// holds it (a reader probing whether a writer is active holds it for
/// microseconds; see [`writer_active`]).
const LOCK_WAIT: Duration = Duration::from_secs(1);
/// How many times [`JobView::read_whole`] starts over before giving up.
const READ_ATTEMPTS: usize = 50;

/// The name of the lock file a writer holds.
pub const LOCK_FILE: &str = ".lock";

/// `true` when a process holds the job's writer lock (a run under way).
/// Readers that can wait — a server choosing when to switch to a new
/// generation — use it not to show the intermediate states of a run that
/// publishes several stages. Never creates anything.
pub fn writer_active(dir: &Path) -> bool {
    match File::open(dir.join(LOCK_FILE)) {
        Ok(f) => matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock)),
        Err(_) => false,
    }
}

/// A job opened for reading: its manifest and the paths of its published
/// files. Takes no lock and writes nothing.
#[derive(Clone, Debug)]
pub struct JobView {
    dir: PathBuf,
    manifest: Manifest,
    /// The published files asked for through [`JobView::file`].
    used: std::sync::Arc<std::sync::Mutex<BTreeSet<String>>>,
}

impl JobView {
    /// Reads the job at `dir`.
    /// A publication under way is waited for (a few seconds at most).
    pub fn open(dir: impl AsRef<Path>) -> Result<JobView> {
        let dir = dir.as_ref().to_path_buf();
        let start = Instant::now();
        loop {
            let manifest = read_manifest(&dir)?;
            match moving_stage(&manifest) {
                None => {
                    return Ok(JobView {
                        dir,
                        manifest,
                        used: Default::default(),
                    })
                }
                Some(name) if start.elapsed() >= PUBLICATION_WAIT => {
                    return Err(Error::job(
                        &dir,
                        format!(
                            "stage {name} is being published by another process (or its publication was interrupted: any webmill command that writes the job finishes it); try again"
                        ),
                    ))
                }
                Some(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    /// Opens the job at `dir` and calls `read`, which opens every file it
    /// will use; when the job's published state changed meanwhile (a writer
    /// published a stage), starts over on the new state. What `read`
    /// returns was thus opened from one generation of the job, whole: a
    /// published file is only ever replaced by a rename or removed, and an
    /// open file keeps its bytes, so whatever `read` holds open stays that
    /// generation's however the job changes afterwards.
    pub fn read_whole<T>(
        dir: impl AsRef<Path>,
        mut read: impl FnMut(&JobView) -> Result<T>,
    ) -> Result<T> {
        let dir = dir.as_ref();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let view = JobView::open(dir)?;
            let got = read(&view);
            match view.still_whole()? {
                None => return got,
                // Changed under `read`: its result (or error: a file it
                // wanted was replaced) may mix generations.
                Some(_) if attempt < READ_ATTEMPTS => continue,
                Some(e) => return Err(e),
            }
        }
    }

    /// `None` when every published file this view handed out (through
    /// [`JobView::file`]) is still the one it read, so that what was read
    /// through them belongs to one generation of the job; otherwise the
    /// error to give: a writer replaced or removed some of them meanwhile.
    pub fn still_whole(&self) -> Result<Option<Error>> {
        let now = read_manifest(&self.dir)?;
        if now.generation == self.manifest.generation
            && moving_stage(&now).is_none()
            && (self.manifest.version != manifest::MANIFEST_VERSION_2
                || now.stages == self.manifest.stages)
        {
            return Ok(None);
        }
        let was = self.manifest.current_checksums();
        let is = now.current_checksums();
        let used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let changed: Vec<&str> = used
            .iter()
            .filter(|f| was.get(*f) != is.get(*f))
            .map(String::as_str)
            .collect();
        if changed.is_empty() {
            return Ok(None);
        }
        Ok(Some(Error::job(
            &self.dir,
            format!(
                "the job changed while this command read it ({} replaced by a writer); run the command again",
                changed.join(", ")
            ),
        )))
    }

    /// The generation of the published state this view read.
    pub fn generation(&self) -> u64 {
        self.manifest.generation
    }

    /// The job directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// What `stage` published, if it finished.
    pub fn published(&self, stage: StageId) -> Option<&Published> {
        self.manifest.published(stage)
    }

    /// What `stage` published, or an error saying how to run it.
    pub fn require(&self, stage: StageId) -> Result<&Published> {
        self.published(stage).ok_or_else(|| {
            let detail = match self.manifest.record(stage) {
                Some(r) if r.running.is_some() => format!(
                    "stage {stage} has not finished; run `{}` again to resume it",
                    stage.command()
                ),
                _ => format!(
                    "stage {stage} has not run in this job: run `{}`",
                    stage.command()
                ),
            };
            Error::job(&self.dir, detail)
        })
    }

    /// The stage's own figures, as its `Figures` type.
    pub fn figures<S: Stage>(&self, stage: StageId) -> Result<Option<S::Figures>> {
        self.published(stage)
            .map(|p| figures_of::<S>(&self.dir, stage, p))
            .transpose()
    }

    /// `true` if a finished stage published `file`.
    pub fn has(&self, file: JobFile) -> bool {
        self.manifest.producer_of(file).is_some()
    }

    /// The path of a published file, or an error naming what makes it.
    pub fn file(&self, file: JobFile) -> Result<PathBuf> {
        match self.manifest.producer_of(file) {
            Some((_, out)) => {
                self.used
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(out.path.clone());
                Ok(self.dir.join(&out.path))
            }
            None => Err(Error::job(&self.dir, missing(file))),
        }
    }

    /// The stage that published the link graph (`resolve` or `import-graph`).
    pub fn graph_stage(&self) -> Result<StageId> {
        self.manifest
            .producer_of(JobFile::Edges)
            .map(|(s, _)| s)
            .ok_or_else(|| Error::job(&self.dir, missing(JobFile::Edges)))
    }
}

/// Says what to run to get `file`.
fn missing(file: JobFile) -> String {
    let cmds: Vec<String> = file
        .producers()
        .iter()
        .map(|s| format!("`{}`", s.command()))
        .collect();
    format!(
        "this job has no {file} yet: run {} first",
        cmds.join(" or ")
    )
}

/// A stage's figures from its record.
pub(crate) fn figures_of<S: Stage>(
    dir: &Path,
    stage: StageId,
    p: &Published,
) -> Result<S::Figures> {
    serde_json::from_value(serde_json::Value::Object(p.figures.extra.clone())).map_err(|e| {
        Error::corrupt(
            dir.join(MANIFEST),
            format!("figures of stage {stage}"),
            0,
            e.to_string(),
        )
    })
}

/// What [`Job::begin`] decided.
pub enum Begun<F> {
    /// Nothing to do.
    Skipped(Outcome<F>),
    /// Run the stage in this context, then [`Job::publish`].
    Run(StageContext),
}

/// An open job directory, locked for this process.
pub struct Job {
    view: JobView,
    tmp_root: PathBuf,
    _lock: File,
}

impl std::ops::Deref for Job {
    type Target = JobView;
    fn deref(&self) -> &JobView {
        &self.view
    }
}

impl Job {
    /// Opens the job at `dir` for writing, taking its lock. With `create`, a
    /// missing or empty directory becomes a new job; a non-empty directory
    /// that is not a job is refused, except one holding only what an
    /// interrupted creation leaves (the lock file, a partial manifest): a
    /// kill at any instant of the creation leaves a directory the same
    /// command continues.
    pub fn open(dir: impl AsRef<Path>, create: bool) -> Result<Job> {
        let dir = dir.as_ref().to_path_buf();
        let manifest_path = dir.join(MANIFEST);
        if !manifest_path.exists() {
            if !create {
                read_manifest(&dir)?;
            }
            refuse_foreign(&dir)?;
            failpoint("job.create.dir")?;
            fs::create_dir_all(&dir).at(&dir)?;
        }
        let lock = lock_job(&dir)?;
        failpoint("job.create.locked")?;
        let (manifest, fresh) = match read_manifest_opt(&dir)? {
            Some(m) => (m, false),
            None if create => {
                // Under the lock: nothing else can have appeared since but
                // another creation's leftovers.
                refuse_foreign(&dir)?;
                (Manifest::new(), true)
            }
            None => {
                return Err(read_manifest(&dir)
                    .err()
                    .unwrap_or_else(|| Error::internal("job.json appeared")))
            }
        };
        let mut job = Job {
            tmp_root: dir.join("tmp"),
            view: JobView {
                dir,
                manifest,
                used: Default::default(),
            },
            _lock: lock,
        };
        if fresh {
            failpoint("job.create.manifest")?;
            job.save()?;
        }
        // Finish publications a crash interrupted.
        let moving: Vec<String> = job
            .view
            .manifest
            .stages
            .iter()
            .filter(|(_, r)| r.moving)
            .map(|(n, _)| n.clone())
            .collect();
        for name in moving {
            job.finish_moving(&name)?;
        }
        Ok(job)
    }

    /// Puts temporary files under `root` instead of `JOB/tmp`, in a directory
    /// unique to this job (named after the job directory and a hash of its
    /// canonical path), so that any number of jobs can share `root`. `root`
    /// must exist.
    pub fn set_tmp_root(&mut self, root: impl AsRef<Path>) -> Result<()> {
        let root = root.as_ref();
        if !root.is_dir() {
            return Err(Error::usage_at(
                root,
                "the --tmp-dir directory does not exist (create it first)",
            ));
        }
        let canonical = fs::canonicalize(&self.view.dir).at(&self.view.dir)?;
        let name = canonical
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "job".into());
        let hash = xxhash_rust::xxh3::xxh3_64(canonical.as_os_str().as_encoded_bytes());
        self.tmp_root = root.join(format!("webmill-{name}-{hash:016x}"));
        Ok(())
    }

    /// The temporary directory of `stage`.
    pub fn tmp_dir(&self, stage: StageId) -> PathBuf {
        self.tmp_root.join(stage.name())
    }

    /// The temporary root of this job (for scratch work outside stages).
    pub fn tmp_root(&self) -> &Path {
        &self.tmp_root
    }

    fn staging_dir(&self, stage: StageId) -> PathBuf {
        self.view.dir.join(STAGING_DIR).join(stage.name())
    }

    fn save(&mut self) -> Result<()> {
        self.view.manifest.version = MANIFEST_VERSION;
        write_atomic(self.view.dir.join(MANIFEST), &self.view.manifest.to_bytes())
    }

    /// Runs (or resumes, or skips) `stage`.
    pub fn run<S: Stage>(&mut self, stage: &S, settings: &Settings) -> Result<Outcome<S::Figures>> {
        match self.begin(stage, settings)? {
            Begun::Skipped(o) => Ok(o),
            Begun::Run(mut cx) => {
                let figures = stage.run(&mut cx)?;
                self.publish(stage, cx, figures)
            }
        }
    }

    /// Decides what to do with `stage` (see the module docs) and, when it is
    /// to run, records it as running and returns its context. Stages that
    /// share work (the near-duplicate algorithms' one sketch pass) begin
    /// together, run, and publish each.
    pub fn begin<S: Stage>(&mut self, stage: &S, settings: &Settings) -> Result<Begun<S::Figures>> {
        let id = stage.id();
        // A stage whose shares do not fit its budget never starts.
        Budget::new(id, settings.mem, stage.shares())?;
        let params =
            serde_json::to_value(stage.params()?).map_err(|e| Error::internal(e.to_string()))?;
        let mut input_paths = BTreeMap::new();
        let mut input_sums = BTreeMap::new();
        for file in stage.inputs() {
            match self.view.manifest.producer_of(file) {
                Some((_, out)) => {
                    input_paths.insert(file, self.view.dir.join(&out.path));
                    input_sums.insert(out.path.clone(), out.checksum.clone());
                }
                None => {
                    return Err(Error::job(
                        &self.view.dir,
                        format!("stage {id} reads {file}, but {}", missing(file)),
                    ))
                }
            }
        }
        let optional: BTreeSet<JobFile> = stage.optional_inputs().into_iter().collect();
        for &file in &optional {
            match self.view.manifest.producer_of(file) {
                Some((_, out)) => {
                    input_paths.insert(file, self.view.dir.join(&out.path));
                    input_sums.insert(out.path.clone(), out.checksum.clone());
                }
                None => {
                    input_sums.insert(file.name(), manifest::ABSENT.to_string());
                }
            }
        }
        let rec = self.view.manifest.record(id).cloned().unwrap_or_default();
        let force = settings.force;
        let resume = !force
            && rec
                .running
                .as_ref()
                .is_some_and(|a| a.params == params && a.inputs == input_sums);
        if !resume && !force {
            if let Some(p) = &rec.published {
                if p.params != params {
                    return Err(Error::job(
                        &self.view.dir,
                        format!(
                            "stage {id} already finished with other parameters ({}); pass --force to recompute it (its current results stay published until the new ones are complete)",
                            manifest::describe_change(&p.params, &params)
                        ),
                    ));
                }
                let changed: Vec<&String> = input_sums
                    .iter()
                    .filter(|(f, c)| p.inputs.get(*f) != Some(c))
                    .map(|(f, _)| f)
                    .collect();
                let lost: Vec<&Output> = p
                    .outputs
                    .iter()
                    .filter(|o| {
                        fs::metadata(self.view.dir.join(&o.path))
                            .map_or(true, |m| m.len() != o.bytes)
                    })
                    .collect();
                if changed.is_empty() && lost.is_empty() {
                    let figures = figures_of::<S>(&self.view.dir, id, p)?;
                    settings.reporter.note(&format!(
                        "{id}: already finished with these parameters and inputs; skipped (--force recomputes)"
                    ));
                    return Ok(Begun::Skipped(Outcome::Skipped {
                        figures,
                        record: p.clone(),
                    }));
                }
                settings.reporter.note(&format!(
                    "{id}: {}; recomputing",
                    if changed.is_empty() {
                        format!(
                            "its output {} is missing or changed",
                            lost.iter()
                                .map(|o| o.path.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    } else {
                        format!(
                            "its inputs changed since it ran ({})",
                            changed
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                ));
            } else if let Some(a) = &rec.running {
                if a.params != params {
                    return Err(Error::job(
                        &self.view.dir,
                        format!(
                            "stage {id} did not finish an earlier run with other parameters ({}); pass --force to discard what it left and start over",
                            manifest::describe_change(&a.params, &params)
                        ),
                    ));
                }
            }
        }
        let tmp = self.tmp_dir(id);
        let staging = self.staging_dir(id);
        if !resume {
            crate::sort::remove_sort_dir(&tmp)?;
            crate::sort::remove_sort_dir(&staging)?;
        }
        let attempts = if resume {
            rec.running.as_ref().map_or(0, |a| a.attempts) + 1
        } else {
            1
        };
        let entry = self.view.manifest.stages.entry(id.name()).or_default();
        entry.running = Some(Attempt {
            params,
            inputs: input_sums,
            started: now(),
            attempts,
        });
        self.save()?;
        resources::reset_peak_rss();
        let paths = StagePaths {
            inputs: input_paths,
            outputs: staging,
            tmp: tmp.clone(),
        };
        let cx = StageContext::new(
            id,
            settings,
            paths,
            stage.outputs().into_iter().collect(),
            stage.shares(),
            resume,
        )?
        .with_optional(optional);
        cx.prepare()?;
        if resume {
            settings.reporter.note(&format!(
                "{id}: resuming an interrupted run from its checkpoints in {}",
                tmp.display()
            ));
        }
        Ok(Begun::Run(cx))
    }

    /// Publishes what `stage` wrote in `cx`: records the result (the commit
    /// point), moves the outputs into the job, drops stages whose inputs
    /// changed, removes the stage's temporary and staging directories.
    pub fn publish<S: Stage>(
        &mut self,
        stage: &S,
        cx: StageContext,
        figures: S::Figures,
    ) -> Result<Outcome<S::Figures>> {
        let id = stage.id();
        let mut outputs = Vec::new();
        for file in stage.outputs() {
            outputs.push(describe_output(file, &cx.staging().join(file.name()))?);
        }
        let declared: BTreeSet<JobFile> = stage.outputs().into_iter().collect();
        if &declared != cx.declared_outputs() {
            return Err(Error::internal(format!(
                "stage {id} published other outputs than it began with"
            )));
        }
        let extra = match serde_json::to_value(&figures) {
            Ok(serde_json::Value::Object(m)) => m,
            Ok(_) => {
                return Err(Error::internal(format!(
                    "stage {id}'s figures are not a JSON object"
                )))
            }
            Err(e) => return Err(Error::internal(e.to_string())),
        };
        let summary = Figures {
            records: S::records(&figures),
            bytes: outputs.iter().map(|o| o.bytes).sum(),
            seconds: cx.started.elapsed().as_secs_f64(),
            peak_rss: resources::peak_rss().unwrap_or(0),
            extra,
        };
        failpoint("job.publish")?;
        let rec = self
            .view
            .manifest
            .stages
            .get_mut(&id.name())
            .ok_or_else(|| Error::internal(format!("stage {id} was not begun")))?;
        let attempt = rec
            .running
            .take()
            .ok_or_else(|| Error::internal(format!("stage {id} was not begun")))?;
        let published = Published {
            params: attempt.params,
            inputs: attempt.inputs,
            outputs,
            figures: summary,
            started: attempt.started,
            finished: now(),
            attempts: attempt.attempts,
        };
        rec.published = Some(published.clone());
        rec.moving = true;
        // Before any published file changes: readers holding the previous
        // generation see that it is no longer current.
        self.view.manifest.generation += 1;
        self.save()?;
        failpoint("job.commit")?;
        for d in self.finish_moving(&id.name())? {
            cx.settings().reporter.note(&format!(
                "{d}: its results were computed from inputs {id} just replaced; dropped (run it again)"
            ));
        }
        Ok(Outcome::Done {
            figures,
            record: published,
            resumed: cx.resumed(),
        })
    }

    /// Second half of a publication (also run by [`Job::open`] after a
    /// crash): moves the staged outputs of stage `name` into the job, drops
    /// what they replace, clears the `moving` mark. Returns the stages dropped
    /// because their inputs changed.
    fn finish_moving(&mut self, name: &str) -> Result<Vec<String>> {
        let staging = self.view.dir.join(STAGING_DIR).join(name);
        let Some(published) = self
            .view
            .manifest
            .stages
            .get(name)
            .and_then(|r| r.published.clone())
        else {
            return Err(Error::corrupt(
                self.view.dir.join(MANIFEST),
                format!("stage {name}"),
                0,
                "marked as moving its outputs but has no published result",
            ));
        };
        for o in &published.outputs {
            let from = staging.join(&o.path);
            let to = self.view.dir.join(&o.path);
            if from.exists() {
                if let Some(dir) = to.parent() {
                    fs::create_dir_all(dir).at(dir)?;
                }
                fs::rename(&from, &to).at(&to)?;
            } else if !to.exists() {
                return Err(Error::job(
                    &self.view.dir,
                    format!(
                        "stage {name} was published but its output {} is neither in the job nor in {}; run the stage again with --force",
                        o.path,
                        staging.display()
                    ),
                ));
            }
        }
        sync_dir(&self.view.dir.join(MANIFEST))?;
        let mine: BTreeSet<&str> = published.outputs.iter().map(|o| o.path.as_str()).collect();
        // Other stages whose outputs these files replace are dropped (a graph
        // from import-graph replaced by one from resolve).
        let others: Vec<String> = self
            .view
            .manifest
            .stages
            .iter()
            .filter(|(n, r)| {
                n.as_str() != name
                    && r.published
                        .as_ref()
                        .is_some_and(|p| p.outputs.iter().any(|o| mine.contains(o.path.as_str())))
            })
            .map(|(n, _)| n.clone())
            .collect();
        for other in others {
            self.unpublish(&other, &mine)?;
        }
        // Files this stage published before and no longer does.
        if let Some(id) = StageId::parse(name) {
            for f in JobFile::all() {
                let n = f.name();
                if f.producers().contains(&id)
                    && !mine.contains(n.as_str())
                    && self.view.manifest.producer_of(f).is_none()
                {
                    remove_if_exists(&self.view.dir.join(&n))?;
                }
            }
        }
        let dropped = self.drop_stale()?;
        // The staging and temporary directories go before `moving` is
        // cleared: a crash in between leaves the mark, and the next opening
        // removes whatever is left (once cleared, nothing would).
        crate::sort::remove_sort_dir(&staging)?;
        let _ = fs::remove_dir(self.view.dir.join(STAGING_DIR));
        if let Some(id) = StageId::parse(name) {
            crate::sort::remove_sort_dir(&self.tmp_dir(id))?;
        }
        let _ = fs::remove_dir(&self.tmp_root);
        if let Some(r) = self.view.manifest.stages.get_mut(name) {
            r.moving = false;
        }
        self.save()?;
        Ok(dropped)
    }

    /// Drops stage `name`'s published result and deletes its outputs, except
    /// the files in `keep` (which another stage now owns).
    fn unpublish(&mut self, name: &str, keep: &BTreeSet<&str>) -> Result<()> {
        let Some(rec) = self.view.manifest.stages.get_mut(name) else {
            return Ok(());
        };
        let Some(p) = rec.published.take() else {
            return Ok(());
        };
        if rec.running.is_none() {
            self.view.manifest.stages.remove(name);
        }
        for o in &p.outputs {
            if !keep.contains(o.path.as_str()) {
                remove_if_exists(&self.view.dir.join(&o.path))?;
            }
        }
        Ok(())
    }

    /// Drops, until none is left, every stage that read a file whose
    /// published checksum is no longer the one it read.
    fn drop_stale(&mut self) -> Result<Vec<String>> {
        let mut dropped = Vec::new();
        loop {
            let current = self.view.manifest.current_checksums();
            let stale = self.view.manifest.stages.iter().find_map(|(n, r)| {
                let p = r.published.as_ref()?;
                p.inputs
                    .iter()
                    .any(|(f, c)| {
                        current.get(f).map_or(manifest::ABSENT, String::as_str) != c.as_str()
                    })
                    .then(|| n.clone())
            });
            let Some(name) = stale else {
                return Ok(dropped);
            };
            self.unpublish(&name, &BTreeSet::new())?;
            dropped.push(name);
        }
    }
}

/// What an interrupted job creation may leave in a directory: the lock
/// file and a partial manifest.
const CREATION_LEFTOVERS: [&str; 2] = [LOCK_FILE, ".job.json.partial"];

/// Refuses a directory without a manifest that holds anything but what an
/// interrupted creation leaves (a missing directory is fine, and so is one
/// whose manifest appears meanwhile: another starter made it a job).
fn refuse_foreign(dir: &Path) -> Result<()> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries {
        let name = e.at(dir)?.file_name();
        if !CREATION_LEFTOVERS.iter().any(|l| name == *l) {
            // A concurrent starter may have finished creating the job since
            // the caller looked for its manifest: then it is a job.
            if dir.join(MANIFEST).exists() {
                return Ok(());
            }
            return Err(Error::usage_at(
                dir,
                format!(
                    "exists and is not a webmill job (no job.json, and it holds {}); choose a new or an empty directory",
                    name.to_string_lossy()
                ),
            ));
        }
    }
    Ok(())
}

/// Creates (if need be) and takes the writer lock of the job at `dir`,
/// waiting [`LOCK_WAIT`] for a reader's probe to let go of it.
fn lock_job(dir: &Path) -> Result<File> {
    let path = dir.join(LOCK_FILE);
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .at(&path)?;
    let start = Instant::now();
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(lock),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::job(
                    dir,
                    "another webmill process is writing this job (it holds .lock); read-only commands (stats, top, export, verify, inspect) still work",
                ))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
    }
}

fn remove_if_exists(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// The manifest entry of an output written at `path` (its structure checked;
/// a container's kind is recorded as its header names it).
fn describe_output(file: JobFile, path: &Path) -> Result<Output> {
    if !file.is_container() {
        let bytes = fs::read(path).at(path)?;
        return Ok(Output {
            path: file.name(),
            kind: "svg".into(),
            bytes: bytes.len() as u64,
            records: 0,
            checksum: format!("{:08x}", crc32c::crc32c(&bytes)),
        });
    }
    let c = Container::open(path).map_err(|e| match e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            Error::internal(format!(
                "the stage did not write its declared output {file} ({})",
                path.display()
            ))
        }
        e => e,
    })?;
    Ok(output_of(&file.name(), &c))
}

/// The manifest entry of a container published as `name`.
pub fn output_of(name: &str, c: &Container) -> Output {
    Output {
        path: name.to_string(),
        kind: c.kind().to_string(),
        bytes: c.size(),
        records: c.records(),
        checksum: format!("{:08x}", c.checksum()),
    }
}

#[cfg(test)]
mod tests;

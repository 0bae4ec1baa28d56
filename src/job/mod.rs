//! Jobs: a directory of published files plus a manifest of finished stages.
//!
//! `job.json` records, per stage, its status (`running` or `finished`), the
//! parameters it ran with, its outputs (relative path, size, record count and the
//! container's footer checksum) and its figures (records, bytes, seconds, peak
//! RSS). It is rewritten atomically after every change.
//!
//! Re-running a command on a job asks [`Job::begin`] what to do: a finished stage
//! with the same parameters is skipped; a finished stage with other parameters is
//! refused unless forced; an unfinished stage resumes from the checkpoints in its
//! temporary directory (sort runs, completed steps), which a parameter change
//! (forced) discards. A lock file keeps two processes from working on one job.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::container::Container;
use crate::error::{Error, IoContext, Result};
use crate::publish::write_atomic;
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

    /// A share of the budget.
    pub fn share(&self, fraction: f64) -> u64 {
        (self.mem as f64 * fraction) as u64
    }

    /// The configuration of a stage's sort `name`: its runs in `tmp/name`,
    /// `budget` bytes, progress labelled `stage: name` on this reporter.
    pub fn sort_config(
        &self,
        tmp: &std::path::Path,
        stage: &str,
        name: &str,
        budget: u64,
    ) -> crate::sort::SortConfig {
        crate::sort::SortConfig::new(tmp.join(name), budget)
            .label(format!("{stage}: {name}"))
            .reporter(std::sync::Arc::clone(&self.reporter))
    }
}

/// Version of the manifest layout.
pub const MANIFEST_VERSION: u32 = 1;
/// File name of the manifest inside a job directory.
pub const MANIFEST: &str = "job.json";

/// Where a stage stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Started, not finished (crashed or still running).
    Running,
    /// Finished; its outputs are published.
    Finished,
}

/// A published output of a stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Output {
    /// Path relative to the job directory.
    pub path: String,
    /// Container kind.
    pub kind: String,
    /// File size in bytes.
    pub bytes: u64,
    /// Records in the file.
    pub records: u64,
    /// The container's footer checksum (crc32c, hex).
    pub checksum: String,
}

/// Figures of a finished stage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Records produced (the stage's main unit: arcs for a graph import).
    pub records: u64,
    /// Bytes of all outputs.
    pub bytes: u64,
    /// Wall-clock seconds of the run that finished the stage.
    pub seconds: f64,
    /// Peak resident set size of that run, in bytes.
    pub peak_rss: u64,
    /// Stage-specific figures.
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The manifest's record of one stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    /// Running or finished.
    pub status: Status,
    /// Parameters that determine the outputs.
    pub params: serde_json::Value,
    /// Stages whose outputs this one read.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Published outputs (when finished).
    #[serde(default)]
    pub outputs: Vec<Output>,
    /// Figures (when finished).
    #[serde(default)]
    pub figures: Figures,
    /// Unix time the stage was last started.
    pub started: u64,
    /// Unix time it finished.
    #[serde(default)]
    pub finished: Option<u64>,
    /// How many times it was started (more than one means it resumed).
    #[serde(default)]
    pub attempts: u32,
}

/// The job manifest.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// Manifest layout version.
    pub version: u32,
    /// Stages by name.
    pub stages: BTreeMap<String, StageRecord>,
}

/// What [`Job::begin`] decided.
#[derive(Debug)]
pub enum Begin {
    /// Finished earlier with the same parameters: nothing to do.
    Skip(StageRecord),
    /// Run the stage; `resumed` if an earlier attempt left checkpoints.
    Run {
        /// Checkpoints of an earlier attempt may be reused.
        resumed: bool,
    },
}

/// An open job directory, locked for this process.
pub struct Job {
    dir: PathBuf,
    tmp_root: PathBuf,
    manifest: Manifest,
    _lock: File,
    started: Option<Instant>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Job {
    /// Opens the job at `dir`, creating it if `create` is set.
    pub fn open(dir: impl AsRef<Path>, create: bool) -> Result<Job> {
        let dir = dir.as_ref().to_path_buf();
        if create {
            fs::create_dir_all(&dir).at(&dir)?;
        }
        let manifest_path = dir.join(MANIFEST);
        if !create && !manifest_path.exists() {
            return Err(Error::job(
                &dir,
                "not a webmill job (no job.json); create one with `webmill import-graph --out DIR …`",
            ));
        }
        let lock_path = dir.join(".lock");
        let lock = File::create(&lock_path).at(&lock_path)?;
        if lock.try_lock().is_err() {
            return Err(Error::job(
                &dir,
                "another webmill process is working on this job (it holds .lock)",
            ));
        }
        let manifest = match fs::read(&manifest_path) {
            Ok(bytes) => {
                let m: Manifest = serde_json::from_slice(&bytes)
                    .map_err(|e| Error::corrupt(&manifest_path, "manifest", 0, e.to_string()))?;
                if m.version != MANIFEST_VERSION {
                    return Err(Error::Version {
                        path: manifest_path,
                        what: "manifest".into(),
                        expected: MANIFEST_VERSION,
                        found: m.version,
                    });
                }
                m
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Manifest {
                version: MANIFEST_VERSION,
                stages: BTreeMap::new(),
            },
            Err(e) => return Err(Error::io(&manifest_path, e)),
        };
        let tmp_root = dir.join("tmp");
        let job = Job {
            dir,
            tmp_root,
            manifest,
            _lock: lock,
            started: None,
        };
        if create {
            job.save()?;
        }
        Ok(job)
    }

    /// Puts temporary files under `root/<job name>` instead of `JOB/tmp`.
    pub fn set_tmp_root(&mut self, root: impl AsRef<Path>) {
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "job".into());
        self.tmp_root = root.as_ref().join(format!("webmill-{name}"));
    }

    /// The job directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A path inside the job directory.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// The temporary directory of `stage` (its checkpoints).
    pub fn tmp_dir(&self, stage: &str) -> PathBuf {
        self.tmp_root.join(stage)
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The record of `stage`, if any.
    pub fn stage(&self, stage: &str) -> Option<&StageRecord> {
        self.manifest.stages.get(stage)
    }

    /// The record of a finished stage, or an error telling what to run first.
    pub fn finished_stage(&self, stage: &str) -> Result<&StageRecord> {
        match self.stage(stage) {
            Some(r) if r.status == Status::Finished => Ok(r),
            Some(_) => Err(Error::job(
                &self.dir,
                format!("stage {stage} has not finished; re-run its command to resume it"),
            )),
            None => Err(Error::job(
                &self.dir,
                format!("stage {stage} has not been run in this job"),
            )),
        }
    }

    fn save(&self) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(&self.manifest)
            .map_err(|e| Error::internal(e.to_string()))?;
        write_atomic(self.dir.join(MANIFEST), &bytes)
    }

    /// Decides whether `stage` runs with `params`; records it as running if so.
    /// When it starts afresh (not resuming), its checkpoints and any earlier
    /// `outputs` (paths relative to the job) are removed first.
    pub fn begin(
        &mut self,
        stage: &str,
        params: serde_json::Value,
        depends_on: &[&str],
        outputs: &[&str],
        force: bool,
    ) -> Result<Begin> {
        let mut resumed = false;
        if let Some(rec) = self.manifest.stages.get(stage) {
            let same = rec.params == params;
            match (rec.status, same, force) {
                (Status::Finished, true, false) => return Ok(Begin::Skip(rec.clone())),
                (Status::Finished, false, false) => {
                    return Err(Error::job(
                        &self.dir,
                        format!(
                            "stage {stage} already finished with other parameters ({} before, {} now); pass --force to recompute it",
                            rec.params, params
                        ),
                    ))
                }
                (Status::Running, false, false) => {
                    return Err(Error::job(
                        &self.dir,
                        format!(
                            "stage {stage} was interrupted while running with other parameters ({} before, {} now); pass --force to discard its checkpoints and start over",
                            rec.params, params
                        ),
                    ))
                }
                (Status::Running, true, false) => resumed = true,
                (_, _, true) => {}
            }
        }
        if !resumed {
            crate::sort::remove_sort_dir(&self.tmp_dir(stage))?;
            for rel in outputs {
                let p = self.path(rel);
                match fs::remove_file(&p) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io(&p, e)),
                }
            }
        }
        let attempts = self.manifest.stages.get(stage).map_or(0, |r| r.attempts);
        self.invalidate_dependents(stage);
        self.manifest.stages.insert(
            stage.to_string(),
            StageRecord {
                status: Status::Running,
                params,
                depends_on: depends_on.iter().map(|s| s.to_string()).collect(),
                outputs: Vec::new(),
                figures: Figures::default(),
                started: now(),
                finished: None,
                attempts: if resumed { attempts + 1 } else { 1 },
            },
        );
        self.save()?;
        resources::reset_peak_rss();
        self.started = Some(Instant::now());
        fs::create_dir_all(self.tmp_dir(stage)).at(self.tmp_dir(stage))?;
        Ok(Begin::Run { resumed })
    }

    /// Drops the records of stages that read `stage`'s outputs (recursively).
    fn invalidate_dependents(&mut self, stage: &str) {
        let dependents: Vec<String> = self
            .manifest
            .stages
            .iter()
            .filter(|(_, r)| r.depends_on.iter().any(|d| d == stage))
            .map(|(n, _)| n.clone())
            .collect();
        for d in dependents {
            self.manifest.stages.remove(&d);
            self.invalidate_dependents(&d);
        }
    }

    /// Records `stage` as finished with its published `outputs` (paths relative
    /// to the job) and figures; removes its temporary directory.
    pub fn finish(
        &mut self,
        stage: &str,
        outputs: &[&str],
        mut figures: Figures,
    ) -> Result<StageRecord> {
        let mut outs = Vec::new();
        for rel in outputs {
            let c = Container::open(self.path(rel))?;
            outs.push(Output {
                path: rel.to_string(),
                kind: c.kind().to_string(),
                bytes: c.size(),
                records: c.records(),
                checksum: format!("{:08x}", c.checksum()),
            });
        }
        figures.bytes = outs.iter().map(|o| o.bytes).sum();
        figures.seconds = self.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
        figures.peak_rss = resources::peak_rss().unwrap_or(0);
        let rec = self
            .manifest
            .stages
            .get_mut(stage)
            .ok_or_else(|| Error::job(&self.dir, format!("stage {stage} was not begun")))?;
        rec.status = Status::Finished;
        rec.outputs = outs;
        rec.figures = figures;
        rec.finished = Some(now());
        let rec = rec.clone();
        self.save()?;
        crate::sort::remove_sort_dir(&self.tmp_dir(stage))?;
        // Remove the temporary root too once nothing else is in it.
        let _ = fs::remove_dir(&self.tmp_root);
        Ok(rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stage_lifecycle() {
        let dir = tempfile::tempdir().unwrap();
        let jd = dir.path().join("job");
        let mut job = Job::open(&jd, true).unwrap();
        // A second process cannot open it.
        assert!(Job::open(&jd, false).is_err());
        assert!(matches!(
            job.begin("a", json!({"x": 1}), &[], &[], false).unwrap(),
            Begin::Run { resumed: false }
        ));
        drop(job);
        // Interrupted: the same parameters resume, other ones are refused.
        let mut job = Job::open(&jd, false).unwrap();
        assert!(job.begin("a", json!({"x": 2}), &[], &[], false).is_err());
        assert!(matches!(
            job.begin("a", json!({"x": 1}), &[], &[], false).unwrap(),
            Begin::Run { resumed: true }
        ));
        job.finish("a", &[], Figures::default()).unwrap();
        assert!(matches!(
            job.begin("a", json!({"x": 1}), &[], &[], false).unwrap(),
            Begin::Skip(_)
        ));
        let err = job
            .begin("a", json!({"x": 2}), &[], &[], false)
            .unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        // A dependent stage is dropped when its input is recomputed.
        job.begin("b", json!({}), &["a"], &[], false).unwrap();
        job.finish("b", &[], Figures::default()).unwrap();
        assert!(matches!(
            job.begin("a", json!({"x": 2}), &[], &[], true).unwrap(),
            Begin::Run { resumed: false }
        ));
        assert!(job.stage("b").is_none());
        drop(job);
        assert!(Job::open(dir.path().join("nothing"), false).is_err());
    }
}

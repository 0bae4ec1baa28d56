//! The stage lifecycle on toy stages: skip, refuse, resume, re-run on changed
//! inputs, atomic replacement, dropping of stale dependents, roll-forward of an
//! interrupted publication.

use serde::{Deserialize, Serialize};

use super::*;
use crate::container::pagefile::{PageFile, PageFileWriter};
use crate::docs::{Doc, DocTable, DocWriter};
use crate::ingest::records::{PageRec, PAGES};

/// A source stage (as `ingest`): writes `n` pages whose titles carry `tag`.
struct Source {
    n: u64,
    tag: String,
    fail: bool,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct SourceParams {
    n: u64,
    tag: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Count {
    records: u64,
}

impl Stage for Source {
    type Params = SourceParams;
    type Figures = Count;
    fn id(&self) -> StageId {
        StageId::Ingest
    }
    fn params(&self) -> Result<SourceParams> {
        Ok(SourceParams {
            n: self.n,
            tag: self.tag.clone(),
        })
    }
    fn inputs(&self) -> Vec<JobFile> {
        Vec::new()
    }
    fn outputs(&self) -> Vec<JobFile> {
        vec![JobFile::Pages]
    }
    fn records(f: &Count) -> u64 {
        f.records
    }
    fn run(&self, cx: &mut StageContext) -> Result<Count> {
        let mut w = PageFileWriter::create(cx.output(JobFile::Pages)?, &PAGES, 1 << 10, 1)?;
        let mut buf = Vec::new();
        for i in 0..self.n {
            buf.clear();
            PageRec {
                url: format!("http://x.example/{i}"),
                title: format!("{} {i}", self.tag),
                ..PageRec::default()
            }
            .encode(&mut buf);
            w.push(i, &buf)?;
        }
        if self.fail {
            return Err(Error::io(
                cx.tmp(),
                std::io::Error::from_raw_os_error(28), // ENOSPC
            ));
        }
        w.finish(&serde_json::json!({}))?;
        Ok(Count { records: self.n })
    }
}

/// A dependent stage (as `resolve`): one doc per page, titles copied.
struct Derived;

impl Stage for Derived {
    type Params = ();
    type Figures = Count;
    fn id(&self) -> StageId {
        StageId::Resolve
    }
    fn params(&self) -> Result<()> {
        Ok(())
    }
    fn inputs(&self) -> Vec<JobFile> {
        vec![JobFile::Pages]
    }
    fn outputs(&self) -> Vec<JobFile> {
        vec![JobFile::Docs]
    }
    fn records(f: &Count) -> u64 {
        f.records
    }
    fn run(&self, cx: &mut StageContext) -> Result<Count> {
        let pages = PageFile::open(cx.input(JobFile::Pages)?, &PAGES)?;
        let mut w = DocWriter::create(cx.output(JobFile::Docs)?, "test")?;
        let mut n = 0;
        pages.for_each(|_, input| {
            let p = PageRec::decode(input)?;
            n += 1;
            w.push(&Doc {
                url: p.url,
                title: p.title,
                crawled: true,
                ..Doc::default()
            })
        })?;
        w.finish()?;
        Ok(Count { records: n })
    }
}

/// A stage that touches a file it did not declare.
struct Sneaky;

impl Stage for Sneaky {
    type Params = ();
    type Figures = Count;
    fn id(&self) -> StageId {
        StageId::PageRank
    }
    fn params(&self) -> Result<()> {
        Ok(())
    }
    fn inputs(&self) -> Vec<JobFile> {
        vec![JobFile::Pages]
    }
    fn outputs(&self) -> Vec<JobFile> {
        vec![JobFile::Ranks]
    }
    fn records(_: &Count) -> u64 {
        0
    }
    fn run(&self, cx: &mut StageContext) -> Result<Count> {
        cx.input(JobFile::Docs)?;
        Ok(Count { records: 0 })
    }
}

fn source(n: u64, tag: &str) -> Source {
    Source {
        n,
        tag: tag.into(),
        fail: false,
    }
}

fn titles(job: &JobView) -> Vec<String> {
    let t = DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    t.iter().map(|d| d.unwrap().1.title).collect()
}

#[test]
fn skip_refuse_force() {
    let dir = tempfile::tempdir().unwrap();
    let jd = dir.path().join("job");
    let s = Settings::new(1 << 20);
    let mut job = Job::open(&jd, true).unwrap();
    // A second writer is locked out; a reader is not.
    assert!(Job::open(&jd, false).is_err());
    JobView::open(&jd).unwrap();
    assert!(job.run(&source(3, "a"), &s).unwrap().ran());
    assert!(!job.run(&source(3, "a"), &s).unwrap().ran());
    let err = job.run(&source(3, "b"), &s).unwrap_err();
    assert_eq!(err.class(), crate::error::ErrorClass::Job);
    assert!(err.to_string().contains("--tag was a, now b"), "{err}");
    assert!(job.run(&source(3, "b"), &s.forced(true)).unwrap().ran());
    assert_eq!(
        job.figures::<Source>(StageId::Ingest).unwrap(),
        Some(Count { records: 3 })
    );
}

#[test]
fn changed_inputs_drop_dependents_and_rerun_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut job = Job::open(dir.path().join("job"), true).unwrap();
    let s = Settings::new(1 << 20);
    // A stage cannot run before its inputs exist.
    let err = job.run(&Derived, &s).unwrap_err();
    assert!(err.to_string().contains("pages.wm"), "{err}");
    job.run(&source(2, "a"), &s).unwrap();
    job.run(&Derived, &s).unwrap();
    assert_eq!(titles(&job), ["a 0", "a 1"]);
    assert!(!job.run(&Derived, &s).unwrap().ran());
    // A forced re-run with the same result keeps the dependent.
    job.run(&source(2, "a"), &s.forced(true)).unwrap();
    assert!(job.published(StageId::Resolve).is_some());
    // A new result drops it and its file...
    job.run(&source(2, "b"), &s.forced(true)).unwrap();
    assert!(job.published(StageId::Resolve).is_none());
    assert!(!job.dir().join("docs.wm").exists());
    // ...and it runs again on the new input.
    assert!(job.run(&Derived, &s).unwrap().ran());
    assert_eq!(titles(&job), ["b 0", "b 1"]);
}

#[test]
fn a_failed_forced_run_leaves_the_previous_results() {
    let dir = tempfile::tempdir().unwrap();
    let mut job = Job::open(dir.path().join("job"), true).unwrap();
    let s = Settings::new(1 << 20);
    job.run(&source(2, "a"), &s).unwrap();
    job.run(&Derived, &s).unwrap();
    let before = std::fs::read(job.dir().join("pages.wm")).unwrap();
    let failing = Source {
        n: 5,
        tag: "b".into(),
        fail: true,
    };
    let err = job.run(&failing, &s.forced(true)).unwrap_err();
    assert_eq!(err.class(), crate::error::ErrorClass::Io);
    drop(job);
    let job = Job::open(dir.path().join("job"), false).unwrap();
    assert_eq!(std::fs::read(job.dir().join("pages.wm")).unwrap(), before);
    assert_eq!(titles(&job), ["a 0", "a 1"]);
    crate::kinds::verify_file(&job.dir().join("pages.wm")).unwrap();
}

#[test]
fn an_interrupted_run_resumes_and_other_params_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let jd = dir.path().join("job");
    let s = Settings::new(1 << 20);
    {
        let mut job = Job::open(&jd, true).unwrap();
        let Begun::Run(cx) = job.begin(&source(2, "a"), &s).unwrap() else {
            panic!("should run")
        };
        cx.save_checkpoint("step", &41u32).unwrap();
        // The process dies here.
    }
    let mut job = Job::open(&jd, false).unwrap();
    assert!(job.run(&source(2, "b"), &s).is_err());
    let Begun::Run(cx) = job.begin(&source(2, "a"), &s).unwrap() else {
        panic!("should resume")
    };
    assert!(cx.resumed());
    assert_eq!(cx.checkpoint::<u32>("step").unwrap(), Some(41));
    assert_eq!(cx.step("step", |_| Ok(0u32)).unwrap(), 41);
    drop(cx);
    let out = job.run(&source(2, "a"), &s).unwrap();
    assert!(matches!(out, Outcome::Done { resumed: true, .. }));
}

#[test]
fn an_interrupted_publication_is_finished_at_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let jd = dir.path().join("job");
    let s = Settings::new(1 << 20);
    {
        let mut job = Job::open(&jd, true).unwrap();
        let stage = source(3, "a");
        let Begun::Run(mut cx) = job.begin(&stage, &s).unwrap() else {
            panic!("should run")
        };
        stage.run(&mut cx).unwrap();
        // Commit, but stop before moving the files (what `job.commit` does).
        let out = describe_output(JobFile::Pages, &cx.staging().join("pages.wm")).unwrap();
        let rec = job.view.manifest.stages.get_mut("ingest").unwrap();
        let a = rec.running.take().unwrap();
        rec.published = Some(Published {
            params: a.params,
            inputs: a.inputs,
            outputs: vec![out],
            figures: Figures::default(),
            started: 0,
            finished: 0,
            attempts: 1,
        });
        rec.moving = true;
        job.save().unwrap();
    }
    assert!(JobView::open(&jd).is_err(), "readers wait for the move");
    let job = Job::open(&jd, false).unwrap();
    assert!(job.dir().join("pages.wm").exists());
    assert!(!job.dir().join(STAGING_DIR).exists());
    drop(job);
    JobView::open(&jd).unwrap();
}

#[test]
fn undeclared_files_are_a_contract_violation() {
    let dir = tempfile::tempdir().unwrap();
    let mut job = Job::open(dir.path().join("job"), true).unwrap();
    let s = Settings::new(1 << 20);
    job.run(&source(1, "a"), &s).unwrap();
    let err = job.run(&Sneaky, &s).unwrap_err();
    assert_eq!(err.class(), crate::error::ErrorClass::Internal);
    assert!(err.to_string().contains("did not declare"), "{err}");
}

#[test]
fn temporary_directories_are_unique_per_job() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared-tmp");
    std::fs::create_dir(&shared).unwrap();
    let mut a = Job::open(dir.path().join("x/job"), true).unwrap();
    let mut b = Job::open(dir.path().join("y/job"), true).unwrap();
    a.set_tmp_root(&shared).unwrap();
    b.set_tmp_root(&shared).unwrap();
    assert_ne!(a.tmp_dir(StageId::Ingest), b.tmp_dir(StageId::Ingest));
    assert!(a.tmp_dir(StageId::Ingest).starts_with(&shared));
    let err = a.set_tmp_root(dir.path().join("missing")).unwrap_err();
    assert_eq!(err.class(), crate::error::ErrorClass::Usage);
}

#[test]
fn a_directory_that_is_not_a_job_is_not_taken() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let err = Job::open(dir.path(), true).err().unwrap();
    assert_eq!(err.class(), crate::error::ErrorClass::Usage);
    assert!(Job::open(dir.path().join("nothing"), false).is_err());
    // An empty directory becomes a job.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    Job::open(&empty, true).unwrap();
}

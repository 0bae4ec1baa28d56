//! Random orders of stages, forced re-runs and changed inputs: whatever
//! happened to a job, every file it publishes equals what a fresh job
//! computes from its current inputs and parameters, and nothing stale is
//! left behind.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use proptest::prelude::*;
use webmill::dedup::stage::{dedup, DedupOptions};
use webmill::dedup::Alg;
use webmill::ingest::resolve::resolve;
use webmill::ingest::{ingest, IngestOptions, InputSpec};
use webmill::job::{Job, JobFile, JobView, Settings, StageId};
use webmill::rank::{pagerank, PageRankOptions};

/// What a test does to the job.
#[derive(Clone, Debug)]
enum Op {
    /// `webmill ingest` (ingest + resolve) of site 0 or 1, forced or not.
    Ingest { site: usize, force: bool },
    /// `webmill pagerank` with one of two dampings, forced or not.
    PageRank { damping: usize, force: bool },
    /// `webmill dedup` of one algorithm with one of two thresholds.
    Dedup {
        alg: usize,
        threshold: usize,
        force: bool,
    },
}

const DAMPINGS: [f64; 2] = [0.85, 0.9];
const THRESHOLDS: [f64; 2] = [0.8, 0.9];
const ALGS: [Alg; 2] = [Alg::Exact, Alg::MinHash];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..2usize, any::<bool>()).prop_map(|(site, force)| Op::Ingest { site, force }),
        (0..2usize, any::<bool>()).prop_map(|(damping, force)| Op::PageRank { damping, force }),
        (0..2usize, 0..2usize, any::<bool>()).prop_map(|(alg, threshold, force)| Op::Dedup {
            alg,
            threshold,
            force
        }),
    ]
}

fn settings(force: bool) -> Settings {
    Settings::new(4 << 20).forced(force)
}

fn input(site: &Path) -> Vec<InputSpec> {
    vec![InputSpec::parse(&format!("http://s.example/={}", site.display()), None).unwrap()]
}

/// Applies `op`; refusals (changed parameters without --force) and missing
/// inputs are part of the game, anything else is a failure.
fn apply(job: &mut Job, sites: &[PathBuf], op: &Op) {
    let result = match *op {
        Op::Ingest { site, force } => {
            let opts = IngestOptions {
                inputs: input(&sites[site]),
                ..IngestOptions::default()
            };
            ingest(job, &opts, &settings(force))
                .and_then(|_| resolve(job, &settings(false)))
                .map(drop)
        }
        Op::PageRank { damping, force } => {
            let opts = PageRankOptions {
                damping: DAMPINGS[damping],
                ..PageRankOptions::default()
            };
            pagerank(job, &opts, &settings(force)).map(drop)
        }
        Op::Dedup {
            alg,
            threshold,
            force,
        } => {
            let opts = DedupOptions {
                algs: vec![ALGS[alg]],
                threshold: THRESHOLDS[threshold],
                ..DedupOptions::default()
            };
            dedup(job, &opts, &settings(force)).map(drop)
        }
    };
    if let Err(e) = result {
        assert_eq!(
            e.class(),
            webmill::error::ErrorClass::Job,
            "{op:?} failed otherwise than by a refusal: {e}"
        );
    }
}

/// The parameters that determine a job's published files.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct State {
    site: Option<usize>,
    damping: Option<usize>,
    dedup: Vec<(usize, usize)>,
}

fn state_of(job: &JobView, sites: &[PathBuf]) -> State {
    let site = job.published(StageId::Ingest).map(|p| {
        let dir = p.params["inputs"][0]["dir"].as_str().unwrap().to_string();
        sites
            .iter()
            .position(|s| s.canonicalize().unwrap().to_string_lossy() == dir)
            .unwrap()
    });
    let damping = job.published(StageId::PageRank).map(|p| {
        let d = p.params["damping"].as_f64().unwrap();
        DAMPINGS.iter().position(|&x| x == d).unwrap()
    });
    let mut dedup = Vec::new();
    for (a, &alg) in ALGS.iter().enumerate() {
        if let Some(p) = job.published(StageId::Dedup(alg)) {
            let t = p.params["threshold"].as_f64().unwrap_or(THRESHOLDS[0]);
            // Exact ignores the threshold: both settings give the same files.
            let t = if alg == Alg::Exact {
                0
            } else {
                THRESHOLDS.iter().position(|&x| x == t).unwrap()
            };
            dedup.push((a, t));
        }
    }
    State {
        site,
        damping,
        dedup,
    }
}

/// A fresh job in `dir` computed for `state`.
fn fresh(dir: &Path, sites: &[PathBuf], state: &State) -> PathBuf {
    let mut job = Job::open(dir, true).unwrap();
    if let Some(site) = state.site {
        apply(&mut job, sites, &Op::Ingest { site, force: false });
    }
    if let Some(damping) = state.damping {
        apply(
            &mut job,
            sites,
            &Op::PageRank {
                damping,
                force: false,
            },
        );
    }
    for &(alg, threshold) in &state.dedup {
        apply(
            &mut job,
            sites,
            &Op::Dedup {
                alg,
                threshold,
                force: false,
            },
        );
    }
    dir.to_path_buf()
}

/// Every published file, by name, with its bytes.
fn published_files(job: &JobView) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for (_, p) in job.manifest().finished_in_order() {
        for o in &p.outputs {
            out.insert(
                o.path.clone(),
                std::fs::read(job.dir().join(&o.path)).unwrap(),
            );
        }
    }
    out
}

/// Files in the job directory that are job files but not published.
fn unpublished_job_files(job: &JobView) -> Vec<String> {
    JobFile::all()
        .into_iter()
        .filter(|f| job.dir().join(f.name()).exists() && !job.has(*f))
        .map(|f| f.name())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
    #[test]
    fn published_files_are_what_a_fresh_job_computes(ops in proptest::collection::vec(op(), 3..9)) {
        let dir = tempfile::tempdir().unwrap();
        let sites: Vec<PathBuf> = (0..2)
            .map(|i| {
                let s = dir.path().join(format!("site{i}"));
                write_site(&s, 40, i as u64 + 1);
                s
            })
            .collect();
        let mut job = Job::open(dir.path().join("job"), true).unwrap();
        for op in &ops {
            apply(&mut job, &sites, op);
        }
        let view = JobView::open(job.dir()).unwrap();
        let state = state_of(&view, &sites);
        let got = published_files(&view);
        prop_assert!(unpublished_job_files(&view).is_empty(), "stale files: {:?}", unpublished_job_files(&view));
        let fresh_dir = fresh(&dir.path().join("fresh"), &sites, &state);
        let want = published_files(&JobView::open(&fresh_dir).unwrap());
        prop_assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{:?}", state);
        for (name, bytes) in &got {
            prop_assert!(bytes == &want[name], "{} differs from a fresh job's ({:?}, ops {:?})", name, state, ops);
        }
    }
}

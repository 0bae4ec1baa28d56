//! The order a job's stages run in, derived from what they declare.
//!
//! A stage declares the job files it reads and writes ([`super::Stage`]);
//! nothing else says which stage comes first. [`order`] sorts a set of
//! declared stages topologically (Kahn's algorithm): a stage runs after every
//! stage of the set that produces one of its inputs, and stages that are
//! ready together run in pipeline order ([`StageId::order`]), so the order
//! is the same whatever order the stages were given in. An input that no
//! stage of the set produces must already be published in the job; otherwise
//! the plan is refused before anything runs, naming the stage and the file.

use std::collections::BTreeSet;

use super::files::{JobFile, StageId};
use super::manifest::Manifest;
use super::DynStage;
use crate::error::{Error, Result};

/// A stage's declaration: its id and the job files it reads and writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    /// The stage.
    pub id: StageId,
    /// The job files it reads.
    pub inputs: Vec<JobFile>,
    /// The job files it reads when they are there: it runs after a stage of
    /// the set producing one, and needs none.
    pub optional: Vec<JobFile>,
    /// The job files it writes.
    pub outputs: Vec<JobFile>,
}

impl Declared {
    /// The declaration of `stage`.
    pub fn of(stage: &(impl DynStage + ?Sized)) -> Declared {
        Declared {
            id: stage.id(),
            inputs: stage.inputs(),
            optional: stage.optional_inputs(),
            outputs: stage.outputs(),
        }
    }
}

/// The positions of `stages` in the order they must run: each after the
/// stages of the set producing its inputs, ties in pipeline order. `have`
/// says whether the job already publishes a file no stage of the set
/// produces. Refused (a usage error) when an input is neither produced nor
/// had, when two stages write the same file, or when the declarations form a
/// cycle.
pub fn order(stages: &[Declared], have: impl Fn(JobFile) -> bool) -> Result<Vec<usize>> {
    for (i, a) in stages.iter().enumerate() {
        for b in &stages[i + 1..] {
            if let Some(f) = a.outputs.iter().find(|f| b.outputs.contains(f)) {
                return Err(Error::usage(format!(
                    "stages {} and {} both write {f}; run only one of them",
                    a.id, b.id
                )));
            }
        }
    }
    // deps[i]: the stages whose outputs stage i reads.
    let mut deps: Vec<BTreeSet<usize>> = Vec::with_capacity(stages.len());
    for s in stages {
        let mut d = BTreeSet::new();
        for &input in &s.inputs {
            match stages.iter().position(|p| p.outputs.contains(&input)) {
                Some(p) => {
                    d.insert(p);
                }
                None if have(input) => {}
                None => {
                    return Err(Error::usage(format!(
                        "stage {} reads {input}, which no stage of this run produces and the job does not hold (it comes from {})",
                        s.id,
                        input
                            .producers()
                            .iter()
                            .map(|p| p.to_string())
                            .collect::<Vec<_>>()
                            .join(" or ")
                    )))
                }
            }
        }
        for input in &s.optional {
            d.extend(stages.iter().position(|p| p.outputs.contains(input)));
        }
        deps.push(d);
    }
    let mut done = vec![false; stages.len()];
    let mut out = Vec::with_capacity(stages.len());
    while out.len() < stages.len() {
        let next = (0..stages.len())
            .filter(|&i| !done[i] && deps[i].iter().all(|&d| done[d]))
            .min_by_key(|&i| (stages[i].id.order(), i));
        let Some(i) = next else {
            let left: Vec<String> = (0..stages.len())
                .filter(|&i| !done[i])
                .map(|i| stages[i].id.to_string())
                .collect();
            return Err(Error::internal(format!(
                "the stages {} read each other's outputs (a cycle)",
                left.join(", ")
            )));
        };
        done[i] = true;
        out.push(i);
    }
    Ok(out)
}

/// Where a stage stands in a job, as far as its manifest tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageState {
    /// Never started (or its results were dropped).
    NotRun,
    /// Started and not finished: interrupted, or running in another process.
    Interrupted,
    /// Published (it is still skipped only if its parameters and inputs
    /// are the same when it comes to run).
    Finished,
}

impl StageState {
    /// The state of `stage` in `manifest`. A stage re-running over published
    /// results counts as interrupted.
    pub fn of(manifest: &Manifest, stage: StageId) -> StageState {
        match manifest.record(stage) {
            Some(r) if r.running.is_some() => StageState::Interrupted,
            Some(r) if r.published.is_some() => StageState::Finished,
            _ => StageState::NotRun,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Alg;

    fn decl(id: StageId, inputs: &[JobFile], outputs: &[JobFile]) -> Declared {
        Declared {
            id,
            inputs: inputs.to_vec(),
            optional: Vec::new(),
            outputs: outputs.to_vec(),
        }
    }

    fn web() -> Vec<Declared> {
        use JobFile::*;
        vec![
            decl(
                StageId::Dedup(Alg::MinHash),
                &[Text, PageDoc, Docs, Ranks],
                &[Pairs(Alg::MinHash)],
            ),
            decl(StageId::Index, &[Text, PageDoc, Docs, Anchors], &[Lexicon]),
            decl(StageId::PageRank, &[Edges, EdgesT, Docs], &[Ranks]),
            decl(
                StageId::Resolve,
                &[Pages, Links],
                &[Docs, PageDoc, Edges, EdgesT, Anchors],
            ),
            decl(StageId::Ingest, &[], &[Pages, Text, Links]),
            decl(
                StageId::Dedup(Alg::Broder),
                &[Text, PageDoc, Docs, Ranks],
                &[Pairs(Alg::Broder)],
            ),
        ]
    }

    fn ids(stages: &[Declared], order: &[usize]) -> Vec<String> {
        order.iter().map(|&i| stages[i].id.to_string()).collect()
    }

    #[test]
    fn orders_by_declared_inputs_whatever_the_given_order() {
        let mut stages = web();
        let want = [
            "ingest",
            "resolve",
            "pagerank",
            "index",
            "dedup-broder",
            "dedup-minhash",
        ];
        for rot in 0..stages.len() {
            stages.rotate_left(1);
            let o = order(&stages, |_| false).unwrap();
            assert_eq!(ids(&stages, &o), want, "rotation {rot}");
        }
        // Ties go by pipeline order, not by position: index before dedup
        // although dedup-minhash only waits for pagerank.
        stages.reverse();
        let o = order(&stages, |_| false).unwrap();
        assert_eq!(ids(&stages, &o), want);
    }

    #[test]
    fn inputs_the_job_holds_need_no_producer() {
        let stages: Vec<Declared> = web()
            .into_iter()
            .filter(|s| matches!(s.id, StageId::PageRank | StageId::Dedup(_)))
            .collect();
        let err = order(&stages, |_| false).unwrap_err().to_string();
        assert!(err.contains("reads"), "{err}");
        assert!(err.contains("which no stage of this run produces"), "{err}");
        let o = order(&stages, |f| f != JobFile::Ranks).unwrap();
        assert_eq!(
            ids(&stages, &o),
            ["pagerank", "dedup-broder", "dedup-minhash"]
        );
    }

    #[test]
    fn two_writers_of_a_file_and_cycles_are_refused() {
        use JobFile::*;
        let two = [
            decl(StageId::Resolve, &[], &[Docs, Edges]),
            decl(StageId::ImportGraph, &[], &[Docs, Edges]),
        ];
        assert!(order(&two, |_| false)
            .unwrap_err()
            .to_string()
            .contains("both write docs.wm"));
        let cycle = [
            decl(StageId::Ingest, &[Ranks], &[Pages]),
            decl(StageId::PageRank, &[Pages], &[Ranks]),
        ];
        assert!(order(&cycle, |_| false)
            .unwrap_err()
            .to_string()
            .contains("cycle"));
    }
}

//! The link graph: edge files and importing edge lists.

pub mod cc;
pub mod edges;
pub mod import;
pub mod names;
pub mod snap;

pub use edges::{Direction, EdgeFile, EdgeFileStats, EdgeWriter};

use crate::error::{Error, Result};
use crate::job::{Job, Status};

/// The stage that made `job`'s link graph (`docs.wm`, `edges.wm`,
/// `edges-t.wm`): `import-graph` for edge lists, `resolve` for ingested dumps.
/// An error tells what to run when the job has no finished graph.
pub fn graph_stage(job: &Job) -> Result<&'static str> {
    for stage in [crate::ingest::resolve::STAGE, import::STAGE] {
        if job
            .stage(stage)
            .is_some_and(|r| r.status == Status::Finished)
        {
            return Ok(stage);
        }
    }
    for stage in [crate::ingest::resolve::STAGE, import::STAGE] {
        if job.stage(stage).is_some() {
            return Err(Error::job(
                job.dir(),
                format!("stage {stage} has not finished; re-run its command to resume it"),
            ));
        }
    }
    Err(Error::job(
        job.dir(),
        "this job has no link graph yet: run `webmill ingest` or `webmill import-graph` first",
    ))
}

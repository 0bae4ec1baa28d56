//! Analyses of a finished job, after the seeds: the bow-tie and SCCs of the
//! link graph (IIR §19.2), capture–recapture estimates of relative collection
//! size (IIR §19.5), Henzinger's index-server layout (§4) and her
//! near-duplicate report.
//!
//! Each analysis is a function of explicit paths (the job files it reads, a
//! temporary directory for its checkpoints), a byte budget and a reporter;
//! the `webmill` commands are thin wrappers over them.

/// A 64-bit mix of `x` (one splitmix64 step from state `x`): the sampling
/// keys of the analyses, uniform and reproducible.
pub(crate) fn mix64(x: u64) -> u64 {
    crate::dedup::minwise::splitmix64(&mut { x })
}

pub mod bowtie;
pub mod checkpoint;
pub mod dedup_report;
pub mod layout;
pub mod nodeset;
pub mod overlap;

//! Progress reporting without terminal code.
//!
//! The engine reports what it is doing through [`Reporter`]; the command line
//! implements it with progress bars, tests with nothing ([`Silent`]).

use std::sync::Arc;

/// What a counter counts, for display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Bytes (shown as MiB/s).
    Bytes,
    /// Records of some kind (shown as records/s).
    Records,
    /// Iterations or steps.
    Steps,
}

/// One long-running task's progress. Finishes when dropped.
pub trait Task: Send + Sync {
    /// Advances the position by `n`.
    fn inc(&self, n: u64);
    /// Sets the position.
    fn set_position(&self, pos: u64);
    /// Sets a short message shown beside the bar.
    fn set_message(&self, msg: String);
    /// Changes the expected total (when a better estimate is known).
    fn set_total(&self, _total: u64) {}
}

/// Receives progress and notes from the engine.
pub trait Reporter: Send + Sync {
    /// Starts a task labelled `label`, with a known `total` if there is one.
    fn task(&self, label: &str, total: Option<u64>, unit: Unit) -> Box<dyn Task>;
    /// A line for the user (a stage summary, a warning).
    fn note(&self, line: &str);
}

/// A reporter that shows nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

struct NoTask;

impl Task for NoTask {
    fn inc(&self, _: u64) {}
    fn set_position(&self, _: u64) {}
    fn set_message(&self, _: String) {}
}

impl Reporter for Silent {
    fn task(&self, _: &str, _: Option<u64>, _: Unit) -> Box<dyn Task> {
        Box::new(NoTask)
    }
    fn note(&self, _: &str) {}
}

/// A shared reporter handle.
pub type SharedReporter = Arc<dyn Reporter>;

/// A reporter that shows nothing, shared.
pub fn silent() -> SharedReporter {
    Arc::new(Silent)
}

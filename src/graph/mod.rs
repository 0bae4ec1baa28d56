//! The link graph: edge files and importing edge lists.

pub mod cc;
pub mod edges;
pub mod import;
pub mod names;
pub mod snap;

pub use edges::{Direction, EdgeFile, EdgeFileStats, EdgeWriter};

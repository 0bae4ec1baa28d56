//! The link graph: edge files, importing edge lists, BVGraph in and out.

pub mod bvgraph;
pub mod cc;
pub mod edges;
pub mod import;
pub mod names;
pub mod snap;

pub use edges::{Direction, EdgeFile, EdgeFileStats, EdgeWriter};

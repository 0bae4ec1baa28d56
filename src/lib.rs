//! webmill: an out-of-core batch engine for web-scale dumps.
//!
//! The library holds the engine: the [container] file format every file uses, the
//! [external sort](sort), [jobs](job) with resumable stages, and the stages
//! themselves ([ingest] with its URL resolver, [graph] import, [rank],
//! [index], [dedup]) and the analyses of a finished job ([analysis], [stats]).
//! It has no terminal code: progress goes
//! through [`progress::Reporter`]. The `webmill` command in `tools/` is a thin
//! layer over it. See `ARCHITECTURE.md` for the map.

pub mod container;
pub mod error;
pub mod mmap;
pub mod par;
pub mod progress;
pub mod publish;
pub mod resources;
pub mod sort;
pub mod units;
pub mod varint;

pub use error::{Error, Result};
pub mod analysis;
pub mod dataset;
pub mod dedup;
pub mod docs;
pub mod docstore;
pub mod graph;
pub mod index;
pub mod ingest;
pub mod input;
pub mod job;
pub mod kinds;
pub mod pipeline;
pub mod plot;
pub mod rank;
pub mod registry;
pub mod search;
pub mod stats;
pub mod tsv;
pub mod url;

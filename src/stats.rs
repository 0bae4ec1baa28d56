//! Job statistics, read from the job's files (the source of truth) and the
//! manifest's figures.

use serde_json::{json, Map, Value};

use crate::docs::DocTable;
use crate::error::Result;
use crate::graph::import::{DOCS_FILE, EDGES_FILE, STAGE, TRANSPOSED_FILE};
use crate::graph::EdgeFile;
use crate::job::Job;

/// Figures of a job's graph: `nodes`, `arcs`, `crawled`, `dangling`,
/// `edges_bytes` (bytes of the forward edge file), `transposed_bytes`,
/// `bits_per_arc`, degree maxima, and what the import counted (self-loops,
/// duplicates, skipped lines).
pub fn graph_stats(job: &Job) -> Result<Map<String, Value>> {
    let rec = job.finished_stage(STAGE)?;
    let docs = DocTable::open(job.path(DOCS_FILE))?;
    let fwd = EdgeFile::open(job.path(EDGES_FILE))?;
    let rev = EdgeFile::open(job.path(TRANSPOSED_FILE))?;
    let (f, r) = (fwd.stats(), rev.stats());
    let mut m = Map::new();
    m.insert("nodes".into(), json!(docs.len()));
    m.insert("arcs".into(), json!(f.arcs));
    m.insert("crawled".into(), json!(docs.crawled()));
    m.insert("dangling".into(), json!(f.nodes - f.lists));
    m.insert("edges_bytes".into(), json!(f.bytes));
    m.insert("transposed_bytes".into(), json!(r.bytes));
    let bpa = if f.arcs > 0 {
        f.bytes as f64 * 8.0 / f.arcs as f64
    } else {
        0.0
    };
    m.insert(
        "bits_per_arc".into(),
        json!((bpa * 1000.0).round() / 1000.0),
    );
    m.insert("max_out_degree".into(), json!(f.max_degree));
    m.insert("max_in_degree".into(), json!(r.max_degree));
    m.insert("no_in_links".into(), json!(r.nodes - r.lists));
    for key in [
        "self_loops",
        "duplicate_arcs",
        "input_arcs",
        "skipped",
        "input_bytes",
    ] {
        if let Some(v) = rec.figures.extra.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    m.insert("import_seconds".into(), json!(rec.figures.seconds));
    m.insert("import_peak_rss".into(), json!(rec.figures.peak_rss));
    Ok(m)
}

//! Job statistics, read from the job's files (the source of truth) and the
//! manifest's figures.

use serde_json::{json, Map, Value};

use crate::docs::DocTable;
use crate::error::Result;
use crate::graph::import::{DOCS_FILE, EDGES_FILE, TRANSPOSED_FILE};
use crate::graph::EdgeFile;
use crate::job::Job;

/// Figures of a job's graph: `nodes`, `arcs`, `crawled`, `dangling`,
/// `edges_bytes` (bytes of the forward edge file), `transposed_bytes`,
/// `bits_per_arc`, degree maxima, and what the import counted (self-loops,
/// duplicates, skipped lines).
pub fn graph_stats(job: &Job) -> Result<Map<String, Value>> {
    let rec = job.finished_stage(crate::graph::graph_stage(job)?)?;
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
        "hosts",
        "pages",
        "links",
        "duplicate_captures",
        "anchors",
    ] {
        if let Some(v) = rec.figures.extra.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    let graph_stage = crate::graph::graph_stage(job)?;
    m.insert("graph_stage".into(), json!(graph_stage));
    m.insert(format!("{graph_stage}_seconds"), json!(rec.figures.seconds));
    m.insert(
        format!("{graph_stage}_peak_rss"),
        json!(rec.figures.peak_rss),
    );
    if let Some(ingest) = job.stage(crate::ingest::STAGE) {
        let f = &ingest.figures;
        for key in [
            "skipped",
            "html_bytes",
            "input_bytes",
            "not_html",
            "error_status",
            "redirects",
            "dropped_links",
            "records",
            "files",
            "other_files",
        ] {
            if let Some(v) = f.extra.get(key) {
                m.insert(key.into(), v.clone());
            }
        }
        m.insert("ingest_seconds".into(), json!(f.seconds));
        m.insert("ingest_peak_rss".into(), json!(f.peak_rss));
    }
    Ok(m)
}

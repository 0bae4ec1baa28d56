//! Stages registered once: a stage added in one file (here, [`PageCount`])
//! and one registration line (`Registry::standard().with(PageCount)`) runs in
//! `webmill run`'s pipeline, in the order its declared inputs give, and
//! appears in the job summary and in the job's statistics, with nothing else
//! touched.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::json;
use webmill::container::pagefile::PageFile;
use webmill::container::ContainerWriter;
use webmill::ingest::records::PAGES;
use webmill::ingest::{IngestOptions, InputSpec};
use webmill::job::{Amount, Figure, Job, JobFile, JobView, Settings, Stage, StageContext, StageId};
use webmill::pipeline::{JobSummary, Pipeline, PipelineOptions, Source, Unobserved};
use webmill::rank::PageRankOptions;
use webmill::registry::Registry;

/// The toy stage: counts the ingested pages into a one-block container.
struct PageCount;

const COUNTS: JobFile = JobFile::Custom {
    stage: "page-count",
    name: "page-count.wm",
};

#[derive(Debug, Serialize, Deserialize)]
struct Counted {
    pages: u64,
}

impl Stage for PageCount {
    type Params = ();
    type Figures = Counted;

    fn id(&self) -> StageId {
        StageId::Custom("page-count")
    }
    fn params(&self) -> webmill::Result<()> {
        Ok(())
    }
    fn inputs(&self) -> Vec<JobFile> {
        vec![JobFile::Pages]
    }
    fn outputs(&self) -> Vec<JobFile> {
        vec![COUNTS]
    }
    fn records(f: &Counted) -> u64 {
        f.pages
    }
    fn headline(&self, f: &Counted) -> String {
        format!("{} pages counted", f.pages)
    }
    fn stats(&self, f: &Counted) -> Vec<Figure> {
        vec![Figure::new(
            "Pages",
            "counted_pages",
            "pages counted",
            Amount::Count(f.pages),
        )]
    }
    fn run(&self, cx: &mut StageContext) -> webmill::Result<Counted> {
        let pages = PageFile::open(cx.input(JobFile::Pages)?, &PAGES)?.records();
        let w = ContainerWriter::create(cx.output(COUNTS)?, "pcount", 1, &json!({}))?;
        w.finish(&json!({ "pages": pages }))?;
        Ok(Counted { pages })
    }
}

fn write_site(dir: &Path, pages: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..pages {
        let next = (i + 1) % pages;
        let html = format!(
            "<title>page {i}</title><p>words of page {i}</p><a href=\"p{next}.html\">next</a>"
        );
        std::fs::write(dir.join(format!("p{i}.html")), html).unwrap();
    }
}

#[test]
fn a_registered_stage_runs_in_the_pipeline_and_shows_in_summary_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    write_site(&site, 7);
    let opts = PipelineOptions {
        source: Source::Web(IngestOptions {
            inputs: vec![InputSpec::parse(
                &format!("http://site.example/={}", site.display()),
                None,
            )
            .unwrap()],
            ..IngestOptions::default()
        }),
        pagerank: PageRankOptions::default(),
        index: None,
        dedup: None,
    };
    // The one registration line.
    let registry = Registry::standard().with(PageCount);

    let pipeline = Pipeline::with_registry(&opts, 32 << 20, &registry).unwrap();
    let stages = pipeline.stages();
    let at = |id: StageId| stages.iter().position(|&s| s == id).unwrap();
    assert!(
        at(StageId::Custom("page-count")) > at(StageId::Ingest),
        "{stages:?}"
    );
    let job_dir = dir.path().join("job");
    let mut job = Job::open(&job_dir, true).unwrap();
    pipeline
        .run(&mut job, &Settings::new(32 << 20), &mut Unobserved)
        .unwrap();
    drop(job);

    let view = JobView::open(&job_dir).unwrap();
    assert!(view.has(COUNTS));
    let summary = JobSummary::with_registry(&view, 3, &registry).unwrap();
    let line = summary
        .stages
        .iter()
        .find(|l| l.stage == "page-count")
        .expect("the custom stage in the summary");
    assert_eq!(line.headline, "7 pages counted");
    // The built-in stages are there too, in pipeline order.
    let names: Vec<&str> = summary.stages.iter().map(|l| l.stage.as_str()).collect();
    assert_eq!(names, ["ingest", "resolve", "pagerank", "page-count"]);

    let figures = webmill::stats::job_stats(&view, &registry).unwrap();
    let get = |k: &str| {
        figures
            .iter()
            .find(|f| f.key == k)
            .map(|f| f.amount.clone())
    };
    assert_eq!(get("counted_pages"), Some(Amount::Count(7)));
    assert!(matches!(
        get("page-count_seconds"),
        Some(Amount::Seconds(_))
    ));
    // The standard registry does not know it: nothing of it is shown.
    let plain = webmill::stats::graph_stats(&view).unwrap();
    assert!(plain.iter().all(|f| !f.key.contains("count")));
}

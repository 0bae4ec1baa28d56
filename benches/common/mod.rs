//! What the index and search benches share: finding a Debian documentation
//! site on disk and making a job of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use webmill::job::{Job, Settings};

/// The site's HTML directory, under `$WEBMILL_CORPUS`, `/work/corpus`,
/// `/tmp/corpus` or `target/corpus`, if it is anywhere there.
pub fn site_html(site: &str) -> Option<PathBuf> {
    let mut roots: Vec<PathBuf> = std::env::var_os("WEBMILL_CORPUS")
        .map(|r| vec![PathBuf::from(r)])
        .unwrap_or_default();
    roots.extend(
        ["/work/corpus", "/tmp/corpus", "target/corpus"]
            .iter()
            .map(PathBuf::from),
    );
    roots.iter().find_map(|r| {
        std::fs::read_dir(r.join(site).join("usr/share/doc"))
            .ok()?
            .flatten()
            .map(|e| e.path().join("html"))
            .find(|p| p.is_dir())
    })
}

/// The job at `dir` with the site ingested (as `http://SITE.example/`),
/// resolved and ranked; stages already done are skipped.
pub fn ranked_site_job(dir: &Path, site: &str, html: &Path) -> Job {
    let mut job = Job::open(dir, true).expect("job");
    let s = Settings::new(1 << 30);
    let opts = webmill::ingest::IngestOptions {
        inputs: vec![webmill::ingest::InputSpec::parse(
            &format!("http://{site}.example/={}", html.display()),
            None,
        )
        .expect("input")],
        ..Default::default()
    };
    webmill::ingest::ingest(&mut job, &opts, &s).expect("ingest");
    webmill::ingest::resolve::resolve(&mut job, &s).expect("resolve");
    webmill::rank::pagerank(&mut job, &webmill::rank::PageRankOptions::default(), &s)
        .expect("pagerank");
    job
}

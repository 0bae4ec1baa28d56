//! Issue 23's per-task ingest: each unit ingested alone by `ingest_unit`
//! (as a Spark task does, in any order, one of them twice), then joined by
//! the stage with `segments_from`, gives byte for byte the job the stage
//! gives reading everything itself.

mod common;

use std::path::Path;

use common::*;
use webmill::ingest::resolve::resolve;
use webmill::ingest::{ingest, ingest_unit, plan_units, IngestOptions, InputSpec};
use webmill::job::{Job, Settings};

fn inputs(data: &Path, site: &Path) -> Vec<InputSpec> {
    let mut v: Vec<InputSpec> = ["iana.warc.gz", "dupes.warc.gz", "example.warc"]
        .iter()
        .map(|f| InputSpec::parse(&data.join("warc").join(f).display().to_string(), None).unwrap())
        .collect();
    v.push(InputSpec::parse(&format!("http://site.example/={}", site.display()), None).unwrap());
    v
}

fn whole(job: &Path, opts: &IngestOptions, s: &Settings) {
    let mut job = Job::open(job, true).unwrap();
    assert!(ingest(&mut job, opts, s).unwrap().ran());
    resolve(&mut job, s).unwrap();
}

#[test]
fn units_ingested_apart_and_joined_are_the_whole_ingest() {
    let Some(data) = data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    write_site(&site, 90, 5);
    let opts = IngestOptions {
        inputs: inputs(&data, &site),
        segment_records: 25,
        ..IngestOptions::default()
    };
    let s = Settings::new(32 << 20);

    let one = dir.path().join("one");
    whole(&one, &opts, &s);

    let plan = plan_units(&opts).unwrap();
    // 3 archives, 90 pages of the site in runs of 25 (plus its other files).
    assert!(plan.len() >= 6, "{plan:?}");
    assert_eq!(
        plan.iter().map(|u| u.unit).collect::<Vec<_>>(),
        (0..plan.len()).collect::<Vec<_>>()
    );
    let segs = dir.path().join("segments");
    // Tasks finish in any order; a retried task finds the unit published.
    let mut pages = 0;
    for u in plan.iter().rev() {
        let r = ingest_unit(&opts, &s, u.unit, &segs).unwrap();
        assert!(r.published && r.segments >= 1, "{r:?}");
        pages += r.counts.pages;
    }
    let again = ingest_unit(&opts, &s, 0, &segs).unwrap();
    assert!(!again.published);
    assert!(std::fs::read_dir(&segs)
        .unwrap()
        .flatten()
        .all(|e| !e.file_name().to_string_lossy().starts_with(".attempt")));
    assert!(ingest_unit(&opts, &s, plan.len(), &segs).is_err());

    let joined = dir.path().join("joined");
    let from = IngestOptions {
        segments_from: vec![segs.clone()],
        ..opts.clone()
    };
    whole(&joined, &from, &s);
    let (a, b) = (job_files(&one), job_files(&joined));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, x) in &a {
        assert!(x == &b[name], "{name} differs");
    }
    assert!(pages > 90, "{pages}");

    // A unit whose published segments were cut short (its last segment
    // lost) is finished by the stage itself: same bytes again.
    let unit0 = segs.join("unit-000000");
    let mut last: Vec<_> = std::fs::read_dir(&unit0)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".pages.wm"))
        .collect();
    last.sort();
    assert!(last.len() > 1, "iana.warc.gz makes several segments of 25");
    std::fs::remove_file(last.pop().unwrap()).unwrap();
    let partly = dir.path().join("partly");
    whole(&partly, &from, &s);
    assert_eq!(job_files(&partly), a);
}

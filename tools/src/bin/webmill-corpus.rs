//! `webmill-corpus`: a synthetic ingested job of generated pages with planted
//! near-duplicate clusters, for the near-duplicate benchmark at sizes no real
//! corpus here reaches (10M docs).
//!
//! It writes what `webmill dedup` and `webmill export text` read — `text.wm`
//! (as stage `ingest`), `pagedoc.wm`, `docs.wm` and an edge file without arcs
//! (as stage `resolve`, so that `webmill pagerank`, which `dedup` needs,
//! runs) — directly with the library's writers, skipping HTML: no
//! `repository.wm`, links or anchors. Plus `planted.tsv`, the truth:
//! `copy<TAB>source<TAB>edits`.
//!
//! # The model
//!
//! Doc `d` is page `d`, docID `d`, URL `http://hH.example/pD.html`, on hosts
//! of `--host-docs` consecutive docs; its words and whether it copies another
//! doc are the generators' text model (`tools/src/gen/text.rs`: Zipf words,
//! planted near-duplicates without chains).

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use rayon::prelude::*;
use serde_json::json;
use webmill::container::pagefile::PageFileWriter;
use webmill::docs::{Doc, DocWriter};
use webmill::graph::{Direction, EdgeWriter};
use webmill::ingest::records::{encode_pagedoc, encode_text, PAGEDOC, TEXT};
use webmill::job::{Begun, Job, JobFile, Settings, Stage, StageContext, StageId};

#[path = "../gen/text.rs"]
mod text;
use text::{TextArgs, TextModel};

/// Generate a synthetic ingested job with planted near-duplicate clusters.
#[derive(Parser, Debug, Clone)]
#[command(name = "webmill-corpus", version)]
struct Args {
    /// The job directory to create (must not hold a job yet, unless --force)
    job: PathBuf,
    /// Number of docs
    #[arg(long, default_value_t = 10_000_000)]
    docs: u64,
    #[command(flatten)]
    text: TextArgs,
    /// Docs per host
    #[arg(long, default_value_t = 1000)]
    host_docs: u64,
    /// Seed
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Overwrite an existing job's stages
    #[arg(long)]
    force: bool,
}

/// A synthetic stage: what a real stage would publish, written by this tool.
struct Synthetic {
    id: StageId,
    params: serde_json::Value,
    outputs: Vec<JobFile>,
}

#[derive(serde::Serialize, serde::Deserialize, Debug)]
struct SyntheticFigures {
    docs: u64,
}

impl Stage for Synthetic {
    type Params = serde_json::Value;
    type Figures = SyntheticFigures;
    fn id(&self) -> StageId {
        self.id
    }
    fn params(&self) -> webmill::Result<serde_json::Value> {
        Ok(self.params.clone())
    }
    fn inputs(&self) -> Vec<JobFile> {
        Vec::new()
    }
    fn outputs(&self) -> Vec<JobFile> {
        self.outputs.clone()
    }
    fn records(f: &SyntheticFigures) -> u64 {
        f.docs
    }
    fn run(&self, _: &mut StageContext) -> webmill::Result<SyntheticFigures> {
        Err(webmill::Error::internal(
            "synthetic stages are written by webmill-corpus",
        ))
    }
}

fn begin(job: &mut Job, stage: &Synthetic, settings: &Settings) -> anyhow::Result<StageContext> {
    match job.begin(stage, settings)? {
        Begun::Run(cx) => Ok(cx),
        Begun::Skipped(_) => anyhow::bail!(
            "{} already holds this corpus; --force makes it again",
            job.dir().display()
        ),
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let n = args.docs;
    let model = TextModel::new(args.seed, n, &args.text);
    let mut job = Job::open(&args.job, true)?;
    let params = json!({
        "synthetic": "webmill-corpus", "docs": n, "words": [args.text.words.0, args.text.words.1],
        "vocab": args.text.vocab, "dup_fraction": args.text.dup_fraction,
        "max_edits_pct": args.text.max_edits_pct, "host_docs": args.host_docs, "seed": args.seed,
    });
    let settings = Settings::new(1 << 30).forced(args.force);
    let ingest = Synthetic {
        id: StageId::Ingest,
        params: params.clone(),
        outputs: vec![JobFile::Text],
    };
    let resolve = Synthetic {
        id: StageId::Resolve,
        params,
        outputs: vec![
            JobFile::PageDoc,
            JobFile::Docs,
            JobFile::Edges,
            JobFile::EdgesT,
        ],
    };
    let ingest_cx = begin(&mut job, &ingest, &settings)?;
    let resolve_cx = begin(&mut job, &resolve, &settings)?;
    let mut text = PageFileWriter::create(ingest_cx.output(JobFile::Text)?, &TEXT, 256 << 10, 3)?;
    let mut pagedoc =
        PageFileWriter::create(resolve_cx.output(JobFile::PageDoc)?, &PAGEDOC, 256 << 10, 3)?;
    let mut docs = DocWriter::create(resolve_cx.output(JobFile::Docs)?, "webmill-corpus")?;
    let planted_path = job.dir().join("planted.tsv");
    let mut planted = BufWriter::new(
        std::fs::File::create(&planted_path).with_context(|| planted_path.display().to_string())?,
    );
    writeln!(planted, "copy\tsource\tedits")?;
    const BATCH: u64 = 1 << 16;
    let (mut copies, mut words_total, mut bytes_total) = (0u64, 0u64, 0u64);
    let mut buf = Vec::new();
    let mut start = 0;
    while start < n {
        let end = (start + BATCH).min(n);
        let batch: Vec<(String, Option<(u64, u64)>)> = (start..end)
            .into_par_iter()
            .map(|d| {
                let (ids, copy) = model.page(d);
                let mut s = String::with_capacity(ids.len() * 6);
                for (i, &w) in ids.iter().enumerate() {
                    if i > 0 {
                        s.push(' ');
                    }
                    s.push_str(&model.spelled[w as usize]);
                }
                (s, copy)
            })
            .collect();
        for (d, (words, copy)) in (start..end).zip(batch) {
            let nw = words.split(' ').count();
            words_total += nw as u64;
            bytes_total += words.len() as u64;
            buf.clear();
            encode_text(&words, &vec![0u8; nw], &mut buf);
            text.push(d, &buf)?;
            buf.clear();
            encode_pagedoc(d, true, &mut buf);
            pagedoc.push(d, &buf)?;
            let host = d / args.host_docs.max(1);
            docs.push(&Doc {
                url: format!("http://h{host}.example/p{d}.html"),
                crawled: true,
                bytes: words.len() as u64,
                title: String::new(),
                page: Some(d),
                host,
            })?;
            if let Some((s, m)) = copy {
                copies += 1;
                writeln!(planted, "{d}\t{s}\t{m}")?;
            }
        }
        start = end;
        eprint!("\rwebmill-corpus: {end} of {n} docs");
    }
    eprintln!();
    planted.flush()?;
    text.finish(&json!({"pages": n}))?;
    job.publish(&ingest, ingest_cx, SyntheticFigures { docs: n })?;
    pagedoc.finish(&json!({"pages": n}))?;
    docs.finish()?;
    for (file, direction) in [
        (JobFile::Edges, Direction::Forward),
        (JobFile::EdgesT, Direction::Transposed),
    ] {
        EdgeWriter::create(resolve_cx.output(file)?, direction, n)?.finish()?;
    }
    job.publish(&resolve, resolve_cx, SyntheticFigures { docs: n })?;
    eprintln!(
        "webmill-corpus: {n} docs, {copies} planted copies, {words_total} words ({bytes_total} bytes of text) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("webmill-corpus: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(extra: &[&str]) -> TextModel {
        let mut v = vec!["webmill-corpus", "job"];
        v.extend_from_slice(extra);
        let a = Args::parse_from(v);
        TextModel::new(a.seed, a.docs, &a.text)
    }

    #[test]
    fn copies_follow_their_source_and_the_flags() {
        let m = model(&["--docs", "20000", "--dup-fraction", "0.2"]);
        let mut copies = 0;
        for d in 0..20000 {
            let (page, copy) = m.page(d);
            assert!((50..=150).contains(&page.len()));
            if let Some((s, edits)) = copy {
                copies += 1;
                let base = m.base(s);
                assert_eq!(base.len(), page.len());
                let diff = base.iter().zip(&page).filter(|(a, b)| a != b).count() as u64;
                assert!(diff <= edits && edits <= page.len() as u64 / 10);
                assert!(m.source(s).is_none(), "no chains");
            }
        }
        // 0.2 · (1 − 0.2) = 16% of the docs.
        assert!((2800..3600).contains(&copies), "{copies}");
        assert_eq!(m.page(77), m.page(77));
        assert_eq!(m.spelled[0], "aa");
        assert_eq!(m.spelled[27], "bb");
    }
}

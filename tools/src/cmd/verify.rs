//! `webmill verify`: check every checksum of a file or of a job's files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use webmill::container::Container;
use webmill::error::IoContext;
use webmill::job::Output;
use webmill::kinds::verify_file;

use super::thousands;
use crate::Global;

/// Check every byte of a webmill file, or of a job: its manifest's own
/// checksum, then every file it lists (header, footer, block checksums,
/// padding, each kind's record invariants) against the records, bytes and
/// checksum the manifest holds for it. Exits non-zero naming each bad file
/// and block; with -q prints only what failed.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A webmill file, or a job directory
    target: PathBuf,
}

fn line(c: &Container) -> String {
    format!(
        "ok  {} ({}, {} records, {} blocks)",
        c.path().display(),
        c.kind(),
        thousands(c.records()),
        c.blocks().len()
    )
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let say = |s: String| {
        if !g.quiet() {
            println!("{s}");
        }
    };
    if !args.target.is_dir() {
        let c = verify_file(&args.target)?;
        say(line(&c));
        return Ok(ExitCode::SUCCESS);
    }
    // Opening the view checks the manifest's own checksum.
    let job = g.open_view(&args.target)?;
    say(format!(
        "ok  {} (manifest, generation {})",
        job.dir().join(webmill::job::MANIFEST).display(),
        job.generation()
    ));
    let (mut failures, mut checked) = (0, 0);
    for (stage, p) in job.manifest().finished_in_order() {
        for out in &p.outputs {
            checked += 1;
            let path = job.dir().join(&out.path);
            match verify_output(&path, out) {
                Ok(line) => say(line),
                Err(e) => {
                    failures += 1;
                    eprintln!("FAILED  {} (stage {stage}): {e}", path.display());
                }
            }
        }
    }
    // A sharded index (`shard index`): how its files agree, then each file.
    match webmill::index::shards::ShardSet::find(job.dir()) {
        Ok(None) => {}
        Ok(Some(set)) => {
            checked += 1;
            match set.verify_agreement() {
                Ok(()) => say(format!(
                    "ok  {} (sharded index: {} shards of {} documents agree)",
                    set.dir().display(),
                    set.len(),
                    thousands(set.params().docs)
                )),
                Err(e) => {
                    failures += 1;
                    eprintln!("FAILED  {}: {e}", set.dir().display());
                }
            }
            for (path, _) in set.files() {
                checked += 1;
                match verify_file(&path) {
                    Ok(c) => say(line(&c)),
                    Err(e) => {
                        failures += 1;
                        eprintln!("FAILED  {} (sharded index): {e}", path.display());
                    }
                }
            }
        }
        Err(e) => {
            checked += 1;
            failures += 1;
            eprintln!("FAILED  {}: {e}", job.dir().join("shards").display());
        }
    }
    if checked == 0 {
        return Err(webmill::Error::job(
            &args.target,
            "no stage has published anything yet: nothing to verify",
        )
        .into());
    }
    if failures > 0 {
        return Err(webmill::Error::damaged(
            Some(&args.target),
            format!("{failures} of {checked} file(s) failed verification (each named above)"),
        )
        .into());
    }
    Ok(ExitCode::SUCCESS)
}

/// Verifies one published output against its manifest entry.
fn verify_output(path: &Path, out: &Output) -> webmill::Result<String> {
    let mismatch = |records: u64, bytes: u64, sum: &str| {
        let mut diffs = Vec::new();
        if records != out.records {
            diffs.push(format!(
                "{} records where the file has {records}",
                out.records
            ));
        }
        if bytes != out.bytes {
            diffs.push(format!("{} bytes where the file has {bytes}", out.bytes));
        }
        if sum != out.checksum {
            diffs.push(format!(
                "checksum {} where the file has {sum}",
                out.checksum
            ));
        }
        if diffs.is_empty() {
            return Ok(());
        }
        Err(webmill::Error::damaged(
            Some(path),
            format!(
                "differs from job.json: the manifest records {}; the file was replaced or the job is damaged (run the stage again with --force)",
                diffs.join(", ")
            ),
        ))
    };
    if out.kind == "svg" {
        let bytes = std::fs::read(path).at(path)?;
        let sum = format!("{:08x}", crc32c::crc32c(&bytes));
        mismatch(0, bytes.len() as u64, &sum)?;
        return Ok(format!("ok  {} (plot)", path.display()));
    }
    let c = verify_file(path)?;
    if c.kind() != out.kind {
        return Err(webmill::Error::damaged(
            Some(path),
            format!(
                "differs from job.json: the manifest records a {} file, this is a {} file",
                out.kind,
                c.kind()
            ),
        ));
    }
    mismatch(c.records(), c.size(), &format!("{:08x}", c.checksum()))?;
    Ok(line(&c))
}

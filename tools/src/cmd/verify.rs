//! `webmill verify`: check every checksum of a file or of a job's files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use webmill::container::Container;
use webmill::error::IoContext;
use webmill::job::Output;
use webmill::kinds::verify_file;

use super::thousands;
use crate::Global;

/// Check every byte of a webmill file, or of every file a job lists: header,
/// footer, block checksums, padding, and each kind's record invariants. Exits
/// non-zero naming the first bad file and block.
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
    if !args.target.is_dir() {
        let c = verify_file(&args.target)?;
        println!("{}", line(&c));
        return Ok(ExitCode::SUCCESS);
    }
    let job = g.open_view(&args.target)?;
    let (mut failures, mut checked) = (0, 0);
    for (stage, p) in job.manifest().finished_in_order() {
        for out in &p.outputs {
            checked += 1;
            let path = job.dir().join(&out.path);
            match verify_output(&path, out) {
                Ok(line) => println!("{line}"),
                Err(e) => {
                    failures += 1;
                    eprintln!("FAILED  {} (stage {stage}): {e}", path.display());
                }
            }
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
        return Err(webmill::Error::corrupt(
            &args.target,
            "job outputs",
            0,
            format!("{failures} of {checked} file(s) failed verification"),
        )
        .into());
    }
    Ok(ExitCode::SUCCESS)
}

/// Verifies one published output against its manifest entry.
fn verify_output(path: &Path, out: &Output) -> webmill::Result<String> {
    let mismatch = |bytes: u64, sum: &str| {
        webmill::Error::corrupt(
            path,
            "file",
            0,
            format!(
                "the manifest records {} bytes with checksum {}, the file has {bytes} bytes with checksum {sum}",
                out.bytes, out.checksum
            ),
        )
    };
    if out.kind == "svg" {
        let bytes = std::fs::read(path).at(path)?;
        let sum = format!("{:08x}", crc32c::crc32c(&bytes));
        if bytes.len() as u64 != out.bytes || sum != out.checksum {
            return Err(mismatch(bytes.len() as u64, &sum));
        }
        return Ok(format!("ok  {} (plot)", path.display()));
    }
    let c = verify_file(path)?;
    let sum = format!("{:08x}", c.checksum());
    if c.size() != out.bytes || sum != out.checksum {
        return Err(mismatch(c.size(), &sum));
    }
    Ok(line(&c))
}

//! `webmill verify`: check every checksum of a file or of a job's files.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::container::Container;
use webmill::job::Job;
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
    let job: Job = g.open_job(&args.target, false)?;
    let mut failures = 0;
    for (stage, rec) in &job.manifest().stages {
        for out in &rec.outputs {
            let path = job.path(&out.path);
            let result = verify_file(&path).and_then(|c| {
                let sum = format!("{:08x}", c.checksum());
                if c.size() != out.bytes || sum != out.checksum {
                    return Err(webmill::Error::corrupt(
                        &path,
                        "file",
                        0,
                        format!(
                            "the manifest records {} bytes with checksum {}, the file has {} bytes with checksum {sum}",
                            out.bytes, out.checksum, c.size()
                        ),
                    ));
                }
                Ok(c)
            });
            match result {
                Ok(c) => println!("{}", line(&c)),
                Err(e) => {
                    failures += 1;
                    eprintln!("FAILED  {} (stage {stage}): {e}", path.display());
                }
            }
        }
    }
    if failures > 0 {
        anyhow::bail!(
            "{failures} file(s) of job {} failed verification",
            args.target.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

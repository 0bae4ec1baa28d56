//! `webmill dump`: a file's records as TSV.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{flush, stdout};
use crate::Global;

/// Print the records of a webmill file as TSV (edges: node neighbour; docs:
/// docid url crawled bytes title; sort runs: their fields).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A webmill file
    file: PathBuf,
}

pub fn run(args: Args, _g: &Global) -> anyhow::Result<ExitCode> {
    let mut out = stdout();
    webmill::kinds::dump_file(&args.file, &mut out)?;
    flush(out)?;
    Ok(ExitCode::SUCCESS)
}

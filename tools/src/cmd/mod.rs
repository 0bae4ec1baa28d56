//! One module per subcommand: a clap `Args` struct and `run(args, global)`.

pub mod bowtie;
pub mod dedup;
pub mod dedup_eval;
pub mod dedup_report;
pub mod dump;
pub mod export;
pub mod import_graph;
pub mod index;
pub mod ingest;
pub mod inspect;
pub mod layout;
pub mod overlap;
pub mod pagerank;
pub mod run;
pub mod search;
pub mod serve;
pub mod shard;
pub mod stats;
pub mod top;
pub mod verify;

use std::io::{self, Write};

/// `true` if the error is a closed stdout (e.g. `webmill export … | head`).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// The error's message: a webmill error's own (which names the file, block
/// or parameter), with any context the command line added before it, each
/// cause once: an OS error that a message already quotes (`PATH: No such
/// file or directory`) is not repeated as its source.
pub fn describe_error(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        let bare = match text.rfind(" (os error ") {
            Some(i) if text.ends_with(')') => &text[..i],
            _ => text.as_str(),
        };
        if out.contains(bare) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(bare);
    }
    out
}

/// The process exit code of an error: its class's (see `webmill --help`), 1
/// for errors that did not come from the engine.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    e.chain()
        .find_map(|c| c.downcast_ref::<webmill::Error>())
        .map_or(1, |w| w.class().exit_code())
}

/// The exit codes, for the end of `webmill --help`.
pub fn exit_codes_help() -> String {
    let mut s = String::from("Exit codes:\n  0   success\n  1   any other failure\n");
    for c in webmill::error::ErrorClass::ALL {
        s.push_str(&format!("  {:<3} {}\n", c.exit_code(), c.describe()));
    }
    s
}

/// A buffered stdout for exports.
pub fn stdout() -> io::BufWriter<io::StdoutLock<'static>> {
    io::BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

/// Flushes stdout, mapping the error.
pub fn flush(mut out: impl Write) -> anyhow::Result<()> {
    out.flush()?;
    Ok(())
}

/// The name of a job directory, for plot titles.
pub fn job_name(dir: &std::path::Path) -> String {
    dir.file_name()
        .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into())
}

/// Writes an SVG plot to `path` (whole or not at all) and says so unless
/// `quiet`.
pub fn write_plot(path: &std::path::Path, svg: String, quiet: bool) -> anyhow::Result<()> {
    let bytes = crate::out_file::OutFile::write(path, svg.as_bytes())?;
    crate::out_file::say_written(path, bytes, "SVG plot", quiet);
    Ok(())
}

pub use webmill::units::{about_within, thousands};

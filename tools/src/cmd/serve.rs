//! `webmill serve`: a search page for a job in the browser.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::Global;

/// Serve a job as a local web page: search it, open a document's page (its
/// links in and out with their anchor text, PageRank, near-duplicates and
/// cached text), and see its figures and plots.
///
/// Pages: / (the query box), /search?q=WORDS&page=N, /doc/DOCID,
/// /doc/DOCID/raw, /stats. The job is read without its lock, so a job
/// another command is writing, or a read-only copy, can be served. Listens
/// on 127.0.0.1 only unless --bind says otherwise; stop it with Ctrl-C.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Job directory (searching needs `webmill index`; documents and stats
    /// are served without it)
    job: PathBuf,
    /// TCP port (0: any free port, printed at start)
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address to listen on; 0.0.0.0 serves every network the machine is on
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    bind: IpAddr,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    let addr = SocketAddr::new(args.bind, args.port);
    let job = args.job.clone();
    crate::serve::serve(&args.job, addr, g.threads_opt(), |local| {
        // The first line of stdout is the address, for people and scripts.
        println!("serving {} at http://{local}/", job.display());
        let _ = std::io::stdout().flush();
        if !g.quiet() {
            eprintln!("Ctrl-C stops the server.");
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

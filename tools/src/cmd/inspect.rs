//! `webmill inspect`: what a file or a job holds.

use std::path::PathBuf;
use std::process::ExitCode;

use webmill::container::Container;
use webmill::index::sizes::IndexBytes;
use webmill::job::StageId;
use webmill::resources::format_bytes;

use super::thousands;
use crate::Global;

/// Show what a webmill file is (kind, version, parameters, counts, blocks,
/// compression), or a job's stages and files.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A webmill file, or a job directory
    target: PathBuf,
    /// List every block (offset, sizes, records, first key)
    #[arg(long)]
    blocks: bool,
    /// Of a job (or its `index/` directory): where the index's bytes go,
    /// part by part — the lexicon's parts and each field of the barrels'
    /// postings blocks (reads and checks every block)
    #[arg(long)]
    bytes: bool,
}

fn show_key(key: &[u8]) -> String {
    if let Ok(b) = <[u8; 8]>::try_from(key) {
        return u64::from_be_bytes(b).to_string();
    }
    key.iter().map(|b| format!("{b:02x}")).collect()
}

fn inspect_file(path: &std::path::Path, all_blocks: bool) -> anyhow::Result<()> {
    let c = Container::open(path)?;
    let stored: u64 = c.blocks().iter().map(|b| b.stored).sum();
    println!("file        {}", path.display());
    println!("kind        {} (format version {})", c.kind(), c.version());
    println!(
        "size        {} ({} bytes)",
        format_bytes(c.size()),
        thousands(c.size())
    );
    println!("params      {}", c.params());
    println!("meta        {}", c.meta());
    println!("records     {}", thousands(c.records()));
    println!("blocks      {}", thousands(c.blocks().len() as u64));
    println!(
        "payload     {} raw, {} stored{}",
        format_bytes(c.raw_bytes()),
        format_bytes(stored),
        if stored > 0 {
            format!(" (ratio {:.2})", c.raw_bytes() as f64 / stored as f64)
        } else {
            String::new()
        }
    );
    if c.records() > 0 {
        println!(
            "per record  {:.2} bytes on disk ({:.2} bits)",
            c.size() as f64 / c.records() as f64,
            c.size() as f64 * 8.0 / c.records() as f64
        );
    }
    println!(
        "checksum    {:08x} (content crc32c: header and footer crcs)",
        c.checksum()
    );
    let mut sizes: Vec<u64> = c.blocks().iter().map(|b| b.stored).collect();
    sizes.sort_unstable();
    if !sizes.is_empty() {
        println!(
            "block sizes min {} / median {} / max {} stored",
            format_bytes(sizes[0]),
            format_bytes(sizes[sizes.len() / 2]),
            format_bytes(sizes[sizes.len() - 1])
        );
    }
    let n = c.blocks().len();
    for (i, b) in c.blocks().iter().enumerate() {
        if all_blocks || i < 3 || i + 1 == n {
            println!(
                "  block {i:>6}  offset {:>12}  stored {:>9}  raw {:>9}  records {:>9}  first key {}",
                b.offset,
                b.stored,
                b.raw,
                b.records,
                show_key(&b.key)
            );
        } else if i == 3 {
            println!("  … ({} more; --blocks lists all)", n - 4);
        }
    }
    Ok(())
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    if args.bytes {
        let dir = if args.target.join("lexicon.wm").exists() {
            args.target.clone()
        } else {
            args.target.join("index")
        };
        if !dir.join("lexicon.wm").exists() {
            anyhow::bail!(
                "{}: --bytes needs a job with an index or an index directory (no lexicon.wm in {})",
                args.target.display(),
                dir.display()
            );
        }
        print!("{}", IndexBytes::of_dir(&dir)?.table());
        return Ok(ExitCode::SUCCESS);
    }
    if !args.target.is_dir() {
        inspect_file(&args.target, args.blocks)?;
        return Ok(ExitCode::SUCCESS);
    }
    let job = g.open_view(&args.target)?;
    println!("job {}", args.target.display());
    let mut stages: Vec<(&String, &webmill::job::StageRecord)> =
        job.manifest().stages.iter().collect();
    stages.sort_by_key(|(n, _)| StageId::parse(n).map_or(usize::MAX, StageId::order));
    for (name, rec) in stages {
        if let Some(a) = &rec.running {
            println!(
                "\nstage {name}: {} (attempt {}), params {}",
                if rec.published.is_some() {
                    "re-running, previous results still published"
                } else {
                    "interrupted or running"
                },
                a.attempts,
                a.params
            );
        }
        let Some(p) = &rec.published else { continue };
        println!(
            "\nstage {name}: finished, {} attempt(s), {:.1} s, peak RSS {}",
            p.attempts,
            p.figures.seconds,
            format_bytes(p.figures.peak_rss)
        );
        println!("  params  {}", p.params);
        if !p.inputs.is_empty() {
            let inputs: Vec<String> = p.inputs.iter().map(|(f, c)| format!("{f} {c}")).collect();
            println!("  inputs  {}", inputs.join(", "));
        }
        if !p.figures.extra.is_empty() {
            println!(
                "  figures {}",
                serde_json::Value::Object(p.figures.extra.clone())
            );
        }
        for out in &p.outputs {
            println!();
            if out.kind == "svg" {
                println!(
                    "file        {} (plot, {})",
                    job.dir().join(&out.path).display(),
                    format_bytes(out.bytes)
                );
            } else {
                inspect_file(&job.dir().join(&out.path), args.blocks)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

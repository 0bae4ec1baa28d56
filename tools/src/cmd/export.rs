//! `webmill export`: a job's tables as TSV or Parquet.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use webmill::dedup::files::{for_each_cluster_member, for_each_pair, for_each_pair_with_urls};
use webmill::dedup::Alg;
use webmill::docstore::DocStore;
use webmill::graph::EdgeFile;
use webmill::index::inverted::Barrel;
use webmill::index::lexicon::Lexicon;
use webmill::input::for_each_skip;
use webmill::job::{JobFile, JobView, StageId};
use webmill::sort::SortConfig;

use crate::out_file::{say_written, OutFile};
use crate::table::parquet::Parquet;
use crate::table::{col, Cell, Column, Sink, Tsv, Type};
use crate::Global;

/// Write a job's tables for other tools: TSV (a header line starting with
/// `#`, then one row a line; text escapes \, tab and newlines) or Parquet
/// (typed columns, zstd), to stdout or -o FILE. Columns and types are listed
/// in formats/exports.md.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to export: docs = `docid url crawled bytes title`; edges = `src
    /// dst`; ranks = `docid url rank` (after pagerank); text = `docid url
    /// tokens` (the page's lowercased words, the stream near-duplicate
    /// detection sees); pairs = `docid_a docid_b similarity` (a < b, sorted;
    /// with --urls also `url_a url_b`; after dedup); clusters = `cluster_id
    /// docid keep` (cluster id = its smallest docID; keep: the one doc kept);
    /// anchors = `dst src kind text` (the anchor text of each link, by target);
    /// postings = `term docid tf` (tf: the term's hits in the doc, plain and
    /// fancy; after index); ciff = the index (after index) in the Common
    /// Index File Format, binary whatever --format says: a protobuf Header,
    /// the postings lists in term byte order (docid gaps, tf), the doc
    /// records in docid order; for Anserini, PISA's ciff2pisa and others;
    /// skips = `stage key action kind file location detail` (every input
    /// record or file `ingest` or `import-graph` did not keep and every cut it
    /// made; key = the records kept before it, for a cut the record cut);
    /// bvgraph = the link graph in WebGraph's BVGraph format, binary whatever
    /// --format says: -o BASENAME writes BASENAME.graph, .properties and
    /// .offsets (node = docID, the job's arcs as they are: deduplicated,
    /// self-loops only if imported with --keep-self-loops), for webgraph-cli,
    /// the Java WebGraph and `import-graph --format bvgraph`;
    /// dataset = the input records near-duplicate detection (--alg) kept,
    /// in input order: JSONL lines byte for byte, Parquet rows with every
    /// column (as Parquet), WARC records whole (gzip members as they are;
    /// only the records that became pages); --removed FILE for the others,
    /// --cluster for a `cluster` field or column (not for WARC); -o FILE
    /// required
    #[arg(value_enum)]
    what: What,
    /// Job directory
    job: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value = "tsv")]
    format: Format,
    /// Write to FILE instead of stdout
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// For pairs and clusters: the algorithm whose results to export
    #[arg(long, value_name = "ALG", default_value = "minhash")]
    alg: String,
    /// For pairs: add both docs' URLs (joined by sort–merge within --mem)
    #[arg(long)]
    urls: bool,
    /// For dataset: write the removed records to FILE
    #[arg(long, value_name = "FILE")]
    removed: Option<PathBuf>,
    /// For dataset: add `"cluster": ID` to each record in a cluster (ID: the
    /// cluster's smallest docID; for Parquet, a last `cluster` column)
    #[arg(long)]
    cluster: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    Docs,
    Edges,
    Ranks,
    Text,
    Pairs,
    Clusters,
    Anchors,
    Postings,
    Ciff,
    Skips,
    Dataset,
    Bvgraph,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Format {
    Tsv,
    Parquet,
}

/// The columns of a table (`urls`: pairs with their URLs).
fn columns(what: What, urls: bool) -> Vec<Column> {
    use Type::*;
    match what {
        What::Docs => vec![
            col("docid", U64),
            col("url", Str),
            col("crawled", Bool),
            col("bytes", U64),
            col("title", Str),
        ],
        What::Edges => vec![col("src", U64), col("dst", U64)],
        What::Ranks => vec![col("docid", U64), col("url", Str), col("rank", F64)],
        What::Text => vec![col("docid", U64), col("url", Str), col("tokens", Str)],
        What::Pairs if urls => vec![
            col("docid_a", U64),
            col("docid_b", U64),
            col("similarity", F32),
            col("url_a", Str),
            col("url_b", Str),
        ],
        What::Pairs => vec![
            col("docid_a", U64),
            col("docid_b", U64),
            col("similarity", F32),
        ],
        What::Clusters => vec![col("cluster_id", U64), col("docid", U64), col("keep", Bool)],
        What::Anchors => vec![
            col("dst", U64),
            col("src", U64),
            col("kind", Str),
            col("text", Str),
        ],
        What::Postings => vec![col("term", Str), col("docid", U64), col("tf", U32)],
        What::Skips => vec![
            col("stage", Str),
            col("key", U64),
            col("action", Str),
            col("kind", Str),
            col("file", Str),
            col("location", Str),
            col("detail", Str),
        ],
        // Not tables: written by the CIFF and BVGraph encoders, or records
        // as they were.
        What::Ciff | What::Bvgraph | What::Dataset => vec![],
    }
}

/// Writes one row, naming the output in an error.
fn put(sink: &mut dyn Sink, out: &str, cells: &[Cell]) -> webmill::Result<()> {
    sink.row(cells).map_err(|e| webmill::Error::io(out, e))
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<ExitCode> {
    if args.urls && args.what != What::Pairs {
        anyhow::bail!("--urls applies to `export pairs` only");
    }
    if (args.removed.is_some() || args.cluster) && args.what != What::Dataset {
        anyhow::bail!("--removed and --cluster apply to `export dataset` only");
    }
    if args.output.is_none()
        && matches!(args.format, Format::Parquet)
        && std::io::stdout().is_terminal()
    {
        anyhow::bail!("Parquet is binary: give -o FILE or redirect stdout to a file")
    }
    if args.what == What::Bvgraph {
        let job = g.open_view(&args.job)?;
        return bvgraph(&args, g, &job);
    }
    // An export to a file that a writer's publication overtook (a file it
    // read was replaced meanwhile) is done again on the job as it is now,
    // so the file holds one generation of the job; on stdout, whose rows
    // are gone, it is an error.
    let mut attempt = 0;
    loop {
        attempt += 1;
        let job = g.open_view(&args.job)?;
        let changed = match args.what {
            What::Dataset => dataset(&args, g, &job)?,
            _ => export_once(&args, g, &job)?,
        };
        match changed {
            None => return Ok(ExitCode::SUCCESS),
            Some(_) if args.output.is_some() && attempt < EXPORT_ATTEMPTS => continue,
            Some(changed) => return Err(changed.into()),
        }
    }
}

/// Times an export to a file is started over because the job changed.
const EXPORT_ATTEMPTS: usize = 5;

/// Exports once from `job`; `Some(error)` when the job changed under it
/// (nothing was given the name -o FILE).
fn export_once(args: &Args, g: &Global, job: &JobView) -> anyhow::Result<Option<webmill::Error>> {
    let cols = columns(args.what, args.urls);
    let out_name = args
        .output
        .as_ref()
        .map_or_else(|| "stdout".to_string(), |p| p.display().to_string());
    // -o FILE: written under a temporary name, renamed when complete.
    let mut target = None;
    let writer: Box<dyn Write + Send> = match &args.output {
        Some(p) => {
            let (out, file) = OutFile::create(p)?;
            target = Some(out);
            Box::new(std::io::BufWriter::with_capacity(1 << 16, file))
        }
        None => Box::new(std::io::BufWriter::with_capacity(
            1 << 16,
            std::io::stdout(),
        )),
    };
    if args.what == What::Ciff {
        let mut writer = writer;
        let scratch = g.scratch_dir()?;
        let result = webmill::index::ciff::export(job, &mut writer, &scratch, g.mem());
        let _ = std::fs::remove_dir_all(&scratch);
        let s = result?;
        writer
            .flush()
            .map_err(|e| webmill::Error::io(&out_name, e))?;
        drop(writer);
        if let Some(changed) = job.still_whole()? {
            return Ok(Some(changed));
        }
        finish(target, args, g)?;
        if !g.quiet() {
            eprintln!(
                "ciff: {} terms, {} postings, {} docs, {} bytes",
                s.terms, s.postings, s.docs, s.bytes
            );
        }
        return Ok(None);
    }
    let mut sink: Box<dyn Sink> = match args.format {
        Format::Tsv => Box::new(Tsv::new(writer, &cols)?),
        Format::Parquet => Box::new(Parquet::new(writer, &cols)?),
    };
    let filled = fill(args, g, job, sink.as_mut(), &out_name);
    // A file the export wanted may have been replaced under it: that is
    // the job changing, not an error of the export.
    if let Some(changed) = job.still_whole()? {
        return Ok(Some(changed));
    }
    filled?;
    sink.finish()
        .map_err(|e| webmill::Error::io(&out_name, e))?;
    finish(target, args, g)?;
    Ok(None)
}

/// `export dataset`: the kept records to -o FILE, the removed ones to
/// --removed FILE; `Some(error)` when the job changed under it (nothing was given either
/// name).
fn dataset(args: &Args, g: &Global, job: &JobView) -> anyhow::Result<Option<webmill::Error>> {
    let Some(path) = &args.output else {
        anyhow::bail!("export dataset needs -o FILE");
    };
    let alg = Alg::parse(&args.alg)?;
    let (out, file) = OutFile::create(path)?;
    let mut kept = std::io::BufWriter::with_capacity(1 << 16, file);
    let mut removed = match &args.removed {
        Some(p) => {
            let (o, f) = OutFile::create(p)?;
            Some((o, std::io::BufWriter::with_capacity(1 << 16, f)))
        }
        None => None,
    };
    let counts = webmill::dataset::export_dataset(
        job,
        alg,
        args.cluster,
        &mut kept,
        removed.as_mut().map(|(_, w)| w as &mut (dyn Write + Send)),
    );
    // A file replaced under the reader is the job changing, not an error.
    if let Some(changed) = job.still_whole()? {
        return Ok(Some(changed));
    }
    let counts = counts?;
    kept.flush()
        .map_err(|e| webmill::Error::io(path.display().to_string(), e))?;
    drop(kept);
    say_written(path, out.commit()?, "the kept records", g.quiet());
    if let (Some((o, mut w)), Some(p)) = (removed, &args.removed) {
        w.flush()
            .map_err(|e| webmill::Error::io(p.display().to_string(), e))?;
        drop(w);
        say_written(p, o.commit()?, "the removed records", g.quiet());
    }
    if !g.quiet() {
        eprintln!(
            "dataset: {} records kept ({} of them their cluster's kept member), {} removed",
            counts.kept, counts.kept_in_clusters, counts.removed
        );
    }
    Ok(None)
}

/// Gives a complete -o FILE its name and says so.
fn finish(target: Option<OutFile>, args: &Args, g: &Global) -> webmill::Result<()> {
    if let (Some(out), Some(path)) = (target, &args.output) {
        let bytes = out.commit()?;
        let what = match (args.what, args.format) {
            (What::Ciff, _) => "CIFF".to_string(),
            (w, Format::Tsv) => format!("{} as TSV", w.name()),
            (w, Format::Parquet) => format!("{} as Parquet", w.name()),
        };
        say_written(path, bytes, &what, g.quiet());
    }
    Ok(())
}

impl What {
    /// The table's name on the command line.
    fn name(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }
}

/// Writes the rows of the table `args.what` into `sink`.
fn fill(
    args: &Args,
    g: &Global,
    job: &JobView,
    sink: &mut dyn Sink,
    out: &str,
) -> anyhow::Result<()> {
    match args.what {
        What::Docs => {
            for doc in DocStore::open(job)?.table().iter() {
                let (id, d) = doc?;
                put(
                    sink,
                    out,
                    &[
                        Cell::U64(id),
                        Cell::Str(&d.url),
                        Cell::Bool(d.crawled),
                        Cell::U64(d.bytes),
                        Cell::Str(&d.title),
                    ],
                )?;
            }
        }
        What::Ranks => {
            let store = DocStore::open(job)?;
            let Some(mut rank) = store.pagerank_lookup()? else {
                // Names what to run, or why the ranks are not this table's.
                job.file(JobFile::Ranks)?;
                anyhow::bail!(
                    "{}: not the PageRank of this doc table (another length); run `webmill pagerank` again",
                    JobFile::Ranks.name()
                );
            };
            for doc in store.table().iter() {
                let (id, d) = doc?;
                let r = rank(u32::try_from(id)?)?;
                put(sink, out, &[Cell::U64(id), Cell::Str(&d.url), Cell::F64(r)])?;
            }
        }
        What::Text => {
            let (scratch, cfg) = scratch_sort(g, "export text: sorting by docID")?;
            let result = webmill::ingest::text::for_each_doc_text(
                &job.file(JobFile::Text)?,
                &job.file(JobFile::PageDoc)?,
                &job.file(JobFile::Docs)?,
                cfg,
                |doc, url, words| {
                    put(
                        sink,
                        out,
                        &[Cell::U64(doc), Cell::Str(url), Cell::Str(words)],
                    )
                },
            );
            let _ = std::fs::remove_dir_all(&scratch);
            result?;
        }
        What::Pairs => {
            let pairs = job.file(JobFile::Pairs(Alg::parse(&args.alg)?))?;
            if args.urls {
                let (scratch, cfg) = scratch_sort(g, "export pairs: joining URLs")?;
                let result = for_each_pair_with_urls(
                    &pairs,
                    &job.file(JobFile::Docs)?,
                    cfg,
                    |a, b, sim, ua, ub| {
                        put(
                            sink,
                            out,
                            &[
                                Cell::U64(a),
                                Cell::U64(b),
                                Cell::F32(sim),
                                Cell::Str(ua),
                                Cell::Str(ub),
                            ],
                        )
                    },
                );
                let _ = std::fs::remove_dir_all(&scratch);
                result?;
            } else {
                for_each_pair(&pairs, |a, b, sim| {
                    put(sink, out, &[Cell::U64(a), Cell::U64(b), Cell::F32(sim)])
                })?;
            }
        }
        What::Clusters => {
            let alg = Alg::parse(&args.alg)?;
            for_each_cluster_member(&job.file(JobFile::Clusters(alg))?, |c, d, keep| {
                put(sink, out, &[Cell::U64(c), Cell::U64(d), Cell::Bool(keep)])
            })?;
        }
        What::Edges => {
            let f = EdgeFile::open(job.file(JobFile::Edges)?)?;
            for list in f.lists() {
                let (src, dsts) = list?;
                for d in dsts {
                    put(sink, out, &[Cell::U64(src), Cell::U64(d)])?;
                }
            }
        }
        What::Anchors => {
            job.file(JobFile::Anchors)?;
            DocStore::open(job)?.for_each_anchor(|dst, src, kind, text| {
                put(
                    sink,
                    out,
                    &[
                        Cell::U64(dst),
                        Cell::U64(src),
                        Cell::Str(kind.name()),
                        Cell::Str(text),
                    ],
                )
            })?;
        }
        What::Postings => postings(job, sink, out)?,
        What::Skips => {
            let stages = [StageId::Ingest, StageId::ImportGraph];
            if !stages.iter().any(|&s| job.has(JobFile::Skips(s))) {
                // Names what to run.
                job.file(JobFile::Skips(StageId::Ingest))?;
            }
            for stage in stages.into_iter().filter(|&s| job.has(JobFile::Skips(s))) {
                let name = stage.to_string();
                for_each_skip(&job.file(JobFile::Skips(stage))?, |key, s| {
                    let kind = s.kind.to_string();
                    let file = s.file.to_string_lossy();
                    put(
                        sink,
                        out,
                        &[
                            Cell::Str(&name),
                            Cell::U64(key),
                            Cell::Str(if s.kind.is_cut() { "cut" } else { "skipped" }),
                            Cell::Str(&kind),
                            Cell::Str(&file),
                            Cell::Str(&s.location),
                            Cell::Str(&s.detail),
                        ],
                    )
                })?;
            }
        }
        What::Ciff | What::Bvgraph | What::Dataset => {
            anyhow::bail!("{:?} is not a table (written before any sink)", args.what)
        }
    }
    Ok(())
}

/// `export bvgraph`: the forward edge file as the BVGraph -o BASENAME.
fn bvgraph(args: &Args, g: &Global, job: &JobView) -> anyhow::Result<ExitCode> {
    use webmill::graph::bvgraph::{self, BvGraphFiles};
    let Some(out) = &args.output else {
        anyhow::bail!("export bvgraph writes three files: give -o BASENAME (for BASENAME.graph, .properties, .offsets)");
    };
    let files = BvGraphFiles::new(out)?;
    let edges = EdgeFile::open(job.file(JobFile::Edges)?)?;
    let reporter = g.reporter();
    let task = reporter.task(
        "export bvgraph",
        Some(edges.stats().nodes),
        webmill::progress::Unit::Records,
    );
    let w = bvgraph::write(&edges, &files, task.as_ref())?;
    drop(task);
    if !g.quiet() {
        eprintln!(
            "bvgraph: {} nodes, {} arcs, {} ({:.3} bits/arc) in {}.graph",
            w.nodes,
            w.arcs,
            webmill::resources::format_bytes(w.graph_bytes),
            w.bits_per_arc,
            files.basename.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Every (term, docID, tf) of the full barrels, by term in byte order, then
/// docID: the lexicon's term dictionary walked in order, each term's doclist
/// read with a cursor from its barrel.
fn postings(job: &JobView, sink: &mut dyn Sink, out: &str) -> anyhow::Result<()> {
    let lex = Lexicon::open(job.file(JobFile::Lexicon)?)?;
    let mut barrels: Vec<Option<Barrel>> = (0..lex.barrels()).map(|_| None).collect();
    lex.for_each_word(|term, word| {
        let info = lex.entry(word)?;
        let b = lex.barrel_of(word);
        let slot = barrels.get_mut(b).ok_or_else(|| {
            webmill::Error::internal(format!("word {word} in barrel {b}, past the last"))
        })?;
        if slot.is_none() {
            let number = u16::try_from(b).map_err(|_| webmill::Error::internal("barrel number"))?;
            *slot = Some(Barrel::open(job.file(JobFile::FullBarrel(number))?)?);
        }
        let Some(barrel) = slot.as_ref() else {
            return Ok(());
        };
        let mut cursor = barrel.doclist(word, info.full, info.docs)?;
        while let Some(doc) = cursor.next()? {
            let (plain, fancy) = cursor.hit_counts()?;
            put(
                sink,
                out,
                &[
                    Cell::Str(term),
                    Cell::U64(u64::from(doc)),
                    Cell::U32(plain + fancy),
                ],
            )?;
        }
        Ok(())
    })?;
    Ok(())
}

/// A scratch directory and a sort configuration in it, for an export that
/// sorts.
fn scratch_sort(g: &Global, label: &str) -> anyhow::Result<(PathBuf, SortConfig)> {
    let scratch = g.scratch_dir()?;
    let cfg = SortConfig::new(scratch.join("sort"), g.mem())
        .label(label)
        .reporter(g.reporter());
    Ok((scratch, cfg))
}

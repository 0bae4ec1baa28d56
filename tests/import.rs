//! The import-graph stage against a straightforward in-memory reference, on
//! generated graphs with sparse ids (under budgets far below the data, so the
//! external sort spills and merges in several passes) and on real LAW graphs.

mod common;

use common::*;
use webmill::docs::DocTable;
use webmill::graph::import::{
    import_graph, GraphFormat, ImportFigures, ImportGraph, ImportOptions,
};
use webmill::graph::EdgeFile;
use webmill::job::{Job, JobFile, Outcome, Settings, StageId};

/// The import's figures.
fn figures(job: &Job) -> ImportFigures {
    job.figures::<ImportGraph>(StageId::ImportGraph)
        .unwrap()
        .expect("the import finished")
}

fn arcs_of(f: &EdgeFile) -> Vec<(u64, u64)> {
    f.lists()
        .flat_map(|l| {
            let (n, d) = l.unwrap();
            d.into_iter().map(move |x| (n, x))
        })
        .collect()
}

fn import(dir: &std::path::Path, inputs: Vec<std::path::PathBuf>, mem: u64) -> Job {
    let mut job = Job::open(dir, true).unwrap();
    let opts = ImportOptions {
        format: GraphFormat::Snap,
        inputs,
        keep_self_loops: false,
    };
    assert!(
        import_graph(&mut job, &opts, &Settings::new(mem))
            .unwrap()
            .ran(),
        "fresh job reported as done"
    );
    job
}

fn check_against_naive(job: &Job, naive: &NaiveGraph) {
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    let names: Vec<u64> = docs
        .iter()
        .map(|d| d.unwrap().1.url.parse().unwrap())
        .collect();
    assert_eq!(names, naive.ids, "docIDs follow the ids' numeric order");
    let fwd = EdgeFile::open(job.file(JobFile::Edges).unwrap()).unwrap();
    let rev = EdgeFile::open(job.file(JobFile::EdgesT).unwrap()).unwrap();
    fwd.verify().unwrap();
    rev.verify().unwrap();
    assert_eq!(arcs_of(&fwd), naive.forward);
    assert_eq!(arcs_of(&rev), naive.transposed);
    let fig = figures(job);
    assert_eq!(fig.self_loops, naive.self_loops);
    assert_eq!(fig.arcs, naive.forward.len() as u64);
    let with_out: std::collections::BTreeSet<u64> = naive.forward.iter().map(|a| a.0).collect();
    assert_eq!(fig.dangling, (naive.ids.len() - with_out.len()) as u64);
}

#[test]
fn generated_graph_matches_naive_import_under_a_tiny_budget() {
    let dir = tempfile::tempdir().unwrap();
    let arcs = random_graph(7, 150_000);
    // Two inputs, one gzip and one plain, read in order.
    let (a, b) = arcs.split_at(arcs.len() / 3);
    let pa = dir.path().join("part1.tsv.gz");
    let pb = dir.path().join("part2.tsv");
    write_snap(&pa, a, true);
    write_snap(&pb, b, false);
    // ~2.5 MB of arcs in memory, budget 1 MiB: many runs, multi-pass merges.
    let job = import(&dir.path().join("job"), vec![pa, pb], 1 << 20);
    check_against_naive(&job, &naive_import(&arcs));
}

#[test]
fn same_input_same_bytes_whatever_the_budget_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let arcs = random_graph(11, 60_000);
    let input = dir.path().join("g.tsv");
    write_snap(&input, &arcs, false);
    let mut files = Vec::new();
    for (i, (mem, threads)) in [(1u64 << 20, 1), (256 << 20, 2)].into_iter().enumerate() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let job_dir = dir.path().join(format!("job{i}"));
        pool.install(|| import(&job_dir, vec![input.clone()], mem));
        files.push(
            [JobFile::Docs, JobFile::Edges, JobFile::EdgesT]
                .map(|f| std::fs::read(job_dir.join(f.name())).unwrap()),
        );
    }
    assert!(
        files[0] == files[1],
        "outputs differ between budgets/thread counts"
    );
}

#[test]
fn real_graphs_match_naive_import() {
    let Some(data) = data_dir() else { return };
    for (name, nodes, arcs, self_loops) in [
        ("cnr-2000", 325_557u64, 3_128_710u64, 87_442u64),
        ("uk-2007-05@100000", 100_000, 3_034_945, 15_670),
    ] {
        let input = data.join("graphs").join(format!("{name}.tsv.gz"));
        let dir = tempfile::tempdir().unwrap();
        // The arcs take ~50 MB as pairs in memory; the budget is 16 MiB.
        let job = import(&dir.path().join("job"), vec![input.clone()], 16 << 20);
        let fig = figures(&job);
        assert_eq!(fig.nodes, nodes, "{name}");
        assert_eq!(fig.arcs, arcs, "{name}");
        assert_eq!(fig.self_loops, self_loops, "{name}");
        check_against_naive(&job, &naive_import(&read_snap(&input)));
    }
}

// ---------------------------------------------------------------------------
// --format tsv (named nodes) and --format cc (Common Crawl graphs).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use proptest::prelude::{any, Just, ProptestConfig, Strategy};
use proptest::{prop_assert, prop_oneof, proptest};
use webmill::graph::names::NameOrder;

fn import_as(
    dir: &Path,
    format: GraphFormat,
    inputs: Vec<PathBuf>,
    mem: u64,
    keep_self_loops: bool,
) -> (Job, Vec<String>) {
    let mut job = Job::open(dir, true).unwrap();
    let opts = ImportOptions {
        format,
        inputs,
        keep_self_loops,
    };
    match import_graph(&mut job, &opts, &Settings::new(mem)).unwrap() {
        Outcome::Done { figures, .. } => (job, figures.first_skips),
        Outcome::Skipped { .. } => panic!("fresh job reported as done"),
    }
}

fn doc_names(job: &Job) -> Vec<String> {
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    docs.iter().map(|d| d.unwrap().1.url).collect()
}

fn write_maybe_gzip(path: &Path, text: &[u8], gzip: bool) {
    if gzip {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text).unwrap();
        std::fs::write(path, enc.finish().unwrap()).unwrap();
    } else {
        std::fs::write(path, text).unwrap();
    }
}

/// The in-memory reference for named nodes: docIDs by the order's key of the
/// names, arcs deduplicated, self-loops dropped.
struct NaiveNamed {
    names: Vec<String>,
    forward: Vec<(u64, u64)>,
    transposed: Vec<(u64, u64)>,
    self_loops: u64,
}

fn naive_named(arcs: &[(String, String)], order: NameOrder, keep_self_loops: bool) -> NaiveNamed {
    let key = |n: &str| match order {
        NameOrder::Bytes => n.as_bytes().to_vec(),
        NameOrder::Host => {
            let mut k = Vec::new();
            webmill::url::sort_key(n, &mut k);
            k
        }
    };
    let by_key: BTreeMap<Vec<u8>, &str> = arcs
        .iter()
        .flat_map(|(s, d)| [s, d])
        .map(|n| (key(n), n.as_str()))
        .collect();
    let names: Vec<String> = by_key.values().map(|n| n.to_string()).collect();
    let doc: BTreeMap<&str, u64> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i as u64))
        .collect();
    let mut fwd = BTreeSet::new();
    let mut self_loops = 0;
    for (s, d) in arcs {
        if s == d && !keep_self_loops {
            self_loops += 1;
        } else {
            fwd.insert((doc[s.as_str()], doc[d.as_str()]));
        }
    }
    let transposed: BTreeSet<(u64, u64)> = fwd.iter().map(|&(s, d)| (d, s)).collect();
    NaiveNamed {
        names,
        forward: fwd.into_iter().collect(),
        transposed: transposed.into_iter().collect(),
        self_loops,
    }
}

fn check_named(job: &Job, naive: &NaiveNamed) {
    assert_eq!(doc_names(job), naive.names, "docIDs follow the names' keys");
    let fwd = EdgeFile::open(job.file(JobFile::Edges).unwrap()).unwrap();
    let rev = EdgeFile::open(job.file(JobFile::EdgesT).unwrap()).unwrap();
    fwd.verify().unwrap();
    rev.verify().unwrap();
    assert_eq!(arcs_of(&fwd), naive.forward);
    assert_eq!(arcs_of(&rev), naive.transposed);
    let fig = figures(job);
    assert_eq!(fig.self_loops, naive.self_loops);
    assert_eq!(fig.nodes, naive.names.len() as u64);
}

/// Web-like named nodes: URLs on a few hosts (http and https, subdomains),
/// and names that are not URLs: unicode, spaces, `#` inside, shared prefixes.
fn node_name(rng: &mut Rng, i: u64) -> String {
    match i % 7 {
        0 => format!("word {i} with spaces"),
        1 => format!("ünïcødé/日本語/{i}/\u{1F600}"),
        2 => format!("https://example.com/p{i}#frag"),
        3 => format!("http://www.example.com/a/{}", i / 3),
        4 => format!("http://h{}.example.org:8080/x?q={i}", rng.below(5)),
        5 => format!("{i}"),
        _ => format!("mailto:user{i}@example.net"),
    }
}

/// A random named graph (with duplicates and self-loops) written as tsv files
/// with comments and bad lines; returns the arcs and the expected skips
/// (file name, line number).
fn named_graph_files(
    dir: &Path,
    seed: u64,
    arcs: usize,
) -> (Vec<PathBuf>, Vec<(String, String)>, Vec<String>) {
    let mut rng = Rng(seed);
    let ids = random_graph(seed, arcs);
    // Compact the sparse ids to indices, then name them.
    let mut index: BTreeMap<u64, u64> = BTreeMap::new();
    for &(s, d) in &ids {
        for x in [s, d] {
            let next = index.len() as u64;
            index.entry(x).or_insert(next);
        }
    }
    let names: BTreeMap<u64, String> = index
        .values()
        .map(|&i| (i, node_name(&mut rng, i)))
        .collect();
    let arcs: Vec<(String, String)> = ids
        .iter()
        .map(|(s, d)| (names[&index[s]].clone(), names[&index[d]].clone()))
        .collect();
    let mut files = Vec::new();
    let mut skips = Vec::new();
    let parts = [&arcs[..arcs.len() / 2], &arcs[arcs.len() / 2..]];
    for (p, part) in parts.iter().enumerate() {
        let name = format!("part{p}.tsv{}", if p == 0 { ".gz" } else { "" });
        let mut text = b"# source\tdestination\n".to_vec();
        let mut line = 1u64;
        for (i, (s, d)) in part.iter().enumerate() {
            if i % 997 == 5 {
                let bad: &[u8] = match rng.below(4) {
                    0 => b"no tab at all",
                    1 => b"\tempty source",
                    2 => b"empty destination\t",
                    _ => b"bad\t\xff\xfe utf-8",
                };
                text.extend_from_slice(bad);
                text.push(b'\n');
                line += 1;
                skips.push(format!("{name}: line {line}:"));
                text.extend_from_slice(b"\n");
                line += 1;
            }
            // A third column is ignored; CRLF line ends are accepted.
            match i % 5 {
                0 => writeln!(text, "{s}\t{d}\t1.0").unwrap(),
                1 => write!(text, "{s}\t{d}\r\n").unwrap(),
                _ => writeln!(text, "{s}\t{d}").unwrap(),
            }
            line += 1;
        }
        let path = dir.join(&name);
        write_maybe_gzip(&path, &text, p == 0);
        files.push(path);
    }
    (files, arcs, skips)
}

#[test]
fn tsv_named_graph_matches_naive_import_under_a_tiny_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (files, arcs, skips) = named_graph_files(dir.path(), 21, 20_000);
    for (i, order) in [NameOrder::Bytes, NameOrder::Host].into_iter().enumerate() {
        // ~3 MB of named arcs in the sorts, budget 1 MiB: many runs, multi-pass merges.
        let (job, reported) = import_as(
            &dir.path().join(format!("job{i}")),
            GraphFormat::Tsv(order),
            files.clone(),
            1 << 20,
            false,
        );
        check_named(&job, &naive_named(&arcs, order, false));
        let fig = figures(&job);
        assert_eq!(fig.skipped, skips.len() as u64);
        assert_eq!(fig.input_arcs, arcs.len() as u64);
        for (want, got) in skips.iter().zip(&reported) {
            assert!(got.contains(want), "{got} should name {want}");
        }
    }
}

#[test]
fn tsv_host_order_keeps_hosts_contiguous() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _, _) = named_graph_files(dir.path(), 5, 5_000);
    let (job, _) = import_as(
        &dir.path().join("job"),
        GraphFormat::Tsv(NameOrder::Host),
        files,
        1 << 20,
        false,
    );
    // Each host's docs form one interval, and example.com's subdomains and
    // schemes sit together.
    let names = doc_names(&job);
    let host = |n: &str| {
        url::Url::parse(n)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
    };
    let mut seen = BTreeSet::new();
    let mut last: Option<String> = None;
    for n in &names {
        let h = host(n);
        if h != last {
            if let Some(h) = &h {
                assert!(seen.insert(h.clone()), "host {h} is not contiguous");
            }
            last = h;
        }
    }
    let pos = |prefix: &str| names.iter().position(|n| n.starts_with(prefix)).unwrap();
    assert!(pos("word") < pos("https://example.com/"));
    assert!(pos("https://example.com/") < pos("http://www.example.com/"));
    assert!(pos("http://www.example.com/") < pos("http://h0.example.org"));
}

fn name_strategy() -> impl Strategy<Value = String> {
    // Small alphabets make duplicates; spaces, unicode, `#` and `\r` inside names.
    prop_oneof![
        "[ab]{1,3}",
        "[a é日\u{1F600}#]{1,4}",
        "https?://[ab]\\.example/[a-c ]{0,3}",
        "[xy]\r[xy]",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Random names, duplicates, self-loops, gzip or not, either order, under
    /// budgets from tiny to roomy: the same graph as the naive import.
    #[test]
    fn tsv_random_names_match_naive_import(
        arcs in proptest::collection::vec((name_strategy(), name_strategy(), 0u8..4), 1..300),
        gzip in any::<bool>(),
        host in any::<bool>(),
        keep in any::<bool>(),
        mem in prop_oneof![Just(64u64 << 10), Just(8 << 20)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        // Some arcs are self-loops; a source starting with `#` would be a comment.
        let arcs: Vec<(String, String)> = arcs
            .into_iter()
            .map(|(s, d, k)| {
                let s = if s.starts_with('#') { format!("x{s}") } else { s };
                let d = if k == 0 { s.clone() } else { d };
                (s, d)
            })
            .collect();
        let mut text = Vec::new();
        for (s, d) in &arcs {
            writeln!(text, "{s}\t{d}").unwrap();
        }
        let input = dir.path().join("g");
        write_maybe_gzip(&input, &text, gzip);
        let order = if host { NameOrder::Host } else { NameOrder::Bytes };
        let (job, skips) = import_as(&dir.path().join("job"), GraphFormat::Tsv(order), vec![input], mem, keep);
        prop_assert!(skips.is_empty(), "{:?}", skips);
        check_named(&job, &naive_named(&arcs, order, keep));
    }
}

/// A generated Common Crawl host graph: vertices with a gap and bad lines,
/// edges with arcs beyond the vertices, self-loops and duplicates, in two files.
struct CcGraph {
    files: Vec<PathBuf>,
    names: Vec<String>,
    arcs: Vec<(u64, u64)>,
    skipped: u64,
}

fn cc_graph(dir: &Path, seed: u64, n: u64, arcs: usize) -> CcGraph {
    let mut rng = Rng(seed);
    let mut vtext = Vec::new();
    let mut names = Vec::new();
    let mut skipped = 0;
    for id in 0..n {
        // Reversed names, in increasing byte order as Common Crawl writes them.
        let rev = format!("com.example{:06}.www", id / 3 * 3 + 1000);
        let rev = if id % 3 == 0 {
            rev.trim_end_matches(".www").to_string()
        } else {
            format!("{rev}{}", id % 3)
        };
        if id % 1000 == 17 {
            // A damaged line: the id gets a doc with an empty name.
            vtext.extend_from_slice(format!("{id}\t").as_bytes());
            vtext.extend_from_slice(b"\xff\n");
            skipped += 1;
            names.push(String::new());
            continue;
        }
        if id % 1000 == 500 {
            writeln!(vtext, "{}\tcom.duplicate", id - 1).unwrap();
            skipped += 1;
        }
        writeln!(vtext, "{id}\t{rev}\t{}", rng.below(9)).unwrap();
        let host: Vec<&str> = rev.rsplit('.').collect();
        names.push(host.join("."));
    }
    let vpath = dir.join("vertices.txt.gz");
    write_maybe_gzip(&vpath, &vtext, true);
    let mut out = Vec::new();
    let mut files = vec![vpath];
    for part in 0..2 {
        let mut etext = Vec::new();
        for _ in 0..arcs / 2 {
            let s = rng.below(n);
            let d = match rng.below(12) {
                0 => s,
                1 => n + rng.below(5), // no such vertex
                2..=6 => (s + rng.below(20)).min(n - 1),
                _ => rng.below(n),
            };
            writeln!(etext, "{s}\t{d}").unwrap();
            if d >= n {
                skipped += 1;
            } else {
                out.push((s, d));
            }
            if rng.below(25) == 0 {
                writeln!(etext, "{s}\t{d}").unwrap();
                if d >= n {
                    skipped += 1;
                } else {
                    out.push((s, d));
                }
            }
        }
        let path = dir.join(format!("edges{part}.txt.gz"));
        write_maybe_gzip(&path, &etext, part == 0);
        files.push(path);
    }
    CcGraph {
        files,
        names,
        arcs: out,
        skipped,
    }
}

#[test]
fn cc_graph_matches_naive_import_under_a_tiny_budget() {
    let dir = tempfile::tempdir().unwrap();
    let g = cc_graph(dir.path(), 3, 20_000, 120_000);
    let (job, skips) = import_as(
        &dir.path().join("job"),
        GraphFormat::Cc,
        g.files.clone(),
        1 << 20,
        false,
    );
    assert_eq!(doc_names(&job), g.names, "docIDs are the vertex ids");
    let docs = DocTable::open(job.file(JobFile::Docs).unwrap()).unwrap();
    assert_eq!(
        docs.crawled(),
        g.names.iter().filter(|n| !n.is_empty()).count() as u64
    );
    let naive = naive_import(&g.arcs);
    // naive_import numbers the ids seen in arcs; here the ids are the docIDs.
    let renumber = |v: &[(u64, u64)]| -> Vec<(u64, u64)> {
        v.iter()
            .map(|&(a, b)| (naive.ids[a as usize], naive.ids[b as usize]))
            .collect()
    };
    let fwd = EdgeFile::open(job.file(JobFile::Edges).unwrap()).unwrap();
    let rev = EdgeFile::open(job.file(JobFile::EdgesT).unwrap()).unwrap();
    fwd.verify().unwrap();
    rev.verify().unwrap();
    assert_eq!(arcs_of(&fwd), renumber(&naive.forward));
    assert_eq!(arcs_of(&rev), renumber(&naive.transposed));
    let fig = figures(&job);
    assert_eq!(fig.nodes, 20_000);
    assert_eq!(fig.self_loops, naive.self_loops);
    assert_eq!(fig.skipped, g.skipped);
    assert_eq!(fig.unnamed_nodes, Some(20));
    assert!(
        skips[0].contains("vertices.txt.gz: line 18:"),
        "{}",
        skips[0]
    );
}

/// The real cnr-2000 graph with its ids turned into URL-like names on the
/// fly: the tsv import gives the same graph as the snap import.
#[test]
fn real_graph_as_named_urls_matches_snap_import() {
    use std::io::BufRead;
    let Some(data) = data_dir() else { return };
    let input = data.join("graphs/cnr-2000.tsv.gz");
    let dir = tempfile::tempdir().unwrap();
    let named = dir.path().join("cnr-2000-urls.tsv");
    {
        let reader = std::io::BufReader::new(flate2::read::MultiGzDecoder::new(
            std::fs::File::open(&input).unwrap(),
        ));
        let mut out = std::io::BufWriter::new(std::fs::File::create(&named).unwrap());
        writeln!(out, "# cnr-2000 with URL-like names").unwrap();
        for line in reader.lines() {
            let line = line.unwrap();
            if line.starts_with('#') {
                continue;
            }
            let (s, d) = line.split_once('\t').unwrap();
            let (s, d): (u64, u64) = (s.parse().unwrap(), d.trim().parse().unwrap());
            writeln!(
                out,
                "http://h{}.example/p{s}\thttp://h{}.example/p{d}",
                s / 1000,
                d / 1000
            )
            .unwrap();
        }
        out.flush().unwrap();
    }
    let mem = 256 << 20;
    let (snap, _) = import_as(
        &dir.path().join("snap"),
        GraphFormat::Snap,
        vec![input],
        mem,
        false,
    );
    let (tsv, skips) = import_as(
        &dir.path().join("tsv"),
        GraphFormat::Tsv(NameOrder::Bytes),
        vec![named],
        mem,
        false,
    );
    assert!(skips.is_empty(), "{skips:?}");
    let fs = &snap.published(StageId::ImportGraph).unwrap().figures.extra;
    let ft = &tsv.published(StageId::ImportGraph).unwrap().figures.extra;
    assert_eq!(ft["nodes"], 325_557);
    assert_eq!(ft["arcs"], 3_128_710);
    for k in [
        "nodes",
        "arcs",
        "self_loops",
        "dangling",
        "max_out_degree",
        "max_in_degree",
    ] {
        assert_eq!(fs[k], ft[k], "{k}");
    }
    // Map both graphs back to the original ids and compare arc by arc.
    let snap_ids: Vec<u64> = doc_names(&snap)
        .iter()
        .map(|n| n.parse().unwrap())
        .collect();
    let tsv_names = doc_names(&tsv);
    assert!(
        tsv_names.windows(2).all(|w| w[0] < w[1]),
        "docIDs follow the names' byte order"
    );
    let tsv_ids: Vec<u64> = tsv_names
        .iter()
        .map(|n| n.rsplit_once("/p").unwrap().1.parse().unwrap())
        .collect();
    let orig = |f: &EdgeFile, ids: &[u64]| {
        let mut v: Vec<(u64, u64)> = arcs_of(f)
            .into_iter()
            .map(|(a, b)| (ids[a as usize], ids[b as usize]))
            .collect();
        v.sort_unstable();
        v
    };
    let a = orig(
        &EdgeFile::open(snap.file(JobFile::Edges).unwrap()).unwrap(),
        &snap_ids,
    );
    let b = orig(
        &EdgeFile::open(tsv.file(JobFile::Edges).unwrap()).unwrap(),
        &tsv_ids,
    );
    assert!(
        a == b,
        "the tsv import's arcs differ from the snap import's"
    );
    let bt = orig(
        &EdgeFile::open(tsv.file(JobFile::EdgesT).unwrap()).unwrap(),
        &tsv_ids,
    );
    let mut at: Vec<(u64, u64)> = a.iter().map(|&(s, d)| (d, s)).collect();
    at.sort_unstable();
    assert!(at == bt, "the tsv import's transposed arcs differ");
}

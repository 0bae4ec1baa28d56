//! Benchmark: `import-graph` on the real LAW graphs in `../shared/data/graphs`
//! (cnr-2000: 3.2M arcs; uk-2007-05@100000: 3.1M arcs), at memory budgets
//! below and above the size of the arcs in memory (~50 MB as pairs).
//!
//! Prints, per graph and budget, medians over several runs (each in a child
//! process, so peak RSS is that run's own): wall seconds, input arcs/s, ns per
//! arc, bits per arc of the forward edge file next to BVGraph's figure from the
//! graph's `.properties`, and peak RSS against the budget.
//!
//! ```text
//! cargo bench --bench import                     # 5 runs each, budgets 16M 64M 256M
//! cargo bench --bench import -- --runs 3 --mem 16M,64M
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use webmill::graph::import::{import_graph, GraphFormat, ImportOptions};
use webmill::job::{Job, Settings};
use webmill::resources::{format_bytes, parse_bytes, peak_rss};

fn data_dir() -> PathBuf {
    std::env::var_os("WEBMILL_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

/// Child: import `input` into a fresh job under `mem`, print one result line.
fn run_case(input: &Path, mem: u64, job_dir: &Path) {
    let _ = std::fs::remove_dir_all(job_dir);
    let mut job = Job::open(job_dir, true).expect("job");
    let opts = ImportOptions {
        format: GraphFormat::Snap,
        inputs: vec![input.to_path_buf()],
        keep_self_loops: false,
    };
    let t = Instant::now();
    let fig = import_graph(&mut job, &opts, &Settings::new(mem))
        .expect("import")
        .figures()
        .clone();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "RESULT {secs} {} {} {} {}",
        fig.input_arcs,
        fig.arcs,
        fig.edges_bytes,
        peak_rss().unwrap_or(0)
    );
    drop(job);
    let _ = std::fs::remove_dir_all(job_dir);
}

fn bvgraph_bits(graph: &Path) -> Option<f64> {
    let props =
        std::fs::read_to_string(graph.with_extension("").with_extension("properties")).ok()?;
    props
        .lines()
        .find_map(|l| l.strip_prefix("bitsperlink="))
        .and_then(|v| v.trim().parse().ok())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--case") {
        let mem = parse_bytes(&args[i + 2]).expect("mem");
        run_case(Path::new(&args[i + 1]), mem, Path::new(&args[i + 3]));
        return;
    }
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .map(|i| args[i + 1].clone())
    };
    let runs: usize = get("--runs").map_or(5, |v| v.parse().expect("--runs"));
    let mems = get("--mem").unwrap_or_else(|| "16M,64M,256M".into());
    let graphs_dir = data_dir().join("graphs");
    let Ok(entries) = std::fs::read_dir(&graphs_dir) else {
        println!(
            "SKIPPED: no graphs at {} (set WEBMILL_DATA)",
            graphs_dir.display()
        );
        return;
    };
    let mut graphs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".tsv.gz"))
        .collect();
    graphs.sort();
    let work = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-import");
    let exe = std::env::current_exe().expect("exe");
    println!(
        "import-graph benchmark: {runs} runs per case, medians; threads = {}",
        rayon::current_num_threads()
    );
    println!(
        "{:<22} {:>6} {:>8} {:>11} {:>8} {:>9} {:>9} {:>10} {:>10}",
        "graph", "mem", "secs", "arcs/s", "ns/arc", "bits/arc", "BVGraph", "peak RSS", "RSS-mem"
    );
    for graph in &graphs {
        let name = graph
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".tsv.gz", "");
        for mem in mems.split(',') {
            let budget = parse_bytes(mem).expect("--mem");
            let (mut secs, mut rss) = (Vec::new(), Vec::new());
            let (mut input_arcs, mut edge_bytes, mut arcs) = (0f64, 0f64, 0f64);
            for _ in 0..runs {
                let out = Command::new(&exe)
                    .args([
                        "--case",
                        &graph.to_string_lossy(),
                        mem,
                        &work.to_string_lossy(),
                    ])
                    .output()
                    .expect("child");
                let text = String::from_utf8_lossy(&out.stdout);
                let line = text
                    .lines()
                    .find_map(|l| l.strip_prefix("RESULT "))
                    .unwrap_or_else(|| {
                        panic!("case failed: {}", String::from_utf8_lossy(&out.stderr))
                    });
                let f: Vec<f64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
                secs.push(f[0]);
                input_arcs = f[1];
                arcs = f[2];
                edge_bytes = f[3];
                rss.push(f[4]);
            }
            let s = median(secs);
            let r = median(rss);
            println!(
                "{:<22} {:>6} {:>8.2} {:>11.0} {:>8.0} {:>9.3} {:>9} {:>10} {:>10}",
                name,
                mem,
                s,
                input_arcs / s,
                s * 1e9 / input_arcs,
                edge_bytes * 8.0 / arcs,
                bvgraph_bits(graph).map_or("-".into(), |b| format!("{b:.3}")),
                format_bytes(r as u64),
                format!("{:+.1} MiB", (r - budget as f64) / (1 << 20) as f64),
            );
        }
    }
}

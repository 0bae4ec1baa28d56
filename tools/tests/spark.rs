//! Issue 23: a job through Spark (`python -m webmill_spark run` on a
//! standalone cluster of two workers, started by `local-cluster start`) is
//! the job `webmill run` makes on one machine: every output file
//! byte-identical (the index excepted: Spark builds it as two
//! document-partitioned shards, which `verify` checks), the same search
//! answers for 100 queries (docIDs, scores, totals), the broken input in
//! the skip report — and so it stays when executors are SIGKILLed in the
//! middle of the job: the one running the first ingest task, then, in the
//! later waves, the ones running the first task of the index's forward and
//! sort steps and of near-duplicate detection's sketch and (min-hash)
//! verification steps, each while its task is held running
//! (`WEBMILL_SPARK_HOLD`), each kill checked and each task seen retried.
//! Skips with a printed reason when Java or pyspark is missing (`.ci/run`
//! installs both).

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn webmill_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("webmill")
}

/// Why the Spark path cannot be tried here, if it cannot.
fn missing() -> Option<String> {
    if Command::new("java").arg("-version").output().is_err() {
        return Some("no java on the PATH".into());
    }
    let py = Command::new("python3")
        .args(["-c", "import pyspark"])
        .output();
    match py {
        Ok(o) if o.status.success() => None,
        _ => Some("python3 cannot import pyspark (pip install pyspark)".into()),
    }
}

fn python(state: &Path) -> Command {
    let mut c = Command::new("python3");
    c.env("PYTHONPATH", workspace_root().join("spark"))
        .env("WEBMILL_SPARK_STATE", state)
        .stdin(Stdio::null());
    c
}

/// Stops the cluster however the test ends.
struct Cluster {
    state: PathBuf,
    master: String,
}

impl Cluster {
    fn start(state: &Path, workers: usize) -> Cluster {
        let out = python(state)
            .args(["-m", "webmill_spark", "local-cluster", "start"])
            .args(["--workers", &workers.to_string(), "--memory", "1g"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "local-cluster start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let master = stdout.lines().last().unwrap_or_default().to_string();
        assert!(master.starts_with("spark://127.0.0.1:"), "{stdout}");
        Cluster {
            state: state.to_path_buf(),
            master,
        }
    }

    /// The pids of the executors the workers of this cluster launched.
    fn executors(&self) -> Vec<u32> {
        let dir = std::fs::read_dir(&self.state).unwrap();
        let mut cluster_dirs: Vec<PathBuf> = dir.flatten().map(|e| e.path()).collect();
        cluster_dirs.retain(|d| d.join("cluster.json").exists());
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            // An executor's working directory is under its worker's, which
            // is under this cluster's state directory.
            if cmd.contains("CoarseGrainedExecutorBackend")
                && cluster_dirs
                    .iter()
                    .any(|d| cmd.contains(&*d.to_string_lossy()) || cwd_under(pid, d))
            {
                pids.push(pid);
            }
        }
        pids
    }
}

fn cwd_under(pid: u32, dir: &Path) -> bool {
    std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir))
}

/// The steps whose first task holds until the test SIGKILLs its executor
/// (`WEBMILL_SPARK_HOLD`, spark/webmill_spark/tasks.py): the ingest, two
/// waves of the index's shards, and near-duplicate detection's sketch and
/// verification tasks.
const HELD: [&str; 5] = ["ingest", "forward", "sort", "sketch", "verify-minhash"];

/// The fields of `/proc/PID/stat` after the command's name.
fn stat(pid: u32) -> Option<Vec<String>> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// `pid` and its ancestors, nearest first.
fn ancestors(mut pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    while pid > 1 {
        out.push(pid);
        match stat(pid).and_then(|f| f.get(1)?.parse().ok()) {
            Some(p) => pid = p,
            None => break,
        }
    }
    out
}

/// The process exists and is not a zombie.
fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|f| f.first().map(String::as_str) != Some("Z"))
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = python(&self.state)
            .args(["-m", "webmill_spark", "local-cluster", "stop"])
            .args(["--master", &self.master])
            .output();
    }
}

/// The answers to the queries of `file` (one a line), as JSON lines
/// without what is each index's own or each run's: the wordIDs (a shard's
/// lexicon numbers words itself) and the times.
fn search_json(job: &Path, file: &Path) -> Vec<serde_json::Value> {
    let out = webmill()
        .args(["search", "--json", "-k", "10", "--queries"])
        .arg(file)
        .arg(job)
        .output()
        .unwrap();
    succeeded(&out);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("seconds");
            for w in o["words"].as_array_mut().unwrap() {
                w.as_object_mut().unwrap().remove("word_id");
            }
            v
        })
        .collect()
}

/// 100 queries over the job's words: single words, pairs, phrases, ORs,
/// exclusions and `site:`s.
fn queries(dir: &Path) -> PathBuf {
    let words = [
        "internet",
        "assigned",
        "numbers",
        "example",
        "domain",
        "iana",
        "word3",
        "word7",
        "word1",
        "page",
        "the",
        "of",
        "and",
        "information",
        "more",
        "root",
        "zone",
        "protocol",
        "links",
        "site",
    ];
    let mut rng = Rng(23);
    let mut w = || words[rng.below(words.len() as u64) as usize];
    let mut lines = Vec::new();
    for i in 0..100 {
        let (a, b) = (w(), w());
        let q = match i % 8 {
            0 | 1 => a.to_string(),
            2 | 3 => format!("{a} {b}"),
            4 => format!("\"{a} {b}\""),
            5 => format!("{a} OR {b}"),
            6 => format!("{a} -{b}"),
            _ => format!("{a} site:site.example"),
        };
        lines.push(format!("q{i}\t{q}"));
    }
    let path = dir.join("queries.tsv");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn a_job_through_spark_is_the_job_of_one_machine_even_when_an_executor_dies() {
    if let Some(why) = missing() {
        eprintln!("SKIPPED: the Spark path cannot run here: {why}");
        return;
    }
    let Some(data) = data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Several real WARC files, one of them broken, and HTML directories.
    let broken = dir.path().join("broken.warc.gz");
    // A download cut short: the first 2,000 bytes of a gzipped WARC.
    let whole = std::fs::read(data.join("warc/dupes.warc.gz")).unwrap();
    std::fs::write(&broken, &whole[..2000]).unwrap();
    let inputs = mixed_inputs(dir.path(), &data, &[&broken], 120, 23);
    let flags = ["--mem", "64M"];
    // Every near-duplicate algorithm, with a group cap small enough to cap
    // groups: on Spark, their keys, candidates and verification.
    let dedup = [
        "--dedup",
        "exact,broder,charikar,minhash",
        "--max-group",
        "2",
    ];

    let local = dir.path().join("local");
    succeeded(
        &webmill()
            .args(flags)
            .args(["--quiet", "run", "--segment-records", "40", "--out"])
            .arg(&local)
            .args(dedup)
            .args(&inputs)
            .output()
            .unwrap(),
    );

    let state = dir.path().join("state");
    let cluster = Cluster::start(&state, 2);
    let spark = dir.path().join("spark");
    let markers = dir.path().join("markers");
    std::fs::create_dir(&markers).unwrap();
    let log = dir.path().join("spark-run.log");
    let mut run = python(&state)
        .args(["-m", "webmill_spark", "run", "--master", &cluster.master])
        .arg("--out")
        .arg(&spark)
        .arg("--webmill")
        .arg(webmill_bin())
        .args(flags)
        .args(["--segment-records", "40"])
        .args(&inputs)
        .arg("--")
        .args(dedup)
        // Every webmill task leaves a marker; the first task of each step
        // of HELD holds until its executor is killed (spark/webmill_spark/
        // tasks.py).
        .env("WEBMILL_SPARK_MARKERS", &markers)
        .env("WEBMILL_SPARK_HOLD", HELD.join(","))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    // SIGKILL the executor running each held task, once the task has begun.
    let mut kills = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(900);
    for step in HELD {
        let marker = markers.join(format!("{step}-0.a0"));
        while !marker.exists() && Instant::now() < deadline {
            if run.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let Ok(pid) = std::fs::read_to_string(&marker) else {
            break;
        };
        let worker: u32 = pid.trim().parse().unwrap();
        let executors = cluster.executors();
        let Some(executor) = ancestors(worker)
            .into_iter()
            .find(|p| executors.contains(p))
        else {
            panic!("{step}: the task's Python worker {worker} is not under an executor of the cluster ({executors:?})");
        };
        let _ = Command::new("kill")
            .args(["-9", &executor.to_string()])
            .status();
        // The kill landed: the executor and the held task's worker are gone.
        for pid in [executor, worker] {
            let gone = Instant::now() + Duration::from_secs(120);
            while alive(pid) && Instant::now() < gone {
                std::thread::sleep(Duration::from_millis(100));
            }
            assert!(
                !alive(pid),
                "{step}: process {pid} outlived the SIGKILL of executor {executor}"
            );
        }
        kills.push((step, executor));
    }
    let status = run.wait().unwrap();
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "webmill_spark run failed:\n{stderr}");
    assert_eq!(
        kills.iter().map(|k| k.0).collect::<Vec<_>>(),
        HELD,
        "not every held task was seen to kill its executor:\n{stderr}"
    );
    // Spark ran each killed task again, on another executor.
    for step in HELD {
        assert!(
            markers.join(format!("{step}-0.a1")).exists(),
            "{step}: task 0 was not retried after its executor was killed:\n{stderr}"
        );
    }
    eprintln!("SIGKILLed executors {kills:?}");
    assert!(stderr.contains("ingest on Spark: "), "{stderr}");
    assert!(stderr.contains("URL numbering on Spark: "), "{stderr}");
    // The summary: each step, where it ran, its time, what Spark shuffled.
    for step in [
        "ingest ",
        "URL numbering, link joins",
        "webmill resolve 1/8",
        "resolve's sorts",
        "webmill resolve 8/8",
        "dedup sketches ",
        "dedup groups, verification",
        "webmill dedup 2/4 charikar",
        "webmill dedup 3/4 minhash",
        "dedup pairs, clusters",
        "executors' peak RSS",
        "shuffled per page",
        "is complete through Spark",
    ] {
        assert!(
            stderr.contains(step),
            "no {step:?} in the summary:\n{stderr}"
        );
    }
    eprintln!("{stderr}");

    // Every output file byte-identical; the index is the single one here
    // and two shards there.
    let (mut a, mut b) = (job_files(&local), job_files(&spark));
    a.retain(|name, _| !name.starts_with("index/"));
    let shard_files = b.keys().filter(|n| n.starts_with("shards/")).count();
    b.retain(|name, _| !name.starts_with("shards/"));
    // Two shards of 64 full barrels each, their lexicons and field lengths.
    assert!(shard_files > 2 * 64, "{shard_files} files of the shards");
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    assert!(a.len() > 15, "{:?}", a.keys());
    for alg in ["exact", "broder", "charikar", "minhash"] {
        for file in ["sketches", "pairs", "clusters"] {
            let name = format!("{file}-{alg}.wm");
            assert!(a.contains_key(&name), "no {name}: {:?}", a.keys());
        }
        // The dedup stages were made from Spark's tables, not by `run`.
        let exported = |job: &Path| {
            let o = webmill_ok([
                OsStr::new("export"),
                OsStr::new("pairs"),
                OsStr::new("--alg"),
                OsStr::new(alg),
                job.as_os_str(),
            ]);
            o.stdout
        };
        assert_eq!(exported(&local), exported(&spark), "{alg}'s exported pairs");
    }
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("dedup pairs, clusters") && l.contains(" driver ")),
        "{stderr}"
    );
    for (name, x) in &a {
        if x != &b[name] {
            let dump = |job: &Path| {
                let o = webmill_ok([OsStr::new("dump"), job.join(name).as_os_str()]);
                String::from_utf8_lossy(&o.stdout).into_owned()
            };
            let (da, db) = (dump(&local), dump(&spark));
            let first = da.lines().zip(db.lines()).find(|(x, y)| x != y);
            panic!("{name} differs between the local and the Spark job; first different line: {first:?}");
        }
    }
    assert!(stderr.contains("index shards "), "{stderr}");
    // verify checks every shard.
    let v = webmill_ok([OsStr::new("verify"), spark.as_os_str()]);
    let v = String::from_utf8_lossy(&v.stdout);
    assert!(v.contains("sharded index: 2 shards"), "{v}");
    // The same answers, and the broken input in the skip report.
    let file = queries(dir.path());
    let (x, y) = (search_json(&local, &file), search_json(&spark, &file));
    assert_eq!(x.len(), 100);
    let answered = x
        .iter()
        .filter(|v| !v["results"].as_array().unwrap().is_empty())
        .count();
    assert!(answered >= 50, "{answered} queries with results");
    for (p, q) in x.iter().zip(&y) {
        let (mut p, mut q) = (p.clone(), q.clone());
        if p["total_estimated"] == serde_json::json!(true)
            || q["total_estimated"] == serde_json::json!(true)
        {
            // Pruning left a total uncounted on one side (each shard prunes
            // against its own bar): the results still compare, and an
            // exact total lies within the estimate's bounds.
            for (a, b) in [(&p, &q), (&q, &p)] {
                if a["total_estimated"] == serde_json::json!(false) {
                    let t = a["total"].as_u64().unwrap();
                    let bounds = &b["total_bounds"];
                    assert!(
                        bounds[0].as_u64().unwrap() <= t && t <= bounds[1].as_u64().unwrap(),
                        "{}: total {t} outside {bounds}",
                        a["qid"]
                    );
                }
            }
            for v in [&mut p, &mut q] {
                let o = v.as_object_mut().unwrap();
                for k in [
                    "total",
                    "complete",
                    "total_estimated",
                    "total_bounds",
                    "complete_bounds",
                ] {
                    o.remove(k);
                }
            }
        }
        assert_eq!(p, q, "{}", p["qid"]);
    }
    let skips = webmill_ok([OsStr::new("export"), OsStr::new("skips"), spark.as_os_str()]);
    let skips = String::from_utf8_lossy(&skips.stdout);
    assert!(skips.contains("broken.warc.gz"), "{skips}");
    // The segments directory beside the job is gone.
    assert!(!dir.path().join("spark.segments").exists());
}

/// An independent reader of the exchange tables (formats/spark.md): pyarrow
/// reads every unit's `pages.parquet` and `links.parquet`, checks their
/// schemas and metadata, recomputes each sort key from its URL, and from
/// the tables alone rebuilds what `resolve` computes — docIDs in the keys'
/// byte order, each doc's first capture, the deduplicated arcs without
/// self-loops and the anchors by target — comparing them with the local
/// job's exports.
const READ_BACK: &str = r#"
import sys, os, urllib.parse, pyarrow.parquet as pq
seg, units, docs_pq, edges_pq, anchors_pq = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
KINDS = {0: "a", 1: "frame", 2: "refresh", 3: "redirect"}

def sort_key(url):
    p = urllib.parse.urlsplit(url)
    host = p.hostname or ""
    if all(c.isdigit() or c == "." for c in host) or ":" in host:
        k = host
    else:
        k = ",".join(reversed(host.split(".")))
    if p.port is not None:
        k += ":%d" % p.port
    k += ")" + p.path
    if "?" in url:
        k += "?" + url.split("?", 1)[1]
    return k.encode() + b"\0" + url.encode()

def expect(table, name, cols):
    meta = table.schema.metadata
    assert meta[b"webmill.table"] == name.encode() and meta[b"webmill.version"] == b"2", meta
    got = [(f.name, str(f.type)) for f in table.schema]
    assert got == cols, (name, got)
    for c in table.columns:
        assert c.null_count == 0

pages, links, base, fps = [], [], 0, {}
for u in range(units):
    d = os.path.join(seg, "unit-%06d" % u)
    p = pq.read_table(os.path.join(d, "pages.parquet"))
    l = pq.read_table(os.path.join(d, "links.parquet"))
    expect(p, "pages", [("unit", "int32"), ("page", "int64"), ("url", "string"), ("key", "binary"), ("bytes", "int64"), ("title", "string"), ("fp", "int64")])
    expect(l, "links", [("unit", "int32"), ("page", "int64"), ("source_url", "string"), ("target_url", "string"), ("target_key", "binary"), ("kind", "int8"), ("anchor", "string"), ("target_fp", "int64")])
    prow = p.to_pylist()
    assert [r["page"] for r in prow] == list(range(len(prow))), "pages in page order from 0"
    urls = [r["url"] for r in prow]
    for r in prow:
        assert r["unit"] == u and r["key"] == sort_key(r["url"]), r
        pages.append((base + r["page"], r["key"], r["bytes"], r["title"]))
        assert fps.setdefault(r["key"], r["fp"]) == r["fp"], "one URL, one fingerprint"
    for r in l.to_pylist():
        assert r["unit"] == u and r["source_url"] == urls[r["page"]], r
        assert r["target_key"] == sort_key(r["target_url"]), r
        links.append((base + r["page"], r["target_key"], r["kind"], r["anchor"]))
        assert fps.setdefault(r["target_key"], r["target_fp"]) == r["target_fp"], "one URL, one fingerprint"
    base += len(prow)

keys = sorted({k for _, k, _, _ in pages} | {k for _, k, _, _ in links})
doc = {k: i for i, k in enumerate(keys)}
first = {}
for page, k, b, t in sorted(pages):
    first.setdefault(k, (page, b, t))
want_docs = [(i, k.split(b"\0", 1)[1].decode(), k in first, first[k][1] if k in first else 0, first[k][2] if k in first else "") for i, k in enumerate(keys)]
got_docs = [tuple(r.values()) for r in pq.read_table(docs_pq).to_pylist()]
assert got_docs == want_docs, [x for x in zip(got_docs, want_docs) if x[0] != x[1]][:3]
src = {page: doc[k] for page, k, _, _ in pages}
arcs, anchors = set(), set()
for page, k, kind, text in links:
    s, t = src[page], doc[k]
    if s != t:
        arcs.add((s, t))
        if text:
            anchors.add((t, s, KINDS[kind], text))
got_edges = [tuple(r.values()) for r in pq.read_table(edges_pq).to_pylist()]
assert got_edges == sorted(arcs), (len(got_edges), len(arcs))
got_anchors = sorted(tuple(r.values()) for r in pq.read_table(anchors_pq).to_pylist())
assert got_anchors == sorted(anchors), (len(got_anchors), len(anchors))

# The global steps' tables, as formats/spark.md has them, from this
# numbering (for `webmill shard resolve --from`), and copies with one fault
# each: two docs out of key order, two URL pairs swapped, an arc missing
# from the transposed ones, two anchors swapped, a doc's first capture
# marked as a later one.
import pyarrow as pa
def host_of(k):
    i = k.find(b")")
    return k if i < 0 else k[: i + 1]
hosts, prev = [], None
for k in keys:
    if prev is not None and host_of(k) != host_of(prev):
        hosts.append(hosts[-1] + 1)
    else:
        hosts.append(hosts[-1] if hosts else 0)
    prev = k
def docs_table(order):
    rows = [(i, keys[j], hosts[j]) + ((first[keys[j]][0], first[keys[j]][1], first[keys[j]][2]) if keys[j] in first else (None, None, None)) for i, j in enumerate(order)]
    cols = list(zip(*rows))
    return pa.table({"doc": pa.array(cols[0], pa.int64()), "key": pa.array(cols[1], pa.binary()), "host": pa.array(cols[2], pa.int64()),
                     "page": pa.array(cols[3], pa.int64()), "bytes": pa.array(cols[4], pa.int64()), "title": pa.array(cols[5], pa.string())})
def table(rows, cols):
    c = list(zip(*rows))
    return pa.table({name: pa.array(c[i], t) for i, (name, t) in enumerate(cols)})
I64 = pa.int64()
pagedoc = sorted((page, doc[k], first[k][0] == page) for page, k, _, _ in pages)
targets = [(page, src[page], doc[k], kind, text) for page, k, kind, text in links]
# The fingerprints' unsigned order, written as int64 bits.
signed = lambda v: v - (1 << 64) if v >= 1 << 63 else v
url_pairs = [(signed(u), d) for u, d in sorted((fps[k] % (1 << 64), doc[k]) for k in keys)]
anchor_rows = sorted({(t, s, kind, text) for s, t, kind, text in ((src[p], doc[k], kind, text) for p, k, kind, text in links) if s != t and text},
                     key=lambda r: (r[0], r[1], r[2], r[3].encode()))
for name in ["good", "bad", "bad-urls", "bad-arcs", "bad-anchors", "bad-pagedoc"]:
    order = list(range(len(keys)))
    if name == "bad":
        order[5], order[6] = order[6], order[5]
    urls = list(url_pairs)
    if name == "bad-urls":
        urls[-2], urls[-1] = urls[-1], urls[-2]
    back = sorted((t, s) for s, t in arcs)
    if name == "bad-arcs":
        del back[len(back) // 3]
    anchored = list(anchor_rows)
    if name == "bad-anchors":
        anchored[1], anchored[2] = anchored[2], anchored[1]
    mapped = list(pagedoc)
    if name == "bad-pagedoc":
        # A doc's first capture marked as a later one.
        i = next(i for i, (_, _, f) in enumerate(mapped) if f)
        mapped[i] = (mapped[i][0], mapped[i][1], False)
    out = os.path.join(os.path.dirname(docs_pq), name)
    parts = {
        "docs": docs_table(order),
        "pagedoc": table(mapped, [("page", I64), ("doc", I64), ("first", pa.bool_())]),
        "links": table(targets, [("page", I64), ("source", I64), ("target", I64), ("kind", pa.int8()), ("anchor", pa.string())]),
        "urls": table(urls, [("fp", I64), ("doc", I64)]),
        "edges": table(sorted(arcs), [("source", I64), ("target", I64)]),
        "edges-t": table(back, [("target", I64), ("source", I64)]),
        "anchors": table(anchored, [("target", I64), ("source", I64), ("kind", pa.int8()), ("anchor", pa.string())]),
    }
    for t, whole in parts.items():
        os.makedirs(os.path.join(out, t))
        # Two parts: the row order is the parts' name order.
        half = whole.num_rows // 2
        pq.write_table(whole.slice(0, half), os.path.join(out, t, "part-00000-x.parquet"))
        pq.write_table(whole.slice(half), os.path.join(out, t, "part-00001-x.parquet"))
print("read back: %d pages, %d links, %d docs, %d arcs, %d anchors" % (len(pages), len(links), len(keys), len(arcs), len(anchors)))
"#;

/// What [`units_read_back`] made: the local job and the units' directory.
struct Units {
    local: PathBuf,
    seg: PathBuf,
}

/// `webmill run` over `inputs` into `dir/local`, every unit of `shard plan`
/// ingested (last first) into `dir/segments`, and [`READ_BACK`] run over
/// them, which also writes the global step's tables into `dir/good` and,
/// two docs out of key order, `dir/bad`.
fn units_read_back(dir: &Path, inputs: &[String], flags: &[&str]) -> Units {
    let local = dir.join("local");
    succeeded(
        &webmill()
            .args(flags)
            .args(["run", "--segment-records", "40", "--out"])
            .arg(&local)
            .args(inputs)
            .output()
            .unwrap(),
    );
    let plan = webmill()
        .args(flags)
        .args(["shard", "plan", "--segment-records", "40"])
        .args(inputs)
        .output()
        .unwrap();
    succeeded(&plan);
    let units = String::from_utf8_lossy(&plan.stdout).lines().count();
    let seg = dir.join("segments");
    for unit in (0..units).rev() {
        succeeded(
            &webmill()
                .args(flags)
                .args(["shard", "ingest", "--segment-records", "40", "--unit"])
                .arg(unit.to_string())
                .arg("--segments")
                .arg(&seg)
                .args(inputs)
                .output()
                .unwrap(),
        );
    }
    let mut exports = Vec::new();
    for table in ["docs", "edges", "anchors"] {
        let out = dir.join(format!("{table}.parquet"));
        webmill_ok([
            OsStr::new("export"),
            OsStr::new(table),
            local.as_os_str(),
            OsStr::new("--format"),
            OsStr::new("parquet"),
            OsStr::new("-o"),
            out.as_os_str(),
        ]);
        exports.push(out);
    }
    let out = run_ok(
        Command::new("python3")
            .args(["-c", READ_BACK])
            .arg(&seg)
            .arg(units.to_string())
            .args(&exports),
        "reading the exports back",
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    Units { local, seg }
}

/// `webmill shard join` of the units under `seg` into a new job `job`.
fn join(job: &Path, seg: &Path, inputs: &[String], flags: &[&str]) {
    succeeded(
        &webmill()
            .args(flags)
            .args(["shard", "join", "--segment-records", "40", "--out"])
            .arg(job)
            .arg("--segments-from")
            .arg(seg)
            .args(inputs)
            .output()
            .unwrap(),
    );
}

/// `webmill FLAGS… shard resolve --from TABLES JOB`, quiet.
fn resolve_cmd(job: &Path, tables: &Path, flags: &[&str]) -> Command {
    let mut c = Command::new(webmill_bin());
    c.args(flags)
        .args(["shard", "resolve", "--from"])
        .arg(tables)
        .arg(job)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

#[test]
fn the_exchange_tables_read_back_with_pyarrow_rebuild_the_resolved_job() {
    if let Some(why) = missing_pyarrow() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let Some(data) = data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    write_site(&site, 90, 7);
    let mut inputs: Vec<String> = ["iana.warc.gz", "dupes.warc.gz"]
        .iter()
        .map(|f| data.join("warc").join(f).display().to_string())
        .collect();
    inputs.push(format!("http://site.example/={}", site.display()));
    let flags = ["--mem", "64M", "--quiet"];
    let Units { local, seg } = units_read_back(dir.path(), &inputs, &flags);
    assert!(seg.join("unit-000003").is_dir(), "at least 4 units");

    // `shard resolve` takes those tables in place of its own URL sort: the
    // resolve stage's files are the local job's, byte for byte; tables out
    // of order are refused, naming the file and the row, and tables that
    // disagree, naming the table.
    for (name, fault) in [
        ("good", None),
        (
            "bad",
            Some(("docs/part-00000-x.parquet", "unsigned byte order")),
        ),
        (
            "bad-urls",
            Some(("urls/part-00001-x.parquet", "unsigned fingerprint")),
        ),
        (
            "bad-arcs",
            Some(("edges-t", "not those of edges/ reversed")),
        ),
        (
            "bad-anchors",
            Some(("anchors/part-00000-x.parquet", "row 2")),
        ),
        (
            "bad-pagedoc",
            Some(("pagedoc", "first captures are not the doc table's")),
        ),
    ] {
        let job = dir.path().join(format!("job-{name}"));
        join(&job, &seg, &inputs, &flags);
        let run = resolve_cmd(&job, &dir.path().join(name), &flags)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        if let Some((file, what)) = fault {
            assert!(!run.status.success());
            let err = String::from_utf8_lossy(&run.stderr);
            assert!(err.contains(file) && err.contains(what), "{name}: {err}");
        } else {
            succeeded(&run);
            let (a, b) = (job_files(&local), job_files(&job));
            let resolved: Vec<_> = ["docs.wm", "urls.wm", "pagedoc.wm", "anchors.wm", "edges.wm"]
                .iter()
                .filter_map(|f| b.keys().find(|k| k.ends_with(f)))
                .collect();
            assert_eq!(resolved.len(), 5, "{:?}", b.keys());
            for (name, x) in &b {
                assert!(
                    a.get(name) == Some(x),
                    "{name} differs from the local job's"
                );
            }
        }
    }
}

/// `webmill shard resolve --from` interrupted — aborted at failpoint hits
/// spread over an uninterrupted run's, and SIGKILLed at random moments —
/// and run again with the same command ends with the job's files
/// byte-identical to an uninterrupted run's (and to `webmill run`'s). The
/// input: three generated WARC files sharing their URLs (duplicate
/// captures across units) at a 1 MiB budget, so that every sort spills.
#[test]
fn shard_resolve_from_interrupted_then_rerun_gives_the_same_bytes() {
    if let Some(why) = missing_pyarrow() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for seed in 1..=3 {
        let warc = dir.path().join(format!("gen-{seed}.warc.gz"));
        Command::new(assert_cmd::cargo::cargo_bin("webmill-gen"))
            .args(["--format", "warc", "--gzip", "--quiet", "--threads", "1"])
            .args(["--nodes", "2000", "--arcs", "20000", "--seed"])
            .arg(seed.to_string())
            .arg("-o")
            .arg(&warc)
            .status()
            .unwrap()
            .success()
            .then_some(())
            .expect("webmill-gen");
        inputs.push(warc.display().to_string());
    }
    let flags = ["--mem", "1M", "--quiet"];
    let Units { local, seg } = units_read_back(dir.path(), &inputs, &flags);
    let tables = dir.path().join("good");

    // An uninterrupted run, its failpoint hits logged.
    let reference = dir.path().join("reference");
    join(&reference, &seg, &inputs, &flags);
    let log = dir.path().join("failpoints.log");
    let t = Instant::now();
    assert!(resolve_cmd(&reference, &tables, &flags)
        .env("WEBMILL_FAILPOINT_LOG", &log)
        .status()
        .unwrap()
        .success());
    let full = t.elapsed().as_millis() as u64;
    let want = job_files(&reference);
    let local = job_files(&local);
    for (name, bytes) in &want {
        assert!(
            local.get(name) == Some(bytes),
            "{name} differs from webmill run's"
        );
    }
    let hits = std::fs::read_to_string(&log).unwrap().lines().count() as u64;
    assert!(hits >= 8, "only {hits} failpoint hits");
    let same = |job: &Path, what: &str| {
        let got = job_files(job);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "files differ {what}"
        );
        for (name, bytes) in &want {
            assert!(&got[name] == bytes, "{name} differs {what}");
        }
    };
    // Aborted at 10 hits spread over the run, then run again.
    for i in 0..10 {
        let n = 1 + i * (hits - 1) / 9;
        let job = dir.path().join(format!("abort-{n}"));
        join(&job, &seg, &inputs, &flags);
        assert!(
            !resolve_cmd(&job, &tables, &flags)
                .env("WEBMILL_FAILPOINT", format!("*:{n}"))
                .status()
                .unwrap()
                .success(),
            "failpoint hit {n} of {hits} was never reached"
        );
        assert!(resolve_cmd(&job, &tables, &flags)
            .status()
            .unwrap()
            .success());
        same(
            &job,
            &format!("after an abort at failpoint hit {n} of {hits}"),
        );
    }
    // SIGKILLed at random moments until a run gets through, in rounds
    // until three kills landed (a run may finish before its kill when the
    // machine is quieter than during the reference run: the moments fall
    // in the first half of the reference's time, and more rounds follow).
    let mut rng = Rng(23);
    let mut kills = 0;
    for round in 0..12 {
        if kills >= 3 {
            break;
        }
        let job = dir.path().join(format!("killed-{round}"));
        join(&job, &seg, &inputs, &flags);
        let k = kill_until_done(
            || resolve_cmd(&job, &tables, &flags),
            &mut rng,
            2,
            (full / 2).max(10),
        );
        same(&job, &format!("after {k} kills"));
        kills += k;
    }
    eprintln!(
        "shard resolve --from: {hits} failpoint hits, {full} ms uninterrupted, {kills} kills"
    );
    assert!(
        kills >= 3,
        "{kills} kills: the runs ended before they were killed"
    );
}

/// The golden tables of Spark's global steps (`formats/golden/spark/shuffle/`,
/// which `tests/golden.rs` reads with `shard resolve --from`) are still what
/// `shuffle.py` writes from the golden unit tables: the same schemas (names,
/// types, nullability) and rows, part by part in name order (Spark's
/// Parquet bytes differ run to run: its footer names its build); and so
/// are near-duplicate detection's (`dedup/`: candidates, sketches, group
/// counts and ends, from the golden sketch shards and verified parts, by
/// `dedup.py`). With `WEBMILL_UPDATE_GOLDEN=1`, rewrites them.
#[test]
fn spark_writes_the_golden_exchange_tables() {
    if let Some(why) = missing() {
        eprintln!("SKIPPED: the Spark path cannot run here: {why}");
        return;
    }
    let golden = workspace_root().join("formats/golden/spark");
    let state = tempfile::tempdir().unwrap();
    let update = std::env::var("WEBMILL_UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let mut cmd = python(state.path());
    cmd.args(["-m", "webmill_spark.golden"]);
    if !update {
        cmd.arg("--check");
    }
    run_ok(
        cmd.arg(&golden)
            .arg(golden.join("shuffle"))
            .arg(golden.join("dedup")),
        "webmill_spark.golden",
    );
}

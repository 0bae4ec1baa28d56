//! Issue 23: near-duplicate detection's steps of a distributed job (`webmill
//! shard dedup`, formats/spark.md) without Spark: the executors' steps run
//! here, and pyarrow stands in for Spark's grouping with an independent
//! reference of the one-machine stage's rule (every pair of a key's docs,
//! or beyond `--max-group` each doc with the group's smallest). The
//! driver's step then makes, from those tables, every algorithm's sketch,
//! pair and cluster files byte for byte as `webmill run` does — with a
//! group cap small enough to cap groups — and refuses tables out of order
//! (naming file and row) or inconsistent with each other. A sketch task run
//! twice publishes once.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

const ALGS: &str = "exact,broder,charikar,minhash";

/// Spark's part of the dedup steps, by pyarrow: per algorithm, the
/// candidates with both sketches (two parts, by (a, b)), the sketches by
/// docID and the group counts; or, given `ends`, each doc's pairs counted
/// from `verified/`.
const GROUP: &str = r#"
import sys, os, json, itertools, pyarrow as pa, pyarrow.parquet as pq
dir, step, algs, max_group = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
shards = sorted(os.listdir(os.path.join(dir, "sketch")))
def write(rows, cols, path, parts=2):
    os.makedirs(path)
    c = list(zip(*rows)) if rows else [[] for _ in cols]
    t = pa.table({name: pa.array(c[i], ty) for i, (name, ty) in enumerate(cols)})
    half = t.num_rows // 2 if parts == 2 else t.num_rows
    pq.write_table(t.slice(0, half), os.path.join(path, "part-00000-x.parquet"))
    if parts == 2:
        pq.write_table(t.slice(half), os.path.join(path, "part-00001-x.parquet"))
I64, BIN = pa.int64(), pa.binary()
for alg in algs:
    out = os.path.join(dir, alg)
    if step == "group":
        keys, sketches, sketched = {}, {}, 0
        for s in shards:
            d = os.path.join(dir, "sketch", s)
            sketched += json.load(open(os.path.join(d, "counts.json")))["sketched"]
            t = pq.read_table(os.path.join(d, "keys-%s.parquet" % alg))
            assert t.schema.metadata[b"webmill.table"] == b"dedup-keys", t.schema.metadata
            for k, doc in zip(t["key"].to_pylist(), t["doc"].to_pylist()):
                keys.setdefault(k, set()).add(doc)
            for doc, sk in zip(*(pq.read_table(os.path.join(d, "sketches-%s.parquet" % alg))[c].to_pylist() for c in ["doc", "sketch"])):
                assert doc not in sketches
                sketches[doc] = sk
        pairs, groups, capped, n = set(), 0, 0, 0
        for docs in keys.values():
            d = sorted(docs)
            if len(d) < 2:
                continue
            groups += 1
            if len(d) > max_group:
                capped += 1
                got = [(d[0], x) for x in d[1:]]
            else:
                got = list(itertools.combinations(d, 2))
            n += len(got)
            pairs.update(got)
        rows = [(a, b, sketches[a], sketches[b]) for a, b in sorted(pairs) if a in sketches and b in sketches]
        write(rows, [("a", I64), ("b", I64), ("sketch_a", BIN), ("sketch_b", BIN)], os.path.join(out, "candidates"))
        write(sorted(sketches.items()), [("doc", I64), ("sketch", BIN)], os.path.join(out, "sketches"))
        json.dump({"sketched": sketched, "groups": groups, "capped": capped, "candidates": n, "max_group": max_group}, open(os.path.join(out, "groups.json"), "w"))
        print("%s: %d groups, %d capped, %d candidates" % (alg, groups, capped, len(rows)))
    else:
        count = {}
        for p in sorted(os.listdir(os.path.join(out, "verified"))):
            t = pq.read_table(os.path.join(out, "verified", p))
            for x in t["a"].to_pylist() + t["b"].to_pylist():
                count[x] = count.get(x, 0) + 1
        write(sorted(count.items()), [("doc", I64), ("pairs", I64)], os.path.join(out, "ends"), parts=1)
"#;

fn python(args: &[&OsStr]) {
    let out = run_ok(
        Command::new("python3").args(["-c", GROUP]).args(args),
        "the grouping script",
    );
    eprint!("{}", String::from_utf8_lossy(&out.stdout));
}

/// `webmill --mem 64M --quiet shard dedup --step STEP … --dir DIR
/// --max-group 2 JOB`.
fn step(step: &str, dir: &Path, algs: &str, extra: &[&str], job: &Path) -> std::process::Output {
    webmill()
        .args([
            "--mem", "64M", "--quiet", "shard", "dedup", "--step", step, "--dir",
        ])
        .arg(dir)
        .args(["--alg", algs, "--max-group", "2"])
        .args(extra)
        .arg(job)
        .output()
        .unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

#[test]
fn dedup_from_tables_grouped_elsewhere_is_the_local_stage_and_refuses_bad_tables() {
    if let Some(why) = missing_pyarrow() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let Some(data) = data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let inputs = mixed_inputs(dir.path(), &data, &[], 90, 7);
    let run = |job: &Path, dedup: &[&str]| {
        succeeded(
            &webmill()
                .args(["--mem", "64M", "--quiet", "run", "--no-index", "--out"])
                .arg(job)
                .args(dedup)
                .args(&inputs)
                .output()
                .unwrap(),
        )
    };
    let local = dir.path().join("local");
    run(&local, &["--dedup", ALGS, "--max-group", "2"]);
    let split = dir.path().join("split");
    run(&split, &["--no-dedup"]);

    // The executors' steps: three page ranges (one run twice: published
    // once), Spark's grouping by pyarrow, a verification task per part.
    let tables = dir.path().join("tables");
    for k in [2, 0, 1, 1] {
        let o = step(
            "sketch",
            &tables,
            ALGS,
            &["--shard", &k.to_string(), "--shards", "3"],
            &split,
        );
        succeeded(&o);
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["shard"], k);
    }
    let again = step(
        "sketch",
        &tables,
        ALGS,
        &["--shard", "1", "--shards", "3"],
        &split,
    );
    let r: serde_json::Value = {
        succeeded(&again);
        serde_json::from_slice(&again.stdout).unwrap()
    };
    assert_eq!(r["published"], false, "{r}");
    python(&[
        tables.as_os_str(),
        OsStr::new("group"),
        OsStr::new(ALGS),
        OsStr::new("2"),
    ]);
    for alg in ALGS.split(',') {
        // Part 0 twice (a retried task): published once.
        for (part, first) in [("0", true), ("1", true), ("0", false)] {
            let o = step("verify", &tables, alg, &["--part", part], &split);
            succeeded(&o);
            let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(r["published"], first, "{alg} part {part}: {r}");
        }
    }
    python(&[
        tables.as_os_str(),
        OsStr::new("ends"),
        OsStr::new(ALGS),
        OsStr::new("2"),
    ]);

    // Tables out of order or inconsistent are refused, naming where.
    let minhash = tables.join("minhash");
    let bad = |name: &str, spoil: &dyn Fn(&Path), want: &[&str]| {
        let copy: PathBuf = dir.path().join(name);
        copy_dir(&tables, &copy);
        spoil(&copy.join("minhash"));
        let o = step("finish", &copy, "minhash", &[], &split);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{name} was taken");
        for w in want {
            assert!(err.contains(w), "{name}: {w:?} not in {err}");
        }
    };
    let swap = |path: &Path| {
        let script = "import sys, pyarrow.parquet as pq\nt = pq.read_table(sys.argv[1])\nassert t.num_rows >= 2, t.num_rows\ni = list(range(t.num_rows))\ni[0], i[1] = i[1], i[0]\npq.write_table(t.take(i), sys.argv[1])\n";
        let o = Command::new("python3")
            .args(["-c", script])
            .arg(path)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    bad(
        "bad-order",
        &|m| swap(&m.join("verified/part-00000.parquet")),
        &[
            "verified/part-00000.parquet",
            "row 1",
            "not above the previous row",
        ],
    );
    bad(
        "bad-ends",
        &|m| {
            let script = "import sys, pyarrow.parquet as pq\nt = pq.read_table(sys.argv[1])\npq.write_table(t.slice(1), sys.argv[1])\n";
            let p = m.join("ends/part-00000-x.parquet");
            let o = Command::new("python3")
                .args(["-c", script])
                .arg(&p)
                .output()
                .unwrap();
            assert!(o.status.success());
        },
        &["verified/part-0000", "a doc that ends/ does not list"],
    );
    bad(
        "bad-sketches",
        &|m| swap(&m.join("sketches/part-00000-x.parquet")),
        &["sketches/part-00000-x.parquet", "row 1"],
    );
    assert!(minhash.join("ends").is_dir());
    let capped: u64 = ALGS
        .split(',')
        .map(|alg| {
            let g = std::fs::read(tables.join(alg).join("groups.json")).unwrap();
            let g: serde_json::Value = serde_json::from_slice(&g).unwrap();
            g["capped"].as_u64().unwrap()
        })
        .sum();
    assert!(capped > 0, "no group met the cap");

    // The good tables: every algorithm's files are the local stage's.
    succeeded(&step("finish", &tables, ALGS, &[], &split));
    for alg in ALGS.split(',') {
        for file in ["sketches", "pairs", "clusters"] {
            let name = format!("{file}-{alg}.wm");
            let (a, b) = (
                std::fs::read(local.join(&name)).unwrap(),
                std::fs::read(split.join(&name)).unwrap(),
            );
            assert!(a == b, "{name} differs from the local stage's");
        }
    }
    // The group cap was met, and the stages' figures are the local ones.
    let figures = |job: &Path| {
        let o = webmill_ok([
            OsStr::new("stats"),
            OsStr::new("--json"),
            OsStr::new("--no-degrees"),
            job.as_os_str(),
        ]);
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let (fa, fb) = (figures(&local), figures(&split));
    fn pick(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    if k.starts_with("dedup_") {
                        out.push(format!("{k}={x}"));
                    } else {
                        pick(x, out);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| pick(x, out)),
            _ => {}
        }
    }
    let (mut pa, mut pb) = (Vec::new(), Vec::new());
    pick(&fa, &mut pa);
    pick(&fb, &mut pb);
    assert!(!pa.is_empty(), "{fa}");
    assert_eq!(pa, pb);
    // `webmill run` over the job now skips the dedup stages.
    let o = webmill()
        .args(["--mem", "64M", "run", "--no-index", "--out"])
        .arg(&split)
        .args(["--dedup", ALGS, "--max-group", "2"])
        .args(&inputs)
        .output()
        .unwrap();
    succeeded(&o);
    for alg in ALGS.split(',') {
        let name = format!("pairs-{alg}.wm");
        assert!(
            std::fs::read(local.join(&name)).unwrap() == std::fs::read(split.join(&name)).unwrap()
        );
    }
}

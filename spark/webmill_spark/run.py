"""`python -m webmill_spark run --master URL --out JOB INPUT...`: a webmill job
whose ingest runs as Spark tasks.

The ingest is cut into units that depend only on their input (a WARC, WET or
JSONL file each; runs of a directory's HTML files): `webmill shard plan`
lists them, one Spark task per unit runs `webmill shard ingest --unit K` on
an executor, writing the unit's segments and its exchange tables
(`pages.parquet`, `links.parquet`: formats/spark.md) under an attempt
directory of its own in the shared segments directory and publishing it by
one rename (so Spark's retries and a killed executor cost only that task).
Then Spark numbers every URL from the exchange tables (`shuffle.py`: a
range-partitioned sort by host-reversed key, docIDs from the ranges'
offsets, the pages and links joined with their docIDs) while the driver
joins the segments into the job (`webmill shard join`); `webmill shard
resolve` builds the resolve stage's files from Spark's numbering, and
`webmill run` runs the stages after it. The job is byte-identical to
`webmill run` on one machine with the same inputs and flags.

What a user provides: the `webmill` binary at the same path on every node
(`--webmill`, default: `webmill` on the PATH), the inputs and the segments
directory on a file system every node reads (NFS, a cluster file system, or
this machine's disk for a local cluster).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .tasks import run_task

# Flags of `webmill ingest` that decide what the units are and what they hold:
# given to `shard plan`, every `shard ingest` task, `ingest` and `run` alike.
SOURCE_FLAGS = ["--base-url", "--segment-records", "--max-record-bytes", "--text-field", "--id-field", "--url-field"]


def find_webmill(given: str | None) -> str:
    cand = given or os.environ.get("WEBMILL") or shutil.which("webmill")
    if not cand:
        raise SystemExit(
            "webmill_spark: no webmill binary: give --webmill PATH (the same path on every node) or put `webmill` on the PATH"
        )
    path = Path(cand).resolve()
    if not os.access(path, os.X_OK):
        raise SystemExit(f"webmill_spark: {path} is not an executable")
    return str(path)


def _absolute(arg: str) -> str:
    """INPUT or BASE_URL=INPUT with the path made absolute (not normalized)."""
    base, sep, path = arg.partition("=") if "=" in arg and "://" in arg.split("=", 1)[0] else ("", "", arg)
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    return f"{base}{sep}{path}"


def _task(webmill: str, global_flags: list[str], source: list[str], segments: str, unit: int) -> dict:
    """One unit on an executor (runs in Spark's Python worker)."""
    cmd = [webmill, *global_flags, "shard", "ingest", "--unit", str(unit), "--segments", segments, *source]
    return run_task(cmd, f"unit {unit}", "ingest", unit)


def _bytes(n: float) -> str:
    for unit in ["B", "KB", "MB", "GB"]:
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def _webmill(cmd: list[str], capture: bool = True) -> str:
    """Runs webmill on the driver; its messages go to our stderr."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE if capture else None, text=True)
    if p.returncode != 0:
        raise SystemExit(f"webmill_spark: {' '.join(cmd)} exited {p.returncode}")
    return p.stdout or ""


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m webmill_spark run",
        description="Run a webmill job with its ingest as Spark tasks; the job is the same as "
        "`webmill run` makes on one machine. Flags after `--` go to `webmill run`.",
    )
    ap.add_argument("--master", required=True, help="Spark master URL (spark://HOST:PORT, local[N])")
    ap.add_argument("--out", required=True, help="the job directory (created if missing)")
    ap.add_argument("--webmill", help="the webmill binary, at this path on every node (default: webmill on the PATH)")
    ap.add_argument("--mem", default="1G", help="webmill's memory budget per process (default 1G); same for every task")
    ap.add_argument("--threads", type=int, default=1, help="threads of each task's webmill (default 1: Spark runs one task per core)")
    ap.add_argument("--segments", help="shared directory for the units' segments (default: JOB.segments beside the job; removed at the end)")
    ap.add_argument("--executor-memory", default="512m", help="memory of each Spark executor's JVM (default 512m; webmill runs beside it)")
    ap.add_argument("--partitions", type=int, help="partitions of the global steps' shuffles (default: twice Spark's default parallelism)")
    ap.add_argument("--index-shards", type=int, help="the index as this many document-partitioned shards, built as Spark tasks (default: Spark's default parallelism; 0: one index, built on the driver)")
    ap.add_argument("--dedup-shards", type=int, help="page ranges of near-duplicate detection's sketch tasks (default: Spark's default parallelism)")
    for f in SOURCE_FLAGS:
        ap.add_argument(f, help=f"as `webmill ingest {f}`")
    ap.add_argument("inputs", nargs="+", metavar="INPUT", help="WARC/WET/JSONL files and directories, as `webmill run` takes them")
    if "--" in argv:
        i = argv.index("--")
        argv, run_flags = argv[:i], argv[i + 1 :]
    else:
        run_flags = []
    a = ap.parse_args(argv)
    webmill = find_webmill(a.webmill)
    out = Path(a.out).resolve()
    segments = Path(a.segments).resolve() if a.segments else out.with_name(out.name + ".segments")
    source: list[str] = []
    for f in SOURCE_FLAGS:
        v = getattr(a, f[2:].replace("-", "_"))
        if v is not None:
            source += [f, v]
    # Executors run elsewhere: a relative input is made absolute (as given
    # otherwise, so the skip report names it as `webmill run` would).
    inputs = [_absolute(i) for i in a.inputs]
    source += inputs
    global_flags = ["--mem", a.mem, "--threads", str(a.threads), "--quiet"]

    t0 = time.monotonic()
    plan = [json.loads(l) for l in _webmill([webmill, *global_flags, "shard", "plan", *source]).splitlines() if l.strip()]
    total = sum(u["bytes"] for u in plan)
    print(f"webmill_spark: {len(plan)} units, {total:,} bytes of input", file=sys.stderr)

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(a.master)
        .appName(f"webmill run {out.name}")
        .config("spark.executor.memory", a.executor_memory)
        .config("spark.task.maxFailures", "4")
        # The exchange tables' row order is their part files' names.
        .config("spark.sql.adaptive.enabled", "false")
        # Each executor's peak RSS (JVM, Python workers, webmill), polled.
        .config("spark.executor.processTreeMetrics.enabled", "true")
        .config("spark.executor.metrics.pollingInterval", "500")
        .config("spark.ui.showConsoleProgress", "true" if sys.stderr.isatty() else "false")
    )
    # The tasks' test hooks (tasks.py), when set.
    for hook in ("WEBMILL_SPARK_MARKERS", "WEBMILL_SPARK_HOLD"):
        if os.environ.get(hook):
            spark = spark.config(f"spark.executorEnv.{hook}", os.environ[hook])
    spark = spark.getOrCreate()
    sc = spark.sparkContext
    # The tasks' functions travel by value, so the executors need pyspark
    # but not this package.
    from pyspark import cloudpickle

    from . import dedup as dedup_module
    from . import figures as figures_module
    from . import index as index_module
    from . import shuffle as shuffle_module
    from . import tasks as tasks_module

    for m in (sys.modules[__name__], shuffle_module, figures_module, index_module, dedup_module, tasks_module):
        cloudpickle.register_pickle_by_value(m)
    sc.setLogLevel("ERROR")
    segments.mkdir(parents=True, exist_ok=True)
    shuffled = segments / "shuffle"
    gflags = ["--mem", a.mem]
    t1 = time.monotonic()
    w1 = time.time()
    try:
        sc.setJobDescription(f"webmill ingest: {len(plan)} units ({total:,} bytes)")
        # Largest units first so the long ones do not start last.
        order = [u["unit"] for u in sorted(plan, key=lambda u: (-u["bytes"], u["unit"]))]
        seg = str(segments)
        reports = (
            sc.parallelize(order, max(1, len(order)))
            .setName("ingest units")
            .map(lambda k: _task(webmill, global_flags, source, seg, k))
            .collect()
        )
        t2, w2 = time.monotonic(), time.time()
        sc.setJobDescription(None)
        pages = sum(r["counts"]["pages"] for r in reports)
        skipped = sum(r["counts"].get("skipped", 0) for r in reports)
        print(
            f"webmill_spark: ingest on Spark: {len(reports)} tasks, {pages:,} pages, {skipped:,} skipped, {t2 - t1:.1f} s",
            file=sys.stderr,
        )
        # The driver joins the segments into the job while Spark numbers the
        # URLs from the units' exchange tables.
        join = subprocess.Popen(
            [webmill, *gflags, "--quiet", "shard", "join", "--out", str(out), "--segments-from", str(segments), *source]
        )
        from .shuffle import number_urls, sort_for_resolve

        unit_pages = {r["unit"]: r["counts"]["pages"] for r in reports}
        parts = a.partitions or max(2, 2 * sc.defaultParallelism)
        numbered = number_urls(spark, str(segments), unit_pages, str(shuffled), parts)
        t3a, w3a = time.monotonic(), time.time()
        print(
            f"webmill_spark: URL numbering on Spark: {numbered['docs']:,} docs in {parts} ranges, {t3a - t2:.1f} s",
            file=sys.stderr,
        )
        sort_for_resolve(spark, str(shuffled), parts)
        t3, w3 = time.monotonic(), time.time()
        print(f"webmill_spark: resolve's sorts on Spark: {t3 - t3a:.1f} s", file=sys.stderr)
        if join.wait() != 0:
            raise SystemExit(f"webmill_spark: the join of the segments (webmill shard join) exited {join.returncode}")
        t4 = time.monotonic()
        # Resolve with Spark's numbering; then the index's shards on Spark
        # while the driver runs the other stages after resolve.
        _webmill([webmill, *gflags, "--quiet", "shard", "resolve", "--from", str(shuffled), str(out)])
        t5, w5 = time.monotonic(), time.time()
        n_shards = sc.defaultParallelism if a.index_shards is None else a.index_shards
        if "--no-index" in run_flags:
            n_shards = 0
        # Near-duplicates' sketches, groups and verification on Spark; the
        # driver runs PageRank meanwhile (dedup keeps the highest-ranked doc
        # of a cluster, so its last step waits for the ranks).
        algs, dedup_flags, other_flags = dedup_module.plan(run_flags)
        no_index = ["--no-index"] if n_shards else []
        later = subprocess.Popen(
            [webmill, *gflags, "run", "--out", str(out), *other_flags, *no_index, *(["--no-dedup"] if algs else []), *source],
            stdout=subprocess.DEVNULL if algs else None,
        )
        indexed = index_module.build_shards(sc, webmill, gflags, str(out), n_shards, index_module.index_flags(run_flags)) if n_shards else None
        w6, t6a = time.time(), time.monotonic()
        dedup_dir = str(segments / "dedup")
        dedup_shards = a.dedup_shards or sc.defaultParallelism
        deduped = dedup_module.run(spark, webmill, gflags, str(out), dedup_dir, dedup_shards, algs, dedup_flags, parts) if algs else None
        w7, t6b = time.time(), time.monotonic()
        if later.wait() != 0:
            raise SystemExit(f"webmill_spark: the stages after resolve (webmill run) exited {later.returncode}")
        t6 = time.monotonic()
        if algs:
            # The dedup stages from Spark's sorted tables, then `webmill run`
            # over the finished job for its summary (every stage skipped).
            _webmill([webmill, *gflags, "--quiet", "shard", "dedup", "--step", "finish", "--dir", dedup_dir, "--alg", ",".join(algs), *dedup_flags, str(out)])
            t6c = time.monotonic()
            _webmill([webmill, *gflags, "run", "--out", str(out), *run_flags, *no_index, *source], capture=False)
        else:
            t6c = t6
        t_end = time.monotonic()
        windows = [
            ("webmill ingest", w1, w2),
            ("webmill resolve, numbering", w2, w3a),
            ("webmill resolve, sorts", w3a, w3),
            ("webmill index", w5, w6),
            ("webmill dedup", w6, w7),
        ]
        figures = figures_module.stage_figures(sc, windows)
        peaks = figures_module.executor_peaks(sc)
    finally:
        spark.stop()
    if not a.segments:
        shutil.rmtree(segments, ignore_errors=True)
    shuffled = sum(f["shuffle_write"] for f in figures.values())
    resolve_steps = {d: f for d, f in figures.items() if d.startswith("webmill resolve")}
    first_four = tuple(f"webmill resolve {i}/" for i in range(1, 5)) + ("webmill resolve, numbering",)
    numbering = {d: f for d, f in resolve_steps.items() if d.startswith(first_four)}
    sorts = {d: f for d, f in resolve_steps.items() if d not in numbering}
    rss = max((r.get("peak_rss", 0) for r in reports), default=0)
    rows = [
        ("plan, Spark session", "driver", t1 - t0, None, f"{len(plan)} units, {total:,} bytes of input"),
        ("ingest", "Spark", t2 - t1, None, f"{len(reports)} tasks, {pages:,} pages, {skipped:,} skipped; webmill peak RSS {_bytes(rss)} at --mem {a.mem}"),
        ("URL numbering, link joins", "Spark", t3a - t2, sum(f["shuffle_write"] for f in numbering.values()), f"{numbered['docs']:,} docs in {parts} key ranges"),
        ("resolve's sorts", "Spark", t3 - t3a, sum(f["shuffle_write"] for f in sorts.values()), "URL table, arcs both ways, anchors"),
        ("join of the segments", "driver", t4 - t3, None, "beside the numbering; this is the wait after it"),
        ("resolve from Spark's tables", "driver", t5 - t4, None, "streamed: doc and URL tables, page map, edges, anchors"),
        ("later stages", "driver", t6 - t5, None, "`webmill run`: PageRank" + ("" if algs else ", dedup") + ("" if indexed or "--no-index" in run_flags else ", index")),
    ]
    if indexed:
        rows.append(("index shards", "Spark", indexed["seconds"], None, index_module.summary(indexed, a.mem)))
    if deduped:
        dd = {d: f for d, f in figures.items() if d.startswith("webmill dedup")}
        rows.append(("dedup sketches", "Spark", deduped["sketch_s"], None, dedup_module.summary(deduped)))
        rows.append(
            (
                "dedup groups, verification",
                "Spark",
                deduped["spark_s"],
                sum(f["shuffle_write"] for f in dd.values()),
                f"keys → candidate pairs → sketches joined → verified ({deduped['verify_s']:.1f} s) → pair ends; wait for PageRank after it {t6 - t6b:.1f} s",
            )
        )
        rows.append(("dedup pairs, clusters", "driver", t6c - t6, None, "streamed from Spark's sorted tables: sketch, pair and cluster files"))
    lines = [f"webmill_spark: the job through Spark ({a.master}):"]
    for step, where, secs, shuf, what in rows:
        sh = "" if shuf is None else f"shuffled {_bytes(shuf)}"
        lines.append(f"  {step:<28} {where:<7} {secs:7.1f} s  {sh:<17} {what}")
    for d, f in sorted(figures.items()):
        lines.append(f"    {d}: {f['stages']} stages, shuffle write {_bytes(f['shuffle_write'])}, read {_bytes(f['shuffle_read'])}, task time {f['task_ms'] / 1000:.1f} s")
    if peaks:
        each = ", ".join(f"{p['id']}: {_bytes(p['rss'])}" for p in peaks)
        heap = max(p["heap"] for p in peaks)
        lines.append(
            f"    executors' peak RSS (JVM, Python workers, webmill) {each}; JVM heap peak {_bytes(heap)} "
            f"of --executor-memory {a.executor_memory}; webmill --mem {a.mem}"
        )
    per_page = f", {shuffled / max(pages, 1):.0f} bytes shuffled per page" if figures else ""
    lines.append(f"Job {out} is complete through Spark in {t_end - t0:.1f} s{per_page}.")
    print("\n".join(lines), file=sys.stderr)
    return 0

"""The job's index as document-partitioned shards, a Spark task per shard.

`webmill shard index` in five steps (src/index/shards.rs): per task on an
executor, `split` (a run of the job's text blocks split by shard, so that a
shard's task then reads only its own documents' text); per shard on an
executor, `forward` (pass 1 and the forward pass of the shard's docID range,
with its field lengths); once on the driver, `gather` (the collection's
field lengths, so every shard scores as the single index would); per shard
on an executor, `sort` (the barrels, with block bounds from the collection's
averages, and the lexicon); once on the driver, `finish` (the manifest
`JOB/shards/shards.wm`). Each per-shard step works under an attempt
directory and publishes it by one rename, so Spark's retries are safe.
`webmill search`, `serve` and `verify` then use the shards.
"""

from __future__ import annotations

import subprocess
import time

from .tasks import pick_flags, run_task

# `webmill run` flags that decide the index (given after `--`).
INDEX_FLAGS = ["--barrels", "--stem"]


def index_flags(run_flags: list[str]) -> list[str]:
    """The index's flags among `webmill run`'s (`--barrels N`, `--stem=HOW`)."""
    return pick_flags(run_flags, INDEX_FLAGS)[0]


def _step(webmill: str, gflags: list[str], step: str, shard: int, shards: int, job: str, flags: list[str]) -> dict:
    """One shard's step on an executor (runs in Spark's Python worker)."""
    cmd = [webmill, *gflags, "--quiet", "shard", "index", "--step", step, "--shard", str(shard), "--shards", str(shards), *flags, job]
    return run_task(cmd, f"{step} shard {shard}", step, shard)


def _driver(cmd: list[str]) -> None:
    p = subprocess.run(cmd)
    if p.returncode != 0:
        raise SystemExit(f"webmill_spark: {' '.join(cmd)} exited {p.returncode}")


def _wave(sc, description: str, step: str, webmill: str, gflags: list[str], shards: int, job: str, flags: list[str]) -> list:
    """One Spark task per shard running `webmill shard index --step STEP`;
    the tasks' reports, in shard order."""
    sc.setJobDescription(description)
    return (
        sc.parallelize(range(shards), shards)
        .setName(f"index shards: {step}")
        .map(lambda k: _step(webmill, gflags, step, k, shards, job, flags))
        .collect()
    )


def build_shards(sc, webmill: str, gflags: list[str], job: str, shards: int, flags: list[str]) -> dict:
    """Builds the sharded index of the resolved `job`; returns its figures:
    seconds of each step and the tasks' reports."""
    common = ["--shards", str(shards), *flags, job]
    t0 = time.monotonic()
    spl = _wave(sc, f"webmill index 1/3: the text split by shard, {shards} tasks", "split", webmill, gflags, shards, job, flags)
    ts = time.monotonic()
    fwd = _wave(sc, f"webmill index 2/3: forward pass of {shards} shards", "forward", webmill, gflags, shards, job, flags)
    t1 = time.monotonic()
    _driver([webmill, *gflags, "--quiet", "shard", "index", "--step", "gather", *common])
    t2 = time.monotonic()
    srt = _wave(sc, f"webmill index 3/3: barrels and lexicons of {shards} shards", "sort", webmill, gflags, shards, job, flags)
    t3 = time.monotonic()
    _driver([webmill, *gflags, "--quiet", "shard", "index", "--step", "finish", *common])
    t4 = time.monotonic()
    return {
        "shards": shards,
        "split_s": ts - t0,
        "forward_s": t1 - ts,
        "gather_s": t2 - t1,
        "sort_s": t3 - t2,
        "finish_s": t4 - t3,
        "seconds": t4 - t0,
        "tasks": spl + fwd + srt,
        "peak_rss": max((r.get("peak_rss", 0) for r in spl + fwd + srt), default=0),
    }


def summary(f: dict, mem: str) -> str:
    """The summary line of `build_shards`' figures."""
    secs = sorted(r["seconds"] for r in f["tasks"])
    return (
        f"{f['shards']} shards beside the later stages: split {f['split_s']:.1f} s, forward {f['forward_s']:.1f} s, gather {f['gather_s']:.1f} s, "
        f"sort {f['sort_s']:.1f} s, manifest {f['finish_s']:.1f} s; longest task {secs[-1] if secs else 0:.1f} s; "
        f"webmill peak RSS {f['peak_rss'] / 1e6:.0f} MB at --mem {mem}"
    )

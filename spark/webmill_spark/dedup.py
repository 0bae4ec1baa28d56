"""Near-duplicate detection with its sorts as Spark shuffles
(`webmill shard dedup`, src/dedup/exchange.rs, formats/spark.md).

1. per page range on the executors (`--step sketch`): each page's keys
   (the exact fingerprint, 15 megashingles, 13 subsketches, 20 band keys)
   and its sketch, as Parquet;
2. Spark, per algorithm: the distinct (key, doc) rows grouped by key; a
   group of n ≥ 2 docs yields all its pairs, or — beyond the group cap
   (`--max-group`) — each doc paired with the group's smallest docID, as
   the one-machine stage's `group_pairs` does; the pairs made distinct,
   joined with both docs' sketches and written range-partitioned and
   sorted by (a, b) (`candidates/`), the sketches by docID (`sketches/`),
   the group counts (`groups.json`);
3. per candidate part on the executors (`--step verify`): the pairs the
   algorithm's own test passes (`verified/`, same order);
4. Spark: each doc's number of pairs, by docID (`ends/`);

then the driver's `--step finish` streams the sorted tables into the
stage's files (pairs, union-find clusters, sketch file, plot), byte-identical
to `webmill run`'s.
"""

from __future__ import annotations

import json
import os
import time

from .tasks import pick_flags, run_task

# `webmill run` flags that decide near-duplicate detection (given after `--`).
DEDUP_FLAGS = ["--dedup", "--shingle", "--threshold", "--verify", "--max-group"]
# Its algorithms when `--dedup` is not given (web inputs).
DEFAULT_ALGS = "minhash,broder"


def plan(run_flags: list[str]) -> tuple[list[str], list[str], list[str]]:
    """From `webmill run`'s flags: (the algorithms, the flags `shard dedup`
    takes, `webmill run`'s flags without dedup's, for the run of the other
    stages). No algorithms with `--no-dedup`."""
    picked, rest = pick_flags(run_flags, DEDUP_FLAGS)
    if "--no-dedup" in run_flags:
        return [], [], rest
    algs, flags = DEFAULT_ALGS, []
    i = 0
    while i < len(picked):
        f = picked[i]
        name, eq, val = f.partition("=")
        if not eq:
            val = picked[i + 1]
            i += 1
        if name == "--dedup":
            algs = val
        else:
            flags += [name, val]
        i += 1
    return [a for a in algs.split(",") if a], flags, rest


def _parts(path: str) -> list[str]:
    return sorted(n for n in os.listdir(path) if n.startswith("part-") and n.endswith(".parquet"))


def candidates(spark, dir: str, alg: str, shards: int, max_group: int, partitions: int) -> dict:
    """Steps 2 of `alg`: from the sketch shards' tables, `ALG/sketches/`,
    `ALG/candidates/` and `ALG/groups.json` (its counts, returned)."""
    from pyspark.sql import functions as F

    from .shuffle import _sorted_write

    sc = spark.sparkContext
    out = os.path.join(dir, alg)
    shard_dirs = [os.path.join(dir, "sketch", f"shard-{k:04d}") for k in range(shards)]
    sc.setJobDescription(f"webmill dedup 2/4 {alg}: group the keys, count the groups")
    keys = spark.read.parquet(*[os.path.join(d, f"keys-{alg}.parquet") for d in shard_dirs]).distinct()
    groups = keys.groupBy("key").agg(F.count("*").alias("n"), F.min("doc").alias("first")).where(F.col("n") >= 2).cache()
    capped = F.col("n") > F.lit(max_group)
    c = groups.agg(
        F.count("*").alias("groups"),
        F.sum(F.when(capped, 1).otherwise(0)).alias("capped"),
        F.sum(F.when(capped, F.col("n") - 1).otherwise(F.col("n") * (F.col("n") - 1) / 2)).cast("long").alias("candidates"),
    ).collect()[0]
    # Groups within the cap: every pair; beyond it: each doc with the
    # group's first (smallest) doc.
    small = keys.join(groups.where(~capped).select("key"), "key")
    x, y = small.alias("x"), small.alias("y")
    pairs = x.join(y, F.col("x.key") == F.col("y.key")).where(F.col("x.doc") < F.col("y.doc")).select(F.col("x.doc").alias("a"), F.col("y.doc").alias("b"))
    big = keys.join(groups.where(capped).select("key", "first"), "key").where(F.col("doc") != F.col("first"))
    pairs = pairs.unionByName(big.select(F.col("first").alias("a"), F.col("doc").alias("b"))).distinct()
    sketches = spark.read.parquet(*[os.path.join(d, f"sketches-{alg}.parquet") for d in shard_dirs])
    sc.setJobDescription(f"webmill dedup 2/4 {alg}: candidate pairs with both sketches, sorted by (a, b)")
    joined = pairs.join(sketches.select(F.col("doc").alias("a"), F.col("sketch").alias("sketch_a")), "a").join(
        sketches.select(F.col("doc").alias("b"), F.col("sketch").alias("sketch_b")), "b"
    )
    _sorted_write(joined.select("a", "b", "sketch_a", "sketch_b"), ["a", "b"], partitions, os.path.join(out, "candidates"))
    sc.setJobDescription(f"webmill dedup 2/4 {alg}: sketches by docID")
    _sorted_write(sketches, ["doc"], partitions, os.path.join(out, "sketches"))
    groups.unpersist()
    return {"groups": c["groups"], "capped": int(c["capped"] or 0), "candidates": int(c["candidates"] or 0), "max_group": max_group}


def ends(spark, dir: str, alg: str, partitions: int) -> None:
    """Step 4 of `alg`: `ALG/ends/`, each doc in pairs with its number of
    pairs, by docID."""
    from pyspark.sql import functions as F

    from .shuffle import _sorted_write

    spark.sparkContext.setJobDescription(f"webmill dedup 4/4 {alg}: each doc's pairs, by docID")
    v = spark.read.parquet(os.path.join(dir, alg, "verified"))
    docs = v.select(F.col("a").alias("doc")).unionAll(v.select(F.col("b").alias("doc")))
    _sorted_write(docs.groupBy("doc").agg(F.count("*").alias("pairs")), ["doc"], partitions, os.path.join(dir, alg, "ends"))


def run(spark, webmill: str, gflags: list[str], job: str, dir: str, shards: int, algs: list[str], flags: list[str], partitions: int) -> dict:
    """Steps 1–4 for `algs` on Spark, leaving the tables `shard dedup
    --step finish` reads under `dir`; returns the figures."""
    sc = spark.sparkContext
    common = ["--dir", dir, "--alg", ",".join(algs), *flags]
    t0 = time.monotonic()
    sc.setJobDescription(f"webmill dedup 1/4: sketch {shards} page ranges ({', '.join(algs)})")
    cmd = [webmill, *gflags, "--quiet", "shard", "dedup", "--step", "sketch", "--shards", str(shards), *common]
    sketched = (
        sc.parallelize(range(shards), shards)
        .setName("dedup: sketch page ranges")
        .map(lambda k: run_task([*cmd, "--shard", str(k), job], f"sketch shard {k}", "sketch", k))
        .collect()
    )
    t1 = time.monotonic()
    pages = sum(r["sketched"] for r in sketched)
    per_alg = {}
    verify_s = 0.0
    for alg in algs:
        max_group = sketched[0]["params"][alg]["max_group"]
        c = candidates(spark, dir, alg, shards, max_group, partitions)
        c["sketched"] = pages
        with open(os.path.join(dir, alg, "groups.json"), "w") as f:
            json.dump(c, f)
        cand_parts = _parts(os.path.join(dir, alg, "candidates"))
        tv = time.monotonic()
        sc.setJobDescription(f"webmill dedup 3/4 {alg}: verify {len(cand_parts)} candidate parts")
        vcmd = [webmill, *gflags, "--quiet", "shard", "dedup", "--step", "verify", "--dir", dir, "--alg", alg, *flags]
        reports = (
            sc.parallelize(range(len(cand_parts)), max(1, len(cand_parts)))
            .setName(f"dedup {alg}: verify candidate parts")
            .map(lambda i: run_task([*vcmd, "--part", str(i), job], f"verify {alg} part {i}", f"verify-{alg}", i))
            .collect()
        )
        verify_s += time.monotonic() - tv
        ends(spark, dir, alg, partitions)
        c["verified"] = sum(r["verified"] for r in reports)
        per_alg[alg] = c
    sc.setJobDescription(None)
    t2 = time.monotonic()
    return {
        "shards": shards,
        "pages": pages,
        "sketch_s": t1 - t0,
        "spark_s": t2 - t1,
        "verify_s": verify_s,
        "algs": per_alg,
        "peak_rss": max((r.get("peak_rss", 0) for r in sketched), default=0),
    }


def summary(f: dict) -> str:
    """The summary line of `run`'s figures."""
    each = "; ".join(f"{a}: {c['candidates']:,} candidates from {c['groups']:,} groups ({c['capped']} capped), {c['verified']:,} verified" for a, c in f["algs"].items())
    return f"{f['pages']:,} pages in {f['shards']} page ranges, sketched in {f['sketch_s']:.1f} s; {each}"

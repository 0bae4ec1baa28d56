"""`python -m webmill_spark.golden [--check] SEGMENTS OUT [DEDUP]`: the global
steps' tables for the golden exchange tables (formats/golden/spark/,
formats/spark.md "Golden tables").

Runs `shuffle.number_urls` and `shuffle.sort_for_resolve` on a local Spark
(two partitions, as a cluster of two would) over the units of SEGMENTS
(`unit-NNNNNN/pages.parquet` and `links.parquet`), then copies each table's
part files into OUT/TABLE/ as `part-00000.parquet`, `part-00001.parquet`, …
in Spark's name order (so the row order is kept), without Spark's job UUID
in their names, its `_SUCCESS` markers or checksum files. Given DEDUP (a
directory of near-duplicate detection's tables, `formats/golden/spark/dedup/`),
also Spark's part of it (`dedup.candidates`, `dedup.ends`) from the sketch
shards webmill wrote there (`DEDUP/sketch/`) and, where they exist, the
verified pairs webmill wrote from the candidates (`DEDUP/ALG/verified/`):
`DEDUP/ALG/candidates/`, `sketches/`, `groups.json` and `ends/`, at the
group cap `MAX_GROUP`. With `--check`, compares the tables with those
already in OUT and DEDUP instead — schema (names, types, nullability) and
rows (`links/`'s in any order, as its spec allows), and the group counts —
and exits 1 naming the first that differs (Spark's Parquet bytes are not
deterministic: its footer names its build).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

TABLES = ["docs", "pagedoc", "links", "urls", "edges", "edges-t", "anchors"]
PARTITIONS = 2
# Near-duplicate detection's golden tables: every algorithm, groups of more
# than two docs capped (tests/golden/exchange.rs's `DEDUP_MAX_GROUP`).
ALGS = ["exact", "broder", "charikar", "minhash"]
MAX_GROUP = 2
DEDUP_TABLES = ["candidates", "sketches", "ends"]


def _copy_parts(src: str, dst: str) -> None:
    """The part files of the table `src` into `dst`, renamed in order."""
    parts = sorted(p for p in os.listdir(src) if p.startswith("part-") and p.endswith(".parquet"))
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for i, p in enumerate(parts):
        shutil.copyfile(os.path.join(src, p), os.path.join(dst, f"part-{i:05d}.parquet"))


def _session():
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(f"local[{PARTITIONS}]")
        .appName("webmill golden tables")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(PARTITIONS))
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def make(spark, segments: str, out: str) -> None:
    import pyarrow.parquet as pq

    from . import shuffle

    units = sorted(int(d[len("unit-") :]) for d in os.listdir(segments) if d.startswith("unit-"))
    pages = {u: pq.read_metadata(os.path.join(shuffle.unit_dir(segments, u), "pages.parquet")).num_rows for u in units}
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(out))) as tmp:
        shuffle.number_urls(spark, segments, pages, tmp, PARTITIONS)
        shuffle.sort_for_resolve(spark, tmp, PARTITIONS)
        for t in TABLES:
            _copy_parts(os.path.join(tmp, t), os.path.join(out, t))


def make_dedup(spark, dedup: str, out: str) -> None:
    """Spark's near-duplicate tables from DEDUP's sketch shards and verified
    parts into OUT/ALG/ (`ends/` only where DEDUP/ALG/verified/ exists)."""
    from . import dedup as steps

    sketch = os.path.join(dedup, "sketch")
    shards = sorted(n for n in os.listdir(sketch) if n.startswith("shard-"))
    sketched = 0
    for n in shards:
        with open(os.path.join(sketch, n, "counts.json")) as f:
            sketched += json.load(f)["sketched"]
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(out))) as tmp:
        shutil.copytree(sketch, os.path.join(tmp, "sketch"))
        for alg in ALGS:
            # As `dedup.run` does it.
            c = steps.candidates(spark, tmp, alg, len(shards), MAX_GROUP, PARTITIONS)
            c["sketched"] = sketched
            os.makedirs(os.path.join(out, alg), exist_ok=True)
            with open(os.path.join(out, alg, "groups.json"), "w") as f:
                json.dump(c, f)
            tables = ["candidates", "sketches"]
            verified = os.path.join(dedup, alg, "verified")
            if os.path.isdir(verified):
                shutil.copytree(verified, os.path.join(tmp, alg, "verified"))
                steps.ends(spark, tmp, alg, PARTITIONS)
                tables.append("ends")
            for t in tables:
                _copy_parts(os.path.join(tmp, alg, t), os.path.join(out, alg, t))


def read(dir: str):
    """A table directory's schema and rows, its parts in name order."""
    import pyarrow.parquet as pq

    parts = sorted(p for p in os.listdir(dir) if p.startswith("part-") and p.endswith(".parquet"))
    schema, rows = None, []
    for p in parts:
        t = pq.read_table(os.path.join(dir, p))
        s = [(f.name, str(f.type), f.nullable) for f in t.schema]
        if schema is not None and s != schema:
            raise SystemExit(f"{dir}/{p}: schema {s} differs from its first part's {schema}")
        schema = s
        rows += [tuple(r.values()) for r in t.to_pylist()]
    return schema, rows


def _same(name: str, made: str, golden: str, any_order: bool = False) -> bool:
    (s1, r1), (s2, r2) = read(made), read(golden)
    if any_order:
        r1, r2 = sorted(r1, key=repr), sorted(r2, key=repr)
    if s1 != s2:
        print(f"{name}: Spark writes the schema {s1}, the golden table has {s2}", file=sys.stderr)
        return False
    if r1 != r2:
        diff = next(i for i, (a, b) in enumerate(zip(r1 + [None] * len(r2), r2 + [None] * len(r1))) if a != b)
        print(f"{name}: Spark writes {len(r1)} rows, the golden table {len(r2)}; first difference at row {diff}", file=sys.stderr)
        return False
    print(f"{name}: {len(r1)} rows, schema and rows as the golden table's")
    return True


def check(spark, segments: str, golden: str, dedup: str | None) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        make(spark, segments, out)
        for t in TABLES:
            # `links/` in any order (formats/spark.md): Spark's join decides it.
            if not _same(t, os.path.join(out, t), os.path.join(golden, t), any_order=t == "links"):
                return 1
        if dedup is None:
            return 0
        out = os.path.join(tmp, "dedup")
        make_dedup(spark, dedup, out)
        for alg in ALGS:
            for t in DEDUP_TABLES:
                if not _same(f"{alg}/{t}", os.path.join(out, alg, t), os.path.join(dedup, alg, t)):
                    return 1
            counts = [json.load(open(os.path.join(d, alg, "groups.json"))) for d in (out, dedup)]
            if counts[0] != counts[1]:
                print(f"{alg}/groups.json: Spark counts {counts[0]}, the golden file has {counts[1]}", file=sys.stderr)
                return 1
    return 0


def main(argv: list[str]) -> int:
    flags = [a for a in argv if a.startswith("--")]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) not in (2, 3) or flags not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    dedup = args[2] if len(args) == 3 else None
    spark = _session()
    try:
        if flags:
            return check(spark, args[0], args[1], dedup)
        make(spark, args[0], args[1])
        if dedup is not None:
            make_dedup(spark, dedup, dedup)
        return 0
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

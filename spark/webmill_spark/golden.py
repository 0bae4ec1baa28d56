"""`python -m webmill_spark.golden SEGMENTS OUT`: the global steps' tables
for the golden unit tables (formats/golden/spark/, formats/spark.md).

Runs `shuffle.number_urls` and `shuffle.sort_for_resolve` on a local Spark
(two partitions, as a cluster of two would) over the units of SEGMENTS
(`unit-NNNNNN/pages.parquet` and `links.parquet`), then copies each table's
part files into OUT/TABLE/ as `part-00000.parquet`, `part-00001.parquet`, …
in Spark's name order (so the row order is kept), without Spark's job UUID
in their names, its `_SUCCESS` markers or checksum files. With `--check`,
compares the tables with those already in OUT instead — schema (names,
types, nullability) and rows (`links/`'s in any order, as its spec
allows) — and exits 1 naming the first that differs
(Spark's Parquet bytes are not deterministic: its footer names its build).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

TABLES = ["docs", "pagedoc", "links", "urls", "edges", "edges-t", "anchors"]
PARTITIONS = 2


def make(segments: str, out: str) -> None:
    import pyarrow.parquet as pq
    from pyspark.sql import SparkSession

    from . import shuffle

    units = sorted(int(d[len("unit-") :]) for d in os.listdir(segments) if d.startswith("unit-"))
    pages = {u: pq.read_metadata(os.path.join(shuffle.unit_dir(segments, u), "pages.parquet")).num_rows for u in units}
    spark = (
        SparkSession.builder.master(f"local[{PARTITIONS}]")
        .appName("webmill golden tables")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(PARTITIONS))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(out))) as tmp:
        shuffle.number_urls(spark, segments, pages, tmp, PARTITIONS)
        shuffle.sort_for_resolve(spark, tmp, PARTITIONS)
        spark.stop()
        for t in TABLES:
            parts = sorted(p for p in os.listdir(os.path.join(tmp, t)) if p.startswith("part-") and p.endswith(".parquet"))
            dst = os.path.join(out, t)
            shutil.rmtree(dst, ignore_errors=True)
            os.makedirs(dst)
            for i, p in enumerate(parts):
                shutil.copyfile(os.path.join(tmp, t, p), os.path.join(dst, f"part-{i:05d}.parquet"))


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


def check(segments: str, golden: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        make(segments, out)
        for t in TABLES:
            (s1, r1), (s2, r2) = read(os.path.join(out, t)), read(os.path.join(golden, t))
            if t == "links":
                # In any order (formats/spark.md): Spark's join decides it.
                r1, r2 = sorted(r1, key=repr), sorted(r2, key=repr)
            if s1 != s2:
                print(f"{t}: Spark writes the schema {s1}, the golden table has {s2}", file=sys.stderr)
                return 1
            if r1 != r2:
                diff = next(i for i, (a, b) in enumerate(zip(r1 + [None] * len(r2), r2 + [None] * len(r1))) if a != b)
                print(f"{t}: Spark writes {len(r1)} rows, the golden table {len(r2)}; first difference at row {diff}", file=sys.stderr)
                return 1
            print(f"{t}: {len(r1)} rows, schema and rows as the golden table's")
    return 0


def main(argv: list[str]) -> int:
    flags = [a for a in argv if a.startswith("--")]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2 or flags not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    if flags:
        return check(*args)
    make(*args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

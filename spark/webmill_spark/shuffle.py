"""The global steps of a webmill job as Spark shuffles over the exchange tables.

Each ingest task leaves, beside its unit's segments, `pages.parquet` and
`links.parquet` (formats/spark.md). `number_urls` numbers every URL the job
saw exactly as webmill's `resolve` stage does on one machine: the distinct
URLs (pages and link targets) sorted by their host-reversed key in Spark (a
range-partitioned sort; Spark orders binary columns by unsigned bytes, as
webmill does), docIDs and host numbers handed out from the partitions'
offsets, then the pages joined with their docIDs and the links with their
targets' and their sources' docIDs. It writes three tables under OUT, which
`webmill shard resolve --from OUT JOB` reads in place of its own URL sort
and link join:

- `docs/`: doc, key, host, page, bytes, title — one row per URL, docID order;
- `pagedoc/`: page, doc, first — one row per page, page order;
- `links/`: page, source, target, kind, anchor — one row per link.

`sort_for_resolve` then sorts what `resolve` writes, so that webmill makes
its own files from them by streaming, without a sort of its own: `urls/`
(fp, doc by unsigned fingerprint), `edges/` (source, target), `edges-t/`
(target, source) and `anchors/` (target, source, kind, anchor), each a
range-partitioned sort whose part files in name order are the table's order.
"""

from __future__ import annotations

import os

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

DOCS_SCHEMA = T.StructType(
    [
        T.StructField("doc", T.LongType(), False),
        T.StructField("key", T.BinaryType(), False),
        T.StructField("host", T.LongType(), False),
        T.StructField("page", T.LongType(), True),
        T.StructField("bytes", T.LongType(), True),
        T.StructField("title", T.StringType(), True),
        T.StructField("fp", T.LongType(), False),
    ]
)


def unit_dir(segments: str, unit: int) -> str:
    return os.path.join(segments, f"unit-{unit:06d}")


def host_of_key(key: bytes) -> bytes:
    """The host part of a sort key: up to and including the first `)`."""
    i = key.find(b")")
    return key if i < 0 else key[: i + 1]


def _partition_stats(i, rows):
    """(partition, rows, first host, last host, host runs) of one partition."""
    n, first, last, runs = 0, None, None, 0
    for r in rows:
        h = host_of_key(bytes(r.key))
        if n == 0:
            first = h
        if h != last:
            runs += 1
        last = h
        n += 1
    yield (i, n, first, last, runs)


def _offsets(stats):
    """Per partition: (first docID, host number before it, host before it)."""
    doc, host, prev = 0, -1, None
    plan = {}
    for i, n, first, last, runs in sorted(stats):
        plan[i] = (doc, host, prev)
        if n:
            doc += n
            host += runs - (1 if first == prev else 0)
            prev = last
    return plan, doc


def _assign(plan):
    def go(i, rows):
        doc, host, prev = plan.value[i]
        for r in rows:
            k = bytes(r.key)
            h = host_of_key(k)
            if h != prev:
                host += 1
                prev = h
            c = r.c
            if c is None:
                yield (doc, k, host, None, None, None, r.fp)
            else:
                yield (doc, k, host, c.page, c.bytes, c.title, r.fp)
            doc += 1

    return go


def unit_tables(spark: SparkSession, segments: str, unit_pages: dict[int, int]) -> tuple[DataFrame, DataFrame]:
    """All units' pages and links with the job's page numbers (a unit's
    pages follow the units before it, in unit order)."""
    units = sorted(unit_pages)
    dirs = [unit_dir(segments, u) for u in units]
    base, offsets = 0, []
    for u in units:
        offsets.append((u, base))
        base += unit_pages[u]
    off = F.broadcast(spark.createDataFrame(offsets, "unit int, base long"))
    page = (F.col("page") + F.col("base")).alias("page")
    pages = spark.read.parquet(*[os.path.join(d, "pages.parquet") for d in dirs])
    links = spark.read.parquet(*[os.path.join(d, "links.parquet") for d in dirs])
    pages = pages.join(off, "unit").select(page, "key", "bytes", "title", "fp")
    links = links.join(off, "unit").select(page, F.col("target_key").alias("key"), F.col("target_fp").alias("fp"), "kind", "anchor")
    return pages, links


def number_urls(spark: SparkSession, segments: str, unit_pages: dict[int, int], out: str, partitions: int) -> dict:
    """Writes `docs/`, `pagedoc/` and `links/` under `out`; returns counts."""
    sc = spark.sparkContext
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    # Reading the units' tables and joining their page offsets is the first
    # step's work: described as it, not as whatever ran before.
    sc.setJobDescription("webmill resolve 1/8: sort URLs by host-reversed key, count each range")
    pages, links = unit_tables(spark, segments, unit_pages)
    capture = F.struct("page", "bytes", "title")
    capture_type = pages.select(capture.alias("c")).schema["c"].dataType
    # Every URL seen: a page's URL with its capture, a link's target without
    # one; per URL its first capture (lowest page; min skips the nulls).
    urls = pages.select("key", "fp", capture.alias("c")).unionByName(
        links.select("key", "fp", F.lit(None).cast(capture_type).alias("c"))
    )
    # (The fingerprint is the URL's, so the same in every row of a key.)
    firsts = urls.groupBy("key").agg(F.min("c").alias("c"), F.min("fp").alias("fp")).repartitionByRange(partitions, "key")
    ordered = firsts.sortWithinPartitions("key").rdd.setName("URLs by host-reversed key")
    plan, docs = _offsets(ordered.mapPartitionsWithIndex(_partition_stats).collect())
    numbered = ordered.mapPartitionsWithIndex(_assign(sc.broadcast(plan))).setName("docIDs from range offsets")
    sc.setJobDescription(f"webmill resolve 2/8: hand out {docs:,} docIDs from the ranges' offsets")
    spark.createDataFrame(numbered, DOCS_SCHEMA).write.mode("overwrite").parquet(os.path.join(out, "docs"))
    doc_of = spark.read.parquet(os.path.join(out, "docs")).select("key", "doc", F.col("page").alias("first_page"))
    sc.setJobDescription("webmill resolve 3/8: join pages with their docIDs (page map)")
    (
        pages.join(doc_of, "key")
        .select("page", "doc", (F.col("page") == F.col("first_page")).alias("first"))
        .orderBy("page")
        .write.mode("overwrite")
        .parquet(os.path.join(out, "pagedoc"))
    )
    sc.setJobDescription("webmill resolve 4/8: join links with their targets' and their sources' docIDs")
    source_of = spark.read.parquet(os.path.join(out, "pagedoc")).select("page", F.col("doc").alias("source"))
    (
        links.join(doc_of.select("key", F.col("doc").alias("target")), "key")
        .join(source_of, "page")
        .select("page", "source", "target", "kind", "anchor")
        .write.mode("overwrite")
        .parquet(os.path.join(out, "links"))
    )
    return {"docs": docs, "partitions": partitions}


# Spark orders longs as signed; a fingerprint's bits with the top bit
# flipped order as the unsigned fingerprint does.
_SIGN = -(1 << 63)


def _sorted_write(df: DataFrame, order: list, partitions: int, path: str, helpers: tuple = ()) -> None:
    """`df` range-partitioned and sorted by `order`, written to `path` (less
    the `helpers` columns, which only order it): the part files in name
    order are the table in that order."""
    df = df.repartitionByRange(partitions, *order).sortWithinPartitions(*order)
    df.drop(*helpers).write.mode("overwrite").parquet(path)


def sort_for_resolve(spark: SparkSession, out: str, partitions: int) -> None:
    """From `docs/` and `links/` under `out`, the tables `resolve` writes its
    URL table, edge files and anchors from (formats/spark.md): `urls/`,
    `edges/`, `edges-t/`, `anchors/`, each sorted as webmill's file is."""
    sc = spark.sparkContext
    docs = spark.read.parquet(os.path.join(out, "docs"))
    links = spark.read.parquet(os.path.join(out, "links"))
    sc.setJobDescription("webmill resolve 5/8: sort the URL table by fingerprint")
    urls = docs.select("fp", "doc", F.col("fp").bitwiseXOR(F.lit(_SIGN)).alias("unsigned"))
    _sorted_write(urls, ["unsigned", "doc"], partitions, os.path.join(out, "urls"), ("unsigned",))
    # The arcs: distinct, self-loops left out.
    arcs = links.where(F.col("source") != F.col("target"))
    sc.setJobDescription("webmill resolve 6/8: sort the arcs by source")
    _sorted_write(arcs.select("source", "target").distinct(), ["source", "target"], partitions, os.path.join(out, "edges"))
    sc.setJobDescription("webmill resolve 7/8: sort the arcs by target")
    _sorted_write(arcs.select("target", "source").distinct(), ["target", "source"], partitions, os.path.join(out, "edges-t"))
    # The anchors with text, distinct, in (target, source, kind, text's
    # UTF-8 bytes) order: sorted by the text as binary, whatever Spark's
    # string collation.
    sc.setJobDescription("webmill resolve 8/8: sort the anchors by target")
    texts = arcs.where(F.length("anchor") > 0).select("target", "source", "kind", "anchor").distinct()
    texts = texts.withColumn("text", F.col("anchor").cast("binary"))
    _sorted_write(texts, ["target", "source", "kind", "text"], partitions, os.path.join(out, "anchors"), ("text",))

"""PageRank as Spark RDD iterations over a job's `edges/` table, timed: the
measurement behind ARCHITECTURE.md's "PageRank stays on one machine".

The textbook loop (adjacency lists joined with the ranks, contributions
summed by `reduceByKey`; no GraphFrames, dangling mass left out), so it
is a lower bound on what a faithful PageRank on Spark costs. The table is
the one `python -m webmill_spark run --segments DIR` leaves in
`DIR/shuffle/edges` (formats/spark.md).

    python3 benches/spark_pagerank.py MASTER DIR/shuffle/edges NODES ITERATIONS PARTITIONS
"""

import sys
import time
from operator import add

from pyspark.sql import SparkSession

master, edges_dir, nodes, iters, parts = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
spark = SparkSession.builder.master(master).appName("pagerank rdd").config("spark.executor.memory", "512m").getOrCreate()
sc = spark.sparkContext
sc.setLogLevel("ERROR")
t0 = time.monotonic()
links = spark.read.parquet(edges_dir).rdd.map(lambda r: (r.source, r.target)).groupByKey(parts).mapValues(list).cache()
arcs = links.map(lambda kv: len(kv[1])).sum()
ranks = sc.parallelize(range(nodes), parts).map(lambda d: (d, 1.0 / nodes))
print(f"load: {arcs} arcs, {time.monotonic() - t0:.1f} s", flush=True)
times = []
for i in range(iters):
    t = time.monotonic()
    contribs = links.join(ranks).flatMap(lambda kv: [(d, kv[1][1] / len(kv[1][0])) for d in kv[1][0]])
    ranks = contribs.reduceByKey(add, parts).mapValues(lambda r: 0.15 / nodes + 0.85 * r).cache()
    ranks.count()
    times.append(time.monotonic() - t)
    print(f"iteration {i + 1}: {times[-1]:.1f} s", flush=True)
median = sorted(times)[len(times) // 2]
print(f"median iteration {median:.1f} s over {nodes} nodes, {arcs} arcs: {median / arcs * 1e9:.0f} ns/arc")
spark.stop()

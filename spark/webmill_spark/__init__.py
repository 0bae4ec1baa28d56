"""webmill on Apache Spark.

`python -m webmill_spark local-cluster start --workers N` starts a standalone
Spark cluster on this machine (a master and N workers, each its own process,
on free ports) and prints its master URL on the last line;
`python -m webmill_spark local-cluster stop` stops what it started.
"""

__all__ = ["cluster"]

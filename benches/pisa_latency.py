#!/usr/bin/env python3
"""PISA's query latency on the same tokens and queries as `cargo bench --bench index`.

The index bench writes, per site, the tokens of every docID (`tokens.tsv`:
`title words \\t all words`, one line per docID in docID order) and its
sampled queries (`queries.tsv`: `class \\t word word ...`). This script
indexes those tokens with PISA (the `pyterrier-pisa` package: its
pre-tokenised indexer, so PISA holds exactly our tokens, no stemming, no
stopwords; term frequency = the token's count in the document, document
length = the document's token count; block_simdbp encoding) and times
every query with BM25 (k1 0.9, b 0.4, PISA's defaults) and top 10:

* OR classes with `block_max_wand` (the issue's comparison),
* AND classes with `block_max_ranked_and`,

one thread, warm (every query run once untimed first), each query timed on
its own around PISA's C++ retrieval call (`_pisathon.retrieve` with one
pre-tokenised query and preallocated result arrays), so pandas and the
PyTerrier pipeline are not in the figure. The fixed cost of that call from
Python is measured on a query of a word no document holds and printed, so
it can be read against the p50s.

Prints one JSON object per line: `{"pisa": "index", ...}` with the build
time and index size, then `{"pisa": CLASS, "algorithm", "queries", "p50_ms",
"p99_ms"}` per class. The index bench runs it and prints the ratios next to
webmill's and tantivy's figures of the same run.

usage: pisa_latency.py --tokens TSV --queries TSV --work DIR
"""

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path


def percentile(v, p):
    v = sorted(v)
    return v[round((len(v) - 1) * p)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", required=True, help="the bench's tokens.tsv")
    ap.add_argument("--queries", required=True, help="class \\t words, one query a line")
    ap.add_argument("--work", required=True, help="directory for PISA's index (reused if built)")
    a = ap.parse_args()
    try:
        import numpy as np
        from pyterrier_pisa import PisaIndex, _pisathon
    except ImportError as e:
        print(f"SKIPPED: PISA not installed ({e}); pip install pyterrier-pisa", file=sys.stderr)
        return 0

    work = Path(a.work)
    index = PisaIndex(str(work), stemmer="none", stops="none", threads=1)
    if not index.built():

        def docs():
            with open(a.tokens, encoding="utf-8") as f:
                for i, line in enumerate(f):
                    body = line.rstrip("\n").split("\t", 1)[-1]
                    yield {"docno": str(i), "toks": Counter(body.split())}

        t = time.time()
        index.toks_indexer(scale=1.0).index(docs())
        build = time.time() - t
    else:
        build = None
    queries = []
    with open(a.queries, encoding="utf-8") as f:
        for line in f:
            cls, words = line.rstrip("\n").split("\t", 1)
            queries.append((cls, words.split()))

    bm25 = index.bm25(k1=0.9, b=0.4, num_results=10, threads=1)
    ctx = bm25._ctxt
    # What queries read: the compressed doc/freq lists, their block maxima
    # and the term and document lexicons (no positions: PISA keeps none).
    served = sum(f.stat().st_size for f in work.iterdir()
                 if f.name.startswith("bm25.") or f.name.endswith("lex"))
    print(json.dumps({"pisa": "index", "build_s": build, "bytes": served,
                      "note": "build: pyterrier's Python inverter, then PISA's compression; "
                              "bytes: compressed lists, block maxima, lexicons, no positions"}))
    k = 10
    qidxs = np.empty(k, dtype=np.int32)
    docnos = np.empty(k, dtype=object)
    ranks = np.empty(k, dtype=np.int32)
    scores = np.empty(k, dtype=np.float32)

    def run(algorithm, words):
        return _pisathon.retrieve(
            ctx, algorithm, [(0, {w: 1.0 for w in words})], k=k, threads=1,
            query_weighted=0, pretokenised=True, result_qidxs=qidxs,
            result_docnos=docnos, result_ranks=ranks, result_scores=scores)

    def algorithm_of(cls):
        return "block_max_wand" if "OR" in cls else "block_max_ranked_and"

    timed = [(c, w) for c, w in queries if "phrase" not in c]
    for cls, words in timed:  # warm
        run(algorithm_of(cls), words)
    empty = []
    for _ in range(200):
        t = time.perf_counter()
        run("block_max_wand", ["webmill-pisa-no-such-word"])
        empty.append((time.perf_counter() - t) * 1e3)
    print(json.dumps({"pisa": "call", "p50_ms": percentile(empty, 0.5),
                      "note": "a query of a word no document holds: the call's fixed cost"}))
    by_class = {}
    for cls, words in timed:
        t = time.perf_counter()
        run(algorithm_of(cls), words)
        by_class.setdefault(cls, []).append((time.perf_counter() - t) * 1e3)
    for cls, v in by_class.items():
        print(json.dumps({"pisa": cls, "algorithm": algorithm_of(cls), "queries": len(v),
                          "p50_ms": percentile(v, 0.5), "p99_ms": percentile(v, 0.99)}))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Ranking quality on Cranfield's development half, next to PISA's BM25.

Data: ../shared/data/cranfield (1,400 abstracts; the 113 odd-numbered
queries with graded judgments; `$WEBMILL_DATA` overrides the data dir).
Every document is written as an HTML page (title in <title> and <h1>, body
in <p>) and run through `webmill run`; every query is searched in plain
words with `webmill search JOB --queries FILE --trec -k 100` under each
ranking. Prints nDCG@10 (linear gains, as trec_eval's ndcg_cut_10) and
MRR@10 per ranking, and the same for PISA's BM25 (pyterrier-pisa, k1 0.9,
b 0.4, its default tokenizer, no stemming) on the same documents (title
and body) and queries.

    python3 benches/cranfield.py [--webmill target/release/webmill]
                                 [--tune]   # a grid over BM25F's weights
                                 [--no-pisa]

PISA needs `pip install pyterrier-pisa` (and a JDK for PyTerrier); without
it its row says so. `--tune` prints the grid the defaults in
`src/search/bm25.rs` were chosen from (tune on this half only: the other
half of the queries is held out).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# `Bm25Weights::default()` (src/search/bm25.rs); the variants below change
# one part of it at a time.
DEFAULT_BM25 = {
    "k1": 1.2,
    "b": 0.75,
    "field_weight": [2.0, 1.0, 0.5, 1.0, 1.0],
    "field_b": [0.5, 0.5, 0.5, 0.75, 0.75],
    "proximity_weight": 0.5,
    "proximity_k": 50.0,
    "pagerank_weight": 0.1,
}


def data_dir():
    d = os.environ.get("WEBMILL_DATA")
    for c in ([Path(d)] if d else []) + [ROOT / "../shared/data", Path("/work/shared/data")]:
        if (c / "cranfield").is_dir():
            return c / "cranfield"
    sys.exit("cranfield data not found (set WEBMILL_DATA)")


def load(cran):
    docs = json.loads((cran / "cranfield-documents.json").read_text())
    queries = json.loads((cran / "cranfield-queries-dev.json").read_text())
    qrels = {}
    for j in json.loads((cran / "cranfield-qrels-dev.json").read_text()):
        qrels.setdefault(str(j["queryId"]), {})[str(j["docId"])] = j["relevance"]
    return docs, queries, qrels


def measures(run, qrels, queries):
    """Mean nDCG@10 (linear gains) and MRR@10 over every query (a query
    without results scores 0)."""
    ndcg = mrr = 0.0
    for q in queries:
        qid = str(q["id"])
        rel = qrels.get(qid, {})
        ranked = run.get(qid, [])[:10]
        gain = lambda d: max(rel.get(d, 0), 0)
        dcg = sum(gain(d) / math.log2(i + 2) for i, d in enumerate(ranked))
        ideal = sorted((max(g, 0) for g in rel.values()), reverse=True)[:10]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        ndcg += dcg / idcg if idcg > 0 else 0.0
        mrr += next((1.0 / (i + 1) for i, d in enumerate(ranked) if gain(d) > 0), 0.0)
    n = len(queries)
    return ndcg / n, mrr / n


def escape(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def build_job(webmill, docs, work, stem=None):
    site = work / "site"
    site.mkdir(exist_ok=True)
    for d in docs:
        t, b = escape(d["title"] or ""), escape(d["body"] or "")
        (site / f"{d['id']}.html").write_text(
            f"<html><head><title>{t}</title></head><body><h1>{t}</h1><p>{b}</p></body></html>")
    job = work / ("job" if stem is None else f"job-{stem}")
    cmd = [webmill, "--quiet", "run", "--out", str(job), f"http://cranfield.example/={site}"]
    if stem is not None:
        cmd += ["--stem", stem]
    t = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return job, time.time() - t


def search(webmill, job, qfile, args, weights=None, work=None):
    cmd = [webmill, "search", str(job), "--queries", str(qfile), "--trec", "-k", "100"] + args
    if weights is not None:
        wf = work / "weights.json"
        wf.write_text(json.dumps(weights))
        cmd += ["--bm25-weights", str(wf)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    run = {}
    for line in out.splitlines():
        qid, _, url, _rank, _score, _ = line.split(" ")
        run.setdefault(qid, []).append(url.rsplit("/", 1)[-1].removesuffix(".html"))
    return run


def pisa(docs, queries, work):
    try:
        import pandas as pd
        import pyterrier as pt
        from pyterrier_pisa import PisaIndex
    except ImportError as e:
        return None, f"not installed ({e}); pip install pyterrier-pisa"
    idx = PisaIndex(str(work / "pisa"), stemmer="none", overwrite=True)
    idx.index(({"docno": str(d["id"]), "text": f"{d['title'] or ''} {d['body'] or ''}"} for d in docs))
    bm25 = idx.bm25(k1=0.9, b=0.4, num_results=100)
    import re
    topics = pd.DataFrame([{"qid": str(q["id"]),
                            "query": " ".join(re.findall(r"[a-z0-9]+", q["text"].lower()))}
                           for q in queries])
    res = bm25(topics)
    run = {}
    for qid, g in res.sort_values(["qid", "rank"]).groupby("qid"):
        run[qid] = list(g["docno"])
    return run, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webmill", default=str(ROOT / "target/release/webmill"))
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--no-pisa", action="store_true")
    ap.add_argument("--stem", action="store_true", help="also build with --stem english and none")
    a = ap.parse_args()
    docs, queries, qrels = load(data_dir())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        qfile = work / "queries.tsv"
        qfile.write_text("".join(f"{q['id']}\t{q['text']}\n" for q in queries))
        job, secs = build_job(a.webmill, docs, work)
        print(f"cranfield dev half: {len(docs)} docs, {len(queries)} queries; webmill run {secs:.1f} s")
        rows = [
            ("paper (--match all)", ["--match", "all", "--ranking", "paper"], None),
            ("paper", ["--match", "any", "--ranking", "paper"], None),
            ("bm25", ["--match", "any", "--ranking", "bm25"], None),
            ("bm25f", ["--match", "any", "--ranking", "bm25f"], None),
        ]
        base = dict(DEFAULT_BM25)
        if base:
            rows.append(("bm25f − proximity", ["--match", "any", "--ranking", "bm25f"],
                         dict(base, proximity_weight=0.0)))
            rows.append(("bm25 k1 0.9 b 0.4", ["--match", "any", "--ranking", "bm25"],
                         dict(base, k1=0.9, b=0.4, proximity_weight=0.0)))
        for name, args, w in rows:
            t = time.time()
            run = search(a.webmill, job, qfile, args, w, work)
            n, m = measures(run, qrels, queries)
            print(f"  {name:<24} nDCG@10 {n:.4f}  MRR@10 {m:.4f}  ({time.time() - t:.1f} s)")
        if a.stem:
            for stem in ["none", "english"]:
                sj, _ = build_job(a.webmill, docs, work, stem)
                for name in ["bm25", "bm25f"]:
                    run = search(a.webmill, sj, qfile, ["--match", "any", "--ranking", name])
                    n, m = measures(run, qrels, queries)
                    print(f"  {name} --stem {stem:<8}      nDCG@10 {n:.4f}  MRR@10 {m:.4f}")
        if not a.no_pisa:
            t = time.time()
            run, why = pisa(docs, queries, work)
            if run is None:
                print(f"  PISA BM25: {why}")
            else:
                n, m = measures(run, qrels, queries)
                print(f"  {'PISA BM25 k1 0.9 b 0.4':<24} nDCG@10 {n:.4f}  MRR@10 {m:.4f}  ({time.time() - t:.1f} s)")
        if a.tune and base:
            print("BM25F grid (nDCG@10, MRR@10):")
            for k1 in [0.9, 1.2, 1.6]:
                for tw in [1.0, 2.0, 3.0]:
                    for bb in [0.4, 0.75]:
                        for pw in [0.0, 0.5, 1.0]:
                            w = dict(base, k1=k1, proximity_weight=pw)
                            w["field_weight"] = [tw] + base["field_weight"][1:]
                            w["field_b"] = base["field_b"][:3] + [bb, bb]
                            run = search(a.webmill, job, qfile, ["--match", "any", "--ranking", "bm25f"], w, work)
                            n, m = measures(run, qrels, queries)
                            print(f"  k1 {k1} title {tw} body b {bb} prox {pw}: {n:.4f} {m:.4f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Seed corpora for the fuzz targets (fuzz/corpus/TARGET/), from the shared
data (../shared/data: WARC/ARC files, LAW graphs) and the golden files
(formats/golden/). Run from the repository root or from fuzz/:

    python3 fuzz/seed-corpora.py [--data ../shared/data]

Each target gets small inputs (at most 64 KiB each, so that libFuzzer
mutates them quickly): whole WARC/ARC files and single records for the
WARC reader, HTTP messages for the HTTP parser, HTML bodies for the
extractor, target URIs and hrefs for the URL normalizer, the first lines of
the graphs for the edge-list readers, and the golden files (first byte 0:
"the file as it is") for the file kinds.
"""
import argparse
import gzip
import hashlib
import os
import re
import zlib

MAX = 64 << 10


def decompress(raw):
    """The bytes of a plain or (multi-member) gzip file."""
    if raw[:2] != b"\x1f\x8b":
        return raw
    out, rest = [], raw
    while rest[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out.append(d.decompress(rest))
        except zlib.error:
            break
        rest = d.unused_data
    return b"".join(out)


def put(corpus, name, data):
    os.makedirs(corpus, exist_ok=True)
    if not data or len(data) > MAX:
        data = data[:MAX]
    if not data:
        return
    h = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(corpus, f"{name}-{h}"), "wb") as f:
        f.write(data)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(root, "..", "shared", "data"))
    ap.add_argument("--out", default=os.path.join(root, "fuzz", "corpus"))
    a = ap.parse_args()
    c = lambda t: os.path.join(a.out, t)

    warcs = sorted(os.path.join(a.data, "warc", f) for f in os.listdir(os.path.join(a.data, "warc")))
    for path in warcs:
        raw = open(path, "rb").read()
        name = os.path.basename(path)
        put(c("warc_reader"), name, raw)
        text = decompress(raw)
        # Single records, plain and as one gzip member.
        for rec in re.split(rb"(?=WARC/1\.[01]\r\n)", text)[:40]:
            if rec.strip():
                put(c("warc_reader"), name + "-rec", rec)
                put(c("warc_reader"), name + "-recgz", gzip.compress(rec[:MAX // 2], 6))
        for m in re.finditer(rb"HTTP/1\.[01] \d{3}.*?(?=\r\nWARC/1\.|\Z)", text, re.S):
            msg = m.group(0)
            put(c("http_response"), name, msg)
            head, _, body = msg.partition(b"\r\n\r\n")
            if b"html" in head.lower():
                put(c("html_extract"), name, body)
                if b"gzip" in head.lower():
                    put(c("html_extract"), name + "-gz", decompress(body))
        for m in re.finditer(rb"WARC-Target-URI: ?(\S+)", text):
            put(c("url_normalize"), name, m.group(1).strip(b"<>"))
        for m in re.finditer(rb"href=[\"']([^\"'>]{1,2000})", text):
            put(c("url_normalize"), name + "-href", m.group(1))

    graphs = os.path.join(a.data, "graphs")
    for f in sorted(os.listdir(graphs)):
        if f.endswith(".tsv.gz"):
            lines = decompress(open(os.path.join(graphs, f), "rb").read()[: 1 << 20])
            head = b"".join(lines.splitlines(keepends=True)[:400])
            put(c("edge_lists"), f, head)
            put(c("edge_lists"), f + "-gz", gzip.compress(head))
    put(c("edge_lists"), "named", b"# src\tdst\nhttp://a.example/\thttp://b.example/x\nb\ta\n")
    put(c("edge_lists"), "cc", b"0\tcom.example\n1\tcom.example.www\n2\torg.example\n")
    put(c("edge_lists"), "cc-edges", b"0\t1\n1\t2\n2\t0\n")

    golden = os.path.join(root, "formats", "golden")
    for f in sorted(os.listdir(golden)):
        data = open(os.path.join(golden, f), "rb").read()
        if len(data) + 1 <= MAX:
            put(c("file_kinds"), f, b"\x00" + data)

    for t in sorted(os.listdir(a.out)):
        print(f"{t}: {len(os.listdir(c(t)))} seeds")


if __name__ == "__main__":
    main()

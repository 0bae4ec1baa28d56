"""What Spark measured of a job, from the driver's status REST API: each
stage's shuffle bytes and task time by the step it belongs to, and each
executor's peak memory.

A stage belongs to the step of its job description (`webmill ingest: …`,
`webmill resolve N/8: …`). Spark runs some stages outside any described
job (the Parquet footers' listing, a broadcast's collection on its own
thread): those go to the step whose wall-clock window holds their
submission, under `STEP (stages without a description)`, so that every
shuffled byte is counted in a named step.
"""

from __future__ import annotations

import json
import urllib.request
from datetime import datetime, timezone


def _get(sc, path: str):
    url = sc.uiWebUrl
    if not url:
        return None
    try:
        with urllib.request.urlopen(f"{url}/api/v1/applications/{sc.applicationId}/{path}", timeout=30) as r:
            return json.load(r)
    except OSError:
        return None


def _epoch(stamp: str | None) -> float | None:
    """Spark's `2026-11-26T20:10:01.123GMT` as seconds since the epoch."""
    if not stamp:
        return None
    try:
        return datetime.strptime(stamp.replace("GMT", ""), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def stage_figures(sc, windows: list[tuple[str, float, float]]) -> dict[str, dict]:
    """Per job description: the stages' shuffle bytes and task time. A
    stage without one is put under the step of `windows` ((step, start,
    end), wall-clock seconds) that holds its submission time. Empty when
    the UI is off."""
    stages = _get(sc, "stages") or []
    per: dict[str, dict] = {}
    for st in stages:
        d = st.get("description")
        if not d:
            t = _epoch(st.get("submissionTime"))
            step = next((s for s, a, b in windows if t is not None and a <= t <= b), "outside the steps")
            d = f"{step} (stages without a description)"
        f = per.setdefault(d, {"shuffle_write": 0, "shuffle_read": 0, "task_ms": 0, "stages": 0})
        f["shuffle_write"] += st.get("shuffleWriteBytes", 0)
        f["shuffle_read"] += st.get("shuffleReadBytes", 0)
        f["task_ms"] += st.get("executorRunTime", 0)
        f["stages"] += 1
    return per


def executor_peaks(sc) -> list[dict]:
    """Per executor (the driver left out, the dead ones in): its peak JVM
    heap and the peak RSS of its process tree (the JVM, its Python workers
    and the webmill processes they run), in bytes; 0 when Spark did not
    poll it."""
    out = []
    for e in _get(sc, "allexecutors") or []:
        if e.get("id") == "driver":
            continue
        m = e.get("peakMemoryMetrics") or {}
        out.append(
            {
                "id": e.get("id"),
                "heap": m.get("JVMHeapMemory", 0),
                "rss": m.get("ProcessTreeJVMRSSMemory", 0) + m.get("ProcessTreePythonRSSMemory", 0) + m.get("ProcessTreeOtherRSSMemory", 0),
            }
        )
    return out

"""What the steps share: a webmill subprocess as a Spark task, and picking
a stage's flags out of `webmill run`'s."""

from __future__ import annotations

import json
import os
import subprocess


def run_task(cmd: list[str], what: str) -> dict:
    """Runs `cmd` (a `webmill shard …` step printing one JSON line) on an
    executor, in Spark's Python worker; returns that line with the step's
    own peak RSS (`peak_rss`, bytes). A failure raises, naming `what`, the
    command and the end of its stderr, so that Spark retries the task."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        # wait4 gives this child's own peak RSS (kilobytes on Linux).
        _, status, usage = os.wait4(p.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if code != 0:
        raise RuntimeError(f"{what}: {' '.join(cmd)} exited {code}: {stderr.strip()[-2000:]}")
    report = json.loads(stdout.strip().splitlines()[-1])
    report["peak_rss"] = usage.ru_maxrss * 1024
    return report


def pick_flags(run_flags: list[str], names: list[str]) -> tuple[list[str], list[str]]:
    """(the flags of `names` among `run_flags` with their values — `--f V`
    or `--f=V` —, the other flags)."""
    picked: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(run_flags):
        f = run_flags[i]
        if f.split("=", 1)[0] in names:
            if "=" in f:
                picked.append(f)
            elif i + 1 < len(run_flags):
                picked += [f, run_flags[i + 1]]
                i += 1
        else:
            rest.append(f)
        i += 1
    return picked, rest

"""What the steps share: a webmill subprocess as a Spark task, and picking
a stage's flags out of `webmill run`'s.

Test hooks (tools/tests/spark.rs kills executors with them; both are
passed to the executors by `run`, and do nothing when unset):

- `WEBMILL_SPARK_MARKERS=DIR`: every webmill task, as it starts, writes
  `DIR/STEP-N.aA` holding its Python worker's pid, where STEP is `ingest`,
  `split`, `forward`, `sort`, `sketch` or `verify-ALG`, N the unit, shard
  or part, and A Spark's attempt number of the task (0 first, 1 on its
  first retry, …). A test finds the executor running a step from the pid.
- `WEBMILL_SPARK_HOLD=STEP,STEP,…`: the first attempt of task 0 of each
  step named holds before it runs webmill, until its executor is killed
  (then its Python worker dies with it), at most `HOLD_LIMIT` seconds —
  so that a test kills the executor while that step's task is surely
  running, however loaded the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

# The longest a held task waits for its executor to be killed.
HOLD_LIMIT = 300.0


def _mark(step: str, n: int) -> None:
    """The test hooks above: the marker, then the hold."""
    markers = os.environ.get("WEBMILL_SPARK_MARKERS")
    if not markers:
        return
    from pyspark import TaskContext

    ctx = TaskContext.get()
    attempt = ctx.attemptNumber() if ctx else 0
    tmp = os.path.join(markers, f".{step}-{n}.a{attempt}.{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(str(os.getpid()))
    os.rename(tmp, os.path.join(markers, f"{step}-{n}.a{attempt}"))
    held = os.environ.get("WEBMILL_SPARK_HOLD", "").split(",")
    if step in held and n == 0 and attempt == 0:
        parent, end = os.getppid(), time.monotonic() + HOLD_LIMIT
        # The pyspark daemon hangs up its workers when the executor dies;
        # should it not, a new parent ends the hold too.
        while os.getppid() == parent and time.monotonic() < end:
            time.sleep(0.1)


def run_task(cmd: list[str], what: str, step: str, n: int) -> dict:
    """Runs `cmd` (a `webmill shard …` step printing one JSON line) on an
    executor, in Spark's Python worker, as task `n` of `step` (the test
    hooks above); returns that line with the step's own peak RSS
    (`peak_rss`, bytes). A failure raises, naming `what`, the command and
    the end of its stderr, so that Spark retries the task."""
    import tempfile

    _mark(step, n)

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

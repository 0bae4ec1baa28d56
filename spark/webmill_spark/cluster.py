"""A standalone Spark cluster on this machine, for tests and small jobs.

The PyPI `pyspark` package carries Spark's jars and `bin/spark-class` but not
`sbin/start-*.sh`; this module does what those scripts do, with the details
a test needs: free ports chosen here, every process in its own session (so a
test can kill one worker's executor without touching the rest), readiness
checked on the master's JSON status page rather than guessed by sleeping,
and a state file per cluster so `stop` stops exactly what `start` started.

State lives in `$WEBMILL_SPARK_STATE` (default
`~/.local/state/webmill-spark`), one directory per cluster named after its
master port, holding `cluster.json` and each process's log.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path


class ClusterError(Exception):
    """A cluster that could not be started, found or stopped."""


def spark_home() -> Path:
    """`$SPARK_HOME`, or the Spark the `pyspark` package carries."""
    env = os.environ.get("SPARK_HOME")
    if env:
        return Path(env)
    try:
        import pyspark
    except ImportError as e:
        raise ClusterError(
            "pyspark is not installed (pip install pyspark) and SPARK_HOME is not set"
        ) from e
    return Path(pyspark.__file__).resolve().parent


def java_available() -> bool:
    """Whether a `java` Spark can use is on the PATH (or in JAVA_HOME)."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return True
    return shutil.which("java") is not None


def state_root() -> Path:
    env = os.environ.get("WEBMILL_SPARK_STATE")
    if env:
        return Path(env)
    return Path.home() / ".local" / "state" / "webmill-spark"


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Process:
    role: str
    pid: int
    log: str


@dataclass
class Cluster:
    master: str
    webui: int
    workers: int
    directory: str
    processes: list[Process] = field(default_factory=list)

    @property
    def state_file(self) -> Path:
        return Path(self.directory) / "cluster.json"

    def save(self) -> None:
        tmp = self.state_file.with_suffix(".json.partial")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n")
        os.replace(tmp, self.state_file)

    @staticmethod
    def load(directory: Path) -> "Cluster":
        raw = json.loads((directory / "cluster.json").read_text())
        raw["processes"] = [Process(**p) for p in raw["processes"]]
        return Cluster(**raw)

    def status(self) -> dict:
        """The master's JSON status page (workers, applications)."""
        url = f"http://127.0.0.1:{self.webui}/json/"
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.load(r)

    def alive_workers(self) -> int:
        try:
            st = self.status()
        except OSError:
            return 0
        return sum(1 for w in st.get("workers", []) if w.get("state") == "ALIVE")


def _spawn(args: list[str], log: Path, env: dict) -> int:
    out = open(log, "ab")
    try:
        p = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    finally:
        out.close()
    return p.pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of this process counts as gone.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def _tail(path: str, lines: int = 20) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def start(workers: int, cores: int = 1, memory: str = "1g", timeout: float = 120.0) -> Cluster:
    """Starts a master and `workers` workers; returns once all are ALIVE."""
    if workers < 1:
        raise ClusterError("a cluster needs at least one worker")
    if not java_available():
        raise ClusterError("no java on the PATH: Spark needs Java 17 (Debian: openjdk-17-jre-headless)")
    home = spark_home()
    spark_class = home / "bin" / "spark-class"
    if not spark_class.exists():
        raise ClusterError(f"{spark_class} does not exist: is SPARK_HOME a Spark distribution?")
    port, webui = free_port(), free_port()
    directory = state_root() / f"cluster-{port}"
    directory.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(home),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOCAL_DIRS=str(directory / "local"),
        SPARK_LOG_DIR=str(directory),
        SPARK_NO_DAEMONIZE="1",
    )
    cluster = Cluster(
        master=f"spark://127.0.0.1:{port}",
        webui=webui,
        workers=workers,
        directory=str(directory),
    )
    log = directory / "master.log"
    pid = _spawn(
        [
            str(spark_class),
            "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1",
            "--port", str(port),
            "--webui-port", str(webui),
        ],
        log,
        env,
    )
    cluster.processes.append(Process("master", pid, str(log)))
    cluster.save()
    try:
        _wait(cluster, timeout, lambda: _status_ok(cluster), "the master to answer")
        for i in range(workers):
            log = directory / f"worker-{i}.log"
            work = directory / f"worker-{i}"
            work.mkdir(exist_ok=True)
            pid = _spawn(
                [
                    str(spark_class),
                    "org.apache.spark.deploy.worker.Worker",
                    cluster.master,
                    "--host", "127.0.0.1",
                    "--cores", str(cores),
                    "--memory", memory,
                    "--webui-port", str(free_port()),
                    "--work-dir", str(work),
                ],
                log,
                env,
            )
            cluster.processes.append(Process(f"worker-{i}", pid, str(log)))
            cluster.save()
        _wait(
            cluster,
            timeout,
            lambda: cluster.alive_workers() >= workers,
            f"{workers} worker(s) to register",
        )
    except BaseException:
        _kill(cluster)
        raise
    return cluster


def _status_ok(cluster: Cluster) -> bool:
    try:
        cluster.status()
        return True
    except OSError:
        return False


def _wait(cluster: Cluster, timeout: float, ready, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        for p in cluster.processes:
            if not _alive(p.pid):
                raise ClusterError(
                    f"the {p.role} (pid {p.pid}) exited while waiting for {what}; "
                    f"the end of {p.log}:\n{_tail(p.log)}"
                )
        time.sleep(0.25)
    raise ClusterError(f"timed out after {timeout:.0f} s waiting for {what}; see {cluster.directory}")


def _kill(cluster: Cluster, grace: float = 20.0) -> None:
    """SIGTERM each process's group, then SIGKILL what is left after `grace`."""
    for p in reversed(cluster.processes):
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p.pid) for p in cluster.processes):
        time.sleep(0.1)
    for p in cluster.processes:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def clusters() -> list[Cluster]:
    """The clusters started here and not stopped, by master port."""
    root = state_root()
    if not root.is_dir():
        return []
    out = []
    for d in sorted(root.glob("cluster-*")):
        try:
            out.append(Cluster.load(d))
        except (OSError, ValueError, TypeError):
            continue
    return out


def stop(master: str | None = None) -> list[Cluster]:
    """Stops the cluster whose master URL is `master` (every cluster started
    here when `None`); returns what was stopped."""
    found = [c for c in clusters() if master is None or c.master == master]
    if master is not None and not found:
        raise ClusterError(f"no cluster with master {master} was started here ({state_root()})")
    for c in found:
        _kill(c)
        shutil.rmtree(c.directory, ignore_errors=True)
    return found


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m webmill_spark local-cluster",
        description="A standalone Spark cluster on this machine: a master and N workers, "
        "each its own process, on free ports of 127.0.0.1.",
    )
    sub = ap.add_subparsers(dest="action", required=True)
    st = sub.add_parser("start", help="start a cluster; prints its master URL on the last line")
    st.add_argument("--workers", type=int, default=2, help="workers to start (default 2)")
    st.add_argument("--cores", type=int, default=1, help="cores each worker offers (default 1)")
    st.add_argument("--memory", default="1g", help="memory each worker offers (default 1g)")
    st.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for readiness (default 120)")
    sp = sub.add_parser("stop", help="stop a cluster started here (all of them without --master)")
    sp.add_argument("--master", help="the master URL `start` printed")
    sub.add_parser("status", help="list the clusters started here and their live workers")
    a = ap.parse_args(argv)
    try:
        if a.action == "start":
            c = start(a.workers, a.cores, a.memory, a.timeout)
            print(f"started {a.workers} worker(s); logs in {c.directory}", file=sys.stderr)
            print(f"stop it with: python -m webmill_spark local-cluster stop --master {c.master}", file=sys.stderr)
            print(c.master, flush=True)
        elif a.action == "stop":
            for c in stop(a.master):
                print(f"stopped {c.master}", file=sys.stderr)
        else:
            for c in clusters():
                print(f"{c.master}\t{c.alive_workers()} of {c.workers} workers alive\t{c.directory}")
    except ClusterError as e:
        print(f"webmill_spark: {e}", file=sys.stderr)
        return 1
    return 0

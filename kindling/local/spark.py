"""A local Spark standalone cluster (a master and N workers) from the PySpark wheel, on 127.0.0.1.

The wheel has no ``sbin`` scripts, so each daemon is started as ``bin/spark-class`` starts it:
``org.apache.spark.deploy.master.Master`` and ``org.apache.spark.deploy.worker.Worker spark://...``.
``spark-class`` execs the JVM, so a daemon's pid is its JVM's. Readiness is the master's JSON status
(``/json/`` on its web UI) listing every worker ALIVE. Jobs submit to it with
``-D kindling.spark.master=spark://127.0.0.1:<port>``; checkpoints must be on a path every worker
sees (any local path here: all workers run on this machine).

* :class:`LocalSparkCluster` -- owned by the calling process (tests): ``stop()`` ends exactly the
  processes it started, executors included.
* :func:`start_background` / :func:`stop_background` / :func:`status` -- a detached cluster for
  ``kindling local spark start|stop|status``, tracked by a state file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import urllib.request
from pathlib import Path
from typing import Any, Optional

from kindling.local.ports import free_port, wait_until
from kindling.local.process import StateFile, alive, runs, start_and_wait, terminate

DEFAULT_STATE_DIR = Path(".kindling/local/spark")
_STATE_FILE = "cluster.json"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
HOST = "127.0.0.1"


def spark_home() -> Path:
    """The PySpark wheel's Spark distribution (jars and ``bin/spark-class``)."""
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").is_file():
        raise RuntimeError(f"the PySpark installation at {home} has no bin/spark-class; reinstall pyspark")
    return home


def _daemon_env(work_dir: Path, daemon_memory: str) -> dict[str, str]:
    return {
        **os.environ,
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_LOG_DIR": str(work_dir / "logs"),
        # The daemons themselves are small; the default 1g each would crowd a laptop.
        "SPARK_DAEMON_MEMORY": daemon_memory,
        "SPARK_NO_DAEMONIZE": "1",
    }


def master_status(ui_url: str, timeout: float = 2.0) -> dict[str, Any]:
    """The master's JSON status: workers, applications, cores, memory."""
    with urllib.request.urlopen(f"{ui_url}/json/", timeout=timeout) as response:  # noqa: S310 - loopback http
        return json.loads(response.read())


def alive_workers(ui_url: str) -> list[dict[str, Any]]:
    return [w for w in master_status(ui_url).get("workers", []) if w.get("state") == "ALIVE"]


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (an executor below its worker, Python workers below the executor)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(pid: int) -> list[int]:
    """SIGKILL a process and everything below it, as a machine failure would; return the pids killed."""
    victims = [pid, *descendants(pid)]
    for victim in victims:
        try:
            os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return victims


class LocalSparkCluster:
    """A standalone master and ``workers`` workers (``cores`` cores, ``memory`` each) on 127.0.0.1."""

    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "1g", work_dir: Optional[Path] = None,
                 daemon_memory: str = "256m", detached: bool = False) -> None:
        if workers < 1:
            raise ValueError(f"--workers must be at least 1, got {workers}")
        self.workers, self.cores, self.memory = workers, cores, memory
        self.work_dir = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="kindling-spark-"))
        self.daemon_memory = daemon_memory
        self.detached = detached
        self.port: Optional[int] = None
        self.ui_port: Optional[int] = None
        self.master_process: Optional[subprocess.Popen] = None
        self.worker_processes: list[subprocess.Popen] = []

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    @property
    def ui_url(self) -> str:
        return f"http://{HOST}:{self.ui_port}"

    def _spark_class(self, main_class: str, *args: str) -> list[str]:
        return [str(spark_home() / "bin" / "spark-class"), main_class, *args]

    def start(self, timeout: float = 180) -> "LocalSparkCluster":
        """Start the master, then the workers; return once the master lists every worker ALIVE."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        (self.work_dir / "logs").mkdir(exist_ok=True)
        env = _daemon_env(self.work_dir, self.daemon_memory)
        self.port, self.ui_port = free_port(), free_port()
        command = self._spark_class(MASTER_CLASS, "--host", HOST, "--port", str(self.port), "--webui-port", str(self.ui_port))
        self.master_process = _start(command, self.work_dir / "master.log", lambda: master_status(self.ui_url).get("status") == "ALIVE",
                                     "the Spark master", timeout, self.detached, env)
        try:
            for index in range(self.workers):
                self.start_worker(index, timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def start_worker(self, index: int, timeout: float = 180) -> subprocess.Popen:
        """Start (or restart) worker ``index``; return once the master counts it ALIVE."""
        env = _daemon_env(self.work_dir, self.daemon_memory)
        work = self.work_dir / f"worker-{index}"
        work.mkdir(parents=True, exist_ok=True)
        wanted = len([p for p in self.worker_processes if p.poll() is None]) + 1
        command = self._spark_class(
            WORKER_CLASS, "--host", HOST, "--port", str(free_port()), "--webui-port", str(free_port()),
            "--cores", str(self.cores), "--memory", self.memory, "--work-dir", str(work), self.master_url,
        )
        process = _start(command, self.work_dir / f"worker-{index}.log", lambda: len(alive_workers(self.ui_url)) >= wanted,
                         f"Spark worker {index}", timeout, self.detached, env)
        if index < len(self.worker_processes):
            self.worker_processes[index] = process
        else:
            self.worker_processes.append(process)
        return process

    def kill_worker(self, index: int) -> list[int]:
        """SIGKILL worker ``index``'s JVM, its executors and their Python workers (a lost machine)."""
        return kill_tree(self.worker_processes[index].pid)

    def stop(self, timeout: float = 20) -> None:
        """Stop the workers (and their executors), then the master: only the processes this object started."""
        for process in self.worker_processes:
            _stop_tree(process.pid, timeout, process)
        self.worker_processes = []
        if self.master_process is not None:
            _stop_tree(self.master_process.pid, timeout, self.master_process)
            self.master_process = None

    def __enter__(self) -> "LocalSparkCluster":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _start(command: list[str], log: Path, ready, what: str, timeout: float, detached: bool, env: dict[str, str]) -> subprocess.Popen:
    return start_and_wait(command, log, ready, what, timeout, detached=detached, env=env)


def _stop_tree(pid: int, timeout: float, process: Optional[subprocess.Popen] = None) -> None:
    below = descendants(pid)
    terminate(pid, timeout, reap=process)
    for child in below:  # executors a killed worker left behind
        if alive(child):
            terminate(child, timeout)


# --- detached cluster for the CLI ---------------------------------------------------------------
def _state(state_dir: Path) -> StateFile:
    return StateFile(state_dir, _STATE_FILE, MASTER_CLASS.encode())


def status(state_dir: Path = DEFAULT_STATE_DIR) -> dict[str, Any]:
    """The recorded cluster with its live workers; ``running`` is False when no recorded master answers."""
    state, answering = _state(state_dir).answering(lambda s: master_status(s["ui"]).get("status") == "ALIVE")
    if not answering or state is None:
        return {"running": False, "stateDir": str(state_dir)}
    workers = alive_workers(state["ui"])
    return {"running": True, **state, "aliveWorkers": len(workers), "cores": sum(int(w.get("cores", 0)) for w in workers)}


def start_background(workers: int, cores: int, memory: str, state_dir: Path = DEFAULT_STATE_DIR) -> dict[str, Any]:
    """Start a detached cluster (or report the running one) and record it in ``state_dir``."""
    running = status(state_dir)
    if running["running"]:
        return running
    _state(state_dir).refuse_second("a Spark master", "kindling local spark stop")
    cluster = LocalSparkCluster(workers, cores, memory, work_dir=Path(state_dir).resolve(), detached=True)
    cluster.start()
    state = {
        "pid": cluster.master_process.pid, "host": HOST, "port": cluster.port, "master": cluster.master_url,
        "ui": cluster.ui_url, "workerPids": [p.pid for p in cluster.worker_processes],
        "workers": workers, "coresPerWorker": cores, "memoryPerWorker": memory,
    }
    _state(state_dir).write(state)
    return state


def stop_background(state_dir: Path = DEFAULT_STATE_DIR) -> bool:
    """Stop the recorded cluster's workers (and their executors) and master; True if one was running."""
    state = _state(state_dir).read() or {}
    for pid in state.get("workerPids", []):
        if runs(int(pid), WORKER_CLASS.encode()):
            _stop_tree(int(pid), 20)
    master = _state(state_dir).running_pid()
    if master is not None:
        _stop_tree(master, 20)
    _state(state_dir).path.unlink(missing_ok=True)
    return master is not None


def wait_for_workers(ui_url: str, count: int, timeout: float) -> None:
    """Wait until the master counts ``count`` workers ALIVE."""
    wait_until(lambda: len(alive_workers(ui_url)) == count, timeout, f"{count} alive Spark workers at {ui_url}")

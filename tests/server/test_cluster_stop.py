"""``kindling cluster stop`` never leaves a job's driver running unseen.

Each test has a job manager of its own (it is stopped). A driver running a program without
Spark shows the process handling fast: ``stop --keep-jobs`` leaves the driver running and
``cluster status`` lists it; a new job manager in the same home supervises it again; a plain
``stop`` cancels the job and no process of its driver is left. An endless SQL job on Spark is
stopped with ``--savepoint-path``: a savepoint, and none of the driver's processes (the Python
driver and its Spark JVM, one process group) left.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pytest

from kindling.local.ports import free_port, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_helpers import ROOT, kindling

pytestmark = pytest.mark.integration

SQL_JOB = str(Path(__file__).with_name("unbounded_job.sql"))
IDLE_PROGRAM = str(Path(__file__).with_name("idle_program.py"))


def _group_alive(pid: int) -> bool:
    """Whether any process of the group ``pid`` leads still exists."""
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def home():
    path = Path(tempfile.mkdtemp(prefix="kindling-cluster-stop-"))
    yield path
    subprocess.run([sys.executable, "-m", "kindling.cli", "cluster", "stop", "--home", str(path)], capture_output=True, timeout=300, cwd=ROOT,
                   check=False)
    shutil.rmtree(path, ignore_errors=True)


def _start(home: Path) -> tuple[str, httpx.Client]:
    port = free_port()
    kindling("cluster", "start", "--port", str(port), "--home", str(home), timeout=120)
    return f"127.0.0.1:{port}", httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)


def _driver_pid(http: httpx.Client, jid: str) -> int:
    wait_until(lambda: any(t["jobId"] == jid for t in http.get("/taskmanagers").json()["taskmanagers"]), 60, f"the driver of job {jid}", interval=0.2)
    return int(next(t["pid"] for t in http.get("/taskmanagers").json()["taskmanagers"] if t["jobId"] == jid))


def test_keep_jobs_then_stop_cancels_and_leaves_no_driver(home):
    address, http = _start(home)
    jid = re.search(r"JobID ([0-9a-f]{32})", kindling("run", "-d", "-m", address, IDLE_PROGRAM).stdout).group(1)
    pid = _driver_pid(http, jid)

    # --keep-jobs: the job manager goes, the driver stays and is reported.
    kept = kindling("cluster", "stop", "--keep-jobs", "--home", str(home)).stdout
    assert f"Kept job {jid}" in kept and f"driver pid {pid}" in kept, kept
    assert _group_alive(pid)
    status = subprocess.run([sys.executable, "-m", "kindling.cli", "cluster", "status", "--home", str(home)],
                            capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
    assert status.returncode == 3, status.stdout + status.stderr
    assert [(j["jid"], j["pid"]) for j in json.loads(status.stdout)["keptJobs"]] == [(jid, pid)]

    # A new job manager in the same home supervises the kept driver again; a plain stop cancels the job.
    address, http = _start(home)
    assert _driver_pid(http, jid) == pid
    stopped = kindling("cluster", "stop", "--home", str(home)).stdout
    assert f"Cancelled job {jid}." in stopped and "Job manager stopped" in stopped, stopped
    wait_until(lambda: not _group_alive(pid), 30, f"the driver group {pid} to be gone", interval=0.2)
    assert json.loads((home / "jobs" / jid / "job.json").read_text())["state"] == "CANCELED"
    status = subprocess.run([sys.executable, "-m", "kindling.cli", "cluster", "status", "--home", str(home)],
                            capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
    assert json.loads(status.stdout)["keptJobs"] == []


def test_stop_with_savepoint_path_leaves_no_driver(home):
    address, http = _start(home)
    submitted = kindling("run", "-d", "-m", address, "-D", "restart-strategy.type=fixed-delay", "-D", "restart-strategy.fixed-delay.attempts=20",
                         "-D", "restart-strategy.fixed-delay.delay=2 s", SQL_JOB)
    jid = re.search(r"JobID ([0-9a-f]{32})", submitted.stdout).group(1)

    def committed() -> bool:
        state = http.get(f"/jobs/{jid}").json()["state"]
        return state in ("FAILED", "CANCELED", "FINISHED") or (
            state == "RUNNING" and http.get(f"/jobs/{jid}/checkpoints").json()["counts"]["completed"] > 0)

    wait_until(committed, 600, f"job {jid} to commit a micro-batch", interval=1.0)
    assert http.get(f"/jobs/{jid}").json()["state"] == "RUNNING", http.get(f"/jobs/{jid}/exceptions").json()["root-exception"]
    pid = _driver_pid(http, jid)

    target = home / "savepoints"
    stopped = kindling("cluster", "stop", "--savepoint-path", str(target), "--home", str(home), timeout=400).stdout
    match = re.search(rf"Stopped job {jid} with a savepoint: (\S+)", stopped)
    assert match and Path(match.group(1), "_metadata").is_file(), stopped
    assert "Job manager stopped" in stopped
    wait_until(lambda: not _group_alive(pid), 30, f"the driver group {pid} to be gone", interval=0.2)
    record = json.loads((home / "jobs" / jid / "job.json").read_text())
    assert record["state"] == "FINISHED" and record["last_savepoint"] == match.group(1)
    http.close()

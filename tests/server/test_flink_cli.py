"""The real ``flink`` CLI of the apache-flink 2.3 wheel drives kindling's job manager.

Two jobs serve the module in file order. A program without Spark (its driver waits, the job stays
CREATED) is listed as scheduled and ``cancel``ed, fast. One endless SQL job (datagen -> blackhole)
is listed as running, has every route validated against Flink's schema, takes a ``savepoint`` and
is stopped with ``stop --savepointPath``. The CLI comes from the PyFlink environment ``make test``
builds (``.venv/pyflink`` next to the test venv); the module skips only where Java or that
environment is missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

import httpx
import pyarrow.fs as pafs
import pytest

from kindling.local.ports import wait_until

sys.path.insert(0, str(Path(__file__).resolve().parent))
from flink_rest_schema import ROUTES, errors
from server_helpers import ROOT, kindling

pytestmark = pytest.mark.integration

SQL_JOB = str(Path(__file__).with_name("unbounded_job.sql"))
IDLE_PROGRAM = str(Path(__file__).with_name("idle_program.py"))
# Query failures (a Python worker slow to connect back on a loaded machine) restart inside the driver.
RESTARTS = ["-D", "restart-strategy.type=fixed-delay", "-D", "restart-strategy.fixed-delay.attempts=20",
            "-D", "restart-strategy.fixed-delay.delay=2 s"]


def flink_cli() -> Path | None:
    """``bin/flink`` of the PyFlink environment: ``$KINDLING_FLINK_CLI``, else ``.venv/pyflink`` beside the running venv or the repo's."""
    if os.environ.get("KINDLING_FLINK_CLI"):
        return Path(os.environ["KINDLING_FLINK_CLI"])
    for venv in (Path(sys.prefix) / "pyflink", ROOT / ".venv" / "pyflink"):
        found = sorted(venv.glob("lib/python3*/site-packages/pyflink/bin/flink"))
        if found:
            return found[0]
    return None


CLI = flink_cli()
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("no Java (java on PATH or JAVA_HOME): the flink CLI is a Java program", allow_module_level=True)
if CLI is None:
    pytest.skip("no PyFlink environment with bin/flink: `make test` builds .venv/pyflink (pip install apache-flink==2.3.0)", allow_module_level=True)


def flink(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the real flink CLI; its output and exit code as they are."""
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False)


def _submit(jobmanager: dict, *arguments: str) -> str:
    result = kindling("run", "-d", "-m", jobmanager["address"], *arguments)
    match = re.search(r"JobID ([0-9a-f]{32})", result.stdout)
    assert match, result.stdout
    return match.group(1)


def _wait_batches(http: httpx.Client, jid: str, timeout: float = 600) -> None:
    """Until the job runs and has committed a micro-batch (a checkpoint a savepoint can copy); fail at once if it ends."""

    def ready() -> bool:
        state = http.get(f"/jobs/{jid}").json()["state"]
        return state in ("FAILED", "CANCELED", "FINISHED") or (
            state == "RUNNING" and http.get(f"/jobs/{jid}/checkpoints").json()["counts"]["completed"] > 0)

    wait_until(ready, timeout, f"job {jid} to run and complete a checkpoint", interval=1.0)
    state = http.get(f"/jobs/{jid}").json()["state"]
    assert state == "RUNNING", f"job {jid} ended {state}: {http.get(f'/jobs/{jid}/exceptions').json()['root-exception']}"


def _wait_state(http: httpx.Client, jid: str, state: str, timeout: float = 120) -> None:
    wait_until(lambda: http.get(f"/jobs/{jid}").json()["state"] == state, timeout, f"job {jid} to be {state}", interval=0.5)


@pytest.fixture(scope="module")
def idle(jobmanager):
    """A job whose program uses no Spark: its driver runs, the job stays CREATED (Flink's scheduled)."""
    http = httpx.Client(base_url=jobmanager["url"], timeout=30)
    jid = _submit(jobmanager, IDLE_PROGRAM)
    wait_until(lambda: any(t["jobId"] == jid for t in http.get("/taskmanagers").json()["taskmanagers"]), 120, "the idle job's driver", interval=0.5)
    yield SimpleNamespace(http=http, address=jobmanager["address"], jid=jid)
    if http.get(f"/jobs/{jid}").json()["state"] not in ("FINISHED", "CANCELED", "FAILED"):
        http.patch(f"/jobs/{jid}", params={"mode": "cancel"})
    http.close()


@pytest.fixture(scope="module")
def job(jobmanager, s3):
    """The running SQL job; it carries the S3 server's s3.* options, so it can take savepoints into a bucket."""
    http = httpx.Client(base_url=jobmanager["url"], timeout=30)
    s3_options = [part for key, value in s3.options().items() for part in ("-D", f"{key}={value}")]
    state = SimpleNamespace(http=http, address=jobmanager["address"], jid=_submit(jobmanager, *RESTARTS, *s3_options, SQL_JOB),
                            savepoints=jobmanager["home"] / f"cli-savepoints-{uuid.uuid4().hex[:6]}")
    try:
        _wait_batches(http, state.jid)
        yield state
    finally:
        if http.get(f"/jobs/{state.jid}").json()["state"] not in ("FINISHED", "CANCELED", "FAILED"):
            http.patch(f"/jobs/{state.jid}", params={"mode": "cancel"})
        http.close()


def test_list_scheduled_and_cancel(idle):
    line = rf"^\d\d\.\d\d\.\d{{4}} \d\d:\d\d:\d\d : {idle.jid} : idle_program \((CREATED|CANCELED)\)$"
    scheduled = flink("list", "-s", "-m", idle.address)
    assert scheduled.returncode == 0, scheduled.stdout + scheduled.stderr
    assert "----------------------- Scheduled Jobs -----------------------" in scheduled.stdout, scheduled.stdout
    assert re.search(line.replace("(CREATED|CANCELED)", "CREATED"), scheduled.stdout, re.MULTILINE), scheduled.stdout
    result = flink("cancel", idle.jid, "-m", idle.address)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Cancelling job {idle.jid}." in result.stdout and f"Cancelled job {idle.jid}." in result.stdout, result.stdout
    _wait_state(idle.http, idle.jid, "CANCELED")
    everything = flink("list", "-a", "-m", idle.address).stdout
    assert "Terminated Jobs" in everything and re.search(line.replace("(CREATED|CANCELED)", "CANCELED"), everything, re.MULTILINE), everything
    again = flink("cancel", idle.jid, "-m", idle.address)
    assert again.returncode == 1 and "already reached another terminal state (CANCELED)" in again.stdout + again.stderr
    unknown = uuid.uuid4().hex
    missing = flink("cancel", unknown, "-m", idle.address)
    assert missing.returncode == 1 and f"Job {unknown} not found" in missing.stdout + missing.stderr


def test_failed_operation_reaches_the_cli_with_its_reason(idle, tmp_path):
    result = flink("savepoint", "-d", str(tmp_path / "no-such-savepoint"), "-m", idle.address)
    assert result.returncode == 1
    assert f"Failed to dispose the savepoint '{tmp_path / 'no-such-savepoint'}'." in result.stdout + result.stderr
    assert "is not a kindling savepoint" in result.stdout + result.stderr  # the failure-cause, deserialized by the CLI


def test_list_running(job):
    line = re.compile(rf"^\d\d\.\d\d\.\d{{4}} \d\d:\d\d:\d\d : {job.jid} : insert-into_sink \(RUNNING\)$", re.MULTILINE)
    listed = flink("list", "-m", job.address)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "------------------ Running/Restarting Jobs -------------------" in listed.stdout and line.search(listed.stdout), listed.stdout
    running = flink("list", "-r", "-m", job.address)
    assert running.returncode == 0 and line.search(running.stdout) and "Scheduled" not in running.stdout, running.stdout
    scheduled = flink("list", "-s", "-m", job.address)
    assert scheduled.returncode == 0 and job.jid not in scheduled.stdout, scheduled.stdout
    everything = flink("list", "-a", "-m", job.address)
    assert everything.returncode == 0 and line.search(everything.stdout) and "Terminated Jobs" in everything.stdout, everything.stdout


def test_every_route_of_a_running_job_validates_against_flink_schema(job):
    http = job.http
    for method, route in ROUTES:
        if method != "GET" or "trigger_id" in route:
            continue
        body = http.get(route.replace("{jid}", job.jid)).json()
        problems = errors(body, ROUTES[(method, route)])
        assert not problems, f"GET {route}:\n" + "\n".join(problems)
    vertices = http.get(f"/jobs/{job.jid}").json()["vertices"]
    assert [v["kind"] for v in vertices] == ["source", "sink"] and vertices[0]["metrics"]["write-records"] > 0, vertices


def test_savepoint(job):
    result = flink("savepoint", job.jid, str(job.savepoints), "-m", job.address)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Triggering savepoint for job {job.jid}." in result.stdout
    match = re.search(r"Savepoint completed\. Path: (\S+)", result.stdout)
    assert match and Path(match.group(1), "_metadata").is_file(), result.stdout
    assert "You can resume your program from this savepoint with the run command." in result.stdout
    assert job.http.get(f"/jobs/{job.jid}").json()["state"] == "RUNNING"


def test_savepoint_into_s3_and_its_disposal(job, s3):
    bucket = f"cli-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(bucket)
    result = flink("savepoint", job.jid, f"s3://{bucket}/savepoints", "-m", job.address)
    assert result.returncode == 0, result.stdout + result.stderr
    match = re.search(r"Savepoint completed\. Path: (s3://\S+)", result.stdout)
    assert match, result.stdout
    key = match.group(1)[len("s3://"):]
    assert s3.filesystem().get_file_info(f"{key}/_metadata").size > 0
    # The job manager disposes of it with the s3.* options of the job that took it.
    disposed = flink("savepoint", "-d", match.group(1), "-m", job.address)
    assert disposed.returncode == 0, disposed.stdout + disposed.stderr
    assert not s3.filesystem().get_file_info(pafs.FileSelector(key, allow_not_found=True, recursive=True))
    assert job.http.get(f"/jobs/{job.jid}").json()["state"] == "RUNNING"


def test_stop_with_savepoint_path(job):
    result = flink("stop", "--savepointPath", str(job.savepoints), job.jid, "-m", job.address)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f'Suspending job "{job.jid}" with a CANONICAL savepoint.' in result.stdout, result.stdout
    match = re.search(r"Savepoint completed\. Path: (\S+)", result.stdout)
    assert match and Path(match.group(1), "_metadata").is_file(), result.stdout
    _wait_state(job.http, job.jid, "FINISHED")
    listed = flink("list", "-a", "-m", job.address).stdout
    assert re.search(rf" : {job.jid} : insert-into_sink \(FINISHED\)", listed), listed

"""The job manager: submitted jobs, their supervisors and savepoint operations; runs in the background.

``kindling cluster start`` launches ``python -m kindling.server`` detached and returns
once its REST API answers; ``<home>/jobmanager.json`` says where it listens and its pid.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from kindling import config as cfg
from kindling.config import Configuration
from kindling.local.ports import wait_until
from kindling.runtime import metrics, savepoints
from kindling.runtime.json_files import read_json, write_json
from kindling.server.store import JobRecord, JobStore, now_ms
from kindling.server.supervisor import JobSupervisor, kill_group, process_alive

log = logging.getLogger("kindling.jobmanager")

DEFAULT_HOME = ".kindling/jobmanager"
INFO_FILE = "jobmanager.json"
# Written by ``cluster stop --keep-jobs`` before it signals the job manager: leave the drivers running.
KEEP_JOBS_FILE = "keep-jobs"
RECONCILIATION_FILE = "reconciliation.json"  # the last reconciliation of a job: its state and report
SINK_CONTENTS_FILE = "sink-contents.json"  # what the job's sinks held when last read (shown after the job ends)
SINK_CONTENTS_TIMEOUT_S = 15.0
JOB_END_TIMEOUT_S = 120.0
SAVEPOINT_TIMEOUT_S = 600.0


class JobNotFound(LookupError):
    """No job with this id."""


class TriggerNotFound(LookupError):
    """No savepoint or disposal operation with this id."""


@dataclass
class Operation:
    """An asynchronous savepoint, stop or disposal request, as Flink's REST API reports it."""

    id: str
    kind: str
    jid: Optional[str] = None
    status: str = "IN_PROGRESS"
    location: Optional[str] = None
    failure: Optional[str] = None
    started: int = field(default_factory=now_ms)


class JobManager:
    """Runs jobs, each in its own supervised driver process, and keeps their records."""

    def __init__(self, home: Path, address: str = "127.0.0.1", port: int = 8081) -> None:
        self.home = home.resolve()
        self.address, self.port = address, port
        self.store = JobStore(self.home)
        self.supervisors: dict[str, JobSupervisor] = {}
        self.operations: dict[str, Operation] = {}
        self._reconciling_lock = threading.Lock()
        self.start_time = now_ms()
        self._lock = threading.Lock()

    # --- jobs ----------------------------------------------------------------------------------
    def recover(self) -> None:
        """Resume supervising jobs that were running when the job manager stopped."""
        for record in self.store.all():
            if not record.terminal:
                log.warning("recovering job %s (%s)", record.jid, record.state)
                self._supervise(record, adopt=True)

    def _supervise(self, record: JobRecord, adopt: bool = False) -> None:
        supervisor = JobSupervisor(self.store, record, adopt=adopt)
        self.supervisors[record.jid] = supervisor
        supervisor.start()

    def submit(
        self,
        file: str,
        args: Optional[list[str]] = None,
        cwd: Optional[str] = None,
        savepoint_path: Optional[str] = None,
        allow_non_restored_state: bool = False,
        parallelism: Optional[int] = None,
        configuration: Optional[dict[str, Any]] = None,
    ) -> JobRecord:
        """Start a Python pipeline file or a SQL file as a new job; return its record."""
        workdir = Path(cwd or os.getcwd())
        path = (workdir / file).resolve()
        if not path.is_file():
            raise ValueError(f"program file {path} does not exist")
        if path.suffix not in (".py", ".sql"):
            raise ValueError(f"program file {path} must be a Python pipeline (.py) or a SQL file (.sql)")
        values = {str(k): str(v) for k, v in (configuration or {}).items()}
        conf = Configuration(values)  # an unknown key or bad value is an error now, not in the driver
        if parallelism is not None and parallelism < 1:
            raise ValueError(f"parallelism must be at least 1, got {parallelism}")
        if savepoint_path:
            savepoints.read_metadata(savepoint_path, conf)
            savepoint_path = savepoints.normalise(savepoint_path)
        jid = uuid.uuid4().hex
        record = JobRecord(
            jid=jid,
            name=path.stem,
            kind="sql" if path.suffix == ".sql" else "python",
            file=str(path),
            args=[str(a) for a in args or []],
            cwd=str(workdir),
            directory=str(self.store.job_dir(jid)),
            parallelism=parallelism,
            savepoint_path=savepoint_path,
            allow_non_restored_state=allow_non_restored_state,
            configuration=values,
        )
        record.set_state("CREATED")
        self.store.add(record)
        self._supervise(record)
        return record

    def job(self, jid: str) -> JobRecord:
        record = self.store.get(jid)
        if record is None:
            raise JobNotFound(f"Job {jid} not found")
        return record

    def status(self, jid: str) -> dict[str, Any]:
        """The driver's last published status (queries, points, configuration) for a job."""
        supervisor = self.supervisors.get(jid)
        if supervisor is not None:
            return supervisor.status
        return read_json(Path(self.job(jid).directory) / "status.json") or {}

    def cancel(self, jid: str) -> None:
        record = self.job(jid)
        supervisor = self.supervisors.get(jid)
        if supervisor is not None:
            supervisor.cancel()
        elif not record.terminal:
            record.set_state("CANCELED")
            self.store.save(record)

    def metrics(self, jid: str) -> dict[str, Optional[float]]:
        """The job's metrics (see ``kindling.runtime.metrics.JOB_METRICS``)."""
        record = self.job(jid)
        status = self.status(jid)
        queries = status.get("queries") or {}
        points = {uid: q.get("points") or [] for uid, q in queries.items()}
        checkpoints = {uid: int(q.get("lastCommittedBatch", -1)) + 1 for uid, q in queries.items()}
        values = metrics.job_metrics(points, checkpoints, record.restarts + int(status.get("restarts") or 0), record.start_time)
        if record.terminal:
            for key in ("numRecordsInPerSecond", "numRecordsOutPerSecond"):
                values[key] = 0.0
            values["uptime"] = float(record.duration())
        return values

    def user_metrics(self, jid: str) -> dict[str, float]:
        """The job's user metrics (``get_metric_group()`` in user functions), by identifier."""
        self.job(jid)
        return dict(self.status(jid).get("userMetrics") or {})

    # --- reconciliation -------------------------------------------------------------------------
    def reconcile(self, jid: str) -> dict[str, Any]:
        """Start ``kindling reconcile --job <jid>`` (it runs beside the job, even while it runs).

        The reconciliation runs in a process of its own (a Spark driver); its state and report are kept in the
        job's directory, where :meth:`reconciliation` reads them. A SQL script or a Table API program is re-run in
        batch mode; a DataStream program is refused there, by name, before Spark starts.
        """
        record = self.job(jid)
        directory = Path(record.directory)
        with self._reconciling_lock:
            current = read_json(directory / RECONCILIATION_FILE) or {}
            if current.get("status") == "RUNNING" and process_alive(int(current.get("pid") or 0)):
                return current
            report_file = directory / "reconciliation-report.json"
            report_file.unlink(missing_ok=True)
            log = (directory / "reconciliation.log").open("wb")
            process = subprocess.Popen([sys.executable, "-m", "kindling", "reconcile", "--job", jid, "--home", str(self.home),
                                        "--output", str(report_file)], cwd=record.cwd, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
            log.close()
            state = {"status": "RUNNING", "pid": process.pid, "start-time": now_ms()}
            write_json(directory / RECONCILIATION_FILE, state)
        threading.Thread(target=self._await_reconciliation, args=(directory, process, state), daemon=True).start()
        return state

    def _await_reconciliation(self, directory: Path, process: subprocess.Popen, state: dict[str, Any]) -> None:
        code = process.wait()
        report = read_json(directory / "reconciliation-report.json")
        ended = dict(state, **{"end-time": now_ms(), "exit-code": code})
        if report is not None:
            ended.update(status="COMPLETED", report=report)
        else:
            lines = (directory / "reconciliation.log").read_text(errors="replace").strip().splitlines()
            reason = next((line for line in reversed(lines) if line.startswith("kindling: ")), lines[-1] if lines else "no output")
            ended.update(status="FAILED", error=reason)
        write_json(directory / RECONCILIATION_FILE, ended)

    def reconciliation(self, jid: str) -> dict[str, Any]:
        """The job's last reconciliation: ``status`` NONE, RUNNING, COMPLETED (with ``report``) or FAILED (with ``error``)."""
        return read_json(Path(self.job(jid).directory) / RECONCILIATION_FILE) or {"status": "NONE"}

    # --- sink contents --------------------------------------------------------------------------
    def sink_contents(self, jid: str, limit: int = 100) -> dict[str, Any]:
        """What the job's sinks hold now (up to ``limit`` rows each), read by the job's driver, which has the sinks'
        options and credentials; the last answer is kept and returned once the job has ended (``stale``).

        ``status`` is NONE (never read), or COMPLETED with ``timestamp`` and ``sinks`` (each with ``location``,
        ``columns``, ``key``, ``rows`` and ``total``, or ``error``).
        """
        record = self.job(jid)
        stored = Path(record.directory) / SINK_CONTENTS_FILE
        supervisor = self.supervisors.get(jid)
        if not record.terminal and supervisor is not None:
            request_id = uuid.uuid4().hex
            supervisor.request_contents(request_id, limit)
            deadline = time.monotonic() + SINK_CONTENTS_TIMEOUT_S
            while time.monotonic() < deadline and not supervisor.record.terminal:
                response = supervisor.response(request_id, consume=True)
                if response is not None:
                    write_json(stored, response)
                    return dict(response, stale=False)
                time.sleep(0.1)  # polling for the driver's answer
        last = read_json(stored)
        return dict(last, stale=True) if last else {"status": "NONE", "sinks": []}

    # --- savepoints ------------------------------------------------------------------------------
    def trigger(self, jid: str, kind: str, target: Optional[str], drain: bool = False, trigger_id: Optional[str] = None) -> Operation:
        """Ask a running job for a savepoint (``kind`` 'savepoint') or to stop with one ('stop').

        ``trigger_id`` is the client's id for the request (Flink's ``triggerId``): asking again with
        it returns the operation already under way instead of a second savepoint.
        """
        if trigger_id and trigger_id in self.operations:
            return self.operations[trigger_id]
        record = self.job(jid)
        if record.terminal:
            raise ValueError(f"job {jid} is {record.state}: savepoints are taken of running jobs only")
        if drain:
            raise ValueError("'drain' (emit a final watermark before stopping) is not supported by kindling: stop without it")
        supervisor = self.supervisors[jid]
        if target is None:
            target = str(savepoints.resolve_target(Configuration(record.configuration), None))
        operation = Operation(trigger_id or uuid.uuid4().hex, kind, jid)
        self.operations[operation.id] = operation
        supervisor.request(operation.id, kind, savepoints.normalise(target), drain)
        threading.Thread(target=self._await_savepoint, args=(supervisor, operation), daemon=True).start()
        return operation

    def _await_savepoint(self, supervisor: JobSupervisor, operation: Operation) -> None:
        deadline = time.monotonic() + SAVEPOINT_TIMEOUT_S
        while time.monotonic() < deadline:
            ended = supervisor.record.terminal  # read first: a driver answers before it exits
            response = supervisor.response(operation.id)
            if response is not None:
                operation.location = response.get("location")
                operation.failure = response.get("failure")
                if operation.location:
                    record = supervisor.record
                    record.last_savepoint = operation.location
                    record.savepoints.append(
                        {"id": len(record.savepoints) + 1, "location": operation.location, "timestamp": now_ms(), "kind": operation.kind})
                    self.store.save(record)
                operation.status = "COMPLETED"
                return
            if ended:
                operation.failure = f"the job ended {supervisor.record.state} before the savepoint completed"
                operation.status = "COMPLETED"
                return
            time.sleep(0.2)  # polling for the driver's answer
        operation.failure = f"no savepoint within {SAVEPOINT_TIMEOUT_S:.0f} s"
        operation.status = "COMPLETED"

    def dispose(self, path: str) -> Operation:
        operation = Operation(uuid.uuid4().hex, "disposal")
        self.operations[operation.id] = operation
        try:
            savepoints.dispose(path, self._savepoint_configuration(path))
        except (OSError, ValueError) as exc:
            operation.failure = str(exc)
        operation.status = "COMPLETED"
        return operation

    def _savepoint_configuration(self, path: str) -> Optional[Configuration]:
        """The configuration of the job that took the savepoint at ``path`` (its ``s3.*`` options reach it), if known.

        Flink disposes with the cluster's filesystem settings; kindling's job manager has none of its own, so a
        savepoint it did not take is reached with the AWS default chain of its environment.
        """
        location = savepoints.normalise(path)
        for record in self.store.all():
            if any(entry.get("location") == location for entry in record.savepoints) or record.last_savepoint == location:
                return Configuration(record.configuration)
        return None

    def operation(self, trigger_id: str, jid: Optional[str] = None) -> Operation:
        operation = self.operations.get(trigger_id)
        if operation is None or (jid is not None and operation.jid != jid):
            raise TriggerNotFound(f"there is no savepoint operation with trigger id {trigger_id}")
        return operation

    def shutdown(self) -> None:
        """Stop every driver; running jobs resume from their checkpoints when the job manager starts again."""
        for supervisor in self.supervisors.values():
            supervisor.shutdown()

    def detach(self) -> None:
        """Leave every driver running (``cluster stop --keep-jobs``); the next job manager in this home adopts them."""
        for supervisor in self.supervisors.values():
            supervisor.detach()


# --- the background process ----------------------------------------------------------------------
def _url(address: str, port: int) -> str:
    return f"http://{address}:{port}"


def _answers(url: str) -> bool:
    with urllib.request.urlopen(f"{url}/config", timeout=2) as response:
        return response.status == 200


def status(home: str | Path = DEFAULT_HOME) -> dict[str, Any]:
    """Whether a job manager started from ``home`` runs, and where."""
    info = read_json(Path(home) / INFO_FILE)
    if not info or not process_alive(int(info["pid"])):
        return {"running": False}
    return {"running": True, **info}


def start_background(port: int = 8081, home: str | Path = DEFAULT_HOME, address: str = "127.0.0.1", timeout: float = 60.0) -> dict[str, Any]:
    """Start the job manager detached; return once its REST API answers."""
    import importlib.util

    missing = [m for m in ("fastapi", "uvicorn", "prometheus_client") if importlib.util.find_spec(m) is None]
    if missing:
        raise RuntimeError(f"the job manager needs kindling's server extra ({', '.join(missing)} not installed): pip install 'kindling[server]'")
    home = Path(home).resolve()
    current = status(home)
    if current["running"]:
        raise RuntimeError(f"a job manager already runs at {current['url']} (pid {current['pid']}); 'kindling cluster stop' stops it")
    home.mkdir(parents=True, exist_ok=True)
    log_file = (home / "jobmanager.log").open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "kindling.server", "--home", str(home), "--port", str(port), "--address", address],
        stdin=subprocess.DEVNULL,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log_file.close()
    url = _url(address, port)

    def up() -> bool:
        if process.poll() is not None:
            tail = (home / "jobmanager.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the job manager exited with status {process.returncode}:\n{tail}")
        return _answers(url)

    try:
        wait_until(up, timeout, f"the job manager's REST API at {url}")
    except RuntimeError:
        raise
    except TimeoutError:
        process.kill()
        raise
    return {"running": True, "pid": process.pid, "url": url, "address": address, "port": port, "home": str(home)}


def kept_jobs(home: str | Path = DEFAULT_HOME) -> list[dict[str, Any]]:
    """Jobs of ``home`` not ended whose driver process still runs: what a job manager stopped with ``--keep-jobs`` left running."""
    jobs = Path(home) / "jobs"
    result = []
    for path in sorted(jobs.glob("*/job.json")) if jobs.is_dir() else []:
        record = read_json(path) or {}
        pid = record.get("driver_pid")
        if record.get("state") not in ("CANCELED", "FINISHED", "FAILED") and pid and process_alive(int(pid)):
            result.append({"jid": record["jid"], "name": record.get("name"), "state": record.get("state"), "pid": int(pid)})
    return result


def _end_jobs(url: str, savepoint_dir: Optional[str], timeout: float) -> list[str]:
    """Cancel every job that has not ended, or stop it with a savepoint in ``savepoint_dir``; what happened, one line a job."""
    import json

    def call(method: str, path: str, body: Optional[dict] = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{url}{path}", data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
        return json.loads(text) if text else None

    def state(jid: str) -> str:
        return call("GET", f"/jobs/{jid}")["state"]

    report = []
    running = [j["id"] for j in call("GET", "/jobs")["jobs"] if j["status"] not in ("CANCELED", "FINISHED", "FAILED")]
    triggers: dict[str, str] = {}
    for jid in running:
        if savepoint_dir and state(jid) == "RUNNING":
            target = str(Path(savepoint_dir).expanduser().resolve())
            triggers[jid] = call("POST", f"/jobs/{jid}/stop", {"targetDirectory": target, "drain": False})["request-id"]
        else:
            call("PATCH", f"/jobs/{jid}?mode=cancel")
            report.append(f"Cancelled job {jid}.")
    deadline = time.monotonic() + timeout
    for jid, trigger in triggers.items():
        while True:
            result = call("GET", f"/jobs/{jid}/savepoints/{trigger}")
            if result["status"]["id"] == "COMPLETED" or time.monotonic() > deadline:
                break
            time.sleep(0.5)  # polling the stop-with-savepoint
        operation = result.get("operation") or {}
        if operation.get("location"):
            report.append(f"Stopped job {jid} with a savepoint: {operation['location']}")
            continue
        cause = (operation.get("failure-cause") or {}).get("stack-trace") or "no savepoint in time"
        if state(jid) not in ("CANCELED", "FINISHED", "FAILED"):
            call("PATCH", f"/jobs/{jid}?mode=cancel")
        report.append(f"Cancelled job {jid}: its savepoint failed ({cause.strip().splitlines()[-1]})")
    wait_until(lambda: all(state(j) in ("CANCELED", "FINISHED", "FAILED") for j in running), max(1.0, deadline - time.monotonic()),
               "the running jobs to end")
    return report


def stop_background(
    home: str | Path = DEFAULT_HOME,
    timeout: float = 60.0,
    savepoint_dir: Optional[str] = None,
    keep_jobs: bool = False,
) -> Optional[list[str]]:
    """Stop the job manager started from ``home``; None if none runs, else what became of its jobs.

    As Flink's ``stop-cluster`` ends its jobs, running jobs are cancelled, or stopped with a
    savepoint in ``savepoint_dir``. With ``keep_jobs`` their drivers keep running and the next job
    manager started in ``home`` supervises them again (``cluster status`` lists them meanwhile).
    No driver of a job the job manager was told to end survives it: what is left is killed.
    """
    current = status(home)
    if not current["running"]:
        return None
    home = Path(home)
    pid = int(current["pid"])
    report: list[str] = []
    if keep_jobs:
        (home / KEEP_JOBS_FILE).touch()
    else:
        (home / KEEP_JOBS_FILE).unlink(missing_ok=True)
        try:
            report = _end_jobs(current["url"], savepoint_dir, JOB_END_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:  # the job manager did not answer: its drivers are killed below
            report = [f"The job manager did not end its jobs ({exc}); their drivers are killed."]
    os.kill(pid, signal.SIGTERM)
    try:
        wait_until(lambda: not process_alive(pid), timeout, f"the job manager (pid {pid}) to stop")
    except TimeoutError:
        kill_group(pid)
    (home / INFO_FILE).unlink(missing_ok=True)
    kept = kept_jobs(home)
    if keep_jobs:
        report += [f"Kept job {j['jid']} ({j['name']}, driver pid {j['pid']}) running; 'kindling cluster start' supervises it again." for j in kept]
    else:
        store = JobStore(home) if kept else None
        for job in kept:  # a driver the job manager could not end (it was killed, or timed out): end it now
            kill_group(job["pid"])
            record = store.get(job["jid"]) if store else None
            if record is not None and not record.terminal:  # cancelled, so that no later job manager restarts it
                record.set_state("CANCELED")
                store.save(record)
            report.append(f"Killed the driver (pid {job['pid']}) of job {job['jid']}, left running by the job manager; the job is CANCELED.")
    return report


def serve(home: Path, address: str, port: int) -> None:
    """Run the job manager in this process until SIGTERM or SIGINT."""
    import uvicorn

    from kindling.server.rest import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    manager = JobManager(home, address, port)
    manager.recover()
    app = create_app(manager)
    server = uvicorn.Server(uvicorn.Config(app, host=address, port=port, log_level="warning", access_log=False))
    write_json(home / INFO_FILE, {"pid": os.getpid(), "url": _url(address, port), "address": address, "port": port, "home": str(home)})
    # uvicorn re-raises SIGTERM/SIGINT through the handlers it found once it has shut down:
    # let those be no-ops so that the drivers are stopped below.
    signal.signal(signal.SIGTERM, lambda *_: None)
    signal.signal(signal.SIGINT, lambda *_: None)
    try:
        server.run()
    finally:
        if (home / KEEP_JOBS_FILE).exists():
            (home / KEEP_JOBS_FILE).unlink(missing_ok=True)
            manager.detach()
        else:
            manager.shutdown()
        info = read_json(home / INFO_FILE)
        if info and info.get("pid") == os.getpid():
            (home / INFO_FILE).unlink(missing_ok=True)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="kindling's job manager (REST API and dashboard)")
    parser.add_argument("--home", default=DEFAULT_HOME)
    parser.add_argument("--port", type=int, default=cfg.REST_PORT.default)
    parser.add_argument("--address", default=cfg.REST_ADDRESS.default)
    args = parser.parse_args(argv)
    home = Path(args.home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    serve(home, args.address, args.port)
    return 0

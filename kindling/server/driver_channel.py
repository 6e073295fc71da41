"""The job manager's line to a driver process: a per-job directory named by ``KINDLING_JOB_DIR``.

The job manager writes ``overrides.json`` (configuration it imposes: checkpoint location,
savepoint to resume from, parallelism, ``-D`` options) before it starts the driver, and drops
requests (take a savepoint, stop with a savepoint) as files into ``requests/``. The driver
answers each in ``responses/`` and publishes its state, metrics and exceptions in
``status.json`` about twice a second. Files survive either side crashing, and need no port.

The driver follows the program as a job listener (``DriverListener``, registered for the whole
process before the program runs): the runtime does not know the job manager exists.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Optional

from pyspark.sql import DataFrame

from kindling.config import Configuration
from kindling.runtime import metrics, savepoints
from kindling.runtime.job import TERMINAL_STATES, JobClient
from kindling.runtime.job_listeners import JobListener
from kindling.runtime.json_files import read_json, write_json

log = logging.getLogger("kindling.control")

JOB_DIR_ENV = "KINDLING_JOB_DIR"
JOB_ID_ENV = "KINDLING_JOB_ID"
OVERRIDES_FILE = "overrides.json"
STATUS_FILE = "status.json"
PUBLISH_INTERVAL_S = 0.5
MAX_POINTS = 120


def job_dir() -> Optional[Path]:
    """The control directory of this driver, when the job manager started it."""
    value = os.environ.get(JOB_DIR_ENV)
    return Path(value) if value else None


class DriverListener(JobListener):
    """The job manager's view of the program this driver runs: its settings imposed on every environment, a control
    channel per job the program starts, and the jobs themselves (the driver reports how the last one ended)."""

    stable_job_names = True  # a restarted driver must find its unnamed jobs' checkpoints

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.jobs: list[JobClient] = []
        self.channels: list["DriverChannel"] = []

    def configure(self, config: Configuration) -> None:
        values = read_json(self.directory / OVERRIDES_FILE) or {}
        if values:
            config.update(values)

    def on_job_submitted(self, job_client: Optional[JobClient], throwable: Optional[BaseException]) -> None:
        if job_client is None:
            return
        self.jobs.append(job_client)
        channel = DriverChannel(self.directory, job_client, job_client.checkpoint_root, job_client.sink_frames)
        self.channels.append(channel)
        channel.start()


def spark_executors() -> Optional[dict[str, dict[str, Any]]]:
    """The executors of this process's Spark application by ``host:port`` (the driver left out), or None if unknown.

    In local mode there are none: the driver runs the tasks itself.
    """
    from pyspark.sql import SparkSession

    session = SparkSession._instantiatedSession
    if session is None:
        return None
    try:
        # Spark's own status store (what its UI shows): every executor with its id, host:port and cores.
        listed = session.sparkContext._jsc.sc().statusStore().executorList(True)  # type: ignore[union-attr]
        executors = {}
        for index in range(listed.size()):
            summary = listed.apply(index)
            if summary.id() == "driver":
                continue
            host, _, port = str(summary.hostPort()).rpartition(":")
            executors[str(summary.hostPort())] = {
                "id": str(summary.id()), "host": host, "port": int(port or 0), "cores": int(summary.totalCores()),
                "runningTasks": int(summary.activeTasks()), "memory": int(summary.maxMemory()),
            }
        return executors
    except Exception:  # the JVM is stopping or gone: nothing to report this round
        return None


class DriverChannel(threading.Thread):
    """Publishes a job's status and serves savepoint requests from the job manager."""

    def __init__(self, directory: Path, client: JobClient, checkpoint_root: Path, sinks: Mapping[str, DataFrame]) -> None:
        super().__init__(name="kindling-control", daemon=True)
        self.directory = directory
        self.client = client
        self.checkpoint_root = checkpoint_root
        self.sinks = dict(sinks)
        self.job_id = os.environ.get(JOB_ID_ENV) or client.job_id
        self._points: dict[str, dict[int, dict]] = {uid: {} for uid in sinks}
        self._executors: dict[str, dict[str, Any]] = {}  # Spark executors by host:port, as last seen
        self._lost: list[dict[str, Any]] = []  # executors lost while the job ran: Flink's lost task managers

    # --- requests ---------------------------------------------------------------------------------
    def savepoint(self, target: Optional[str], stop: bool) -> str:
        """Take a savepoint between two micro-batches; with ``stop`` the job then ends FINISHED."""
        return savepoints.trigger_savepoint(self.client, self.checkpoint_root, self.sinks, target, stop, self.job_id)

    def _serve_requests(self) -> None:
        requests = self.directory / "requests"
        if not requests.is_dir():
            return
        for path in sorted(requests.glob("*.json")):
            request = read_json(path)
            try:
                path.unlink()
            except OSError:
                continue
            if not request:
                continue
            if request.get("kind") == "contents":
                write_json(self.directory / "responses" / f"{request['id']}.json", self.sink_contents(int(request.get("limit") or 100)))
                continue
            response: dict[str, Any]
            before = self.client.queries
            try:
                if request.get("drain"):
                    raise ValueError("stop with drain (a final watermark before stopping) is not supported by kindling: stop without 'drain'")
                location = self.savepoint(request.get("targetDirectory"), stop=request.get("kind") == "stop")
                response = {"status": "COMPLETED", "location": location}
            except Exception as exc:  # reported to the job manager, which reports it to the user
                log.warning("savepoint request %s failed: %s", request.get("id"), exc)
                response = {"status": "FAILED", "failure": f"{type(exc).__name__}: {exc}"}
            self._collect_points(before)  # the batches of the queries the savepoint stopped
            write_json(self.directory / "responses" / f"{request['id']}.json", response)
            self.publish()

    def sink_contents(self, limit: int) -> dict[str, Any]:
        """What each sink that can be read back holds now (``Connector.sink_contents``), up to ``limit`` rows each."""
        sinks = []
        for plan in self.client.plans:
            if plan.contents is None:
                continue
            try:
                contents = plan.contents(limit)
            except Exception as exc:  # shown on the dashboard; the job goes on
                sinks.append({"uid": plan.uid, "name": plan.name, "error": f"{type(exc).__name__}: {exc}"})
                continue
            if contents is not None:
                sinks.append({"uid": plan.uid, "name": plan.name, **contents.to_json()})
        return {"status": "COMPLETED", "timestamp": int(time.time() * 1000), "sinks": sinks}

    # --- status -------------------------------------------------------------------------------
    def _collect_points(self, queries: Optional[Mapping[str, Any]] = None) -> None:
        for uid, query in (queries or self.client.queries).items():
            seen = self._points.setdefault(uid, {})
            try:
                recent = query.recentProgress
            except Exception:  # a query being replaced; the next round reads it
                continue
            for point in metrics.query_points(recent):
                earlier = seen.get(point["batchId"])
                if point["watermark"] is None and earlier is not None:
                    point["watermark"] = earlier["watermark"]  # a restarted query's idle trigger leaves it out
                seen[point["batchId"]] = point
            for batch_id in sorted(seen)[:-MAX_POINTS]:
                del seen[batch_id]

    # --- executors: Flink's task managers ---------------------------------------------------------
    def _follow_executors(self, state: str) -> None:
        """Read the application's executors; one that is gone while the job runs is a lost task manager.

        Spark runs a lost executor's tasks again on the others (a failover, in Flink's words): it shows in the
        exceptions history and counts as a restart, as Flink counts the restart after a task manager loss.
        """
        current = spark_executors()
        if current is None:
            return
        now = int(time.time() * 1000)
        if state in ("RUNNING", "RESTARTING"):
            for address, executor in self._executors.items():
                if address not in current:
                    self._lost.append({
                        "timestamp": now, "exceptionName": "ExecutorLostFailure", "taskName": f"executor {address}",
                        "message": f"TaskManager (Spark executor {executor['id']}) {address} is no longer reachable; "
                                   "Spark runs its tasks again on the remaining executors from the last committed micro-batch",
                    })
                    log.warning("job %s lost executor %s", self.client.job_name, address)
        self._executors = current

    def status(self) -> dict[str, Any]:
        state = self.client.get_job_status()
        self._follow_executors(state)
        self._collect_points()
        names = {plan.uid: plan.name for plan in self.client.plans}
        queries = {}
        for uid, points in self._points.items():
            ordered = metrics.with_output_rates([points[b] for b in sorted(points)])
            queries[uid] = {
                "name": names.get(uid, uid),
                "checkpoint": str(self.checkpoint_root / uid),
                "points": ordered,
                **savepoints.checkpoint_position(self.checkpoint_root / uid),
            }
        return {
            "pid": os.getpid(),
            "state": state,
            "jobName": self.client.job_name,
            "startTime": int(self.client.start_time.timestamp() * 1000),
            "updated": int(time.time() * 1000),
            "configuration": self.client.conf.to_dict(),
            "restarts": self.client.restarts + len(self._lost),
            "queries": queries,
            "exceptions": [
                {"timestamp": int(e.timestamp.timestamp() * 1000), "taskName": e.query, "message": e.message}
                for e in self.client.exceptions
            ] + self._lost,
            "executors": list(self._executors.values()),
            "userMetrics": metrics.read_user_metrics(self.directory / metrics.USER_METRICS_DIR),
        }

    def publish(self) -> None:
        write_json(self.directory / STATUS_FILE, self.status())

    def run(self) -> None:
        from pyspark.sql import SparkSession

        # Queries restarted from this thread must see the session where kindling's sources are registered.
        session = SparkSession._instantiatedSession
        if session is not None:
            SparkSession._get_j_spark_session_class(session._jvm).setActiveSession(session._jsparkSession)
        while True:
            try:
                self._serve_requests()
                self.publish()
            except Exception as exc:  # the channel must outlive a bad round
                log.warning("control channel: %s", exc)
            if self.client.get_job_status() in TERMINAL_STATES:
                self.publish()
                return
            time.sleep(PUBLISH_INTERVAL_S)  # the publishing period

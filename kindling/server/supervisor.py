"""Supervises one job's driver process: starts it, follows its state, restarts it per the restart strategy."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Optional

from kindling.config import Configuration
from kindling.local.process import alive
from kindling.runtime.json_files import read_json, write_json
from kindling.runtime.metrics import USER_METRICS_DIR
from kindling.runtime.restart import RestartStrategy
from kindling.server import driver_channel
from kindling.server.driver import RESULT_FILE, SUBMISSION_FILE
from kindling.server.store import JobRecord, JobStore, now_ms

log = logging.getLogger("kindling.jobmanager")

POLL_S = 0.2


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not count)."""
    return alive(pid)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal a driver's whole process group (its Python process and its JVM)."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def describe_exit(code: Optional[int]) -> str:
    if code is None:
        return "the driver process disappeared"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the driver process was killed by {name}"
    return f"the driver process exited with status {code} without reporting a result"


class JobSupervisor(threading.Thread):
    """Runs one job's driver in its own process group and keeps its record up to date."""

    def __init__(self, store: JobStore, record: JobRecord, adopt: bool = False) -> None:
        super().__init__(name=f"supervisor-{record.jid[:8]}", daemon=True)
        self.store = store
        self.record = record
        self.directory = Path(record.directory)
        self._adopt = adopt
        self._process: Optional[subprocess.Popen] = None
        self._cancel = threading.Event()
        self._shutdown = threading.Event()
        self._restart: Optional[RestartStrategy] = None
        self.status: dict[str, Any] = read_json(self.directory / driver_channel.STATUS_FILE) or {}

    # --- driver process -------------------------------------------------------------------------
    def _spawn(self) -> None:
        record = self.record
        write_json(self.directory / SUBMISSION_FILE, {"kind": record.kind, "file": record.file, "args": record.args})
        overrides = dict(record.configuration)
        overrides["state.checkpoints.dir"] = record.checkpoint_dir
        if record.parallelism:
            overrides["parallelism.default"] = str(record.parallelism)
        if record.savepoint_path:
            overrides["execution.savepoint.path"] = record.savepoint_path
            if record.allow_non_restored_state:
                overrides["execution.savepoint.ignore-unclaimed-state"] = "true"
        write_json(self.directory / driver_channel.OVERRIDES_FILE, overrides)
        (self.directory / RESULT_FILE).unlink(missing_ok=True)
        shutil.rmtree(self.directory / USER_METRICS_DIR, ignore_errors=True)  # user metrics restart with the driver, as in Flink
        environment = {**os.environ, driver_channel.JOB_DIR_ENV: str(self.directory), driver_channel.JOB_ID_ENV: record.jid, "PYTHONUNBUFFERED": "1"}
        log_file = (self.directory / "driver.log").open("ab")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "kindling.server.driver"],
            cwd=record.cwd,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # SIGKILL of the group takes the Python driver and its JVM down together
        )
        log_file.close()
        record.driver_pid = self._process.pid
        record.attempt += 1
        self._save()

    def _exit_code(self) -> tuple[bool, Optional[int]]:
        """(exited, exit code); the code is unknown for a driver adopted from an earlier job manager."""
        if self._process is not None:
            code = self._process.poll()
            return code is not None, code
        pid = self.record.driver_pid
        return (pid is None or not process_alive(pid)), None

    def _save(self) -> None:
        self.store.save(self.record)

    def _set_state(self, state: str) -> None:
        if self.record.state != state:
            log.info("job %s: %s -> %s", self.record.jid, self.record.state, state)
            self.record.set_state(state)
            self._save()

    # --- following the driver -----------------------------------------------------------------
    def _read_status(self) -> None:
        status = read_json(self.directory / driver_channel.STATUS_FILE)
        if not status or status.get("pid") != self.record.driver_pid:
            return
        self.status = status
        if status.get("jobName") and status["jobName"] != self.record.name:
            self.record.name = status["jobName"]
            self._save()
        for exception in status.get("exceptions") or []:
            self._add_exception(exception["timestamp"], exception.get("exceptionName", "QueryFailure"), exception["message"],
                                exception.get("taskName", ""))
        driver_state = status.get("state")
        if driver_state in ("RUNNING", "RESTARTING") and self.record.state not in ("CANCELLING",):
            self._set_state(driver_state)

    def _add_exception(self, timestamp: int, name: str, message: str, task: str, stacktrace: str = "") -> None:
        key = (timestamp, message)
        if any((e["timestamp"], e["message"]) == key for e in self.record.exceptions):
            return
        self.record.exceptions.append(
            {"timestamp": timestamp, "exceptionName": name, "message": message, "taskName": task, "stacktrace": stacktrace or message}
        )
        self._save()

    def _configuration(self) -> Configuration:
        values = self.status.get("configuration") or self.record.configuration
        try:
            return Configuration(values)
        except ValueError:
            return Configuration(self.record.configuration)

    def _on_exit(self, code: Optional[int]) -> bool:
        """Handle a driver that ended; return True when the job goes on with a new driver."""
        self._read_status()
        result = read_json(self.directory / RESULT_FILE)
        if result and result.get("pid") != self.record.driver_pid:
            result = None
        if self._cancel.is_set():
            self._set_state("CANCELED")
            return False
        if self._shutdown.is_set():
            return False
        if result is not None:
            if result["state"] == "FAILED":
                self._add_exception(now_ms(), result.get("exceptionName", "Exception"), result.get("message", ""), "driver",
                                    result.get("stacktrace", ""))
            self._set_state(result["state"])
            return False
        pid = self.record.driver_pid
        if pid:
            kill_group(pid)  # what is left of the driver (its JVM) goes too
        message = f"{describe_exit(code)} (pid {pid})"
        self._add_exception(now_ms(), "DriverFailure", message, "driver")
        if self._restart is None:
            self._restart = RestartStrategy(self._configuration())
        delay = self._restart.next_delay()
        if delay is None:
            self._set_state("FAILED")
            return False
        # The dead driver's own restarts (queries restarted in it, executors lost under it) stay counted.
        self.record.restarts += 1 + int(self.status.get("restarts") or 0)
        self.status = {**self.status, "restarts": 0}
        self._set_state("RESTARTING")
        log.warning("job %s: %s; restarting from its last checkpoint in %s", self.record.jid, message, delay)
        if self._cancel.wait(delay.total_seconds()):  # the restart delay; cancel cuts it short
            self._set_state("CANCELED")
            return False
        return True

    def run(self) -> None:
        try:
            if not (self._adopt and self.record.driver_pid and process_alive(self.record.driver_pid)):
                self._spawn()
            while not self.record.terminal:
                self._read_status()
                exited, code = self._exit_code()
                if exited:
                    if not self._on_exit(code):
                        return
                    self._spawn()
                    continue
                time.sleep(POLL_S)  # the supervision period
        except Exception as exc:  # a supervisor must leave the job in a state the user can see
            log.exception("job %s: supervisor failed", self.record.jid)
            self._add_exception(now_ms(), type(exc).__name__, str(exc), "jobmanager")
            self._set_state("FAILED")

    # --- commands ------------------------------------------------------------------------------
    def cancel(self) -> None:
        """Cancel the job now (Flink's cancel): its driver is killed; checkpoints stay."""
        if self.record.terminal:
            return
        self._cancel.set()
        self._set_state("CANCELLING")
        if self.record.driver_pid:
            kill_group(self.record.driver_pid)
        if not self.is_alive():
            self._set_state("CANCELED")

    def shutdown(self) -> None:
        """Stop the driver with the job manager; the job stays non-terminal and resumes when it starts again."""
        self._shutdown.set()
        if self.record.driver_pid and not self.record.terminal:
            kill_group(self.record.driver_pid)

    def detach(self) -> None:
        """Stop following the driver and leave it running: the next job manager in this home adopts it."""
        self._shutdown.set()

    def request(self, request_id: str, kind: str, target: Optional[str], drain: bool) -> None:
        """Ask the driver for a savepoint (``kind`` 'savepoint') or a stop with savepoint (``kind`` 'stop')."""
        write_json(self.directory / "requests" / f"{request_id}.json",
                           {"id": request_id, "kind": kind, "targetDirectory": target, "drain": drain})

    def request_contents(self, request_id: str, limit: int) -> None:
        """Ask the driver what its sinks hold now, up to ``limit`` rows each."""
        write_json(self.directory / "requests" / f"{request_id}.json", {"id": request_id, "kind": "contents", "limit": limit})

    def response(self, request_id: str, consume: bool = False) -> Optional[dict]:
        """The driver's answer to a request, None until it has answered; ``consume`` removes the answer once read."""
        path = self.directory / "responses" / f"{request_id}.json"
        answer = read_json(path)
        if answer is not None and consume:
            path.unlink(missing_ok=True)
        return answer

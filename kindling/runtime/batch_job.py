"""A batch job (Flink's batch execution mode): one run over bounded input, with a JobClient's surface.

A streaming job is a set of streaming queries the JobClient supervises; a batch job is a function
that runs Spark batch actions to the end. It runs on a thread of its own, under a Spark job group
named for the job, so that ``cancel()`` stops its Spark jobs, and ends FINISHED, FAILED (with the
cause, as a streaming job reports it) or CANCELED. There is nothing to restart or resume: a failed
batch job is run again from the start, as Flink's batch jobs are.
"""

from __future__ import annotations

import threading
import uuid
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from pyspark.sql import SparkSession

from kindling.runtime import interrupts
from kindling.runtime.job import TERMINAL_STATES, JobException, JobFailedError, describe_failure, ended, started

_CANCEL_WAIT_S = 30.0


class BatchJob:
    """Runs ``run(job)`` once on a thread; ``job.result`` is what it returned.

    ``run`` may hand the job a way to stop what it is waiting for besides Spark jobs (a streaming
    phase, say) through :meth:`on_cancel`.
    """

    def __init__(self, job_name: str, run: Callable[["BatchJob"], Any], spark: SparkSession) -> None:
        self.job_name = job_name
        self.job_id = uuid.uuid4().hex
        self.start_time = datetime.now(timezone.utc)
        self.end_time: Optional[datetime] = None
        self.exceptions: list[JobException] = []
        self.result: Any = None
        self._spark = spark
        self._status = "RUNNING"
        self._failure: Optional[str] = None
        self._cancel_hooks: list[Callable[[], None]] = []
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._main, args=(run,), name=f"kindling-batch-{job_name}", daemon=True)
        started(self)
        self._thread.start()

    def _main(self, run: Callable[["BatchJob"], Any]) -> None:
        context = self._spark.sparkContext
        # The JVM looks Python Data Sources up in the thread's active session, which a new thread lacks.
        self._spark._jvm.SparkSession.setActiveSession(self._spark._jsparkSession)  # type: ignore[union-attr]
        context.setJobGroup(self.job_id, f"kindling batch job {self.job_name}", interruptOnCancel=True)
        try:
            self.result = run(self)
            status = "FINISHED"
        except BaseException as exc:  # the job's end, reported through its status
            status = "FAILED"
            if self._status != "CANCELLING":
                self._failure = describe_failure(exc)
                self.exceptions.append(JobException(datetime.now(timezone.utc), self.job_name, self._failure))
        with self._lock:
            self._status = "CANCELED" if self._status == "CANCELLING" else status
            self.end_time = datetime.now(timezone.utc)
        ended(self)
        self._done.set()

    def on_cancel(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` when the job is canceled (besides canceling its Spark jobs)."""
        self._cancel_hooks.append(hook)

    # --- Flink's JobClient surface ---------------------------------------------------------------
    def get_job_id(self) -> str:
        return self.job_id

    def get_job_status(self) -> str:
        return self._status

    @property
    def queries(self) -> dict[str, Any]:
        return {}

    @property
    def restarts(self) -> int:
        return 0

    def metrics(self) -> dict[str, Any]:
        return {}

    def cancel(self) -> None:
        """Stop the job's Spark jobs; the job ends CANCELED."""
        with self._lock:
            if self._status in TERMINAL_STATES:
                return
            self._status = "CANCELLING"
        for hook in self._cancel_hooks:
            hook()
        self._spark.sparkContext.cancelJobGroup(self.job_id)
        # Spark jobs stop at once; planning (a source listing its splits) ends on its own, and the job with it.
        self._done.wait(_CANCEL_WAIT_S)

    def wait(self, timeout: Optional[float] = None, on_progress: Optional[Callable[[Any], None]] = None) -> str:
        """Block until the job ends (or ``timeout`` seconds pass); return its state; raise if it FAILED."""
        with interrupts.deferred():
            while not self._done.wait(0.25 if timeout is None else min(0.25, timeout)):
                interrupts.raise_if_requested()
                if on_progress is not None:
                    on_progress(self)
                if timeout is not None:
                    timeout -= 0.25
                    if timeout <= 0:
                        return self._status
        if self._status == "FAILED":
            raise JobFailedError(f"job '{self.job_name}' failed: {self._failure}")
        return self._status

    get_job_execution_result = wait

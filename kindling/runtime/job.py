"""A running job: its Spark streaming queries, supervised with Flink's job states and restart strategies."""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

from pyspark import SparkContext
from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery

from kindling.config import Configuration
from kindling.runtime import event_time_state, interrupts, plan_nodes, progress_events, worker_monitors
from kindling.runtime.progress import QueryMetrics, bounded_input_done
from kindling.runtime.recovery import NO_DATA_BATCHES_CONF, plan_owed_watermark_batch
from kindling.runtime.restart import RestartStrategy
from kindling.runtime.watermark_batches import output_waits_on_watermark

log = logging.getLogger("kindling.job")

TERMINAL_STATES = ("FINISHED", "FAILED", "CANCELED")


class JobFailedError(RuntimeError):
    """A job ended FAILED; the message is the root cause, without the JVM stack trace."""


# Every job this process started (streaming and batch) that has not ended, oldest first. A program that submits a
# job and returns without waiting leaves it running on a Flink cluster; kindling's program runner waits for these.
# A job leaves when it ends: an ended job's queries hold their Spark plans and a cloned session each, which a
# long-lived process (a test session, the job manager's driver, an interactive SQL client) would keep forever.
_RUNNING: list[Any] = []
_RUNNING_LOCK = threading.Lock()


def started(job: Any) -> None:
    """Record ``job`` as running in this process (see ``running_jobs``)."""
    with _RUNNING_LOCK:
        _RUNNING.append(job)


def ended(job: Any) -> None:
    """Forget ``job``: it ended."""
    with _RUNNING_LOCK:
        _RUNNING[:] = [other for other in _RUNNING if other is not job]


def running_jobs() -> list[Any]:
    """The jobs this process started that have not ended, oldest first."""
    with _RUNNING_LOCK:
        return list(_RUNNING)


@dataclass
class QueryPlan:
    """How to (re)start one sink's streaming query from its checkpoint."""

    uid: str
    name: str
    checkpoint: str
    start: Callable[[], StreamingQuery]
    bounded: bool
    event_time: bool = True
    # Called once when a bounded query's input is done and the query stopped (a sink's end-of-input step).
    on_finished: Optional[Callable[[], None]] = None
    # The query's input (what start() writes): its plan tells the sources whether it keeps event-time state.
    frame: Optional[DataFrame] = None
    # What the sink holds now, up to a number of rows (a kindling.connectors.base.SinkContents, or None when the
    # sink cannot be read back): for the dashboard.
    contents: Optional[Callable[[int], Any]] = None


@dataclass
class JobException:
    timestamp: datetime
    query: str
    message: str


def describe_failure(error: BaseException | str | None) -> str:
    """The part of a Spark failure a user can act on: the Python error or the first line of the JVM's."""
    text = str(error or "unknown failure")
    python_errors = re.findall(r"^(?:[A-Za-z_][\w.]*(?:Error|Exception)): .*$", text, flags=re.MULTILINE)
    user_errors = [e for e in python_errors if not e.startswith(("org.apache", "java.", "py4j", "pyspark.errors"))]
    own = [e for e in user_errors if e.startswith("kindling.datastream.errors.UserFunctionError: ")]
    if own:  # a user function failed: its one-line message says which, where and on what
        return own[-1].split(": ", 1)[1].strip()
    if user_errors:
        return user_errors[-1].strip()
    first = text.strip().splitlines()[0] if text.strip() else text
    return first[:2000]


@dataclass
class JobClient:
    """Handle on a submitted job (PyFlink's JobClient): status, metrics, cancel, wait."""

    job_name: str
    plans: list[QueryPlan]
    conf: Configuration
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    start_time: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    end_time: Optional[datetime] = None
    exceptions: list[JobException] = field(default_factory=list)
    # Run once when the job ends FINISHED or CANCELED (its sources' clean-up, see Connector.on_job_end).
    on_end: list[Callable[[], None]] = field(default_factory=list)
    # Where the job's checkpoints live, and each sink's frame by uid (what a savepoint fingerprints).
    checkpoint_root: Optional[Path] = None
    sink_frames: dict[str, DataFrame] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._status = "CREATED"
        self._lock = threading.RLock()
        self._queries: dict[str, StreamingQuery] = {}
        self._finished: set[str] = set()
        self._restart = RestartStrategy(self.conf)
        self._failure: Optional[str] = None
        plans = plan_nodes.read_plans([plan.frame for plan in self.plans])  # each query's plan, read once
        # Per query: whether it is bounded and its output never waits on the watermark (kindling.runtime.watermark_batches).
        self._quiet = {plan.uid: plan.bounded and nodes is not None and not output_waits_on_watermark(nodes)
                       for plan, nodes in zip(self.plans, plans)}
        event_time_state.declare(plans)
        for plan in self.plans:
            self._queries[plan.uid] = self._start(plan)
        self._status = "RUNNING"
        started(self)

    def _start(self, plan: QueryPlan) -> StreamingQuery:
        """Start (or restart) a query from its checkpoint, first planning the no-data batch that fires
        what the restored watermark allows (Spark would otherwise wait for new input). A bounded query whose
        output never waits on the watermark runs without no-data batches (kindling.runtime.watermark_batches)."""
        if self._quiet[plan.uid]:
            query = with_session_conf(plan.start, plan.frame.sparkSession, {NO_DATA_BATCHES_CONF: "false"})()
        else:
            if _no_data_batches_enabled():
                plan_owed_watermark_batch(plan.checkpoint)
            query = plan.start()
        progress_events.listen(query)
        return query

    # --- Flink's JobClient surface ---------------------------------------------------------------
    def get_job_id(self) -> str:
        return self.job_id

    def get_job_status(self) -> str:
        self.poll()
        return self._status

    @property
    def queries(self) -> dict[str, StreamingQuery]:
        return dict(self._queries)

    def cancel(self) -> None:
        """Stop every query now; the job ends CANCELED. Checkpoints stay, so running it again resumes."""
        with self._lock:
            if self._status in TERMINAL_STATES:
                return
            self._stop_all()
            self._end("CANCELED")

    def wait(self, timeout: Optional[float] = None, on_progress: Optional[Callable[["JobClient"], None]] = None) -> str:
        """Block until the job ends (or ``timeout`` seconds pass); return its state; raise if it FAILED."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with interrupts.deferred():  # Ctrl-C lands between two calls into the JVM
            while True:
                interrupts.raise_if_requested()
                mark = progress_events.current()
                status = self.poll()
                if on_progress is not None:
                    on_progress(self)
                if status in TERMINAL_STATES:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    return status
                # a query's progress report or end wakes this at once; the timer is the fallback
                self._await_any(0.05 if any(plan.bounded for plan in self.plans) else 0.25, mark)
        if self._status == "FAILED":
            raise JobFailedError(f"job '{self.job_name}' failed: {self._failure}")
        return self._status

    get_job_execution_result = wait

    @property
    def restarts(self) -> int:
        """Restarts of failed queries so far (Flink's numRestarts)."""
        return self._restart.restarts

    def stop_at_batch_boundary(self, then: Callable[[], Any], finish: bool) -> Any:
        """Stop every query between two micro-batches and call ``then`` (say, to copy the checkpoints
        into a savepoint); then end the job FINISHED (stop-with-savepoint) or start the queries again."""
        from kindling.runtime.savepoints import stop_between_batches

        with self._lock:
            if self._status in TERMINAL_STATES:
                raise RuntimeError(f"job '{self.job_name}' is {self._status}")
            running = [plan for plan in self.plans if plan.uid not in self._finished and self._queries[plan.uid].isActive]
            for plan in running:
                stop_between_batches(self._queries[plan.uid])
            try:
                result = then()
            except BaseException:
                finish = False
                raise
            finally:
                if finish:
                    self._end("FINISHED")
                else:
                    for plan in running:
                        try:
                            self._queries[plan.uid] = self._start(plan)
                        except Exception as exc:  # the job cannot go on; say why
                            self._failure = describe_failure(exc)
                            self.exceptions.append(JobException(datetime.now(timezone.utc), plan.name, self._failure))
                            self._stop_all()
                            self._end("FAILED")
                            raise
            return result

    # --- supervision ---------------------------------------------------------------------------
    def poll(self) -> str:
        """Look at every query once: finish bounded ones whose input ended, restart or fail crashed ones."""
        with self._lock:
            if self._status in TERMINAL_STATES:
                return self._status
            for plan in self.plans:
                if plan.uid in self._finished:
                    continue
                query = self._queries[plan.uid]
                if query.isActive:
                    if plan.bounded and bounded_input_done(query.lastProgress, plan.event_time and not self._quiet[plan.uid]):
                        query.stop()
                        if plan.on_finished is not None:
                            try:
                                plan.on_finished()
                            except Exception as exc:  # the sink could not finish: the job fails, naming why
                                self._failure = describe_failure(exc)
                                self.exceptions.append(JobException(datetime.now(timezone.utc), plan.name, self._failure))
                                self._stop_all()
                                self._end("FAILED")
                                return self._status
                        self._finished.add(plan.uid)
                    continue
                error = query.exception()
                if error is None:
                    self._finished.add(plan.uid)
                    continue
                self._on_failure(plan, error)
                if self._status in TERMINAL_STATES:
                    return self._status
            if len(self._finished) == len(self.plans):
                self._end("FINISHED")
            return self._status

    def _on_failure(self, plan: QueryPlan, error: BaseException) -> None:
        message = describe_failure(error)
        self.exceptions.append(JobException(datetime.now(timezone.utc), plan.name, message))
        if self._restart.restarts_worker_start(str(error)):
            log.warning("job %s: %s: Spark's Python process did not connect back within its 10 s (a loaded machine); "
                        "restarting the query from its checkpoint", self.job_name, plan.name)
            self._queries[plan.uid] = self._start(plan)
            return
        delay = self._restart.next_delay()
        if delay is None:
            self._failure = message
            log.error("job %s failed in %s: %s", self.job_name, plan.name, message)
            self._stop_all()
            self._end("FAILED")
            return
        log.warning("job %s: %s failed (%s); restarting from its checkpoint in %s", self.job_name, plan.name, message, delay)
        self._status = "RESTARTING"
        time.sleep(delay.total_seconds())  # the configured restart delay, not a synchronisation
        self._queries[plan.uid] = self._start(plan)
        self._status = "RUNNING"

    def _await_any(self, seconds: float, mark: int) -> None:
        """Wait until a query reports progress or ends after ``mark`` (``progress_events.current()``), at most ``seconds``."""
        if any(uid not in self._finished and q.isActive for uid, q in self._queries.items()):
            progress_events.wait_after(mark, seconds)

    def _stop_all(self) -> None:
        for query in self._queries.values():
            try:
                if query.isActive:
                    query.stop()
            except Exception as exc:  # stopping must not hide the state we are moving to
                log.warning("stopping query %s: %s", query.name, exc)

    def _end(self, status: str) -> None:
        self._status = status
        self.end_time = datetime.now(timezone.utc)
        ended(self)
        if (context := SparkContext._active_spark_context) is not None:
            worker_monitors.after_job(context._jvm)
        if status in ("FINISHED", "CANCELED"):
            steps, self.on_end = self.on_end, []
            for step in steps:
                try:
                    step()
                except Exception as exc:  # the job's result stands; the clean-up is best effort
                    log.warning("job %s: clean-up after the job ended failed: %s", self.job_name, exc)

    # --- metrics -------------------------------------------------------------------------------
    def metrics(self) -> dict[str, QueryMetrics]:
        """The last progress of each query, in Flink's terms."""
        result = {}
        for uid, query in self._queries.items():
            progress = query.lastProgress
            if progress:
                result[uid] = QueryMetrics.from_progress(progress)
        return result


def _no_data_batches_enabled() -> bool:
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    return session is None or str(session.conf.get(NO_DATA_BATCHES_CONF, "true")).lower() != "false"


Started = TypeVar("Started")


def separate_exchanges(start: Callable[[], Started], spark: Any) -> Callable[[], Started]:
    """Wrap a streaming query's start so that its plan never reuses a shuffle.

    A plan can hold one subplan twice -- a union of a keyed operator's main and side outputs, a SQL
    join of two aggregations over one view (Nexmark q5). Spark would reuse the shuffle below the
    second copy, and its watermark propagation does not look through a reused shuffle, so that copy
    gets no watermark: its windows never fire, its timers decide differently from the first's.
    """
    return with_session_conf(start, spark, {"spark.sql.exchange.reuse": "false"})


def with_session_conf(start: Callable[[], Started], spark: Any, settings: dict[str, str]) -> Callable[[], Started]:
    """Wrap a streaming query's start so that it starts under ``settings``. A query keeps the session's
    configuration as it was at its start, so the session's own values are restored right after."""

    def started() -> Started:
        previous = {key: spark.conf.get(key, None) for key in settings}
        for key, value in settings.items():
            spark.conf.set(key, value)
        try:
            return start()
        finally:
            for key, value in previous.items():
                if value is None:
                    spark.conf.unset(key)
                else:
                    spark.conf.set(key, value)

    return started

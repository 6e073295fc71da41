"""``kindling demo click-count``: broker, generator and the Click Event Count job, with live results.

Everything runs on this machine and is cleaned up at the end. The run ends with
``windows=<n> correct=<n> wrong=<n>``; the exit status is 0 only if windows were emitted and none was wrong.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, TextIO

from kindling.playground.click_generator import EVENTS_PER_WINDOW, PAGES, ClickEventGenerator


@dataclass
class WindowCheck:
    """Output windows seen so far, judged against the generator's 1000 clicks per page and window."""

    event_time: bool
    windows: int = 0
    correct: int = 0
    wrong: int = 0
    total_count: int = 0
    seen: set = field(default_factory=set)
    duplicates: int = 0

    def judge(self, record: dict) -> bool:
        key = (record.get("windowStart"), record.get("page"))
        self.windows += 1
        count = int(record.get("count") or 0)
        self.total_count += count
        if key in self.seen:
            self.duplicates += 1
            ok = False
        elif self.event_time:
            ok = count == EVENTS_PER_WINDOW and record.get("page") in PAGES
        else:
            ok = count > 0 and record.get("page") in PAGES
        self.seen.add(key)
        if ok:
            self.correct += 1
        else:
            self.wrong += 1
        return ok

    def summary(self) -> str:
        return f"windows={self.windows} correct={self.correct} wrong={self.wrong}"


def _consume_output(bootstrap: str, topic: str, check: WindowCheck, stop: threading.Event, out: TextIO) -> None:
    from kindling.connectors.kafka.tail import TopicTail

    tail = TopicTail({"bootstrap.servers": bootstrap, "group.id": "kindling-demo-output", "isolation.level": "read_committed"}, [topic])
    try:
        while not stop.is_set():
            for message in tail.poll(0.5, max_messages=500):
                if message.error():
                    continue
                record = json.loads(message.value())
                ok = check.judge(record)
                mark = "ok" if ok else "WRONG"
                print(
                    f"  window {record.get('windowStart')} .. {record.get('windowEnd')}  "
                    f"{record.get('page'):<7} count={record.get('count'):<5} {mark}",
                    file=out,
                    flush=True,
                )
    finally:
        tail.close()


def run_click_count_demo(
    duration: float = 60.0,
    rate: float = 1000.0,
    event_time: bool = True,
    backpressure: bool = False,
    out: TextIO = sys.stdout,
    startup_timeout: float = 300.0,
) -> int:
    """Run the playground end to end; return the exit status.

    ``duration`` counts from the job's first completed micro-batch, so a slow Spark start-up (tens of
    seconds on a busy machine) does not eat it; the start-up itself may take up to ``startup_timeout``
    seconds. Spark's own log goes to a file, never to the terminal: a run without windows ends with one
    line saying why (Spark still starting, no input read, the job's failure) and where the log is.
    """
    workdir = Path(tempfile.mkdtemp(prefix="kindling-demo-"))
    log_path = Path(tempfile.gettempdir()) / f"{workdir.name}.log"
    check = WindowCheck(event_time)
    with _stderr_to(log_path):
        reason = _run(duration, rate, event_time, backpressure, out, startup_timeout, workdir, check)
    if reason is None and check.windows == 0:
        reason = "no window was emitted"
    print(check.summary(), file=out, flush=True)
    if reason is not None:
        print(f"reason: {reason} (Spark's log: {log_path})", file=out, flush=True)
    else:
        log_path.unlink(missing_ok=True)
    return 0 if check.windows > 0 and check.wrong == 0 else 1


class _stderr_to:
    """Send this process's standard error (the JVM's and Python workers' logs, which inherit it) to a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        import os

        sys.stderr.flush()
        self._saved = os.dup(2)
        self._file = open(self.path, "ab")  # noqa: SIM115 - kept open while fd 2 points at it
        os.dup2(self._file.fileno(), 2)

    def __exit__(self, *exc: object) -> None:
        import os

        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.close()


def _run(
    duration: float,
    rate: float,
    event_time: bool,
    backpressure: bool,
    out: TextIO,
    startup_timeout: float,
    workdir: Path,
    check: WindowCheck,
) -> Optional[str]:
    """The demo itself; returns why it produced no (or wrong) results, or None."""
    from kindling.local.kafka import LocalKafka

    broker = LocalKafka(data_dir=workdir / "kafka")
    generator: Optional[ClickEventGenerator] = None
    job = None
    stop_consumer = threading.Event()
    consumer_thread: Optional[threading.Thread] = None
    reason: Optional[str] = None
    try:
        print(f"kindling demo: Click Event Count ({'event' if event_time else 'processing'} time, "
              f"{rate:.0f} clicks/s, {duration:.0f} s from the first micro-batch)", file=out, flush=True)
        broker.start()
        broker.create_topic("input", partitions=4)
        broker.create_topic("output", partitions=1)
        print(f"  local Kafka broker on {broker.bootstrap_servers}; topics 'input' (4 partitions), 'output'", file=out, flush=True)
        generator = ClickEventGenerator(broker.bootstrap_servers, "input", rate).start()
        consumer_thread = threading.Thread(
            target=_consume_output, args=(broker.bootstrap_servers, "output", check, stop_consumer, out), daemon=True
        )
        consumer_thread.start()
        job, reason = _start_job(broker.bootstrap_servers, event_time, backpressure, out, startup_timeout, workdir, generator)
        if job is not None and reason is None:
            reason = _watch(job, generator, check, out, duration)
    except KeyboardInterrupt:
        print("  interrupted", file=out, flush=True)
        reason = reason or "interrupted"
    except Exception as exc:  # the demo reports any failure in one line, never as a trace
        from kindling.runtime.job import describe_failure

        reason = f"the demo failed: {describe_failure(exc)}"
        check.wrong += 1
    finally:
        if job is not None:
            _quietly(job.cancel)
        if generator is not None:
            _quietly(generator.stop)
        # Give the output consumer a moment to read windows already committed by the job.
        if consumer_thread is not None:
            stop_consumer.set()
            consumer_thread.join(timeout=10)
        _quietly(_stop_spark)
        _quietly(broker.stop)
        shutil.rmtree(workdir, ignore_errors=True)
    return reason


def _start_job(bootstrap, event_time, backpressure, out, startup_timeout, workdir, generator):
    """Start Spark and the job and wait for its first completed micro-batch, saying so while it waits.

    Returns ``(job, None)`` once a batch completed, or ``(job or None, reason)`` when it did not.
    """
    from kindling.env import StreamEnvironment
    from kindling.playground import click_count

    began = time.monotonic()
    deadline = began + startup_timeout
    print(f"  starting Spark and the job (up to {startup_timeout:.0f} s; slower on a busy machine) ...", file=out, flush=True)
    env = StreamEnvironment(
        {
            "state.checkpoints.dir": str(workdir / "checkpoints"),
            "execution.checkpointing.interval": "1 s",
            "parallelism.default": 2,
            "kindling.log.level": "ERROR",
        }
    )
    click_count.build(env, bootstrap, event_time=event_time, backpressure=backpressure)
    job = env.execute_async(click_count.JOB_NAME)
    print(f"  job {job.get_job_id()} '{job.job_name}' is {job.get_job_status()} (Spark up after {time.monotonic() - began:.0f} s)",
          file=out, flush=True)
    said = time.monotonic()
    while time.monotonic() < deadline:
        status = _wait(job, 1.0)
        if status in ("FAILED", "CANCELED", "FINISHED"):
            return job, _job_ended(job, status)
        if any(q.lastProgress for q in job.queries.values()):
            print(f"  first micro-batch done after {time.monotonic() - began:.0f} s; running for the duration now", file=out, flush=True)
            return job, None
        if generator.error is not None:
            return job, f"the click generator failed: {generator.error}"
        if time.monotonic() - said >= 10:
            said = time.monotonic()
            print(f"  still waiting for the first micro-batch ({said - began:.0f} s) ...", file=out, flush=True)
    return job, f"Spark was still starting the job after {startup_timeout:.0f} s (a busy machine; try --startup-timeout)"


def _wait(job, seconds: float) -> str:
    """The job's state after waiting up to ``seconds`` for it to end (a FAILED job raises in wait)."""
    from kindling.runtime.job import JobFailedError

    try:
        return job.wait(timeout=seconds)
    except JobFailedError:
        return "FAILED"


def _job_ended(job, status: str) -> str:
    if status == "FAILED":
        return f"the job failed: {job.exceptions[-1].message if job.exceptions else 'unknown failure'}"
    return f"the job ended {status} before any window closed"


def _watch(job, generator: ClickEventGenerator, check: WindowCheck, out: TextIO, duration: float) -> Optional[str]:
    """Print progress for ``duration`` seconds; return why the run has no windows, if it has none."""
    progress = _ProgressPrinter(job, generator, check, out)
    deadline = time.monotonic() + duration
    status = job.get_job_status()
    while time.monotonic() < deadline:
        status = _wait(job, min(2.0, max(0.0, deadline - time.monotonic())))
        progress.maybe_print()
        if status in ("FAILED", "CANCELED", "FINISHED"):
            break
        if generator.error is not None:
            return f"the click generator failed: {generator.error}"
    progress.print_line()
    if status in ("FAILED", "CANCELED", "FINISHED"):
        return _job_ended(job, status) if check.windows == 0 or status == "FAILED" else None
    if check.windows == 0:
        records = sum(progress.batches.values())
        if records == 0:
            return f"the job read no input in {duration:.0f} s (the generator sent {generator.sent} clicks)"
        return f"the job read {records} clicks but no window closed in {duration:.0f} s (windows are 15 s of event time: run longer)"
    return None


def _stop_spark() -> None:
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()


def _quietly(step) -> None:
    try:
        step()
    except Exception:  # clean-up after the result is known must not turn into a trace  # noqa: S110
        pass


class _ProgressPrinter:
    """One progress line every few seconds: clicks sent, records in, windows out, watermark."""

    def __init__(self, job, generator: ClickEventGenerator, check: WindowCheck, out: TextIO) -> None:
        self.job, self.generator, self.check, self.out = job, generator, check, out
        self.began = time.monotonic()
        self.last = 0.0
        self.batches: dict[int, int] = {}

    def maybe_print(self) -> None:
        if time.monotonic() - self.last >= 5:
            self.print_line()

    def print_line(self) -> None:
        self.last = time.monotonic()
        watermark, rate = "-", 0.0
        for query in self.job.queries.values():
            for progress in query.recentProgress:
                self.batches[int(progress["batchId"])] = int(progress.get("numInputRows") or 0)
        metrics = self.job.metrics()
        for m in metrics.values():
            watermark = m.watermark_text()
            rate = m.processed_per_second
        print(
            f"  [{self.last - self.began:5.0f} s] clicks sent={self.generator.sent} records in={sum(self.batches.values())} "
            f"({rate:,.0f}/s) batches={len(self.batches)} windows out={self.check.windows} watermark={watermark} "
            f"state={self.job.get_job_status()}",
            file=self.out,
            flush=True,
        )

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
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "kindling-demo-output",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    consumer.subscribe([topic])
    try:
        while not stop.is_set():
            for message in consumer.consume(500, 0.5):
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
        consumer.close()


def run_click_count_demo(
    duration: float = 60.0,
    rate: float = 1000.0,
    event_time: bool = True,
    backpressure: bool = False,
    out: TextIO = sys.stdout,
) -> int:
    """Run the playground end to end for ``duration`` seconds; return the exit status."""
    from kindling.env import StreamEnvironment
    from kindling.local.kafka import LocalKafka
    from kindling.playground import click_count

    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="kindling-demo-"))
    broker = LocalKafka(data_dir=workdir / "kafka")
    generator: Optional[ClickEventGenerator] = None
    job = None
    stop_consumer = threading.Event()
    consumer_thread: Optional[threading.Thread] = None
    check = WindowCheck(event_time)
    try:
        print(f"kindling demo: Click Event Count ({'event' if event_time else 'processing'} time, "
              f"{rate:.0f} clicks/s, {duration:.0f} s)", file=out, flush=True)
        broker.start()
        broker.create_topic("input", partitions=4)
        broker.create_topic("output", partitions=1)
        print(f"  local Kafka broker on {broker.bootstrap_servers}; topics 'input' (4 partitions), 'output'", file=out, flush=True)
        generator = ClickEventGenerator(broker.bootstrap_servers, "input", rate).start()
        consumer_thread = threading.Thread(
            target=_consume_output, args=(broker.bootstrap_servers, "output", check, stop_consumer, out), daemon=True
        )
        consumer_thread.start()
        print("  starting Spark and the job (the first checkpoint takes a few seconds on 2 cores) ...", file=out, flush=True)
        env = StreamEnvironment(
            {
                "state.checkpoints.dir": str(workdir / "checkpoints"),
                "execution.checkpointing.interval": "1 s",
                "parallelism.default": 2,
                "kindling.log.level": "ERROR",
            }
        )
        click_count.build(env, broker.bootstrap_servers, event_time=event_time, backpressure=backpressure)
        job = env.execute_async(click_count.JOB_NAME)
        print(f"  job {job.get_job_id()} '{job.job_name}' is {job.get_job_status()}", file=out, flush=True)
        progress = _ProgressPrinter(job, generator, check, out)
        deadline = started + duration
        while time.monotonic() < deadline:
            status = job.wait(timeout=min(2.0, max(0.0, deadline - time.monotonic())))
            progress.maybe_print()
            if status in ("FAILED", "CANCELED", "FINISHED"):
                break
            if generator.error is not None:
                raise RuntimeError(f"click generator failed: {generator.error}")
        progress.print_line()
    except KeyboardInterrupt:
        print("  interrupted", file=out, flush=True)
    except Exception as exc:
        print(f"  demo failed: {exc}", file=out, flush=True)
        check.wrong += 1
    finally:
        if job is not None:
            job.cancel()
        if generator is not None:
            generator.stop()
        # Give the output consumer a moment to read windows already committed by the job.
        if consumer_thread is not None:
            stop_consumer.set()
            consumer_thread.join(timeout=10)
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(check.summary(), file=out, flush=True)
    return 0 if check.windows > 0 and check.wrong == 0 else 1


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

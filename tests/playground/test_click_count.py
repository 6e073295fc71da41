"""Flink's operations-playground job "Click Event Count" on kindling, against a local Kafka broker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from click_helpers import OutputReader, count_summary, events_for, expected_windows, normalise_start

from kindling.playground import click_count
from kindling.playground.click_generator import ClickEventGenerator

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
WINDOWS = 8


def _topics(kafka) -> tuple[str, str]:
    suffix = uuid.uuid4().hex[:8]
    kafka.create_topic(f"input-{suffix}", partitions=4)
    kafka.create_topic(f"output-{suffix}", partitions=1)
    return f"input-{suffix}", f"output-{suffix}"


def test_event_time_windows_are_complete(kafka, env):
    source, sink = _topics(kafka)
    generator = ClickEventGenerator(kafka.bootstrap_servers, source)
    generator.produce(events_for(WINDOWS))
    click_count.build(env, kafka.bootstrap_servers, source, sink, event_time=True)
    job = env.execute_async(click_count.JOB_NAME + " test")
    reader = OutputReader(kafka.bootstrap_servers, sink)
    try:
        deadline = time.monotonic() + 240
        while len(reader.distinct()) < WINDOWS * 6 and time.monotonic() < deadline:
            assert job.get_job_status() == "RUNNING", job.exceptions
            reader.poll()
        windows = {(normalise_start(s), p): c for (s, p), c in reader.distinct().items()}
        assert set(windows) == expected_windows(generator.start_ms, WINDOWS)
        assert all(count == 1000 for count in windows.values()), windows
        assert len(reader.records) == WINDOWS * 6  # no window emitted twice in an uninterrupted run
    finally:
        job.cancel()
        reader.close()
    assert job.get_job_status() == "CANCELED"


def _start_job(kafka, source: str, sink: str, checkpoints: Path, log: Path) -> subprocess.Popen:
    command = [
        sys.executable, str(ROOT / "examples" / "click_count.py"),
        "--bootstrap-servers", kafka.bootstrap_servers,
        "--input-topic", source, "--output-topic", sink,
        "--checkpoint-dir", str(checkpoints),
        "--checkpoint-interval", "500 ms",
        # Spark gives a starting Python worker 10 s to connect back, too little on a busy machine: a
        # query failing so restarts from its checkpoint inside the driver, as Flink's default does.
        "-D", "restart-strategy.type=fixed-delay", "-D", "restart-strategy.fixed-delay.attempts=20",
    ]
    # Its own process group: SIGKILL takes the whole driver (Python and its JVM) down at once.
    return subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)


def _wait_for_log(log, text: str, after: int, timeout: float) -> None:
    """Until ``text`` appears in the job log after its first ``after`` bytes (what the latest driver wrote)."""
    deadline = time.monotonic() + timeout
    while text.encode() not in log.read_bytes()[after:]:
        assert time.monotonic() < deadline, f"{text!r} not in the latest driver's part of {log} within {timeout} s"
        time.sleep(0.5)


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def test_killed_driver_resumes_from_checkpoint_without_losing_or_recounting(kafka, tmp_path):
    source, sink = _topics(kafka)
    # Clicks keep arriving while the job is killed and restarted: ~60 s of input at 800/s (the kills are placed by
    # output, so they land mid-stream whatever the rate; what the restarted drivers have not read waits in Kafka).
    generator = ClickEventGenerator(kafka.bootstrap_servers, source, rate=800).start(limit=events_for(WINDOWS))
    checkpoints = tmp_path / "checkpoints"
    log = tmp_path / "job.log"
    reader = OutputReader(kafka.bootstrap_servers, sink)
    kills = 0
    process = _start_job(kafka, source, sink, checkpoints, log)
    try:
        for target in (8, 24):  # two kills mid-stream: each restart costs a driver start (~1 min)
            reader.wait_for(target, timeout=480)  # a driver's start takes minutes on a busy machine
            _kill(process)  # mid-stream: more input is waiting, batches are in flight
            kills += 1
            last_start = log.stat().st_size
            process = _start_job(kafka, source, sink, checkpoints, log)
        reader.wait_for(WINDOWS * 6, timeout=480)
        reader.poll(2.0)
        # The last driver may still be starting when the earlier ones already emitted every window:
        # Ctrl-C is for a running job (before the job starts, it interrupts the program as in PyFlink).
        _wait_for_log(log, "resumes from its earlier checkpoint", after=last_start, timeout=480)
        # Ctrl-C in a terminal signals the whole process group: the job stops cleanly and says so.
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=120) == 0
        assert "stopped (Ctrl-C)" in log.read_text()
    finally:
        generator.stop()
        if process.poll() is None:
            _kill(process)
        reader.close()
    assert generator.error is None and generator.sent == events_for(WINDOWS)
    windows = {(normalise_start(s), p): c for (s, p), c in reader.distinct().items()}
    assert kills == 2
    assert set(windows) == expected_windows(generator.start_ms, WINDOWS), log.read_text()[-3000:]
    # At-least-once output may repeat a window after a crash, but never with a different count:
    # no input was lost and none was counted twice.
    assert count_summary(reader.records) == {1000: len(reader.records)}, count_summary(reader.records)

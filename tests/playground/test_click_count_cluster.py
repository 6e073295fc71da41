"""The operations playground's failure exercise on a Spark standalone cluster: a worker is lost mid-stream."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from click_helpers import OutputReader, events_for, expected_windows, normalise_start

from kindling.local.spark import alive_workers, descendants, wait_for_workers
from kindling.playground.click_generator import ClickEventGenerator

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
WINDOWS = 6


def _executors(pid: int) -> list[int]:
    """Executor JVMs below a worker."""
    found = []
    for child in descendants(pid):
        try:
            if b"CoarseGrainedExecutorBackend" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
        except OSError:
            continue
    return found


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)  # polling processes and files; nothing to wait on


def test_click_count_survives_a_lost_worker_exactly_once(spark_cluster, kafka, tmp_path):
    suffix = uuid.uuid4().hex[:8]
    source, sink = f"cl-in-{suffix}", f"cl-out-{suffix}"
    kafka.create_topic(source, partitions=4)
    kafka.create_topic(sink, partitions=1)
    generator = ClickEventGenerator(kafka.bootstrap_servers, source, rate=600)
    checkpoints, log = tmp_path / "checkpoints", tmp_path / "job.log"
    command = [
        sys.executable, str(ROOT / "examples" / "click_count.py"),
        "--bootstrap-servers", kafka.bootstrap_servers, "--input-topic", source, "--output-topic", sink,
        "--checkpoint-dir", str(checkpoints), "--checkpoint-interval", "1 s", "--exactly-once",
        "-D", f"kindling.spark.master={spark_cluster.master_url}", "-D", "spark.executor.memory=512m",
        # Spark gives a starting Python worker 10 s to connect back, too little on a busy machine: a
        # query failing so restarts from its checkpoint, as Flink's default with checkpointing does.
        "-D", "restart-strategy.type=fixed-delay", "-D", "restart-strategy.fixed-delay.attempts=20",
    ]
    driver = subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)
    reader = OutputReader(kafka.bootstrap_servers, sink)
    victim = spark_cluster.worker_processes[0].pid
    commits = checkpoints / "Click-Event-Count" / "click-event-statistics-sink" / "commits"
    try:
        _wait(lambda: _executors(victim) and _executors(spark_cluster.worker_processes[1].pid), 600, "an executor on each worker")
        # Clicks flow once the job runs (its start takes minutes on a busy machine): a minute of input.
        _wait(lambda: any(commits.glob("[0-9]*")), 600, "the job's first committed micro-batch")
        generator.start(limit=events_for(WINDOWS))
        reader.wait_for(6, timeout=600)  # the job is committing windows: now lose a machine
        assert len(reader.distinct()) < WINDOWS * 6, "every window was out before the kill; the kill must land mid-stream"
        killed_at = time.time()
        spark_cluster.kill_worker(0)
        wait_for_workers(spark_cluster.ui_url, 1, timeout=120)  # the master saw the loss
        _wait(lambda: any(p.stat().st_mtime > killed_at for p in commits.glob("[0-9]*")), 300, "a micro-batch committed after the kill")
        recovered = min(p.stat().st_mtime for p in commits.glob("[0-9]*") if p.stat().st_mtime > killed_at) - killed_at
        print(f"recovery: worker killed -> next committed micro-batch in {recovered:.1f} s")
        reader.wait_for(WINDOWS * 6, timeout=600)
        reader.poll(3.0)  # a window written twice would show up now
        assert driver.poll() is None, log.read_text()[-3000:]
    finally:
        generator.stop()
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGINT)
            try:
                driver.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(driver.pid, signal.SIGKILL)
                driver.wait(timeout=30)
        reader.close()
        if len(alive_workers(spark_cluster.ui_url)) < 2:
            spark_cluster.start_worker(0)  # the next test gets its 2-worker cluster back
    windows = [((normalise_start(r["windowStart"]), r["page"]), r["count"]) for r in reader.records]
    assert {key for key, _ in windows} == expected_windows(generator.start_ms, WINDOWS), log.read_text()[-3000:]
    assert len(windows) == WINDOWS * 6, "a window was emitted twice by the exactly-once sink"
    assert all(count == 1000 for _, count in windows), windows

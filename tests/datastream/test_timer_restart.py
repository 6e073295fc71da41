"""Timers survive a SIGKILL between their registration and their firing, and fire exactly once after restart."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from kindling.connectors.kafka.tail import TopicTail

pytestmark = pytest.mark.integration

JOB = Path(__file__).with_name("timer_job.py")
ROOT = Path(__file__).resolve().parents[2]


def _start(kafka, topic: str, checkpoints: Path, log: Path, keyed_input: str = "") -> subprocess.Popen:
    env = {**os.environ, "KINDLING_KEYED_INPUT": keyed_input} if keyed_input else None
    return subprocess.Popen([sys.executable, str(JOB), kafka.bootstrap_servers, topic, str(checkpoints)],
                            cwd=ROOT, stdout=open(log, "ab"), stderr=subprocess.STDOUT, start_new_session=True, env=env)


def _read(kafka, topic: str) -> list:
    records = []
    with TopicTail({"bootstrap.servers": kafka.bootstrap_servers, "isolation.level": "read_committed"}, [topic]) as tail:
        while messages := tail.poll(5.0):
            records.extend(json.loads(m.value()) for m in messages if not m.error())
    return records


@pytest.mark.parametrize("first_input", ["", "packed"], ids=["same-input", "packed-then-arrow"])
def test_timers_fire_once_in_order_after_kill_and_restart(kafka, tmp_path, first_input):
    """Also across the keyed operator's two input layouts: state and timers checkpointed by a run whose input was
    packed on the map side (as an earlier kindling's, or a remote cluster's) restore into one reading it as Arrow."""
    topic = f"timers-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, partitions=1)
    checkpoints = tmp_path / "checkpoints"
    log = tmp_path / "job.log"
    job = _start(kafka, topic, checkpoints, log, first_input)
    commits = checkpoints / "timer-restart" / "timers" / "commits"
    deadline = time.monotonic() + 300
    try:
        # Three micro-batches committed: timers registered for the first records, none due before the end.
        while not (commits.exists() and len([p for p in commits.iterdir() if p.name.isdigit()]) >= 3):
            assert job.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the job made no progress"
            time.sleep(0.2)  # polling a condition with a deadline
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    assert _read(kafka, topic) == []   # killed before any timer could fire
    restarted = _start(kafka, topic, checkpoints, log)
    try:
        assert restarted.wait(timeout=300) == 0, log.read_text()[-3000:]
    finally:
        if restarted.poll() is None:
            os.killpg(restarted.pid, signal.SIGKILL)
    fired = _read(kafka, topic)
    by_key = {}
    for record in fired:
        by_key.setdefault(record["k"], []).append(record["timer_s"])
    assert by_key == {"a": [61, 63, 65], "b": [62, 64, 66]}

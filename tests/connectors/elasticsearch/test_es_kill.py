"""Upsert mode survives SIGKILLs of the driver: a GROUP BY job killed three times mid-stream and restarted from its
checkpoint leaves exactly the expected documents (deterministic ids: a replayed micro-batch overwrites its own)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path

import pytest
from confluent_kafka import Producer

sys.path.insert(0, os.path.dirname(__file__))
from es_helpers import documents, fresh_index  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[3]
JOB = Path(__file__).with_name("es_upsert_job.py")
KEYS = [f"key-{i}" for i in range(7)]


class InputProducer(threading.Thread):
    """Writes {"k", "v"} records at a steady rate until stopped; remembers what it sent."""

    def __init__(self, servers: str, topic: str, rate: float = 200) -> None:
        super().__init__(daemon=True)
        self.servers, self.topic, self.rate = servers, topic, rate
        self.sent: list[tuple[str, int]] = []
        self.error = None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            producer = Producer({"bootstrap.servers": self.servers, "linger.ms": 5})
            start = time.monotonic()
            i = 0
            while not self._halt.is_set():
                lag = start + i / self.rate - time.monotonic()
                if lag > 0:
                    self._halt.wait(lag)
                record = (KEYS[i % len(KEYS)], i)
                producer.produce(self.topic, json.dumps({"k": record[0], "v": record[1]}).encode(), partition=i % 2)
                producer.poll(0)
                self.sent.append(record)
                i += 1
            assert producer.flush(30) == 0
        except BaseException as exc:  # reported by the test
            self.error = exc

    def stop(self) -> None:
        self._halt.set()
        self.join(30)


def _start(kafka, topic, server, index, checkpoints, log) -> subprocess.Popen:
    command = [sys.executable, str(JOB), "--bootstrap-servers", kafka.bootstrap_servers, "--topic", topic,
               "--hosts", server.url, "--index", index, "--checkpoint-dir", str(checkpoints)]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT, env=env)


def _counted(server, index) -> int:
    try:
        return sum(d["n"] for d in documents(server, index).values())
    except Exception:  # the index does not exist yet
        return 0


def test_upsert_job_killed_three_times_leaves_exactly_the_expected_documents(kafka, elasticsearch, tmp_path):
    topic, index = f"es-kill-{uuid.uuid4().hex[:8]}", fresh_index("kill")
    kafka.create_topic(topic, partitions=2)
    log, checkpoints = tmp_path / "job.log", tmp_path / "checkpoints"
    producer = InputProducer(kafka.bootstrap_servers, topic)
    producer.start()
    process = _start(kafka, topic, elasticsearch, index, checkpoints, log)

    def wait_for_progress(beyond: int, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while True:
            assert process.poll() is None, f"the job ended (exit {process.returncode}):\n{log.read_text()[-3000:]}"
            counted = _counted(elasticsearch, index)
            if counted > beyond:
                return counted
            assert time.monotonic() < deadline, f"no progress beyond {beyond} within {timeout} s:\n{log.read_text()[-3000:]}"
            time.sleep(0.5)  # polling the index of a job in another process

    try:
        seen = 0
        for _ in range(3):
            seen = wait_for_progress(seen, timeout=600)  # kill only after this run indexed something
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            process = _start(kafka, topic, elasticsearch, index, checkpoints, log)
        producer.stop()
        assert producer.error is None
        expected: dict[str, dict] = {}
        totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for key, value in producer.sent:
            totals[key][0] += value
            totals[key][1] += 1
        expected = {k: {"k": k, "total": t, "n": n} for k, (t, n) in totals.items()}
        deadline = time.monotonic() + 300
        while documents(elasticsearch, index) != expected:
            assert process.poll() is None, f"the job ended (exit {process.returncode}):\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"index {documents(elasticsearch, index)} != expected {expected}"
            time.sleep(0.5)  # polling the index of a job in another process
    finally:
        producer.stop()
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)

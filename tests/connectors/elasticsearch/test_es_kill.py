"""Upsert mode survives SIGKILLs of the driver: a GROUP BY job killed three times mid-stream and restarted from its
checkpoint leaves exactly the expected documents (deterministic ids: a replayed micro-batch overwrites its own).

Each kill takes the running driver's whole session down at once (Python, its JVM, and the Python daemons and
workers that PySpark puts in process groups of their own) at a random point of the stream: after that driver has
committed a micro-batch of its own and the index has then grown by a random number of records (up to ~1.5
micro-batches), so a kill lands anywhere in a micro-batch's life. Its replacement is a standby started earlier
(``es_upsert_job.py --go-file``: JVM up, warmed up on a scratch index with checkpoints of its own) that starts the
job's INSERT from the checkpoint once the test creates its go file, right after the kill -- as a supervisor with a
standby driver would. The standbys start with the first driver, so a restart costs seconds, not a JVM's start.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Callable, Optional

import pytest
from confluent_kafka import Producer

sys.path.insert(0, os.path.dirname(__file__))
from es_helpers import client_for, fresh_index  # noqa: E402

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
JOB = Path(__file__).with_name("es_upsert_job.py")
KEYS = [f"key-{i}" for i in range(7)]
RATE = 200  # input records per second; a micro-batch every 500 ms holds ~100
KILLS = 3
# Deadlines per step: a hang fails in minutes, not tens of minutes. Steps that wait for a JVM's start (the first
# driver's first micro-batch, a standby's warm-up; four drivers start at once on two cores) get more.
STEP_S = 120
START_S = 240


class InputProducer(threading.Thread):
    """Writes {"k", "v"} records at a steady rate until stopped; remembers what it sent."""

    def __init__(self, servers: str, topic: str, rate: float = RATE) -> None:
        super().__init__(daemon=True)
        self.servers, self.topic, self.rate = servers, topic, rate
        self.sent: list[tuple[str, int]] = []
        self.error: Optional[BaseException] = None
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


class Driver:
    """One driver process of the job, in its own process group; a standby (number > 1) waits for its go file."""

    def __init__(self, number: int, kafka, topic: str, server, index: str, work: Path) -> None:
        self.number = number
        self.ready_file, self.go_file = work / f"ready-{number}", work / f"go-{number}"
        command = [sys.executable, str(JOB), "--bootstrap-servers", kafka.bootstrap_servers, "--topic", topic,
                   "--hosts", server.url, "--index", index, "--checkpoint-dir", str(work / "checkpoints")]
        if number > 1:
            command += ["--go-file", str(self.go_file), "--ready-file", str(self.ready_file)]
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               # Short-lived JVMs: the C1 compiler alone spends a third less CPU getting a driver to its first
               # micro-batch (measured here), and four drivers start at once on two cores.
               "JAVA_TOOL_OPTIONS": (os.environ.get("JAVA_TOOL_OPTIONS", "") + " -XX:TieredStopAtLevel=1").strip()}
        self.log = work / "job.log"
        # Its own session: every process of the driver (Python, its JVM, its Python workers) can be found and killed.
        self.process = subprocess.Popen(command, stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
                                        start_new_session=True, cwd=ROOT, env=env)

    def ready(self) -> bool:
        return self.number == 1 or self.ready_file.exists()

    def check_alive(self) -> None:
        assert self.process.poll() is None, \
            f"driver {self.number} ended (exit {self.process.returncode}):\n{self.log.read_text()[-3000:]}"

    def release(self) -> None:
        self.go_file.touch()

    def kill(self) -> None:
        """SIGKILL every process of the driver's session at once: the Python driver and its JVM, and the Python
        daemons and workers, which PySpark moves into process groups of their own (so a killpg would miss them)."""
        deadline = time.monotonic() + 30
        while pids := session_processes(self.process.pid):
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            assert time.monotonic() < deadline, f"driver {self.number}: processes {pids} outlive SIGKILL"
        self.process.wait(timeout=30)


def session_processes(session: int) -> list[int]:
    """The live (not zombie) processes of a session, by /proc."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:  # gone meanwhile
                continue
            fields = stat[stat.rindex(")") + 2:].split()  # state, ppid, pgrp, session, ...
            if int(fields[3]) == session and fields[0] != "Z":
                pids.append(int(entry))
    return pids


def test_upsert_job_killed_three_times_leaves_exactly_the_expected_documents(kafka, elasticsearch, tmp_path):
    topic, index = f"es-kill-{uuid.uuid4().hex[:8]}", fresh_index("kill")
    kafka.create_topic(topic, partitions=2)
    client = client_for(elasticsearch)  # one client polls the index for the whole test
    job_checkpoints = tmp_path / "checkpoints" / "insert-into_totals"

    def index_documents() -> dict[str, dict]:
        if not client.indices.exists(index=index):
            return {}
        client.indices.refresh(index=index)
        hits = client.search(index=index, body={"query": {"match_all": {}}, "size": 100})["hits"]["hits"]
        return {hit["_id"]: hit["_source"] for hit in hits}

    def counted() -> int:  # input records the index reflects (the sum of the per-key counts)
        return sum(d["n"] for d in index_documents().values())

    def commits() -> int:  # micro-batches the job committed in its checkpoint, by any of its drivers
        return sum(1 for p in job_checkpoints.glob("*/commits/*") if p.name.isdigit())

    producer = InputProducer(kafka.bootstrap_servers, topic)
    producer.start()
    started = time.monotonic()
    timings: list[str] = []
    # The first driver runs at once; its three replacements start now too and wait, warm, for their go files.
    drivers = [Driver(n, kafka, topic, elasticsearch, index, tmp_path) for n in range(1, KILLS + 2)]
    running = drivers[0]

    def wait_until(condition: Callable[[], bool], what: str, timeout: float = STEP_S) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            for driver in drivers[running.number - 1:]:  # the running driver and the standbys must stay alive
                driver.check_alive()
            assert time.monotonic() < deadline, f"{what}: not within {timeout} s\n{running.log.read_text()[-3000:]}"
            time.sleep(0.1)  # polling interval of the condition above (a job in other processes), not a synchronisation

    kills = 0
    try:
        for kill in range(1, KILLS + 1):
            wait_until(drivers[kill].ready, f"standby {kill + 1} warm", START_S)
            # A random point mid-stream: once this driver has committed a micro-batch of its own (a restarted one: the
            # replay and the backlog), the index must grow by a random number of records (up to ~1.5 micro-batches).
            base_commits = commits()
            wait_until(lambda c=base_commits: commits() > c, f"driver {running.number}: a micro-batch",
                       START_S if kill == 1 else STEP_S)
            target = counted() + random.randint(1, RATE * 3 // 4)
            wait_until(lambda t=target: counted() >= t, f"driver {running.number}: {target} records")
            running.kill()
            kills += 1
            timings.append(f"kill {kills} at {time.monotonic() - started:.1f} s ({counted()} records indexed)")
            running = drivers[kill]
            running.release()
        # The last driver runs on: once it has committed a micro-batch, the input stops and it must catch up exactly.
        base_commits = commits()
        wait_until(lambda: commits() > base_commits, f"driver {running.number}: a micro-batch")
        producer.stop()
        assert producer.error is None
        totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for key, value in producer.sent:
            totals[key][0] += value
            totals[key][1] += 1
        expected = {k: {"k": k, "total": t, "n": n} for k, (t, n) in totals.items()}
        wait_until(lambda: index_documents() == expected, f"index {index_documents()} == expected {expected}")
        timings.append(f"index exact at {time.monotonic() - started:.1f} s ({len(producer.sent)} records)")
    finally:
        producer.stop()
        for driver in drivers:
            driver.kill()
        client.close()
        print("; ".join(timings))
    assert kills == KILLS

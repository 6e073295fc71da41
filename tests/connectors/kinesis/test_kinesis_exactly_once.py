"""Kill the driver of a running Kinesis -> files job three times mid-stream (SIGKILL, the whole process group)
and restart it from its checkpoint: the files hold every input record exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from kinesis_helpers import new_stream, put  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
# The producer runs until stopped after the third restart (a cap it could reach earlier would leave the kill
# loop waiting for a record that never comes); RECORDS only bounds a run that goes wrong.
RECORDS = 100_000
PER_PUT = 20


class Producer(threading.Thread):
    """Puts ids 0, 1, 2, ... to the stream, PER_PUT records per PutRecords, until stopped."""

    def __init__(self, client, stream: str) -> None:
        super().__init__(daemon=True)
        self.client, self.stream, self.sent, self.error = client, stream, 0, None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            while not self._halt.is_set() and self.sent < RECORDS:
                ids = range(self.sent, min(self.sent + PER_PUT, RECORDS))
                put(self.client, self.stream, [(f"k{i % 10}", json.dumps({"id": i, "payload": f"p{i}"}).encode()) for i in ids])
                self.sent = ids[-1] + 1
                self._halt.wait(0.2)
        except Exception as exc:  # reported by the test
            self.error = exc

    def stop(self) -> None:
        self._halt.set()
        self.join(60)


def output_ids(path: Path) -> list[int]:
    """Every id in the published files (staging and hidden files are not published)."""
    ids = []
    for file in path.rglob("*"):
        if file.is_file() and not any(part.startswith((".", "_")) or "staging" in part for part in file.relative_to(path).parts):
            ids.extend(json.loads(line)["id"] for line in file.read_text().splitlines() if line.strip())
    return ids


def _start(kinesis, stream: str, out: Path, checkpoints: Path, log: Path) -> subprocess.Popen:
    command = [sys.executable, str(ROOT / "examples" / "kinesis_copy.py"), "--endpoint", kinesis.endpoint,
               "--stream", stream, "--path", str(out), "--checkpoint-dir", str(checkpoints)]
    # Its own process group: SIGKILL takes the whole driver (Python and its JVM) down at once.
    return subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def test_killed_job_copies_every_record_exactly_once(kinesis, tmp_path):
    stream = new_stream(kinesis, 4)
    out, checkpoints, log = tmp_path / "out", tmp_path / "checkpoints", tmp_path / "job.log"
    producer = Producer(kinesis.client(), stream)
    producer.start()
    process = _start(kinesis, stream, out, checkpoints, log)

    crashes = 0

    def wait_for(count: int, timeout: float) -> None:
        nonlocal process, crashes
        deadline = time.monotonic() + timeout
        while len(output_ids(out)) < count:
            if process.poll() is not None:
                # A driver that dies by itself (a Python worker missing Spark's fixed 10 s connect-back on an
                # overloaded machine, beyond its restart strategy) is restarted from its checkpoint, as a
                # supervisor would: one more crash for the exactly-once check.
                assert crashes < 3, f"the job ended (exit {process.returncode}) again:\n{log.read_text()[-3000:]}"
                crashes += 1
                process = _start(kinesis, stream, out, checkpoints, log)
            assert time.monotonic() < deadline, f"only {len(output_ids(out))} of {count} records within {timeout} s:\n{log.read_text()[-3000:]}"
            time.sleep(0.2)  # polling interval of the condition above

    kills = 0
    try:
        for _ in range(3):
            wait_for(len(output_ids(out)) + 1, timeout=600)  # kill after this run published something
            _kill(process)
            kills += 1
            process = _start(kinesis, stream, out, checkpoints, log)
        producer.stop()
        assert producer.error is None, producer.error
        wait_for(producer.sent, timeout=600)
        time.sleep(3)  # anything beyond what was sent would be a duplicate: give it a chance to show up
    finally:
        if process.poll() is None:
            _kill(process)
        producer.stop()
    assert kills == 3 and producer.sent > 0
    counts = Counter(output_ids(out))
    duplicates = {i: c for i, c in counts.items() if c > 1}
    missing = set(range(producer.sent)) - set(counts)
    assert not duplicates and not missing, (len(duplicates), len(missing), log.read_text()[-3000:])
    assert len(counts) == producer.sent

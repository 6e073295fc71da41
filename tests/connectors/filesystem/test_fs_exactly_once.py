"""Kill the driver of a running file-writing job three times and restart it from its checkpoint.

Against a local directory (Parquet with compaction) and against the local S3 server (JSON lines with
compaction), written by one job with two sinks: the records readable from the sink at
the end equal the input exactly (nothing lost, nothing twice), and a reader listing the path
during the whole run never sees a partial or uncommitted file: every file it sees reads whole and
is still there, unchanged, at the end.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from fs_helpers import Table, local_table

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
ROWS = 8_000  # a sequence 0..ROWS-1, ROWS_PER_BATCH per micro-batch: the input lasts across every kill
ROWS_PER_BATCH = 400


class Reader(threading.Thread):
    """Lists the table again and again and reads every new visible file whole, as a query engine would."""

    def __init__(self, table: Table) -> None:
        super().__init__(daemon=True)
        self.table = table
        self.seen: dict[str, int] = {}  # file -> rows when first read
        self.errors: list[str] = []
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                for name in self.table.files():
                    if name not in self.seen:
                        self.seen[name] = self.table.read(name).num_rows
            except Exception as exc:  # a file listed but not readable whole: partial
                if not isinstance(exc, FileNotFoundError):
                    self.errors.append(f"{type(exc).__name__}: {exc}")
            self._halt.wait(0.2)

    def stop(self) -> None:
        self._halt.set()
        self.join(30)


def _start(args: list[str], log: Path) -> subprocess.Popen:
    command = [sys.executable, str(HERE / "file_copy_job.py"), *args]
    # Its own process group: SIGKILL takes the whole driver (Python and its JVM) down at once.
    return subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def _run_with_kills(args: list[str], tables: list[Table], log: Path) -> list[Reader]:
    readers = [Reader(table) for table in tables]
    for reader in readers:
        reader.start()
    process = _start(args, log)
    crashes = 0

    def seen() -> list[int]:
        return [len(r.seen) for r in readers]

    def wait_for_progress(targets: list[int], timeout: float) -> None:
        nonlocal process, crashes
        deadline = time.monotonic() + timeout
        while any(n < t for n, t in zip(seen(), targets)):
            if process.poll() is not None:
                # A driver that dies by itself (a transient Spark failure its restart strategy did not
                # absorb) is restarted from its checkpoint, as a supervisor would: one more crash for the
                # exactly-once check. Twice is a bug, not chance.
                assert crashes < 2, f"the job ended (exit {process.returncode}) early again:\n{log.read_text()[-3000:]}"
                crashes += 1
                process = _start(args, log)
            assert time.monotonic() < deadline, f"only {seen()} files within {timeout} s:\n{log.read_text()[-3000:]}"
            time.sleep(0.1)  # polling interval of the condition above, not a synchronisation

    kills = 0
    try:
        for _ in range(3):
            # Kill at a random point after this run has published something in every table (more input keeps coming).
            wait_for_progress([n + random.randint(1, 3) for n in seen()], timeout=600)
            _kill(process)
            kills += 1
            process = _start(args, log)
        assert process.wait(timeout=600) == 0, log.read_text()[-3000:]
    finally:
        if process.poll() is None:
            _kill(process)
        for reader in readers:
            reader.stop()
    assert kills == 3
    return readers


def _check(table: Table, reader: Reader, log: Path) -> None:
    assert reader.errors == [], reader.errors[:3]
    final = table.files()
    # Every file a reader ever saw is committed: still there, with the same records.
    assert set(reader.seen) <= set(final), sorted(set(reader.seen) - set(final))[:5]
    assert all(table.read(name).num_rows == rows for name, rows in reader.seen.items())
    counts = Counter(table.ids())
    duplicates = {i: c for i, c in counts.items() if c > 1}
    missing = set(range(ROWS)) - set(counts)
    assert not duplicates and not missing, (len(duplicates), len(missing), log.read_text()[-3000:])
    assert len(counts) == ROWS
    assert [n for n in table.all_names() if "/staging/" in n] == []  # staging recovered or removed
    assert sorted(n for n in table.all_names() if n.endswith("_SUCCESS")) == [f"part={p}/_SUCCESS" for p in range(3)]


def test_killed_job_writes_every_record_exactly_once_to_a_local_directory_and_to_s3(s3, tmp_path):
    """One job, two sinks (two streaming queries in one driver): each kill takes both down at once."""
    bucket = f"eo-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(bucket)
    path = tmp_path / "table"
    log = tmp_path / "job.log"
    args = ["--path", str(path), "--format", "parquet", "--checkpoint-dir", str(tmp_path / "checkpoints"),
            "--rows", str(ROWS), "--rows-per-batch", str(ROWS_PER_BATCH), "--compaction", "2kb", "--rollover", "2 s",
            "--s3-path", f"s3://{bucket}/table", "--s3-format", "json",
            "--s3-endpoint", s3.endpoint, "--s3-access-key", s3.access_key, "--s3-secret-key", s3.secret_key]
    local, remote = local_table(path, "parquet"), Table(s3.filesystem(), f"{bucket}/table", "json")
    local_reader, remote_reader = _run_with_kills(args, [local, remote], log)
    _check(local, local_reader, log)
    _check(remote, remote_reader, log)

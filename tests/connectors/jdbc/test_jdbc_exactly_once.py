"""Exactly-once into PostgreSQL and MariaDB: a running job SIGKILLed three times at random points and restarted.

The job appends a datagen sequence 0..N-1 into a table WITHOUT a unique constraint, so a row
written twice would stay twice: the final table must hold every id exactly once (no duplicate,
no gap). Each micro-batch's rows and its batch id are committed in one transaction; a batch
replayed after a kill is recognised by its marker and skipped.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from jdbc_helpers import execute, rows, table_name  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(2700)]

ROOT = Path(__file__).resolve().parents[3]
JOB = Path(__file__).with_name("eos_job.py")
ROWS = 20_000
RATE = 25  # rows/s while the job is being killed: it must not finish before the third kill
FINAL_RATE = 20_000  # the last run writes the rest quickly (the rate is not part of the checkpoint)


def _start(checkpoints: Path, options: dict, log: Path, rate: int = RATE) -> subprocess.Popen:
    command = [sys.executable, str(JOB), str(checkpoints), str(ROWS), str(rate), json.dumps(options)]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # Its own process group: SIGKILL takes the whole driver (Python and its JVM) down at once.
    return subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True,
                            cwd=ROOT, env=env)


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


class Counter:
    """The table's row count through one open connection (a new connection per poll is slow on a loaded machine)."""

    def __init__(self, db, target: str) -> None:
        self.connection = db.connect()
        self.target = target

    def __call__(self) -> int:
        cursor = self.connection.cursor()
        cursor.execute(f"SELECT COUNT(*) FROM {self.target}")
        count = cursor.fetchone()[0]
        cursor.close()
        self.connection.commit()  # end the read transaction: the next poll sees newer commits
        return count


@pytest.mark.parametrize("server", ["postgres", "mysql"])
def test_killed_job_writes_every_row_exactly_once(request, server, tmp_path):
    db = request.getfixturevalue(server)
    target = table_name("eos")
    execute(db, f"CREATE TABLE {target} (id BIGINT, payload VARCHAR(20))")
    options = {"url": db.url, "username": db.user, "password": db.password, "table-name": target}
    checkpoints, log = tmp_path / "checkpoints", tmp_path / "job.log"
    process = _start(checkpoints, options, log)
    chance = random.Random()
    count = Counter(db, target)
    kills = crashes = 0
    rate = RATE

    def running() -> subprocess.Popen:
        """The job, restarted if it died by itself (on a loaded machine Spark may fail to start a Python
        worker in time): a crash and restart is one more recovery the sink must survive."""
        nonlocal process, crashes, rate
        if process.poll() is not None and process.returncode != 0:
            crashes += 1
            assert crashes <= 5, f"the job keeps failing:\n{log.read_text()[-3000:]}"
            process = _start(checkpoints, options, log, rate)
        return process

    try:
        for _ in range(3):
            # Kill only after this run committed something more, then at a random moment.
            before = count()
            deadline = time.monotonic() + 600
            while count() <= before:
                assert running().poll() is None, f"the job finished early:\n{log.read_text()[-3000:]}"
                assert time.monotonic() < deadline, f"no progress within 600 s:\n{log.read_text()[-3000:]}"
                time.sleep(0.2)  # polling the database for the job's progress
            time.sleep(chance.uniform(0, 1.5))
            assert count() < ROWS, "the job finished before the third kill: raise ROWS or lower RATE"
            _kill(process)
            kills += 1
            rate = RATE if kills < 3 else FINAL_RATE
            process = _start(checkpoints, options, log, rate)
        deadline = time.monotonic() + 900
        while running().poll() is None or process.returncode != 0:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)  # waiting for the bounded job to finish
    finally:
        if process.poll() is None:
            _kill(process)
        count.connection.close()
    assert kills == 3
    ids = [r[0] for r in rows(db, f"SELECT id FROM {target}")]
    duplicates = len(ids) - len(set(ids))
    missing = set(range(ROWS)) - set(ids)
    assert duplicates == 0 and not missing, (duplicates, len(missing), log.read_text()[-3000:])
    assert len(ids) == ROWS
    markers = rows(db, "SELECT COUNT(*) FROM kindling_jdbc_commits WHERE sink_id LIKE '" + target + "@%'")[0][0]
    assert markers > 3

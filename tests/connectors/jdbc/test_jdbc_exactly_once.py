"""Exactly-once into PostgreSQL and MariaDB: a running job SIGKILLed three times at random points and restarted.

One job (``eos_job.py``: a statement set of two INSERTs) appends the same datagen sequence 0..N-1 into a
PostgreSQL table and a MariaDB table, both WITHOUT a unique constraint, so a row written twice would stay
twice: each final table must hold every id exactly once (no duplicate, no gap). Every SIGKILL takes the
whole driver (Python and its JVM, one process group) down while both sinks are running, at a random moment
after both tables received rows from this run. Each micro-batch's rows and its batch id are committed in one
transaction; a batch replayed after a kill is recognised by its marker and skipped.

The next driver is started while the current one runs and waits, warm, for a go file written right after the
kill: the JVM's start-up is hidden, not the recovery (the new driver starts its queries from the checkpoint
only after the old one is dead).

The commit path itself (replay skipped, with cached connections and without; a failure inside the transaction
leaves nothing) is checked directly in seconds.
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

import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

sys.path.insert(0, os.path.dirname(__file__))
from jdbc_helpers import execute, rows, table_name  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
JOB = Path(__file__).with_name("eos_job.py")
ROWS = 5_000
RATE = 25  # rows/s while the job is being killed: it must not finish before the third kill
FINAL_RATE = 5_000  # the last run writes the rest quickly (the rate is not part of the checkpoint)


class Driver:
    """One run of the job in its own process group, started warm: it begins once ``go()`` is called."""

    def __init__(self, directory: Path, number: int, args: list[str]) -> None:
        self.go_file = directory / f"go-{number}"
        self.log = directory / f"job-{number}.log"
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        # Its own process group: SIGKILL takes the whole driver (Python and its JVM) down at once.
        self.process = subprocess.Popen([sys.executable, str(JOB), *args, str(self.go_file)], stdout=self.log.open("ab"),
                                        stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT, env=env)

    @property
    def ready(self) -> bool:
        return Path(str(self.go_file) + ".ready").exists()

    def go(self) -> None:
        self.go_file.touch()

    def failed(self) -> bool:
        return self.process.poll() is not None and self.process.returncode != 0

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def tail(self) -> str:
        return f"--- {self.log.name} ---\n" + (self.log.read_text(errors="replace")[-3000:] if self.log.exists() else "")


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


def test_killed_job_writes_every_row_exactly_once_to_postgres_and_mariadb(postgres, mysql, tmp_path):
    databases = {"postgres": postgres, "mysql": mysql}
    targets = {name: table_name(f"eos_{name[:2]}") for name in databases}
    for name, db in databases.items():
        execute(db, f"CREATE TABLE {targets[name]} (id BIGINT, payload VARCHAR(20))")
    options = [json.dumps({**db.options(), "table-name": targets[name]}) for name, db in databases.items()]
    checkpoints = tmp_path / "checkpoints"
    counters = [Counter(db, targets[name]) for name, db in databases.items()]
    drivers: list[Driver] = []
    timeline: list[str] = []  # for failure messages: when each kill came and what the tables held

    def start(rate: int) -> Driver:
        drivers.append(Driver(tmp_path, len(drivers), [str(checkpoints), str(ROWS), str(rate), *options]))
        return drivers[-1]

    def logs() -> str:
        return "\n".join([*timeline, *(d.tail() for d in drivers[-4:])])

    chance = random.Random()
    crashes = kills = 0
    began = time.monotonic()
    current = start(RATE)
    current.go()
    # The three drivers that take over after each kill start now and wait warm (JVM up, tables declared): each kill
    # is followed by a restart from the checkpoint within seconds, and the machine starts the JVMs side by side.
    successors = [start(RATE), start(RATE), start(FINAL_RATE)]
    try:
        for kill in range(3):
            before = [count() for count in counters]
            successor = successors[kill]
            # Kill only after this run committed something more into BOTH tables (and the next driver is warm).
            deadline = time.monotonic() + 600
            while not (all(count() > b for count, b in zip(counters, before)) and successor.ready):
                if current.failed() or successor.failed():
                    # A driver that died by itself (on a loaded machine Spark may fail to start a Python worker
                    # in time, beyond its restart strategy) is started again: one more recovery to survive.
                    crashes += 1
                    assert crashes <= 3, f"the job keeps failing:\n{logs()}"
                    if current.failed():
                        current = start(RATE)
                        current.go()
                    if successor.failed():
                        successor = successors[kill] = start(RATE if kill < 2 else FINAL_RATE)
                assert current.process.poll() is None, f"the job finished early:\n{logs()}"
                assert time.monotonic() < deadline, f"no progress within 600 s:\n{logs()}"
                time.sleep(0.1)  # polling the databases for the job's progress
            timeline.append(f"{time.monotonic() - began:.1f}s progress {[count() for count in counters]}")
            time.sleep(chance.uniform(0, 1.5))  # a random point in the micro-batch cycle, not a synchronisation
            assert all(count() < ROWS for count in counters), "the job finished before the third kill: raise ROWS"
            current.kill()
            kills += 1
            timeline.append(f"{time.monotonic() - began:.1f}s kill {kills}")
            successor.go()
            current = successor
        deadline = time.monotonic() + 600
        while current.process.poll() is None or current.process.returncode != 0:
            if current.failed():
                crashes += 1
                assert crashes <= 3, f"the job keeps failing:\n{logs()}"
                current = start(FINAL_RATE)
                current.go()
            assert time.monotonic() < deadline, logs()
            time.sleep(0.2)  # waiting for the bounded job to finish
        timeline.append(f"{time.monotonic() - began:.1f}s finished")
    finally:
        for driver in drivers:
            driver.kill()
        for count in counters:
            count.connection.close()
    assert kills == 3
    for name, db in databases.items():
        ids = [r[0] for r in rows(db, f"SELECT id FROM {targets[name]}")]
        duplicates = len(ids) - len(set(ids))
        missing = set(range(ROWS)) - set(ids)
        assert duplicates == 0 and not missing, (name, duplicates, len(missing), logs())
        assert len(ids) == ROWS
        markers = rows(db, f"SELECT COUNT(*) FROM kindling_jdbc_commits WHERE sink_id LIKE '{targets[name]}@%'")[0][0]
        assert markers > 3, (name, markers)


# --- the commit path itself ------------------------------------------------------------------------


@pytest.mark.parametrize("server", ["postgres", "mysql"])
def test_a_replayed_batch_is_skipped_and_a_failed_transaction_leaves_nothing(request, server, monkeypatch):
    from kindling.connectors.jdbc import sink
    from kindling.connectors.jdbc.dialects import JdbcError
    from kindling.connectors.jdbc.options import jdbc_config

    db = request.getfixturevalue(server)
    target = table_name("commit")
    execute(db, f"CREATE TABLE {target} (id BIGINT, payload VARCHAR(20))")
    config = jdbc_config({**db.options(), "table-name": target, "sink.max-retries": "0"})
    sink_id = f"{target}@test"
    columns = ["id", "payload"]
    batch = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "payload": ["a", "b", "c"]})
    sink.check_table(config, StructType([StructField("id", LongType()), StructField("payload", StringType())]))

    def markers() -> list[tuple]:
        return rows(db, f"SELECT batch_id, row_count FROM kindling_jdbc_commits WHERE sink_id = '{sink_id}'")

    assert sink.commit_batch(config, sink_id, 0, batch, columns) is True
    assert sink.commit_batch(config, sink_id, 0, batch, columns) is False  # the replay: nothing written
    assert rows(db, f"SELECT id, payload FROM {target}") == [(1, "a"), (2, "b"), (3, "c")]
    sink._drop_connection(sink.dialect_for(config))  # as after a driver restart: a new connection finds the marker
    assert sink._connection_key(config) not in sink._connections
    assert sink.commit_batch(config, sink_id, 0, batch, columns) is False
    assert rows(db, f"SELECT id, payload FROM {target}") == [(1, "a"), (2, "b"), (3, "c")]
    assert markers() == [(0, 3)]

    # A failure inside the transaction after the rows were written: neither the rows nor the marker stay.
    dialect_class = type(sink.dialect_for(config))
    written = dialect_class.insert

    def insert_then_fail(self, cursor, names, table):
        written(self, cursor, names, table)
        raise RuntimeError("the connection broke after the rows were sent")

    monkeypatch.setattr(dialect_class, "insert", insert_then_fail)
    second = pa.table({"id": pa.array([4, 5], pa.int64()), "payload": ["d", "e"]})
    with pytest.raises(JdbcError, match="writing batch 1 .* failed after 1 attempt"):
        sink.commit_batch(config, sink_id, 1, second, columns)
    assert rows(db, f"SELECT id, payload FROM {target}") == [(1, "a"), (2, "b"), (3, "c")]
    assert markers() == [(0, 3)]
    monkeypatch.setattr(dialect_class, "insert", written)
    # the batch runs again (a restarted job replays it): now it is written once, with its marker
    assert sink.commit_batch(config, sink_id, 1, second, columns) is True
    assert sink.commit_batch(config, sink_id, 1, second, columns) is False
    assert [r[0] for r in rows(db, f"SELECT id FROM {target}")] == [1, 2, 3, 4, 5]
    assert markers() == [(0, 3), (1, 2)]

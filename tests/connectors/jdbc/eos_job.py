"""A job for the jdbc exactly-once kill test: one datagen sequence appended into a PostgreSQL table and a MariaDB table.

Usage: python eos_job.py <checkpoint dir> <rows> <rows per second> <postgres options JSON> <mysql options JSON> [<go file>]

A statement set of two INSERTs (two streaming queries in one driver): one SIGKILL of the process group takes both
sinks down at once. With a go file the driver gets ready first (JVM, SparkSession, DDL), writes ``<go file>.ready``
and starts the INSERTs only once the go file exists, so a test can have the next driver warm while the current one
is killed. It resumes from its checkpoint when restarted and ends once the sequence is written to both tables.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from kindling.table import EnvironmentSettings, TableEnvironment

GO_DEADLINE_S = 1200


def main() -> None:
    checkpoints, rows, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sinks = {"pg_out": json.loads(sys.argv[4]), "my_out": json.loads(sys.argv[5])}
    go = Path(sys.argv[6]) if len(sys.argv) > 6 else None
    settings = EnvironmentSettings.new_instance().in_streaming_mode().with_configuration({
        "execution.checkpointing.interval": "300 ms", "state.checkpoints.dir": checkpoints,
        "parallelism.default": 2, "kindling.log.level": "ERROR",
        # a transient failure (a Python worker that starts too slowly) restarts from the checkpoint
        "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 5,
        "restart-strategy.fixed-delay.delay": "1 s"}).build()
    t_env = TableEnvironment.create(settings)
    t_env._env.spark.range(1).count()  # the JVM and its executor up before the driver says it is ready
    t_env.execute_sql(f"CREATE TABLE seq (id BIGINT, payload STRING) WITH ('connector' = 'datagen', "
                      f"'rows-per-second' = '{rate}', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', "
                      f"'fields.id.end' = '{rows - 1}', 'fields.payload.length' = '6')")
    statements = t_env.create_statement_set()
    for name, options in sinks.items():
        with_clause = ", ".join(f"'{k}' = '{v}'" for k, v in {"connector": "jdbc", **options}.items())
        t_env.execute_sql(f"CREATE TABLE {name} (id BIGINT, payload STRING) WITH ({with_clause})")
        statements.add_insert_sql(f"INSERT INTO {name} SELECT id, payload FROM seq")
    if go is not None:
        Path(str(go) + ".ready").touch()
        deadline = time.monotonic() + GO_DEADLINE_S
        while not go.exists():  # the test's signal: the previous driver is dead
            if time.monotonic() > deadline:
                sys.exit(f"no go file {go} within {GO_DEADLINE_S} s")
            time.sleep(0.05)
    status = statements.execute().wait()
    print(f"job ended: {status}", flush=True)
    sys.exit(0 if status == "FINISHED" else 1)


if __name__ == "__main__":
    main()

"""A job for the jdbc exactly-once kill test: a datagen sequence appended into a jdbc table.

Usage: python eos_job.py <checkpoint dir> <rows> <rows per second> <jdbc options as JSON>
It resumes from its checkpoint when restarted and ends once the sequence is written.
"""

from __future__ import annotations

import json
import sys

from kindling.env import StreamEnvironment


def main() -> None:
    checkpoints, rows, rate, options = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
    env = StreamEnvironment({"execution.checkpointing.interval": "300 ms", "state.checkpoints.dir": checkpoints,
                             "parallelism.default": 2, "kindling.log.level": "ERROR",
                             # a transient failure (a Python worker that starts too slowly) restarts from the checkpoint
                             "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 5})
    env.execute_sql(f"CREATE TABLE seq (id BIGINT, payload STRING) WITH ('connector' = 'datagen', "
                    f"'rows-per-second' = '{rate}', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', "
                    f"'fields.id.end' = '{rows - 1}', 'fields.payload.length' = '6')")
    with_clause = ", ".join(f"'{k}' = '{v}'" for k, v in {"connector": "jdbc", **options}.items())
    env.execute_sql(f"CREATE TABLE out_t (id BIGINT, payload STRING) WITH ({with_clause})")
    result = env.execute_sql("INSERT INTO out_t SELECT id, payload FROM seq")
    status = result.wait()
    print(f"job ended: {status}", flush=True)
    sys.exit(0 if status == "FINISHED" else 1)


if __name__ == "__main__":
    main()

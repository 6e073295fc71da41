"""A Flink SQL upsert job for the kill test: Kafka JSON records -> per-key SUM and COUNT -> an Elasticsearch index.

    python es_upsert_job.py --bootstrap-servers H:P --topic T --hosts http://H:P --index I --checkpoint-dir D \\
        [--go-file G --ready-file R]

Runs until killed; a restart with the same checkpoint directory resumes where the last committed micro-batch ended.

With ``--go-file`` the process is a pre-warmed replacement driver (a standby): it starts its JVM and SparkSession,
registers the tables, and warms up by running the same INSERT over the first records of the topic into a scratch
index with checkpoints of its own (Python workers, the Kafka reader, the aggregation's code and state store, the
sink's client are then loaded); it touches ``--ready-file`` and starts the real INSERT only once the go file
exists -- which the kill test creates right after it has SIGKILLed the running driver. A restart then costs the
query's start from the checkpoint, not a JVM's start and a cold first micro-batch.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from kindling.env import StreamEnvironment

GO_TIMEOUT_S = 600  # a standby nobody releases ends by itself
INSERT = "INSERT INTO totals SELECT k, SUM(v), COUNT(*) FROM src GROUP BY k"


def tables(env: StreamEnvironment, args: argparse.Namespace, index: str, bounded: str = "") -> None:
    env.execute_sql(f"""CREATE TABLE src (k STRING, v BIGINT) WITH ('connector' = 'kafka', 'topic' = '{args.topic}',
        'properties.bootstrap.servers' = '{args.bootstrap_servers}', 'scan.startup.mode' = 'earliest-offset',
        'format' = 'json'{bounded})""")
    env.execute_sql(f"""CREATE TABLE totals (k STRING, total BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)
        WITH ('connector' = 'elasticsearch-7', 'hosts' = '{args.hosts}', 'index' = '{index}',
              'sink.bulk-flush.max-actions' = '50')""")


def warm_up(env: StreamEnvironment, args: argparse.Namespace) -> None:
    """The job's INSERT over the topic's first 10 records into '<index>-warm-up', with checkpoints of its own."""
    directory = tempfile.mkdtemp(prefix="es-kill-warm-up-")
    try:
        warm = StreamEnvironment({"state.checkpoints.dir": directory, "execution.checkpointing.interval": "500 ms",
                                  "parallelism.default": 2, "restart-strategy.type": "fixed-delay",
                                  "restart-strategy.fixed-delay.attempts": 5}, spark=env.spark)
        tables(warm, args, f"{args.index}-warm-up", ", 'scan.bounded.mode' = 'specific-offsets', "
                                                    "'scan.bounded.specific-offsets' = 'partition:0,offset:5;partition:1,offset:5'")
        warm.execute_sql(INSERT).wait()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def wait_for_file(path: Path, timeout: float) -> None:
    """Wait until ``path`` exists (a condition with a deadline); exit if it never does or the test is gone."""
    deadline = time.monotonic() + timeout
    parent = os.getppid()
    while not path.exists():
        if time.monotonic() > deadline or os.getppid() != parent:
            sys.exit(f"es_upsert_job: {path} did not appear within {timeout} s")
        time.sleep(0.02)  # polling interval of the condition above


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--hosts", required=True)
    parser.add_argument("--index", required=True)
    parser.add_argument("--checkpoint-dir", required=True)
    parser.add_argument("--go-file", type=Path, help="a standby: warm up, then start the INSERT once this file exists")
    parser.add_argument("--ready-file", type=Path, help="touched once the standby is warm")
    args = parser.parse_args()
    started = time.monotonic()

    def mark(what: str) -> None:
        print(f"es_upsert_job[{os.getpid()}]: {what} at {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)

    env = StreamEnvironment({"state.checkpoints.dir": args.checkpoint_dir, "execution.checkpointing.interval": "500 ms",
                             "parallelism.default": 2, "kindling.log.level": "ERROR",
                             "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 5})
    if args.go_file is not None:
        warm_up(env, args)
        mark("warm")
        if args.ready_file is not None:
            args.ready_file.touch()
        wait_for_file(args.go_file, GO_TIMEOUT_S)
    tables(env, args, args.index)
    mark("INSERT starts")
    env.execute_sql(INSERT).wait()


if __name__ == "__main__":
    main()

"""A Flink SQL upsert job for the kill test: Kafka JSON records -> per-key SUM and COUNT -> an Elasticsearch index.

    python es_upsert_job.py --bootstrap-servers H:P --topic T --hosts http://H:P --index I --checkpoint-dir D

Runs until killed; a restart with the same checkpoint directory resumes where the last committed micro-batch ended.
"""

from __future__ import annotations

import argparse

from kindling.env import StreamEnvironment


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--hosts", required=True)
    parser.add_argument("--index", required=True)
    parser.add_argument("--checkpoint-dir", required=True)
    args = parser.parse_args()
    env = StreamEnvironment({"state.checkpoints.dir": args.checkpoint_dir, "execution.checkpointing.interval": "500 ms",
                             "parallelism.default": 2, "kindling.log.level": "ERROR",
                             "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 5})
    env.execute_sql(f"""CREATE TABLE src (k STRING, v BIGINT) WITH ('connector' = 'kafka', 'topic' = '{args.topic}',
        'properties.bootstrap.servers' = '{args.bootstrap_servers}', 'scan.startup.mode' = 'earliest-offset',
        'format' = 'json')""")
    env.execute_sql(f"""CREATE TABLE totals (k STRING, total BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)
        WITH ('connector' = 'elasticsearch-7', 'hosts' = '{args.hosts}', 'index' = '{args.index}',
              'sink.bulk-flush.max-actions' = '50')""")
    env.execute_sql("INSERT INTO totals SELECT k, SUM(v), COUNT(*) FROM src GROUP BY k").wait()


if __name__ == "__main__":
    main()

"""Reconciliation against the streaming run it checks: the click-count job over 1M click records.

A local Kafka broker holds ``--records`` click events (4 partitions, 10 pages, 1,000 events per second of
event time). The job is Flink SQL: a 15-second TUMBLE window COUNT per page into a JSON filesystem table.

(a) the reference: the streaming job, started on the records already in Kafka and timed until its checkpoint
    has read all of them and the watermark has closed every window but the last;
(b) ``reconcile`` of that job at its last checkpoint: the same script in batch mode over exactly the input the
    checkpoint read, the sink read back, the comparison.

Both run in one SparkSession; a warm-up job over 10k records runs first, untimed. Prints both times,
the records per second of each, and ``ratio=<reconcile time / streaming time>`` (below 1: checking costs less
than processing; the run table's rate columns are records per second).

    python benchmarks/reconcile.py [--records 1000000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

EPOCH_MS = 1704067200000  # 2024-01-01 00:00:00 UTC

SCRIPT = """\
CREATE TABLE clicks (ts TIMESTAMP(3), page STRING, WATERMARK FOR ts AS ts - INTERVAL '200' MILLISECOND) WITH (
  'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{servers}',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE page_counts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), page STRING, clicks BIGINT) WITH (
  'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO page_counts
SELECT window_start, window_end, page, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '15' SECOND))
GROUP BY window_start, window_end, page;
"""


def produce(servers: str, topic: str, records: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": servers, "linger.ms": 50, "batch.num.messages": 10000,
                         "queue.buffering.max.messages": 2_000_000})
    for i in range(records):
        ms = EPOCH_MS + i  # 1,000 events per second of event time
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}"
        producer.produce(topic, json.dumps({"ts": stamp, "page": f"/page/{i % 10}"}).encode(), partition=i % 4)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0


def run(spark, servers: str, topic: str, records: int, directory: Path) -> tuple[float, float, object]:
    from kindling.env import StreamEnvironment
    from kindling.reconciliation import reconcile
    from kindling.reconciliation.checkpoint import QueryCheckpoint

    script = directory / "clicks.sql"
    script.write_text(SCRIPT.format(topic=topic, servers=servers, out=directory / "out"))
    defines = {"execution.checkpointing.interval": "200 ms", "state.checkpoints.dir": str(directory / "checkpoints")}
    env = StreamEnvironment(dict(defines), spark=spark)
    checkpoint = directory / "checkpoints" / "insert-into_page_counts" / "page_counts"
    last_window_start = EPOCH_MS + (records // 15_000) * 15_000
    started = time.monotonic()
    client = env.sql_session().execute_script(script.read_text())[-1].get_job_client()
    try:
        while True:  # every window before the last has closed: all but the last 15 s of records are processed
            if (checkpoint / "commits").is_dir():
                query = QueryCheckpoint(checkpoint)
                committed = query.committed()
                if committed and query.micro_batch(committed[-1]).watermark_ms >= last_window_start - 1000:
                    break
            if client.get_job_status() != "RUNNING":
                raise RuntimeError(f"the streaming job ended {client.get_job_status()}")
            time.sleep(0.1)
        streaming = time.monotonic() - started
    finally:
        client.cancel()
    started = time.monotonic()
    report = reconcile(str(script), defines=defines, spark=spark)
    return streaming, time.monotonic() - started, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    args = parser.parse_args()
    from kindling.config import Configuration
    from kindling.local.kafka import LocalKafka
    from kindling.runtime.session import get_or_create_session

    spark = get_or_create_session(Configuration({"parallelism.default": 2, "kindling.log.level": "ERROR"}))
    with tempfile.TemporaryDirectory(prefix="kindling-reconcile-bench-") as tmp:
        root = Path(tmp)
        broker = LocalKafka(data_dir=root / "kafka")
        broker.start()
        try:
            for name, records in (("warmup", 10_000), ("timed", args.records)):
                broker.create_topic(name, partitions=4)
                produce(broker.bootstrap_servers, name, records)
                (root / name).mkdir()
                streaming, reconciling, report = run(spark, broker.bootstrap_servers, name, records, root / name)
                if not report.full_match:
                    raise SystemExit(f"the reconciliation found differences:\n{report}")
            sink = report.sinks[0]
            print(f"records={args.records} windows_compared={sink.comparison.matched} open_windows={sink.open_windows}")
            print(f"streaming run: {args.records / streaming:,.0f} records/s ({streaming:.1f} s)")
            print(f"reconcile: {args.records / reconciling:,.0f} records/s ({reconciling:.1f} s)")
            print(f"ratio={reconciling / streaming:.3f}")
        finally:
            broker.stop()
            spark.stop()


if __name__ == "__main__":
    main()

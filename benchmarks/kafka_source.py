"""Kafka source throughput: kindling's Kafka source into Spark's noop sink vs a plain confluent-kafka loop.

Starts its own local broker, produces N JSON records
``{"timestamp": "<Flink SQL timestamp>", "page": "/help", "user": <int>}`` over a 4-partition topic
(current timestamps: the broker applies 7-day retention by record time), then measures

(a) ``spark.readStream.format("kindling_kafka") -> writeStream.format("noop")`` with
    Trigger.AvailableNow, parallelism 2 — only the query is timed, after an untimed warm-up query
    on a 10k-record topic;
(b) one confluent-kafka consumer assigned to every partition, ``json.loads`` on every value, run
    before and after (a); the faster of the two runs is the reference.

Prints both rates in rows/s and, last, ``ratio=<kindling/plain>``.

    python benchmarks/kafka_source.py [--records 1000000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from datetime import datetime, timezone

from confluent_kafka import Consumer, Producer, TopicPartition

from kindling.local.kafka import LocalKafka

PARTITIONS = 4


def produce(servers: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 20, "batch.num.messages": 10000,
                         "queue.buffering.max.messages": 500000, "compression.type": "none"})
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    for i in range(count):
        value = b'{"timestamp": "%s", "page": "/help", "user": %d}' % (stamp.encode(), i)
        while True:
            try:
                producer.produce(topic, value, partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10000 == 0:
            producer.poll(0)
    remaining = producer.flush(120)
    if remaining:
        raise RuntimeError(f"{remaining} records were not delivered")


def run_kindling(servers: str, topic: str, expected: int, warmup_topic: str) -> float:
    from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

    from kindling.config import Configuration
    from kindling.connectors.base import with_eos
    from kindling.runtime.session import get_or_create_session

    spark = get_or_create_session(Configuration({"parallelism.default": 2, "kindling.log.level": "ERROR"}))
    try:
        schema = StructType([StructField("timestamp", TimestampType()), StructField("page", StringType()),
                             StructField("user", LongType())])
        def source(name):
            return (spark.readStream.format("kindling_kafka").schema(with_eos(schema))
                    .options(**{"properties.bootstrap.servers": servers, "topic": name, "format": "json",
                                "scan.startup.mode": "earliest-offset"}).load())

        # Warm-up (JVM code paths, Python workers) on a small topic; not timed.
        warm = (source(warmup_topic).writeStream.format("noop")
                .option("checkpointLocation", tempfile.mkdtemp(prefix="kindling-bench-"))
                .trigger(availableNow=True).start())
        warm.awaitTermination()
        df = source(topic)
        checkpoint = tempfile.mkdtemp(prefix="kindling-bench-")
        start = time.perf_counter()
        query = (df.writeStream.format("noop").option("checkpointLocation", checkpoint)
                 .trigger(availableNow=True).start())
        query.awaitTermination()
        elapsed = time.perf_counter() - start
        rows = sum(p["numInputRows"] for p in query.recentProgress)
        if rows != expected:
            raise RuntimeError(f"kindling read {rows} rows, expected {expected}")
        return elapsed
    finally:
        spark.stop()


def run_plain(servers: str, topic: str, expected: int) -> float:
    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False, "enable.partition.eof": False})
    start = time.perf_counter()
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen = 0
    loads = json.loads
    while seen < expected:
        for message in consumer.consume(num_messages=10000, timeout=1.0):
            if message.error() is None:
                loads(message.value())
                seen += 1
    elapsed = time.perf_counter() - start
    consumer.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    args = parser.parse_args()
    n = args.records
    with LocalKafka() as kafka:
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        kafka.create_topic(topic, partitions=PARTITIONS)
        t = time.perf_counter()
        produce(kafka.bootstrap_servers, topic, n)
        print(f"produced {n} records in {time.perf_counter() - t:.1f} s")
        first_plain = run_plain(kafka.bootstrap_servers, topic, n)
        print(f"plain confluent-kafka + json.loads (run 1): {n / first_plain:,.0f} rows/s ({first_plain:.1f} s)")
        warmup = f"warmup-{uuid.uuid4().hex[:8]}"
        kafka.create_topic(warmup, partitions=PARTITIONS)
        produce(kafka.bootstrap_servers, warmup, 10_000)
        kindling = run_kindling(kafka.bootstrap_servers, topic, n, warmup)
        print(f"kindling kafka source -> noop (availableNow, parallelism 2): {n / kindling:,.0f} rows/s ({kindling:.1f} s)")
        second_plain = run_plain(kafka.bootstrap_servers, topic, n)
        print(f"plain confluent-kafka + json.loads (run 2): {n / second_plain:,.0f} rows/s ({second_plain:.1f} s)")
        plain = min(first_plain, second_plain)  # the better plain run: the ratio is not flattered
        print(f"ratio={(n / kindling) / (n / plain):.2f}")


if __name__ == "__main__":
    main()

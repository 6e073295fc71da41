"""Kafka sink throughput: kindling's exactly-once and at-least-once sinks vs a plain confluent-kafka producer.

Starts its own local broker and, in the same run, publishes N JSON records
``{"id": <bigint>, "payload": "<20 hex chars>"}`` to fresh 4-partition topics four ways:

(a) Spark's ``rate-micro-batch`` source (JVM, N rows in one micro-batch, 2 partitions) ->
    ``writeStream.format("kindling_kafka")`` with ``sink.delivery-guarantee = exactly-once``:
    executors encode, the driver publishes the micro-batch in Kafka transactions, with
    ``sink.parallelism`` = 2 (two transactional publishers, as many as the session's parallelism)
    and = 1 (one transaction per batch); Trigger.AvailableNow. The source is Spark's own so that the
    figure is the sink's: kindling's Python ``datagen`` alone reaches ~0.7M rows/s here;
(b) the same query with ``at-least-once`` (executors produce and wait for acknowledgements);
(c) one confluent-kafka producer formatting and producing every record in a loop, then flushing.

Only the queries / the loop are timed, after an untimed warm-up query on 1M rows (the JVM's JIT
makes the first large batch of a session ~2x slower). A query's rate is
N over the time of its micro-batches (reading, encoding, publishing; Spark's ``triggerExecution``),
which is what a long-running job sustains; the rate including the query's start-up and shut-down
(seconds of fixed cost on 2 cores) is printed beside it. Each output topic is read back
(read_committed) to check that it holds exactly N records, then deleted. Prints each rate in
records/s and, last, ``ratio=<exactly-once/plain>`` on the micro-batch rate of the default, one publisher
(two publishers help only where the driver has cores to spare: on 2 cores the broker and librdkafka's
threads already use the second).

The local broker (noida-db) answers a fetch with everything it holds, ignoring ``fetch.max.bytes``, so
the read-back consumer allows responses up to 1 GB (at 2M records one response is ~110 MB).

    python benchmarks/kafka_sink.py [--records 2000000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition

from kindling.local.kafka import LocalKafka

PARTITIONS = 4
PAYLOAD_LENGTH = 20
WARMUP_RECORDS = 1_000_000


def count_committed(servers: str, topic: str, expected: int, timeout: float = 300, isolation: str = "read_committed") -> int:
    # The local broker answers a fetch with everything it has, ignoring fetch.max.bytes: allow big responses.
    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False, "isolation.level": isolation,
                         "receive.message.max.bytes": 1_000_000_000})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        seen = 0
        deadline = time.monotonic() + timeout
        idle_until = None
        while time.monotonic() < deadline:
            messages = consumer.consume(num_messages=10000, timeout=0.5)
            seen += sum(1 for m in messages if m.error() is None)
            if seen >= expected:
                idle_until = idle_until or time.monotonic() + 1.0  # a moment more: duplicates would show
                if time.monotonic() > idle_until:
                    break
        return seen
    finally:
        consumer.close()


def check(kafka, topic: str, n: int) -> None:
    """The topic holds exactly n committed records; then it is deleted (the local broker keeps data in memory)."""
    seen = count_committed(kafka.bootstrap_servers, topic, n)
    if seen != n:
        raise RuntimeError(f"topic {topic} holds {seen} committed records, expected {n}")
    kafka.delete_topic(topic)


def run_plain(servers: str, topic: str, n: int) -> float:
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 20, "batch.num.messages": 10000,
                         "queue.buffering.max.messages": 1000000, "queue.buffering.max.kbytes": 1048576})
    payload = b"0123456789abcdef0123"
    start = time.perf_counter()
    produce, poll = producer.produce, producer.poll
    for i in range(n):
        value = b'{"id":%d,"payload":"%s"}' % (i, payload)
        while True:
            try:
                produce(topic, value)
                break
            except BufferError:
                poll(0.05)
    remaining = producer.flush(300)
    elapsed = time.perf_counter() - start
    if remaining:
        raise RuntimeError(f"{remaining} records were not delivered")
    return elapsed


def run_kindling(spark, servers: str, topic: str, n: int, guarantee: str, publishers: int = 1) -> tuple[float, float]:
    from pyspark.sql import functions as F

    from kindling.connectors.base import spark_format

    # Under Trigger.AvailableNow the rate-micro-batch source yields exactly one batch of rowsPerBatch rows.
    rows = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", n).option("numPartitions", 2).load()
            .select(F.col("value").alias("id"), F.lpad(F.hex(F.col("value") * 7919), PAYLOAD_LENGTH, "0").alias("payload")))
    options = {"properties.bootstrap.servers": servers, "topic": topic, "format": "json",
               "sink.delivery-guarantee": guarantee}
    if guarantee == "exactly-once":
        options["sink.transactional-id-prefix"] = f"bench-{uuid.uuid4().hex[:8]}"
        options["sink.parallelism"] = str(publishers)
    start = time.perf_counter()
    query = (rows.writeStream.format(spark_format("kafka")).options(**options)
             .option("checkpointLocation", tempfile.mkdtemp(prefix="kindling-bench-"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    elapsed = time.perf_counter() - start
    if query.exception() is not None:
        raise RuntimeError(f"the {guarantee} query failed: {query.exception()}")
    # The micro-batches' own time: reading, encoding and publishing, without the query's start-up
    # (planning the Python data sources, starting workers) and shut-down.
    batches = sum(p["durationMs"].get("triggerExecution", 0) for p in query.recentProgress if p["numInputRows"]) / 1000
    return elapsed, batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=2_000_000)
    args = parser.parse_args()
    n = args.records
    from kindling.config import Configuration
    from kindling.runtime.session import get_or_create_session

    rates: dict[str, float] = {}
    with LocalKafka() as kafka:
        servers = kafka.bootstrap_servers
        topics = {name: f"bench-{name}-{uuid.uuid4().hex[:6]}" for name in ("warmup", "eo", "eo1", "alo", "plain")}
        for topic in topics.values():
            kafka.create_topic(topic, partitions=PARTITIONS)
        spark = get_or_create_session(Configuration({"parallelism.default": 2, "kindling.log.level": "ERROR"}))
        try:
            # Untimed warm-up at scale: the JVM compiles the hot paths (rate source, Arrow conversion) during the
            # first large batch, which otherwise runs ~2x slower and would penalise whichever variant runs first.
            run_kindling(spark, servers, topics["warmup"], min(n, WARMUP_RECORDS), "exactly-once", 2)
            kafka.delete_topic(topics["warmup"])
            for name, guarantee, publishers in (("eo", "exactly-once", 2), ("eo1", "exactly-once", 1),
                                                ("alo", "at-least-once", 1)):
                elapsed, batches = run_kindling(spark, servers, topics[name], n, guarantee, publishers)
                rates[name] = n / batches
                rates[name + "-e2e"] = n / elapsed
                label = f"{guarantee}, sink.parallelism {publishers}" if guarantee == "exactly-once" else guarantee
                print(f"kindling rate-micro-batch -> kafka sink, {label} (availableNow, 2 tasks): "
                      f"{rates[name]:,.0f} records/s in micro-batches ({batches:.1f} s); "
                      f"{rates[name + '-e2e']:,.0f} records/s with query start-up ({elapsed:.1f} s)", flush=True)
                check(kafka, topics[name], n)
        finally:
            spark.stop()
        elapsed = run_plain(servers, topics["plain"], n)
        rates["plain"] = n / elapsed
        print(f"plain confluent-kafka producer loop: {rates['plain']:,.0f} records/s ({elapsed:.1f} s)", flush=True)
        check(kafka, topics["plain"], n)
        print(f"exactly-once/plain with query start-up={rates['eo1-e2e'] / rates['plain']:.2f}")
        print(f"exactly-once with two publishers/plain={rates['eo'] / rates['plain']:.2f}")
        print(f"at-least-once/plain={rates['alo'] / rates['plain']:.2f}")
        print(f"ratio={rates['eo1'] / rates['plain']:.2f}")


if __name__ == "__main__":
    main()

"""Helpers shared by the Kafka connector tests: producing records and running availableNow queries."""

from __future__ import annotations

import time
from typing import Iterable, Optional

from confluent_kafka import Producer

from kindling.connectors.kafka.tail import TopicTail


def produce(servers: str, topic: str, records: Iterable[tuple], timestamp_ms: Optional[int] = None) -> list[tuple[int, int]]:
    """Produce ``(partition, value[, key[, headers]])`` records; return each record's (partition, offset)."""
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5})
    delivered: dict[int, tuple[int, int]] = {}
    errors: list[str] = []

    def report(index):
        def callback(error, message):
            if error is not None:
                errors.append(str(error))
            else:
                delivered[index] = (message.partition(), message.offset())
        return callback

    count = 0
    for index, record in enumerate(records):
        partition, value, key, headers = (tuple(record) + (None, None))[:4]
        kwargs = {"partition": partition, "key": key, "headers": headers, "on_delivery": report(index)}
        if timestamp_ms is not None:
            kwargs["timestamp"] = timestamp_ms
        producer.produce(topic, value, **kwargs)
        count += 1
        producer.poll(0)
    assert producer.flush(30) == 0
    assert not errors, errors
    return [delivered[i] for i in range(count)]


def read_back(servers: str, topic: str, expected: int, timeout: float = 30) -> list:
    """Every record of a topic, read by a plain consumer, until ``expected`` records arrived."""
    with TopicTail({"bootstrap.servers": servers}, [topic]) as tail:
        records = []
        deadline = time.monotonic() + timeout
        while len(records) < expected and time.monotonic() < deadline:
            for message in tail.poll(0.5):
                assert message.error() is None, message.error()
                records.append(message)
        # Anything beyond the expected count would be a duplicate: give it a short chance to show up.
        records.extend(m for m in tail.poll(0.5) if m.error() is None)
        return records


def run_available_now(spark, df, checkpoint: str, timeout: float = 120):
    """Run ``df`` with Trigger.AvailableNow, collecting every micro-batch on the driver; return (rows, query)."""
    rows: list = []
    query = (df.writeStream.foreachBatch(lambda batch, batch_id: rows.extend(batch.collect()))
             .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    finished = query.awaitTermination(timeout)
    assert finished, f"query did not finish within {timeout} s"
    return rows, query

"""Bounded Kafka reads (scan.bounded.mode): the job ends by itself at the right offsets, and
event-time windows still open at the end fire, as with Flink's final watermark."""

from __future__ import annotations

import json
import time

import pytest
from confluent_kafka import Producer
from pyspark.sql import functions as F

from kindling import TumblingEventTimeWindows, WatermarkStrategy
from kindling.connectors.kafka import KafkaOffsetsInitializer, KafkaSource
from kindling.connectors.kafka.options import source_config
from kindling.options import OptionError

pytestmark = pytest.mark.integration

BASE_MS = (int(time.time() * 1000) // 60_000 - 30) * 60_000  # a recent whole minute, inside the broker's retention


def _produce(servers: str, topic: str, ids: range) -> None:
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5})
    for i in ids:
        value = {"id": i, "ts": BASE_MS + i * 1000}
        producer.produce(topic, json.dumps(value).encode(), partition=i % 4, timestamp=BASE_MS + i * 1000)
    assert producer.flush(30) == 0


def _source(servers: str, topic: str, stop: KafkaOffsetsInitializer):
    return (
        KafkaSource.builder()
        .set_bootstrap_servers(servers)
        .set_topics(topic)
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_bounded(stop)
        .set_value_format("json")
        .set_schema("id BIGINT, ts BIGINT")
        .with_metadata("partition", "partition")
        .with_metadata("offset", "offset")
        .build()
    )


def test_latest_offset_reads_what_was_there_at_start_and_finishes(kafka, topic, env):
    _produce(kafka.bootstrap_servers, topic, range(40))
    source = _source(kafka.bootstrap_servers, topic, KafkaOffsetsInitializer.latest())
    assert source.bounded
    rows = env.from_source(source).execute_and_collect(timeout=180)
    assert sorted(r.id for r in rows) == list(range(40))


def test_timestamp_and_specific_offsets_end_at_the_right_records(kafka, topic, env):
    _produce(kafka.bootstrap_servers, topic, range(40))
    # Records with timestamps at or after BASE + 20 s are not read: ids 0..19.
    by_time = env.from_source(_source(kafka.bootstrap_servers, topic, KafkaOffsetsInitializer.timestamp(BASE_MS + 20_000)))
    assert sorted(r.id for r in by_time.execute_and_collect(timeout=180)) == list(range(20))
    # Partition 0 holds ids 0, 4, 8, ...: stop it after 3 records; the other partitions read to their end.
    by_offset = env.from_source(_source(kafka.bootstrap_servers, topic, KafkaOffsetsInitializer.offsets({0: 3})))
    rows = by_offset.execute_and_collect(timeout=180)
    assert sorted(r.id for r in rows if r.partition == 0) == [0, 4, 8]
    assert sorted(r.id for r in rows if r.partition != 0) == [i for i in range(40) if i % 4]


def test_bounded_read_fires_the_last_event_time_windows(kafka, topic, env):
    _produce(kafka.bootstrap_servers, topic, range(40))
    strategy = WatermarkStrategy.for_bounded_out_of_orderness("5 s").with_timestamp_assigner("ts")
    stream = env.from_source(_source(kafka.bootstrap_servers, topic, KafkaOffsetsInitializer.latest()), strategy)
    counts = stream.map(F.col("id"), (F.col("id") % 2).alias("parity")).key_by("parity").window(TumblingEventTimeWindows.of("10 s")).count()
    rows = counts.execute_and_collect(timeout=180)
    # 40 records, one per second: four 10-second windows per parity, five records each, the last
    # window included although no later record ever moves the watermark past it.
    assert sorted((r.parity, r["count"]) for r in rows) == [(0, 5)] * 4 + [(1, 5)] * 4


def test_bounded_options_are_validated():
    base = {"properties.bootstrap.servers": "127.0.0.1:9", "topic": "t", "format": "json"}
    with pytest.raises(OptionError) as err:
        source_config({**base, "scan.bounded.mode": "timestamp"})
    assert "scan.bounded.timestamp-millis" in str(err.value)
    with pytest.raises(OptionError) as err:
        source_config({**base, "scan.bounded.mode": "specific-offsets", "scan.bounded.specific-offsets": "p0=3"})
    assert "scan.bounded.specific-offsets" in str(err.value)
    with pytest.raises(OptionError) as err:
        source_config({**base, "scan.bounded.mode": "sometime"})
    assert "latest-offset" in str(err.value)
    with pytest.raises(ValueError):
        KafkaSource.builder().set_bounded(KafkaOffsetsInitializer.earliest())


def test_end_of_stream_record_stops_each_partition(kafka, topic, env):
    """FLIP-208: each partition ends before its first record the evaluator accepts; the job finishes."""
    _produce(kafka.bootstrap_servers, topic, range(40))  # partition p holds ids p, p+4, p+8, ...
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(kafka.bootstrap_servers)
        .set_topics(topic)
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_value_format("json")
        .set_schema("id BIGINT, ts BIGINT")
        .set_option("scan.max-records-per-trigger", 8)  # the end records are found across several batches
        .set_eof_record_evaluator(lambda record: record.id >= 22)
        .build()
    )
    assert source.bounded, "a source with an end-of-stream evaluator ends by itself"
    rows = env.from_source(source).execute_and_collect(timeout=180)
    # Partition 0 stops at 24, 1 at 25, 2 at 22, 3 at 23: none of those, nor anything after, is read.
    assert sorted(r.id for r in rows) == list(range(22))

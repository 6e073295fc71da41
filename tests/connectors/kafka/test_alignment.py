"""Watermark alignment and idleness: a fast partition is held back instead of making a slow one late."""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections import Counter

import pytest

from kindling.connectors.kafka import KafkaOffsetsInitializer, KafkaSink, KafkaSource
from kindling.connectors.kafka.options import source_config
from kindling.datastream import TumblingEventTimeWindows, WatermarkStrategy
from kindling.options import OptionError
from kindling.runtime.progress import QueryMetrics

sys.path.insert(0, os.path.dirname(__file__))
from kafka_helpers import produce, read_back  # noqa: E402

PER_PARTITION = 180  # one record per event-time second: three one-minute windows per partition
NOW_MS = (int(time.time()) // 3600) * 3600 * 1000  # recent (broker retention), whole hour
HOUR_MS = 3600 * 1000


def test_alignment_needs_group_and_drift():
    base = {"topic": "t", "properties.bootstrap.servers": "h:1", "format": "json"}
    with pytest.raises(OptionError, match="'scan.watermark.alignment.max-drift' is required"):
        source_config(base | {"scan.watermark.alignment.group": "g"})
    config = source_config(base | {"scan.watermark.alignment.group": "g", "scan.watermark.alignment.max-drift": "30 s",
                                   "scan.watermark.idle-timeout": "5 s", "kindling.table.rowtime": "ts"})
    assert (config.alignment_max_drift_ms, config.idle_timeout_s, config.rowtime) == (30_000, 5.0, "ts")


def two_partitions(kafka, slow_offset_ms: int, unit_ms: int = 1) -> str:
    """Partition 0 holds events an hour older than partition 1; each partition is in event-time order;
    ``ts`` counts ``unit_ms`` milliseconds (1: epoch millis, 1000: epoch seconds)."""
    topic = f"align-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, partitions=2)
    records = []
    for i in range(PER_PARTITION):
        for partition, base in ((0, NOW_MS - slow_offset_ms), (1, NOW_MS)):
            records.append((partition, json.dumps({"part": partition, "seq": i, "ts": (base + i * 1000) // unit_ms}).encode()))
    produce(kafka.bootstrap_servers, topic, records)
    return topic


def window_counts(env, kafka, topic, strategy, name):
    source = (KafkaSource.builder().set_bootstrap_servers(kafka.bootstrap_servers).set_topics(topic)
              .set_starting_offsets(KafkaOffsetsInitializer.earliest()).set_bounded(KafkaOffsetsInitializer.latest())
              .set_value_format("json").set_schema("part INT, seq INT, ts BIGINT")
              .set_option("scan.max-records-per-trigger", 60).build())
    out = f"{topic}-{name}"
    kafka.create_topic(out, partitions=1)
    counts = env.from_source(source, strategy).key_by("part").window(TumblingEventTimeWindows.of("1 min")).count()
    counts.sink_to(KafkaSink.builder().set_bootstrap_servers(kafka.bootstrap_servers).set_topic(out)
                   .set_value_format("json").build()).uid("counts")
    client = env.execute(f"{name}-{topic}")
    assert client.get_job_status() == "FINISHED"
    progress = client.queries["counts"].recentProgress
    dropped = sum(op.get("numRowsDroppedByWatermark", 0) for p in progress for op in p.get("stateOperators", []))
    state_rows = max((op.get("numRowsTotal", 0) for p in progress for op in p.get("stateOperators", [])), default=0)
    lags = [QueryMetrics.from_progress(p).partition_lag for p in progress]
    results = [json.loads(m.value()) for m in read_back(kafka.bootstrap_servers, out, expected=1, timeout=10)]
    per_partition = Counter()
    for row in results:
        per_partition[row["part"]] += row["count"]
    return per_partition, dropped, state_rows, lags


@pytest.mark.integration
def test_alignment_keeps_the_slow_partition_and_bounds_state(env, kafka):
    topic = two_partitions(kafka, HOUR_MS)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness("5 s").with_timestamp_assigner("ts")

    # Without alignment options, Flink's per-split watermark still holds: the fast partition waits
    # until the slow one is read to its end, so Spark's single watermark makes none of it late
    # (taking 30 records of each, as Spark's watermark alone would, drops the slow partition's rest).
    default, dropped, _, lags = window_counts(env, kafka, topic, strategy, "default")
    assert default == {0: PER_PARTITION, 1: PER_PARTITION}, "every record counted, none late"
    assert dropped == 0
    assert lags[0] == {f"{topic}/0": PER_PARTITION - 60, f"{topic}/1": PER_PARTITION}, "the slow partition's first 60 records first"

    # A drift larger than the out-of-orderness: every partition is cut at the same event time, so
    # none becomes late whatever the drift.
    aligned_strategy = strategy.with_watermark_alignment(f"g-{topic}", "20 s", "10 ms")
    aligned, dropped, state_rows, lags = window_counts(env, kafka, topic, aligned_strategy, "aligned")
    assert aligned == {0: PER_PARTITION, 1: PER_PARTITION}, "every record counted, none late"
    assert dropped == 0
    # Open windows stay within the drift: at most two windows per key (one closing, one filling).
    assert 0 < state_rows <= 4, state_rows
    assert lags[0][f"{topic}/1"] == PER_PARTITION, "the fast partition is held back entirely at first"
    assert len(lags) >= 2 * PER_PARTITION // 60


@pytest.mark.integration
def test_idle_partition_does_not_stall_alignment(env, kafka):
    """Partition 0 stops receiving records; with an idle timeout partition 1 keeps flowing."""
    topic = f"idle-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, partitions=2)
    records = [(0, json.dumps({"part": 0, "seq": i, "ts": NOW_MS + i * 1000}).encode()) for i in range(10)]
    records += [(1, json.dumps({"part": 1, "seq": i, "ts": NOW_MS + i * 1000}).encode()) for i in range(200)]
    produce(kafka.bootstrap_servers, topic, records)
    source = (KafkaSource.builder().set_bootstrap_servers(kafka.bootstrap_servers).set_topics(topic)
              .set_starting_offsets(KafkaOffsetsInitializer.earliest())
              .set_value_format("json").set_schema("part INT, seq INT, ts BIGINT").build())
    strategy = (WatermarkStrategy.for_bounded_out_of_orderness("5 s").with_timestamp_assigner("ts")
                .with_watermark_alignment(f"g-{topic}", "5 s", "10 ms").with_idleness("1 s"))
    out = f"{topic}-out"
    kafka.create_topic(out, partitions=1)
    counts = env.from_source(source, strategy).key_by("part").window(TumblingEventTimeWindows.of("1 min")).count()
    counts.sink_to(KafkaSink.builder().set_bootstrap_servers(kafka.bootstrap_servers).set_topic(out)
                   .set_value_format("json").build())
    client = env.execute_async(f"idle-{topic}")
    try:
        # Windows of partition 1 up to its fourth minute can only fire if partition 0 (stuck at its
        # tenth second) stopped holding partition 1 back.
        results = read_back(kafka.bootstrap_servers, out, expected=4, timeout=120)
    finally:
        client.cancel()
    fired = sorted((json.loads(m.value())["part"], json.loads(m.value())["window_start"]) for m in results)
    assert [p for p, _ in fired].count(1) >= 3, fired
    assert (0, fired[0][1]) in fired, "partition 0's only window fired too"


@pytest.mark.integration
def test_the_driver_finds_a_partitions_last_event_time_past_transaction_markers(kafka):
    """A topic written transactionally ends with a commit marker, not a record: the probe reads past it
    (and past an aborted transaction) to the last committed record, without waiting out a timeout."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    from kindling.connectors.kafka.alignment import EventTimeProbe

    topic = f"probe-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, partitions=1)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": f"probe-{topic}"})
    producer.init_transactions()
    for abort, times in ((False, range(0, 5)), (True, range(100, 103))):
        producer.begin_transaction()
        for seconds in times:
            producer.produce(topic, json.dumps({"ts": NOW_MS + seconds * 1000}).encode(), partition=0)
        producer.flush(10)  # abort would otherwise purge the unsent records
        producer.abort_transaction() if abort else producer.commit_transaction()

    def consumer():
        return Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": f"p-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.partition.eof": True, "isolation.level": "read_committed"})

    metadata = consumer()
    low, high = metadata.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    assert high >= 9, "5 records, a commit marker, 3 aborted records and an abort marker"
    probe = EventTimeProbe(consumer, lambda: metadata, lambda value: json.loads(value)["ts"])
    try:
        started = time.monotonic()
        assert probe.last_time((topic, 0), low, high) == NOW_MS + 4000
        assert probe.time_at((topic, 0), 5) is None, "nothing committed at or after the first marker"
        assert probe.first_offset_after((topic, 0), NOW_MS + 2500, low, high, near_end=True) == 3
        assert time.monotonic() - started < 5, "markers are passed at the partition's end, not by timeouts"
    finally:
        probe.close()
        metadata.close()


@pytest.mark.integration
def test_a_query_without_event_time_state_copies_past_a_quiet_partition(env, kafka):
    """Flink holds back the watermark, never the records: a copy of a watermarked table keeps going
    while partition 0 is quiet an hour behind partition 1 (held back, partition 1 would wait forever)."""
    topic = two_partitions(kafka, HOUR_MS)
    out = f"{topic}-copy"
    kafka.create_topic(out, partitions=1)
    servers = kafka.bootstrap_servers
    env.execute_sql(f"""CREATE TABLE src (part INT, seq INT, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3),
                        WATERMARK FOR rt AS rt - INTERVAL '5' SECOND)
                        WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{servers}',
                              'scan.startup.mode' = 'earliest-offset', 'format' = 'json')""")
    env.execute_sql(f"""CREATE TABLE dst (part INT, seq INT)
                        WITH ('connector' = 'kafka', 'topic' = '{out}', 'properties.bootstrap.servers' = '{servers}',
                              'format' = 'json')""")
    client = env.execute_sql("INSERT INTO dst SELECT part, seq FROM src WHERE seq >= 0").get_job_client()
    try:
        records = read_back(servers, out, expected=2 * PER_PARTITION, timeout=120)
    finally:
        client.cancel()
    assert Counter(json.loads(m.value())["part"] for m in records) == {0: PER_PARTITION, 1: PER_PARTITION}


@pytest.mark.integration
def test_a_rowtime_computed_from_epoch_seconds_keeps_a_watermark_per_partition(env, kafka):
    """``TO_TIMESTAMP_LTZ(sec, 0) + INTERVAL``: the source reads seconds and converts them, so the partition an
    hour ahead waits for the slow one and no window loses records (before, such a rowtime was not traced to
    its column and Spark's single watermark made most of partition 0 late)."""
    topic = two_partitions(kafka, HOUR_MS, unit_ms=1000)
    servers = kafka.bootstrap_servers
    script = f"""
        CREATE TABLE src (part INT, seq INT, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 0) + INTERVAL '1' MINUTE,
                          WATERMARK FOR rt AS rt - INTERVAL '5' SECOND)
        WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{servers}',
              'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
              'scan.max-records-per-trigger' = '60', 'format' = 'json');
        CREATE TABLE dst (part INT, window_start TIMESTAMP(3), n BIGINT)
        WITH ('connector' = 'kafka', 'topic' = '{topic}-counts', 'properties.bootstrap.servers' = '{servers}',
              'format' = 'json');
        INSERT INTO dst SELECT part, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
        GROUP BY part, window_start, window_end;
        """
    kafka.create_topic(f"{topic}-counts", partitions=1)
    assert env.sql_session().execute_script(script)[-1].wait(timeout=300) == "FINISHED"
    rows = [json.loads(m.value()) for m in read_back(servers, f"{topic}-counts", expected=6, timeout=30)]
    assert sorted((r["part"], r["n"]) for r in rows) == [(0, 60)] * 3 + [(1, 60)] * 3, rows

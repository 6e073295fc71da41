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


def two_partitions(kafka, slow_offset_ms: int) -> str:
    """Partition 0 holds events an hour older than partition 1; each partition is in event-time order."""
    topic = f"align-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, partitions=2)
    records = []
    for i in range(PER_PARTITION):
        for partition, base in ((0, NOW_MS - slow_offset_ms), (1, NOW_MS)):
            records.append((partition, json.dumps({"part": partition, "seq": i, "ts": base + i * 1000}).encode()))
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

    # Without alignment the fast partition pushes Spark's single watermark an hour ahead: the slow
    # partition's records after the first batch are dropped as late.
    unaligned, dropped, _, lags = window_counts(env, kafka, topic, strategy, "unaligned")
    assert unaligned[1] == PER_PARTITION
    assert unaligned[0] < PER_PARTITION and dropped > 0
    assert lags[0] == {f"{topic}/0": PER_PARTITION - 30, f"{topic}/1": PER_PARTITION - 30}, "lag per partition after the first 60 records"

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

"""The Kafka source against the local broker: startup modes, exact counts, metadata, malformed records."""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from datetime import datetime, timezone

import pytest
from confluent_kafka import Consumer, TopicPartition
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kindling.connectors.base import EOS_COLUMN, with_eos
from kindling.connectors.kafka.options import metadata_option

sys.path.insert(0, os.path.dirname(__file__))
from kafka_helpers import produce, run_available_now  # noqa: E402

pytestmark = pytest.mark.integration

VALUES = StructType([
    StructField("ts", TimestampType()),
    StructField("page", StringType()),
    StructField("user", LongType()),
])


def reader(spark, kafka, topic, schema=VALUES, **options):
    opts = {
        "properties.bootstrap.servers": kafka.bootstrap_servers,
        "topic": topic,
        "format": "json",
        "scan.startup.mode": "earliest-offset",
        **options,
    }
    return spark.readStream.format("kindling_kafka").schema(with_eos(schema)).options(**opts).load()


def record(user: int, page: str = "/help", ts: str = "2026-11-22 01:02:03.123") -> bytes:
    return json.dumps({"ts": ts, "page": page, "user": user}).encode()


def test_reads_every_record_once_with_metadata(spark, kafka, topic, checkpoint_dir):
    now_ms = int(time.time() * 1000)
    records = []
    for i in range(400):
        ts = "2026-11-22 01:02:03.123" if i % 2 else "2026-11-22T01:02:03.123Z"  # Flink SQL and ISO-8601
        headers = [("trace", f"t{i}".encode())] if i % 5 == 0 else None
        records.append((i % 4, record(i, ts=ts), f"k{i}".encode(), headers))
    placed = produce(kafka.bootstrap_servers, topic, records)

    schema = StructType(VALUES.fields + [
        StructField("kts", TimestampType()), StructField("part", IntegerType()), StructField("off", LongType()),
        StructField("k", BinaryType()), StructField("hdrs", MapType(StringType(), BinaryType())),
        StructField("src", StringType()),
    ])
    df = reader(spark, kafka, topic, schema,
                **{"kindling.table.metadata": metadata_option(
                    [("kts", "timestamp"), ("part", "partition"), ("off", "offset"), ("k", "key"), ("hdrs", "headers"), ("src", "topic")])})
    rows, _ = run_available_now(spark, df, checkpoint_dir)

    assert len(rows) == 400
    by_user = {r["user"]: r for r in rows}
    assert sorted(by_user) == list(range(400))
    expected_ts = datetime(2026, 11, 22, 1, 2, 3, 123000)
    for user, (partition, offset) in enumerate(placed):
        row = by_user[user]
        assert (row["part"], row["off"]) == (partition, offset)
        assert row["k"] == f"k{user}".encode()
        assert row["src"] == topic and row["page"] == "/help"
        assert row["ts"] == expected_ts, row["ts"]  # both timestamp forms, read as UTC (session zone UTC)
        assert abs(row["kts"].replace(tzinfo=timezone.utc).timestamp() * 1000 - now_ms) < 120_000
        assert (row["hdrs"] == {"trace": f"t{user}".encode()}) if user % 5 == 0 else not row["hdrs"]
        assert row[EOS_COLUMN] in (None, False)


def test_startup_modes(spark, kafka, topic, tmp_path):
    servers = kafka.bootstrap_servers
    old_ms = int(time.time() * 1000) - 60_000
    boundary = old_ms + 30_000
    # 20 older records (5 per partition), then 20 newer ones.
    produce(servers, topic, [(i % 4, record(i)) for i in range(20)], timestamp_ms=old_ms)
    produce(servers, topic, [(i % 4, record(i)) for i in range(20, 40)])

    def users(name, **options):
        rows, _ = run_available_now(spark, reader(spark, kafka, topic, **options), str(tmp_path / name))
        return sorted(r["user"] for r in rows)

    assert users("earliest") == list(range(40))
    assert users("timestamp", **{"scan.startup.mode": "timestamp",
                                 "scan.startup.timestamp-millis": str(boundary)}) == list(range(20, 40))
    # partition 0 holds users 0,4,...,36 at offsets 0..9; partition 1 holds 1,5,...,37.
    specific = users("specific", **{"scan.startup.mode": "specific-offsets",
                                    "scan.startup.specific-offsets": "partition:0,offset:7;partition:1,offset:10"})
    assert specific == sorted([28, 32, 36] + [u for u in range(40) if u % 4 in (2, 3)])

    group = f"g-{uuid.uuid4().hex[:8]}"
    committer = Consumer({"bootstrap.servers": servers, "group.id": group, "enable.auto.commit": False})
    committer.commit(offsets=[TopicPartition(topic, 0, 8), TopicPartition(topic, 2, 10)], asynchronous=False)
    committer.close()
    from_group = users("group", **{"scan.startup.mode": "group-offsets", "properties.group.id": group})
    # p0 from 8 (users 32, 36), p2 from its end (nothing), p1/p3 not committed: earliest.
    assert from_group == sorted([32, 36] + [u for u in range(40) if u % 4 in (1, 3)])
    checker = Consumer({"bootstrap.servers": servers, "group.id": group, "enable.auto.commit": False})
    committed = checker.committed([TopicPartition(topic, p) for p in range(4)], timeout=10)
    checker.close()
    assert [tp.offset for tp in committed][:3:2] == [8, 10]  # the source never commits to Kafka
    assert committed[1].offset < 0 and committed[3].offset < 0

    # latest-offset: nothing of what exists; what comes after the start is read (same checkpoint).
    latest_dir = str(tmp_path / "latest")
    rows, _ = run_available_now(spark, reader(spark, kafka, topic, **{"scan.startup.mode": "latest-offset"}), latest_dir)
    assert rows == []
    produce(servers, topic, [(i % 4, record(i)) for i in range(100, 106)])
    rows, _ = run_available_now(spark, reader(spark, kafka, topic, **{"scan.startup.mode": "latest-offset"}), latest_dir)
    assert sorted(r["user"] for r in rows) == list(range(100, 106))


def test_max_records_per_trigger_limits_each_batch(spark, kafka, topic, checkpoint_dir):
    produce(kafka.bootstrap_servers, topic, [(i % 4, record(i)) for i in range(100)])
    df = reader(spark, kafka, topic, **{"scan.max-records-per-trigger": "30"})
    rows, query = run_available_now(spark, df, checkpoint_dir)
    assert sorted(r["user"] for r in rows) == list(range(100))
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sizes and max(sizes) <= 30 and sum(sizes) == 100 and len(sizes) >= 4


def test_malformed_json_fails_naming_the_record(spark, kafka, topic, tmp_path):
    placed = produce(kafka.bootstrap_servers, topic,
                     [(1, record(1)), (1, b'{"ts": "2026-11-22 01:02:03", "user": '), (1, record(3)),
                      (2, record(4)), (2, b'{"user": "not a number"}')])
    bad_partition, bad_offset = placed[1]
    with pytest.raises(Exception) as info:
        run_available_now(spark, reader(spark, kafka, topic), str(tmp_path / "strict"))
    message = str(info.value)
    assert f"topic '{topic}' partition {bad_partition} offset {bad_offset}" in message or \
        f"topic '{topic}' partition 2 offset {placed[4][1]}" in message, message
    assert "json.ignore-parse-errors" in message

    rows, _ = run_available_now(spark, reader(spark, kafka, topic, **{"json.ignore-parse-errors": "true"}),
                                str(tmp_path / "lenient"))
    assert sorted(r["user"] for r in rows) == [1, 3, 4]


def test_raw_and_csv_formats(spark, kafka, topic, tmp_path):
    produce(kafka.bootstrap_servers, topic, [(0, b"7;/a;2026-11-22 01:02:03"), (1, b"8;/b;"), (2, None)])
    raw = (spark.readStream.format("kindling_kafka")
           .options(**{"properties.bootstrap.servers": kafka.bootstrap_servers, "topic": topic,
                       "format": "raw", "scan.startup.mode": "earliest-offset"}).load())
    rows, _ = run_available_now(spark, raw, str(tmp_path / "raw"))
    assert sorted((r["value"] or b"") for r in rows) == [b"", b"7;/a;2026-11-22 01:02:03", b"8;/b;"]

    schema = StructType([StructField("user", LongType()), StructField("page", StringType()),
                         StructField("ts", TimestampType())])
    csv = reader(spark, kafka, topic, schema, format="csv", **{"csv.field-delimiter": ";"})
    rows, _ = run_available_now(spark, csv, str(tmp_path / "csv"))
    assert sorted((r["user"], r["page"], r["ts"]) for r in rows) == [
        (7, "/a", datetime(2026, 11, 22, 1, 2, 3)), (8, "/b", None)]

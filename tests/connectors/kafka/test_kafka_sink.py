"""The Kafka sink: rows written by a streaming query are read back by a plain confluent-kafka consumer."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter

import pytest
from pyspark.sql import functions as F

from kindling.connectors.base import ROWKIND_COLUMN

sys.path.insert(0, os.path.dirname(__file__))
from kafka_helpers import read_back  # noqa: E402

pytestmark = pytest.mark.integration

ROWS = [
    {"id": i, "page": f"/p{i % 3}", "ts": f"2026-11-22 01:02:{i % 60:02d}.250", "kind": kind}
    for i, kind in enumerate(["+I"] * 40 + ["-U", "+U", "-D", "+I"])
]


def file_stream(spark, tmp_path):
    data = tmp_path / "input"
    data.mkdir()
    (data / "rows.json").write_text("\n".join(json.dumps(r) for r in ROWS))
    return (spark.readStream.schema("id BIGINT, page STRING, ts TIMESTAMP, kind STRING").json(str(data))
            .withColumnRenamed("kind", ROWKIND_COLUMN))


def run(df, checkpoint, **options):
    query = (df.writeStream.format("kindling_kafka").options(**options)
             .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    assert query.awaitTermination(120), "the sink query did not finish"
    assert query.exception() is None


def test_json_values_and_keys(spark, kafka, topic, tmp_path):
    run(file_stream(spark, tmp_path), str(tmp_path / "ck"), **{
        "properties.bootstrap.servers": kafka.bootstrap_servers, "topic": topic, "format": "json",
        "key.format": "json", "key.fields": "id",
    })
    written = [r for r in ROWS if r["kind"] in ("+I", "+U")]  # -U and -D are not written to a value topic
    records = read_back(kafka.bootstrap_servers, topic, len(written))
    assert len(records) == len(written)
    values = sorted((json.loads(m.value()) for m in records), key=lambda v: v["id"])
    assert values == [{"id": r["id"], "page": r["page"], "ts": r["ts"].replace(".250", ".25")} for r in written]
    assert all(ROWKIND_COLUMN not in v for v in values)
    for message in records:
        assert json.loads(message.key()) == {"id": json.loads(message.value())["id"]}
    # Same key, same partition (the client's default partitioner hashes the key).
    assert len({m.partition() for m in records}) > 1


def test_raw_values_round_robin(spark, kafka, topic, tmp_path):
    df = file_stream(spark, tmp_path).where(F.col(ROWKIND_COLUMN) == "+I").select(F.col("page").alias("value"))
    run(df.coalesce(1), str(tmp_path / "ck"), **{
        "properties.bootstrap.servers": kafka.bootstrap_servers, "topic": topic, "format": "raw",
        "sink.partitioner": "round-robin", "sink.delivery-guarantee": "none",
    })
    records = read_back(kafka.bootstrap_servers, topic, 41)
    assert len(records) == 41
    assert Counter(m.value() for m in records) == Counter(r["page"].encode() for r in ROWS if r["kind"] == "+I")
    per_partition = Counter(m.partition() for m in records)
    assert sorted(per_partition.values()) == [10, 10, 10, 11]

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from kindling.connectors import watermark_use
from kindling.connectors.base import TABLE_SCAN
from kindling.runtime import event_time_state
from kindling.runtime.plan_nodes import read_plan, read_plans


@pytest.fixture
def scan(spark):
    def read(scan_id: str):
        return (spark.readStream.format("kindling_kafka").schema("part INT, ts TIMESTAMP")
                .options(**{"topic": "t", "properties.bootstrap.servers": "127.0.0.1:9", "format": "json", TABLE_SCAN: scan_id})
                .load().withWatermark("ts", "5 seconds"))
    return read


def test_projections_filters_and_unions_keep_no_event_time_state(scan):
    copy = scan("a").where(F.col("part") > 0).select("part", "ts").unionByName(scan("b").select("part", "ts"))
    assert event_time_state.scans(read_plan(copy)) == ({"a", "b"}, False)


def test_aggregations_joins_and_deduplication_may(scan):
    windows = scan("a").groupBy(F.window("ts", "1 minute"), "part").count()
    deduplicated = scan("b").dropDuplicates(["part", "ts"])
    joined = scan("c").alias("l").join(scan("d").alias("r"), "part")
    for frame, ids in ((windows, {"a"}), (deduplicated, {"b"}), (joined, {"c", "d"})):
        assert event_time_state.scans(read_plan(frame)) == (ids, True)


def test_a_group_by_a_value_computed_from_the_rowtime_is_not_event_time_state(scan):
    """The spend report's GROUP BY account, FLOOR(ts TO HOUR): an updating aggregation. Held back, the last
    transaction of the partition whose last record came later was never read (the demo's report stayed wrong)."""
    hourly = scan("a").groupBy("part", F.date_trunc("HOUR", "ts").alias("hour")).count()
    assert event_time_state.scans(read_plan(hourly)) == ({"a"}, False)
    assert event_time_state.scans(read_plan(scan("b").groupBy("part", "ts").count())) == ({"b"}, True)


def test_a_scan_is_released_only_when_every_query_of_the_job_reading_it_is_stateless(scan, monkeypatch, tmp_path):
    monkeypatch.setattr(watermark_use.tempfile, "gettempdir", lambda: str(tmp_path))
    copy_a = scan("a")
    shared = scan("s")
    event_time_state.declare(read_plans([copy_a, shared, shared.groupBy(F.window("ts", "1 minute")).count()]))
    assert not watermark_use.feeds_event_time_state("a")
    assert watermark_use.feeds_event_time_state("s")
    assert watermark_use.feeds_event_time_state(None)
    event_time_state.declare(read_plans([copy_a, None]))  # a query of unknown shape: nothing changes
    assert not watermark_use.feeds_event_time_state("a")
    # a later job reads the scan with state
    event_time_state.declare(read_plans([copy_a.groupBy(F.window("ts", "1 minute")).count()]))
    assert watermark_use.feeds_event_time_state("a")

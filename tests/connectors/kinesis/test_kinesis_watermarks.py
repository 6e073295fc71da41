"""Per-shard event time on Spark's single watermark: a shard far ahead is held back so that none of a slow
shard's records is dropped as late (at the slowest shard's last record by default, up to
``scan.watermark.lookahead.millis`` past its next one with synchronisation), and a shard that went quiet
stops holding the others back after ``scan.shard.idle.interval``."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sys
from collections import Counter

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from kinesis_helpers import new_stream, put, read_all  # noqa: E402

pytestmark = pytest.mark.integration

AWS = ("'aws.region' = 'us-east-1', 'aws.endpoint' = '{endpoint}', 'aws.credentials.provider' = 'BASIC', "
       "'aws.credentials.basic.accesskeyid' = 'kindling-local', 'aws.credentials.basic.secretkey' = 'kindling-local-secret'")
BASE = dt.datetime(2026, 1, 1)
PER_SHARD = 60


def key_for_shard(index: int, shards: int = 2) -> str:
    """A partition key whose MD5 hash falls in the ``index``-th of ``shards`` equal hash key ranges."""
    width = 2 ** 128 // shards
    return next(k for k in (f"key-{n}" for n in range(1000))
                if int(hashlib.md5(k.encode()).hexdigest(), 16) // width == index)


def clicks(key: str, first_second: int) -> list[tuple[str, bytes]]:
    return [(key, json.dumps({"ts": (BASE + dt.timedelta(seconds=first_second + i)).strftime("%Y-%m-%d %H:%M:%S")}).encode())
            for i in range(PER_SHARD)]


def window_counts(env, kinesis, source: str, name: str, extra: str, expected: int) -> Counter:
    client = kinesis.client()
    out = new_stream(kinesis, 1)
    aws = AWS.format(endpoint=kinesis.endpoint)
    env.execute_sql(f"""
        CREATE TABLE {name} (ts TIMESTAMP(3), shard STRING METADATA FROM 'shard-id' VIRTUAL,
                             WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
        WITH ('connector' = 'kinesis', 'stream' = '{source}', {aws}, 'scan.stream.initpos' = 'TRIM_HORIZON',
              'scan.shard.getrecords.maxrecordcount' = '10', 'scan.shard.getrecords.intervalmillis' = '50',
              'format' = 'json'{extra})""")
    env.execute_sql(f"CREATE TABLE {name}_out (shard STRING, window_start TIMESTAMP(3), n BIGINT) "
                    f"WITH ('connector' = 'kinesis', 'stream' = '{out}', {aws}, 'format' = 'json')")
    job = env.execute_sql(f"INSERT INTO {name}_out SELECT shard, window_start, COUNT(*) FROM TABLE("
                          f"TUMBLE(TABLE {name}, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY shard, window_start, window_end")
    try:
        rows = [json.loads(r["Data"]) for r in read_all(client, out, expected=expected)]
    finally:
        job.get_job_client().cancel()
    counts: Counter = Counter()
    for row in rows:
        counts[row["shard"]] += row["n"]
    return counts


def test_a_shard_an_hour_ahead_is_held_back_and_the_quiet_one_released_after_the_idle_interval(env, kinesis):
    source = new_stream(kinesis, 2)
    slow, fast = key_for_shard(0), key_for_shard(1)
    placed = put(kinesis.client(), source, clicks(slow, 0) + clicks(fast, 3600))
    slow_shard, fast_shard = placed[0][0], placed[-1][0]
    assert slow_shard != fast_shard

    # Without synchronisation options, Flink's per-shard watermark: the fast shard waits at the slow
    # shard's last record, so the slow shard's windows up to its own watermark (59 s - 5 s) fire
    # complete and none of the fast shard's does. (Spark's watermark alone would have let the fast
    # shard's first records push it an hour ahead and dropped the slow shard's later records.)
    default = window_counts(env, kinesis, source, "unsynced", "", expected=5)
    assert default == {slow_shard: 50}, default

    # Synchronised: the fast shard waits until the slow one, its records read, has been quiet for the idle interval.
    aligned = window_counts(env, kinesis, source, "aligned", ", 'scan.watermark.lookahead.millis' = '20000', "
                            "'scan.watermark.sync.interval' = '0', 'scan.shard.idle.interval' = '2000'", expected=11)
    assert aligned == {slow_shard: PER_SHARD, fast_shard: 50}, "every slow record counted, none late"


def test_a_datastream_watermark_strategy_keeps_a_watermark_per_shard(env, kinesis):
    """The DataStream API's watermark strategy on a Kinesis source: per-shard event time as in SQL."""
    from pyspark.sql.types import StringType, StructField, StructType, TimestampType

    from kindling.connectors.base import Sink, Source
    from kindling.datastream import TumblingEventTimeWindows, WatermarkStrategy

    source = new_stream(kinesis, 2)
    slow, fast = key_for_shard(0), key_for_shard(1)
    records = [(key, json.dumps({"part": part, "ts": (BASE + dt.timedelta(seconds=first + i)).strftime("%Y-%m-%d %H:%M:%S")}).encode())
               for key, part, first in ((slow, "slow", 0), (fast, "fast", 3600)) for i in range(PER_SHARD)]
    put(kinesis.client(), source, records)
    out = new_stream(kinesis, 1)
    aws = {"aws.region": "us-east-1", "aws.endpoint": kinesis.endpoint, "aws.credentials.provider": "BASIC",
           "aws.credentials.basic.accesskeyid": "kindling-local", "aws.credentials.basic.secretkey": "kindling-local-secret"}
    clicks = Source("kinesis", {"stream": source, **aws, "scan.stream.initpos": "TRIM_HORIZON", "format": "json",
                                "scan.shard.getrecords.maxrecordcount": "10", "scan.shard.getrecords.intervalmillis": "50"},
                    schema=StructType([StructField("part", StringType()), StructField("ts", TimestampType())]))
    strategy = WatermarkStrategy.for_bounded_out_of_orderness("5 s").with_timestamp_assigner("ts")
    counts = env.from_source(clicks, strategy).key_by("part").window(TumblingEventTimeWindows.of("10 s")).count()
    counts.sink_to(Sink("kinesis", {"stream": out, **aws, "format": "json"})).uid("counts")
    client = env.execute_async(f"kinesis-windows-{source}")
    try:
        rows = [json.loads(r["Data"]) for r in read_all(kinesis.client(), out, expected=5)]
    finally:
        client.cancel()
    totals: Counter = Counter()
    for row in rows:
        totals[row["part"]] += row["count"]
    # The fast shard waits at the slow shard's last record: the slow shard's windows up to 55 s fire
    # complete, none of the fast shard's (its records an hour ahead would otherwise make the slow ones late).
    assert totals == {"slow": 50}, rows


def test_kinesis_takes_rowtime_and_idleness_from_a_watermark_strategy_and_refuses_alignment():
    from kindling.connectors import get_connector
    from kindling.connectors.base import TABLE_ROWTIME, TABLE_SCAN

    kinesis = get_connector("kinesis")
    options = kinesis.split_event_time_options("ts", 2000, None)
    assert options[TABLE_ROWTIME] == "ts" and options["scan.shard.idle.interval"] == "2000" and options[TABLE_SCAN]
    assert kinesis.split_event_time_options(None, None, None) == {}
    with pytest.raises(ValueError, match="'scan.watermark.lookahead.millis'"):
        kinesis.split_event_time_options("ts", None, ("g", 20_000, 1000))
    with pytest.raises(ValueError, match="the 'datagen' source does not track event time per split"):
        get_connector("datagen").split_event_time_options("ts", None, ("g", 20_000, 1000))

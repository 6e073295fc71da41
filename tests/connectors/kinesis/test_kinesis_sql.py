"""The Kinesis connector from Flink SQL, as a Flink user writes it: an EFO source table with a watermark and
a metadata column, event-time windows, and a PARTITIONED BY sink table, against kinesis-local."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from kinesis_helpers import new_stream, put, read_all  # noqa: E402

pytestmark = pytest.mark.integration

WITH_AWS = ("'aws.region' = 'us-east-1', 'aws.endpoint' = '{endpoint}', 'aws.credentials.provider' = 'BASIC', "
            "'aws.credentials.basic.accesskeyid' = 'kindling-local', 'aws.credentials.basic.secretkey' = 'kindling-local-secret'")
BASE_S = 1_767_225_600  # 2026-01-01 00:00:00 UTC
# (page, second after BASE_S): windows of 10 s; the last click only moves the watermark past them.
CLICKS = [("home", 1), ("cart", 2), ("home", 3), ("home", 9), ("cart", 11), ("home", 12), ("cart", 15),
          ("cart", 19), ("home", 21), ("home", 60)]


def test_sql_windows_from_a_kinesis_table_into_a_partitioned_kinesis_table(env, kinesis):
    client = kinesis.client()
    clicks, counts = new_stream(kinesis, 2), new_stream(kinesis, 2)
    put(client, clicks, [(page, json.dumps({"page": page, "ts": (BASE_S + s) * 1000}).encode()) for page, s in CLICKS])
    aws = WITH_AWS.format(endpoint=kinesis.endpoint)
    env.execute_sql(f"""
        CREATE TABLE clicks (
            page STRING,
            ts BIGINT,
            shard STRING METADATA FROM 'shard-id' VIRTUAL,
            rowtime AS TO_TIMESTAMP_LTZ(ts, 3),
            WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND
        ) WITH ('connector' = 'kinesis', 'stream' = '{clicks}', {aws}, 'scan.stream.initpos' = 'TRIM_HORIZON',
                'scan.stream.recordpublisher' = 'EFO', 'scan.stream.efo.consumername' = 'page-counter',
                'scan.shard.getrecords.intervalmillis' = '50', 'format' = 'json')""")
    env.execute_sql(f"""
        CREATE TABLE page_counts (page STRING, window_start TIMESTAMP(3), clicks BIGINT, shards BIGINT)
        PARTITIONED BY (page)
        WITH ('connector' = 'kinesis', 'stream' = '{counts}', {aws}, 'format' = 'json')""")
    job = env.execute_sql("""
        INSERT INTO page_counts
        SELECT page, window_start, COUNT(*), COUNT(DISTINCT shard)
        FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rowtime), INTERVAL '10' SECOND))
        GROUP BY page, window_start, window_end""")
    stream_arn = client.describe_stream_summary(StreamName=clicks)["StreamDescriptionSummary"]["StreamARN"]
    try:
        records = read_all(client, counts, expected=5)
        assert [c["ConsumerName"] for c in client.list_stream_consumers(StreamARN=stream_arn)["Consumers"]] == ["page-counter"]
    finally:
        job.get_job_client().cancel()
    # Cancelling is a graceful end: the consumer the source registered is deregistered, as in Flink.
    assert [c for c in client.list_stream_consumers(StreamARN=stream_arn)["Consumers"] if c["ConsumerStatus"] != "DELETING"] == []
    got = Counter((r["PartitionKey"], json.loads(r["Data"])["page"], json.loads(r["Data"])["window_start"],
                   json.loads(r["Data"])["clicks"]) for r in records)
    assert got == Counter({("home", "home", "2026-01-01 00:00:00", 3): 1, ("cart", "cart", "2026-01-01 00:00:00", 1): 1,
                           ("cart", "cart", "2026-01-01 00:00:10", 3): 1, ("home", "home", "2026-01-01 00:00:10", 1): 1,
                           ("home", "home", "2026-01-01 00:00:20", 1): 1})
    assert all(json.loads(r["Data"])["shards"] == 1 for r in records), "each page's clicks came from its one shard"

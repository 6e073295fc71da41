"""kindling's direct GetRecords (``aws.JsonApi``) against kinesis-local: the same records and arrival times as
boto3's, and errors raised as botocore raises them, so retries and messages do not depend on the path."""

from __future__ import annotations

import os
import sys

import pytest
from botocore.exceptions import EndpointConnectionError

from kindling.connectors.kinesis.aws import JsonApi, error_code, get_records, kinesis_client, with_retries
from kindling.connectors.kinesis.options import source_config
from kindling.local.kinesis import LOCAL_ACCESS_KEY, LOCAL_SECRET_KEY
from kindling.local.ports import free_port

sys.path.insert(0, os.path.dirname(__file__))
from kinesis_helpers import new_stream, put  # noqa: E402

pytestmark = pytest.mark.integration


def _api(endpoint: str) -> tuple[JsonApi, object]:
    config = source_config({"stream": "x", "format": "raw", "aws.region": "us-east-1", "aws.endpoint": endpoint,
                            "aws.credentials.provider": "BASIC", "aws.credentials.basic.accesskeyid": LOCAL_ACCESS_KEY,
                            "aws.credentials.basic.secretkey": LOCAL_SECRET_KEY}, "kinesis")
    client = kinesis_client(config.aws, "test")
    return JsonApi(config.aws, client, "test"), client


def test_get_records_reads_what_boto3_reads(kinesis):
    stream = new_stream(kinesis, shards=1)
    client = kinesis.client()
    put(client, stream, [(f"k{i}", bytes([i, 0, 255]) + b"\n\x00data") for i in range(40)])
    shard = client.list_shards(StreamName=stream)["Shards"][0]["ShardId"]

    def iterator() -> str:
        return client.get_shard_iterator(StreamName=stream, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]

    api, _ = _api(kinesis.endpoint)
    records, rest = get_records(api, iterator(), 25)
    expected = client.get_records(ShardIterator=iterator(), Limit=25)
    assert records == [(r["SequenceNumber"], r["Data"], round(r["ApproximateArrivalTimestamp"].timestamp() * 1000))
                       for r in expected["Records"]]
    assert len(records) == 25 and "Records" not in rest and rest["NextShardIterator"]
    following, _ = get_records(api, rest["NextShardIterator"], 100)
    assert [r[1] for r in records + following] == [bytes([i, 0, 255]) + b"\n\x00data" for i in range(40)]


def test_errors_are_botocores(kinesis):
    api, client = _api(kinesis.endpoint)
    stream = new_stream(kinesis, shards=1)
    shard = client.list_shards(StreamName=stream)["Shards"][0]["ShardId"]
    gone = client.get_shard_iterator(StreamName=stream, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    client.delete_stream(StreamName=stream)
    for iterator in ("not-an-iterator", gone):
        with pytest.raises(Exception) as raised:
            get_records(api, iterator, 10)
        with pytest.raises(Exception) as through_boto3:
            client.get_records(ShardIterator=iterator, Limit=10)
        assert error_code(raised.value) == error_code(through_boto3.value) is not None
        assert type(raised.value).__name__ == type(through_boto3.value).__name__  # what with_retries and _fetch test
    closed, _ = _api(f"http://127.0.0.1:{free_port()}")
    calls = []

    def call():
        calls.append(1)
        return get_records(closed, "x", 10)

    with pytest.raises(EndpointConnectionError):
        with_retries(call, (2, 1, 2, 1.5), "GetRecords")
    assert len(calls) == 3, "a refused connection is transient: retried maxretries times"

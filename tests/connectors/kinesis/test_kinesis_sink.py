"""The Kinesis sink's writer against kinesis-local, driven as an executor drives it: partition keys, batching,
and throttled puts (from a small loopback proxy that rejects records as Kinesis does) retried without loss,
or failing the task under 'sink.fail-on-error'."""

from __future__ import annotations

import json
import os
import sys
import threading
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from kindling.connectors.kinesis.sink import KinesisStreamWriter

sys.path.insert(0, os.path.dirname(__file__))
from kinesis_helpers import new_stream  # noqa: E402

pytestmark = pytest.mark.integration

SCHEMA = StructType([StructField("id", LongType()), StructField("user", StringType()), StructField("page", StringType())])


def batch(ids) -> pa.RecordBatch:
    ids = list(ids)
    return pa.RecordBatch.from_pydict({"id": ids, "user": [f"u{i % 3}" for i in ids], "page": [f"/p{i % 2}" for i in ids]},
                                      schema=pa.schema([("id", pa.int64()), ("user", pa.string()), ("page", pa.string())]))


def options(endpoint: str, stream: str, **extra) -> dict:
    return {"stream": stream, "format": "json", "aws.region": "us-east-1", "aws.endpoint": endpoint,
            "aws.credentials.provider": "BASIC", "aws.credentials.basic.accesskeyid": "k",
            "aws.credentials.basic.secretkey": "s", **extra}


def read_all(client, stream: str) -> list[dict]:
    """Every record of every shard: (partition key, data)."""
    out = []
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        iterator = client.get_shard_iterator(StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            response = client.get_records(ShardIterator=iterator, Limit=10000)
            out.extend({"key": r["PartitionKey"], **json.loads(r["Data"])} for r in response["Records"])
            if not response["Records"] and response.get("MillisBehindLatest", 0) == 0:
                break
            iterator = response.get("NextShardIterator")
    return out


def test_partition_keys_from_fields_fixed_and_random(kinesis):
    client = kinesis.client()
    stream = new_stream(kinesis, 2)
    writer = KinesisStreamWriter(options(kinesis.endpoint, stream, **{"kindling.table.partition-keys": "user;page",
                                                                      "sink.batch.max-size": "7"}), SCHEMA)
    message = writer.write(iter([batch(range(20)), batch(range(20, 30))]))
    assert message.records == 30
    rows = read_all(client, stream)
    assert sorted(r["id"] for r in rows) == list(range(30))
    assert all(r["key"] == f"{r['user']}|{r['page']}" for r in rows)

    fixed = new_stream(kinesis, 2)
    KinesisStreamWriter(options(kinesis.endpoint, fixed, **{"sink.partitioner": "fixed"}), SCHEMA).write(iter([batch(range(10))]))
    assert {r["key"] for r in read_all(client, fixed)} == {"0"}  # the task index (0 outside Spark)

    rand = new_stream(kinesis, 2)
    KinesisStreamWriter(options(kinesis.endpoint, rand), SCHEMA).write(iter([batch(range(10))]))
    keys = [r["key"] for r in read_all(client, rand)]
    assert len(set(keys)) == 10 and all(len(k) == 36 for k in keys)  # a UUID per record


class ThrottlingProxy:
    """Forwards Kinesis requests to the server; the first PutRecords is throttled as a whole (HTTP 400
    ProvisionedThroughputExceededException) and later ones have every other record rejected with that code,
    as Kinesis does for a hot shard, until ``throttle`` rejections were made."""

    def __init__(self, upstream: str, throttle: int = 40) -> None:
        self.upstream, self.left, self.rejected, self.whole = upstream, throttle, 0, 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                target = self.headers.get("X-Amz-Target", "")
                if target.endswith(".PutRecords"):
                    self._reply(*proxy.put_records(json.loads(body), dict(self.headers)))
                else:
                    self._reply(*proxy.forward(body, dict(self.headers)))

            def _reply(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.1")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def forward(self, body: bytes, headers: dict) -> tuple[int, bytes]:
        keep = {k: v for k, v in headers.items() if k.lower() in ("x-amz-target", "content-type", "authorization", "x-amz-date")}
        request = urllib.request.Request(self.upstream, data=body, headers=keep, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def put_records(self, request: dict, headers: dict) -> tuple[int, bytes]:
        with self.lock:
            if self.whole == 0:
                self.whole += 1
                return 400, json.dumps({"__type": "ProvisionedThroughputExceededException", "message": "Rate exceeded"}).encode()
            reject = [i % 2 == 1 and self.left - i // 2 > 0 for i in range(len(request["Records"]))]
            count = sum(reject)
            self.left -= count
            self.rejected += count
        forwarded = [r for r, rejected in zip(request["Records"], reject) if not rejected]
        results = iter([])
        if forwarded:
            status, payload = self.forward(json.dumps({**request, "Records": forwarded}).encode(), headers)
            if status != 200:
                return status, payload
            results = iter(json.loads(payload)["Records"])
        records = [{"ErrorCode": "ProvisionedThroughputExceededException", "ErrorMessage": "Rate exceeded for shard"}
                   if rejected else next(results) for rejected in reject]
        return 200, json.dumps({"FailedRecordCount": sum(reject), "Records": records}).encode()

    def close(self) -> None:
        self.server.shutdown()


def test_throttled_puts_are_retried_without_loss(kinesis):
    stream = new_stream(kinesis, 2)
    proxy = ThrottlingProxy(kinesis.endpoint, throttle=40)
    try:
        writer = KinesisStreamWriter(options(proxy.endpoint, stream, **{"sink.batch.max-size": "25"}), SCHEMA)
        message = writer.write(iter([batch(range(100))]))
    finally:
        proxy.close()
    assert proxy.whole == 1 and proxy.rejected == 40
    assert message.records == 100 and message.retried == 25 + 40  # the whole first request, then 40 single records
    ids = Counter(r["id"] for r in read_all(kinesis.client(), stream))
    assert sorted(ids) == list(range(100)) and set(ids.values()) == {1}


def test_fail_on_error_fails_the_task_naming_the_error(kinesis):
    stream = new_stream(kinesis, 1)
    proxy = ThrottlingProxy(kinesis.endpoint, throttle=10)
    proxy.whole = 1  # skip the whole-request throttle: show the partial failure
    try:
        writer = KinesisStreamWriter(options(proxy.endpoint, stream, **{"sink.fail-on-error": "true"}), SCHEMA)
        with pytest.raises(RuntimeError, match="rejected by stream .*ProvisionedThroughputExceededException.*'sink.fail-on-error' is true"):
            writer.write(iter([batch(range(20))]))
    finally:
        proxy.close()


def test_a_record_over_the_size_limit_fails(kinesis):
    stream = new_stream(kinesis, 1)
    writer = KinesisStreamWriter(options(kinesis.endpoint, stream, **{"sink.max-record-size": "64"}), SCHEMA)
    big = pa.RecordBatch.from_pydict({"id": [1], "user": ["x" * 100], "page": ["/"]},
                                     schema=pa.schema([("id", pa.int64()), ("user", pa.string()), ("page", pa.string())]))
    with pytest.raises(ValueError, match="larger than 'sink.max-record-size' = 64 bytes"):
        writer.write(iter([big]))

"""Kinesis source throughput: kindling's Kinesis source into Spark's noop sink vs a plain boto3 GetRecords loop.

Starts its own local Kinesis server, puts N JSON records ``{"page": "/help", "user": <int>}`` into a
4-shard stream (default 200k), then measures, against the same server in one run:

(a) ``spark.readStream.format("kindling_kinesis") -> writeStream.format("noop")`` from TRIM_HORIZON with
    Trigger.AvailableNow, parallelism 2, ``scan.shard.getrecords.intervalmillis`` 0 — only the query is
    timed, after an untimed warm-up query on a small stream;
(b) one boto3 client reading every shard from TRIM_HORIZON with GetRecords (10000 records per call) in a
    plain loop, ``json.loads`` on every record, run before and after (a); the faster run is the reference.

Prints both rates in rows/s and, last, ``ratio=<kindling/plain>``.

The server is kinesalite (npm, ``make kinesalite``) by default: kinesis-local, which the tests use for its
resharding and EFO, slows down as a stream grows (20k records load in ~25 s, 200k did not finish loading in
14 minutes), while kinesalite loads 200k in ~35 s and serves GetRecords faster. ``--server kinesis-local``
measures on the tests' server (use ``--records 20000`` there).

    python benchmarks/kinesis_source.py [--records 200000] [--server kinesalite|kinesis-local]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator

from kindling.local.kinesis import LOCAL_ACCESS_KEY, LOCAL_SECRET_KEY, NODE_PREFIX, PRELOAD, LocalKinesis
from kindling.local.ports import free_port, wait_until

SHARDS = 4
KINESALITE = NODE_PREFIX / "node_modules" / "kinesalite" / "cli.js"


class Kinesalite:
    """kinesalite in memory on a loopback port (the kinesis-local preload keeps it off other interfaces)."""

    def __init__(self, port: int) -> None:
        self.endpoint = f"http://127.0.0.1:{port}"

    def client(self):
        import boto3

        return boto3.client("kinesis", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id=LOCAL_ACCESS_KEY, aws_secret_access_key=LOCAL_SECRET_KEY)

    def create_stream(self, name: str, shards: int) -> None:
        client = self.client()
        client.create_stream(StreamName=name, ShardCount=shards)
        wait_until(lambda: client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamStatus"]
                   == "ACTIVE", 30, f"stream {name} to become ACTIVE")


@contextlib.contextmanager
def kinesalite() -> Iterator[Kinesalite]:
    if not KINESALITE.is_file():
        raise SystemExit(f"kinesalite is not installed ({KINESALITE}): run 'make kinesalite'")
    port = free_port()
    process = subprocess.Popen([shutil.which("node") or "node", "--require", str(PRELOAD), str(KINESALITE),
                                "--port", str(port), "--createStreamMs", "0", "--deleteStreamMs", "0",
                                "--updateStreamMs", "0", "--shardLimit", "100"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        server = Kinesalite(port)

        def ready() -> bool:
            try:
                server.client().list_streams()
                return True
            except Exception:
                return False

        wait_until(ready, 30, "kinesalite to answer")
        yield server
    finally:
        process.terminate()
        process.wait(10)


def load(client, stream: str, count: int) -> None:
    """PutRecords 500 at a time from 4 threads, re-putting rejected records."""
    def put(first: int) -> None:
        pending = [{"PartitionKey": f"u{i}", "Data": json.dumps({"page": "/help", "user": i}).encode()}
                   for i in range(first, min(first + 500, count))]
        while pending:
            response = client.put_records(StreamName=stream, Records=pending)
            pending = [entry for entry, result in zip(pending, response["Records"]) if "ErrorCode" in result]

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(put, range(0, count, 500)))


def run_kindling(endpoint: str, stream: str, expected: int, warmup: str) -> float:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from kindling.config import Configuration
    from kindling.connectors.base import with_eos
    from kindling.runtime.session import get_or_create_session

    spark = get_or_create_session(Configuration({"parallelism.default": 2, "kindling.log.level": "ERROR"}))
    try:
        schema = StructType([StructField("page", StringType()), StructField("user", LongType())])

        def source(name):
            return (spark.readStream.format("kindling_kinesis").schema(with_eos(schema))
                    .options(**{"stream": name, "format": "json", "aws.region": "us-east-1", "aws.endpoint": endpoint,
                                "aws.credentials.provider": "BASIC", "aws.credentials.basic.accesskeyid": LOCAL_ACCESS_KEY,
                                "aws.credentials.basic.secretkey": LOCAL_SECRET_KEY, "scan.stream.initpos": "TRIM_HORIZON",
                                "scan.shard.getrecords.intervalmillis": "0"}).load())

        def run(name):
            start = time.perf_counter()
            query = (source(name).writeStream.format("noop")
                     .option("checkpointLocation", tempfile.mkdtemp(prefix="kindling-bench-"))
                     .trigger(availableNow=True).start())
            query.awaitTermination()
            return time.perf_counter() - start, sum(p["numInputRows"] for p in query.recentProgress)

        run(warmup)  # JVM code paths, Python workers; not timed
        elapsed, rows = run(stream)
        if rows != expected:
            raise RuntimeError(f"kindling read {rows} rows, expected {expected}")
        return elapsed
    finally:
        spark.stop()


def run_plain(client, stream: str, expected: int) -> float:
    start = time.perf_counter()
    seen = 0
    loads = json.loads
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        iterator = client.get_shard_iterator(StreamName=stream, ShardId=shard["ShardId"],
                                             ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            response = client.get_records(ShardIterator=iterator, Limit=10000)
            for record in response["Records"]:
                loads(record["Data"])
            seen += len(response["Records"])
            if not response["Records"] and response.get("MillisBehindLatest", 0) == 0:
                break
            iterator = response.get("NextShardIterator")
    elapsed = time.perf_counter() - start
    if seen != expected:
        raise RuntimeError(f"the plain loop read {seen} records, expected {expected}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--server", choices=["kinesalite", "kinesis-local"], default="kinesalite")
    args = parser.parse_args()
    n = args.records
    with (kinesalite() if args.server == "kinesalite" else LocalKinesis()) as kinesis:
        print(f"server: {args.server}", flush=True)
        client = kinesis.client()
        stream, warmup = f"bench-{uuid.uuid4().hex[:8]}", f"warmup-{uuid.uuid4().hex[:8]}"
        kinesis.create_stream(stream, shards=SHARDS)
        kinesis.create_stream(warmup, shards=SHARDS)
        t = time.perf_counter()
        load(client, stream, n)
        print(f"put {n} records into {SHARDS} shards in {time.perf_counter() - t:.1f} s", flush=True)
        load(client, warmup, 1000)
        first_plain = run_plain(client, stream, n)
        print(f"plain boto3 get_records + json.loads (run 1): {n / first_plain:,.0f} rows/s ({first_plain:.1f} s)", flush=True)
        kindling = run_kindling(kinesis.endpoint, stream, n, warmup)
        print(f"kindling kinesis source -> noop (availableNow, parallelism 2): {n / kindling:,.0f} rows/s ({kindling:.1f} s)", flush=True)
        second_plain = run_plain(client, stream, n)
        print(f"plain boto3 get_records + json.loads (run 2): {n / second_plain:,.0f} rows/s ({second_plain:.1f} s)", flush=True)
        plain = min(first_plain, second_plain)  # the better plain run: the ratio is not flattered
        print(f"ratio={(n / kindling) / (n / plain):.2f}", flush=True)


if __name__ == "__main__":
    main()

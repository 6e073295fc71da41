"""Kinesis playground: clicks per page in 15-second event-time windows, from one stream to another, while
the input stream is resharded from 4 to 8 shards.

    python examples/kinesis_playground.py                      # starts its own local Kinesis server
    python examples/kinesis_playground.py --endpoint http://127.0.0.1:4568   # one from 'kindling local kinesis start'

The job is Flink SQL, as a Flink user writes it: a ``kinesis`` source table with a WATERMARK, a TUMBLE
window aggregation and a ``kinesis`` sink table PARTITIONED BY the page (the partition key). While the job
runs, a producer puts click events ``{"page": ..., "ts": ...}`` (event time rising by 50 ms a click) and,
half-way, calls ``UpdateShardCount`` to double the shards: the source reads the parent shards to their end
before their children, so no click becomes late. At the end the program reads the counts stream back and
compares every closed window with the clicks it put, printing ``windows=N correct=N wrong=0``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from datetime import datetime, timedelta, timezone
from pathlib import Path

from kindling import StreamEnvironment
from kindling.local.kinesis import LOCAL_ACCESS_KEY, LOCAL_SECRET_KEY, LocalKinesis, local_client, wait_active

PAGES = ("/home", "/search", "/cart", "/checkout", "/help")
WINDOW_S = 15
DELAY_S = 2
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def clicks(count: int, seed: int = 7) -> list[tuple[str, datetime]]:
    """``count`` clicks, one every 50 ms of event time, on pages chosen by a seeded generator."""
    rng = random.Random(seed)
    return [(rng.choice(PAGES), START + timedelta(milliseconds=50 * i)) for i in range(count)]


def produce(client, stream: str, events: list[tuple[str, datetime]], reshard_to: int) -> None:
    """Put the clicks 100 at a time, doubling the shards after half of them."""
    half = len(events) // 2
    for first in range(0, len(events), 100):
        if first == half:
            client.update_shard_count(StreamName=stream, TargetShardCount=reshard_to, ScalingType="UNIFORM_SCALING")
            wait_active(client, stream)
        pending = [{"PartitionKey": page, "Data": json.dumps({"page": page, "ts": ts.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]}).encode()}
                   for page, ts in events[first:first + 100]]
        while pending:  # re-put what PutRecords rejected (throttling)
            response = client.put_records(StreamName=stream, Records=pending)
            pending = [record for record, result in zip(pending, response["Records"]) if "SequenceNumber" not in result]


def expected_windows(events: list[tuple[str, datetime]]) -> dict[tuple[str, str], int]:
    """Counts per (page, window start) of the windows the last click's watermark closes."""
    watermark = events[-1][1] - timedelta(seconds=DELAY_S)
    counts: Counter = Counter()
    for page, ts in events:
        start = START + timedelta(seconds=((ts - START).total_seconds() // WINDOW_S) * WINDOW_S)
        if start + timedelta(seconds=WINDOW_S) <= watermark:
            counts[(page, start.strftime("%Y-%m-%d %H:%M:%S"))] += 1
    return dict(counts)


def read_counts(client, stream: str, expected: int, timeout: float) -> list[dict]:
    """The counts stream's records (all shards, from the start) until ``expected`` arrived."""
    iterators = {s["ShardId"]: client.get_shard_iterator(StreamName=stream, ShardId=s["ShardId"],
                                                         ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
                 for s in client.list_shards(StreamName=stream)["Shards"]}
    rows: list[dict] = []
    deadline = time.monotonic() + timeout
    while len(rows) < expected and time.monotonic() < deadline:
        for shard, iterator in list(iterators.items()):
            response = client.get_records(ShardIterator=iterator)
            rows.extend(json.loads(r["Data"]) for r in response["Records"])
            iterators[shard] = response["NextShardIterator"]
        time.sleep(0.5)  # GetRecords allows 5 calls per second per shard
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoint", help="aws.endpoint of a Kinesis API server (default: start a local one)")
    parser.add_argument("--region", default="us-east-1", help="aws.region")
    parser.add_argument("--clicks", type=int, default=1200, help="click events to put (50 ms of event time each)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for the counts")
    args = parser.parse_args(argv)

    with ExitStack() as stack:
        endpoint = args.endpoint
        if endpoint is None:
            server = LocalKinesis(data_dir=Path(stack.enter_context(tempfile.TemporaryDirectory()))).start()
            stack.callback(server.stop)
            endpoint = server.endpoint
        client = local_client(endpoint, args.region)
        suffix = uuid.uuid4().hex[:6]
        source, sink = f"clicks-{suffix}", f"page-counts-{suffix}"
        client.create_stream(StreamName=source, ShardCount=4)
        client.create_stream(StreamName=sink, ShardCount=1)
        wait_active(client, source)
        wait_active(client, sink)

        aws = (f"'aws.region' = '{args.region}', 'aws.endpoint' = '{endpoint}', 'aws.credentials.provider' = 'BASIC', "
               f"'aws.credentials.basic.accesskeyid' = '{LOCAL_ACCESS_KEY}', 'aws.credentials.basic.secretkey' = '{LOCAL_SECRET_KEY}'")
        env = StreamEnvironment({"state.checkpoints.dir": stack.enter_context(tempfile.TemporaryDirectory()),
                                 "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 3})
        env.execute_sql(f"""
            CREATE TABLE clicks (page STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '{DELAY_S}' SECOND)
            WITH ('connector' = 'kinesis', 'stream' = '{source}', {aws}, 'scan.stream.initpos' = 'TRIM_HORIZON',
                  'scan.shard.discovery.intervalmillis' = '1000', 'scan.shard.getrecords.intervalmillis' = '100',
                  'format' = 'json')""")
        env.execute_sql(f"""
            CREATE TABLE page_counts (page STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), clicks BIGINT)
            PARTITIONED BY (page)
            WITH ('connector' = 'kinesis', 'stream' = '{sink}', {aws}, 'format' = 'json')""")
        job = env.execute_sql(f"""
            INSERT INTO page_counts
            SELECT page, window_start, window_end, COUNT(*)
            FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '{WINDOW_S}' SECOND))
            GROUP BY page, window_start, window_end""").get_job_client()
        stack.callback(job.cancel)

        events = clicks(args.clicks)
        produce(client, source, events, 8)
        shards = len(client.list_shards(StreamName=source)["Shards"])
        expected = expected_windows(events)
        rows = read_counts(client, sink, len(expected), args.timeout)
        got = {(r["page"], r["window_start"]): r["clicks"] for r in rows}
        wrong = sum(1 for key, count in expected.items() if got.get(key) != count) + sum(1 for key in got if key not in expected)
        print(f"shards={shards} clicks={len(events)} windows={len(expected)} correct={len(expected) - wrong} wrong={wrong}",
              flush=True)
        return 0 if wrong == 0 and len(rows) == len(expected) else 1


if __name__ == "__main__":
    sys.exit(main())

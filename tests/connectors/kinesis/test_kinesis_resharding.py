"""Resharding while the source runs (split, merge, UpdateShardCount), driven micro-batch by micro-batch with
exactly the calls Spark makes on the driver (latestOffset, partitions, commit) and on executors (read):
every record read exactly once, in order per partition key, and every batch replayed from Kinesis (as after
a restart) reads exactly the same records."""

from __future__ import annotations

import json
import os
import pickle
import sys
from collections import defaultdict

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable
from pyspark.sql.types import LongType, StringType, StructField, StructType

from kindling.connectors.base import with_eos
from kindling.connectors.kinesis.options import metadata_option
from kindling.connectors.kinesis.source import KinesisInputPartition, KinesisStreamReader
from kindling.local.kinesis import wait_active

sys.path.insert(0, os.path.dirname(__file__))
from kinesis_helpers import new_stream, put  # noqa: E402

pytestmark = pytest.mark.integration

SCHEMA = with_eos(StructType([StructField("key", StringType()), StructField("n", LongType()),
                              StructField("shard", StringType()), StructField("seq", StringType())]))
KEYS = 12


class Driver:
    """Micro-batches as Spark runs them, keeping each batch's offsets and rows."""

    def __init__(self, options: dict) -> None:
        self.reader = KinesisStreamReader(options, SCHEMA)
        self.executor = pickle.loads(pickle.dumps(self.reader))  # what a task gets
        self.start = self.reader.initialOffset()
        self.batches: list[tuple[dict, dict, list[dict]]] = []

    def step(self) -> int:
        end = self.reader.latestOffset(self.start, ReadAllAvailable())
        if end == self.start:
            return 0
        rows = [row for part in self.reader.partitions(self.start, end) for batch in self.executor.read(part)
                for row in batch.to_pylist()]
        self.reader.commit(end)
        self.batches.append((self.start, end, rows))
        self.start = end
        return len(rows)

    def rows(self) -> list[tuple[int, dict]]:
        return [(i, row) for i, (_, _, rows) in enumerate(self.batches) for row in rows]


def test_split_merge_and_update_shard_count_while_running(kinesis):
    client = kinesis.client()
    stream = new_stream(kinesis, 2)
    driver = Driver({"stream": stream, "format": "json", "aws.region": "us-east-1", "aws.endpoint": kinesis.endpoint,
                     "aws.credentials.basic.accesskeyid": "k", "aws.credentials.basic.secretkey": "s",
                     "scan.stream.initpos": "TRIM_HORIZON", "scan.shard.getrecords.intervalmillis": "0",
                     "scan.shard.getrecords.maxrecordcount": "25", "scan.shard.discovery.intervalmillis": "1",
                     "kindling.table.metadata": metadata_option([("shard", "shard-id"), ("seq", "sequence-number")])})
    counters = defaultdict(int)

    def put_some(count: int) -> None:
        records = []
        for i in range(count):
            key = f"k{i % KEYS}"
            records.append((key, json.dumps({"key": key, "n": counters[key]}).encode()))
            counters[key] += 1
        put(client, stream, records)
        driver.step()

    def shards() -> list[dict]:
        return client.list_shards(StreamName=stream)["Shards"]

    put_some(60)
    first = min(shards(), key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))
    low, high = int(first["HashKeyRange"]["StartingHashKey"]), int(first["HashKeyRange"]["EndingHashKey"])
    client.split_shard(StreamName=stream, ShardToSplit=first["ShardId"], NewStartingHashKey=str((low + high) // 2))
    wait_active(client, stream)
    put_some(60)
    open_shards = sorted((s for s in shards() if "EndingSequenceNumber" not in s["SequenceNumberRange"]),
                         key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))
    client.merge_shards(StreamName=stream, ShardToMerge=open_shards[1]["ShardId"], AdjacentShardToMerge=open_shards[2]["ShardId"])
    wait_active(client, stream)
    put_some(60)
    client.update_shard_count(StreamName=stream, TargetShardCount=4, ScalingType="UNIFORM_SCALING")
    wait_active(client, stream)
    put_some(60)
    total = sum(counters.values())
    for _ in range(200):  # until everything is read and a further micro-batch finds nothing new
        if driver.step() == 0 and len(driver.rows()) >= total and driver.step() == 0:
            break
    assert len(shards()) > 6  # 2 first, 2 from the split, 1 from the merge, more from UpdateShardCount

    rows = driver.rows()
    got = sorted((row["key"], row["n"]) for _, row in rows)
    assert got == sorted((k, n) for k, count in counters.items() for n in range(count))  # each exactly once
    by_key = defaultdict(list)
    for batch, row in sorted(rows, key=lambda item: (item[0], int(item[1]["seq"]))):
        by_key[row["key"]].append((batch, row["shard"], row["n"]))
    for key, seen in by_key.items():
        assert [n for _, _, n in seen] == list(range(counters[key])), f"{key} out of order: {seen}"
        shards_per_batch = defaultdict(set)
        for batch, shard, _ in seen:
            shards_per_batch[batch].add(shard)
        assert all(len(s) == 1 for s in shards_per_batch.values())  # a parent and its child never share a batch
    assert any(row["shard"] not in {s["ShardId"] for s in shards()[:2]} for _, row in rows)

    # Replays, as after a restart: the executor reads each batch's ranges from Kinesis, the same records.
    replayer = pickle.loads(pickle.dumps(driver.reader))
    for start, end, batch_rows in driver.batches:
        parts = driver.reader.partitions(start, end)
        again = [row for part in parts for batch in replayer.read(KinesisInputPartition(part.shard, part.start, part.end))
                 for row in batch.to_pylist()]
        assert sorted(r["seq"] for r in again) == sorted(r["seq"] for r in batch_rows)
    # Closed shards are finished in the offsets, never read again.
    final = driver.start["shards"]
    closed = [s["ShardId"] for s in shards() if "EndingSequenceNumber" in s["SequenceNumberRange"]]
    assert closed and all(final[s] == "SHARD_END" for s in closed)


def test_first_batch_replays_the_same_records_after_a_restart_from_latest(kinesis):
    """On restart Spark asks initialOffset() again for the first batch's start; with LATEST that is a later
    time. The batch's logged end offset says where reading began, so the replay reads the same records."""
    import time

    client = kinesis.client()
    stream = new_stream(kinesis, 2)
    options = {"stream": stream, "format": "json", "aws.region": "us-east-1", "aws.endpoint": kinesis.endpoint,
               "aws.credentials.basic.accesskeyid": "k", "aws.credentials.basic.secretkey": "s",
               "scan.stream.initpos": "LATEST", "scan.shard.getrecords.intervalmillis": "0",
               "kindling.table.metadata": metadata_option([("shard", "shard-id"), ("seq", "sequence-number")])}
    first = Driver(options)
    put(client, stream, [(f"k{i}", json.dumps({"key": f"k{i}", "n": i}).encode()) for i in range(20)])
    assert first.step() == 20
    start, end, rows = first.batches[0]
    while int(time.time() * 1000) <= int(start["shards"][sorted(start["shards"])[0]].split(":")[1]) + 5:
        time.sleep(0.005)  # the restarted job's LATEST must be a later time than the first one's
    restarted = Driver(options)
    assert restarted.start != start
    parts = restarted.reader.partitions(restarted.start, end)
    again = [row for part in parts for batch in restarted.executor.read(part) for row in batch.to_pylist()]
    assert sorted(r["n"] for r in again) == sorted(r["n"] for r in rows) == list(range(20))

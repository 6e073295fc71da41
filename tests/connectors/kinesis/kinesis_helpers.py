"""Helpers shared by the Kinesis connector tests: putting records and collecting a running query's output."""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from typing import Callable, Iterable, Optional, Sequence

from kindling.connectors.base import with_eos


def new_stream(kinesis, shards: int = 4) -> str:
    name = f"s-{uuid.uuid4().hex[:10]}"
    kinesis.create_stream(name, shards=shards)
    return name


def put(client, stream: str, records: Iterable[tuple[str, bytes]]) -> list[tuple[str, str]]:
    """PutRecords ``(partition key, data)`` in order, 500 at a time, re-putting throttled ones; return each
    record's (shard id, sequence number)."""
    records = list(records)
    placed: list[Optional[tuple[str, str]]] = [None] * len(records)
    for first in range(0, len(records), 500):
        pending = list(range(first, min(first + 500, len(records))))
        deadline = time.monotonic() + 60
        while pending:
            assert time.monotonic() < deadline, "records could not be put within 60 s"
            response = client.put_records(StreamName=stream, Records=[
                {"PartitionKey": records[i][0], "Data": records[i][1]} for i in pending])
            retry = []
            for index, result in zip(pending, response["Records"]):
                if "SequenceNumber" in result:
                    placed[index] = (result["ShardId"], result["SequenceNumber"])
                else:
                    retry.append(index)
            pending = retry
    return [p for p in placed if p is not None]


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def kpl_aggregate(records: Sequence[tuple[str, bytes, Optional[str]]], extra: bytes = b"") -> bytes:
    """A KPL-aggregated Kinesis record of ``(partition key, data, explicit hash key or None)`` user records:
    the magic, the ``AggregatedRecord`` protobuf (``extra`` appended to each ``Record``: tags, unknown
    fields), its MD5. Keys are shared through the tables, as the KPL writes them."""
    keys: dict[str, int] = {}
    hash_keys: dict[str, int] = {}
    entries = []
    for key, data, hash_key in records:
        entry = _varint(1 << 3) + _varint(keys.setdefault(key, len(keys)))
        if hash_key is not None:
            entry += _varint(2 << 3) + _varint(hash_keys.setdefault(hash_key, len(hash_keys)))
        entries.append(entry + _field(3, data) + extra)
    message = (b"".join(_field(1, k.encode()) for k in keys) + b"".join(_field(2, h.encode()) for h in hash_keys)
               + b"".join(_field(3, e) for e in entries))
    return b"\xf3\x89\x9a\xc2" + message + hashlib.md5(message).digest()


TRANSIENT = "Python worker failed to connect back"  # Spark's fixed 10 s, missed on an overloaded machine


class Collector:
    """Runs a streaming DataFrame with foreachBatch and keeps each micro-batch's rows by batch id (a replayed
    batch replaces its first run, as an exactly-once sink does). A query that fails because a Python worker
    did not connect back in time is restarted from its checkpoint, as kindling's restart strategy would."""

    def __init__(self, df, checkpoint: str, trigger: Optional[dict] = None) -> None:
        self.batches: dict[int, list] = {}
        self._lock = threading.Lock()
        self._df, self._checkpoint, self._trigger = df, checkpoint, trigger
        self.restarts = 0
        self.query = self._start()

    def _start(self):
        def collect(batch, batch_id):
            got = batch.collect()
            with self._lock:
                self.batches[batch_id] = got

        writer = self._df.writeStream.foreachBatch(collect).option("checkpointLocation", self._checkpoint)
        if self._trigger:
            writer = writer.trigger(**self._trigger)
        return writer.start()

    @property
    def rows(self) -> list[tuple[int, object]]:
        with self._lock:
            return [(batch_id, row) for batch_id in sorted(self.batches) for row in self.batches[batch_id]]

    def check(self) -> None:
        """Raise the query's failure; restart it from its checkpoint after a transient one (see TRANSIENT)."""
        error = self.query.exception()
        if error is None:
            return
        if TRANSIENT in str(error) and self.restarts < 10:
            self.restarts += 1
            self.query = self._start()
            return
        raise AssertionError(f"query failed: {error}")

    def wait_for(self, count: int, timeout: float = 300, condition: Optional[Callable[[], bool]] = None) -> list:
        deadline = time.monotonic() + timeout
        while len(self.rows) < count:
            self.check()
            assert time.monotonic() < deadline, f"only {len(self.rows)} of {count} rows within {timeout} s"
            time.sleep(0.1)
        return [r for _, r in self.rows]

    def wait_started(self, timeout: float = 300) -> None:
        """Until the first micro-batch (the start position is fixed by then)."""
        deadline = time.monotonic() + timeout
        while not self.query.recentProgress:
            self.check()
            assert time.monotonic() < deadline, "the query made no progress"
            time.sleep(0.1)

    def settle(self) -> list:
        """Process what the source still has (a duplicate would show up now), stop, and return the rows."""
        self.query.processAllAvailable()
        self.query.stop()
        return [r for _, r in self.rows]


def reader(spark, kinesis, stream_name: str, schema, **options):
    opts = {"stream": stream_name, "format": "json", "aws.region": "us-east-1", "aws.endpoint": kinesis.endpoint,
            "aws.credentials.provider": "BASIC", "aws.credentials.basic.accesskeyid": "kindling-local",
            "aws.credentials.basic.secretkey": "kindling-local-secret", "scan.stream.initpos": "TRIM_HORIZON",
            "scan.shard.getrecords.intervalmillis": "50", "scan.shard.discovery.intervalmillis": "500", **options}
    opts = {k: v for k, v in opts.items() if v is not None}  # None: leave the option out
    return spark.readStream.format("kindling_kinesis").schema(with_eos(schema)).options(**opts).load()


def read_all(client, stream: str, expected: int, timeout: float = 240) -> list[dict]:
    """Every record of ``stream``, read with GetRecords, until ``expected`` arrived."""
    iterators = {s["ShardId"]: client.get_shard_iterator(StreamName=stream, ShardId=s["ShardId"],
                                                         ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
                 for s in client.list_shards(StreamName=stream)["Shards"]}
    records: list[dict] = []
    deadline = time.monotonic() + timeout
    while len(records) < expected:
        assert time.monotonic() < deadline, f"only {len(records)} of {expected} records in {stream} within {timeout} s"
        for shard, iterator in list(iterators.items()):
            response = client.get_records(ShardIterator=iterator)
            records.extend(response["Records"])
            iterators[shard] = response["NextShardIterator"]
        time.sleep(0.2)
    return records

"""KPL-aggregated records read as their user records: the decoder on its own, the driver's event times
under watermark synchronisation, and a Spark query on kinesis-local reading aggregated records mixed with
plain ones (every user record once, in order per partition key, a corrupt aggregate as a plain record, an
aggregate in the wrong shard dropped), and the same records again as a replayed batch reads them."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import defaultdict

import pyarrow as pa
import pytest
from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType, TimestampType

from kindling.connectors.base import with_eos
from kindling.connectors.kinesis import aggregation
from kindling.connectors.kinesis.aggregation import UserRecord, deaggregate, deaggregate_batch, user_records
from kindling.connectors.kinesis.alignment import event_time_reader
from kindling.connectors.kinesis.options import metadata_option, source_config
from kindling.connectors.kinesis.source import AFTER, TRIM_HORIZON, KinesisInputPartition, _record_batch, read_partition
from kindling.formats import FormatSettings, ValueDecoder

sys.path.insert(0, os.path.dirname(__file__))
from kinesis_helpers import Collector, kpl_aggregate, new_stream  # noqa: E402

# What aws-kinesis-agg 1.2.3's RecordAggregator wrote for add_user_record('pk1', b'hello', None) and
# add_user_record('pk2', b'world', '123'): an encoder independent of kindling's and of the test's.
AWS_KINESIS_AGG = bytes.fromhex("f3899ac20a03706b310a03706b3212033132331a0908001a0568656c6c6f1a0b080110001a05776f726c64"
                                "cb48b8211afb3c05f4c31852c9aff58e")


def md5_key(key: str) -> int:
    return int.from_bytes(hashlib.md5(key.encode()).digest(), "big")


def test_decodes_what_aws_kinesis_agg_aggregates():
    assert user_records(AWS_KINESIS_AGG) == [UserRecord(b"pk1", None, b"hello"), UserRecord(b"pk2", 123, b"world")]
    assert kpl_aggregate([("pk1", b"hello", None), ("pk2", b"world", "123")]) == AWS_KINESIS_AGG


def test_user_records_keep_their_order_keys_and_data_and_skip_tags_and_unknown_fields():
    records = [("k\u00e9", b"", None), ("b", b"\x00\xff" * 300, "42"), ("k\u00e9", b"x", "42"), ("c", b"y", None)]
    tag = b"\x22\x07\x0a\x01t\x12\x02vv"  # Record.tags = [Tag(key="t", value="vv")]
    unknown = b"\x28\x05" + b"\x31" + bytes(8) + b"\x3d" + bytes(4)  # varint, fixed64, fixed32 fields 5, 6, 7
    for extra in (b"", tag, unknown):
        got = user_records(kpl_aggregate(records, extra))
        assert got == [UserRecord(k.encode(), None if h is None else int(h), d) for k, d, h in records]
    assert user_records(kpl_aggregate([("a", b"", None)])) == [UserRecord(b"a", None, b"")]
    assert user_records(kpl_aggregate([])) is None, "magic and MD5 of nothing: a plain record, as in KCL"
    assert got[0].hash_key() == md5_key("k\u00e9") and got[1].hash_key() == 42


def test_a_record_that_is_not_a_valid_aggregate_is_a_plain_record():
    good = kpl_aggregate([("a", b"1", None)])

    def sealed(message: bytes) -> bytes:
        return b"\xf3\x89\x9a\xc2" + message + hashlib.md5(message).digest()

    for data in (b"", b"plain", good[:20], good[:-1] + bytes([good[-1] ^ 1]), b"\x00" + good[1:], good[:4] + bytes(16),
                 sealed(b"\xff\xff"),  # a truncated varint
                 sealed(b"\x1a\x02\x08\x00\x0a\x01a"),  # a record without its required data
                 sealed(b"\x0a\x01a\x1a\x05\x08\x01\x1a\x01x"),  # partition key index 1 of a 1-entry table
                 sealed(b"\x0a\x01a\x12\x02-x\x1a\x07\x08\x00\x10\x00\x1a\x01x"),  # an explicit hash key "-x"
                 sealed(b"\x0b\x0c")):  # a group (wire type 3)
        assert user_records(data) is None, data
        assert deaggregate([data]).data == [data]


def test_an_aggregate_with_a_user_record_outside_the_shard_is_dropped_whole_as_kcl_does():
    inside = kpl_aggregate([("a", b"1", "10"), ("b", b"2", "20")])
    outside = kpl_aggregate([("c", b"3", "10"), ("d", b"4", "99")])
    by_key = kpl_aggregate([("e", b"5", None)])  # no explicit hash key: the partition key's MD5 decides
    calls = []

    def bounds() -> tuple[int, int]:
        calls.append(1)
        return 0, 50

    result = deaggregate([b"p", inside, outside, b"q"], bounds)
    assert (result.data, result.origin, result.dropped, len(calls)) == ([b"p", b"1", b"2", b"q"], [0, 1, 1, 3], [2], 1)
    assert deaggregate([b"p", b"q"], bounds).origin is None and len(calls) == 1, "no aggregate: no range needed"
    assert deaggregate([by_key], lambda: (md5_key("e"), md5_key("e"))).data == [b"5"]
    assert deaggregate([by_key], lambda: (0, md5_key("e") - 1)).dropped == [0]
    assert deaggregate([outside]).data == [b"3", b"4"], "without a range (the driver) nothing is dropped"


def test_a_batch_gets_a_row_per_user_record_with_its_kinesis_records_sequence_number_and_arrival(monkeypatch):
    config = source_config({"stream": "s", "format": "raw", "aws.region": "us-east-1"}, "kinesis")
    asked = []
    monkeypatch.setattr(aggregation, "shard_hash_range", lambda config, shard: asked.append(shard) or (0, 100))
    plain = _record_batch([("1", b"a", 10), ("2", b"b", 20)])
    assert deaggregate_batch(config, "shard-1", plain) is plain and not asked
    batch = _record_batch([("1", b"a", 10), ("2", kpl_aggregate([("k", b"b", "5"), ("k", b"c", "6")]), 20),
                           ("3", kpl_aggregate([("k", b"d", "500")]), 30), ("4", b"e", 40)])
    got = deaggregate_batch(config, "shard-1", batch)
    assert got.schema == batch.schema and asked == ["shard-1"]
    assert got.to_pylist() == [{"data": b"a", "sequence": "1", "arrival": 10}, {"data": b"b", "sequence": "2", "arrival": 20},
                               {"data": b"c", "sequence": "2", "arrival": 20}, {"data": b"e", "sequence": "4", "arrival": 40}]


def test_under_watermark_synchronisation_an_aggregate_counts_at_its_latest_user_record():
    decoder = ValueDecoder(StructType([StructField("ts", LongType())]), FormatSettings("json", ignore_parse_errors=True))
    times = event_time_reader(decoder, ["ts"], "ts")

    def record(data: bytes) -> tuple[str, bytes, int]:
        return "1", data, 0

    aggregate = kpl_aggregate([("a", b'{"ts": 30}', None), ("a", b'{"ts": 50}', None), ("a", b'{"ts": 40}', None)])
    unreadable = kpl_aggregate([("a", b"not json", None)])
    got = times([record(b'{"ts": 5}'), record(aggregate), record(b"not json"), record(unreadable), record(b'{"ts": 7}')])
    assert got == [5, 50, None, None, 7]
    assert times([record(b'{"ts": 5}')]) == [5]


SCHEMA = StructType([StructField("data", BinaryType()), StructField("seq", StringType()), StructField("shard", StringType()),
                     StructField("arrival", TimestampType())])


def options(kinesis, stream: str) -> dict[str, str]:
    return {"stream": stream, "format": "raw", "aws.region": "us-east-1", "aws.endpoint": kinesis.endpoint,
            "aws.credentials.provider": "BASIC", "aws.credentials.basic.accesskeyid": "kindling-local",
            "aws.credentials.basic.secretkey": "kindling-local-secret", "scan.stream.initpos": "TRIM_HORIZON",
            "scan.shard.getrecords.intervalmillis": "50", "scan.shard.discovery.intervalmillis": "500",
            "kindling.table.metadata": metadata_option([("seq", "sequence-number"), ("shard", "shard-id"), ("arrival", "timestamp")])}


@pytest.mark.integration
def test_a_query_reads_kpl_aggregated_records_mixed_with_plain_ones(spark, kinesis, tmp_path):
    stream = new_stream(kinesis, 2)
    client = kinesis.client()
    ranges = {s["ShardId"]: (int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"]))
              for s in client.list_shards(StreamName=stream)["Shards"]}
    shard_of = {key: next(s for s, (lo, hi) in ranges.items() if lo <= md5_key(key) <= hi) for key in (f"k{i}" for i in range(8))}
    assert len(set(shard_of.values())) == 2

    # As a KPL producer: user records aggregated per shard (the Kinesis record routed by its first user record's
    # hash key), some user records put alone, a pending aggregate flushed before them to keep each key's order.
    kinesis_records: list[tuple[str, bytes, str]] = []  # (partition key, data, explicit hash key)
    held: list[list[int]] = []  # the user records (index) each Kinesis record holds
    pending: dict[str, list[tuple[int, str, bytes, str | None]]] = defaultdict(list)
    users: list[bytes] = []

    def flush(shard: str) -> None:
        if pending[shard]:
            first = pending[shard][0]
            data = kpl_aggregate([(key, data, hash_key) for _, key, data, hash_key in pending[shard]])
            kinesis_records.append((first[1], data, first[3] or str(md5_key(first[1]))))
            held.append([i for i, *_ in pending.pop(shard)])

    for n in range(10):
        for key in sorted(shard_of):
            shard = shard_of[key]
            index, data = len(users), json.dumps({"key": key, "n": n}).encode()
            users.append(data)
            if (index * 7) % 11 == 0:  # alone, a plain record
                flush(shard)
                kinesis_records.append((key, data, str(md5_key(key))))
                held.append([index])
                continue
            middle = str(sum(ranges[shard]) // 2) if index % 5 == 0 else None  # an explicit hash key inside the shard
            pending[shard].append((index, key, data, middle))
            if len(pending[shard]) == 6:
                flush(shard)
    for shard in sorted(pending):
        flush(shard)
    # A corrupt aggregate (bad MD5) is a plain record; an aggregate holding a user record of the other shard
    # (the KPL put it again there after resharding) is dropped whole.
    (low_shard, low), (high_shard, high) = sorted(ranges.items(), key=lambda item: item[1])
    corrupt = kpl_aggregate([("k0", b"lost?", None)])[:-1] + b"\x00"
    wrong = kpl_aggregate([("x", b"dup-1", str(low[0])), ("y", b"dup-2", str(high[0]))])
    kinesis_records[5:5] = [("c", corrupt, str(low[0])), ("w", wrong, str(low[0]))]
    held[5:5] = [[len(users)], []]
    users.append(corrupt)

    placed = client.put_records(StreamName=stream, Records=[
        {"PartitionKey": k, "Data": d, "ExplicitHashKey": h} for k, d, h in kinesis_records])["Records"]
    assert all("SequenceNumber" in p for p in placed)
    assert placed[6]["ShardId"] == low_shard and sum(len(h) > 1 for h in held) >= 6
    where = {i: (p["ShardId"], p["SequenceNumber"]) for p, indices in zip(placed, held) for i in indices}

    collector = Collector(spark.readStream.format("kindling_kinesis").schema(with_eos(SCHEMA))
                          .options(**options(kinesis, stream)).load(), str(tmp_path / "cp"))
    collector.wait_for(len(users))
    rows = collector.settle()
    assert sorted(r["data"] for r in rows) == sorted(users), "every user record once, the corrupt aggregate as it is"
    for row in rows:
        assert (row["shard"], row["seq"]) == where[users.index(row["data"])], "the Kinesis record's shard and sequence number"
    by_key = defaultdict(list)
    for row in sorted(rows, key=lambda r: int(r["seq"])):  # a stable sort: an aggregate's rows keep their order
        if row["data"] != corrupt:
            user = json.loads(row["data"])
            by_key[user["key"]].append(user["n"])
    assert by_key == {key: list(range(10)) for key in shard_of}

    # A replayed batch reads the same range from Kinesis on the executor and de-aggregates it the same way.
    config = source_config(options(kinesis, stream), "kinesis")
    for shard in ranges:
        last = max((p["SequenceNumber"] for p in placed if p["ShardId"] == shard), key=int)
        replayed = pa.Table.from_batches(list(read_partition(config, with_eos(SCHEMA), KinesisInputPartition(shard, TRIM_HORIZON, AFTER + last))))
        assert [r["data"] for r in replayed.to_pylist()] == [r["data"] for r in sorted(rows, key=lambda r: int(r["seq"])) if r["shard"] == shard]

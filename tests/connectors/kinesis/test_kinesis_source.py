"""The Kinesis source against kinesis-local: every record exactly once across 4 shards, start positions,
metadata columns, and resharding while the job runs."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

from kindling.connectors.kinesis.options import metadata_option

sys.path.insert(0, os.path.dirname(__file__))
from kinesis_helpers import Collector, new_stream, put, reader  # noqa: E402

pytestmark = pytest.mark.integration

SCHEMA = StructType([StructField("id", LongType()), StructField("key", StringType())])
WITH_METADATA = StructType(SCHEMA.fields + [
    StructField("arrival", TimestampType()), StructField("shard", StringType()), StructField("seq", StringType())])
META = {"kindling.table.metadata": metadata_option([("arrival", "timestamp"), ("shard", "shard-id"), ("seq", "sequence-number")])}


def records(ids, keys: int = 16):
    return [(f"k{i % keys}", json.dumps({"id": i, "key": f"k{i % keys}"}).encode()) for i in ids]


def read_once_where_put(rows: list, placed: list[tuple[str, str]]) -> dict:
    """Rows by id, after checking that ids 0..n-1 were each read once with the shard and sequence number
    PutRecords gave them."""
    assert sorted(r["id"] for r in rows) == list(range(len(placed)))
    by_id = {r["id"]: r for r in rows}
    for i, (shard, seq) in enumerate(placed):
        assert (by_id[i]["shard"], by_id[i]["seq"]) == (shard, seq)
    return by_id


def test_reads_every_record_once_from_four_shards_with_metadata(spark, kinesis, tmp_path):
    stream = new_stream(kinesis, 4)
    client = kinesis.client()
    before = time.time()
    placed = put(client, stream, records(range(400)))
    assert len({shard for shard, _ in placed}) == 4
    collector = Collector(reader(spark, kinesis, stream, WITH_METADATA, **META), str(tmp_path / "cp"))
    collector.wait_for(400)
    more = put(client, stream, records(range(400, 500)))  # a second micro-batch, while running
    collector.wait_for(500)
    rows = collector.settle()
    by_id = read_once_where_put(rows, placed + more)
    for row in by_id.values():
        assert before - 5 <= row["arrival"].timestamp() <= time.time() + 5


@pytest.mark.parametrize("publisher", ["POLLING", "EFO"])
def test_start_positions(spark, kinesis, tmp_path, publisher):
    def efo(name: str) -> dict:  # one consumer per query: a consumer holds one subscription per shard
        return {"scan.stream.recordpublisher": "EFO", "scan.stream.efo.consumername": name} if publisher == "EFO" else {}

    stream = new_stream(kinesis, 2)
    client = kinesis.client()
    put(client, stream, records(range(30)))
    # AT_TIMESTAMP: after every record above arrived (the server's arrival times have whole milliseconds)
    seen = [r["ApproximateArrivalTimestamp"].timestamp() for shard in client.list_shards(StreamName=stream)["Shards"]
            for r in client.get_records(ShardIterator=client.get_shard_iterator(
                StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")["ShardIterator"])["Records"]]
    cut = max(seen) + 0.001
    while time.time() < cut + 0.01:  # the next records must arrive after the cut
        time.sleep(0.005)
    put(client, stream, records(range(30, 50)))

    latest = Collector(reader(spark, kinesis, stream, SCHEMA, **{"scan.stream.initpos": "LATEST"}, **efo("latest")), str(tmp_path / "latest"))
    horizon = Collector(reader(spark, kinesis, stream, SCHEMA, **{"scan.stream.initpos": "TRIM_HORIZON"}, **efo("horizon")),
                        str(tmp_path / "horizon"))
    new_efo = {"source.reader.type": "EFO", "source.efo.consumer.name": "at"} if publisher == "EFO" else {}
    at = Collector(reader(spark, kinesis, stream, SCHEMA, **new_efo, **{  # the 5.x dialect
        "stream": None, "stream.arn": f"arn:aws:kinesis:us-east-1:000000000000:stream/{stream}",
        "source.init.position": "AT_TIMESTAMP", "source.init.timestamp": f"{cut:.3f}",
        "scan.stream.initpos": None, "scan.shard.getrecords.intervalmillis": None, "scan.shard.discovery.intervalmillis": None,
        "source.shard.discovery.interval": "500 ms", "source.reader.empty-records-fetch-interval": "50 ms",
    }), str(tmp_path / "at"))
    latest.wait_started()
    put(client, stream, records(range(50, 60)))
    assert sorted(r["id"] for r in latest.wait_for(10)) == list(range(50, 60))
    assert sorted(r["id"] for r in horizon.wait_for(60)) == list(range(60))
    assert sorted(r["id"] for r in at.wait_for(30)) == list(range(30, 60))
    for collector, expected in ((latest, range(50, 60)), (horizon, range(60)), (at, range(30, 60))):
        assert sorted(r["id"] for r in collector.settle()) == list(expected)


def test_efo_reads_every_record_once_through_subscriptions_and_manages_its_consumer(spark, kinesis, tmp_path):
    """Two EFO sources on one stream: one registers its consumer (LAZY), the other reads with a consumer
    registered outside the job (NONE)."""
    stream = new_stream(kinesis, 4)
    client = kinesis.client()
    stream_arn = client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]
    external = client.register_stream_consumer(StreamARN=stream_arn, ConsumerName="external")["Consumer"]["ConsumerARN"]
    placed = put(client, stream, records(range(200)))
    efo = {"scan.stream.recordpublisher": "EFO", "scan.shard.getrecords.intervalmillis": "20"}
    lazy = Collector(reader(spark, kinesis, stream, WITH_METADATA, **META, **efo, **{"scan.stream.efo.consumername": "lazy"}),
                     str(tmp_path / "lazy"))
    none = Collector(reader(spark, kinesis, stream, SCHEMA, **efo, **{"scan.stream.efo.registration": "NONE",
                                                                       f"scan.stream.efo.consumerarn.{stream}": external}),
                     str(tmp_path / "none"))
    lazy.wait_for(200)
    none.wait_for(200)
    consumers = {c["ConsumerName"] for c in client.list_stream_consumers(StreamARN=stream_arn)["Consumers"]}
    assert consumers == {"lazy", "external"}
    more = put(client, stream, records(range(200, 300)))  # while running: through the open subscriptions
    for collector in (lazy, none):
        collector.wait_for(300)
    rows = lazy.settle()
    read_once_where_put(rows, placed + more)
    assert sorted(r["id"] for r in none.settle()) == list(range(300))
    # A bare Spark query has no job layer to deregister the consumer (Spark gives the source no graceful
    # stop), so it stays, as after a crash: a second start reuses it and reads everything again from a new checkpoint.
    consumers = {c["ConsumerName"]: c["ConsumerARN"] for c in client.list_stream_consumers(StreamARN=stream_arn)["Consumers"]}
    assert set(consumers) == {"lazy", "external"}
    again = Collector(reader(spark, kinesis, stream, SCHEMA, **efo, **{"scan.stream.efo.consumername": "lazy"}),
                      str(tmp_path / "again"))
    again.wait_for(300)
    assert sorted(r["id"] for r in again.settle()) == list(range(300))
    assert {c["ConsumerName"]: c["ConsumerARN"] for c in client.list_stream_consumers(StreamARN=stream_arn)["Consumers"]} == consumers

"""The filesystem source, driven as Spark drives a stream reader: offsets, splits, Arrow batches."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest
from fs_helpers import Driver, forget_driver_state, ids_table
from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType

from kindling.connectors.base import EOS_COLUMN, EOS_OFFSET_KEY
from kindling.connectors.filesystem import CONNECTOR
from kindling.connectors.filesystem.source import FileStreamReader

SINK_SCHEMA = StructType([StructField("id", LongType()), StructField("part", StringType()), StructField("payload", StringType())])
SOURCE_SCHEMA = StructType([StructField("id", LongType()), StructField("payload", StringType()), StructField("part", StringType()),
                            StructField(EOS_COLUMN, BooleanType())])


@pytest.fixture(autouse=True)
def _fresh_driver():
    forget_driver_state()
    yield
    forget_driver_state()


def read_all(reader: FileStreamReader, start: dict, end: dict) -> pa.Table:
    batches = [b for split in reader.partitions(start, end) for b in reader.read(split)]
    return pa.Table.from_batches(batches) if batches else pa.table({})


def test_bounded_read_restores_partitions_and_skips_uncommitted_files(tmp_path, monkeypatch):
    path = str(tmp_path / "table")
    sink = Driver({"path": path, "format": "json", "kindling.table.partition-keys": "part",
                   "sink.rolling-policy.rollover-interval": "0 s"}, SINK_SCHEMA, tmp_path / "checkpoint", monkeypatch)
    sink.run(0, [ids_table(range(30))], now_ms=1)
    sink.stage(1, [ids_table(range(30, 60))])  # staged, never committed: invisible
    (tmp_path / "table" / "part=p0" / "_SUCCESS").write_bytes(b"")
    options = {"path": path, "format": "json", "kindling.table.partition-keys": "part"}
    reader = FileStreamReader(options, SOURCE_SCHEMA)
    start = reader.initialOffset()
    end = reader.latestOffset(start)
    assert end[EOS_OFFSET_KEY] and len(end["files"]) == 3
    table = read_all(reader, start, end)
    rows = [r for r in table.to_pylist() if not r[EOS_COLUMN]]
    assert sorted(r["id"] for r in rows) == list(range(30))
    assert all(r["part"] == f"p{r['id'] % 3}" and r["payload"] == f"record-{r['id']:06d}" for r in rows)
    assert sum(1 for r in table.to_pylist() if r[EOS_COLUMN]) == 1  # the end-of-input marker, once
    assert CONNECTOR.is_bounded(CONNECTOR.validate_source(options))


def test_continuous_read_picks_up_new_files_once(tmp_path, monkeypatch):
    path = str(tmp_path / "table")
    sink = Driver({"path": path, "format": "parquet"}, SINK_SCHEMA, tmp_path / "checkpoint", monkeypatch)
    sink.run(0, [ids_table(range(10))], now_ms=1)
    options = {"path": path, "format": "parquet", "source.monitor-interval": "1 ms"}
    schema = StructType([f for f in SOURCE_SCHEMA.fields])
    reader = FileStreamReader(options, schema)
    assert not CONNECTOR.is_bounded(CONNECTOR.validate_source(options))
    first = reader.latestOffset(reader.initialOffset())
    assert EOS_OFFSET_KEY not in first
    assert sorted(read_all(reader, reader.initialOffset(), first).column("id").to_pylist()) == list(range(10))
    assert reader.latestOffset(first) == first  # nothing new
    sink.run(1, [ids_table(range(10, 25))], now_ms=2)
    second = reader.latestOffset(first)
    assert sorted(read_all(reader, first, second).column("id").to_pylist()) == list(range(10, 25))
    # A restarted query replays from its checkpointed offsets: the same files, the same records.
    again = FileStreamReader(options, schema)
    assert sorted(read_all(again, first, second).column("id").to_pylist()) == list(range(10, 25))


@pytest.mark.integration
def test_entropy_injection_spreads_data_files_and_the_source_finds_them(s3, tmp_path, monkeypatch):
    bucket = f"en-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(bucket)
    path = f"s3://{bucket}/_entropy_/events"
    options = {"path": path, "format": "parquet", **s3.options(), "s3.entropy.key": "_entropy_", "s3.entropy.length": "4",
               "kindling.table.partition-keys": "part"}
    sink = Driver(options, SINK_SCHEMA, tmp_path / "checkpoint", monkeypatch)
    sink.run(0, [ids_table(range(0, 40)), ids_table(range(40, 80))], now_ms=1)
    fs = s3.filesystem()
    import pyarrow.fs as pafs

    keys = [i.path for i in fs.get_file_info(pafs.FileSelector(bucket, recursive=True)) if i.type == pafs.FileType.File]
    data = [k for k in keys if k.endswith(".parquet")]
    assert len(data) == 6
    prefixes = {k.split("/")[1] for k in data}
    assert all(len(p) == 4 and p.isalnum() and p != "_entropy_" for p in prefixes) and len(prefixes) > 1
    assert all(k.split("/", 2)[2].startswith("events/part=") for k in data)
    # The commit log is not data: the key is removed from its path.
    assert any(k.startswith(f"{bucket}/events/.kindling/commits/") for k in keys)
    reader = FileStreamReader({k: v for k, v in options.items()}, SOURCE_SCHEMA)
    end = reader.latestOffset(reader.initialOffset())
    rows = [r for r in read_all(reader, reader.initialOffset(), end).to_pylist() if not r[EOS_COLUMN]]
    assert sorted(r["id"] for r in rows) == list(range(80))
    assert all(r["part"] == f"p{r['id'] % 3}" for r in rows)
    # A path without the key is untouched.
    plain = Driver({**options, "path": f"s3://{bucket}/plain"}, SINK_SCHEMA, tmp_path / "checkpoint2", monkeypatch)
    plain.run(0, [ids_table(range(5))], now_ms=1)
    after = [i.path for i in fs.get_file_info(pafs.FileSelector(bucket, recursive=True)) if i.path.endswith(".parquet")]
    new_files = sorted(set(after) - set(data))
    assert new_files and all(k.startswith(f"{bucket}/plain/part=") for k in new_files)

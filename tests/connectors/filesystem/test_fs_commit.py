"""The sink's two-phase commit without Spark: write() as executors run it, commit() as the driver does.

Every test runs against a local directory and against the local S3 server (SeaweedFS).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pyarrow as pa
import pytest
from fs_helpers import Driver, Table, forget_driver_state, ids_table, local_table
from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

from kindling.connectors.filesystem import CONNECTOR
from kindling.connectors.filesystem.commit_log import CommitFenceError, CommitLog
from kindling.connectors.filesystem.options import sink_config
from kindling.connectors.filesystem.storage import Storage

SCHEMA = StructType([StructField("id", LongType()), StructField("part", StringType()), StructField("payload", StringType())])
PARTITIONED = {"kindling.table.partition-keys": "part"}


@dataclass
class Store:
    kind: str
    path: str
    options: dict
    fs: object
    root: str

    def table(self, fmt: str) -> Table:
        return Table(self.fs, self.root, fmt)


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path) -> Store:
    if request.param == "local":
        table = local_table(tmp_path / "table", "parquet")
        return Store("local", str(tmp_path / "table"), {}, table.fs, table.root)
    s3 = request.getfixturevalue("s3")
    bucket = f"t-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(bucket)
    return Store("s3", f"s3://{bucket}/table", s3.options(), s3.filesystem(), f"{bucket}/table")


@pytest.fixture(autouse=True)
def _fresh_driver():
    forget_driver_state()
    yield
    forget_driver_state()


def driver(store: Store, tmp_path, monkeypatch, fmt: str = "parquet", **options) -> Driver:
    return Driver({"path": store.path, "format": fmt, **store.options, **options}, SCHEMA, tmp_path / "checkpoint", monkeypatch)


def test_replayed_batch_is_published_once(store, tmp_path, monkeypatch):
    sink = driver(store, tmp_path, monkeypatch, **PARTITIONED)
    table = store.table("parquet")
    messages = sink.run(0, [ids_table(range(0, 50)), ids_table(range(50, 100))], now_ms=1000)
    first = table.files()
    assert table.ids() == list(range(100))
    assert {f.split("/")[0] for f in first} == {"part=p0", "part=p1", "part=p2"}
    assert all(f.split("/")[1].startswith("part-") and f.endswith(".parquet") for f in first)
    sink.writer.commit(messages, 0)  # the driver crashed after committing: Spark commits the batch again
    forget_driver_state()  # ... from a new driver process
    sink.writer.commit(messages, 0)
    assert table.files() == first and table.ids() == list(range(100))
    sink.run(1, [ids_table(range(100, 120))], now_ms=2000)
    assert table.ids() == list(range(120))
    # A batch id below the log's last one is not a replay: the table belongs to another checkpoint.
    with pytest.raises(CommitFenceError, match="another checkpoint"):
        sink.run(0, [ids_table(range(900, 910))], now_ms=3000)
    assert table.ids() == list(range(120))
    # Partition columns live in the directory names, not in the files (as in Flink).
    assert table.read(table.files()[0]).column_names == ["id", "payload"]


def test_crash_after_the_log_entry_rolls_forward_and_replays_are_skipped(store, tmp_path, monkeypatch):
    sink = driver(store, tmp_path, monkeypatch)
    table = store.table("parquet")
    staged = sink.stage(0, [ids_table(range(30))], now_ms=1000)
    config = sink_config(sink.options)
    log = CommitLog(Storage(config), config)
    entry = log.plan(None, [f for m in staged for f in m.files], 0, 0, 1000, None, flush_all=False)
    log.write(entry)  # the commit point ... and the driver dies before publishing
    assert table.files() == []  # nothing is visible yet
    forget_driver_state()
    replay = sink.stage(0, [ids_table(range(30))], now_ms=1000)  # Spark replays batch 0: new staged files
    sink.writer.commit(replay, 0)
    assert table.ids() == list(range(30))  # the first attempt's files, published once
    sink.run(1, [ids_table(range(30, 40))], now_ms=2000)
    assert table.ids() == list(range(40))
    # The replay's staged files were orphans: the next commit removed them.
    assert [n for n in table.all_names() if "/staging/" in n] == []


def test_abort_and_killed_tasks_leave_no_staged_files(store, tmp_path, monkeypatch):
    sink = driver(store, tmp_path, monkeypatch, fmt="json")
    table = store.table("json")
    aborted = sink.stage(0, [ids_table(range(10))])
    sink.writer.abort(aborted, 0)
    assert [n for n in table.all_names() if "staging" in n] == []
    sink.stage(0, [ids_table(range(10))])  # a task killed after writing: its files stay staged ...
    sink.run(0, [ids_table(range(10))], now_ms=10**12)
    # ... until the batch commits. The committed piece stays staged: a row-format part file is
    # still open (it rolls by size and time); the end of the input publishes it.
    assert len([n for n in table.all_names() if "staging" in n]) == 1 and table.files() == []
    CONNECTOR.on_bounded_finish(sink.options, sink.options["checkpointLocation"])
    assert table.ids() == list(range(10))
    assert [n for n in table.all_names() if "staging" in n] == []


def test_rolling_by_size(store, tmp_path, monkeypatch):
    size = 8 * 1024
    sink = driver(store, tmp_path, monkeypatch, **{"sink.rolling-policy.file-size": f"{size}b", "parquet.compression": "NONE"})
    table = store.table("parquet")
    sink.run(0, [ids_table(range(5000))], now_ms=1000)
    files = table.files()
    sizes = sorted(table.size(f) for f in files)
    assert len(files) > 3
    assert all(s >= size for s in sizes[1:])  # every file rolled at the size, but the last one
    assert table.ids() == list(range(5000))


def test_rolling_by_time_and_inactivity_for_row_formats(store, tmp_path, monkeypatch):
    sink = driver(store, tmp_path, monkeypatch, fmt="json", **PARTITIONED, **{
        "sink.rolling-policy.rollover-interval": "10 s", "sink.rolling-policy.inactivity-interval": "5 s"})
    table = store.table("json")
    p0 = lambda i: "p0"
    sink.run(0, [ids_table(range(0, 10), p0)], now_ms=0)
    sink.run(1, [ids_table(range(10, 20), p0)], now_ms=3000)
    sink.run(2, [ids_table(range(20, 30), p0)], now_ms=6000)
    assert table.files() == []  # one part file in progress across checkpoints
    sink.run(3, [ids_table(range(30, 40), p0)], now_ms=10_000)  # rollover-interval after it was opened
    files = table.files()
    assert len(files) == 1 and table.ids() == list(range(40))
    # Inactivity: p1 gets a record at 12 s, then only p2 gets records; p1 rolls 5 s later.
    sink.run(4, [ids_table([40], lambda i: "p1")], now_ms=12_000)
    sink.run(5, [ids_table([41], lambda i: "p2")], now_ms=16_000)
    assert not any(f.startswith("part=p1/") for f in table.files())
    sink.run(6, [ids_table([42], lambda i: "p2")], now_ms=17_000)
    assert any(f.startswith("part=p1/") for f in table.files())
    assert not any(f.startswith("part=p2/") for f in table.files())


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_compaction_merges_small_files_before_they_are_visible(store, tmp_path, monkeypatch, fmt):
    target = 2048
    options = {"auto-compaction": "true", "compaction.file-size": f"{target}b", **PARTITIONED}
    sink = driver(store, tmp_path, monkeypatch, fmt=fmt, **options)
    table = store.table(fmt)
    ids = iter(range(10**6))
    for batch in range(40):  # many tiny micro-batches from two tasks
        sink.run(batch, [ids_table([next(ids) for _ in range(12)]), ids_table([next(ids) for _ in range(10)])], now_ms=batch * 100)
        assert all(table.size(f) >= target for f in table.files())  # nothing small is ever visible
    CONNECTOR.on_bounded_finish(sink.options, sink.options["checkpointLocation"])  # end of input: the rest of each partition is published
    assert table.ids() == list(range(880))
    for part in ("p0", "p1", "p2"):
        sizes = sorted(table.size(f) for f in table.files() if f.startswith(f"part={part}/"))
        assert len(sizes) >= 2 and all(s >= target for s in sizes[1:]), sizes
    assert [n for n in table.all_names() if "staging" in n] == []


def test_turning_compaction_off_publishes_files_that_waited(store, tmp_path, monkeypatch):
    compacting = driver(store, tmp_path, monkeypatch, **{"auto-compaction": "true", "compaction.file-size": "1mb"})
    table = store.table("parquet")
    for batch in range(3):
        compacting.run(batch, [ids_table(range(batch * 10, batch * 10 + 10))], now_ms=batch)
    assert table.files() == []  # waiting for more data
    forget_driver_state()
    plain = driver(store, tmp_path, monkeypatch)  # restarted from the checkpoint without compaction
    plain.run(3, [ids_table(range(30, 40))], now_ms=10)
    assert table.ids() == list(range(40))


def test_partition_commit_writes_success_files(store, tmp_path, monkeypatch):
    schema_table = lambda ids, dt, hour: pa.table({"id": pa.array(ids, pa.int64()), "dt": [dt] * len(ids), "hour": [hour] * len(ids)})
    options = {"path": store.path, "format": "parquet", **store.options, "kindling.table.partition-keys": "dt;hour",
               "sink.partition-commit.trigger": "partition-time", "sink.partition-commit.delay": "1 h",
               "sink.partition-commit.policy.kind": "success-file", "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00"}
    schema = StructType([StructField("id", LongType()), StructField("dt", StringType()), StructField("hour", StringType())])
    sink = Driver(options, schema, tmp_path / "checkpoint", monkeypatch)
    table = store.table("parquet")
    hour = lambda h: 1704067200000 + h * 3_600_000  # 2024-01-01 h:00 UTC
    sink.run(0, [schema_table([1, 2], "2024-01-01", "10"), schema_table([3], "2024-01-01", "11")], now_ms=1, watermark_ms=hour(10) + 1)
    success = lambda: sorted(n for n in table.all_names() if n.endswith("_SUCCESS"))
    assert success() == []
    sink.run(1, [schema_table([4], "2024-01-01", "11")], now_ms=2, watermark_ms=hour(11) - 1)
    assert success() == []  # the watermark has not passed 10:00 + 1 h
    sink.run(2, [schema_table([5], "2024-01-01", "12")], now_ms=3, watermark_ms=hour(11))
    assert success() == ["dt=2024-01-01/hour=10/_SUCCESS"]
    CONNECTOR.on_bounded_finish(options, sink.options["checkpointLocation"])  # end of input: the final watermark commits every partition
    assert success() == ["dt=2024-01-01/hour=10/_SUCCESS", "dt=2024-01-01/hour=11/_SUCCESS", "dt=2024-01-01/hour=12/_SUCCESS"]
    assert table.ids() == [1, 2, 3, 4, 5]

    # process-time with no delay: a partition is committed with the checkpoint that created it.
    forget_driver_state()
    other = Driver(dict(options, path=store.path + "-pt", **{"sink.partition-commit.trigger": "process-time",
                                                             "sink.partition-commit.delay": "0 s"}),
                   schema, tmp_path / "checkpoint2", monkeypatch)
    other.run(0, [schema_table([1], "2024-02-02", "01")], now_ms=5)
    assert "dt=2024-02-02/hour=01/_SUCCESS" in Table(store.fs, store.root + "-pt", "parquet").all_names()


def test_date_time_bucket_pattern(store, tmp_path, monkeypatch):
    schema = StructType([StructField("id", LongType()), StructField("ts", TimestampType())])
    options = {"path": store.path, "format": "json", **store.options, "sink.bucket-assigner": "datetime",
               "sink.bucket-assigner.format": "'year='yyyy/'month='MM/'day='dd/'hour='HH",
               "sink.bucket-assigner.timestamp-field": "ts", "sink.rolling-policy.rollover-interval": "0 s"}
    sink = Driver(options, schema, tmp_path / "checkpoint", monkeypatch)
    ts = pa.array([1709622000000000, 1709625600000000, 1735689599000000], pa.timestamp("us", tz="UTC"))
    sink.run(0, [pa.table({"id": pa.array([1, 2, 3], pa.int64()), "ts": ts})], now_ms=1)
    dirs = sorted(f.rsplit("/", 1)[0] for f in store.table("json").files())
    assert dirs == ["year=2024/month=03/day=05/hour=07", "year=2024/month=03/day=05/hour=08", "year=2024/month=12/day=31/hour=23"]

"""Packing a keyed operator's records per key group and unpacking them as Spark itself converts its input."""
import datetime
import decimal

import pandas as pd
import pyarrow as pa
from pyspark.sql.conversion import ArrowBatchTransformer

from kindling.datastream import key_group_batches as kgb


def _table(n: int = 12) -> pa.Table:
    groups = [5, 1, 5, 3, 1, 5, 3, 3, 1, 5, 1, 3][:n]
    return pa.table({
        "g": pa.array(groups, pa.int32()),
        "k": pa.array([i % 4 if i % 5 else None for i in range(n)], pa.int64()),
        "s": pa.array([f"s{i}" if i % 3 else None for i in range(n)], pa.string()),
        "row": pa.array([{"a": i, "b": [i, None]} for i in range(n)],
                        pa.struct([("a", pa.int32()), ("b", pa.list_(pa.int64()))])),
        "m": pa.array([[("x", float(i))] for i in range(n)], pa.map_(pa.string(), pa.float64())),
        "t": pa.array([datetime.datetime(2024, 1, 1, 12, i, tzinfo=datetime.timezone.utc) for i in range(n)],
                      pa.timestamp("us", tz="UTC")),
        "d": pa.array([decimal.Decimal(f"{i}.25") for i in range(n)], pa.decimal128(10, 2)),
        "day": pa.array([datetime.date(2024, 2, 1 + i) for i in range(n)], pa.date32()),
        "bin": pa.array([bytes([i]) for i in range(n)], pa.binary()),
    })


def _as_spark_hands_it(batch: pa.RecordBatch) -> pd.DataFrame:
    """A packed batch as the operator's worker receives it: a pandas frame, the packed rows last."""
    return pd.concat(ArrowBatchTransformer.to_pandas(batch, timezone="UTC"), axis=1)


def test_one_packed_row_per_group_holding_its_rows_in_arrival_order():
    table = _table()
    packed = kgb.split(table.to_batches(max_chunksize=5), ["g"])
    assert packed.schema.names == ["g", kgb.PACKED]
    assert packed.column(0).to_pylist() == [1, 3, 5]
    for group, blob in zip(packed.column(0).to_pylist(), packed.column(1).to_pylist()):
        rows = pa.ipc.open_stream(blob).read_all()
        expected = [i for i, g in enumerate(table.column("g").to_pylist()) if g == group]
        assert rows.column("s").to_pylist() == [table.column("s")[i].as_py() for i in expected]
        assert rows.schema == table.schema


def test_groups_by_several_columns():
    table = pa.table({"slot": pa.array([2, 1, 2, 1, 2], pa.int32()), "g": pa.array([0, 0, 1, 0, 0], pa.int32()),
                      "v": pa.array(range(5), pa.int64())})
    packed = kgb.split(table.to_batches(), ["slot", "g"])
    assert list(zip(packed.column(0).to_pylist(), packed.column(1).to_pylist())) == [(1, 0), (2, 0), (2, 1)]
    values = [pa.ipc.open_stream(b).read_all().column("v").to_pylist() for b in packed.column(2).to_pylist()]
    assert values == [[1, 3], [0, 4], [2]]


def test_unpacked_records_are_what_spark_converts_the_rows_to():
    table = _table()
    packed = kgb.split(table.to_batches(max_chunksize=4), ["g"])
    frame = _as_spark_hands_it(packed)
    for position, group in enumerate(frame["g"].tolist()):
        [unpacked] = list(kgb.frames(iter([frame.iloc[[position]]]), "UTC"))
        mine = table.filter(pa.compute.equal(table.column("g"), group))
        expected = pd.concat(ArrowBatchTransformer.to_pandas(mine, timezone="UTC"), axis=1)
        pd.testing.assert_frame_equal(unpacked, expected)
        assert repr(unpacked["row"].tolist()) == repr(expected["row"].tolist())  # nested values, as Spark gives them


def test_a_group_packed_by_several_map_tasks_unpacks_as_one_frame_in_order():
    first, second = _table(6), _table(12).slice(6)
    frames = [_as_spark_hands_it(kgb.split(t.to_batches(), ["g"])) for t in (first, second)]
    ones = [f[f["g"] == 1] for f in frames]
    [unpacked] = list(kgb.frames(iter(ones), "UTC"))
    both = pa.concat_tables([first, second])
    assert unpacked["s"].tolist() == [s for s, g in zip(both.column("s").to_pylist(), both.column("g").to_pylist()) if g == 1]


def test_nothing_packed_gives_no_frame():
    assert list(kgb.frames(iter([]), "UTC")) == []


def test_a_map_task_packs_what_it_gathered_whenever_it_passes_the_bound(monkeypatch):
    monkeypatch.setattr(kgb, "_FLUSH_ROWS", 5)
    table = _table()
    out = list(kgb._packer(["g"])(iter(table.to_batches(max_chunksize=3))))
    assert [sum(pa.ipc.open_stream(b).read_all().num_rows for b in batch.column(1).to_pylist()) for batch in out] == [6, 6]

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


def _spark_values(table: pa.Table, name: str) -> list:
    """A column as Spark's conversion of the operator's input to pandas gives it, and ``tolist()``."""
    return ArrowBatchTransformer.to_pandas(table.select([name]), timezone="UTC")[0].tolist()


def test_one_packed_row_per_group_holding_its_rows_in_arrival_order():
    table = _table()
    packed = kgb.split(table.to_batches(max_chunksize=5), ["g"])
    assert packed.schema.names == ["g", kgb.PACKED]
    assert packed.column(0).to_pylist() == [1, 3, 5]
    for group, blob in zip(packed.column(0).to_pylist(), packed.column(1).to_pylist()):
        rows = pa.ipc.open_stream(blob).read_all()
        expected = [i for i, g in enumerate(table.column("g").to_pylist()) if g == group]
        assert rows.column("s").to_pylist() == [table.column("s")[i].as_py() for i in expected]
        assert rows.schema == table.drop_columns(["g"]).schema  # the group's value is its row's, once


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
        unpacked = kgb.table(iter([frame.iloc[[position]]]))
        mine = table.filter(pa.compute.equal(table.column("g"), group)).drop_columns(["g"])
        assert unpacked.equals(mine)
        for name in mine.column_names:  # nested values, as Spark gives them
            # (an integer column holding a null: exact ints beside None, where Spark's pandas makes them floats)
            expected = mine.column(name).to_pylist() if name == "k" and mine.column(name).null_count else _spark_values(mine, name)
            assert repr(kgb.column_values(unpacked, name, "UTC")) == repr(expected), name


def test_a_group_packed_by_several_map_tasks_unpacks_as_one_table_in_order():
    first, second = _table(6), _table(12).slice(6)
    frames = [_as_spark_hands_it(kgb.split(t.to_batches(), ["g"])) for t in (first, second)]
    ones = [f[f["g"] == 1] for f in frames]
    unpacked = kgb.table(iter(ones))
    both = pa.concat_tables([first, second])
    assert unpacked.column("s").to_pylist() == [s for s, g in zip(both.column("s").to_pylist(), both.column("g").to_pylist()) if g == 1]


def test_nothing_packed_gives_no_table():
    assert kgb.table(iter([])) is None


def test_a_map_task_packs_what_it_gathered_whenever_it_passes_the_bound(monkeypatch):
    monkeypatch.setattr(kgb, "_FLUSH_ROWS", 5)
    table = _table()
    out = list(kgb._packer(["g"])(iter(table.to_batches(max_chunksize=3))))
    assert [sum(pa.ipc.open_stream(b).read_all().num_rows for b in batch.column(1).to_pylist()) for batch in out] == [6, 6]


def test_a_column_read_from_arrow_is_what_spark_converts_it_to():
    table = _table().append_column("f", pa.array([0.5, float("nan"), -0.0, 1e300] * 3, pa.float64())) \
        .append_column("f32", pa.array([0.1, 2.5, -1.0] * 4, pa.float32())) \
        .append_column("b", pa.array([True, False] * 6, pa.bool_())) \
        .append_column("nb", pa.array([True, None] * 6, pa.bool_())) \
        .append_column("big", pa.array([2**63 - 1, -(2**63), 2**53 + 1] * 4, pa.int64())) \
        .append_column("small", pa.array([1, -2, 3] * 4, pa.int8()))
    assert table.column("k").null_count and table.column("s").null_count
    for name in table.column_names:
        # (an integer column holding a null: exact ints beside None, where Spark's pandas makes them floats)
        spark = table.column(name).to_pylist() if name == "k" else _spark_values(table, name)
        mine = kgb.column_values(table, name, "UTC")
        assert repr(mine) == repr(spark), name
        assert [type(v) for v in mine] == [type(v) for v in spark], name


def test_records_in_key_order_keep_first_arrivals_and_arrival_order_within_a_key():
    table = pa.table({"k": pa.array([7, 3, 7, 9, 3, 7], pa.int64()), "n": pa.array(range(6), pa.int64())})
    ordered, starts = kgb.in_key_order(table, "k")
    assert ordered.column("k").to_pylist() == [7, 7, 7, 3, 3, 9]
    assert ordered.column("n").to_pylist() == [0, 2, 5, 1, 4, 3]
    assert starts == [0, 3, 5]


def test_records_in_key_order_match_grouping_by_first_arrival():
    import random

    draw = random.Random(19)
    for _ in range(100):
        keys = [draw.randrange(draw.randrange(1, 40)) - 5 for _ in range(draw.randrange(1, 200))]
        ordered, starts = kgb.in_key_order(pa.table({"k": pa.array(keys, pa.int32()), "n": pa.array(range(len(keys)))}), "k")
        by_key: dict = {}
        for n, key in enumerate(keys):
            by_key.setdefault(key, []).append(n)
        assert ordered.column("n").to_pylist() == [n for positions in by_key.values() for n in positions]
        sizes = [len(positions) for positions in by_key.values()]
        assert starts == [sum(sizes[:i]) for i in range(len(sizes))]


def test_records_already_in_key_order_or_not_keyed_by_an_integer_stay_as_they_are():
    grouped = pa.table({"k": pa.array([4, 4, 1, 2], pa.int32())})
    assert kgb.in_key_order(grouped, "k")[0] is grouped
    assert kgb.in_key_order(grouped, "k")[1] == [0, 2, 3]
    distinct = pa.table({"k": pa.array([4, 1, 2], pa.int32())})
    assert kgb.in_key_order(distinct, "k") == (distinct, [0, 1, 2])
    strings = pa.table({"k": pa.array(["b", "a", "b"])})
    assert kgb.in_key_order(strings, "k") == (strings, None)


def test_a_null_integer_key_keeps_the_keys_in_order_of_first_arrival():
    """A null key travels as Arrow's null: the keyed operator groups it apart from the 0s, a null number field
    reaches the function as None and every other value as the int it was."""
    from keyed_harness import TV, Handle, _rows
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    from kindling.datastream import operator as op
    from kindling.datastream.operator_columns import NO_TIME, OperatorColumns
    from kindling.datastream.process import KeyedProcessAdapter, KeyedProcessFunction

    class Echo(KeyedProcessFunction):
        def process_element(self, value, ctx):
            yield ctx.get_current_key(), value.v

    record = StructType([StructField("k", IntegerType()), StructField("v", StringType())])
    runner = op.KeyedRunner(KeyedProcessAdapter(Echo()), "Echo", record, 1, 1, [["k", "v"]], key_types=[IntegerType()],
                            value_types=[record], timeless=True)
    runner.columns = layout = OperatorColumns([IntegerType()], [record], chained=False, convert=op.from_pandas)
    runner.layout = ["g"] + layout.names
    runner.input_form = kgb.InputForm.PACKED
    handle = Handle()
    runner.init(handle)
    keys = [None, 5, 0, None, 5]
    key, number, text = layout.keys[0], layout.values[0][0], layout.values[0][1]
    table = pa.table({"g": pa.array([0] * 5, pa.int32()), key.name: pa.array(keys, pa.int32()),
                      op.TS: pa.array([NO_TIME] * 5, pa.int64()), number.name: pa.array(keys, pa.int32()),
                      text.name: pa.array(list("abcde"))})
    frame = _as_spark_hands_it(kgb.split(table.to_batches(), ["g"]))[[kgb.PACKED]]
    handle.key = (0,)
    out = _rows(list(runner.handleInputRows((0,), iter([frame]), TV(1000, -1))) + list(runner.gathered()))
    assert [(r.k, r.v) for r in out] == [(None, "a"), (None, "d"), (5, "b"), (5, "e"), (0, "c")]
    assert [type(r.k) for r in out] == [type(None)] * 2 + [int] * 3


def test_numbers_with_nulls_read_as_ints_and_floats_beside_none():
    table = pa.table({"i": pa.array([2**62 + 1, None, -3], pa.int64()), "f": pa.array([float("nan"), None, -0.0]),
                      "b": pa.array([True, None, False])})
    ints = kgb.column_values(table, "i", "UTC")
    assert ints == [2**62 + 1, None, -3] and [type(v) for v in ints] == [int, type(None), int]  # pandas: floats
    floats = kgb.column_values(table, "f", "UTC")
    assert repr(floats) == "[nan, None, -0.0]"  # a NaN stays a NaN, apart from the null
    assert kgb.column_values(table, "b", "UTC") == _spark_values(table, "b") == [True, None, False]


def test_packed_integer_keys_reach_the_function_as_the_operator_groups_any_other_key(monkeypatch):
    """The keys' starts that in_key_order gives stand in for the operator's own grouping: the same keys, in the same
    order, with the same records, event times, inputs and timer origins, over two inputs and two map tasks' cells."""
    import random

    from keyed_harness import TV, Handle
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from kindling.datastream import operator as op
    from kindling.datastream.operator_columns import OperatorColumns
    from kindling.datastream.process import KeyedProcessAdapter, KeyedProcessFunction

    records = [StructType([StructField("a", StringType())]), StructType([StructField("b", StringType())])]
    runner = op.KeyedRunner(KeyedProcessAdapter(KeyedProcessFunction()), "t", StructType([StructField("x", LongType())]),
                            1, 1, [["a"], ["b"]], key_types=[LongType()], value_types=records, key_groups=1, timeless=True)
    runner.columns = layout = OperatorColumns([LongType()], records, chained=True, convert=op.from_pandas)
    runner.layout = ["g"] + layout.names
    runner.input_form = kgb.InputForm.PACKED
    runner.init(Handle())
    runner._begin(TV(1000, -1))
    draw = random.Random(59)
    ordered = kgb.in_key_order
    for _ in range(50):
        keys = [draw.randrange(-3, 4) for _ in range(draw.randrange(1, 40))]
        rows = len(keys)
        columns = {"g": pa.array([0] * rows, pa.int32()), op.INPUT: pa.array([n % 2 for n in range(rows)], pa.int32()),
                   layout.keys[0].name: pa.array(keys, pa.int64()), op.TS: pa.array(range(rows), pa.int64()),
                   op.FROM_TIMER: pa.array([n % 3 == 0 for n in range(rows)])}
        for fields in layout.values:
            columns.update({f.name: pa.array([str(n) for n in range(rows)]) for f in fields})
        table = pa.table(columns)
        cut = draw.randrange(rows + 1)
        cells = [kgb.split(part.to_batches(), ["g"]) for part in (table.slice(0, cut), table.slice(cut)) if part.num_rows]

        def grouped(in_key_order, cells=cells):
            monkeypatch.setattr(kgb, "in_key_order", in_key_order)
            frames = [_as_spark_hands_it(cell)[[kgb.PACKED]] for cell in cells]
            return [(key, user_key, keyed.values, keyed.times, keyed.inputs, keyed.origins)
                    for key, (user_key, keyed) in runner._records(iter(frames)).items()]

        by_starts = grouped(ordered)
        assert by_starts == grouped(lambda table, key: (ordered(table, key)[0], None))
        assert [key for key, *_ in by_starts] == list(dict.fromkeys(keys))

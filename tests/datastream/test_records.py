"""Records as Python functions see them, and the failure a function's error becomes, over Arrow batches (no Spark)."""

import pickle

import pyarrow as pa
import pytest
from pyspark.sql import Row
from pyspark.sql.types import DoubleType, IntegerType, StringType, StructField, StructType

from kindling.datastream import records
from kindling.datastream.errors import RecordCalls, UserFunctionError
from kindling.datastream.stream import _key_batches
from kindling.datastream.watermarks import TimestampAssigner

SCHEMA = StructType([StructField("page", StringType()), StructField("n", IntegerType()),
                     StructField("__kindling_rowtime", DoubleType())])
BATCH = pa.RecordBatch.from_arrays([pa.array(["/a", "/b", "/c"]), pa.array([1, 0, 2], pa.int32()),
                                    pa.array([1.0, 2.0, 3.0])], names=SCHEMA.fieldNames())
OUT = StructType([StructField("page", StringType()), StructField("inverse", DoubleType()),
                  StructField("__kindling_rowtime", DoubleType())])


def test_rows_read_like_pysparks_own():
    make = records.row_factory(["page", "n", "count"])
    row = make(("/a", 1, 7))
    plain = Row(page="/a", n=1, count=7)
    assert row == plain and row == ("/a", 1, 7) and repr(row) == repr(plain) == "Row(page='/a', n=1, count=7)"
    assert (row.page, row.n, row["n"], row[2]) == ("/a", 1, 1, 7)
    # a field named as a tuple method reads by name only, as in pyspark's Row (``row.count`` is the method)
    assert row["count"] == plain["count"] == 7 and callable(row.count) and callable(plain.count)
    assert row.asDict() == {"page": "/a", "n": 1, "count": 7}
    assert pickle.loads(pickle.dumps(row)) == plain and pickle.loads(pickle.dumps(row)).asDict() == row.asDict()
    with pytest.raises(RuntimeError):
        row.page = "/b"  # read-only, as pyspark's
    assert type(make(("/b", 2, 3))) is type(row)  # one class per field names


def test_to_rows_gives_rows_or_the_type_informations_records():
    from kindling.common.typeinfo import Types

    rows = records.to_rows(BATCH, ["page", "n"], records.codec(SCHEMA))
    assert [(r.page, r.n) for r in rows] == [("/a", 1), ("/b", 0), ("/c", 2)] and all(isinstance(r, Row) for r in rows)
    typed = records.Codec(StructType(SCHEMA.fields[:2]), Types.TUPLE([Types.STRING(), Types.INT()]))
    assert records.to_rows(BATCH, ["page", "n"], typed) == [("/a", 1), ("/b", 0), ("/c", 2)]


def test_a_map_over_a_batch_maps_every_record_and_keeps_the_internal_columns():
    run = records.map_batches(lambda r: (r.page, 1 / (r.n + 1)), SCHEMA, OUT)
    (out,) = list(run(iter([BATCH])))
    assert out.column("inverse").to_pylist() == [0.5, 1.0, 1 / 3] and out.column("__kindling_rowtime") == BATCH.column(2)


def invert(row):
    return (row.page, 1 / row.n)


def invert_each(row):
    yield (row.page, 1 / row.n)


def inverse_positive(row):
    return 1 / row.n > 0


def inverse_key(row):
    return 1 / row.n


@pytest.mark.parametrize("operator, run", [
    ("Map", lambda: records.map_batches(invert, SCHEMA, OUT)),
    ("FlatMap", lambda: records.flat_map_batches(invert_each, SCHEMA, OUT)),
    ("Filter", lambda: records.filter_batches(inverse_positive, SCHEMA)),
    ("KeyBy", lambda: _key_batches(inverse_key, SCHEMA, None)),
])
def test_a_failing_function_names_itself_its_operator_and_the_record_it_failed_on(operator, run):
    with pytest.raises(UserFunctionError) as failed:
        list(run()(iter([BATCH])))
    name = {"Map": "invert", "FlatMap": "invert_each", "Filter": "inverse_positive", "KeyBy": "inverse_key"}[operator]
    assert str(failed.value) == (f"user function {name} in operator '{operator}' raised ZeroDivisionError: division by "
                                 "zero on record Row(page='/b', n=0)")


def test_a_result_that_does_not_fit_the_output_type_names_the_record():
    run = records.map_batches(lambda r: (r.page,), SCHEMA, OUT)
    with pytest.raises(UserFunctionError, match=r"in operator 'Map' raised ValueError: function returned 1 values .* "
                                                r"on record Row\(page='/a', n=1\)"):
        list(run(iter([BATCH])))


def test_record_calls_leave_other_errors_and_their_own_as_they_are():
    with pytest.raises(UserFunctionError, match="^first$"):
        with RecordCalls(len, "Map") as calls:
            calls.record = "x"
            raise UserFunctionError("first")
    with pytest.raises(KeyboardInterrupt):
        with RecordCalls(len, "Map"):
            raise KeyboardInterrupt
    with RecordCalls(len, "Map") as calls:  # no error: nothing raised
        calls.record = "x"


def test_a_result_goes_back_in_the_output_types_field_order():
    codec = records.Codec(StructType(OUT.fields[:2]))
    assert codec.encode(Row(page="/a", inverse=0.5)) == ("/a", 0.5)
    assert codec.encode(Row(inverse=0.5, page="/a")) == ("/a", 0.5)  # by name, whatever the Row's own order
    assert codec.encode(records.row_factory(["page", "inverse"])(("/a", 0.5))) == ("/a", 0.5)
    assert codec.encode({"inverse": 0.5, "page": "/a"}) == ("/a", 0.5) == codec.encode(["/a", 0.5])


class ByN(TimestampAssigner):
    """A PyFlink-style TimestampAssigner class."""

    def extract_timestamp(self, value, record_timestamp):
        assert record_timestamp is None
        return value.n * 1000


STRUCT = pa.StructArray.from_arrays([BATCH.column(0), BATCH.column(1)], names=["page", "n"])


@pytest.mark.parametrize("assigner", [lambda r: r.n * 1000, lambda r, ts: r.n * 1000, ByN()])
def test_a_python_timestamp_assigner_of_any_shape_times_each_record_but_the_end_marker(assigner):
    run = records.timestamp_batches(assigner, records.codec(SCHEMA))
    stamps = run(STRUCT, pa.array([None, False, True]))
    assert stamps.type == pa.int64() and stamps.to_pylist() == [1000, 0, None]


def test_a_typed_streams_assigner_reads_its_records_and_a_failure_names_the_record():
    from kindling.common.typeinfo import Types

    typed = records.timestamp_batches(lambda t: t[1], records.codec(SCHEMA, Types.TUPLE([Types.STRING(), Types.INT()])))
    assert typed(STRUCT, pa.array([None, None, None])).to_pylist() == [1, 0, 2]

    def seconds(row):
        return 1000 // row.n

    with pytest.raises(UserFunctionError, match=r"^user function \S*seconds in operator 'Timestamps/Watermarks' raised "
                                                r"ZeroDivisionError: .* on record Row\(page='/b', n=0\)$"):
        records.timestamp_batches(seconds, records.codec(SCHEMA))(STRUCT, pa.array([None, None, None]))

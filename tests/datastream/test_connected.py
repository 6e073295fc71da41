"""A CoMap/CoFlatMap function over the batches of two connected streams, as its Python worker runs it (no Spark)."""

import pyarrow as pa
import pytest
from pyspark.sql.types import IntegerType, StringType, StructField, StructType, TimestampType

from kindling.arrow import arrow_schema
from kindling.datastream import records
from kindling.datastream.connected import CoFlatMapFunction, CoMapFunction, _co_batches
from kindling.datastream.errors import UserFunctionError
from kindling.datastream.operator import INPUT, value_column

ORDERS = StructType([StructField("user", StringType()), StructField("amount", IntegerType())])
NOTES = StructType([StructField("text", StringType())])
OUT = StructType([StructField("line", StringType())])
FULL = StructType(OUT.fields + [StructField("__kindling_rowtime", TimestampType())])


def batch() -> pa.RecordBatch:
    """Two orders and a note, interleaved: each row holds its own input's struct and a null one of the other's."""
    orders = pa.StructArray.from_arrays([pa.array(["ann", None, "bob"]), pa.array([3, None, 0], pa.int32())],
                                        names=["user", "amount"], mask=pa.array([False, True, False]))
    notes = pa.StructArray.from_arrays([pa.array([None, "hi", None])], names=["text"], mask=pa.array([True, False, True]))
    times = pa.array([None, None, None], pa.timestamp("us", tz="UTC"))
    return pa.RecordBatch.from_arrays([pa.array([0, 1, 0], pa.int32()), orders, notes, times],
                                      names=[INPUT, value_column(0), value_column(1), "__kindling_rowtime"])


def run(function):
    decoders = [records.Codec(ORDERS), records.Codec(NOTES)]
    return list(_co_batches(function, [ORDERS, NOTES], decoders, records.Codec(OUT), arrow_schema(FULL))(iter([batch()])))


class Describe(CoMapFunction):
    def map1(self, order):
        return (f"{order.user} paid {10 // order.amount}",)

    def map2(self, note):
        return (f"note {note.text}",)


class Words(CoFlatMapFunction):
    def flat_map1(self, order):
        yield (order.user,)

    def flat_map2(self, note):
        yield from ((word,) for word in note.text.split())


def test_each_input_reaches_its_method_with_its_own_fields():
    (out,) = run(Words())
    assert out.column("line").to_pylist() == ["ann", "hi", "bob"]


def test_a_failing_method_names_itself_its_operator_and_the_record():
    with pytest.raises(UserFunctionError) as failed:
        run(Describe())
    assert str(failed.value) == ("user function Describe.map1 in operator 'CoMap' raised ZeroDivisionError: integer "
                                 "division or modulo by zero on record Row(user='bob', amount=0)")

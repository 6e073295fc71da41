"""kindling.common: PyFlink's types, rows and durations (no Spark)."""

import pickle
from datetime import timedelta

import pytest

from kindling.common import Configuration, Duration, Instant, Row, RowKind, RuntimeExecutionMode, Time, Types
from kindling.common.typeinfo import TypeMismatchError
from kindling.durations import to_millis


def test_row_positional_named_and_kind():
    named = Row(name="Alice", age=11)
    assert (named.name, named["age"], named[0]) == ("Alice", 11, "Alice")
    assert "name" in named and named.as_dict() == {"name": "Alice", "age": 11}
    positional = Row(1, "a")
    assert list(positional) == [1, "a"] and repr(positional) == "<Row(1, 'a')>"
    deleted = Row.of_kind(RowKind.DELETE, 1, "a")
    assert deleted.get_row_kind() == RowKind.DELETE and str(RowKind.DELETE) == "-D"
    assert deleted != positional
    person = Row("name", "age")
    assert person("Bob", 3).age == 3
    restored = pickle.loads(pickle.dumps(named))
    assert restored == named and restored.name == "Alice"


def test_durations_are_timedeltas_everywhere():
    assert to_millis(Time.milliseconds(5)) == 5
    assert to_millis(Time.seconds(2)) == 2000
    assert to_millis(Duration.of_seconds(2)) == 2000 and Duration.of_minutes(1).to_milliseconds() == 60_000
    assert isinstance(Duration.of_millis(1), timedelta)
    assert Instant.of_epoch_milli(1500).to_epoch_milli() == 1500


def test_type_information_columns_and_values():
    row_type = Types.ROW_NAMED(["id", "info"], [Types.INT(), Types.STRING()])
    assert row_type.record_schema().simpleString() == "struct<id:int,info:string>"
    value = row_type.from_columns([1, "x"])
    assert isinstance(value, Row) and value.id == 1 and value.info == "x"
    assert row_type.to_columns(Row(id=2, info="y")) == (2, "y")
    assert row_type.to_columns((3, "z")) == (3, "z")
    tuple_type = Types.TUPLE([Types.STRING(), Types.LONG()])
    assert tuple_type.record_schema().fieldNames() == ["f0", "f1"]
    assert tuple_type.from_columns(["a", 1]) == ("a", 1)
    assert tuple_type.format(("hi", 4)) == "(hi,4)"
    # PyFlink prints a stream of Rows through Python: each field's str, joined by ',' (not Java's Row.toString)
    assert Types.ROW([Types.INT(), Types.STRING(), Types.DOUBLE()]).format(Row(1, "hi", None)) == "+I[1,hi,None]"
    assert row_type.format(Row.of_kind(RowKind.UPDATE_AFTER, 2, "y")) == "+U[2,y]"
    pickled = Types.PICKLED_BYTE_ARRAY()
    blob = pickled.to_columns({"a": [1, 2]})
    assert pickled.from_columns(blob) == {"a": [1, 2]}
    assert pickled.format((1, "a")) == "(1, 'a')"
    assert Types.LIST(Types.INT()).to_spark().simpleString() == "array<int>"
    assert Types.MAP(Types.STRING(), Types.LONG()).to_spark().simpleString() == "map<string,bigint>"


def test_type_mismatch_names_field_value_and_type():
    with pytest.raises(TypeMismatchError) as error:
        Types.ROW_NAMED(["word", "count"], [Types.STRING(), Types.LONG()]).to_columns(("a", "1"), "Map result")
    message = str(error.value)
    assert "field 'count'" in message and "'1'" in message and "LONG" in message
    with pytest.raises(TypeMismatchError, match="has 3 fields but the declared type"):
        Types.TUPLE([Types.STRING(), Types.INT()]).to_columns(("a", 1, 2))
    with pytest.raises(TypeMismatchError, match="out of range"):
        Types.INT().to_columns(2**40)


def test_configuration_pyflink_accessors_share_the_keys():
    conf = Configuration()
    conf.set_integer("parallelism.default", 3)
    assert conf.get_integer("parallelism.default") == 3 and conf.get("parallelism.default") == 3
    conf.set_string("pipeline.name", "job")
    assert conf.get_string("pipeline.name") == "job" and conf.get_string("missing.key", "d") == "d"
    assert RuntimeExecutionMode.BATCH.name == "BATCH"

"""The keyed operator's input columns read back as the function sees them, nulls included (they travel as Arrow's)."""

import datetime

import pytest
from pyspark.sql.types import ArrayType, IntegerType, StringType, StructField, StructType, TimestampType

from kindling.datastream.operator_columns import NO_TIME, TS, OperatorColumns


def test_a_frame_reads_back_with_nulls_as_none_and_instants_as_utc_datetimes():
    record = StructType([StructField("n", IntegerType()), StructField("at", TimestampType()), StructField("s", StringType())])
    layout = OperatorColumns([IntegerType()], [record], chained=False, convert=lambda _: None)
    assert layout.names == ["__kindling_k0", TS, "__kindling_v0_0", "__kindling_v0_1", "__kindling_v0_2"]  # no mask column
    columns = {"__kindling_k0": [7, None], TS: [NO_TIME, 5], "__kindling_v0_0": [None, -1],
               "__kindling_v0_1": [1_500_000, None], "__kindling_v0_2": ["a", None]}
    inputs, keys, times, origins, fields = layout.read(columns.__getitem__, 2)
    assert inputs is None and origins is None
    assert keys == [[7, None]] and times == [None, 5]
    utc = datetime.timezone.utc
    assert fields == [[[None, -1], [datetime.datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=utc), None], ["a", None]]]


def test_a_key_field_travels_once_and_reads_as_the_key_and_an_untimed_input_sends_no_event_time():
    record = StructType([StructField("id", IntegerType()), StructField("key", StringType())])
    other = StructType([StructField("name", StringType()), StructField("n", IntegerType())])
    layout = OperatorColumns([StringType()], [record, other], chained=False, convert=lambda _: None, timed=False,
                             key_fields=[{1: 0}, {0: 0}])
    assert layout.names == ["__kindling_input", "__kindling_k0", "__kindling_v0_0", "__kindling_v1_1"]
    columns = {"__kindling_input": [0, 1, 0], "__kindling_k0": ["a", "b", "c"], "__kindling_v0_0": [1, None, 3],
               "__kindling_v1_1": [None, 9, None]}
    inputs, keys, times, _, fields = layout.read(columns.__getitem__, 3)
    assert inputs == [0, 1, 0] and keys == [["a", "b", "c"]] and times == [None, None, None]
    # each input's key field holds the key on that input's rows (another input's rows are never read from it)
    assert fields == [[[1, None, 3], ["a", "b", "c"]], [["a", "b", "c"], [None, 9, None]]]


def test_a_nested_key_field_still_travels_as_a_field_and_a_key_of_another_type_is_refused():
    nested = StructType([StructField("tags", ArrayType(StringType()))])
    layout = OperatorColumns([ArrayType(StringType())], [nested], chained=False, convert=lambda _: None, key_fields=[{0: 0}])
    assert layout.names == ["__kindling_k0", TS, "__kindling_v0_0"]
    record = StructType([StructField("key", StringType())])
    with pytest.raises(ValueError, match="field 0 .string. is not key 0 .int."):
        OperatorColumns([IntegerType()], [record], chained=False, convert=lambda _: None, key_fields=[{0: 0}])

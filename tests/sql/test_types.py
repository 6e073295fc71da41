"""Flink SQL types -> Spark types, and bad types named with their line."""

import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kindling.sql.errors import SqlError
from kindling.sql.types import flink_type_name, parse_type


@pytest.mark.parametrize("flink, spark", [
    ("STRING", StringType()), ("VARCHAR(10)", StringType()), ("CHAR(3)", StringType()), ("BOOLEAN", BooleanType()),
    ("TINYINT", ByteType()), ("SMALLINT", ShortType()), ("INT", IntegerType()), ("INTEGER", IntegerType()),
    ("BIGINT", LongType()), ("FLOAT", FloatType()), ("DOUBLE", DoubleType()), ("DOUBLE PRECISION", DoubleType()),
    ("DECIMAL", DecimalType(10, 0)), ("DECIMAL(32, 2)", DecimalType(32, 2)), ("NUMERIC(5)", DecimalType(5, 0)),
    ("DATE", DateType()), ("TIME(3)", StringType()), ("TIMESTAMP(3)", TimestampType()),
    ("TIMESTAMP(3) WITHOUT TIME ZONE", TimestampType()), ("TIMESTAMP_LTZ(3)", TimestampType()),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", TimestampType()), ("BYTES", BinaryType()), ("VARBINARY(4)", BinaryType()),
    ("ARRAY<INT>", ArrayType(IntegerType())), ("INT ARRAY", ArrayType(IntegerType())),
    ("MAP<STRING, BIGINT>", MapType(StringType(), LongType())),
    ("ARRAY<MAP<STRING, ARRAY<INT>>>", ArrayType(MapType(StringType(), ArrayType(IntegerType())))),
    ("ROW<a INT, `b c` STRING>", StructType([StructField("a", IntegerType()), StructField("b c", StringType())])),
    ("ROW(a INT, b ROW<c DOUBLE>)", StructType([StructField("a", IntegerType()), StructField("b", StructType([StructField("c", DoubleType())]))])),
])
def test_flink_types_map_to_spark(flink, spark):
    assert parse_type(flink).spark == spark


def test_not_null_and_flink_names():
    parsed = parse_type("BIGINT NOT NULL")
    assert parsed.spark == LongType() and parsed.nullable is False
    assert parse_type("TIMESTAMP_LTZ(3)").flink == "TIMESTAMP_LTZ(3)"
    assert flink_type_name(parse_type("MAP<STRING, ARRAY<INT>>").spark) == "MAP<STRING, ARRAY<INT>>"


@pytest.mark.parametrize("text, message", [
    ("STRNG", "unknown data type 'STRNG'; did you mean STRING"),
    ("DECIMAL(40, 2)", r"DECIMAL\(40, 2\) is out of range"),
    ("MAP<STRING>", "expected ','"),
    ("ARRAY<INT", "ends too early"),
    ("TIMESTAMP(3) WITH TIME ZONE", "'WITH TIME ZONE' is not supported"),
    ("INT INT", "unexpected 'INT'"),
])
def test_bad_types_are_named(text, message):
    with pytest.raises(SqlError, match=message):
        parse_type(text, line=7)
    with pytest.raises(SqlError, match="line 7"):
        parse_type(text, line=7)

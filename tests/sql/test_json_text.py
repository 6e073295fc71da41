"""Flink's JSON text of scalar values, as Spark SQL: the answers were recorded from PyFlink 2.3 (``SELECT
JSON_STRING(CAST(v AS DOUBLE|FLOAT))``, ``JSON_STRING(TIMESTAMP ...)``, ``JSON_STRING(TO_TIMESTAMP_LTZ(...))``)."""

from __future__ import annotations

import pytest

from kindling.sql.json_text import json_text, kind_of_flink_type, kind_of_spark_type

# value, Flink's JSON_STRING of it as a DOUBLE, and as a FLOAT
NUMBERS = [
    ("1.0E-4", "0.00010", "0.00009999999747378752"), ("1.2345E-5", "0.000012345", "0.00001234499995916849"),
    ("1.5E7", "1.5E+7", "1.5E+7"), ("-2.5E-5", "-0.000025", "-0.00002499999936844688"),
    ("123456789.0", "123456789", "123456792"), ("1.0E-3", "0.001", "0.0010000000474974513"), ("0.5", "0.5", "0.5"),
    ("1.0E-7", "1.0E-7", "1.0000000116860974E-7"), ("-1.0E20", "-1.0E+20", "-1.0000000200408773E+20"),
    ("100.0", "100.0", "100.0"), ("1234567.0", "1234567.0", "1234567.0"),
]


def test_kinds_by_type():
    assert [kind_of_flink_type(t) for t in ("VARCHAR(10) NOT NULL", "DECIMAL(6, 3)", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)",
                                            "TIMESTAMP(3) WITH LOCAL TIME ZONE", "ARRAY<INT>", "DATE")] == [
        "string", "decimal", "timestamp", "timestamp_ltz", "timestamp_ltz", None, None]
    # Spark's one timestamp type holds both of Flink's: its JSON is not known from it
    assert [kind_of_spark_type(t) for t in ("decimal(6,3)", "float", "timestamp", "timestamp_ntz", "date")] == [
        "decimal", "float", None, "timestamp", None]


@pytest.mark.integration
def test_numbers_and_timestamps_are_written_as_flink_writes_them(spark):
    columns = [json_text(f"CAST({v} AS DOUBLE)", "double") for v, _, _ in NUMBERS]
    columns += [json_text(f"CAST({v} AS FLOAT)", "float") for v, _, _ in NUMBERS]
    columns += [json_text("TIMESTAMP '2024-01-01 08:00:04.910'", "timestamp"), json_text("TIMESTAMP '2024-01-01 08:00:00'", "timestamp"),
                json_text("timestamp_millis(1704096004910)", "timestamp_ltz"), json_text("CAST(NULL AS DOUBLE)", "double"),
                json_text("1 > 2", "boolean"), json_text("'a\"b'", "string"), json_text("CAST(0.0000001 AS DECIMAL(10, 8))", "decimal")]
    row = spark.sql("SELECT " + ", ".join(f"{c} AS c{n}" for n, c in enumerate(columns))).collect()[0]
    assert list(row)[:len(NUMBERS)] == [double for _, double, _ in NUMBERS]
    assert list(row)[len(NUMBERS):2 * len(NUMBERS)] == [single for _, _, single in NUMBERS]
    assert list(row)[2 * len(NUMBERS):] == ['"2024-01-01T08:00:04.91"', '"2024-01-01T08:00:00"', '"2024-01-01T08:00:04.91Z"', None,
                                            "false", '"a\\"b"', "1.0E-7"]


@pytest.mark.integration
def test_json_string_of_a_timestamp_expression_is_refused(env):
    from kindling.sql import SqlError

    env.execute_sql("CREATE TABLE events (id INT, ts TIMESTAMP(3)) WITH ('connector' = 'datagen', 'number-of-rows' = '3', "
                    "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3')")
    with pytest.raises(SqlError, match="JSON_STRING of an expression of type TIMESTAMP or TIMESTAMP_LTZ is not supported"):
        env.execute_sql("SELECT JSON_STRING(ts + INTERVAL '1' SECOND) FROM events")
    rows = [tuple(r) for r in env.execute_sql("SELECT id, JSON_STRING(id * 2) AS j FROM events").final_rows(timeout=300)]
    assert sorted(rows) == [(1, "2"), (2, "4"), (3, "6")]  # an INT expression

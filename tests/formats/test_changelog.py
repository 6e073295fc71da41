"""debezium-json, canal-json and maxwell-json: envelopes <-> changelog rows, as Flink reads and writes them."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

from kindling.formats import FORMATS, FormatError, FormatSettings, RowEncoder, ValueDecoder, format_options, format_settings
from kindling.options import OptionError, OptionSet, enum_option
from kindling.row_layout import ROWKIND_COLUMN

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType()), StructField("weight", DoubleType())])
OPTIONS = OptionSet("test", [enum_option("format", FORMATS, None, "the format"), *format_options()])


def settings(**raw: str) -> FormatSettings:
    return format_settings(OPTIONS.validate(raw), "test", raw)


def rows(decoded) -> list[tuple]:
    columns = [a.to_pylist() for a in decoded.arrays]
    return [(kind, *values) for kind, values in zip(decoded.kinds.to_pylist(), zip(*columns))]


def encoded(values) -> list[bytes]:
    return [json.dumps(v).encode() for v in values]


SCOOTER = {"id": 111, "name": "scooter", "weight": 5.18}
SCOOTER_HEAVIER = {"id": 111, "name": "scooter", "weight": 5.17}


def test_debezium_operations_become_flink_row_kinds():
    decoder = ValueDecoder(SCHEMA, settings(format="debezium-json"))
    decoded = decoder.decode(encoded([
        {"before": None, "after": SCOOTER, "op": "c"},
        {"before": SCOOTER, "after": SCOOTER_HEAVIER, "op": "u"},
        {"before": None, "after": {"id": 7, "name": "car", "weight": None}, "op": "r"},
        {"before": SCOOTER_HEAVIER, "after": None, "op": "d"},
    ]) + [None])
    assert rows(decoded) == [
        ("+I", 111, "scooter", 5.18),
        ("-U", 111, "scooter", 5.18), ("+U", 111, "scooter", 5.17),
        ("+I", 7, "car", None),
        ("-D", 111, "scooter", 5.17),
    ]
    assert decoded.kept == [0, 1, 1, 2, 3], "both halves of the update come from record 1"
    assert decoded.skipped_nulls == 1 and not decoded.errors


def test_debezium_schema_include_and_its_hint():
    message = {"schema": {"type": "struct"}, "payload": {"before": None, "after": SCOOTER, "op": "c"}}
    with_schema = ValueDecoder(SCHEMA, settings(**{"format": "debezium-json", "debezium-json.schema-include": "true"}))
    assert rows(with_schema.decode(encoded([message]))) == [("+I", 111, "scooter", 5.18)]
    with pytest.raises(FormatError, match="reading only"):
        RowEncoder(settings(**{"format": "debezium-json", "debezium-json.schema-include": "true"}), ["id"], SCHEMA)
    plain = ValueDecoder(SCHEMA, settings(format="debezium-json")).decode(encoded([message]))
    assert plain.kept == [] and "debezium-json.schema-include" in plain.errors[0][1]


def test_debezium_bad_messages_are_reported_with_their_index():
    decoded = ValueDecoder(SCHEMA, settings(format="debezium-json")).decode(
        encoded([{"before": None, "after": SCOOTER, "op": "x"}, {"before": None, "after": SCOOTER, "op": "u"}])
        + [b"not json", json.dumps({"before": None, "after": {"id": "abc"}, "op": "c"}).encode()])
    assert [i for i, _ in decoded.errors] == [0, 1, 2, 3]
    assert 'unknown "op" value' in decoded.errors[0][1] and "REPLICA IDENTITY" in decoded.errors[1][1]
    assert decoded.kept == []


def test_canal_updates_restore_the_old_values_and_filters_apply():
    decoder = ValueDecoder(SCHEMA, settings(**{"format": "canal-json", "canal-json.table.include": "prod.*"}))
    decoded = decoder.decode(encoded([
        {"data": [SCOOTER, {"id": 2, "name": "bike", "weight": 1.5}], "type": "INSERT", "database": "inv", "table": "products"},
        {"data": [SCOOTER_HEAVIER], "old": [{"weight": 5.18}], "type": "UPDATE", "database": "inv", "table": "products"},
        {"data": [SCOOTER], "type": "INSERT", "database": "inv", "table": "orders"},
        {"data": None, "type": "CREATE", "database": "inv", "table": "products", "isDdl": True},
        {"data": [{"id": 2, "name": "bike", "weight": 1.5}], "type": "DELETE", "database": "inv", "table": "products"},
    ]))
    assert rows(decoded) == [
        ("+I", 111, "scooter", 5.18), ("+I", 2, "bike", 1.5),
        ("-U", 111, "scooter", 5.18), ("+U", 111, "scooter", 5.17),
        ("-D", 2, "bike", 1.5),
    ]
    assert decoded.kept == [0, 0, 1, 1, 4] and not decoded.errors


def test_maxwell_update_and_unknown_type():
    decoded = ValueDecoder(SCHEMA, settings(format="maxwell-json")).decode(encoded([
        {"database": "inv", "table": "products", "type": "insert", "data": SCOOTER},
        {"database": "inv", "table": "products", "type": "update", "data": SCOOTER_HEAVIER, "old": {"weight": 5.18}},
        {"database": "inv", "table": "products", "type": "table-create"},
        {"database": "inv", "table": "products", "type": "delete", "data": SCOOTER_HEAVIER},
    ]))
    assert rows(decoded) == [("+I", 111, "scooter", 5.18), ("-U", 111, "scooter", 5.18), ("+U", 111, "scooter", 5.17),
                             ("-D", 111, "scooter", 5.17)]
    assert [i for i, _ in decoded.errors] == [2] and 'unknown "type" value' in decoded.errors[0][1]


@pytest.mark.parametrize("fmt, insert, delete", [
    ("debezium-json", {"before": None, "after": SCOOTER, "op": "c"}, {"before": SCOOTER, "after": None, "op": "d"}),
    ("canal-json", {"data": [SCOOTER], "type": "INSERT"}, {"data": [SCOOTER], "type": "DELETE"}),
    ("maxwell-json", {"data": SCOOTER, "type": "insert"}, {"data": SCOOTER, "type": "delete"}),
])
def test_writing_splits_updates_into_delete_and_insert_and_reads_back(fmt, insert, delete):
    batch = pa.RecordBatch.from_pydict({
        "id": [111] * 4, "name": ["scooter"] * 4, "weight": [5.18] * 4, ROWKIND_COLUMN: ["+I", "-U", "+U", "-D"]})
    fmt_settings = settings(format=fmt)
    written = RowEncoder(fmt_settings, ["id", "name", "weight"], SCHEMA).encode(batch)
    assert [json.loads(w) for w in written] == [insert, delete, insert, delete]
    assert [k for k, *_ in rows(ValueDecoder(SCHEMA, fmt_settings).decode(written))] == ["+I", "-D", "+I", "-D"]


def test_options_of_another_format_and_bad_patterns_are_refused():
    with pytest.raises(OptionError, match="belongs to the 'canal-json' format"):
        settings(**{"format": "debezium-json", "canal-json.table.include": "x"})
    with pytest.raises(OptionError, match="not a regular expression"):
        settings(**{"format": "canal-json", "canal-json.database.include": "("})
    assert settings(**{"format": "maxwell-json", "maxwell-json.ignore-parse-errors": "true"}).ignore_parse_errors

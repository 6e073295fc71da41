"""TYPEOF, JSON_STRING and JSON_OBJECT of columns answered from the catalog's declared types (kindling/sql/declared_types.py),
without Spark."""

from __future__ import annotations

from kindling.sql.catalog import CatalogTable
from kindling.sql.ddl import ColumnDef, WatermarkDef
from kindling.sql.declared_types import with_declared_types
from kindling.sql.json_text import json_member, json_text
from kindling.sql.types import parse_type

TABLE = CatalogTable("orders", [ColumnDef("id", parse_type("BIGINT")), ColumnDef("amount", parse_type("INT")),
                                ColumnDef("price", parse_type("DECIMAL(10,2) NOT NULL")), ColumnDef("note", parse_type("STRING")),
                                ColumnDef("rate", parse_type("DOUBLE")),
                                ColumnDef("tags", parse_type("ARRAY<STRING>")), ColumnDef("ts", parse_type("TIMESTAMP(3)")),
                                ColumnDef("doubled", None, kind="computed", expression="amount * 2")],
                     {}, watermark=WatermarkDef("ts", "ts - INTERVAL '1' SECOND", 1), primary_key=["id"])


def answered(text: str) -> str:
    return with_declared_types(text, 1, {"orders": TABLE}) or text


def test_declared_physical_columns_print_as_flink_prints_their_types():
    assert answered("SELECT TYPEOF(amount) AS a, TYPEOF(o.price), typeof(note), TYPEOF(ts) FROM orders o") == \
        "SELECT 'INT' AS a, 'DECIMAL(10, 2) NOT NULL', 'STRING', 'TIMESTAMP(3)' FROM orders o"


def test_what_the_catalog_cannot_answer_is_left_for_translation_to_refuse():
    for query in ("SELECT TYPEOF(amount * 2) FROM orders",  # an expression: Flink's derived type
                  "SELECT TYPEOF(id) FROM orders",  # a primary key: NOT NULL by the key
                  "SELECT TYPEOF(doubled) FROM orders",  # a computed column
                  "SELECT TYPEOF(tags) FROM orders",  # a nested type
                  "SELECT TYPEOF(x.amount) FROM orders",  # another qualifier
                  "SELECT t FROM (SELECT TYPEOF(amount) AS t FROM orders)",  # not the outermost SELECT's own table
                  "SELECT TYPEOF(amount) FROM orders o JOIN orders p ON o.id = p.id"):  # not one table
        assert answered(query) == query


def test_json_of_columns_is_flinks_json_text_of_their_declared_type():
    assert answered("SELECT JSON_STRING(note) AS j FROM orders") == f"SELECT {json_text('note', 'string')} AS j FROM orders"
    assert answered("SELECT JSON_OBJECT(KEY 'n' VALUE note, 'a' VALUE o.amount ABSENT ON NULL) FROM orders o") == (
        "SELECT concat('{', concat_ws(',', "
        f"{json_member('a', 'o.amount', 'integer', True)}, {json_member('n', 'note', 'string', True)}), '}}') FROM orders o")
    assert "'\"a\":null'" in answered("SELECT JSON_OBJECT('a' VALUE amount) FROM orders")  # NULL ON NULL, Flink's default
    # the kinds whose text Spark's JSON writer does not give as Flink's: written by json_text
    assert answered("SELECT JSON_STRING(rate) FROM orders") == f"SELECT {json_text('rate', 'double')} FROM orders"
    assert answered("SELECT JSON_STRING(price) FROM orders") == f"SELECT {json_text('price', 'decimal')} FROM orders"
    assert answered("SELECT JSON_STRING(ts) FROM orders") == f"SELECT {json_text('ts', 'timestamp')} FROM orders"
    for query in ("SELECT JSON_OBJECT('a' VALUE amount, 'a' VALUE note) FROM orders",  # a repeated key
                  "SELECT JSON_STRING(tags) FROM orders",  # a nested type
                  "SELECT JSON_OBJECT('a' VALUE amount * 2) FROM orders",  # an expression
                  "SELECT JSON_OBJECT('a' VALUE JSON_OBJECT('b' VALUE note)) FROM orders"):  # nested JSON
        assert answered(query) == query

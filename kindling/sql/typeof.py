"""Flink's ``TYPEOF(column)`` from the catalog: the column's declared type as Flink prints a data type.

Spark names its own types (``int``, ``string``) and does not know Flink's (``VARCHAR(10)``, ``INT NOT NULL``), so a
``TYPEOF`` in the outermost SELECT list over one catalog table becomes a string literal of the column's declared type,
before the query is translated (a time attribute's too: Flink's TYPEOF of a rowtime column is its plain type). Only a
physical column whose type the DDL fixes is answered; an expression, a computed, metadata or primary-key column (the
key makes it NOT NULL), a nested type, or a TYPEOF anywhere else stays as it is and is refused by name when translated.

>>> from kindling.sql.ddl import ColumnDef
>>> from kindling.sql.types import parse_type
>>> table = CatalogTable("t", [ColumnDef("a", parse_type("VARCHAR(2147483647) NOT NULL"))], {})
>>> typeof_literals("SELECT TYPEOF(a) AS ta FROM t", 1, {"t": table})
"SELECT 'STRING NOT NULL' AS ta FROM t"
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from kindling.sql.catalog import CatalogTable
from kindling.sql.group_aggregate import outer_select, plain_name
from kindling.sql.tokens import Token, function_calls, significant, split_top_level

_UNBOUNDED = {"VARCHAR(2147483647)": "STRING", "VARBINARY(2147483647)": "BYTES"}


def typeof_literals(text: str, line: int, objects: Mapping[str, Any]) -> Optional[str]:
    """``text`` with each answerable ``TYPEOF(column)`` of its outermost SELECT list as a string literal; None when
    there is none to answer."""
    if "TYPEOF" not in text.upper():
        return None
    parts = outer_select(text, line)
    if parts is None:
        return None
    _, name, alias = parts.source
    table = objects.get(name) if name is not None else None
    if not isinstance(table, CatalogTable):
        return None
    replacements = []
    for start, open_at, close_at, _ in function_calls(parts.select_tokens, ("TYPEOF",)):
        arguments = split_top_level(parts.select_tokens[open_at + 1:close_at])
        if len(arguments) != 1:
            continue
        column = _column(significant(arguments[0]), table, {q for q in (table.name, alias) if q})
        if column is not None:
            tokens = parts.select_tokens
            replacements.append((tokens[start].start, tokens[close_at].end, f"'{column}'"))
    if not replacements:
        return None
    for begin, end, literal in sorted(replacements, reverse=True):
        text = text[:begin] + literal + text[end:]
    return text


def _column(argument: list[Token], table: CatalogTable, qualifiers: set[str]) -> Optional[str]:
    """Flink's printed type of the plain column ``argument`` of ``table``; None when it cannot be answered here."""
    name = plain_name(argument)
    if name is None or (len(argument) == 3 and argument[0].identifier not in qualifiers):
        return None
    column = next((c for c in table.columns if c.name == name), None)
    if column is None or column.kind != "physical" or column.type is None or name in table.primary_key:
        return None
    declared = column.type.flink.replace(" NOT NULL", "")
    if "<" in declared:
        return None  # a nested type: Flink prints its element types its own way (ARRAY<STRING>)
    declared = _UNBOUNDED.get(declared, declared)
    return declared + ("" if column.type.nullable else " NOT NULL")

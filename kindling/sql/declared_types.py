"""Functions whose Flink answer depends on a column's declared type, answered from the catalog: ``TYPEOF``,
``JSON_STRING`` and ``JSON_OBJECT`` over plain columns.

Spark names its own types (``int``, ``string``) and does not know Flink's (``VARCHAR(10)``, ``INT NOT NULL``); its JSON
writer formats some values differently from Flink's (timestamps, decimals, nested values). Kindling's token-level
translation does not know types, but for a plain column of the one catalog table the outermost SELECT reads, the DDL
says it: such a call in the SELECT list is rewritten before the query is translated -- ``TYPEOF`` into a string literal
of the declared type as Flink prints it (a rowtime column's plain type, as Flink's TYPEOF gives), ``JSON_STRING`` and
``JSON_OBJECT`` of scalar columns into Flink's JSON text of their declared type (:mod:`kindling.sql.json_text`).
Anything else (an expression, a computed, metadata or primary-key column, a nested type, a call elsewhere) stays as
it is and is refused by name.

>>> from kindling.sql.ddl import ColumnDef
>>> from kindling.sql.types import parse_type
>>> table = CatalogTable("t", [ColumnDef("a", parse_type("VARCHAR(2147483647) NOT NULL"))], {})
>>> with_declared_types("SELECT TYPEOF(a) AS ta FROM t", 1, {"t": table})
"SELECT 'STRING NOT NULL' AS ta FROM t"
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from kindling.sql.catalog import CatalogTable
from kindling.sql.ddl import ColumnDef
from kindling.sql.group_aggregate import outer_select, plain_name
from kindling.sql.json_text import json_member, json_text, kind_of_flink_type
from kindling.sql.tokens import STRING, Token, function_calls, significant, split_top_level
from kindling.sql.types import printed

# JSON_ARRAY is found only to leave the calls in its values alone: translate refuses a JSON_OBJECT or JSON_STRING value
_FUNCTIONS = ("TYPEOF", "JSON_STRING", "JSON_OBJECT", "JSON_ARRAY")


def with_declared_types(text: str, line: int, objects: Mapping[str, Any]) -> Optional[str]:
    """``text`` with each answerable call of its outermost SELECT list rewritten; None when there is none."""
    upper = text.upper()
    if not any(name in upper for name in _FUNCTIONS):
        return None
    parts = outer_select(text, line)
    if parts is None:
        return None
    _, name, alias = parts.source
    table = objects.get(name) if name is not None else None
    if not isinstance(table, CatalogTable):
        return None
    columns = _Columns(table, {q for q in (table.name, alias) if q})
    tokens = parts.select_tokens
    replacements = []
    for start, open_at, close_at, _ in function_calls(tokens, _FUNCTIONS):
        arguments = [significant(a) for a in split_top_level(tokens[open_at + 1:close_at])]
        function = tokens[start].upper
        if function == "TYPEOF":
            rewritten = _typeof(arguments, columns)
        elif function == "JSON_STRING":
            rewritten = _json_string(arguments, columns)
        elif function == "JSON_ARRAY":
            continue
        else:
            rewritten = _json_object(arguments, columns)
        if rewritten is not None:
            replacements.append((tokens[start].start, tokens[close_at].end, rewritten))
    if not replacements:
        return None
    for begin, end, replacement in sorted(replacements, reverse=True):
        text = text[:begin] + replacement + text[end:]
    return text


class _Columns:
    """The physical, non-key columns of one table, found by a plain (optionally qualified) reference."""

    def __init__(self, table: CatalogTable, qualifiers: set[str]) -> None:
        self.table, self.qualifiers = table, qualifiers

    def find(self, reference: list[Token]) -> Optional[ColumnDef]:
        name = plain_name(reference)
        if name is None or (len(reference) == 3 and reference[0].identifier not in self.qualifiers):
            return None
        column = next((c for c in self.table.columns if c.name == name), None)
        if column is None or column.kind != "physical" or column.type is None or name in self.table.primary_key:
            return None
        return column


def _declared(column: ColumnDef) -> Optional[str]:
    """The column's type as Flink prints it (``STRING``, ``DECIMAL(10, 2) NOT NULL``); None for a nested type."""
    assert column.type is not None
    declared = column.type.flink.replace(" NOT NULL", "")
    if "<" in declared:
        return None  # Flink prints element types its own way (ARRAY<STRING>)
    return printed(declared) + ("" if column.type.nullable else " NOT NULL")


def _typeof(arguments: list[list[Token]], columns: _Columns) -> Optional[str]:
    column = columns.find(arguments[0]) if len(arguments) == 1 else None
    declared = _declared(column) if column is not None else None
    return f"'{declared}'" if declared is not None else None


def _json_value(reference: list[Token], columns: _Columns) -> Optional[tuple[str, str]]:
    """The reference as written and its JSON kind (:mod:`kindling.sql.json_text`), when it names a column of a type
    whose JSON text kindling writes as Flink does."""
    column = columns.find(reference)
    declared = _declared(column) if column is not None else None
    kind = kind_of_flink_type(declared) if declared is not None else None
    if kind is None:
        return None
    return "".join(t.text for t in reference), kind


def _json_string(arguments: list[list[Token]], columns: _Columns) -> Optional[str]:
    value = _json_value(arguments[0], columns) if len(arguments) == 1 else None
    return json_text(*value) if value is not None else None


def _json_object(arguments: list[list[Token]], columns: _Columns) -> Optional[str]:
    """``JSON_OBJECT([KEY] 'k' VALUE column, ... [NULL|ABSENT ON NULL])`` with string-literal keys: Flink writes the
    keys sorted, a NULL value as null unless ABSENT ON NULL."""
    if not arguments or not arguments[-1]:
        return None
    last = arguments[-1]
    absent = False
    if len(last) >= 3 and last[-2].is_word("ON") and last[-1].is_word("NULL") and last[-3].is_word("NULL", "ABSENT"):
        absent = last[-3].is_word("ABSENT")
        arguments = arguments[:-1] + [last[:-3]]
    pairs: dict[str, tuple[str, str]] = {}
    for argument in arguments:
        if argument and argument[0].is_word("KEY"):
            argument = argument[1:]
        if len(argument) < 3 or argument[0].kind != STRING or not argument[1].is_word("VALUE"):
            return None
        key = argument[0].text[1:-1].replace("''", "'")
        value = _json_value(argument[2:], columns)
        if value is None or key in pairs or not key or any(c in key for c in "'\"\\"):
            return None
        pairs[key] = value
    members = ", ".join(json_member(key, *pairs[key], absent) for key in sorted(pairs))
    return f"concat('{{', concat_ws(',', {members}), '}}')"

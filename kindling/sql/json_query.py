"""Flink's ``JSON_VALUE`` and ``JSON_QUERY`` as Spark SQL over Spark's VARIANT: path modes, wrappers, ON EMPTY and
ON ERROR as PyFlink 2.3 answers them.

A path is ``strict`` unless it starts with ``lax``. What the path selects may be no value for the function: invalid
JSON, a missing member or element, JSON null, an object or array for JSON_VALUE, a scalar for JSON_QUERY without a
wrapper. In strict mode that is an error (the ON ERROR behaviour answers), in lax mode an empty result (ON EMPTY);
both default to NULL. A NULL document is NULL.

Flink reads a document's numbers as Java ``BigDecimal`` and writes them back as ``BigDecimal.toString()``: the digits as
written (``1.50``, ``1.0``), an exponent as ``1E+3``; it writes the members of JSON_QUERY's objects sorted by key.
Spark's VARIANT keeps a number's value, not its trailing zeros, and writes an object's keys sorted, as Flink does.
So a number is written from the VARIANT's value (exact for integers and decimals without trailing zeros; JSON_VALUE
writes a decimal below 1E-6 as ``1.7E-7``, as Flink does), and where the document's text could hold digits the VARIANT
lost (a trailing zero in a fraction, an exponent; in JSON_QUERY also a decimal below 1E-6) the query fails naming the
function rather than give another text.

>>> json_query("doc", "'$.a'", False, "WITHOUT", NULL, NULL).startswith("element_at(transform(array(named_struct('d', doc, ")
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from kindling.sql.bound_values import bound_once


@dataclass(frozen=True)
class Behavior:
    """What an ON EMPTY or ON ERROR clause answers: NULL, ERROR, DEFAULT (with ``default``, Spark SQL text),
    EMPTY ARRAY or EMPTY OBJECT."""

    kind: str
    default: Optional[str] = None


NULL = Behavior("NULL")
# A path kindling reads (Spark's VARIANT paths): members by name and elements by index, no wildcards or filters
SUPPORTED_PATH = re.compile(r"\$(\.[A-Za-z_][A-Za-z0-9_]*|\['[^'\\]*'\]|\[[0-9]+\])*")

_LOST_DIGITS = ("of a number written with trailing zeros in its fraction or with an exponent is not supported: kindling "
                "reads JSON numbers by value, Flink keeps their digits as written")


def _failure(function: str, hint: str) -> str:
    return f"raise_error('{function} {_LOST_DIGITS} ({hint})')"


def _answer(function: str, behavior: Behavior, lax: bool) -> str:
    if behavior.kind == "NULL":
        return "NULL"
    if behavior.kind == "DEFAULT":
        return f"CAST({behavior.default} AS STRING)"
    if behavior.kind == "EMPTY ARRAY":
        return "'[]'"
    if behavior.kind == "EMPTY OBJECT":
        return "'{}'"
    what = "Empty result" if lax else "No value at the path"
    return f"raise_error('{what} of {function} function is not allowed ({'ERROR ON EMPTY' if lax else 'ERROR ON ERROR'})')"


_J = "__kindling_json"  # the lambda variable binding one call's document (d) and selected VARIANT (v)
_VALUE, _KIND, _DOCUMENT = f"{_J}.v", f"schema_of_variant({_J}.v)", f"{_J}.d"


def _select(document: str, path: str, lax: bool, no_value: str, function: str, on_empty: Behavior, on_error: Behavior,
            text: str) -> str:
    """The answer of one call. ``no_value`` and ``text`` read the document and the selected VARIANT bound once by a
    lambda: written out in every branch, a document that is an expression was repeated a dozen times per call."""
    answer = _answer(function, on_empty if lax else on_error, lax)
    body = f"CASE WHEN {_DOCUMENT} IS NULL THEN NULL WHEN {no_value} THEN {answer} ELSE {text} END"
    bound = f"named_struct('d', {document}, 'v', try_variant_get(try_parse_json({document}), {path}))"
    return bound_once(bound, _J, body)


def json_value(document: str, path: str, lax: bool, returning: Optional[str], on_empty: Behavior = NULL,
               on_error: Behavior = NULL) -> str:
    """``JSON_VALUE(document, path [RETURNING type] [... ON EMPTY] [... ON ERROR])``: a scalar's text (a string
    unescaped), cast to ``returning`` when given. ``path`` is a quoted Spark literal without its mode."""
    value, kind = _VALUE, _KIND
    text = f"variant_get({value}, '$', 'string')"
    if returning is None or returning.upper().startswith(("STRING", "VARCHAR", "CHAR")):
        # a decimal's text is exact unless the document writes that value with more zeros (2.5 as 2.50, 1 as 1.0)
        written_longer = (f"{_DOCUMENT} RLIKE concat('(^|[^0-9.])\\\\Q', {text}, "
                          f"'\\\\E([.]0+|0+)([^0-9]|$)')")
        # BigDecimal's own text of the decimal (1.7E-7 where Spark writes 0.00000017)
        decimal = f"reflect('org.apache.commons.lang3.math.NumberUtils', 'createBigDecimal', {text})"
        text = (f"(CASE WHEN {kind} RLIKE '^(DOUBLE|FLOAT)' OR ({kind} RLIKE '^DECIMAL' AND {written_longer}) "
                f"THEN {_failure('JSON_VALUE', 'RETURNING DECIMAL(p, s) or DOUBLE reads it as a number')} "
                f"WHEN {kind} RLIKE '^DECIMAL' THEN {decimal} ELSE {text} END)")
    if returning:
        text = f"TRY_CAST({text} AS {returning})"
    no_value = f"({value} IS NULL OR {kind} RLIKE '^(OBJECT|ARRAY|VOID)')"
    return _select(document, path, lax, no_value, "JSON_VALUE", on_empty, on_error, text)


def json_query(document: str, path: str, lax: bool, wrapper: str, on_empty: Behavior = NULL,
               on_error: Behavior = NULL) -> str:
    """``JSON_QUERY(document, path [wrapper] [... ON EMPTY] [... ON ERROR])``: the object or array at ``path`` as
    JSON text (keys sorted); ``wrapper`` WITHOUT, UNCONDITIONAL (any value in an array) or CONDITIONAL (a value that is
    not an array in an array)."""
    value, kind = _VALUE, _KIND
    trailing_zero = f"{_DOCUMENT} RLIKE '[0-9][.][0-9]*0[ \\\\t\\\\r\\\\n]*[\\\\],}}]'"
    # and BigDecimal writes a number below 1E-6 with an exponent, Spark without
    tiny = f"{_DOCUMENT} RLIKE '(^|[^0-9.])-?0[.]0{{6}}'"
    lost = f"{kind} RLIKE 'DOUBLE|FLOAT' OR ({kind} RLIKE 'DECIMAL' AND ({trailing_zero} OR {tiny}))"
    json = f"to_json({value})"
    if wrapper == "UNCONDITIONAL":
        json = f"concat('[', {json}, ']')"
    elif wrapper == "CONDITIONAL":
        json = f"(CASE WHEN {kind} RLIKE '^ARRAY' THEN {json} ELSE concat('[', {json}, ']') END)"
    text = (f"(CASE WHEN {lost} THEN "
            f"{_failure('JSON_QUERY', 'JSON_VALUE of each number with RETURNING DECIMAL(p, s) reads it as a number')} "
            f"ELSE {json} END)")
    no_value = (f"({value} IS NULL OR NOT {kind} RLIKE '^(OBJECT|ARRAY)')" if wrapper == "WITHOUT"
                else f"({value} IS NULL OR {kind} = 'VOID')")
    return _select(document, path, lax, no_value, "JSON_QUERY", on_empty, on_error, text)

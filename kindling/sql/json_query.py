"""Flink's ``JSON_VALUE`` and ``JSON_QUERY`` (default clauses) as Spark SQL over Spark's VARIANT.

Flink reads a document's numbers as Java ``BigDecimal`` and writes them back as ``BigDecimal.toString()``: the digits as
written (``1.50``, ``1.0``), an exponent as ``1E+3``; it writes the members of JSON_QUERY's objects sorted by key.
Spark's VARIANT keeps a number's value, not its trailing zeros, and writes an object's keys sorted, as Flink does.
So a number is written from the VARIANT's value (exact for integers and decimals without trailing zeros; JSON_VALUE
writes a decimal below 1E-6 as ``1.7E-7``, as Flink does), and where the document's text could hold digits the VARIANT
lost (a trailing zero in a fraction, an exponent; in JSON_QUERY also a decimal below 1E-6) the query fails naming the
function rather than give another text.

>>> json_query("doc", "'$.a'").startswith("(CASE WHEN schema_of_variant(try_variant_get(try_parse_json(doc), '$.a'))")
True
"""

from __future__ import annotations

from typing import Optional

_LOST_DIGITS = ("of a number written with trailing zeros in its fraction or with an exponent is not supported: kindling "
                "reads JSON numbers by value, Flink keeps their digits as written")


def _failure(function: str, hint: str) -> str:
    return f"raise_error('{function} {_LOST_DIGITS} ({hint})')"


def json_value(document: str, path: str, returning: Optional[str]) -> str:
    """``JSON_VALUE(document, path [RETURNING type])`` with NULL ON EMPTY and NULL ON ERROR: a scalar's text (a string
    unescaped), NULL for a missing value, JSON null, an object or an array. ``path`` is a quoted Spark literal."""
    value = f"try_variant_get(try_parse_json({document}), {path})"
    kind = f"schema_of_variant({value})"
    text = f"variant_get({value}, '$', 'string')"
    if returning is None or returning.upper().startswith(("STRING", "VARCHAR", "CHAR")):
        # a decimal's text is exact unless the document writes that value with more zeros (2.5 as 2.50, 1 as 1.0)
        written_longer = (f"{document} RLIKE concat('(^|[^0-9.])\\\\Q', {text}, "
                          f"'\\\\E([.]0+|0+)([^0-9]|$)')")
        # BigDecimal's own text of the decimal (1.7E-7 where Spark writes 0.00000017)
        decimal = f"reflect('org.apache.commons.lang3.math.NumberUtils', 'createBigDecimal', {text})"
        text = (f"(CASE WHEN {kind} RLIKE '^(DOUBLE|FLOAT)' OR ({kind} RLIKE '^DECIMAL' AND {written_longer}) "
                f"THEN {_failure('JSON_VALUE', 'RETURNING DECIMAL(p, s) or DOUBLE reads it as a number')} "
                f"WHEN {kind} RLIKE '^DECIMAL' THEN {decimal} ELSE {text} END)")
    scalar = f"(CASE WHEN NOT {kind} RLIKE '^(OBJECT|ARRAY|VOID)' THEN {text} END)"
    return f"TRY_CAST({scalar} AS {returning})" if returning else scalar


def json_query(document: str, path: str) -> str:
    """``JSON_QUERY(document, path)`` without a wrapper, NULL ON EMPTY and NULL ON ERROR: the object or array at
    ``path`` as JSON text (keys sorted), NULL for anything else."""
    value = f"try_variant_get(try_parse_json({document}), {path})"
    kind = f"schema_of_variant({value})"
    trailing_zero = f"{document} RLIKE '[0-9][.][0-9]*0[ \\\\t\\\\r\\\\n]*[\\\\],}}]'"
    # and BigDecimal writes a number below 1E-6 with an exponent, Spark without
    tiny = f"{document} RLIKE '(^|[^0-9.])-?0[.]0{{6}}'"
    lost = f"{kind} RLIKE 'DOUBLE|FLOAT' OR ({kind} RLIKE 'DECIMAL' AND ({trailing_zero} OR {tiny}))"
    return (f"(CASE WHEN {kind} RLIKE '^(OBJECT|ARRAY)' THEN CASE WHEN {lost} THEN "
            f"{_failure('JSON_QUERY', 'JSON_VALUE of each number with RETURNING DECIMAL(p, s) reads it as a number')} "
            f"ELSE to_json({value}) END END)")

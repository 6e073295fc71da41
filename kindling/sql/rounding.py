"""Flink's CEIL, FLOOR and TRUNCATE of numbers on Spark SQL text: the result keeps the argument's type.

Flink (Calcite) types ``CEIL(x)``/``FLOOR(x)`` as ``x``'s own type (a DOUBLE stays a DOUBLE, an INT an INT,
a DECIMAL(p, s) becomes DECIMAL(p, 0)); Spark's ``ceil``/``floor`` return a BIGINT for every integer or
floating argument, so ``CEIL(1.5E0)`` prints ``2`` where Flink prints ``2.0``, and a BIGINT cannot hold
``CEIL(1E20)``. The argument's type is only known after analysis (:mod:`kindling.sql.analysis`): each call's
argument is tagged, Spark analyses the tagged query, and the calls are rewritten per type:

* integers: cast back to their type;
* DOUBLE/FLOAT: a value of magnitude 2^52 (2^23 for FLOAT) or more is already integral, and NaN and the
  infinities are their own ceiling, so only smaller values go through Spark's BIGINT and back;
* DECIMAL(p, s): cast to DECIMAL(p, 0).

``CEIL(ts TO unit)`` and ``FLOOR(ts TO unit)`` (time points) are left alone.

``TRUNCATE(x[, n])`` (toward zero, to ``n`` decimals) has no Spark function: it is analysed as Spark's
``floor(x, n)`` and written per type as ``floor``/``ceil`` to ``n`` decimals by the sign; a DOUBLE goes through
DECIMAL as Flink's ``BigDecimal.valueOf`` does (so ``TRUNCATE(1.15E0, 2)`` is 1.15, not 1.14), an integer
stays an integer, a DECIMAL(p, s) becomes DECIMAL(p, min(s, n)).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from kindling.sql.analysis import analysed_plan, tagged, tagged_argument_types
from kindling.sql.tokens import Token, function_calls, render, significant, splice, split_top_level, tokenize

_MARKER_BASE = 736_251_948_000
_NAMES = ("CEIL", "CEILING", "FLOOR", "TRUNCATE")
_SPARK_CLASSES = ("Ceil", "Floor", "RoundFloor")
_INTEGERS = ("tinyint", "smallint", "int", "bigint")
# The smallest magnitude from which every value of the type is an integer.
_INTEGRAL_FROM = {"double": "4503599627370496D", "float": "CAST(8388608 AS FLOAT)"}
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")


def _numeric_calls(tokens: list[Token]) -> list[tuple[int, int, int]]:
    """(name, '(', ')') of each outermost CEIL/FLOOR call with a single argument and no ``TO unit``, and of
    each TRUNCATE call with one or two arguments."""
    found = []
    for name, open_index, close, _ in function_calls(tokens, _NAMES):
        arguments = split_top_level(tokens[open_index + 1:close])
        if not significant(arguments[0]):
            continue
        if tokens[name].upper == "TRUNCATE":
            if len(arguments) in (1, 2):
                found.append((name, open_index, close))
        elif len(arguments) == 1 and not any(t.is_word("TO") for t in arguments[0]):
            found.append((name, open_index, close))
    return found


def _marked(tokens: list[Token], calls: list[tuple[int, int, int]]) -> str:
    spans = []
    for n, (name, open_index, close) in enumerate(calls):
        arguments = split_top_level(tokens[open_index + 1:close])
        rest = "".join(", " + render(a) for a in arguments[1:])
        # TRUNCATE is analysed as floor (analysis.analysed_plan)
        spans.append((name, close + 1, f"{render(tokens[name:open_index])}({tagged(_MARKER_BASE + n, render(arguments[0]))}{rest})"))
    return splice(tokens, spans) or render(tokens)


def _flink_call(call: str, argument: str, data_type: str) -> Optional[str]:
    """The Spark text of ``call`` (CEIL/FLOOR over ``argument``) typed as Flink types it; None to leave it."""
    if data_type in _INTEGERS:
        return f"CAST({call} AS {data_type.upper()})"
    if data_type in _INTEGRAL_FROM:
        return (f"(CASE WHEN ABS({argument}) < {_INTEGRAL_FROM[data_type]} THEN CAST({call} AS {data_type.upper()}) "
                f"ELSE ({argument}) END)")
    decimal = _DECIMAL.fullmatch(data_type)
    if decimal is not None:
        return f"CAST({call} AS DECIMAL({decimal.group(1)}, 0))"
    return None


def _flink_truncate(arguments: list[str], data_type: str) -> Optional[str]:
    """Spark text of ``TRUNCATE(x[, n])`` for an ``x`` of ``data_type``; None for a type TRUNCATE does not take."""
    x = arguments[0]
    n = arguments[1] if len(arguments) == 2 else "0"

    def toward_zero(value: str) -> str:
        return f"(CASE WHEN ({x}) < 0 THEN ceil({value}, {n}) ELSE floor({value}, {n}) END)"

    if data_type in _INTEGERS:
        return f"CAST({toward_zero(x)} AS {data_type.upper()})"
    if data_type in _INTEGRAL_FROM:
        exact = toward_zero(f"CAST({x} AS DECIMAL(38, 18))")
        return (f"CAST((CASE WHEN ABS({x}) < {_INTEGRAL_FROM[data_type]} THEN {exact} ELSE ({x}) END) "
                f"AS {data_type.upper()})")
    decimal = _DECIMAL.fullmatch(data_type)
    if decimal is not None:
        precision, scale = int(decimal.group(1)), int(decimal.group(2))
        digits = int(n) if re.fullmatch(r"\s*-?\d+\s*", n) else scale
        return f"CAST({toward_zero(x)} AS DECIMAL({precision}, {max(0, min(scale, digits))}))"
    return None


def with_flink_rounding(spark: Any, text: str) -> Optional[str]:
    """``text`` with each numeric CEIL/FLOOR typed as Flink types it and each TRUNCATE written for Spark;
    None when nothing changes."""
    if not re.search(r"(?i)\b(CEIL|CEILING|FLOOR|TRUNCATE)\s*\(", text):
        return None
    tokens = tokenize(text)
    calls = _numeric_calls(tokens)
    if not calls:
        return None
    try:
        types = tagged_argument_types(analysed_plan(spark, _marked(tokens, calls)), _SPARK_CLASSES, _MARKER_BASE)
    except Exception:  # the tagged text did not analyse although the query does: keep Spark's types
        return None
    replacements = []
    for n, (name, open_index, close) in enumerate(calls):
        data_type = types.get(n)
        if data_type is None:
            continue
        if tokens[name].upper == "TRUNCATE":
            replacement = _flink_truncate([render(a).strip() for a in split_top_level(tokens[open_index + 1:close])], data_type)
        else:
            replacement = _flink_call(render(tokens[name:close + 1]), render(tokens[open_index + 1:close]), data_type)
        if replacement is not None:
            replacements.append((name, close + 1, replacement))
    return splice(tokens, replacements)

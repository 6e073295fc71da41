"""Flink's result types of AVG, SUM, STDDEV and VARIANCE over integers, on Spark SQL text.

Flink's ``AVG`` (as a group or an OVER aggregate) over an exact integer column returns that type, truncated (``AVG(BIGINT)`` is a
BIGINT), and ``SUM`` keeps the input type; Spark's ``avg`` returns DOUBLE and ``sum`` of an INT
a BIGINT. The argument's type is only known after analysis (:mod:`kindling.sql.analysis`), so each
call's argument is tagged, Spark analyses the tagged query, and the calls over integers are cast back.
"""

from __future__ import annotations

from typing import Any, Optional

from kindling.sql.analysis import analysed_plan, tagged, tagged_argument_types
from kindling.sql.tokens import Token, function_calls, matching_paren, next_significant, render, splice, tokenize

_MARKER_BASE = 918_273_645_000
_INTEGERS = ("tinyint", "smallint", "int", "bigint")
# The input types whose Spark result type differs from Flink's (SUM of BIGINT is BIGINT in both).
_CAST_BACK = {"AVG": _INTEGERS, "SUM": ("tinyint", "smallint", "int"),
              # Flink's variance and standard deviation over integers are integers too (truncated).
              "STDDEV": _INTEGERS, "STDDEV_POP": _INTEGERS, "STDDEV_SAMP": _INTEGERS,
              "VARIANCE": _INTEGERS, "VAR_POP": _INTEGERS, "VAR_SAMP": _INTEGERS}
# Spark's expression classes of those calls.
_SPARK_AGGREGATES = ("Average", "Sum", "StddevPop", "StddevSamp", "VariancePop", "VarianceSamp")


def _calls(tokens: list[Token]) -> list[tuple[int, int, int, int]]:
    """(name index, '(' index, ')' index, end index after an optional FILTER (...) or OVER window) of each AVG/SUM call."""
    return [(name, open_index, close, _over_end(tokens, end)) for name, open_index, close, end in function_calls(tokens, tuple(_CAST_BACK))]


def _over_end(tokens: list[Token], end: int) -> int:
    """The last index of ``OVER w`` or ``OVER (...)`` after a call ending at ``end`` (a window aggregate), else ``end``."""
    over = next_significant(tokens, end)
    if over is None or not tokens[over].is_word("OVER"):
        return end
    window = next_significant(tokens, over)
    if window is None:
        return end
    return matching_paren(tokens, window) if tokens[window].is_symbol("(") else window


def _argument_start(tokens: list[Token], open_index: int) -> int:
    """Index of the argument's first token, after an optional DISTINCT/ALL."""
    j = next_significant(tokens, open_index)
    if j is not None and tokens[j].is_word("DISTINCT", "ALL"):
        return j + 1
    return open_index + 1


def _marked(tokens: list[Token], calls: list[tuple[int, int, int, int]]) -> str:
    spans = []
    for n, (_, open_index, close, _) in enumerate(calls):
        start = _argument_start(tokens, open_index)
        if start < close and render(tokens[start:close]).strip() not in ("", "*"):
            # a space keeps DISTINCT/ALL apart from the tag (``DISTINCTCASE`` would not parse)
            spans.append((start, close, " " + tagged(_MARKER_BASE + n, render(tokens[start:close]))))
    return splice(tokens, spans) or render(tokens)


def with_flink_aggregate_types(spark: Any, text: str) -> Optional[str]:
    """``text`` with AVG/SUM over integers cast back to their input type; None when nothing changes."""
    tokens = tokenize(text)
    calls = _calls(tokens)
    if not calls:
        return None
    try:
        # STDDEV/VARIANCE read their argument as a DOUBLE: the type is the one under Spark's cast
        types = tagged_argument_types(analysed_plan(spark, _marked(tokens, calls)), _SPARK_AGGREGATES, _MARKER_BASE)
    except Exception:  # the tagged text did not analyse although the query does: keep Spark's types
        return None
    return splice(tokens, [(name, end + 1, f"CAST({render(tokens[name:end + 1])} AS {types[n].upper()})")
                           for n, (name, _, _, end) in enumerate(calls)
                           if types.get(n) in _CAST_BACK[tokens[name].upper]])

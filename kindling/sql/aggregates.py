"""Flink's result types of AVG, SUM, STDDEV and VARIANCE over integers, on Spark SQL text.

Flink's ``AVG`` over an exact integer column returns that type, truncated (``AVG(BIGINT)`` is a
BIGINT), and ``SUM`` keeps the input type; Spark's ``avg`` returns DOUBLE and ``sum`` of an INT
a BIGINT. The argument's type is only known after analysis, so each call's argument is tagged
with a marker, Spark analyses the tagged query, and the calls over integers are cast back.
"""

from __future__ import annotations

from typing import Any, Optional

from kindling.sql.tokens import Token, function_calls, next_significant, render, tokenize

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
    """(name index, '(' index, ')' index, end index after an optional FILTER (...)) of each AVG/SUM call."""
    return function_calls(tokens, tuple(_CAST_BACK))


def _argument_start(tokens: list[Token], open_index: int) -> int:
    """Index of the argument's first token, after an optional DISTINCT/ALL."""
    j = next_significant(tokens, open_index)
    if j is not None and tokens[j].is_word("DISTINCT", "ALL"):
        return j + 1
    return open_index + 1



def _marked(tokens: list[Token], calls: list[tuple[int, int, int, int]]) -> str:
    out: list[str] = []
    position = 0
    for n, (_, open_index, close, _) in enumerate(calls):
        start = _argument_start(tokens, open_index)
        if start > close - 1 or (start < close and render(tokens[start:close]).strip() == "*"):
            continue
        marker = _MARKER_BASE + n
        out.append(render(tokens[position:start]))
        out.append(f"CASE WHEN {marker} = {marker} THEN (")
        position = start
        out.append(render(tokens[position:close]))
        out.append(") END")
        position = close
    out.append(render(tokens[position:]))
    return "".join(out)


def _argument_types(plan: Any) -> dict[int, str]:
    """Marker number -> the argument's type, from the tagged AVG/SUM calls of an analysed plan."""
    found: dict[int, str] = {}

    def walk_expression(e: Any) -> None:
        if e.getClass().getSimpleName() in _SPARK_AGGREGATES:
            child = e.child()
            if child.getClass().getSimpleName() == "Cast":  # STDDEV/VARIANCE read their argument as a DOUBLE
                child = child.child()
            text = child.sql()
            if text.startswith(f"CASE WHEN ({_MARKER_BASE // 1000}"):
                try:
                    marker = int(text[len("CASE WHEN ("):].split(" ", 1)[0].rstrip("L"))
                    found[marker - _MARKER_BASE] = child.dataType().simpleString()
                except ValueError:
                    pass
        children = e.children()
        for k in range(children.size()):
            walk_expression(children.apply(k))

    def walk(node: Any) -> None:
        expressions = node.expressions()
        for k in range(expressions.size()):
            walk_expression(expressions.apply(k))
        children = node.children()
        for k in range(children.size()):
            walk(children.apply(k))
        for sub in _subqueries(node):
            walk(sub)

    walk(plan)
    return found


def _subqueries(node: Any) -> list[Any]:
    try:
        subqueries = node.subqueries()
        return [subqueries.apply(k) for k in range(subqueries.size())]
    except Exception:
        return []


def with_flink_aggregate_types(spark: Any, text: str) -> Optional[str]:
    """``text`` with AVG/SUM over integers cast back to their input type; None when nothing changes."""
    tokens = tokenize(text)
    calls = _calls(tokens)
    if not calls:
        return None
    try:
        plan = spark.sql(_marked(tokens, calls))._jdf.queryExecution().analyzed()
        types = _argument_types(plan)
    except Exception:  # the tagged text did not analyse although the query does: keep Spark's types
        return None
    out: list[str] = []
    position = 0
    changed = False
    for n, (name, _, _, end) in enumerate(calls):
        data_type = types.get(n)
        if data_type is None or data_type not in _CAST_BACK[tokens[name].upper]:
            continue
        out.append(render(tokens[position:name]))
        out.append(f"CAST({render(tokens[name:end + 1])} AS {data_type.upper()})")
        position = end + 1
        changed = True
    if not changed:
        return None
    out.append(render(tokens[position:]))
    return "".join(out)

"""Types Spark only knows after analysis, read back through markers in the query text.

Some of Flink's semantics depend on an operand's type (AVG over an INT is an INT, ``INT / INT`` divides as
integers), which kindling's token-level translation does not know. The rewrites tag each operand of
interest with a marker (``CASE WHEN <marker> = <marker> THEN (<operand>) END``, a no-op for Spark), let Spark
analyse the tagged text, find the tagged expressions in the analysed plan and read their types.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Optional


def tagged(marker: int, text: str) -> str:
    """``text`` (an operand) wrapped so that the analysed plan shows ``marker`` in front of it."""
    return f"CASE WHEN {marker} = {marker} THEN ({text}) END"


def pending_call(marker: str, argument: str) -> str:
    """A translated call whose Flink answer depends on ``argument``'s type: Spark analyses it (a string), and a rewrite
    finds it (:func:`pending_calls`) and writes it out once the type is known."""
    return f"typeof(named_struct('{marker}', ({argument})))"


def pending_calls(tokens: list[Any], marker: str) -> list[tuple[int, int, str]]:
    """(first token, last token, argument text) of each outermost :func:`pending_call` of ``marker`` in ``tokens``."""
    from kindling.sql.tokens import STRING, function_calls, matching_paren, render, significant, split_top_level

    calls = []
    for name, open_index, close, _ in function_calls(tokens, ("TYPEOF",)):
        inner = significant(tokens[open_index + 1:close])
        if len(inner) > 4 and inner[0].is_word("NAMED_STRUCT") and inner[2].kind == STRING and inner[2].string_value == marker:
            struct_open = tokens.index(inner[1], open_index)
            parts = split_top_level(tokens[struct_open + 1:matching_paren(tokens, struct_open)])
            calls.append((name, close, render(parts[1]).strip()))
    return calls


def analysed_pending(spark: Any, text: str, marker: str, base: int) -> tuple[list[Any], list[tuple[int, int, str]], Any, dict[int, Any]]:
    """``text``'s pending calls of ``marker`` (:func:`pending_calls`, over its tokens), Spark's analysed plan of the text
    with each call's argument tagged ``base + n``, and each tagged expression by ``n`` (``CASE WHEN m = m THEN arg END``:
    its type is the argument's). Spark's error, if the text does not analyse, is the query's own and is raised."""
    from kindling.sql.tokens import splice, tokenize

    tokens = tokenize(text)
    calls = pending_calls(tokens, marker)
    marked = splice(tokens, [(name, close + 1, f"CAST({tagged(base + n, argument)} AS STRING)")
                             for n, (name, close, argument) in enumerate(calls)])
    plan = analysed_plan(spark, marked or text)
    found: dict[int, Any] = {}
    for expression in expressions(plan):
        n = marker_of(expression, base)
        if n is not None:
            found.setdefault(n, expression)
    return tokens, calls, plan, found


def marker_of(expression: Any, base: int) -> Optional[int]:
    """The number ``n`` of a tagged expression whose marker is ``base + n`` (None when it carries none)."""
    text = expression.sql()
    if not text.startswith(f"CASE WHEN ({base // 1000}"):
        return None
    try:
        return int(text[len("CASE WHEN ("):].split(" ", 1)[0].rstrip("L")) - base
    except ValueError:
        return None


def uncast(expression: Any) -> Any:
    """The expression under the casts Spark's analysis put around it; a cast the query wrote (``CAST(x AS
    DOUBLE) / 4`` divides a DOUBLE) is kept."""
    while expression.getClass().getSimpleName() == "Cast" and not _user_cast(expression):
        expression = expression.child()
    return expression


def _user_cast(cast: Any) -> bool:
    """Whether a Cast node was written in the query (Spark tags those) rather than added by its analysis."""
    gateway = cast._gateway_client
    from py4j.java_gateway import JavaClass

    tag = JavaClass("org.apache.spark.sql.catalyst.expressions.Cast", gateway).USER_SPECIFIED_CAST()
    return bool(cast.getTagValue(tag).isDefined())


def tagged_argument_types(plan: Any, classes: tuple[str, ...], base: int) -> dict[int, str]:
    """Marker number -> Spark's type of the tagged argument, for each expression of a class in ``classes`` (Spark's
    simple class names: ``Average``, ``Ceil``) whose argument carries a marker ``base + n``."""
    found: dict[int, str] = {}
    every = list(expressions(plan))
    # Spark computes an OVER aggregate's argument in a projection below the window (``_w0``): follow the alias.
    aliased = {e.exprId().id(): e.child() for e in every if e.getClass().getSimpleName() == "Alias"}
    for e in every:
        if e.getClass().getSimpleName() in classes:
            argument = uncast(e.child())
            if argument.getClass().getSimpleName() == "AttributeReference" and argument.exprId().id() in aliased:
                argument = uncast(aliased[argument.exprId().id()])
            n = marker_of(argument, base)
            if n is not None:
                found[n] = argument.dataType().simpleString()
    return found


def expressions(plan: Any) -> Iterator[Any]:
    """Every expression of an analysed plan (py4j objects), nested ones and those of subqueries included."""

    def of_expression(e: Any) -> Iterator[Any]:
        yield e
        children = e.children()
        for k in range(children.size()):
            yield from of_expression(children.apply(k))

    def of_node(node: Any) -> Iterator[Any]:
        node_expressions = node.expressions()
        for k in range(node_expressions.size()):
            yield from of_expression(node_expressions.apply(k))
        children = node.children()
        for k in range(children.size()):
            yield from of_node(children.apply(k))
        try:
            subqueries = node.subqueries()
        except Exception:  # a node without subqueries
            return
        for k in range(subqueries.size()):
            yield from of_node(subqueries.apply(k))

    return of_node(plan)


def spark_sql(spark: Any, text: str) -> Any:
    """``spark.sql(text)`` (a DataFrame of the query, analysed) in one Py4J round trip: PySpark's own call first builds
    an empty array of parameters in the JVM, several round trips more for every query kindling plans."""
    from pyspark.sql import DataFrame

    return DataFrame(spark._jsparkSession.sql(text), spark)


def analysed_plan(spark: Any, text: str) -> Any:
    """Spark's analysed logical plan of a query text. Flink's ``TRUNCATE(x, n)``, which Spark lacks and
    :mod:`kindling.sql.rounding` writes out last, is analysed as ``floor(x, n)`` (a number of the same kind)."""
    return spark_sql(spark, _TRUNCATE.sub("floor(", text) if "(" in text else text)._jdf.queryExecution().analyzed()


_TRUNCATE = re.compile(r"(?i)(?<![\w.`])TRUNCATE\s*\(")

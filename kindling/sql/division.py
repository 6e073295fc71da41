"""Flink's division of integers on Spark SQL text: ``amount / 3`` over an INT is an integer in Flink.

Flink divides two exact integers as Java does (truncating toward zero, an integer result); Spark's
``/`` always divides as DOUBLE (``10 / 3`` is 3.333...). Which divisions are between integers is only
known after analysis (:mod:`kindling.sql.analysis`), so each divisor is tagged, Spark analyses the tagged query, and
every ``/`` whose two operands are integers is written as Spark's ``div`` (same precedence and
associativity as ``/``, truncating toward zero; its result is a BIGINT).
"""

from __future__ import annotations

from typing import Any, Optional

from kindling.sql.analysis import analysed_plan, expressions, marker_of, tagged, uncast
from kindling.sql.tokens import NUMBER, QUOTED, STRING, WORD, Token, matching_paren, next_significant, render, splice, tokenize

_MARKER_BASE = 827_364_519_000
_INTEGERS = ("tinyint", "smallint", "int", "bigint")


def _case_end(tokens: list[Token], start: int) -> Optional[int]:
    depth = 0
    for k in range(start, len(tokens)):
        if tokens[k].is_word("CASE"):
            depth += 1
        elif tokens[k].is_word("END"):
            depth -= 1
            if depth == 0:
                return k
    return None


def _operand_end(tokens: list[Token], start: int) -> Optional[int]:
    """Index after the primary expression starting at ``start`` (a divisor); None when it is not one we can delimit."""
    token = tokens[start]
    if token.is_symbol("(", "["):
        end = matching_paren(tokens, start) + 1
    elif token.is_word("CASE"):
        close = _case_end(tokens, start)
        if close is None:
            return None
        end = close + 1
    elif token.is_word("INTERVAL"):
        return None
    elif token.kind in (NUMBER, STRING):
        end = start + 1
    elif token.kind in (WORD, QUOTED):
        end = start + 1
        while True:
            j = next_significant(tokens, end - 1)
            if j is not None and tokens[j].is_symbol("(") and tokens[end - 1].kind in (WORD, QUOTED):
                end = matching_paren(tokens, j) + 1
                continue
            if j is not None and tokens[j].is_symbol("."):
                k = next_significant(tokens, j)
                if k is not None and tokens[k].kind in (WORD, QUOTED):
                    end = k + 1
                    continue
            break
    else:
        return None
    while True:  # postfix indexing: a[1], m['k']
        j = next_significant(tokens, end - 1)
        if j is None or not tokens[j].is_symbol("["):
            return end
        end = matching_paren(tokens, j) + 1


def _divisions(tokens: list[Token]) -> list[tuple[int, int, int]]:
    """(slash index, divisor start, divisor end) of each '/' whose divisor can be delimited."""
    found = []
    for i, token in enumerate(tokens):
        if not token.is_symbol("/"):
            continue
        start = next_significant(tokens, i)
        if start is None or tokens[start].is_symbol("-", "+"):
            continue
        end = _operand_end(tokens, start)
        if end is not None:
            found.append((i, start, end))
    return found


def _marked(tokens: list[Token], divisions: list[tuple[int, int, int]]) -> str:
    spans: list[tuple[int, int, str]] = []
    for n, (_, start, end) in enumerate(divisions):
        if spans and start < spans[-1][1]:  # a divisor inside an earlier divisor: left unmarked (analysed with the outer one)
            continue
        spans.append((start, end, f"({tagged(_MARKER_BASE + n, render(tokens[start:end]))})"))
    return splice(tokens, spans) or render(tokens)


def _integer_divisions(plan: Any) -> set[int]:
    """Marker numbers of the tagged divisions of an analysed plan whose two operands are integers."""
    found: set[int] = set()
    for e in expressions(plan):
        if e.getClass().getSimpleName() == "Divide":
            left, right = uncast(e.left()), uncast(e.right())
            n = marker_of(right, _MARKER_BASE)
            if n is not None and left.dataType().simpleString() in _INTEGERS and right.dataType().simpleString() in _INTEGERS:
                found.add(n)
    return found


def with_flink_division(spark: Any, text: str) -> Optional[str]:
    """``text`` with each division of two integers written as ``div``; None when there is none."""
    if "/" not in text:
        return None
    tokens = tokenize(text)
    divisions = _divisions(tokens)
    if not divisions:
        return None
    try:
        integral = _integer_divisions(analysed_plan(spark, _marked(tokens, divisions)))
    except Exception:  # the tagged text did not analyse although the query does: keep Spark's division
        return None
    return splice(tokens, [(slash, slash + 1, " div ") for n, (slash, _, _) in enumerate(divisions) if n in integral])

"""GROUPING SETS, ROLLUP and CUBE over an updating input: one retracting aggregation per grouping set.

Spark's grouping sets (an Expand under the aggregation) would read a changelog's deletes and updates as new rows;
Flink's aggregation retracts them. A grouping set is a GROUP BY of its own over the same FROM item, with the keys it
leaves out NULL (typed as their columns) and ``GROUPING``/``GROUPING_ID`` the set's bits, so the query is the
``UNION ALL`` of one such aggregation per set, each on kindling's retracting aggregation, their changelogs passed on
together. Over an append-only input Spark's own grouping sets run (a window aggregation's, for one).

Example: ``SELECT a, b, SUM(x) AS s FROM cdc GROUP BY ROLLUP (a, b)`` becomes ``SELECT a, b, SUM(x) AS s FROM cdc GROUP BY
a, b UNION ALL SELECT a, CAST(NULL AS STRING) AS `b`, SUM(x) AS s FROM cdc GROUP BY a UNION ALL SELECT CAST(NULL AS
STRING) AS `a`, CAST(NULL AS STRING) AS `b`, SUM(x) AS s FROM cdc``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Mapping, Optional

from kindling.sql.group_aggregate import AGGREGATE_FUNCTIONS, outer_select, plain_name
from kindling.sql.tokens import (
    QUOTED,
    WORD,
    Token,
    function_calls,
    matching_paren,
    next_significant,
    render,
    significant,
    splice,
    split_alias,
    split_top_level,
    tokenize,
)

_ANALYTICS = ("GROUPING", "ROLLUP", "CUBE")
_BITS = ("GROUPING", "GROUPING_ID")


@dataclass
class GroupingSets:
    """A GROUP BY with grouping sets over plain columns of one FROM item."""

    source_query: Optional[str]
    source_name: Optional[str]
    source_line: int
    from_text: str
    where: Optional[str]
    items: list[list[Token]]  # the SELECT items as written
    having: Optional[list[Token]]
    keys: list[str]  # every grouping column, in order of first appearance
    sets: list[tuple[str, ...]]  # the columns of each grouping set (duplicates kept, as Flink keeps them)
    line: int

    def union_text(self, nulls: Mapping[str, str]) -> str:
        """The query as a UNION ALL of one GROUP BY per grouping set, a left-out key written as ``nulls[key]`` (a typed
        NULL) outside aggregate calls."""
        branches = []
        for present in self.sets:
            absent = {k for k in self.keys if k not in present}
            items = [_item(tokens, absent, nulls) for tokens in self.items]
            having = _rewritten(self.having, absent, nulls) if self.having is not None else None
            branch = f"SELECT {', '.join(items)} FROM {self.from_text}"
            if self.where:
                branch += f" WHERE {self.where}"
            if present:
                branch += " GROUP BY " + ", ".join(f"`{k}`" for k in dict.fromkeys(present))
            if having:
                branch += f" HAVING {having}"
            branches.append(branch)
        return " UNION ALL ".join(branches)


def find_grouping_sets(text: str, line: int) -> Optional[GroupingSets]:
    """``text`` as a GROUP BY with GROUPING SETS, ROLLUP or CUBE over plain columns of one FROM item; None otherwise."""
    parts = outer_select(text, line)
    if parts is None or parts.group is None or parts.distinct:
        return None
    groups = [significant(part) for part in split_top_level(parts.group)]
    if not any(part and part[0].kind == WORD and part[0].upper in _ANALYTICS for part in groups):
        return None
    factors: list[list[tuple[str, ...]]] = []
    for part in groups:
        sets = _sets(part)
        if sets is None:
            return None
        factors.append(sets)
    combined = [tuple(k for s in combination for k in s) for combination in itertools.product(*factors)]
    keys = list(dict.fromkeys(k for s in combined for k in s))
    query, name, _ = parts.source
    if query is None and name is None:
        return None
    return GroupingSets(query, name, parts.from_line, render(parts.from_tokens).strip(), parts.where_text,
                        [part for part in split_top_level(parts.select_tokens) if render(part).strip()], parts.having,
                        keys, combined, line)


def _sets(part: list[Token]) -> Optional[list[tuple[str, ...]]]:
    """The grouping sets of one GROUP BY element: a column, ``GROUPING SETS (...)``, ``ROLLUP (...)``, ``CUBE (...)``."""
    if not part:
        return None
    head = part[0].upper if part[0].kind == WORD else None
    if head not in _ANALYTICS:
        column = plain_name(part)
        return [(column,)] if column is not None else None
    opening = 2 if head == "GROUPING" else 1
    if head == "GROUPING" and (len(part) < 2 or not part[1].is_word("SETS")):
        return None
    if len(part) <= opening or not part[opening].is_symbol("(") or matching_paren(part, opening) != len(part) - 1:
        return None
    elements = [_columns(element) for element in split_top_level(part[opening + 1:-1])]
    if any(element is None for element in elements):
        return None
    columns: list[tuple[str, ...]] = [e for e in elements if e is not None]
    if head == "GROUPING":
        return columns
    if head == "ROLLUP":
        return [tuple(k for e in columns[:n] for k in e) for n in range(len(columns), -1, -1)]
    return [tuple(k for e, chosen in zip(columns, mask) if chosen for k in e)
            for mask in itertools.product((True, False), repeat=len(columns))]


def _columns(element: list[Token]) -> Optional[tuple[str, ...]]:
    """The columns of one element of a grouping-set list: ``a``, ``(a, b)`` or ``()``."""
    sig = significant(element)
    if sig and sig[0].is_symbol("(") and matching_paren(sig, 0) == len(sig) - 1:
        inner = [significant(p) for p in split_top_level(sig[1:-1])]
        names = [plain_name(p) for p in inner if p]
        return None if any(n is None for n in names) else tuple(n for n in names if n is not None)
    name = plain_name(sig)
    return (name,) if name is not None else None


def _item(tokens: list[Token], absent: set[str], nulls: Mapping[str, str]) -> str:
    expression, alias = split_alias(tokens)
    name = alias or plain_name(tokenize(expression))
    rewritten = _rewritten(tokens, absent, nulls)
    if alias is None and name is not None and name in absent:
        return f"{rewritten} AS `{name}`"  # a left-out key keeps its column name
    return rewritten


def _rewritten(tokens: list[Token], absent: set[str], nulls: Mapping[str, str]) -> str:
    """``tokens`` with GROUPING/GROUPING_ID calls as the set's bits and, outside aggregate calls, each left-out key as its
    typed NULL."""
    replacements: list[tuple[int, int, str]] = []
    for name_at, open_at, close_at, _ in function_calls(tokens, _BITS):
        arguments = [plain_name(significant(a)) for a in split_top_level(tokens[open_at + 1:close_at])]
        bits = 0
        for argument in arguments:
            bits = bits * 2 + (1 if argument in absent else 0)
        replacements.append((name_at, close_at + 1, f"CAST({bits} AS BIGINT)"))
    aggregates = [(start, end) for start, _, _, end in function_calls(tokens, AGGREGATE_FUNCTIONS)]
    for i, token in enumerate(tokens):
        if token.kind not in (WORD, QUOTED) or token.identifier not in absent:
            continue
        if any(start <= i <= end for start, end in aggregates) or any(start <= i < end for start, end, _ in replacements):
            continue
        following = next_significant(tokens, i)
        if following is not None and tokens[following].is_symbol("(", "."):
            continue  # a function's or a table's name
        start = i
        if i >= 2 and tokens[i - 1].is_symbol(".") and tokens[i - 2].kind in (WORD, QUOTED):
            start = i - 2  # a qualified column: t.k
        replacements.append((start, i + 1, nulls[token.identifier]))
    replacements.sort()
    return (splice(tokens, replacements) or render(tokens)).strip()

"""Flink's regular semi join on streams: ``WHERE x IN (SELECT y ...)`` and ``WHERE EXISTS (SELECT ... WHERE s.k = o.k)``.

Spark runs no subquery over a stream ("Streaming query is not allowed in subquery expressions"), and its
stream-stream left semi join needs watermarks and a time bound. Flink plans both as a regular semi join with state
kept for ever: a left row waits until a matching right row has arrived and is then emitted once; with insert-only
inputs the result is insert-only. Here the outer query's FROM item and the subquery become the two sides of one
keyed function on the keyed core (keyed by the join key); its output, the left rows that have found a match, takes
the FROM item's place under its name, the IN/EXISTS condition becomes TRUE, and the rest of the query stays as
written. A null key never matches, as ``=`` and ``IN`` say.

Handled: one such condition, a top-level operand of the outer WHERE's ANDs; a single FROM item outside and inside;
an uncorrelated ``IN`` subquery of one column, or an ``EXISTS`` subquery correlated by equalities between an outer
and an inner expression (its other conditions filter the inner rows).

``NOT EXISTS`` is Flink's anti join: a left row is emitted (``+I``) while its key has no match, and retracted (``-D``)
when the first match arrives; a row whose key is null never matches and stays. Its result is a retract changelog,
so the outer query must be a projection and filter over the one FROM item (nothing after WHERE): the select list
and the other conditions are applied to the left rows before the join, and the anti join's rows are the query's.
``NOT IN`` is left to Spark, which refuses it on streams: Flink's NOT IN is null-aware (one null in the subquery
empties the result), a condition on the whole subquery, not on a key.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any, Optional

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from kindling.connectors.base import INTERNAL_PREFIX
from kindling.datastream.operator import Adapter
from kindling.sql.column_types import passing
from kindling.sql.tokens import (
    QUOTED,
    WORD,
    Token,
    from_item_qualifier,
    matching_paren,
    render,
    significant,
    splice,
    split_alias,
    split_conjuncts,
    split_top_level,
    tokenize,
    top_level_clauses,
    with_depth,
)

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment

KEY_PREFIX = INTERNAL_PREFIX + "semi_k"
SIDE = INTERNAL_PREFIX + "semi_side"  # 0: a row of the outer query's FROM item, 1: a row of the subquery
_CLAUSES = ("GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "FETCH", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "QUALIFY")


@dataclass
class SemiJoin:
    """A query split around its IN/EXISTS subquery: the two sides keyed by the join key, and the query over the result."""

    left_text: str  # SELECT *, <outer key> AS k0, ... FROM <outer FROM item>
    right_text: str  # SELECT <inner key> AS k0, ... FROM <inner FROM item> [WHERE <inner-only conditions>]
    key_count: int
    line: int
    _tokens: list[Token]
    _from_span: tuple[int, int]
    _condition_span: tuple[int, int]
    _qualifier: str
    anti: bool = False  # NOT EXISTS: left_text then holds the outer select list and its other conditions

    def outer_text(self, view: str) -> str:
        """The query with ``view`` (the semi join's rows) in place of its FROM item and TRUE in place of the subquery."""
        item = f" {view} {self._qualifier} " if self._qualifier else f" {view} "
        text = splice(self._tokens, [(*self._from_span, item), (*self._condition_span, "TRUE")])
        assert text is not None
        return text


def find_semi_join(text: str, line: int) -> Optional[SemiJoin]:
    """The semi join in ``text``'s outermost WHERE, or None when the query has none of the handled shapes.

    Example: ``SELECT o.id FROM orders o WHERE o.amount > 5 AND o.customer IN (SELECT c.name FROM customers c
    WHERE c.city = 'Berlin')`` keys both sides by the customer and keeps ``o.amount > 5`` in the outer query."""
    tokens = tokenize(text, line)
    top, positions = top_level_clauses(tokens, ("FROM", "WHERE"))
    if not top or not top[0][1].is_word("SELECT"):
        return None
    if "FROM" not in positions or "WHERE" not in positions or positions["WHERE"] < positions["FROM"]:
        return None
    from_start, where = positions["FROM"] + 1, positions["WHERE"]
    qualifier = from_item_qualifier(significant(tokens[from_start:where]))
    if qualifier is None:
        return None
    where_end = next((i for i, t in top if i > where and t.kind == WORD and t.upper in _CLAUSES), len(tokens))
    conjuncts = split_conjuncts(tokens[where + 1:where_end])
    found = [(c, sub) for c in conjuncts if (sub := _subquery(c)) is not None]
    if len(found) != 1:
        return None
    conjunct, (kind, outer_key, inner) = found[0]
    keys = _inner_keys("EXISTS" if kind == "NOT EXISTS" else kind, outer_key, inner, qualifier)
    if keys is None:
        return None
    pairs, inner_from, inner_filters = keys
    left_keys = ", ".join(f"{outer} AS {KEY_PREFIX}{n}" for n, (outer, _) in enumerate(pairs))
    right_keys = ", ".join(f"{inner_expression} AS {KEY_PREFIX}{n}" for n, (_, inner_expression) in enumerate(pairs))
    written = significant(conjunct)
    first, last = tokens.index(written[0]), tokens.index(written[-1])
    left_text = f"SELECT *, {left_keys}\nFROM {render(tokens[from_start:where]).strip()}\n"
    if kind == "NOT EXISTS":
        select_list = significant(tokens[top[0][0] + 1:positions["FROM"]])
        if where_end != len(tokens) or not select_list or select_list[0].is_word("DISTINCT") or select_list[0].is_word("ALL"):
            return None  # the anti join's changelog under GROUP BY, DISTINCT, ORDER BY ...: not planned here
        others = [render(c).strip() for c in conjuncts if c is not conjunct]
        left_text = (f"SELECT {render(tokens[top[0][0] + 1:positions['FROM']]).strip()}, {left_keys}\n"
                     f"FROM {render(tokens[from_start:where]).strip()}\n"
                     + (f"WHERE {' AND '.join(f'({c})' for c in others)}\n" if others else ""))
    return SemiJoin(
        left_text=left_text,
        right_text=f"SELECT {right_keys}\nFROM {inner_from}\n" + (f"WHERE {' AND '.join(f'({c})' for c in inner_filters)}\n"
                                                                  if inner_filters else ""),
        key_count=len(pairs), line=line, _tokens=tokens, _from_span=(from_start, where),
        _condition_span=(first, last + 1), _qualifier=qualifier, anti=kind == "NOT EXISTS")


def _subquery(conjunct: list[Token]) -> Optional[tuple[str, Optional[str], list[Token]]]:
    """("IN", outer expression, inner tokens) for ``x IN (SELECT ...)``, ("EXISTS", None, inner tokens) for
    ``EXISTS (SELECT ...)``, ("NOT EXISTS", None, inner tokens) for ``NOT EXISTS (SELECT ...)``; None for anything
    else (NOT IN included)."""
    sig = significant(conjunct)
    if len(sig) < 4 or not sig[-1].is_symbol(")"):
        return None
    if sig[0].is_word("NOT") and len(sig) > 4 and sig[1].is_word("EXISTS") and sig[2].is_symbol("(") and matching_paren(sig, 2) == len(sig) - 1:
        inner = conjunct[conjunct.index(sig[2]) + 1:conjunct.index(sig[-1])]
        return ("NOT EXISTS", None, inner) if _starts_with_select(inner) else None
    if sig[0].is_word("EXISTS") and sig[1].is_symbol("(") and matching_paren(sig, 1) == len(sig) - 1:
        inner = conjunct[conjunct.index(sig[1]) + 1:conjunct.index(sig[-1])]
        return ("EXISTS", None, inner) if _starts_with_select(inner) else None
    depth_zero = [k for k, (t, depth) in enumerate(with_depth(sig)) if depth == 0 and t.is_word("IN")]
    if len(depth_zero) != 1:
        return None
    at = depth_zero[0]
    if at == 0 or sig[at - 1].is_word("NOT") or not sig[at + 1].is_symbol("(") or matching_paren(sig, at + 1) != len(sig) - 1:
        return None
    inner = conjunct[conjunct.index(sig[at + 1]) + 1:conjunct.index(sig[-1])]
    if not _starts_with_select(inner):
        return None
    return "IN", render(conjunct[:conjunct.index(sig[at])]).strip(), inner


def _starts_with_select(tokens: list[Token]) -> bool:
    sig = significant(tokens)
    return bool(sig) and sig[0].is_word("SELECT")


def _inner_keys(kind: str, outer_key: Optional[str], inner: list[Token],
                qualifier: str) -> Optional[tuple[list[tuple[str, str]], str, list[str]]]:
    """((outer, inner) key expression pairs, the inner FROM item, the inner conditions that filter its rows)."""
    top, positions = top_level_clauses(inner, ("FROM", "WHERE", *_CLAUSES))
    if "FROM" not in positions or any(c in positions for c in _CLAUSES):
        return None
    where = positions.get("WHERE", len(inner))
    inner_from = inner[positions["FROM"] + 1:where]
    inner_qualifier = from_item_qualifier(significant(inner_from))
    if inner_qualifier is None or (qualifier and inner_qualifier.lower() == qualifier.lower()):
        return None  # a join inside, or the same name inside and out (which side a column is on is not told)
    conditions = split_conjuncts(inner[where + 1:]) if where < len(inner) else []
    pairs: list[tuple[str, str]] = []
    filters: list[str] = []
    for condition in conditions:
        if not _refers_to(condition, qualifier):
            filters.append(render(condition).strip())
            continue
        if kind == "IN" or not qualifier:
            return None  # a correlated IN, or outer columns that cannot be told from inner ones
        pair = _correlation(condition, qualifier)
        if pair is None:
            return None
        pairs.append(pair)
    if kind == "IN":
        items = [part for part in split_top_level(inner[top[0][0] + 1:positions["FROM"]]) if significant(part)]
        if len(items) != 1 or significant(items[0])[0].is_symbol("*"):
            return None
        assert outer_key is not None
        pairs = [(outer_key, split_alias(items[0])[0])]
    if not pairs:
        return None  # an uncorrelated EXISTS: all rows or none, not a keyed join
    return pairs, render(inner_from).strip(), filters


def _refers_to(tokens: list[Token], qualifier: str) -> bool:
    """Whether ``tokens`` name a column qualified by ``qualifier`` (``q.col``)."""
    if not qualifier:
        return False
    sig = significant(tokens)
    return any(t.kind in (WORD, QUOTED) and t.identifier.lower() == qualifier.lower() and k + 1 < len(sig) and sig[k + 1].is_symbol(".")
               for k, t in enumerate(sig))


def _correlation(condition: list[Token], qualifier: str) -> Optional[tuple[str, str]]:
    """(outer, inner) of ``a = b`` where one side names outer columns only and the other none."""
    equals = [k for k, (t, depth) in enumerate(with_depth(condition)) if depth == 0 and t.is_symbol("=")]
    if len(equals) != 1:
        return None
    left, right = condition[:equals[0]], condition[equals[0] + 1:]
    if _refers_to(left, qualifier) and not _refers_to(right, qualifier):
        return render(left).strip(), render(right).strip()
    if _refers_to(right, qualifier) and not _refers_to(left, qualifier):
        return render(right).strip(), render(left).strip()
    return None


class _MatchByKey(Adapter):
    """Per join key: whether a right row has arrived, and the left rows kept for the key; subclasses say what a key's
    micro-batch emits (``changes``) and keep their state through ``self._state``: (matched, kept rows)."""

    tuple_values = True
    timeless = True
    state_name = ""

    def open(self, runner: Any, runtime_context: Any) -> None:
        from kindling.datastream.state import ValueStateDescriptor, state_handle

        self._state = state_handle(ValueStateDescriptor(self.state_name), lambda: runner.state)
        self._left: list[tuple] = []
        self._matched = False

    def element(self, index: int, value: Any) -> list:
        if value[-1] == 1:
            self._matched = True
        else:
            self._left.append(tuple(value[:-1]))
        return []

    def key_done(self) -> list:
        left, self._left = self._left, []
        matched_now, self._matched = self._matched, False
        stored = self._state.value()
        matched, kept = stored if stored is not None else (False, [])
        return self.changes(matched, matched_now, kept, left)

    def changes(self, matched: bool, matched_now: bool, kept: list[tuple], left: list[tuple]) -> list:
        raise NotImplementedError


class SemiJoinFunction(_MatchByKey):
    """Left rows wait for their key's first match and are emitted then, once."""

    state_name = "semi_join"

    def changes(self, matched: bool, matched_now: bool, kept: list[tuple], left: list[tuple]) -> list:
        if matched or matched_now:
            if not matched:
                self._state.update((True, []))
            return [*kept, *left]
        if left:
            self._state.update((False, [*kept, *left]))
        return []


class AntiJoinFunction(_MatchByKey):
    """Left rows are emitted while their key has no match, and retracted when the first match arrives."""

    state_name = "anti_join"

    def changes(self, matched: bool, matched_now: bool, kept: list[tuple], left: list[tuple]) -> list:
        if matched:
            return []
        if matched_now:  # the key's first match: every row emitted for it is retracted; rows of this batch never show
            self._state.update((True, []))
            return [(*row, "-D") for row in kept]
        if left:
            self._state.update((False, [*kept, *left]))
        return [(*row, "+I") for row in left]


def _keyed_sides(left: DataFrame, right: DataFrame, semi: SemiJoin) -> tuple[DataFrame, list[str], list[str], Column]:
    """Both sides as one frame of (keys, left values, side) rows with non-null keys; the key and value columns; the
    condition that a left row's key is present."""
    keys = [f"{KEY_PREFIX}{n}" for n in range(semi.key_count)]
    values = [c for c in left.columns if c not in keys]
    present = reduce(lambda a, b: a & b, [F.col(k).isNotNull() for k in keys])
    left_rows = left.where(present).select(*[F.col(_quote(c)) for c in keys + values], F.lit(0).alias(SIDE))
    right_rows = right.where(present).select(
        *[F.col(k).cast(left.schema[k].dataType).alias(k) for k in keys],
        *[F.lit(None).cast(left.schema[c].dataType).alias(c) for c in values], F.lit(1).alias(SIDE))
    rows = left_rows.unionByName(right_rows).withColumn(SIDE, F.col(SIDE).cast(IntegerType()))
    return rows, keys, values, present


def semi_join_frame(env: "StreamEnvironment", left: DataFrame, right: DataFrame, semi: SemiJoin) -> DataFrame:
    """The rows of ``left`` (planned from ``semi.left_text``) whose key some row of ``right`` has, each once."""
    from kindling.sql.keyed import keyed_frame

    rows, keys, values, _ = _keyed_sides(left, right, semi)
    output = StructType([passing(left.schema[c]) for c in values])
    return keyed_frame(env, rows, keys, values + [SIDE], SemiJoinFunction(), output, "SemiJoin")


def anti_join_frame(env: "StreamEnvironment", left: DataFrame, right: DataFrame, semi: SemiJoin) -> DataFrame:
    """Flink's anti join of ``left`` (the outer rows, projected and filtered, with the key columns) against ``right``:
    a retract changelog (``ROWKIND_COLUMN``) of the left rows whose key has no match. Null keys never match: such
    rows are inserted and stay."""
    from kindling.connectors.base import ROWKIND_COLUMN
    from kindling.sql.keyed import keyed_frame

    rows, keys, values, present = _keyed_sides(left, right, semi)
    output = StructType([StructField(c, left.schema[c].dataType, True) for c in values] + [StructField(ROWKIND_COLUMN, StringType(), True)])
    joined = keyed_frame(env, rows, keys, values + [SIDE], AntiJoinFunction(), output, "AntiJoin")
    unmatched = left.where(~present).select(*[F.col(_quote(c)) for c in values], F.lit("+I").alias(ROWKIND_COLUMN))
    return joined.unionByName(unmatched)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"

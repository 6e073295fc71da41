"""Flink's regular joins on streams, with its retractions: LEFT, RIGHT and FULL OUTER JOIN, and joins over updating input.

Spark's stream-stream outer joins need watermarks and a time bound; Flink's regular join keeps both inputs for ever
and sends a changelog: a left row with no match yet leaves padded with NULLs (``+I``), and when its key's first right
row arrives that row is retracted (``-D``) and the joined rows inserted (``+I``); a FULL join does the same for right
rows. A NULL key never matches, so its rows leave padded and stay.

Handled: ``SELECT .. FROM a [AS] x {LEFT|RIGHT|FULL} [OUTER] JOIN b [AS] y ON x.k = y.k [AND ..] [WHERE ..]``, two
single FROM items (tables, views or subqueries) over append-only inputs, joined on equalities between a column
expression of each side (every ON condition such an equality); the SELECT list and WHERE apply to the joined
changelog row by row. The keyed operator (:mod:`kindling.sql.keyed`) keeps both sides' rows per join key. An input
that is itself a changelog (a CDC table, an unbounded GROUP BY) is joined as Flink does: a retracted row (-U/-D)
retracts the rows it joined, and may leave the other side's rows padded again; an inner join runs here only over such
input (Spark joins append-only streams itself). Other shapes are left to Spark, which refuses them on streams.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN
from kindling.datastream.operator import Adapter
from kindling.sql.column_types import carried_type, nullable, typed_field, with_type
from kindling.sql.errors import SqlError
from kindling.sql.group_aggregate import output_name, single_from_item
from kindling.sql.tokens import (
    QUOTED,
    WORD,
    Token,
    next_significant,
    previous_significant,
    render,
    significant,
    split_alias,
    split_conjuncts,
    split_top_level,
    tokenize,
    top_level_clauses,
    with_depth,
)

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment

KEY_PREFIX = INTERNAL_PREFIX + "oj_k"
LEFT_PREFIX = INTERNAL_PREFIX + "oj_l_"
RIGHT_PREFIX = INTERNAL_PREFIX + "oj_r_"
SIDE = INTERNAL_PREFIX + "oj_side"
KIND = INTERNAL_PREFIX + "oj_kind"  # an input row's kind: +I/+U accumulate, -U/-D retract
_OTHER_CLAUSES = ("GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "FETCH", "UNION", "INTERSECT", "EXCEPT", "WINDOW", "QUALIFY")


@dataclass
class OuterJoin:
    """An outer join query split into its two sides (with their join keys) and the query over the joined rows."""

    kind: str  # LEFT, RIGHT or FULL
    left_from: str  # the left FROM item, as written
    right_from: str
    pairs: list[tuple[str, str]]  # the ON equalities: (left expression, right expression)
    left_qualifier: str
    right_qualifier: str
    select_tokens: list[Token]
    where_tokens: Optional[list[Token]]
    line: int
    # ``JOIN t FOR SYSTEM_TIME AS OF x.ts``: the time attribute as written, and the table (a temporal join, planned by
    # kindling.sql.temporal_join against a versioned table, or a lookup join by the translator)
    as_of: Optional[str] = None
    right_table: Optional[str] = None

    @property
    def key_count(self) -> int:
        return len(self.pairs)

    @property
    def left_text(self) -> str:
        """SELECT *, <left key> AS k0, .. FROM <left item>"""
        return self.side_text("left")

    @property
    def right_text(self) -> str:
        return self.side_text("right")

    def side_text(self, side: str, extra: str = "", from_item: Optional[str] = None) -> str:
        """One side's rows with its join keys as k0, k1, .. (and ``extra`` select items), from its FROM item or ``from_item``."""
        keys = ", ".join(f"{pair[side == 'right']} AS `{KEY_PREFIX}{n}`" for n, pair in enumerate(self.pairs))
        source = from_item or (self.left_from if side == "left" else self.right_from)
        return f"SELECT *, {keys}{', ' + extra if extra else ''} FROM {source}"

    def outer_text(self, view: str, left: list[str], right: list[str], row_kind: bool = True) -> str:
        """The SELECT list and WHERE over ``view``'s joined rows (columns ``left``/``right`` under the side prefixes),
        with the row kind of a changelog view."""
        select = _select_list(self, left, right)
        where = f" WHERE {_renamed(self.where_tokens, self, left, right)}" if self.where_tokens else ""
        return f"SELECT {select}{f', `{ROWKIND_COLUMN}`' if row_kind else ''} FROM {view}{where}"


def find_outer_join(text: str, line: int) -> Optional[OuterJoin]:
    """``text`` as an outer join of the handled shape; None for any other query."""
    tokens = tokenize(text, line)
    top, positions = top_level_clauses(tokens, ("FROM", "WHERE", *_OTHER_CLAUSES))
    if not top or not top[0][1].is_word("SELECT") or "FROM" not in positions or any(c in positions for c in _OTHER_CLAUSES):
        return None
    from_at = positions["FROM"]
    where_at = positions.get("WHERE", len(tokens))
    top_from = [(i, t) for i, t in top if from_at < i < where_at]
    joins = [k for k, (_, t) in enumerate(top_from) if t.is_word("JOIN")]
    if len(joins) != 1:
        return None
    k = joins[0]
    words = [t.upper for _, t in top_from[max(0, k - 2):k]]
    kind = next((w for w in ("LEFT", "RIGHT", "FULL", "INNER") if w in words), None)
    if any(w in ("CROSS", "NATURAL", "SEMI", "ANTI") for w in words) or not words:
        return None
    first_kind = top_from[k - len(words) + words.index(kind)][0] if kind is not None else top_from[k][0]
    kind = kind or "INNER"
    on = next((i for i, t in top_from[k + 1:] if t.is_word("ON")), None)
    if on is None:
        return None
    left_item = single_from_item(tokens[from_at + 1:first_kind])
    right_tokens, as_of = _without_as_of(tokens[top_from[k][0] + 1:on])
    right_item = single_from_item(right_tokens)
    if left_item is None or right_item is None or (as_of is not None and right_item[1] is None):
        return None
    left_q, right_q = (item[2] or item[1] for item in (left_item, right_item))
    if not left_q or not right_q or left_q.lower() == right_q.lower():
        return None
    pairs = []
    for condition in split_conjuncts(tokens[on + 1:where_at]):
        pair = _equality(condition, left_q, right_q)
        if pair is None:
            return None  # a condition that is not an equality of the two sides: Spark's (refused) join
        pairs.append(pair)
    left_from = render(tokens[from_at + 1:first_kind]).strip()
    right_from = render(right_tokens).strip()
    where = tokens[where_at + 1:] if where_at < len(tokens) else None
    return OuterJoin(kind, left_from, right_from, pairs, left_q, right_q, tokens[top[0][0] + 1:from_at], where, line, as_of,
                     right_item[1] if as_of is not None else None)


def _without_as_of(tokens: list[Token]) -> tuple[list[Token], Optional[str]]:
    """A JOIN's table tokens without ``FOR SYSTEM_TIME AS OF <column>``, and that column as written (None: no such clause)."""
    sig = [k for k, t in enumerate(tokens) if not t.trivia]
    words = [tokens[k].upper for k in sig]
    for n in range(len(sig) - 4):
        if words[n:n + 4] == ["FOR", "SYSTEM_TIME", "AS", "OF"]:
            end = n + 5  # the column: name, or qualifier . name
            while end + 1 < len(sig) and tokens[sig[end]].is_symbol(".") and tokens[sig[end + 1]].kind in (WORD, QUOTED):
                end += 2
            column = render(tokens[sig[n + 4]:sig[end - 1] + 1]).strip()
            rest = tokens[sig[end]:] if end < len(sig) else []
            return tokens[:sig[n]] + rest, column
    return tokens, None


def _side(tokens: list[Token], left: str, right: str) -> Optional[str]:
    """"left"/"right" when every column in ``tokens`` is qualified by that side only; None otherwise."""
    sig = significant(tokens)
    sides = set()
    for k, t in enumerate(sig):
        if t.kind in (WORD, QUOTED) and k + 1 < len(sig) and sig[k + 1].is_symbol(".") and not (k > 0 and sig[k - 1].is_symbol(".")):
            name = t.identifier.lower()
            sides.add("left" if name == left.lower() else "right" if name == right.lower() else "?")
    return sides.pop() if len(sides) == 1 and "?" not in sides else None


def _equality(condition: list[Token], left: str, right: str) -> Optional[tuple[str, str]]:
    equals = [k for k, (t, depth) in enumerate(with_depth(condition)) if depth == 0 and t.is_symbol("=")]
    if len(equals) != 1:
        return None
    a, b = condition[:equals[0]], condition[equals[0] + 1:]
    sides = (_side(a, left, right), _side(b, left, right))
    if sides == ("left", "right"):
        return render(a).strip(), render(b).strip()
    if sides == ("right", "left"):
        return render(b).strip(), render(a).strip()
    return None


def _select_list(join: OuterJoin, left: list[str], right: list[str]) -> str:
    """The SELECT list over the joined view: ``*`` and ``x.*`` expanded, each item's columns renamed, names kept."""
    items = []
    for part in split_top_level(join.select_tokens):
        sig = significant(part)
        if not sig:
            continue
        if len(sig) == 1 and sig[0].is_symbol("*"):
            shared = {c.lower() for c in left} & {c.lower() for c in right}
            if shared:
                raise SqlError(f"SELECT * over an outer join whose sides share column names ({', '.join(sorted(shared))})",
                               line=join.line, construct="outer join", hint="name the columns: SELECT x.a, y.b AS b2, ...")
            items += [f"`{LEFT_PREFIX}{c}` AS `{c}`" for c in left] + [f"`{RIGHT_PREFIX}{c}` AS `{c}`" for c in right]
            continue
        if len(sig) == 3 and sig[2].is_symbol("*") and sig[1].is_symbol(".") and sig[0].kind in (WORD, QUOTED):
            side = sig[0].identifier.lower()
            columns, prefix = (left, LEFT_PREFIX) if side == join.left_qualifier.lower() else (right, RIGHT_PREFIX)
            items += [f"`{prefix}{c}` AS `{c}`" for c in columns]
            continue
        expression, alias = split_alias(part)
        name = alias or output_name(expression)
        renamed = _renamed(tokenize(expression, join.line), join, left, right)
        items.append(renamed + (f" AS `{name}`" if name else ""))
    return ", ".join(items)


def _renamed(tokens: list[Token], join: OuterJoin, left: list[str], right: list[str]) -> str:
    """``tokens`` with each column reference (``x.col``, or a ``col`` only one side has) as the joined view's column."""
    left_names = {c.lower(): c for c in left}
    right_names = {c.lower(): c for c in right}
    sides = {join.left_qualifier.lower(): (left_names, LEFT_PREFIX), join.right_qualifier.lower(): (right_names, RIGHT_PREFIX)}
    out: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        before = previous_significant(tokens, i)
        after = next_significant(tokens, i)
        dotted_before = before is not None and tokens[before].is_symbol(".")
        if t.kind in (WORD, QUOTED) and not dotted_before and after is not None and tokens[after].is_symbol("."):
            column = next_significant(tokens, after)
            if column is not None and t.identifier.lower() in sides and tokens[column].kind in (WORD, QUOTED):
                names, prefix = sides[t.identifier.lower()]
                out.append(f"`{prefix}{names.get(tokens[column].identifier.lower(), tokens[column].identifier)}`")
                i = column + 1
                continue
        if t.kind in (WORD, QUOTED) and not dotted_before and not (after is not None and tokens[after].is_symbol("(")):
            name = t.identifier.lower()
            if (name in left_names) != (name in right_names):
                out.append(f"`{LEFT_PREFIX}{left_names[name]}`" if name in left_names else f"`{RIGHT_PREFIX}{right_names[name]}`")
                i += 1
                continue
        out.append(t.text)
        i += 1
    return "".join(out).strip()


class OuterJoinFunction(Adapter):
    """Per join key: the rows of both sides; each new row is joined with the other side's, padding and retracting
    padded rows as Flink's streaming join does; a retracted input row (-U/-D) retracts what it joined."""

    tuple_values = True
    timeless = True

    def __init__(self, kind: str, left_count: int, right_count: int) -> None:
        self.outer = (kind in ("LEFT", "FULL"), kind in ("RIGHT", "FULL"))  # does the left/right side keep unmatched rows
        self.counts = (left_count, right_count)

    def open(self, runner: Any, runtime_context: Any) -> None:
        from kindling.datastream.state import ValueStateDescriptor, state_handle

        self._state = state_handle(ValueStateDescriptor("outer_join"), lambda: runner.state)
        self._rows: list[tuple] = []

    def element(self, index: int, value: Any) -> list:
        self._rows.append(tuple(value))
        return []

    def key_done(self) -> list:
        rows, self._rows = self._rows, []
        stored = self._state.value()
        sides = [list(stored[0]), list(stored[1])] if stored is not None else [[], []]
        out: list[tuple] = []
        nl, nr = self.counts
        for row in rows:
            own = row[-1]
            values = row[:nl] if own == 0 else row[nl:nl + nr]
            if row[-2] in ("-U", "-D"):
                self._retract(own, values, sides, out)
            else:
                self._accumulate(own, values, sides, out)
        self._state.update((sides[0], sides[1]))
        return out

    def _joined(self, own: int, values: tuple, other: Optional[tuple], kind: str) -> tuple:
        pad = (None,) * self.counts[1 - own]
        left, right = (values, other if other is not None else pad) if own == 0 else (other if other is not None else pad, values)
        return (*left, *right, kind)

    def _accumulate(self, own: int, values: tuple, sides: list[list[tuple]], out: list[tuple]) -> None:
        mine, others = sides[own], sides[1 - own]
        if not mine and self.outer[1 - own]:  # the other side's padded rows are matched now
            out.extend(self._joined(1 - own, other, None, "-D") for other in others)
        out.extend(self._joined(own, values, other, "+I") for other in others)
        if not others and self.outer[own]:
            out.append(self._joined(own, values, None, "+I"))
        mine.append(values)

    def _retract(self, own: int, values: tuple, sides: list[list[tuple]], out: list[tuple]) -> None:
        mine, others = sides[own], sides[1 - own]
        if values not in mine:
            return  # a retraction of a row never seen (as Flink ignores it)
        mine.remove(values)
        out.extend(self._joined(own, values, other, "-D") for other in others)
        if not others and self.outer[own]:
            out.append(self._joined(own, values, None, "-D"))
        if not mine and self.outer[1 - own]:  # the other side's rows are unmatched again
            out.extend(self._joined(1 - own, other, None, "+I") for other in others)


@dataclass
class KeyedSides:
    """Both sides of a join as one stream keyed by the join key: each row with the left columns (under LEFT_PREFIX, NULL
    on right rows), the right columns (under RIGHT_PREFIX), its kind (KIND), its side (SIDE, 0 or 1) and the columns both
    sides share as they are; ``present``: whether the row's key has no NULL (such a row joins nothing)."""

    rows: DataFrame
    keys: list[str]
    left_columns: list[str]
    right_columns: list[str]
    left_fields: list[StructField]
    right_fields: list[StructField]
    present: str = INTERNAL_PREFIX + "oj_present"


def keyed_sides(left: DataFrame, right: DataFrame, key_count: int, shared: tuple[str, ...] = (), padded: tuple[str, ...] = ()) -> KeyedSides:
    """``left`` and ``right`` (each planned with its key columns k0, k1, .. and the ``shared`` columns) as one stream;
    the columns of a ``padded`` side ("left", "right": an outer join fills them with NULL) have nullable Flink types."""
    keys = [f"{KEY_PREFIX}{n}" for n in range(key_count)]
    hidden = {*keys, ROWKIND_COLUMN, *shared}
    left_columns = [c for c in left.columns if c not in hidden]
    right_columns = [c for c in right.columns if c not in hidden]

    def fields(df: DataFrame, columns: list[str], prefix: str, side: str) -> list[StructField]:
        types = [carried_type(df.schema[c]) for c in columns]
        return [typed_field(f"{prefix}{c}", df.schema[c].dataType, nullable(t) if t is not None and side in padded else t)
                for c, t in zip(columns, types)]

    left_fields = fields(left, left_columns, LEFT_PREFIX, "left")
    right_fields = fields(right, right_columns, RIGHT_PREFIX, "right")
    key_types = [left.schema[k].dataType for k in keys]
    sides = KeyedSides(left, keys, left_columns, right_columns, left_fields, right_fields)

    def side(df: DataFrame, own: str) -> DataFrame:
        present = reduce(lambda a, b: a & b, [F.col(k).isNotNull() for k in keys])
        items = [F.col(f"`{k}`").cast(t).alias(k) for k, t in zip(keys, key_types)]
        items += [with_type(F.col(f"`{c}`") if own == "left" else F.lit(None).cast(f.dataType), f.name, carried_type(f))
                  for c, f in zip(left_columns, left_fields)]
        items += [with_type(F.col(f"`{c}`") if own == "right" else F.lit(None).cast(f.dataType), f.name, carried_type(f))
                  for c, f in zip(right_columns, right_fields)]
        items.append((F.col(f"`{ROWKIND_COLUMN}`") if ROWKIND_COLUMN in df.columns else F.lit("+I")).alias(KIND))
        items.append(F.lit(0 if own == "left" else 1).cast(IntegerType()).alias(SIDE))
        items += [F.col(f"`{c}`") for c in shared]
        return df.select(*items, present.alias(sides.present))

    sides.rows = side(left, "left").unionByName(side(right, "right"))
    return sides


def outer_join_frame(env: "StreamEnvironment", left: DataFrame, right: DataFrame, join: OuterJoin) -> tuple[DataFrame, list[str], list[str]]:
    """The joined changelog of ``left`` and ``right`` (each planned with its key columns): the left side's columns under
    LEFT_PREFIX, the right's under RIGHT_PREFIX, and the row kind; with the two sides' column names."""
    from kindling.sql.keyed import keyed_frame

    padded = {"LEFT": ("right",), "RIGHT": ("left",), "FULL": ("left", "right")}.get(join.kind, ())
    sides = keyed_sides(left, right, join.key_count, padded=padded)
    fields = sides.left_fields + sides.right_fields
    present = F.col(sides.present)
    keyed_rows = sides.rows.where(present).drop(sides.present)
    values = [f.name for f in fields] + [KIND, SIDE]
    output = StructType(fields + [StructField(ROWKIND_COLUMN, StringType(), True)])
    joined = keyed_frame(env, keyed_rows, sides.keys, values,
                         OuterJoinFunction(join.kind, len(sides.left_fields), len(sides.right_fields)), output, "OuterJoin")
    # rows with a NULL key match nothing: an outer side's leave padded, an inner side's are dropped
    padded_sides = ([0] if join.kind in ("LEFT", "FULL") else []) + ([1] if join.kind in ("RIGHT", "FULL") else [])
    unmatched = sides.rows.where(~present & F.col(SIDE).isin(padded_sides)).select(
        *[F.col(f.name) for f in fields], F.when(F.col(KIND).isin("-U", "-D"), "-D").otherwise("+I").alias(ROWKIND_COLUMN))
    return joined.unionByName(unmatched), sides.left_columns, sides.right_columns

"""Flink's Top-N and deduplication on streams: a keyed ranking function on the keyed operator (:mod:`kindling.sql.keyed`).

Spark SQL has no streaming operator for ``ROW_NUMBER() OVER (PARTITION BY k ORDER BY x)``, so a
query of Flink's Top-N form::

    SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC) AS rn FROM t) [alias]
    WHERE rn <= N [AND ...]

is split here: the inner query is planned without the OVER column (its partition and order
expressions become hidden columns), the rows are ranked per partition key by :func:`rank_frame`,
and the outer query reads the ranked rows from a temporary view. As Flink's rank operators do,
the result is an updating changelog (``ROWKIND_COLUMN``): when a key's top rows change, the rows
that left are retracted (``-U``/``-D``) and those that entered are added (``+U``/``+I``).
Special forms follow Flink: ``rn = 1`` ordered by a time attribute ``ASC`` is deduplication keeping
the first row (append-only, emitted once), ``DESC`` keeps the last row; a Top-N partitioned by
``window_start, window_end`` is window Top-N (append-only, final rows once the window has ended):
over a window aggregation a window's rows arrive in one micro-batch and are ranked at once; over
a window TVF's rows they are kept per window and ranked when an event-time timer at the window's
end fires. Ties are broken by arrival, as in Flink.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Optional

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN
from kindling.datastream.operator import Adapter
from kindling.sql.column_types import passing, typed_field
from kindling.sql.errors import SqlError
from kindling.sql.tokens import (
    NUMBER,
    QUOTED,
    SYMBOL,
    WORD,
    Token,
    from_item_qualifier,
    matching_paren,
    next_significant,
    render,
    significant,
    split_alias,
    split_conjuncts,
    split_top_level,
    tokenize,
    top_level_clauses,
    with_depth,
)

RANK_FUNCTIONS = ("ROW_NUMBER", "RANK", "DENSE_RANK")
TOP_N_FORM = ("SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC) AS rn FROM t) "
              "WHERE rn <= N (RANK/DENSE_RANK likewise; rn = 1 ordered by a time attribute deduplicates)")
PARTITION_PREFIX = INTERNAL_PREFIX + "rank_p"
ORDER_PREFIX = INTERNAL_PREFIX + "rank_o"
ARRIVAL = INTERNAL_PREFIX + "rank_arrival"
SORT_LIMIT_RANK = INTERNAL_PREFIX + "sort_limit_rn"  # the rank of ORDER BY ... LIMIT n on a stream
_CLAUSES = ("GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "QUALIFY")

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment


@dataclass
class OrderKey:
    expression: str
    descending: bool = False
    nulls_first: Optional[bool] = None  # None: Flink's default, nulls are the smallest values

    @property
    def nulls_low(self) -> bool:
        """Whether nulls sort as the smallest value (before everything ascending, after everything descending)."""
        if self.nulls_first is None:
            return True
        return self.nulls_first != self.descending


@dataclass
class TopN:
    """A Top-N query split into its parts: the inner query, the ranking, and the outer query around it."""

    function: str  # ROW_NUMBER | RANK | DENSE_RANK
    partition: list[str]
    order: list[OrderKey]
    alias: str
    limit: int
    rank_selected: bool  # the outer query outputs the rank column
    inner_text: str  # the inner query without the OVER column, with hidden partition/order columns
    inner_line: int
    outer_before: str  # outer text before the parenthesised inner query
    outer_after: str  # outer text after it (alias, WHERE ...)
    outer_star: bool  # the outer SELECT list is '*'
    line: int
    partition_names: list[Optional[str]] = field(default_factory=list)  # plain column names of the partition keys
    start_line: int = 1  # the line the whole query starts on

    def outer_text(self, view: str, with_rowkind: bool) -> str:
        before = self.outer_before
        if with_rowkind and not self.outer_star:
            before = _insert_before_outer_from(before, f", {ROWKIND_COLUMN} ")
        return before + view + self.outer_after


def find_top_n(text: str, line: int) -> Optional[TopN]:
    """The Top-N form in ``text`` if its outermost query is one; None when no ranking function is used.

    A ranking function elsewhere than the form above is left for the translator, which refuses it.
    """
    tokens = tokenize(text, line)
    over = [i for i, t in enumerate(tokens) if t.is_word("OVER") and _function_before(tokens, i) in RANK_FUNCTIONS]
    if not over:
        return None
    sig = [(i, t) for i, t in enumerate(tokens) if not t.trivia]
    depth_of = _depths(tokens)
    outer = [(i, t) for i, t in sig if depth_of[i] == 0]
    first_over = tokens[over[0]]
    construct = f"Top-N ({_function_before(tokens, over[0])}() OVER)"

    def refuse(message: str, at: Token = first_over) -> SqlError:
        return SqlError(f"Top-N: {message}", line=at.line, construct=construct, hint=TOP_N_FORM)

    if not outer or not outer[0][1].is_word("SELECT"):
        raise refuse("a ranking function must be in the subquery of a Top-N query")
    from_at = next((k for k, (_, t) in enumerate(outer) if t.is_word("FROM")), None)
    if from_at is None or from_at + 1 >= len(outer) or not outer[from_at + 1][1].is_symbol("("):
        raise refuse("a ranking function is supported only in Top-N form: SELECT ... FROM (subquery with the ranking) WHERE rank <= N")
    open_index = outer[from_at + 1][0]
    close_index = matching_paren(tokens, open_index)
    if not all(open_index < i < close_index for i in over):
        raise refuse("a ranking function is supported only in the subquery right after the outer FROM")
    if len(over) > 1:
        raise refuse("only one ranking function per Top-N query is supported", tokens[over[1]])
    after = [(i, t) for i, t in outer if i > close_index]
    where_at = next((k for k, (_, t) in enumerate(after) if t.is_word("WHERE")), None)
    if any(t.is_word("JOIN", ",") or t.is_symbol(",") for _, t in after[:where_at]):
        raise refuse("a Top-N subquery cannot be joined in the same FROM; put the Top-N in a view of its own")
    if where_at is None:
        raise refuse("a ranking without a condition on the rank (WHERE rn <= N) is an OVER aggregation, which Spark cannot run on streams")
    outer_items = [t for i, t in outer if outer[0][0] < i < outer[from_at][0]]
    plain_star = len(outer_items) == 1 and outer_items[0].is_symbol("*")
    # ``* EXCEPT (rn)``: every column but the rank (sort_limit_as_top_n writes it; Flink SQL has no EXCEPT list)
    star_except = len(outer_items) > 1 and outer_items[0].is_symbol("*") and outer_items[1].is_word("EXCEPT")
    outer_star = plain_star or star_except

    # --- the inner query ----------------------------------------------------------------------
    inner_tokens = tokens[open_index + 1:close_index]
    inner_depth = _depths(inner_tokens)
    inner_outer = [(k, t) for k, t in enumerate(inner_tokens) if not t.trivia and inner_depth[k] == 0]
    if not inner_outer or not inner_outer[0][1].is_word("SELECT"):
        raise refuse("the Top-N subquery must be a SELECT")
    inner_from = next((k for k, t in inner_outer if t.is_word("FROM")), None)
    if inner_from is None:
        raise refuse("the Top-N subquery has no FROM")
    select_start = inner_outer[0][0] + 1
    items = _split_items(inner_tokens, select_start, inner_from)
    over_local = over[0] - (open_index + 1)
    rank_item = next((k for k, (a, b) in enumerate(items) if a <= over_local < b), None)
    if rank_item is None:
        raise refuse("the ranking function must be a column of the subquery's SELECT list")
    a, b = items[rank_item]
    item = significant(inner_tokens[a:b])
    function = item[0].upper if item else ""
    if len(item) < 4 or function not in RANK_FUNCTIONS or not item[1].is_symbol("(") or not item[2].is_symbol(")") or not item[3].is_word("OVER"):
        raise refuse("the ranking column must be FUNCTION() OVER (PARTITION BY ... ORDER BY ...) AS name")
    spec_open = inner_tokens.index(item[4]) if len(item) > 4 and item[4].is_symbol("(") else None
    if spec_open is None:
        raise refuse("OVER needs a window specification in parentheses: OVER (PARTITION BY k ORDER BY x)")
    spec_close = matching_paren(inner_tokens, spec_open)
    rest = significant(inner_tokens[spec_close + 1:b])
    if len(rest) == 2 and rest[0].is_word("AS") and rest[1].kind in (WORD, QUOTED):
        alias = rest[1].identifier
    elif len(rest) == 1 and rest[0].kind in (WORD, QUOTED):
        alias = rest[0].identifier
    else:
        raise refuse("the ranking column needs a name: ROW_NUMBER() OVER (...) AS rn")
    partition, order = _window_spec(inner_tokens[spec_open + 1:spec_close], refuse)
    if not order:
        raise refuse(f"{function}() needs ORDER BY in its OVER clause")

    # --- the rank condition -------------------------------------------------------------------
    where_tokens = [t for _, t in after[where_at + 1:]]
    end = next((k for k, t in enumerate(where_tokens) if t.upper in _CLAUSES), len(where_tokens))
    if end < len(where_tokens):
        raise refuse(f"{where_tokens[end].text} after a Top-N query is not supported; put the Top-N in a view and aggregate over it",
                     where_tokens[end])
    conjuncts = split_conjuncts(where_tokens)
    limit = None
    for conjunct in conjuncts:
        if any(t.kind in (WORD, QUOTED) and t.identifier == alias for t in conjunct):
            if limit is not None:
                raise refuse(f"only one condition on '{alias}' is supported", conjunct[0])
            limit = _rank_limit(conjunct, alias, refuse)
    if limit is None:
        raise refuse(f"the outer WHERE must bound the rank: WHERE {alias} <= N")
    rank_selected = plain_star or (not star_except and any(t.kind in (WORD, QUOTED) and t.identifier == alias for t in outer_items))

    # Replace the ranking column with the hidden partition and order columns.
    hidden = [f"{p} AS {PARTITION_PREFIX}{k}" for k, p in enumerate(partition)]
    hidden += [f"{o.expression} AS {ORDER_PREFIX}{k}" for k, o in enumerate(order)]
    prefix_end = a
    if rank_item > 0:
        prefix_end = items[rank_item - 1][1]  # drop the comma before the ranking column
        replacement = ", " + ", ".join(hidden) + " "
    else:
        replacement = " " + ", ".join(hidden) + ("," if len(items) > 1 else "")
        if len(items) > 1:
            b = items[1][0]
    inner_text = render(inner_tokens[:prefix_end]) + _keep_newlines(replacement, render(inner_tokens[prefix_end:b])) + render(inner_tokens[b:])
    inner_line = tokens[open_index].line
    outer_before = text[: tokens[open_index].start]
    inner_original = text[tokens[open_index].start: tokens[close_index].end]
    outer_after = "\n" * inner_original.count("\n") + text[tokens[close_index].end:]
    names = [_plain_name(p) for p in partition]
    return TopN(function, partition, order, alias, limit, rank_selected, inner_text, inner_line, outer_before, outer_after,
                outer_star, first_over.line, names, line)


def _function_before(tokens: list[Token], over: int) -> Optional[str]:
    j = over - 1
    while j >= 0 and tokens[j].trivia:
        j -= 1
    if j < 1 or not tokens[j].is_symbol(")"):
        return None
    j -= 1
    while j >= 0 and tokens[j].trivia:
        j -= 1
    if j < 1 or not tokens[j].is_symbol("("):
        return None
    j -= 1
    while j >= 0 and tokens[j].trivia:
        j -= 1
    return tokens[j].upper if j >= 0 and tokens[j].kind == WORD else None


def _depths(tokens: list[Token]) -> list[int]:
    depths, depth = [], 0
    for t in tokens:
        if t.kind == SYMBOL and t.text in (")", "]"):
            depth -= 1
        depths.append(depth)
        if t.kind == SYMBOL and t.text in ("(", "["):
            depth += 1
    return depths


def _split_items(tokens: list[Token], start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) ranges of the comma-separated items of a SELECT list (indexes into tokens)."""
    depth = 0
    items, begin = [], start
    for k in range(start, end):
        t = tokens[k]
        if t.kind == SYMBOL and t.text in ("(", "["):
            depth += 1
        elif t.kind == SYMBOL and t.text in (")", "]"):
            depth -= 1
        elif depth == 0 and t.is_symbol(","):
            items.append((begin, k))
            begin = k + 1
    items.append((begin, end))
    return items


def _window_spec(tokens: list[Token], refuse: Any) -> tuple[list[str], list[OrderKey]]:
    sig = significant(tokens)
    partition: list[str] = []
    order: list[OrderKey] = []
    k = 0
    if k + 1 < len(sig) and sig[k].is_word("PARTITION") and sig[k + 1].is_word("BY"):
        k += 2
        end = next((j for j in range(k, len(sig)) if sig[j].is_word("ORDER") and j + 1 < len(sig) and sig[j + 1].is_word("BY")), len(sig))
        partition = [" ".join(t.text for t in part) for part in split_top_level(sig[k:end]) if part]
        k = end
    frame = next((j for j in range(k, len(sig)) if sig[j].is_word("ROWS", "RANGE")), None)
    if frame is not None:
        raise refuse(f"'{sig[frame].text}' in the OVER clause of a Top-N is not supported (frames do not apply to ranking)", sig[frame])
    if k + 1 < len(sig) and sig[k].is_word("ORDER") and sig[k + 1].is_word("BY"):
        for part in split_top_level(sig[k + 2:]):
            if not part:
                continue
            descending, nulls_first = False, None
            if len(part) >= 2 and part[-2].is_word("NULLS") and part[-1].is_word("FIRST", "LAST"):
                nulls_first = part[-1].is_word("FIRST")
                part = part[:-2]
            if part and part[-1].is_word("ASC", "DESC"):
                descending = part[-1].is_word("DESC")
                part = part[:-1]
            if not part:
                raise refuse("an ORDER BY item has no expression")
            order.append(OrderKey(" ".join(t.text for t in part), descending, nulls_first))
        k = len(sig)
    if k < len(sig):
        raise refuse(f"'{sig[k].text}' in the OVER clause of a Top-N is not supported (ROWS/RANGE frames do not apply to ranking)", sig[k])
    return partition, order


def _rank_limit(conjunct: list[Token], alias: str, refuse: Any) -> int:
    """N of ``rn <= N``, ``rn < N``, ``rn = 1``, ``N >= rn``, ``rn BETWEEN 1 AND N``."""
    def is_alias(t: Token) -> bool:
        return t.kind in (WORD, QUOTED) and t.identifier == alias

    def number(t: Token) -> Optional[int]:
        return int(t.text) if t.kind == NUMBER and t.text.isdigit() else None

    c = conjunct
    if len(c) == 3:
        left, right = c[0], c[2]
        op = c[1].text if c[1].kind == SYMBOL else ""
        if is_alias(right) and number(left) is not None:
            left, right, op = right, left, {"<=": ">=", ">=": "<=", "<": ">", ">": "<", "=": "="}.get(op, op)
        n = number(right)
        if is_alias(left) and n is not None and n >= 1:
            if op == "<=":
                return n
            if op == "<" and n > 1:
                return n - 1
            if op == "=" and n == 1:
                return 1
    if len(c) == 5 and is_alias(c[0]) and c[1].is_word("BETWEEN") and number(c[2]) == 1 and c[3].is_word("AND") and number(c[4]):
        return number(c[4])  # type: ignore[return-value]
    raise refuse(f"unsupported condition on the rank '{' '.join(t.text for t in c)}': only an upper bound from rank 1 is supported",
                 c[0])


def _insert_before_outer_from(text: str, addition: str) -> str:
    """``addition`` right after the last SELECT item (before any comment between it and the outer FROM)."""
    last = None
    for t, depth in with_depth(tokenize(text)):
        if depth == 0 and t.is_word("FROM"):
            at = last.end if last is not None else t.start
            return text[:at] + addition.rstrip() + text[at:]
        if not t.trivia:
            last = t
    return text


def _plain_name(expression: str) -> Optional[str]:
    parts = [p.strip().strip("`") for p in expression.split(".")]
    return parts[-1] if parts and all(parts) else None



def _keep_newlines(replacement: str, original: str) -> str:
    missing = original.count("\n") - replacement.count("\n")
    return replacement + "\n" * missing if missing > 0 else replacement


def ranking_upsert_key(text: str, line: int, columns: list[str]) -> Optional[list[str]]:
    """Flink's upsert key of a Top-N result: the partition keys, plus the rank when it is selected; None if not all are output."""
    top_n = find_top_n(text, line)
    if top_n is None or top_n.function != "ROW_NUMBER":
        return None
    if top_n.rank_selected:
        key = list(top_n.partition_names) + [top_n.alias]
    elif top_n.limit == 1:
        key = list(top_n.partition_names)
    else:
        return None
    if not key or any(k is None or k not in columns for k in key):
        return None
    return key  # type: ignore[return-value]


_NOT_A_SORT = ("GROUP", "HAVING", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "QUALIFY", "FETCH", "OFFSET")
_AGGREGATE_NAMES = ("COUNT", "SUM", "AVG", "MIN", "MAX", "LISTAGG", "COLLECT", "STDDEV", "STDDEV_POP", "STDDEV_SAMP",
                    "VARIANCE", "VAR_POP", "VAR_SAMP", "FIRST_VALUE", "LAST_VALUE", "BOOL_AND", "BOOL_OR", "ARRAY_AGG")


def sort_limit_as_top_n(text: str, line: int) -> Optional[str]:
    """A streaming ``SELECT ... FROM t [WHERE ...] ORDER BY keys LIMIT n`` as the Top-N Flink plans it (a sort-limit: a
    rank over the whole input, an updating result that keeps the first ``n`` rows by ``keys``); None for any other shape.

    Example: ``SELECT order_id FROM orders ORDER BY ts LIMIT 3`` becomes ``SELECT order_id FROM (SELECT *, ROW_NUMBER()
    OVER (ORDER BY ts) AS rn FROM orders) orders WHERE rn <= 3``. A FROM item is one table or subquery; the SELECT list
    holds no aggregate or OVER, and ORDER BY names no SELECT alias of an expression (the rank is computed below the
    SELECT list)."""
    tokens = tokenize(text, line)
    top, positions = top_level_clauses(tokens, ("FROM", "WHERE", "ORDER", "LIMIT", *_NOT_A_SORT))
    if not top or not top[0][1].is_word("SELECT"):
        return None
    if not {"FROM", "ORDER", "LIMIT"} <= positions.keys() or any(c in positions for c in _NOT_A_SORT):
        return None
    where = positions.get("WHERE")
    if not positions["FROM"] < positions["ORDER"] < positions["LIMIT"] or (where is not None and not positions["FROM"] < where < positions["ORDER"]):
        return None
    select = tokens[top[0][0] + 1:positions["FROM"]]
    select_sig = significant(select)
    if not select_sig or select_sig[0].is_word("DISTINCT", "ALL"):
        return None
    for k, t in enumerate(select_sig):
        if t.is_word("OVER") or (t.kind == WORD and t.upper in _AGGREGATE_NAMES and k + 1 < len(select_sig) and select_sig[k + 1].is_symbol("(")):
            return None
    star = [t.text for t in select_sig] == ["*"]
    from_tokens = tokens[positions["FROM"] + 1:where if where is not None else positions["ORDER"]]
    qualifier = from_item_qualifier(significant(from_tokens))
    if qualifier is None:
        return None
    by = next_significant(tokens, positions["ORDER"])
    if by is None or not tokens[by].is_word("BY"):
        return None
    order = tokens[by + 1:positions["LIMIT"]]
    aliases = {alias.lower() for expression, alias in (split_alias(part) for part in split_top_level(select))
               if alias and expression.lower() != alias.lower()}
    if any(t.kind in (WORD, QUOTED) and t.identifier.lower() in aliases for t in order):
        return None
    limit = significant(tokens[positions["LIMIT"] + 1:])
    if len(limit) != 1 or limit[0].kind != NUMBER or not limit[0].text.isdigit() or int(limit[0].text) < 1:
        return None
    # each piece ends its line: a piece may end in a -- comment
    inner = (f"SELECT *, ROW_NUMBER() OVER (ORDER BY {render(order).strip()}\n) AS {SORT_LIMIT_RANK} FROM {render(from_tokens).strip()}\n"
             + (f" WHERE {render(tokens[where + 1:positions['ORDER']]).strip()}\n" if where is not None else ""))
    items = f"* EXCEPT ({SORT_LIMIT_RANK})" if star else render(select).strip()
    return f"SELECT {items}\nFROM ({inner}) {qualifier} WHERE {SORT_LIMIT_RANK} <= {int(limit[0].text)}"


# --- the operator ---------------------------------------------------------------------------------

@dataclass
class RankPlan:
    """How a Top-N runs and what its output is."""

    kind: str  # "top-n" | "first-row" | "last-row" | "window" | "window-rows"
    updating: bool
    output: StructType  # visible columns, rank column, row kind
    retracting: bool = False  # the input is a changelog: every row is kept, so a retracted top row can be replaced


def _time_attribute(df: DataFrame, column: str) -> bool:
    f = df.schema[column]
    return isinstance(f.dataType, TimestampType) and "spark.watermarkDelayMs" in (f.metadata or {})


def plan_ranking(df: DataFrame, top_n: TopN, window_input: bool, updating_input: bool = False) -> RankPlan:
    """Choose Flink's operator for a Top-N over ``df`` (the inner query with its hidden columns, and the row kind of an
    updating input)."""
    visible = [passing(f) for f in df.schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
    output = StructType(visible + [typed_field(top_n.alias, LongType(), "BIGINT NOT NULL"), StructField(ROWKIND_COLUMN, StringType(), True)])
    names = [n for n in (top_n.partition_names or [])]
    if updating_input:
        if "window_start" in names and "window_end" in names:
            raise SqlError("window Top-N over an updating input is not supported (Flink's window Top-N reads append-only rows)",
                           line=top_n.line, construct="window Top-N", hint="a window aggregation (GROUP BY window_start, window_end) "
                           "or a window TVF as the Top-N's input")
        return RankPlan("top-n", True, output, retracting=True)
    if "window_start" in names and "window_end" in names:
        # over a window aggregation a window's rows arrive together; over the TVF's rows they are kept until it ends
        return RankPlan("window" if window_input else "window-rows", False, output)
    # (a sort-limit is not deduplication in Flink: ORDER BY ts DESC LIMIT 1 keeps the first of equal rows, not the last)
    if top_n.function == "ROW_NUMBER" and top_n.limit == 1 and len(top_n.order) == 1 and not top_n.rank_selected \
            and top_n.alias != SORT_LIMIT_RANK and _time_attribute(df, f"{ORDER_PREFIX}0"):
        return RankPlan("last-row" if top_n.order[0].descending else "first-row", top_n.order[0].descending, output)
    return RankPlan("top-n", True, output)


class _Desc:
    """An order value sorting in reverse."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    def __lt__(self, other: "_Desc") -> bool:
        return other.v < self.v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.v == other.v


class RankFunction(Adapter):
    """Per partition key: the current top rows (or the kept row of a deduplication), and the changes to emit.

    A key's rows of a micro-batch are ranked together with its kept rows, and the changes of its top rows are
    emitted once per key and batch."""

    tuple_values = True

    def __init__(self, plan: RankPlan, top_n: TopN, visible: int, window_end_at: int, ttl_ms: Optional[int]) -> None:
        self.kind, self.function, self.limit = plan.kind, top_n.function, top_n.limit
        self.retracting = plan.retracting
        self.order = [(o.descending, o.nulls_low) for o in top_n.order]
        # a row's value tuple: the visible columns, the order values, the arrival (input partition), the row kind
        self.visible = visible
        self.order_at = [visible + k for k in range(len(top_n.order))]
        self.arrival_at = visible + len(top_n.order)
        self.kind_at = self.arrival_at + 1
        self.rank_selected = top_n.rank_selected
        self.window_end_at = window_end_at
        self.key_ttl_ms = ttl_ms
        self.timeless = not ttl_ms and plan.kind != "window-rows"  # a window Top-N's timer fires at the window's end

    def open(self, runner: Any, runtime_context: Any) -> None:
        from kindling.datastream.state import ValueStateDescriptor, state_handle
        from kindling.datastream.timers import TimerService

        self._runner = runner
        self._state = state_handle(ValueStateDescriptor("top"), lambda: runner.state)
        self._timers = TimerService(runner)
        self._rows: list[tuple] = []

    def _row(self, values: tuple, rank: int, kind: str) -> tuple:
        return values + (rank, kind)

    def _sort_key(self, values: tuple, seq: int) -> tuple:
        key = []
        for (descending, nulls_low), value in zip(self.order, values):
            # (null rank, value): nulls as the smallest or largest value of the column
            part = (0 if nulls_low else 2,) if value is None else (1, value)
            key.append(_Desc(part) if descending else part)
        if self.kind == "last-row":
            key.append(-seq)  # equal times: the later row is the last one
        else:
            key.append(seq)
        return tuple(key)

    def _ranked(self, entries: list) -> list[tuple[int, int, tuple]]:
        """(rank, seq, row) of the entries within the limit, entries being (sort key, seq, order values, row)."""
        entries.sort(key=lambda e: e[0])
        out = []
        previous = None
        rank = dense = 0
        for position, (_key, seq, order_values, row) in enumerate(entries, 1):
            if self.function == "ROW_NUMBER":
                rank = position
            elif order_values != previous:
                rank, dense = position, dense + 1
            value = dense if self.function == "DENSE_RANK" else rank
            if value > self.limit:
                break
            previous = order_values
            out.append((value, seq, row))
        return out

    def element(self, index: int, value: Any) -> list:
        self._rows.append(value)
        return []

    def key_done(self) -> list:
        rows, self._rows = self._rows, []
        arrival_at, visible, order_at = self.arrival_at, self.visible, self.order_at
        if self.retracting:
            return list(self._retracting(sorted(rows, key=lambda r: r[arrival_at])))
        # sorted() is stable: rows of one input partition keep their order
        batch = sorted(((r[arrival_at], r[:visible], tuple(r[k] for k in order_at)) for r in rows), key=lambda e: e[0])
        if self.kind == "window":
            entries = [(self._sort_key(o, n), n, o, v) for n, (_, v, o) in enumerate(batch)]
            return [self._row(row, rank, "+I") for rank, _, row in self._ranked(entries)]
        stored = self._state.value()
        next_seq, top = stored if stored is not None else (0, [])
        if self.kind == "window-rows":
            if stored is None:
                self._timers.register_event_time_timer(self._window_end_ms() - 1)
            top = top + [(next_seq + n, o, v) for n, (_, v, o) in enumerate(batch)]
            self._state.update((next_seq + len(batch), top))
            return []
        if self.kind == "first-row":
            if top:
                return []
            _, row, order_values = min(batch, key=lambda e: self._sort_key(e[2], 0))
            self._state.update((1, [(0, order_values, row)]))
            return [self._row(row, 1, "+I")]
        entries = [(self._sort_key(o, s), s, o, v) for s, o, v in top]
        for _, row, order_values in batch:
            entries.append((self._sort_key(order_values, next_seq), next_seq, order_values, row))
            next_seq += 1
        old = self._positions(self._ranked([(self._sort_key(o, s), s, o, v) for s, o, v in top]))
        ranked = self._ranked(entries)
        by_seq = {s: o for _, s, o, _ in entries}
        self._state.update((next_seq, [(s, by_seq[s], v) for _, s, v in ranked]))
        return list(self._changes(old, self._positions(ranked)))

    def _positions(self, ranked: list[tuple[int, int, tuple]]) -> dict[tuple[int, int], tuple[int, tuple]]:
        return {(s, r if self.rank_selected else 0): (r, v) for r, s, v in ranked}

    def _retracting(self, rows: list[tuple]) -> Iterator[tuple]:
        """Flink's retractable Top-N: every row of the key is kept, a retraction removes an equal row, and the top rows
        before and after the micro-batch are compared."""
        stored = self._state.value()
        next_seq, kept = stored if stored is not None else (0, [])
        old = self._positions(self._ranked([(self._sort_key(o, s), s, o, v) for s, o, v in kept]))
        alive = {s: (o, v) for s, o, v in kept}  # seq -> (order values, row)
        seqs: dict[tuple, list[int]] = {}  # (order values, row) -> the seqs of its equal copies, oldest first
        for s, o, v in kept:
            seqs.setdefault((o, v), []).append(s)
        for r in rows:
            entry = (tuple(r[k] for k in self.order_at), r[:self.visible])
            if r[self.kind_at] in ("-U", "-D"):
                copies = seqs.get(entry)
                if copies:  # a retraction of a row never seen (expired state) is ignored, as in Flink
                    del alive[copies.pop(0)]
            else:
                alive[next_seq] = entry
                seqs.setdefault(entry, []).append(next_seq)
                next_seq += 1
        if alive:
            self._state.update((next_seq, [(s, o, v) for s, (o, v) in alive.items()]))
        else:
            self._state.clear()
        yield from self._changes(old, self._positions(self._ranked([(self._sort_key(o, s), s, o, v) for s, (o, v) in alive.items()])))

    def _changes(self, old: dict, new: dict) -> Iterator[tuple]:
        """The changelog from the top rows ``old`` to ``new`` (both by (seq, rank))."""
        removed = [k for k in old if k not in new]
        added = [k for k in new if k not in old]
        # A position that changes hands is an update (-U/+U) of its key; a row that only leaves or enters is -D/+I.
        replaced = self.function == "ROW_NUMBER" and (self.rank_selected or self.limit == 1)
        for k in removed:
            rank, row = old[k]
            yield self._row(row, rank, "-U" if replaced and any(new_rank == rank for new_rank, _ in (new[a] for a in added)) else "-D")
        for k in added:
            rank, row = new[k]
            yield self._row(row, rank, "+U" if replaced and any(old_rank == rank for old_rank, _ in (old[r] for r in removed)) else "+I")

    def _window_end_ms(self) -> int:
        key = self._runner.current_key
        end = key[self.window_end_at] if isinstance(key, tuple) else key
        return int(end.timestamp() * 1000) if hasattr(end, "timestamp") else int(end)

    def timer(self, timestamp: int) -> list:
        """Window Top-N over the TVF's rows: the watermark passed the window's end, emit its top rows once."""
        stored = self._state.value()
        self._state.clear()
        if stored is None:
            return []
        _, rows = stored
        return [self._row(row, rank, "+I") for rank, _, row in self._ranked([(self._sort_key(o, s), s, o, v) for s, o, v in rows])]


def rank_frame(env: "StreamEnvironment", df: DataFrame, top_n: TopN, plan: RankPlan, ttl_ms: Optional[int] = None) -> DataFrame:
    """Rank ``df`` (the inner query with hidden partition/order columns) per partition key; the changelog of the top rows.

    ``ttl_ms`` (``table.exec.state.ttl``) expires a partition key's rows after that long without a change; a window
    Top-N's state ends with its window instead, as in Flink.
    """
    from kindling.sql.keyed import keyed_frame, without_window

    visible = [f.name for f in df.schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
    partition = [f"{PARTITION_PREFIX}{k}" for k in range(len(top_n.partition))]
    order = [f"{ORDER_PREFIX}{k}" for k in range(len(top_n.order))]
    keyed = df
    if not partition:  # a global Top-N: one key for all rows
        keyed = keyed.withColumn(PARTITION_PREFIX, F.lit(0))
        partition = [PARTITION_PREFIX]
    # A key's rows of one micro-batch reach the function grouped by input partition in the order each partition read
    # them; sorting (stably) by input partition orders them as they came, as Flink's arrival order for ties.
    keyed = keyed.withColumn(ARRIVAL, F.spark_partition_id())
    values = visible + order + [ARRIVAL]
    if plan.retracting:
        if ROWKIND_COLUMN not in keyed.columns:
            keyed = keyed.withColumn(ROWKIND_COLUMN, F.lit("+I"))
        values.append(ROWKIND_COLUMN)
    window_end_at = top_n.partition_names.index("window_end") if plan.kind == "window-rows" else 0
    window = plan.kind in ("window", "window-rows")
    function = RankFunction(plan, top_n, len(visible), window_end_at, None if window else ttl_ms)
    rowtime = None
    if plan.kind == "window-rows":  # its timers fire on the watermark at the window's end
        rowtime = F.col(_quote(partition[window_end_at])).cast(TimestampType())
    return keyed_frame(env, keyed, partition, values, function, plan.output, "Rank", event_time=plan.kind == "window-rows",
                       rowtime=rowtime, key_group_keys=without_window(partition, top_n.partition_names) if window else None)


_ORDERABLE = (ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType, DecimalType)
BEST = INTERNAL_PREFIX + "rank_best"
BETTER = INTERNAL_PREFIX + "rank_better"


def top_one_aggregate(df: DataFrame, top_n: TopN, plan: RankPlan) -> Optional[DataFrame]:
    """A Top-1 over an append-only input (``ROW_NUMBER() ... <= 1``, last-row deduplication) as Spark's own aggregation:
    GROUP BY the partition keys keeping the best row (``max_by``), an upsert result by those keys, in the JVM.

    Ties go to the earlier micro-batch for a Top-1 and to the later one for a last-row deduplication, as Flink's
    arrival order does; None when an order key is not a number, time or boolean (the keyed ranking operator ranks it).
    """
    if plan.kind not in ("top-n", "last-row") or plan.retracting or top_n.function != "ROW_NUMBER" or top_n.limit != 1 \
            or not top_n.partition:
        return None
    visible = [f.name for f in df.schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
    better: list[Column] = []  # greater is better, compared field by field
    for k, key in enumerate(top_n.order):
        column = F.col(_quote(f"{ORDER_PREFIX}{k}"))
        data_type = df.schema[f"{ORDER_PREFIX}{k}"].dataType
        if isinstance(data_type, _ORDERABLE):
            value = column
        elif isinstance(data_type, (TimestampType, TimestampNTZType)):
            value = F.unix_micros(column.cast(TimestampType()))
        elif isinstance(data_type, DateType):
            value = F.unix_date(column)
        elif isinstance(data_type, BooleanType):
            value = column.cast(IntegerType())
        else:
            return None
        nulls_first = key.nulls_low != key.descending
        better.append(F.when(column.isNull(), F.lit(int(nulls_first))).otherwise(F.lit(int(not nulls_first))))
        better.append(F.coalesce(value if key.descending else -value, F.lit(0).cast(_value_type(data_type))))
    arrival = F.unix_micros(F.current_timestamp())  # the micro-batch's time, the same for all its rows
    better.append(arrival if plan.kind == "last-row" else -arrival)
    partition = [f"{PARTITION_PREFIX}{k}" for k in range(len(top_n.partition))]
    rows = df.select(*[F.col(_quote(c)).alias(c, metadata={}) for c in partition],
                     F.struct(*[F.col(_quote(c)).alias(c, metadata={}) for c in visible]).alias(BEST),
                     F.struct(*[b.alias(f"b{n}") for n, b in enumerate(better)]).alias(BETTER))
    best = rows.groupBy(*[_quote(c) for c in partition]).agg(F.max_by(BEST, BETTER).alias(BEST))
    # the rank column is 1 for every row kept (the outer query's rank condition reads it)
    return best.select(*[F.col(f"{BEST}.{_quote(c)}").alias(c) for c in visible], F.lit(1).cast(LongType()).alias(top_n.alias))


def _value_type(data_type: Any) -> Any:
    """The type a directed order value has: the column's own for numbers, BIGINT for times, dates and booleans."""
    return data_type if isinstance(data_type, _ORDERABLE) else LongType()


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"

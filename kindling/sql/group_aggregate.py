"""Flink's unbounded GROUP BY over an updating input: a retracting aggregation on the keyed operator.

Spark's streaming aggregations read only appends: an aggregation over another unbounded GROUP BY
(Nexmark q4: the average of each auction's running maximum) or over an updating Top-N is refused,
and turning the check off would count an auction's old maximum along with its new one. Flink
consumes the inner changelog instead: ``+I``/``+U`` rows are accumulated, ``-U``/``-D`` rows are
retracted. That is what this operator does. A query of the form::

    SELECT k.., AGG(x).. FROM <updating subquery or view> [alias] [WHERE ..] GROUP BY k.. [HAVING ..]

is split in three: Spark projects each changelog row to its grouping keys and aggregate arguments
(and applies WHERE), the keyed operator keeps per key the row count and one accumulator per call
(MIN/MAX and DISTINCT keep value counts, so a retraction can remove a value), and Spark evaluates
the SELECT list and HAVING over the operator's results. The operator is a keyed function of
:mod:`kindling.sql.keyed` (state by key group, ``table.exec.state.ttl`` as the key TTL). As Flink's ``GroupAggFunction`` does, a
key's first result is ``+I``, a changed result is ``-U`` (old) and ``+U`` (new), a key whose rows were
all retracted is ``-D``, and a retraction for a key with no state is ignored. The inner unbounded
GROUP BY is planned the same way (over its append-only input), so its changelog carries the
``-U`` rows the outer aggregation needs. Results are emitted once per key per micro-batch (Flink's
mini-batch), which leaves the same final rows as Flink's per-record updates.

Python aggregate functions (``udaf``, :mod:`kindling.sql.aggregate_functions`) are accumulators of the same
operator, which is why any GROUP BY calling one runs here; a window aggregation calling one keys the rows by
their window as well and emits each window's result once, on an event-time timer at its end (late rows dropped,
as by Flink's window operator). In batch mode :func:`batch_aggregate_frame` runs pandas ones per Spark group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DataType,
    StringType,
    StructField,
    StructType,
)

from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN
from kindling.datastream.operator import Adapter
from kindling.sql.accumulators import AggregateCall, empty, finisher, result_type, update
from kindling.sql.aggregate_functions import FLAT_AGGREGATE_RESULT
from kindling.sql.column_types import aggregate_type, carried_type, passing, typed_field
from kindling.sql.errors import SqlError
from kindling.sql.tokens import (
    QUOTED,
    WORD,
    Token,
    function_calls,
    matching_paren,
    next_significant,
    previous_significant,
    render,
    significant,
    split_alias,
    split_top_level,
    tokenize,
    top_level_clauses,
    with_depth,
)

AGGREGATE_FUNCTIONS = ("COUNT", "SUM", "AVG", "MIN", "MAX")
# Aggregates Flink or Spark know that the retracting aggregation does not implement.
OTHER_AGGREGATES = ("FIRST_VALUE", "LAST_VALUE", "LISTAGG", "COLLECT", "STDDEV", "STDDEV_POP", "STDDEV_SAMP", "VARIANCE", "VAR_POP",
                    "VAR_SAMP", "ARRAY_AGG", "JSON_ARRAYAGG", "JSON_OBJECTAGG", "BIT_AND", "BIT_OR", "BIT_XOR", "BOOL_AND",
                    "BOOL_OR", "EVERY", "ANY_VALUE", "SINGLE_VALUE", "APPROX_COUNT_DISTINCT", "PERCENTILE", "MEDIAN", "MODE")
SUPPORTED_FORM = ("SELECT k, COUNT/SUM/AVG/MIN/MAX([DISTINCT] x) [FILTER (WHERE ..)] FROM <updating subquery or view> "
                  "[WHERE ..] GROUP BY k [HAVING ..]")
KEY_PREFIX = INTERNAL_PREFIX + "agg_k"
ARGUMENT_PREFIX = INTERNAL_PREFIX + "agg_a"
RESULT_PREFIX = INTERNAL_PREFIX + "agg_r"
ARRIVAL = INTERNAL_PREFIX + "agg_arrival"
WINDOW_END_MS = INTERNAL_PREFIX + "agg_window_end_ms"
_WINDOW_WORDS = ("TUMBLE", "HOP", "SESSION", "CUMULATE", "WINDOW_START", "WINDOW_END")
_GROUPING_ANALYTICS = ("GROUPING", "ROLLUP", "CUBE")  # GROUPING SETS (...), ROLLUP (...), CUBE (...)
_CLAUSES = ("WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "QUALIFY")
_RETRACTIONS = ("-U", "-D")

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment


@dataclass
class GroupAggregation:
    """A GROUP BY query split around its aggregation: source, keys, calls, and the SELECT list and HAVING over them."""

    from_text: str  # the FROM clause as written
    source_query: Optional[str]  # a single FROM item's parenthesised subquery
    source_name: Optional[str]  # a single FROM item's table or view name
    source_line: int
    alias: Optional[str]  # a single FROM item's alias
    where: Optional[str]
    keys: list[str]  # grouping expressions
    key_names: list[str]  # the operator's column for each key: the column's own name for a plain column
    calls: list[AggregateCall]
    select: list[tuple[str, Optional[str]]]  # SELECT items over the operator's columns, with their aliases
    having: Optional[str]
    line: int
    unsupported: list[tuple[str, int]]  # (function, line) of aggregate calls this operator cannot retract

    @property
    def user_calls(self) -> list[AggregateCall]:
        """The calls of Python aggregate functions (udaf): only kindling's keyed aggregation runs them."""
        return [c for c in self.calls if c.user is not None]

    def check_python_aggregates(self, mode: str) -> None:
        """Refuse, with Flink's messages, the Python aggregate functions Flink does not run in ``mode``.

        "unbounded" (a streaming GROUP BY), "updating" (one over an updating input: only functions with retract) and
        "window" (a window TVF aggregation) run general ones; "group window" (a legacy GROUP BY TUMBLE/HOP) general or
        pandas ones; "batch" pandas ones. Never pandas and general ones together, nor pandas ones with a built-in
        aggregate."""
        users = self.user_calls
        if not users:
            return
        tables = [c for c in users if c.user.table_aggregate]
        if tables:
            self._check_table_aggregate(tables[0], mode)
        pandas = [c for c in users if c.user.func_type == "pandas"]
        general = [c for c in users if c.user.func_type == "general"]

        def refuse(call: AggregateCall, message: str, hint: str) -> SqlError:
            kind = "pandas aggregate function" if call.user.func_type == "pandas" else "Python aggregate function"
            return SqlError(f"{call.function}: {message.rstrip('.')}", line=self.line, construct=f"{kind} {call.function}",
                            hint=hint)

        if mode == "updating" and general:
            lacking = [c for c in general if not c.user.retracts]
            if lacking:
                raise refuse(lacking[0], f"{lacking[0].user.name} does not implement retract(accumulator, *args), "
                             "which an aggregation over an updating input (an unbounded GROUP BY, a Top-N, an outer join) "
                             "needs.", "implement retract in the AggregateFunction")
        if mode == "batch" and general:
            raise refuse(general[0], "non-Pandas UDAFs are not supported in batch mode currently.",
                         "a general udaf runs in streaming mode; in batch mode, udaf(f, func_type='pandas')")
        if mode in ("unbounded", "updating", "window") and pandas:
            raise refuse(pandas[0], "Pandas UDAFs are not supported in streaming mode currently.",
                         "a pandas UDAF runs in a group window (Table API window(Tumble...) or GROUP BY TUMBLE(...)) or in "
                         "batch mode")
        if pandas and general:
            raise refuse(pandas[0], "Pandas UDAFs and General Python UDAFs are not supported in used together currently.",
                         "one kind of Python aggregate function per query")
        if mode in ("batch", "group window") and pandas and len(users) < len(self.calls):
            raise refuse(pandas[0], "Python UDAF and Java/Scala UDAF cannot be used together.",
                         "the built-in aggregates in a query of their own, joined with this one")

    def _check_table_aggregate(self, call: AggregateCall, mode: str) -> None:
        """A table aggregate function runs alone in a flat_aggregate of the Table API, over a streaming GROUP BY (or none)."""
        name = call.user.name
        flat = [alias for _, alias in self.select].count(FLAT_AGGREGATE_RESULT) == 1 and len(self.calls) == 1 \
            and len(self.select) == len(self.keys) + 1 and self.having is None
        if not flat:
            raise SqlError(f"{call.function}: the table aggregate function {name} is called in SQL; Flink's SQL has no "
                           "table aggregate functions", line=self.line, construct=f"table aggregate function {call.function}",
                           hint="call it in the Table API: table.group_by(col('k')).flat_aggregate(f(col('v'))).select(col('*'))")
        if mode not in ("unbounded", "updating"):
            where = "in batch mode" if mode == "batch" else "over a window"
            raise SqlError(f"{call.function}: Python table aggregate functions are not supported {where}", line=self.line,
                           construct=f"table aggregate function {call.function}",
                           hint="flat_aggregate over a streaming table, grouped by columns (group_by) or not at all")

    def check_supported(self) -> None:
        """Refuse aggregate functions the retracting aggregation does not implement, naming the function and line."""
        if self.unsupported:
            function, line = self.unsupported[0]
            raise SqlError(f"{function} over an updating input (an unbounded GROUP BY, DISTINCT or Top-N) is not supported; "
                           f"retracting aggregations are {', '.join(AGGREGATE_FUNCTIONS)}", line=line, construct=function,
                           hint=SUPPORTED_FORM)

    def upsert_key(self, names: list[str]) -> Optional[list[str]]:
        """The output columns (named ``names``) holding every grouping key; None when a key is not output as it is."""
        if any(c.user is not None and c.user.table_aggregate for c in self.calls):
            return None  # a flat_aggregate's rows: none, one or several per key
        output = {expression.strip("`"): name for (expression, _), name in zip(self.select, names)}
        if not self.key_names or any(k not in output for k in self.key_names):
            return None
        return [output[k] for k in self.key_names]

    def projection_text(self, changelog_view: Optional[str]) -> str:
        """SQL projecting each input row to keys and aggregate arguments: the rows of ``changelog_view`` in place of the
        single FROM item, or (None) the append-only rows of the FROM clause as written, each an insertion."""
        items = [f"{key} AS `{name}`" for key, name in zip(self.keys, self.key_names)]
        items += [f"{call.argument if call.argument is not None else '1'} AS `{ARGUMENT_PREFIX}{n}`" for n, call in enumerate(self.calls)]
        if changelog_view is None:
            items.append(f"'+I' AS `{ROWKIND_COLUMN}`")
            source = self.from_text
        else:
            items.append(f"`{ROWKIND_COLUMN}`")
            source = changelog_view + (f" AS {self.alias}" if self.alias else f" AS {self.source_name}" if self.source_name else "")
        return f"SELECT {', '.join(items)} FROM {source}" + (f" WHERE {self.where}" if self.where else "")

    def result_text(self, view: str, names: list[str], row_kind: bool = True) -> str:
        """Spark SQL evaluating the SELECT list (named ``names``) and HAVING over the operator's results (with
        ``row_kind``, a changelog's: each result keeps its row kind)."""
        items = [f"{expression} AS `{name.replace('`', '``')}`" for (expression, _), name in zip(self.select, names)]
        if row_kind:
            items.append(f"`{ROWKIND_COLUMN}`")
        text = f"SELECT {', '.join(items)} FROM {view}" + (f" AS {self.alias}" if self.alias else "")
        return text + (f" WHERE {self.having}" if self.having else "")


@dataclass
class _Select:
    """The clauses of a query's outermost SELECT."""

    select_tokens: list[Token]
    distinct: bool
    items: list[tuple[str, Optional[str]]]
    from_tokens: list[Token]
    from_line: int
    where: Optional[list[Token]]
    group: Optional[list[Token]]
    having: Optional[list[Token]]

    @property
    def source(self) -> tuple[Optional[str], Optional[str], Optional[str]]:
        return single_from_item(self.from_tokens) or (None, None, None)

    @property
    def where_text(self) -> Optional[str]:
        return render(self.where).strip() if self.where is not None else None


def outer_select(text: str, line: int) -> Optional[_Select]:
    """The outermost SELECT's clauses; None for a query with ORDER BY, LIMIT or a set operation, or no FROM."""
    tokens = tokenize(text, line)
    top, positions = top_level_clauses(tokens, ("FROM", *_CLAUSES))
    if not top or not top[0][1].is_word("SELECT"):
        return None
    if "FROM" not in positions or any(c in positions for c in ("ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "QUALIFY")):
        return None
    select_tokens = tokens[top[0][0] + 1:positions["FROM"]]
    first = next_significant(select_tokens, -1)
    distinct = first is not None and select_tokens[first].is_word("DISTINCT")
    if first is not None and select_tokens[first].is_word("DISTINCT", "ALL"):
        select_tokens = select_tokens[first + 1:]
    items = [split_alias(part) for part in split_top_level(select_tokens) if render(part).strip()]
    if not items:
        return None
    clause_at = sorted(i for c, i in positions.items() if c != "FROM")

    def clause(name: str) -> Optional[list[Token]]:
        if name not in positions:
            return None
        start = positions[name] + 1
        if name == "GROUP":
            by = next_significant(tokens, positions[name])
            if by is None or not tokens[by].is_word("BY"):
                raise SqlError("GROUP needs BY: GROUP BY k", line=tokens[positions[name]].line, construct="GROUP BY")
            start = by + 1
        end = next((i for i in clause_at if i > positions[name]), len(tokens))
        return tokens[start:end]

    from_end = next((i for i in clause_at if i > positions["FROM"]), len(tokens))
    return _Select(select_tokens, distinct, items, tokens[positions["FROM"] + 1:from_end], tokens[positions["FROM"]].line,
                   clause("WHERE"), clause("GROUP"), clause("HAVING"))


def find_group_aggregation(text: str, line: int, window: bool = False,
                           user_aggregates: Optional[Mapping[str, Any]] = None) -> Optional[GroupAggregation]:
    """``text`` split as a GROUP BY (or global) aggregation over one FROM item; None for any other query shape.

    With ``window``, only a window TVF aggregation (``GROUP BY window_start, window_end, ...``) is split.
    ``user_aggregates`` (upper-case name -> udaf) are the Python aggregate functions a call may name.
    """
    users = dict(user_aggregates or {})
    parts = outer_select(text, line)
    if parts is None:
        return None
    group, having, select, distinct = parts.group, parts.having, parts.items, parts.distinct
    group_parts = [part for part in split_top_level(group)] if group is not None else []
    windowed = any(t.kind == WORD and t.upper in _WINDOW_WORDS for part in group_parts for t in part)
    if any(t.kind == WORD and t.upper in _GROUPING_ANALYTICS for part in group_parts for t in significant(part)[:1]):
        return None  # several groupings in one GROUP BY: Spark's own aggregation (a window's, or refused unbounded)
    if window:
        names = {plain_name(part) for part in group_parts}
        if not {"window_start", "window_end"} <= {n.lower() for n in names if n} \
                or any(t.kind == WORD and t.upper in _WINDOW_WORDS[:4] for part in group_parts for t in part):
            return None
    elif windowed:
        return None  # a window aggregation: append-only, Spark's own operator
    has_call = any(_calls(tokenize(expression), users) for expression, _ in select)
    if distinct and (group is not None or has_call):
        return None  # SELECT DISTINCT over grouped rows: left to Spark
    if group is None and not has_call and not distinct:
        return None
    keys = [render(part).strip() for part in group_parts if render(part).strip()]
    if distinct:  # SELECT DISTINCT a, b is GROUP BY a, b
        keys = [expression for expression, _ in select]
    key_names = [plain_name(tokenize(k)) or f"{KEY_PREFIX}{n}" for n, k in enumerate(keys)]
    if len(set(key_names)) != len(key_names):
        key_names = [f"{KEY_PREFIX}{n}" for n in range(len(keys))]
    calls: list[AggregateCall] = []
    rewritten = [(_over_results(expression, keys, key_names, calls, line, users), alias) for expression, alias in select]
    having_text = _over_results(render(having), keys, key_names, calls, line, users) if having is not None else None
    query, name, alias = parts.source
    outside_from = parts.select_tokens + (having or [])
    unsupported = [(t.upper, t.line) for i, t in enumerate(outside_from) if t.kind == WORD and t.upper in OTHER_AGGREGATES
                   and (j := next_significant(outside_from, i)) is not None and outside_from[j].is_symbol("(")]
    return GroupAggregation(render(parts.from_tokens), query, name, parts.from_line, alias, parts.where_text, keys, key_names, calls,
                            rewritten, having_text, line, unsupported)


@dataclass
class Projection:
    """A projection and filter over one FROM item (no aggregation): stateless, so it applies row by row to a changelog."""

    source_query: Optional[str]
    source_name: Optional[str]
    source_line: int
    alias: Optional[str]
    select_text: str
    where: Optional[str]

    def over(self, changelog_view: str, row_kind: bool = True) -> str:
        """The projection over ``changelog_view``'s rows in place of its FROM item, keeping each row's kind (unless
        ``row_kind`` is False: the view's rows are all insertions)."""
        source = changelog_view + (f" AS {self.alias}" if self.alias else f" AS {self.source_name}" if self.source_name else "")
        items = self.select_text if self.select_text == "*" or not row_kind else f"{_stars_without_row_kind(self.select_text)}, `{ROWKIND_COLUMN}`"
        return f"SELECT {items} FROM {source}" + (f" WHERE {self.where}" if self.where else "")


def _stars_without_row_kind(select_text: str) -> str:
    """``select_text`` with each ``*`` or ``t.*`` item leaving out the row kind, which the projection adds once, last.

    >>> _stars_without_row_kind("*, 1 AS m")
    '* EXCEPT (`__kindling_rowkind`), 1 AS m'
    """
    out, previous = [], None
    for token, depth in with_depth(tokenize(select_text)):
        out.append(token.text)
        if depth == 0 and token.is_symbol("*") and (previous is None or previous.is_symbol(",", ".")):
            out.append(f" EXCEPT (`{ROWKIND_COLUMN}`)")
        if not token.trivia:
            previous = token
    return "".join(out)


def find_projection(text: str, line: int) -> Optional[Projection]:
    """``text`` as a projection over a single FROM subquery or view; None for aggregations, joins and anything else."""
    parts = outer_select(text, line)
    if parts is None or parts.distinct or parts.group is not None or parts.having is not None:
        return None
    if any(_calls(tokenize(expression)) for expression, _ in parts.items):
        return None
    query, name, alias = parts.source
    if query is None and name is None:
        return None
    return Projection(query, name, parts.from_line, alias, render(parts.select_tokens).strip(), parts.where_text)


def single_from_item(tokens: list[Token]) -> Optional[tuple[Optional[str], Optional[str], Optional[str]]]:
    """(subquery text, name, alias) of a single FROM item; None for a join, a list, or a table function."""
    sig = [t for t in tokens if not t.trivia]
    if not sig:
        return None
    if sig[0].is_symbol("("):
        open_index = tokens.index(sig[0])
        close = matching_paren(tokens, open_index)
        rest = [t for t in tokens[close + 1:] if not t.trivia]
        alias = _alias(rest)
        if alias is False:
            return None
        inner = tokens[open_index + 1:close]
        if not any(t.is_word("SELECT") for t in inner[:5] if not t.trivia):
            return None
        return render(inner), None, alias or None
    if sig[0].kind not in (WORD, QUOTED) or sig[0].is_word("TABLE", "LATERAL", "UNNEST"):
        return None
    rest = sig[1:]
    alias = _alias(rest)
    if alias is False:
        return None
    return None, sig[0].identifier, alias or None


def _alias(rest: list[Token]) -> Any:
    """The alias in the tokens after a FROM item ('' for none), or False when more follows (a join)."""
    if not rest:
        return ""
    if len(rest) == 2 and rest[0].is_word("AS") and rest[1].kind in (WORD, QUOTED):
        return rest[1].identifier
    if len(rest) == 1 and rest[0].kind in (WORD, QUOTED) and not rest[0].is_word("JOIN"):
        return rest[0].identifier
    return False


def plain_name(tokens: list[Token]) -> Optional[str]:
    """The column name of a plain (optionally qualified) column reference."""
    sig = [t for t in tokens if not t.trivia]
    if len(sig) == 1 and sig[0].kind in (WORD, QUOTED):
        return sig[0].identifier
    if len(sig) == 3 and sig[0].kind in (WORD, QUOTED) and sig[1].is_symbol(".") and sig[2].kind in (WORD, QUOTED):
        return sig[2].identifier
    return None


def output_name(expression: str) -> Optional[str]:
    """The column name Flink gives an unaliased SELECT item: a plain column's own name (None for any other expression)."""
    name = plain_name(tokenize(expression))
    return None if name is None or name.startswith(INTERNAL_PREFIX) else name


def _calls(tokens: list[Token], user_aggregates: Optional[Mapping[str, Any]] = None) -> list[tuple[int, int, int]]:
    """(name index, '(' index, end index incl. an optional FILTER (...)) of each outermost aggregate call."""
    names = AGGREGATE_FUNCTIONS + tuple(user_aggregates or ())
    return [(name, open_index, end) for name, open_index, _, end in function_calls(tokens, names)]


def aggregate_call(tokens: list[Token], name: int, open_index: int, end: int,
                   user_aggregates: Optional[Mapping[str, Any]] = None) -> AggregateCall:
    """The aggregate call at ``name``: DISTINCT, its argument, and a FILTER folded into the argument."""
    close = matching_paren(tokens, open_index)
    function = tokens[name].upper
    inner = tokens[open_index + 1:close]
    sig = [t for t in inner if not t.trivia]
    distinct = bool(sig) and sig[0].is_word("DISTINCT")
    if function in (user_aggregates or {}):
        return _user_call(tokens, name, inner, close != end, user_aggregates[function])  # type: ignore[index]
    if sig and sig[0].is_word("DISTINCT", "ALL"):
        inner = inner[inner.index(sig[0]) + 1:]
        sig = sig[1:]
    if len(split_top_level(inner)) > 1:
        raise SqlError(f"{function} takes one argument", line=tokens[name].line, construct=function, hint=SUPPORTED_FORM)
    argument: Optional[str] = render(inner).strip()
    if len(sig) == 1 and sig[0].is_symbol("*"):
        if function != "COUNT":
            raise SqlError(f"{function}(*) is not an aggregate; only COUNT(*) is", line=tokens[name].line, construct=function)
        argument = None
    elif not sig:
        raise SqlError(f"{function}() needs an argument", line=tokens[name].line, construct=function, hint=SUPPORTED_FORM)
    if end != close:  # FILTER (WHERE condition): rows failing it do not reach the accumulator
        filter_open = next_significant(tokens, next_significant(tokens, close))
        condition = [t for t in tokens[filter_open + 1:end]]
        csig = [t for t in condition if not t.trivia]
        if not csig or not csig[0].is_word("WHERE"):
            raise SqlError("FILTER needs a WHERE condition: FILTER (WHERE ...)", line=tokens[name].line, construct=function)
        condition = condition[condition.index(csig[0]) + 1:]
        argument = f"CASE WHEN {render(condition).strip()} THEN {argument if argument is not None else '1'} END"
    return AggregateCall(function, distinct, argument)


def _user_call(tokens: list[Token], name: int, inner: list[Token], filtered: bool, function: Any) -> AggregateCall:
    """A Python aggregate function's call: its arguments, several of them as one struct value."""
    label = tokens[name].text
    sig = [t for t in inner if not t.trivia]
    if sig and sig[0].is_word("DISTINCT"):
        raise SqlError(f"DISTINCT in a call of the Python aggregate function {label} is not supported", line=tokens[name].line,
                       construct=f"{label}(DISTINCT ...)", hint="deduplicate in a subquery (SELECT DISTINCT ...) first")
    if filtered:
        raise SqlError(f"FILTER on a call of the Python aggregate function {label} is not supported", line=tokens[name].line,
                       construct=f"{label}(...) FILTER", hint="filter the rows in WHERE or in a subquery")
    arguments = [render(part).strip() for part in split_top_level(inner) if render(part).strip()]
    if not arguments:
        raise SqlError(f"{label}() needs an argument: kindling passes a Python aggregate function at least one column",
                       line=tokens[name].line, construct=label)
    # several arguments travel as one struct, its fields named by position (two columns of one name are two fields)
    argument = arguments[0] if len(arguments) == 1 else \
        "NAMED_STRUCT(" + ", ".join(f"'a{n}', {a}" for n, a in enumerate(arguments)) + ")"
    return AggregateCall(tokens[name].upper, False, argument, user=function, width=len(arguments))


def _over_results(text: str, keys: list[str], key_names: list[str], calls: list[AggregateCall], line: int,
                  user_aggregates: Optional[Mapping[str, Any]] = None) -> str:
    """``text`` with each aggregate call replaced by its result column and each grouping expression by its key column."""
    tokens = tokenize(text, line)
    out: list[str] = []
    position = 0
    for name, open_index, end in _calls(tokens, user_aggregates):
        call = aggregate_call(tokens, name, open_index, end, user_aggregates)
        if call not in calls:
            calls.append(call)
        out.append(_keys_replaced(tokens[position:name], keys, key_names))
        out.append(f"`{RESULT_PREFIX}{calls.index(call)}`")
        position = end + 1
    out.append(_keys_replaced(tokens[position:], keys, key_names))
    return "".join(out)


def _keys_replaced(tokens: list[Token], keys: list[str], key_names: list[str]) -> str:
    """Each grouping expression replaced by its key column; qualifiers dropped, the operator's columns have unique names."""
    tokens = _unqualified(tokens, key_names)
    patterns = [([t for t in _unqualified(tokenize(key), key_names) if not t.trivia], name) for key, name in zip(keys, key_names)]
    out: list[str] = []
    i = 0
    while i < len(tokens):
        previous = previous_significant(tokens, i)
        if tokens[i].trivia or (previous is not None and tokens[previous].is_symbol(".")):
            out.append(tokens[i].text)  # a field of a ROW column
            i += 1
            continue
        for pattern, name in patterns:
            matched = _match(tokens, i, pattern)
            if matched is not None:
                out.append(f"`{name}`")
                i = matched
                break
        else:
            out.append(tokens[i].text)
            i += 1
    return "".join(out)


def _unqualified(tokens: list[Token], key_names: list[str]) -> list[Token]:
    """``tokens`` without table qualifiers (``Q.`` in ``Q.category``); a key column's own name is kept (``row_key.field``)."""
    out: list[Token] = []
    skip = set()
    for i, t in enumerate(tokens):
        if i in skip:
            continue
        j = next_significant(tokens, i)
        previous = previous_significant(tokens, i)
        if t.kind in (WORD, QUOTED) and j is not None and tokens[j].is_symbol(".") and t.identifier not in key_names \
                and not (previous is not None and tokens[previous].is_symbol(".")):
            k = next_significant(tokens, j)
            if k is not None and tokens[k].kind in (WORD, QUOTED):
                skip.update(range(i + 1, k))
                continue
        out.append(t)
    return out


def _match(tokens: list[Token], start: int, pattern: list[Optional[Token]]) -> Optional[int]:
    """The index after a run of ``tokens`` from ``start`` equal to ``pattern`` (trivia skipped; None: any name), or None."""
    i = start
    for p in pattern:
        while i < len(tokens) and tokens[i].trivia:
            i += 1
        if i >= len(tokens) or not (tokens[i].kind in (WORD, QUOTED) if p is None else _same(tokens[i], p)):
            return None
        i += 1
    after = i if i < len(tokens) and not tokens[i].trivia else next_significant(tokens, i)
    if after is not None and after < len(tokens) and tokens[after].is_symbol(".", "("):
        return None  # a longer qualified name, or a function call of that name
    return i


def _same(a: Token, b: Token) -> bool:
    if a.kind in (WORD, QUOTED) and b.kind in (WORD, QUOTED):
        return a.identifier.lower() == b.identifier.lower()
    return a.kind == b.kind and (a.upper if a.kind == WORD else a.text) == (b.upper if b.kind == WORD else b.text)


# --- the operator ---------------------------------------------------------------------------------

class GroupAggregateFunction(Adapter):
    """Per grouping key: the row count, one accumulator per aggregate call, and the result last emitted.

    The key's rows of a micro-batch are applied in arrival order, then its result is compared with the one last
    emitted (Flink's mini-batch ``GroupAggFunction``); with ``per_record``, where the changelog itself is read (the input
    of ``TO_CHANGELOG``), the result is compared after each row, as Flink's ``GroupAggFunction`` does without mini-batch.
    A table aggregate function (the one call of a flat_aggregate)
    gives a list of rows: the key's previous rows are retracted (``-D``) and its new ones inserted (``+I``) whenever
    the key receives rows, as Flink's ``GroupTableAggFunction`` does per bundle."""

    tuple_values = True

    def __init__(self, calls: list[AggregateCall], output_types: list[DataType], key_count: int, ttl_ms: Optional[int],
                 window_end_at: Optional[int] = None, global_key: bool = False, argument_types: Optional[list[DataType]] = None,
                 event_time: bool = False, per_record: bool = False) -> None:
        self.calls = calls
        self.output_types = output_types
        self.argument_types = argument_types or [None] * len(calls)
        self.key_count = key_count
        self.key_ttl_ms = ttl_ms
        self.timeless = not ttl_ms and window_end_at is None  # timers only for a window's end, expiry only by TTL
        # a window aggregation: the key's window_end, when its one final result is emitted (on the wall clock, or with
        # ``event_time`` when the watermark passes it: then each row also carries the window's end in epoch ms)
        self.window_end_at = window_end_at
        self.event_time = event_time
        self.global_key = global_key  # a global aggregation: the constant grouping key is no output column
        self.table_aggregate = any(c.user is not None and c.user.table_aggregate for c in calls)
        self.per_record = per_record and window_end_at is None and not self.table_aggregate

    def open(self, runner: Any, runtime_context: Any) -> None:
        from kindling.datastream.state import ValueStateDescriptor, state_handle
        from kindling.datastream.timers import TimerService

        self._runner = runner
        self._state = state_handle(ValueStateDescriptor("aggregate"), lambda: runner.state)
        self._timers = TimerService(runner)
        self._finish = [finisher(c, t, a) for c, t, a in zip(self.calls, self.output_types, self.argument_types)]
        self._distinct_values = [c.distinct and c.function in ("COUNT", "SUM", "AVG") for c in self.calls]
        self._rows: list[tuple] = []

    def _results(self, accumulators: list[Any]) -> tuple:
        return tuple(finish(list(acc) if distinct else acc) for finish, distinct, acc in zip(self._finish, self._distinct_values, accumulators))

    def _keys(self) -> tuple:
        if self.global_key:
            return ()
        key = self._runner.current_key
        return key if self.key_count > 1 else (key,)

    def element(self, index: int, value: Any) -> list:
        self._rows.append(value)  # (arguments..., row kind, arrival[, window end ms])
        return []

    def key_done(self) -> list:
        if self.per_record and len(self._rows) > 1:
            changes: list = []
            for row in sorted(self._rows, key=lambda r: r[len(self.calls) + 1]):
                self._rows = [row]
                changes += self.key_done()
            return changes
        rows, self._rows = self._rows, []
        calls = self.calls
        kind_at = len(calls)
        if self.event_time and rows and rows[0][kind_at + 2] - 1 <= self._runner.watermark:
            return []  # the window has fired: its late rows are dropped, as Flink's window operator drops them
        stored = self._state.value()
        count, accumulators, emitted = stored if stored is not None else (0, None, None)
        # sorted() is stable: the rows of one input partition keep their order (a -U before its +U)
        for row in sorted(rows, key=lambda r: r[kind_at + 1]):
            sign = -1 if row[kind_at] in _RETRACTIONS else 1
            if accumulators is None:
                if sign < 0:
                    continue  # Flink ignores a retraction for a key without state
                accumulators = [empty(c) for c in calls]
            count += sign
            for n, call in enumerate(calls):
                accumulators[n] = update(call, accumulators[n], row[n], sign)
        if accumulators is None:
            return []
        keys = self._keys()
        if self.window_end_at is not None:  # append-only rows: the result waits for the window's end
            if stored is None and self.event_time:
                self._timers.register_event_time_timer(rows[0][kind_at + 2] - 1)
            elif stored is None:
                end = keys[self.window_end_at]
                self._timers.register_processing_time_timer(int(end.timestamp() * 1000) if hasattr(end, "timestamp") else int(end) // 1000)
            self._state.update((count, accumulators, None))
            return []
        if self.table_aggregate:
            return self._emit_rows(keys, count, accumulators, emitted)
        if count <= 0:
            self._state.clear()
            return [keys + tuple(emitted) + ("-D",)] if emitted is not None else []
        results = self._results(accumulators)
        self._state.update((count, accumulators, results))
        if emitted is None:
            return [keys + results + ("+I",)]
        if results != tuple(emitted):
            return [keys + tuple(emitted) + ("-U",), keys + results + ("+U",)]
        return []

    def _emit_rows(self, keys: tuple, count: int, accumulators: list[Any], emitted: Optional[list]) -> list:
        """A table aggregation's changes for a key that received rows: its previous rows retracted, its new ones."""
        changes = [keys + (row, "-D") for row in emitted or ()]
        if count <= 0:
            self._state.clear()
            return changes
        rows = self._results(accumulators)[0]
        self._state.update((count, accumulators, rows))
        return changes + [keys + (row, "+I") for row in rows]

    def timer(self, timestamp: int) -> list:
        """A window ended: its result, once, and its state is dropped."""
        stored = self._state.value()
        self._state.clear()
        if stored is None:
            return []
        _, accumulators, _ = stored
        return [self._keys() + self._results(accumulators) + ("+I",)]


def aggregate_frame(env: "StreamEnvironment", projected: DataFrame, aggregation: GroupAggregation, ttl_ms: Optional[int],
                    processing_time_window: bool = False, event_time_window: bool = False, per_record: bool = False) -> DataFrame:
    """Run the retracting aggregation over ``projected`` (keys, arguments, row kind); keys, results and row kind out.

    With ``processing_time_window`` the keys include a processing-time window's ``window_end``: each window's result
    is emitted once, when the wall clock passes its end (Flink's processing-time window operator). With
    ``event_time_window``, once the watermark passes it (a window aggregation calling a Python aggregate function).
    """
    from kindling.sql.keyed import keyed_frame, without_window

    fields = {f.name: f for f in projected.schema.fields}
    key_fields = [passing(fields[name]) for name in aggregation.key_names]
    arguments = [fields[f"{ARGUMENT_PREFIX}{n}"].dataType for n in range(len(aggregation.calls))]
    types = [result_type(call, argument) for call, argument in zip(aggregation.calls, arguments)]
    flink_types = [None if call.user is not None else
                   aggregate_type(call.function, carried_type(fields[f"{ARGUMENT_PREFIX}{n}"]), grouped=bool(aggregation.key_names))
                   for n, call in enumerate(aggregation.calls)]
    output = StructType(key_fields + [typed_field(f"{RESULT_PREFIX}{n}", t, f) for n, (t, f) in enumerate(zip(types, flink_types))]
                        + [StructField(ROWKIND_COLUMN, StringType(), True)])
    keyed = projected.withColumn(ARRIVAL, F.spark_partition_id())
    keys = list(aggregation.key_names)
    if not keys:  # a global aggregation: one key for all rows
        keyed = keyed.withColumn(KEY_PREFIX, F.lit(0))
        keys = [KEY_PREFIX]
    values = [f"{ARGUMENT_PREFIX}{n}" for n in range(len(aggregation.calls))] + [ROWKIND_COLUMN, ARRIVAL]
    windowed = processing_time_window or event_time_window
    window_end_at = [n.lower() for n in aggregation.key_names].index("window_end") if windowed else None
    rowtime = None
    if event_time_window:
        end = aggregation.key_names[window_end_at]  # type: ignore[index]
        keyed = keyed.withColumn(WINDOW_END_MS, F.unix_millis(F.col(f"`{end}`").cast("timestamp")))
        values.append(WINDOW_END_MS)
        rowtime = F.col(f"`{end}`").cast("timestamp") - F.expr("INTERVAL 1 MILLISECOND")
    function = GroupAggregateFunction(aggregation.calls, types, len(keys), None if windowed else ttl_ms, window_end_at,
                                      global_key=not aggregation.key_names, argument_types=arguments, event_time=event_time_window,
                                      per_record=per_record)
    return keyed_frame(env, keyed, keys, values, function, output, "GroupAggregate",
                       event_time=event_time_window, rowtime=rowtime,
                       key_group_keys=without_window(keys) if windowed else None)


def batch_aggregate_frame(projected: DataFrame, aggregation: GroupAggregation) -> DataFrame:
    """A bounded input's aggregation of pandas aggregate functions: keys and results, one row per group.

    Spark groups the projected rows (keys, arguments); each group reaches Python as one Arrow table and each function
    gets its arguments as pandas Series straight from the Arrow columns. Every call is a pandas one: Flink's batch
    mode refuses general Python aggregates and a mix with built-ins (``check_python_aggregates``).
    """
    import pyarrow as pa

    from kindling.arrow import arrow_schema

    fields = {f.name: f for f in projected.schema.fields}
    calls = aggregation.calls
    names = [f"{ARGUMENT_PREFIX}{n}" for n in range(len(calls))]
    types = [result_type(call, fields[name].dataType) for call, name in zip(calls, names)]
    key_fields = [passing(fields[name]) for name in aggregation.key_names]
    output = StructType(key_fields + [StructField(f"{RESULT_PREFIX}{n}", t, True) for n, t in enumerate(types)])
    schema = arrow_schema(output)
    keys = list(aggregation.key_names)

    def group(table: pa.Table) -> pa.Table:
        results = []
        for call, name in zip(calls, names):
            column = table.column(name)
            parts = column.combine_chunks().flatten() if call.width > 1 else [column]
            results.append(call.user.value_of_series([part.to_pandas() for part in parts]))
        row = [table.column(k)[0].as_py() for k in aggregation.key_names] + results
        return pa.Table.from_pylist([dict(zip(output.fieldNames(), row))], schema=schema)

    if not keys:  # one group of all rows (none over no rows, as in Flink's batch Python aggregation)
        projected = projected.withColumn(KEY_PREFIX, F.lit(0))
        keys = [KEY_PREFIX]
    return projected.groupBy(*[F.col(f"`{k}`") for k in keys]).applyInArrow(group, output)

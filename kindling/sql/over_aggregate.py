"""Flink's OVER aggregation on streams: ``AGG(x) OVER (PARTITION BY k ORDER BY rowtime ROWS|RANGE ...)``.

Spark runs no window function over a stream. Flink's row-time OVER operators (``RowTimeRowsBoundedPrecedingFunction``
and its siblings) keep each partition key's rows until the watermark passes their event time, then process them in
time order: every row leaves with the aggregates over its frame, the rows before it (``ROWS BETWEEN n PRECEDING AND
CURRENT ROW``: itself and the ``n`` rows before it; ``RANGE BETWEEN INTERVAL ... PRECEDING AND CURRENT ROW``: every
row whose time is within the interval before its own, rows of the same time included as peers; ``UNBOUNDED
PRECEDING``: all rows before it). A row whose time is not after the last time processed for its key is late and
dropped. The result is append-only: one row per input row.

Here the query is split as the GROUP BY is: Spark projects each input row (WHERE applied) with its partition keys,
aggregate arguments and event time; the keyed operator of :mod:`kindling.sql.keyed`, in event-time mode, buffers the
rows under event-time timers and computes the frames with :mod:`kindling.sql.accumulators` (a row leaving a bounded
frame is retracted); Spark evaluates the SELECT list over the operator's rows. Handled: COUNT, SUM, AVG, MIN, MAX
(DISTINCT too), FIRST_VALUE and LAST_VALUE (the frame's first and last non-NULL value) and ``LAG(x [, n [, default]])``
(the value ``n`` rows before in the partition; the default for none, and for NULL, as Flink's) over one window
(inline or named in a ``WINDOW`` clause) ordered by the input's event-time attribute, over one FROM item. Other forms
are refused by name, as Flink refuses several of them (``LEAD`` on streams).

Example::

    SELECT order_id, SUM(amount) OVER (PARTITION BY customer ORDER BY ts
                                       ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s
    FROM orders
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from kindling.connectors.base import INTERNAL_PREFIX
from kindling.datastream.operator import Adapter
from kindling.durations import parse_duration
from kindling.sql.accumulators import AggregateCall, compact, empty, finisher, result_type, update
from kindling.sql.column_types import aggregate_type, carried_type, passing, typed_field
from kindling.sql.errors import SqlError
from kindling.sql.group_aggregate import AGGREGATE_FUNCTIONS, aggregate_call, output_name, single_from_item
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
    split_top_level,
    tokenize,
    top_level_clauses,
)

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment

PARTITION_PREFIX = INTERNAL_PREFIX + "over_p"
ARGUMENT_PREFIX = INTERNAL_PREFIX + "over_a"
RESULT_PREFIX = INTERNAL_PREFIX + "over_r"
TIME = INTERNAL_PREFIX + "over_t"  # the row's event time, epoch microseconds
ARRIVAL = INTERNAL_PREFIX + "over_arrival"
FORM = ("SELECT ..., AGG(x) OVER (PARTITION BY k ORDER BY rowtime [ROWS BETWEEN n PRECEDING AND CURRENT ROW | RANGE BETWEEN "
        "INTERVAL '10' SECOND PRECEDING AND CURRENT ROW | ROWS/RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW]) FROM t "
        "[WHERE ..]; one window per query; AGG is COUNT, SUM, AVG, MIN, MAX, FIRST_VALUE, LAST_VALUE or LAG(x [, n [, default]])")
_RANKING = ("ROW_NUMBER", "RANK", "DENSE_RANK")
_VALUES = ("FIRST_VALUE", "LAST_VALUE", "LAG")  # value functions the operator computes besides the aggregates
_CLAUSES = ("FROM", "WHERE", "WINDOW", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "QUALIFY")


@dataclass(frozen=True)
class OverWindow:
    """PARTITION BY, ORDER BY and the frame of an OVER clause."""

    partition: tuple[str, ...]
    order: str
    rows: bool  # ROWS (counted) or RANGE (by time)
    preceding: Optional[int]  # ROWS: the number of rows before; RANGE: microseconds before; None: UNBOUNDED
    framed: bool = field(default=True, compare=False)  # written with a ROWS/RANGE frame (False: the default frame)


@dataclass
class OverAggregation:
    """A query split around its OVER aggregates: source, window, calls, and the SELECT list over the results."""

    from_text: str
    alias: Optional[str]  # the FROM item's alias (or its table name), which the SELECT list may qualify columns with
    where: Optional[str]
    window: OverWindow
    calls: list[AggregateCall]
    select: list[tuple[str, str]]  # SELECT items over the operator's rows (calls replaced by result columns), with names
    line: int

    def projection_text(self) -> str:
        """Each input row with its partition keys, aggregate arguments and event time (WHERE applied)."""
        items = ["*"] + [f"{p} AS `{PARTITION_PREFIX}{k}`" for k, p in enumerate(self.window.partition)]
        items += [f"{c.argument if c.argument is not None else '1'} AS `{ARGUMENT_PREFIX}{n}`" for n, c in enumerate(self.calls)]
        items.append(f"{self.window.order} AS `{TIME}`")
        return f"SELECT {', '.join(items)} FROM {self.from_text}" + (f" WHERE {self.where}" if self.where else "")

    def result_text(self, view: str) -> str:
        """The SELECT list over the operator's rows (the input's columns and the results) in ``view``."""
        items = [f"{expression} AS `{name.replace('`', '``')}`" for expression, name in self.select]
        return f"SELECT {', '.join(items)} FROM {view}" + (f" AS {self.alias}" if self.alias else "")


def find_over_aggregation(text: str, line: int, user_aggregates: Optional[Mapping[str, Any]] = None) -> Optional[OverAggregation]:
    """``text`` split around the OVER aggregates of its outermost SELECT list; None when it has none (a ranking
    function's OVER is the Top-N's). Raises SqlError for OVER forms this operator does not run, naming them.
    ``user_aggregates`` (upper-case name -> udaf) are the Python aggregate functions a call may name: pandas ones run
    over a bounded frame, as in Flink."""
    users = dict(user_aggregates or {})
    tokens = tokenize(text, line)
    top, positions = top_level_clauses(tokens, _CLAUSES)
    if not top or not top[0][1].is_word("SELECT") or "FROM" not in positions:
        return None
    select_start, from_at = top[0][0] + 1, positions["FROM"]
    overs = [i for i in range(select_start, from_at) if tokens[i].is_word("OVER")]
    if not overs:
        return None
    first = tokens[overs[0]]

    def refuse(message: str, at: Token = first) -> SqlError:
        return SqlError(f"OVER aggregation: {message}", line=at.line, construct="OVER aggregation", hint=FORM)

    calls_at = {close: (name, open_index, end)
                for name, open_index, close, end in function_calls(tokens[:from_at], AGGREGATE_FUNCTIONS + _VALUES + _RANKING + _OTHERS
                                                                     + tuple(users))}
    spans: list[tuple[int, int, AggregateCall, OverWindow]] = []
    windows = _named_windows(tokens, positions, refuse)
    for over in overs:
        close = next((c for c in calls_at if next_significant(tokens, calls_at[c][2]) == over), None)
        if close is None:
            raise refuse("OVER must follow an aggregate call: AGG(x) OVER (...)", tokens[over])
        name, open_index, end = calls_at[close]
        function = tokens[name].upper
        if function in _RANKING:
            return None  # a Top-N's ranking (or its refusal), planned by kindling.sql.ranking
        if function == "LEAD":
            raise SqlError("LEAD Function is not supported in stream mode (as in Flink: a row would wait for the rows after "
                           "it)", line=tokens[name].line, construct="LEAD OVER", hint="LAG(x, n) over the rows before, or batch mode")
        if function in users and users[function].func_type != "pandas":
            raise SqlError(f"{tokens[name].text}: Non-Pandas Python UDAFs are not supported in stream mode currently",
                           line=tokens[name].line, construct=f"Python aggregate function {tokens[name].text} OVER",
                           hint="a pandas UDAF (udaf(f, func_type='pandas')) over a bounded ROWS or RANGE frame")
        if function not in AGGREGATE_FUNCTIONS + _VALUES + tuple(users):
            raise SqlError(f"{function} OVER (...) is not supported on streams", line=tokens[name].line,
                           construct=f"{function} OVER", hint=FORM)
        call = _lag_call(tokens, name, open_index) if function == "LAG" else aggregate_call(tokens, name, open_index, end, users)
        spec_at = next_significant(tokens, over)
        if spec_at is None:
            raise refuse("OVER needs a window: OVER (PARTITION BY .. ORDER BY ..) or OVER w", tokens[over])
        if tokens[spec_at].is_symbol("("):
            spec_end = matching_paren(tokens, spec_at)
            window = _window(tokens[spec_at + 1:spec_end], refuse)
        elif tokens[spec_at].kind in (WORD, QUOTED) and tokens[spec_at].identifier.lower() in windows:
            spec_end, window = spec_at, windows[tokens[spec_at].identifier.lower()]
        else:
            raise refuse(f"unknown window '{tokens[spec_at].text}'", tokens[spec_at])
        spans.append((name, spec_end, call, window))
    window = spans[0][3]
    for name, _, call, call_window in spans:
        if call.function == "LAG" and call_window.framed:  # Calcite's validation, as Flink reports it
            raise SqlError("ROW/RANGE not allowed with RANK, DENSE_RANK or ROW_NUMBER functions (nor LAG): LAG's window takes "
                           "no frame", line=tokens[name].line, construct="LAG OVER", hint="LAG(x) OVER (PARTITION BY k ORDER BY rowtime)")
    if any(w != window for _, _, _, w in spans):
        raise refuse("all OVER aggregates of a query must use the same window (as in Flink)")
    for name, _, call, _ in spans:
        if call.user is not None and window.preceding is None:
            raise SqlError(f"{tokens[name].text}: Python UDAF is not supported to be used in UNBOUNDED PRECEDING OVER windows",
                           line=tokens[name].line,
                           construct=f"pandas aggregate function {tokens[name].text} OVER an unbounded window",
                           hint="ROWS BETWEEN n PRECEDING AND CURRENT ROW or RANGE BETWEEN INTERVAL ... PRECEDING AND CURRENT ROW")
        if call.user is not None and any(other.user is None for _, _, other, _ in spans):
            raise SqlError(f"{tokens[name].text}: Python UDAF and Java/Scala UDAF cannot be used together", line=tokens[name].line,
                           construct=f"pandas aggregate function {tokens[name].text} OVER", hint="the built-in aggregates in a "
                           "query of their own")
    for clause in ("GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "QUALIFY"):
        if clause in positions:
            raise refuse(f"{clause} in a query with OVER aggregates is not supported; put the OVER aggregation in a subquery",
                         tokens[positions[clause]])
    source_end = min([positions[c] for c in ("WHERE", "WINDOW") if c in positions] + [len(tokens)])
    from_tokens = tokens[from_at + 1:source_end]
    item = single_from_item(from_tokens)
    if item is None:
        raise refuse("over one FROM item only (a table, view or subquery); put a join in a subquery")
    where = None
    if "WHERE" in positions:
        where_end = positions.get("WINDOW", len(tokens))
        where = render(tokens[positions["WHERE"] + 1:where_end]).strip()
    calls: list[AggregateCall] = []
    replacements = []
    for name, spec_end, call, _ in spans:
        if call not in calls:
            calls.append(call)
        result = f"`{RESULT_PREFIX}{calls.index(call)}`"
        if call.function == "LAG" and call.default is not None:  # Flink's default stands in for a NULL as for no row
            result = f"COALESCE({result}, {call.default})"
        replacements.append((name, spec_end + 1, result))
    rewritten = splice(tokens, replacements)
    assert rewritten is not None
    new_tokens = tokenize(rewritten, line)
    new_top, new_positions = top_level_clauses(new_tokens, ("FROM",))
    select = []
    for n, part in enumerate(split_top_level(new_tokens[new_top[0][0] + 1:new_positions["FROM"]])):
        if not significant(part):
            continue
        expression, alias = _split_alias(part)
        original = output_name(expression)
        select.append((expression, alias or original or f"EXPR${n}"))
    query, table, alias = item
    return OverAggregation(render(from_tokens).strip(), alias or table, where, window, calls, select, line)


_OTHERS = ("LEAD", "NTILE", "PERCENT_RANK", "CUME_DIST", "LISTAGG", "STDDEV_POP",
           "STDDEV_SAMP", "VAR_POP", "VAR_SAMP", "COLLECT")


def _lag_call(tokens: list[Token], name: int, open_index: int) -> AggregateCall:
    """``LAG(x [, offset [, default]])``: the offset an integer literal, as Flink requires."""
    parts = [render(p).strip() for p in split_top_level(tokens[open_index + 1:matching_paren(tokens, open_index)])]
    if not 1 <= len(parts) <= 3 or not parts[0]:
        raise SqlError("LAG takes one to three arguments: LAG(x [, offset [, default]])", line=tokens[name].line,
                       construct="LAG OVER", hint=FORM)
    offset = 1
    if len(parts) > 1:
        if not parts[1].isdigit() or int(parts[1]) < 1:
            raise SqlError(f"LAG's offset must be a positive integer literal, got {parts[1]!r}", line=tokens[name].line,
                           construct="LAG OVER", hint=FORM)
        offset = int(parts[1])
    return AggregateCall("LAG", False, parts[0], offset, parts[2] if len(parts) > 2 else None)


def _split_alias(part: list[Token]) -> tuple[str, Optional[str]]:
    """A SELECT item's expression and alias; ``x OVER w`` has none (w names a window)."""
    sig = significant(part)
    if len(sig) >= 3 and sig[-2].is_word("AS") and sig[-1].kind in (WORD, QUOTED):
        return render(part[:part.index(sig[-2])]).strip(), sig[-1].identifier
    if len(sig) >= 2 and sig[-1].kind in (WORD, QUOTED) and not sig[-1].is_word("END") \
            and (sig[-2].kind == QUOTED or sig[-2].is_symbol(")") or (sig[-2].kind == WORD and not sig[-2].is_word("OVER"))):
        return render(part[:part.index(sig[-1])]).strip(), sig[-1].identifier
    return render(part).strip(), None


def _named_windows(tokens: list[Token], positions: dict[str, int], refuse: Any) -> dict[str, OverWindow]:
    """The windows of a ``WINDOW w AS (...), ...`` clause, by lower-case name."""
    if "WINDOW" not in positions:
        return {}
    windows = {}
    for part in split_top_level(tokens[positions["WINDOW"] + 1:]):
        sig = significant(part)
        if len(sig) < 4 or sig[0].kind not in (WORD, QUOTED) or not sig[1].is_word("AS") or not sig[2].is_symbol("("):
            raise refuse("a WINDOW clause names windows: WINDOW w AS (PARTITION BY .. ORDER BY ..)", sig[0] if sig else tokens[-1])
        open_index = part.index(sig[2])
        windows[sig[0].identifier.lower()] = _window(part[open_index + 1:matching_paren(part, open_index)], refuse)
    return windows


def _window(spec: list[Token], refuse: Any) -> OverWindow:
    """An OVER clause's ``PARTITION BY .. ORDER BY .. [frame]``."""
    sig = significant(spec)
    words = [t.upper if t.kind == WORD else None for t in sig]
    partition: tuple[str, ...] = ()
    k = 0
    if words[k:k + 2] == ["PARTITION", "BY"]:
        end = next((j for j in range(k + 2, len(sig)) if words[j] == "ORDER" and _depth(sig, j) == 0), len(sig))
        partition = tuple(render(p).strip() for p in split_top_level(sig[k + 2:end]))
        k = end
    if words[k:k + 2] != ["ORDER", "BY"]:
        raise refuse("an OVER window needs ORDER BY the input's event-time attribute", sig[k] if k < len(sig) else sig[-1])
    frame_at = next((j for j in range(k + 2, len(sig)) if words[j] in ("ROWS", "RANGE") and _depth(sig, j) == 0), len(sig))
    order = sig[k + 2:frame_at]
    if order and order[-1].is_word("ASC"):
        order = order[:-1]
    if len(split_top_level(order)) != 1 or not order or order[-1].is_word("DESC"):
        raise refuse("an OVER window on a stream is ordered by one time attribute, ascending", order[-1] if order else sig[k])
    if frame_at == len(sig):  # no frame: Flink's default, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        return OverWindow(partition, render(order).strip(), rows=False, preceding=None, framed=False)
    frame = sig[frame_at:]
    rows = frame[0].is_word("ROWS")
    bound = frame[1:]
    if bound and bound[0].is_word("BETWEEN"):
        upper = [t.upper for t in bound[-3:]]
        if upper != ["AND", "CURRENT", "ROW"]:
            raise refuse("an OVER frame on a stream ends at CURRENT ROW", bound[-1])
        bound = bound[1:-3]
    if len(bound) == 2 and bound[0].is_word("UNBOUNDED") and bound[1].is_word("PRECEDING"):
        return OverWindow(partition, render(order).strip(), rows, None)
    if not bound or not bound[-1].is_word("PRECEDING"):
        raise refuse("an OVER frame is n PRECEDING, INTERVAL .. PRECEDING or UNBOUNDED PRECEDING, to CURRENT ROW", frame[0])
    if rows:
        if len(bound) != 2 or not bound[0].text.isdigit():
            raise refuse("a ROWS frame counts rows: ROWS BETWEEN n PRECEDING AND CURRENT ROW", bound[0])
        return OverWindow(partition, render(order).strip(), True, int(bound[0].text))
    if not bound[0].is_word("INTERVAL") or len(bound) < 4:
        raise refuse("a RANGE frame on a stream is an interval: RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW", bound[0])
    amount = bound[1].text.strip("'")
    unit = bound[2].text.lower()
    try:
        micros = int(parse_duration(f"{amount} {unit}").total_seconds() * 1_000_000)
    except ValueError:
        raise refuse(f"unknown interval INTERVAL {bound[1].text} {bound[2].text}", bound[1]) from None
    return OverWindow(partition, render(order).strip(), False, micros)


def _depth(sig: list[Token], index: int) -> int:
    depth = 0
    for t in sig[:index]:
        if t.is_symbol("("):
            depth += 1
        elif t.is_symbol(")"):
            depth -= 1
    return depth


# --- the operator ---------------------------------------------------------------------------------

class OverAggregateFunction(Adapter):
    """Per partition key: rows waiting for the watermark, the frame's rows and accumulators, and the last time processed.

    Rows arrive as (visible columns..., arguments..., event time in µs, arrival); each timer (a row time the
    watermark passed) processes the rows up to it in time order, arrival order among equal times."""

    tuple_values = True

    def __init__(self, calls: list[AggregateCall], output_types: list[Any], visible: int, window: OverWindow,
                 argument_types: Optional[list[Any]] = None) -> None:
        self.calls = calls
        self.output_types = output_types
        self.argument_types = argument_types or [None] * len(calls)
        self.visible = visible
        self.window = window

    def open(self, runner: Any, runtime_context: Any) -> None:
        from kindling.datastream.state import ValueStateDescriptor, state_handle
        from kindling.datastream.timers import TimerService

        self._state = state_handle(ValueStateDescriptor("over"), lambda: runner.state)
        self._timers = TimerService(runner)
        self._finish = [finisher(c, t, a) if c.function != "LAG" else None
                        for c, t, a in zip(self.calls, self.output_types, self.argument_types)]
        self._distinct = [c.distinct and c.function in ("COUNT", "SUM", "AVG") for c in self.calls]

    def _load(self) -> list:
        stored = self._state.value()
        # last processed time (µs), rows waiting, the frame's (time, arguments), accumulators, the last rows' arguments (LAG)
        state = list(stored) if stored is not None else [None, [], [], [empty(c) for c in self.calls], []]
        return state if len(state) == 5 else state + [[]]

    def element(self, index: int, value: Any) -> list:
        # The runner fires the timers the batch's watermark passes before the batch's rows (Flink's order), so a row whose
        # time is not after the key's last processed time is late: its frame was computed already (Flink drops it).
        state = self._load()
        if state[0] is None or value[-2] > state[0]:
            state[1].append(value)
            self._timers.register_event_time_timer(value[-2] // 1000)
            self._state.update(tuple(state))
        return []

    def timer(self, timestamp: int) -> list:
        state = self._load()
        out = self._process(state, timestamp)
        self._state.update(tuple(state))
        return out

    def _process(self, state: list, upto_ms: int) -> list:
        """The waiting rows up to ``upto_ms`` through their frames, in time order: their output rows (``state`` updated)."""
        last, waiting, frame, accumulators, history = state
        due = sorted((r for r in waiting if r[-2] // 1000 <= upto_ms), key=lambda r: (r[-2], r[-1]))
        if not due:
            return []
        state[1] = [r for r in waiting if r[-2] // 1000 > upto_ms]
        arguments_at = slice(self.visible, self.visible + len(self.calls))
        out: list = []
        window = self.window
        start = 0
        while start < len(due):
            time_us = due[start][-2]
            end = start
            while end < len(due) and due[end][-2] == time_us:
                end += 1
            peers = due[start:end]
            lags = [self._lags(history, row[arguments_at]) for row in peers]  # row by row, whatever the frame
            if window.rows:
                for row, lag in zip(peers, lags):
                    self._add(accumulators, frame, time_us, row[arguments_at])
                    if window.preceding is not None and len(frame) > window.preceding + 1:
                        self._retract(accumulators, frame.pop(0)[1])
                    out.append(tuple(row[:self.visible]) + self._results(accumulators, lag))
            else:
                for row in peers:
                    self._add(accumulators, frame, time_us, row[arguments_at])
                if window.preceding is not None:
                    while frame and frame[0][0] < time_us - window.preceding:
                        self._retract(accumulators, frame.pop(0)[1])
                out.extend(tuple(row[:self.visible]) + self._results(accumulators, lag) for row, lag in zip(peers, lags))
            state[0] = time_us
            start = end
        return out

    def _lags(self, history: list, arguments: tuple) -> dict[int, Any]:
        """Each LAG call's value for the row with ``arguments`` (None: no row that far back), which then joins ``history``."""
        lags = {n: history[-call.offset][n] if len(history) >= call.offset else None
                for n, call in enumerate(self.calls) if call.function == "LAG"}
        if lags:
            history.append(tuple(arguments))
            del history[:-max(self.calls[n].offset for n in lags)]
        return lags

    def _add(self, accumulators: list, frame: list, time_us: int, arguments: tuple) -> None:
        for n, call in enumerate(self.calls):
            if call.function == "LAG":
                continue
            accumulators[n] = update(call, accumulators[n], arguments[n], 1)
            if self.window.preceding is None:
                accumulators[n] = compact(call, accumulators[n])
        if self.window.preceding is not None:  # an unbounded frame keeps no rows, only accumulators
            frame.append((time_us, tuple(arguments)))

    def _retract(self, accumulators: list, arguments: tuple) -> None:
        for n, call in enumerate(self.calls):
            if call.function != "LAG":
                accumulators[n] = update(call, accumulators[n], arguments[n], -1)

    def _results(self, accumulators: list, lags: dict[int, Any]) -> tuple:
        return tuple(lags[n] if n in lags else finish(list(acc) if distinct else acc)
                     for n, (finish, distinct, acc) in enumerate(zip(self._finish, self._distinct, accumulators)))


def over_frame(env: "StreamEnvironment", projected: DataFrame, over: OverAggregation) -> DataFrame:
    """The OVER operator over ``projected`` (the input rows with partition keys, arguments and event time): the input's
    columns and one result column per aggregate call, a row per input row that was not late."""
    from kindling.sql.keyed import keyed_frame

    time_field = projected.schema[TIME]
    if "spark.watermarkDelayMs" not in (time_field.metadata or {}):
        raise SqlError(f"OVER aggregation: ORDER BY {over.window.order} is not the input's event-time attribute (a column "
                       "with a WATERMARK); ordering by processing time or another column is not supported on streams",
                       line=over.line, construct="OVER aggregation", hint=FORM)
    internal = [f.name for f in projected.schema.fields if f.name.startswith(INTERNAL_PREFIX)]
    visible = [f for f in projected.schema.fields if f.name not in internal]
    arguments = [f"{ARGUMENT_PREFIX}{n}" for n in range(len(over.calls))]
    types = [projected.schema[a].dataType if call.function == "LAG" else result_type(call, projected.schema[a].dataType)
             for call, a in zip(over.calls, arguments)]
    flink_types = [None if call.user is not None or call.function == "LAG" else
                   aggregate_type(call.function, carried_type(projected.schema[a]), grouped=None) for call, a in zip(over.calls, arguments)]
    output = StructType([passing(f) for f in visible]
                        + [typed_field(f"{RESULT_PREFIX}{n}", t, f) for n, (t, f) in enumerate(zip(types, flink_types))])
    keys = [f"{PARTITION_PREFIX}{k}" for k in range(len(over.window.partition))]
    keyed = projected.withColumn(ARRIVAL, F.spark_partition_id()).withColumn(f"{TIME}_us", F.unix_micros(F.col(f"`{TIME}`")))
    if not keys:  # no PARTITION BY: one key for all rows
        keyed = keyed.withColumn(PARTITION_PREFIX, F.lit(0))
        keys = [PARTITION_PREFIX]
    values = [f.name for f in visible] + arguments + [f"{TIME}_us", ARRIVAL]
    function = OverAggregateFunction(over.calls, types, len(visible), over.window, [projected.schema[a].dataType for a in arguments])
    return keyed_frame(env, keyed, keys, values, function, output, "OverAggregate", event_time=True, rowtime=F.col(f"`{TIME}`"))


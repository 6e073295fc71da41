"""Flink's ORDER BY a time attribute on streams: rows released in event-time order as the watermark passes them.

Spark sorts a stream only in complete mode. Flink's ``RowTimeSortOperator`` keeps the rows the watermark has not yet
passed, and when it passes a time emits that time's rows, sorted by the ORDER BY's further keys; a row whose time
the watermark has already passed is late and dropped. The first ORDER BY key must be the query's event-time
attribute, ascending (Flink refuses any other streaming sort without LIMIT; with LIMIT it is a Top-N,
:func:`kindling.sql.ranking.sort_limit_as_top_n`). Like Flink's, the operator runs on one key (parallelism 1),
on the keyed core of :mod:`kindling.sql.keyed` in event-time mode. The result is append-only.

Example: ``SELECT order_id, ts FROM orders ORDER BY ts, order_id DESC``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from kindling.connectors.base import INTERNAL_PREFIX
from kindling.datastream.operator import Adapter
from kindling.sql.column_types import passing
from kindling.sql.errors import SqlError
from kindling.sql.tokens import render, significant, split_top_level, tokenize, top_level_clauses

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment

KEY_PREFIX = INTERNAL_PREFIX + "sort_k"
TIME = INTERNAL_PREFIX + "sort_us"
ARRIVAL = INTERNAL_PREFIX + "sort_arrival"
GROUP = INTERNAL_PREFIX + "sort_all"
FORM = "SELECT ... FROM t ORDER BY rowtime [ASC], other keys [ASC|DESC] (or ORDER BY ... LIMIT n, a Top-N)"
_SET_OPERATORS = ("UNION", "INTERSECT", "EXCEPT")


@dataclass
class TemporalSort:
    """A query split around its ORDER BY: the query with its sort keys as extra columns, and their directions."""

    keyed_text: str  # the query without ORDER BY, its sort keys as columns KEY_PREFIX<n>
    descending: list[bool]
    order_text: str
    line: int


def find_temporal_sort(text: str, line: int) -> Optional[TemporalSort]:
    """``text`` as a query sorted by ORDER BY without LIMIT; None for any other query."""
    tokens = tokenize(text, line)
    top, positions = top_level_clauses(tokens, ("SELECT", "FROM", "ORDER", "LIMIT", "OFFSET", "FETCH", *_SET_OPERATORS))
    if not top or not top[0][1].is_word("SELECT") or "ORDER" not in positions:
        return None
    if any(c in positions for c in ("LIMIT", "OFFSET", "FETCH")):
        return None
    order_at = positions["ORDER"]
    by = significant(tokens[order_at + 1:order_at + 3])
    if not by or not by[0].is_word("BY"):
        return None
    by_index = tokens.index(by[0], order_at)
    keys, descending = [], []
    for part in split_top_level(tokens[by_index + 1:]):
        sig = significant(part)
        if not sig:
            continue
        desc = sig[-1].is_word("DESC")
        if sig[-1].is_word("ASC", "DESC"):
            part = part[:part.index(sig[-1])]
        keys.append(render(part).strip())
        descending.append(desc)
    if not keys:
        return None
    inner = render(tokens[:order_at]).strip()
    extra = ", ".join(f"{k} AS `{KEY_PREFIX}{n}`" for n, k in enumerate(keys))
    if any(c in positions for c in _SET_OPERATORS):  # the sort keys name the set operation's output columns
        keyed = f"SELECT *, {extra} FROM ({inner}) AS `{INTERNAL_PREFIX}sorted`"
    else:
        from_at = positions["FROM"]
        keyed = render(tokens[:from_at]).rstrip() + f", {extra} " + render(tokens[from_at:order_at]).strip()
    return TemporalSort(keyed, descending, render(tokens[by_index + 1:]).strip(), line)


class TemporalSortFunction(Adapter):
    """One key's waiting rows; each timer (a time the watermark passed) emits the rows up to it, sorted."""

    tuple_values = True

    def __init__(self, visible: int, descending: list[bool]) -> None:
        self.visible = visible
        self.descending = descending

    def open(self, runner: Any, runtime_context: Any) -> None:
        from kindling.datastream.state import ValueStateDescriptor, state_handle
        from kindling.datastream.timers import TimerService

        self._state = state_handle(ValueStateDescriptor("sort"), lambda: runner.state)
        self._timers = TimerService(runner)

    def element(self, index: int, value: Any) -> list:
        time_us = value[-2]
        if time_us is None or time_us // 1000 <= self._timers.current_watermark():
            return []  # late (or without a time): Flink's sort drops it
        waiting = self._state.value() or []
        waiting.append(value)
        self._state.update(waiting)
        self._timers.register_event_time_timer(time_us // 1000)
        return []

    def timer(self, timestamp: int) -> list:
        waiting = self._state.value() or []
        due = [r for r in waiting if r[-2] // 1000 <= timestamp]
        if not due:
            return []
        rest = [r for r in waiting if r[-2] // 1000 > timestamp]
        if rest:
            self._state.update(rest)
        else:
            self._state.clear()
        due.sort(key=lambda r: r[-1])  # arrival order among equal keys
        keys_at = self.visible
        for n in range(len(self.descending) - 1, 0, -1):  # stable sorts, last key first; NULL is the smallest value
            due.sort(key=lambda r, k=keys_at + n: (r[k] is not None, r[k]) if r[k] is not None else (False, 0),
                     reverse=self.descending[n])
        due.sort(key=lambda r: r[-2])
        return [tuple(r[:self.visible]) for r in due]


def sort_frame(env: "StreamEnvironment", keyed: DataFrame, sort: TemporalSort) -> DataFrame:
    """``keyed`` (the query with its sort keys) released in time order; its visible columns."""
    from kindling.sql.keyed import keyed_frame

    first = keyed.schema[f"{KEY_PREFIX}0"]
    if sort.descending[0] or "spark.watermarkDelayMs" not in (first.metadata or {}):
        raise SqlError(f"ORDER BY {sort.order_text} on a stream: the first sort key must be the event-time attribute (a "
                       "column with a WATERMARK), ascending", line=sort.line, construct="ORDER BY", hint=FORM)
    visible = [f for f in keyed.schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
    keys = [f"{KEY_PREFIX}{n}" for n in range(len(sort.descending))]
    rows = (keyed.withColumn(TIME, F.unix_micros(F.col(f"`{KEY_PREFIX}0`"))).withColumn(ARRIVAL, F.spark_partition_id())
            .withColumn(GROUP, F.lit(0)))
    output = StructType([passing(f) for f in visible])
    function = TemporalSortFunction(len(visible), [False] + sort.descending[1:])
    values = [f.name for f in visible] + keys + [TIME, ARRIVAL]
    return keyed_frame(env, rows, [GROUP], values, function, output, "TemporalSort", event_time=True,
                       rowtime=F.col(f"`{KEY_PREFIX}0`"))

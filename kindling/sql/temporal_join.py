"""Flink's event-time temporal join: ``JOIN versioned FOR SYSTEM_TIME AS OF o.rowtime [AS] v ON o.k = v.pk``.

Each row of the left (probe) stream is joined with the version of the versioned table's row that was valid at the
row's event time: of the rows with its key, the one with the latest time not after it (a retraction there means the
row was deleted then: no match). A versioned table has a PRIMARY KEY, which the ON equalities must include, and an
event-time attribute; its rows may be plain inserts (each a new version) or a changelog (upsert-kafka, a CDC
format); or it is a view keeping each key's last row by event time (Flink's versioned view, a deduplication).

As Flink's ``TemporalRowTimeJoinOperator`` does, the operator keeps the left rows until the watermark passes their
time, then emits them, in arrival order, joined with the version of that time (``LEFT JOIN``: padded with NULLs
when there is none) and forgets the versions no later row can need. The result is append-only.

The join runs on the one keyed-state core (:mod:`kindling.sql.keyed`) in event-time mode, keyed by the join key;
its parsing and SELECT list are the regular join's (:mod:`kindling.sql.outer_join`).

Example::

    SELECT o.order_id, o.amount * r.rate AS converted
    FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from kindling.connectors.base import INTERNAL_PREFIX
from kindling.datastream.operator import Adapter
from kindling.sql.catalog import CatalogTable, CatalogView
from kindling.sql.errors import SqlError
from kindling.sql.outer_join import KIND, SIDE, OuterJoin, keyed_sides
from kindling.sql.ranking import find_top_n

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment

TIME = INTERNAL_PREFIX + "tj_time"  # each side's event time, in microseconds
FORM = "[LEFT] JOIN versioned FOR SYSTEM_TIME AS OF o.rowtime [AS] v ON o.key = v.primary_key"
CONSTRUCT = "event-time temporal join"


@dataclass
class Versioned:
    """A versioned table: its primary key and event-time column, and for a versioned view the query of its rows before
    the deduplication (each one a version, as the deduplication emits it)."""

    primary_key: list[str]
    rowtime: Optional[str] = None
    rows_query: Optional[str] = None


def versioned(found: Union[CatalogTable, CatalogView]) -> Optional[Versioned]:
    """A table's declared key and event time, or a deduplicating view's (Flink's versioned view: ``ROW_NUMBER() OVER
    (PARTITION BY k ORDER BY rowtime DESC) = 1``, keyed by ``k``). None for a table without event time (a lookup
    table); an empty key for a view that does not deduplicate so."""
    if isinstance(found, CatalogTable):
        return Versioned(list(found.primary_key), found.watermark.column) if found.watermark is not None else None
    top = find_top_n(found.query, found.query_line) if found.query else None
    if (top is None or top.function != "ROW_NUMBER" or top.limit != 1 or len(top.order) != 1 or not top.order[0].descending
            or not top.partition_names or None in top.partition_names or top.rank_selected):
        return Versioned([])
    only_rank = re.fullmatch(rf"(?is)(\s*(?:AS\s+)?\w*\s*)WHERE\s+`?{re.escape(top.alias)}`?\s*(?:=|<=)\s*1\s*;?\s*", top.outer_after)
    if only_rank is None:
        return Versioned([])
    rowtime = top.order[0].expression.strip().strip("`").split(".")[-1].strip("`")
    rows_query = f"{top.outer_before}({top.inner_text}\n){only_rank.group(1) or ' AS __kindling_versions'}"
    return Versioned([name for name in top.partition_names if name is not None], rowtime, rows_query)


def check_versioned(join: OuterJoin, name: str, primary_key: list[str]) -> None:
    """Refuse, as Flink does, a temporal join whose table is not versioned or whose ON does not name its primary key."""
    if join.kind not in ("INNER", "LEFT"):
        raise SqlError(f"an event-time temporal join is an inner or LEFT join; {join.kind} JOIN ... FOR SYSTEM_TIME AS OF is "
                       "not supported", line=join.line, construct=CONSTRUCT, hint=FORM)
    if not primary_key:
        raise SqlError("Temporal Table Join requires primary key in versioned table, but no primary key can be found "
                       f"('{name}')", line=join.line, construct=CONSTRUCT,
                       hint=f"a versioned table: PRIMARY KEY (...) NOT ENFORCED in CREATE TABLE {name}, or a view keeping each "
                            "key's last row: ROW_NUMBER() OVER (PARTITION BY k ORDER BY rowtime DESC) = 1")
    qualifier = join.right_qualifier.lower()
    named = {_column_of(right, qualifier) for _, right in join.pairs}
    missing = [k for k in primary_key if k.lower() not in named]
    if missing:
        condition = ", ".join(f"{left}={right}" for left, right in join.pairs)
        raise SqlError(f"Temporal table's primary key [{', '.join(primary_key)}] must be included in the equivalence "
                       f"condition of temporal join, but current temporal join condition is [{condition}]", line=join.line,
                       construct=CONSTRUCT, hint=FORM)


def _column_of(expression: str, qualifier: str) -> str:
    """``v.col`` (or ``col``) as the lower-case column name; other expressions as they are."""
    parts = [p.strip().strip("`").lower() for p in expression.split(".")]
    if len(parts) == 2 and parts[0] == qualifier:
        return parts[1]
    return parts[0] if len(parts) == 1 else expression.lower()


class TemporalJoinFunction(Adapter):
    """Per join key: the left rows the watermark has not passed, and the right side's versions by time; each timer (a
    time the watermark passed) emits the left rows up to it joined with the version of their time."""

    tuple_values = True

    def __init__(self, left_outer: bool, left_count: int, right_count: int, last_rows_only: bool = False) -> None:
        self.left_outer = left_outer
        self.counts = (left_count, right_count)
        # a versioned view's deduplication: a row older than its key's latest is no version (the view never emits it)
        self.last_rows_only = last_rows_only

    def open(self, runner: Any, runtime_context: Any) -> None:
        from kindling.datastream.state import ValueStateDescriptor, state_handle
        from kindling.datastream.timers import TimerService

        self._state = state_handle(ValueStateDescriptor("temporal_join"), lambda: runner.state)
        self._timers = TimerService(runner)

    def element(self, index: int, value: Any) -> list:
        nl, nr = self.counts
        kind, side, time_us = value[-3], value[-2], value[-1]
        if time_us is None or (side == 1 and kind == "-U"):
            # no event time: no version to join; an update's old row: Flink's planner drops it before a temporal join (the
            # update's new row is the next version, a delete's row the version saying the key is gone)
            return []
        time_ms = time_us // 1000
        waiting, versions, arrivals = self._state.value() or ([], {}, 0)
        if side == 0:
            waiting.append((time_ms, arrivals, tuple(value[:nl])))
        elif self.last_rows_only and versions and time_ms < max(versions):
            return []
        else:  # a later row of the same time replaces the version, as Flink's state keyed by time does
            versions[time_ms] = (kind, tuple(value[nl:nl + nr]))
        self._state.update((waiting, versions, arrivals + 1))
        self._timers.register_event_time_timer(time_ms)
        return []

    def timer(self, timestamp: int) -> list:
        stored = self._state.value()
        if stored is None:
            return []
        waiting, versions, arrivals = stored
        due = sorted((row for row in waiting if row[0] <= timestamp), key=lambda row: row[1])
        times = sorted(versions)
        out = []
        for time_ms, _, values in due:
            at = bisect_right(times, time_ms) - 1
            kind, version = versions[times[at]] if at >= 0 else (None, None)
            if version is not None and kind in ("+I", "+U"):
                out.append((*values, *version))
            elif self.left_outer:
                out.append((*values, *((None,) * self.counts[1])))
        keep = bisect_right(times, timestamp) - 1  # the version valid at the watermark and later ones stay
        for time_ms in times[:max(keep, 0)]:
            del versions[time_ms]
        waiting = [row for row in waiting if row[0] > timestamp]
        if waiting or versions:
            self._state.update((waiting, versions, arrivals))
        else:
            self._state.clear()
        return out


def temporal_join_frame(env: "StreamEnvironment", left: DataFrame, right: DataFrame, join: OuterJoin,
                        last_rows_only: bool = False) -> tuple[DataFrame, list[str], list[str]]:
    """The joined rows of ``left`` (its key columns and event time in TIME) with the versions of ``right`` (the same): the
    left columns under LEFT_PREFIX, the right's under RIGHT_PREFIX; with the two sides' column names."""
    from kindling.sql.keyed import keyed_frame

    sides = keyed_sides(left, right, join.key_count, shared=(TIME,), padded=("right",) if join.kind == "LEFT" else ())
    fields = sides.left_fields + sides.right_fields
    present = F.col(sides.present)
    keyed_rows = sides.rows.where(present).drop(sides.present)
    output = StructType(fields)
    function = TemporalJoinFunction(join.kind == "LEFT", len(sides.left_fields), len(sides.right_fields), last_rows_only)
    joined = keyed_frame(env, keyed_rows, sides.keys, [f.name for f in fields] + [KIND, SIDE, TIME], function, output,
                         "TemporalJoin", event_time=True, rowtime=F.timestamp_micros(F.col(TIME)))
    if join.kind == "LEFT":  # a left row with a NULL key has no version: it leaves padded
        unmatched = sides.rows.where(~present & (F.col(SIDE) == 0)).select(*[F.col(f.name) for f in fields])
        joined = joined.unionByName(unmatched)
    return joined, sides.left_columns, sides.right_columns


"""Group windows of the Table API (``Tumble``, ``Slide``, ``Session``), as Flink SQL's group window functions, and
OVER windows (``Over``), as a ``WINDOW w AS (...)`` clause.

``table.window(Tumble.over(lit(5).seconds).on(col('ts')).alias('w')).group_by(col('k'), col('w'))`` groups
by ``TUMBLE(ts, INTERVAL '5' SECOND)``, and ``col('w').start`` / ``.end`` / ``.rowtime`` select
``TUMBLE_START`` / ``TUMBLE_END`` / ``TUMBLE_ROWTIME`` of it.

>>> from kindling.table.expressions import col, lit
>>> Slide.over(lit(10).minutes).every(lit(5).minutes).on(col("ts")).alias("w").group_sql()
"HOP(`ts`, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE)"
"""

from __future__ import annotations

from typing import Any, Optional

from kindling.table.expressions import UNBOUNDED_RANGE, WINDOW_PROPERTY, Expression, FrameBound, _sql_of


class GroupWindow:
    """A group window: its SQL function, arguments and alias."""

    def __init__(self, function: str, time_field: Optional[str], arguments: list[str], alias: Optional[str]) -> None:
        self.function, self.time_field, self.arguments, self.alias_name = function, time_field, arguments, alias

    def _check(self) -> None:
        if self.time_field is None:
            raise ValueError(f"{self.function.title()} window: .on(col('time_attribute')) is missing")
        if self.alias_name is None:
            raise ValueError(f"{self.function.title()} window: .alias('w') is missing (group_by needs the window's alias)")

    def _args(self) -> str:
        return ", ".join([self.time_field or "", *self.arguments])

    def group_sql(self) -> str:
        self._check()
        return f"{self.function}({self._args()})"

    def property_sql(self, name: str) -> str:
        return f"{self.function}_{name}({self._args()})"

    def resolve(self, text: str) -> str:
        """``text`` with this window's properties (``col('w').start``) and the window itself written as SQL."""
        for name in ("START", "END", "ROWTIME"):
            text = text.replace(WINDOW_PROPERTY.format(alias=self.alias_name, property=name), self.property_sql(name))
        return text


class _Builder:
    def __init__(self, function: str, arguments: list[str]) -> None:
        self._function, self._arguments = function, arguments
        self._time: Optional[str] = None

    def on(self, time_field: Any) -> "_Builder":
        self._time = _sql_of(time_field) if isinstance(time_field, Expression) else f"`{time_field}`"
        return self

    def alias(self, alias: str) -> GroupWindow:
        return GroupWindow(self._function, self._time, self._arguments, alias)


class Tumble:
    """A tumbling window (``Tumble.over(lit(10).minutes).on(col('rowtime')).alias('w')``)."""

    @staticmethod
    def over(size: Any) -> _Builder:
        return _Builder("TUMBLE", [_sql_of(size)])


class _SlideSize:
    def __init__(self, size: Any) -> None:
        self._size = size

    def every(self, slide: Any) -> _Builder:
        return _Builder("HOP", [_sql_of(slide), _sql_of(self._size)])


class Slide:
    """A sliding window (``Slide.over(lit(10).minutes).every(lit(5).minutes).on(col('rowtime')).alias('w')``)."""

    @staticmethod
    def over(size: Any) -> _SlideSize:
        return _SlideSize(size)


class Session:
    """A session window (``Session.with_gap(lit(10).minutes).on(col('rowtime')).alias('w')``)."""

    @staticmethod
    def with_gap(gap: Any) -> _Builder:
        return _Builder("SESSION", [_sql_of(gap)])


class OverWindow:
    """An OVER window (``Over.partition_by(col('k')).order_by(col('ts')).preceding(row_interval(2)).alias('w')``)."""

    def __init__(self, partition: list[str], order: str, preceding: Any, following: Any, alias: str) -> None:
        self.partition, self.order, self.alias_name = partition, order, alias
        self.preceding, self.following = preceding, following

    def clause_sql(self) -> str:
        """``w AS (PARTITION BY .. ORDER BY .. ROWS|RANGE BETWEEN .. PRECEDING AND CURRENT ROW)`` for a WINDOW clause."""
        if self.following is not None and not (isinstance(self.following, FrameBound) and self.following.rows is None):
            raise ValueError(f"OVER window '{self.alias_name}': following() takes CURRENT_ROW or CURRENT_RANGE on a stream")
        preceding = self.preceding
        if isinstance(preceding, FrameBound):
            if preceding.rows is None:
                raise ValueError(f"OVER window '{self.alias_name}': preceding() takes UNBOUNDED_ROW, UNBOUNDED_RANGE, "
                                 "row_interval(n) or a time interval such as lit(10).seconds")
            frame = f"{'ROWS' if preceding.rows else 'RANGE'} BETWEEN {preceding._sql} PRECEDING AND CURRENT ROW"
        else:
            frame = f"RANGE BETWEEN {_sql_of(preceding)} PRECEDING AND CURRENT ROW"
        partition = f"PARTITION BY {', '.join(self.partition)} " if self.partition else ""
        return f"`{self.alias_name}` AS ({partition}ORDER BY {self.order} {frame})"


class _OverOrdered:
    def __init__(self, partition: list[str], order: str) -> None:
        self._partition, self._order = partition, order
        self._preceding: Any = UNBOUNDED_RANGE
        self._following: Any = None

    def preceding(self, preceding: Any) -> "_OverOrdered":
        self._preceding = preceding
        return self

    def following(self, following: Any) -> "_OverOrdered":
        self._following = following
        return self

    def alias(self, alias: str) -> OverWindow:
        return OverWindow(self._partition, self._order, self._preceding, self._following, alias)


class _OverPartitioned:
    def __init__(self, partition: list[str]) -> None:
        self._partition = partition

    def order_by(self, order_by: Any) -> _OverOrdered:
        return _OverOrdered(self._partition, _sql_of(order_by))


class Over:
    """OVER windows for ``table.over_window(...)``: ordered by a time attribute, optionally partitioned.

    >>> from kindling.table.expressions import col, row_interval
    >>> Over.partition_by(col("k")).order_by(col("ts")).preceding(row_interval(2)).alias("w").clause_sql()
    '`w` AS (PARTITION BY `k` ORDER BY `ts` ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)'
    """

    @staticmethod
    def order_by(order_by: Any) -> _OverOrdered:
        return _OverOrdered([], _sql_of(order_by))

    @staticmethod
    def partition_by(*partition_by: Any) -> _OverPartitioned:
        return _OverPartitioned([_sql_of(p) for p in partition_by])

"""Group windows of the Table API (``Tumble``, ``Slide``, ``Session``), as Flink SQL's group window functions.

``table.window(Tumble.over(lit(5).seconds).on(col('ts')).alias('w')).group_by(col('k'), col('w'))`` groups
by ``TUMBLE(ts, INTERVAL '5' SECOND)``, and ``col('w').start`` / ``.end`` / ``.rowtime`` select
``TUMBLE_START`` / ``TUMBLE_END`` / ``TUMBLE_ROWTIME`` of it.

>>> from kindling.table.expressions import col, lit
>>> Slide.over(lit(10).minutes).every(lit(5).minutes).on(col("ts")).alias("w").group_sql()
"HOP(`ts`, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE)"
"""

from __future__ import annotations

from typing import Any, Optional

from kindling.table.expressions import WINDOW_PROPERTY, Expression, _sql


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
        self._time = _sql(time_field) if isinstance(time_field, Expression) else f"`{time_field}`"
        return self

    def alias(self, alias: str) -> GroupWindow:
        return GroupWindow(self._function, self._time, self._arguments, alias)


class Tumble:
    """A tumbling window (``Tumble.over(lit(10).minutes).on(col('rowtime')).alias('w')``)."""

    @staticmethod
    def over(size: Any) -> _Builder:
        return _Builder("TUMBLE", [_sql(size)])


class _SlideSize:
    def __init__(self, size: Any) -> None:
        self._size = size

    def every(self, slide: Any) -> _Builder:
        return _Builder("HOP", [_sql(slide), _sql(self._size)])


class Slide:
    """A sliding window (``Slide.over(lit(10).minutes).every(lit(5).minutes).on(col('rowtime')).alias('w')``)."""

    @staticmethod
    def over(size: Any) -> _SlideSize:
        return _SlideSize(size)


class Session:
    """A session window (``Session.with_gap(lit(10).minutes).on(col('rowtime')).alias('w')``)."""

    @staticmethod
    def with_gap(gap: Any) -> _Builder:
        return _Builder("SESSION", [_sql(gap)])

"""Window evictors with Flink's names: remove elements from a window before and/or after its function runs.

An evictor receives the window's elements as a list of ``TimestampedValue`` and removes entries
in place (``del elements[i]``), as Flink's evictors remove through the iterator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

from kindling.datastream.windows import TimeWindow
from kindling.durations import DurationLike, parse_duration, to_millis


@dataclass
class TimestampedValue:
    value: Any
    timestamp: int

    def get_value(self) -> Any:
        return self.value

    def get_timestamp(self) -> int:
        return self.timestamp


class Evictor:
    def evict_before(self, elements: List[TimestampedValue], size: int, window: TimeWindow, ctx: Any) -> None:
        pass

    def evict_after(self, elements: List[TimestampedValue], size: int, window: TimeWindow, ctx: Any) -> None:
        pass


class CountEvictor(Evictor):
    """Keeps at most ``max_count`` elements: the most recent ones (by arrival)."""

    def __init__(self, max_count: int, do_evict_after: bool = False) -> None:
        if max_count < 0:
            raise ValueError(f"CountEvictor needs a non-negative count, got {max_count}")
        self.max_count = max_count
        self.do_evict_after = do_evict_after

    @staticmethod
    def of(max_count: int, do_evict_after: bool = False) -> "CountEvictor":
        return CountEvictor(max_count, do_evict_after)

    def _evict(self, elements: List[TimestampedValue]) -> None:
        if len(elements) > self.max_count:
            del elements[: len(elements) - self.max_count]

    def evict_before(self, elements: List[TimestampedValue], size: int, window: TimeWindow, ctx: Any) -> None:
        if not self.do_evict_after:
            self._evict(elements)

    def evict_after(self, elements: List[TimestampedValue], size: int, window: TimeWindow, ctx: Any) -> None:
        if self.do_evict_after:
            self._evict(elements)


class TimeEvictor(Evictor):
    """Keeps elements whose timestamp is within ``window_size`` of the window's latest element."""

    def __init__(self, window_size_ms: int, do_evict_after: bool = False) -> None:
        self.window_size = window_size_ms
        self.do_evict_after = do_evict_after

    @staticmethod
    def of(window_size: DurationLike, do_evict_after: bool = False) -> "TimeEvictor":
        return TimeEvictor(to_millis(parse_duration(window_size, name="window_size")), do_evict_after)

    def _evict(self, elements: List[TimestampedValue]) -> None:
        if not elements or any(e.timestamp is None for e in elements):
            return
        cutoff = max(e.timestamp for e in elements) - self.window_size
        elements[:] = [e for e in elements if e.timestamp > cutoff]

    def evict_before(self, elements: List[TimestampedValue], size: int, window: TimeWindow, ctx: Any) -> None:
        if not self.do_evict_after:
            self._evict(elements)

    def evict_after(self, elements: List[TimestampedValue], size: int, window: TimeWindow, ctx: Any) -> None:
        if self.do_evict_after:
            self._evict(elements)

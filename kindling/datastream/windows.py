"""Window assigners with Flink's names, compiled to Spark's ``window`` and ``session_window``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Optional

from pyspark.sql import Column
from pyspark.sql import functions as F

from kindling.durations import DurationLike, parse_duration, spark_interval, to_millis


@dataclass(frozen=True, order=True)
class TimeWindow:
    """A window [start, end) in epoch milliseconds, as Flink's TimeWindow."""

    start: int
    end: int

    def max_timestamp(self) -> int:
        """The last millisecond inside the window; the timestamp of the window's result."""
        return self.end - 1


def window_start(timestamp: int, offset: int, size: int) -> int:
    """Flink's TimeWindow.getWindowStartWithOffset."""
    remainder = (timestamp - offset) % size
    return timestamp - remainder


class WindowAssigner:
    """Assigns records to windows; ``is_event_time`` says which clock it follows."""

    is_event_time: bool = True

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        raise NotImplementedError

    def to_column(self, time_column: Column) -> Column:
        """The Spark window expression over a timestamp column."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


def _positive(value: DurationLike, name: str) -> timedelta:
    duration = parse_duration(value, name=name)
    if duration <= timedelta(0):
        raise ValueError(f"window {name} must be positive, got {value!r}")
    return duration


def _offset_interval(offset: timedelta) -> Optional[str]:
    return spark_interval(offset) if offset else None


@dataclass(frozen=True)
class TumblingEventTimeWindows(WindowAssigner):
    """Fixed-size, non-overlapping windows on event time."""

    size: timedelta
    offset: timedelta = timedelta(0)

    @classmethod
    def of(cls, size: DurationLike, offset: DurationLike = timedelta(0)) -> "TumblingEventTimeWindows":
        size_td = _positive(size, "size")
        offset_td = parse_duration(offset, name="offset")
        if offset_td >= size_td:
            raise ValueError(f"window offset ({offset}) must be smaller than the size ({size})")
        return cls(size_td, offset_td)

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        size, offset = to_millis(self.size), to_millis(self.offset)
        start = window_start(timestamp, offset, size)
        return [TimeWindow(start, start + size)]

    def to_column(self, time_column: Column) -> Column:
        interval = spark_interval(self.size)
        offset = _offset_interval(self.offset)
        return F.window(time_column, interval, interval, offset) if offset else F.window(time_column, interval)

    def describe(self) -> str:
        return f"TumblingWindow({spark_interval(self.size)})"


@dataclass(frozen=True)
class SlidingEventTimeWindows(WindowAssigner):
    """Windows of ``size`` starting every ``slide``; a record belongs to size/slide windows."""

    size: timedelta
    slide: timedelta
    offset: timedelta = timedelta(0)

    @classmethod
    def of(cls, size: DurationLike, slide: DurationLike, offset: DurationLike = timedelta(0)) -> "SlidingEventTimeWindows":
        size_td, slide_td = _positive(size, "size"), _positive(slide, "slide")
        offset_td = parse_duration(offset, name="offset")
        if slide_td > size_td:
            raise ValueError(f"window slide ({slide}) must not exceed the size ({size})")
        if offset_td >= slide_td:
            raise ValueError(f"window offset ({offset}) must be smaller than the slide ({slide})")
        return cls(size_td, slide_td, offset_td)

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        size, slide, offset = to_millis(self.size), to_millis(self.slide), to_millis(self.offset)
        last_start = window_start(timestamp, offset, slide)
        windows = []
        start = last_start
        while start > timestamp - size:
            windows.append(TimeWindow(start, start + size))
            start -= slide
        return windows

    def to_column(self, time_column: Column) -> Column:
        offset = _offset_interval(self.offset)
        args = [time_column, spark_interval(self.size), spark_interval(self.slide)]
        return F.window(*args, offset) if offset else F.window(*args)

    def describe(self) -> str:
        return f"SlidingWindow({spark_interval(self.size)}, {spark_interval(self.slide)})"


class SessionWindowTimeGapExtractor:
    """PyFlink's dynamic session gap: ``extract(element)`` returns the gap in milliseconds for that element."""

    def extract(self, element: object) -> int:
        raise NotImplementedError


@dataclass(frozen=True)
class EventTimeSessionWindows(WindowAssigner):
    """Sessions: a window closes after ``gap`` without records for its key (or a gap extracted per element)."""

    gap: timedelta
    gap_extractor: Optional[object] = None

    @property
    def spark_native(self) -> bool:
        return self.gap_extractor is None  # Spark's session_window takes one gap expression, not a Python function

    @classmethod
    def with_gap(cls, gap: DurationLike) -> "EventTimeSessionWindows":
        return cls(_positive(gap, "gap"))

    @classmethod
    def with_dynamic_gap(cls, extractor: object) -> "EventTimeSessionWindows":
        """Sessions whose gap each element decides (a SessionWindowTimeGapExtractor or a function), in milliseconds."""
        if not (hasattr(extractor, "extract") or callable(extractor)):
            raise TypeError(f"with_dynamic_gap takes a SessionWindowTimeGapExtractor or a function, got {type(extractor).__name__}")
        return cls(timedelta(0), extractor)

    def assign_windows(self, timestamp: int) -> list[TimeWindow]:
        # Before merging, each record opens its own session [t, t + gap).
        return [TimeWindow(timestamp, timestamp + to_millis(self.gap))]

    def assign_element(self, element: object, timestamp: int) -> list[TimeWindow]:
        """The element's own session window, with the gap its extractor gives when the gap is dynamic."""
        if self.gap_extractor is None:
            return self.assign_windows(timestamp)
        extract = getattr(self.gap_extractor, "extract", self.gap_extractor)
        gap = int(extract(element))  # type: ignore[operator]
        if gap <= 0:
            raise ValueError(f"the session gap extractor returned {gap} for {element!r}; a session gap must be positive")
        return [TimeWindow(timestamp, timestamp + gap)]

    def to_column(self, time_column: Column) -> Column:
        return F.session_window(time_column, spark_interval(self.gap))

    def describe(self) -> str:
        return f"SessionWindow(gap={spark_interval(self.gap)})"


@dataclass(frozen=True, order=True)
class CountWindow:
    """The window of ``count_window``: a numbered group of a key's elements (Flink's CountWindow)."""

    id: int = 0

    def max_timestamp(self) -> int:
        return 2**63 - 1


@dataclass(frozen=True)
class GlobalWindows(WindowAssigner):
    """One window per key that never ends; a trigger decides when it fires (count windows use one)."""

    is_event_time = False
    spark_native = False

    @staticmethod
    def create() -> "GlobalWindows":
        return GlobalWindows()

    def assign_windows(self, timestamp: int) -> list:
        return [CountWindow(0)]

    def to_column(self, time_column: Column) -> Column:
        raise ValueError("global windows need a trigger and run as keyed state, not as Spark's windowed aggregation")

    def describe(self) -> str:
        return "GlobalWindows()"


class _ProcessingTime:
    """Processing-time twin: windows follow the micro-batch's wall-clock time, not event time."""

    is_event_time = False


@dataclass(frozen=True)
class TumblingProcessingTimeWindows(_ProcessingTime, TumblingEventTimeWindows):
    pass


@dataclass(frozen=True)
class SlidingProcessingTimeWindows(_ProcessingTime, SlidingEventTimeWindows):
    pass


@dataclass(frozen=True)
class ProcessingTimeSessionWindows(_ProcessingTime, EventTimeSessionWindows):
    pass


def merge_sessions(timestamps: list[int], gap_ms: int) -> list[TimeWindow]:
    """Flink's session merging for one key: overlapping [t, t + gap) windows merge into one."""
    sessions: list[TimeWindow] = []
    for ts in sorted(timestamps):
        if sessions and ts < sessions[-1].end:
            last = sessions[-1]
            sessions[-1] = TimeWindow(last.start, max(last.end, ts + gap_ms))
        else:
            sessions.append(TimeWindow(ts, ts + gap_ms))
    return sessions

"""Event time: watermark strategies and timestamp assigners, with Flink's names.

A strategy compiles to Spark: the timestamp assigner becomes the record's event-time column
and the out-of-orderness bound becomes ``withWatermark``'s delay. Spark keeps one watermark
per query (max event time seen minus the delay), advanced once per micro-batch.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Callable, Optional, Union

from pyspark.sql import Column

from kindling.durations import DurationLike, parse_duration


class TimestampAssigner:
    """Flink's TimestampAssigner: extract an event time (epoch milliseconds) from a record."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        raise NotImplementedError


TimestampAssignerLike = Union[str, Column, TimestampAssigner, Callable[..., int]]


@dataclass(frozen=True)
class WatermarkAlignment:
    """Flink's watermark alignment parameters (FLIP-182): sources in a group may not drift apart."""

    group: str
    max_drift: timedelta
    update_interval: timedelta = timedelta(seconds=1)


@dataclass(frozen=True)
class WatermarkStrategy:
    """How a source's records get event time and how far the watermark trails it."""

    out_of_orderness: Optional[timedelta] = None
    timestamp_assigner: Optional[TimestampAssignerLike] = None
    idleness: Optional[timedelta] = None
    alignment: Optional[WatermarkAlignment] = None

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: DurationLike) -> "WatermarkStrategy":
        """Watermark = max event time seen − the bound; records later than that are late."""
        return WatermarkStrategy(parse_duration(max_out_of_orderness, name="max_out_of_orderness"))

    @staticmethod
    def for_monotonous_timestamps() -> "WatermarkStrategy":
        """Timestamps never decrease: the watermark follows the max event time."""
        return WatermarkStrategy(timedelta(0))

    @staticmethod
    def no_watermarks() -> "WatermarkStrategy":
        """No event time: only processing-time windows can be used downstream."""
        return WatermarkStrategy(None)

    def with_timestamp_assigner(self, assigner: TimestampAssignerLike) -> "WatermarkStrategy":
        """Event time from a column name, a Column expression, a ``TimestampAssigner`` or a function.

        A column of type TIMESTAMP is used as is; BIGINT is read as epoch milliseconds; STRING is
        parsed as a timestamp. A function receives the record (and optionally the record's
        source timestamp) and returns epoch milliseconds; it runs in Python over Arrow batches.
        """
        if not isinstance(assigner, (str, Column, TimestampAssigner)) and not callable(assigner):
            raise TypeError(
                "with_timestamp_assigner takes a column name, a Column, a TimestampAssigner or a function, "
                f"got {type(assigner).__name__}"
            )
        return replace(self, timestamp_assigner=assigner)

    def with_idleness(self, idle_timeout: DurationLike) -> "WatermarkStrategy":
        """Mark the source idle after this long without records, so it does not hold the watermark back."""
        return replace(self, idleness=parse_duration(idle_timeout, name="idle_timeout"))

    def with_watermark_alignment(
        self, group: str, max_drift: DurationLike, update_interval: DurationLike = timedelta(seconds=1)
    ) -> "WatermarkStrategy":
        """Hold sources of a group back when their event time runs ahead of the slowest by more than max_drift."""
        return replace(
            self,
            alignment=WatermarkAlignment(
                group,
                parse_duration(max_drift, name="max_drift"),
                parse_duration(update_interval, name="update_interval"),
            ),
        )

    @property
    def has_watermarks(self) -> bool:
        return self.out_of_orderness is not None

    def extract(self, value: Any, record_timestamp: Optional[int] = None) -> int:
        """Apply a Python timestamp assigner to one record (epoch milliseconds)."""
        return call_assigner(self.timestamp_assigner, value, record_timestamp)

    def current_watermark(self, max_timestamp_ms: int) -> int:
        """The watermark Flink would emit after seeing ``max_timestamp_ms``: max − bound − 1 ms.

        Spark's watermark is max − bound (a record exactly at the watermark is still on time);
        both treat a window ending at or before the watermark as complete.
        """
        if self.out_of_orderness is None:
            raise ValueError("this strategy has no watermarks")
        return max_timestamp_ms - int(self.out_of_orderness / timedelta(milliseconds=1)) - 1


def call_assigner(assigner: Any, value: Any, record_timestamp: Optional[int]) -> int:
    """Call a Python assigner whichever of Flink's shapes it has."""
    return assigner_call(assigner)(value, record_timestamp)


def assigner_call(assigner: Any) -> Callable[[Any, Optional[int]], int]:
    """A Python assigner as a call of Flink's shape ``(value, record_timestamp) -> epoch ms``, whichever shape it has:
    told apart once (reading a function's signature costs more than calling it), then called per record."""
    if isinstance(assigner, TimestampAssigner):
        extract = assigner.extract_timestamp
        return lambda value, record_timestamp: int(extract(value, record_timestamp))
    if callable(assigner):
        if _arity(assigner) >= 2:
            return lambda value, record_timestamp: int(assigner(value, record_timestamp))
        return lambda value, record_timestamp: int(assigner(value))
    raise TypeError("the timestamp assigner is not a Python function")


def _arity(function: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 1
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty)

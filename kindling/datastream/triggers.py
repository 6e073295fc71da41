"""Window triggers with Flink's names: when a window's function runs, and whether its contents are purged."""

from __future__ import annotations

import enum
from typing import Any

from kindling.datastream.state import ReducingStateDescriptor, ValueStateDescriptor
from kindling.datastream.windows import TimeWindow
from kindling.durations import DurationLike, parse_duration, to_millis


class TriggerResult(enum.Enum):
    CONTINUE = (False, False)
    FIRE = (True, False)
    PURGE = (False, True)
    FIRE_AND_PURGE = (True, True)

    def is_fire(self) -> bool:
        return self.value[0]

    def is_purge(self) -> bool:
        return self.value[1]


class Trigger:
    """Decides per window, on each element and timer, whether to fire (and/or purge)."""

    def on_element(self, element: Any, timestamp: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        raise NotImplementedError

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return False

    def on_merge(self, window: TimeWindow, ctx: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot be used with merging (session) windows")

    def clear(self, window: TimeWindow, ctx: Any) -> None:
        pass


class EventTimeTrigger(Trigger):
    """Fires once the watermark passes the window's end; a late element (within allowed lateness) fires at once."""

    def on_element(self, element: Any, timestamp: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: Any) -> None:
        if window.max_timestamp() > ctx.get_current_watermark():
            ctx.register_event_time_timer(window.max_timestamp())

    def clear(self, window: TimeWindow, ctx: Any) -> None:
        ctx.delete_event_time_timer(window.max_timestamp())

    @staticmethod
    def create() -> "EventTimeTrigger":
        return EventTimeTrigger()


class ProcessingTimeTrigger(Trigger):
    """Fires when processing time passes the window's end."""

    def on_element(self, element: Any, timestamp: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        ctx.register_processing_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        return TriggerResult.FIRE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: Any) -> None:
        ctx.register_processing_time_timer(window.max_timestamp())

    def clear(self, window: TimeWindow, ctx: Any) -> None:
        ctx.delete_processing_time_timer(window.max_timestamp())

    @staticmethod
    def create() -> "ProcessingTimeTrigger":
        return ProcessingTimeTrigger()


class CountTrigger(Trigger):
    """Fires every ``count`` elements of a window."""

    def __init__(self, count: int) -> None:
        if count <= 0:
            raise ValueError(f"CountTrigger needs a positive count, got {count}")
        self.count = count
        self._state = ReducingStateDescriptor("count", lambda a, b: a + b)

    @staticmethod
    def of(count: int) -> "CountTrigger":
        return CountTrigger(count)

    def on_element(self, element: Any, timestamp: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        seen = ctx.get_partitioned_state(self._state)
        seen.add(1)
        if seen.get() >= self.count:
            seen.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: Any) -> None:
        ctx.merge_partitioned_state(self._state)

    def clear(self, window: TimeWindow, ctx: Any) -> None:
        ctx.get_partitioned_state(self._state).clear()


class ContinuousEventTimeTrigger(Trigger):
    """Fires every ``interval`` of event time (early results) and at the window's end."""

    def __init__(self, interval_ms: int) -> None:
        self.interval = interval_ms
        self._state = ValueStateDescriptor("fire-time")

    @staticmethod
    def of(interval: DurationLike) -> "ContinuousEventTimeTrigger":
        return ContinuousEventTimeTrigger(to_millis(parse_duration(interval, name="interval")))

    def on_element(self, element: Any, timestamp: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        fire_time = ctx.get_partitioned_state(self._state)
        if fire_time.value() is None:
            start = timestamp - (timestamp % self.interval)
            next_fire = start + self.interval
            ctx.register_event_time_timer(next_fire)
            fire_time.update(next_fire)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        if time == window.max_timestamp():
            return TriggerResult.FIRE
        fire_time = ctx.get_partitioned_state(self._state)
        if fire_time.value() == time:
            fire_time.clear()
            fire_time.update(time + self.interval)
            ctx.register_event_time_timer(time + self.interval)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def clear(self, window: TimeWindow, ctx: Any) -> None:
        fire_time = ctx.get_partitioned_state(self._state)
        if fire_time.value() is not None:
            ctx.delete_event_time_timer(fire_time.value())
            fire_time.clear()


class PurgingTrigger(Trigger):
    """Wraps a trigger: every FIRE becomes FIRE_AND_PURGE."""

    def __init__(self, nested: Trigger) -> None:
        self.nested = nested

    @staticmethod
    def of(nested: Trigger) -> "PurgingTrigger":
        return PurgingTrigger(nested)

    @staticmethod
    def _purging(result: TriggerResult) -> TriggerResult:
        return TriggerResult.FIRE_AND_PURGE if result.is_fire() else result

    def on_element(self, element: Any, timestamp: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        return self._purging(self.nested.on_element(element, timestamp, window, ctx))

    def on_event_time(self, time: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        return self._purging(self.nested.on_event_time(time, window, ctx))

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        return self._purging(self.nested.on_processing_time(time, window, ctx))

    def can_merge(self) -> bool:
        return self.nested.can_merge()

    def on_merge(self, window: TimeWindow, ctx: Any) -> None:
        self.nested.on_merge(window, ctx)

    def clear(self, window: TimeWindow, ctx: Any) -> None:
        self.nested.clear(window, ctx)

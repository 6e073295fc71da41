"""Flink's WindowOperator in the keyed operator: windows as keyed state, triggers on namespaced timers.

Used when a window needs more than Spark's built-in windowed aggregation gives: a
ProcessWindowFunction, a custom trigger, an evictor, allowed lateness, a late-data side output,
or a window after another keyed operator. Semantics follow Flink: an element is added to every
window it belongs to unless that window is past ``max_timestamp + allowed_lateness`` at the
current watermark; an element dropped from all its windows goes to the late-data side output;
a window's state is removed at its cleanup time.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Tuple

from kindling.datastream.context import RuntimeContext
from kindling.datastream.evictors import Evictor, TimestampedValue
from kindling.datastream.process import invoker
from kindling.datastream.state import KeyState, ReducingStateDescriptor, StateDescriptor, state_handle
from kindling.datastream.timers import MAX_WATERMARK, TimeDomain, TimerService
from kindling.datastream.triggers import Trigger, TriggerResult
from kindling.datastream.window_functions import WindowContext
from kindling.datastream.windows import EventTimeSessionWindows, TimeWindow, WindowAssigner

WINDOWS = "\x00windows"
WINDOW_TIMERS = "\x00window-timers"


class _WindowState(KeyState):
    """A window's trigger state: a dict inside the key's state record."""

    def __init__(self, parent: KeyState, data: Dict[str, Any]) -> None:
        super().__init__(data, parent.now_ms)
        self._parent = parent

    @property
    def dirty(self) -> bool:  # type: ignore[override]
        return self._parent.dirty

    @dirty.setter
    def dirty(self, changed: bool) -> None:
        """A change of the trigger's state is a change of the key's state (which the runner writes back)."""
        if changed:
            self._parent.dirty = True


class TriggerContext:
    """Flink's Trigger.TriggerContext for the window being handled."""

    def __init__(self, operator: "WindowAdapter") -> None:
        self._op = operator
        self.window: Optional[TimeWindow] = None
        self.merged: List[TimeWindow] = []

    def get_current_watermark(self) -> int:
        return self._op.runner.watermark

    def get_current_processing_time(self) -> int:
        return self._op.runner.processing_time

    def register_event_time_timer(self, time: int) -> None:
        self._op.register_timer(TimeDomain.EVENT_TIME, time, self.window)

    def register_processing_time_timer(self, time: int) -> None:
        self._op.register_timer(TimeDomain.PROCESSING_TIME, time, self.window)

    def delete_event_time_timer(self, time: int) -> None:
        self._op.delete_timer(TimeDomain.EVENT_TIME, time, self.window)

    def delete_processing_time_timer(self, time: int) -> None:
        self._op.delete_timer(TimeDomain.PROCESSING_TIME, time, self.window)

    def get_partitioned_state(self, descriptor: StateDescriptor) -> Any:
        return state_handle(descriptor, lambda: self._op.trigger_state(self.window))

    def merge_partitioned_state(self, descriptor: StateDescriptor) -> None:
        if not isinstance(descriptor, ReducingStateDescriptor):
            raise TypeError("merge_partitioned_state supports ReducingStateDescriptor")
        target = self.get_partitioned_state(descriptor)
        for window in self.merged:
            value = state_handle(descriptor, lambda w=window: self._op.trigger_state(w)).get()
            if value is not None:
                target.add(value)


class WindowAdapter:
    """Runs windows for one key: contents per window, trigger decisions, evictions, the window function."""

    def __init__(self, assigner: WindowAssigner, trigger: Trigger, allowed_lateness_ms: int, late_tag: Optional[str],
                 emit: Callable[..., List[Any]], function: Any, incremental: Optional[Tuple[str, Any]],
                 evictor: Optional[Evictor], joined: bool = False) -> None:
        self.assigner = assigner
        self.trigger = trigger
        self.lateness = allowed_lateness_ms
        self.late_tag = late_tag
        self._emit = emit  # (key, window, values, context) -> outputs
        self._function = function
        self._incremental = incremental  # ("reduce", fn) or ("aggregate", AggregateFunction), or None
        self.evictor = evictor
        self.merging = isinstance(assigner, EventTimeSessionWindows)
        self.joined = joined  # a window join: elements keep their input index

    # --- adapter protocol -----------------------------------------------------------------------
    def open(self, runner: Any, runtime_context: RuntimeContext) -> None:
        self.runner = runner
        self.timer_service = TimerService(runner)
        self.ctx = TriggerContext(self)
        self.window_context = WindowContext(runner)
        if self._function is not None and hasattr(self._function, "open"):
            self._function._runtime_context = runtime_context
            self._function.open(runtime_context)

    def close(self) -> None:
        if self._function is not None and hasattr(self._function, "close"):
            self._function.close()

    def element(self, index: int, value: Any) -> List[Any]:
        runner = self.runner
        event_time = self.assigner.is_event_time
        timestamp = runner.timestamp if event_time else runner.processing_time
        if timestamp is None:
            raise ValueError("an event-time window got a record without event time; give the source a WatermarkStrategy")
        out: List[Any] = []
        skipped = True
        assign = getattr(self.assigner, "assign_element", None)
        windows = assign(value, timestamp) if assign is not None else self.assigner.assign_windows(timestamp)
        for window in windows:
            if self.merging:
                window = self._merge(window)
                if window is None:
                    continue
            if self._is_window_late(window):
                continue
            skipped = False
            self._add(window, index, value, timestamp)
            self.ctx.window = window
            result = self.trigger.on_element(value, timestamp, window, self.ctx)
            out += self._act(window, result)
            self._register_cleanup(window)
        if skipped and event_time and timestamp + self.lateness <= runner.watermark:
            if self.late_tag is not None:
                runner.emit_side(self.late_tag, value)
        return out

    def timer(self, timestamp: int) -> List[Any]:
        domain = self.runner.time_domain
        timers = self._timers()[domain.name]
        windows = timers.pop(timestamp, [])
        self.runner.state.touch()
        out: List[Any] = []
        for window in sorted(windows):
            if window not in self._windows():
                continue
            self.ctx.window = window
            if domain == TimeDomain.EVENT_TIME:
                result = self.trigger.on_event_time(timestamp, window, self.ctx)
            else:
                result = self.trigger.on_processing_time(timestamp, window, self.ctx)
            out += self._act(window, result)
            if self._cleanup_time(window) == timestamp and (domain == TimeDomain.EVENT_TIME) == self.assigner.is_event_time:
                self._clear_all(window)
        return out

    # --- timers namespaced by window -----------------------------------------------------------------
    def _timers(self) -> Dict[str, Dict[int, List[TimeWindow]]]:
        data = self.runner.state.data
        if WINDOW_TIMERS not in data:
            data[WINDOW_TIMERS] = {TimeDomain.EVENT_TIME.name: {}, TimeDomain.PROCESSING_TIME.name: {}}
        return data[WINDOW_TIMERS]

    def register_timer(self, domain: TimeDomain, time: int, window: Optional[TimeWindow]) -> None:
        at = self._timers()[domain.name].setdefault(int(time), [])
        if window not in at:
            at.append(window)
        self.runner.state.touch()
        service = self.timer_service
        (service.register_event_time_timer if domain == TimeDomain.EVENT_TIME else service.register_processing_time_timer)(time)

    def delete_timer(self, domain: TimeDomain, time: int, window: Optional[TimeWindow]) -> None:
        timers = self._timers()[domain.name]
        at = timers.get(int(time))
        if at and window in at:
            at.remove(window)
            self.runner.state.touch()
            if not at:
                del timers[int(time)]
                service = self.timer_service
                (service.delete_event_time_timer if domain == TimeDomain.EVENT_TIME else service.delete_processing_time_timer)(time)

    # --- window contents ------------------------------------------------------------------------
    def _windows(self) -> Dict[TimeWindow, Dict[str, Any]]:
        data = self.runner.state.data
        if WINDOWS not in data:
            data[WINDOWS] = {}
        return data[WINDOWS]

    def trigger_state(self, window: Optional[TimeWindow]) -> KeyState:
        entry = self._windows().setdefault(window, {"c": None, "t": {}})  # type: ignore[arg-type]
        return _WindowState(self.runner.state, entry["t"])

    def _add(self, window: TimeWindow, index: int, value: Any, timestamp: int) -> None:
        entry = self._windows().setdefault(window, {"c": None, "t": {}})
        contents = entry["c"]
        if self._incremental is not None and self.evictor is None:
            kind, function = self._incremental
            if kind == "reduce":
                entry["c"] = value if contents is None else function(contents, value)
            else:
                accumulator = function.create_accumulator() if contents is None else contents
                entry["c"] = function.add(value, accumulator)
        else:
            entry["c"] = (contents or []) + [(timestamp, index, value)]
        self.runner.state.touch()

    def _act(self, window: TimeWindow, result: TriggerResult) -> List[Any]:
        out: List[Any] = []
        entry = self._windows().get(window)
        if entry is None:
            return out
        if result.is_fire() and entry["c"] is not None:
            out = self._fire(window, entry)
        if result.is_purge():
            entry["c"] = None
            self.runner.state.touch()
        return out

    def _fire(self, window: TimeWindow, entry: Dict[str, Any]) -> List[Any]:
        from kindling.datastream.operator import Stamped

        return [Stamped(v, window.max_timestamp()) for v in self._fire_values(window, entry)]

    def _fire_values(self, window: TimeWindow, entry: Dict[str, Any]) -> List[Any]:
        contents = entry["c"]
        saved = self.runner.timestamp
        self.runner.timestamp = window.max_timestamp()  # a window's results carry its last millisecond
        self.window_context._window = window
        try:
            if self._incremental is not None and self.evictor is None:
                return self._emit(self.runner.current_key, window, [self._result(contents)], self.window_context)
            elements = [TimestampedValue((index, value), ts) for ts, index, value in contents]
            if self.evictor is not None:
                self.evictor.evict_before(elements, len(elements), window, self.ctx)
            out = self._emit(self.runner.current_key, window, self._fold([e.value for e in elements]), self.window_context)
            if self.evictor is not None:
                self.evictor.evict_after(elements, len(elements), window, self.ctx)
                entry["c"] = [(e.timestamp, e.value[0], e.value[1]) for e in elements] or None
                self.runner.state.touch()
            return out
        finally:
            self.runner.timestamp = saved

    def _fold(self, tagged: List[Tuple[int, Any]]) -> List[Any]:
        """Apply a pre-aggregation at fire time (evicting windows keep elements); joins keep the input index."""
        if self._incremental is None:
            return tagged if self.joined else [v for _, v in tagged]
        kind, function = self._incremental
        values = [v for _, v in tagged]
        if not values:
            return []
        if kind == "reduce":
            result = values[0]
            for value in values[1:]:
                result = function(result, value)
            return [result]
        accumulator = function.create_accumulator()
        for value in values:
            accumulator = function.add(value, accumulator)
        return [function.get_result(accumulator)]

    def _result(self, contents: Any) -> Any:
        kind, function = self._incremental  # type: ignore[misc]
        return contents if kind == "reduce" else function.get_result(contents)

    # --- lateness and cleanup -----------------------------------------------------------------
    def _cleanup_time(self, window: TimeWindow) -> int:
        if window.max_timestamp() >= MAX_WATERMARK:
            return MAX_WATERMARK  # a global (count) window is never cleaned up by time
        if not self.assigner.is_event_time:
            return window.max_timestamp()
        cleanup = window.max_timestamp() + self.lateness
        return cleanup if cleanup >= window.max_timestamp() else MAX_WATERMARK

    def _is_window_late(self, window: TimeWindow) -> bool:
        return self.assigner.is_event_time and self._cleanup_time(window) <= self.runner.watermark

    def _register_cleanup(self, window: TimeWindow) -> None:
        cleanup = self._cleanup_time(window)
        if cleanup == MAX_WATERMARK:
            return
        domain = TimeDomain.EVENT_TIME if self.assigner.is_event_time else TimeDomain.PROCESSING_TIME
        self.register_timer(domain, cleanup, window)

    def _clear_all(self, window: TimeWindow) -> None:
        self.ctx.window = window
        self.trigger.clear(window, self.ctx)
        self._windows().pop(window, None)
        cleanup = self._cleanup_time(window)
        domain = TimeDomain.EVENT_TIME if self.assigner.is_event_time else TimeDomain.PROCESSING_TIME
        self.delete_timer(domain, cleanup, window)
        if not self._windows():
            self.runner.state.data.pop(WINDOWS, None)
        timers = self.runner.state.data.get(WINDOW_TIMERS)
        if timers and not any(timers.values()):
            self.runner.state.data.pop(WINDOW_TIMERS, None)
        self.runner.state.touch()

    # --- session windows ------------------------------------------------------------------------
    def _merge(self, new: TimeWindow) -> Optional[TimeWindow]:
        """Merge ``new`` with the key's overlapping session windows (Flink's MergingWindowSet)."""
        windows = self._windows()
        overlapping = [w for w in windows if w.start <= new.end and w.end >= new.start]
        if not overlapping:
            return new
        merged = TimeWindow(min([new.start] + [w.start for w in overlapping]), max([new.end] + [w.end for w in overlapping]))
        if overlapping == [merged]:
            return merged
        contents: Any = None
        for window in sorted(overlapping):
            entry = windows[window]
            contents = self._merge_contents(contents, entry["c"])
        target = windows.setdefault(merged, {"c": None, "t": {}}) if merged not in overlapping else windows[merged]
        self.ctx.window = merged
        self.ctx.merged = [w for w in overlapping if w != merged]
        if self.trigger.can_merge():
            self.trigger.on_merge(merged, self.ctx)
        for window in self.ctx.merged:
            self.ctx.window = window
            self.trigger.clear(window, self.ctx)
            cleanup = self._cleanup_time(window)
            self.delete_timer(TimeDomain.EVENT_TIME if self.assigner.is_event_time else TimeDomain.PROCESSING_TIME, cleanup, window)
            windows.pop(window, None)
        self.ctx.merged = []
        target["c"] = contents
        self.runner.state.touch()
        return merged

    def _merge_contents(self, left: Any, right: Any) -> Any:
        if left is None:
            return right
        if right is None:
            return left
        if self._incremental is not None and self.evictor is None:
            kind, function = self._incremental
            return function(left, right) if kind == "reduce" else function.merge(left, right)
        return sorted(left + right, key=lambda e: e[0])


def window_bounds(window: TimeWindow) -> Tuple[datetime, datetime]:
    """The window's start and end as timestamps (the ``window_start``/``window_end`` result fields)."""
    return (
        datetime.fromtimestamp(window.start / 1000, tz=timezone.utc),
        datetime.fromtimestamp(window.end / 1000, tz=timezone.utc),
    )


def function_emitter(function: Any, non_keyed: bool) -> Callable[..., List[Any]]:
    """How a window function turns a firing into outputs."""
    from kindling.datastream.window_functions import AllWindowFunction, ProcessAllWindowFunction, ProcessWindowFunction, WindowFunction

    if isinstance(function, ProcessAllWindowFunction) or (non_keyed and isinstance(function, ProcessWindowFunction)):
        call = invoker(function.process, 2)
        return lambda key, window, values, context: call(context,values)
    if isinstance(function, ProcessWindowFunction):
        call = invoker(function.process, 3)
        return lambda key, window, values, context: call(key, context,values)
    if isinstance(function, AllWindowFunction):
        call = invoker(function.apply, 2)
        return lambda key, window, values, context: call(window,values)
    if isinstance(function, WindowFunction):
        call = invoker(function.apply, 3)
        return lambda key, window, values, context: call(key, window,values)
    raise TypeError(f"expected a ProcessWindowFunction or WindowFunction, got {type(function).__name__}")

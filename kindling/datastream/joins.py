"""Joins with Flink's semantics: interval joins and window joins of two keyed streams.

Interval join (Flink's IntervalJoinOperator): each side buffers its records per key; a record
joins every buffered record of the other side whose timestamp lies in ``[t + lower, t + upper]``
(seen from the left); records are dropped from the buffer once the watermark passes the point
where no future partner can arrive, and records arriving behind the watermark are dropped.
Window join: both inputs go into the same windows per key; when a window fires the join function
runs on every pair (Flink builds it from coGroup the same way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional

from kindling.datastream import records
from kindling.datastream.context import RuntimeContext
from kindling.datastream.functions import as_callable, ship_by_value
from kindling.datastream.process import RichFunction, invoker
from kindling.datastream.timers import TimeDomain
from kindling.durations import DurationLike, parse_duration, to_millis

if TYPE_CHECKING:
    from kindling.datastream.stream import DataStream, KeyedStream, SingleOutputStreamOperator

BUFFERS = "\x00join-buffers"


class ProcessJoinFunction(RichFunction):
    """Gets each joined pair with a context holding both timestamps."""

    def process_element(self, left: Any, right: Any, ctx: "JoinContext") -> Any:
        raise NotImplementedError


class JoinFunction:
    def join(self, first: Any, second: Any) -> Any:
        raise NotImplementedError


class CoGroupFunction:
    def co_group(self, first: List[Any], second: List[Any]) -> Any:
        raise NotImplementedError


class JoinContext:
    def __init__(self, runner: Any) -> None:
        self._runner = runner
        self.left_ts = 0
        self.right_ts = 0

    def get_left_timestamp(self) -> int:
        return self.left_ts

    def get_right_timestamp(self) -> int:
        return self.right_ts

    def get_timestamp(self) -> int:
        return max(self.left_ts, self.right_ts)

    def output(self, output_tag: Any, value: Any) -> None:
        self._runner.emit_side(output_tag.tag_id, value)


class _IntervalJoinAdapter:
    def __init__(self, function: ProcessJoinFunction, lower: int, upper: int) -> None:
        self._function = function
        self.lower, self.upper = lower, upper

    def open(self, runner: Any, runtime_context: RuntimeContext) -> None:
        from kindling.datastream.timers import TimerService

        self.runner = runner
        self.timers = TimerService(runner)
        self.ctx = JoinContext(runner)
        self._function._runtime_context = runtime_context
        self._function.open(runtime_context)
        self._call = invoker(self._function.process_element, 3)

    def _buffers(self) -> List[dict]:
        data = self.runner.state.data
        if BUFFERS not in data:
            data[BUFFERS] = [{}, {}]
        return data[BUFFERS]

    def element(self, index: int, value: Any) -> List[Any]:
        runner = self.runner
        timestamp = runner.timestamp
        if timestamp is None:
            raise ValueError("interval_join needs event time on both inputs: give the sources a WatermarkStrategy")
        if timestamp < runner.watermark:
            return []  # late, as Flink drops it
        buffers = self._buffers()
        buffers[index].setdefault(timestamp, []).append(value)
        runner.state.touch()
        # Bounds seen from this side: the left sees [lower, upper], the right [-upper, -lower].
        low, high = (self.lower, self.upper) if index == 0 else (-self.upper, -self.lower)
        out: List[Any] = []
        for other_ts, others in sorted(buffers[1 - index].items()):
            if timestamp + low <= other_ts <= timestamp + high:
                for other in others:
                    left, right = (value, other) if index == 0 else (other, value)
                    self.ctx.left_ts, self.ctx.right_ts = (timestamp, other_ts) if index == 0 else (other_ts, timestamp)
                    saved = runner.timestamp
                    runner.timestamp = self.ctx.get_timestamp()
                    out += [(r, runner.timestamp) for r in self._call(left, right, self.ctx)]
                    runner.timestamp = saved
        cleanup = timestamp + high if high > 0 else timestamp
        self.timers.register_event_time_timer(cleanup)
        cleanups = runner.state.data.setdefault(BUFFERS + "t", {})
        cleanups.setdefault(cleanup, []).append((index, timestamp))
        return out

    def timer(self, timestamp: int) -> List[Any]:
        if self.runner.time_domain != TimeDomain.EVENT_TIME:
            return []
        cleanups = self.runner.state.data.get(BUFFERS + "t", {})
        buffers = self._buffers()
        for index, element_ts in cleanups.pop(timestamp, []):
            buffers[index].pop(element_ts, None)
        if not cleanups:
            self.runner.state.data.pop(BUFFERS + "t", None)
        if not buffers[0] and not buffers[1]:
            self.runner.state.data.pop(BUFFERS, None)
        self.runner.state.touch()
        return []

    def close(self) -> None:
        self._function.close()


class IntervalJoin:
    """``a.key_by(..).interval_join(b.key_by(..)).between(lower, upper).process(ProcessJoinFunction)``."""

    def __init__(self, left: "KeyedStream", right: "KeyedStream") -> None:
        self.left, self.right = left, right
        self._lower_exclusive = self._upper_exclusive = False

    def between(self, lower: DurationLike, upper: DurationLike) -> "IntervalJoin":
        """Bounds relative to the left record's timestamp; negative bounds are written as '-2 s' or -2000."""
        self.lower, self.upper = _signed_ms(lower, "lower"), _signed_ms(upper, "upper")
        if self.lower > self.upper:
            raise ValueError(f"interval_join: lower bound ({lower}) must not exceed the upper bound ({upper})")
        return self

    def lower_bound_exclusive(self) -> "IntervalJoin":
        self._lower_exclusive = True
        return self

    def upper_bound_exclusive(self) -> "IntervalJoin":
        self._upper_exclusive = True
        return self

    def process(self, function: ProcessJoinFunction, output_type: Optional[records.TypeLike] = None) -> "SingleOutputStreamOperator":
        if not hasattr(self, "lower"):
            raise ValueError("interval_join needs between(lower, upper) before process(...)")
        if not isinstance(function, ProcessJoinFunction):
            raise TypeError(f"interval_join process takes a ProcessJoinFunction, got {type(function).__name__}")
        if not (self.left._event_time and self.right._event_time):
            raise ValueError("interval_join needs event time on both inputs: give the sources a WatermarkStrategy")
        ship_by_value(function)
        lower = self.lower + (1 if self._lower_exclusive else 0)
        upper = self.upper - (1 if self._upper_exclusive else 0)
        out_user = records.as_struct(output_type) if output_type is not None else self.left.schema
        left, right = self.left, self.right
        adapter = _TimestampedOutput(_IntervalJoinAdapter(function, lower, upper))
        inputs = [(left._df, list(left.keys), left.schema), (right._df, list(right.keys), right.schema)]
        return left._keyed_operation(adapter, "IntervalJoin", out_user, inputs, len(left.keys),
                                     bounded=left.is_bounded and right.is_bounded, upstream=[right])


class _TimestampedOutput:
    """Gives each joined record the pair's timestamp (the later of the two), as Flink does."""

    def __init__(self, inner: _IntervalJoinAdapter) -> None:
        self._inner = inner
        self._function = inner._function

    def open(self, runner: Any, runtime_context: RuntimeContext) -> None:
        self._runner = runner
        self._inner.open(runner, runtime_context)

    def element(self, index: int, value: Any) -> List[Any]:
        pairs = self._inner.element(index, value)
        from kindling.datastream.operator import Stamped

        return [Stamped(result, ts) for result, ts in pairs]

    def timer(self, timestamp: int) -> List[Any]:
        return self._inner.timer(timestamp)

    def close(self) -> None:
        self._inner.close()


def _signed_ms(value: Any, name: str) -> int:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    text = str(value).strip()
    if text.startswith("-"):
        return -to_millis(parse_duration(text[1:], name=name))
    return to_millis(parse_duration(value, name=name))


class JoinedStreams:
    """``a.join(b).where(key_a).equal_to(key_b).window(assigner).apply(join_function)``."""

    def __init__(self, first: "DataStream", second: "DataStream", co_group: bool = False) -> None:
        self.first, self.second = first, second
        self._co_group = co_group
        self._where: Any = None
        self._equal: Any = None
        self._assigner: Any = None
        self._trigger: Any = None
        self._lateness = 0

    def where(self, key_selector: Any) -> "JoinedStreams":
        self._where = key_selector
        return self

    def equal_to(self, key_selector: Any) -> "JoinedStreams":
        self._equal = key_selector
        return self

    def window(self, assigner: Any) -> "JoinedStreams":
        if self._where is None or self._equal is None:
            raise ValueError("a window join needs where(...) and equal_to(...) before window(...)")
        self._assigner = assigner
        return self

    def trigger(self, trigger: Any) -> "JoinedStreams":
        self._trigger = trigger
        return self

    def allowed_lateness(self, lateness: DurationLike) -> "JoinedStreams":
        self._lateness = to_millis(parse_duration(lateness, name="allowed_lateness"))
        return self

    def apply(self, function: Any, output_type: Optional[records.TypeLike] = None) -> "SingleOutputStreamOperator":
        """Run the join function on every pair of a firing window (or a CoGroupFunction on both lists)."""
        from kindling.datastream.triggers import EventTimeTrigger, ProcessingTimeTrigger
        from kindling.datastream.window_operator import WindowAdapter

        if self._assigner is None:
            raise ValueError("a window join needs window(...) before apply(...)")
        left, right = self.first.key_by(self._where), self.second.key_by(self._equal)
        if self._co_group:
            call = as_callable(function, "co_group")

            def emit(key: Any, window: Any, values: list, context: Any) -> list:
                firsts = [v for i, v in values if i == 0]
                seconds = [v for i, v in values if i == 1]
                produced = call(firsts, seconds)
                return list(produced) if produced is not None else []
        else:
            call = as_callable(function, "join")

            def emit(key: Any, window: Any, values: list, context: Any) -> list:
                firsts = [v for i, v in values if i == 0]
                seconds = [v for i, v in values if i == 1]
                return [call(a, b) for a in firsts for b in seconds]

        ship_by_value(function)
        trigger = self._trigger or (EventTimeTrigger() if self._assigner.is_event_time else ProcessingTimeTrigger())
        adapter = WindowAdapter(self._assigner, trigger, self._lateness, None, emit, None, None, None, joined=True)
        adapter._function = function  # type: ignore[attr-defined]
        out_user = records.as_struct(output_type) if output_type is not None else left.schema
        inputs = [(left._df, list(left.keys), left.schema), (right._df, list(right.keys), right.schema)]
        return left._keyed_operation(adapter, "WindowJoin", out_user, inputs, len(left.keys),
                                     bounded=left.is_bounded and right.is_bounded, upstream=[right])

"""Keyed operators chained over event time in one Spark query: the watermark reaches the second one.

One bounded input in micro-batches of two records (bound 1 s), so each batch's watermark is
known; the comments work out when each record reaches each operator.
"""

from datetime import datetime, timedelta, timezone

import pytest

from kindling import KeyedProcessFunction, TumblingEventTimeWindows, WatermarkStrategy
from kindling.datastream.side_outputs import OutputTag
from kindling.datastream.state import MapStateDescriptor

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
T0_MS = int(T0.timestamp() * 1000)
SCHEMA = "k STRING, id STRING, ts TIMESTAMP"
LATE = OutputTag("late", SCHEMA)
# batch:   0                           1                              2                            3
DATA = [("a", "a1", 1.0), ("a", "a3", 3.0), ("a", "a2", 2.5), ("b", "b35", 3.5), ("a", "a6", 6.0), ("a", "a0", 0.5),
        ("b", "b5", 5.5), ("a", "a7", 7.0)]
# Watermarks: batch 1: 3 - 1 = 2 s, batch 2: 3.5 - 1 = 2.5 s, batch 3: 6 - 1 = 5 s, then 6 s, then the end.


def readings(env):
    strategy = WatermarkStrategy.for_bounded_out_of_orderness("1 s").with_timestamp_assigner("ts")
    return env.from_collection([(k, i, T0 + timedelta(seconds=t)) for k, i, t in DATA], SCHEMA, strategy, rows_per_batch=2)


class SortByTime(KeyedProcessFunction):
    """Emits each key's records in timestamp order, each when the watermark passes it; late ones to a side output."""

    def open(self, ctx):
        self.pending = ctx.get_map_state(MapStateDescriptor("pending"))

    def process_element(self, value, ctx):
        at = ctx.timestamp()
        if at < ctx.timer_service().current_watermark():
            ctx.output(LATE, value)
            return
        self.pending.put(at, (self.pending.get(at) or []) + [tuple(value)])
        ctx.timer_service().register_event_time_timer(at)

    def on_timer(self, timestamp, ctx):
        yield from self.pending.get(timestamp)
        self.pending.remove(timestamp)


class CountPerFiveSeconds(KeyedProcessFunction):
    """Per key and 5-second bucket, the ids in arrival order, emitted by an event-time timer at the bucket's end."""

    def open(self, ctx):
        self.ids = ctx.get_map_state(MapStateDescriptor("ids"))

    def process_element(self, value, ctx):
        start = (ctx.timestamp() - T0_MS) // 5000 * 5000
        self.ids.put(start, (self.ids.get(start) or []) + [value.id])
        ctx.timer_service().register_event_time_timer(T0_MS + start + 4999)

    def on_timer(self, timestamp, ctx):
        start = timestamp - 4999 - T0_MS
        yield ctx.get_current_key(), start // 1000, ",".join(self.ids.get(start))
        self.ids.remove(start)


def test_process_function_after_process_function_and_its_side_output(env):
    # SortByTime emits a1 (batch 1), a2 (batch 2), a3 and b35 (batch 3, watermark 5 s), the rest at the
    # end; a0 is late and goes to the side output in batch 2, which is unioned with the main output.
    # CountPerFiveSeconds's timers at 4.999 s fire in batch 3, after the records SortByTime's timers
    # emitted in that batch (in Flink they precede the watermark that fires them).
    sorted_ = readings(env).key_by("k").process(SortByTime())
    both = sorted_.union(sorted_.get_side_output(LATE))
    buckets = both.key_by("k").process(CountPerFiveSeconds(), "k STRING, bucket BIGINT, ids STRING")
    got = sorted(tuple(r) for r in buckets.execute_and_collect())
    assert got == [("a", 0, "a1,a2,a0,a3"), ("a", 5, "a6,a7"), ("b", 0, "b35"), ("b", 5, "b5")]


def test_window_after_process_function(env):
    # 2-second windows over SortByTime's output: [0, 2) for a fires in batch 2; a3 and b35 reach the
    # window operator in batch 3 just before the watermark (5 s) that closes [2, 4), so they count.
    sorted_ = readings(env).key_by("k").process(SortByTime())
    counts = sorted_.key_by("k").window(TumblingEventTimeWindows.of("2 s")).count()
    got = sorted((r.k, int(r.window_start.timestamp() - T0.timestamp()), r["count"]) for r in counts.execute_and_collect())
    assert got == [("a", 0, 1), ("a", 2, 2), ("a", 6, 2), ("b", 2, 1), ("b", 4, 1)]


class Alert(KeyedProcessFunction):
    def process_element(self, value, ctx):
        ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() + 1000)
        yield value


def test_keyed_operator_after_processing_time_timers_is_refused(env):
    alerts = readings(env).key_by("k").process(Alert())
    with pytest.raises(ValueError, match=r"'Alert', which registers processing-time timers.*'CountPerFiveSeconds' would never see"):
        alerts.key_by("k").process(CountPerFiveSeconds(), "k STRING, bucket BIGINT, ids STRING")
    # A rolling aggregation needs no watermark: it may follow.
    assert alerts.key_by("k").max("ts").schema.fieldNames() == ["k", "id", "ts"]

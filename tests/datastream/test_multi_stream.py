"""Connected streams, broadcast state, interval and window joins."""

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType

from kindling import WatermarkStrategy
from kindling.datastream.broadcast import KeyedBroadcastProcessFunction
from kindling.datastream.connected import CoFlatMapFunction, CoMapFunction, KeyedCoProcessFunction
from kindling.datastream.joins import ProcessJoinFunction
from kindling.datastream.state import MapStateDescriptor, ValueStateDescriptor

sys.path.insert(0, str(Path(__file__).parent))

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
T0_MS = int(T0.timestamp() * 1000)
RULES = MapStateDescriptor("rules")


def ts(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def ms(seconds: float) -> int:
    return T0_MS + int(seconds * 1000)


class Threshold(KeyedBroadcastProcessFunction):
    """Alerts when a reading exceeds the broadcast threshold for its kind."""

    def process_element(self, value, ctx):
        limit = ctx.get_broadcast_state(RULES).get("max")
        yield ctx.get_current_key(), value["n"], limit, limit is not None and value["n"] > limit

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(RULES).put("max", value["limit"])


def test_broadcast_rules_reach_every_key_including_keys_seen_before_the_rule():
    from keyed_harness import run

    from kindling.datastream.broadcast import _BroadcastAdapter

    out = StructType([StructField("k", StringType()), StructField("n", IntegerType()), StructField("limit", IntegerType()),
                      StructField("alert", BooleanType())])
    batches = [
        (0, [("a", 0, ms(1), {"n": 5}), ("b", 0, ms(1), {"n": 50})]),  # no rule yet
        (0, [(None, 1, ms(2), {"limit": 10})]),                        # the rule arrives; no keyed records
        (0, [("a", 0, ms(3), {"n": 20}), ("c", 0, ms(3), {"n": 3})]),  # a was seen before the rule, c is new
        (0, [(None, 1, ms(4), {"limit": 30}), ("b", 0, ms(4), {"n": 40})]),  # same batch: the rule first
    ]
    rows = run(_BroadcastAdapter(Threshold()), out, [["n"], ["limit"]], batches, broadcast=True)
    assert [(r.k, r.n, r.limit, r.alert) for r in rows] == [
        ("a", 5, None, False), ("b", 50, None, False),
        ("a", 20, 10, True), ("c", 3, 10, False),
        ("b", 40, 30, True),
    ]


class Pair(ProcessJoinFunction):
    def process_element(self, left, right, ctx):
        yield left["id"], right["id"], ctx.get_timestamp() - T0_MS


def test_interval_join_bounds_and_cleanup():
    from keyed_harness import run

    from kindling.datastream.joins import _IntervalJoinAdapter, _TimestampedOutput

    out = StructType([StructField("l", StringType()), StructField("r", StringType()), StructField("at", LongType())])
    adapter = _TimestampedOutput(_IntervalJoinAdapter(Pair(), -1000, 2000))  # right within [left - 1 s, left + 2 s]
    batches = [
        (0, [("k", 0, ms(10), {"id": "L10"}), ("k", 1, ms(9), {"id": "R9"}), ("k", 1, ms(12), {"id": "R12"}), ("k", 1, ms(13), {"id": "R13"})]),
        (ms(11), [("k", 1, ms(11.5), {"id": "R11.5"}), ("k", 0, ms(12), {"id": "L12"})]),
        (ms(20), [("k", 1, ms(12.5), {"id": "late"}), ("k", 0, ms(21), {"id": "L21"}), ("k", 1, ms(22), {"id": "R22"})]),
    ]
    rows = run(adapter, out, [["id"], ["id"]], batches)
    got = [(r.l, r.r, r.at, r["__kindling_rowtime"] // 1000 - T0_MS) for r in rows]
    assert got == [
        ("L10", "R9", 10000, 10000), ("L10", "R12", 12000, 12000),
        ("L10", "R11.5", 11500, 11500), ("L12", "R11.5", 12000, 12000), ("L12", "R12", 12000, 12000), ("L12", "R13", 13000, 13000),
        ("L21", "R22", 22000, 22000),   # the record at 12.5 s is behind the watermark (20 s): dropped
    ]


class Alarm(KeyedCoProcessFunction):
    """Smoke switches a sensor's alarm on or off; temperatures above 30 alarm while smoke is on."""

    def open(self, ctx):
        self.smoke = ctx.get_state(ValueStateDescriptor("smoke"))

    def process_element1(self, value, ctx):
        if self.smoke.value() and value.t > 30:
            yield ctx.get_current_key(), value.t

    def process_element2(self, value, ctx):
        self.smoke.update(value.on)


class Label(CoMapFunction):
    def map1(self, value):
        return f"temp {value.id} {value.t}"

    def map2(self, value):
        return f"smoke {value.id} {value.on}"


class Words(CoFlatMapFunction):
    def flat_map1(self, value):
        yield value.id

    def flat_map2(self, value):
        return []


@pytest.mark.integration
def test_connect_co_map_and_keyed_co_process_on_spark(env):
    strategy = WatermarkStrategy.for_bounded_out_of_orderness("1 s").with_timestamp_assigner("ts")
    temps = env.from_collection([("s1", ts(1), 35.0), ("s2", ts(2), 40.0), ("s1", ts(5), 36.0), ("s2", ts(6), 20.0)],
                                "id STRING, ts TIMESTAMP, t DOUBLE", strategy, rows_per_batch=2)
    smoke = env.from_collection([("s1", ts(0), True), ("s2", ts(3), True)], "id STRING, ts TIMESTAMP, on BOOLEAN", strategy, rows_per_batch=1)
    alarms = temps.connect(smoke).key_by("id", "id").process(Alarm(), "id STRING, t DOUBLE").execute_and_collect()
    # s1's smoke is on from the start; s2's smoke comes on at 3 s, before its 20-degree reading only.
    assert ("s1", 36.0) in [tuple(r) for r in alarms]
    assert all(r.id == "s1" or r.t > 30 for r in alarms)
    labels = temps.connect(smoke).map(Label(), "line STRING").execute_and_collect()
    assert sorted(r.line for r in labels) == sorted(
        ["temp s1 35.0", "temp s2 40.0", "temp s1 36.0", "temp s2 20.0", "smoke s1 True", "smoke s2 True"]
    )


def test_window_join_pairs_records_of_the_same_key_and_window():
    from keyed_harness import run

    from kindling import TumblingEventTimeWindows
    from kindling.datastream.triggers import EventTimeTrigger
    from kindling.datastream.window_operator import WindowAdapter

    def emit(key, window, values, context):
        lefts = [v for i, v in values if i == 0]
        rights = [v for i, v in values if i == 1]
        return [(key, a["id"], b["id"], (window.start - T0_MS) // 1000) for a in lefts for b in rights]

    adapter = WindowAdapter(TumblingEventTimeWindows.of("10 s"), EventTimeTrigger(), 0, None, emit, None, None, None, joined=True)
    out = StructType([StructField("k", StringType()), StructField("a", StringType()), StructField("b", StringType()), StructField("w", LongType())])
    batches = [
        (0, [("k", 0, ms(1), {"id": "a1"}), ("k", 1, ms(2), {"id": "b2"}), ("k", 1, ms(12), {"id": "b12"})]),
        (ms(11), [("k", 0, ms(5), {"id": "late"}), ("k", 0, ms(15), {"id": "a15"}), ("k", 0, ms(16), {"id": "a16"})]),
        (2**62, []),
    ]
    rows = run(adapter, out, [["id"], ["id"]], batches)
    assert [(r.a, r.b, r.w) for r in rows] == [("a1", "b2", 0), ("a15", "b12", 10), ("a16", "b12", 10)]

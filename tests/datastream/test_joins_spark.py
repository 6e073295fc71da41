"""Interval join and window join end to end on Spark: two out-of-order sources, late records dropped.

Both sources deliver two records per micro-batch with a 1 s bound, so each batch's watermark
(the smaller of the two sources' watermarks, as in Flink) is known and the expected pairs can be
worked out by hand in the comments.
"""

from datetime import datetime, timedelta, timezone

import pytest

from kindling import TumblingEventTimeWindows, WatermarkStrategy
from kindling.datastream.joins import JoinFunction, ProcessJoinFunction
from kindling.datastream.process import ProcessFunction

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
T0_MS = int(T0.timestamp() * 1000)
SCHEMA = "k STRING, id STRING, ts TIMESTAMP"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def sources(env, left, right):
    strategy = WatermarkStrategy.for_bounded_out_of_orderness("1 s").with_timestamp_assigner("ts")
    rows = lambda records: [(k, name, at(t)) for k, name, t in records]  # noqa: E731
    return (env.from_collection(rows(left), SCHEMA, strategy, rows_per_batch=2),
            env.from_collection(rows(right), SCHEMA, strategy, rows_per_batch=2))


class Pair(ProcessJoinFunction):
    def process_element(self, left, right, ctx):
        yield left.id, right.id, (ctx.get_timestamp() - T0_MS) / 1000


class WithEventTime(ProcessFunction):
    """Appends the record's event time (seconds after T0) as the operator downstream sees it."""

    def process_element(self, value, ctx):
        yield (*value, (ctx.timestamp() - T0_MS) / 1000)


def test_interval_join_on_spark(env):
    # batch:          0                        1                      2
    left = [("a", "L1", 1), ("b", "L2", 2), ("a", "L5", 5), ("a", "L3", 3), ("b", "L9", 9), ("a", "L8", 8)]
    right = [("a", "R2", 2), ("b", "R6", 6), ("a", "R4", 4), ("a", "R0", 0.5), ("a", "R7", 7), ("b", "R1", 1)]
    # Watermarks: batch 0 none, batch 1 min(2, 6) - 1 = 1 s, batch 2 min(5, 6) - 1 = 4 s.
    # A right record joins a left one when left - 1 s <= right <= left + 2 s.
    # batch 0: L1-R2.  batch 1: R0 (0.5 < 1) is late; L3-R2, L5-R4, L3-R4.
    # batch 2: L1 and R2 were cleaned up at 3 s; L8-R7, L5-R7; R1 (1 < 4) is late.
    a, b = sources(env, left, right)
    joined = (a.key_by("k").interval_join(b.key_by("k")).between("-1 s", "2 s")
              .process(Pair(), "l STRING, r STRING, pair_ts DOUBLE")
              .process(WithEventTime(), "l STRING, r STRING, pair_ts DOUBLE, event_time DOUBLE"))
    got = sorted(tuple(r) for r in joined.execute_and_collect())
    # Each pair carries the later of its two timestamps, as Flink's interval join does.
    assert got == [("L1", "R2", 2.0, 2.0), ("L3", "R2", 3.0, 3.0), ("L3", "R4", 4.0, 4.0),
                   ("L5", "R4", 5.0, 5.0), ("L5", "R7", 7.0, 7.0), ("L8", "R7", 8.0, 8.0)]


class Both(JoinFunction):
    def join(self, first, second):
        return first.k, first.id, second.id


def test_window_join_on_spark(env):
    # batch:          0                        1                      2
    left = [("a", "A1", 1), ("b", "B2", 2), ("a", "A6", 6), ("a", "A3", 3), ("a", "A11", 11), ("b", "B4", 4)]
    right = [("a", "X2", 2), ("b", "Y7", 7), ("a", "X4", 4), ("b", "Y3", 3), ("a", "X12", 12), ("a", "X0", 0.5)]
    # Watermarks: batch 1 min(2, 7) - 1 = 1 s, batch 2 min(6, 7) - 1 = 5 s: window [0, 5) fires at the
    # start of batch 2, so B4 and X0 arrive after it and are dropped (they would pair with Y3, A1, A3).
    a, b = sources(env, left, right)
    joined = (a.join(b).where("k").equal_to("k").window(TumblingEventTimeWindows.of("5 s"))
              .apply(Both(), "k STRING, l STRING, r STRING"))
    got = sorted(tuple(r) for r in joined.execute_and_collect())
    assert got == [("a", "A1", "X2"), ("a", "A1", "X4"), ("a", "A11", "X12"), ("a", "A3", "X2"), ("a", "A3", "X4"),
                   ("b", "B2", "Y3")]

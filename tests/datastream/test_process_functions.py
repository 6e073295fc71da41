"""Keyed process functions, keyed state with TTL, timers, side outputs and rolling aggregations, end to end on Spark.

Inputs are bounded collections spread over micro-batches (``rows_per_batch``), so the watermark of
each batch is known: Spark's watermark is the previous batches' max event time minus the bound.
"""

from datetime import datetime, timedelta, timezone

import pytest
from pyspark.sql import functions as F

from kindling import WatermarkStrategy
from kindling.datastream.functions import AggregateFunction
from kindling.datastream.process import KeyedProcessFunction, ProcessFunction
from kindling.datastream.side_outputs import OutputTag
from kindling.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from kindling.datastream.timers import MAX_WATERMARK, TimeDomain

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
T0_MS = int(T0.timestamp() * 1000)


def ts(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def ms(seconds: float) -> int:
    return T0_MS + int(seconds * 1000)


SCHEMA = "k STRING, ts TIMESTAMP, n INT"
LATE = OutputTag("late", SCHEMA)


def strategy(bound: str = "1 s") -> WatermarkStrategy:
    return WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner("ts")


class CountWithTimers(KeyedProcessFunction):
    """Counts per key, sends records at or behind the watermark to a side output, and sets a timer 1 s after each record."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def process_element(self, value, ctx):
        if ctx.timestamp() <= ctx.timer_service().current_watermark():
            ctx.output(LATE, value)
            return
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)  # one timer per key and time
        yield ctx.get_current_key(), self.count.value(), f"element {value.n}", ctx.timer_service().current_watermark()

    def on_timer(self, timestamp, ctx, out):  # Java-style collector works too
        assert ctx.time_domain() == TimeDomain.EVENT_TIME and ctx.timestamp() == timestamp
        out.collect((ctx.get_current_key(), self.count.value(), f"timer {timestamp - T0_MS}", ctx.timer_service().current_watermark()))


def test_keyed_process_function_state_timers_and_late_side_output(env):
    data = [("a", ts(1), 1), ("b", ts(2), 2),      # batch 0: watermark none yet
            ("a", ts(5), 3), ("a", ts(3), 4),      # batch 1: watermark 1 s; 3 is out of order, not late
            ("b", ts(10), 5), ("a", ts(1), 6),     # batch 2: watermark 4 s; a@1 is late
            ("a", ts(20), 7)]                      # batch 3: watermark 9 s; end of input: +inf
    stream = env.from_collection(data, SCHEMA, strategy(), rows_per_batch=2)
    processed = stream.key_by("k").process(CountWithTimers(), "k STRING, c INT, what STRING, wm BIGINT")
    rows = processed.execute_and_collect()
    by_key = {}
    for r in rows:
        by_key.setdefault(r.k, []).append((r.c, r.what, r.wm))
    none = -(2**63)
    # A batch's watermark arrives before its records (as a Flink watermark precedes later records):
    # timers it passes fire first, once each, in time order.
    assert by_key["a"] == [
        (1, "element 1", none),
        (2, "element 3", ms(1)), (3, "element 4", ms(1)),
        (3, "timer 2000", ms(4)), (3, "timer 4000", ms(4)),
        (3, "timer 6000", ms(9)), (4, "element 7", ms(9)),
        (4, "timer 21000", MAX_WATERMARK),                    # end of input fires the rest
    ]
    assert by_key["b"] == [(1, "element 2", none), (1, "timer 3000", ms(4)), (2, "element 5", ms(4)), (2, "timer 11000", MAX_WATERMARK)]
    late = processed.get_side_output(LATE).execute_and_collect()
    assert [(r.k, r.n) for r in late] == [("a", 6)]


class Average(AggregateFunction):
    def create_accumulator(self):
        return (0, 0)

    def add(self, value, acc):
        return acc[0] + value, acc[1] + 1

    def get_result(self, acc):
        return acc[0] / acc[1]

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


class AllStates(KeyedProcessFunction):
    """Uses every kind of keyed state, and state with a tiny TTL next to state without."""

    def open(self, ctx):
        self.items = ctx.get_list_state(ListStateDescriptor("items"))
        self.by_parity = ctx.get_map_state(MapStateDescriptor("parity"))
        self.total = ctx.get_reducing_state(ReducingStateDescriptor("total", lambda a, b: a + b))
        self.avg = ctx.get_aggregating_state(AggregatingStateDescriptor("avg", Average()))
        short = ValueStateDescriptor("short")
        short.enable_time_to_live(StateTtlConfig.new_builder("1 ms").build())
        self.short = ctx.get_state(short)
        self.long = ctx.get_state(ValueStateDescriptor("long"))

    def process_element(self, value, ctx):
        seen_short, seen_long = self.short.value(), self.long.value()
        self.short.update(value.n)
        self.long.update(value.n)
        self.items.add(value.n)
        parity = "even" if value.n % 2 == 0 else "odd"
        self.by_parity.put(parity, (self.by_parity.get(parity) or 0) + 1)
        self.total.add(value.n)
        self.avg.add(value.n)
        yield (ctx.get_current_key(), value.n, str(self.items.get()), str(sorted(self.by_parity.items())),
               self.total.get(), self.avg.get(), seen_short, seen_long)


def test_list_map_reducing_aggregating_state_and_ttl_expiry(env):
    # One record per micro-batch: micro-batches are at least 100 ms apart, so the 1 ms TTL has passed by the next.
    data = [("a", ts(1), 1), ("a", ts(2), 2), ("b", ts(3), 5), ("a", ts(4), 3)]
    stream = env.from_collection(data, SCHEMA, strategy(), rows_per_batch=1)
    rows = stream.key_by("k").process(
        AllStates(), "k STRING, n INT, items STRING, parity STRING, total INT, avg DOUBLE, short INT, long INT").execute_and_collect()
    got = [(r.k, r.n, r.items, r.parity, r.total, r.avg, r.short, r.long) for r in rows]
    assert got == [
        ("a", 1, "[1]", "[('odd', 1)]", 1, 1.0, None, None),
        ("a", 2, "[1, 2]", "[('even', 1), ('odd', 1)]", 3, 1.5, None, 1),   # TTL state expired, plain state kept
        ("b", 5, "[5]", "[('odd', 1)]", 5, 5.0, None, None),
        ("a", 3, "[1, 2, 3]", "[('even', 1), ('odd', 2)]", 6, 2.0, None, 2),
    ]


def test_rolling_aggregations_emit_every_update(env):
    data = [("a", ts(1), 3), ("b", ts(2), 10), ("a", ts(3), 1), ("a", ts(4), 5), ("b", ts(5), 7)]
    # No event time: Spark gives an event-time watermark to one keyed operator per query only, and
    # rolling aggregations need none, so the six operators can share one query.
    stream = env.from_collection(data, SCHEMA, rows_per_batch=2)
    keyed = stream.key_by("k")
    label = lambda s, name: s.map(F.lit(name).alias("agg"), F.col("k"), F.col("ts"), F.col("n"))
    union = label(keyed.sum("n"), "sum").union(
        label(keyed.min("n"), "min"), label(keyed.max("n"), "max"), label(keyed.min_by("n"), "min_by"),
        label(keyed.max_by(2), "max_by"), label(keyed.reduce(lambda x, y: (x.k, y.ts, x.n * y.n)), "reduce"),
    )
    rows = union.execute_and_collect()
    got = {}
    for r in rows:
        got.setdefault((r.agg, r.k), []).append((r.ts.second, r.n))
    # sum/min/max keep the key's first record's other fields (ts 1 s for a); *_by return the whole record.
    assert got[("sum", "a")] == [(1, 3), (1, 4), (1, 9)]
    assert got[("sum", "b")] == [(2, 10), (2, 17)]
    assert got[("min", "a")] == [(1, 3), (1, 1), (1, 1)]
    assert got[("max", "a")] == [(1, 3), (1, 3), (1, 5)]
    assert got[("min_by", "a")] == [(1, 3), (3, 1), (3, 1)]
    assert got[("max_by", "a")] == [(1, 3), (1, 3), (4, 5)]
    assert got[("max_by", "b")] == [(2, 10), (2, 10)]
    assert got[("reduce", "a")] == [(1, 3), (3, 3), (4, 15)]


class Splitter(ProcessFunction):
    def process_element(self, value, ctx):
        if value.n % 2:
            ctx.output(ODD, (value.k, value.n * 100))
        else:
            yield value.k, value.n, ctx.timestamp() - T0_MS


ODD = OutputTag("odd", "k STRING, hundreds INT")


def test_process_function_on_a_non_keyed_stream_with_side_output(env):
    data = [("a", ts(1), 1), ("b", ts(2), 2), ("a", ts(3), 4), ("c", ts(4), 5)]
    stream = env.from_collection(data, SCHEMA, strategy(), rows_per_batch=2)
    split = stream.process(Splitter(), "k STRING, n INT, at BIGINT")
    assert sorted(tuple(r) for r in split.execute_and_collect()) == [("a", 4, 3000), ("b", 2, 2000)]
    assert sorted(tuple(r) for r in split.get_side_output(ODD).execute_and_collect()) == [("a", 100), ("c", 500)]


class Sums(KeyedProcessFunction):
    """A running sum per key, with the key as the function sees it."""

    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total"))

    def process_element(self, value, ctx):
        total = (self.total.value() or 0) + value["n"]
        self.total.update(total)
        yield ctx.get_current_key(), total


@pytest.mark.integration
def test_large_keys_beside_a_null_key_keep_their_own_state(env):
    """Keys travel to the keyed operator exactly: 2**62 + 1 and 2**62 + 2 differ only past a double's 53 bits,
    and a null key in the same batch must not turn the key column into floats."""
    big = 2**62
    rows = [(big + 1, 1), (big + 2, 10), (None, 100), (big + 1, 2), (big + 2, 20), (None, 200)]
    stream = env.from_collection(rows, "k BIGINT, n BIGINT", rows_per_batch=6)
    out = stream.key_by("k").process(Sums(), "k BIGINT, total BIGINT").execute_and_collect()
    assert sorted((r.k, r.total) for r in out if r.k is not None) == [(big + 1, 1), (big + 1, 3), (big + 2, 10), (big + 2, 30)]
    assert sorted(r.total for r in out if r.k is None) == [100, 300]


def kinds_of(row):
    return row[-1].split(";")


class Echo(KeyedProcessFunction):
    """Every record back as the function saw it, with a flag per field saying whether it arrived as None."""

    def process_element(self, value, ctx):
        yield tuple(value) + (";".join("N" if v is None else type(v).__name__ for v in value),)


@pytest.mark.integration
def test_every_field_type_reaches_a_keyed_function_exactly_with_its_nulls(env):
    """Records travel to the keyed operator as top-level columns (kindling.datastream.operator_columns): integers past
    a double's 53 bits, NaN apart from null, instants, and nested values come back as they went, nulls as None."""
    from decimal import Decimal

    when = datetime(2024, 2, 29, 13, 45, 30, 125000, tzinfo=timezone.utc)
    schema = ("k STRING, big BIGINT, small INT, d DOUBLE, f FLOAT, b BOOLEAN, t TIMESTAMP, day DATE, m DECIMAL(10, 2), "
              "s STRING, raw BINARY, xs ARRAY<BIGINT>, kv MAP<STRING, BIGINT>, st STRUCT<a: BIGINT, t: TIMESTAMP>")
    rows = [
        ("a", 2**62 + 1, -7, float("nan"), 1.5, True, when, when.date(), Decimal("12.34"), "x", b"\x00\x01", [1, None, 3],
         {"p": 1}, {"a": 2**62 + 3, "t": when}),
        ("a", None, None, None, None, None, None, None, None, None, None, None, None, None),
        ("b", -(2**62), 0, -0.5, None, False, None, when.date(), Decimal("-1.00"), "", b"", [], {}, {"a": None, "t": None}),
    ]
    stream = env.from_collection(rows, schema, rows_per_batch=3)
    out = stream.key_by("k").process(Echo(), schema + ", kinds STRING").execute_and_collect()
    got = sorted((tuple(r) for r in out), key=lambda r: (r[0], r[-1]))
    by_kinds = {r[-1]: r[:-1] for r in got}
    first, empty, second = got[1], got[0], got[2]
    assert empty[-1] == "str;" + ";".join(["N"] * 13)  # every null arrives as None, not NaN or 0
    assert first[1] == 2**62 + 1 and first[2] == -7 and first[3] != first[3]  # the BIGINT exact, NaN kept apart from null
    assert first[4:9] == (1.5, True, when.replace(tzinfo=None), when.date(), Decimal("12.34")) or \
        first[4:9] == (1.5, True, when, when.date(), Decimal("12.34"))
    assert first[9:11] == ("x", bytearray(b"\x00\x01")) or first[9:11] == ("x", b"\x00\x01")
    assert list(first[11]) == [1, None, 3] and dict(first[12]) == {"p": 1} and first[13]["a"] == 2**62 + 3
    assert kinds_of(first)[12] == "list"  # a map as kindling's functions see it: a list of (key, value) pairs
    assert second[1] == -(2**62) and second[2] == 0 and second[3] == -0.5 and second[4] is None and second[5] is False
    assert second[6] is None and list(second[11]) == [] and second[13]["a"] is None
    kinds = kinds_of(first)
    assert kinds[:6] == ["str", "int", "int", "float", "float", "bool"] and kinds[6] == "datetime", kinds
    assert len(by_kinds) == 3


@pytest.mark.integration
def test_a_checkpoint_in_the_per_key_layout_is_refused_before_the_job_starts(env, tmp_path):
    from kindling.runtime.state_layout import StateLayoutError

    stream = env.from_collection([(1, 1)], "k BIGINT, n BIGINT")
    stream.key_by("k").process(Sums(), "k BIGINT, total BIGINT").print().uid("totals")
    old = env.checkpoint_root("sums") / "totals"
    (old / "commits").mkdir(parents=True)
    (old / "commits" / "0").write_text("v1")
    (old / "state" / "0").mkdir(parents=True)
    with pytest.raises(StateLayoutError, match="job 'sums'.*sink 'totals'.*'Sums'.*per-key layout"):
        env.execute("sums")

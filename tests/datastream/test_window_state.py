"""Windows on keyed state: ProcessWindowFunction, allowed lateness, late side output, triggers, evictors, window_all.

One bounded input in micro-batches of two records (bound 1 s), so each batch's watermark is
known; every variant runs in the same Spark query and labels its results.
"""

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kindling import EventTimeSessionWindows, ReduceFunction, TumblingEventTimeWindows, WatermarkStrategy
from kindling.datastream.evictors import CountEvictor, TimeEvictor
from kindling.datastream.functions import AggregateFunction
from kindling.datastream.side_outputs import OutputTag
from kindling.datastream.triggers import ContinuousEventTimeTrigger, CountTrigger, PurgingTrigger
from kindling.datastream.window_functions import ProcessAllWindowFunction, ProcessWindowFunction

sys.path.insert(0, str(Path(__file__).parent))  # keyed_harness


T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
T0_MS = int(T0.timestamp() * 1000)
SCHEMA = "k STRING, ts TIMESTAMP, n INT"
OUT = "label STRING, k STRING, ws BIGINT, we BIGINT, info STRING"
LATE = OutputTag("late-readings", SCHEMA)


def ts(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class Describe(ProcessWindowFunction):
    """Emits the window's bounds and its elements' n values (or the pre-aggregated result)."""

    def __init__(self, label: str) -> None:
        self.label = label

    def process(self, key, context, elements):
        window = context.window()
        values = [e.n if hasattr(e, "n") else e for e in elements]
        yield self.label, key, (window.start - T0_MS) // 1000, (window.end - T0_MS) // 1000, str(values)


class DescribeAll(ProcessAllWindowFunction):
    def process(self, context, elements):
        window = context.window()
        yield "all", "*", (window.start - T0_MS) // 1000, (window.end - T0_MS) // 1000, str(sorted(e.n for e in elements))


class SumN(AggregateFunction):
    def create_accumulator(self):
        return 0

    def add(self, value, acc):
        return acc + value.n

    def get_result(self, acc):
        return acc

    def merge(self, a, b):
        return a + b


class KeepLarger(ReduceFunction):
    def reduce(self, a, b):
        return a if a.n >= b.n else b


DATA = [
    ("a", ts(1), 1), ("a", ts(4), 2),     # batch 0: no watermark yet
    ("a", ts(12), 3), ("a", ts(8), 4),    # batch 1: watermark 3 s (8 is out of order, on time)
    ("a", ts(16), 5), ("a", ts(2), 6),    # batch 2: watermark 11 s: [0,10) fires first; 2 is late but within 5 s lateness
    ("a", ts(30), 7), ("a", ts(3), 8),    # batch 3: watermark 15 s: [0,10) was cleaned up at 14.999 s; 3 goes to the late side output
]


def out_type():
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    return StructType([StructField(n, t) for n, t in [("label", StringType()), ("k", StringType()), ("ws", LongType()), ("we", LongType()),
                                                      ("info", StringType())]])


def ms(seconds: float) -> int:
    return T0_MS + int(seconds * 1000)


def run_windows(label, assigner, trigger=None, evictor=None, lateness=0, incremental=None, late_tag=None):
    """Run one window configuration over DATA with Spark's watermarks per batch, in-process."""
    from keyed_harness import run

    from kindling.datastream.triggers import EventTimeTrigger
    from kindling.datastream.window_operator import WindowAdapter, function_emitter

    function = Describe(label)
    adapter = WindowAdapter(assigner, trigger or EventTimeTrigger(), lateness, late_tag, function_emitter(function, False),
                            function, incremental, evictor)
    rows = [(k, 0, int(t.timestamp() * 1000), {"k": k, "ts": t, "n": n}) for k, t, n in DATA]
    batches = [(0, rows[0:2]), (ms(3), rows[2:4]), (ms(11), rows[4:6]), (ms(15), rows[6:8]), (2**62, [])]
    import pickle

    return [(r.ws, r.we, r.info) if r.label else ("late", pickle.loads(r["__kindling_side"])["n"])
            for r in run(adapter, out_type(), [["k", "ts", "n"]], batches)]


def test_allowed_lateness_refires_and_later_records_go_to_the_side_output():
    got = run_windows("late", TumblingEventTimeWindows.of("10 s"), lateness=5000, late_tag="late")
    # [0,10) fires when the watermark passes 9.999 s, again for the record at 2 s (within 5 s of lateness),
    # is cleaned up at 14.999 s; the record at 3 s then is too late for every window.
    assert got == [(0, 10, "[1, 2, 4]"), (0, 10, "[1, 2, 4, 6]"), ("late", 8), (10, 20, "[3, 5]"), (30, 40, "[7]")]
    # Without allowed lateness the record at 2 s is dropped (no side output configured).
    assert run_windows("x", TumblingEventTimeWindows.of("10 s"))[:2] == [(0, 10, "[1, 2, 4]"), (10, 20, "[3, 5]")]


def test_triggers_and_evictors():
    window = TumblingEventTimeWindows.of("100 s")  # every record falls in [0,100): arrival order 1..8
    assert run_windows("c", window, PurgingTrigger.of(CountTrigger.of(3))) == [(0, 100, "[1, 2, 3]"), (0, 100, "[4, 5, 6]")]
    assert run_windows("e", window, evictor=CountEvictor.of(2)) == [(0, 100, "[7, 8]")]
    # The latest element is at 30 s: a 5 s TimeEvictor keeps only elements after 25 s.
    assert run_windows("t", window, evictor=TimeEvictor.of("5 s")) == [(0, 100, "[7]")]
    early = run_windows("early", TumblingEventTimeWindows.of("20 s"), ContinuousEventTimeTrigger.of("5 s"))
    assert early == [
        (0, 20, "[1, 2, 3, 4]"),            # timer at 5 s fires at watermark 11 s (the 10 s one too)
        (0, 20, "[1, 2, 3, 4]"),
        (0, 20, "[1, 2, 3, 4, 5, 6]"),      # 15 s, at watermark 15 s
        (0, 20, "[1, 2, 3, 4, 5, 6, 8]"),   # the window's end
        (20, 40, "[7]"), (20, 40, "[7]"),   # 35 s early timer and the end, both at end of input
    ]


def test_incremental_pre_aggregation_with_a_window_function():
    tumbling = TumblingEventTimeWindows.of("10 s")
    assert run_windows("r", tumbling, incremental=("reduce", KeepLarger().reduce)) == [(0, 10, "[4]"), (10, 20, "[5]"), (30, 40, "[7]")]
    assert run_windows("a", tumbling, incremental=("aggregate", SumN())) == [(0, 10, "[7]"), (10, 20, "[8]"), (30, 40, "[7]")]


def test_session_windows_merge_contents_and_trigger_state():
    sessions = EventTimeSessionWindows.with_gap("5 s")
    got = run_windows("s", sessions)
    # 1,4 -> [1,9); 12 -> [12,17); 8 bridges them -> [1,17); 16 -> [1,21); 2 and 3 fall inside; 30 -> [30,35)
    assert [(ws, we) for ws, we, _ in got] == [(1, 21), (30, 35)]
    assert sorted(eval(got[0][2])) == [1, 2, 3, 4, 5, 6, 8]
    counted = run_windows("s", sessions, CountTrigger.of(2))
    assert counted == [(1, 9, "[1, 2]"), (1, 17, "[1, 2, 3, 4]"), (1, 21, "[1, 2, 3, 4, 5, 6]")]


@pytest.mark.integration
def test_windows_on_spark_with_late_side_output_and_window_all(env):
    stream = env.from_collection(DATA, SCHEMA, WatermarkStrategy.for_bounded_out_of_orderness("1 s").with_timestamp_assigner("ts"), rows_per_batch=2)
    tumbling = TumblingEventTimeWindows.of("10 s")
    lateness = stream.key_by("k").window(tumbling).allowed_lateness("5 s").side_output_late_data(LATE).process(Describe("late"), OUT)
    got = [(r.ws, r.we, r.info) for r in lateness.execute_and_collect()]
    assert got == [(0, 10, "[1, 2, 4]"), (0, 10, "[1, 2, 4, 6]"), (10, 20, "[3, 5]"), (30, 40, "[7]")]
    late = lateness.get_side_output(LATE).execute_and_collect()
    assert [(r.k, r.n) for r in late] == [("a", 8)]
    counts = stream.window_all(tumbling).process(DescribeAll(), OUT).execute_and_collect()
    assert [(r.ws, r.we, r.info) for r in counts] == [(0, 10, "[1, 2, 4]"), (10, 20, "[3, 5]"), (30, 40, "[7]")]

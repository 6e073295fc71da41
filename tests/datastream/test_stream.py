"""DataStream pipelines end to end on Spark, over deterministic bounded input with hand-checked results."""

import os
from datetime import datetime, timedelta, timezone

import pytest
from pyspark.sql import functions as F

from kindling import (
    AggregateFunction,
    EventTimeSessionWindows,
    JobFailedError,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WatermarkStrategy,
)

pytestmark = pytest.mark.integration


def ts(seconds: float) -> datetime:
    return datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=seconds)


def local(value: datetime) -> datetime:
    """Spark returns TIMESTAMP values as naive datetimes in the session time zone (UTC here)."""
    return value.replace(tzinfo=None)


CLICKS = [
    ("/a", ts(1), 1), ("/b", ts(2), 10), ("/a", ts(3), 2),   # batch 1
    ("/a", ts(16), 4), ("/b", ts(14), 20), ("/b", ts(17), 30),  # batch 2: /b at 14 is out of order, not late
    ("/a", ts(31), 8), ("/b", ts(29.5), 40),  # batch 3
]
SCHEMA = "page STRING, ts TIMESTAMP, n INT"


def strategy(bound: str = "2 s") -> WatermarkStrategy:
    return WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner("ts")


def test_tumbling_count_fires_every_window_at_end_of_input(env):
    stream = env.from_collection(CLICKS, SCHEMA, strategy(), rows_per_batch=3)
    rows = stream.key_by("page").window(TumblingEventTimeWindows.of("15 s")).count().execute_and_collect()
    got = sorted((r.page, r.window_start, r.window_end, r["count"]) for r in rows)
    assert got == [
        ("/a", local(ts(0)), local(ts(15)), 2), ("/a", local(ts(15)), local(ts(30)), 1), ("/a", local(ts(30)), local(ts(45)), 1),
        ("/b", local(ts(0)), local(ts(15)), 2), ("/b", local(ts(15)), local(ts(30)), 2),
    ]


def test_column_map_filter_and_sliding_sum_min_max(env):
    stream = env.from_collection(CLICKS, SCHEMA, strategy(), rows_per_batch=4)
    doubled = stream.map(F.col("page"), F.col("ts"), (F.col("n") * 2).alias("n")).filter(F.col("n") > 2)
    sliding = SlidingEventTimeWindows.of("20 s", "10 s")
    sums = doubled.key_by("page").window(sliding).sum("n").execute_and_collect()
    # /a doubled: 2 (t1, filtered out), 4 (t3), 8 (t16), 16 (t31); /b: 20 (t2), 40 (t14), 60 (t17), 80 (t29.5)
    by_window = {(r.page, r.window_start): r.n for r in sums}
    assert by_window == {
        ("/a", local(ts(-10))): 4, ("/a", local(ts(0))): 12, ("/a", local(ts(10))): 8,
        ("/a", local(ts(20))): 16, ("/a", local(ts(30))): 16,
        ("/b", local(ts(-10))): 20, ("/b", local(ts(0))): 120, ("/b", local(ts(10))): 180, ("/b", local(ts(20))): 80,
    }
    mins = doubled.key_by("page").window(TumblingEventTimeWindows.of("15 s")).min("n")
    maxs = doubled.key_by("page").window(TumblingEventTimeWindows.of("15 s")).max("n")
    assert sorted((r.page, r.n) for r in mins.execute_and_collect()) == [("/a", 4), ("/a", 8), ("/a", 16), ("/b", 20), ("/b", 60)]
    assert sorted((r.page, r.n) for r in maxs.execute_and_collect()) == [("/a", 4), ("/a", 8), ("/a", 16), ("/b", 40), ("/b", 80)]


def test_python_functions_over_arrow_batches(env):
    stream = env.from_collection(CLICKS, SCHEMA, strategy(), rows_per_batch=3)
    upper = stream.map(lambda r: (r.page.upper(), r.ts, r.n), output_type=SCHEMA)
    split = upper.flat_map(lambda r: [(r.page, r.ts, r.n), (r.page + "!", r.ts, -r.n)] if r.n >= 10 else [(r.page, r.ts, r.n)], output_type=SCHEMA)
    kept = split.filter(lambda r: not r.page.endswith("!") or r.n < -20)
    keyed = kept.key_by(lambda r: r.page[:2], key_type="STRING")
    reduced = keyed.window(TumblingEventTimeWindows.of("15 s")).reduce(lambda a, b: a if a.n >= b.n else b).execute_and_collect()
    got = sorted((r.page, r.n, r.window_start) for r in reduced)
    # "/B!" rows with n -30 and -40 survive the filter; both keys map to "/B" (first two characters).
    assert got == [
        ("/A", 2, local(ts(0))), ("/A", 4, local(ts(15))), ("/A", 8, local(ts(30))),
        ("/B", 20, local(ts(0))), ("/B", 40, local(ts(15))),
    ]


class Average(AggregateFunction):
    def create_accumulator(self):
        return (0, 0)

    def add(self, value, accumulator):
        return (accumulator[0] + value.n, accumulator[1] + 1)

    def get_result(self, accumulator):
        return (accumulator[0] / accumulator[1], accumulator[1])

    def merge(self, a, b):
        return (a[0] + b[0], a[1] + b[1])


def test_aggregate_function_and_builtin_aggregates_on_sessions(env):
    stream = env.from_collection(CLICKS, SCHEMA, strategy(), rows_per_batch=3)
    sessions = stream.key_by("page").window(EventTimeSessionWindows.with_gap("5 s"))
    averages = sessions.aggregate(Average(), output_type="avg DOUBLE, cnt BIGINT").execute_and_collect()
    got = sorted((r.page, r.window_start, r.window_end, r.avg, r.cnt) for r in averages)
    assert got == [
        ("/a", local(ts(1)), local(ts(8)), 1.5, 2),
        ("/a", local(ts(16)), local(ts(21)), 4.0, 1),
        ("/a", local(ts(31)), local(ts(36)), 8.0, 1),
        ("/b", local(ts(2)), local(ts(7)), 10.0, 1),
        ("/b", local(ts(14)), local(ts(22)), 25.0, 2),
        ("/b", local(ts(29.5)), local(ts(34.5)), 40.0, 1),
    ]
    builtin = stream.key_by("page").window(TumblingEventTimeWindows.of("1 min")).aggregate(
        F.sum("n").alias("total"), F.count("*").alias("clicks")
    ).execute_and_collect()
    assert sorted((r.page, r.total, r.clicks) for r in builtin) == [("/a", 15, 4), ("/b", 100, 4)]


def test_late_records_beyond_the_watermark_are_dropped(env):
    rows = [("/a", ts(1), 1), ("/a", ts(40), 1), ("/a", ts(41), 1), ("/a", ts(2), 1), ("/a", ts(42), 1)]
    stream = env.from_collection(rows, SCHEMA, strategy("1 s"), rows_per_batch=1)
    counts = stream.key_by("page").window(TumblingEventTimeWindows.of("15 s")).count().execute_and_collect()
    # ts(2) arrives two batches after ts(40) moved the watermark to 39 s: its window [0, 15) has
    # already fired, so it is late and dropped, as in Flink.
    assert sorted((r.window_start, r["count"]) for r in counts) == [(local(ts(0)), 1), (local(ts(30)), 3)]


def test_event_time_window_without_watermarks_is_refused_with_a_hint(env):
    stream = env.from_collection(CLICKS, SCHEMA)
    with pytest.raises(ValueError) as err:
        stream.key_by("page").window(TumblingEventTimeWindows.of("15 s"))
    assert "TumblingProcessingTimeWindows" in str(err.value)
    with pytest.raises(ValueError) as err:
        stream.key_by("pgae")
    assert "'pgae'" in str(err.value) and "page" in str(err.value)


def test_processing_time_windows_run_and_end_with_bounded_input(env):
    stream = env.from_collection(CLICKS, SCHEMA)
    rows = stream.key_by("page").window(TumblingProcessingTimeWindows.of("1 min")).count().execute_and_collect()
    # Pending processing-time windows do not fire at the end of input (as in Flink); what fired is correct.
    assert sum(r["count"] for r in rows) <= len(CLICKS)


def test_a_failing_user_function_fails_the_job_with_its_error(env):
    stream = env.from_collection(CLICKS, SCHEMA)
    broken = stream.map(lambda r: (r.page,), output_type=SCHEMA)
    with pytest.raises(JobFailedError) as err:
        broken.execute_and_collect()
    assert "function returned 1 values" in str(err.value)


def test_fixed_delay_restart_resumes_a_failed_job_from_its_checkpoint(env, tmp_path):
    marker = str(tmp_path / "failed-once")

    def flaky(row):
        import os

        if row.n == 30 and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("a transient failure")
        return row

    env.config.update({
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": 1,
        "restart-strategy.fixed-delay.delay": "10 ms",
    })
    stream = env.from_collection(CLICKS, SCHEMA, strategy(), rows_per_batch=3).map(flaky)
    rows = stream.key_by("page").window(TumblingEventTimeWindows.of("15 s")).count().execute_and_collect()
    # The batch holding n=30 failed once; the restarted query replayed it from the checkpoint.
    assert sorted((r.page, r.window_start, r["count"]) for r in rows) == [
        ("/a", local(ts(0)), 2), ("/a", local(ts(15)), 1), ("/a", local(ts(30)), 1),
        ("/b", local(ts(0)), 2), ("/b", local(ts(15)), 2),
    ]
    assert os.path.exists(marker)


def test_without_restarts_the_same_failure_fails_the_job(env, tmp_path):
    def broken(row):
        if row.n == 30:
            raise RuntimeError("a permanent failure")
        return row

    stream = env.from_collection(CLICKS, SCHEMA, strategy(), rows_per_batch=3).map(broken)
    with pytest.raises(JobFailedError) as err:
        stream.key_by("page").window(TumblingEventTimeWindows.of("15 s")).count().execute_and_collect()
    assert "RuntimeError: a permanent failure" in str(err.value)


def test_execute_and_collect_gives_pyflink_typed_records_as_pyflink_does(env):
    from kindling.common import Row, Types

    words = env.from_collection(["to", "be"], type_info=Types.STRING())
    assert sorted(words.map(str.upper, output_type=Types.STRING()).execute_and_collect()) == ["BE", "TO"]
    pairs = words.map(lambda w: (w, len(w)), output_type=Types.TUPLE([Types.STRING(), Types.INT()])).execute_and_collect()
    assert sorted(pairs) == [("be", 2), ("to", 2)] and all(type(p) is tuple for p in pairs)
    named = words.map(lambda w: Row(word=w), output_type=Types.ROW_NAMED(["word"], [Types.STRING()])).execute_and_collect()
    assert sorted(r.word for r in named) == ["be", "to"] and all(isinstance(r, Row) for r in named)

"""Which keyed operators run in Spark's event-time mode (and pass the watermark on), decided from their functions."""

import sys
from pathlib import Path

import pandas as pd
import pytest
from pyspark.sql.types import StringType, StructField, StructType

from kindling import KeyedProcessFunction, TumblingEventTimeWindows, TumblingProcessingTimeWindows
from kindling.datastream.operator import needs_no_clock, needs_processing_time
from kindling.datastream.process import KeyedProcessAdapter
from kindling.datastream.triggers import CountTrigger, EventTimeTrigger, ProcessingTimeTrigger, PurgingTrigger
from kindling.datastream.window_operator import WindowAdapter

sys.path.insert(0, str(Path(__file__).parent))  # keyed_harness


class EventTimers(KeyedProcessFunction):
    def process_element(self, value, ctx):
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)


class ProcessingTimers(KeyedProcessFunction):
    def process_element(self, value, ctx):
        self.later(ctx)

    def later(self, ctx):
        services = [ctx.timer_service()]
        for service in (s for s in services):  # inside a nested code object
            service.register_processing_time_timer(service.current_processing_time() + 1000)


class Hidden(KeyedProcessFunction):
    """Reaches the processing-time timer through getattr, which no look at the code can see."""

    def process_element(self, value, ctx):
        getattr(ctx.timer_service(), "register_" + "processing_time_timer")(0)


def window(assigner, trigger):
    return WindowAdapter(assigner, trigger, 0, None, lambda *a: [], None, None, None)


def test_operators_needing_processing_time_are_recognised():
    assert not needs_processing_time(KeyedProcessAdapter(EventTimers()))
    assert needs_processing_time(KeyedProcessAdapter(ProcessingTimers()))
    tumbling = TumblingEventTimeWindows.of("5 s")
    assert not needs_processing_time(window(tumbling, EventTimeTrigger()))
    assert not needs_processing_time(window(tumbling, PurgingTrigger.of(CountTrigger.of(2))))
    assert needs_processing_time(window(tumbling, PurgingTrigger.of(ProcessingTimeTrigger())))
    assert needs_processing_time(window(TumblingProcessingTimeWindows.of("5 s"), ProcessingTimeTrigger()))


def test_a_processing_time_timer_in_event_time_mode_fails_with_the_operator_named():
    from keyed_harness import TV, Handle

    from kindling.datastream import operator as op
    from kindling.datastream.operator_columns import OperatorColumns

    runner = op.KeyedRunner(KeyedProcessAdapter(Hidden()), "Hidden", StructType([StructField("k", StringType())]), 1, 1,
                            [["k"]], event_time_mode=True)
    runner.columns = layout = OperatorColumns([StringType()], [StructType([StructField("k", StringType())])], chained=False,
                                              convert=lambda _: None)
    runner.init(Handle())
    frame = pd.DataFrame({op.key_column(0): ["a"], op.TS: [5], layout.values[0][0].name: ["a"]})
    with pytest.raises(RuntimeError, match="register_processing_time_timer in 'Hidden'.*event-time mode"):
        list(runner.handleInputRows((0,), iter([frame]), TV(1000, 0)))


class ReadsTheClock(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield ctx.timer_service().current_processing_time()


def _timeless_runner(function):
    from kindling.datastream import operator as op
    from kindling.datastream.operator_columns import OperatorColumns

    adapter = KeyedProcessAdapter(function)
    adapter.timeless = True
    runner = op.KeyedRunner(adapter, "Clockless", StructType([StructField("k", StringType())]), 1, 1, [["k"]])
    runner.columns = layout = OperatorColumns([StringType()], [StructType([StructField("k", StringType())])], chained=False,
                                              convert=lambda _: None)
    frame = pd.DataFrame({op.key_column(0): ["a"], op.TS: [5], layout.values[0][0].name: ["a"]})
    return runner, frame


def test_sql_operators_without_timers_or_expiry_run_without_a_clock():
    from kindling.sql.group_aggregate import GroupAggregateFunction
    from kindling.sql.outer_join import OuterJoinFunction
    from kindling.sql.semi_join import AntiJoinFunction, SemiJoinFunction

    assert GroupAggregateFunction([], [], 1, None).timeless
    assert not GroupAggregateFunction([], [], 1, 60_000).timeless  # table.exec.state.ttl expires keys on the clock
    assert not GroupAggregateFunction([], [], 1, None, window_end_at=0).timeless  # a window's end is a timer
    assert SemiJoinFunction.timeless and AntiJoinFunction.timeless and OuterJoinFunction.timeless
    assert not getattr(KeyedProcessAdapter(ProcessingTimers()), "timeless", False)  # user functions keep Spark's processing-time mode


class Plain(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield value


def test_datastream_operators_off_event_time_need_no_clock_unless_their_code_sets_timers():
    assert needs_no_clock(KeyedProcessAdapter(Plain()))
    assert not needs_no_clock(KeyedProcessAdapter(EventTimers()))  # keeps processing-time mode, as before
    assert not needs_no_clock(KeyedProcessAdapter(ProcessingTimers()))
    assert not needs_no_clock(window(TumblingEventTimeWindows.of("5 s"), PurgingTrigger.of(CountTrigger.of(2))))  # clean-up timers


def test_a_runner_without_a_clock_reads_the_wall_clock_and_refuses_a_timer():
    import time

    from keyed_harness import TV, Handle

    runner, frame = _timeless_runner(ReadsTheClock())
    runner.init(Handle())
    before = int(time.time() * 1000)
    out = list(runner.handleInputRows((0,), iter([frame]), TV(-1, -1))) + list(runner.gathered())  # time mode None: no batch time
    (seen,) = [v for f in out for v in f.iloc[:, 0]]
    assert before <= int(seen) <= int(time.time() * 1000)

    runner, frame = _timeless_runner(EventTimers())
    runner.init(Handle())
    with pytest.raises(RuntimeError, match="'Clockless' runs without timers"):
        list(runner.handleInputRows((0,), iter([frame]), TV(-1, -1)))


@pytest.mark.integration
def test_an_idle_job_whose_keyed_operators_need_no_clock_runs_no_micro_batches(spark, kafka, tmp_path):
    """Spark's processing-time mode runs a micro-batch every trigger interval, input or not: an idle INTERSECT kept a
    core busy (a ~1 s batch every 1 s interval). Without timers the operators run in Spark's time mode None."""
    import time
    import uuid

    from kindling.env import StreamEnvironment

    topic = f"idle-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic)
    env = StreamEnvironment({"state.checkpoints.dir": str(tmp_path), "execution.checkpointing.interval": "100 ms"}, spark=spark)
    env.execute_sql(f"""CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'kafka', 'topic' = '{topic}',
        'properties.bootstrap.servers' = '{kafka.bootstrap_servers}', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json')""")
    env.execute_sql("CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'blackhole')")
    result = env.execute_sql("INSERT INTO out SELECT k, COUNT(*) FROM (SELECT k, v FROM t INTERSECT SELECT k, v FROM t) GROUP BY k")
    job = result.get_job_client()
    try:
        (query,) = job.queries.values()
        deadline = time.monotonic() + 120
        while not any("addBatch" in p["durationMs"] for p in query.recentProgress):  # the first batch ran
            assert time.monotonic() < deadline, query.recentProgress
            query.awaitTermination(0.1)
        query.awaitTermination(2.0)  # twenty trigger intervals without input
        ran = sorted({p["batchId"] for p in query.recentProgress if "addBatch" in p["durationMs"]})
        assert ran == [0], f"micro-batches ran without input: {ran}"
    finally:
        job.cancel()

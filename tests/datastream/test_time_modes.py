"""Which keyed operators run in Spark's event-time mode (and pass the watermark on), decided from their functions."""

import sys
from pathlib import Path

import pandas as pd
import pytest
from pyspark.sql.types import StringType, StructField, StructType

from kindling import KeyedProcessFunction, TumblingEventTimeWindows, TumblingProcessingTimeWindows
from kindling.datastream.operator import needs_processing_time
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

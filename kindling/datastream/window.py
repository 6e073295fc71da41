"""PyFlink's ``pyflink.datastream.window``: window assigners, windows, triggers and evictors."""

from kindling.datastream.evictors import CountEvictor, Evictor, TimeEvictor
from kindling.datastream.triggers import (
    ContinuousEventTimeTrigger,
    CountTrigger,
    EventTimeTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
    TriggerResult,
)
from kindling.datastream.windows import (
    CountWindow,
    EventTimeSessionWindows,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)

GlobalWindow = CountWindow  # PyFlink's GlobalWindows hand functions one never-ending window

__all__ = [
    "ContinuousEventTimeTrigger", "CountEvictor", "CountTrigger", "CountWindow", "EventTimeSessionWindows", "EventTimeTrigger",
    "Evictor", "GlobalWindow", "GlobalWindows", "ProcessingTimeSessionWindows", "ProcessingTimeTrigger", "PurgingTrigger",
    "SessionWindowTimeGapExtractor", "SlidingEventTimeWindows", "SlidingProcessingTimeWindows", "TimeEvictor", "TimeWindow",
    "Trigger", "TriggerResult", "TumblingEventTimeWindows", "TumblingProcessingTimeWindows", "WindowAssigner",
]

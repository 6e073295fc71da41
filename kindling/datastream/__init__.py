"""Flink's DataStream API on Spark: streams, keyed streams, windows, watermarks and user functions.

Also PyFlink's ``pyflink.datastream``: the same classes under PyFlink's names and module layout
(``kindling.datastream.functions``, ``.state``, ``.window``, ``.connectors``).
"""

from enum import Enum
from typing import TYPE_CHECKING

from kindling.lazy_exports import lazy_exports

# module -> the names it defines, imported on first use (kindling/lazy_exports.py); the environment and the common
# package import this package, so their names here also avoid an import cycle
_EXPORTS = {
    "kindling.env": ("StreamExecutionEnvironment", "StreamEnvironment"),
    "kindling.common": ("RuntimeExecutionMode", "Types", "Time", "Duration", "Row", "Configuration"),
    "kindling.datastream.async_data_stream": ("AsyncDataStream", "AsyncFunction",),
    "kindling.datastream.broadcast": ("BroadcastConnectedStream", "BroadcastStream", "KeyedBroadcastProcessFunction",),
    "kindling.datastream.checkpoint_config": ("CheckpointConfig", "ExternalizedCheckpointRetention",),
    "kindling.datastream.connected": ("CoFlatMapFunction", "CoMapFunction", "ConnectedStreams", "KeyedCoProcessFunction",),
    "kindling.datastream.context": ("RuntimeContext",),
    "kindling.datastream.evictors": ("CountEvictor", "Evictor", "TimeEvictor", "TimestampedValue",),
    "kindling.datastream.functions": (
        "AggregateFunction", "FilterFunction", "FlatMapFunction", "KeySelector", "MapFunction", "ReduceFunction",
        "SourceFunction",
    ),
    "kindling.datastream.joins": ("CoGroupFunction", "IntervalJoin", "JoinedStreams", "JoinFunction", "ProcessJoinFunction",),
    "kindling.datastream.process": ("Collector", "KeyedProcessFunction", "ProcessFunction",),
    "kindling.datastream.side_outputs": ("OutputTag",),
    "kindling.datastream.state": (
        "AggregatingState", "AggregatingStateDescriptor", "ListState", "ListStateDescriptor", "MapState",
        "MapStateDescriptor", "ReducingState", "ReducingStateDescriptor", "StateTtlConfig", "ValueState",
        "ValueStateDescriptor",
    ),
    "kindling.datastream.stream": ("DataStream", "DataStreamSink", "KeyedStream", "SingleOutputStreamOperator", "WindowedStream",),
    "kindling.datastream.timers": ("TimeDomain", "TimerService",),
    "kindling.datastream.triggers": (
        "ContinuousEventTimeTrigger", "CountTrigger", "EventTimeTrigger", "ProcessingTimeTrigger", "PurgingTrigger",
        "Trigger", "TriggerResult",
    ),
    "kindling.datastream.watermarks": ("TimestampAssigner", "WatermarkStrategy",),
    "kindling.datastream.window_functions": ("AllWindowFunction", "ProcessAllWindowFunction", "ProcessWindowFunction", "WindowFunction",),
    "kindling.datastream.windows": (
        "CountWindow", "EventTimeSessionWindows", "GlobalWindows", "ProcessingTimeSessionWindows",
        "SessionWindowTimeGapExtractor", "SlidingEventTimeWindows", "SlidingProcessingTimeWindows", "TimeWindow",
        "TumblingEventTimeWindows", "TumblingProcessingTimeWindows",
    ),
}

if TYPE_CHECKING:
    from kindling.datastream.async_data_stream import AsyncDataStream, AsyncFunction
    from kindling.datastream.broadcast import BroadcastConnectedStream, BroadcastStream, KeyedBroadcastProcessFunction
    from kindling.datastream.checkpoint_config import CheckpointConfig, ExternalizedCheckpointRetention
    from kindling.datastream.connected import CoFlatMapFunction, CoMapFunction, ConnectedStreams, KeyedCoProcessFunction
    from kindling.datastream.context import RuntimeContext
    from kindling.datastream.evictors import CountEvictor, Evictor, TimeEvictor, TimestampedValue
    from kindling.datastream.functions import (
        AggregateFunction,
        FilterFunction,
        FlatMapFunction,
        KeySelector,
        MapFunction,
        ReduceFunction,
        SourceFunction,
    )
    from kindling.datastream.joins import CoGroupFunction, IntervalJoin, JoinedStreams, JoinFunction, ProcessJoinFunction
    from kindling.datastream.process import Collector, KeyedProcessFunction, ProcessFunction
    from kindling.datastream.side_outputs import OutputTag
    from kindling.datastream.state import (
        AggregatingState,
        AggregatingStateDescriptor,
        ListState,
        ListStateDescriptor,
        MapState,
        MapStateDescriptor,
        ReducingState,
        ReducingStateDescriptor,
        StateTtlConfig,
        ValueState,
        ValueStateDescriptor,
    )
    from kindling.datastream.stream import DataStream, DataStreamSink, KeyedStream, SingleOutputStreamOperator, WindowedStream
    from kindling.datastream.timers import TimeDomain, TimerService
    from kindling.datastream.triggers import (
        ContinuousEventTimeTrigger,
        CountTrigger,
        EventTimeTrigger,
        ProcessingTimeTrigger,
        PurgingTrigger,
        Trigger,
        TriggerResult,
    )
    from kindling.datastream.watermarks import TimestampAssigner, WatermarkStrategy
    from kindling.datastream.window_functions import (
        AllWindowFunction,
        ProcessAllWindowFunction,
        ProcessWindowFunction,
        WindowFunction,
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
    )

__all__ = [
    "AggregateFunction", "DataStream", "DataStreamSink", "EventTimeSessionWindows", "FilterFunction",
    "FlatMapFunction", "KeySelector", "KeyedStream", "MapFunction", "ProcessingTimeSessionWindows",
    "ReduceFunction", "SlidingEventTimeWindows", "SlidingProcessingTimeWindows", "TimeWindow",
    "TimestampAssigner", "TumblingEventTimeWindows", "TumblingProcessingTimeWindows", "WatermarkStrategy",
    "WindowedStream",
    # stateful processing (issue 6)
    "AggregatingState", "AggregatingStateDescriptor", "AllWindowFunction", "BroadcastConnectedStream", "BroadcastStream",
    "CoFlatMapFunction", "CoGroupFunction", "CoMapFunction", "Collector", "ConnectedStreams", "ContinuousEventTimeTrigger",
    "CountEvictor", "CountTrigger", "EventTimeTrigger", "Evictor", "IntervalJoin", "JoinFunction", "JoinedStreams",
    "KeyedBroadcastProcessFunction", "KeyedCoProcessFunction", "KeyedProcessFunction", "ListState", "ListStateDescriptor",
    "MapState", "MapStateDescriptor", "OutputTag", "ProcessAllWindowFunction", "ProcessFunction", "ProcessJoinFunction",
    "ProcessWindowFunction", "ProcessingTimeTrigger", "PurgingTrigger", "ReducingState", "ReducingStateDescriptor",
    "RuntimeContext", "SingleOutputStreamOperator", "StateTtlConfig", "TimeDomain", "TimeEvictor", "TimerService",
    "TimestampedValue", "Trigger", "TriggerResult", "ValueState", "ValueStateDescriptor", "WindowFunction",
    # PyFlink's pyflink.datastream names (issue 13)
    "CheckpointingMode", "CountWindow", "GlobalWindows", "RuntimeExecutionMode", "SessionWindowTimeGapExtractor",
    "StreamExecutionEnvironment", "TimeCharacteristic",
    # legacy sources for env.add_source (FlinkKinesisConsumer)
    "SourceFunction",
    # async I/O (PyFlink 2.2)
    "AsyncDataStream", "AsyncFunction",
    # env.get_checkpoint_config()
    "CheckpointConfig", "ExternalizedCheckpointRetention",
]


class CheckpointingMode(Enum):
    """PyFlink's checkpointing modes; kindling's sinks are exactly-once or at-least-once by their own options."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1


class TimeCharacteristic(Enum):
    """PyFlink's (deprecated) time characteristic: kindling takes event time from a source's watermark strategy."""

    ProcessingTime = 0
    IngestionTime = 1
    EventTime = 2


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

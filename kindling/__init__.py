"""kindling: Flink-style stateful stream processing in Python, executed by Apache Spark Structured Streaming.

The names below are imported on first use (PEP 562): every Python worker Spark starts imports some kindling
module to run a connector or a function, and importing the whole API with it (PySpark's SQL functions,
pyarrow's file systems, every operator) cost each worker about a third of a second.

>>> from kindling import StreamEnvironment
>>> StreamEnvironment.__name__
'StreamEnvironment'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kindling.lazy_exports import lazy_exports

__version__ = "0.1.0"

# module -> the names of the public API it defines
_EXPORTS = {
    "kindling.config": ("Configuration",),
    "kindling.connectors.base": ("Sink", "Source",),
    "kindling.connectors.filesystem.builder": ("FileSink", "FileSource",),
    "kindling.datastream": (
        "AggregateFunction", "AggregatingStateDescriptor", "BroadcastStream", "CoFlatMapFunction", "CoMapFunction",
        "ConnectedStreams", "ContinuousEventTimeTrigger", "CountEvictor", "CountTrigger", "DataStream",
        "EventTimeSessionWindows", "FilterFunction", "FlatMapFunction", "KeyedBroadcastProcessFunction",
        "KeyedCoProcessFunction", "KeyedProcessFunction", "KeyedStream", "KeySelector", "ListStateDescriptor",
        "MapFunction", "MapStateDescriptor", "OutputTag", "ProcessAllWindowFunction", "ProcessFunction",
        "ProcessingTimeSessionWindows", "ProcessJoinFunction", "ProcessWindowFunction", "PurgingTrigger",
        "ReduceFunction", "ReducingStateDescriptor", "SlidingEventTimeWindows", "SlidingProcessingTimeWindows",
        "StateTtlConfig", "TimeDomain", "TimeEvictor", "TimestampAssigner", "TimeWindow", "TumblingEventTimeWindows",
        "TumblingProcessingTimeWindows", "ValueStateDescriptor", "WatermarkStrategy", "WindowedStream",
        "WindowFunction",
    ),
    "kindling.durations": ("parse_duration",),
    "kindling.env": ("StreamEnvironment", "StreamExecutionEnvironment",),
    "kindling.options": ("OptionError",),
    "kindling.runtime.job": ("JobClient", "JobFailedError",),
    "kindling.sql": ("SqlError", "TableResult", "udf",),
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

if TYPE_CHECKING:
    from kindling.config import Configuration
    from kindling.connectors.base import Sink, Source
    from kindling.connectors.filesystem.builder import FileSink, FileSource
    from kindling.datastream import (
        AggregateFunction,
        AggregatingStateDescriptor,
        BroadcastStream,
        CoFlatMapFunction,
        CoMapFunction,
        ConnectedStreams,
        ContinuousEventTimeTrigger,
        CountEvictor,
        CountTrigger,
        DataStream,
        EventTimeSessionWindows,
        FilterFunction,
        FlatMapFunction,
        KeyedBroadcastProcessFunction,
        KeyedCoProcessFunction,
        KeyedProcessFunction,
        KeyedStream,
        KeySelector,
        ListStateDescriptor,
        MapFunction,
        MapStateDescriptor,
        OutputTag,
        ProcessAllWindowFunction,
        ProcessFunction,
        ProcessingTimeSessionWindows,
        ProcessJoinFunction,
        ProcessWindowFunction,
        PurgingTrigger,
        ReduceFunction,
        ReducingStateDescriptor,
        SlidingEventTimeWindows,
        SlidingProcessingTimeWindows,
        StateTtlConfig,
        TimeDomain,
        TimeEvictor,
        TimestampAssigner,
        TimeWindow,
        TumblingEventTimeWindows,
        TumblingProcessingTimeWindows,
        ValueStateDescriptor,
        WatermarkStrategy,
        WindowedStream,
        WindowFunction,
    )
    from kindling.durations import parse_duration
    from kindling.env import StreamEnvironment, StreamExecutionEnvironment
    from kindling.options import OptionError
    from kindling.runtime.job import JobClient, JobFailedError
    from kindling.sql import SqlError, TableResult, udf

__all__ = [
    "AggregateFunction", "Configuration", "DataStream", "EventTimeSessionWindows", "FilterFunction",
    "FlatMapFunction", "JobClient", "JobFailedError", "KeySelector", "KeyedStream", "MapFunction",
    "OptionError", "ProcessingTimeSessionWindows", "ReduceFunction", "Sink", "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows", "Source", "StreamEnvironment", "StreamExecutionEnvironment",
    "TimeWindow", "TimestampAssigner", "TumblingEventTimeWindows", "TumblingProcessingTimeWindows",
    "WatermarkStrategy", "WindowedStream", "__version__", "parse_duration",
    "FileSink", "FileSource",
    "SqlError", "TableResult", "udf",
    "AggregatingStateDescriptor", "BroadcastStream", "CoFlatMapFunction", "CoMapFunction", "ConnectedStreams",
    "ContinuousEventTimeTrigger", "CountEvictor", "CountTrigger", "KeyedBroadcastProcessFunction", "KeyedCoProcessFunction",
    "KeyedProcessFunction", "ListStateDescriptor", "MapStateDescriptor", "OutputTag", "ProcessAllWindowFunction",
    "ProcessFunction", "ProcessJoinFunction", "ProcessWindowFunction", "PurgingTrigger", "ReducingStateDescriptor",
    "StateTtlConfig", "TimeDomain", "TimeEvictor", "ValueStateDescriptor", "WindowFunction",
]

"""kindling: Flink-style stateful stream processing in Python, executed by Apache Spark Structured Streaming."""

from kindling.config import Configuration
from kindling.connectors.base import Sink, Source
from kindling.connectors.filesystem.builder import FileSink, FileSource
from kindling.datastream import (  # stateful processing: process functions, state, timers, joins
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

__version__ = "0.1.0"

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

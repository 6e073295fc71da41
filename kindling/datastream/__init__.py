"""Flink's DataStream API on Spark: streams, keyed streams, windows, watermarks and user functions."""

from kindling.datastream.functions import (
    AggregateFunction,
    FilterFunction,
    FlatMapFunction,
    KeySelector,
    MapFunction,
    ReduceFunction,
)
from kindling.datastream.stream import DataStream, DataStreamSink, KeyedStream, WindowedStream
from kindling.datastream.watermarks import TimestampAssigner, WatermarkStrategy
from kindling.datastream.windows import (
    EventTimeSessionWindows,
    ProcessingTimeSessionWindows,
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
]

"""Flink's operations-playground job "Click Event Count", on kindling.

Reads click events from Kafka, uses event time with 200 ms bounded out-of-orderness, counts
clicks per page in 15-second tumbling windows and writes one JSON record per window and page.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from pyspark.sql import functions as F

from kindling.connectors.kafka import DeliveryGuarantee, KafkaOffsetsInitializer, KafkaSink, KafkaSource
from kindling.datastream import (
    MapFunction,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WatermarkStrategy,
)
from kindling.datastream.stream import DataStreamSink
from kindling.env import StreamEnvironment

JOB_NAME = "Click Event Count"
WINDOW_SIZE = "15 s"


class BackpressureMap(MapFunction):
    """Slows every record down in even minutes, to make back pressure visible (as the playground does)."""

    def __init__(self, delay_seconds: float = 0.01) -> None:
        self.delay_seconds = delay_seconds

    def map(self, value: Any) -> Any:
        import time

        if _dt.datetime.now().minute % 2 == 0:
            time.sleep(self.delay_seconds)
        return value


def build(
    env: StreamEnvironment,
    bootstrap_servers: str,
    input_topic: str = "input",
    output_topic: str = "output",
    event_time: bool = True,
    backpressure: bool = False,
    max_records_per_batch: int = 0,
    exactly_once: bool = False,
) -> DataStreamSink:
    """Add the Click Event Count pipeline to ``env``; return its sink (exactly-once: one Kafka transaction per micro-batch)."""
    builder = (
        KafkaSource.builder()
        .set_bootstrap_servers(bootstrap_servers)
        .set_topics(input_topic)
        .set_group_id("click-event-count")
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_value_format("json")
        .set_schema("timestamp TIMESTAMP, page STRING")
    )
    if max_records_per_batch:
        builder = builder.set_option("scan.max-records-per-trigger", max_records_per_batch)
    source = builder.build()
    if event_time:
        strategy = WatermarkStrategy.for_bounded_out_of_orderness("200 ms").with_timestamp_assigner("timestamp")
        windows = TumblingEventTimeWindows.of(WINDOW_SIZE)
    else:
        strategy = WatermarkStrategy.no_watermarks()
        windows = TumblingProcessingTimeWindows.of(WINDOW_SIZE)
    clicks = env.from_source(source, strategy, "ClickEvent Source")
    if backpressure:
        clicks = clicks.map(BackpressureMap()).name("Backpressure")
    statistics = (
        clicks.key_by("page")
        .window(windows)
        .count()
        .map(
            F.col("window_start").alias("windowStart"),
            F.col("window_end").alias("windowEnd"),
            F.col("page"),
            F.col("count"),
        )
        .name("ClickEvent Counter")
    )
    sink = (
        KafkaSink.builder()
        .set_bootstrap_servers(bootstrap_servers)
        .set_topic(output_topic)
        .set_value_format("json")
    )
    if exactly_once:
        sink = sink.set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE).set_transactional_id_prefix(f"click-count-{output_topic}")
    return statistics.sink_to(sink.build()).name("ClickEventStatistics Sink").uid("click-event-statistics-sink")

"""The Kafka connector (``'connector' = 'kafka'``): source and sink with Flink's options.

* ``options``: option names, types, defaults and the rules between them;
* the record formats (json, csv, raw, avro, avro-confluent, debezium/canal/maxwell-json) are
  :mod:`kindling.formats`, shared with the other connectors;
* ``source``: the stream reader (offsets in Spark's checkpoint, Arrow batches);
* ``sink``: the Arrow stream writer (at-least-once by delivery reports; exactly-once by encoding on
  executors and publishing on the driver);
* ``transactions``: the exactly-once commit: one Kafka transaction per micro-batch, fenced by batch id;
* ``builder``: PyFlink-style ``KafkaSource.builder()`` / ``KafkaSink.builder()``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from pyspark.sql.types import BinaryType, StructField, StructType

from kindling.connectors.base import Connector, rowtime_options
from kindling.connectors.kafka.builder import (
    DeliveryGuarantee,
    KafkaOffsetsInitializer,
    KafkaSink,
    KafkaSinkBuilder,
    KafkaSource,
    KafkaSourceBuilder,
)
from kindling.connectors.kafka.options import EOF_RECORD_EVALUATOR, SINK_OPTIONS, SOURCE_OPTIONS, sink_config, source_config
from kindling.connectors.kafka.source import KafkaDataSource
from kindling.formats.changelog import CHANGELOG_FORMATS
from kindling.options import ParsedOptions


class KafkaConnector(Connector):
    name = "kafka"
    data_source = KafkaDataSource
    source_options = SOURCE_OPTIONS
    sink_options = SINK_OPTIONS
    per_split_event_time = True

    @classmethod
    def split_event_time_options(cls, rowtime: Optional[str], idleness_ms: Optional[int],
                                 alignment: Optional[tuple[str, int, int]]) -> dict[str, str]:
        options = rowtime_options(rowtime) if rowtime else {}
        if alignment is not None:
            group, max_drift_ms, update_interval_ms = alignment
            options["scan.watermark.alignment.group"] = group
            options["scan.watermark.alignment.max-drift"] = f"{max_drift_ms} ms"
            options["scan.watermark.alignment.update-interval"] = f"{update_interval_ms} ms"
        if idleness_ms is not None:
            options["scan.watermark.idle-timeout"] = f"{idleness_ms} ms"
        return options

    @classmethod
    def validate_source(cls, options: Mapping[str, Any]) -> ParsedOptions:
        source_config(options)  # the rules between options (topic xor topic-pattern, startup modes, ...)
        return SOURCE_OPTIONS.validate(options)

    @classmethod
    def validate_sink(cls, options: Mapping[str, Any]) -> ParsedOptions:
        sink_config(options)  # exactly-once needs a transactional-id prefix, key.fields needs key.format, ...
        return SINK_OPTIONS.validate(options)

    @classmethod
    def is_bounded(cls, options: ParsedOptions) -> bool:
        bounded = (options.get("scan.bounded.mode") or "unbounded") != "unbounded"
        return bounded or options.get(EOF_RECORD_EVALUATOR) is not None

    @classmethod
    def produces_changelog(cls, options: ParsedOptions) -> bool:
        return (options.get("format") or options.get("value.format")) in CHANGELOG_FORMATS

    @classmethod
    def needs_retractions(cls, options: Mapping[str, str]) -> bool:
        return (options.get("format") or options.get("value.format")) in CHANGELOG_FORMATS

    @classmethod
    def consumes_updates(cls, options: Mapping[str, str]) -> bool:
        return (options.get("format") or options.get("value.format")) in CHANGELOG_FORMATS

    @classmethod
    def default_schema(cls, options: ParsedOptions) -> Optional[StructType]:
        if (options.get("format") or options.get("value.format")) == "raw":
            return StructType([StructField("value", BinaryType(), True)])
        return None


CONNECTOR = KafkaConnector

__all__ = [
    "CONNECTOR",
    "DeliveryGuarantee",
    "KafkaConnector",
    "KafkaDataSource",
    "KafkaOffsetsInitializer",
    "KafkaSink",
    "KafkaSinkBuilder",
    "KafkaSource",
    "KafkaSourceBuilder",
]

"""The Kinesis Data Streams connector (``'connector' = 'kinesis'`` and ``'kinesis-legacy'``) with Flink's options.

* ``options``: both option dialects (4.x/legacy ``stream`` + ``scan.*``, 5.x ``stream.arn`` + ``source.*``),
  ``aws.*`` and the credential providers, the sink's ``KinesisStreamsSink`` options;
* ``aws``: boto3 sessions for Flink's credential providers, Flink's retry back-off;
* ``efo``: enhanced fan-out, the stream consumer and SubscribeToShard over HTTP/2;
* ``source``: the POLLING and EFO stream reader, exactly once (per-shard sequence numbers in Spark's checkpoint,
  parents before children across resharding);
* ``alignment``: watermark synchronisation across shards and idle shards, at admission on the driver;
* ``aggregation``: KPL-aggregated records de-aggregated into their user records, on the executors;
* ``sink``: PutRecords batching, partial failures re-queued, at-least-once per micro-batch.
* ``builder``: PyFlink's DataStream API (``FlinkKinesisConsumer``, ``KinesisStreamsSink.builder()``) as these options.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from pyspark.sql.types import BinaryType, StructField, StructType

from kindling.connectors.base import Connector, rowtime_options
from kindling.connectors.kinesis.efo import deregister_consumer
from kindling.connectors.kinesis.options import LEGACY_OPTIONS, SINK_OPTIONS, SOURCE_OPTIONS, canonical, sink_config, source_config
from kindling.connectors.kinesis.source import KinesisDataSource, KinesisLegacyDataSource
from kindling.options import ParsedOptions


class KinesisConnector(Connector):
    name = "kinesis"
    data_source = KinesisDataSource
    source_options = SOURCE_OPTIONS
    sink_options = SINK_OPTIONS
    per_split_event_time = True

    @classmethod
    def split_event_time_options(cls, rowtime: Optional[str], idleness_ms: Optional[int],
                                 alignment: Optional[tuple[str, int, int]]) -> dict[str, str]:
        if alignment is not None:
            raise ValueError(f"with_watermark_alignment: the '{cls.name}' source aligns shards by its own options "
                             "('scan.watermark.lookahead.millis', 'scan.watermark.sync.interval'); set them on the source")
        options = rowtime_options(rowtime) if rowtime else {}
        if idleness_ms is not None:
            options["scan.shard.idle.interval"] = str(idleness_ms)
        return options

    @classmethod
    def validate_source(cls, options: Mapping[str, Any]) -> ParsedOptions:
        source_config(options, cls.name)  # the rules between options (dialects, start position, credentials)
        return cls.source_options.validate(canonical(options))

    @classmethod
    def validate_sink(cls, options: Mapping[str, Any]) -> ParsedOptions:
        sink_config(options)
        return SINK_OPTIONS.validate(canonical(options))

    @classmethod
    def consumes_updates(cls, options: Mapping[str, str]) -> bool:
        """Flink's Kinesis table sink is append-only ("Sink: Streaming Append Mode")."""
        return False

    @classmethod
    def on_job_end(cls, options: Mapping[str, str]) -> None:
        """Deregister the EFO consumer the source registered (LAZY, EAGER, 5.x JOB_MANAGED), as Flink does
        when a job stops gracefully; one given by ARN or SELF_MANAGED stays."""
        config = source_config(options, cls.name)
        if config.publisher == "EFO" and config.efo_registration != "NONE" and not config.efo_consumer_arn:
            deregister_consumer(config, f"{cls.name} source")

    @classmethod
    def default_schema(cls, options: ParsedOptions) -> Optional[StructType]:
        if options.get("format") == "raw":
            return StructType([StructField("data", BinaryType(), True)])
        return None


class KinesisLegacyConnector(KinesisConnector):
    name = "kinesis-legacy"
    data_source = KinesisLegacyDataSource
    source_options = LEGACY_OPTIONS


CONNECTOR = KinesisConnector
LEGACY = KinesisLegacyConnector

__all__ = ["CONNECTOR", "LEGACY", "KinesisConnector", "KinesisDataSource", "KinesisLegacyConnector", "KinesisLegacyDataSource"]

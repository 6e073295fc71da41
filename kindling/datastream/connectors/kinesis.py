"""PyFlink's ``pyflink.datastream.connectors.kinesis``: ``FlinkKinesisConsumer`` (for ``env.add_source``) and the
``KinesisStreamsSink`` builder, on kindling's Kinesis connector (``kindling.connectors.kinesis.builder``, which says
how their properties map onto the connector's options).

``KinesisFirehoseSink`` is here so that a program imports it; building one is refused (kindling has no Firehose
connector), as are PyFlink's Java-object parameters (a custom shard assigner, partition key generator or
watermark tracker, a ``KinesisDeserializationSchema``)."""

from kindling.connectors.kinesis.builder import (
    FlinkKinesisConsumer,
    KinesisDeserializationSchema,
    KinesisFirehoseSink,
    KinesisFirehoseSinkBuilder,
    KinesisShardAssigner,
    KinesisStreamsSink,
    KinesisStreamsSinkBuilder,
    PartitionKeyGenerator,
    WatermarkTracker,
)

__all__ = ["FlinkKinesisConsumer", "KinesisDeserializationSchema", "KinesisFirehoseSink", "KinesisFirehoseSinkBuilder",
           "KinesisShardAssigner", "KinesisStreamsSink", "KinesisStreamsSinkBuilder", "PartitionKeyGenerator", "WatermarkTracker"]

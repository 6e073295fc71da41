"""PyFlink's ``pyflink.datastream.connectors``: the file, Kafka and number-sequence connectors' builders.

The builders are kindling's connectors' (``kindling.connectors.filesystem.builder``,
``kindling.connectors.kafka.builder``); this package only gives them PyFlink's module layout.
"""

from kindling.connectors.filesystem.builder import (
    DateTimeBucketAssigner,
    Encoder,
    FileSink,
    FileSource,
    OutputFileConfig,
    RollingPolicy,
    StreamFormat,
)
from kindling.connectors.kafka.builder import DeliveryGuarantee, KafkaOffsetsInitializer, KafkaSink, KafkaSource
from kindling.datastream.connectors.number_seq import NumberSequenceSource

__all__ = [
    "DateTimeBucketAssigner", "DeliveryGuarantee", "Encoder", "FileSink", "FileSource", "KafkaOffsetsInitializer", "KafkaSink",
    "KafkaSource", "NumberSequenceSource", "OutputFileConfig", "RollingPolicy", "StreamFormat",
]

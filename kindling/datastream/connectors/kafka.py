"""PyFlink's ``pyflink.datastream.connectors.kafka``: the Kafka source and sink builders, their offsets
initializers and record serialization schema (kindling's Kafka connector, ``kindling.connectors.kafka``).

Flink 2 has no ``FlinkKafkaConsumer``/``FlinkKafkaProducer``; through ``pyflink`` they fail where used, naming
the builders to use instead."""

from kindling.connectors.kafka.builder import (
    DeliveryGuarantee,
    KafkaOffsetResetStrategy,
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaRecordSerializationSchemaBuilder,
    KafkaSink,
    KafkaSinkBuilder,
    KafkaSource,
    KafkaSourceBuilder,
    KafkaTopicPartition,
    KafkaTopicSelector,
)

__all__ = ["DeliveryGuarantee", "KafkaOffsetResetStrategy", "KafkaOffsetsInitializer", "KafkaRecordSerializationSchema",
           "KafkaRecordSerializationSchemaBuilder", "KafkaSink", "KafkaSinkBuilder", "KafkaSource", "KafkaSourceBuilder",
           "KafkaTopicPartition", "KafkaTopicSelector"]

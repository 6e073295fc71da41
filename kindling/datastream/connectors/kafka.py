"""PyFlink's ``pyflink.datastream.connectors.kafka``: the Kafka source and sink builders."""

from kindling.connectors.kafka.builder import DeliveryGuarantee, KafkaOffsetsInitializer, KafkaSink, KafkaSource

__all__ = ["DeliveryGuarantee", "KafkaOffsetsInitializer", "KafkaSink", "KafkaSource"]

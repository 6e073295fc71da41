"""Flink's ``upsert-kafka`` connector (sink): a changelog written as a compacted-topic style upsert stream.

The table's PRIMARY KEY (``kindling.table.primary-key``, set by ``PRIMARY KEY (...) NOT ENFORCED``)
forms each record's key in ``key.format``; ``+I``/``+U`` rows become records whose value is the row
in ``value.format``, ``-D`` rows become tombstones (null value), ``-U`` rows are dropped, as in Flink.
Records of one key go to one partition (the key hash), so the topic's last record per key is the
row's current state. ``sink.delivery-guarantee`` works as for the ``kafka`` sink (``exactly-once``
publishes each micro-batch in one transaction fenced by batch id).

Differences from Flink: there is no upsert-kafka *source* yet (reading a topic back as a changelog
needs keyed state to produce update-before rows); ``sink.buffer-flush.*`` are accepted and have no
effect, because a micro-batch already is the buffer.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any, Mapping

from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from kindling.connectors.base import TABLE_PRIMARY_KEY, Connector
from kindling.connectors.kafka.options import (
    _COMMON,
    DELIVERY_GUARANTEES,
    FORMATS,
    VALUE_FIELDS_INCLUDE,
    SinkConfig,
    sink_config,
)
from kindling.formats.avro_confluent import property_prefixes
from kindling.options import OptionError, OptionSet, ParsedOptions, duration_option, enum_option, int_option, string_option

SINK_OPTIONS = OptionSet(
    "upsert-kafka sink",
    [
        string_option("topic", None, "Topic to write to.", required=True),
        enum_option("key.format", FORMATS, None, "Format of the record keys, built from the PRIMARY KEY columns.", required=True),
        string_option("key.fields-prefix", None, "Accepted for compatibility: key columns are named as in the table."),
        VALUE_FIELDS_INCLUDE,
        enum_option("sink.delivery-guarantee", DELIVERY_GUARANTEES, "at-least-once",
                    "As for the 'kafka' sink: 'exactly-once' publishes each micro-batch in one transaction fenced by batch id."),
        string_option("sink.transactional-id-prefix", None, "Required for 'exactly-once' (see the 'kafka' sink)."),
        string_option("sink.parallelism", None, "Accepted for compatibility; Spark's partitioning decides."),
        int_option("sink.buffer-flush.max-rows", 0, "Accepted for compatibility: a micro-batch is the buffer.", minimum=0),
        duration_option("sink.buffer-flush.interval", timedelta(0), "Accepted for compatibility: a micro-batch is the buffer."),
        *_COMMON,
    ],
    prefixes=("properties.", *property_prefixes()),
)

_KAFKA_KEYS = ("topic", "key.format", "value.fields-include", "sink.delivery-guarantee", "sink.transactional-id-prefix")


def upsert_sink_config(raw: Mapping[str, Any]) -> SinkConfig:
    """Validate upsert-kafka options and the table's primary key; the Kafka sink settings that write it."""
    parsed = SINK_OPTIONS.validate(raw)
    key_text = parsed.extra.get(TABLE_PRIMARY_KEY) or ""
    key_fields = [k.strip() for k in key_text.split(";") if k.strip()]
    if not key_fields:
        raise OptionError(
            "upsert-kafka sink needs a primary key: declare 'PRIMARY KEY (<columns>) NOT ENFORCED' in the "
            "table (its columns form each record's key)"
        )
    kafka_options = {k: v for k, v in raw.items()
                     if k.lower().startswith(("properties.", "format", "value.", "json.", "csv.", "avro-confluent.", "key.avro-confluent."))}
    for key in _KAFKA_KEYS:
        value = parsed.values.get(key)
        if value is not None:
            kafka_options[key] = value
    kafka_options["key.fields"] = ";".join(key_fields)
    return dataclasses.replace(sink_config(kafka_options), upsert=True)


class UpsertKafkaDataSource(DataSource):
    """``df.writeStream.format("kindling_upsert_kafka")`` with Flink's upsert-kafka options."""

    @classmethod
    def name(cls) -> str:
        return "kindling_upsert_kafka"

    def schema(self) -> StructType:
        raise OptionError("upsert-kafka can only be used as a sink in kindling")

    def streamWriter(self, schema: StructType, overwrite: bool):
        from kindling.connectors.kafka.sink import KafkaStreamWriter

        return KafkaStreamWriter(dict(self.options), schema, upsert_sink_config(dict(self.options)))


class UpsertKafkaConnector(Connector):
    name = "upsert-kafka"
    data_source = UpsertKafkaDataSource
    sink_options = SINK_OPTIONS

    @classmethod
    def validate_sink(cls, options: Mapping[str, Any]) -> ParsedOptions:
        upsert_sink_config(options)
        return SINK_OPTIONS.validate(options)


CONNECTOR = UpsertKafkaConnector

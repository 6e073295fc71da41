"""PyFlink-style builders for Kafka sources and sinks, producing kindling ``Source``/``Sink`` descriptors.

>>> source = (KafkaSource.builder()
...     .set_bootstrap_servers("127.0.0.1:9092")
...     .set_topics("clicks")
...     .set_group_id("dashboard")
...     .set_starting_offsets(KafkaOffsetsInitializer.earliest())
...     .set_value_format("json")
...     .set_schema("ts TIMESTAMP, page STRING, user BIGINT")
...     .with_metadata("partition", "partition")
...     .build())
>>> sink = (KafkaSink.builder()
...     .set_bootstrap_servers("127.0.0.1:9092")
...     .set_topic("pages")
...     .set_value_format("json")
...     .set_key_fields("page")
...     .set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE)
...     .build())
>>> exactly_once = (KafkaSink.builder()
...     .set_bootstrap_servers("127.0.0.1:9092")
...     .set_topic("pages")
...     .set_value_format("json")
...     .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
...     .set_transactional_id_prefix("page-copy")
...     .build())

Every builder turns into Flink SQL connector options, so a builder and a ``CREATE TABLE ... WITH``
statement with the same settings are the same source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Optional, Union

from pyspark.sql import Row
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from kindling.connectors.base import Sink, Source
from kindling.connectors.kafka.options import EOF_RECORD_EVALUATOR, METADATA_KEYS, METADATA_OPTION, metadata_option

_METADATA_TYPES = {
    "topic": StringType(),
    "partition": IntegerType(),
    "offset": LongType(),
    "timestamp": TimestampType(),
    "timestamp-type": StringType(),
    "headers": MapType(StringType(), BinaryType(), True),
    "key": BinaryType(),
}


@dataclass(frozen=True)
class KafkaOffsetsInitializer:
    """Where a new job starts reading (Flink's ``OffsetsInitializer``), as ``scan.startup.*`` options."""

    options: dict = field(default_factory=dict)

    @staticmethod
    def earliest() -> "KafkaOffsetsInitializer":
        return KafkaOffsetsInitializer({"scan.startup.mode": "earliest-offset"})

    @staticmethod
    def latest() -> "KafkaOffsetsInitializer":
        return KafkaOffsetsInitializer({"scan.startup.mode": "latest-offset"})

    @staticmethod
    def committed_offsets(reset: str = "earliest") -> "KafkaOffsetsInitializer":
        """The group's committed offsets; partitions without one start at ``reset`` (earliest, latest, none)."""
        return KafkaOffsetsInitializer({"scan.startup.mode": "group-offsets", "properties.auto.offset.reset": reset})

    @staticmethod
    def timestamp(millis: int) -> "KafkaOffsetsInitializer":
        return KafkaOffsetsInitializer({"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": str(int(millis))})

    @staticmethod
    def offsets(offsets: dict[int, int]) -> "KafkaOffsetsInitializer":
        """Start offsets by partition number (single topic); unlisted partitions start at the earliest."""
        text = ";".join(f"partition:{int(p)},offset:{int(o)}" for p, o in sorted(offsets.items()))
        return KafkaOffsetsInitializer({"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": text})


class DeliveryGuarantee(str, Enum):
    AT_LEAST_ONCE = "at-least-once"
    NONE = "none"
    EXACTLY_ONCE = "exactly-once"  # one Kafka transaction per micro-batch; needs set_transactional_id_prefix


_SIMPLE_TYPES = {
    "STRING": StringType(), "VARCHAR": StringType(), "CHAR": StringType(),
    "BOOLEAN": BooleanType(), "TINYINT": ByteType(), "SMALLINT": ShortType(), "INT": IntegerType(),
    "INTEGER": IntegerType(), "BIGINT": LongType(), "FLOAT": FloatType(), "DOUBLE": DoubleType(),
    "DATE": DateType(), "TIMESTAMP": TimestampType(), "TIMESTAMP_LTZ": TimestampType(),
    "TIMESTAMP_NTZ": TimestampNTZType(), "BYTES": BinaryType(), "BINARY": BinaryType(), "VARBINARY": BinaryType(),
}


def _schema(schema: Union[StructType, str]) -> StructType:
    """A StructType, or a DDL string of simple columns (``"ts TIMESTAMP(3), page STRING, n BIGINT"``).

    Flink's type names are accepted (``TIMESTAMP(3)``, ``BYTES``, ``VARCHAR(10)``). Nested types need a
    StructType (or an active SparkSession, whose parser is then used).
    """
    if isinstance(schema, StructType):
        return schema
    import re

    fields = []
    for column in (c.strip() for c in schema.split(",")):
        match = re.fullmatch(r"`?(\w+)`?\s+(\w+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?(\s+NOT\s+NULL)?", column, re.I)
        if not match:
            fields = None
            break
        name, type_name, p, s, not_null = match.groups()
        type_name = type_name.upper()
        if type_name in ("DECIMAL", "NUMERIC", "DEC"):
            data_type = DecimalType(int(p or 10), int(s or 0))
        elif type_name in _SIMPLE_TYPES:
            data_type = _SIMPLE_TYPES[type_name]
        else:
            fields = None
            break
        fields.append(StructField(name, data_type, not_null is None))
    if fields:
        return StructType(fields)
    from pyspark.sql.types import _parse_datatype_string

    parsed = _parse_datatype_string(schema)
    if not isinstance(parsed, StructType):
        raise ValueError(f"schema {schema!r} is not a list of columns ('name TYPE, ...')")
    return parsed


class KafkaSourceBuilder:
    def __init__(self) -> None:
        self._options: dict[str, str] = {}
        self._schema: Optional[StructType] = None
        self._metadata: list[tuple[str, str]] = []

    def set_bootstrap_servers(self, servers: str) -> "KafkaSourceBuilder":
        self._options["properties.bootstrap.servers"] = servers
        return self

    def set_topics(self, *topics: str) -> "KafkaSourceBuilder":
        names = [t for topic in topics for t in ([topic] if isinstance(topic, str) else list(topic))]
        self._options["topic"] = ";".join(names)
        return self

    def set_topic_pattern(self, pattern: str) -> "KafkaSourceBuilder":
        self._options["topic-pattern"] = pattern
        return self

    def set_group_id(self, group_id: str) -> "KafkaSourceBuilder":
        self._options["properties.group.id"] = group_id
        return self

    def set_starting_offsets(self, initializer: KafkaOffsetsInitializer) -> "KafkaSourceBuilder":
        self._options.update(initializer.options)
        return self

    def set_bounded(self, stopping_offsets: KafkaOffsetsInitializer) -> "KafkaSourceBuilder":
        """Make the read bounded (Flink's ``setBounded``): it ends at ``latest()``, ``timestamp(ms)``,
        ``offsets({...})`` or ``committed_offsets()``, fixed when the job first starts, and the job FINISHES."""
        mode = stopping_offsets.options["scan.startup.mode"]
        if mode == "earliest-offset":
            raise ValueError("set_bounded: a read cannot end at the earliest offset; "
                             "use latest(), timestamp(ms), offsets({...}) or committed_offsets()")
        for key, value in stopping_offsets.options.items():
            if key.startswith("scan.startup."):
                self._options["scan.bounded." + key[len("scan.startup."):]] = value
        return self

    def set_eof_record_evaluator(self, evaluator: Callable[[Row], bool]) -> "KafkaSourceBuilder":
        """End each partition before its first record for which ``evaluator(record)`` is true (Flink's
        FLIP-208 ``setEofRecordEvaluator``); that record is not emitted, and the job FINISHES when every
        partition has ended (or reached its ``set_bounded`` end). The evaluator runs on the driver over
        the records of each micro-batch before they are read, so they are read twice."""
        import base64

        from pyspark import cloudpickle

        from kindling.datastream.functions import ship_by_value

        if not callable(evaluator):
            raise TypeError(f"set_eof_record_evaluator takes a function of the record, got {type(evaluator).__name__}")
        ship_by_value(evaluator)
        self._options[EOF_RECORD_EVALUATOR] = base64.b64encode(cloudpickle.dumps(evaluator)).decode("ascii")
        return self

    def set_value_format(self, fmt: str) -> "KafkaSourceBuilder":
        self._options["value.format"] = fmt
        return self

    def set_schema(self, schema: Union[StructType, str]) -> "KafkaSourceBuilder":
        """The value columns (decoded from each record's value)."""
        self._schema = _schema(schema)
        return self

    def set_property(self, key: str, value: object) -> "KafkaSourceBuilder":
        """A Kafka client property (``properties.<key>``) or, if it contains a connector option name, that option."""
        name = key if key.startswith(("properties.", "scan.", "json.", "csv.", "value.")) else "properties." + key
        self._options[name] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def set_option(self, key: str, value: object) -> "KafkaSourceBuilder":
        """Any Flink Kafka connector option by its full name."""
        self._options[key] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def with_metadata(self, column: str, key: str) -> "KafkaSourceBuilder":
        """Add a metadata column: ``key`` is one of topic, partition, offset, timestamp, timestamp-type, headers, key."""
        if key not in METADATA_KEYS:
            raise ValueError(f"unknown Kafka metadata key {key!r}; allowed: {', '.join(METADATA_KEYS)}")
        self._metadata.append((column, key))
        return self

    def build(self) -> Source:
        options = dict(self._options)
        fields = list(self._schema.fields) if self._schema is not None else []
        if not fields and options.get("value.format") == "raw":
            fields = [StructField("value", BinaryType(), True)]
        if self._metadata:
            options[METADATA_OPTION] = metadata_option(self._metadata)
            fields += [StructField(c, _METADATA_TYPES[k], True) for c, k in self._metadata]
        return Source("kafka", options, StructType(fields) if fields else None)


class KafkaSinkBuilder:
    def __init__(self) -> None:
        self._options: dict[str, str] = {}

    def set_bootstrap_servers(self, servers: str) -> "KafkaSinkBuilder":
        self._options["properties.bootstrap.servers"] = servers
        return self

    def set_topic(self, topic: str) -> "KafkaSinkBuilder":
        self._options["topic"] = topic
        return self

    def set_value_format(self, fmt: str) -> "KafkaSinkBuilder":
        self._options["value.format"] = fmt
        return self

    def set_key_format(self, fmt: str) -> "KafkaSinkBuilder":
        self._options["key.format"] = fmt
        return self

    def set_key_fields(self, *fields: str) -> "KafkaSinkBuilder":
        """Columns that form the record key; the key format defaults to the value format."""
        self._options["key.fields"] = ";".join(fields)
        return self

    def set_delivery_guarantee(self, guarantee: Union[DeliveryGuarantee, str]) -> "KafkaSinkBuilder":
        self._options["sink.delivery-guarantee"] = guarantee.value if isinstance(guarantee, DeliveryGuarantee) else str(guarantee)
        return self

    def set_transactional_id_prefix(self, prefix: str) -> "KafkaSinkBuilder":
        """``sink.transactional-id-prefix``: required for exactly-once; unique to this job (checkpoint)."""
        self._options["sink.transactional-id-prefix"] = prefix
        return self

    def set_partitioner(self, partitioner: str) -> "KafkaSinkBuilder":
        self._options["sink.partitioner"] = partitioner
        return self

    def set_property(self, key: str, value: object) -> "KafkaSinkBuilder":
        name = key if key.startswith("properties.") else "properties." + key
        self._options[name] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def set_option(self, key: str, value: object) -> "KafkaSinkBuilder":
        self._options[key] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def build(self) -> Sink:
        options = dict(self._options)
        if "key.fields" in options and "key.format" not in options:
            fmt = options.get("value.format", options.get("format", "json"))
            options["key.format"] = fmt if fmt != "raw" or ";" not in options["key.fields"] else "json"
        return Sink("kafka", options)


class KafkaSource:
    @staticmethod
    def builder() -> KafkaSourceBuilder:
        return KafkaSourceBuilder()


class KafkaSink:
    @staticmethod
    def builder() -> KafkaSinkBuilder:
        return KafkaSinkBuilder()

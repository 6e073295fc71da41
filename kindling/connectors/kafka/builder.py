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

PyFlink's spelling works on the same builders: ``set_value_only_deserializer(schema)`` on the source
(records of the schema's type: a ``Row`` for ``JsonRowDeserializationSchema``, a ``str`` for
``SimpleStringSchema``, ...), ``set_properties({...})``, and on the sink
``set_record_serializer(KafkaRecordSerializationSchema.builder().set_topic(...)
.set_value_serialization_schema(...).build())``. The schemas are kindling's formats
(:mod:`kindling.common.serialization`, ``kindling.datastream.formats``).

Defaults are those of Flink's DataStream builders: a source starts at the earliest offsets. The sink's
delivery guarantee is kindling's ``at-least-once`` (Flink's DataStream builder defaults to ``NONE``;
``set_delivery_guarantee(DeliveryGuarantee.NONE)`` gives it): the same records either way, but a
failed delivery fails the micro-batch instead of losing records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

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
from kindling.unsupported import UnsupportedPyFlinkAPI

if TYPE_CHECKING:
    from kindling.common.serialization import DeserializationSchema, SerializationSchema
    from kindling.datastream.stream import DataStream

_MODULE = "pyflink.datastream.connectors.kafka"

_METADATA_TYPES = {
    "topic": StringType(),
    "partition": IntegerType(),
    "offset": LongType(),
    "timestamp": TimestampType(),
    "timestamp-type": StringType(),
    "headers": MapType(StringType(), BinaryType(), True),
    "key": BinaryType(),
}


class KafkaOffsetResetStrategy(Enum):
    """Where a partition without a usable offset starts (Flink's ``OffsetResetStrategy``): ``auto.offset.reset``."""

    LATEST = 0
    EARLIEST = 1
    NONE = 2


@dataclass(frozen=True)
class KafkaTopicPartition:
    """A partition of a topic (Flink's ``TopicPartition``), as ``KafkaOffsetsInitializer.offsets`` takes it."""

    topic: str
    partition: int


def _reset_name(reset: Union[KafkaOffsetResetStrategy, str]) -> str:
    return reset.name.lower() if isinstance(reset, KafkaOffsetResetStrategy) else str(reset).lower()


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
    def committed_offsets(offset_reset_strategy: Union[KafkaOffsetResetStrategy, str] = KafkaOffsetResetStrategy.NONE,
                          ) -> "KafkaOffsetsInitializer":
        """The group's committed offsets; a partition without one starts as ``offset_reset_strategy`` says
        (Flink's default ``NONE``: the job fails; ``EARLIEST``, ``LATEST``)."""
        return KafkaOffsetsInitializer({"scan.startup.mode": "group-offsets",
                                        "properties.auto.offset.reset": _reset_name(offset_reset_strategy)})

    @staticmethod
    def timestamp(millis: int) -> "KafkaOffsetsInitializer":
        return KafkaOffsetsInitializer({"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": str(int(millis))})

    @staticmethod
    def offsets(offsets: dict[Union[int, KafkaTopicPartition], int],
                offset_reset_strategy: Union[KafkaOffsetResetStrategy, str] = KafkaOffsetResetStrategy.EARLIEST,
                ) -> "KafkaOffsetsInitializer":
        """Start offsets by partition: ``{KafkaTopicPartition('t', 0): 42}`` (PyFlink) or ``{0: 42}`` (one topic);
        unlisted partitions start at the earliest offset."""
        if _reset_name(offset_reset_strategy) != "earliest":
            raise ValueError(f"KafkaOffsetsInitializer.offsets: kindling starts an out-of-range or unlisted partition at "
                             f"its earliest offset only (KafkaOffsetResetStrategy.EARLIEST), got {offset_reset_strategy!r}")
        topics = {p.topic for p in offsets if isinstance(p, KafkaTopicPartition)}
        if len(topics) > 1:
            raise ValueError(f"KafkaOffsetsInitializer.offsets: kindling takes start offsets for one topic, got {sorted(topics)}")
        by_partition = {(p.partition if isinstance(p, KafkaTopicPartition) else int(p)): int(o) for p, o in offsets.items()}
        text = ";".join(f"partition:{p},offset:{o}" for p, o in sorted(by_partition.items()))
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


# Flink's KafkaSource properties that are not Kafka client settings: how kindling takes them.
_SOURCE_PROPERTIES = {
    "partition.discovery.interval.ms": lambda value: {"scan.topic-partition-discovery.interval": f"{int(value)} ms"},
    "client.id.prefix": lambda value: {"properties.client.id": str(value)},
    # kindling keeps offsets in Spark's checkpoint and commits none to Kafka; consumer metrics are Spark's.
    "commit.offsets.on.checkpoint": lambda value: {},
    "register.consumer.metrics": lambda value: {},
}


class KafkaSourceBuilder:
    set_partitions = UnsupportedPyFlinkAPI(f"{_MODULE}.KafkaSourceBuilder.set_partitions")
    set_unbounded = UnsupportedPyFlinkAPI(f"{_MODULE}.KafkaSourceBuilder.set_unbounded")

    def __init__(self) -> None:
        # Flink's KafkaSource starts at the earliest offsets unless told otherwise.
        self._options: dict[str, str] = {"scan.startup.mode": "earliest-offset"}
        self._schema: Optional[StructType] = None
        self._metadata: list[tuple[str, str]] = []
        self._deserializer: Optional["DeserializationSchema"] = None

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
        for key in [k for k in self._options if k.startswith("scan.startup.")]:
            del self._options[key]
        self._options.update(initializer.options)
        return self

    def set_value_only_deserializer(self, deserialization_schema: "DeserializationSchema") -> "KafkaSourceBuilder":
        """Each record is the message value as the schema reads it (PyFlink's ``set_value_only_deserializer``):
        a ``Row`` of ``JsonRowDeserializationSchema``/``CsvRowDeserializationSchema``'s type, a ``str`` for
        ``SimpleStringSchema``, ``bytes`` for ``ByteArraySchema``."""
        from kindling.common.serialization import DeserializationSchema

        if not isinstance(deserialization_schema, DeserializationSchema):
            raise TypeError(f"set_value_only_deserializer takes a DeserializationSchema (SimpleStringSchema(), "
                            f"JsonRowDeserializationSchema..., ...), got {type(deserialization_schema).__name__}")
        self._deserializer = deserialization_schema
        self._options["value.format"] = deserialization_schema.format
        self._options.update({"value." + k: v for k, v in deserialization_schema.format_options().items()})
        return self

    def set_client_id_prefix(self, prefix: str) -> "KafkaSourceBuilder":
        """The consumers' ``client.id`` (Flink gives each reader ``<prefix>-<subtask>``)."""
        self._options["properties.client.id"] = prefix
        return self

    def set_properties(self, props: dict) -> "KafkaSourceBuilder":
        """Several ``set_property`` calls (PyFlink's ``set_properties({'bootstrap.servers': ..., 'group.id': ...})``)."""
        for key, value in props.items():
            self.set_property(key, value)
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
        """A Kafka client property (``properties.<key>``; ``bootstrap.servers`` and ``group.id`` as in Flink), one of
        Flink's KafkaSource properties (``partition.discovery.interval.ms``, ``client.id.prefix``, ...) or, if it
        names a connector option, that option."""
        if key in _SOURCE_PROPERTIES:
            self._options.update(_SOURCE_PROPERTIES[key](value))
            return self
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
        type_info = None
        if self._deserializer is not None:
            if self._schema is not None or self._metadata:
                raise ValueError("KafkaSource: set_value_only_deserializer gives the records their type; do not also "
                                 "set_schema or with_metadata (those build kindling's own rows)")
            type_info = self._deserializer.produced_type()
            fields = list(type_info.record_schema().fields)
        else:
            fields = list(self._schema.fields) if self._schema is not None else []
        if not fields and options.get("value.format") == "raw":
            fields = [StructField("value", BinaryType(), True)]
        if self._metadata:
            options[METADATA_OPTION] = metadata_option(self._metadata)
            fields += [StructField(c, _METADATA_TYPES[k], True) for c, k in self._metadata]
        source = Source("kafka", options, StructType(fields) if fields else None)
        if type_info is not None:
            source.type_info = type_info  # type: ignore[attr-defined]  # the stream's records are of this type
        return source


class KafkaSinkBuilder:
    def __init__(self) -> None:
        self._options: dict[str, str] = {}
        self._record_serializer: Optional["KafkaRecordSerializationSchema"] = None

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

    def set_record_serializer(self, record_serializer: "KafkaRecordSerializationSchema") -> "KafkaSinkBuilder":
        """How records become Kafka records (PyFlink's ``set_record_serializer``): the topic, and the value (and key)
        serialization schemas, which check the stream's records when the sink is added to it (``sink_to``)."""
        if not isinstance(record_serializer, KafkaRecordSerializationSchema):
            raise TypeError("set_record_serializer takes a KafkaRecordSerializationSchema (KafkaRecordSerializationSchema"
                            f".builder().set_topic(...).set_value_serialization_schema(...).build()), got "
                            f"{type(record_serializer).__name__}")
        self._record_serializer = record_serializer
        self._options["topic"] = record_serializer.topic
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
        serializer = self._record_serializer
        if serializer is not None:
            clash = [k for k in options if k in ("value.format", "format", "key.format", "key.fields")]
            if clash:
                raise ValueError(f"KafkaSink: set_record_serializer gives the formats; do not also set {clash[0]!r}")
            options.update(serializer.value_options())
            sink = Sink("kafka", options)
            sink.prepare = serializer.prepare(options)
            return sink
        if "key.fields" in options and "key.format" not in options:
            fmt = options.get("value.format", options.get("format", "json"))
            options["key.format"] = fmt if fmt != "raw" or ";" not in options["key.fields"] else "json"
        return Sink("kafka", options)


class KafkaRecordSerializationSchema:
    """How a stream record becomes a Kafka record (Flink's ``KafkaRecordSerializationSchema``): a fixed topic, the
    value's serialization schema and optionally the key's, each one of kindling's formats over the record's fields."""

    def __init__(self, topic: str, value_schema: "SerializationSchema", key_schema: Optional["SerializationSchema"] = None) -> None:
        self.topic = topic
        self.value_schema = value_schema
        self.key_schema = key_schema

    @staticmethod
    def builder() -> "KafkaRecordSerializationSchemaBuilder":
        return KafkaRecordSerializationSchemaBuilder()

    def value_options(self) -> dict[str, str]:
        """The sink options of the value format (the key's are known when the stream's fields are)."""
        return {"value.format": self.value_schema.format,
                **{"value." + k: v for k, v in self.value_schema.format_options().items()}}

    def prepare(self, options: dict[str, str]) -> Callable[["DataStream"], tuple["DataStream", Sink]]:
        """``sink_to``'s step (as PyFlink's ``KafkaSink`` preprocesses a stream): check the stream's records against
        the schemas and project them into the columns the formats write, then the sink's key options."""

        def prepare(stream: "DataStream") -> tuple["DataStream", Sink]:
            from pyspark.sql import functions as F

            schema, record_type = stream.schema, stream.get_type()
            value = self.value_schema.written_fields(record_type, schema)
            sink_options = dict(options)
            columns = [(f.source, f.name, f.empty_if_null) for f in value]
            if self.key_schema is not None:
                key = self.key_schema.written_fields(record_type, schema)
                key_names = self._key_columns(key, value, columns)
                key_options = self.key_schema.format_options()
                if key_options != self.value_schema.format_options() and self.key_schema.format == self.value_schema.format:
                    raise ValueError("KafkaRecordSerializationSchema: kindling writes a key and a value of one format with "
                                     f"the same options; the key's {key_options} differ from the value's "
                                     f"{self.value_schema.format_options()}")
                sink_options.update({"key.format": self.key_schema.format, "key.fields": ";".join(key_names)})
                if any(name not in {c[1] for c in columns[:len(value)]} for name in key_names):
                    sink_options["value.fields-include"] = "EXCEPT_KEY"
            internal = [c for c in stream._df.columns if c not in schema.fieldNames()]
            selected = [(F.coalesce(F.col(f"`{source}`"), F.lit(b"")) if empty else F.col(f"`{source}`")).alias(name)
                        for source, name, empty in columns]
            projected = stream._transform(lambda df: df.select(*selected, *[F.col(f"`{c}`") for c in internal]),
                                          "Kafka Sink Serializer")
            return projected, Sink("kafka", sink_options)

        return prepare

    def _key_columns(self, key: list[Any], value: list[Any], columns: list[tuple[str, str, bool]]) -> list[str]:
        """The key's columns among ``columns`` (the value's), adding a column where the key needs one of its own."""
        written = {(f.source, f.name, f.empty_if_null) for f in value}
        if all((f.source, f.name, f.empty_if_null) in written for f in key):
            return [f.name for f in key]  # the key's fields are value fields too (value.fields-include ALL)
        taken = {name for _, name, _ in columns}
        if len(key) == 1 and self.key_schema is not None and self.key_schema.format == "raw":
            name = next(n for n in ("key", *(f"key_{i}" for i in range(1, len(taken) + 2))) if n not in taken)
            columns.append((key[0].source, name, key[0].empty_if_null))
            return [name]
        if taken & {f.name for f in key}:
            raise ValueError("KafkaRecordSerializationSchema: the key and value schemas name the same field for different "
                             "fields of the record; kindling writes one column per name")
        columns.extend((f.source, f.name, f.empty_if_null) for f in key)
        return [f.name for f in key]


class KafkaRecordSerializationSchemaBuilder:
    """PyFlink's ``KafkaRecordSerializationSchema.builder()``: ``set_topic``, ``set_value_serialization_schema``,
    ``set_key_serialization_schema``, ``build``."""

    set_topic_selector = UnsupportedPyFlinkAPI(f"{_MODULE}.KafkaRecordSerializationSchemaBuilder.set_topic_selector")

    def __init__(self) -> None:
        self._topic: Optional[str] = None
        self._value: Optional["SerializationSchema"] = None
        self._key: Optional["SerializationSchema"] = None

    def set_topic(self, topic: str) -> "KafkaRecordSerializationSchemaBuilder":
        self._topic = topic
        return self

    def set_value_serialization_schema(self, value_serialization_schema: "SerializationSchema") -> "KafkaRecordSerializationSchemaBuilder":
        self._value = _serialization_schema(value_serialization_schema, "set_value_serialization_schema")
        return self

    def set_key_serialization_schema(self, key_serialization_schema: "SerializationSchema") -> "KafkaRecordSerializationSchemaBuilder":
        self._key = _serialization_schema(key_serialization_schema, "set_key_serialization_schema")
        return self

    def build(self) -> KafkaRecordSerializationSchema:
        if self._value is None:
            raise ValueError("KafkaRecordSerializationSchema: No value serializer is configured.")
        if self._topic is None:
            raise ValueError("KafkaRecordSerializationSchema: No topic selector is configured.")
        return KafkaRecordSerializationSchema(self._topic, self._value, self._key)


def _serialization_schema(schema: Any, method: str) -> "SerializationSchema":
    from kindling.common.serialization import SerializationSchema

    if not isinstance(schema, SerializationSchema):
        raise TypeError(f"{method} takes a SerializationSchema (SimpleStringSchema(), JsonRowSerializationSchema..., "
                        f"...), got {type(schema).__name__}")
    return schema


class KafkaTopicSelector:
    """PyFlink's per-record topic choice: kindling's Kafka sink writes one topic (``set_topic``)."""

    def apply(self, data: Any) -> str:
        raise NotImplementedError


class KafkaSource:
    @staticmethod
    def builder() -> KafkaSourceBuilder:
        return KafkaSourceBuilder()


class KafkaSink:
    @staticmethod
    def builder() -> KafkaSinkBuilder:
        return KafkaSinkBuilder()

"""PyFlink's Kinesis DataStream API (``FlinkKinesisConsumer``, ``KinesisStreamsSink``) as the Kinesis connector's options.

>>> from kindling.common.serialization import SimpleStringSchema
>>> from kindling.common.typeinfo import Types
>>> aws = {"aws.region": "us-east-1", "aws.endpoint": "http://127.0.0.1:4568"}
>>> consumer = FlinkKinesisConsumer("clicks", SimpleStringSchema(), {**aws, "flink.stream.initpos": "TRIM_HORIZON"})
>>> sink = (KinesisStreamsSink.builder()
...     .set_kinesis_client_properties(aws)
...     .set_stream_name("pages")
...     .set_serialization_schema(SimpleStringSchema())
...     .set_partition_key_generator(PartitionKeyGenerator.random())
...     .build())
>>> env.add_source(consumer).map(str.upper, output_type=Types.STRING()).sink_to(sink)

Both turn into the options of the SQL connector (:mod:`kindling.connectors.kinesis.options`), so a consumer
and a ``CREATE TABLE ... WITH ('connector' = 'kinesis-legacy', ...)`` with the same settings read the same
records the same way (exactly once, resharding, EFO, de-aggregation), and the sink is the table sink.

**Consumer properties** (``config_props``, Flink's ``ConsumerConfigConstants``), by one rule, the SQL
connector's read backwards (Flink's ``scan.X`` is the consumer's ``flink.X``):

* ``flink.X`` -> ``scan.X`` for every 4.x source option of ``options.py``; ``flink.stream.initpos.timestamp[.format]``
  -> ``scan.stream.initpos-timestamp[-format]``; ``flink.stream.efo.consumerarn.<stream>`` -> ``scan.stream.efo.consumerarn.<stream>``;
  ``flink.shard.consumer.error.recoverable[i].exception`` -> ``shard.consumer.error.recoverable[i].exception``
  (accepted as the SQL connector accepts it: a Java exception class is not loaded).
* ``flink.watermark.sync.interval`` / ``.lookahead.millis`` / ``.sync.queue.capacity`` take effect only with
  ``set_watermark_tracker`` on a stream given event time (Flink reads them only with a watermark tracker and a
  periodic watermark assigner): then shards are synchronised (``scan.watermark.*``) with Flink's lookahead,
  ``max(lookahead, 3 x sync interval)``.
* Flink's EFO consumer-registration and subscription waits (``flink.stream.describestreamconsumer.*``,
  ``flink.stream.registerstreamconsumer.*``, ``flink.stream.deregisterstreamconsumer.*``,
  ``flink.shard.subscribetoshard.timeout``, ``flink.stream.efo.http-client.read-timeout``) are checked and have
  no effect: kindling's EFO client waits by its own rules.
* ``aws.*`` as in SQL (``aws.credentials.provider.basic.accesskeyid`` is ``aws.credentials.basic.accesskeyid``);
  unlisted ``aws.*`` keys pass through. Any other key, or a bad value, is refused naming it and what is allowed.

**Records**: the deserializer is one of kindling's schemas (``SimpleStringSchema``, ``ByteArraySchema``,
``JsonRowDeserializationSchema``, ``CsvRowDeserializationSchema``): its format reads each record's data and its
type is the stream's. **Sink**: ``set_serialization_schema`` picks the format and checks the stream's records
when the sink is added (``sink_to``); ``PartitionKeyGenerator.random()`` / ``.fixed()`` are ``sink.partitioner``
``random`` / ``fixed`` (the Spark task index, as Flink's subtask index); the buffering setters are the
``sink.*`` options; ``set_kinesis_client_properties`` takes ``aws.*`` (and Flink's ``aws.http-client.*`` /
``aws.http.protocol.version``). Java objects (a custom ``KinesisShardAssigner``, ``PartitionKeyGenerator``,
``WatermarkTracker``, ``KinesisDeserializationSchema``, a periodic watermark assigner) and the Firehose sink
are refused where used, saying what to use instead.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Union

from kindling.connectors.base import Sink, Source
from kindling.connectors.kinesis.options import (
    FORMATS,
    LEGACY_SOURCE_OPTIONS,
    SOURCE_OPTIONS,
    canonical,
    sink_config,
    source_config,
)
from kindling.datastream.functions import SourceFunction
from kindling.options import ConfigOption, OptionError, OptionSet, float_option, int_option

if TYPE_CHECKING:
    from kindling.common.serialization import DeserializationSchema, SerializationSchema
    from kindling.datastream.stream import DataStream

log = logging.getLogger("kindling.connectors.kinesis")

CONNECTOR = "kinesis-legacy"  # Flink's FlinkKinesisConsumer is the legacy (4.x) source
_CONSUMER = "FlinkKinesisConsumer"
_SINK = "KinesisStreamsSink"
_SCHEMAS = ("SimpleStringSchema(), ByteArraySchema(), JsonRowDeserializationSchema.builder()...build() or "
            "CsvRowDeserializationSchema.Builder(...).build()")


# ---------------------------------------------------------------------------------------------------------
# Consumer properties: flink.* -> the SQL connector's scan.* options
# ---------------------------------------------------------------------------------------------------------

_TIMESTAMP_KEYS = {"scan.stream.initpos-timestamp": "flink.stream.initpos.timestamp",
                   "scan.stream.initpos-timestamp-format": "flink.stream.initpos.timestamp.format"}


def flink_key(scan_key: str) -> str:
    """The consumer property of a SQL ``scan.*`` option (``scan.shard.idle.interval`` -> ``flink.shard.idle.interval``)."""
    return _TIMESTAMP_KEYS.get(scan_key) or "flink." + scan_key[len("scan."):]


# flink.* -> scan.*: every legacy scan option except the shard assigner (set_shard_assigner sets it).
CONSUMER_KEYS: dict[str, str] = {flink_key(o.key): o.key for o in LEGACY_SOURCE_OPTIONS
                                 if o.key.startswith("scan.") and o.key != "scan.shard-assigner"}
_WATERMARK_KEYS = tuple(k for k in CONSUMER_KEYS if k.startswith("flink.watermark."))
_ARN_PREFIX = "flink.stream.efo.consumerarn."
_RECOVERABLE_PREFIX = "flink.shard.consumer.error.recoverable"


def _retry_waits(prefix: str, timeout: bool) -> list[ConfigOption[Any]]:
    return [int_option(prefix + ".maxretries", None, minimum=0), int_option(prefix + ".backoff.base", None, minimum=0),
            int_option(prefix + ".backoff.max", None, minimum=0), float_option(prefix + ".backoff.expconst", None, minimum=1.0),
            *([int_option(prefix + ".timeout", None, "Seconds.", minimum=0)] if timeout else [])]


# Flink's consumer properties that kindling checks and does not use (its EFO client waits by its own rules).
_NO_EFFECT: list[ConfigOption[Any]] = [
    *_retry_waits("flink.stream.describestreamconsumer", timeout=False),
    *_retry_waits("flink.stream.registerstreamconsumer", timeout=True),
    *_retry_waits("flink.stream.deregisterstreamconsumer", timeout=True),
    int_option("flink.shard.subscribetoshard.timeout", None, "Seconds.", minimum=0),
    int_option("flink.stream.efo.http-client.read-timeout", None, "Milliseconds.", minimum=0),
]
_NO_EFFECT_KEYS = frozenset(o.key.lower() for o in _NO_EFFECT)

CONSUMER_OPTIONS = OptionSet(
    _CONSUMER,
    [*(dataclasses.replace(o, key=flink_key(o.key)) for o in LEGACY_SOURCE_OPTIONS
       if o.key.startswith("scan.") and flink_key(o.key) in CONSUMER_KEYS),
     *_NO_EFFECT,
     *(o for o in SOURCE_OPTIONS.options if o.key.startswith("aws."))],
    prefixes=("aws.", _ARN_PREFIX, _RECOVERABLE_PREFIX),
    ignored=(),
)
_LOWER_KEYS = {k.lower(): v for k, v in CONSUMER_KEYS.items()}


def _text(value: Any) -> str:
    """A property value as Flink's ``Properties`` hold it (a string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def consumer_options(config_props: Mapping[str, Any], watermark_sync: bool = False) -> dict[str, str]:
    """The SQL connector's options for a consumer's properties (every key and value checked, see the module
    docstring); ``watermark_sync``: a watermark tracker is set and the stream has event time."""
    if not isinstance(config_props, Mapping):
        raise TypeError(f"{_CONSUMER}: config_props is a dict of consumer properties (e.g. {{'aws.region': 'us-east-1', "
                        f"'flink.stream.initpos': 'TRIM_HORIZON'}}), got {type(config_props).__name__}")
    raw = canonical({str(k): _text(v) for k, v in config_props.items()})
    try:
        parsed = CONSUMER_OPTIONS.validate(raw)
    except OptionError as exc:
        raise OptionError(str(exc).replace(f"{_CONSUMER} option", f"{_CONSUMER} property")
                          .replace("Supported options:", "Supported properties:")) from None
    options: dict[str, str] = {}
    for key, value in raw.items():
        lowered = key.lower()
        if lowered in _LOWER_KEYS:
            if not lowered.startswith("flink.watermark."):
                options[_LOWER_KEYS[lowered]] = value
        elif lowered.startswith(_ARN_PREFIX):
            options["scan." + key[len("flink."):]] = value
        elif lowered.startswith(_RECOVERABLE_PREFIX):
            options[key[len("flink."):]] = value
        elif lowered.startswith("aws."):
            options[key] = value
    if watermark_sync:
        sync_ms = int(parsed["flink.watermark.sync.interval"])
        lookahead_ms = int(parsed["flink.watermark.lookahead.millis"] or 0)
        options["scan.watermark.sync.interval"] = str(sync_ms)
        # Flink emits records up to max(lookahead, 3 x sync interval) ahead, to offset synchronisation latency.
        options["scan.watermark.lookahead.millis"] = str(max(lookahead_ms, 3 * sync_ms))
        options["scan.watermark.sync.queue.capacity"] = str(parsed["flink.watermark.sync.queue.capacity"])
    return options


_SCAN_KEY = re.compile(r"'(scan\.[^'\s]+)'")


def _as_consumer_message(message: str) -> str:
    """An error of the SQL connector's rules in the consumer's words (its property names)."""
    message = _SCAN_KEY.sub(lambda m: f"'{flink_key(m.group(1))}'", message)
    return message.replace(f"{CONNECTOR} source option", f"{_CONSUMER} property").replace(f"{CONNECTOR} source", _CONSUMER)


# ---------------------------------------------------------------------------------------------------------
# The consumer and its Java-object parameters
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Builtin:
    """One of Flink's built-in implementations, where PyFlink holds a Java object."""

    name: str
    settings: tuple = ()


def _builtin(value: Any, kind: type, names: tuple[str, ...]) -> Optional[str]:
    java = getattr(value, "_java", None) if isinstance(value, kind) else None
    return java.name if isinstance(java, _Builtin) and java.name in names else None


class _JavaWrapper:
    """A PyFlink class holding a Java object: here one of Flink's built-in implementations (``_Builtin``), or what
    a program passed, refused where it is used."""

    _factories: dict[str, str] = {}

    def __init__(self, java: Any) -> None:
        self._java = java

    def __repr__(self) -> str:
        name = type(self).__name__
        if isinstance(self._java, _Builtin):
            return f"{name}.{self._factories.get(self._java.name, self._java.name)}()"
        return f"{name}({self._java!r})"


class KinesisShardAssigner(_JavaWrapper):
    """Which subtask reads which shard (Flink's ``KinesisShardAssigner``). Spark plans one partition per shard that
    has records in a micro-batch, so the built-in assigners are accepted (``scan.shard-assigner``) and change
    nothing; a custom one (a Java object) is refused by ``set_shard_assigner``."""

    _factories = {"default": "default_shard_assigner", "uniform": "uniform_shard_assigner"}

    def __init__(self, j_kinesis_shard_assigner: Any) -> None:
        super().__init__(j_kinesis_shard_assigner)

    @staticmethod
    def default_shard_assigner() -> "KinesisShardAssigner":
        return KinesisShardAssigner(_Builtin("default"))

    @staticmethod
    def uniform_shard_assigner() -> "KinesisShardAssigner":
        return KinesisShardAssigner(_Builtin("uniform"))


class KinesisDeserializationSchema:
    """Flink's Kinesis-specific deserializer (record data plus partition key, sequence number, arrival time,
    stream and shard): in PyFlink a Java object, which kindling cannot run."""

    def __init__(self, j_kinesis_deserialization_schema: Any = None) -> None:
        raise NotImplementedError(
            "KinesisDeserializationSchema wraps a Java schema, which kindling cannot run: give FlinkKinesisConsumer a "
            f"DeserializationSchema ({_SCHEMAS}); for the shard, sequence number or arrival time, read the stream with "
            "SQL's metadata columns ('connector' = 'kinesis', METADATA FROM 'shard-id' | 'sequence-number' | 'timestamp')")


class WatermarkTracker(_JavaWrapper):
    """Flink's global watermark tracker. ``job_manager_watermark_tracker`` is kindling's watermark synchronisation
    across the consumer's shards (``scan.watermark.*``); any other tracker is a Java object and is refused."""

    _factories = {"job-manager": "job_manager_watermark_tracker"}

    def __init__(self, j_watermark_tracker: Any) -> None:
        super().__init__(j_watermark_tracker)

    @staticmethod
    def job_manager_watermark_tracker(aggregate_name: str, log_accumulator_interval_millis: int = -1) -> "WatermarkTracker":
        """Synchronise the shards' event time, as Flink's ``JobManagerWatermarkTracker`` (the aggregate name and log
        interval are accepted: kindling aligns the shards of one consumer on the driver, and Spark's watermark is
        the slowest source's, so consumers need no shared aggregate)."""
        if not isinstance(aggregate_name, str) or not aggregate_name:
            raise ValueError(f"job_manager_watermark_tracker: aggregate_name must be a non-empty string, got {aggregate_name!r}")
        return WatermarkTracker(_Builtin("job-manager", (aggregate_name, int(log_accumulator_interval_millis))))


class FlinkKinesisConsumer(SourceFunction):
    """Flink's Kinesis consumer for ``env.add_source``: reads one or more streams, exactly once, as the
    ``kinesis-legacy`` connector (one source per stream, unioned). Properties are checked here, as Flink checks
    them in the constructor; see the module docstring for how they map.

    >>> consumer = FlinkKinesisConsumer(["clicks", "views"], SimpleStringSchema(),
    ...                                 {"aws.region": "eu-west-1", "flink.stream.initpos": "LATEST"})
    >>> stream = env.add_source(consumer, "kinesis")
    """

    def __init__(self, streams: Union[str, list[str]], deserializer: "DeserializationSchema",
                 config_props: Mapping[str, Any]) -> None:
        from kindling.common.serialization import DeserializationSchema

        super().__init__(None)
        names = [streams] if isinstance(streams, str) else list(streams) if isinstance(streams, (list, tuple)) else None
        if names is None:
            raise TypeError(f"{_CONSUMER}: streams is a stream name or a list of them, got {type(streams).__name__}")
        if not names:
            raise ValueError(f"{_CONSUMER}: Must be subscribed to at least one stream")
        bad = [n for n in names if not isinstance(n, str) or not n.strip()]
        if bad:
            raise ValueError(f"{_CONSUMER}: stream names must be non-empty strings, got {bad[0]!r}")
        if not isinstance(deserializer, DeserializationSchema):
            raise TypeError(f"{_CONSUMER}: the deserializer is a DeserializationSchema ({_SCHEMAS}), got "
                            f"{type(deserializer).__name__}")
        if deserializer.format not in FORMATS:
            raise ValueError(f"{_CONSUMER}: {type(deserializer).__name__} reads the {deserializer.format!r} format; kindling's "
                             f"Kinesis connector reads {', '.join(repr(f) for f in FORMATS)} records: use {_SCHEMAS}")
        self._streams = names
        self._deserializer = deserializer
        self._properties = dict(config_props) if isinstance(config_props, Mapping) else config_props
        self._shard_assigner: Optional[str] = None
        self._watermark_tracker = False
        for name in names:
            self._check(self._options(name, watermark_sync=True))
        for key in (k for k in self._properties if str(k).lower() in _NO_EFFECT_KEYS):
            log.info("%s property '%s' is accepted and has no effect in kindling (its EFO client waits by its own rules)",
                     _CONSUMER, key)

    def set_shard_assigner(self, shard_assigner: KinesisShardAssigner) -> "FlinkKinesisConsumer":
        """Accepts ``KinesisShardAssigner.default_shard_assigner()`` / ``uniform_shard_assigner()`` (Spark reads each
        shard with records in a partition of its own); refuses a custom (Java) assigner."""
        name = _builtin(shard_assigner, KinesisShardAssigner, ("default", "uniform"))
        if name is None:
            raise NotImplementedError(
                f"{_CONSUMER}.set_shard_assigner: {shard_assigner!r} is a custom KinesisShardAssigner (a Java object), which "
                "kindling cannot run; Spark reads each shard that has records in a partition of its own, so use "
                "KinesisShardAssigner.default_shard_assigner() or uniform_shard_assigner(), or leave it out")
        self._shard_assigner = name
        return self

    def set_periodic_watermark_assigner(self, periodic_watermark_assigner: Any) -> "FlinkKinesisConsumer":
        """Refused: the assigner is a Java ``AssignerWithPeriodicWatermarks``. Give the stream ``add_source`` returns a
        WatermarkStrategy instead; kindling then keeps a watermark per shard, as the consumer does."""
        raise NotImplementedError(
            f"{_CONSUMER}.set_periodic_watermark_assigner: an AssignerWithPeriodicWatermarks is a Java object, which "
            "kindling cannot run; call env.add_source(consumer).assign_timestamps_and_watermarks("
            "WatermarkStrategy.for_bounded_out_of_orderness(...).with_timestamp_assigner(...)) instead: kindling keeps a "
            "watermark per shard, as the consumer does ('flink.shard.idle.interval' releases idle shards)")

    def set_watermark_tracker(self, watermark_tracker: WatermarkTracker) -> "FlinkKinesisConsumer":
        """``WatermarkTracker.job_manager_watermark_tracker(name)``: synchronise the shards' event time once the stream
        has a watermark strategy (``flink.watermark.*``); a custom (Java) tracker is refused."""
        if _builtin(watermark_tracker, WatermarkTracker, ("job-manager",)) is None:
            raise NotImplementedError(
                f"{_CONSUMER}.set_watermark_tracker: {watermark_tracker!r} is a custom WatermarkTracker (a Java object), "
                "which kindling cannot run; use WatermarkTracker.job_manager_watermark_tracker(aggregate_name)")
        self._watermark_tracker = True
        return self

    def as_sources(self, event_time: bool = False) -> list[Source]:
        """The Kinesis connector's source of each stream, its records of the deserializer's type."""
        type_info = self._deserializer.produced_type()
        schema = type_info.record_schema()
        sources = []
        for name in self._streams:
            source = Source(CONNECTOR, self._check(self._options(name, self._watermark_tracker and event_time)), schema)
            source.type_info = type_info  # type: ignore[attr-defined]  # the stream's records are of this type
            sources.append(source)
        given = [k for k in self._properties if str(k).lower() in _WATERMARK_KEYS]
        if event_time and given and not self._watermark_tracker:
            log.warning("%s property '%s' takes effect only with set_watermark_tracker(...), as in Flink", _CONSUMER, given[0])
        return sources

    def _options(self, stream: str, watermark_sync: bool) -> dict[str, str]:
        options = {"stream": stream, "format": self._deserializer.format, **self._deserializer.format_options(),
                   **consumer_options(self._properties, watermark_sync)}
        if self._shard_assigner is not None:
            options["scan.shard-assigner"] = self._shard_assigner
        return options

    @staticmethod
    def _check(options: dict[str, str]) -> dict[str, str]:
        """The rules between options (start position, EFO, credentials), in the consumer's words."""
        try:
            source_config(options, CONNECTOR)
        except OptionError as exc:
            raise OptionError(_as_consumer_message(str(exc))) from None
        return options

    def __repr__(self) -> str:
        return f"FlinkKinesisConsumer(streams={self._streams!r}, deserializer={type(self._deserializer).__name__})"


# ---------------------------------------------------------------------------------------------------------
# The sink
# ---------------------------------------------------------------------------------------------------------


class PartitionKeyGenerator(_JavaWrapper):
    """How a record's partition key is chosen: ``random()`` (a UUID per record) or ``fixed()`` (the index of the
    writing task, so each task writes one shard while the stream is not resharded); a Java generator is refused."""

    def __init__(self, j_partition_key_generator: Any) -> None:
        super().__init__(j_partition_key_generator)

    @staticmethod
    def fixed() -> "PartitionKeyGenerator":
        return PartitionKeyGenerator(_Builtin("fixed"))

    @staticmethod
    def random() -> "PartitionKeyGenerator":
        return PartitionKeyGenerator(_Builtin("random"))


# Flink's Kinesis client properties that are sink options in kindling.
_CLIENT_PROPERTIES = {"aws.http-client.max-concurrency": "sink.http-client.max-concurrency",
                      "aws.http-client.read-timeout": "sink.http-client.read-timeout",
                      "aws.http.protocol.version": "sink.http-client.protocol.version"}
# How the sink's options are set on the builder, for messages.
_SETTERS = {"stream": "set_stream_name", "sink.partitioner": "set_partition_key_generator",
            "sink.batch.max-size": "set_max_batch_size", "sink.requests.max-inflight": "set_max_in_flight_requests",
            "sink.requests.max-buffered": "set_max_buffered_requests", "sink.flush-buffer.size": "set_max_batch_size_in_bytes",
            "sink.flush-buffer.timeout": "set_max_time_in_buffer_ms", "sink.max-record-size": "set_max_record_size_in_bytes",
            "sink.fail-on-error": "set_fail_on_error"}
_SINK_OPTION = re.compile(r"kinesis sink option '([^']+)'")
_SINK_KEY = re.compile(r"'((?:sink\.|stream)[^'\s]*)'")


def _sink_name(key: str) -> str:
    """A sink option as the builder sets it: its setter, or Flink's client property."""
    if key in _SETTERS:
        return f"KinesisStreamsSinkBuilder.{_SETTERS[key]}(...)"
    client = {v: k for k, v in _CLIENT_PROPERTIES.items()}
    return f"{_SINK} client property '{client.get(key, key)}'"


def _as_sink_message(message: str) -> str:
    """An error of the SQL sink's rules in the builder's words (its setters and client properties)."""
    message = _SINK_OPTION.sub(lambda m: _sink_name(m.group(1)), message)
    message = _SINK_KEY.sub(lambda m: _sink_name(m.group(1)).replace(f"{_SINK} client property ", ""), message)
    return message.replace("kinesis sink", _SINK)


class KinesisStreamsSink(Sink):
    """A Kinesis Data Streams sink (Flink's ``KinesisStreamsSink``), built with ``KinesisStreamsSink.builder()``:
    PutRecords batches from every task, re-queuing rejected records, at least once per micro-batch."""

    @staticmethod
    def builder() -> "KinesisStreamsSinkBuilder":
        return KinesisStreamsSinkBuilder()


def _count(value: Any, method: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"KinesisStreamsSinkBuilder.{method}: {what} must be greater than 0, got {value!r}")
    return value


class KinesisStreamsSinkBuilder:
    """PyFlink's ``KinesisStreamsSink.builder()``; defaults are Flink's (500 records and 5 MiB per batch, 50 requests in
    flight, 10000 buffered, 5000 ms in the buffer, 1 MiB per record, failOnError false).

    >>> sink = (KinesisStreamsSink.builder()
    ...     .set_kinesis_client_properties({"aws.region": "eu-west-1"})
    ...     .set_stream_name("your_stream_name")
    ...     .set_serialization_schema(SimpleStringSchema())
    ...     .set_partition_key_generator(PartitionKeyGenerator.random())
    ...     .build())
    """

    def __init__(self) -> None:
        self._options: dict[str, str] = {}
        self._stream: Optional[str] = None
        self._schema: Optional["SerializationSchema"] = None
        self._partitioner: Optional[str] = None

    def set_stream_name(self, stream_name: str) -> "KinesisStreamsSinkBuilder":
        """The stream to write to (one stream, as Flink's Java builder takes)."""
        if not isinstance(stream_name, str):
            raise TypeError(f"KinesisStreamsSinkBuilder.set_stream_name takes one stream name (a string), got "
                            f"{type(stream_name).__name__}: one sink writes one stream, so add one sink per stream")
        self._stream = stream_name
        return self

    def set_serialization_schema(self, serialization_schema: "SerializationSchema") -> "KinesisStreamsSinkBuilder":
        """How a record becomes the record's data: ``SimpleStringSchema``, ``ByteArraySchema``,
        ``JsonRowSerializationSchema``, ``CsvRowSerializationSchema`` or ``RowFieldExtractorSchema``."""
        from kindling.common.serialization import SerializationSchema

        if not isinstance(serialization_schema, SerializationSchema):
            raise TypeError("KinesisStreamsSinkBuilder.set_serialization_schema takes a SerializationSchema (SimpleStringSchema(), "
                            f"JsonRowSerializationSchema..., ...), got {type(serialization_schema).__name__}")
        if serialization_schema.format not in FORMATS:
            raise ValueError(f"KinesisStreamsSinkBuilder.set_serialization_schema: {type(serialization_schema).__name__} writes "
                             f"the {serialization_schema.format!r} format; kindling's Kinesis sink writes "
                             f"{', '.join(repr(f) for f in FORMATS)}: use SimpleStringSchema, ByteArraySchema, "
                             "JsonRowSerializationSchema or CsvRowSerializationSchema")
        self._schema = serialization_schema
        return self

    def set_partition_key_generator(self, partition_key_generator: PartitionKeyGenerator) -> "KinesisStreamsSinkBuilder":
        """``PartitionKeyGenerator.random()`` or ``.fixed()``; a custom (Java) generator is refused."""
        name = _builtin(partition_key_generator, PartitionKeyGenerator, ("random", "fixed"))
        if name is None:
            raise NotImplementedError(
                f"KinesisStreamsSinkBuilder.set_partition_key_generator: {partition_key_generator!r} is a custom "
                "PartitionKeyGenerator (a Java object), which kindling cannot run; use PartitionKeyGenerator.random() or "
                "PartitionKeyGenerator.fixed(), or, for a key built from the record's fields, SQL's PARTITIONED BY "
                "('connector' = 'kinesis')")
        self._partitioner = name
        return self

    def set_fail_on_error(self, fail_on_error: bool) -> "KinesisStreamsSinkBuilder":
        """Fail the job on a rejected record instead of re-queuing it (``sink.fail-on-error``)."""
        self._options["sink.fail-on-error"] = "true" if fail_on_error else "false"
        return self

    def set_kinesis_client_properties(self, kinesis_client_properties: Mapping[str, Any]) -> "KinesisStreamsSinkBuilder":
        """The client's ``aws.*`` properties (region, endpoint, credentials provider and its keys,
        ``aws.http-client.max-concurrency`` / ``.read-timeout``, ``aws.http.protocol.version``)."""
        if not isinstance(kinesis_client_properties, Mapping):
            raise TypeError("KinesisStreamsSinkBuilder.set_kinesis_client_properties takes a dict of aws.* properties, got "
                            f"{type(kinesis_client_properties).__name__}")
        properties = canonical({str(k): _text(v) for k, v in kinesis_client_properties.items()})
        options = {k: v for k, v in self._options.items() if not k.startswith("aws.") and k not in _CLIENT_PROPERTIES.values()}
        for key, value in properties.items():
            lowered = key.lower()
            if lowered in _CLIENT_PROPERTIES:
                options[_CLIENT_PROPERTIES[lowered]] = value
            elif lowered.startswith("aws."):
                options[key] = value
            else:
                setter = _SETTERS.get(lowered)
                raise OptionError(
                    f"{_SINK} client property '{key}' is not a Kinesis client property"
                    + (f" (set it with KinesisStreamsSinkBuilder.{setter}(...))" if setter else "")
                    + "; allowed: aws.region, aws.endpoint, aws.trust.all.certificates, aws.credentials.provider and its "
                    "aws.credentials.provider.* keys, " + ", ".join(_CLIENT_PROPERTIES) + " (other aws.* keys pass through)")
        self._options = options
        return self

    def set_max_batch_size(self, max_batch_size: int) -> "KinesisStreamsSinkBuilder":
        """Records per PutRecords request (at most 500)."""
        self._options["sink.batch.max-size"] = str(_count(max_batch_size, "set_max_batch_size", "maxBatchSize"))
        return self

    def set_max_in_flight_requests(self, max_in_flight_requests: int) -> "KinesisStreamsSinkBuilder":
        """PutRecords requests in flight per task."""
        self._options["sink.requests.max-inflight"] = str(_count(max_in_flight_requests, "set_max_in_flight_requests",
                                                                 "maxInFlightRequests"))
        return self

    def set_max_buffered_requests(self, max_buffered_requests: int) -> "KinesisStreamsSinkBuilder":
        """Records a task buffers before writing waits for requests to complete."""
        self._options["sink.requests.max-buffered"] = str(_count(max_buffered_requests, "set_max_buffered_requests",
                                                                 "maxBufferedRequests"))
        return self

    def set_max_batch_size_in_bytes(self, max_batch_size_in_bytes: int) -> "KinesisStreamsSinkBuilder":
        """Bytes of a batch before it is sent."""
        self._options["sink.flush-buffer.size"] = str(_count(max_batch_size_in_bytes, "set_max_batch_size_in_bytes",
                                                             "maxBatchSizeInBytes"))
        return self

    def set_max_time_in_buffer_ms(self, max_time_in_buffer_ms: int) -> "KinesisStreamsSinkBuilder":
        """Longest time (ms) a record waits in the buffer."""
        self._options["sink.flush-buffer.timeout"] = str(_count(max_time_in_buffer_ms, "set_max_time_in_buffer_ms",
                                                                "maxTimeInBufferMS"))
        return self

    def set_max_record_size_in_bytes(self, max_record_size_in_bytes: int) -> "KinesisStreamsSinkBuilder":
        """Largest record (data plus partition key); a larger one fails the task."""
        self._options["sink.max-record-size"] = str(_count(max_record_size_in_bytes, "set_max_record_size_in_bytes",
                                                           "maxRecordSizeInBytes"))
        return self

    def build(self) -> KinesisStreamsSink:
        """The sink; the serialization schema checks the stream's records when it is added (``sink_to``)."""
        if self._schema is None:
            raise ValueError(f"{_SINK}: No SerializationSchema was supplied to the KinesisStreamsSinkElementConverter builder.")
        if self._partitioner is None:
            raise ValueError(f"{_SINK}: No PartitionKeyGenerator lambda was supplied to the KinesisStreamsSinkElementConverter "
                             "builder (use set_partition_key_generator(PartitionKeyGenerator.random()) or .fixed())")
        if self._stream is None:
            raise ValueError(f"{_SINK}: The stream name must not be null when initializing the KDS Sink.")
        if not self._stream:
            raise ValueError(f"{_SINK}: The stream name must be set when initializing the KDS Sink.")
        options = {**self._options, "stream": self._stream, "sink.partitioner": self._partitioner,
                   "format": self._schema.format, **self._schema.format_options()}
        try:
            config = sink_config(options)
        except OptionError as exc:
            raise OptionError(_as_sink_message(str(exc))) from None
        if config.max_buffered <= config.batch_max_size:
            raise ValueError(f"{_SINK}: The maximum number of requests that may be buffered should be strictly greater than the "
                             f"maximum number of requests per batch (set_max_buffered_requests({config.max_buffered}), "
                             f"set_max_batch_size({config.batch_max_size}))")
        if config.flush_size < config.max_record_size:
            raise ValueError(f"{_SINK}: The maximum allowed size in bytes per flush must be greater than or equal to the maximum "
                             f"allowed size in bytes of a single record (set_max_batch_size_in_bytes({config.flush_size}), "
                             f"set_max_record_size_in_bytes({config.max_record_size}))")
        return KinesisStreamsSink("kinesis", options, prepare=_serializer(self._schema, options))


def _serializer(schema: "SerializationSchema", options: dict[str, str]) -> Callable[["DataStream"], tuple["DataStream", Sink]]:
    """``sink_to``'s step: check the stream's records against the schema and keep the columns it writes."""

    def prepare(stream: "DataStream") -> tuple["DataStream", Sink]:
        from pyspark.sql import functions as F

        fields = schema.written_fields(stream.get_type(), stream.schema)
        internal = [c for c in stream._df.columns if c not in stream.schema.fieldNames()]
        selected = [(F.coalesce(F.col(f"`{f.source}`"), F.lit(b"")) if f.empty_if_null else F.col(f"`{f.source}`")).alias(f.name)
                    for f in fields]
        projected = stream._transform(lambda df: df.select(*selected, *[F.col(f"`{c}`") for c in internal]),
                                      "Kinesis Sink Serializer")
        return projected, Sink("kinesis", options)

    return prepare


# ---------------------------------------------------------------------------------------------------------
# Firehose: no connector
# ---------------------------------------------------------------------------------------------------------


def _no_firehose(delivery_stream: Optional[str]) -> NotImplementedError:
    named = f" (delivery stream {delivery_stream!r})" if delivery_stream else ""
    return NotImplementedError(
        f"KinesisFirehoseSink{named}: kindling has no Kinesis Data Firehose connector. Write to a Kinesis data stream with "
        "KinesisStreamsSink.builder() (a Firehose delivery stream can read from it, with the stream as its source), "
        "or to S3 directly with FileSink")


class KinesisFirehoseSink:
    """Flink's Kinesis Data Firehose sink: kindling has no Firehose connector, so building one is refused."""

    def __init__(self, j_kinesis_firehose_sink: Any = None) -> None:
        raise _no_firehose(None)

    @staticmethod
    def builder() -> "KinesisFirehoseSinkBuilder":
        return KinesisFirehoseSinkBuilder()


class KinesisFirehoseSinkBuilder:
    """PyFlink's Firehose builder: its settings are taken (so a program reaches ``build()``), and ``build()`` is refused."""

    def __init__(self) -> None:
        self._settings: dict[str, Any] = {}

    def _set(self, name: str, value: Any) -> "KinesisFirehoseSinkBuilder":
        self._settings[name] = value
        return self

    def set_delivery_stream_name(self, delivery_stream_name: str) -> "KinesisFirehoseSinkBuilder":
        return self._set("delivery_stream_name", delivery_stream_name)

    def set_serialization_schema(self, serialization_schema: Any) -> "KinesisFirehoseSinkBuilder":
        return self._set("serialization_schema", serialization_schema)

    def set_fail_on_error(self, fail_on_error: bool) -> "KinesisFirehoseSinkBuilder":
        return self._set("fail_on_error", fail_on_error)

    def set_firehose_client_properties(self, firehose_client_properties: Mapping[str, Any]) -> "KinesisFirehoseSinkBuilder":
        return self._set("firehose_client_properties", dict(firehose_client_properties))

    def set_max_batch_size(self, max_batch_size: int) -> "KinesisFirehoseSinkBuilder":
        return self._set("max_batch_size", max_batch_size)

    def set_max_in_flight_requests(self, max_in_flight_requests: int) -> "KinesisFirehoseSinkBuilder":
        return self._set("max_in_flight_requests", max_in_flight_requests)

    def set_max_buffered_requests(self, max_buffered_requests: int) -> "KinesisFirehoseSinkBuilder":
        return self._set("max_buffered_requests", max_buffered_requests)

    def set_max_batch_size_in_bytes(self, max_batch_size_in_bytes: int) -> "KinesisFirehoseSinkBuilder":
        return self._set("max_batch_size_in_bytes", max_batch_size_in_bytes)

    def set_max_time_in_buffer_ms(self, max_time_in_buffer_ms: int) -> "KinesisFirehoseSinkBuilder":
        return self._set("max_time_in_buffer_ms", max_time_in_buffer_ms)

    def set_max_record_size_in_bytes(self, max_record_size_in_bytes: int) -> "KinesisFirehoseSinkBuilder":
        return self._set("max_record_size_in_bytes", max_record_size_in_bytes)

    def build(self) -> KinesisFirehoseSink:
        raise _no_firehose(self._settings.get("delivery_stream_name"))


__all__ = ["CONSUMER_KEYS", "CONSUMER_OPTIONS", "FlinkKinesisConsumer", "KinesisDeserializationSchema", "KinesisFirehoseSink",
           "KinesisFirehoseSinkBuilder", "KinesisShardAssigner", "KinesisStreamsSink", "KinesisStreamsSinkBuilder",
           "PartitionKeyGenerator", "WatermarkTracker", "consumer_options", "flink_key"]

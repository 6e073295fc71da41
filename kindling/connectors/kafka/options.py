"""The Kafka connector's options: Flink's names, types and defaults, and the checks between them.

Source and sink options are :class:`~kindling.options.OptionSet`\\ s (unknown keys are rejected with
the nearest valid one); :func:`source_config` and :func:`sink_config` add the checks that involve
several options and return typed settings. Every error names the option, its value and what is
allowed. ``properties.*`` options go to the confluent-kafka (librdkafka) client unchanged.

Differences from Flink, by option:

* ``scan.startup.mode`` = ``group-offsets``: the committed offsets of ``properties.group.id`` are
  *read* to start from; kindling never commits offsets back (progress lives in the checkpoint).
  Partitions without a committed offset start at ``properties.auto.offset.reset`` (default
  ``earliest``; ``none`` makes it an error).
* ``scan.startup.specific-offsets``: partitions not listed start at the earliest offset.
* ``scan.topic-partition-discovery.interval``: new partitions (and, with ``topic-pattern``, new
  topics) are picked up at the next micro-batch after the interval, read from their earliest offset.
  ``0`` disables discovery.
* ``scan.max-records-per-trigger`` (kindling): at most this many records per micro-batch, shared
  fairly across partitions (Spark's ``ReadMaxRows`` admission control).
* ``sink.delivery-guarantee`` = ``exactly-once``: executors only encode records; the driver's
  ``commit(messages, batch_id)`` writes them in one Kafka transaction (``transactional.id`` =
  ``<sink.transactional-id-prefix>-<topic>``) together with a batch-id marker, and skips a batch id
  that is already committed (see ``kindling.connectors.kafka.transactions``).
  ``sink.transactional-id-prefix`` is required (letters, digits, ``.``, ``_``, ``-``) and must belong
  to one job (one checkpoint), as in Flink. ``properties.transaction.timeout.ms`` defaults to
  900000 (15 min, the broker's default ``transaction.max.timeout.ms``). Unlike Flink, the
  transaction spans only the driver's commit of one micro-batch, not the checkpoint interval, so the
  trigger interval does not have to fit inside the transaction timeout; only publishing one batch
  does. Consumers must read with ``isolation.level=read_committed``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, Mapping, Optional, Sequence

from kindling.connectors.base import TABLE_METADATA, TABLE_ROWTIME, rowtime_millis
from kindling.formats.avro_confluent import format_options as confluent_options
from kindling.formats.avro_confluent import property_prefixes, registry_settings
from kindling.formats.settings import FORMATS, FormatSettings, format_options, format_settings
from kindling.options import (
    OptionError,
    OptionSet,
    ParsedOptions,
    duration_option,
    enum_option,
    int_option,
    nearest,
    string_option,
)

STARTUP_MODES = ("earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets")
DELIVERY_GUARANTEES = ("at-least-once", "none", "exactly-once")
PARTITIONERS = ("default", "round-robin", "fixed")
DEFAULT_TRANSACTION_TIMEOUT_MS = 900_000
_TRANSACTIONAL_ID_PREFIX = re.compile(r"[A-Za-z0-9._-]{1,200}")
# Flink's Kafka metadata keys (plus 'key', the raw record key) -> what the column holds.
METADATA_KEYS = {
    "topic": "STRING: the record's topic",
    "partition": "INT: the record's partition",
    "offset": "BIGINT: the record's offset in its partition",
    "timestamp": "TIMESTAMP: the record's timestamp (UTC)",
    "timestamp-type": "STRING: NoTimestampType, CreateTime or LogAppendTime",
    "headers": "MAP<STRING, BINARY>: the record's headers",
    "key": "BINARY: the record's key bytes",
}
METADATA_OPTION = TABLE_METADATA
EOF_RECORD_EVALUATOR = "kindling.eof-record-evaluator"
_OFFSET_RESETS = ("earliest", "latest", "none", "smallest", "largest", "beginning", "end", "error")


_COMMON = [
    string_option("properties.bootstrap.servers", None, "Kafka brokers, host:port[,host:port...]", required=True),
    enum_option("format", FORMATS, None, "Format of the record values (same as 'value.format')."),
    enum_option("value.format", FORMATS, None, "Format of the record values (same as 'format')."),
    *format_options(),
    *format_options("value."),
    *confluent_options("key."),
]

BOUNDED_MODES = ("unbounded", "latest-offset", "group-offsets", "timestamp", "specific-offsets")

VALUE_FIELDS_INCLUDE = enum_option(
    "value.fields-include", ("ALL", "EXCEPT_KEY"), "ALL",
    "Whether the value also carries the key fields ('ALL') or only the other columns ('EXCEPT_KEY').")

# A SQL table is read and written with the same WITH options, as in Flink (one option set per connector): the source
# accepts the sink's options and the sink the source's, each ignoring the other's.
_SOURCE_ONLY = [
    string_option("topic-pattern", None, "Regular expression; every topic whose whole name matches is read."),
    string_option("properties.group.id", None, "Consumer group whose committed offsets 'group-offsets' starts from."),
    enum_option("scan.startup.mode", STARTUP_MODES, "group-offsets", "Where a new job starts reading."),
    int_option("scan.startup.timestamp-millis", None,
               "Start at the first record at or after this epoch timestamp (ms), for scan.startup.mode 'timestamp'.",
               minimum=0),
    string_option("scan.startup.specific-offsets", None,
                  "Start offsets for scan.startup.mode 'specific-offsets': 'partition:0,offset:42;partition:1,offset:300'."),
    enum_option("scan.bounded.mode", BOUNDED_MODES, "unbounded",
                "Where a bounded read ends; the job FINISHES when every partition reached it."),
    int_option("scan.bounded.timestamp-millis", None,
               "End before the first record at or after this epoch timestamp (ms), for scan.bounded.mode 'timestamp'.",
               minimum=0),
    string_option("scan.bounded.specific-offsets", None,
                  "End offsets (exclusive) for scan.bounded.mode 'specific-offsets': 'partition:0,offset:42;partition:1,offset:300'."),
    duration_option("scan.topic-partition-discovery.interval", timedelta(minutes=5),
                    "How often new partitions (and topics matching topic-pattern) are looked for; 0 disables."),
    int_option("scan.max-records-per-trigger", None,
               "At most this many records per micro-batch, shared fairly by the partitions.", minimum=1),
    string_option("scan.watermark.alignment.group", None,
                  "Watermark alignment group: partitions of every source in the group may not run ahead of the "
                  "slowest by more than 'scan.watermark.alignment.max-drift'."),
    duration_option("scan.watermark.alignment.max-drift", None,
                    "How far (event time) a partition may run ahead of the slowest partition of its alignment group."),
    duration_option("scan.watermark.alignment.update-interval", timedelta(seconds=1),
                    "How often the alignment group's slowest event time is recomputed."),
    string_option(EOF_RECORD_EVALUATOR, None,
                  "Internal (set by KafkaSource.builder().set_eof_record_evaluator): a partition ends before its "
                  "first record this predicate accepts (FLIP-208)."),
    duration_option("scan.watermark.idle-timeout", None,
                    "A partition without new records for this long does not hold back watermark alignment."),
]

_SINK_ONLY = [
    enum_option("sink.delivery-guarantee", DELIVERY_GUARANTEES, "at-least-once",
                "'at-least-once': every micro-batch waits for the broker's acknowledgements; 'none': no checks; "
                "'exactly-once': each micro-batch is published in one Kafka transaction by the driver, fenced by batch id."),
    enum_option("sink.partitioner", PARTITIONERS, "default",
                "'default': by key hash (sticky without a key); 'round-robin'; 'fixed': one partition per Spark task."),
    int_option("sink.parallelism", None,
               "'exactly-once': transactional producers that publish each micro-batch in parallel from the driver "
               "(default 1: one transaction per batch); fixed for a transactional-id prefix by its first commit. "
               "Other guarantees: accepted, Spark's partitioning decides.", minimum=1),
    string_option("sink.transactional-id-prefix", None,
                  "Required for 'exactly-once': transactional id '<prefix>-<topic>' and marker group '<prefix>-commits'; "
                  "one prefix per job (checkpoint)."),
]

SOURCE_OPTIONS = OptionSet(
    "kafka source",
    [
        string_option("topic", None, "Topic(s) to read: one name or a ';'-separated list."),
        enum_option("key.format", FORMATS, None, "Format of the record keys, read into the 'key.fields' columns."),
        string_option("key.fields", None, "Columns read from the record key, ';'-separated (needs 'key.format')."),
        VALUE_FIELDS_INCLUDE,
        *_SOURCE_ONLY,
        *_SINK_ONLY,
        *_COMMON,
    ],
    prefixes=("properties.", *property_prefixes()),
)

SINK_OPTIONS = OptionSet(
    "kafka sink",
    [
        string_option("topic", None, "Topic to write to.", required=True),
        enum_option("key.format", FORMATS, None, "Format of the record keys, built from 'key.fields'."),
        string_option("key.fields", None, "Columns that form the record key, ';'-separated (needs 'key.format')."),
        VALUE_FIELDS_INCLUDE,
        *_SINK_ONLY,
        *_SOURCE_ONLY,
        *_COMMON,
    ],
    prefixes=("properties.", *property_prefixes()),
)


@dataclass(frozen=True)
class SourceConfig:
    topics: tuple[str, ...]
    topic_pattern: Optional[str]
    bootstrap_servers: str
    group_id: Optional[str]
    client_properties: dict[str, str]
    startup_mode: str
    startup_timestamp_ms: Optional[int]
    specific_offsets: dict[int, int]
    auto_offset_reset: str
    discovery_interval_s: float
    max_records_per_trigger: Optional[int]
    value_format: FormatSettings
    metadata: tuple[tuple[str, str], ...] = ()
    bounded_mode: str = "unbounded"
    bounded_timestamp_ms: Optional[int] = None
    bounded_specific_offsets: dict[int, int] = field(default_factory=dict)
    alignment_group: Optional[str] = None
    alignment_max_drift_ms: Optional[int] = None
    alignment_update_interval_s: float = 1.0
    idle_timeout_s: Optional[float] = None
    rowtime: Optional[str] = None
    rowtime_millis: tuple[int, int] = (1, 0)  # (unit_ms, offset_ms) from the rowtime column to the rowtime
    eof_record_evaluator: Optional[str] = None
    key_format: Optional[FormatSettings] = None
    key_fields: tuple[str, ...] = ()
    value_fields_include: str = "ALL"

    @property
    def bounded(self) -> bool:
        return self.bounded_mode != "unbounded"

    def consumer_config(self) -> dict[str, str]:
        """librdkafka settings for kindling's own consumers: no group membership, no commits."""
        conf = {k: v for k, v in self.client_properties.items() if k not in ("group.id", "auto.offset.reset")}
        conf.update({
            "bootstrap.servers": self.bootstrap_servers,
            "enable.auto.commit": "false",
            "enable.auto.offset.store": "false",
            "enable.partition.eof": "false",
        })
        return conf


@dataclass(frozen=True)
class SinkConfig:
    topic: str
    bootstrap_servers: str
    client_properties: dict[str, str]
    value_format: FormatSettings
    key_format: Optional[FormatSettings]
    key_fields: tuple[str, ...]
    delivery_guarantee: str
    partitioner: str
    transactional_id_prefix: Optional[str] = None
    value_fields_include: str = "ALL"
    # upsert-kafka: +I/+U rows are written as values, -D rows as tombstones (null value), -U skipped.
    upsert: bool = False
    # exactly-once: transactional producers publishing a micro-batch in parallel ('sink.parallelism').
    publishers: int = 1

    def value_columns(self, columns: Sequence[str]) -> list[str]:
        """The columns written into each record's value."""
        if self.value_fields_include == "EXCEPT_KEY":
            return [c for c in columns if c not in self.key_fields]
        return list(columns)

    def producer_config(self) -> dict[str, str]:
        conf = dict(self.client_properties)
        conf.pop("transaction.timeout.ms", None)  # only for the exactly-once driver producer
        conf["bootstrap.servers"] = self.bootstrap_servers
        return conf

    @property
    def transactional_id(self) -> str:
        """The exactly-once producer's ``transactional.id``: stable across restarts of the job."""
        return f"{self.transactional_id_prefix}-{self.topic}"

    @property
    def commit_group(self) -> str:
        """The sink-owned consumer group whose offset on (topic, partition 0) marks the last committed batch."""
        return f"{self.transactional_id_prefix}-commits"

    def publisher_ids(self, shard: int) -> tuple[str, str]:
        """(transactional id, marker group) of publisher ``shard``; shard 0 keeps the single-publisher names.
        '#' cannot occur in a topic name, so another sink's topic never collides with a shard's ids."""
        if shard == 0:
            return self.transactional_id, self.commit_group
        return f"{self.transactional_id}#{shard}", f"{self.commit_group}#{shard}"

    def transactional_producer_config(self, shard: int = 0) -> dict[str, str]:
        conf = {"linger.ms": "5", "batch.num.messages": "10000", "queue.buffering.max.messages": "1000000",
                "queue.buffering.max.kbytes": "1048576", "transaction.timeout.ms": str(DEFAULT_TRANSACTION_TIMEOUT_MS)}
        conf.update(self.client_properties)
        conf["bootstrap.servers"] = self.bootstrap_servers
        conf["transactional.id"] = self.publisher_ids(shard)[0]
        conf["enable.idempotence"] = "true"
        return conf


def _with_registry(fmt: Optional[FormatSettings], parsed: ParsedOptions, raw: Mapping[str, Any], role: str,
                   topic: Optional[str], context: str) -> Optional[FormatSettings]:
    """The format with its schema registry settings when it is 'avro-confluent' (subject default '<topic>-<role>')."""
    if fmt is not None and fmt.name == "avro-confluent":
        return replace(fmt, registry=registry_settings(parsed, ("value.", "") if role == "value" else ("key.",), role, topic, context))
    if role == "key":
        stray = sorted(k for k in raw if k.lower().startswith("key.avro-confluent."))
        if stray:
            raise OptionError(f"{context} option '{stray[0]}' belongs to the 'avro-confluent' format, but the key format "
                              f"is {fmt.name if fmt else None!r}; remove it or set 'key.format' = 'avro-confluent'")
    return fmt


def parse_specific_offsets(text: str, context: str = "kafka source", key: str = "scan.startup.specific-offsets") -> dict[int, int]:
    """Flink's ``partition:0,offset:42;partition:1,offset:300`` -> ``{0: 42, 1: 300}``."""
    result: dict[int, int] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        match = re.fullmatch(r"\s*partition\s*:\s*(\d+)\s*,\s*offset\s*:\s*(\d+)\s*", part)
        if not match:
            raise OptionError(
                f"{context} option '{key}' has value {text!r}: cannot read {part!r}; "
                "allowed: 'partition:<n>,offset:<n>' entries separated by ';', e.g. 'partition:0,offset:42;partition:1,offset:300'"
            )
        result[int(match.group(1))] = int(match.group(2))
    if not result:
        raise OptionError(
            f"{context} option '{key}' has value {text!r}; "
            "allowed: 'partition:0,offset:42;partition:1,offset:300'"
        )
    return result


def parse_metadata(text: Optional[str], context: str = "kafka source") -> tuple[tuple[str, str], ...]:
    """The table's metadata columns (``kindling.table.metadata``, a JSON list of ``[column, key, virtual]``)
    -> ``(('column', 'key'), ...)``; keys are Flink's Kafka metadata keys."""
    if not text:
        return ()
    try:
        entries = json.loads(text)
        pairs = [(str(e[0]), str(e[1]).lower()) for e in entries]
    except (ValueError, TypeError, IndexError, KeyError):
        raise OptionError(
            f"{context} option '{METADATA_OPTION}' has value {text!r}; allowed: a JSON list of "
            '[column, key, virtual] entries, e.g. [["ts", "timestamp", false]]'
        ) from None
    for column, key in pairs:
        if key not in METADATA_KEYS:
            hint = nearest(key, METADATA_KEYS)
            raise OptionError(
                f"{context}: metadata column {column!r} reads key {key!r}, which Kafka does not have"
                + (f"; did you mean '{hint}'?" if hint else "")
                + " Available keys: " + ", ".join(METADATA_KEYS)
            )
    return tuple(pairs)


def metadata_option(pairs: Sequence[tuple[str, str]]) -> str:
    """The ``kindling.table.metadata`` value for (column, key) pairs (none of them virtual)."""
    return json.dumps([[column, key, False] for column, key in pairs])


def _offsets_setting(parsed: Any, prefix: str, topics: tuple[str, ...], topic_text: str, context: str) -> tuple[str, Optional[int], dict[int, int]]:
    """``<prefix>.mode`` with the timestamp or specific offsets it needs (startup and bounded alike)."""
    mode = parsed[f"{prefix}.mode"]
    timestamp_ms = parsed.get(f"{prefix}.timestamp-millis")
    if mode == "timestamp" and timestamp_ms is None:
        raise OptionError(
            f"{context} option '{prefix}.timestamp-millis' is required when '{prefix}.mode' = 'timestamp' "
            "(epoch milliseconds, e.g. '1700000000000')"
        )
    specific: dict[int, int] = {}
    if mode == "specific-offsets":
        text = parsed.get(f"{prefix}.specific-offsets")
        if not text:
            raise OptionError(
                f"{context} option '{prefix}.specific-offsets' is required when '{prefix}.mode' = "
                "'specific-offsets', e.g. 'partition:0,offset:42;partition:1,offset:300'"
            )
        if len(topics) != 1:
            raise OptionError(
                f"{context} option '{prefix}.mode' = 'specific-offsets' needs a single 'topic' (got {topic_text}), as in Flink"
            )
        specific = parse_specific_offsets(text, context, f"{prefix}.specific-offsets")
    return mode, timestamp_ms, specific


def source_config(raw: Mapping[str, Any]) -> SourceConfig:
    """Validate source options (each one, then the rules between them) and return typed settings."""
    context = "kafka source"
    parsed = SOURCE_OPTIONS.validate(raw)
    topic, pattern = parsed.get("topic"), parsed.get("topic-pattern")
    if bool(topic) == bool(pattern):
        given = f"'topic' = {topic!r} and 'topic-pattern' = {pattern!r}" if topic else "neither"
        raise OptionError(
            f"{context} needs exactly one of 'topic' (a name or a ';'-separated list) and 'topic-pattern' "
            f"(a regular expression); got {given}"
        )
    topics = tuple(t.strip() for t in topic.split(";") if t.strip()) if topic else ()
    if topic and not topics:
        raise OptionError(f"{context} option 'topic' has value {topic!r}; allowed: a topic name or a ';'-separated list")
    if pattern:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise OptionError(f"{context} option 'topic-pattern' has value {pattern!r}: not a regular expression ({exc})") from None
    topic_text = ("topic-pattern " + repr(pattern)) if pattern else repr(topic)
    mode, timestamp_ms, specific = _offsets_setting(parsed, "scan.startup", topics, topic_text, context)
    bounded_mode, bounded_ts, bounded_specific = _offsets_setting(parsed, "scan.bounded", topics, topic_text, context)
    if bounded_mode == "group-offsets" and not parsed.get("properties.group.id"):
        raise OptionError(f"{context} option 'scan.bounded.mode' = 'group-offsets' needs 'properties.group.id'")
    group, drift = parsed.get("scan.watermark.alignment.group"), parsed.get("scan.watermark.alignment.max-drift")
    if bool(group) != (drift is not None):
        missing = "scan.watermark.alignment.max-drift" if group else "scan.watermark.alignment.group"
        raise OptionError(
            f"{context} option '{missing}' is required with "
            f"'{'scan.watermark.alignment.group' if group else 'scan.watermark.alignment.max-drift'}': watermark "
            "alignment needs both a group name and a maximum drift (e.g. '20 s')"
        )
    idle = parsed.get("scan.watermark.idle-timeout")
    key_format, key_fields = _key_settings(parsed, context)
    value_format = format_settings(parsed, context, raw)
    properties = parsed.with_prefix("properties.")
    reset = properties.get("auto.offset.reset", "earliest").strip().lower()
    if reset not in _OFFSET_RESETS:
        raise OptionError(
            f"{context} option 'properties.auto.offset.reset' has value {reset!r}; allowed values: 'earliest', 'latest', 'none'"
        )
    reset = {"smallest": "earliest", "beginning": "earliest", "largest": "latest", "end": "latest", "error": "none"}.get(reset, reset)
    interval: timedelta = parsed["scan.topic-partition-discovery.interval"]
    return SourceConfig(
        topics=topics,
        topic_pattern=pattern,
        bootstrap_servers=parsed["properties.bootstrap.servers"],
        group_id=parsed.get("properties.group.id"),
        client_properties=properties,
        startup_mode=mode,
        startup_timestamp_ms=timestamp_ms,
        specific_offsets=specific,
        auto_offset_reset=reset,
        discovery_interval_s=interval.total_seconds(),
        max_records_per_trigger=parsed.get("scan.max-records-per-trigger"),
        value_format=_with_registry(value_format, parsed, raw, "value", topics[0] if len(topics) == 1 else None, context),
        metadata=parse_metadata(parsed.extra.get(METADATA_OPTION), context),
        bounded_mode=bounded_mode,
        bounded_timestamp_ms=bounded_ts,
        bounded_specific_offsets=bounded_specific,
        alignment_group=group,
        alignment_max_drift_ms=int(drift.total_seconds() * 1000) if drift is not None else None,
        alignment_update_interval_s=parsed["scan.watermark.alignment.update-interval"].total_seconds(),
        idle_timeout_s=idle.total_seconds() if idle is not None and idle.total_seconds() > 0 else None,
        rowtime=parsed.extra.get(TABLE_ROWTIME) or None,
        rowtime_millis=rowtime_millis(parsed.extra),
        eof_record_evaluator=parsed.get(EOF_RECORD_EVALUATOR),
        key_format=_with_registry(FormatSettings(key_format, timestamp_standard=value_format.timestamp_standard,
                                                 field_delimiter=value_format.field_delimiter) if key_format else None,
                                  parsed, raw, "key", topics[0] if len(topics) == 1 else None, context),
        key_fields=key_fields,
        value_fields_include=parsed["value.fields-include"],
    )


def _key_settings(parsed: ParsedOptions, context: str) -> tuple[Optional[str], tuple[str, ...]]:
    """``key.format`` and ``key.fields``, which need each other, and ``value.fields-include`` which needs them."""
    key_format, key_fields_text = parsed.get("key.format"), parsed.get("key.fields")
    key_fields = tuple(f.strip() for f in (key_fields_text or "").split(";") if f.strip())
    if key_fields and not key_format:
        raise OptionError(
            f"{context} option 'key.fields' = {key_fields_text!r} needs 'key.format' (allowed values: "
            + ", ".join(f"'{f}'" for f in FORMATS) + ")"
        )
    if key_format and not key_fields:
        raise OptionError(
            f"{context} option 'key.format' = {key_format!r} needs 'key.fields' (the columns that form the key, ';'-separated)"
        )
    if parsed["value.fields-include"] == "EXCEPT_KEY" and not key_fields:
        raise OptionError(f"{context} option 'value.fields-include' = 'EXCEPT_KEY' needs 'key.fields' (and 'key.format')")
    if key_format == "raw" and len(key_fields) != 1:
        raise OptionError(
            f"{context} option 'key.fields' = {key_fields_text!r}: 'key.format' = 'raw' needs exactly one key field"
        )
    return key_format, key_fields


def sink_config(raw: Mapping[str, Any]) -> SinkConfig:
    """Validate sink options (each one, then the rules between them) and return typed settings."""
    context = "kafka sink"
    parsed = SINK_OPTIONS.validate(raw)
    guarantee = parsed["sink.delivery-guarantee"]
    properties = parsed.with_prefix("properties.")
    prefix = parsed.get("sink.transactional-id-prefix")
    prefix = prefix.strip() if prefix is not None else None
    if guarantee == "exactly-once":
        if not prefix:
            raise OptionError(
                f"{context} option 'sink.transactional-id-prefix' is required when 'sink.delivery-guarantee' = "
                "'exactly-once': a name unique to this job (e.g. 'orders-copy'); the transactional id is "
                "'<prefix>-<topic>' and the batch marker group '<prefix>-commits'"
            )
        if not _TRANSACTIONAL_ID_PREFIX.fullmatch(prefix):
            raise OptionError(
                f"{context} option 'sink.transactional-id-prefix' has value {prefix!r}; allowed: 1 to 200 "
                "letters, digits, '.', '_' and '-'"
            )
        if "transactional.id" in properties:
            raise OptionError(
                f"{context} option 'properties.transactional.id' cannot be set; set 'sink.transactional-id-prefix' "
                "instead (the transactional id is '<prefix>-<topic>')"
            )
        timeout = properties.get("transaction.timeout.ms")
        if timeout is not None and (not timeout.strip().isdigit() or int(timeout) < 1000):
            raise OptionError(
                f"{context} option 'properties.transaction.timeout.ms' has value {timeout!r}; allowed: "
                f"milliseconds >= 1000 (default {DEFAULT_TRANSACTION_TIMEOUT_MS}, at most the broker's "
                "'transaction.max.timeout.ms')"
            )
    key_format, key_fields = _key_settings(parsed, context)
    value_format = format_settings(parsed, context, raw)
    return SinkConfig(
        topic=parsed["topic"].strip(),
        bootstrap_servers=parsed["properties.bootstrap.servers"],
        client_properties=properties,
        value_format=_with_registry(value_format, parsed, raw, "value", parsed["topic"].strip(), context),
        key_format=_with_registry(FormatSettings(key_format, timestamp_standard=value_format.timestamp_standard,
                                                 field_delimiter=value_format.field_delimiter) if key_format else None,
                                  parsed, raw, "key", parsed["topic"].strip(), context),
        key_fields=key_fields,
        delivery_guarantee=guarantee,
        partitioner=parsed["sink.partitioner"],
        transactional_id_prefix=prefix,
        value_fields_include=parsed["value.fields-include"],
        publishers=parsed.get("sink.parallelism") or 1,
    )

"""Kafka source: a Spark Python Data Source stream reader (``format("kindling_kafka")``).

How a micro-batch is read:

* **Offsets** are JSON dicts ``{"partitions": {"<topic>": {"<partition>": <next offset>}}}`` kept
  only in Spark's checkpoint. The source never commits offsets to Kafka and never joins a consumer
  group (design.md: source ``commit``/``stop`` callbacks are unreliable); a restarted query replays
  its unfinished batch with the same offsets.
* **initialOffset** resolves ``scan.startup.mode`` to concrete offsets on the driver.
* **latestOffset(start, limit)** asks the brokers for each partition's high watermark
  (``get_watermark_offsets``), discovers new partitions every
  ``scan.topic-partition-discovery.interval`` (they are read from their earliest offset), and under
  ``ReadMaxRows`` (``scan.max-records-per-trigger``) shares the row budget fairly across partitions.
  ``Trigger.AvailableNow`` reads up to the high watermarks seen when the query started.
* **partitions(start, end)**: one Spark partition per Kafka partition with new records, big ranges
  split into chunks of ~100k records so they are read in parallel.
* **read(partition)** runs on executors: a consumer ``assign``\\ ed at the start offset (no group
  membership, no commits) consumes in bulk up to the end offset and yields Arrow record batches of
  ~50k rows with every schema column, in schema order, including the end-of-input marker column.

Malformed records never vanish silently: by default the task fails naming topic, partition, offset
and the parse error; with ``json.ignore-parse-errors``/``csv.ignore-parse-errors`` they are skipped,
counted, and logged once per Spark partition (count and first bad offset).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from typing import Any, Iterator, Optional, Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql import Row
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import BinaryType, LongType, StructField, StructType

from kindling.arrow import arrow_schema
from kindling.connectors import watermark_use
from kindling.connectors.base import EOS_COLUMN, EOS_OFFSET_KEY, ROWKIND_COLUMN, TABLE_SCAN, end_of_input_batch, with_eos
from kindling.connectors.bounded_read import BoundedReads
from kindling.connectors.kafka.alignment import AlignmentGroup, EventTimeProbe, PartitionAligner, value_time_decoder
from kindling.connectors.kafka.options import SourceConfig, source_config
from kindling.formats import ValueDecoder, value_columns
from kindling.formats.changelog import CHANGELOG_FORMATS
from kindling.options import OptionError

log = logging.getLogger("kindling.connectors.kafka")

OPEN = -1  # stop offset of a partition that has not met its end-of-stream record yet
CHUNK_RECORDS = 250_000  # records per Spark partition at most
BATCH_ROWS = 50_000  # rows per Arrow batch yielded by read()
METADATA_TIMEOUT_S = 30.0
READ_STALL_TIMEOUT_S = 120.0  # a read making no progress for this long fails

TopicPartitionKey = tuple[str, int]


class KafkaInputPartition(InputPartition):
    """Records ``[start, end)`` of one Kafka partition."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        self.topic, self.partition, self.start, self.end = topic, partition, start, end

    def __repr__(self) -> str:
        return f"KafkaInputPartition({self.topic}/{self.partition} [{self.start}, {self.end}))"


def _nested(offsets: dict[TopicPartitionKey, int]) -> dict[str, dict[str, int]]:
    nested: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        nested.setdefault(topic, {})[str(partition)] = int(offset)
    return nested


def _nest(offsets: dict[TopicPartitionKey, int], stop: Optional[dict[TopicPartitionKey, int]] = None) -> dict:
    """The offset JSON: next offsets per partition; a bounded read also carries its stop offsets,
    fixed when the job first started (so a restart ends at the same place), and ``eos`` once
    every partition reached its stop offset. A stop of ``OPEN`` (-1) is a partition that only an
    end-of-stream record can end (``scan.bounded`` unset, an evaluator set)."""
    offset: dict[str, Any] = {"partitions": _nested(offsets)}
    if stop is not None:
        offset["stop"] = _nested(stop)
        if all(end >= 0 and offsets.get(tp, 0) >= end for tp, end in stop.items()):
            offset[EOS_OFFSET_KEY] = True
    return offset


def _flat(offset: Optional[dict], key: str = "partitions") -> dict[TopicPartitionKey, int]:
    if not offset:
        return {}
    return {
        (topic, int(p)): int(o)
        for topic, parts in offset.get(key, {}).items()
        for p, o in parts.items()
    }


def _stop_of(offset: Optional[dict]) -> Optional[dict[TopicPartitionKey, int]]:
    return _flat(offset, "stop") if offset and "stop" in offset else None


_PROBE_OFFSET = "__kindling_offset"


def load_evaluator(text: str):
    """The end-of-stream record evaluator shipped in the source options (cloudpickled, base64)."""
    import base64

    from pyspark import cloudpickle

    return cloudpickle.loads(base64.b64decode(text))


class EndOfInputPartition(InputPartition):
    """The one-row task that emits a bounded read's end-of-input marker."""

    def __init__(self) -> None:
        super().__init__("eos")

    def __repr__(self) -> str:
        return "EndOfInputPartition()"


def fair_share(available: dict[Any, int], budget: int) -> dict[Any, int]:
    """Split ``budget`` rows across partitions: each gets an equal share, capped by what it has;
    what a small partition cannot use goes to the others (water-filling). Deterministic."""
    alloc = {k: 0 for k in available}
    remaining = max(0, budget)
    order = sorted((k for k, v in available.items() if v > 0), key=lambda k: (available[k], k))
    for i, key in enumerate(order):
        take = min(available[key], remaining // (len(order) - i))
        alloc[key] = take
        remaining -= take
    for key in sorted(order):  # the remainder of integer division, one row each
        if remaining <= 0:
            break
        if alloc[key] < available[key]:
            alloc[key] += 1
            remaining -= 1
    return alloc


class _SourceLayout:
    """Which schema column comes from where; shared by the driver (checks) and executors (reads)."""

    def __init__(self, config: SourceConfig, schema: StructType) -> None:
        names = set(schema.names)
        missing = [c for c, _ in config.metadata if c not in names]
        if missing:
            raise OptionError(
                f"kafka source: metadata column {missing[0]!r} is not in the schema "
                f"({', '.join(schema.names)})"
            )
        self.metadata = dict(config.metadata)
        absent = [c for c in config.key_fields if c not in names]
        if absent:
            raise OptionError(f"kafka source option 'key.fields' names column {absent[0]!r}, which is not in the schema ({', '.join(schema.names)})")
        # With 'EXCEPT_KEY' the key columns come from the record key; with 'ALL' the value holds them too.
        from_key = list(config.key_fields) if config.value_fields_include == "EXCEPT_KEY" else []
        self.value_schema = value_columns(schema, list(self.metadata) + from_key, [EOS_COLUMN, ROWKIND_COLUMN])
        if ROWKIND_COLUMN in names and not config.value_format.is_changelog:
            raise OptionError(f"kafka source: rows carry a row kind only with a changelog format ({', '.join(CHANGELOG_FORMATS)}); "
                              f"the value format is {config.value_format.name!r}")
        self.decoder = ValueDecoder(self.value_schema, config.value_format)
        self.key_schema = StructType([schema[c] for c in from_key])
        self.key_decoder = ValueDecoder(self.key_schema, config.key_format) if from_key and config.key_format else None
        self.schema = schema
        self.arrow_schema = arrow_schema(schema)


class KafkaDataSource(BoundedReads, DataSource):
    """``spark.readStream.format("kindling_kafka")`` / ``df.writeStream.format("kindling_kafka")`` with Flink's options."""

    @classmethod
    def name(cls) -> str:
        return "kindling_kafka"

    def schema(self) -> StructType:
        config = source_config(dict(self.options))
        if config.value_format.name == "raw" and not config.metadata:
            return with_eos(StructType([StructField("value", BinaryType(), True)]))
        raise OptionError(
            "kafka source needs a schema (the value columns plus metadata columns); only 'format' = 'raw' "
            "has a default one (a single BINARY column 'value')"
        )

    def streamReader(self, schema: StructType) -> "KafkaStreamReader":
        return KafkaStreamReader(dict(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool):
        from kindling.connectors.kafka.sink import KafkaStreamWriter

        return KafkaStreamWriter(dict(self.options), schema)


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.options = options
        self.config = source_config(options)
        self.schema = schema
        layout = _SourceLayout(self.config, schema)  # fail on the driver, before any task, on a bad schema
        rowtime = self.config.rowtime
        # A watermark per partition needs the driver to read a record's rowtime: a value column or the record
        # timestamp; and it only holds partitions back for a query with event-time state (see watermark_use).
        self._per_split = self.config.alignment_group is not None or (
            rowtime is not None and (rowtime in layout.value_schema.names or layout.metadata.get(rowtime) == "timestamp")
            and watermark_use.feeds_event_time_state(options.get(TABLE_SCAN)))
        self._consumer: Any = None
        self._known: set[TopicPartitionKey] = set()
        self._last_discovery: Optional[float] = None
        self._target: Optional[dict[TopicPartitionKey, int]] = None
        self._aligner: Optional[PartitionAligner] = None
        self._highs: dict[TopicPartitionKey, int] = {}

    # The reader is pickled to executors: never ship the driver's Kafka clients.
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_consumer"] = None
        state["_aligner"] = None
        return state

    def _alignment(self) -> Optional[PartitionAligner]:
        """The partition aligner (created on first use): watermark alignment when configured, else
        Flink's per-split watermark when the source has a rowtime (see ``alignment``)."""
        config = self.config
        if not self._per_split:
            return None
        if self._aligner is None:
            def probe_consumer():
                from confluent_kafka import Consumer

                conf = config.consumer_config()
                conf.update({"group.id": f"kindling-probe-{uuid.uuid4().hex[:12]}", "auto.offset.reset": "earliest",
                             "enable.partition.eof": True})
                return Consumer(conf)

            probe = EventTimeProbe(probe_consumer, self._metadata_consumer, self._event_time_decoder(),
                                   timestamp_offset_ms=config.rowtime_millis[1])
            if config.alignment_group is None:
                self._aligner = PartitionAligner.split_watermarks(probe, config.idle_timeout_s)
            else:
                source_id = f"{config.bootstrap_servers}|{config.topic_pattern or ';'.join(config.topics)}"
                self._aligner = PartitionAligner(
                    probe, AlignmentGroup(config.alignment_group, source_id), config.alignment_max_drift_ms,
                    config.idle_timeout_s, config.alignment_update_interval_s,
                )
        return self._aligner

    def _event_time_decoder(self):
        """How the driver reads a record's event time: the rowtime value column, else the Kafka timestamp."""
        rowtime = self.config.rowtime
        layout = _SourceLayout(self.config, self.schema)
        if rowtime and rowtime in layout.value_schema.names:
            return value_time_decoder(layout.decoder, layout.value_schema.names.index(rowtime), *self.config.rowtime_millis)
        if rowtime and layout.metadata.get(rowtime) not in (None, "timestamp"):
            log.warning("kafka source: rowtime column %r is metadata %r; aligning partitions by record timestamps", rowtime, layout.metadata[rowtime])
        return None

    # ------------------------------------------------------------------ driver side

    def _metadata_consumer(self):
        if self._consumer is None:
            from confluent_kafka import Consumer

            conf = self.config.consumer_config()
            # A group id is needed to read committed offsets; the consumer never joins or commits.
            conf["group.id"] = self.config.group_id or f"kindling-source-{uuid.uuid4().hex[:12]}"
            self._consumer = Consumer(conf)
        return self._consumer

    def _discover(self, required: bool) -> set[TopicPartitionKey]:
        import re

        metadata = self._metadata_consumer().list_topics(timeout=METADATA_TIMEOUT_S)
        found: set[TopicPartitionKey] = set()
        if self.config.topic_pattern:
            pattern = re.compile(self.config.topic_pattern)
            topics = [t for t in metadata.topics if pattern.fullmatch(t) and not t.startswith("__")]
        else:
            topics = list(self.config.topics)
            absent = [t for t in topics if t not in metadata.topics or metadata.topics[t].error is not None]
            if absent and required:
                raise OptionError(
                    f"kafka source option 'topic': topic {absent[0]!r} does not exist on "
                    f"{self.config.bootstrap_servers} (existing: {', '.join(sorted(t for t in metadata.topics if not t.startswith('__'))) or 'none'})"
                )
            topics = [t for t in topics if t not in absent]
        for topic in topics:
            for partition in metadata.topics[topic].partitions:
                found.add((topic, int(partition)))
        self._known |= found
        self._last_discovery = time.monotonic()
        return found

    def _discovery_due(self) -> bool:
        if self._last_discovery is None:
            return True
        interval = self.config.discovery_interval_s
        return interval > 0 and time.monotonic() - self._last_discovery >= interval

    def _watermarks(self, tp: TopicPartitionKey) -> tuple[int, int]:
        from confluent_kafka import TopicPartition

        low, high = self._metadata_consumer().get_watermark_offsets(
            TopicPartition(tp[0], tp[1]), timeout=METADATA_TIMEOUT_S, cached=False
        )
        return int(low), int(high)

    def initialOffset(self) -> dict:
        from confluent_kafka import TopicPartition

        tps = sorted(self._discover(required=True))
        mode = self.config.startup_mode
        offsets: dict[TopicPartitionKey, int] = {}
        if mode == "earliest-offset":
            offsets = {tp: self._watermarks(tp)[0] for tp in tps}
        elif mode == "latest-offset":
            offsets = {tp: self._watermarks(tp)[1] for tp in tps}
        elif mode == "timestamp":
            wanted = [TopicPartition(t, p, self.config.startup_timestamp_ms) for t, p in tps]
            found = self._metadata_consumer().offsets_for_times(wanted, timeout=METADATA_TIMEOUT_S)
            for tp in found:
                key = (tp.topic, tp.partition)
                # No record at or after the timestamp: start at the end.
                offsets[key] = tp.offset if tp.offset >= 0 else self._watermarks(key)[1]
        elif mode == "specific-offsets":
            for tp in tps:
                given = self.config.specific_offsets.get(tp[1])
                offsets[tp] = given if given is not None else self._watermarks(tp)[0]
        else:  # group-offsets
            committed = {}
            if self.config.group_id:
                result = self._metadata_consumer().committed(
                    [TopicPartition(t, p) for t, p in tps], timeout=METADATA_TIMEOUT_S
                )
                committed = {(tp.topic, tp.partition): tp.offset for tp in result}
            for tp in tps:
                offset = committed.get(tp, -1)
                if offset is not None and offset >= 0:
                    offsets[tp] = offset
                elif self.config.auto_offset_reset == "none":
                    raise OptionError(
                        f"kafka source: group {self.config.group_id!r} has no committed offset for topic {tp[0]!r} "
                        f"partition {tp[1]} and 'properties.auto.offset.reset' is 'none'; set it to 'earliest' or "
                        "'latest', or use another 'scan.startup.mode'"
                    )
                else:
                    low, high = self._watermarks(tp)
                    offsets[tp] = low if self.config.auto_offset_reset == "earliest" else high
        if not self.config.bounded:
            if self.config.eof_record_evaluator is not None:
                return _nest(offsets, {tp: OPEN for tp in tps})
            return _nest(offsets)
        stop = self._stopping_offsets(tps)
        return _nest(offsets, {tp: max(stop[tp], offsets[tp]) for tp in tps})

    def _stopping_offsets(self, tps: list[TopicPartitionKey]) -> dict[TopicPartitionKey, int]:
        """Where a bounded read ends (exclusive) per partition, per ``scan.bounded.mode``."""
        from confluent_kafka import TopicPartition

        mode = self.config.bounded_mode
        latest = {tp: self._watermarks(tp)[1] for tp in tps}
        if mode == "latest-offset":
            return latest
        if mode == "timestamp":
            wanted = [TopicPartition(t, p, self.config.bounded_timestamp_ms) for t, p in tps]
            found = self._metadata_consumer().offsets_for_times(wanted, timeout=METADATA_TIMEOUT_S)
            # The first record at or after the timestamp is not read; none such: read to the end.
            return {(tp.topic, tp.partition): tp.offset if tp.offset >= 0 else latest[(tp.topic, tp.partition)] for tp in found}
        if mode == "specific-offsets":
            return {tp: self.config.bounded_specific_offsets.get(tp[1], latest[tp]) for tp in tps}
        committed = self._metadata_consumer().committed([TopicPartition(t, p) for t, p in tps], timeout=METADATA_TIMEOUT_S)
        return {(tp.topic, tp.partition): tp.offset if tp.offset >= 0 else latest[(tp.topic, tp.partition)] for tp in committed}

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.config.max_records_per_trigger:
            return ReadMaxRows(self.config.max_records_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._discover(required=False)
        self._target = {tp: self._watermarks(tp)[1] for tp in sorted(self._known)}

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        current = _flat(start)
        stop = _stop_of(start)
        if stop is not None:
            return self._bounded_latest(start, current, stop, limit)
        if self._discovery_due():
            self._discover(required=False)
        for tp in self._known:
            if tp not in current:  # a partition discovered after the start: read it from its earliest offset
                current[tp] = self._watermarks(tp)[0]
        lows, highs = self._positions(current)
        if self._target is not None:  # Trigger.AvailableNow: what was there when the query started
            highs = {tp: self._target.get(tp, offset) for tp, offset in current.items()}
        return _nest(self._admit(current, highs, lows, limit))

    def _positions(self, current: dict[TopicPartitionKey, int]) -> tuple[dict[TopicPartitionKey, int], dict[TopicPartitionKey, int]]:
        """Each partition's low and high watermark offsets (a deleted topic keeps its position)."""
        lows: dict[TopicPartitionKey, int] = {}
        highs: dict[TopicPartitionKey, int] = {}
        for tp, offset in current.items():
            try:
                lows[tp], highs[tp] = self._watermarks(tp)
            except Exception:
                lows[tp], highs[tp] = offset, offset
        return lows, highs

    def _admit(self, current: dict[TopicPartitionKey, int], highs: dict[TopicPartitionKey, int],
               lows: dict[TopicPartitionKey, int], limit: ReadLimit, finished: frozenset = frozenset()) -> dict[TopicPartitionKey, int]:
        """End offsets of the next batch: up to ``highs``, within watermark alignment and the read limit."""
        self._highs = dict(highs)
        available = {tp: max(0, highs[tp] - offset) for tp, offset in current.items()}
        aligner = self._alignment()
        if aligner is not None:  # before the row budget, so that held partitions do not waste it
            ends = aligner.limit(current, highs, lows, finished)
            available = {tp: ends[tp] - offset for tp, offset in current.items()}
        max_rows = getattr(limit, "max_rows", None)
        if isinstance(limit, ReadMaxRows) and max_rows is not None:
            granted = fair_share(available, int(max_rows))
        else:
            granted = available
        return {tp: offset + granted[tp] for tp, offset in current.items()}

    def reportLatestOffset(self) -> Optional[dict]:
        """The partitions' high watermarks at the last trigger: Spark's progress shows them as the
        source's ``latestOffset``, and consumer lag is that minus the batch's ``endOffset``."""
        if not self._highs:
            return None
        report: dict[str, Any] = {"partitions": _nested(self._highs)}
        if self._aligner is not None:
            report["eventTime"] = {f"{t}/{p}": ms for (t, p), ms in sorted(self._aligner.frontiers.items()) if ms is not None}
            report["idle"] = [f"{t}/{p}" for t, p in sorted(self._aligner.idle)]
        return report

    def _bounded_latest(self, start: dict, current: dict[TopicPartitionKey, int], stop: dict[TopicPartitionKey, int], limit: ReadLimit) -> dict:
        """A bounded read: never past the stop offsets; partitions found later are not read (as in Flink)."""
        if start.get(EOS_OFFSET_KEY):
            return start
        lows, highs = self._positions(current)
        for tp, offset in current.items():
            end = stop.get(tp, offset)
            if end != OPEN:
                highs[tp] = min(highs[tp], end)
        finished = frozenset(tp for tp, offset in current.items() if stop.get(tp, offset) != OPEN and offset >= stop.get(tp, offset))
        ends = self._admit(current, highs, lows, limit, finished)
        if self.config.eof_record_evaluator is not None:
            ends, stop = self._find_end_records(current, ends, stop)
        return _nest(ends, stop)

    def _find_end_records(self, current: dict[TopicPartitionKey, int], ends: dict[TopicPartitionKey, int],
                          stop: dict[TopicPartitionKey, int]) -> tuple[dict[TopicPartitionKey, int], dict[TopicPartitionKey, int]]:
        """FLIP-208: read the batch's new records on the driver; a partition ends before its first record
        the evaluator accepts (that record is not emitted), and its stop offset is kept in the offsets."""
        evaluator = load_evaluator(self.config.eof_record_evaluator)
        probe_schema = StructType(list(self.schema.fields) + [StructField(_PROBE_OFFSET, LongType(), True)])
        probe_config = dataclasses.replace(self.config, metadata=self.config.metadata + ((_PROBE_OFFSET, "offset"),))
        user_columns = [f.name for f in self.schema.fields if f.name != EOS_COLUMN]
        ends, stop = dict(ends), dict(stop)
        for tp, start in sorted(current.items()):
            end = ends.get(tp, start)
            if end <= start:
                continue
            found = None
            for batch in read_partition(probe_config, probe_schema, KafkaInputPartition(tp[0], tp[1], start, end)):
                offsets = batch.column(batch.schema.get_field_index(_PROBE_OFFSET)).to_pylist()
                for offset, record in zip(offsets, batch.select(user_columns).to_pylist()):
                    if evaluator(Row(**record)):
                        found = offset
                        break
                if found is not None:
                    break
            if found is not None:
                stop[tp] = found
                ends[tp] = found
        return ends, stop

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        ordered = self._record_partitions(start, end)
        if end.get(EOS_OFFSET_KEY) and not start.get(EOS_OFFSET_KEY):
            ordered.append(EndOfInputPartition())  # exactly once: only the range that reaches the end
        return ordered

    def _record_partitions(self, start: dict, end: dict) -> list[InputPartition]:
        begin = _flat(start)
        per_partition: list[list[KafkaInputPartition]] = []
        for (topic, partition), stop in sorted(_flat(end).items()):
            first = begin.get((topic, partition), 0)  # absent: a new partition, read from its start
            chunks = []
            while first < stop:
                last = min(stop, first + CHUNK_RECORDS)
                chunks.append(KafkaInputPartition(topic, partition, first, last))
                first = last
            if chunks:
                per_partition.append(chunks)
        # Interleave so that concurrent tasks read different Kafka partitions.
        ordered: list[InputPartition] = []
        depth = max((len(c) for c in per_partition), default=0)
        for i in range(depth):
            ordered.extend(c[i] for c in per_partition if i < len(c))
        return ordered

    def commit(self, end: dict) -> None:
        """Nothing to do: progress lives in Spark's checkpoint, never in Kafka."""

    def stop(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.close()
        if self._aligner is not None:
            self._aligner.probe.close()

    # ------------------------------------------------------------------ executor side

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if isinstance(partition, EndOfInputPartition):
            return iter([end_of_input_batch(arrow_schema(self.schema))])
        return read_partition(self.config, self.schema, partition)


def read_partition(config: SourceConfig, schema: StructType, part: KafkaInputPartition) -> Iterator[pa.RecordBatch]:
    """Consume ``[part.start, part.end)`` of one Kafka partition as Arrow batches of the schema."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    layout = _SourceLayout(config, schema)
    conf = config.consumer_config()
    conf.update({
        "group.id": f"kindling-reader-{uuid.uuid4().hex[:12]}",  # required by the client; never joined
        "auto.offset.reset": "earliest",  # records gone by retention: continue at the earliest one left
    })
    consumer = Consumer(conf)
    stats = _SkipStats()
    try:
        consumer.assign([TopicPartition(part.topic, part.partition, part.start)])
        pending: list = []
        next_offset = part.start
        last_progress = time.monotonic()
        while next_offset < part.end:
            want = min(part.end - next_offset, BATCH_ROWS - len(pending))
            messages = consumer.consume(num_messages=max(1, want), timeout=1.0)
            if not messages:
                position = consumer.position([TopicPartition(part.topic, part.partition)])[0].offset
                if position >= part.end:  # the rest are transaction markers or compacted away
                    break
                if time.monotonic() - last_progress > READ_STALL_TIMEOUT_S:
                    raise TimeoutError(
                        f"kafka source: no records from topic {part.topic!r} partition {part.partition} for "
                        f"{READ_STALL_TIMEOUT_S:.0f} s at offset {next_offset} (reading up to {part.end}) "
                        f"from {config.bootstrap_servers}"
                    )
                continue
            last_progress = time.monotonic()
            for message in messages:
                error = message.error()
                if error is not None and error.code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(error)
            last = messages[-1].offset()
            if last >= part.end:
                messages = [m for m in messages if m.offset() < part.end]
                next_offset = part.end
            else:
                next_offset = last + 1
            pending.extend(messages)
            if len(pending) >= BATCH_ROWS:
                batch = _to_batch(layout, config, part, pending, stats)
                pending = []
                if batch.num_rows:
                    yield batch
        if pending:
            batch = _to_batch(layout, config, part, pending, stats)
            if batch.num_rows:
                yield batch
    finally:
        consumer.close()
    stats.report(config, part)


class _SkipStats:
    def __init__(self) -> None:
        self.count = 0
        self.first: Optional[tuple[int, str]] = None

    def add(self, offset: int, error: str) -> None:
        self.count += 1
        if self.first is None:
            self.first = (offset, error)

    def report(self, config: SourceConfig, part: KafkaInputPartition) -> None:
        if self.count and self.first:
            log.warning(
                "kafka source: skipped %d malformed %s record(s) in topic %r partition %d offsets [%d, %d); "
                "first at offset %d: %s",
                self.count, config.value_format.name, part.topic, part.partition, part.start, part.end,
                self.first[0], self.first[1],
            )


_TIMESTAMP_TYPES = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}


def _to_batch(layout: _SourceLayout, config: SourceConfig, part: KafkaInputPartition, messages: list, stats: _SkipStats) -> pa.RecordBatch:
    decoded = layout.decoder.decode([m.value() for m in messages])
    if decoded.errors:
        fmt = config.value_format.name
        if not config.value_format.ignore_parse_errors:
            index, error = decoded.errors[0]
            hint = f" Set '{fmt}.ignore-parse-errors' = 'true' to skip malformed records." if fmt in ("json", "csv") else ""
            raise ValueError(
                f"kafka source: cannot read the {fmt} value of the record at topic {part.topic!r} partition "
                f"{part.partition} offset {messages[index].offset()}: {error}.{hint}"
            )
        for index, error in decoded.errors:
            stats.add(messages[index].offset(), error)
    kept = messages if decoded.kept is None else [messages[i] for i in decoded.kept]
    n = len(kept)
    value_arrays = dict(zip(layout.value_schema.names, decoded.arrays))
    if layout.key_decoder is not None:
        keys = layout.key_decoder.decode([m.key() for m in kept])
        if keys.errors or (keys.kept is not None and len(keys.kept) != n):
            index, error = keys.errors[0] if keys.errors else (0, "the record has no key")
            raise ValueError(
                f"kafka source: cannot read the {config.key_format.name} key of the record at topic {part.topic!r} "
                f"partition {part.partition} offset {kept[index].offset()}: {error}"
            )
        value_arrays.update(zip(layout.key_schema.names, keys.arrays))
    arrays = []
    for field in layout.arrow_schema:
        if field.name in value_arrays:
            arrays.append(value_arrays[field.name])
        elif field.name == EOS_COLUMN:
            arrays.append(pa.array(np.zeros(n, dtype=bool), type=pa.bool_()))
        elif field.name == ROWKIND_COLUMN:
            arrays.append(decoded.kinds if decoded.kinds is not None else pa.array(["+I"] * n, pa.string()))
        else:
            arrays.append(_metadata_array(layout.metadata[field.name], kept, part, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=layout.arrow_schema)


def _metadata_array(key: str, messages: list, part: KafkaInputPartition, target: pa.DataType) -> pa.Array:
    n = len(messages)
    if key == "offset":
        array = pa.array([m.offset() for m in messages], type=pa.int64())
    elif key == "partition":
        array = pa.array(np.full(n, part.partition, dtype=np.int32))
    elif key == "topic":
        array = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([part.topic])).dictionary_decode()
    elif key == "timestamp":
        stamps = [m.timestamp() for m in messages]
        array = pa.array([ms if kind else None for kind, ms in stamps], type=pa.int64()).cast(pa.timestamp("ms", tz="UTC"))
    elif key == "timestamp-type":
        array = pa.array([_TIMESTAMP_TYPES.get(m.timestamp()[0], "NoTimestampType") for m in messages], type=pa.string())
    elif key == "key":
        array = pa.array([m.key() for m in messages], type=pa.binary())
    elif key == "headers":
        return pa.array([m.headers() for m in messages], type=target)
    else:  # pragma: no cover - options validation prevents it
        raise ValueError(f"unknown Kafka metadata key {key!r}")
    return array if array.type.equals(target) else array.cast(target)

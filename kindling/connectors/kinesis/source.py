"""Kinesis source: a Spark Python Data Source stream reader (``format("kindling_kinesis")``), POLLING or EFO.

How a micro-batch is read, exactly once:

* **Offsets** are JSON ``{"stream": name, "shards": {shardId: position}}`` kept only in Spark's checkpoint.
  A position is ``TRIM_HORIZON``, ``AT_TIMESTAMP:<epoch ms>`` (a start not yet read from), ``AFTER:<sequence
  number>`` (everything up to and including that record is read) or ``SHARD_END`` (a closed shard read to
  its end). A batch's range for a shard is (start position, end position]: a closed shard's records and the
  records up to a sequence number never change, so a replayed batch reads exactly the same records.
* **Start positions**: ``TRIM_HORIZON``; ``AT_TIMESTAMP`` (records that arrived at or after the time);
  ``LATEST`` is fixed when the job first starts as ``AT_TIMESTAMP:<now>``, so that replaying the first
  batch after a crash does not move it (records put before the job started are not read, as in Flink).
  A restored checkpoint wins over the configured position. The batch that first reads a shard logs where
  that reading began (``from`` in its end offset), so replaying it reads the same records even though
  Spark asks ``initialOffset`` again on restart; a job killed before its first batch was logged picks a
  new ``LATEST`` when restarted.
* **latestOffset** (driver) lists shards every ``scan.shard.discovery.intervalmillis`` (ListShards), and
  polls each readable shard once per ``scan.shard.getrecords.intervalmillis`` (GetRecords, up to
  ``maxrecordcount`` records, one thread per shard as in Flink's ShardConsumer). The records it fetched
  are kept on the driver; the batch ends at the last one of each shard.
* **Resharding**: a child shard joins the batch *after* the batch in which all its parents reached
  ``SHARD_END``, so every record of a partition key in a parent is emitted in an earlier micro-batch than
  any record of that key in a child. New shards found by discovery join the next micro-batch, read from
  their first record. A closed shard stays in the offsets as ``SHARD_END`` until ListShards no longer
  returns it (retention), so it is never read twice.
* **EFO** (``scan.stream.recordpublisher`` = ``EFO``): the driver reads each shard through a SubscribeToShard
  subscription (:mod:`kindling.connectors.kinesis.efo`) instead of GetRecords; offsets, batches and replays
  are the same (a replay reads its range with GetRecords).
* **Watermark synchronisation** (``scan.watermark.lookahead.millis``): each shard's part of the batch is
  cut where it would run ahead of the slowest active shard (:mod:`kindling.connectors.kinesis.alignment`).
* **partitions / read**: one Spark partition per shard with new records. When the driver still holds the
  batch's records (the normal case) they travel in the partition (Arrow IPC) and the executor only
  decodes them; a replayed batch (after a restart) is read again by the executor from Kinesis, from the
  start position up to the end sequence number. Executors yield Arrow batches of the schema, with the
  metadata columns ``timestamp`` (approximate arrival), ``shard-id`` and ``sequence-number``. A KPL-aggregated
  record becomes rows of its user records (:mod:`kindling.connectors.kinesis.aggregation`).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, SupportsTriggerAvailableNow
from pyspark.sql.types import BinaryType, StructField, StructType

from kindling.arrow import arrow_schema
from kindling.connectors import watermark_use
from kindling.connectors.base import EOS_COLUMN, TABLE_SCAN, with_eos
from kindling.connectors.bounded_read import BoundedReads
from kindling.connectors.kinesis.aggregation import deaggregate_batch
from kindling.connectors.kinesis.alignment import Record, ShardAligner, event_time_reader
from kindling.connectors.kinesis.aws import JsonApi, describe_failure, get_records, kinesis_client, list_shards, with_retries
from kindling.connectors.kinesis.efo import Http2Signer, ShardSubscription, consumer_arn
from kindling.connectors.kinesis.options import SourceConfig, source_config
from kindling.formats import ValueDecoder, value_columns
from kindling.options import OptionError

log = logging.getLogger("kindling.connectors.kinesis")

TRIM_HORIZON = "TRIM_HORIZON"
SHARD_END = "SHARD_END"
AFTER = "AFTER:"
AT_TIMESTAMP = "AT_TIMESTAMP:"
BATCH_ROWS = 50_000
BUFFER_RECORDS = 100_000  # records the driver holds per shard before it stops polling that shard
READ_STALL_TIMEOUT_S = 120.0


def _seq(position: str) -> Optional[int]:
    return int(position[len(AFTER):]) if position.startswith(AFTER) else None


def _read_from(position: str) -> bool:
    """Whether a position lies after a record read (``AFTER:``) or at the shard's end, not at a start position."""
    return position.startswith(AFTER) or position == SHARD_END


def iterator_request(position: str) -> dict[str, Any]:
    """GetShardIterator arguments that start right after ``position``."""
    if position == TRIM_HORIZON:
        return {"ShardIteratorType": "TRIM_HORIZON"}
    if position.startswith(AT_TIMESTAMP):
        return {"ShardIteratorType": "AT_TIMESTAMP", "Timestamp": int(position[len(AT_TIMESTAMP):]) / 1000.0}
    if position.startswith(AFTER):
        return {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "StartingSequenceNumber": position[len(AFTER):]}
    raise ValueError(f"no iterator after position {position!r}")


class KinesisInputPartition(InputPartition):
    """Records of one shard in (start, end]; ``records`` holds them (Arrow IPC) when the driver fetched them."""

    def __init__(self, shard: str, start: str, end: str, records: Optional[bytes] = None) -> None:
        self.shard, self.start, self.end, self.records = shard, start, end, records

    def __repr__(self) -> str:
        held = f", {len(self.records)} bytes held" if self.records is not None else ""
        return f"KinesisInputPartition({self.shard} ({self.start}, {self.end}]{held})"


RECORD_SCHEMA = pa.schema([("data", pa.binary()), ("sequence", pa.string()), ("arrival", pa.int64())])


def _record_batch(records: Sequence[tuple[str, bytes, int]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([
        pa.array([r[1] for r in records], pa.binary()),
        pa.array([r[0] for r in records], pa.string()),
        pa.array([r[2] for r in records], pa.int64()),
    ], schema=RECORD_SCHEMA)


def _ipc(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as stream:
        stream.write_batch(batch)
    return sink.getvalue().to_pybytes()


@dataclass
class _ShardBuffer:
    """What the driver fetched from one shard after ``base`` and not yet committed."""

    base: str
    records: list = field(default_factory=list)  # (sequence, data, arrival ms)
    times: list = field(default_factory=list)  # the records' event times (ms), under watermark synchronisation
    iterator: Optional[str] = None
    ended: bool = False  # the shard is closed and every record after ``base`` is in ``records``
    last_call: float = 0.0
    caught_up: bool = False

    def next_position(self) -> str:
        return AFTER + self.records[-1][0] if self.records else self.base

    def end_position(self) -> str:
        return SHARD_END if self.ended else self.next_position()

    def advance(self, position: str) -> bool:
        """Drop the records up to ``position``; False when ``position`` is not in this buffer."""
        if position == self.base:
            return True
        if position == SHARD_END:
            return False
        seq = _seq(position)
        if seq is None:
            return False
        for i, record in enumerate(self.records):
            if int(record[0]) == seq:
                del self.records[:i + 1]
                del self.times[:i + 1]
                self.base = position
                return True
        return False

    def slice_to(self, end: str) -> Optional[list]:
        """The records in (base, end], or None when this buffer does not hold all of them."""
        if end == SHARD_END:
            return list(self.records) if self.ended else None
        seq = _seq(end)
        for i, record in enumerate(self.records):
            if int(record[0]) == seq:
                return self.records[:i + 1]
        return None


class _SourceLayout:
    """Which schema column comes from where; built on the driver (checks) and executors (reads)."""

    def __init__(self, config: SourceConfig, schema: StructType) -> None:
        names = set(schema.names)
        missing = [c for c, _ in config.metadata if c not in names]
        if missing:
            raise OptionError(f"kinesis source: metadata column {missing[0]!r} is not in the schema ({', '.join(schema.names)})")
        self.metadata = dict(config.metadata)
        self.value_schema = value_columns(schema, list(self.metadata), [EOS_COLUMN])
        self.decoder = ValueDecoder(self.value_schema, config.format)
        self.arrow_schema = arrow_schema(schema)


class KinesisDataSource(BoundedReads, DataSource):
    """``spark.readStream.format("kindling_kinesis")`` / ``df.writeStream.format("kindling_kinesis")``; ``spark.read`` of
    a streaming run's micro-batches (a reconciliation: each batch's shard ranges read again, as a replay reads them)."""

    @classmethod
    def name(cls) -> str:
        return "kindling_kinesis"

    connector = "kinesis"  # which option dialects it accepts

    def _options(self) -> dict[str, str]:
        return dict(self.options)

    def schema(self) -> StructType:
        config = source_config(self._options(), self.connector)
        if config.format.name == "raw" and not config.metadata:
            return with_eos(StructType([StructField("data", BinaryType(), True)]))
        raise OptionError("kinesis source needs a schema (the record columns plus metadata columns); only "
                          "'format' = 'raw' has a default one (a single BYTES column 'data')")

    def streamReader(self, schema: StructType) -> "KinesisStreamReader":
        return KinesisStreamReader(self._options(), schema, self.connector)

    def streamWriter(self, schema: StructType, overwrite: bool):
        from kindling.connectors.kinesis.sink import KinesisStreamWriter

        return KinesisStreamWriter(self._options(), schema)


class KinesisLegacyDataSource(KinesisDataSource):
    """``'connector' = 'kinesis-legacy'``: the same source, the 4.x option dialect only."""

    connector = "kinesis-legacy"

    @classmethod
    def name(cls) -> str:
        return "kindling_kinesis_legacy"


class KinesisStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: dict[str, str], schema: StructType, connector: str = "kinesis") -> None:
        self.options = options
        self.connector = connector
        self.config = source_config(options, connector)
        self.schema = schema
        layout = _SourceLayout(self.config, schema)  # fail on the driver, before any task, on a bad schema
        self._client: Any = None
        self._api: Optional[JsonApi] = None
        self._buffers: dict[str, _ShardBuffer] = {}
        self._parents: dict[str, tuple[str, ...]] = {}
        self._listed: Optional[set[str]] = None
        self._last_discovery: Optional[float] = None
        self._available_now_ms: Optional[int] = None
        self._lock = threading.Lock()  # buffers: between a read-ahead thread and partitions()/commit()
        self._ahead: Optional[threading.Thread] = None
        self._ahead_stop = threading.Event()
        self._aligner: Optional[ShardAligner] = None
        self._event_times: Optional[Callable[[Sequence[Record]], list[Optional[int]]]] = None
        if self.config.lookahead_ms is not None or (
                self.config.rowtime is not None and watermark_use.feeds_event_time_state(options.get(TABLE_SCAN))):
            self._aligner = ShardAligner(self.config.lookahead_ms, self.config.idle_interval_ms, self.config.sync_interval_ms)
            self._event_times = event_time_reader(layout.decoder, layout.value_schema.names, self.config.rowtime,
                                                  *self.config.rowtime_millis)
        self._subscriptions: dict[str, ShardSubscription] = {}
        self._consumer: Optional[str] = None  # EFO: the stream consumer's ARN
        self._signer: Optional[Http2Signer] = None
        self._list_shards()  # the stream exists, the endpoint answers, the credentials work: else fail now
        if self.config.publisher == "EFO" and self.config.efo_registration == "EAGER":
            self._efo_consumer()

    def __getstate__(self) -> dict:
        """The reader is pickled to executors: never ship the driver's client, buffers or lock."""
        state = dict(self.__dict__)
        state.update(_client=None, _buffers={}, _lock=None, _aligner=None, _event_times=None, _subscriptions={},
                     _consumer=None, _signer=None, _ahead=None, _ahead_stop=None, _api=None)
        return state

    # ------------------------------------------------------------------ driver side

    def _kinesis(self) -> Any:
        if self._client is None:
            self._client = kinesis_client(self.config.aws, f"{self.connector} source")
        return self._client

    def _json_api(self) -> JsonApi:
        if self._api is None:
            self._api = JsonApi(self.config.aws, self._kinesis(), f"{self.connector} source")
        return self._api

    def _list_shards(self) -> dict[str, tuple[str, ...]]:
        """Every shard ListShards returns, with its parents; remembered for the parent-before-child rule."""
        config = self.config
        shards: dict[str, tuple[str, ...]] = {}
        try:
            for shard in list_shards(self._kinesis(), config.stream, config.list_shards_retry):
                shards[shard["ShardId"]] = tuple(p for p in (shard.get("ParentShardId"), shard.get("AdjacentParentShardId")) if p)
        except OptionError:
            raise
        except Exception as exc:
            raise RuntimeError(describe_failure(exc, config.aws, config.stream, f"{self.connector} source")) from None
        self._parents.update(shards)
        self._listed = set(shards)
        self._last_discovery = time.monotonic()
        return shards

    def initialOffset(self) -> dict:
        config = self.config
        shards = self._list_shards() if self._listed is None else {s: self._parents[s] for s in self._listed}
        if config.init_position == "TRIM_HORIZON":
            start = TRIM_HORIZON
        elif config.init_position == "AT_TIMESTAMP":
            start = AT_TIMESTAMP + str(config.init_timestamp_ms)
        else:  # LATEST, fixed now so that a replay of the first batch starts at the same place
            start = AT_TIMESTAMP + str(int(time.time() * 1000))
        return {"stream": config.stream, "shards": {shard: start for shard in sorted(shards)}}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow: read what arrived before now, then end."""
        self._available_now_ms = int(time.time() * 1000)

    def _discovery_due(self) -> bool:
        interval = self.config.discovery_interval_ms
        return self._last_discovery is None or (interval > 0 and time.monotonic() - self._last_discovery >= interval / 1000.0)

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        self._stop_reading_ahead()
        shards: dict[str, str] = dict(start.get("shards", {}))
        if self._discovery_due():
            listed = self._list_shards()
            for shard in sorted(listed):
                shards.setdefault(shard, TRIM_HORIZON)  # a new shard: read from its first record
            for shard in [s for s, p in shards.items() if p == SHARD_END and s not in listed]:
                del shards[shard]  # expired from the stream: nothing can read it again
        readable = [s for s in sorted(shards) if self._readable(s, shards)]
        with self._lock:
            for shard in list(self._buffers):
                if shard not in shards:
                    del self._buffers[shard]
                    self._unsubscribe(shard)
            for shard in readable:
                buffer = self._buffers.get(shard)
                if buffer is None or not buffer.advance(shards[shard]):
                    self._buffers[shard] = _ShardBuffer(base=shards[shard])
                    self._unsubscribe(shard)
        self._poll(readable)
        while self._available_now_ms is not None and not self._has_new(readable, shards) and not self._all_done(readable):
            time.sleep(0.05)  # Trigger.AvailableNow ends when nothing is new: poll until caught up
            self._poll(readable)
        with self._lock:
            end = dict(shards)
            began: dict[str, str] = {}
            admitted = self._admitted(readable)
            for shard in readable:
                buffer = self._buffers[shard]
                count = admitted.get(shard, len(buffer.records))
                end[shard] = buffer.end_position() if count == len(buffer.records) else (
                    AFTER + buffer.records[count - 1][0] if count else shards[shard])
                if end[shard] != shards[shard] and not _read_from(shards[shard]):
                    began[shard] = shards[shard]
        self._read_ahead(readable)
        offset: dict[str, Any] = {"stream": start.get("stream", self.config.stream), "shards": end}
        if began:
            # Where these shards' reading began (a start position, not a record): logged with the batch, so
            # that a replay of the first batch starts there even though Spark asks initialOffset() again.
            offset["from"] = began
        return offset

    def _admitted(self, readable: list[str]) -> dict[str, int]:
        """With per-shard watermarks, how many buffered records of each shard this batch takes."""
        if self._aligner is None:
            return {}
        finished = {s for s in readable if self._finished(self._buffers[s])}
        return self._aligner.admit({s: self._buffers[s].times for s in readable}, finished)

    def _has_new(self, readable: list[str], shards: dict[str, str]) -> bool:
        return any(self._buffers[s].end_position() != shards[s] for s in readable)

    def _all_done(self, readable: list[str]) -> bool:
        return all(self._buffers[s].ended or self._buffers[s].caught_up for s in readable)

    def _readable(self, shard: str, shards: dict[str, str]) -> bool:
        """Open for reading: not finished, and every parent still known to this job finished in an earlier batch."""
        if shards.get(shard) == SHARD_END:
            return False
        return all(shards.get(parent, SHARD_END) == SHARD_END for parent in self._parents.get(shard, ()))

    def _wanted(self, shards: list[str], behind_only: bool = False) -> list[str]:
        """Shards a fetch may add to: open, below the buffer limit, not finished for Trigger.AvailableNow (and,
        with ``behind_only``, not caught up)."""
        buffers = [(s, self._buffers.get(s)) for s in shards]  # commit() drops the buffer of a finished shard
        return [s for s, b in buffers if b is not None and not self._finished(b) and len(b.records) < BUFFER_RECORDS
                and not (behind_only and b.caught_up)]

    def _finished(self, buffer: _ShardBuffer) -> bool:
        """Nothing more to fetch for now: the shard is closed, or caught up under Trigger.AvailableNow."""
        return buffer.ended or (self._available_now_ms is not None and buffer.caught_up)

    def _poll(self, shards: list[str]) -> bool:
        """One GetRecords per due shard, in parallel (one thread per shard, as Flink's ShardConsumer);
        whether any shard was due."""
        now = time.monotonic()
        interval = self.config.get_records_interval_ms / 1000.0
        due = [s for s in self._wanted(shards) if now - self._buffers[s].last_call >= interval]
        if not due:
            return False
        if len(due) == 1 or self.config.publisher == "EFO":  # EFO only takes what the subscriptions received
            for shard in due:
                self._fetch(shard)
            return True
        with ThreadPoolExecutor(max_workers=min(32, len(due))) as pool:
            for future in [pool.submit(self._fetch, shard) for shard in due]:
                future.result()
        return True

    def _read_ahead(self, shards: list[str]) -> None:
        """POLLING: keep fetching in the background while Spark runs the micro-batch just planned, as Flink's
        shard consumers poll while records are emitted; stopped at the next ``latestOffset``. It stops by
        itself once every shard is caught up, closed, or holds ``BUFFER_RECORDS`` (EFO subscriptions read
        ahead in their own threads)."""
        if self.config.publisher == "EFO" or not shards:
            return
        stop = self._ahead_stop = threading.Event()
        interval = self.config.get_records_interval_ms / 1000.0

        def run() -> None:
            try:
                while not stop.is_set() and (behind := self._wanted(shards, behind_only=True)):
                    if not self._poll(behind):
                        stop.wait(interval)
            except Exception as exc:  # the next latestOffset polls again and raises what persists
                log.debug("kinesis source: reading ahead stopped: %s", exc)

        self._ahead = threading.Thread(target=run, name="kinesis-read-ahead", daemon=True)
        self._ahead.start()

    def _stop_reading_ahead(self) -> None:
        if self._ahead is not None:
            self._ahead_stop.set()
            self._ahead.join()
            self._ahead = None

    def _efo_consumer(self) -> str:
        if self._consumer is None:
            context = f"{self.connector} source"
            try:
                self._consumer = consumer_arn(self.config, self._kinesis(), context)
            except OptionError:
                raise
            except Exception as exc:
                raise RuntimeError(f"{context}: cannot find or register the EFO stream consumer "
                                   f"{self.config.efo_consumer_name!r} on stream {self.config.stream!r}: "
                                   f"{type(exc).__name__}: {exc}") from None
        return self._consumer

    def _unsubscribe(self, shard: str) -> None:
        subscription = self._subscriptions.pop(shard, None)
        if subscription is not None:
            subscription.close()

    def _receive(self, shard: str) -> None:
        """EFO: take what the shard's subscription received (starting it, from the buffer's end, if needed)."""
        buffer = self._buffers[shard]
        buffer.last_call = time.monotonic()
        subscription = self._subscriptions.get(shard)
        if subscription is None:
            if self._signer is None:
                self._signer = Http2Signer(self.config.aws, self._kinesis().meta.endpoint_url, f"{self.connector} source")
            subscription = ShardSubscription(self._signer, self._efo_consumer(), shard, buffer.next_position(),
                                             self.config.subscribe_retry)
            self._subscriptions[shard] = subscription
        records, ended, caught_up = subscription.take()
        if self._available_now_ms is not None:
            kept = [r for r in records if r[2] <= self._available_now_ms]
            if len(kept) < len(records) or caught_up:
                self._keep(shard, buffer, kept, caught_up=True)
                self._unsubscribe(shard)  # a later take would miss what this one dropped
                return
        self._keep(shard, buffer, records, ended=ended, caught_up=caught_up)

    def _fetch(self, shard: str) -> None:
        if self.config.publisher == "EFO":
            self._receive(shard)
            return
        config = self.config
        buffer = self._buffers[shard]
        client, api = self._kinesis(), self._json_api()
        buffer.last_call = time.monotonic()
        for attempt in range(2):
            if buffer.iterator is None:
                with self._lock:
                    request = iterator_request(buffer.next_position())
                buffer.iterator = with_retries(
                    lambda request=request: client.get_shard_iterator(StreamName=config.stream, ShardId=shard, **request),
                    config.get_iterator_retry, "GetShardIterator")["ShardIterator"]
            try:
                records, response = with_retries(lambda: get_records(api, buffer.iterator, config.max_records_per_get),
                                                 config.get_records_retry, "GetRecords")
                break
            except Exception as exc:
                if type(exc).__name__ == "ExpiredIteratorException" and attempt == 0:
                    buffer.iterator = None  # iterators live 5 minutes: take a new one at the same place
                    continue
                raise
        if self._available_now_ms is not None:
            kept = [r for r in records if r[2] <= self._available_now_ms]
            if len(kept) < len(records):  # reached what arrived after the query started
                self._keep(shard, buffer, kept, caught_up=True)
                buffer.iterator = None
                return
        buffer.iterator = response.get("NextShardIterator")
        self._keep(shard, buffer, records, ended=buffer.iterator is None,
                   caught_up=not records and response.get("MillisBehindLatest", 0) == 0)

    def _keep(self, shard: str, buffer: _ShardBuffer, records: list, ended: bool = False, caught_up: bool = False) -> None:
        times = self._event_times(records) if self._aligner is not None and self._event_times is not None else None
        with self._lock:
            buffer.records.extend(records)
            buffer.ended, buffer.caught_up = ended, caught_up
            if times is not None:
                buffer.times.extend(times)
                self._aligner.fetched(shard, len(records))

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin = start.get("shards", {}) if start else {}
        parts: list[InputPartition] = []
        with self._lock:
            began = end.get("from", {})
            for shard, stop in sorted(end.get("shards", {}).items()):
                first = began.get(shard) or begin.get(shard, TRIM_HORIZON)
                if first == stop or first == SHARD_END or not _read_from(stop):
                    continue  # nothing read in this batch (an end that is still a start position)
                buffer = self._buffers.get(shard)
                held = buffer.slice_to(stop) if buffer is not None and buffer.base == first else None
                if held is not None:
                    if held:
                        parts.append(KinesisInputPartition(shard, first, stop, _ipc(_record_batch(held))))
                    continue
                parts.append(KinesisInputPartition(shard, first, stop))
        return parts

    def commit(self, end: dict) -> None:
        """Forget the records of committed batches (progress itself lives in Spark's checkpoint)."""
        with self._lock:
            for shard, position in end.get("shards", {}).items():
                buffer = self._buffers.get(shard)
                if buffer is None:
                    continue
                if position == SHARD_END:
                    del self._buffers[shard]
                else:
                    buffer.advance(position)

    def stop(self) -> None:
        self._stop_reading_ahead()
        for shard in list(self._subscriptions):
            self._unsubscribe(shard)
        self._signer = None
        if self._api is not None:
            self._api.close()
            self._api = None
        self._client = None
        self._buffers = {}

    # ------------------------------------------------------------------ executor side

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_partition(self.config, self.schema, partition, self.connector)


def read_partition(config: SourceConfig, schema: StructType, part: KinesisInputPartition, connector: str = "kinesis") -> Iterator[pa.RecordBatch]:
    """The records of ``part`` as Arrow batches of the schema: decoded from what the driver fetched, or read
    from Kinesis from the start position up to the end position (a replayed batch)."""
    layout = _SourceLayout(config, schema)
    if part.records is not None:
        for batch in pa.ipc.open_stream(pa.py_buffer(part.records)):
            for offset in range(0, batch.num_rows, BATCH_ROWS):
                yield _to_batch(layout, config, part.shard, batch.slice(offset, BATCH_ROWS))
        return
    pending: list = []
    for records in _fetch_range(config, part, connector):
        pending.extend(records)
        if len(pending) >= BATCH_ROWS:
            yield _to_batch(layout, config, part.shard, _record_batch(pending))
            pending = []
    if pending:
        yield _to_batch(layout, config, part.shard, _record_batch(pending))


def _fetch_range(config: SourceConfig, part: KinesisInputPartition, connector: str) -> Iterator[list]:
    """GetRecords from ``part.start`` until the record with the end sequence number (or the shard's end)."""
    client = kinesis_client(config.aws, f"{connector} source")
    api = JsonApi(config.aws, client, f"{connector} source")
    last = _seq(part.end)
    request = iterator_request(part.start)
    iterator = with_retries(lambda: client.get_shard_iterator(StreamName=config.stream, ShardId=part.shard, **request),
                            config.get_iterator_retry, "GetShardIterator")["ShardIterator"]
    progress = time.monotonic()
    while iterator is not None:
        records, response = with_retries(lambda iterator=iterator: get_records(api, iterator, config.max_records_per_get),
                                         config.get_records_retry, "GetRecords")
        iterator = response.get("NextShardIterator")
        if last is not None:
            keep = [r for r in records if int(r[0]) <= last]
            if keep:
                yield keep
            if len(keep) < len(records) or (keep and int(keep[-1][0]) == last):
                return
        elif records:
            yield records
        if records:
            progress = time.monotonic()
        elif time.monotonic() - progress > READ_STALL_TIMEOUT_S:
            raise TimeoutError(f"{connector} source: shard {part.shard} of stream {config.stream!r} returned no records for "
                               f"{READ_STALL_TIMEOUT_S:.0f} s while reading ({part.start}, {part.end}]")
        elif not records:
            time.sleep(min(0.2, config.get_records_interval_ms / 1000.0))


def _to_batch(layout: _SourceLayout, config: SourceConfig, shard: str, records: pa.RecordBatch) -> pa.RecordBatch:
    records = deaggregate_batch(config, shard, records)  # KPL-aggregated records: rows of their user records
    data = records.column(0).to_pylist()
    decoded = layout.decoder.decode(data)
    sequences = records.column(1)
    if decoded.errors:
        fmt = config.format.name
        index, error = decoded.errors[0]
        if not config.format.ignore_parse_errors:
            hint = f" Set '{fmt}.ignore-parse-errors' = 'true' to skip malformed records." if fmt in ("json", "csv") else ""
            raise ValueError(f"kinesis source: cannot read the {fmt} data of the record with sequence number "
                             f"{sequences[index].as_py()} in shard {shard} of stream {config.stream!r}: {error}.{hint}")
        log.warning("kinesis source: skipped %d malformed %s record(s) in shard %s; first at sequence number %s: %s",
                    len(decoded.errors), fmt, shard, sequences[index].as_py(), error)
    if decoded.kept is not None:
        records = records.take(pa.array(decoded.kept, pa.int64()))
    n = records.num_rows
    values = dict(zip(layout.value_schema.names, decoded.arrays))
    arrays = []
    for f in layout.arrow_schema:
        if f.name in values:
            arrays.append(values[f.name])
        elif f.name == EOS_COLUMN:
            arrays.append(pa.array(np.zeros(n, dtype=bool), type=pa.bool_()))
        else:
            key = layout.metadata[f.name]
            if key == "timestamp":
                array = records.column(2).cast(pa.timestamp("ms", tz="UTC"))
            elif key == "shard-id":
                array = pa.array([shard] * n, pa.string())
            else:
                array = records.column(1)
            arrays.append(array if array.type.equals(f.type) else array.cast(f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=layout.arrow_schema)

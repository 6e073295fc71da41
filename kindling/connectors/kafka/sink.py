"""Kafka sink: a Spark Python Data Source stream writer over Arrow batches.

``write()`` runs on executors and produces every row of its Spark partition:

* the value in ``format``/``value.format`` from every user column (columns whose names start with
  ``__kindling_`` are internal and never written), the key in ``key.format`` from ``key.fields``;
* ``sink.partitioner``: ``default`` leaves the choice to the Kafka client (hash of the key; sticky
  batches without a key), ``round-robin`` cycles through the partitions record by record, ``fixed``
  sends everything of one Spark task to partition ``task index % partitions`` (Flink's fixed
  partitioner, with Spark tasks as subtasks);
* changelog input (a ``__kindling_rowkind`` column): ``+I`` and ``+U`` rows are written, ``-U`` and
  ``-D`` rows are skipped — a plain Kafka topic of values cannot retract (an upsert-kafka sink
  writing tombstones for deletes is the place for that).

Delivery guarantees:

* ``at-least-once`` (default): ``write()`` flushes the producer and checks every delivery report
  before it returns its commit message; any failed record fails the task with the topic and the
  broker's error, so Spark retries or fails the batch and never commits it. A batch that is replayed
  after a failure may write some records twice. The driver's ``commit()`` has nothing left to do.
* ``none``: delivery reports are not checked (the producer is still flushed so that the worker does
  not drop queued records when it ends).
* ``exactly-once``: ``write()`` produces nothing: it encodes its rows (and chooses partitions for
  ``round-robin``/``fixed``) and returns them as Arrow binary columns in its commit message. The
  driver's ``commit(messages, batch_id)`` publishes the whole micro-batch in one Kafka transaction
  (``transactional.id`` = ``<sink.transactional-id-prefix>-<topic>``) together with a batch-id
  marker, and skips a batch id that is already committed (a replay after a crash); with
  ``sink.parallelism`` = n, n transactional publishers share the batch by Spark partition, each
  fenced by its own marker; see :mod:`kindling.connectors.kafka.transactions`. The encoded records
  travel to the driver zstd-compressed. ``abort`` has nothing to undo. Read the topic with
  ``isolation.level=read_committed``. Every record of a micro-batch passes through the driver: keep
  micro-batches to what the driver can hold (``scan.max-records-per-trigger`` on the source).
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN, pack_batches, unpack_table, upsert_kinds
from kindling.connectors.kafka.options import SinkConfig, sink_config
from kindling.formats import RowEncoder
from kindling.options import OptionError

FLUSH_TIMEOUT_S = 120.0
_KEEP_ROWKINDS = pa.array(["+I", "+U"])
_UPSERT_ROWKINDS = pa.array(["+I", "+U", "-D"])


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    """What one task wrote (at-least-once) or encoded for the driver to publish (exactly-once)."""

    topic: str
    records: int
    skipped_retractions: int
    # exactly-once only: the encoded records, published by the driver's commit().
    values: Optional[pa.Array] = None
    keys: Optional[pa.Array] = None
    partitions: Optional[pa.Array] = None

    def __getstate__(self) -> dict[str, Any]:
        """Ship the encoded records zstd-compressed (JSON shrinks ~6x), see :func:`pack_batches`."""
        state = dict(self.__dict__)
        columns = {name: state.pop(name) for name in ("values", "keys", "partitions") if state.get(name) is not None}
        if columns:
            batch = pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))
            state["_records"] = pack_batches([batch])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        records = state.pop("_records", None)
        self.__dict__.update(state, values=None, keys=None, partitions=None)
        if records is not None:
            table = unpack_table(records)
            for name in table.column_names:
                setattr(self, name, table.column(name).combine_chunks())


class _Deliveries:
    """Counts delivery reports; remembers the first failure."""

    def __init__(self) -> None:
        self.failed = 0
        self.first_error: Optional[str] = None
        self._lock = threading.Lock()

    def __call__(self, error, message) -> None:
        if error is not None:
            with self._lock:
                self.failed += 1
                if self.first_error is None:
                    self.first_error = str(error)


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: dict[str, str], schema: StructType, config: Optional[SinkConfig] = None) -> None:
        self.config: SinkConfig = config or sink_config(options)
        self.schema = schema
        columns = [f.name for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
        missing = [f for f in self.config.key_fields if f not in columns]
        if missing:
            raise OptionError(
                f"kafka sink option 'key.fields' names column {missing[0]!r}, which is not in the data "
                f"({', '.join(columns)})"
            )
        self.columns = columns
        self.value_columns = self.config.value_columns(columns)
        if not self.value_columns:
            raise OptionError(
                f"kafka sink option 'value.fields-include' = 'EXCEPT_KEY' leaves no column for the value "
                f"(every column is a key field: {', '.join(columns)})"
            )
        # Build once on the driver so that a bad combination fails before any task runs.
        RowEncoder(self.config.value_format, self.value_columns, schema)
        if self.config.key_format:
            RowEncoder(self.config.key_format, self.config.key_fields, schema)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
        if self.config.delivery_guarantee == "exactly-once":
            return self._encode(iterator)
        from confluent_kafka import Producer

        config = self.config
        value_encoder = RowEncoder(config.value_format, self.value_columns, self.schema)
        key_encoder = RowEncoder(config.key_format, config.key_fields, self.schema) if config.key_format else None
        producer = Producer(config.producer_config())
        check = config.delivery_guarantee == "at-least-once"
        deliveries = _Deliveries()
        partitions = self._partition_chooser(producer)
        written = skipped = 0
        for batch in iterator:
            batch, dropped = self._drop_retractions(batch, key_encoder)
            skipped += dropped
            if batch.num_rows == 0:
                continue
            values = self._values(value_encoder, batch)
            keys = key_encoder.encode(batch) if key_encoder else itertools.repeat(None)
            for key, value in zip(keys, values):
                self._produce(producer, config.topic, value, key, next(partitions), deliveries if check else None)
            written += batch.num_rows
            producer.poll(0)
        remaining = producer.flush(FLUSH_TIMEOUT_S)
        if check:
            if remaining:
                raise RuntimeError(
                    f"kafka sink: {remaining} record(s) for topic {config.topic!r} were not acknowledged by "
                    f"{config.bootstrap_servers} within {FLUSH_TIMEOUT_S:.0f} s"
                )
            if deliveries.failed:
                raise RuntimeError(
                    f"kafka sink: {deliveries.failed} of {written} record(s) could not be written to topic "
                    f"{config.topic!r} on {config.bootstrap_servers}: {deliveries.first_error}"
                )
        return KafkaCommitMessage(config.topic, written, skipped)

    def _encode(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
        """Exactly-once: encode the task's rows into (key, value, partition) columns; produce nothing."""
        config = self.config
        value_encoder = RowEncoder(config.value_format, self.value_columns, self.schema)
        key_encoder = RowEncoder(config.key_format, config.key_fields, self.schema) if config.key_format else None
        partitions = None
        if config.partitioner != "default":
            from confluent_kafka import Producer

            partitions = self._partition_chooser(Producer(config.producer_config()))
        values: list[pa.Array] = []
        keys: list[pa.Array] = []
        chosen: list[int] = []
        skipped = 0
        for batch in iterator:
            batch, dropped = self._drop_retractions(batch, key_encoder)
            skipped += dropped
            if batch.num_rows == 0:
                continue
            values.append(pa.array(self._values(value_encoder, batch), pa.binary()))
            if key_encoder is not None:
                keys.append(pa.array(key_encoder.encode(batch), pa.binary()))
            if partitions is not None:
                chosen.extend(itertools.islice(partitions, batch.num_rows))
        value_column = pa.concat_arrays(values) if values else pa.array([], pa.binary())
        return KafkaCommitMessage(
            config.topic, len(value_column), skipped, values=value_column,
            keys=(pa.concat_arrays(keys) if keys else pa.array([], pa.binary())) if key_encoder is not None else None,
            partitions=pa.array(chosen, pa.int32()) if partitions is not None else None,
        )

    def _drop_retractions(self, batch: pa.RecordBatch, key_encoder: Optional[RowEncoder]) -> tuple[pa.RecordBatch, int]:
        """Keep the rows this sink writes: +I/+U (and -D as tombstones for upsert-kafka, see :func:`upsert_kinds`;
        every kind for a changelog format)."""
        if ROWKIND_COLUMN not in batch.schema.names or self.config.value_format.is_changelog:
            return batch, 0
        at = batch.schema.get_field_index(ROWKIND_COLUMN)
        kinds = pc.fill_null(batch.column(at), "+I")
        if self.config.upsert and key_encoder is not None:
            kinds = upsert_kinds(kinds, lambda: pa.array(key_encoder.encode(batch), pa.binary()))
            batch = batch.set_column(at, ROWKIND_COLUMN, kinds)
        keep = pc.fill_null(pc.is_in(kinds, value_set=_UPSERT_ROWKINDS if self.config.upsert else _KEEP_ROWKINDS), False)
        kept = batch.filter(keep)
        return kept, batch.num_rows - kept.num_rows

    def _values(self, encoder: RowEncoder, batch: pa.RecordBatch) -> list[Optional[bytes]]:
        """Encoded values; for upsert-kafka a deleted row's value is null (a tombstone)."""
        values = encoder.encode(batch)
        if self.config.upsert and ROWKIND_COLUMN in batch.schema.names:
            kinds = batch.column(batch.schema.get_field_index(ROWKIND_COLUMN)).to_pylist()
            values = [None if kind == "-D" else value for kind, value in zip(kinds, values)]
        return values

    @staticmethod
    def _produce(producer, topic: str, value, key, partition: Optional[int], on_delivery) -> None:
        kwargs: dict[str, Any] = {}
        if partition is not None:
            kwargs["partition"] = partition
        if on_delivery is not None:
            kwargs["on_delivery"] = on_delivery
        while True:
            try:
                producer.produce(topic, value, key, **kwargs)
                return
            except BufferError:  # the local queue is full: let the client send, then retry
                producer.poll(0.1)

    def _partition_chooser(self, producer) -> Iterator[Optional[int]]:
        strategy = self.config.partitioner
        if strategy == "default":
            return itertools.repeat(None)
        metadata = producer.list_topics(topic=self.config.topic, timeout=30).topics.get(self.config.topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            raise RuntimeError(
                f"kafka sink: cannot find the partitions of topic {self.config.topic!r} on "
                f"{self.config.bootstrap_servers} (sink.partitioner = {strategy!r}): "
                f"{metadata.error if metadata is not None else 'no metadata'}"
            )
        count = len(metadata.partitions)
        from pyspark import TaskContext

        context = TaskContext.get()
        task = context.partitionId() if context is not None else 0
        if strategy == "fixed":
            return itertools.repeat(task % count)
        return (p % count for p in itertools.count(task))

    def commit(self, messages, batchId: int) -> None:
        """Exactly-once: publish the batch in one transaction, fenced by ``batchId``.

        At-least-once: every record was acknowledged before its task ended; nothing to publish.
        """
        if self.config.delivery_guarantee == "exactly-once":
            from kindling.connectors.kafka.transactions import publish_batch

            publish_batch(self.config, messages, batchId)

    def abort(self, messages, batchId: int) -> None:
        """Nothing to undo: exactly-once produced nothing from executors; at-least-once records stay."""

"""Kinesis sink (Flink's ``KinesisStreamsSink``): PutRecords batching on executors, at-least-once per micro-batch.

``write()`` runs on executors and sends every row of its Spark partition before it returns, so a
micro-batch commits only after Kinesis accepted all its records (Flink's at-least-once: pending
requests complete at checkpoint time). A replayed micro-batch writes its records again.

* **Data**: ``format`` (json/csv/raw) from every user column (``__kindling_*`` columns are internal).
  Changelog input keeps ``+I``/``+U`` rows and skips ``-U``/``-D``: a Kinesis stream cannot retract.
* **Partition key** (``sink.partitioner``): ``random`` (a UUID per record, the default), ``fixed`` (the Spark
  task index: one shard per task while the stream is not resharded), or, on a ``PARTITIONED BY`` table,
  the partition columns' values joined by ``sink.partitioner-field-delimiter`` (``|``), cut to 256 characters.
* **Batching**: a PutRecords request carries at most ``sink.batch.max-size`` records (500) and
  ``sink.flush-buffer.size`` bytes (5 MiB); a request is sent when either is reached, when the oldest
  buffered record waited ``sink.flush-buffer.timeout`` ms, and at the end of the task. At most
  ``sink.requests.max-inflight`` requests run at once; with ``sink.requests.max-buffered`` records waiting,
  the task stops encoding until requests complete (backpressure).
* **Failures**: records a PutRecords rejected (throttling, internal errors), and whole requests that were
  throttled, are re-queued and sent again with back-off, unless ``sink.fail-on-error`` is true, which fails
  the task naming the error. A record larger than ``sink.max-record-size`` (data plus partition key, 1 MiB)
  fails the task. **PutRecords does not keep order** (as Flink documents).
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Iterator, Optional

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN
from kindling.formats import RowEncoder
from kindling.connectors.kinesis.aws import error_code, kinesis_client
from kindling.connectors.kinesis.options import MAX_PARTITION_KEY, SinkConfig, sink_config
from kindling.options import OptionError

_KEEP_ROWKINDS = pa.array(["+I", "+U"])
STALL_TIMEOUT_S = 300.0  # a task whose records make no progress for this long fails
_THROTTLED = ("ProvisionedThroughputExceededException", "ThrottlingException", "LimitExceededException",
              "KMSThrottlingException", "InternalFailure", "ServiceUnavailable")


@dataclass
class KinesisCommitMessage(WriterCommitMessage):
    """What one task wrote."""

    records: int
    retried: int
    skipped_retractions: int


class KinesisStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.config: SinkConfig = sink_config(options)
        self.schema = schema
        self.columns = [f.name for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
        missing = [f for f in self.config.partition_fields if f not in self.columns]
        if missing:
            raise OptionError(f"kinesis sink: PARTITIONED BY column {missing[0]!r} is not in the data ({', '.join(self.columns)})")
        RowEncoder(self.config.format, self.columns, schema)  # a bad format/schema combination fails on the driver

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KinesisCommitMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        task = context.partitionId() if context is not None else 0
        encoder = RowEncoder(self.config.format, self.columns, self.schema)
        sender = _Sender(self.config)
        written = skipped = 0
        try:
            for batch in iterator:
                if ROWKIND_COLUMN in batch.schema.names:
                    kinds = batch.column(batch.schema.get_field_index(ROWKIND_COLUMN))
                    kept = batch.filter(pc.fill_null(pc.is_in(kinds, value_set=_KEEP_ROWKINDS), True))
                    skipped += batch.num_rows - kept.num_rows
                    batch = kept
                if batch.num_rows == 0:
                    continue
                for data, key in zip(encoder.encode(batch), self._keys(batch, task)):
                    sender.add(data or b"", key)
                written += batch.num_rows
            sender.finish()
        finally:
            sender.close()
        return KinesisCommitMessage(written, sender.retried, skipped)

    def _keys(self, batch: pa.RecordBatch, task: int) -> list[str]:
        n = batch.num_rows
        if self.config.partitioner == "fixed":
            return [str(task)] * n
        if self.config.partitioner == "random":
            return [str(uuid.uuid4()) for _ in range(n)]
        columns = [batch.column(batch.schema.get_field_index(f)).to_pylist() for f in self.config.partition_fields]
        delimiter = self.config.field_delimiter
        return [delimiter.join("null" if v is None else str(v) for v in values)[:MAX_PARTITION_KEY] for values in zip(*columns)]

    def commit(self, messages, batchId: int) -> None:
        """Nothing to publish: every record was accepted before its task ended."""

    def abort(self, messages, batchId: int) -> None:
        """Nothing to undo: records already written stay (at-least-once)."""


class _Sender:
    """PutRecords with Flink's AsyncSinkWriter limits: batch size and bytes, requests in flight, records
    buffered, a flush timeout; failed entries re-queued."""

    def __init__(self, config: SinkConfig) -> None:
        self.config = config
        self.client = kinesis_client(config.aws, "kinesis sink", retries=0)
        self.pool = ThreadPoolExecutor(max_workers=min(config.max_inflight, 32))
        self.buffer: list[tuple[bytes, str]] = []
        self.buffer_bytes = 0
        self.oldest: Optional[float] = None
        self.inflight: set[Future] = set()
        self.requeued: list[tuple[bytes, str]] = []
        self.retried = 0
        self.failures = 0  # consecutive throttled rounds, for back-off
        self.last_progress = time.monotonic()
        self._lock = threading.Lock()

    def add(self, data: bytes, key: str) -> None:
        size = len(data) + len(key.encode())
        if size > self.config.max_record_size:
            raise ValueError(f"kinesis sink: a record of {size} bytes (data plus partition key) is larger than "
                             f"'sink.max-record-size' = {self.config.max_record_size} bytes")
        if self.buffer_bytes + size > self.config.flush_size:
            self._send()
        self.buffer.append((data, key))
        self.buffer_bytes += size
        if self.oldest is None:
            self.oldest = time.monotonic()
        if len(self.buffer) >= self.config.batch_max_size:
            self._send()
        elif time.monotonic() - self.oldest >= self.config.flush_timeout_ms / 1000.0:
            self._send()
        self._reap(block=False)
        while self._pending() >= self.config.max_buffered:  # backpressure: wait for requests to complete
            if self.inflight:
                self._reap(block=True)
            elif self.requeued:
                self._resend()
            else:
                self._send()

    def _pending(self) -> int:
        return len(self.buffer) + len(self.requeued) + self.config.batch_max_size * len(self.inflight)

    def _send(self) -> None:
        if not self.buffer:
            return
        while len(self.inflight) >= self.config.max_inflight:
            self._reap(block=True)
        entries, self.buffer, self.buffer_bytes, self.oldest = self.buffer, [], 0, None
        self.inflight.add(self.pool.submit(self._put, entries))

    def _put(self, entries: list[tuple[bytes, str]]) -> list[tuple[bytes, str]]:
        """One PutRecords; returns the entries to send again."""
        try:
            response = self.client.put_records(StreamName=self.config.stream, Records=[
                {"Data": data, "PartitionKey": key} for data, key in entries])
        except Exception as exc:
            code = error_code(exc)
            if code in _THROTTLED and not self.config.fail_on_error:
                return entries
            raise RuntimeError(f"kinesis sink: PutRecords to stream {self.config.stream!r} failed: "
                               f"{code or type(exc).__name__}: {exc}") from None
        if not response.get("FailedRecordCount"):
            return []
        failed = [(entry, result) for entry, result in zip(entries, response["Records"]) if "ErrorCode" in result]
        if self.config.fail_on_error:
            code, message = failed[0][1]["ErrorCode"], failed[0][1].get("ErrorMessage", "")
            raise RuntimeError(f"kinesis sink: {len(failed)} of {len(entries)} record(s) were rejected by stream "
                               f"{self.config.stream!r} ({code}: {message}) and 'sink.fail-on-error' is true")
        return [entry for entry, _ in failed]

    def _reap(self, block: bool) -> None:
        if not self.inflight:
            return
        done, _ = wait(self.inflight, timeout=None if block else 0, return_when=FIRST_COMPLETED)
        for future in done:
            self.inflight.discard(future)
            again = future.result()  # raises a fail-on-error failure in the task
            if again:
                self.retried += len(again)
                self.requeued.extend(again)
                self.failures += 1
            else:
                self.failures = 0
                self.last_progress = time.monotonic()
        if self.requeued and (block or not self.inflight):
            self._resend()

    def _resend(self) -> None:
        """Send re-queued entries again after a back-off that grows with consecutive throttling."""
        if time.monotonic() - self.last_progress > STALL_TIMEOUT_S:
            raise RuntimeError(f"kinesis sink: {len(self.requeued)} record(s) for stream {self.config.stream!r} were "
                               f"rejected again and again for {STALL_TIMEOUT_S:.0f} s")
        time.sleep(random.uniform(0, min(1.0, 0.05 * (2 ** min(self.failures, 5)))))
        entries, self.requeued = self.requeued, []
        for first in range(0, len(entries), self.config.batch_max_size):
            while len(self.inflight) >= self.config.max_inflight:
                self._reap(block=True)
            self.inflight.add(self.pool.submit(self._put, entries[first:first + self.config.batch_max_size]))

    def finish(self) -> None:
        """Send everything buffered and wait until Kinesis accepted every record."""
        self._send()
        while self.inflight or self.requeued:
            if self.inflight:
                self._reap(block=True)
            elif self.requeued:
                self._resend()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

"""The filesystem sink: an Arrow stream writer whose executors stage files and whose driver publishes them.

Phase one, ``write()`` on executors: the task's rows are split by bucket (partition directory)
and written in the configured format to in-progress files under
``<path>/.kindling/staging/<batch id>/`` (invisible to readers, which skip names starting with
``.``), rolled by ``sink.rolling-policy.file-size``. The task returns the staged files (bucket,
staged path, final part-file name, size, records) as its commit message.

Phase two, ``commit(messages, batch_id)`` on the driver: :mod:`kindling.connectors.filesystem.commit_log`
records the batch in the commit log and publishes, exactly once. ``abort`` deletes the files the
failed batch staged; whatever a killed task left behind is deleted by the next commit.

Only insert-only streams can be written (as in Flink's filesystem sink): an updating stream
(``-U``/``-D`` rows) fails the task, naming the sink.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN
from kindling.connectors.filesystem.buckets import BucketAssigner
from kindling.connectors.filesystem.commit_log import CommitLog, staging_directory
from kindling.connectors.filesystem.formats import FileWriter
from kindling.connectors.filesystem.options import FileSystemConfig, sink_config
from kindling.connectors.filesystem.storage import Storage

_INSERTS = pa.array(["+I", "+U"])
BUFFER_BYTES = 16 * 1024 * 1024  # rows buffered per open file before they are encoded (one row group)


@dataclass
class FileCommitMessage(WriterCommitMessage):
    """The files one task staged: dicts with bucket, path, name, size, rows, footer."""

    files: list[dict[str, Any]] = field(default_factory=list)


def _option(options: dict[str, str], key: str) -> Optional[str]:
    for k, v in options.items():
        if k.lower() == key.lower():
            return v
    return None


def batch_times(checkpoint: Optional[str], batch_id: int) -> tuple[int, Optional[int]]:
    """(batch timestamp ms, watermark ms) that Spark logged for a micro-batch in its offset log.

    Both are fixed when the batch is planned, so a replayed batch sees the same values. Without a
    readable offset log the wall clock is used and the watermark is unknown.
    """
    if checkpoint:
        location = checkpoint[len("file:"):] if checkpoint.startswith("file:") else checkpoint
        location = "/" + location.lstrip("/") if checkpoint.startswith("file:") else location
        try:
            with open(os.path.join(location, "offsets", str(batch_id)), "rb") as log:
                lines = log.read().decode().splitlines()
            metadata = json.loads(lines[1])
            watermark = int(metadata.get("batchWatermarkMs") or 0)
            return int(metadata["batchTimestampMs"]), (watermark if watermark > 0 else None)
        except (OSError, ValueError, KeyError, IndexError):
            pass
    return int(time.time() * 1000), None


def _task_identity() -> tuple[int, int]:
    """(micro-batch id, Spark partition) of the running task."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        return 0, 0
    return int(context.getLocalProperty("streaming.sql.batchId") or 0), context.partitionId()


class _OpenFile:
    """An in-progress part file; rows are buffered so that Parquet row groups are not one per Spark batch."""

    def __init__(self, storage: Storage, config: FileSystemConfig, staging: str, bucket: str, name: str, schema: pa.Schema) -> None:
        self.bucket, self.name = bucket, name
        self.path = f"{staging}/{name}.inprogress"
        self.writer = FileWriter(storage.open_output(self.path), schema, config)
        self.flush_bytes = min(BUFFER_BYTES, config.file_size)
        self.buffer: list[pa.RecordBatch] = []
        self.buffered = 0

    def write(self, rows: pa.RecordBatch) -> bool:
        """Buffer rows; write them out once enough are buffered. True when the file reached its size."""
        self.buffer.append(rows)
        self.buffered += rows.nbytes
        if self.buffered < self.flush_bytes:
            return False
        self.flush()
        return self.writer.size >= self.writer.config.file_size

    def flush(self) -> None:
        if self.buffer:
            self.writer.write(pa.Table.from_batches(self.buffer).combine_chunks().to_batches()[0]
                              if len(self.buffer) > 1 else self.buffer[0])
            self.buffer, self.buffered = [], 0

    def close(self) -> dict[str, Any]:
        self.flush()
        size = self.writer.close()
        return {"bucket": self.bucket, "path": self.path, "name": self.name, "size": size,
                "rows": self.writer.rows, "footer": self.writer.footer}


class FileStreamWriter(DataSourceStreamArrowWriter):
    """Executors: stage part files per bucket. Driver: commit them through the commit log."""

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.options = dict(options)
        self.config = sink_config(self.options)
        self.columns = [f.name for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
        BucketAssigner(self.config, self.columns)  # fails here, on the driver, for a bad layout
        self.checkpoint = _option(self.options, "checkpointLocation")

    def write(self, iterator: Iterator[pa.RecordBatch]) -> FileCommitMessage:
        batch_id, task = _task_identity()
        config = self.config
        storage = Storage(config)
        assigner = BucketAssigner(config, self.columns)
        staging = f"{staging_directory(storage, self.checkpoint)}/{batch_id}"
        token = uuid.uuid4().hex
        counter = 0
        open_files: dict[str, _OpenFile] = {}
        staged: list[dict[str, Any]] = []
        now_ms = int(time.time() * 1000)
        for batch in iterator:
            if batch.num_rows == 0:
                continue
            batch = self._rows(batch)
            for bucket, rows in assigner.split(batch, now_ms):
                current = open_files.get(bucket)
                if current is None:
                    name = f"{config.part_prefix}-{token}-{task}-{counter}{config.part_suffix}"
                    counter += 1
                    current = open_files[bucket] = _OpenFile(storage, config, staging, bucket, name, rows.schema)
                if current.write(rows):
                    staged.append(current.close())
                    del open_files[bucket]
        for current in open_files.values():
            staged.append(current.close())
        return FileCommitMessage(staged)

    def _rows(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The columns written: the user's, and each row's kind for a changelog format (which writes every kind)."""
        if ROWKIND_COLUMN not in batch.schema.names:
            return batch.select(self.columns)
        if self.config.changelog_format is not None:
            return batch.select(self.columns + [ROWKIND_COLUMN])
        kinds = batch.column(batch.schema.get_field_index(ROWKIND_COLUMN))
        if not pc.all(pc.fill_null(pc.is_in(kinds, value_set=_INSERTS), True)).as_py():
            raise ValueError("filesystem sink: the stream has updates or deletes (-U/-D rows); a file sink accepts insert-only streams "
                             "unless its format is a changelog format (debezium-json, canal-json, maxwell-json)")
        return batch.select(self.columns)

    def commit(self, messages, batchId: int) -> None:
        """Publish the batch exactly once (see commit_log); a replayed batch id is skipped."""
        staged = [f for m in messages if m is not None for f in getattr(m, "files", [])]
        now_ms, watermark_ms = batch_times(self.checkpoint, batchId)
        CommitLog(Storage(self.config), self.config, self.checkpoint).commit(staged, batchId, now_ms, watermark_ms, self.checkpoint or "")

    def abort(self, messages, batchId: int) -> None:
        """Delete what the failed batch staged (files of killed tasks go with the next commit)."""
        storage = Storage(self.config)
        for message in messages:
            for f in getattr(message, "files", None) or []:
                storage.delete(f["path"])

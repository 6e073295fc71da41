"""The filesystem source: the files under a path as a stream of Arrow batches, bounded or continuous.

* ``path`` is one file, or a directory whose files are found by listing it recursively. Names starting with ``.`` or ``_`` (the sink's
  ``.kindling/`` staging and commit log, ``_SUCCESS``, temporary files) are skipped, at any depth,
  as Spark, pyarrow and Hive do; so a sink's output is read exactly as committed.
* ``col=value`` directories give the partition columns (``kindling.table.partition-keys``, or any
  schema column that is not in the files), values unescaped, ``partition.default-name`` read as NULL.
* Offsets are ``{"files": [relative paths read so far]}`` in Spark's checkpoint: a restarted query
  reads exactly the files it had not read. Bounded (no ``source.monitor-interval``): one listing,
  then the end-of-input marker. Continuous: the path is listed again every
  ``source.monitor-interval`` and new files are read (files are expected to appear whole, as the
  sink publishes them; a file that changes after it was read is not read again, as in Flink).
* With ``s3.entropy.key`` in the path, every directory that replaced the key is read.
"""

from __future__ import annotations

import posixpath
import time
from typing import Any, Iterator, Optional, Sequence

import pyarrow as pa
import pyarrow.fs as pafs
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from kindling.arrow import arrow_schema
from kindling.connectors.base import EOS_COLUMN, EOS_OFFSET_KEY, ROWKIND_COLUMN, end_of_input_batch
from kindling.connectors.filesystem.buckets import parse_partition_path
from kindling.connectors.filesystem.formats import read_table
from kindling.connectors.filesystem.options import FileSystemConfig, source_config
from kindling.connectors.filesystem.storage import ENTROPY_ALPHABET, Storage

BATCH_ROWS = 65_536


class FileSplit(InputPartition):
    """One file to read (relative to the table root, entropy directory included)."""

    def __init__(self, path: str) -> None:
        self.path = path


class EndOfInputSplit(InputPartition):
    def __init__(self) -> None:
        self.path = ""


def _hidden(relative: str) -> bool:
    return any(part.startswith((".", "_")) for part in relative.split("/"))


def list_data_files(storage: Storage) -> list[str]:
    """Relative paths of every visible data file under the table (entropy directories expanded)."""
    config = storage.config
    if storage.fs.get_file_info(storage.root).type == pafs.FileType.File:
        return [""]  # the path is one file (Flink's FileSource reads a file or the files under a directory)
    roots = [("", storage.root)]
    if config.entropy_key and config.entropy_key in storage.data_template:
        before, _, after = storage.data_template.partition(config.entropy_key)
        parent = before.rstrip("/")
        for info in storage.list(parent, recursive=False):
            name = posixpath.basename(info.path)
            if info.type == pafs.FileType.Directory and len(name) == config.entropy_length and all(c in ENTROPY_ALPHABET for c in name):
                roots.append((f"{name}{after}".strip("/") + "@", f"{parent}/{name}{after}".rstrip("/")))
    found = []
    for label, root in roots:
        for info in storage.list(root, recursive=True):
            if info.type != pafs.FileType.File:
                continue
            relative = posixpath.relpath(info.path, root)
            if _hidden(relative) or relative.endswith(".inprogress"):
                continue
            found.append(label + relative)
    return sorted(found)


def absolute_path(storage: Storage, relative: str) -> str:
    if not relative:
        return storage.root  # the path is the one file read
    if "@" in relative:
        head, rest = relative.split("@", 1)
        before = storage.data_template.partition(storage.config.entropy_key or "")[0].rstrip("/")
        return f"{before}/{head}/{rest}"
    return f"{storage.root}/{relative}"


class FileStreamReader(DataSourceStreamReader):
    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.config: FileSystemConfig = source_config(options)
        self.schema = schema
        user = [f for f in schema.fields if f.name not in (EOS_COLUMN, ROWKIND_COLUMN)]
        keys = set(self.config.partition_keys)
        self.partition_fields = [f for f in user if f.name in keys]
        self.data_schema = StructType([f for f in user if f.name not in keys])
        self._last_listing = 0.0

    def initialOffset(self) -> dict:
        return {"files": []}

    def latestOffset(self, start: Optional[dict] = None, limit: Any = None) -> dict:
        start = start or {"files": []}
        if start.get(EOS_OFFSET_KEY):
            return start
        interval = self.config.monitor_interval_ms
        now = time.monotonic()
        if interval is not None and start["files"] and now - self._last_listing < interval / 1000:
            return start
        self._last_listing = now
        seen = set(start["files"])
        files = list(start["files"]) + [f for f in list_data_files(Storage(self.config)) if f not in seen]
        offset: dict[str, Any] = {"files": files}
        if interval is None:
            offset[EOS_OFFSET_KEY] = True
        return offset

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        seen = set(start.get("files", []))
        splits: list[InputPartition] = [FileSplit(f) for f in end.get("files", []) if f not in seen]
        if end.get(EOS_OFFSET_KEY) and not start.get(EOS_OFFSET_KEY):
            splits.append(EndOfInputSplit())
        return splits

    def commit(self, end: dict) -> None:
        """Nothing to acknowledge: offsets live in Spark's checkpoint."""

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        target = arrow_schema(self.schema)
        if isinstance(partition, EndOfInputSplit):
            yield end_of_input_batch(target)
            return
        storage = Storage(self.config)
        table = read_table(storage, absolute_path(storage, partition.path), self.data_schema, self.config)
        values = parse_partition_path(posixpath.dirname(partition.path.split("@", 1)[-1]))
        columns = []
        for field in target:
            if field.name == EOS_COLUMN:
                columns.append(pa.array([False] * table.num_rows, pa.bool_()))
            elif field.name in table.column_names:
                columns.append(table.column(field.name))
            else:
                raw = values.get(field.name)
                if raw is None or raw == self.config.default_partition:
                    columns.append(pa.nulls(table.num_rows, field.type))
                else:
                    columns.append(_partition_value(raw, field.type, table.num_rows))
        result = pa.Table.from_arrays(columns, schema=target)
        for batch in result.to_batches(max_chunksize=BATCH_ROWS):
            yield batch


def _partition_value(raw: str, target: pa.DataType, rows: int) -> pa.Array:
    value = pa.array([raw], pa.string())
    try:
        scalar = value.cast(target)[0]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"filesystem source: partition value {raw!r} is not a {target}: {exc}") from None
    return pa.array([scalar.as_py()] * rows, target)

"""Which directory (bucket) a record goes to: ``col=value/`` partitions, or a date-time bucket.

* ``PARTITIONED BY (a, b)`` (option ``kindling.table.partition-keys``) puts a record in
  ``a=<value>/b=<value>/`` with Hive's escaping of special characters; NULL or empty values go to
  ``partition.default-name``. As in Flink, partition columns are not written into the files: the
  directory names carry them, and the source restores them.
* ``sink.bucket-assigner = datetime`` is Flink's ``DateTimeBucketAssigner``: the bucket is a
  date-time formatted with a Java pattern such as ``'year='yyyy/'month='MM/'day='dd/'hour='HH``,
  from processing time (Flink's default) or from a TIMESTAMP field
  (``sink.bucket-assigner.timestamp-field``).
"""

from __future__ import annotations

import time
from typing import Iterator, Optional, Sequence
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kindling.connectors.filesystem.options import FileSystemConfig
from kindling.row_layout import ROWKIND_COLUMN

# Hive's FileUtils.escapePathName characters (plus control characters), escaped as %XX.
_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(0x20)}
_ESCAPED_REGEX = "[" + "".join("\\x%02x" % ord(c) for c in sorted(_ESCAPED)) + "]"
_JAVA_FIELDS = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}


def java_pattern_to_strftime(pattern: str) -> str:
    """Translate a Java ``DateTimeFormatter`` pattern (quoted literals, yyyy MM dd HH mm ss) to strftime."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "'":
            end = pattern.find("'", i + 1)
            if end < 0:
                raise ValueError("unterminated quoted literal")
            literal = pattern[i + 1:end] or "'"  # '' is a single quote
            out.append(literal.replace("%", "%%"))
            i = end + 1
            continue
        if char.isalpha():
            run = i
            while run < len(pattern) and pattern[run] == char:
                run += 1
            token = pattern[i:run]
            if token not in _JAVA_FIELDS:
                raise ValueError(f"unsupported pattern letters {token!r}; supported: " + ", ".join(_JAVA_FIELDS) + " and 'quoted text'")
            out.append(_JAVA_FIELDS[token])
            i = run
            continue
        out.append("%%" if char == "%" else char)
        i += 1
    return "".join(out)


def escape_path_value(value: str) -> str:
    """Hive's escaping of a partition value for a directory name."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def unescape_path_value(value: str) -> str:
    return unquote(value)


def _value_strings(column: pa.ChunkedArray | pa.Array, default: str) -> pa.Array:
    if pa.types.is_timestamp(column.type):
        text = pc.strftime(column, format="%Y-%m-%d %H:%M:%S")
    elif pa.types.is_date(column.type):
        text = pc.strftime(column, format="%Y-%m-%d")
    else:
        text = column.cast(pa.string())
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    text = pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text)
    special = pc.match_substring_regex(text, _ESCAPED_REGEX)
    if pc.any(special).as_py():  # rare: escape the few values with special characters in Python
        values = [escape_path_value(v) if v is not None and flag else v for v, flag in zip(text.to_pylist(), special.to_pylist())]
        text = pa.array(values, pa.string())
    return pc.fill_null(text, default)


class BucketAssigner:
    """Splits Arrow batches by bucket directory and drops partition columns from the data written."""

    def __init__(self, config: FileSystemConfig, columns: Sequence[str]) -> None:
        self.config = config
        self.keys = tuple(config.partition_keys)
        missing = [k for k in self.keys if k not in columns]
        if missing:
            raise ValueError(f"filesystem sink: partition column {missing[0]!r} is not a column of the data ({', '.join(columns)})")
        if len(self.keys) == len(columns) and self.keys:
            raise ValueError("filesystem sink: every column is a partition column; the files would have no data columns")
        self.data_columns = [c for c in columns if c not in self.keys]
        self.datetime = config.bucket_assigner == "datetime"
        self.strftime = java_pattern_to_strftime(config.bucket_format) if self.datetime else ""
        field = config.bucket_timestamp_field
        if self.datetime and field and field not in columns:
            raise ValueError(f"filesystem sink option 'sink.bucket-assigner.timestamp-field' names {field!r}, "
                             f"which is not a column ({', '.join(columns)})")

    def split(self, batch: pa.RecordBatch, now_ms: Optional[int] = None) -> Iterator[tuple[str, pa.RecordBatch]]:
        """(bucket, rows of that bucket with only the data columns) for every bucket in the batch."""
        if self.datetime:
            yield from self._split_datetime(batch, now_ms)
            return
        # a changelog format's row kinds stay with the data (ROWKIND_COLUMN is not a partition column)
        data = batch.select(self.data_columns + [c for c in batch.schema.names if c == ROWKIND_COLUMN]) if self.keys else batch
        if not self.keys:
            yield "", data
            return
        codes = None
        names: list[str] = [""]
        for key in self.keys:
            encoded = pc.dictionary_encode(batch.column(key), null_encoding="encode")
            if isinstance(encoded, pa.ChunkedArray):
                encoded = encoded.combine_chunks()
            values = _value_strings(encoded.dictionary, self.config.default_partition).to_pylist()
            indices = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            codes = indices if codes is None else codes * len(values) + indices
            names = [f"{prefix}/{key}={v}" if prefix else f"{key}={v}" for prefix in names for v in values]
        yield from _group_codes(codes, names, data)

    def _split_datetime(self, batch: pa.RecordBatch, now_ms: Optional[int]) -> Iterator[tuple[str, pa.RecordBatch]]:
        field = self.config.bucket_timestamp_field
        zone = self.config.bucket_time_zone
        if not field:
            now = now_ms if now_ms is not None else int(time.time() * 1000)
            instant = pa.array([now], pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("ms", tz=zone))
            yield pc.strftime(instant, format=self.strftime)[0].as_py(), batch
            return
        column = batch.column(field)
        if not pa.types.is_timestamp(column.type):
            raise ValueError(f"filesystem sink option 'sink.bucket-assigner.timestamp-field': {field!r} is {column.type}, not a TIMESTAMP")
        if column.null_count:
            raise ValueError(f"filesystem sink: {column.null_count} record(s) have a NULL '{field}' (sink.bucket-assigner.timestamp-field)")
        instants = (column.cast(pa.timestamp(column.type.unit, tz=zone)) if column.type.tz
                    else pc.assume_timezone(column, "UTC").cast(pa.timestamp(column.type.unit, tz=zone)))
        yield from _group(pc.strftime(instants, format=self.strftime), batch)


def _group_codes(codes: "np.ndarray", names: list[str], data: pa.RecordBatch) -> Iterator[tuple[str, pa.RecordBatch]]:
    """Rows grouped by an integer bucket code (an index into ``names``)."""
    present = np.unique(codes)
    if len(present) == 1:
        yield names[int(present[0])], data
        return
    order = np.argsort(codes, kind="stable")
    ordered = data.take(pa.array(order))
    bounds = np.searchsorted(codes[order], present, side="left").tolist() + [len(codes)]
    for i, code in enumerate(present.tolist()):
        yield names[code], ordered.slice(bounds[i], bounds[i + 1] - bounds[i])


def _group(paths: pa.Array, data: pa.RecordBatch) -> Iterator[tuple[str, pa.RecordBatch]]:
    encoded = paths.dictionary_encode()
    names = encoded.dictionary.to_pylist()
    if len(names) == 1:
        yield names[0], data
        return
    indices = encoded.indices
    order = pc.sort_indices(indices)
    ordered = data.take(order)
    counts = pc.value_counts(indices)
    sizes = {c["values"]: c["counts"] for c in counts.to_pylist()}
    offset = 0
    for index in range(len(names)):
        size = sizes.get(index, 0)
        if size:
            yield names[index], ordered.slice(offset, size)
            offset += size


def parse_partition_path(relative_dir: str) -> dict[str, Optional[str]]:
    """``a=1/b=x%2Fy`` -> {"a": "1", "b": "x/y"} (unescaped; the caller maps the default name to NULL)."""
    values: dict[str, Optional[str]] = {}
    for part in relative_dir.split("/"):
        if "=" in part:
            key, value = part.split("=", 1)
            values[unescape_path_value(key)] = unescape_path_value(value)
    return values

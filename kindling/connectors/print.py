"""Flink's ``print`` sink: every row as a line like ``+I[1, alice, 2026-11-22T01:02:03.123]``.

Options: ``print-identifier`` (a prefix, ``identifier> +I[...]``), ``standard-error``
(print to stderr instead of stdout), ``sink.parallelism`` (accepted, no effect).

Exactly-once: executors only format lines (``write`` returns them in the commit message);
the driver prints them in ``commit(messages, batch_id)``, and skips a (query, batch id) it
has already printed in this process, so a re-run commit does not print a batch twice.
Unlike Flink, lines carry no ``<subtask>>`` prefix: Spark partitions are not stable subtasks.
Rows are formatted as Flink's ``Row.toString`` does (Java ``toString`` of each value).
"""

from __future__ import annotations

import datetime as dt
import sys
import threading
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterable, Iterator, List, Optional, Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kindling.connectors.base import EOS_COLUMN, INTERNAL_PREFIX, ROWKIND_COLUMN, TABLE_INSTANT_COLUMNS, Connector, spark_format
from kindling.formats.java_text import java_floating
from kindling.options import OptionSet, bool_option, int_option, string_option

PRINT_IDENTIFIER = string_option("print-identifier", None, "Prefix of every printed line.")
STANDARD_ERROR = bool_option("standard-error", False, "Print to standard error instead of standard output.")
SINK_PARALLELISM = int_option("sink.parallelism", None, "Accepted for Flink compatibility; has no effect.", minimum=1)

# Spark hands a sink its writeStream options too; checkpointLocation is Spark's, not ours.
SPARK_OPTIONS = ("connector", "path", "checkpointlocation", "queryname")
# Set by DataStream.print() for PyFlink-typed streams: the single STRING column is the line PyFlink prints,
# and with parallelism above 1 each line starts with ``N> `` (``identifier:N> `` with an identifier).
PLAIN = bool_option("kindling.print.plain", False, "Internal: rows are pre-formatted lines (PyFlink's print()).")
SUBTASKS = int_option("kindling.print.parallelism", 1, "Internal: the job's parallelism, for PyFlink's 'N> ' prefixes.", minimum=1)
SINK_OPTIONS = OptionSet("print", (PRINT_IDENTIFIER, STANDARD_ERROR, SINK_PARALLELISM, PLAIN, SUBTASKS), ignored=SPARK_OPTIONS)

ROW_KINDS = ("+I", "-U", "+U", "-D")


# ---------------------------------------------------------------------------------------------
# Formatting: pure functions, Java toString semantics


class NestedInstant:
    """A TIMESTAMP_LTZ value, printed as an instant."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class NestedRow(tuple):
    """A nested ROW value; printed as Flink prints a nested Row (``+I[a, b]``)."""


def _local_time(hour: int, minute: int, second: int, micro: int) -> str:
    """Java LocalTime.toString: HH:mm, HH:mm:ss, HH:mm:ss.SSS or HH:mm:ss.SSSSSS (shortest exact)."""
    text = f"{hour:02d}:{minute:02d}"
    if second or micro:
        text += f":{second:02d}"
        if micro:
            text += f".{micro // 1000:03d}" if micro % 1000 == 0 else f".{micro:06d}"
    return text


def format_value(value: Any) -> str:
    """One value as Flink's Row.toString prints it."""
    if value is None:
        return "null"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, np.float32):
        return java_floating(float(value), single=True)
    if isinstance(value, (float, np.floating)):
        return java_floating(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.date().isoformat() + "T" + _local_time(value.hour, value.minute, value.second, value.microsecond)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return _local_time(value.hour, value.minute, value.second, value.microsecond)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in bytes(value)) + "]"
    if isinstance(value, NestedRow):
        return format_row(value)
    if isinstance(value, NestedInstant):
        return format_instant(value.value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{format_value(k)}={format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def format_instant(value: Any) -> str:
    """A TIMESTAMP_LTZ value as Java's Instant.toString prints it: ``1970-01-01T00:00:05Z``, seconds always shown."""
    if not isinstance(value, dt.datetime):
        return format_value(value)
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    micro = value.microsecond
    fraction = "" if not micro else (f".{micro // 1000:03d}" if micro % 1000 == 0 else f".{micro:06d}")
    return f"{value.date().isoformat()}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}{fraction}Z"


def format_row(values: Sequence[Any], kind: Optional[str] = "+I") -> str:
    """A row as Flink's Row.toString: ``+I[v1, v2, v3]``."""
    return (kind or "+I") + "[" + ", ".join(format_value(v) for v in values) + "]"


def format_line(values: Sequence[Any], kind: Optional[str] = "+I", identifier: Optional[str] = None) -> str:
    """A printed line: the row, prefixed with ``identifier> `` when an identifier is set."""
    row = format_row(values, kind)
    return f"{identifier}> {row}" if identifier else row


# ---------------------------------------------------------------------------------------------
# Arrow columns to Python values Java would print the same way


def _needs_conversion(arrow_type: pa.DataType) -> bool:
    return (
        pa.types.is_float32(arrow_type)
        or pa.types.is_struct(arrow_type)
        or pa.types.is_map(arrow_type)
        or ((pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)) and _needs_conversion(arrow_type.value_type))
    )


def _convert(value: Any, arrow_type: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_float32(arrow_type):
        return np.float32(value)
    if pa.types.is_struct(arrow_type):
        return NestedRow(_convert(value.get(f.name), f.type) for f in arrow_type)
    if pa.types.is_map(arrow_type):
        return {_convert(k, arrow_type.key_type): _convert(v, arrow_type.item_type) for k, v in value}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return [_convert(v, arrow_type.value_type) for v in value]
    return value


def column_values(column: pa.Array) -> list:
    """A column as Python values ready for ``format_value``."""
    values = column.to_pylist()
    if _needs_conversion(column.type):
        values = [_convert(v, column.type) for v in values]
    return values


def format_batch(batch: pa.RecordBatch, identifier: Optional[str] = None, instants: Sequence[str] = ()) -> List[str]:
    """The printed lines of one Arrow batch: internal columns dropped, RowKind read, EOS markers skipped; the
    ``instants`` columns (TIMESTAMP_LTZ) printed as instants."""
    names = batch.schema.names
    user = [i for i, n in enumerate(names) if not n.startswith(INTERNAL_PREFIX)]
    kinds = batch.column(names.index(ROWKIND_COLUMN)).to_pylist() if ROWKIND_COLUMN in names else None
    eos = batch.column(names.index(EOS_COLUMN)).to_pylist() if EOS_COLUMN in names else None
    columns = [[NestedInstant(v) for v in column_values(batch.column(i))] if names[i] in instants else column_values(batch.column(i))
               for i in user]
    lines = []
    for r in range(batch.num_rows):
        if eos is not None and eos[r]:
            continue
        lines.append(format_line([c[r] for c in columns], kinds[r] if kinds else "+I", identifier))
    return lines


def plain_prefix(identifier: Optional[str], subtask: Optional[int]) -> str:
    """Flink's PrintSinkOutputWriter prefix: ``id:N> ``, ``id> ``, ``N> `` or nothing."""
    if identifier and subtask is not None:
        return f"{identifier}:{subtask}> "
    if identifier:
        return f"{identifier}> "
    return f"{subtask}> " if subtask is not None else ""


# ---------------------------------------------------------------------------------------------
# The Spark Data Source

# (query id, batch id) pairs already printed by this process.
_PRINTED: set = set()
_PRINTED_LOCK = threading.Lock()


@dataclass
class PrintCommitMessage(WriterCommitMessage):
    lines: List[str] = field(default_factory=list)
    query_id: Optional[str] = None
    partition_id: int = 0


def _task_property(key: str) -> Optional[str]:
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
        return context.getLocalProperty(key) if context is not None else None
    except Exception:  # outside a Spark task (direct calls in tests)
        return None


def _partition_id() -> int:
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
        return context.partitionId() if context is not None else 0
    except Exception:
        return 0


class PrintStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, schema: StructType, options) -> None:
        self.schema = schema
        parsed = SINK_OPTIONS.validate(dict(options))
        self.identifier: Optional[str] = parsed.get("print-identifier")
        self.standard_error: bool = bool(parsed.get("standard-error", False))
        self.plain: bool = bool(parsed.get("kindling.print.plain", False))
        self.parallelism: int = int(parsed.get("kindling.print.parallelism") or 1)
        self.instants = [n for n in (parsed.extra.get(TABLE_INSTANT_COLUMNS) or "").split(";") if n]

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PrintCommitMessage:
        lines: List[str] = []
        partition = _partition_id()
        if self.plain:
            prefix = plain_prefix(self.identifier, partition % self.parallelism + 1 if self.parallelism > 1 else None)
            for batch in iterator:
                column = batch.column(next(i for i, n in enumerate(batch.schema.names) if not n.startswith(INTERNAL_PREFIX)))
                lines.extend(prefix + line for line in column.to_pylist() if line is not None)
            return PrintCommitMessage(lines, _task_property("sql.streaming.queryId"), partition)
        for batch in iterator:
            lines.extend(format_batch(batch, self.identifier, self.instants))
        return PrintCommitMessage(lines, _task_property("sql.streaming.queryId"), partition)

    def commit(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        present = [m for m in messages if isinstance(m, PrintCommitMessage)]
        query_id = next((m.query_id for m in present if m.query_id), None)
        key = (query_id, batchId)
        with _PRINTED_LOCK:
            if key in _PRINTED:
                return
            lines = [line for m in sorted(present, key=lambda m: m.partition_id) for line in m.lines]
            self.print_lines(lines)
            _PRINTED.add(key)

    def print_lines(self, lines: Iterable[str]) -> None:
        text = "".join(line + "\n" for line in lines)
        if self.standard_error:
            stream = sys.stderr
        else:
            stream = _driver_stdout() or sys.stdout
        if text:
            stream.write(text)
        stream.flush()

    def abort(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        """Nothing was printed yet: the lines only live in the commit messages."""


def _driver_stdout() -> Optional[Any]:
    """The standard output of the Spark JVM that runs this commit, when this is one of its Python workers.

    Spark folds a Python worker's own standard output into the JVM's standard error, so ``print`` rows
    written to ``sys.stdout`` here would land on stderr (``python job.py > out.txt`` would capture
    nothing). The JVM's standard output is the driver program's, which is where Flink's print sink
    puts rows in a local run. None outside a Spark worker (the rows then go to ``sys.stdout``)."""
    from kindling.runtime.program_output import program_stdout

    return program_stdout()


class PrintDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return spark_format("print")

    def streamWriter(self, schema: StructType, overwrite: bool) -> PrintStreamWriter:
        return PrintStreamWriter(schema, self.options)


class PrintConnector(Connector):
    name = "print"
    data_source = PrintDataSource
    sink_options = SINK_OPTIONS


CONNECTOR = PrintConnector

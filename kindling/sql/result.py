"""TableResult: what ``execute_sql`` returns — OK for DDL, rows for SHOW/DESCRIBE, a running job for queries.

A SELECT's rows arrive as a changelog. ``collect()`` hands them out as PyFlink does: each change a positional ``Row``
carrying its kind (``row.get_row_kind()``: +I, -U, +U, -D), printed ``<Row('a', 1)>``; ``collect_changelog()`` gives
``(row_kind, Row)`` pairs in arrival order; ``final_rows()`` (kindling's) applies the changelog (upserts by
``upsert_key`` when the result is updating, retractions otherwise) and returns the rows it leaves.
"""

from __future__ import annotations

import sys
import threading
from datetime import datetime, time
from typing import Any, Callable, Optional, Sequence, TextIO, Union

from pyspark.sql import DataFrame, Row
from pyspark.sql.types import StringType, StructField

from kindling.common.closeable_iterator import CollectedRows
from kindling.common.row import Row as FlinkRow
from kindling.common.row import RowKind
from kindling.connectors.base import ROWKIND_COLUMN
from kindling.formats.java_text import java_floating
from kindling.runtime import interrupts
from kindling.runtime.job import TERMINAL_STATES
from kindling.sql.table_schema import ResolvedSchema, TableSchema
from kindling.sql.time_values import time_of_text


class ResultKind:
    """PyFlink's ``ResultKind``: what ``TableResult.get_result_kind()`` returns (its constants are PyFlink's numbers).

    ``SUCCESS``: a statement (DDL, USE) that only says OK; ``SUCCESS_WITH_CONTENT``: one whose result has content
    (a query, an INSERT, SHOW, DESCRIBE, EXPLAIN)."""

    SUCCESS = 0
    SUCCESS_WITH_CONTENT = 1


_DELETIONS = ("-D", "-U")
_PYTHON_WORKER_ERROR = "An exception was thrown from the Python worker"


class ChangelogCollector:
    """Receives a SELECT's micro-batches (``foreachBatch``); a replayed batch replaces its earlier rows."""

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)
        self._batches: dict[int, list[tuple[str, Row]]] = {}
        self._lock = threading.Lock()

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        try:
            rows = batch.collect()
        except Exception as exc:  # report the cause, not the JVM trace the Py4J proxy would carry
            from kindling.runtime.job import describe_failure
            from kindling.runtime.restart import WORKER_START_MESSAGE, is_worker_start_failure
            from kindling.sql.errors import from_spark

            text = str(exc)
            if is_worker_start_failure(text):  # kept, so that the job restarts the query (kindling.runtime.restart)
                reason = f"query: {WORKER_START_MESSAGE}"
            elif _PYTHON_WORKER_ERROR in text:  # a Python function failed: its own error, not Spark's first line
                reason = f"query: {describe_failure(text)}"
            else:
                reason = from_spark(exc, statement_line=1, construct="query").reason
            raise RuntimeError(reason) from None
        changes: list[tuple[str, Row]] = []
        for row in rows:
            values = row.asDict()
            kind = values.pop(ROWKIND_COLUMN, None) or "+I"
            changes.append((kind, Row(**{c: values[c] for c in self.columns})))
        with self._lock:
            self._batches[batch_id] = changes

    def changes(self) -> list[tuple[str, Row]]:
        with self._lock:
            return [change for batch_id in sorted(self._batches) for change in self._batches[batch_id]]


class BatchCollector:
    """A batch job's result (Flink's batch mode): every row an insert, all known once the job has finished."""

    def __init__(self, job: Any) -> None:
        self.job = job

    def changes(self) -> list[tuple[str, Row]]:
        return [("+I", row) for row in (self.job.result or [])]


def apply_changelog(changes: Sequence[tuple[str, Row]], upsert_key: Optional[Sequence[str]]) -> list[Row]:
    """The rows a changelog leaves: by key for an upsert result, as a multiset otherwise."""
    if upsert_key is not None:  # an empty key: a global aggregation's one row
        by_key: dict[tuple, Row] = {}
        for kind, row in changes:
            key = tuple(row[k] for k in upsert_key)
            if kind in _DELETIONS:
                by_key.pop(key, None)
            else:
                by_key[key] = row
        return list(by_key.values())
    rows: list[Row] = []
    for kind, row in changes:
        if kind in _DELETIONS:
            try:
                rows.remove(row)
            except ValueError:
                pass
        else:
            rows.append(row)
    return rows


def _flink_value(value: Any) -> Any:
    """A collected value as PyFlink hands it out: a nested ROW (Spark's Row, a tuple) as a Row, in arrays and maps too."""
    if isinstance(value, Row):
        return FlinkRow(*(_flink_value(v) for v in value))
    if isinstance(value, list):
        return [_flink_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _flink_value(v) for k, v in value.items()}
    return value


def _with_times(row: Row, columns: Sequence[str]) -> Row:
    """``row`` with the text of its TIME ``columns`` as ``datetime.time`` values."""
    values = row.asDict()
    return Row(**{c: time_of_text(v) if c in columns else v for c, v in values.items()})


class ResultRow(FlinkRow):
    """A row of a query's result as PyFlink's ``TableResult.collect()`` hands it out: positional (printed
    ``<Row('a', 1)>``, equal to ``Row('a', 1)`` of the same kind) with its change kind. kindling also reads its columns
    by name (``row.k``, ``row['k']``, ``as_dict()``), which Flink's positional rows refuse."""

    __slots__ = ("_names",)

    def __init__(self, kind: RowKind, names: Sequence[str], values: Sequence[Any]) -> None:
        super().__init__(*values)
        self._row_kind = kind
        self._names = list(names)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, (int, slice)):
            return self._values[item]
        if item not in self._names:
            raise KeyError(item)
        return self._values[self._names.index(item)]

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        names = object.__getattribute__(self, "_names")
        if item not in names:
            raise AttributeError(item)
        return self._values[names.index(item)]

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        return FlinkRow(**dict(zip(self._names, self._values))).as_dict(recursive)

    def __reduce__(self) -> Any:
        return ResultRow, (self._row_kind, self._names, tuple(self._values))


class TableResult:
    """Flink's TableResult: result kind, columns, rows or the job producing them."""

    def __init__(self, columns: Sequence[str] = ("result",), rows: Optional[Sequence[tuple]] = None, *,
                 job_client: Any = None, collector: Union[ChangelogCollector, BatchCollector, None] = None,
                 upsert_key: Optional[Sequence[str]] = None, cleanup: Any = None,
                 column_types: Optional[Sequence[Any]] = None,
                 flink_types: Union[Sequence[Optional[str]], Callable[[], Sequence[Optional[str]]], None] = None,
                 raw: bool = False, row_kinds: bool = False, time_columns: Optional[Callable[[], Sequence[str]]] = None) -> None:
        """``column_types``: a query's Spark column types (for the printed widths); ``flink_types``: its columns' Flink
        types as far as kindling knows them, or what gives them (``get_resolved_schema()``; a static result's columns
        are strings); ``raw``: printed as its values alone (Flink's raw content style, an INSERT's result); ``row_kinds``: a
        bounded query's rows printed with their kind (+I), as streaming mode prints every query's; ``time_columns``: what
        gives the columns holding TIME values as their text, collected as ``datetime.time`` as PyFlink collects them."""
        self.columns = list(columns)
        self._rows = [Row(**dict(zip(self.columns, r))) for r in (rows or [])]
        self._job_client = job_client
        self._collector = collector
        self.upsert_key = list(upsert_key) if upsert_key is not None else None
        self._cleanup = cleanup
        self.column_types: Optional[list[Any]] = list(column_types) if column_types is not None else None
        self._flink_types = flink_types
        self._raw = raw
        self._row_kinds = row_kinds
        self._time_columns_of = time_columns
        self._time_columns: Optional[list[str]] = None  # found once, at the first collect

    @staticmethod
    def ok() -> "TableResult":
        return TableResult(["result"], [("OK",)])

    def get_result_kind(self) -> int:
        """``ResultKind.SUCCESS`` for a statement that only says OK, else ``ResultKind.SUCCESS_WITH_CONTENT``."""
        if self._job_client is None and len(self._rows) == 1 and self.columns == ["result"] and self._rows[0][0] == "OK":
            return ResultKind.SUCCESS
        return ResultKind.SUCCESS_WITH_CONTENT

    def get_resolved_schema(self) -> ResolvedSchema:
        """The result's columns and their Flink types, printed as Flink prints a ResolvedSchema; a query column whose
        Flink type kindling does not derive is refused where the schema shows it (``kindling.sql.table_schema``)."""
        return self.get_table_schema().resolved()

    def get_table_schema(self) -> TableSchema:
        """The same columns as the legacy TableSchema (printed ``root`` / `` |-- name: TYPE``)."""
        if callable(self._flink_types):
            self._flink_types = list(self._flink_types())
        types = self._flink_types if self._flink_types is not None else [_STATIC_TYPES.get(c, "STRING") for c in self.columns]
        return TableSchema([StructField(c, StringType()) for c in self.columns], types)

    def get_job_client(self) -> Any:
        return self._job_client

    def wait(self, timeout: Optional[float] = None) -> Optional[str]:
        """Block until the job ends (or ``timeout`` seconds pass) and return its state; None without a job."""
        if self._job_client is None:
            return None
        try:
            return self._job_client.wait(timeout=timeout)
        finally:
            if self._job_client.get_job_status() in TERMINAL_STATES and self._cleanup is not None:
                self._cleanup()
                self._cleanup = None

    def collect_changelog(self, timeout: Optional[float] = None) -> list[tuple[str, Row]]:
        """Every change in arrival order, after the job ended (bounded sources) or ``timeout`` passed."""
        if self._collector is None:
            return [("+I", row) for row in self._rows]
        self.wait(timeout)
        changes = self._collector.changes()
        if self._time_columns is None:
            self._time_columns = list(self._time_columns_of()) if self._time_columns_of is not None else []
        if self._time_columns:
            changes = [(kind, _with_times(row, self._time_columns)) for kind, row in changes]
        return changes

    def collect(self, timeout: Optional[float] = None) -> CollectedRows:
        """The result's rows as PyFlink's ``collect()`` hands them out: a streaming query's changes in arrival order,
        each with its kind (``row.get_row_kind()``), and a batch query's or a statement's rows (+I). The rows are
        positional as Flink's are (``<Row('a', 2)>``); kindling also reads their columns by name (``row.k``).

        >>> with t_env.execute_sql("SELECT k, COUNT(*) AS c FROM t GROUP BY k").collect() as results:  # doctest: +SKIP
        ...     for row in results:
        ...         print(row.get_row_kind(), row)
        +I <Row('a', 1)>
        -U <Row('a', 1)>
        +U <Row('a', 2)>
        """
        return CollectedRows([ResultRow(RowKind.from_short_string(kind), self.columns, tuple(_flink_value(v) for v in row))
                              for kind, row in self.collect_changelog(timeout)])

    def final_rows(self, timeout: Optional[float] = None) -> CollectedRows:
        """The rows the result's changelog leaves, as an upsert sink or a materialized view would hold them
        (kindling's; in batch mode and for statements the rows themselves)."""
        if self._collector is None:
            return CollectedRows(self._rows)
        return CollectedRows(apply_changelog(self.collect_changelog(timeout), self.upsert_key))

    def print(self, out: Optional[TextIO] = None, max_rows: Optional[int] = None, client: bool = False) -> None:
        """Print as Flink's tableau mode: a static table, or a query's changes as they arrive.

        A query's columns are as wide as Flink makes them for their types (BIGINT 20, INT 11, BOOLEAN 5, TIMESTAMP(3)
        23, ... and 30 for strings and the rest), and it ends with ``N rows in set`` as ``TableResult.print()`` does;
        with ``client`` (the SQL client) ``Received a total of N rows`` as Flink's SQL client does."""
        out = out or sys.stdout
        if self._raw:
            out.write("".join(", ".join(str(v) for v in r) + "\n" for r in self._rows))
            out.flush()
            return
        if self._collector is None:
            _print_table(self.columns, [tuple(r) for r in self._rows], out, client)
            return
        if isinstance(self._collector, BatchCollector):
            self._print_batch(out, max_rows, client)
            return
        self._print_streaming(out, max_rows, client)

    def _print_batch(self, out: TextIO, max_rows: Optional[int], client: bool) -> None:
        """A batch result as Flink prints it: the final rows without a row-kind column, once the job has ended;
        columns as wide as their types (``TableResult.print()``) or, in the SQL client, as their content."""
        shapes = self._shapes()
        rows = [[_format(v, shape) for v, shape in zip(r, shapes)] for r in self.final_rows()]
        if max_rows is not None:
            rows = rows[:max_rows]
        if self._row_kinds:
            self._print_inserts(out, rows, shapes, client)
            return
        if not rows:
            out.write("Empty set\n")
            out.flush()
            return
        if client:
            widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(self.columns)]
        else:
            widths = [max(len(c), len("<NULL>"), shape.width) for c, shape in zip(self.columns, shapes)]
        border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        lines = [border, _line(self.columns, widths), border] + [_line(row, widths) for row in rows]
        out.write("\n".join(lines) + "\n" + border + f"\n{len(rows)} row{'s' if len(rows) > 1 else ''} in set\n")
        out.flush()

    def _print_inserts(self, out: TextIO, rows: list[list[str]], shapes: list["_Shape"], client_footer: bool) -> None:
        """A bounded query's rows in streaming mode: each an insertion (+I), printed as a streaming query's are."""
        widths = [2] + [max(len(c), len("<NULL>"), shape.width) for c, shape in zip(self.columns, shapes)]
        border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        lines = [border, _line(["op"] + self.columns, widths), border] + [_line(["+I"] + row, widths) for row in rows]
        out.write("\n".join(lines) + "\n" + border + "\n" + _streaming_footer(len(rows), client_footer))
        out.flush()

    def _print_streaming(self, out: TextIO, max_rows: Optional[int], client_footer: bool = False) -> None:
        columns = ["op"] + self.columns
        shapes = self._shapes()
        widths = [2] + [max(len(c), len("<NULL>"), shape.width) for c, shape in zip(self.columns, shapes)]
        border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        out.write(border + "\n" + _line(columns, widths) + "\n" + border + "\n")
        out.flush()
        shown = 0
        client = self._job_client
        assert client is not None and self._collector is not None
        try:
            with interrupts.deferred():  # Ctrl-C lands between two calls into the JVM
                while True:
                    status = client.get_job_status()
                    changes = self._collector.changes()
                    for kind, row in changes[shown:]:
                        out.write(_line([kind] + [_format(v, shape) for v, shape in zip(row, shapes)], widths) + "\n")
                    shown = len(changes)
                    out.flush()
                    if status in TERMINAL_STATES or (max_rows is not None and shown >= max_rows):
                        break
                    client.wait(timeout=0.5)
        except KeyboardInterrupt:
            client.cancel()
        if client.get_job_status() not in TERMINAL_STATES:
            client.cancel()
        self.wait(0)
        out.write(border + "\n" + _streaming_footer(shown, client_footer))
        out.flush()

    def _shapes(self) -> list["_Shape"]:
        """How each column prints: from its Flink type where kindling knows it, else from its Spark type."""
        spark_types = self.column_types or [None] * len(self.columns)
        try:
            if callable(self._flink_types):
                self._flink_types = list(self._flink_types())
            flink_types: Sequence[Optional[str]] = self._flink_types or [None] * len(self.columns)
        except Exception:  # the types are a nicety of printing: a plan kindling cannot walk prints as Spark types it
            flink_types = [None] * len(self.columns)
        return [_Shape.of(flink, spark) for flink, spark in zip(flink_types, spark_types)]

    def __repr__(self) -> str:
        return f"TableResult(columns={self.columns}, kind={self.get_result_kind()}, job={self._job_client.job_id if self._job_client else None})"


# The Flink types of static results' columns that are not strings (DESCRIBE's null, an INSERT's affected rows).
_STATIC_TYPES = {"null": "BOOLEAN"}


def _type_width(data_type: Any) -> int:
    """Flink's tableau column width for a type (``TableauStyle.columnWidthsByType``); 30 for strings and the rest."""
    from pyspark.sql import types as T

    widths = {T.ByteType: 4, T.ShortType: 6, T.IntegerType: 11, T.LongType: 20, T.BooleanType: 5, T.DateType: 10,
              T.TimestampType: 23, T.TimestampNTZType: 23}  # timestamps print with 3 fraction digits: TIMESTAMP(3)
    if isinstance(data_type, T.DecimalType):
        return data_type.precision + 2
    return widths.get(type(data_type), 30)


def _streaming_footer(rows: int, client: bool) -> str:
    """The line after a streaming result's rows (Flink waits for the first row and prints only "Empty set" without
    any; kindling has shown the header already)."""
    if client:
        return f"Received a total of {rows} row{'s' if rows != 1 else ''}\n"
    return "Empty set\n" if rows == 0 else f"{rows} row{'s' if rows != 1 else ''} in set\n"


class _Shape:
    """How Flink's tableau prints a column: its width (``TableauStyle.columnWidthsByType``: BIGINT 20, INT 11,
    BOOLEAN 5, DATE 10, TIME(p) and TIMESTAMP(p) as their text, DECIMAL(p, s) p + 2, 30 for strings and the rest),
    a timestamp's fraction digits (its precision) and whether a floating-point value is a FLOAT."""

    def __init__(self, width: int, digits: int = 3, single: bool = False) -> None:
        self.width, self.digits, self.single = width, digits, single

    @staticmethod
    def of(flink_type: Optional[str], spark_type: Any) -> "_Shape":
        import re

        if flink_type is None:
            return _Shape(_type_width(spark_type), single=type(spark_type).__name__ == "FloatType")
        base = re.sub(r"( NOT NULL)?( \*(ROW|PROC)TIME\*)?$", "", flink_type)
        fixed = {"TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20, "BOOLEAN": 5, "DATE": 10}
        if base in fixed:
            return _Shape(fixed[base])
        timed = re.fullmatch(r"(TIMESTAMP|TIMESTAMP_LTZ|TIME)\((\d)\)", base)
        if timed is not None:
            digits = int(timed.group(2))
            return _Shape((8 if timed.group(1) == "TIME" else 19) + (digits + 1 if digits else 0), digits)
        decimal = re.fullmatch(r"DECIMAL\((\d+), \d+\)", base)
        if decimal is not None:
            return _Shape(int(decimal.group(1)) + 2)
        return _Shape(30, single=base == "FLOAT")


_DEFAULT_SHAPE = _Shape(30)


def _format(value: Any, shape: _Shape = _DEFAULT_SHAPE) -> str:
    """A value as Flink's tableau prints it (a timestamp with its precision's digits, a FLOAT or DOUBLE as Java writes
    it, collections, rows and bytes as Flink's converters write them)."""
    if value is None:
        return "<NULL>"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text + ("." + value.strftime("%f").ljust(shape.digits, "0")[:shape.digits] if shape.digits else "")
    if isinstance(value, time):  # as a TIME(p)'s text (kindling.sql.time_values): trailing zeros dropped, one digit kept
        fraction = f"{value.microsecond:06d}"[:shape.digits].rstrip("0") or "0"
        return value.strftime("%H:%M:%S") + ("." + fraction if shape.digits else "")
    return _nested(value, shape.single)


def _nested(value: Any, single: bool = False) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_floating(value, single)
    if isinstance(value, (bytes, bytearray)):
        return "x'" + bytes(value).hex() + "'"
    if isinstance(value, Row) or isinstance(value, tuple):
        return "(" + ", ".join(_nested(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_nested(k)}={_nested(v)}" for k, v in value.items()) + "}"
    if isinstance(value, datetime):  # as Java's LocalDateTime.toString()
        text = value.strftime("%Y-%m-%dT%H:%M") + (value.strftime(":%S") if value.second or value.microsecond else "")
        micros = f"{value.microsecond:06d}"
        return text + ("." + (micros[:3] if micros.endswith("000") else micros) if value.microsecond else "")
    return str(value)


def _line(values: Sequence[str], widths: Sequence[int]) -> str:
    cells = []
    for value, width in zip(values, widths):
        text = value if len(value) <= width else value[: width - 3] + "..."
        cells.append(f" {text:>{width}} ")
    return "|" + "|".join(cells) + "|"


def _print_table(columns: Sequence[str], rows: Sequence[tuple], out: TextIO, client: bool = False) -> None:
    """A static result (SHOW, DESCRIBE) as a table as wide as its content: left-aligned and followed by a blank line in
    the SQL client, right-aligned with NULL as empty by ``TableResult.print()`` (which prints no table without rows), as
    each of Flink's prints it."""
    if not rows and not client:
        out.write("Empty set\n")
        out.flush()
        return
    texts = [[_format(v) if v is not None or client else "" for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in texts]) for i, c in enumerate(columns)]
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    align = "<" if client else ">"
    out.write(border + "\n" + "|" + "|".join(f" {c:{align}{w}} " for c, w in zip(columns, widths)) + "|\n" + border + "\n")
    for row in texts:
        out.write("|" + "|".join(f" {v:{align}{w}} " for v, w in zip(row, widths)) + "|\n")
    ending = "\n" if client else ""
    if not rows:
        out.write(border + "\nEmpty set\n" + ending)
    else:
        out.write(border + f"\n{len(rows)} row{'s' if len(rows) != 1 else ''} in set\n" + ending)
    out.flush()

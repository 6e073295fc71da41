"""Flink's dynamic index grammar (``IndexGeneratorFactory``), computed column-wise over Arrow batches.

* ``'users'``: a static index.
* ``'users-{field}'``: the field's value as text (``null`` for NULL); the field must be CHAR/VARCHAR,
  TINYINT, INTEGER, BIGINT, DATE, TIME or TIMESTAMP.
* ``'users-{field|yyyy-MM-dd}'``: a DATE / TIMESTAMP / TIMESTAMP_LTZ field formatted with a Java
  ``DateTimeFormatter`` pattern; an empty pattern (``{field|}``) uses Flink's defaults. A TIMESTAMP is
  formatted as the wall-clock time it holds; a TIMESTAMP_LTZ (an instant: the table's
  ``kindling.table.instant-columns``) in the session time zone, as Flink renders it in ``table.local-time-zone``.
* ``'users-{now()|yyyy-MM-dd}'`` (also ``NOW()``, ``current_timestamp``, ``CURRENT_TIMESTAMP``): the
  current time in the session time zone; only for append-only input.

At most one placeholder, with Flink's messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional, Sequence, Union

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import (
    ByteType,
    DataType,
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from kindling.options import OptionError

_PLACEHOLDER = re.compile(r"\{[^{}]+\}?")
_WITH_FORMAT = re.compile(r".*\{.+\|.*\}.*", re.S)
_SYSTEM_TIME = re.compile(r".*\{\s*(now\(\s*\)|NOW\(\s*\)|current_timestamp|CURRENT_TIMESTAMP)\s*\|.*\}.*", re.S)
_SUPPORTED = "[DATE, TIME_WITHOUT_TIME_ZONE, TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_TIME_ZONE, " \
             "TIMESTAMP_WITH_LOCAL_TIME_ZONE, VARCHAR, CHAR, TINYINT, INTEGER, BIGINT]"
_DEFAULT_FORMATS = {"DATE": "yyyy_MM_dd", "TIMESTAMP": "yyyy_MM_dd_HH_mm_ss", "TIMESTAMP_LTZ": "yyyy_MM_dd_HH_mm_ssX"}
_LTZ = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"


class IndexPatternError(OptionError):
    """An index pattern Flink would refuse (kept an OptionError so that it names the 'index' option)."""


def flink_type_root(data_type: DataType, instant: bool = False) -> str:
    """The Flink type root a Spark column stands for, as Flink names it in the index messages (``instant``: the
    column is declared TIMESTAMP_LTZ)."""
    if instant and isinstance(data_type, (TimestampType, TimestampNTZType)):
        return _LTZ
    if isinstance(data_type, StringType):
        return "VARCHAR"
    if isinstance(data_type, (TimestampType, TimestampNTZType)):
        return "TIMESTAMP_WITHOUT_TIME_ZONE"
    return {ByteType: "TINYINT", IntegerType: "INTEGER", LongType: "BIGINT", DateType: "DATE"}.get(
        type(data_type), data_type.simpleString().upper())


@dataclass(frozen=True)
class IndexPattern:
    """A parsed ``index`` option: static text or prefix + one placeholder + suffix."""

    text: str
    prefix: str = ""
    suffix: str = ""
    field: Optional[str] = None  # None: static or now()
    date_format: Optional[str] = None  # None: no '|' part
    system_time: bool = False

    @property
    def dynamic(self) -> bool:
        return self.field is not None or self.system_time

    @staticmethod
    def parse(index: str) -> "IndexPattern":
        count = len(_PLACEHOLDER.findall(index))
        if count > 1:
            raise IndexPatternError(f"Chaining dynamic index pattern {index} is not supported, only support single dynamic "
                              "index pattern. (option 'index')")
        if count == 0:
            return IndexPattern(index)
        start, end = index.index("{"), index.rindex("}")
        prefix, suffix = index[:start], index[end + 1:]
        if _SYSTEM_TIME.match(index):
            return IndexPattern(index, prefix, suffix, None, index[index.index("|") + 1:index.index("}")], True)
        if _WITH_FORMAT.match(index):
            return IndexPattern(index, prefix, suffix, index[start + 1:index.index("|")], index[index.index("|") + 1:index.index("}")])
        return IndexPattern(index, prefix, suffix, index[start + 1:index.index("}")])

    def check(self, schema: StructType, updating: bool, instants: Sequence[str] = ()) -> None:
        """Flink's planning checks: the field exists with an allowed type; now() only for append-only input."""
        if self.system_time:
            if updating:
                raise IndexPatternError("Dynamic indexing based on system time only works on append only stream. "
                                  f"(option 'index' = '{self.text}' and the query produces updates)")
            java_pattern_parts(self.date_format or "yyyy_MM_dd_HH_mm_ssX", self.text)
            return
        if self.field is None:
            return
        names = [f.name for f in schema.fields]
        if self.field not in names:
            raise IndexPatternError(f"Unknown field '{self.field}' in index pattern '{self.text}', please check the field name. "
                              "(option 'index')")
        root = flink_type_root(schema[self.field].dataType, self.field in instants)
        if root not in _SUPPORTED:
            raise IndexPatternError(f"Unsupported type {root} of index field, Supported types are: {_SUPPORTED} "
                              f"(option 'index' = '{self.text}')")
        if self.date_format is not None:
            if root not in ("DATE", "TIMESTAMP_WITHOUT_TIME_ZONE", _LTZ):
                raise IndexPatternError(f"Unsupported type '{root}' found in Elasticsearch dynamic index field, time-related "
                                  f"pattern only support types are: DATE,TIME,TIMESTAMP. (option 'index' = '{self.text}')")
            java_pattern_parts(self._format(root), self.text)

    def _format(self, root: str) -> str:
        if self.date_format:
            return self.date_format
        return _DEFAULT_FORMATS["DATE" if root == "DATE" else "TIMESTAMP_LTZ" if root == _LTZ else "TIMESTAMP"]

    def generate(self, batch: pa.RecordBatch, zone: str = "UTC", instants: Sequence[str] = ()) -> Union[str, pa.Array]:
        """The index of every row: one string for a static pattern, else a string array. ``zone`` renders now() and
        the TIMESTAMP_LTZ columns named in ``instants``."""
        if not self.dynamic:
            return self.text
        if self.system_time:
            now = pa.array([datetime.now(timezone.utc)], pa.timestamp("us", tz="UTC"))
            text = format_times(now, self.date_format or "yyyy_MM_dd_HH_mm_ssX", zone, self.text)[0].as_py()
            return self.prefix + text + self.suffix
        column = batch.column(batch.schema.get_field_index(self.field))
        if self.date_format is not None:
            instant = self.field in instants and pa.types.is_timestamp(column.type)
            root = "DATE" if pa.types.is_date(column.type) else _LTZ if instant else "TIMESTAMP"
            text = format_times(column, self._format(root), zone if instant else "UTC", self.text)
        elif pa.types.is_date(column.type):  # Flink prints a DATE's internal value, the epoch day
            text = column.cast(pa.int32()).cast(pa.string())
        elif pa.types.is_timestamp(column.type):
            text = local_datetime_strings(column)
        else:
            text = column.cast(pa.string())
        text = pc.fill_null(text, "null")
        return pc.binary_join_element_wise(pa.scalar(self.prefix), text, pa.scalar(self.suffix), pa.scalar(""))


def local_datetime_strings(column: pa.Array) -> pa.Array:
    """TIMESTAMP values as Java's ``LocalDateTime.toString()`` writes them (``2020-03-27T12:25:55.123``)."""
    values = column.cast(pa.timestamp("us", tz=column.type.tz)).to_pylist()
    out = []
    for value in values:
        if value is None:
            out.append(None)
            continue
        text = value.strftime("%Y-%m-%dT%H:%M")
        if value.second or value.microsecond:
            text += value.strftime(":%S")
        if value.microsecond:
            text += "." + (f"{value.microsecond // 1000:03d}" if value.microsecond % 1000 == 0 else f"{value.microsecond:06d}")
        out.append(text)
    return pa.array(out, pa.string())


# Java DateTimeFormatter letters -> how to compute them from a timestamp column.
_LETTERS = "GuyDMLdQqYwWEecFaHkKhmsSAnNVzOXxZp"


def java_pattern_parts(pattern: str, index: str) -> list[tuple[str, str]]:
    """Split a Java date pattern into ('lit', text) and ('field', letters) parts; unsupported letters are errors."""
    parts: list[tuple[str, str]] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            end = pattern.find("'", i + 1)
            if end == i + 1:
                parts.append(("lit", "'"))
                i += 2
                continue
            if end < 0:
                raise IndexPatternError(f"Unterminated quote in the date format '{pattern}' of option 'index' = '{index}'")
            parts.append(("lit", pattern[i + 1:end].replace("''", "'")))
            i = end + 1
            continue
        if ch.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == ch:
                j += 1
            run = pattern[i:j]
            if ch not in "yuMdHhmsSaDEX":
                raise IndexPatternError(f"Unsupported letter '{ch}' in the date format '{pattern}' of option 'index' = "
                                  f"'{index}'; kindling supports y u M d H h m s S a D E X and quoted text")
            parts.append(("field", run))
            i = j
            continue
        parts.append(("lit", ch))
        i += 1
    return parts


_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def format_times(column: pa.Array, pattern: str, zone: str, index: str) -> pa.Array:
    """DATE / TIMESTAMP values formatted with a Java ``DateTimeFormatter`` pattern, column-wise."""
    if pa.types.is_date(column.type):
        ts = column.cast(pa.timestamp("s")).cast(pa.timestamp("s", tz="UTC"))
        local = ts
    else:
        ts = column if column.type.tz else column.cast(pa.timestamp(column.type.unit, tz="UTC"))
        local = ts.cast(pa.timestamp(ts.type.unit, tz=zone)) if zone != "UTC" else ts
    seconds = local.cast(pa.timestamp("s", tz=local.type.tz), safe=False)
    pieces: list = []
    for kind, text in java_pattern_parts(pattern, index):
        if kind == "lit":
            pieces.append(pa.scalar(text))
            continue
        letter, n = text[0], len(text)
        if letter in "yu":
            piece = pc.strftime(seconds, "%y") if n == 2 else pc.utf8_lpad(pc.year(local).cast(pa.string()), n, "0")
        elif letter == "M":
            if n >= 3:
                piece = pc.strftime(seconds, "%B" if n >= 4 else "%b")
            else:
                piece = pc.utf8_lpad(pc.month(local).cast(pa.string()), n, "0")
        elif letter in "dHmsD":
            value = {"d": pc.day, "H": pc.hour, "m": pc.minute, "s": pc.second, "D": pc.day_of_year}[letter](local)
            piece = pc.utf8_lpad(value.cast(pa.string()), n, "0")
        elif letter == "h":
            hour = pc.hour(local)
            within = pc.subtract(hour, pc.multiply(pc.divide(hour, 12), 12))  # integer division
            twelve = pc.if_else(pc.equal(within, 0), 12, within)
            piece = pc.utf8_lpad(twelve.cast(pa.string()), n, "0")
        elif letter == "a":
            piece = pc.if_else(pc.less(pc.hour(local), 12), pa.scalar("AM"), pa.scalar("PM"))
        elif letter == "E":
            piece = pc.strftime(seconds, "%A" if n >= 4 else "%a")
        elif letter == "S":
            micros = pc.add(pc.multiply(pc.millisecond(local), 1000), pc.microsecond(local))
            digits = pc.utf8_lpad(micros.cast(pa.string()), 6, "0")
            piece = pc.utf8_slice_codeunits(pc.utf8_rpad(digits, max(n, 6), "0"), 0, n)
        else:  # 'X': the zone offset, 'Z' for UTC
            offset = pc.strftime(seconds, "%z")
            piece = pc.if_else(pc.equal(offset, "+0000"), pa.scalar("Z"), pc.utf8_slice_codeunits(offset, 0, 3 if n == 1 else 5))
        pieces.append(piece)
    if not pieces:
        return pa.array([""] * len(column), pa.string())
    arrays = [p for p in pieces if isinstance(p, (pa.Array, pa.ChunkedArray))]
    if not arrays:
        return pa.array(["".join(p.as_py() for p in pieces)] * len(column), pa.string())
    return pc.binary_join_element_wise(*pieces, pa.scalar(""))

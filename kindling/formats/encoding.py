"""Encoding: Arrow record batches -> one ``bytes`` per row, for every connector that writes records.

``json`` objects (TIMESTAMP in Flink's SQL form by default, column-wise with Arrow compute where the
types allow, byte for byte what the per-row path writes), ``csv`` lines (ending with ``csv.line-delimiter``), ``raw`` bytes of a single
column, ``avro`` and ``avro-confluent`` records.
"""

from __future__ import annotations

import base64
from typing import Callable, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import StructType

from kindling.formats.avro_confluent import confluent_codec
from kindling.formats.settings import FormatError, FormatSettings
from kindling.row_layout import ROWKIND_COLUMN

_YEAR_1_US = -62135596800_000_000  # 0001-01-01T00:00:00 in microseconds since the epoch
_YEAR_9999_END_US = 253402300799_999_999  # 9999-12-31T23:59:59.999999


def _timestamp_strings(column: pa.Array, standard: str) -> pa.Array:
    """Flink's JSON/CSV timestamp text: ``2026-11-22 01:02:03.123`` (SQL) or ``2026-11-22T01:02:03.123`` (ISO-8601)."""
    # Like Flink's formatter: fraction digits as needed (none for whole seconds), at most microseconds.
    unit_us = column.cast(pa.timestamp("us", tz=column.type.tz), safe=False)
    if column.type.tz in (None, "UTC", "Etc/UTC", "+00:00"):
        bounds = pc.min_max(unit_us.cast(pa.int64()))
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if low is None or (_YEAR_1_US <= low and high <= _YEAR_9999_END_US):
            # Fast: Arrow's cast writes "YYYY-MM-DD HH:MM:SS.ffffff" (UTC) for years 1-9999; the
            # fraction's trailing zeros (and a bare '.') are trimmed as below.
            text = unit_us.cast(pa.timestamp("us")).cast(pa.string())
            if standard != "SQL":
                text = pc.utf8_replace_slice(text, start=10, stop=11, replacement="T")
            text = pc.utf8_rtrim(pc.utf8_rtrim(text, characters="0"), characters=".")
            if standard != "SQL" and column.type.tz:
                text = pc.binary_join_element_wise(text, pa.scalar("Z"), "")
            return text
    fmt = "%Y-%m-%d %H:%M:%S" if standard == "SQL" else "%Y-%m-%dT%H:%M:%S"
    text = pc.strftime(unit_us, format=fmt)
    text = pc.replace_substring_regex(text, r"(\.\d*?)0+$", r"\1")
    text = pc.replace_substring_regex(text, r"\.$", "")
    if standard != "SQL" and column.type.tz:
        text = pc.binary_join_element_wise(text, pa.scalar("Z"), "")
    return text


def _jsonable(column: pa.Array, standard: str) -> pa.Array:
    """Arrow columns orjson can serialise from ``to_pylist`` with Flink's JSON conventions."""
    t = column.type
    if pa.types.is_timestamp(t):
        return _timestamp_strings(column, standard)
    if pa.types.is_date(t) or pa.types.is_time(t):
        return column.cast(pa.string())
    if pa.types.is_decimal(t):
        return column.cast(pa.float64())
    return column


_NEEDS_ESCAPE = r'[\x00-\x1f"\\]'  # what JSON (and orjson) escape in a string; the rest stays UTF-8


def _json_text(column: pa.Array, standard: str) -> Optional[pa.Array]:
    """A flat column as JSON value text (``pa.string()``, ``null`` for nulls), exactly as orjson writes
    the value :func:`_jsonable` gives; None for types left to the per-row path (nested, binary, ...)."""
    t = column.type
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t):
        # Digits, '-', ':', '.', ' ', 'T' and 'Z' only: nothing to escape.
        text = _quoted(_jsonable(column, standard).cast(pa.string()))
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        text = json_strings(column.cast(pa.string()))
    elif pa.types.is_boolean(t):
        text = pc.if_else(column, pa.scalar("true"), pa.scalar("false"))
    elif pa.types.is_integer(t):
        text = column.cast(pa.string())
    elif pa.types.is_float32(t) or pa.types.is_float64(t) or pa.types.is_decimal(t):
        text = _json_floats(_jsonable(column, standard).cast(pa.float64()))
    elif pa.types.is_null(t):
        text = pa.nulls(len(column), pa.string())
    else:
        return None
    return pc.fill_null(text, pa.scalar("null"))


def _quoted(text: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(pa.scalar('"'), text, pa.scalar('"'), pa.scalar(""))


def json_strings(column: pa.Array) -> pa.Array:
    """Quoted JSON strings; the (usually few) values with a character to escape go through orjson."""
    text = _quoted(column)
    needs = pc.fill_null(pc.match_substring_regex(column, _NEEDS_ESCAPE), False)
    if pc.any(needs).as_py():
        import orjson

        dumps = orjson.dumps
        escaped = [dumps(v).decode("utf-8") for v in pc.filter(column, needs).to_pylist()]
        text = pc.replace_with_mask(text, needs, pa.array(escaped, pa.string()))
    return text


def _json_floats(column: pa.Array) -> pa.Array:
    """float64 as orjson writes it (Python's ``repr``; NaN and infinities as ``null``).

    Arrow's shortest round-trip text agrees with it for 0 and 1e-4 <= |x| < 1e10 once integral values
    get their ``.0``; the rest (exponent forms differ) are written by orjson, as a list, then split.
    """
    text = column.cast(pa.string())
    text = pc.if_else(
        pc.match_substring_regex(text, r"^-?\d+$"), pc.binary_join_element_wise(text, pa.scalar(".0"), pa.scalar("")), text
    )
    magnitude = pc.abs(column)
    plain = pc.or_(pc.equal(column, 0.0), pc.and_(pc.greater_equal(magnitude, 1e-4), pc.less(magnitude, 1e10)))
    other = pc.invert(pc.fill_null(plain, True))  # nulls stay null, filled with "null" by the caller
    if pc.any(other).as_py():
        import orjson

        values = pc.filter(column, other).to_pylist()
        written = orjson.dumps(values)[1:-1].decode("ascii").split(",")  # numbers and null: no commas inside
        text = pc.replace_with_mask(text, other, pa.array(written, pa.string()))
    return text


def _orjson() -> Callable[..., bytes]:
    try:
        import orjson

        def dumps(obj) -> bytes:
            return orjson.dumps(obj, default=_default)

        return dumps
    except ImportError:  # pragma: no cover - orjson is a dependency
        import json

        def dumps(obj) -> bytes:
            return json.dumps(obj, separators=(",", ":"), default=_default, ensure_ascii=False).encode()

        return dumps


def _default(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, list):  # pragma: no cover
        return value
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


class RowEncoder:
    """Arrow record batch -> one ``bytes`` per row, in a format."""

    def __init__(self, settings: FormatSettings, names: Sequence[str], schema: Optional[StructType] = None) -> None:
        self.settings = settings
        self.names = list(names)
        self._dumps = _orjson()
        self._avro = None
        if settings.name == "avro":
            from kindling.formats.avro import AvroCodec

            if schema is None:
                raise FormatError("the 'avro' format needs the columns' types")
            try:
                self._avro = AvroCodec(StructType([schema[n] for n in self.names]), writer_schema=settings.avro_schema)
            except ValueError as exc:
                raise FormatError(str(exc)) from None
        elif settings.name == "avro-confluent":
            if schema is None:
                raise FormatError("the 'avro-confluent' format needs the columns' types")
            self._avro = confluent_codec(StructType([schema[n] for n in self.names]), settings)
        self._rows = None
        if settings.is_changelog:
            if settings.changelog.schema_include:
                raise FormatError("'debezium-json.schema-include' = 'true' is supported for reading only: kindling does not write "
                                  "Debezium's Kafka Connect schema; remove the option from the sink table")
            self._rows = RowEncoder(FormatSettings("json", timestamp_standard=settings.timestamp_standard), self.names, schema)
        if settings.name == "raw" and len(self.names) != 1:
            raise FormatError(
                "the 'raw' format writes exactly one column (BINARY or STRING); got " + ", ".join(self.names)
            )

    def encode(self, batch: pa.RecordBatch) -> list[Optional[bytes]]:
        """One record per row; a changelog format reads each row's kind from ``__kindling_rowkind`` (none: '+I')."""
        if self._rows is not None:
            from kindling.formats.changelog import encode

            kinds = batch.column(batch.schema.get_field_index(ROWKIND_COLUMN)).to_pylist() \
                if ROWKIND_COLUMN in batch.schema.names else ["+I"] * batch.num_rows
            return encode(self.settings.changelog, self._rows.encode(batch), kinds)
        columns = [batch.column(batch.schema.get_field_index(n)) for n in self.names]
        if self.settings.name == "raw":
            column = columns[0]
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                column = column.cast(pa.binary())
            elif not (pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type)):
                raise FormatError(
                    f"the 'raw' format writes a BINARY or STRING column; '{self.names[0]}' is {column.type}"
                )
            return column.to_pylist()
        if self._avro is not None:
            return self._avro.encode(batch, self.names)
        if self.settings.name == "json":
            if batch.num_rows == 0:
                return []
            fast = self._encode_json_columns(columns)
            if fast is not None:
                return fast.to_pylist()
            return self._encode_json_rows(columns)
        lines = self._encode_csv(columns)
        end = self.settings.line_delimiter.encode()
        return [line + end for line in lines] if end else lines

    def _encode_json_rows(self, columns: list[pa.Array]) -> list[Optional[bytes]]:
        """The general JSON path: one ``orjson.dumps`` per row (any type, nested ones included)."""
        std = self.settings.timestamp_standard
        prepared = [_jsonable(c, std) for c in columns]
        table = pa.Table.from_arrays(prepared, names=self.names)
        dumps = self._dumps
        return [dumps(row) for row in table.to_pylist(maps_as_pydicts="lossy")]

    def json_objects(self, batch: pa.RecordBatch) -> pa.Array:
        """The ``json`` format's rows as one BINARY array, built column-wise where the types allow (for sinks that
        keep working on Arrow, such as Elasticsearch's bulk bodies)."""
        if not self.names:
            return pa.array([b"{}"] * batch.num_rows, pa.binary())
        columns = [batch.column(batch.schema.get_field_index(n)) for n in self.names]
        fast = self._encode_json_columns(columns) if batch.num_rows else None
        if fast is not None:
            return fast
        return pa.array(self._encode_json_rows(columns) if batch.num_rows else [], pa.binary())

    def _encode_json_columns(self, columns: list[pa.Array]) -> Optional[pa.Array]:
        """The JSON objects built column-wise with Arrow compute (a BINARY array), byte for byte what
        :meth:`_encode_json_rows` writes; None when a column's type needs the per-row path."""
        if not columns or len(set(self.names)) != len(self.names):
            return None
        try:
            import orjson
        except ImportError:  # pragma: no cover - orjson is a dependency
            return None
        std = self.settings.timestamp_standard
        parts: list = []
        try:
            for i, (name, column) in enumerate(zip(self.names, columns)):
                if isinstance(column, pa.ChunkedArray):
                    column = column.combine_chunks()
                text = _json_text(column, std)
                if text is None:
                    return None
                key = orjson.dumps(name).decode("utf-8") + ":"
                parts.append(pa.scalar(("{" if i == 0 else ",") + key, pa.string()))
                parts.append(text)
            parts.append(pa.scalar("}", pa.string()))
            joined = pc.binary_join_element_wise(*parts, pa.scalar("", pa.string()))
        except (pa.ArrowInvalid, pa.ArrowCapacityError, pa.ArrowNotImplementedError):
            return None
        return joined.cast(pa.binary())

    def _encode_csv(self, columns: list[pa.Array]) -> list[Optional[bytes]]:
        """One CSV line per row, as Flink's csv format (Jackson's CSV writer) writes it: numbers and booleans as they are,
        text quoted only where Jackson quotes it (see :func:`_csv_text`), nulls and empty text as nothing."""
        if not columns or len(columns[0]) == 0:
            return []
        delimiter = self.settings.field_delimiter
        cells = []
        for column in columns:
            if pa.types.is_timestamp(column.type):
                column = _timestamp_strings(column, "SQL")
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                cells.append(_csv_text(column.cast(pa.string()), delimiter))
            else:
                cells.append(pc.fill_null(column.cast(pa.string()), ""))
        lines = cells[0] if len(cells) == 1 else pc.binary_join_element_wise(*cells, delimiter)
        return [line.encode("utf-8") for line in lines.to_pylist()]


_CSV_QUOTE = '"'
_CSV_MAX_UNCHECKED = 24  # Jackson quotes longer text without looking at it (its MAX_QUOTE_CHECK, in UTF-16 units)


def _csv_text(column: pa.Array, delimiter: str) -> pa.Array:
    """Text cells as Jackson's CSV writer (Flink's csv format) writes them with its default quote character and no
    escape character: quoted, inner quotes doubled, when longer than 24 UTF-16 units or holding a character below the
    'safe' one (one above the larger of the delimiter and the quote: for ',' every character below '-', the space
    among them), a backslash, the delimiter or the quote; else as it is. Null and empty text are both nothing."""
    text = pc.fill_null(column, "")
    unsafe_below = max(ord(delimiter), ord(_CSV_QUOTE)) + 1
    specials = "".join(sorted({"\\\\", _re_escape(delimiter), _re_escape(_CSV_QUOTE)}))
    pattern = f"[\\x00-\\x{unsafe_below - 1:02x}{specials}]"
    utf16_length = pc.add(pc.utf8_length(text), pc.count_substring_regex(text, "[\\x{10000}-\\x{10FFFF}]"))
    needs_quotes = pc.or_(pc.greater(utf16_length, _CSV_MAX_UNCHECKED), pc.match_substring_regex(text, pattern))
    quoted = pc.binary_join_element_wise(_CSV_QUOTE, pc.replace_substring(text, _CSV_QUOTE, _CSV_QUOTE * 2), _CSV_QUOTE, "")
    return pc.if_else(needs_quotes, quoted, text)


def _re_escape(character: str) -> str:
    return f"\\x{{{ord(character):x}}}"


__all__ = ["RowEncoder", "json_strings"]

"""Record formats: Kafka value/key bytes <-> Arrow columns, in bulk.

Decoding (source) turns a list of record values into Arrow arrays for the schema's value columns:

* ``json``: the values are joined with newlines and parsed at once by ``pyarrow.json`` with an
  explicit schema (fields not in the schema are ignored, missing ones are null). TIMESTAMP columns
  accept Flink's SQL form ``2026-11-22 01:02:03.123`` and ISO-8601 (``T``, ``Z``, offsets), up to
  nanosecond fractions (kept to microseconds). When the bulk parse fails, the batch is bisected to
  find the bad records, so good records still parse in bulk.
* ``csv``: the same, with ``pyarrow.csv`` (no header; columns in schema order).
* ``raw``: the value bytes as a single BINARY or STRING column.

Null values (tombstones) are skipped by ``json`` and ``csv``, as Flink does.

Encoding (sink) turns Arrow record batches into one ``bytes`` per row: ``json`` objects (TIMESTAMP
in Flink's SQL form by default), ``csv`` lines, or ``raw`` bytes of a single column.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import pyarrow as pa

import pyarrow.compute as pc
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    MapType,
    StringType,
    StructType,
)

from kindling.connectors.kafka.options import FormatSettings


def arrow_type(data_type: DataType) -> pa.DataType:
    """The Arrow type Spark expects for a Spark type in a Python Data Source's Arrow batches."""
    from pyspark.sql.pandas.types import to_arrow_type

    return to_arrow_type(data_type, timezone="UTC")




class FormatError(ValueError):
    """A schema the format cannot handle."""


# ---------------------------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------------------------


@dataclass
class Decoded:
    """Decoded value columns for the records in ``kept`` (indices into the input; None = all)."""

    arrays: list[pa.Array]
    kept: Optional[list[int]]
    errors: list[tuple[int, str]] = field(default_factory=list)  # (input index, parse error)
    skipped_nulls: int = 0


def _read_type(target: pa.DataType, timestamps_as_text: bool = False) -> pa.DataType:
    """What the bulk parsers read before casting to ``target`` (they cannot read every type directly)."""
    if pa.types.is_timestamp(target):
        if timestamps_as_text:  # the CSV reader insists on (or refuses) a zone offset per column
            return pa.string()
        return pa.timestamp("ns", tz=target.tz)  # accepts up to 9 fractional digits
    if pa.types.is_date(target) or pa.types.is_binary(target) or pa.types.is_large_binary(target):
        return pa.string()
    if pa.types.is_list(target):
        return pa.list_(pa.field(target.value_field.name, _read_type(target.value_type, timestamps_as_text), True))
    if pa.types.is_struct(target):
        return pa.struct([pa.field(f.name, _read_type(f.type, timestamps_as_text), True) for f in target])
    return target


def _finish(column: pa.Array, target: pa.DataType) -> pa.Array:
    """Cast a parsed column to the type Spark expects."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if column.type.equals(target):
        return column
    if (pa.types.is_binary(target) or pa.types.is_large_binary(target)) and pa.types.is_string(column.type):
        # Flink's JSON format writes BYTES as base64.
        return pa.array([None if v is None else base64.b64decode(v) for v in column.to_pylist()], type=target)
    if pa.types.is_timestamp(target) and pa.types.is_string(column.type):
        return parse_timestamps(column).cast(target, safe=False)
    return column.cast(target, safe=False)


_ZONE = r"([Zz]|[+-]\d\d(:?\d\d)?)$"


def parse_timestamps(text: pa.Array) -> pa.Array:
    """Strings in Flink's SQL form or ISO-8601, with or without a zone offset -> timestamp[ns, UTC].

    Values without an offset are taken as UTC (kindling's session time zone); empty strings are null.
    """
    text = pc.if_else(pc.equal(pc.utf8_trim_whitespace(text), ""), pa.scalar(None, pa.string()), text)
    zoned = pc.match_substring_regex(text, _ZONE)
    naive = pc.if_else(zoned, pa.scalar(None, pa.string()), text).cast(pa.timestamp("ns")).cast(pa.timestamp("ns", "UTC"))
    if not pc.any(zoned).as_py():
        return naive
    with_zone = pc.if_else(zoned, text, pa.scalar(None, pa.string())).cast(pa.timestamp("ns", "UTC"))
    return pc.coalesce(naive, with_zone)


def _check_supported(schema: StructType, fmt: str) -> None:
    for f in schema.fields:
        if _contains_map(f.dataType):
            raise FormatError(f"the '{fmt}' format cannot read MAP columns yet (column '{f.name}')")


def _contains_map(t: DataType) -> bool:
    if isinstance(t, MapType):
        return True
    if isinstance(t, ArrayType):
        return _contains_map(t.elementType)
    if isinstance(t, StructType):
        return any(_contains_map(f.dataType) for f in t.fields)
    return False


class ValueDecoder:
    """Bytes -> Arrow arrays for a schema of value columns."""

    def __init__(self, schema: StructType, settings: FormatSettings) -> None:
        self.schema = schema
        self.settings = settings
        self.targets = [arrow_type(f.dataType) for f in schema.fields]
        self.names = [f.name for f in schema.fields]
        if settings.name == "raw":
            if len(schema.fields) != 1 or not isinstance(schema.fields[0].dataType, (BinaryType, StringType)):
                raise FormatError(
                    "the 'raw' format needs exactly one value column of type BINARY/BYTES or STRING; got "
                    + (", ".join(f"{f.name} {f.dataType.simpleString()}" for f in schema.fields) or "none")
                )
        elif settings.name in ("json", "csv"):
            _check_supported(schema, settings.name)
            as_text = settings.name == "csv"
            self._read_schema = pa.schema(
                [pa.field(n, _read_type(t, as_text), True) for n, t in zip(self.names, self.targets)]
            )
        elif settings.name == "avro":
            from kindling.connectors.kafka.avro import AvroCodec

            try:
                self._avro = AvroCodec(schema)
            except ValueError as exc:
                raise FormatError(str(exc)) from None
        elif settings.name == "avro-confluent":
            self._avro = _confluent_codec(schema, settings)
        else:  # pragma: no cover - options validation prevents it
            raise FormatError(f"unknown format {settings.name!r}")

    # The bulk parse of a list of non-null values; raises on any bad record.
    def _parse(self, values: Sequence[bytes]) -> list[pa.Array]:
        if self.settings.name == "json":
            return self._parse_json(values)
        if self.settings.name in ("avro", "avro-confluent"):
            return self._parse_avro(values)
        return self._parse_csv(values)

    def _parse_avro(self, values: Sequence[bytes]) -> list[pa.Array]:
        try:
            return self._avro.decode(values, pa.schema([pa.field(n, t) for n, t in zip(self.names, self.targets)]))
        except (EOFError, IndexError, KeyError, TypeError, UnicodeDecodeError, OverflowError) as exc:
            raise ValueError(f"not an Avro record of the table's schema ({type(exc).__name__}: {exc})") from None

    def _parse_json(self, values: Sequence[bytes]) -> list[pa.Array]:
        import pyarrow.json as pj

        if not values:
            return [pa.array([], type=t) for t in self.targets]
        data = b"\n".join(values)
        table = pj.read_json(
            io.BytesIO(data),
            read_options=pj.ReadOptions(block_size=max(1 << 20, len(data) + 1), use_threads=False),
            parse_options=pj.ParseOptions(explicit_schema=self._read_schema, unexpected_field_behavior="ignore"),
        )
        if table.num_rows != len(values):
            # Empty values vanish and values holding several documents or newlines add rows.
            if len(values) == 1:
                raise ValueError("the value is not exactly one JSON object" if values[0].strip() else "the value is empty")
            raise ValueError("record count mismatch")
        if self.settings.fail_on_missing_field:
            self._check_missing(values)
        return [_finish(table.column(i), t) for i, t in enumerate(self.targets)]

    def _check_missing(self, values: Sequence[bytes]) -> None:
        import json

        for value in values:
            obj = json.loads(value)
            if not isinstance(obj, dict):
                raise ValueError("the value is not a JSON object")
            missing = [n for n in self.names if n not in obj]
            if missing:
                raise ValueError(f"field {missing[0]!r} is missing (json.fail-on-missing-field is true)")

    def _parse_csv(self, values: Sequence[bytes]) -> list[pa.Array]:
        import pyarrow.csv as pcsv

        if not values:
            return [pa.array([], type=t) for t in self.targets]
        data = b"\n".join(values) + b"\n"
        table = pcsv.read_csv(
            io.BytesIO(data),
            read_options=pcsv.ReadOptions(column_names=self.names, use_threads=False, block_size=max(1 << 20, len(data) + 1)),
            parse_options=pcsv.ParseOptions(delimiter=self.settings.field_delimiter, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(
                column_types={f.name: f.type for f in self._read_schema},
                strings_can_be_null=False, quoted_strings_can_be_null=False,
            ),
        )
        if table.num_rows != len(values):
            raise ValueError("the value is not exactly one CSV line" if len(values) == 1 else "record count mismatch")
        return [_finish(table.column(i), t) for i, t in enumerate(self.targets)]

    def decode(self, values: Sequence[Optional[bytes]]) -> Decoded:
        """Decode record values; bad records are reported in ``errors`` (never silently dropped)."""
        if self.settings.name == "raw":
            array = pa.array(values, type=pa.binary())
            target = self.targets[0]
            if not array.type.equals(target):
                try:
                    array = array.cast(target)
                except pa.ArrowInvalid:
                    return self._decode_raw_strings(values)
            return Decoded([array], None)
        kept: Optional[list[int]] = None
        present: Sequence[bytes] = values  # type: ignore[assignment]
        nulls = 0
        if any(v is None for v in values):
            kept = [i for i, v in enumerate(values) if v is not None]
            present = [values[i] for i in kept]  # type: ignore[misc]
            nulls = len(values) - len(kept)
        try:
            return Decoded(self._parse(present), kept, skipped_nulls=nulls)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
            pass
        # Slow path: find the bad records by bisection, parse the good ones in bulk.
        index = kept if kept is not None else list(range(len(values)))
        good: list[int] = []
        parts: list[list[pa.Array]] = []
        errors: list[tuple[int, str]] = []
        self._bisect(present, 0, len(present), good, parts, errors, index)
        arrays = [
            pa.concat_arrays([p[i] for p in parts]) if parts else pa.array([], type=t)
            for i, t in enumerate(self.targets)
        ]
        errors.sort()
        return Decoded(arrays, [index[i] for i in good], errors, nulls)

    def _bisect(self, values, lo, hi, good, parts, errors, index) -> None:
        if lo >= hi:
            return
        chunk = values[lo:hi]
        try:
            if hi - lo == 1:
                parsed = self._parse_one(chunk[0])
            else:
                parsed = self._parse(chunk)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as exc:
            if hi - lo == 1:
                errors.append((index[lo], _short(exc)))
                return
            mid = (lo + hi) // 2
            self._bisect(values, lo, mid, good, parts, errors, index)
            self._bisect(values, mid, hi, good, parts, errors, index)
            return
        good.extend(range(lo, hi))
        parts.append(parsed)

    def _parse_one(self, value: bytes) -> list[pa.Array]:
        if not value.strip():
            raise ValueError("the value is empty")
        if self.settings.name == "json" and (b"\n" in value or b"\r" in value):
            value = value.replace(b"\r", b" ").replace(b"\n", b" ")  # a pretty-printed object is fine
        return self._parse([value])

    def _decode_raw_strings(self, values: Sequence[Optional[bytes]]) -> Decoded:
        kept, out, errors = [], [], []
        for i, v in enumerate(values):
            try:
                out.append(None if v is None else v.decode("utf-8"))
                kept.append(i)
            except UnicodeDecodeError as exc:
                errors.append((i, f"not valid UTF-8 ({exc.reason} at byte {exc.start})"))
        return Decoded([pa.array(out, type=pa.string())], kept, errors)


def _confluent_codec(schema: StructType, settings: FormatSettings):
    """The ``avro-confluent`` codec; it reaches the registry only when it first encodes or decodes."""
    from kindling.connectors.kafka.confluent import ConfluentAvroCodec

    if settings.registry is None:
        raise FormatError("the 'avro-confluent' format needs the schema registry options ('avro-confluent.url')")
    try:
        return ConfluentAvroCodec(schema, settings.registry)
    except FormatError:
        raise
    except ValueError as exc:
        raise FormatError(str(exc)) from None


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


# ---------------------------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------------------------


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
        text = _json_strings(column.cast(pa.string()))
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


def _json_strings(column: pa.Array) -> pa.Array:
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
            from kindling.connectors.kafka.avro import AvroCodec

            if schema is None:
                raise FormatError("the 'avro' format needs the columns' types")
            try:
                self._avro = AvroCodec(StructType([schema[n] for n in self.names]))
            except ValueError as exc:
                raise FormatError(str(exc)) from None
        elif settings.name == "avro-confluent":
            if schema is None:
                raise FormatError("the 'avro-confluent' format needs the columns' types")
            self._avro = _confluent_codec(StructType([schema[n] for n in self.names]), settings)
        if settings.name == "raw" and len(self.names) != 1:
            raise FormatError(
                "the 'raw' format writes exactly one column (BINARY or STRING); got " + ", ".join(self.names)
            )

    def encode(self, batch: pa.RecordBatch) -> list[Optional[bytes]]:
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
                return fast
            return self._encode_json_rows(columns)
        return self._encode_csv(columns)

    def _encode_json_rows(self, columns: list[pa.Array]) -> list[Optional[bytes]]:
        """The general JSON path: one ``orjson.dumps`` per row (any type, nested ones included)."""
        std = self.settings.timestamp_standard
        prepared = [_jsonable(c, std) for c in columns]
        table = pa.Table.from_arrays(prepared, names=self.names)
        dumps = self._dumps
        return [dumps(row) for row in table.to_pylist(maps_as_pydicts="lossy")]

    def _encode_json_columns(self, columns: list[pa.Array]) -> Optional[list[bytes]]:
        """The JSON objects built column-wise with Arrow compute, byte for byte what
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
        return joined.cast(pa.binary()).to_pylist()

    def _encode_csv(self, columns: list[pa.Array]) -> list[Optional[bytes]]:
        import pyarrow.csv as pcsv

        prepared = [
            _timestamp_strings(c, "SQL") if pa.types.is_timestamp(c.type) else c for c in columns
        ]
        table = pa.Table.from_arrays(prepared, names=self.names)
        if table.num_rows == 0:
            return []
        has_newlines = any(
            (pa.types.is_string(c.type) or pa.types.is_large_string(c.type))
            and pc.any(pc.match_substring_regex(c, r"[\r\n]")).as_py()
            for c in prepared
        )
        options = pcsv.WriteOptions(include_header=False, delimiter=self.settings.field_delimiter, quoting_style="needed")
        if not has_newlines:
            sink = io.BytesIO()
            pcsv.write_csv(table, sink, write_options=options)
            lines = sink.getvalue().split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            if len(lines) == table.num_rows:
                return [line.rstrip(b"\r") for line in lines]
        out = []
        for i in range(table.num_rows):
            sink = io.BytesIO()
            pcsv.write_csv(table.slice(i, 1), sink, write_options=options)
            out.append(sink.getvalue().rstrip(b"\n"))
        return out


def value_columns(schema: StructType, metadata_columns: Sequence[str], hidden: Sequence[str] = ()) -> StructType:
    """The columns of a source schema that come from the record value (not metadata, not internal)."""
    skip = set(metadata_columns) | set(hidden)
    return StructType([f for f in schema.fields if f.name not in skip])


__all__ = ["Decoded", "FormatError", "RowEncoder", "ValueDecoder", "arrow_type", "value_columns"]

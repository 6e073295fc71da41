"""Decoding: record bytes -> Arrow columns, in bulk, for every connector that reads records.

* ``json``: the values are joined with newlines and parsed at once by ``pyarrow.json`` with an
  explicit schema (fields not in the schema are ignored, missing ones are null). TIMESTAMP columns
  accept Flink's SQL form ``2026-11-22 01:02:03.123`` and ISO-8601 (``T``, ``Z``, offsets), up to
  nanosecond fractions (kept to microseconds). When the bulk parse fails, the batch is bisected to
  find the bad records, so good records still parse in bulk.
* ``csv``: the same, with ``pyarrow.csv`` (no header; columns in schema order; a record may end with one
  line delimiter, as the DataStream API's CsvRowSerializationSchema writes them).
* ``raw``: the value bytes as a single BINARY or STRING column.
* ``avro`` and ``avro-confluent``: see :mod:`kindling.formats.avro` and :mod:`kindling.formats.avro_confluent`.

Null values (tombstones) are skipped by ``json`` and ``csv``, as Flink does.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from typing import Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import ArrayType, BinaryType, DataType, MapType, StringType, StructType

from kindling.formats.avro_confluent import confluent_codec
from kindling.formats.settings import FormatError, FormatSettings, arrow_type

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
    # Changelog formats: each row's kind ('+I', '-U', '+U', '-D'); one record may give several rows,
    # so ``kept`` may name an input index more than once.
    kinds: Optional[pa.Array] = None


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


def epoch_millis(column: pa.Array, unit_ms: int = 1, offset_ms: int = 0) -> pa.Array:
    """An event-time column as epoch milliseconds (int64; null where a value has no time).

    TIMESTAMP and DATE columns convert; integers count ``unit_ms`` milliseconds each (1: a BIGINT of
    epoch millis, 1000: epoch seconds); strings are parsed as :func:`parse_timestamps` does; then
    ``offset_ms`` is added (a rowtime computed as ``column + INTERVAL ...``). Sources read their records'
    event time with it on the driver, to keep a watermark per split."""
    millis = _epoch_millis(column, unit_ms)
    return pc.add(millis, offset_ms) if offset_ms else millis


def _epoch_millis(column: pa.Array, unit_ms: int) -> pa.Array:
    if pa.types.is_timestamp(column.type):
        return pc.cast(column.cast(pa.timestamp("ms", tz=column.type.tz)), pa.int64())
    if pa.types.is_integer(column.type):
        integers = column.cast(pa.int64())
        return pc.multiply(integers, unit_ms) if unit_ms != 1 else integers
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return _epoch_millis(parse_timestamps(column.cast(pa.string())), 1)
    if pa.types.is_date(column.type):
        return _epoch_millis(column.cast(pa.timestamp("ms")), 1)
    return pa.nulls(len(column), pa.int64())


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
            from kindling.formats.avro import AvroCodec

            try:
                self._avro = AvroCodec(schema, writer_schema=settings.avro_schema)
            except ValueError as exc:
                raise FormatError(str(exc)) from None
        elif settings.name == "avro-confluent":
            self._avro = confluent_codec(schema, settings)
        elif settings.is_changelog:
            from kindling.formats.changelog import ChangelogDecoder

            rows = ValueDecoder(schema, FormatSettings("json", timestamp_standard=settings.timestamp_standard))
            self._changelog = ChangelogDecoder(schema, settings.changelog, rows)
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
        # A record may end with its line delimiter (the DataStream API's CsvRowSerializationSchema writes '\n').
        values = [v[:-2] if v.endswith(b"\r\n") else v[:-1] if v.endswith((b"\n", b"\r")) else v for v in values]
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
        if self.settings.is_changelog:
            return self._changelog.decode(values)
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


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


def value_columns(schema: StructType, metadata_columns: Sequence[str], hidden: Sequence[str] = ()) -> StructType:
    """The columns of a source schema that come from the record value (not metadata, not internal)."""
    skip = set(metadata_columns) | set(hidden)
    return StructType([f for f in schema.fields if f.name not in skip])


__all__ = ["Decoded", "ValueDecoder", "parse_timestamps", "value_columns"]

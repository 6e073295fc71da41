"""Flink's ``datagen`` source: generated rows at a steady rate, random or sequential, bounded or not.

Options (Flink names and defaults):

- ``rows-per-second`` (default 10000): the rate. Offsets are row counts; each micro-batch
  admits the rows that "arrived" since the source started (like Flink's throttler), so
  the rate does not depend on the trigger interval. After a restart from a checkpoint
  the clock starts again at the checkpointed offset: there is no catch-up burst.
- ``number-of-rows``: total rows; makes the source bounded.
- ``fields.<f>.kind``: ``random`` (default) or ``sequence``.
  ``sequence`` needs ``fields.<f>.start`` and ``fields.<f>.end``; the source is bounded by
  its shortest sequence, as in Flink. ``random`` takes ``fields.<f>.min``/``max`` for
  numbers, ``fields.<f>.length`` (default 100) and ``fields.<f>.var-len`` for strings
  and ``fields.<f>.max-past`` for timestamps (random instants in ``[now - max-past, now]``).
- ``fields.<f>.null-rate`` (0..1, default 0): the share of nulls.
- ``scan.parallelism``: at most this many Spark partitions per micro-batch (default: the
  driver's core count; the kindling runtime may pass ``parallelism.default``). Ranges are
  split into partitions of at least 16k rows, so small batches stay in one task.
- ``kindling.seed`` (kindling's own): the seed of the random fields.

Differences from Flink, all deliberate:

- Rows are a pure function of their index (and, for timestamps, of the batch's offsets), so
  a batch Spark replays from its checkpoint is identical. "now" for random timestamps is the
  admission time of the row, interpolated between the batch's start and end offsets.
- Random strings are lowercase hexadecimal, as Flink's ``nextHexString``.
- With ``Trigger.AvailableNow`` a bounded source reads to its end (still at the rate) and an
  unbounded one reads nothing: no rows exist yet when the trigger starts.

A bounded source ends with one end-of-input marker row (``EOS_COLUMN`` true, every other
column null) in the batch whose range reaches the end; that batch's end offset carries
``{"eos": true}`` and no later batch has any rows.
"""

from __future__ import annotations

import math
import os
import time
import zlib
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    CharType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

from kindling.arrow import arrow_schema
from kindling.connectors.base import EOS_COLUMN, EOS_OFFSET_KEY, INTERNAL_PREFIX, Connector, end_of_input_batch, spark_format
from kindling.connectors.bounded_read import BoundedReads
from kindling.durations import parse_duration
from kindling.options import OptionError, OptionSet, ParsedOptions, int_option

ROWS_PER_SECOND = int_option("rows-per-second", 10000, "Rows generated per second.", minimum=1)
NUMBER_OF_ROWS = int_option("number-of-rows", None, "Total rows to generate; unset means unbounded.", minimum=0)
SCAN_PARALLELISM = int_option("scan.parallelism", None, "At most this many Spark partitions per micro-batch (default: the driver's cores).",
                              minimum=1)
SEED = int_option("kindling.seed", None, "Seed of the random fields (kindling's own option).")

FIELDS_PREFIX = "fields."
KINDS = ("random", "sequence")
FIELD_PROPERTIES = ("kind", "start", "end", "min", "max", "length", "var-len", "max-past", "null-rate")

SOURCE_OPTIONS = OptionSet(
    "datagen",
    (ROWS_PER_SECOND, NUMBER_OF_ROWS, SCAN_PARALLELISM, SEED),
    prefixes=(FIELDS_PREFIX,),
)

# Rows per Arrow batch a reader yields, and the fewest rows worth a partition of their own.
BATCH_ROWS = 65536
MIN_PARTITION_ROWS = 16384
DEFAULT_SEED = 0x6B696E646C696E67  # "kindling"
DEFAULT_STRING_LENGTH = 100

_INT_RANGES = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
}
_FLOAT_RANGES = {  # Flink's defaults: [MIN_VALUE, MAX_VALUE]
    "FLOAT": (float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).max)),
    "DOUBLE": (5e-324, float(np.finfo(np.float64).max)),
}


# ---------------------------------------------------------------------------------------------
# Options of one field


def _field_option_key(name: str, prop: str) -> str:
    return f"{FIELDS_PREFIX}{name}.{prop}"


def split_field_options(extra: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """``fields.<f>.<prop>`` options grouped by field name (as spelt) and property; unknown properties are errors."""
    fields: dict[str, dict[str, str]] = {}
    for key, value in extra.items():
        if not key.lower().startswith(FIELDS_PREFIX):
            continue
        rest = key[len(FIELDS_PREFIX):]
        name, dot, prop = rest.rpartition(".")
        prop = prop.lower()
        if not dot or not name or prop not in FIELD_PROPERTIES:
            raise OptionError(
                f"unknown datagen option '{key}': field options are 'fields.<field>.<property>' with property one of "
                + ", ".join(FIELD_PROPERTIES)
            )
        fields.setdefault(name, {})[prop] = str(value)
    return fields


def _number(key: str, raw: str) -> Decimal:
    try:
        value = Decimal(str(raw).strip())
    except InvalidOperation:
        raise OptionError(f"datagen option '{key}' has value {raw!r}: expected a number") from None
    if not value.is_finite():
        raise OptionError(f"datagen option '{key}' has value {raw!r}: expected a finite number")
    return value


def check_field_options(name: str, props: Mapping[str, str]) -> None:
    """Checks that need no schema: the kind, numbers that parse, start/end for sequences, min <= max."""
    kind = props.get("kind", "random").strip().lower()
    if kind not in KINDS:
        raise OptionError(
            f"datagen option '{_field_option_key(name, 'kind')}' has value {props['kind']!r}; allowed values: 'random', 'sequence'"
        )
    for prop in ("start", "end", "min", "max"):
        if prop in props:
            _number(_field_option_key(name, prop), props[prop])
    if kind == "sequence":
        missing = [p for p in ("start", "end") if p not in props]
        if missing:
            raise OptionError(
                f"datagen field '{name}' is a sequence and needs "
                + " and ".join(f"'{_field_option_key(name, p)}'" for p in missing)
            )
        start, end = (_number(_field_option_key(name, p), props[p]) for p in ("start", "end"))
        if start > end:
            raise OptionError(
                f"datagen options '{_field_option_key(name, 'start')}' ({props['start']}) must not be greater than "
                f"'{_field_option_key(name, 'end')}' ({props['end']})"
            )
        for prop in ("min", "max", "length", "var-len", "max-past"):
            if prop in props:
                raise OptionError(
                    f"datagen option '{_field_option_key(name, prop)}' applies to random fields, but field '{name}' is a sequence"
                )
    else:
        for prop in ("start", "end"):
            if prop in props:
                raise OptionError(
                    f"datagen option '{_field_option_key(name, prop)}' applies to sequence fields; "
                    f"set '{_field_option_key(name, 'kind')}' = 'sequence' or use min/max"
                )
        if "min" in props and "max" in props:
            lo, hi = _number(_field_option_key(name, "min"), props["min"]), _number(_field_option_key(name, "max"), props["max"])
            if lo > hi:
                raise OptionError(
                    f"datagen option '{_field_option_key(name, 'min')}' ({props['min']}) must not be greater than "
                    f"'{_field_option_key(name, 'max')}' ({props['max']})"
                )
    if "length" in props:
        key = _field_option_key(name, "length")
        try:
            length = int(props["length"].strip())
        except ValueError:
            raise OptionError(f"datagen option '{key}' has value {props['length']!r}: expected an integer") from None
        if length < 1:
            raise OptionError(f"datagen option '{key}' has value {props['length']!r}: must be at least 1")
    if "var-len" in props and props["var-len"].strip().lower() not in ("true", "false"):
        raise OptionError(f"datagen option '{_field_option_key(name, 'var-len')}' has value {props['var-len']!r}: expected true or false")
    if "max-past" in props:
        try:
            parse_duration(props["max-past"], name=_field_option_key(name, "max-past"))
        except ValueError as exc:
            raise OptionError(f"datagen option: {exc}") from None
    if "null-rate" in props:
        key = _field_option_key(name, "null-rate")
        try:
            rate = float(props["null-rate"])
        except ValueError:
            raise OptionError(f"datagen option '{key}' has value {props['null-rate']!r}: expected a number between 0 and 1") from None
        if not 0.0 <= rate <= 1.0:
            raise OptionError(f"datagen option '{key}' has value {props['null-rate']!r}: must be between 0 and 1")


def _type_name(dt: DataType) -> str:
    if isinstance(dt, ByteType):
        return "TINYINT"
    if isinstance(dt, ShortType):
        return "SMALLINT"
    if isinstance(dt, IntegerType):
        return "INT"
    if isinstance(dt, LongType):
        return "BIGINT"
    if isinstance(dt, FloatType):
        return "FLOAT"
    if isinstance(dt, DoubleType):
        return "DOUBLE"
    if isinstance(dt, DecimalType):
        return "DECIMAL"
    if isinstance(dt, (StringType, VarcharType, CharType)):
        return "STRING"
    if isinstance(dt, BooleanType):
        return "BOOLEAN"
    if isinstance(dt, (TimestampType, TimestampNTZType)):
        return "TIMESTAMP"
    return dt.simpleString().upper()


_SUPPORTED = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "STRING", "BOOLEAN", "TIMESTAMP")
_SEQUENCE_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "STRING")
_PROPS_BY_TYPE = {
    "min": ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"),
    "max": ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"),
    "length": ("STRING",),
    "var-len": ("STRING",),
    "max-past": ("TIMESTAMP",),
}


def _varchar_length(field) -> Optional[int]:
    """VARCHAR(n)/CHAR(n) length, from the type or from the metadata Spark keeps when it maps them to STRING."""
    dt = field.dataType
    if isinstance(dt, (VarcharType, CharType)):
        return dt.length
    raw = (field.metadata or {}).get("__CHAR_VARCHAR_TYPE_STRING")
    if isinstance(raw, str) and "(" in raw:
        try:
            return int(raw[raw.index("(") + 1 : raw.index(")")])
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class FieldSpec:
    """How one column is generated, fully resolved against its type."""

    name: str
    type_name: str
    kind: str
    key: int  # this field's random stream
    start: int = 0  # sequences: first value (unscaled for DECIMAL)
    count: int = 0  # sequences: number of values
    low: Any = None  # random: smallest value (unscaled int for DECIMAL)
    high: Any = None
    length: int = DEFAULT_STRING_LENGTH
    var_len: bool = False
    max_past_us: int = 0
    null_rate: float = 0.0
    precision: int = 0
    scale: int = 0


def _mix64(*parts: int) -> int:
    """A 64-bit key from integers (splitmix64 chain), for per-field random streams."""
    z = 0
    for part in parts:
        z = (z ^ (part & 0xFFFFFFFFFFFFFFFF)) + 0x9E3779B97F4A7C15 & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        z = z ^ (z >> 31)
    return z


def resolve_fields(schema: StructType, options: ParsedOptions) -> list[FieldSpec]:
    """Resolve the ``fields.*`` options against the schema; every mistake is an error naming the option."""
    by_name = split_field_options(options.extra)
    columns = {f.name.lower(): f for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)}
    for name, props in by_name.items():
        check_field_options(name, props)
        if name.lower() not in columns:
            first = next(iter(props))
            raise OptionError(
                f"datagen option '{_field_option_key(name, first)}' names field '{name}', which is not in the schema "
                f"(fields: {', '.join(f.name for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX))})"
            )
    lowered = {name.lower(): props for name, props in by_name.items()}
    seed = options.get("kindling.seed", DEFAULT_SEED)
    specs = []
    for field in schema.fields:
        if field.name.startswith(INTERNAL_PREFIX):
            continue
        props = lowered.get(field.name.lower(), {})
        specs.append(_resolve_field(field, props, seed))
    return specs


def _resolve_field(field, props: Mapping[str, str], seed: int) -> FieldSpec:
    name, dt = field.name, field.dataType
    type_name = _type_name(dt)
    kind = props.get("kind", "random").strip().lower()
    if type_name not in _SUPPORTED:
        raise OptionError(
            f"datagen cannot generate field '{name}' of type {type_name}; supported types: " + ", ".join(_SUPPORTED)
        )
    key = _mix64(seed, zlib.crc32(name.lower().encode()))
    null_rate = float(props.get("null-rate", 0.0))
    for prop, types in _PROPS_BY_TYPE.items():
        if prop in props and type_name not in types:
            raise OptionError(
                f"datagen option '{_field_option_key(name, prop)}' does not apply to field '{name}' of type {type_name}"
            )
    precision = scale = 0
    if type_name == "DECIMAL":
        precision, scale = dt.precision, dt.scale
        if precision > 18:
            raise OptionError(f"datagen generates DECIMAL with precision up to 18; field '{name}' is DECIMAL({precision}, {scale})")
    if kind == "sequence":
        if type_name not in _SEQUENCE_TYPES:
            raise OptionError(
                f"datagen option '{_field_option_key(name, 'kind')}' = 'sequence' is not supported for field '{name}' "
                f"of type {type_name}; sequences are numbers or strings"
            )
        start = _number(_field_option_key(name, "start"), props["start"])
        end = _number(_field_option_key(name, "end"), props["end"])
        if start != start.to_integral_value() or end != end.to_integral_value():
            if type_name != "DECIMAL":
                raise OptionError(
                    f"datagen options '{_field_option_key(name, 'start')}' and '{_field_option_key(name, 'end')}' must be integers "
                    f"(got {props['start']} and {props['end']})"
                )
        factor = Decimal(10) ** scale
        lo_u, hi_u = (int(start * factor), int(end * factor)) if type_name == "DECIMAL" else (int(start), int(end))
        if type_name in _INT_RANGES:
            lo_t, hi_t = _INT_RANGES[type_name]
            if lo_u < lo_t or hi_u > hi_t:
                raise OptionError(
                    f"datagen sequence {props['start']}..{props['end']} of field '{name}' does not fit its type {type_name}"
                )
        if type_name == "DECIMAL" and max(abs(lo_u), abs(hi_u)) >= 10**precision:
            raise OptionError(f"datagen sequence {props['start']}..{props['end']} of field '{name}' does not fit DECIMAL({precision}, {scale})")
        # DECIMAL sequences step by 1 (not by one unit of the last digit), as in Flink.
        step = int(factor) if type_name == "DECIMAL" else 1
        count = (hi_u - lo_u) // step + 1
        return FieldSpec(name, type_name, kind, key, start=lo_u, count=count, null_rate=null_rate, precision=precision, scale=scale)
    low = high = None
    if type_name in _INT_RANGES:
        low, high = _INT_RANGES[type_name]
        if "min" in props:
            low = _int_bound(name, "min", props["min"], type_name)
        if "max" in props:
            high = _int_bound(name, "max", props["max"], type_name)
    elif type_name in _FLOAT_RANGES:
        low, high = _FLOAT_RANGES[type_name]
        if "min" in props:
            low = float(props["min"])
        if "max" in props:
            high = float(props["max"])
    elif type_name == "DECIMAL":
        factor = Decimal(10) ** scale
        limit = 10**precision - 1
        low, high = -limit, limit
        if "min" in props:
            low = int(_number(_field_option_key(name, "min"), props["min"]) * factor)
        if "max" in props:
            high = int(_number(_field_option_key(name, "max"), props["max"]) * factor)
        if max(abs(low), abs(high)) > limit:
            raise OptionError(f"datagen min/max of field '{name}' do not fit DECIMAL({precision}, {scale})")
    if low is not None and low > high:
        raise OptionError(
            f"datagen option '{_field_option_key(name, 'min')}' ({props.get('min', low)}) must not be greater than "
            f"'{_field_option_key(name, 'max')}' ({props.get('max', high)})"
        )
    length = int(props.get("length", DEFAULT_STRING_LENGTH))
    if "length" not in props and type_name == "STRING":
        declared = _varchar_length(field)
        if declared:
            length = min(length, declared)
    var_len = props.get("var-len", "false").strip().lower() == "true"
    max_past = parse_duration(props["max-past"], name=_field_option_key(name, "max-past")) if "max-past" in props else timedelta(0)
    max_past_us = int(max_past / timedelta(microseconds=1))
    return FieldSpec(
        name, type_name, kind, key, low=low, high=high, length=length, var_len=var_len,
        max_past_us=max_past_us, null_rate=null_rate, precision=precision, scale=scale,
    )


def _int_bound(name: str, prop: str, raw: str, type_name: str) -> int:
    key = _field_option_key(name, prop)
    value = _number(key, raw)
    if value != value.to_integral_value():
        raise OptionError(f"datagen option '{key}' has value {raw!r}: field '{name}' is {type_name}, expected an integer")
    lo, hi = _INT_RANGES[type_name]
    if not lo <= int(value) <= hi:
        raise OptionError(f"datagen option '{key}' has value {raw!r}: out of range for {type_name} ({lo}..{hi})")
    return int(value)


def total_rows(options: ParsedOptions, fields: Sequence[FieldSpec] = ()) -> Optional[int]:
    """Rows a bounded source produces (the least of number-of-rows and every sequence's length), else None."""
    limits = [f.count for f in fields if f.kind == "sequence"]
    if not fields:  # without a schema, sequence lengths still follow from start/end
        for name, props in split_field_options(options.extra).items():
            if props.get("kind", "random").strip().lower() == "sequence" and "start" in props and "end" in props:
                limits.append(int(_number(name, props["end"]) - _number(name, props["start"])) + 1)
    if options.get("number-of-rows") is not None:
        limits.append(options["number-of-rows"])
    return min(limits) if limits else None


# ---------------------------------------------------------------------------------------------
# Vectorised generation: every value is a pure function of (field key, row index)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


def _hash(index: np.ndarray, key: int) -> np.ndarray:
    """splitmix64 of (row index, key): 64 well-mixed random bits per row."""
    with np.errstate(over="ignore"):
        z = index.astype(np.uint64) * _GOLDEN ^ np.uint64(key)
        z = z + _GOLDEN
        z = (z ^ (z >> _S30)) * _M1
        z = (z ^ (z >> _S27)) * _M2
        return z ^ (z >> _S31)


def _uniform(index: np.ndarray, key: int) -> np.ndarray:
    """Doubles in [0, 1)."""
    return (_hash(index, key) >> _S11).astype(np.float64) * (1.0 / 9007199254740992.0)


def _int_between(index: np.ndarray, key: int, low: int, high: int) -> np.ndarray:
    """int64 values uniform in [low, high] (two's complement arithmetic, so any int64 range works)."""
    h = _hash(index, key)
    span = high - low + 1
    if span >= 2**64:
        return h.view(np.int64)
    with np.errstate(over="ignore"):
        return (np.uint64(low & 0xFFFFFFFFFFFFFFFF) + h % np.uint64(span)).view(np.int64)


_ARROW_INT = {"TINYINT": (np.int8, pa.int8()), "SMALLINT": (np.int16, pa.int16()), "INT": (np.int32, pa.int32()), "BIGINT": (np.int64, pa.int64())}
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_NULL_STREAM, _LENGTH_STREAM, _STRING_STREAM = 0x4E554C4C, 0x4C454E47, 0x53545247


def _strings(index: np.ndarray, spec: FieldSpec) -> pa.Array:
    n, length = len(index), spec.length
    words = -(-length // 16)
    # one 64-bit hash per 16 hex characters: rows x words hashes -> rows x (16 * words) nibbles
    wide = index.astype(np.uint64)[:, None] * np.uint64(words) + np.arange(words, dtype=np.uint64)[None, :]
    h = _hash(wide, _mix64(spec.key, _STRING_STREAM)).astype("<u8")
    raw = h.view(np.uint8).reshape(n, words * 8)
    nibbles = np.empty((n, words * 16), dtype=np.uint8)
    nibbles[:, 0::2] = raw >> 4
    nibbles[:, 1::2] = raw & 0x0F
    chars = _HEX[nibbles[:, :length]]
    if spec.var_len:
        lengths = (_hash(index, _mix64(spec.key, _LENGTH_STREAM)) % np.uint64(length)).astype(np.int64) + 1
        keep = np.arange(length)[None, :] < lengths[:, None]
        data = chars[keep]
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(lengths, out=offsets[1:])
    else:
        data = chars.reshape(-1)
        offsets = np.arange(0, (n + 1) * length, length, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data))])


def _decimal_array(unscaled: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    """decimal128 from int64 unscaled values (16-byte little-endian two's complement)."""
    wide = np.empty((len(unscaled), 2), dtype="<i8")
    wide[:, 0] = unscaled
    wide[:, 1] = unscaled >> 63
    return pa.Array.from_buffers(arrow_type, len(unscaled), [None, pa.py_buffer(wide)])


def _with_nulls(array: pa.Array, null_mask: np.ndarray) -> pa.Array:
    if not null_mask.any():
        return array
    validity = np.packbits(~null_mask, bitorder="little")
    return pa.Array.from_buffers(
        array.type, len(array), [pa.py_buffer(validity)] + array.buffers()[1:], null_count=int(null_mask.sum())
    )


def generate_column(spec: FieldSpec, index: np.ndarray, now_us: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    """One column's values for absolute row indices ``index`` (int64); ``now_us`` is each row's admission time."""
    t = spec.type_name
    if spec.kind == "sequence":
        offset = index if spec.type_name != "DECIMAL" else index * (10**spec.scale)
        values = np.int64(spec.start) + offset
        if t in _ARROW_INT:
            array = pa.array(values.astype(_ARROW_INT[t][0]), type=arrow_type)
        elif t in ("FLOAT", "DOUBLE"):
            array = pa.array(values.astype(np.float32 if t == "FLOAT" else np.float64), type=arrow_type)
        elif t == "DECIMAL":
            array = _decimal_array(values, arrow_type)
        else:  # STRING
            array = pa.array(values, type=pa.int64()).cast(pa.string())
    elif t in _ARROW_INT:
        array = pa.array(_int_between(index, spec.key, spec.low, spec.high).astype(_ARROW_INT[t][0]), type=arrow_type)
    elif t in ("FLOAT", "DOUBLE"):
        u = _uniform(index, spec.key)
        values = spec.low * (1.0 - u) + spec.high * u
        if t == "FLOAT":
            values = np.clip(values, spec.low, spec.high).astype(np.float32)
        array = pa.array(values, type=arrow_type)
    elif t == "DECIMAL":
        array = _decimal_array(_int_between(index, spec.key, spec.low, spec.high), arrow_type)
    elif t == "BOOLEAN":
        array = pa.array((_hash(index, spec.key) & np.uint64(1)).astype(bool), type=arrow_type)
    elif t == "TIMESTAMP":
        past = _int_between(index, spec.key, 0, spec.max_past_us) if spec.max_past_us else 0
        array = pa.array(now_us - past, type=pa.int64()).view(arrow_type)
    else:  # STRING
        array = _strings(index, spec)
    if spec.null_rate > 0:
        array = _with_nulls(array, _uniform(index, _mix64(spec.key, _NULL_STREAM)) < spec.null_rate)
    return array


# ---------------------------------------------------------------------------------------------
# The Spark Data Source


@dataclass
class DatagenPartition(InputPartition):
    """Rows ``[start, end)``; ``start_us``/``end_us`` are the admission times of the range's ends."""

    start: int
    end: int
    start_us: int
    end_us: int
    range_start: int
    range_end: int
    eos: bool = False


class DatagenStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are ``{"rows": n, "ts": admitted-at-ms}`` (plus ``"eos": true`` at the end of a bounded source)."""

    def __init__(self, schema: StructType, options: Mapping[str, str], *, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep) -> None:
        self.schema = schema
        self.parsed = SOURCE_OPTIONS.validate(dict(options))
        self.fields = resolve_fields(schema, self.parsed)
        self.rows_per_second = self.parsed["rows-per-second"]
        self.total = total_rows(self.parsed, self.fields)
        self.parallelism = self.parsed.get("scan.parallelism") or max(1, os.cpu_count() or 1)
        self._clock, self._wall_clock, self._sleep = clock, wall_clock, sleep
        # The admission clock, set by the first latestOffset call on the driver (never on executors).
        self._clock_start: Optional[float] = None
        self._clock_base = 0
        self._available_now = False
        self._unthrottled = False
        self._target: Optional[int] = None

    # -- admission (driver) ------------------------------------------------------------------

    def initialOffset(self) -> dict:
        return {"rows": 0}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = True

    def prepareForBatch(self) -> None:
        """Batch mode (one Spark batch of a bounded source): every row at once; a final result does not depend on the rate."""
        self._unthrottled = True

    def available(self, start_rows: int) -> int:
        """Rows admitted so far: the row count at the clock's start plus the rate times the elapsed time."""
        if self._unthrottled and self.total is not None:
            return self.total
        now = self._clock()
        if self._clock_start is None:
            self._clock_start, self._clock_base = now, start_rows
        return self._clock_base + int((now - self._clock_start) * self.rows_per_second)

    def latestOffset(self, start: dict, limit: ReadLimit = ReadAllAvailable()) -> dict:
        if start.get(EOS_OFFSET_KEY):
            return start
        rows = int(start["rows"])
        if self._available_now and self._target is None:
            # Trigger.AvailableNow: a bounded source has all its rows; an unbounded one none yet.
            self._target = self.total if self.total is not None else rows
        end = self._admit(rows, limit)
        if self._available_now and end == rows and rows < self._target:
            # Spark ends an AvailableNow query at the first empty batch: wait for the next row.
            needed = self._clock_start + (rows + 1 - self._clock_base) / self.rows_per_second
            self._sleep(max(0.0, needed - self._clock()))
            end = self._admit(rows, limit)
        eos = self.total is not None and end >= self.total
        if end == rows and not eos:
            return start
        offset = {"rows": end, "ts": int(self._wall_clock() * 1000)}
        if eos:
            offset[EOS_OFFSET_KEY] = True
        return offset

    def _admit(self, rows: int, limit: ReadLimit) -> int:
        end = max(rows, self.available(rows))
        if self.total is not None:
            end = min(end, self.total)
        if self._target is not None:
            end = min(end, max(rows, self._target))
        if isinstance(limit, ReadMaxRows):
            end = min(end, rows + max(0, int(limit.max_rows)))
        return end

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        first, last = int(start["rows"]), int(end["rows"])
        eos = bool(end.get(EOS_OFFSET_KEY)) and not start.get(EOS_OFFSET_KEY)
        count = last - first
        if count <= 0 and not eos:
            return []
        end_us = int(end.get("ts", 0)) * 1000
        start_us = int(start["ts"]) * 1000 if "ts" in start else end_us - int(count * 1_000_000 / self.rows_per_second)
        parts = max(1, min(self.parallelism, math.ceil(count / MIN_PARTITION_ROWS)))
        bounds = [first + (count * i) // parts for i in range(parts + 1)]
        return [
            DatagenPartition(bounds[i], bounds[i + 1], start_us, end_us, first, last, eos=eos and i == parts - 1)
            for i in range(parts)
        ]

    # -- reading (executors) -----------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, DatagenPartition)
        target = arrow_schema(self.schema)
        specs = {spec.name: spec for spec in self.fields}
        span = max(1, partition.range_end - partition.range_start)
        per_row_us = (partition.end_us - partition.start_us) / span
        for chunk in range(partition.start, partition.end, BATCH_ROWS):
            index = np.arange(chunk, min(chunk + BATCH_ROWS, partition.end), dtype=np.int64)
            now_us = partition.start_us + ((index - partition.range_start + 1) * per_row_us).astype(np.int64)
            columns = []
            for field in target:
                if field.name == EOS_COLUMN:
                    columns.append(pa.array(np.zeros(len(index), dtype=bool), type=field.type))
                elif field.name in specs:
                    columns.append(generate_column(specs[field.name], index, now_us, field.type))
                else:
                    columns.append(pa.nulls(len(index), field.type))
            yield pa.RecordBatch.from_arrays(columns, schema=target)
        if partition.eos and EOS_COLUMN in target.names:
            yield end_of_input_batch(target)


class DatagenDataSource(BoundedReads, DataSource):
    """Spark Data Source ``kindling_datagen``; needs a schema (``.schema(with_eos(user_schema))``)."""

    @classmethod
    def name(cls) -> str:
        return spark_format("datagen")

    def schema(self):
        raise OptionError("the datagen source needs a schema: pass the columns to generate with .schema(...)")

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return DatagenStreamReader(schema, self.options)


class DatagenConnector(Connector):
    name = "datagen"
    data_source = DatagenDataSource
    source_options = SOURCE_OPTIONS

    @classmethod
    def validate_source(cls, options: Mapping[str, Any]) -> ParsedOptions:
        parsed = super().validate_source(options)
        for name, props in split_field_options(parsed.extra).items():
            check_field_options(name, props)
        return parsed

    @classmethod
    def validate_fields(cls, options: Mapping[str, Any], schema: StructType) -> list[FieldSpec]:
        """The schema-dependent checks (unknown fields, options that do not fit a type), on the driver."""
        return resolve_fields(schema, cls.validate_source(options))

    @classmethod
    def is_bounded(cls, options: ParsedOptions) -> bool:
        if options.get("number-of-rows") is not None:
            return True
        return any(
            props.get("kind", "random").strip().lower() == "sequence"
            for props in split_field_options(options.extra).values()
        )


CONNECTOR = DatagenConnector

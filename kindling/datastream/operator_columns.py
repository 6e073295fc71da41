"""How a keyed operator's keys and record fields travel to its Python worker: top-level columns, read back exactly.

Spark hands ``transformWithStateInPandas`` each batch as pandas columns. A struct column arrives as one
Python dict per row, which costs more than everything else the operator does with a record; a top-level
column arrives as a numpy array that ``tolist()`` turns into Python values at C speed. But pandas has no
null for an integer (a column with a null becomes floats, and a BIGINT past 2^53 loses digits) nor one
apart from NaN for a float, and it turns a timestamp into the session time zone's wall time. So each
field travels as what pandas keeps exactly:

* integers and floats as their value with nulls replaced by zero, their nulls as bits of a null-mask column
  (one BIGINT per 63 such fields);
* TIMESTAMP (an instant) as its epoch microseconds, likewise, read back as a UTC ``datetime``;
* strings, booleans, decimals, dates and bytes as they are (pandas keeps them as Python objects or, without
  nulls, as numpy values that ``tolist()`` returns as Python ones);
* structs, arrays, maps and TIMESTAMP_NTZ as they are, converted back as before
  (:func:`kindling.datastream.operator.from_pandas`).

The event time travels as epoch milliseconds with Long.MIN for none; the input index only when the
operator has several inputs, the timer origin only when an input comes from a keyed operator.

The operator's input now crosses the shuffle packed as Arrow (:mod:`kindling.datastream.key_group_batches`), whose
``column_values`` reads each column as Spark's pandas conversion would have given it, so this layout still decides
what the operator reads; with Arrow on both ends the null masks could give way to Arrow's own nulls.
"""

from __future__ import annotations

import datetime
from typing import Any, Callable, Dict, List, Optional, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StructType,
    TimestampType,
)

from kindling.row_layout import INTERNAL_PREFIX

_PREFIX = INTERNAL_PREFIX
INPUT = INTERNAL_PREFIX + "input"  # which input of the operator a row belongs to
TS = INTERNAL_PREFIX + "ts"  # a record's event time
# True on records a keyed operator emitted while firing timers (they precede the batch's watermark downstream).
FROM_TIMER = INTERNAL_PREFIX + "from_timer"
_NUMBERS = (ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
NO_TIME = -(2**63)  # the event time of a record without one
_BITS = 63  # null flags per mask column (a BIGINT's non-negative bits)


class _Field:
    """One field as one top-level column: its kind, and (for numbers and instants) its bit in a null mask."""

    def __init__(self, name: str, data_type: DataType, convert: Optional[Callable[[Any], Any]]) -> None:
        self.name = name
        self.data_type = data_type
        self.kind = "number" if isinstance(data_type, _NUMBERS) else "instant" if isinstance(data_type, TimestampType) else "plain"
        self.convert = convert  # plain fields: the conversion of a nested value (None: as it is)
        self.mask: Optional[str] = None  # the null-mask column holding this field's null flag
        self.bit = 0

    def column(self, value: Column) -> Column:
        if self.kind == "plain":
            return value.alias(self.name)
        carried = F.unix_micros(value) if self.kind == "instant" else value
        zero = F.lit(0).cast(LongType() if self.kind == "instant" else self.data_type)
        return F.coalesce(carried, zero).alias(self.name)

    def read(self, values: list, masks: Dict[str, Optional[list]]) -> list:
        if self.kind == "plain":
            convert = self.convert
            return values if convert is None else [convert(v) for v in values]
        if self.kind == "instant":
            epoch, delta = _EPOCH, datetime.timedelta
            values = [epoch + delta(microseconds=v) for v in values]
        mask = masks[self.mask] if self.mask is not None else None
        if mask is None:  # no null in this frame's mask column
            return values
        bit = 1 << self.bit
        return [None if m & bit else v for v, m in zip(values, mask)]


class OperatorColumns:
    """The keyed operator's input columns (after the slot and key-group columns) and how Python reads a frame of them.

    ``convert`` gives a field type's conversion of nested values (or None); ``inputs`` are the inputs' record types.
    """

    def __init__(self, key_types: Sequence[DataType], inputs: Sequence[StructType], chained: bool,
                 convert: Callable[[DataType], Optional[Callable[[Any], Any]]]) -> None:
        self.multi_input = len(inputs) > 1
        self.chained = chained
        self.keys = [_Field(f"{_PREFIX}k{i}", t, convert(t)) for i, t in enumerate(key_types)]
        self.values = [[_Field(f"{_PREFIX}v{i}_{j}", f.dataType, convert(f.dataType)) for j, f in enumerate(record.fields)]
                       for i, record in enumerate(inputs)]
        flagged = [f for f in self.keys + [f for fields in self.values for f in fields] if f.kind != "plain"]
        self.masks: List[str] = []
        for n, field in enumerate(flagged):
            if n % _BITS == 0:
                self.masks.append(f"{_PREFIX}nulls{n // _BITS}")
            field.mask, field.bit = self.masks[-1], n % _BITS
        self._flagged = flagged

    @property
    def names(self) -> List[str]:
        """The columns in order, after the slot and key-group columns."""
        return ([INPUT] if self.multi_input else []) + [f.name for f in self.keys] + [TS] \
            + ([FROM_TIMER] if self.chained else []) + [f.name for fields in self.values for f in fields] + self.masks

    def columns(self, key: Callable[[int], Column], value: Callable[[int, str], Column], input_index: Column, millis: Column,
                from_timer: Column, records: Sequence[StructType]) -> List[Column]:
        """The Spark columns, from the operator's union of its inputs: ``key(i)``, ``value(i, field)`` (null on another
        input's rows), the input index, the event time in epoch ms (null: none) and the timer origin."""
        columns: List[Column] = [input_index.alias(INPUT)] if self.multi_input else []
        columns += [f.column(key(i)) for i, f in enumerate(self.keys)]
        columns.append(F.coalesce(millis, F.lit(NO_TIME)).alias(TS))
        if self.chained:
            columns.append(F.coalesce(from_timer, F.lit(False).cast(BooleanType())).alias(FROM_TIMER))
        for i, fields in enumerate(self.values):
            columns += [f.column(value(i, name)) for f, name in zip(fields, records[i].fieldNames())]
        sources: Dict[str, Column] = {}
        for f in self._flagged:
            source = key(self.keys.index(f)) if f in self.keys else self._value_source(f, value, records)
            flag = F.when(source.isNull(), F.lit(1 << f.bit)).otherwise(F.lit(0)).cast(LongType())
            sources[f.mask] = flag if f.mask not in sources else sources[f.mask] + flag  # type: ignore[operator]
        columns += [sources[m].alias(m) for m in self.masks]
        return columns

    def _value_source(self, field: _Field, value: Callable[[int, str], Column], records: Sequence[StructType]) -> Column:
        for i, fields in enumerate(self.values):
            if field in fields:
                return value(i, records[i].fieldNames()[fields.index(field)])
        raise AssertionError(field.name)

    def read(self, column: Callable[[str], list], rows: int) -> tuple:
        """A frame's (input indices or None, keys per key column, event times, timer origins or None, and per input its
        field columns; a row of another input has None in them)."""
        masks: Dict[str, Optional[list]] = {}
        for m in self.masks:
            mask = column(m)
            masks[m] = mask if any(mask) else None
        keys = [f.read(column(f.name), masks) for f in self.keys]
        times = column(TS)
        if NO_TIME in times:
            times = [None] * rows if times.count(NO_TIME) == rows else [None if t == NO_TIME else t for t in times]
        fields = [[f.read(column(f.name), masks) for f in record] for record in self.values]
        return (column(INPUT) if self.multi_input else None, keys, times, column(FROM_TIMER) if self.chained else None, fields)



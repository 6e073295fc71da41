"""How a keyed operator's keys and record fields travel to its Python worker: top-level columns, read back exactly.

The operator's input crosses the shuffle packed as Arrow (:mod:`kindling.datastream.key_group_batches`), each key
and record field as a top-level column: a struct column would reach Python as one dict per row, which costs more
than everything else the operator does with a record, where a top-level column becomes Python values at C speed.
Nulls travel as Arrow's own; a TIMESTAMP (an instant) as its epoch microseconds, read back as a UTC ``datetime``;
every other field as it is, read as Spark's own conversion of the column gives it
(:func:`kindling.datastream.key_group_batches.column_values`; nested values then through
:func:`kindling.datastream.operator.from_pandas`).

The event time travels as epoch milliseconds with Long.MIN for none, and not at all when no input's records carry
one; the input index only when the operator has several inputs, the timer origin only when an input comes from a
keyed operator. A record field that is also the key (``key_by("field")``) travels once, as the key: every column
less is one less for Spark to project, shuffle, sort and convert to Arrow per record.
"""

from __future__ import annotations

import datetime
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, BooleanType, DataType, MapType, StructType, TimestampType

from kindling.row_layout import INTERNAL_PREFIX

_PREFIX = INTERNAL_PREFIX
INPUT = INTERNAL_PREFIX + "input"  # which input of the operator a row belongs to
TS = INTERNAL_PREFIX + "ts"  # a record's event time
# True on records a keyed operator emitted while firing timers (they precede the batch's watermark downstream).
FROM_TIMER = INTERNAL_PREFIX + "from_timer"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
NO_TIME = -(2**63)  # the event time of a record without one


class _Field:
    """One field as one top-level column (an instant as its epoch microseconds), and how its values are read back."""

    def __init__(self, name: str, data_type: DataType, convert: Optional[Callable[[Any], Any]]) -> None:
        self.name = name
        self.data_type = data_type
        self.instant = isinstance(data_type, TimestampType)
        self.convert = convert  # the conversion of a nested value (None: as it is)

    def column(self, value: Column) -> Column:
        return (F.unix_micros(value) if self.instant else value).alias(self.name)

    def read(self, values: list) -> list:
        if self.instant:
            epoch, delta = _EPOCH, datetime.timedelta
            return [None if v is None else epoch + delta(microseconds=v) for v in values]
        convert = self.convert
        return values if convert is None else [convert(v) for v in values]


class OperatorColumns:
    """The keyed operator's input columns (after the slot and key-group columns) and how Python reads a frame of them.

    ``convert`` gives a field type's conversion of nested values (or None); ``inputs`` are the inputs' record types.
    ``timed``: whether any input's records may carry an event time. ``key_fields``, per input: which of its record's
    fields (by position) is which key column (by position), to be read from the key's column rather than shipped twice.
    """

    def __init__(self, key_types: Sequence[DataType], inputs: Sequence[StructType], chained: bool,
                 convert: Callable[[DataType], Optional[Callable[[Any], Any]]], timed: bool = True,
                 key_fields: Sequence[Mapping[int, int]] = ()) -> None:
        self.multi_input = len(inputs) > 1
        self.chained = chained
        self.timed = timed
        self.keys = [_Field(f"{_PREFIX}k{i}", t, convert(t)) for i, t in enumerate(key_types)]
        self.values = [[_Field(f"{_PREFIX}v{i}_{j}", f.dataType, convert(f.dataType)) for j, f in enumerate(record.fields)]
                       for i, record in enumerate(inputs)]
        # (a nested value is left to travel twice: the record's and the key's would be one mutable object)
        self.key_fields: List[Dict[int, int]] = [
            {j: k for j, k in (key_fields[i] if i < len(key_fields) else {}).items()
             if not isinstance(self.keys[k].data_type, (ArrayType, MapType, StructType))}
            for i in range(len(inputs))]
        for i, fields in enumerate(self.key_fields):
            for j, k in fields.items():
                if self.values[i][j].data_type != self.keys[k].data_type:
                    raise ValueError(f"input {i}'s field {j} ({self.values[i][j].data_type.simpleString()}) is not key "
                                     f"{k} ({self.keys[k].data_type.simpleString()})")

    @property
    def names(self) -> List[str]:
        """The columns in order, after the slot and key-group columns."""
        return ([INPUT] if self.multi_input else []) + [f.name for f in self.keys] + ([TS] if self.timed else []) \
            + ([FROM_TIMER] if self.chained else []) + [f.name for i, fields in enumerate(self.values)
                                                       for j, f in enumerate(fields) if j not in self.key_fields[i]]

    def columns(self, key: Callable[[int], Column], value: Callable[[int, str], Column], input_index: Column, millis: Column,
                from_timer: Column, records: Sequence[StructType]) -> List[Column]:
        """The Spark columns, from the operator's union of its inputs: ``key(i)``, ``value(i, field)`` (null on another
        input's rows), the input index, the event time in epoch ms (null: none) and the timer origin."""
        columns: List[Column] = [input_index.alias(INPUT)] if self.multi_input else []
        columns += [f.column(key(i)) for i, f in enumerate(self.keys)]
        if self.timed:
            columns.append(F.coalesce(millis, F.lit(NO_TIME)).alias(TS))
        if self.chained:
            columns.append(F.coalesce(from_timer, F.lit(False).cast(BooleanType())).alias(FROM_TIMER))
        for i, fields in enumerate(self.values):
            columns += [f.column(value(i, name)) for j, (f, name) in enumerate(zip(fields, records[i].fieldNames()))
                        if j not in self.key_fields[i]]
        return columns

    def read(self, column: Callable[[str], list], rows: int) -> tuple:
        """A frame's (input indices or None, keys per key column, event times, timer origins or None, and per input its
        field columns; a row of another input has None in them)."""
        keys = [f.read(column(f.name)) for f in self.keys]
        times = column(TS) if self.timed else [NO_TIME]
        if NO_TIME in times:
            times = [None] * rows if not self.timed or times.count(NO_TIME) == rows else [None if t == NO_TIME else t for t in times]
        # (a field that is a key reads as the key's own values: the same type, so the same conversion)
        fields = [[keys[shared[j]] if j in shared else f.read(column(f.name)) for j, f in enumerate(record)]
                  for record, shared in zip(self.values, self.key_fields)]
        return (column(INPUT) if self.multi_input else None, keys, times, column(FROM_TIMER) if self.chained else None, fields)

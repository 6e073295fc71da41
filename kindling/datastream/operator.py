"""The keyed operator: Flink's keyed-state operator on Spark's ``transformWithState``.

Every stateful DataStream operation (process functions, co-process, broadcast, windows with
triggers, interval joins, rolling aggregations) runs here. Rows are grouped by key; for each key
with work in a micro-batch the runner reads the key's whole state once, runs the user function
over the key's records in arrival order, fires due timers in timestamp order and writes the
state back once. Spark's state store (RocksDB) keeps it, versioned with each micro-batch, so
state and timers survive restarts exactly as the checkpoint does.

Input records are never dropped as late by Spark (the operator's input carries event time as a
plain number, so the function decides, as in Flink), and Spark's watermark reaches the function
through the timer values. Output rows carry the main output's fields or a side output's record
(tagged), their event time, and whether a timer emitted them.

Spark passes a watermark on only from an operator in its event-time mode that re-declares the
event-time column of its output (``eventTimeColumnName``, here SPARK_EVENT_TIME). So an operator
over event time runs in that mode, and the keyed operators after it see the watermark too
(chained process functions, windows after a process function). Spark's event-time mode has no processing-time timers: an
operator whose function registers them runs in processing-time mode and passes no watermark on.

Within a micro-batch an upstream operator fires its timers at the batch's watermark W before a
downstream operator sees W; in Flink the records those timers emit reach the downstream operator
before W does. So a downstream operator handles the records marked ``FROM_TIMER`` first (none of
them is late: each is stamped after the previous watermark), then fires its own timers up to W,
then handles the other records.
"""

from __future__ import annotations

import pickle
from typing import Any, Iterator, List, Optional, Sequence

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import BinaryType, BooleanType, IntegerType, StringType, StructField, StructType, TimestampType

from kindling.connectors.base import INTERNAL_PREFIX
from kindling.datastream import records
from kindling.datastream.context import RuntimeContext
from kindling.datastream.side_outputs import SIDE_COLUMN, TAG_COLUMN, encode
from kindling.datastream.state import KeyState
from kindling.datastream.timers import (
    MAX_WATERMARK,
    MIN_WATERMARK,
    TimeDomain,
    next_due,
    prune,
    registers_processing_time_timers,
    wake_ups,
    woken,
)
from kindling.runtime.progress import END_OF_TIME_THRESHOLD

TS = INTERNAL_PREFIX + "ts"
INPUT = INTERNAL_PREFIX + "input"
SLOT = INTERNAL_PREFIX + "slot"
# True on records a keyed operator emitted while firing timers (they precede the batch's watermark downstream).
FROM_TIMER = INTERNAL_PREFIX + "from_timer"
ROWTIME = INTERNAL_PREFIX + "rowtime"  # the same name as stream.ROWTIME (stream imports this module lazily)
# The output's event-time column for Spark (eventTimeColumnName): ROWTIME, raised to the batch's watermark
# where it is behind it, because Spark refuses rows older than its watermark there
# (EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED) while Flink lets operators emit late records.
# Only Spark's watermark bookkeeping reads it; records keep their real event time in ROWTIME.
SPARK_EVENT_TIME = INTERNAL_PREFIX + "spark_event_time"
KEYED_SLOT = 2**31 - 1
_END_MS = int(END_OF_TIME_THRESHOLD.timestamp() * 1000)
# The latest millisecond Spark's microsecond timestamps can hold. Flink stamps a global or count window's
# result with Long.MAX_VALUE ms; it travels as this millisecond and reads back as Long.MAX_VALUE.
_LATEST_MS = (2**63 - 1) // 1000


def value_column(index: int) -> str:
    return f"{INTERNAL_PREFIX}v{index}"


def key_column(index: int) -> str:
    return f"{INTERNAL_PREFIX}k{index}"


class Stamped:
    """A result carrying its own event time (a window's last millisecond, a join pair's later timestamp)."""

    __slots__ = ("value", "timestamp")

    def __init__(self, value: Any, timestamp: Optional[int]) -> None:
        self.value = value
        self.timestamp = timestamp


class Adapter:
    """How the runner talks to one kind of function (process, co-process, window, join...)."""

    def open(self, runner: "KeyedRunner", runtime_context: RuntimeContext) -> None:
        raise NotImplementedError

    def element(self, index: int, value: Any) -> List[Any]:
        raise NotImplementedError

    def timer(self, timestamp: int) -> List[Any]:
        return []

    def broadcast(self, value: Any) -> List[Any]:
        raise RuntimeError("this operator has no broadcast input")

    def close(self) -> None:
        pass


class KeyedRunner(StatefulProcessor):
    """Spark's StatefulProcessor running a kindling Adapter per key with one state read and write."""

    def __init__(self, adapter: Adapter, name: str, out_schema: StructType, key_count: int,
                 parallelism: int, input_names: Sequence[Sequence[str]], slots: Optional[dict] = None,
                 event_time_mode: bool = False, chained: bool = False, input_types: Optional[Sequence[Any]] = None,
                 out_type: Any = None, pickled_key: bool = False) -> None:
        self._adapter = adapter
        self._name = name
        self.operator_name = name
        self.event_time_mode = event_time_mode  # Spark's EventTime mode: Spark timers are event-time timers
        self._chained = chained  # an input comes from a keyed operator (its rows say whether a timer emitted them)
        self._out_names = out_schema.fieldNames()
        self._out_schema = out_schema
        self._key_count = key_count
        self._parallelism = parallelism
        self._input_names = [list(n) for n in input_names]
        self._slots = slots  # broadcast: partition -> slot value whose group lands in that partition
        self._opened = False
        # PyFlink type information of each input and of the output (None: kindling's own rows).
        self._input_types = list(input_types) if input_types is not None else [None] * len(self._input_names)
        self._out_type = out_type
        self._pickled_key = pickled_key  # the key is a Python key selector's result, pickled

    # --- Spark's StatefulProcessor ----------------------------------------------------------------
    def init(self, handle: StatefulProcessorHandle) -> None:
        self._handle = handle
        self._blob = handle.getValueState("kindling", StructType([StructField("blob", BinaryType(), True)]))
        self._broadcast: Optional[KeyState] = None

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        self._begin(timerValues)
        if self._slots is not None and key[0] != KEYED_SLOT:
            return iter(self._broadcast_rows(list(rows)))
        self.current_key = self._user_key(key)
        self.state = self._load()
        after: Iterator[Row] = rows
        if self._chained:
            # Records an upstream operator's timers emitted reached it before the batch's watermark.
            before, later = [], []
            for row in rows:
                (before if row[FROM_TIMER] else later).append(row)
            if before:
                watermark = self.watermark
                stamped = [r[TS] for r in before if r[TS] is not None]
                self.watermark = min([watermark] + [t - 1 for t in stamped])
                self._elements(before)
                self.watermark = watermark
            after = iter(later)
        # The batch's watermark arrived before its (other) records, as in Flink: timers it passes fire first.
        self._fire_due()
        self._elements(after)
        self._fire_due()
        self._save()
        return iter(self._drain())

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Row]:
        self._begin(timerValues)
        if self._slots is not None and key[0] != KEYED_SLOT:
            return iter([])
        self.current_key = self._user_key(key)
        self.state = self._load()
        woken(self.state, expiredTimerInfo.getExpiryTimeInMs())
        self._fire_due()
        self._save()
        return iter(self._drain())

    def close(self) -> None:
        if self._opened:
            self._adapter.close()

    def _elements(self, rows: Any) -> None:
        from kindling.datastream.errors import calling

        function = getattr(self._adapter, "_function", None) or self._adapter
        for row in rows:  # arrival order: Spark's shuffle and its stable sort by key keep it
            index = row[INPUT]
            self.timestamp = row[TS]
            self.time_domain = None
            value = self._value(index, row)
            with calling(function, self._name, value):
                self._emit_all(self._adapter.element(index, value))

    # --- what contexts read ---------------------------------------------------------------------
    def emit_side(self, tag_id: str, value: Any) -> None:
        self._out.append(self._none + (self.timestamp, self.time_domain is not None, tag_id, encode(value)))

    def broadcast_state(self) -> KeyState:
        """The operator's broadcast state, read from this partition's slot once per task."""
        if self._broadcast is None:
            client = self._handle._statefulProcessorApiClient
            client.set_implicit_key(self._slot_key())
            try:
                self._broadcast = self._read_blob(0)
            finally:
                client.set_implicit_key(self._grouping_key)
        return self._broadcast

    # --- internals ------------------------------------------------------------------------------
    def _begin(self, timer_values: Any) -> None:
        if not self._opened:
            from pyspark import TaskContext

            context = TaskContext.get()
            subtask = context.partitionId() if context is not None else 0
            self._subtask = subtask
            self._row = Row(*self._out_names, ROWTIME, FROM_TIMER, TAG_COLUMN, SIDE_COLUMN, SPARK_EVENT_TIME)
            self._none = (None,) * len(self._out_names)
            self._factories = [Row(*names) for names in self._input_names]
            self._decoders = [records.Codec(StructType([StructField(n, StringType()) for n in names]), t)
                              for names, t in zip(self._input_names, self._input_types)]
            self._encoder = records.Codec(self._out_schema, self._out_type)
            self._out: List[tuple] = []
            self.state = KeyState(None, 0)
            runtime_context = RuntimeContext(self._name, lambda: self.state, subtask, self._parallelism)
            self._adapter.open(self, runtime_context)
            self._opened = True
        self.processing_time = int(timer_values.getCurrentProcessingTimeInMs())
        watermark = int(timer_values.getCurrentWatermarkInMs())
        self._spark_watermark = max(watermark, 0)
        if watermark >= _END_MS:
            watermark = MAX_WATERMARK
        elif watermark <= 0:
            watermark = MIN_WATERMARK
        self.watermark = watermark
        self.time_domain = None

    def _value(self, index: int, row: Row) -> Any:
        value = row[value_column(index)]
        if self._input_types[index] is not None and value is not None:
            items = [value[n] for n in self._input_names[index]] if isinstance(value, dict) else list(value)
            return self._decoders[index].decode(items)
        if isinstance(value, dict):
            return self._factories[index](*[value[n] for n in self._input_names[index]])
        return value

    def _user_key(self, key: Any) -> Any:
        self._grouping_key = tuple(key)
        user = self._grouping_key[1:] if self._slots is not None else self._grouping_key
        if self._pickled_key:
            return pickle.loads(user[0]) if user[0] is not None else None
        return user[0] if len(user) == 1 else tuple(user)

    def _slot_key(self) -> tuple:
        assert self._slots is not None
        return (self._slots[self._subtask],) + (None,) * self._key_count

    def _read_blob(self, now: int) -> KeyState:
        stored = self._blob.get()
        data = pickle.loads(stored[0]) if stored is not None and stored[0] is not None else None
        return KeyState(data, now)

    def _load(self) -> KeyState:
        return self._read_blob(self.processing_time)

    def _save(self) -> None:
        state = self.state
        for timestamp in wake_ups(state, self.processing_time, self.event_time_mode):
            self._handle.registerTimer(timestamp)
        prune(state)
        if not state.dirty:
            return
        if state.data:
            self._blob.update((pickle.dumps(state.data, protocol=5),))
        else:
            self._blob.clear()

    def _fire_due(self) -> None:
        while True:
            due = next_due(self.state, self.watermark, self.processing_time)
            if due is None:
                return
            timestamp, domain = due
            self.time_domain = domain
            self.timestamp = timestamp if domain == TimeDomain.EVENT_TIME else None
            from kindling.datastream.errors import calling

            with calling(getattr(self._adapter, "_function", None) or self._adapter, self._name, has_record=False):
                self._emit_all(self._adapter.timer(timestamp), from_timer=True)

    def _emit_all(self, values: List[Any], from_timer: bool = False) -> None:
        if values:
            encode = self._encoder.encode
            where = f"{self._name} result"
            for value in values:
                if isinstance(value, Stamped):
                    self._out.append(encode(value.value, where) + (value.timestamp, from_timer, None, None))
                else:
                    self._out.append(encode(value, where) + (self.timestamp, from_timer, None, None))

    def _drain(self) -> List[Row]:
        out, self._out = self._out, []
        factory = self._row
        at = -4  # the event time, in epoch ms here; Spark's Arrow timestamps are microseconds
        floor = self._spark_watermark
        rows = []
        for values in out:
            ts = values[at] if values[at] is None else min(values[at], _LATEST_MS)
            spark_time = (ts if ts is not None and ts > floor else floor) * 1000
            rows.append(factory(*values[:at], ts * 1000 if ts is not None else None, *values[at + 1:], spark_time))
        return rows

    def _broadcast_rows(self, rows: List[Row]) -> List[Row]:
        self._grouping_key = (self._slots[self._subtask],) + (None,) * self._key_count  # type: ignore[index]
        self.current_key = None
        self.state = self._broadcast = self._read_blob(self.processing_time)
        emitted: List[Any] = []
        for row in rows:
            self.timestamp = row[TS]
            emitted.extend(self._adapter.broadcast(self._value(row[INPUT], row)))
        if self._subtask == 0:  # every partition applies the element; one emits its results
            self._emit_all(emitted)
        if self.state.dirty:
            self._blob.update((pickle.dumps(self.state.data, protocol=5),))
        return self._drain()


def output_schema(out_user: StructType) -> StructType:
    """The operator's output: the main output's fields, the event time, whether a timer emitted it, the side-output tag and record."""
    return StructType(
        list(out_user.fields)
        + [StructField(ROWTIME, TimestampType(), True), StructField(FROM_TIMER, BooleanType(), True),
           StructField(TAG_COLUMN, StringType(), True), StructField(SIDE_COLUMN, BinaryType(), True),
           StructField(SPARK_EVENT_TIME, TimestampType(), True)]
    )


def needs_processing_time(adapter: Any) -> bool:
    """Whether an adapter's function, trigger or window assigner uses processing-time timers."""
    assigner = getattr(adapter, "assigner", None)
    if assigner is not None and not assigner.is_event_time:
        return True
    return any(registers_processing_time_timers(getattr(adapter, name, None)) for name in ("_function", "trigger"))


def operator_input(
    df: DataFrame, keys: Sequence[Column], index: int, inputs: int, value_fields: Sequence[str], slot: Optional[Column] = None
) -> DataFrame:
    """One input of the operator in the common layout: slot, keys, input index, values, event time."""
    from kindling.datastream.stream import ROWTIME

    columns: List[Column] = []
    if slot is not None:
        columns.append(slot.cast(IntegerType()).alias(SLOT))
    columns += [k.alias(key_column(i)) for i, k in enumerate(keys)]
    columns.append(F.lit(index).alias(INPUT))
    for i in range(inputs):
        if i == index:
            columns.append(F.struct(*[F.col(f) for f in value_fields]).alias(value_column(i)))
    millis = F.unix_millis(F.col(ROWTIME))
    columns.append(F.when(millis >= _LATEST_MS, F.lit(2**63 - 1)).otherwise(millis).alias(TS))
    columns.append((F.col(FROM_TIMER) if FROM_TIMER in df.columns else F.lit(None).cast(BooleanType())).alias(FROM_TIMER))
    return df.select(*columns)


def run_operator(inputs: Sequence[DataFrame], input_types: Sequence[StructType], key_count: int, runner: KeyedRunner,
                 out_user: StructType, with_slot: bool) -> DataFrame:
    """Union the inputs, group by key and run the runner; returns the tagged output.

    In Spark's event-time mode the output's ROWTIME is re-declared as the event-time column, so
    the keyed operators after this one get the watermark.
    """
    aligned = []
    for i, df in enumerate(inputs):
        for j, schema in enumerate(input_types):
            if j != i:
                df = df.withColumn(value_column(j), F.lit(None).cast(schema))
        aligned.append(df.select(*_layout_columns(len(input_types), key_count, with_slot)))
    union = aligned[0]
    for other in aligned[1:]:
        union = union.unionByName(other)
    grouping = ([SLOT] if with_slot else []) + [key_column(i) for i in range(key_count)]
    grouped = union.groupBy(*grouping)
    if runner.event_time_mode:
        return grouped.transformWithState(runner, output_schema(out_user), "Append", "EventTime", eventTimeColumnName=SPARK_EVENT_TIME)
    return grouped.transformWithState(runner, output_schema(out_user), "Append", "ProcessingTime")


def from_keyed_operator(df: DataFrame) -> bool:
    """Whether a stream's rows come from a keyed operator (they carry FROM_TIMER)."""
    return FROM_TIMER in df.columns


def _layout_columns(inputs: int, key_count: int, with_slot: bool) -> List[str]:
    return (([SLOT] if with_slot else []) + [key_column(i) for i in range(key_count)] + [INPUT]
            + [value_column(i) for i in range(inputs)] + [TS, FROM_TIMER])

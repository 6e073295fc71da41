"""The keyed operator: Flink's keyed-state operator on Spark's ``transformWithState``.

Every stateful DataStream operation (process functions, co-process, broadcast, windows with
triggers, interval joins, rolling aggregations) runs here. Rows are grouped by key; for each key
with work in a micro-batch the runner reads the key's whole state once, runs the user function
over the key's records in arrival order, fires due timers in timestamp order and writes the
state back once. Spark's state store (RocksDB) keeps it, versioned with each micro-batch, so
state and timers survive restarts exactly as the checkpoint does.

State is grouped by key group (Flink's name; ``pipeline.max-parallelism`` of them, 128 by default):
Spark's grouping key is a hash bucket of the record's key, so one state read and one write (four
round trips to Spark's state server) serve every key of the bucket with work in the micro-batch,
and records reach Python and results leave it as columns (``transformWithStateInPandas``). A
bucket's value holds its keys' states; the key-group count is fixed for the life of a job's state,
as Flink's max parallelism is. A key group's records reach the runner whole, as Arrow, never regrouped row by
row in Python: where kindling starts the session's Python workers (a local master), the workers cut each group's
rows out of Spark's Arrow batches (``kindling.runtime.keyed_arrow_input``); elsewhere the records cross the shuffle
packed, one Arrow stream per key group and map task (``kindling.datastream.key_group_batches``). Results leave it
gathered across key groups, a frame per ten thousand or so (``kindling.runtime.transform_with_state``).
``benchmarks/README.md`` has the measurements behind this.

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

import contextlib
import datetime
import functools
import gc
import heapq
import itertools
import pickle
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from kindling import config as cfg
from kindling.connectors.base import INTERNAL_PREFIX
from kindling.datastream import key_group_batches, records
from kindling.datastream.context import RuntimeContext
from kindling.datastream.errors import UserFunctionError, calling, failure
from kindling.datastream.operator_columns import FROM_TIMER, INPUT, TS, OperatorColumns
from kindling.datastream.process import GENERATOR, as_list
from kindling.datastream.side_outputs import SIDE_COLUMN, TAG_COLUMN, encode
from kindling.datastream.state import KeyState
from kindling.datastream.timers import (
    MAX_WATERMARK,
    MIN_WATERMARK,
    TIMERS,
    TimeDomain,
    first_due,
    next_due,
    next_wake_up,
    prune,
    registers_processing_time_timers,
    registers_timers,
)
from kindling.runtime import hash_partitioning
from kindling.runtime.progress import END_OF_TIME_THRESHOLD
from kindling.runtime.transform_with_state import arrow_input_available, transform_with_state

SLOT = INTERNAL_PREFIX + "slot"
ROWTIME = INTERNAL_PREFIX + "rowtime"  # the same name as stream.ROWTIME (stream imports this module lazily)
# The output's event-time column for Spark (eventTimeColumnName): ROWTIME, raised to the batch's watermark
# where it is behind it, because Spark refuses rows older than its watermark there
# (EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED) while Flink lets operators emit late records.
# Only Spark's watermark bookkeeping reads it; records keep their real event time in ROWTIME.
SPARK_EVENT_TIME = INTERNAL_PREFIX + "spark_event_time"
# The key group (hash bucket of the key) Spark groups the operator's state by.
BUCKET = INTERNAL_PREFIX + "bucket"
NO_KEY_GROUP = -1  # the key group of broadcast records
DEFAULT_KEY_GROUPS = cfg.MAX_PARALLELISM.default
KEYED_SLOT = 2**31 - 1
_END_MS = int(END_OF_TIME_THRESHOLD.timestamp() * 1000)
# The latest millisecond Spark's microsecond timestamps can hold. Flink stamps a global or count window's
# result with Long.MAX_VALUE ms; it travels as this millisecond and reads back as Long.MAX_VALUE.
_LATEST_MS = (2**63 - 1) // 1000
# Results a worker gathers across key groups before handing them to Spark as one frame (the rest at the partition's
# end): Spark's default Arrow batch. A frame is then at most this many rows larger than one key group's results.
_GATHERED_ROWS = 10_000
_NUMPY_TYPES = {LongType: "int64", IntegerType: "int32", ShortType: "int16", ByteType: "int8", DoubleType: "float64",
                FloatType: "float32", BooleanType: "bool"}


def value_column(index: int) -> str:
    return f"{INTERNAL_PREFIX}v{index}"


def key_column(index: int) -> str:
    return f"{INTERNAL_PREFIX}k{index}"


class Stamped:
    """A result carrying its own event time (a window's last millisecond, a join pair's later timestamp). Not to be
    subclassed: the runner tells it by its class."""

    __slots__ = ("value", "timestamp")

    def __init__(self, value: Any, timestamp: Optional[int]) -> None:
        self.value = value
        self.timestamp = timestamp


def from_pandas(data_type: DataType) -> Optional[Callable[[Any], Any]]:
    """How to turn a struct field's value, as Spark's columnar path hands it over, into what the row path gave.

    Inside a struct, Spark hands scalars over as Python values already; nested arrays come as numpy
    arrays (an integer array with a null as floats), maps as dicts and timestamps as naive pandas
    Timestamps, where functions saw lists, lists of pairs and UTC datetimes. None: nothing to do.
    """
    if isinstance(data_type, StructType):
        fields = [(f.name, convert) for f in data_type.fields if (convert := from_pandas(f.dataType)) is not None]
        if not fields:
            return None
        return lambda v: v if v is None else {**v, **{name: convert(v.get(name)) for name, convert in fields}}
    if isinstance(data_type, ArrayType):
        element = from_pandas(data_type.elementType)
        if element is None and _is_integral(data_type.elementType):
            element = _int_or_none
        if element is None:
            return lambda v: v if v is None else (v.tolist() if hasattr(v, "tolist") else list(v))
        return lambda v: v if v is None else [element(e) for e in (v.tolist() if hasattr(v, "tolist") else v)]
    if isinstance(data_type, MapType):
        key = from_pandas(data_type.keyType) or _same
        value = from_pandas(data_type.valueType) or _same
        return lambda v: v if v is None else [(key(k), value(x)) for k, x in (v.items() if isinstance(v, dict) else v)]
    if isinstance(data_type, TimestampType):
        return lambda v: None if _missing(v) else _utc(v)
    if isinstance(data_type, TimestampNTZType):
        return lambda v: None if _missing(v) else (v.to_pydatetime() if hasattr(v, "to_pydatetime") else v)
    return None


def _numbers(column: Sequence[Any], dtype: str) -> Any:
    """A result column of a numeric type as a numpy array when its values are exactly that (ints in range for an
    integer column, ints or floats for a floating one, bools for a boolean one); None to leave it to Spark's
    conversion, which checks and reports each value."""
    import numpy as np

    if None in column:
        return None
    try:
        values = np.array(column)
    except (TypeError, ValueError, OverflowError):
        return None
    kind = values.dtype.kind
    if dtype == "bool":
        return values if kind == "b" else None
    if dtype.startswith("float"):  # a NaN would read as a null from a numpy column: see _floats_with_nulls
        return values.astype(dtype) if kind == "i" or (kind == "f" and not np.isnan(values).any()) else None
    if kind != "i":
        return None
    limits = np.iinfo(dtype)
    return values.astype(dtype) if len(values) == 0 or (values.min() >= limits.min and values.max() <= limits.max) else None


# A result column's numpy dtype (or "string", each also its Arrow type's alias) -> the Python types its values may have
# to travel as Arrow; a value of any other type (a bool in an integer column, an int in a floating one, a numpy scalar)
# leaves the column to Spark's conversion, which checks each value and names a wrong one.
_ARROW_RESULTS = {"int64": {int}, "int32": {int}, "int16": {int}, "int8": {int}, "float64": {float}, "float32": {float},
                  "bool": {bool}, "string": {str}}


def _result_column(column: Sequence[Any], dtype: Optional[str]) -> Any:
    """One result column as the frame Spark converts takes it: an Arrow array where every value is exactly of the
    column's Python kind (or None), else a pandas Series (numbers as numpy where exact, otherwise objects)."""
    import pandas as pd
    import pyarrow as pa

    if dtype == "map":  # a map as functions see it (a list of pairs) as Spark's conversion takes it (a dict)
        return pd.Series([dict(v) if isinstance(v, (list, tuple)) else v for v in column], dtype=object)
    kinds = _ARROW_RESULTS.get(dtype) if dtype is not None else None
    if kinds is not None and set(map(type, column)) - {type(None)} <= kinds:
        try:
            return pa.array(column, pa.type_for_alias(dtype))
        except (ValueError, TypeError, OverflowError):  # (Arrow's errors are these) out of range, a lone surrogate
            pass  # Spark's conversion names the value
    exact = _numbers(column, dtype) if dtype is not None and dtype != "string" else None
    if exact is None and dtype is not None and dtype.startswith("float"):
        exact = _floats_with_nulls(column, dtype)
    return pd.Series(exact) if exact is not None else pd.Series(column, dtype=object)


def _floats_with_nulls(column: Sequence[Any], dtype: str) -> Any:
    """A floating result column holding nulls or NaNs as an Arrow-backed array, so a NaN stays a NaN (pandas' own columns,
    and Spark's conversion of them, take every NaN for a null); None when the values are not all numbers."""
    import pandas as pd
    import pyarrow as pa

    try:
        values = pa.array(column, type=pa.float32() if dtype == "float32" else pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return None
    return pd.arrays.ArrowExtensionArray(values)


def _is_integral(data_type: DataType) -> bool:
    return data_type.typeName() in ("integer", "long", "short", "byte")


def _same(value: Any) -> Any:
    return value


def _int_or_none(value: Any) -> Optional[int]:
    return None if _missing(value) else int(value)


_USER_KEY = "\x00key"  # a key's own value in its state, where dict keys need another (hashable) form


def _hashable(key: Any) -> Any:
    """A key usable as a dict key: a struct (dict) or array (list) key as nested tuples; other keys as they are."""
    if isinstance(key, dict):
        return tuple((k, _hashable(v)) for k, v in key.items())
    if isinstance(key, (list, tuple)) and any(isinstance(v, (dict, list)) for v in key) or isinstance(key, list):
        return tuple(_hashable(v) for v in key)
    return key


def _missing(value: Any) -> bool:
    """None, or pandas' NaN/NaT standing for a null."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return False


def _utc(value: Any) -> datetime.datetime:
    moment = value.to_pydatetime() if hasattr(value, "to_pydatetime") else value
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc)


class Adapter:
    """How the runner talks to one kind of function (process, co-process, window, join, a SQL operator...)."""

    # Records as plain tuples of their fields instead of Rows (the SQL operators read fields by position).
    tuple_values = False
    # Flink's table.exec.state.ttl: a key's whole state expires this long (processing time) after it was last
    # written, and is removed then, as SQL operators' state is; None: kept.
    key_ttl_ms: Optional[int] = None
    # The operator sets no timers and nothing of its state expires by processing time: off event time, it runs in
    # Spark's time mode "None", which runs a micro-batch only when input arrives. (Spark's processing-time mode
    # runs one every trigger interval for ever, input or not, in case a timer is due: an idle job kept a core busy.)
    timeless: bool = False

    def open(self, runner: "KeyedRunner", runtime_context: RuntimeContext) -> None:
        raise NotImplementedError

    # An adapter may also have ``element_function(index)``: a quicker call of ``element`` with the index bound,
    # which the runner then calls with each record of that input (KeyedProcessAdapter's calls the function directly).
    # Its result may be a generator: the runner runs it through before the next record. An adapter may also have
    # ``element_call(index)``: the user's method and its trailing context, which the runner then calls itself
    # (``method(record, context)``, a result other than a generator taken by process.as_list), or None to use
    # ``element_function``.
    def element(self, index: int, value: Any) -> List[Any]:
        raise NotImplementedError

    def key_done(self) -> List[Any]:
        """After a key's records of a micro-batch (and its due timers): results emitted once per key and batch, as
        Flink's mini-batch operators emit them."""
        return []

    def timer(self, timestamp: int) -> List[Any]:
        return []

    def broadcast(self, value: Any) -> List[Any]:
        raise RuntimeError("this operator has no broadcast input")

    def close(self) -> None:
        pass


class KeyedRunner(StatefulProcessor):
    """Spark's StatefulProcessor running a kindling Adapter per key, with one state read and write per key group."""

    def __init__(self, adapter: Adapter, name: str, out_schema: StructType, key_count: int,
                 parallelism: int, input_names: Sequence[Sequence[str]], slots: Optional[dict] = None,
                 event_time_mode: bool = False, chained: bool = False, input_types: Optional[Sequence[Any]] = None,
                 out_type: Any = None, pickled_key: bool = False, key_groups: int = DEFAULT_KEY_GROUPS,
                 key_types: Optional[Sequence[DataType]] = None, value_types: Optional[Sequence[StructType]] = None,
                 timeless: Optional[bool] = None) -> None:
        self._adapter = adapter
        self._name = name
        self.operator_name = name
        self.event_time_mode = event_time_mode  # Spark's EventTime mode: Spark timers are event-time timers
        # Spark's time mode "None" (no timers, no clock): processing time is read from the wall clock. By default as
        # the adapter says (Adapter.timeless); a DataStream operator is told from its function's code.
        self.timeless = not event_time_mode and bool(getattr(adapter, "timeless", False) if timeless is None else timeless)
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
        self.key_groups = key_groups
        self.layout: List[str] = []  # the operator input's columns, in order (set by run_operator)
        # How the input reaches the runner (set by run_operator), and Spark's session time zone, which the conversion
        # of Arrow records' nested values takes.
        self.input_form = key_group_batches.InputForm.FRAMES
        self.group_columns: List[str] = []  # the grouping columns Spark keys the operator's state by
        self.timezone = "UTC"
        self._key_types = list(key_types) if key_types is not None else [StringType()] * key_count
        self._value_types = list(value_types) if value_types is not None else [
            StructType([StructField(n, StringType()) for n in names]) for names in self._input_names]

    # --- Spark's StatefulProcessor ----------------------------------------------------------------
    def init(self, handle: StatefulProcessorHandle) -> None:
        self._handle = handle
        self._blob = handle.getValueState("kindling-key-group", StructType([StructField("blob", BinaryType(), True)]))
        self._broadcast: Optional[KeyState] = None

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:
        with _cycle_collection_paused():
            self._input_rows(key, rows, timerValues)
            frame = self._full_frame()
        if frame is not None:
            yield frame

    def _input_rows(self, key: Any, rows: Iterator[Any], timer_values: Any) -> None:
        self._begin(timer_values)
        by_key = self._records(rows)
        if self._slots is not None and key[0] != KEYED_SLOT:
            self._broadcast_rows([keyed for _, keyed in by_key.values()])
            return
        self._grouping_key = tuple(key)
        group = self._load_group()
        self._set_clock(group)
        for user_key, keyed in by_key.values():
            self._run_key(group, user_key, lambda keyed=keyed: self._key_records(keyed))
        if self._clocked():
            group.tick(self.processing_time)
        self._save_group(group)

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Any]:
        with _cycle_collection_paused():
            self._expired_timer(key, timerValues, expiredTimerInfo)
            frame = self._full_frame()
        if frame is not None:
            yield frame

    def _expired_timer(self, key: Any, timer_values: Any, expired_timer_info: Any) -> None:
        self._begin(timer_values)
        if self._slots is not None and key[0] != KEYED_SLOT:
            return
        self._grouping_key = tuple(key)
        group = self._load_group()
        self._set_clock(group)
        group.woken(expired_timer_info.getExpiryTimeInMs())
        self._fire_group_due(group)
        self._save_group(group)

    def _full_frame(self) -> Any:
        """The gathered results as one frame once a frame's worth has gathered (_GATHERED_ROWS), else None."""
        return self._frame(self._drain()) if len(self._out.times) >= _GATHERED_ROWS else None

    def gathered(self) -> Iterator[Any]:
        """The results gathered across key groups and not yet handed to Spark, as one frame (none when there are
        none): Spark asks at the end of each partition's input (kindling.runtime.transform_with_state)."""
        if self._opened and self._out.times:
            with _cycle_collection_paused():
                frame = self._frame(self._drain())
            yield frame

    def close(self) -> None:
        if self._opened:
            self._adapter.close()

    def _clocked(self) -> bool:
        """Whether state here expires by processing time (a key TTL or a state TTL), so the group keeps its clock."""
        return bool(self._key_ttl) or self._runtime_context.time_to_live

    def _set_clock(self, group: "KeyGroup") -> None:
        """At the end of the input, processing time stands where the group's last records were processed.

        Flink fires what the final watermark allows in the same instant as the last record, so no state expires
        between the two; here the final watermark arrives a micro-batch later, seconds later on a busy machine.
        """
        if self.watermark == MAX_WATERMARK and group.clock is not None and self._clocked():
            self.processing_time = min(self.processing_time, group.clock)

    def _fire_group_due(self, group: "KeyGroup") -> None:
        """Every due timer of the group's keys, in order of time across the keys (event time first on ties), as
        Flink's timer service fires them: the windows of one key that a watermark closes fire in order of their
        ends whichever of them first received a record."""
        due = [(first, n, stored) for n, stored in enumerate(group.keys_with_timers())
               if (first := first_due(group.data(stored, self.processing_time, self._key_ttl), self.watermark,
                                       self.processing_time)) is not None]
        heapq.heapify(due)
        while due:
            _, n, stored = heapq.heappop(due)
            self._run_key(group, group.user_key(stored), self._fire_next_due)
            first = first_due(group.data(stored, self.processing_time, self._key_ttl), self.watermark, self.processing_time)
            if first is not None:
                heapq.heappush(due, (first, n, stored))

    def _run_key(self, group: "KeyGroup", user_key: Any, work: Callable[[], None]) -> None:
        self.current_key = user_key
        stored = _hashable(user_key)
        self.state = KeyState(group.data(stored, self.processing_time, self._key_ttl), self.processing_time)
        work()
        prune(self.state)
        if self.state.dirty:
            group.put(stored, self.state.data, user_key, self.processing_time if self._key_ttl else None)

    def _key_records(self, keyed: "KeyRecords") -> None:
        """A key's records of a micro-batch, in arrival order."""
        after = keyed
        if keyed.origins is not None and any(keyed.origins):
            # Records an upstream operator's timers emitted reached it before the batch's watermark.
            before = keyed.pick([n for n, origin in enumerate(keyed.origins) if origin])
            after = keyed.pick([n for n, origin in enumerate(keyed.origins) if not origin])
            watermark = self.watermark
            self.watermark = min([watermark] + [t - 1 for t in before.times if t is not None])
            self._elements(before)
            self.watermark = watermark
        # The batch's watermark arrived before its (other) records, as in Flink: timers it passes fire first.
        self._fire_due()
        self._elements(after)
        self._fire_due()
        if self._key_done:
            self.timestamp = None
            with calling(getattr(self._adapter, "_function", None) or self._adapter, self._name, has_record=False):
                self._emit_all(self._adapter.key_done())

    def _elements(self, keyed: "KeyRecords") -> None:
        value = None
        self.time_domain = None
        # _emit_all's work, inlined (keep the two alike): it is one call more per record on the operator's hottest loop.
        # So is Codec.encode's first case: a plain tuple of the output's width is the row as it is.
        encode, where, out, width = self._encoder.encode, self._result_where, self._out, self._tuple_width
        add_value, add_time, add_origin = out.values.append, out.times.append, out.timers.append
        try:
            calls = self._element_calls
            for value, stamp, index in zip(keyed.values, keyed.times, keyed.inputs or itertools.repeat(0)):
                self.timestamp = stamp
                method, context = calls[index]
                if context is None:
                    results = method(value)
                else:  # the user's method, called here rather than through a wrapper
                    results = method(value, context)
                    if results.__class__ is not GENERATOR:
                        results = as_list(results)
                for result in results:
                    kind = result.__class__
                    if kind is tuple and len(result) == width:
                        add_value(result)
                        add_time(stamp)
                    elif kind is Stamped:
                        add_value(encode(result.value, where))
                        add_time(result.timestamp)
                    else:
                        add_value(encode(result, where))
                        add_time(stamp)
                    add_origin(False)
        except UserFunctionError:
            raise
        except Exception as exc:
            raise failure(getattr(self._adapter, "_function", None) or self._adapter, self._name, exc, value) from exc

    # --- what contexts read ---------------------------------------------------------------------
    def emit_side(self, tag_id: str, value: Any) -> None:
        out = self._out
        out.sides[len(out.times)] = (tag_id, encode(value))
        out.values.append(self._none)
        out.times.append(self.timestamp)
        out.timers.append(self.time_domain is not None)

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
            self._decoders = [records.Codec(StructType([StructField(n, StringType()) for n in names]), t)
                              for names, t in zip(self._input_names, self._input_types)]
            # keys that are their own dict keys: no struct, array or map (and not a Python selector's object)
            self._plain_keys = not self._pickled_key and not any(
                isinstance(t, (StructType, ArrayType, MapType)) for t in self._key_types)
            self._encoder = records.Codec(self._out_schema, self._out_type)
            self._result_where = f"{self._name} result"
            self._out_dtypes = ["map" if isinstance(f.dataType, MapType) else "string" if isinstance(f.dataType, StringType)
                                else _NUMPY_TYPES.get(type(f.dataType)) for f in self._out_schema.fields]
            self._none = (None,) * len(self._out_names)
            self._out = _Results()
            self.state = KeyState(None, 0)
            runtime_context = RuntimeContext(self._name, lambda: self.state, subtask, self._parallelism)
            self._tuple_values = getattr(self._adapter, "tuple_values", False)
            self._makers = [self._maker(i) for i in range(len(self._input_names))]
            self._key_done = getattr(type(self._adapter), "key_done", Adapter.key_done) is not Adapter.key_done
            self._key_ttl = getattr(self._adapter, "key_ttl_ms", None)
            self._adapter.open(self, runtime_context)
            # Per input, (the call, its trailing context or None): the user's method itself where the adapter offers it
            # (element_call), else the adapter's call of it (element_function, or element with the index bound).
            direct = getattr(self._adapter, "element_function", None)
            call = getattr(self._adapter, "element_call", None)
            self._element_calls = [
                (call(i) if call is not None else None)
                or (direct(i) if direct is not None else functools.partial(self._adapter.element, i), None)
                for i in range(len(self._input_names))]
            # A result that is a plain tuple of this many fields is its row as it is (Codec.encode's first case);
            # -1 where a PyFlink output type encodes every result.
            self._tuple_width = len(self._out_names) if self._out_type is None else -1
            self._runtime_context = runtime_context
            self._opened = True
        # Spark's time mode "None" gives no batch time (-1): the wall clock, as Flink's processing time is
        self.processing_time = int(time.time() * 1000) if self.timeless else int(timer_values.getCurrentProcessingTimeInMs())
        watermark = int(timer_values.getCurrentWatermarkInMs())
        self._spark_watermark = max(watermark, 0)
        if watermark >= _END_MS:
            watermark = MAX_WATERMARK
        elif watermark <= 0:
            watermark = MIN_WATERMARK
        self.watermark = watermark
        self.time_domain = None

    def _records(self, frames: Iterator[Any]) -> Dict[Any, tuple]:
        """The key group's records by key: hashable key -> (user key, KeyRecords), keys in first-arrival order and each
        key's records in arrival order (Spark's shuffle and stable sort keep it)."""
        import numpy as np

        single = self._key_count == 1 and not self._pickled_key
        layout = self.columns
        user_keys: List[Any] = []
        values: List[Any] = []
        times: List[Any] = []
        inputs: Optional[List[int]] = [] if layout.multi_input else None
        origins: Optional[List[bool]] = [] if layout.chained else None
        # A key selector's keys, pickled: each distinct pickle read once (a batch holds many records of a key).
        selected: Optional[Dict[Any, tuple]] = {} if self._pickled_key else None
        grouped: Optional[List[int]] = None  # where each key's records start, when the one source came grouped by key
        for sources, (column, rows, runs) in enumerate(self._sources(frames)):
            grouped = runs if sources == 0 else None
            if rows == 0:
                continue
            indices, keys, stamps, from_timer, fields = layout.read(column, rows)
            if selected is not None:
                for blob in set(keys[0]).difference(selected):
                    key = self._user_key((blob,))
                    selected[blob] = (key, _hashable(key))
                user_keys += map(selected.__getitem__, keys[0])
            else:
                user_keys += keys[0] if single else [self._user_key(key) for key in zip(*keys)]
            values += self._values(indices, fields, rows)
            times += stamps
            if inputs is not None:
                inputs += indices
            if origins is not None:
                origins += from_timer
        count = len(values)
        if count == 0:
            return {}
        if selected is not None:  # (user key, its dict key) pairs
            user_keys, stored = [pair[0] for pair in user_keys], [pair[1] for pair in user_keys]
        else:
            stored = user_keys if self._plain_keys else [_hashable(k) for k in user_keys]
        batch = KeyRecords(values, times, inputs, origins)
        if grouped is not None:
            ends = grouped[1:] + [count]
            return {stored[start]: (user_keys[start], batch.slice(start, end)) for start, end in zip(grouped, ends)}
        # Each record's code is the position of its key's first record: sorting by it (stably) groups the records by
        # key, keys in first-arrival order, a key's records in arrival order.
        first: Dict[Any, int] = {}
        codes = np.fromiter(map(first.setdefault, stored, range(count)), dtype=np.int64, count=count)
        if len(first) < count and not bool(np.all(codes[1:] >= codes[:-1])):
            order = np.argsort(codes, kind="stable")
            codes = codes[order]
            batch = batch.pick(order.tolist())
        starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1]))).tolist()
        ends = starts[1:] + [count]
        return {key: (user_keys[code], batch.slice(start, end))
                for (key, code), start, end in zip(first.items(), starts, ends)}

    def _sources(self, frames: Iterator[Any]) -> Iterator[Tuple[Callable[[str], list], int, Optional[List[int]]]]:
        """The key group's input as (a reader of a column's values by name, the row count, where each key's records
        start or None) per frame: packed or Arrow input as one Arrow table, read without pandas and, for one integer key,
        already grouped by key (in Arrow rather than by picking Python objects), with the groups' starts."""
        form = self.input_form
        if form is key_group_batches.InputForm.FRAMES:
            for frame in frames:
                yield (lambda name, frame=frame: self._column(frame, name)), len(frame), None
            return
        table = key_group_batches.unpacked_table(frames, self.layout, self.group_columns) \
            if form is key_group_batches.InputForm.ARROW else key_group_batches.table(frames)
        if table is None:
            return
        key = self.columns.keys[0] if self._key_count == 1 and not self._pickled_key else None
        table, starts = key_group_batches.in_key_order(table, key.name) if key is not None else (table, None)
        timezone = self.timezone
        yield (lambda name: key_group_batches.column_values(table, name, timezone)), table.num_rows, starts

    def _maker(self, index: int) -> Callable[[List[list], int], List[Any]]:
        """How input ``index``'s records are made, as the function sees them, from their field columns."""
        if self._tuple_values:
            return lambda columns, rows: list(zip(*columns)) if columns else [()] * rows
        if self._input_types[index] is not None:
            decode = self._decoders[index].decode
            return lambda columns, rows: [decode(list(raw)) for raw in zip(*columns)] if columns else [decode([])] * rows
        make = records.row_factory(self._input_names[index])
        return lambda columns, rows: list(map(make, zip(*columns))) if columns else [make(())] * rows

    def _values(self, inputs: Optional[List[int]], fields: List[List[list]], rows: int) -> List[Any]:
        """A frame's records as the function sees them, from each input's field columns."""
        if inputs is None:
            return self._makers[0](fields[0], rows)
        values: List[Any] = [None] * rows
        for index, columns in enumerate(fields):
            positions = [n for n, i in enumerate(inputs) if i == index]
            if positions:
                mine = [list(map(column.__getitem__, positions)) for column in columns]
                for n, value in zip(positions, self._makers[index](mine, len(positions))):
                    values[n] = value
        return values

    def _column(self, frame: Any, name: str) -> list:
        """A column of a frame Spark handed over, as a list. Spark rebuilds the frames from named tuples,
        which rename fields starting with an underscore (all of kindling's) to their position."""
        if name in frame.columns:
            return frame[name].tolist()
        if len(frame.columns) != len(self.layout):
            raise RuntimeError(f"keyed operator '{self._name}': expected the columns {self.layout}, got {list(frame.columns)}")
        return frame.iloc[:, self.layout.index(name)].tolist()

    def _user_key(self, key: tuple) -> Any:
        if self._pickled_key:
            return pickle.loads(key[0]) if key[0] is not None else None
        return key[0] if len(key) == 1 else tuple(key)

    def _slot_key(self) -> tuple:
        assert self._slots is not None
        return (self._slots[self._subtask], NO_KEY_GROUP)

    def _read_blob(self, now: int) -> KeyState:
        stored = self._blob.get()
        data = pickle.loads(stored[0]) if stored is not None and stored[0] is not None else None
        return KeyState(data, now)

    def _load_group(self) -> "KeyGroup":
        stored = self._blob.get()
        return KeyGroup.load(stored[0] if stored is not None else None)

    def _save_group(self, group: "KeyGroup") -> None:
        if self._key_ttl:
            group.expire(self.processing_time, self._key_ttl)
        for timestamp in group.wake_ups(self.processing_time, self.event_time_mode, self._key_ttl):
            if self.timeless:
                raise RuntimeError(f"keyed operator '{self._name}' runs without timers (Spark's time mode None) but "
                                   "registered one: its adapter must not be marked timeless")
            self._handle.registerTimer(timestamp)
        if not group.dirty:
            return
        if group.empty():
            self._blob.clear()
        else:
            self._blob.update((group.dump(),))

    def _fire_due(self) -> None:
        while self._fire_next_due():
            pass

    def _fire_next_due(self) -> bool:
        """Fire the current key's earliest due timer; False when none is due."""
        due = next_due(self.state, self.watermark, self.processing_time)
        if due is None:
            return False
        timestamp, domain = due
        self.time_domain = domain
        self.timestamp = timestamp if domain == TimeDomain.EVENT_TIME else None
        with calling(getattr(self._adapter, "_function", None) or self._adapter, self._name, has_record=False):
            self._emit_all(self._adapter.timer(timestamp), from_timer=True)
        return True

    def _emit_all(self, values: List[Any], from_timer: bool = False) -> None:
        if values:
            encode = self._encoder.encode
            where = self._result_where
            out = self._out
            for value in values:  # (as _elements' loop does inline)
                if value.__class__ is Stamped:
                    out.values.append(encode(value.value, where))
                    out.times.append(value.timestamp)
                else:
                    out.values.append(encode(value, where))
                    out.times.append(self.timestamp)
                out.timers.append(from_timer)

    def _drain(self) -> "_Results":
        """The results so far."""
        out, self._out = self._out, _Results()
        return out

    def _frame(self, results: "_Results") -> Any:
        """The results as the columns Spark expects (None when there are none).

        A result column whose values are all exactly of its type's Python kind (ints for an integer column, floats
        for a floating one, bools, strings; None for null) goes to Spark as an Arrow-backed column, which Spark's
        conversion passes through; any other keeps the path Spark checks value by value (:func:`_result_column`).
        Event times travel as UTC microseconds: a global window's end (Long.MAX_VALUE ms) is beyond what Python's
        datetime can hold. Spark's event time (SPARK_EVENT_TIME) is the row's, raised to the batch's watermark
        where it is behind it or missing.
        """
        import numpy as np
        import pandas as pd
        import pyarrow as pa

        if not results.times:
            return None
        data = {}
        columns = list(zip(*results.values)) if self._out_names else []
        for name, column, dtype in zip(self._out_names, columns, self._out_dtypes):
            data[name] = _result_column(column, dtype)
        rows = len(results.times)
        missing = results.times.count(None)
        if missing == rows:
            present = np.zeros(rows, dtype=bool)
            millis = np.zeros(rows, dtype=np.int64)
        elif missing == 0:
            present = np.ones(rows, dtype=bool)
            millis = np.array(results.times, dtype=np.int64)
        else:
            times = pd.array(results.times, dtype="Int64")
            present = ~np.asarray(times.isna())
            millis = times.to_numpy(dtype=np.int64, na_value=0)
        millis = np.minimum(millis, _LATEST_MS)
        instants = pa.timestamp("us", tz="UTC")
        data[ROWTIME] = pa.array(millis * 1000, instants, mask=None if missing == 0 else ~present)
        data[FROM_TIMER] = pa.array(results.timers, pa.bool_())
        if results.sides:
            tags: List[Optional[str]] = [None] * rows
            sides: List[Optional[bytes]] = [None] * rows
            for position, (tag, side) in results.sides.items():
                tags[position], sides[position] = tag, side
            data[TAG_COLUMN] = pa.array(tags, pa.string())
            data[SIDE_COLUMN] = pa.array(sides, pa.binary())
        else:
            data[TAG_COLUMN] = pa.nulls(rows, pa.string())
            data[SIDE_COLUMN] = pa.nulls(rows, pa.binary())
        floor = self._spark_watermark
        spark_ms = np.minimum(np.where(present & (millis > floor), millis, floor), _LATEST_MS)
        data[SPARK_EVENT_TIME] = pa.array(spark_ms * 1000, instants)
        return pd.DataFrame({name: pd.arrays.ArrowExtensionArray(column) if isinstance(column, pa.Array) else column
                             for name, column in data.items()})

    def _broadcast_rows(self, keyed: List["KeyRecords"]) -> None:
        self._grouping_key = self._slot_key()
        self.current_key = None
        self.state = self._broadcast = self._read_blob(self.processing_time)
        emitted: List[Any] = []
        for each in keyed:
            for value, self.timestamp in zip(each.values, each.times):
                emitted.extend(self._adapter.broadcast(value))
        if self._subtask == 0:  # every partition applies the element; one emits its results
            self._emit_all(emitted)
        if self.state.dirty:
            self._blob.update((pickle.dumps(self.state.data, protocol=5),))


@contextlib.contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """Python's cycle collector paused while the operator works through a key group's batch.

    The batch's records, results and states are many small containers alive at once; the collector, started by
    their allocation, walks them again and again (a third of the operator's time in ``benchmarks/stateful.py``).
    Memory is still freed as references drop; cycles wait for the next collection after the batch.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class KeyRecords:
    """A key's records of a micro-batch, as columns: the values as the function sees them, their event times (ms or
    None), and where the operator has them, their input indices and whether an upstream timer emitted them."""

    __slots__ = ("values", "times", "inputs", "origins")

    def __init__(self, values: List[Any], times: List[Optional[int]], inputs: Optional[List[int]],
                 origins: Optional[List[bool]]) -> None:
        self.values, self.times, self.inputs, self.origins = values, times, inputs, origins

    def pick(self, positions: List[int]) -> "KeyRecords":
        def take(column: Optional[list]) -> Optional[list]:
            return None if column is None else list(map(column.__getitem__, positions))

        return KeyRecords(take(self.values), take(self.times), take(self.inputs), take(self.origins))  # type: ignore[arg-type]

    def slice(self, start: int, end: int) -> "KeyRecords":
        def cut(column: Optional[list]) -> Optional[list]:
            return None if column is None else column[start:end]

        return KeyRecords(cut(self.values), cut(self.times), cut(self.inputs), cut(self.origins))  # type: ignore[arg-type]


class _Results:
    """An operator's results so far, as columns: the output values (all None on a side output's row), event times
    (ms or None), whether a timer emitted them, and the side outputs' (tag, encoded record) by row."""

    __slots__ = ("values", "times", "timers", "sides")

    def __init__(self) -> None:
        self.values: List[tuple] = []
        self.times: List[Optional[int]] = []
        self.timers: List[bool] = []
        self.sides: Dict[int, tuple] = {}


class KeyGroup:
    """The keys of one key group and their states, stored as one value of Spark's state store.

    Timers stay with each key's state; the group keeps which Spark timers it registered to be woken.
    (The key-group count a group was written with is checked once per job, by runtime.state_layout.)
    """

    def __init__(self, keys: Dict[Any, Dict[str, Any]], wake: set, written: Optional[Dict[Any, int]] = None,
                 clock: Optional[int] = None) -> None:
        self._keys = keys
        self._wake = wake
        self._written = written if written is not None else {}  # key -> when its state was last written (key TTL)
        self.clock = clock  # processing time of the last micro-batch that brought records (kept where state has a TTL)
        self.dirty = False

    @staticmethod
    def load(blob: Optional[bytes]) -> "KeyGroup":
        if blob is None:
            return KeyGroup({}, set())
        stored = pickle.loads(blob)
        return KeyGroup(stored["keys"], stored["wake"], stored.get("written"), stored.get("clock"))

    def dump(self) -> bytes:
        stored = {"keys": self._keys, "wake": self._wake}
        if self._written:
            stored["written"] = self._written
        if self.clock is not None:
            stored["clock"] = self.clock
        return pickle.dumps(stored, protocol=5)

    def tick(self, processing_time: int) -> None:
        """Records were processed at ``processing_time``."""
        if processing_time != self.clock:
            self.clock = processing_time
            self.dirty = True

    def data(self, key: Any, now: int = 0, ttl_ms: Optional[int] = None) -> Optional[Dict[str, Any]]:
        """A key's state; with a key TTL, None once it expired (never visible after, as Flink's NeverReturnExpired)."""
        if ttl_ms and key in self._written and self._written[key] + ttl_ms <= now:
            return None
        return self._keys.get(key)

    def put(self, key: Any, data: Dict[str, Any], user_key: Any, now: Optional[int] = None) -> None:
        """Store a key's state under its hashable form, keeping the key as the function saw it where they differ."""
        if len(data) > (_USER_KEY in data):  # an entry besides the key as the function saw it
            if user_key is not key:
                data[_USER_KEY] = user_key
            self._keys[key] = data
            if now is not None:
                self._written[key] = now
        else:
            self._keys.pop(key, None)
            self._written.pop(key, None)
        self.dirty = True

    def expire(self, now: int, ttl_ms: int) -> None:
        """Remove every key whose state was last written ``ttl_ms`` or longer ago."""
        expired = [k for k, written in self._written.items() if written + ttl_ms <= now]
        for key in expired:
            self._keys.pop(key, None)
            del self._written[key]
        if expired:
            self.dirty = True

    def user_key(self, key: Any) -> Any:
        return self._keys[key].get(_USER_KEY, key)

    def empty(self) -> bool:
        return not self._keys and not self._wake

    def keys_with_timers(self) -> List[Any]:
        return [k for k, data in self._keys.items() if data.get(TIMERS)]

    def woken(self, timestamp: int) -> None:
        """Spark fired (and removed) the wake-up timer at ``timestamp``."""
        if timestamp in self._wake:
            self._wake.discard(timestamp)
            self.dirty = True

    def wake_ups(self, processing_time: int, event_time_mode: bool, ttl_ms: Optional[int] = None) -> List[int]:
        """The Spark timer to register so that the group's earliest pending timer (or, in processing-time mode, the
        earliest key TTL expiry) gets it woken, if one is needed."""
        earliest = next_wake_up(self._keys.values(), processing_time, event_time_mode)
        if ttl_ms and self._written and not event_time_mode:
            expiry = min(self._written.values()) + ttl_ms
            earliest = expiry if earliest is None else min(earliest, expiry)
        if earliest is None or any(w <= earliest for w in self._wake):
            return []
        self._wake.add(earliest)
        self.dirty = True
        return [earliest]


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


def needs_no_clock(adapter: Any) -> bool:
    """Whether an operator off event time can run in Spark's time mode None: neither the adapter nor what it holds
    (function, trigger, window assigner) registers a timer, and no key expires by processing time."""
    return not needs_processing_time(adapter) and not registers_timers(adapter) and not getattr(adapter, "key_ttl_ms", None)


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
                 out_user: StructType, with_slot: bool, bucket: str = BUCKET,
                 hashed_keys: Optional[Sequence[int]] = None, timed: bool = True,
                 key_fields: Sequence[Mapping[int, int]] = ()) -> DataFrame:
    """Union the inputs, group by key group and run the runner; returns the tagged output.

    ``bucket`` names the key-group column: unique per operator, so a sink's plan shows which keyed
    operators it holds state of (``kindling.runtime.state_layout``). ``hashed_keys``: the positions of the key
    columns a record's key group is a hash of (all of them by default). ``timed``: whether any input's records may
    carry an event time (False: none travels). ``key_fields``, per input: its record fields (by position) that are key
    columns (by position), which travel once (:class:`kindling.datastream.operator_columns.OperatorColumns`).

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
    # Keys, records, event time and timer origin travel as top-level columns that pandas hands over exactly
    # (kindling.datastream.operator_columns).
    layout = OperatorColumns([union.schema[key_column(i)].dataType for i in range(key_count)], input_types, runner._chained,
                             from_pandas, timed=timed, key_fields=key_fields)
    columns = layout.columns(lambda i: F.col(key_column(i)), lambda i, name: F.col(value_column(i))[name], F.col(INPUT),
                             F.col(TS), F.col(FROM_TIMER), input_types)
    union = union.select(*([SLOT] if with_slot else []), key_group(key_count, runner.key_groups, with_slot, hashed_keys).alias(bucket), *columns)
    runner.layout = union.columns
    runner.columns = layout
    runner.timezone = union.sparkSession.conf.get("spark.sql.session.timeZone") or "UTC"
    group_columns = ([SLOT] if with_slot else []) + [bucket]
    runner.group_columns = group_columns
    # The workers hand a key group's rows over as Arrow where kindling starts them; elsewhere the rows are packed per
    # key group on the map side (kindling.runtime.keyed_arrow_input, kindling.datastream.key_group_batches).
    arrow_input = arrow_input_available(union.sparkSession)
    runner.input_form = key_group_batches.InputForm.ARROW if arrow_input else key_group_batches.InputForm.PACKED
    grouped = (union if arrow_input else key_group_batches.pack(union, group_columns)).groupBy(*group_columns)
    time_mode = "EventTime" if runner.event_time_mode else "None" if runner.timeless else "ProcessingTime"
    return transform_with_state(grouped, runner, output_schema(out_user), time_mode,
                                SPARK_EVENT_TIME if runner.event_time_mode else None, arrow_input=arrow_input)


def key_group(key_count: int, key_groups: int, with_slot: bool, hashed_keys: Optional[Sequence[int]] = None) -> Column:
    """A record's key group as Spark groups it: the grouping value of a hash bucket of its key columns (those at
    ``hashed_keys``, by default all; none: every record in one key group), NO_KEY_GROUP for a broadcast record,
    which has no key.

    The bucket's value is one Spark's hash partitioning spreads evenly over the shuffle partitions
    (``kindling.runtime.hash_partitioning``): the bucket numbers themselves put 74 of 128 key groups in one of
    two partitions, and that partition's task set the operator's pace. Never null: Spark's columnar path would
    hand a null grouping value back as a float NaN."""
    hashed = [F.col(key_column(i)) for i in (range(key_count) if hashed_keys is None else hashed_keys)]
    bucket = F.pmod(F.xxhash64(*(hashed or [F.lit(0)])), F.lit(key_groups)).cast(IntegerType())
    values = hash_partitioning.balanced_values(key_groups, (KEYED_SLOT,) if with_slot else ())
    # (one literal array, parsed in one call: a literal per value cost a Py4J round trip each, 70 ms a keyed operator)
    group = F.element_at(F.expr(f"array({', '.join(str(int(v)) for v in values)})"), bucket + 1)
    if with_slot:
        return F.when(F.col(SLOT) == F.lit(KEYED_SLOT), group).otherwise(F.lit(NO_KEY_GROUP))
    return group


def from_keyed_operator(df: DataFrame) -> bool:
    """Whether a stream's rows come from a keyed operator (they carry FROM_TIMER)."""
    return FROM_TIMER in df.columns


def _layout_columns(inputs: int, key_count: int, with_slot: bool) -> List[str]:
    return (([SLOT] if with_slot else []) + [key_column(i) for i in range(key_count)] + [INPUT]
            + [value_column(i) for i in range(inputs)] + [TS, FROM_TIMER])

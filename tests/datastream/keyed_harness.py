"""Runs kindling's keyed operator runner in-process, with a dict for Spark's state store and timers.

It drives the exact code Spark runs (KeyedRunner and the adapters) batch by batch with chosen
watermarks, so operator semantics are checked in milliseconds; the Spark tests check the wiring.
"""
import pandas as pd
import pyarrow as pa
from pyspark.sql import Row
from pyspark.sql.types import StringType, StructField, StructType

from kindling.datastream import operator as op
from kindling.datastream.operator_columns import NO_TIME, OperatorColumns


class Blob:
    def __init__(self, h): self.h = h
    def get(self): return self.h.store.get(self.h.key)
    def update(self, v): self.h.store[self.h.key] = v
    def clear(self): self.h.store.pop(self.h.key, None)

class Handle:
    def __init__(self):
        self.store = {}
        self.key = None
        self.timers = {}
        self._statefulProcessorApiClient = self

    def set_implicit_key(self, key):
        self.key = tuple(key)
    def getValueState(self, name, schema): return Blob(self)
    def registerTimer(self, t): self.timers.setdefault(self.key, set()).add(t)

class TV:
    def __init__(self, pt, wm): self.pt, self.wm = pt, wm
    def getCurrentProcessingTimeInMs(self): return self.pt
    def getCurrentWatermarkInMs(self): return self.wm

class ET:
    def __init__(self, t): self.t = t
    def getExpiryTimeInMs(self): return self.t

def key_group(key, key_groups):
    """A stable stand-in for Spark's hash bucket of the key."""
    return sum(repr(key).encode()) % key_groups


def run(adapter, out_schema, input_names, batches, key_count=1, broadcast=False, key_groups=3):
    """Run batches of (watermark_ms, [(key, input index, ts_ms, value dict)]); key None marks a broadcast record.

    Records reach the runner as Spark's columnar path hands them over: one pandas frame per key group."""
    h = Handle()
    slots = {0: 7} if broadcast else None
    runner = op.KeyedRunner(adapter, "t", out_schema, key_count, 1, input_names, slots, key_groups=key_groups)
    # Keys and fields as plain columns (values as they are): the layout's typed columns are checked on Spark.
    records = [StructType([StructField(n, StringType()) for n in names]) for names in input_names]
    runner.columns = layout = OperatorColumns([StringType()] * key_count, records, chained=False, convert=lambda _: None)
    runner.init(h)
    out = []
    pt = 1000
    for wm, rows in batches:
        pt += 1000
        groups = []
        for key, _index, _t, _value in rows:
            grouping = _grouping(key, broadcast, key_groups)
            if grouping not in groups:
                groups.append(grouping)
        groups.sort(key=lambda g: g[0] != 7 if broadcast else 0)  # Spark sorts the broadcast slot groups first
        for grouping in groups:
            h.key = grouping
            members = [r for r in rows if _grouping(r[0], broadcast, key_groups) == grouping]
            frame = {op.key_column(0): [k for k, _, _, _ in members], op.TS: [NO_TIME if t is None else t for _, _, t, _ in members]}
            if layout.multi_input:
                frame[op.INPUT] = [i for _, i, _, _ in members]
            for j, fields in enumerate(layout.values):
                for field, name in zip(fields, input_names[j]):
                    frame[field.name] = [v[name] if i == j and v is not None else None for _, i, _, v in members]
            out += _rows(runner.handleInputRows(grouping, iter([pd.DataFrame(frame)]), TV(pt, wm)))
        # The partition's input ended: Spark's call for expired timers, with the gathered results handed over
        # around it (kindling.runtime.transform_with_state).
        out += _rows(runner.gathered())
        for key, timers in list(h.timers.items()):
            for t in sorted(timers):
                if t <= pt:
                    timers.discard(t)
                    h.key = key
                    out += _rows(runner.handleExpiredTimer(key, TV(pt, wm), ET(t)))
        out += _rows(runner.gathered())
    return out


def _grouping(key, broadcast, key_groups):
    if broadcast:
        return (7, op.NO_KEY_GROUP) if key is None else (op.KEYED_SLOT, key_group(key, key_groups))
    return (key_group(key, key_groups),)


def _rows(frames):
    """The runner's result frames as Rows, event times as the microseconds Spark reads from them (Arrow-backed
    columns read as Spark reads them, others as their Python values)."""
    rows = []
    for frame in frames:
        columns = []
        for name in frame.columns:
            column = frame[name]
            if isinstance(column.dtype, pd.ArrowDtype):
                values = pa.array(column.array)
                columns.append((values.cast(pa.int64()) if pa.types.is_timestamp(values.type) else values).to_pylist())
            elif str(column.dtype).startswith("datetime64"):
                micros = column.to_numpy().view("int64").tolist()
                columns.append([None if column.isna().iloc[i] else micros[i] for i in range(len(column))])
            else:
                columns.append(column.tolist())
        factory = Row(*frame.columns)
        rows += [factory(*values) for values in zip(*columns)]
    return rows

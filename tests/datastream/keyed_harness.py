"""Runs kindling's keyed operator runner in-process, with a dict for Spark's state store and timers.

It drives the exact code Spark runs (KeyedRunner and the adapters) batch by batch with chosen
watermarks, so operator semantics are checked in milliseconds; the Spark tests check the wiring.
"""
from pyspark.sql import Row

from kindling.datastream import operator as op


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

def run(adapter, out_schema, input_names, batches, key_count=1, broadcast=False):
    """Run batches of (watermark_ms, [(key, input index, ts_ms, value dict)]); key None marks a broadcast record."""
    h = Handle()
    slots = {0: 7} if broadcast else None
    runner = op.KeyedRunner(adapter, "t", out_schema, key_count, 1, input_names, slots)
    runner.init(h)
    out = []
    pt = 1000
    for wm, rows in batches:
        pt += 1000
        keys = []
        for key, _index, _t, _value in rows:
            if key not in keys:
                keys.append(key)
        keys.sort(key=lambda k: k is not None)  # Spark sorts the broadcast slot groups first
        for key in keys:
            grouping = ((7, None) if key is None else (op.KEYED_SLOT, key)) if broadcast else (key,)
            h.key = grouping
            rs = [Row(**{op.INPUT: i, op.value_column(i): v, op.TS: t}) for k, i, t, v in rows if k == key]
            out += list(runner.handleInputRows(grouping, iter(rs), TV(pt, wm)))
        for key, timers in list(h.timers.items()):
            for t in sorted(timers):
                if t <= pt:
                    timers.discard(t)
                    h.key = key
                    out += list(runner.handleExpiredTimer(key, TV(pt, wm), ET(t)))
    return out

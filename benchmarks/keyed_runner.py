"""The keyed operator's Python per record, without Spark: kindling's runner vs a hand-written loop over the same Arrow.

Spark's share of a keyed job (the map side's packing, the shuffle, the state server, the conversion of the results
to Arrow) varies with the machine's load; what kindling's Python adds per record does not. This runs the exact code
a keyed operator's worker runs (``KeyedRunner`` over key groups packed as the map side packs them, state in a dict
standing in for Spark's state store) for the running average of ``stateful.py``, and as the reference a loop a user
would write by hand over the same packed Arrow: unpack, read the columns, keep ``{key: (sum, count)}``, emit
``(key, average)`` per record into Arrow columns. Both end with Arrow results (kindling's through Spark's own
pandas-to-Arrow conversion, as its worker does).

Prints records per second and microseconds per record for each (the best of ``--repeat``) and last
``ratio=<kindling/hand-written>`` (of the rates): the share of kindling's per-record time that any Python running
average over these records pays.

    python benchmarks/keyed_runner.py [--groups 20] [--records 12000] [--keys 800] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Dict, List

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql.conversion import ArrowBatchTransformer, PandasToArrowConversion
from pyspark.sql.types import DoubleType, IntegerType, LongType, StructField, StructType
from stateful import RunningAverage

from kindling.datastream import key_group_batches, operator
from kindling.datastream.operator_columns import NO_TIME, OperatorColumns
from kindling.datastream.process import KeyedProcessAdapter

RECORD = StructType([StructField("id", LongType()), StructField("key", IntegerType()), StructField("value", DoubleType())])
RESULT = StructType([StructField("key", IntegerType()), StructField("average", DoubleType())])


class _StateStore:
    """Spark's state handle as the runner uses it, over a dict: one blob per key group."""

    def __init__(self) -> None:
        self.blobs: Dict[tuple, Any] = {}
        self.key: tuple = ()
        self._statefulProcessorApiClient = self

    def set_implicit_key(self, key: tuple) -> None:
        self.key = tuple(key)

    def getValueState(self, name: str, schema: Any) -> "_StateStore":
        return self

    def get(self) -> Any:
        return self.blobs.get(self.key)

    def update(self, value: Any) -> None:
        self.blobs[self.key] = value

    def clear(self) -> None:
        self.blobs.pop(self.key, None)

    def registerTimer(self, timestamp: int) -> None:
        raise AssertionError("the running average registers no timer")


class _BatchTime:
    def getCurrentProcessingTimeInMs(self) -> int:
        return 1000

    def getCurrentWatermarkInMs(self) -> int:
        return -1


def _layout() -> OperatorColumns:
    """The operator's input as stateful.py's job ships it: keyed by the record's field ``key`` (which travels once, as
    the key), records without event times."""
    return OperatorColumns([IntegerType()], [RECORD], chained=False, convert=operator.from_pandas, timed=False,
                           key_fields=[{1: 0}])


def packed_groups(layout: OperatorColumns, groups: int, records: int, keys: int) -> List[pd.DataFrame]:
    """Each key group's records packed as the map side packs them, as Spark hands them to the worker."""
    rng = np.random.default_rng(7)
    frames = []
    for _ in range(groups):
        key = rng.integers(0, keys, records).astype(np.int32)
        columns = {"bucket": pa.array(np.zeros(records, np.int32)), layout.keys[0].name: pa.array(key),
                   operator.TS: pa.array(np.full(records, NO_TIME, np.int64))}
        for field, values in zip(layout.values[0], (np.arange(records, dtype=np.int64), key, rng.random(records) * 100)):
            columns[field.name] = pa.array(values)
        table = pa.table({name: columns[name] for name in ["bucket", *layout.names]})  # (the columns the job ships)
        packed = key_group_batches.split(table.to_batches(max_chunksize=records // 3 + 1), ["bucket"])
        frames.append(pd.concat(ArrowBatchTransformer.to_pandas(packed, timezone="UTC"), axis=1)[[key_group_batches.PACKED]])
    return frames


def run_kindling(frames: List[pd.DataFrame]) -> int:
    runner = operator.KeyedRunner(KeyedProcessAdapter(RunningAverage()), "RunningAverage", RESULT, 1, 2,
                                  [RECORD.fieldNames()], key_types=[IntegerType()], value_types=[RECORD], timeless=True)
    runner.columns = layout = _layout()
    runner.layout = ["bucket"] + layout.names
    runner.input_form = key_group_batches.InputForm.PACKED
    store = _StateStore()
    runner.init(store)
    schema = operator.output_schema(RESULT)
    rows = 0
    results = []
    for group, frame in enumerate(frames):
        store.key = (group,)
        results += runner.handleInputRows((group,), iter([frame]), _BatchTime())
    results += runner.gathered()  # the partition's end: what the runner gathered across key groups
    for result in results:
        PandasToArrowConversion.convert(result, schema, timezone="UTC", safecheck=True, arrow_cast=True,
                                        assign_cols_by_name=True, int_to_decimal_coercion_enabled=False)
        rows += len(result)
    return rows


def run_by_hand(frames: List[pd.DataFrame], layout: OperatorColumns) -> int:
    key_name, value_name = layout.keys[0].name, layout.values[0][2].name
    state: Dict[tuple, Dict[int, tuple]] = {}
    rows = 0
    with operator._cycle_collection_paused():  # as kindling's runner works through a key group
        for group, frame in enumerate(frames):
            rows += _by_hand(group, frame, key_name, value_name, state)
    return rows


def _by_hand(group: int, frame: pd.DataFrame, key_name: str, value_name: str, state: Dict[tuple, Dict[int, tuple]]) -> int:
    """One key group's running averages by hand: its packed records, a dict of (sum, count) per key, Arrow out."""
    table = key_group_batches.table(iter([frame]))
    sums = state.setdefault((group,), {})
    keys, averages = [], []
    for key, value in zip(table.column(key_name).to_pylist(), table.column(value_name).to_pylist()):
        total, count = sums.get(key, (0.0, 0))
        total, count = total + value, count + 1
        sums[key] = (total, count)
        keys.append(key)
        averages.append(total / count)
    result = pa.RecordBatch.from_arrays([pa.array(keys, pa.int32()), pa.array(averages, pa.float64())], names=["key", "average"])
    return result.num_rows


def best(repeat: int, run: Any) -> tuple[float, int]:
    run()  # warm-up
    times, rows = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        rows = run()
        times.append(time.perf_counter() - started)
    return min(times), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=20, help="key groups (one handleInputRows call each)")
    parser.add_argument("--records", type=int, default=12_000, help="records per key group")
    parser.add_argument("--keys", type=int, default=800, help="distinct keys per key group")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    layout = _layout()
    frames = packed_groups(layout, args.groups, args.records, args.keys)
    kindling_s, kindling_rows = best(args.repeat, lambda: run_kindling(frames))
    hand_s, hand_rows = best(args.repeat, lambda: run_by_hand(frames, layout))
    assert kindling_rows == hand_rows == args.groups * args.records, (kindling_rows, hand_rows)
    print(f"kindling keyed runner (KeyedProcessFunction, ValueState): {kindling_rows / kindling_s:,.0f} records/s "
          f"({kindling_s / kindling_rows * 1e6:.2f} us/record)")
    print(f"hand-written Python loop (dict state, Arrow in and out): {hand_rows / hand_s:,.0f} records/s "
          f"({hand_s / hand_rows * 1e6:.2f} us/record)")
    print(f"ratio={kindling_rows / kindling_s / (hand_rows / hand_s):.3f}")


if __name__ == "__main__":
    main()

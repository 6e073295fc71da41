"""Which of Spark's keyed-state paths can carry a Python keyed function at columnar speed.

The same work — a running average per key, one Python call per record, one result per record —
written directly on each keyed-state path Spark 4 offers Python, over the same bounded datagen
input in one session, against Spark's built-in ``groupBy.avg`` (the reference):

- ``transformWithState`` per key: Spark's state server; each key costs round trips over a local
  socket (set the key, read its state, write it) and its records arrive as Rows. kindling's keyed
  operator runs here today.
- ``transformWithState`` over key buckets: rows grouped by a hash bucket of the key; a bucket's keys
  keep their states in one value, so a bucket (hundreds of keys) costs the round trips a key cost.
- ``transformWithStateInPandas`` over key buckets: the same, with records in and results out as
  columns (pandas frames) instead of one Row object each.
- ``applyInPandasWithState`` per key: the key's state travels inside the Arrow stream beside its
  rows (no round trip), one pandas frame per key.

Prints each path's rate, its ratio to the built-in, and ``ratio=<best Python path/built-in>``;
``--buckets`` sets the bucket count. benchmarks/README.md has the figures and what they decided.

    python benchmarks/state_paths.py [--records 400000] [--keys 20000] [--buckets 256]
"""

from __future__ import annotations

import argparse
import pickle
import tempfile
import time
from typing import Any, Callable, Dict, Iterator, Tuple

import pandas as pd
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import BinaryType, DoubleType, IntegerType, LongType, StructField, StructType

from kindling.connectors.base import spark_format
from kindling.runtime.session import get_or_create_session

BUCKETS = 256
OUTPUT = StructType([StructField("key", IntegerType()), StructField("average", DoubleType())])
STATE = StructType([StructField("total", DoubleType()), StructField("count", LongType())])


def running_average(state: Tuple[float, int], value: float) -> Tuple[Tuple[float, int], float]:
    """The user function every path calls once per record."""
    total, count = state
    total, count = total + value, count + 1
    return (total, count), total / count


class RunningAverageProcessor(StatefulProcessor):
    def init(self, handle: StatefulProcessorHandle) -> None:
        self.state = handle.getValueState("sum-count", STATE)

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        stored = self.state.get()
        state = (stored[0], stored[1]) if stored is not None else (0.0, 0)
        out = []
        for row in rows:
            state, average = running_average(state, row["value"])
            out.append(Row(key=key[0], average=average))
        self.state.update(state)
        return iter(out)

    def close(self) -> None:
        pass


class BucketProcessor(StatefulProcessor):
    """transformWithState over buckets of keys: one state read and write per bucket, the keys' states in one blob."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.blob = handle.getValueState("keys", StructType([StructField("blob", BinaryType())]))

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        stored = self.blob.get()
        states: Dict[int, Tuple[float, int]] = pickle.loads(stored[0]) if stored is not None else {}
        out = []
        for row in rows:
            user_key = row["key"]
            states[user_key], average = running_average(states.get(user_key, (0.0, 0)), row["value"])
            out.append(Row(key=user_key, average=average))
        self.blob.update((pickle.dumps(states, protocol=5),))
        return iter(out)

    def close(self) -> None:
        pass


class PandasBucketProcessor(StatefulProcessor):
    """transformWithStateInPandas over buckets of keys: records in and out as columns, one state read and write per bucket."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.blob = handle.getValueState("keys", StructType([StructField("blob", BinaryType())]))

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:
        stored = self.blob.get()
        states: Dict[int, Tuple[float, int]] = pickle.loads(stored[0]) if stored is not None else {}
        keys: list = []
        averages: list = []
        for frame in rows:
            for user_key, value in zip(frame["key"].tolist(), frame["value"].tolist()):
                states[user_key], average = running_average(states.get(user_key, (0.0, 0)), value)
                keys.append(user_key)
                averages.append(average)
        self.blob.update((pickle.dumps(states, protocol=5),))
        yield pd.DataFrame({"key": keys, "average": averages})

    def close(self) -> None:
        pass


def apply_with_state(key: Tuple[Any, ...], frames: Iterator[pd.DataFrame], state: GroupState) -> Iterator[pd.DataFrame]:
    current = state.get if state.exists else (0.0, 0)
    for frame in frames:
        averages = []
        for value in frame["value"].tolist():
            current, average = running_average(current, value)
            averages.append(average)
        yield pd.DataFrame({"key": [key[0]] * len(averages), "average": averages})
    state.update(current)


def source(spark: SparkSession, records: int, keys: int) -> DataFrame:
    return spark.readStream.format(spark_format("datagen")).options(**_datagen(records, keys)).schema(
        "id BIGINT, key INT, value DOUBLE").load()


def _datagen(records: int, keys: int) -> Dict[str, str]:
    return {"number-of-rows": str(records), "rows-per-second": str(max(records, 1)),
            "fields.id.kind": "sequence", "fields.id.start": "0", "fields.id.end": str(records - 1),
            "fields.key.min": "0", "fields.key.max": str(keys - 1), "fields.value.min": "0", "fields.value.max": "100"}


def run(query: Callable[[DataFrame], DataFrame], spark: SparkSession, records: int, keys: int, mode: str, root: str) -> float:
    df = query(source(spark, records, keys))
    started = time.monotonic()
    handle = (df.writeStream.format("noop").outputMode(mode).option("checkpointLocation", tempfile.mkdtemp(dir=root))
              .trigger(availableNow=True).start())
    handle.awaitTermination()
    return records / (time.monotonic() - started)


PATHS: Dict[str, Tuple[Callable[[DataFrame], DataFrame], str]] = {
    "built-in groupBy.avg": (lambda df: df.groupBy("key").agg(F.avg("value").alias("average")), "update"),
    "transformWithState per key": (
        lambda df: df.groupBy("key").transformWithState(RunningAverageProcessor(), OUTPUT, "Append", "None"), "append"),
    "transformWithState over key buckets": (
        lambda df: df.withColumn("bucket", F.pmod(F.xxhash64("key"), F.lit(BUCKETS))).groupBy("bucket")
        .transformWithState(BucketProcessor(), OUTPUT, "Append", "None"), "append"),
    "transformWithStateInPandas over key buckets": (
        lambda df: df.withColumn("bucket", F.pmod(F.xxhash64("key"), F.lit(BUCKETS))).groupBy("bucket")
        .transformWithStateInPandas(PandasBucketProcessor(), OUTPUT, "Append", "None"), "append"),
    "applyInPandasWithState per key": (
        lambda df: df.groupBy("key").applyInPandasWithState(apply_with_state, OUTPUT, STATE, "append",
                                                            GroupStateTimeout.NoTimeout), "append"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--buckets", type=int, default=256)
    args = parser.parse_args()
    global BUCKETS
    BUCKETS = args.buckets
    from kindling.config import Configuration

    spark = get_or_create_session(Configuration({"parallelism.default": 2, "kindling.log.level": "ERROR"}))
    root = tempfile.mkdtemp(prefix="kindling-state-paths-")
    for query, mode in PATHS.values():  # warm-up: JVM, Python workers, RocksDB
        run(query, spark, 20_000, 1_000, mode, root)
    rates = {name: run(query, spark, args.records, args.keys, mode, root) for name, (query, mode) in PATHS.items()}
    reference = rates["built-in groupBy.avg"]
    for name, rate in rates.items():
        print(f"{name}: {rate:,.0f} rows/s, ratio {rate / reference:.3f}")
    best = max(rate for name, rate in rates.items() if not name.startswith("built-in"))
    print(f"ratio={best / reference:.3f}")


if __name__ == "__main__":
    main()

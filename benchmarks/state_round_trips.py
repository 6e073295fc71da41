"""What one call to Spark's state server costs a transformWithStateInPandas worker, by the size of the value.

A keyed operator reads and writes each key group's state once per micro-batch through Spark's state server (a
socket round trip each, besides the one PySpark makes to set the grouping key), so the count of key groups times
this cost is a fixed share of every batch. This runs a bare ``transformWithStateInPandas`` over four grouping keys
(one shuffle partition, so nothing else competes for the cores) whose ``handleInputRows`` times ``--calls`` state
reads and as many writes of a binary value of each ``--sizes`` bytes, in kindling's session (RocksDB state store),
over four micro-batches of a file source. Prints the mean microseconds a call for each size (the median over the
keys of the last three batches).

    python benchmarks/state_round_trips.py [--sizes 10,17000,200000] [--calls 200]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, List

import pandas as pd
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import BinaryType, StructField, StructType

from kindling import StreamEnvironment


class Timed(StatefulProcessor):
    def __init__(self, size: int, calls: int) -> None:
        self.size, self.calls = size, calls

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.state = handle.getValueState("blob", StructType([StructField("blob", BinaryType())]))

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:
        for _ in rows:
            pass
        value = (b"x" * self.size,)
        self.state.update(value)
        started = time.perf_counter()
        for _ in range(self.calls):
            self.state.get()
        read = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(self.calls):
            self.state.update(value)
        written = time.perf_counter() - started
        yield pd.DataFrame({"get_us": [read / self.calls * 1e6], "update_us": [written / self.calls * 1e6]})

    def close(self) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,17000,200000")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    env = StreamEnvironment({"parallelism.default": 1, "kindling.log.level": "ERROR"})
    spark = env.spark
    root = tempfile.mkdtemp(prefix="kindling-state-round-trips-")
    for size in [int(s) for s in args.sizes.split(",")]:
        results: List[Any] = []
        source = Path(root) / f"input-{size}"
        source.mkdir()
        for batch in range(4):  # one micro-batch each, availableNow: the first starts the worker and the store
            (source / f"{batch}.json").write_text("".join(f'{{"k": {k}}}\n' for k in range(4)))
            frame = spark.readStream.schema("k long").json(str(source))
            query = (frame.groupBy("k").transformWithStateInPandas(Timed(size, args.calls), "get_us double, update_us double",
                                                                   "Append", "None")
                     .writeStream.foreachBatch(lambda rows, _id, into=results: into.extend(rows.collect()))
                     .option("checkpointLocation", f"{root}/checkpoint-{size}").trigger(availableNow=True).start())
            query.awaitTermination()
        measured = results[4:]
        print(f"value of {size:>7,} bytes: get {statistics.median(r.get_us for r in measured):6.0f} us, "
              f"update {statistics.median(r.update_us for r in measured):6.0f} us (median of {len(measured)} key visits)")


if __name__ == "__main__":
    main()

"""What kindling needs from Spark, tried over Spark Connect: run it to see which parts a Connect client gets.

kindling refuses ``kindling.spark.master = sc://...``; this probe is the measurement behind that refusal.
It connects to a Spark Connect server (``local[2]`` starts one in-process from the PySpark wheel) and tries,
one by one: registering a Python data source, a streaming query reading it, ``transformWithStateInPandas``
(kindling's keyed-state core), ``foreachBatch``, a streaming query listener, and the JVM handles kindling's
SQL planner and savepoints read (``DataFrame._jdf``, ``SparkContext``).

Run (the Connect client needs three packages PySpark lists as its ``connect`` extra)::

    .venv/bin/pip install grpcio-status googleapis-common-protos zstandard
    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python examples/spark_connect_probe.py local[2]
    .venv/bin/python examples/spark_connect_probe.py sc://host:15002     # a running Connect server
"""

from __future__ import annotations

import sys
import tempfile
from typing import Any, Callable, Iterator

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming import StreamingQueryListener
from pyspark.sql.streaming.stateful_processor import StatefulProcessor
from pyspark.sql.types import LongType, StructField, StructType


class Counter(DataSource):
    """Ten rows (k0..k2, 0..9) in one micro-batch."""

    @classmethod
    def name(cls) -> str:
        return "probe_counter"

    def schema(self) -> str:
        return "k string, v long"

    def streamReader(self, schema: StructType) -> "CounterReader":
        return CounterReader()


class CounterReader(DataSourceStreamReader):
    def initialOffset(self) -> dict:
        return {"n": 0}

    def latestOffset(self) -> dict:
        return {"n": 10}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [InputPartition(0)] if end["n"] > start["n"] else []

    def read(self, partition: InputPartition) -> Iterator[tuple]:
        for i in range(10):
            yield (f"k{i % 3}", i)

    def commit(self, end: dict) -> None:
        pass


class RunningSum(StatefulProcessor):
    def init(self, handle: Any) -> None:
        self.total = handle.getValueState("total", StructType([StructField("t", LongType())]))

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:
        total = self.total.get()[0] if self.total.exists() else 0
        for frame in rows:
            total += int(frame["v"].sum())
        self.total.update((total,))
        yield pd.DataFrame({"k": [key[0]], "total": [total]})

    def close(self) -> None:
        pass


class Quiet(StreamingQueryListener):
    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        pass

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        pass


def main(remote: str) -> int:
    spark = SparkSession.builder.remote(remote).getOrCreate()
    # transformWithState needs the RocksDB state store; a session setting, as kindling sets it.
    spark.conf.set("spark.sql.streaming.stateStore.providerClass",
                   "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")

    def run_to_memory(frame: Any, name: str, mode: str = "append") -> list[tuple]:
        query = (frame.writeStream.format("memory").queryName(name).outputMode(mode)
                 .option("checkpointLocation", tempfile.mkdtemp()).trigger(availableNow=True).start())
        query.awaitTermination(180)
        return sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {name}").collect())

    def for_each_batch() -> str:
        query = (spark.readStream.format("probe_counter").load().writeStream.foreachBatch(lambda batch, _: batch.count())
                 .option("checkpointLocation", tempfile.mkdtemp()).trigger(availableNow=True).start())
        query.awaitTermination(180)
        return "ran"

    probes: list[tuple[str, Callable[[], Any]]] = [
        ("register a Python data source", lambda: spark.dataSource.register(Counter) or "registered"),
        ("stream from a Python data source", lambda: len(run_to_memory(spark.readStream.format("probe_counter").load(), "probe_rows"))),
        ("transformWithStateInPandas (keyed state)", lambda: run_to_memory(
            spark.readStream.format("probe_counter").load().groupBy("k").transformWithStateInPandas(
                RunningSum(), "k string, total long", "Update", "None"), "probe_state", "update")),
        ("foreachBatch", for_each_batch),
        ("a streaming query listener", lambda: spark.streams.addListener(Quiet()) or "added"),
        ("DataFrame._jdf (analyzed plans: kindling's SQL planner, savepoints)", lambda: spark.range(1)._jdf),
        ("SparkContext (log level, addPyFile, connector registration)", lambda: spark.sparkContext.master),
    ]
    failed = 0
    for name, probe in probes:
        try:
            print(f"works  {name}: {probe()}", flush=True)
        except Exception as exc:  # a probe reports every failure and goes on
            failed += 1
            print(f"FAILS  {name}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}", flush=True)
    spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "local[2]"))

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from pyspark.sql.streaming.stateful_processor import StatefulProcessor

from kindling.runtime.plan_nodes import read_plan
from kindling.runtime.watermark_batches import output_waits_on_watermark


@pytest.fixture
def ticks(spark):
    def read(name: str):
        return (spark.readStream.format("rate").load().withWatermark("timestamp", "1 second")
                .select(F.col("value").alias(f"{name}_key"), F.col("timestamp").alias(f"{name}_ts")))
    return read


class _Echo(StatefulProcessor):
    def init(self, handle) -> None:
        pass

    def handleInputRows(self, key, rows, timerValues):
        yield from rows

    def close(self) -> None:
        pass


def test_operators_that_only_evict_on_a_watermark_need_no_batch_without_input(ticks, spark):
    left, right = ticks("l"), ticks("r")
    interval = F.expr("l_key = r_key AND r_ts BETWEEN l_ts AND l_ts + INTERVAL 1 MINUTE")
    static = spark.range(3).withColumnRenamed("id", "s_key")
    quiet = {
        "inner interval join": left.join(right, interval, "inner"),
        "deduplication": left.dropDuplicates(["l_key"]),
        "aggregation by a key": left.groupBy("l_key").count(),
        "outer join with a static table": left.join(static, F.expr("l_key = s_key"), "left"),
        "transformWithState without a time mode": left.groupBy("l_key").transformWithStateInPandas(
            _Echo(), "l_key long, l_ts timestamp", "Append", "None"),
    }
    for name, frame in quiet.items():
        assert not output_waits_on_watermark(read_plan(frame)), name


def test_operators_that_emit_on_a_watermark_keep_spark_s_batches_without_input(ticks):
    left, right = ticks("l"), ticks("r")
    interval = F.expr("l_key = r_key AND r_ts BETWEEN l_ts AND l_ts + INTERVAL 1 MINUTE")
    waiting = {
        "outer interval join": left.join(right, interval, "leftOuter"),
        "window aggregation": left.groupBy(F.window("l_ts", "1 minute")).count(),
        "aggregation by the rowtime": left.groupBy("l_ts").count(),
        "transformWithState with processing-time timers": left.groupBy("l_key").transformWithStateInPandas(
            _Echo(), "l_key long, l_ts timestamp", "Append", "ProcessingTime"),
        "transformWithState with event-time timers": left.groupBy("l_key").transformWithStateInPandas(
            _Echo(), "l_key long, l_ts timestamp", "Append", "EventTime"),
        "an inner join below a window aggregation": left.join(right, interval, "inner")
        .groupBy(F.window("l_ts", "1 minute")).count(),
    }
    for name, frame in waiting.items():
        assert output_waits_on_watermark(read_plan(frame)), name

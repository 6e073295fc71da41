"""Batch mode against streaming mode and hand-written PySpark: one bounded aggregation, three ways.

Over one bounded datagen table (a sequence id, a key in 0..999, an amount in 1..100), in one SparkSession:

(a) the reference: hand-written PySpark, ``spark.read`` of the same Data Source with ``groupBy(k).agg(count,
    sum)`` and ``collect()``: what a Spark user writes by hand for this job;
(b) kindling in batch mode: ``SET 'execution.runtime-mode' = 'batch'`` and ``SELECT k, COUNT(*), SUM(amount)
    FROM t GROUP BY k`` collected;
(c) kindling in streaming mode: the same query over the same table, run to the end of its input.

Each is run once untimed (a warm-up over 10k rows) and then timed. Prints rows/s of each, the batch/streaming
throughput ratio and, last, ``ratio=<batch mode / hand-written PySpark>``.

    python benchmarks/batch_mode.py [--rows 2000000]
"""

from __future__ import annotations

import argparse
import tempfile
import time


def table(rows: int, name: str) -> str:
    return (f"CREATE TABLE {name} (id BIGINT, k INT, amount INT) WITH ('connector' = 'datagen', 'number-of-rows' = '{rows}', "
            f"'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{rows}', "
            "'fields.k.min' = '0', 'fields.k.max' = '999', 'fields.amount.min' = '1', 'fields.amount.max' = '100')")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    args = parser.parse_args()
    from pyspark.sql import functions as F

    from kindling.connectors.base import Source, spark_format
    from kindling.env import StreamEnvironment
    from kindling.row_layout import EOS_COLUMN

    with tempfile.TemporaryDirectory(prefix="kindling-batch-bench-") as checkpoints:
        conf = {"state.checkpoints.dir": checkpoints, "execution.checkpointing.interval": "200 ms", "parallelism.default": 2,
                "kindling.log.level": "ERROR"}
        batch = StreamEnvironment({**conf, "execution.runtime-mode": "batch"})
        streaming = StreamEnvironment(conf, spark=batch.spark)
        spark = batch.spark
        tables = 0

        def kindling(env: StreamEnvironment, rows: int) -> tuple[float, int]:
            nonlocal tables
            tables += 1
            env.execute_sql(table(rows, f"t{tables}"))
            started = time.monotonic()
            result = env.execute_sql(f"SELECT k, COUNT(*) AS n, SUM(amount) AS s FROM t{tables} GROUP BY k").collect(timeout=3600)
            elapsed = time.monotonic() - started
            return elapsed, sum(r.n for r in result)

        def pyspark(rows: int) -> tuple[float, int]:
            options = {"number-of-rows": str(rows), "fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": str(rows),
                       "fields.k.min": "0", "fields.k.max": "999", "fields.amount.min": "1", "fields.amount.max": "100"}
            source = Source("datagen", options, batch.spark.createDataFrame([], "id BIGINT, k INT, amount INT").schema)
            started = time.monotonic()
            df = spark.read.format(spark_format("datagen")).schema(source.read_schema()).options(**source.options).load()
            result = (df.where(F.col(EOS_COLUMN).isNull() | ~F.col(EOS_COLUMN)).groupBy("k")
                      .agg(F.count(F.lit(1)).alias("n"), F.sum("amount").alias("s")).collect())
            elapsed = time.monotonic() - started
            return elapsed, sum(r.n for r in result)

        runs = (("hand-written PySpark (spark.read + groupBy.agg)", pyspark),
                ("kindling batch mode (SQL GROUP BY)", lambda n: kindling(batch, n)),
                ("kindling streaming mode (SQL GROUP BY)", lambda n: kindling(streaming, n)))
        for _, run in runs:
            run(10_000)  # warm-up: Python workers, class loading
        rates = {}
        for name, run in runs:
            elapsed, counted = run(args.rows)
            assert counted == args.rows, f"{name}: counted {counted} rows of {args.rows}"
            rates[name] = args.rows / elapsed
            print(f"{name}: {rates[name]:,.0f} rows/s ({elapsed:.1f} s)", flush=True)
        pyspark_rate, batch_rate, streaming_rate = (rates[name] for name, _ in runs)
        print(f"batch mode / streaming mode: {batch_rate / streaming_rate:.2f}")
        print(f"ratio={batch_rate / pyspark_rate:.2f}")


if __name__ == "__main__":
    main()

"""File sink throughput: kindling's exactly-once filesystem sink vs pyarrow's ``write_dataset``.

In the same run, N rows ``(id BIGINT, part STRING = id % 8, value DOUBLE = id / 2, name STRING)`` are
written as Parquet (SNAPPY), partitioned by ``part`` into ``part=<value>/`` directories, two ways:

(a) Spark's ``rate-micro-batch`` source (JVM, N rows in one micro-batch, 2 partitions) ->
    ``writeStream.format("kindling_filesystem")``: executors stage part files, the driver commits
    them through the commit log; Trigger.AvailableNow. The source is Spark's own so that the figure
    is the sink's (kindling's Python ``datagen`` alone reaches ~0.7M rows/s here);
(b) ``pyarrow.dataset.write_dataset`` of the same rows, already in memory as one Arrow table
    (building the table is not timed);
(c) for scale, Spark's own JVM Parquet writer on the same rows in a *batch* job
    (``spark.range(N).select(...).write.partitionBy("part").parquet``): no streaming, no Python, no
    exactly-once -- the ceiling of anything that runs on Spark on this machine.

Only the query / the write call is timed, after untimed warm-ups on 1M rows (the JVM's JIT makes
the first large batch of a session ~2x slower). Each output is
read back to check that it holds exactly N rows. Prints MB/s and rows/s for each; then the rate of
the sink's writer alone (no Spark: one task's ``write`` over Arrow batches, then ``commit``); the
files per partition of N rows streamed in several micro-batches (datagen at 1M rows/s) without and with
``auto-compaction``; and, last, ``ratio=<kindling/pyarrow>`` (rows/s).

    python benchmarks/file_sink.py [--rows 5000000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

PARTITIONS = 8
WARMUP_ROWS = 1_000_000


def output_bytes(path: str) -> int:
    total = 0
    for directory, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        total += sum(os.path.getsize(os.path.join(directory, f)) for f in files if f.endswith(".parquet"))
    return total


def files_per_partition(path: str) -> dict[str, int]:
    return {d: len([f for f in os.listdir(os.path.join(path, d)) if f.endswith(".parquet")])
            for d in sorted(os.listdir(path)) if d.startswith("part=")}


def count_rows(path: str) -> int:
    return pads.dataset(path, format="parquet", partitioning="hive").count_rows()


def columns(ids):
    """The benchmark's row (id, part, value, name) as Spark columns over a BIGINT id column."""
    from pyspark.sql import functions as F

    return [ids.alias("id"), (ids % PARTITIONS).cast("string").alias("part"), (ids / 2).alias("value"),
            F.concat(F.lit("name-"), (ids % 1000).cast("string")).alias("name")]


def run_kindling(spark, path: str, n: int, rate: Optional[int], extra: dict) -> float:
    """N rows through the sink: from Spark's rate source in one batch, or from ``datagen`` at ``rate`` rows/s."""
    from pyspark.sql import functions as F

    from kindling.connectors.base import EOS_COLUMN, spark_format
    from kindling.connectors.filesystem import CONNECTOR

    if rate is None:  # under Trigger.AvailableNow, rate-micro-batch yields exactly one batch of rowsPerBatch rows
        rows = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", n).option("numPartitions", 2).load()
        rows = rows.select(*columns(F.col("value")))
    else:
        rows = (spark.readStream.format(spark_format("datagen"))
                .options(**{"number-of-rows": str(n), "rows-per-second": str(rate),
                            "fields.id.kind": "sequence", "fields.id.start": "0", "fields.id.end": str(n - 1)})
                .schema(f"id BIGINT, {EOS_COLUMN} BOOLEAN").load())
        rows = rows.where(F.col(EOS_COLUMN).isNull() | ~F.col(EOS_COLUMN)).select(*columns(F.col("id")))
    options = {"path": path, "format": "parquet", "parquet.compression": "SNAPPY",
               "kindling.table.partition-keys": "part", **extra}
    start = time.perf_counter()
    query = (rows.writeStream.format(spark_format("filesystem")).options(**options)
             .option("checkpointLocation", tempfile.mkdtemp(prefix="kindling-bench-"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    CONNECTOR.on_bounded_finish(options)  # what the job client does at the end of a bounded input
    elapsed = time.perf_counter() - start
    if query.exception() is not None:
        raise RuntimeError(f"the kindling query failed: {query.exception()}")
    return elapsed


def reference_table(n: int) -> pa.Table:
    ids = np.arange(n, dtype=np.int64)
    names = pc.binary_join_element_wise(pa.scalar("name-"), pa.array(ids % 1000).cast(pa.string()), "")
    return pa.table({"id": ids, "part": pa.array(ids % PARTITIONS).cast(pa.string()), "value": ids / 2, "name": names})


def run_pyarrow(table: pa.Table, path: str) -> float:
    start = time.perf_counter()
    pads.write_dataset(table, path, format="parquet", partitioning=["part"], partitioning_flavor="hive",
                       file_options=pads.ParquetFileFormat().make_write_options(compression="snappy"))
    return time.perf_counter() - start


def run_spark_batch(spark, path: str, n: int) -> float:
    """Spark's JVM Parquet writer, batch mode, on the same rows."""
    from pyspark.sql import functions as F

    start = time.perf_counter()
    (spark.range(n, numPartitions=2).select(*columns(F.col("id"))).write
     .partitionBy("part").option("compression", "snappy").parquet(path))
    return time.perf_counter() - start


def run_writer_only(table: pa.Table, path: str) -> float:
    """The sink's own path without Spark: one writer task over 10k-row Arrow batches, then the driver's commit."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    from kindling.connectors.filesystem.sink import FileStreamWriter

    schema = StructType([StructField("id", LongType()), StructField("part", StringType()),
                         StructField("value", DoubleType()), StructField("name", StringType())])
    writer = FileStreamWriter({"path": path, "format": "parquet", "parquet.compression": "SNAPPY",
                               "kindling.table.partition-keys": "part"}, schema)
    batches = table.to_batches(max_chunksize=10_000)
    start = time.perf_counter()
    message = writer.write(iter(batches))
    writer.commit([message], 0)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    args = parser.parse_args()
    n = args.rows
    from kindling.config import Configuration
    from kindling.runtime.session import get_or_create_session

    work = tempfile.mkdtemp(prefix="kindling-file-bench-")
    spark = get_or_create_session(Configuration({"parallelism.default": 2, "kindling.log.level": "ERROR"}))
    try:
        # Untimed warm-ups at scale: the JVM compiles the hot paths during the first large batch, which
        # otherwise runs ~2x slower.
        run_kindling(spark, os.path.join(work, "warmup"), min(n, WARMUP_ROWS), None, {})
        run_spark_batch(spark, os.path.join(work, "warmup-batch"), min(n, WARMUP_ROWS))
        path = os.path.join(work, "kindling")
        elapsed = run_kindling(spark, path, n, None, {})
        if count_rows(path) != n:
            raise RuntimeError(f"kindling wrote {count_rows(path)} rows, expected {n}")
        size = output_bytes(path)
        kindling_rate = n / elapsed
        print(f"kindling rate-micro-batch -> filesystem sink (parquet, availableNow, 2 tasks): {kindling_rate:,.0f} rows/s, "
              f"{size / elapsed / 2**20:.1f} MB/s ({elapsed:.1f} s, {size / 2**20:.1f} MB)", flush=True)

        table = reference_table(n)
        reference = os.path.join(work, "pyarrow")
        elapsed = run_pyarrow(table, reference)
        if count_rows(reference) != n:
            raise RuntimeError("pyarrow wrote the wrong number of rows")
        size = output_bytes(reference)
        pyarrow_rate = n / elapsed
        print(f"pyarrow write_dataset (parquet, partitioned): {pyarrow_rate:,.0f} rows/s, "
              f"{size / elapsed / 2**20:.1f} MB/s ({elapsed:.1f} s, {size / 2**20:.1f} MB)", flush=True)

        path = os.path.join(work, "spark-batch")
        elapsed = run_spark_batch(spark, path, n)
        if count_rows(path) != n:
            raise RuntimeError("the Spark batch job wrote the wrong number of rows")
        print(f"Spark's own Parquet writer, batch job (no streaming, no Python, no exactly-once): {n / elapsed:,.0f} rows/s, "
              f"{output_bytes(path) / elapsed / 2**20:.1f} MB/s ({elapsed:.1f} s); its ratio to pyarrow "
              f"{n / elapsed / pyarrow_rate:.2f}", flush=True)

        path = os.path.join(work, "writer-only")
        elapsed = run_writer_only(table, path)
        if count_rows(path) != n:
            raise RuntimeError("the writer-only run wrote the wrong number of rows")
        print(f"kindling sink writer alone (one task, no Spark, 10k-row Arrow batches, then commit): {n / elapsed:,.0f} rows/s, "
              f"{output_bytes(path) / elapsed / 2**20:.1f} MB/s ({elapsed:.1f} s)", flush=True)

        for label, extra in (("without compaction", {}),
                             ("with auto-compaction, compaction.file-size 64mb", {"auto-compaction": "true", "compaction.file-size": "64mb"})):
            path = os.path.join(work, "batches-" + str(len(extra)))
            elapsed = run_kindling(spark, path, n, 1_000_000, extra)
            if count_rows(path) != n:
                raise RuntimeError(f"kindling ({label}) wrote {count_rows(path)} rows, expected {n}")
            counts = files_per_partition(path)
            print(f"kindling at 1M rows/s in micro-batches, {label}: files per partition "
                  f"{min(counts.values())}-{max(counts.values())} ({sum(counts.values())} files, {elapsed:.1f} s)", flush=True)
        print(f"ratio={kindling_rate / pyarrow_rate:.2f}")
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

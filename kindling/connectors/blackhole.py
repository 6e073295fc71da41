"""Flink's ``blackhole`` sink: consumes every row and discards it (for benchmarks and tests).

A job's blackhole table is written by Spark's own ``noop`` sink, in the JVM (rows are never handed to Python);
Spark's query progress shows the rows consumed. The Python writer (``kindling_blackhole``) counts the rows each task
consumed in its commit message, for code that names it.
Option: ``sink.parallelism`` (accepted, no effect).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kindling.connectors.base import Connector, spark_format
from kindling.options import OptionSet, int_option

SINK_OPTIONS = OptionSet(
    "blackhole",
    (int_option("sink.parallelism", None, "Accepted for Flink compatibility; has no effect.", minimum=1),),
    ignored=("connector", "path", "checkpointlocation", "queryname"),  # Spark's writeStream options reach the sink too
)


@dataclass
class BlackholeCommitMessage(WriterCommitMessage):
    rows: int = 0


class BlackholeStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, schema: StructType, options) -> None:
        SINK_OPTIONS.validate(dict(options))
        self.schema = schema

    def write(self, iterator: Iterator[pa.RecordBatch]) -> BlackholeCommitMessage:
        rows = 0
        for batch in iterator:
            rows += batch.num_rows
        return BlackholeCommitMessage(rows)

    def commit(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        """Nothing to publish: the rows are gone."""

    def abort(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        pass


class BlackholeDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return spark_format("blackhole")

    def streamWriter(self, schema: StructType, overwrite: bool) -> BlackholeStreamWriter:
        return BlackholeStreamWriter(schema, self.options)


class BlackholeConnector(Connector):
    name = "blackhole"
    data_source = BlackholeDataSource
    sink_options = SINK_OPTIONS
    # Jobs write into Spark's own no-op sink: discarding rows needs no Python, so a pipeline into a blackhole costs what
    # the same pipeline costs by hand in PySpark (the Python writer above stays for readers that name it directly).
    spark_sink_format = "noop"
    discards_values = True


CONNECTOR = BlackholeConnector

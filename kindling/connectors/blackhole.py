"""Flink's ``blackhole`` sink: consumes every row and discards it (for benchmarks and tests).

Each task counts the rows it consumed and reports the count in its commit message; the
driver's commit has nothing to publish. Spark's query progress shows the rows consumed.
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


CONNECTOR = BlackholeConnector

"""Writing an updating SQL result (Spark's update mode) into a kindling sink connector.

Spark accepts only append-mode output from Python Data Sources ("does not support Update mode"),
but an unbounded GROUP BY must run in update mode. So the query runs with ``foreachBatch`` and
each micro-batch is handed to the connector's own stream writer exactly as Spark would: ``write``
on the executors over Arrow batches (one call per partition), then ``commit(messages, batch_id)``
on the driver, fenced by the batch id (a replayed batch has the same id). Rows carry their kind in
``ROWKIND_COLUMN``, which changelog sinks (``upsert-kafka``, ``print``) read.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Iterator

import pyarrow as pa
from pyspark.sql import DataFrame, Row
from pyspark.sql.datasource import DataSourceStreamArrowWriter
from pyspark.sql.streaming import StreamingQuery

from kindling.connectors.base import Sink

BATCH_ID_PROPERTY = "streaming.sql.batchId"
QUERY_ID_PROPERTY = "sql.streaming.queryId"


def changelog_batch_writer(sink: Sink, query_name: str, checkpoint: str | None = None) -> Callable[[DataFrame, int], None]:
    """A ``foreachBatch`` function that writes each batch through the sink connector's stream writer.

    The writer sees the query's ``checkpointLocation`` as it would in a native streaming write (the
    jdbc sink derives its identity from it)."""
    from kindling.connectors import get_connector

    data_source_class = get_connector(sink.connector).data_source
    options = dict(sink.options)
    if checkpoint is not None:
        options.setdefault("checkpointLocation", checkpoint)

    def write_batch(batch: DataFrame, batch_id: int) -> None:
        writer = data_source_class(options).streamWriter(batch.schema, False)
        context = batch.sparkSession.sparkContext
        context.setLocalProperty(BATCH_ID_PROPERTY, str(batch_id))
        context.setLocalProperty(QUERY_ID_PROPERTY, query_name)
        arrow = isinstance(writer, DataSourceStreamArrowWriter)

        def write_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            data: Any = batches if arrow else (Row(**row) for b in batches for row in b.to_pylist())
            message = writer.write(data)
            yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(message)], pa.binary())], names=["message"])

        try:
            messages = [pickle.loads(r.message) for r in batch.mapInArrow(write_partition, "message binary").collect()]
        except Exception:
            writer.abort([], batch_id)
            raise
        writer.commit(messages, batch_id)

    return write_batch


def start_changelog_query(out: DataFrame, sink: Sink, checkpoint: str, query_name: str, interval: str, mode: str) -> StreamingQuery:
    """Start a sink's query in ``mode`` (update) with the connector's writer driven by ``foreachBatch``."""
    return (
        out.writeStream.foreachBatch(changelog_batch_writer(sink, query_name, checkpoint))
        .option("checkpointLocation", checkpoint)
        .queryName(query_name)
        .outputMode(mode)
        .trigger(processingTime=interval)
        .start()
    )

"""The Elasticsearch / OpenSearch sink as a Spark Python Data Source stream writer over Arrow batches.

``write()`` runs on the executors, one call per Spark partition of a micro-batch: it turns the rows into
bulk actions (:mod:`.actions`), sends them through a bulk processor (:mod:`.bulk`) and flushes it before
it returns, checking every item's result. So a micro-batch commits only after all of its rows are
indexed (at-least-once per micro-batch, Flink's flush on checkpoint); a failed task fails or retries
the batch, which is then replayed. In upsert mode the ids are deterministic, so a replay overwrites the
same documents: the index ends exactly as if each row was written once. The driver's ``commit`` has
nothing to publish.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kindling.connectors.base import ROWKIND_COLUMN
from kindling.connectors.elasticsearch.actions import ActionBuilder, check_input
from kindling.connectors.elasticsearch.bulk import BulkProcessor
from kindling.connectors.elasticsearch.client import make_client
from kindling.connectors.elasticsearch.options import FLAVORS, SinkConfig, sink_config


@dataclass
class ElasticsearchCommitMessage(WriterCommitMessage):
    """What one task sent: actions, bulk requests, retried and ignored items."""

    actions: int
    requests: int
    retried: int
    ignored: int


def session_time_zone() -> str:
    """The Spark session's time zone (for ``{now()|...}`` indices), read on the driver; UTC without a session."""
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    return session.conf.get("spark.sql.session.timeZone", "UTC") if session is not None else "UTC"


class ElasticsearchStreamWriter(DataSourceStreamArrowWriter):
    """Writes micro-batches into an index; built on the driver (checks) and pickled to the executors."""

    def __init__(self, flavor: str, options: dict[str, str], schema: StructType) -> None:
        self.config: SinkConfig = sink_config(FLAVORS[flavor], options)
        self.schema = schema
        check_input(self.config, schema, updating=ROWKIND_COLUMN in schema.names)
        self.zone = session_time_zone()
        ActionBuilder(self.config, schema, self.zone)  # fail on the driver if the columns cannot be encoded

    def write(self, iterator: Iterator[pa.RecordBatch]) -> ElasticsearchCommitMessage:
        builder = ActionBuilder(self.config, self.schema, self.zone)
        client = make_client(self.config)
        processor = BulkProcessor(self.config, client)
        try:
            for batch in iterator:
                items = builder.build(batch)
                if items is not None:
                    processor.add(items)
            processor.close()
        finally:
            processor.stop()
            client.close()
        stats = processor.stats
        return ElasticsearchCommitMessage(stats.actions, stats.requests, stats.retried, stats.ignored)

    def commit(self, messages, batchId: int) -> None:
        """Nothing to publish: every task flushed and checked its actions before it ended."""

    def abort(self, messages, batchId: int) -> None:
        """Nothing to undo: indexed documents stay; the replayed batch writes them again (same ids in upsert mode)."""

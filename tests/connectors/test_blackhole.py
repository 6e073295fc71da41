"""The blackhole sink: consumes every row, keeps nothing."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from kindling.connectors import get_connector
from kindling.connectors.base import with_eos
from kindling.connectors.blackhole import BlackholeCommitMessage, BlackholeDataSource
from kindling.options import OptionError

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])


def test_writer_counts_and_discards():
    writer = BlackholeDataSource({"sink.parallelism": "4"}).streamWriter(SCHEMA, overwrite=False)
    batches = [pa.RecordBatch.from_pydict({"id": list(range(n)), "name": ["x"] * n}) for n in (3, 0, 5)]
    message = writer.write(iter(batches))
    assert isinstance(message, BlackholeCommitMessage) and message.rows == 8
    writer.commit([message, None], 0)
    writer.abort([message], 1)


def test_options():
    connector = get_connector("blackhole")
    connector.validate_sink({"sink.parallelism": "2"})
    with pytest.raises(OptionError, match="unknown blackhole option 'path-to'"):
        connector.validate_sink({"path-to": "x"})


@pytest.mark.integration
def test_stream_into_blackhole_completes(spark, tmp_path):
    frame = (
        spark.readStream.format("kindling_datagen")
        .schema(with_eos(SCHEMA))
        .options(**{"rows-per-second": "1000000", "number-of-rows": "5000", "fields.name.length": "3"})
        .load()
    )
    query = (
        frame.writeStream.format("kindling_blackhole")
        .option("sink.parallelism", "2")
        .trigger(availableNow=True)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .start()
    )
    assert query.awaitTermination(120)
    assert query.exception() is None
    assert sum(p["numInputRows"] for p in query.recentProgress) == 5001  # the rows and the end marker

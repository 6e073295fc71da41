"""Reading a bounded source as one Spark batch (Flink's batch execution mode).

A kindling source is a streaming Data Source whose offsets end with the end-of-input flag when the
source is bounded. In batch mode the same reader serves a Spark batch read: the driver walks the
offsets from the initial one to the end, exactly as the micro-batches of a streaming run would, and
the batch reads every split those offsets name. One reader per connector, two execution modes:
a batch run reads the very records a streaming run over the same input reads.
"""

from __future__ import annotations

import time
from typing import Any, Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable
from pyspark.sql.types import StructType

from kindling.connectors.base import EOS_OFFSET_KEY

# A source that has no new rows yet although it has not ended (a bounded Kafka topic still being written to its
# stopping offsets) is asked again after this pause.
_WAIT_FOR_ROWS_S = 0.05


class BoundedReads:
    """Mixin for a connector's DataSource: ``spark.read`` of a bounded source through its stream reader."""

    def reader(self, schema: StructType) -> DataSourceReader:
        assert isinstance(self, DataSource)
        return BoundedBatchReader(type(self), dict(self.options), schema)


class BoundedBatchReader(DataSourceReader):
    """Every split from the initial offset to the end-of-input offset, read in one Spark batch."""

    def __init__(self, source: type, options: dict[str, str], schema: StructType) -> None:
        self.source = source
        self.options = options
        self.schema = schema

    def _stream_reader(self) -> Any:
        return self.source(self.options).streamReader(self.schema)

    def partitions(self) -> Sequence[InputPartition]:
        reader = self._stream_reader()
        prepare = getattr(reader, "prepareForBatch", None) or getattr(reader, "prepareForTriggerAvailableNow", None)
        if prepare is not None:
            prepare()
        splits: list[InputPartition] = []
        start = reader.initialOffset()
        try:
            while not start.get(EOS_OFFSET_KEY):
                end = reader.latestOffset(start, ReadAllAvailable())
                if end == start:
                    time.sleep(_WAIT_FOR_ROWS_S)
                    continue
                splits.extend(reader.partitions(start, end))
                start = end
        finally:
            stop = getattr(reader, "stop", None)
            if stop is not None:
                stop()
        return splits

    def read(self, partition: InputPartition) -> Iterator[Any]:
        yield from self._stream_reader().read(partition)

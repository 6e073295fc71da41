"""Reading a bounded source as one Spark batch (Flink's batch execution mode).

A kindling source is a streaming Data Source whose offsets end with the end-of-input flag when the
source is bounded. In batch mode the same reader serves a Spark batch read: the driver walks the
offsets from the initial one to the end, exactly as the micro-batches of a streaming run would, and
the batch reads every split those offsets name. One reader per connector, two execution modes:
a batch run reads the very records a streaming run over the same input reads.

A reconciliation (:mod:`kindling.reconciliation`) reads an *unbounded* source over the input range of a
streaming run instead: the option :data:`MICRO_BATCHES_OPTION` lists that run's micro-batches (each one's
end offset, as Spark's offset log holds it, and the watermark the run used for late rows), the splits are
the ones each micro-batch read, and every row carries its micro-batch's watermark in
:data:`~kindling.row_layout.LATE_WATERMARK_COLUMN`.
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any, Iterable, Iterator, Optional, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable
from pyspark.sql.types import StructType

from kindling.connectors.base import EOS_OFFSET_KEY
from kindling.row_layout import LATE_WATERMARK_COLUMN

# JSON list of {"end": <offset>, "late_watermark_ms": <int>}, one per micro-batch of a streaming run, in order.
MICRO_BATCHES_OPTION = "kindling.bounded.micro-batches"

# A source that has no new rows yet although it has not ended (a bounded Kafka topic still being written to its
# stopping offsets) is asked again after this pause.
_WAIT_FOR_ROWS_S = 0.05


class BoundedReads:
    """Mixin for a connector's DataSource: ``spark.read`` of a bounded source through its stream reader."""

    def reader(self, schema: StructType) -> DataSourceReader:
        assert isinstance(self, DataSource)
        return BoundedBatchReader(type(self), dict(self.options), schema)


class _MicroBatchSplit(InputPartition):
    """A split of one micro-batch of a streaming run, with the watermark that run used for its late rows."""

    def __init__(self, split: InputPartition, late_watermark_ms: int) -> None:
        self.split = split
        self.late_watermark_ms = late_watermark_ms


class BoundedBatchReader(DataSourceReader):
    """Every split from the initial offset to the end-of-input offset, read in one Spark batch."""

    def __init__(self, source: type, options: dict[str, str], schema: StructType) -> None:
        self.source = source
        self.options = {k: v for k, v in options.items() if k != MICRO_BATCHES_OPTION}
        raw = options.get(MICRO_BATCHES_OPTION)
        self.micro_batches: Optional[list[dict[str, Any]]] = json.loads(raw) if raw else None
        if self.micro_batches is not None:  # the tag column is the reader's, not the connector's
            schema = StructType([f for f in schema.fields if f.name != LATE_WATERMARK_COLUMN])
        self.schema = schema

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        """Hand Spark's filters to a source that can apply them first (a ``push_filters(options, schema, filters)``
        classmethod on its Data Source, returning the options that say so). Every filter is returned: Spark
        evaluates them all after the scan, so a source's prefilter only has to keep at least Spark's rows."""
        push = getattr(self.source, "push_filters", None)
        if push is not None and filters:
            self.options = push(self.options, self.schema, filters)
        return filters

    def _stream_reader(self) -> Any:
        return self.source(self.options).streamReader(self.schema)

    @contextlib.contextmanager
    def _planning_reader(self) -> Iterator[Any]:
        """A stream reader for the driver's planning, stopped afterwards (it may hold clients)."""
        reader = self._stream_reader()
        try:
            yield reader
        finally:
            stop = getattr(reader, "stop", None)
            if stop is not None:
                stop()

    def partitions(self) -> Sequence[InputPartition]:
        if self.micro_batches is not None:
            return self._micro_batch_partitions(self.micro_batches)
        splits: list[InputPartition] = []
        with self._planning_reader() as reader:
            prepare = getattr(reader, "prepareForBatch", None) or getattr(reader, "prepareForTriggerAvailableNow", None)
            if prepare is not None:
                prepare()
            start = reader.initialOffset()
            while not start.get(EOS_OFFSET_KEY):
                end = reader.latestOffset(start, ReadAllAvailable())
                if end == start:
                    time.sleep(_WAIT_FOR_ROWS_S)
                    continue
                splits.extend(reader.partitions(start, end))
                start = end
        return splits

    def _micro_batch_partitions(self, micro_batches: list[dict[str, Any]]) -> Sequence[InputPartition]:
        """The splits a streaming run read, micro-batch by micro-batch, from the source's initial offset."""
        splits: list[InputPartition] = []
        with self._planning_reader() as reader:
            start = reader.initialOffset()
            for batch in micro_batches:
                end = batch["end"]
                if end != start:
                    splits.extend(_MicroBatchSplit(split, int(batch["late_watermark_ms"])) for split in reader.partitions(start, end))
                start = end
        return splits

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if not isinstance(partition, _MicroBatchSplit):
            yield from self._stream_reader().read(partition)
            return
        for batch in self._stream_reader().read(partition.split):
            assert isinstance(batch, pa.RecordBatch), "kindling's sources yield Arrow record batches"
            tag = pa.array([partition.late_watermark_ms] * batch.num_rows, pa.int64())
            yield batch.append_column(LATE_WATERMARK_COLUMN, tag)

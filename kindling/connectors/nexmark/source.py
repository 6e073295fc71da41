"""The ``nexmark`` source as a Spark Python Data Source: events as Arrow batches, split across tasks.

Offsets are ``{"events": n, "base-time": ms}`` (plus ``"eos": true`` once a bounded source
reached its end). The base time (event time of event 0) is fixed when the query first
starts — ``kindling.base-time`` or the wall clock, as the Flink table source does — and
travels in the offsets, so a batch Spark replays from its checkpoint is identical.

With ``max-emit-speed`` (the default) each micro-batch admits up to
``kindling.events-per-batch`` events; with ``max-emit-speed = false`` or ``rate.limited =
true`` it admits the events whose event time has come, measured on the wall clock from the
first batch. Ranges are split into at most ``scan.parallelism`` partitions of at least
16k events; every event is a pure function of its number, so a split changes nothing.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import (
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kindling.arrow import arrow_schema
from kindling.connectors.base import EOS_COLUMN, EOS_OFFSET_KEY, end_of_input_batch, spark_format
from kindling.connectors.bounded_read import BoundedReads
from kindling.connectors.nexmark.config import FIRST_EVENT_NUMBER, GeneratorConfig, parse_base_time, validate
from kindling.connectors.nexmark.generator import AUCTION_TYPE, BID_TYPE, PERSON_TYPE, EventBatch, generate
from kindling.options import OptionError

BATCH_ROWS = 65536
MIN_PARTITION_ROWS = 16384


def _struct(arrow_type: pa.StructType) -> StructType:
    spark_types = {pa.int64(): LongType(), pa.string(): StringType()}
    return StructType([
        StructField(f.name, TimestampType() if pa.types.is_timestamp(f.type) else spark_types[f.type]) for f in arrow_type
    ])


# The Flink Nexmark table's physical columns, plus ``dateTime`` (the event time, which the
# suite's DDL computes from the three rows) for users of the DataStream API.
NEXMARK_SCHEMA = StructType([
    StructField("event_type", IntegerType()),
    StructField("person", _struct(PERSON_TYPE)),
    StructField("auction", _struct(AUCTION_TYPE)),
    StructField("bid", _struct(BID_TYPE)),
    StructField("dateTime", TimestampType()),
])
_ROWS = {"person": PERSON_TYPE, "auction": AUCTION_TYPE, "bid": BID_TYPE}


def check_schema(schema: pa.Schema) -> None:
    """Every requested column (and nested field) must be one the generator produces."""
    known = {"event_type", "datetime", "person", "auction", "bid", EOS_COLUMN}
    for field in schema:
        name = field.name.lower()
        if name not in known:
            raise OptionError(
                f"the nexmark source has no column '{field.name}'; its columns are event_type, person, auction, bid and dateTime"
            )
        if name in _ROWS:
            if not pa.types.is_struct(field.type):
                raise OptionError(f"nexmark column '{field.name}' is a ROW<...>, not {field.type}")
            names = {f.name.lower() for f in _ROWS[name]}
            for child in field.type:
                if child.name.lower() not in names:
                    raise OptionError(
                        f"nexmark row '{field.name}' has no field '{child.name}'; its fields are "
                        + ", ".join(f.name for f in _ROWS[name])
                    )


def _cast(array: pa.Array, target: pa.DataType) -> pa.Array:
    if array.type == target:
        return array
    if pa.types.is_timestamp(array.type) and pa.types.is_timestamp(target):
        # Same instants, whatever the zone label (Spark's TIMESTAMP_NTZ reads them as UTC wall time).
        micros = array.view(pa.int64()).to_numpy(zero_copy_only=False)
        scaled = {"s": micros // 1_000_000, "ms": micros // 1000, "us": micros, "ns": micros * 1000}[target.unit]
        return pa.array(scaled, type=pa.int64(), mask=array.is_null().to_numpy(zero_copy_only=False) if array.null_count else None).view(target)
    return array.cast(target)


def _row(rows: pa.StructArray, target: pa.StructType) -> pa.StructArray:
    by_name = {rows.type.field(i).name.lower(): i for i in range(rows.type.num_fields)}
    children = [_cast(rows.field(by_name[f.name.lower()]), f.type) for f in target]
    mask = rows.is_null() if rows.null_count else None
    return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)


def to_record_batch(events: EventBatch, target: pa.Schema) -> pa.RecordBatch:
    """Generated events in the columns (and nested fields, types) the query asked for."""
    n = len(events.event_type)
    columns = []
    for field in target:
        name = field.name.lower()
        if name == EOS_COLUMN:
            columns.append(pa.array(np.zeros(n, dtype=bool), type=field.type))
        elif name == "event_type":
            columns.append(pa.array(events.event_type).cast(field.type))
        elif name == "datetime":
            micros = pa.array(events.timestamp_ms * 1000, type=pa.int64()).view(pa.timestamp("us", tz="UTC"))
            columns.append(_cast(micros, field.type))
        else:
            columns.append(_row(getattr(events, name), field.type))
    return pa.RecordBatch.from_arrays(columns, schema=target)


@dataclass
class NexmarkPartition(InputPartition):
    """Events ``[start, end)`` generated with base time ``base_time``; ``eos`` adds the end-of-input marker."""

    start: int
    end: int
    base_time: int
    eos: bool = False


class NexmarkStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Admission on the driver, generation on the executors."""

    def __init__(self, schema: StructType, options: Mapping[str, str], *, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep) -> None:
        self.schema = schema
        self.parsed = validate(dict(options))
        self.target = arrow_schema(schema)
        check_schema(self.target)
        self.config = GeneratorConfig.from_options(self.parsed)
        self.total = self.config.max_events
        self.paced = (not self.parsed["max-emit-speed"]) or self.parsed["rate.limited"]
        self.per_batch = self.parsed["kindling.events-per-batch"]
        self.parallelism = self.parsed.get("scan.parallelism") or max(1, os.cpu_count() or 1)
        self._clock, self._wall_clock, self._sleep = clock, wall_clock, sleep
        self._clock_start: Optional[float] = None
        self._start_time_ms = 0
        self._available_now = False
        self._target: Optional[int] = None

    # -- admission (driver) ------------------------------------------------------------------

    def initialOffset(self) -> dict:
        base = parse_base_time(self.parsed.get("kindling.base-time"))
        return {"events": 0, "base-time": base if base is not None else int(self._wall_clock() * 1000)}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = True

    def _config(self, base_time: int) -> GeneratorConfig:
        from dataclasses import replace

        return replace(self.config, base_time_ms=base_time)

    def _due(self, start: dict) -> int:
        """Events whose event time has come on the wall clock (paced sources)."""
        config = self._config(int(start["base-time"]))
        now = self._clock()
        if self._clock_start is None:
            self._clock_start = now
            self._start_time_ms = int(config.timestamp_ms(np.array([int(start["events"]) + FIRST_EVENT_NUMBER]))[0]) - config.base_time_ms
        return config.events_due(self._start_time_ms + (now - self._clock_start) * 1000.0)

    def latestOffset(self, start: dict, limit: ReadLimit = ReadAllAvailable()) -> dict:
        if start.get(EOS_OFFSET_KEY):
            return start
        events = int(start["events"])
        if self._available_now and self._target is None:
            self._target = self.total if self.total is not None else events
        end = self._admit(start, limit)
        if self.paced and self._available_now and end == events and events < self._target:
            # Spark ends an AvailableNow query at the first empty batch: wait for the next event.
            self._sleep(max(0.0, (self._config(int(start["base-time"])).inter_event_delays_us()[0]) / 1e6))
            end = self._admit(start, limit)
        eos = self.total is not None and end >= self.total
        if end == events and not eos:
            return start
        offset = {"events": end, "base-time": int(start["base-time"])}
        if eos:
            offset[EOS_OFFSET_KEY] = True
        return offset

    def _admit(self, start: dict, limit: ReadLimit) -> int:
        events = int(start["events"])
        end = events + self.per_batch
        if self.paced:
            end = min(end, max(events, self._due(start)))
        if self.total is not None:
            end = min(end, self.total)
        if self._target is not None:
            end = min(end, max(events, self._target))
        if isinstance(limit, ReadMaxRows):
            end = min(end, events + max(0, int(limit.max_rows)))
        return end

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        first, last = int(start["events"]), int(end["events"])
        eos = bool(end.get(EOS_OFFSET_KEY)) and not start.get(EOS_OFFSET_KEY)
        count = last - first
        if count <= 0 and not eos:
            return []
        base = int(end.get("base-time", start.get("base-time", 0)))
        parts = max(1, min(self.parallelism, math.ceil(count / MIN_PARTITION_ROWS)))
        bounds = [first + (count * i) // parts for i in range(parts + 1)]
        return [NexmarkPartition(bounds[i], bounds[i + 1], base, eos=eos and i == parts - 1) for i in range(parts)]

    def commit(self, end: dict) -> None:
        """Nothing to acknowledge: events are generated, not consumed."""

    # -- reading (executors) -----------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, NexmarkPartition)
        config = self._config(partition.base_time)
        for chunk in range(partition.start, partition.end, BATCH_ROWS):
            count = min(BATCH_ROWS, partition.end - chunk)
            yield to_record_batch(generate(config, chunk, count), self.target)
        if partition.eos and EOS_COLUMN in self.target.names:
            yield end_of_input_batch(self.target)


class NexmarkDataSource(BoundedReads, DataSource):
    """Spark Data Source ``kindling_nexmark``; without a schema it produces ``NEXMARK_SCHEMA``."""

    @classmethod
    def name(cls) -> str:
        return spark_format("nexmark")

    def schema(self) -> StructType:
        return NEXMARK_SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return NexmarkStreamReader(schema, self.options)

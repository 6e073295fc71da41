"""An in-memory bounded source for ``env.from_collection``: rows given in the program, emitted in order.

Rows travel inside the options as JSON, so the source is deterministic and replays exactly.
``rows-per-batch`` spreads them over several micro-batches, which makes watermark behaviour
(late and out-of-order records across batches) reproducible in tests and examples.
"""

from __future__ import annotations

import base64
import json
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any, Iterator, Sequence

import pyarrow as pa
from pyspark.sql import Row
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows
from pyspark.sql.types import StructType

from kindling.arrow import arrow_schema
from kindling.connectors.base import EOS_COLUMN, EOS_OFFSET_KEY, Connector, Source, end_of_input_batch, spark_format
from kindling.connectors.bounded_read import BoundedReads
from kindling.options import OptionSet, int_option, string_option

OPTIONS = OptionSet(
    "collection",
    (
        string_option("data", "[]", "The rows as a JSON array of arrays, in schema order."),
        int_option("rows-per-batch", 0, "At most this many rows per micro-batch (0: all at once).", minimum=0),
    ),
)


def _encode(value: Any) -> Any:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return {"$ts": value.timestamp()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, Decimal):
        return {"$dec": str(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"$b64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Row):
        return {k: _encode(v) for k, v in value.asDict().items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "$ts" in value:
            return datetime.fromtimestamp(value["$ts"], tz=timezone.utc)
        if "$date" in value:
            return date.fromisoformat(value["$date"])
        if "$dec" in value:
            return Decimal(value["$dec"])
        if "$b64" in value:
            return base64.b64decode(value["$b64"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _for_arrow(value: Any, arrow_type: pa.DataType) -> Any:
    """A decoded value as pyarrow takes it for ``arrow_type``: a map's entries as (key, value) pairs, a row's fields
    (a list or tuple) by name, nested as deep as the type goes."""
    if value is None:
        return None
    if pa.types.is_map(arrow_type):
        items = value.items() if isinstance(value, dict) else value
        return [(_for_arrow(k, arrow_type.key_type), _for_arrow(v, arrow_type.item_type)) for k, v in items]
    if pa.types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        if isinstance(value, dict):
            return {f.name: _for_arrow(value.get(f.name), f.type) for f in fields}
        return {f.name: _for_arrow(v, f.type) for f, v in zip(fields, value)}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return [_for_arrow(v, arrow_type.value_type) for v in value]
    return value


def collection_source(rows: Sequence[Any], schema: StructType, rows_per_batch: int = 0) -> Source:
    """A bounded Source emitting ``rows`` (tuples, lists or dicts in schema order)."""
    names = schema.fieldNames()
    encoded = []
    for row in rows:
        if isinstance(row, dict):
            row = [row.get(n) for n in names]
        elif not isinstance(row, (list, tuple)):
            row = [row]
        if len(row) != len(names):
            raise ValueError(f"row {row!r} has {len(row)} values but the schema has {len(names)} columns: {names}")
        encoded.append([_encode(v) for v in row])
    return Source("collection", {"data": json.dumps(encoded), "rows-per-batch": str(rows_per_batch)}, schema)


class _Range(InputPartition):
    def __init__(self, start: int, end: int, emit_eos: bool) -> None:
        super().__init__((start, end, emit_eos))
        self.start, self.end, self.emit_eos = start, end, emit_eos


class CollectionStreamReader(DataSourceStreamReader):
    def __init__(self, schema: StructType, options: dict[str, str]) -> None:
        parsed = OPTIONS.validate(options)
        self.schema = schema
        self.rows = json.loads(parsed["data"])
        self.rows_per_batch = parsed["rows-per-batch"]

    def initialOffset(self) -> dict:
        return {"rows": 0}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.rows_per_batch) if self.rows_per_batch else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        if start.get(EOS_OFFSET_KEY):
            return start
        end = len(self.rows)
        if isinstance(limit, ReadMaxRows):
            end = min(end, start["rows"] + limit.max_rows)
        offset: dict[str, Any] = {"rows": end}
        if end >= len(self.rows):
            offset[EOS_OFFSET_KEY] = True
        return offset

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        emit_eos = bool(end.get(EOS_OFFSET_KEY)) and not start.get(EOS_OFFSET_KEY)
        if start["rows"] == end["rows"] and not emit_eos:
            return []
        return [_Range(start["rows"], end["rows"], emit_eos)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        start, end, emit_eos = partition.value
        target = arrow_schema(self.schema)
        rows = [[_decode(v) for v in row] + [False] for row in self.rows[start:end]]
        if rows:
            columns = list(zip(*rows))
            arrays = [pa.array([_for_arrow(v, field.type) for v in values], type=field.type) for field, values in zip(target, columns)]
            yield pa.RecordBatch.from_arrays(arrays, schema=target)
        if emit_eos:
            yield end_of_input_batch(target)


class CollectionDataSource(BoundedReads, DataSource):
    @classmethod
    def name(cls) -> str:
        return spark_format("collection")

    def schema(self) -> StructType:
        raise ValueError("the collection source needs a schema")

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        if EOS_COLUMN not in schema.fieldNames():
            raise ValueError(f"the collection source's schema must end with the {EOS_COLUMN} column")
        return CollectionStreamReader(schema, dict(self.options))


class CollectionConnector(Connector):
    name = "collection"
    data_source = CollectionDataSource
    source_options = OPTIONS

    @classmethod
    def is_bounded(cls, options: Any) -> bool:
        return True


CONNECTOR = CollectionConnector

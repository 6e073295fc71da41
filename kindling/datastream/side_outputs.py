"""Side outputs: ``OutputTag`` names a second output of a process function, with its own type.

A process function's operator emits one stream whose rows are tagged: the main output's fields,
or a side output's record pickled in a binary column with the tag's id. ``get_side_output(tag)``
selects one tag's rows and decodes them over Arrow. Sinks of an operator's main and side outputs
share one Spark query, so the operator runs once per micro-batch (see operator_sinks.py).
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Iterator, Optional

import pyarrow as pa
from pyspark.sql.types import StructType

from kindling.arrow import arrow_schema
from kindling.datastream import records

TAG_COLUMN = "__kindling_tag"
SIDE_COLUMN = "__kindling_side"


class OutputTag:
    """Flink's OutputTag: an id and the type of the records sent to it (default: the operator's input type)."""

    def __init__(self, tag_id: str, type_info: Optional[records.TypeLike] = None) -> None:
        if not tag_id or not isinstance(tag_id, str):
            raise ValueError(f"OutputTag needs a non-empty string id, got {tag_id!r}")
        self.tag_id = tag_id
        self.type_info = type_info

    def get_id(self) -> str:
        return self.tag_id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OutputTag) and other.tag_id == self.tag_id

    def __hash__(self) -> int:
        return hash(self.tag_id)

    def __repr__(self) -> str:
        return f"OutputTag({self.tag_id!r})"


def encode(value: Any) -> bytes:
    """A side-output record as it travels inside the operator's output."""
    return pickle.dumps(value, protocol=5)


def decode_batches(schema: StructType, internal: list[str], full_arrow: pa.Schema,
                   type_info: Any = None) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A mapInArrow function turning pickled side-output records into the tag's columns (checked against a PyFlink type)."""
    user = arrow_schema(schema)
    codec = records.Codec(schema, type_info)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            values = [codec.encode(pickle.loads(b), "side output") for b in batch.column(SIDE_COLUMN).to_pylist()]
            decoded = records.to_batch(values, schema, user)
            arrays = list(decoded.columns) + [batch.column(c) for c in internal]
            yield pa.RecordBatch.from_arrays(arrays, schema=full_arrow)

    return run

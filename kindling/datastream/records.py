"""Records for Python user functions: Arrow batches in, ``Row`` objects to the function, Arrow out.

The JVM hands Python whole Arrow record batches (``mapInArrow``); only the user's function
runs per record. kindling's internal columns (event time, keys) ride along untouched.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, Union

import pyarrow as pa
from pyspark.sql import Row
from kindling.arrow import arrow_schema
from pyspark.sql.types import DataType, StructField, StructType, _parse_datatype_string

from kindling.connectors.base import INTERNAL_PREFIX

TypeLike = Union[StructType, DataType, str]


def as_struct(output_type: TypeLike, *, single_name: str = "f0") -> StructType:
    """A StructType from a StructType, a DDL string (``"page STRING, cnt BIGINT"``) or one DataType."""
    if isinstance(output_type, StructType):
        return output_type
    if isinstance(output_type, DataType):
        return StructType([StructField(single_name, output_type, True)])
    if isinstance(output_type, str):
        parsed = _parse_datatype_string(output_type)
        return as_struct(parsed, single_name=single_name)
    raise TypeError(f"output_type must be a StructType, a DataType or a DDL string, got {type(output_type).__name__}")


def user_columns(schema: StructType) -> list[str]:
    return [f.name for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)]


def internal_columns(schema: StructType) -> list[str]:
    return [f.name for f in schema.fields if f.name.startswith(INTERNAL_PREFIX)]


def to_rows(batch: pa.RecordBatch, names: Sequence[str]) -> list[Row]:
    """The batch's user columns as pyspark Rows (attribute and key access, like PyFlink's Row)."""
    factory = Row(*names)
    columns = [batch.column(name).to_pylist() for name in names]
    return [factory(*values) for values in zip(*columns)] if columns else [factory() for _ in range(batch.num_rows)]


def normalise(result: Any, schema: StructType) -> tuple:
    """A function's return value as a tuple in schema order (Row, tuple, list, dict or a scalar)."""
    names = schema.fieldNames()
    if isinstance(result, Row) and hasattr(result, "__fields__"):
        data = result.asDict(recursive=False)
        if all(n in data for n in names):
            return tuple(data[n] for n in names)
        return tuple(result)
    if isinstance(result, dict):
        return tuple(result.get(n) for n in names)
    if isinstance(result, (tuple, list)):
        if len(result) != len(names):
            raise ValueError(f"function returned {len(result)} values {result!r} but the output type has {len(names)}: {names}")
        return tuple(result)
    if len(names) == 1:
        return (result,)
    raise ValueError(f"function returned {result!r}; the output type {names} needs a Row, tuple or dict")


def to_batch(values: list[tuple], schema: StructType, target: Optional[pa.Schema] = None) -> pa.RecordBatch:
    """Tuples in schema order as an Arrow batch of the schema."""
    target = target or arrow_schema(schema)
    columns = list(zip(*values)) if values else [() for _ in target]
    arrays = [pa.array(list(col), type=field.type) for col, field in zip(columns, target)]
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _layout(in_schema: StructType, out_schema: StructType) -> tuple[list[str], list[str], StructType, pa.Schema, pa.Schema]:
    """Input user and internal column names, the output's user part, and both output Arrow schemas."""
    out_user = StructType([f for f in out_schema.fields if not f.name.startswith(INTERNAL_PREFIX)])
    return user_columns(in_schema), internal_columns(in_schema), out_user, arrow_schema(out_schema), arrow_schema(out_user)


def map_batches(
    function: Callable[[Row], Any], in_schema: StructType, out_schema: StructType
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A mapInArrow function applying ``function`` to each record; internal columns pass through."""
    names, internal, out_user, arrow_out, arrow_user = _layout(in_schema, out_schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            results = [normalise(function(row), out_user) for row in to_rows(batch, names)]
            mapped = to_batch(results, out_user, arrow_user)
            arrays = list(mapped.columns) + [batch.column(c) for c in internal]
            yield pa.RecordBatch.from_arrays(arrays, schema=arrow_out)

    return run


def flat_map_batches(
    function: Callable[[Row], Iterable[Any]], in_schema: StructType, out_schema: StructType
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A mapInArrow function emitting zero or more records per input; each inherits its input's internals."""
    names, internal, out_user, arrow_out, arrow_user = _layout(in_schema, out_schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            results: list[tuple] = []
            origin: list[int] = []
            for index, row in enumerate(to_rows(batch, names)):
                produced = function(row)
                if produced is None:
                    continue
                for item in produced:
                    results.append(normalise(item, out_user))
                    origin.append(index)
            mapped = to_batch(results, out_user, arrow_user)
            taken = pa.array(origin, type=pa.int64())
            arrays = list(mapped.columns) + [batch.column(c).take(taken) for c in internal]
            yield pa.RecordBatch.from_arrays(arrays, schema=arrow_out)

    return run


def filter_batches(function: Callable[[Row], bool], in_schema: StructType) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A mapInArrow function keeping the records for which ``function`` is true."""
    names = user_columns(in_schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            mask = pa.array([bool(function(row)) for row in to_rows(batch, names)], type=pa.bool_())
            yield batch.filter(mask)

    return run

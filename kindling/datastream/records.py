"""Records for Python user functions: Arrow batches in, ``Row`` objects to the function, Arrow out.

The JVM hands Python whole Arrow record batches (``mapInArrow``); only the user's function
runs per record. kindling's internal columns (event time, keys) ride along untouched.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, Union

import pyarrow as pa
from pyspark.sql import Row
from pyspark.sql.types import DataType, StructField, StructType, _parse_datatype_string

from kindling.arrow import arrow_schema
from kindling.connectors.base import INTERNAL_PREFIX

TypeLike = Union[StructType, DataType, str, Any]


def is_type_info(value: Any) -> bool:
    """Whether ``value`` is PyFlink-style type information (``Types.ROW_NAMED(...)``, ``Types.STRING()``, ...)."""
    from kindling.common.typeinfo import TypeInformation

    return isinstance(value, TypeInformation)


def as_struct(output_type: TypeLike, *, single_name: str = "f0") -> StructType:
    """A StructType from a StructType, a DDL string (``"page STRING, cnt BIGINT"``), one DataType or a TypeInformation."""
    if is_type_info(output_type):
        return output_type.record_schema()
    if isinstance(output_type, StructType):
        return output_type
    if isinstance(output_type, DataType):
        return StructType([StructField(single_name, output_type, True)])
    if isinstance(output_type, str):
        parsed = _parse_datatype_string(output_type)
        return as_struct(parsed, single_name=single_name)
    raise TypeError(f"output_type must be a StructType, a DataType, a DDL string or a Types.* type information, "
                    f"got {type(output_type).__name__}")


def row_factory(names: Sequence[str]) -> Callable[[Iterable[Any]], Row]:
    """Rows of these field names (:func:`row_class`), each built from a sequence of values.

    >>> make = row_factory(["word", "n"])
    >>> make(("flink", 2)).n
    2
    """
    return functools.partial(tuple.__new__, row_class(tuple(names)))


@functools.lru_cache(maxsize=256)
def row_class(names: tuple[str, ...]) -> type:
    """The class of rows of these field names: a pyspark ``Row`` (``row.name``, ``row["name"]``, ``row[0]``,
    ``asDict()``, equal to and pickled as pyspark's own) that holds the names once, in the class, and reads named
    fields through C-level properties. A row of it is ``tuple.__new__(cls, values)``: a fifth of what
    ``Row(*names)(*values)`` costs, which checks and stores the names in every row. One class per field names
    and process."""
    namespace: dict[str, Any] = {"__fields__": list(names)}
    for i, name in enumerate(names):
        if name.isidentifier() and not name.startswith("_") and not hasattr(Row, name) and name not in namespace:
            namespace[name] = _field(i)
    return type("Row", (Row,), namespace)


def _field(index: int) -> Any:
    """A descriptor reading a row's field by position, as tuple's own indexing does, not Row.__getitem__ (which tells
    names from positions first): namedtuple's C-level one where this Python has it."""
    try:
        from _collections import _tuplegetter  # type: ignore[import-not-found]
    except ImportError:  # another Python implementation
        get = tuple.__getitem__
        return property(lambda row: get(row, index))
    return _tuplegetter(index, None)


class Codec:
    """How a stream's records look to Python functions and how results go back into columns.

    Without type information (kindling's own streams) a record is a pyspark ``Row`` of its fields and
    a result may be a Row, tuple, dict or scalar. With PyFlink type information the record is what
    PyFlink hands a function (a ``Row``, a tuple, a scalar, or any object for PICKLED_BYTE_ARRAY) and a
    result is checked against the declared type.
    """

    def __init__(self, schema: StructType, type_info: Any = None) -> None:
        self.schema = schema
        self.type_info = type_info
        self.names = schema.fieldNames()
        self._make = row_factory(self.names)
        self._distinct = len(set(self.names)) == len(self.names)

    def decode(self, values: Sequence[Any]) -> Any:
        if self.type_info is not None:
            return self.type_info.from_columns(values)
        return self._make(values)

    def encode(self, value: Any, where: str = "") -> tuple:
        if self.type_info is not None:
            return self.type_info.to_columns(value, where)
        if value.__class__ is tuple and len(value) == len(self.names):
            return value
        if self._distinct and isinstance(value, Row) and getattr(value, "__fields__", None) == self.names:
            return tuple(value)  # a Row of the output's fields in its order: what normalise gives, without a dict per row
        return normalise(value, self.schema, self.names)

    def format(self, value: Any) -> str:
        """A decoded record as PyFlink's print() shows it."""
        if self.type_info is not None:
            return self.type_info.format(value)
        from kindling.connectors.print import format_value

        return "+I[" + ", ".join(format_value(v) for v in value) + "]"


def codec(schema: StructType, type_info: Any = None) -> Codec:
    return Codec(StructType([f for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)]), type_info)


def user_columns(schema: StructType) -> list[str]:
    return [f.name for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)]


def internal_columns(schema: StructType) -> list[str]:
    return [f.name for f in schema.fields if f.name.startswith(INTERNAL_PREFIX)]


def to_rows(batch: pa.RecordBatch, names: Sequence[str], decoder: Optional[Codec] = None) -> list[Any]:
    """The batch's user columns as records: pyspark Rows, or what the stream's type information gives."""
    columns = [batch.column(name).to_pylist() for name in names]
    make = decoder.decode if decoder is not None and decoder.type_info is not None else row_factory(names)
    if decoder is None and not columns:
        return [make(()) for _ in range(batch.num_rows)]
    return list(map(make, zip(*columns)))


def normalise(result: Any, schema: StructType, names: Optional[list[str]] = None) -> tuple:
    """A function's return value as a tuple in schema order (Row, tuple, list, dict or a scalar)."""
    if names is None:
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


def timestamp_batches(assigner: Any, decoder: Codec) -> Callable[[pa.Array, pa.Array], pa.Array]:
    """An Arrow UDF's function giving each record's event time (epoch ms) from a Python timestamp assigner.

    It takes the records as a struct array of ``decoder``'s fields and the end-of-input marker column; the marker's
    row gets null (its event time is set apart) and is not decoded. The assigner's shape is told apart once.
    """
    from kindling.datastream.watermarks import assigner_call

    extract = assigner_call(assigner)
    function = getattr(assigner, "extract_timestamp", assigner)

    def run(values: pa.Array, eos: pa.Array) -> pa.Array:
        from kindling.datastream.errors import RecordCalls

        ends = eos.to_pylist()
        kept = pa.RecordBatch.from_struct_array(values).filter(pa.array([not end for end in ends], pa.bool_()))
        rows = iter(to_rows(kept, decoder.names, decoder))
        stamps: list[Optional[int]] = []
        with RecordCalls(function, "Timestamps/Watermarks") as calls:
            for end in ends:
                if end:
                    stamps.append(None)
                else:
                    calls.record = row = next(rows)
                    stamps.append(extract(row, None))
        return pa.array(stamps, type=pa.int64())

    return run


def map_batches(
    function: Callable[[Row], Any], in_schema: StructType, out_schema: StructType,
    in_type: Any = None, out_type: Any = None, operator: str = "Map",
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A mapInArrow function applying ``function`` to each record; internal columns pass through."""
    names, internal, out_user, arrow_out, arrow_user = _layout(in_schema, out_schema)
    decoder, encoder = codec(in_schema, in_type), Codec(out_user, out_type)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from kindling.datastream.errors import RecordCalls

        encode, where = encoder.encode, f"{operator} result"
        for batch in batches:
            results = []
            with RecordCalls(function, operator) as calls:
                for row in to_rows(batch, names, decoder):
                    calls.record = row
                    results.append(encode(function(row), where))
            mapped = to_batch(results, out_user, arrow_user)
            arrays = list(mapped.columns) + [batch.column(c) for c in internal]
            yield pa.RecordBatch.from_arrays(arrays, schema=arrow_out)

    return run


def flat_map_batches(
    function: Callable[[Row], Iterable[Any]], in_schema: StructType, out_schema: StructType,
    in_type: Any = None, out_type: Any = None,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A mapInArrow function emitting zero or more records per input; each inherits its input's internals."""
    names, internal, out_user, arrow_out, arrow_user = _layout(in_schema, out_schema)
    decoder, encoder = codec(in_schema, in_type), Codec(out_user, out_type)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from kindling.datastream.errors import RecordCalls

        encode = encoder.encode
        for batch in batches:
            results: list[tuple] = []
            origin: list[int] = []
            with RecordCalls(function, "FlatMap") as calls:
                for index, row in enumerate(to_rows(batch, names, decoder)):
                    calls.record = row
                    produced = function(row)
                    if produced is None:
                        continue
                    for item in produced:
                        results.append(encode(item, "FlatMap result"))
                        origin.append(index)
            mapped = to_batch(results, out_user, arrow_user)
            taken = pa.array(origin, type=pa.int64())
            arrays = list(mapped.columns) + [batch.column(c).take(taken) for c in internal]
            yield pa.RecordBatch.from_arrays(arrays, schema=arrow_out)

    return run


def filter_batches(
    function: Callable[[Row], bool], in_schema: StructType, in_type: Any = None
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A mapInArrow function keeping the records for which ``function`` is true."""
    names = user_columns(in_schema)
    decoder = codec(in_schema, in_type)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from kindling.datastream.errors import RecordCalls

        for batch in batches:
            keep = []
            with RecordCalls(function, "Filter") as calls:
                for row in to_rows(batch, names, decoder):
                    calls.record = row
                    keep.append(bool(function(row)))
            mask = pa.array(keep, type=pa.bool_())
            yield batch.filter(mask)

    return run

"""Flink's ``avro`` format: Avro binary records (no schema registry), schema derived from the columns.

The writer schema follows Flink's ``AvroSchemaConverter``: a record named ``record`` in namespace
``org.apache.flink.avro.generated``; a nullable column is the union ``["null", T]``; nested ROWs are
records named ``record_<column>``; TIMESTAMP is ``long`` with logical type ``timestamp-millis``
(``timestamp-micros`` with ``avro.timestamp-precision`` 6), TIMESTAMP_NTZ ``local-timestamp-*``,
DATE ``int``/``date``, DECIMAL(p, s) ``bytes``/``decimal``, BYTES ``bytes``, MAP ``map`` (STRING keys).
A Flink job reading the same topic with the same table columns reads what kindling writes, and back.
"""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any, Optional, Sequence

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

NAMESPACE = "org.apache.flink.avro.generated"


def avro_schema(schema: StructType, name: str = "record", precision: int = 3) -> dict:
    """The Avro record schema Flink derives for these columns."""
    return {
        "type": "record",
        "name": name,
        "namespace": NAMESPACE,
        "fields": [
            {"name": f.name, "type": _nullable(_avro_type(f.dataType, f"{name}_{f.name}", precision), f.nullable),
             **({"default": None} if f.nullable else {})}
            for f in schema.fields
        ],
    }


def _nullable(avro_type: Any, nullable: bool) -> Any:
    return ["null", avro_type] if nullable else avro_type


def _avro_type(data_type: DataType, name: str, precision: int) -> Any:
    unit = "millis" if precision <= 3 else "micros"
    if isinstance(data_type, StringType):
        return "string"
    if isinstance(data_type, BooleanType):
        return "boolean"
    if isinstance(data_type, (ByteType, ShortType, IntegerType)):
        return "int"
    if isinstance(data_type, LongType):
        return "long"
    if isinstance(data_type, FloatType):
        return "float"
    if isinstance(data_type, DoubleType):
        return "double"
    if isinstance(data_type, BinaryType):
        return "bytes"
    if isinstance(data_type, DecimalType):
        return {"type": "bytes", "logicalType": "decimal", "precision": data_type.precision, "scale": data_type.scale}
    if isinstance(data_type, DateType):
        return {"type": "int", "logicalType": "date"}
    if isinstance(data_type, TimestampType):
        return {"type": "long", "logicalType": f"timestamp-{unit}"}
    if isinstance(data_type, TimestampNTZType):
        return {"type": "long", "logicalType": f"local-timestamp-{unit}"}
    if isinstance(data_type, ArrayType):
        return {"type": "array", "items": _nullable(_avro_type(data_type.elementType, name, precision), data_type.containsNull)}
    if isinstance(data_type, MapType):
        if not isinstance(data_type.keyType, StringType):
            raise ValueError(f"the 'avro' format writes MAP keys as STRING only, not {data_type.keyType.simpleString()}")
        return {"type": "map", "values": _nullable(_avro_type(data_type.valueType, name, precision), data_type.valueContainsNull)}
    if isinstance(data_type, StructType):
        return avro_schema(data_type, name, precision) | {"namespace": NAMESPACE}
    raise ValueError(f"the 'avro' format cannot hold {data_type.simpleString()} columns")


class AvroCodec:
    """Arrow record batches <-> Avro binary values for one set of columns."""

    def __init__(self, schema: StructType, precision: int = 3, writer_schema: Optional[str] = None) -> None:
        """``writer_schema``: the Avro record schema to use (JSON text; its fields are the columns by name), instead
        of the one Flink's SQL format derives from the columns."""
        import fastavro

        self.schema = schema
        self.parsed = fastavro.parse_schema(avro_schema(schema, precision=precision) if writer_schema is None
                                            else given_schema(writer_schema, [f.name for f in schema.fields]))
        self._precision = precision

    def decode(self, values: Sequence[bytes], arrow_schema: pa.Schema) -> list[pa.Array]:
        """Decode every value (raises on a bad one) into one Arrow array per column."""
        import fastavro

        records = [fastavro.schemaless_reader(io.BytesIO(v), self.parsed, None) for v in values]
        return pa.RecordBatch.from_pylist(records, schema=arrow_schema).columns  # 5x faster than per column

    def encode(self, batch: pa.RecordBatch, names: Sequence[str]) -> list[Optional[bytes]]:
        import fastavro

        rows = batch.select(list(names)).to_pylist()
        out = []
        buffer = io.BytesIO()
        for row in rows:
            buffer.seek(0)
            buffer.truncate()
            fastavro.schemaless_writer(buffer, self.parsed, {k: _avro_value(v) for k, v in row.items()})
            out.append(buffer.getvalue())
        return out


def given_schema(text: str, columns: Sequence[str]) -> dict:
    """A user's Avro record schema, checked to be a record whose fields are ``columns``."""
    import json

    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"the Avro schema is not JSON ({exc}): {text!r}") from None
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise ValueError(f"the Avro schema must be a record schema ({{\"type\": \"record\", \"fields\": [...]}}), got {text!r}")
    names = [f.get("name") for f in schema.get("fields") or []]
    if names != list(columns):
        raise ValueError(f"the Avro schema's fields {names} are not the records' fields {list(columns)}")
    return schema


def _avro_value(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return value
    if isinstance(value, Decimal):
        return value
    if isinstance(value, list) and value and isinstance(value[0], tuple):  # Arrow map as [(key, value)]
        return {k: _avro_value(v) for k, v in value}
    if isinstance(value, dict):
        return {k: _avro_value(v) for k, v in value.items()}
    return value

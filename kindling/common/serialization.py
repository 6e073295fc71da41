"""PyFlink's ``pyflink.common.serialization``: serialization schemas, as kindling's shared record formats.

In PyFlink a schema is a Java object turning records into bytes and back. In kindling it names one of
the formats every connector shares (:mod:`kindling.formats`: ``json``, ``csv``, ``raw``, ``avro``) with
that format's options, and says which of a record's fields it works on:

* a :class:`DeserializationSchema` gives the type of the records it produces (``produced_type()``):
  the source decodes each message into that type's columns, and the stream's records are what PyFlink
  hands a function (a ``Row`` for ``Types.ROW``, a ``str`` for :class:`SimpleStringSchema`, ``bytes``
  for :class:`ByteArraySchema`);
* a :class:`SerializationSchema` picks the columns of the stream's records it writes
  (``written_fields``), checking the records are of the type it serializes, as Flink's would fail at
  the first record otherwise. The record schemas of the JSON, CSV and Avro formats live in
  ``kindling.datastream.formats`` (PyFlink's ``pyflink.datastream.formats``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from pyspark.sql.types import BinaryType, DataType, StringType, StructType

from kindling.common.typeinfo import BasicTypeInfo, ByteArrayTypeInfo, RowTypeInfo, TupleTypeInfo, TypeInformation, Types
from kindling.connectors.filesystem.builder import Encoder


@dataclass(frozen=True)
class WrittenField:
    """A column a serialization schema writes: the stream's column ``source`` under the name ``name``
    (the JSON/Avro field name); ``empty_if_null``: a null value is written as empty bytes."""

    source: str
    name: str
    empty_if_null: bool = False


def describe_records(record_type: Optional[TypeInformation], schema: StructType) -> str:
    """The stream's records as a message names them."""
    if record_type is not None:
        return repr(record_type)
    return "rows of " + ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in schema.fields)


class SerializationSchema:
    """How a record becomes bytes in a sink (Flink's ``SerializationSchema``): a format over some of its fields."""

    format = "raw"

    def format_options(self) -> dict[str, str]:
        """The format's Flink options (``csv.field-delimiter``, ...), without a ``key.``/``value.`` prefix."""
        return {}

    def written_fields(self, record_type: Optional[TypeInformation], schema: StructType) -> list[WrittenField]:
        """The columns of the stream's records (``schema``, typed ``record_type``) this schema writes."""
        raise NotImplementedError(f"{type(self).__name__} does not say which fields it writes")


class DeserializationSchema:
    """How bytes from a source become a record (Flink's ``DeserializationSchema``): a format producing a type."""

    format = "raw"

    def format_options(self) -> dict[str, str]:
        return {}

    def produced_type(self) -> TypeInformation:
        """The type of the records this schema produces."""
        raise NotImplementedError(f"{type(self).__name__} does not say what it produces")



def _single_column(schema: StructType, spark_type: type) -> Optional[str]:
    if len(schema.fields) == 1 and isinstance(schema.fields[0].dataType, spark_type):
        return schema.fields[0].name
    return None


class SimpleStringSchema(SerializationSchema, DeserializationSchema):
    """Records are ``str``, messages their UTF-8 bytes (the ``raw`` format of one STRING column)."""

    def __init__(self, charset: str = "UTF-8") -> None:
        if charset.upper().replace("-", "") != "UTF8":
            raise ValueError(f"SimpleStringSchema: kindling reads and writes UTF-8 only, got charset {charset!r}")

    def produced_type(self) -> TypeInformation:
        return Types.STRING()


    def written_fields(self, record_type: Optional[TypeInformation], schema: StructType) -> list[WrittenField]:
        column = _single_column(schema, StringType)
        typed = record_type is None or (isinstance(record_type, BasicTypeInfo) and record_type.name in ("STRING", "CHAR"))
        if column is None or not typed:
            raise TypeError(f"SimpleStringSchema serializes str records (Types.STRING()); the stream's records are "
                            f"{describe_records(record_type, schema)}: give the operator before the sink output_type=Types.STRING()")
        return [WrittenField(column, column)]


class ByteArraySchema(SerializationSchema, DeserializationSchema):
    """Records are ``bytes``, messages those bytes (the ``raw`` format of one BYTES column)."""

    def produced_type(self) -> TypeInformation:
        return Types.PRIMITIVE_ARRAY(Types.BYTE())


    def written_fields(self, record_type: Optional[TypeInformation], schema: StructType) -> list[WrittenField]:
        column = _single_column(schema, BinaryType)
        if column is None or not (record_type is None or isinstance(record_type, ByteArrayTypeInfo)):
            raise TypeError(f"ByteArraySchema serializes bytes records (Types.PRIMITIVE_ARRAY(Types.BYTE())); the stream's "
                            f"records are {describe_records(record_type, schema)}: give the operator before the sink "
                            "output_type=Types.PRIMITIVE_ARRAY(Types.BYTE())")
        return [WrittenField(column, column)]


def _row_fields(record_type: Optional[TypeInformation], schema: StructType) -> Optional[list[tuple[str, DataType]]]:
    """The stream's record fields (column, type) when its records are Rows (or kindling's own rows), else None."""
    if record_type is not None and (not isinstance(record_type, RowTypeInfo) or isinstance(record_type, TupleTypeInfo)):
        return None
    return [(f.name, f.dataType) for f in schema.fields]


class RowFieldExtractorSchema(SerializationSchema):
    """Writes one field of a Row, which must be ``bytes`` (Flink's ``RowFieldExtractorSchema``): the ``raw`` format
    of that column; a null field is written as empty bytes, as Flink does."""

    def __init__(self, field_index: int) -> None:
        if field_index < 0:
            raise ValueError(f"Field index must be non-negative, got: {field_index}")
        self.field_index = field_index

    def written_fields(self, record_type: Optional[TypeInformation], schema: StructType) -> list[WrittenField]:
        fields = _row_fields(record_type, schema)
        if fields is None:
            raise TypeError(f"RowFieldExtractorSchema({self.field_index}) extracts a field of Row records; the stream's "
                            f"records are {describe_records(record_type, schema)}")
        if self.field_index >= len(fields):
            raise ValueError(f"RowFieldExtractorSchema: Cannot access field {self.field_index} in Row with arity {len(fields)} "
                             f"(the stream's records are {describe_records(record_type, schema)})")
        column, data_type = fields[self.field_index]
        field_type = record_type.field_types[self.field_index] if record_type is not None else None
        if not isinstance(data_type, BinaryType) or (field_type is not None and not isinstance(field_type, ByteArrayTypeInfo)):
            shown = repr(field_type) if field_type is not None else data_type.simpleString()
            raise TypeError(f"RowFieldExtractorSchema: Field at index {self.field_index} must be of type byte[] "
                            f"(Types.PRIMITIVE_ARRAY(Types.BYTE())), but was {shown}")
        return [WrittenField(column, column, empty_if_null=True)]


def row_schema_fields(schema_name: str, row_type: RowTypeInfo, record_type: Optional[TypeInformation],
                      schema: StructType) -> list[WrittenField]:
    """The fields a Row serialization schema of ``row_type`` writes from the stream's records: the records must be
    Rows of the same field types (Flink's would fail on the first record otherwise); the schema's field names
    name them in the message."""
    fields = _row_fields(record_type, schema)
    expected = [f.dataType for f in row_type.record_schema().fields]
    if fields is None or [t for _, t in fields] != expected:
        raise TypeError(f"{schema_name} serializes records of {row_type!r}; the stream's records are "
                        f"{describe_records(record_type, schema)}: give the operator before the sink output_type={row_type!r}")
    return [WrittenField(column, name) for (column, _), name in zip(fields, row_type.field_names)]


# Field types whose text kindling's json and csv formats write byte for byte as Flink's Row schemas (Jackson) do. Java
# writes floating-point numbers its own way (-2.0, 1.0E20), and dates and times in forms not compared here.
EXACT_TEXT_TYPES = ("STRING", "CHAR", "BOOLEAN", "BYTE", "SHORT", "INT", "LONG")


def require_exact_text_types(row_type: RowTypeInfo, what: str) -> RowTypeInfo:
    """``row_type``, if every field is of a type whose text is written as Flink writes it; else the error naming the field."""
    for name, field_type in zip(row_type.field_names, row_type.field_types):
        if not (isinstance(field_type, BasicTypeInfo) and field_type.name in EXACT_TEXT_TYPES):
            raise NotImplementedError(
                f"{what}: field {name!r} is {field_type!r}; kindling writes fields of Types.STRING, BOOLEAN, BYTE, SHORT, "
                "INT and LONG as Flink does, and does not yet write other types (floating-point numbers, dates, times, "
                "nested rows) byte for byte as Flink's: map the field to one of those types (str(value) for text) first")
    return row_type


def require_row_type(type_info: Any, what: str) -> RowTypeInfo:
    """``type_info`` as a RowTypeInfo, or the error Flink gives a Row format built with another type."""
    if type_info is None:
        raise TypeError(f"{what}: Type information must not be None")
    if not isinstance(type_info, RowTypeInfo) or isinstance(type_info, TupleTypeInfo):
        raise ValueError(f"{what}: Row type information expected (Types.ROW or Types.ROW_NAMED), got {type_info!r}")
    return type_info


__all__ = ["EXACT_TEXT_TYPES", "ByteArraySchema", "DeserializationSchema", "Encoder", "RowFieldExtractorSchema", "SerializationSchema",
           "SimpleStringSchema", "WrittenField", "describe_records", "require_exact_text_types", "require_row_type", "row_schema_fields"]

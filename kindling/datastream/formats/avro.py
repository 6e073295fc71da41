"""PyFlink's ``pyflink.datastream.formats.avro``: Rows as Avro binary records of a given schema (kindling's ``avro`` format).

``AvroRowSerializationSchema(avro_schema_string=...)`` writes each Row as one Avro binary datum of that record
schema, its fields by position (no container header, no schema registry), as Flink's does; an
``AvroRowDeserializationSchema`` of the same schema reads them back into Rows named by the schema's fields.
Primitive field types are handled (``int``, ``long``, ``string``, ``boolean``, ``float``, ``double``, ``bytes``,
each possibly a union with ``null``); other Avro types are refused naming the field. Java record classes
(``record_class=``) do not exist in Python and are refused.

>>> schema = AvroRowSerializationSchema(avro_schema_string='''
...     {"type": "record", "name": "TestRecord",
...      "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}]}''')
>>> schema.row_type
Types.ROW_NAMED(id: Types.INT(), name: Types.STRING())
"""

from __future__ import annotations

import json
from typing import Any, Optional

from pyspark.sql.types import StructType

from kindling.common.serialization import DeserializationSchema, SerializationSchema, WrittenField, row_schema_fields
from kindling.common.typeinfo import RowTypeInfo, TypeInformation, Types
from kindling.unsupported import UnsupportedPyFlinkAPI

_MODULE = "pyflink.datastream.formats.avro"
_PRIMITIVES = {"int": Types.INT, "long": Types.LONG, "string": Types.STRING, "boolean": Types.BOOLEAN,
               "float": Types.FLOAT, "double": Types.DOUBLE, "bytes": lambda: Types.PRIMITIVE_ARRAY(Types.BYTE())}


def _row_type(what: str, record_class: Optional[str], schema_text: Optional[str]) -> tuple[RowTypeInfo, str]:
    """The Row type Flink's AvroSchemaConverter gives an Avro record schema, and the schema as compact JSON."""
    if record_class is not None:
        raise NotImplementedError(f"{what}(record_class={record_class!r}): Avro SpecificRecord classes are Java classes, "
                                  "which kindling cannot load; pass the record's schema as avro_schema_string=")
    if schema_text is None:
        raise ValueError(f"{what}: one of record_class and avro_schema_string must be given")
    try:
        schema = json.loads(schema_text)
    except ValueError as exc:
        raise ValueError(f"{what}: avro_schema_string is not JSON ({exc})") from None
    if not isinstance(schema, dict) or schema.get("type") != "record" or not isinstance(schema.get("fields"), list):
        raise ValueError(f"{what}: avro_schema_string must be an Avro record schema, got {schema_text.strip()!r}")
    names, types = [], []
    for field in schema["fields"]:
        avro_type = field.get("type")
        if isinstance(avro_type, list) and len(avro_type) == 2 and "null" in avro_type:
            avro_type = next(t for t in avro_type if t != "null")
        if not isinstance(avro_type, str) or avro_type not in _PRIMITIVES:
            raise NotImplementedError(
                f"{what}: field {field.get('name')!r} is of Avro type {field.get('type')!r}; kindling reads and writes the "
                f"primitive types {', '.join(_PRIMITIVES)} (or their union with null), not yet records, arrays, maps, "
                "enums, fixed or logical types")
        names.append(field["name"])
        types.append(_PRIMITIVES[avro_type]())
    return Types.ROW_NAMED(names, types), json.dumps(schema, separators=(",", ":"))


class AvroRowSerializationSchema(SerializationSchema):
    """Rows as Avro binary records of the given schema (the ``avro`` format with ``avro.schema``)."""

    format = "avro"

    def __init__(self, record_class: Optional[str] = None, avro_schema_string: Optional[str] = None) -> None:
        self.row_type, self._schema = _row_type("AvroRowSerializationSchema", record_class, avro_schema_string)

    def format_options(self) -> dict[str, str]:
        return {"avro.schema": self._schema}

    def written_fields(self, record_type: Optional[TypeInformation], schema: StructType) -> list[WrittenField]:
        return row_schema_fields("AvroRowSerializationSchema", self.row_type, record_type, schema)


class AvroRowDeserializationSchema(DeserializationSchema):
    """Avro binary records of the given schema as Rows named by its fields (the ``avro`` format with ``avro.schema``)."""

    format = "avro"

    def __init__(self, record_class: Optional[str] = None, avro_schema_string: Optional[str] = None) -> None:
        self.row_type, self._schema = _row_type("AvroRowDeserializationSchema", record_class, avro_schema_string)

    def produced_type(self) -> TypeInformation:
        return self.row_type

    def format_options(self) -> dict[str, Any]:
        return {"avro.schema": self._schema}


# Avro files, generic records and bulk writers are Java-backed in PyFlink.
AvroSchema = UnsupportedPyFlinkAPI(f"{_MODULE}.AvroSchema")
GenericRecordAvroTypeInfo = UnsupportedPyFlinkAPI(f"{_MODULE}.GenericRecordAvroTypeInfo")
AvroInputFormat = UnsupportedPyFlinkAPI(f"{_MODULE}.AvroInputFormat")
AvroBulkWriters = UnsupportedPyFlinkAPI(f"{_MODULE}.AvroBulkWriters")

__all__ = ["AvroBulkWriters", "AvroInputFormat", "AvroRowDeserializationSchema", "AvroRowSerializationSchema", "AvroSchema",
           "GenericRecordAvroTypeInfo"]

"""PyFlink's ``pyflink.datastream.formats.json``: Rows as JSON objects (kindling's ``json`` format).

A Row of ``Types.ROW([Types.INT(), Types.STRING()])`` is written as ``{"f0":1,"f1":"hi"}`` (the type
information's field names), and a JSON object is read into such a Row by field name, missing fields
as null, as Flink's ``JsonRowSerializationSchema`` / ``JsonRowDeserializationSchema`` do.
"""

from __future__ import annotations

from typing import Any, Optional

from pyspark.sql.types import StructType

from kindling.common.serialization import (
    DeserializationSchema,
    SerializationSchema,
    WrittenField,
    require_exact_text_types,
    require_row_type,
    row_schema_fields,
)
from kindling.common.typeinfo import RowTypeInfo, TypeInformation
from kindling.unsupported import UnsupportedPyFlinkAPI

_MODULE = "pyflink.datastream.formats.json"


class JsonRowDeserializationSchema(DeserializationSchema):
    """JSON objects as Rows of the given type information (the ``json`` format)."""

    format = "json"

    def __init__(self, type_info: RowTypeInfo, fail_on_missing_field: bool = False, ignore_parse_errors: bool = False) -> None:
        self.type_info = require_row_type(type_info, "JsonRowDeserializationSchema")
        self.fail_on_missing_field = fail_on_missing_field
        self.ignore_parse_errors = ignore_parse_errors

    def produced_type(self) -> TypeInformation:
        return self.type_info

    def format_options(self) -> dict[str, str]:
        return {"json.fail-on-missing-field": str(self.fail_on_missing_field).lower(),
                "json.ignore-parse-errors": str(self.ignore_parse_errors).lower()}

    @staticmethod
    def builder() -> "JsonRowDeserializationSchema.Builder":
        return JsonRowDeserializationSchema.Builder()

    class Builder:
        """PyFlink's builder: ``type_info(...)``, ``fail_on_missing_field()``, ``ignore_parse_errors()``, ``build()``."""

        json_schema = UnsupportedPyFlinkAPI(f"{_MODULE}.JsonRowDeserializationSchema.Builder.json_schema")

        def __init__(self) -> None:
            self._type_info: Optional[Any] = None
            self._fail_on_missing_field = False
            self._ignore_parse_errors = False

        def type_info(self, type_info: TypeInformation) -> "JsonRowDeserializationSchema.Builder":
            self._type_info = type_info
            return self

        def fail_on_missing_field(self) -> "JsonRowDeserializationSchema.Builder":
            """Fail on a JSON object that lacks a field (by default the field is null)."""
            self._fail_on_missing_field = True
            return self

        def ignore_parse_errors(self) -> "JsonRowDeserializationSchema.Builder":
            """Skip messages that are not JSON objects of the type (by default the job fails on them)."""
            self._ignore_parse_errors = True
            return self

        def build(self) -> "JsonRowDeserializationSchema":
            return JsonRowDeserializationSchema(self._type_info, self._fail_on_missing_field, self._ignore_parse_errors)


class JsonRowSerializationSchema(SerializationSchema):
    """Rows of the given type information as JSON objects (the ``json`` format)."""

    format = "json"

    def __init__(self, type_info: RowTypeInfo) -> None:
        self.type_info = require_exact_text_types(require_row_type(type_info, "JsonRowSerializationSchema"), "JsonRowSerializationSchema")

    def written_fields(self, record_type: Optional[TypeInformation], schema: StructType) -> list[WrittenField]:
        return row_schema_fields("JsonRowSerializationSchema", self.type_info, record_type, schema)

    @staticmethod
    def builder() -> "JsonRowSerializationSchema.Builder":
        return JsonRowSerializationSchema.Builder()

    class Builder:
        """PyFlink's builder: ``with_type_info(...)``, ``build()``."""

        def __init__(self) -> None:
            self._type_info: Optional[Any] = None

        def with_type_info(self, type_info: TypeInformation) -> "JsonRowSerializationSchema.Builder":
            self._type_info = type_info
            return self

        def build(self) -> "JsonRowSerializationSchema":
            if self._type_info is None:
                raise TypeError("Typeinfo should be set.")
            return JsonRowSerializationSchema(self._type_info)


__all__ = ["JsonRowDeserializationSchema", "JsonRowSerializationSchema"]

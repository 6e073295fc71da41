"""PyFlink's ``pyflink.datastream.formats.csv``: Rows as CSV lines (kindling's ``csv`` format).

``CsvRowSerializationSchema`` writes a Row of its type information as one CSV line that, as Flink's,
ends with ``'\\n'`` (``set_line_delimiter`` changes it); ``CsvRowDeserializationSchema`` reads a line
(with or without its line delimiter) into such a Row, fields in order. The field delimiter is
settable on both; the other Jackson settings of Flink's builders (quote and escape characters, null
literal, array element delimiter, comments) are not kindling's csv format's, and fail where called.
CSV files through ``CsvSchema``/``CsvReaderFormat``/``CsvBulkWriters`` are the filesystem connector's
``csv`` format: ``FileSource.for_record_stream_format('csv', path)``, ``FileSink.for_row_format(path, 'csv')``.
"""

from __future__ import annotations

from typing import Optional

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
from kindling.formats.settings import field_delimiter, line_delimiter
from kindling.unsupported import UnsupportedPyFlinkAPI

_MODULE = "pyflink.datastream.formats.csv"


def _delimiter(value: str, what: str) -> str:
    try:
        return field_delimiter(value, what)
    except ValueError:
        raise ValueError(f"{what}: the field delimiter must be a single character, got {value!r}") from None


class CsvRowDeserializationSchema(DeserializationSchema):
    """CSV lines as Rows of the given type information (the ``csv`` format)."""

    format = "csv"

    def __init__(self, type_info: RowTypeInfo, field_delimiter: str = ",", ignore_parse_errors: bool = False) -> None:
        self.type_info = require_row_type(type_info, "CsvRowDeserializationSchema")
        self.field_delimiter = _delimiter(field_delimiter, "CsvRowDeserializationSchema")
        self.ignore_parse_errors = ignore_parse_errors

    def produced_type(self) -> TypeInformation:
        return self.type_info

    def format_options(self) -> dict[str, str]:
        return {"csv.field-delimiter": self.field_delimiter, "csv.ignore-parse-errors": str(self.ignore_parse_errors).lower()}

    class Builder:
        """PyFlink's builder: ``Builder(type_info)``, ``set_field_delimiter``, ``set_ignore_parse_errors``, ``build()``."""

        _NAME = f"{_MODULE}.CsvRowDeserializationSchema.Builder"
        set_allow_comments = UnsupportedPyFlinkAPI(f"{_NAME}.set_allow_comments")
        set_array_element_delimiter = UnsupportedPyFlinkAPI(f"{_NAME}.set_array_element_delimiter")
        set_quote_character = UnsupportedPyFlinkAPI(f"{_NAME}.set_quote_character")
        set_escape_character = UnsupportedPyFlinkAPI(f"{_NAME}.set_escape_character")
        set_null_literal = UnsupportedPyFlinkAPI(f"{_NAME}.set_null_literal")

        def __init__(self, type_info: TypeInformation) -> None:
            if type_info is None:
                raise TypeError("Type information must not be None")
            self._type_info = require_row_type(type_info, "CsvRowDeserializationSchema.Builder")
            self._field_delimiter = ","
            self._ignore_parse_errors = False

        def set_field_delimiter(self, delimiter: str) -> "CsvRowDeserializationSchema.Builder":
            self._field_delimiter = _delimiter(delimiter, "CsvRowDeserializationSchema.Builder.set_field_delimiter")
            return self

        def set_ignore_parse_errors(self, ignore_parse_errors: bool) -> "CsvRowDeserializationSchema.Builder":
            """Skip lines that are not CSV of the type (by default the job fails on them)."""
            self._ignore_parse_errors = bool(ignore_parse_errors)
            return self

        def build(self) -> "CsvRowDeserializationSchema":
            return CsvRowDeserializationSchema(self._type_info, self._field_delimiter, self._ignore_parse_errors)


class CsvRowSerializationSchema(SerializationSchema):
    """Rows of the given type information as CSV lines (the ``csv`` format)."""

    format = "csv"

    def __init__(self, type_info: RowTypeInfo, field_delimiter: str = ",", line_delimiter: str = "\n") -> None:
        self.type_info = require_exact_text_types(require_row_type(type_info, "CsvRowSerializationSchema"), "CsvRowSerializationSchema")
        self.field_delimiter = _delimiter(field_delimiter, "CsvRowSerializationSchema")
        self.line_delimiter = line_delimiter

    def format_options(self) -> dict[str, str]:
        return {"csv.field-delimiter": self.field_delimiter, "csv.line-delimiter": self.line_delimiter}

    def written_fields(self, record_type: Optional[TypeInformation], schema: StructType) -> list[WrittenField]:
        return row_schema_fields("CsvRowSerializationSchema", self.type_info, record_type, schema)

    class Builder:
        """PyFlink's builder: ``Builder(type_info)``, ``set_field_delimiter``, ``set_line_delimiter``, ``build()``."""

        _NAME = f"{_MODULE}.CsvRowSerializationSchema.Builder"
        set_array_element_delimiter = UnsupportedPyFlinkAPI(f"{_NAME}.set_array_element_delimiter")
        disable_quote_character = UnsupportedPyFlinkAPI(f"{_NAME}.disable_quote_character")
        set_quote_character = UnsupportedPyFlinkAPI(f"{_NAME}.set_quote_character")
        set_escape_character = UnsupportedPyFlinkAPI(f"{_NAME}.set_escape_character")
        set_null_literal = UnsupportedPyFlinkAPI(f"{_NAME}.set_null_literal")

        def __init__(self, type_info: TypeInformation) -> None:
            if type_info is None:
                raise TypeError("Type information must not be None")
            self._type_info = require_row_type(type_info, "CsvRowSerializationSchema.Builder")
            self._field_delimiter = ","
            self._line_delimiter = "\n"

        def set_field_delimiter(self, c: str) -> "CsvRowSerializationSchema.Builder":
            self._field_delimiter = _delimiter(c, "CsvRowSerializationSchema.Builder.set_field_delimiter")
            return self

        def set_line_delimiter(self, delimiter: str) -> "CsvRowSerializationSchema.Builder":
            """What ends each line: ``'\\n'`` (the default), ``'\\r'``, ``'\\r\\n'`` or ``''``."""
            if delimiter not in ("\n", "\r", "\r\n", ""):
                raise ValueError("Unsupported new line delimiter. Only \\n, \\r, \\r\\n, or empty string are supported.")
            self._line_delimiter = line_delimiter(delimiter, "CsvRowSerializationSchema")
            return self

        def build(self) -> "CsvRowSerializationSchema":
            return CsvRowSerializationSchema(self._type_info, self._field_delimiter, self._line_delimiter)


__all__ = ["CsvRowDeserializationSchema", "CsvRowSerializationSchema"]

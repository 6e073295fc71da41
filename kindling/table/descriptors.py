"""``Schema`` and ``TableDescriptor``: PyFlink's builders for a table's columns and connector, as DDL.

>>> from kindling.table import DataTypes
>>> descriptor = (TableDescriptor.for_connector("print")
...               .schema(Schema.new_builder().column("id", DataTypes.BIGINT()).build()).build())
>>> descriptor.ddl("sink")
"CREATE TABLE `sink` (\\n  `id` BIGINT\\n) WITH (\\n  'connector' = 'print'\\n)"
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from kindling.table.types import DataType, _quote


def _literal(value: Any) -> str:
    return "'" + str(value).replace("'", "''") + "'"


class Schema:
    """A table's columns (physical, computed, metadata), watermark and primary key."""

    def __init__(self, columns: Sequence[tuple[str, str, str]], watermark: Optional[tuple[str, str]],
                 primary_key: Sequence[str]) -> None:
        self.columns = list(columns)  # (kind, name, type or expression): kind is physical | computed | metadata
        self.watermark = watermark  # (column, expression)
        self.primary_key = list(primary_key)

    @staticmethod
    def new_builder() -> "Schema.Builder":
        return Schema.Builder()

    def ddl_lines(self) -> list[str]:
        lines = [f"{_quote(name)} AS {text}" if kind == "computed" else f"{_quote(name)} {text}" for kind, name, text in self.columns]
        if self.watermark:
            lines.append(f"WATERMARK FOR {_quote(self.watermark[0])} AS {self.watermark[1]}")
        if self.primary_key:
            lines.append(f"PRIMARY KEY ({', '.join(_quote(k) for k in self.primary_key)}) NOT ENFORCED")
        return lines

    def __str__(self) -> str:
        return "(\n" + ",\n".join("  " + line for line in self.ddl_lines()) + "\n)"

    class Builder:
        def __init__(self) -> None:
            self._columns: list[tuple[str, str, str]] = []
            self._watermark: Optional[tuple[str, str]] = None
            self._primary_key: list[str] = []

        def column(self, column_name: str, data_type: DataType | str) -> "Schema.Builder":
            self._columns.append(("physical", column_name, str(data_type)))
            return self

        def column_by_expression(self, column_name: str, expr: Any) -> "Schema.Builder":
            self._columns.append(("computed", column_name, expr if isinstance(expr, str) else expr._sql))
            return self

        def column_by_metadata(self, column_name: str, data_type: DataType | str, metadata_key: Optional[str] = None,
                               is_virtual: bool = False) -> "Schema.Builder":
            key = f" FROM {_literal(metadata_key)}" if metadata_key else ""
            self._columns.append(("metadata", column_name, f"{data_type} METADATA{key}{' VIRTUAL' if is_virtual else ''}"))
            return self

        def from_fields(self, field_names: Sequence[str], field_data_types: Sequence[DataType | str]) -> "Schema.Builder":
            for name, data_type in zip(field_names, field_data_types):
                self.column(name, data_type)
            return self

        def watermark(self, column_name: str, watermark_expr: Any) -> "Schema.Builder":
            self._watermark = (column_name, watermark_expr if isinstance(watermark_expr, str) else watermark_expr._sql)
            return self

        def primary_key(self, *column_names: str) -> "Schema.Builder":
            self._primary_key = list(column_names)
            return self

        def primary_key_named(self, constraint_name: str, *column_names: str) -> "Schema.Builder":
            return self.primary_key(*column_names)

        def build(self) -> "Schema":
            return Schema(self._columns, self._watermark, self._primary_key)


class TableDescriptor:
    """A connector table's schema and options (``TableDescriptor.for_connector('kafka')...build()``)."""

    def __init__(self, connector: str, schema: Optional[Schema], options: dict[str, str], partition_keys: Sequence[str],
                 comment: Optional[str]) -> None:
        self.connector = connector
        self.schema = schema
        self.options = options
        self.partition_keys = list(partition_keys)
        self.comment = comment

    @staticmethod
    def for_connector(connector: str) -> "TableDescriptor.Builder":
        return TableDescriptor.Builder(connector)

    def get_options(self) -> dict[str, str]:
        return {"connector": self.connector, **self.options}

    def get_schema(self) -> Optional[Schema]:
        return self.schema

    def get_partition_keys(self) -> list[str]:
        return list(self.partition_keys)

    def get_comment(self) -> Optional[str]:
        return self.comment

    def ddl(self, name: str, temporary: bool = False) -> str:
        """The CREATE TABLE statement that makes this table under ``name``."""
        if self.schema is None:
            raise ValueError(f"table '{name}': the TableDescriptor has no schema (.schema(Schema.new_builder()...build()))")
        options = ",\n".join(f"  {_literal(k)} = {_literal(v)}" for k, v in self.get_options().items())
        partitioned = f"\nPARTITIONED BY ({', '.join(_quote(k) for k in self.partition_keys)})" if self.partition_keys else ""
        comment = f"\nCOMMENT {_literal(self.comment)}" if self.comment else ""
        return f"CREATE {'TEMPORARY ' if temporary else ''}TABLE {_quote(name)} {self.schema}{comment}{partitioned} WITH (\n{options}\n)"

    def __str__(self) -> str:
        return self.ddl("table")

    class Builder:
        def __init__(self, connector: str) -> None:
            self._connector = connector
            self._schema: Optional[Schema] = None
            self._options: dict[str, str] = {}
            self._partition_keys: list[str] = []
            self._comment: Optional[str] = None

        def schema(self, schema: Schema) -> "TableDescriptor.Builder":
            self._schema = schema
            return self

        def option(self, key: str, value: Any) -> "TableDescriptor.Builder":
            self._options[key] = str(value).lower() if isinstance(value, bool) else str(value)
            return self

        def format(self, format: Any, format_option_key: Optional[str] = None) -> "TableDescriptor.Builder":
            key = format_option_key or "format"
            if isinstance(format, str):
                self._options[key] = format
            else:  # a FormatDescriptor
                self._options[key] = format.format
                for option, value in format.options.items():
                    self._options[f"{format.format}.{option}"] = value
            return self

        def partitioned_by(self, *partition_keys: str) -> "TableDescriptor.Builder":
            self._partition_keys = list(partition_keys)
            return self

        def comment(self, comment: str) -> "TableDescriptor.Builder":
            self._comment = comment
            return self

        def build(self) -> "TableDescriptor":
            return TableDescriptor(self._connector, self._schema, self._options, self._partition_keys, self._comment)


class FormatDescriptor:
    """A format and its options (``FormatDescriptor.for_format('csv').option('field-delimiter', '|').build()``)."""

    def __init__(self, format: str, options: dict[str, str]) -> None:
        self.format, self.options = format, options

    @staticmethod
    def for_format(format: str) -> "FormatDescriptor.Builder":
        return FormatDescriptor.Builder(format)

    class Builder:
        def __init__(self, format: str) -> None:
            self._format, self._options = format, {}

        def option(self, key: str, value: Any) -> "FormatDescriptor.Builder":
            self._options[key] = str(value)
            return self

        def build(self) -> "FormatDescriptor":
            return FormatDescriptor(self._format, dict(self._options))

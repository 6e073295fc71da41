"""PyFlink's ``TableSchema`` (``table.get_schema()``) and ``ResolvedSchema`` (``get_resolved_schema()``,
``print_schema()``): a table's column names and Flink types, printed as Flink prints them.

kindling's is a Spark ``StructType`` as well (``fieldNames()``, ``fields``), with PyFlink's accessors on top, so a
PyFlink program's ``get_field_names()`` and kindling's Spark-side uses read the same object. The Flink types are the
ones kindling knows (``kindling.sql.column_types``): a column whose Flink type is not derived (a computed value) has
a name but no type, and whatever would show its type refuses, naming it, rather than print Spark's.

>>> from pyspark.sql.types import LongType, StringType, StructField
>>> schema = TableSchema([StructField("k", StringType()), StructField("v", LongType())], ["STRING NOT NULL", "BIGINT"])
>>> schema.get_field_names(), schema.get_field_data_type("v"), schema.get_field_count()
(['k', 'v'], BigIntType(true), 2)
>>> print(schema)
root
 |-- k: STRING NOT NULL
 |-- v: BIGINT
<BLANKLINE>
>>> schema == StructType(schema.fields) == schema, schema.json() == StructType(schema.fields).json()
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

from pyspark.sql.types import StructField, StructType

from kindling.sql.data_type import DataType, as_pyflink_converts

_FLINK_ATTRIBUTES = ("_flink_types", "_declaration")


@dataclass(frozen=True)
class Declaration:
    """What a catalog table's declaration adds to its printed schema: computed columns' expressions, its watermark
    and primary key (Flink prints them for the table as read, and as filtered, not for a projection of it)."""

    expressions: dict[str, str] = field(default_factory=dict)  # computed column -> its expression as Flink prints it
    watermark: Optional[tuple[str, str]] = None  # (rowtime column, its expression as Flink prints it)
    primary_key: tuple[str, ...] = ()
    unprintable: Optional[str] = None  # what kindling does not print as Flink does (then the schema is refused)


class TableSchema(StructType):
    """A table's columns: PyFlink's accessors over a Spark StructType (the types as Flink SQL names them)."""

    def __init__(self, fields: Optional[list[StructField]] = None,
                 flink_types: Union[Sequence[Optional[str]], Callable[[], Sequence[Optional[str]]], None] = None,
                 declaration: Optional[Declaration] = None) -> None:
        """``flink_types``: each column's Flink type (None: not known), or what gives them when first asked for."""
        super().__init__(fields)
        self._flink_types = flink_types if flink_types is not None else [None] * len(self.fields)
        self._declaration = declaration

    def _types(self) -> Sequence[Optional[str]]:
        if callable(self._flink_types):
            self._flink_types = list(self._flink_types())
        return self._flink_types

    @classmethod
    def typeName(cls) -> str:  # Spark's JSON and DDL name it by class name: this is a struct
        return "struct"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructType) and _spark_part(self) == _spark_part(other)

    __hash__ = StructType.__hash__

    def get_field_names(self) -> list[str]:
        return self.fieldNames()

    def get_field_count(self) -> int:
        return len(self.fields)

    def get_field_name(self, field_index: int) -> Optional[str]:
        return self.fields[field_index].name if 0 <= field_index < len(self.fields) else None

    def get_field_data_types(self) -> list[DataType]:
        """The columns' types as PyFlink converts Flink's (every TIMESTAMP of precision 3, every TIMESTAMP_LTZ of 6)."""
        return [as_pyflink_converts(self._flink_type(i, plain=True)) for i in range(len(self.fields))]

    def get_field_data_type(self, field: Union[int, str]) -> Optional[DataType]:
        """The type of the field at an index or of a name; None if there is none."""
        if isinstance(field, bool) or not isinstance(field, (int, str)):
            raise TypeError(f"Expected field index or field name, got {type(field)}")
        if isinstance(field, int):
            return as_pyflink_converts(self._flink_type(field, plain=True)) if 0 <= field < len(self.fields) else None
        index = next((i for i, f in enumerate(self.fields) if f.name == field), None)
        return as_pyflink_converts(self._flink_type(index, plain=True)) if index is not None else None

    def _flink_type(self, index: int, plain: bool = False) -> str:
        """The column's Flink type as a schema prints it (``plain``: as a DataType, without the time marker)."""
        from kindling.sql.column_types import without_markers

        flink_type = self._types()[index]
        if flink_type is None:
            raise ValueError(f"kindling does not derive Flink's type of column '{self.fields[index].name}': the query computes "
                             "it (an expression, an aggregate, a function's result). The types of columns read as they are from "
                             "tables (CREATE TABLE, TableDescriptor, from_elements, from_pandas) and of window TVFs' "
                             "window_start/window_end/window_time are known; get_field_names() lists every column.")
        return without_markers(flink_type) if plain else flink_type

    def _lines(self) -> list[tuple[str, str]]:
        """(name, type text) of each column, computed columns with their expressions."""
        declaration = self._declaration
        if declaration is not None and declaration.unprintable is not None:
            raise ValueError(f"kindling does not print the schema of this table as Flink does: {declaration.unprintable}. "
                             "get_field_names() lists its columns.")
        lines = []
        for index, column in enumerate(self.fields):
            text = self._flink_type(index)
            if declaration is not None and column.name in declaration.expressions:
                text += f" AS {declaration.expressions[column.name]}"
            lines.append((column.name, text))
        return lines

    def _watermark(self) -> Optional[tuple[str, str, str]]:
        """(rowtime column, its type, the watermark's expression)."""
        from kindling.sql.column_types import without_markers

        if self._declaration is None or self._declaration.watermark is None:
            return None
        column, expression = self._declaration.watermark
        return column, without_markers(self._flink_type(self.fieldNames().index(column))), expression

    def __str__(self) -> str:
        """Flink's legacy TableSchema print (``root`` and a ``|--`` line a column)."""
        lines = [f" |-- {name}: {text}" for name, text in self._lines()]
        watermark = self._watermark()
        if watermark is not None:
            lines.append(f" |-- WATERMARK FOR {watermark[0]}: {watermark[1]} AS {watermark[2]}")
        if self._declaration is not None and self._declaration.primary_key:
            key = self._declaration.primary_key
            lines.append(f" |-- CONSTRAINT PK_{'_'.join(key)} PRIMARY KEY ({', '.join(key)})")
        return "root\n" + "".join(line + "\n" for line in lines)

    def __repr__(self) -> str:
        try:
            return str(self)
        except ValueError:  # a column of an unknown type: Spark's repr
            return StructType.__repr__(self)

    # ResolvedSchema's names for the same (``table.get_resolved_schema()``)
    def get_column_names(self) -> list[str]:
        return self.get_field_names()

    def get_column_count(self) -> int:
        return self.get_field_count()

    def get_column_data_types(self) -> list[DataType]:
        return self.get_field_data_types()

    def resolved(self) -> "ResolvedSchema":
        """The same columns as a ResolvedSchema (what ``get_resolved_schema()`` and ``print_schema()`` show)."""
        return ResolvedSchema(self.fields, self._types(), self._declaration)


class ResolvedSchema(TableSchema):
    """PyFlink's ``ResolvedSchema``: the same columns, printed as Flink's ``print_schema()`` prints them."""

    def __str__(self) -> str:
        lines = [f"  {_quote(name)} {text}" for name, text in self._lines()]
        watermark = self._watermark()
        if watermark is not None:
            lines.append(f"  WATERMARK FOR {_quote(watermark[0])}: {watermark[1]} AS {watermark[2]}")
        if self._declaration is not None and self._declaration.primary_key:
            key = self._declaration.primary_key
            lines.append(f"  CONSTRAINT {_quote('PK_' + '_'.join(key))} PRIMARY KEY ({', '.join(_quote(k) for k in key)}) NOT ENFORCED")
        return "(\n" + ",\n".join(lines) + "\n)"


def declaration_of(table: Any) -> Declaration:
    """A catalog table's :class:`Declaration`."""
    from kindling.sql.column_types import expression_text

    expressions: dict[str, str] = {}
    unprintable = None
    for column in table.columns:
        if column.kind == "metadata":
            unprintable = unprintable or f"metadata column '{column.name}'"
        elif column.kind == "computed":
            text = expression_text(column.expression or "")
            if text is None:
                unprintable = unprintable or f"computed column '{column.name}' AS {column.expression}"
            else:
                expressions[column.name] = text
    watermark = None
    if table.watermark is not None:
        text = expression_text(table.watermark.expression)
        if text is None:
            unprintable = unprintable or f"WATERMARK FOR {table.watermark.column} AS {table.watermark.expression}"
        else:
            watermark = (table.watermark.column, text)
    return Declaration(expressions, watermark, tuple(table.primary_key), unprintable)


def _spark_part(schema: StructType) -> dict[str, Any]:
    return {k: v for k, v in schema.__dict__.items() if k not in _FLINK_ATTRIBUTES}


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


__all__ = ["Declaration", "ResolvedSchema", "TableSchema", "declaration_of"]

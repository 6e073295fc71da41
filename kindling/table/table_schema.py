"""PyFlink's ``TableSchema`` (``table.get_schema()``): a table's field names and types.

kindling's is a Spark ``StructType`` as well (``fieldNames()``, ``fields``), with PyFlink's accessors on top, so a
PyFlink program's ``get_field_names()`` and kindling's Spark-side uses read the same object.

>>> from pyspark.sql.types import LongType, StringType, StructField
>>> schema = TableSchema([StructField("k", StringType()), StructField("v", LongType())])
>>> schema.get_field_names(), schema.get_field_data_type("v"), schema.get_field_count()
(['k', 'v'], 'BIGINT', 2)
>>> schema == StructType(schema.fields) == schema, schema.json() == StructType(schema.fields).json()
(True, True)
"""

from __future__ import annotations

from typing import Optional, Union

from pyspark.sql.types import StructType

from kindling.table.types import DataType


class TableSchema(StructType):
    """A table's columns: PyFlink's accessors over a Spark StructType (the types as Flink SQL names them)."""

    @classmethod
    def typeName(cls) -> str:  # Spark's JSON and DDL name it by class name: this is a struct
        return "struct"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructType) and self.__dict__ == other.__dict__

    __hash__ = StructType.__hash__

    def get_field_names(self) -> list[str]:
        return self.fieldNames()

    def get_field_count(self) -> int:
        return len(self.fields)

    def get_field_name(self, field_index: int) -> Optional[str]:
        return self.fields[field_index].name if 0 <= field_index < len(self.fields) else None

    def get_field_data_types(self) -> list[DataType]:
        return [_flink_type(f.dataType) for f in self.fields]

    def get_field_data_type(self, field: Union[int, str]) -> Optional[DataType]:
        """The type of the field at an index or of a name; None if there is none."""
        if isinstance(field, bool) or not isinstance(field, (int, str)):
            raise TypeError(f"Expected field index or field name, got {type(field)}")
        if isinstance(field, int):
            return _flink_type(self.fields[field].dataType) if 0 <= field < len(self.fields) else None
        return next((_flink_type(f.dataType) for f in self.fields if f.name == field), None)

    # ResolvedSchema's names for the same (``table.get_resolved_schema()``)
    def get_column_names(self) -> list[str]:
        return self.get_field_names()

    def get_column_count(self) -> int:
        return self.get_field_count()

    def get_column_data_types(self) -> list[DataType]:
        return self.get_field_data_types()


def _flink_type(data_type: object) -> DataType:
    from kindling.sql.types import flink_type_name

    return DataType(flink_type_name(data_type))  # type: ignore[arg-type]


__all__ = ["TableSchema"]

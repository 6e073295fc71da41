"""``DataTypes``: PyFlink's data type factory, each type being its Flink SQL text.

A :class:`DataType` is a ``str`` holding the type as Flink SQL writes it (``BIGINT``, ``ROW<`a` INT>``),
so it goes wherever kindling takes a type name: a ``@udf(result_type=...)``, a schema's column, a CAST.

>>> row = DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT().not_null()), DataTypes.FIELD("tags", DataTypes.ARRAY(DataTypes.STRING()))])
>>> str(row)
'ROW<`id` BIGINT NOT NULL, `tags` ARRAY<STRING>>'
>>> row   # PyFlink's repr
RowType(RowField(id, BigIntType(false), ...),RowField(tags, ArrayType(VarCharType(2147483647, true), true), ...))
"""

from __future__ import annotations

from typing import Optional, Sequence

from kindling.sql.data_type import DataType, as_pyflink_converts


class DataField:
    """A named field of a ROW type (``DataTypes.FIELD``)."""

    def __init__(self, name: str, data_type: DataType, description: Optional[str] = None) -> None:
        self.name, self.data_type, self.description = name, data_type, description

    def __str__(self) -> str:
        return f"`{self.name}` {self.data_type}"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class DataTypes:
    """Flink's type constructors with Flink's defaults (``TIMESTAMP()`` is ``TIMESTAMP(6)``, ``STRING()`` a VARCHAR of the
    maximum length)."""

    @staticmethod
    def NULL() -> DataType:
        return DataType("NULL")

    @staticmethod
    def CHAR(length: int, nullable: bool = True) -> DataType:
        return _nullable(f"CHAR({length})", nullable)

    @staticmethod
    def VARCHAR(length: int, nullable: bool = True) -> DataType:
        return _nullable(f"VARCHAR({length})", nullable)

    @staticmethod
    def STRING(nullable: bool = True) -> DataType:
        return _nullable("STRING", nullable)

    @staticmethod
    def BOOLEAN(nullable: bool = True) -> DataType:
        return _nullable("BOOLEAN", nullable)

    @staticmethod
    def BINARY(length: int, nullable: bool = True) -> DataType:
        return _nullable(f"BINARY({length})", nullable)

    @staticmethod
    def VARBINARY(length: int, nullable: bool = True) -> DataType:
        return _nullable(f"VARBINARY({length})", nullable)

    @staticmethod
    def BYTES(nullable: bool = True) -> DataType:
        return _nullable("BYTES", nullable)

    @staticmethod
    def DECIMAL(precision: int, scale: int, nullable: bool = True) -> DataType:
        return _nullable(f"DECIMAL({precision}, {scale})", nullable)

    @staticmethod
    def TINYINT(nullable: bool = True) -> DataType:
        return _nullable("TINYINT", nullable)

    @staticmethod
    def SMALLINT(nullable: bool = True) -> DataType:
        return _nullable("SMALLINT", nullable)

    @staticmethod
    def INT(nullable: bool = True) -> DataType:
        return _nullable("INT", nullable)

    @staticmethod
    def BIGINT(nullable: bool = True) -> DataType:
        return _nullable("BIGINT", nullable)

    @staticmethod
    def FLOAT(nullable: bool = True) -> DataType:
        return _nullable("FLOAT", nullable)

    @staticmethod
    def DOUBLE(nullable: bool = True) -> DataType:
        return _nullable("DOUBLE", nullable)

    @staticmethod
    def DATE(nullable: bool = True) -> DataType:
        return _nullable("DATE", nullable)

    @staticmethod
    def TIME(precision: int = 0, nullable: bool = True) -> DataType:
        return _nullable(f"TIME({precision})", nullable)

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> DataType:
        return _nullable(f"TIMESTAMP({precision})", nullable)

    @staticmethod
    def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> DataType:
        return _nullable(f"TIMESTAMP_LTZ({precision})", nullable)

    TIMESTAMP_WITH_LOCAL_TIME_ZONE = TIMESTAMP_LTZ

    @staticmethod
    def ARRAY(element_type: DataType, nullable: bool = True) -> DataType:
        return _nullable(f"ARRAY<{element_type}>", nullable)

    @staticmethod
    def MAP(key_type: DataType, value_type: DataType, nullable: bool = True) -> DataType:
        return _nullable(f"MAP<{key_type}, {value_type}>", nullable)

    @staticmethod
    def MULTISET(element_type: DataType, nullable: bool = True) -> DataType:
        return _nullable(f"MULTISET<{element_type}>", nullable)

    @staticmethod
    def FIELD(name: str, data_type: DataType, description: Optional[str] = None) -> DataField:
        return DataField(name, data_type, description)

    @staticmethod
    def ROW(row_fields: Sequence[DataField] = (), nullable: bool = True) -> DataType:
        row = _nullable(f"ROW<{', '.join(str(f) for f in row_fields)}>", nullable)
        row.fields = list(row_fields)  # type: ignore[attr-defined]
        return row


def _nullable(text: str, nullable: bool) -> DataType:
    return DataType(text if nullable else text + " NOT NULL")


__all__ = ["DataField", "DataType", "DataTypes", "as_pyflink_converts"]

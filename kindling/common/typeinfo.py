"""PyFlink's type information (``Types.ROW_NAMED(...)``, ``Types.TUPLE(...)``, ``Types.STRING()``, ...).

A TypeInformation says how a record of a stream looks to a user function and where it lives in
Spark: ``record_schema()`` gives the Arrow/Spark columns a typed record occupies (a ROW or TUPLE
spreads over one column per field, so typed streams stay columnar), ``from_columns`` builds the
value a function receives (a ``Row``, a tuple, a scalar) and ``to_columns`` checks and flattens a
function's result, naming the field, the value and the expected type when it does not fit.
``Types.PICKLED_BYTE_ARRAY()`` is PyFlink's untyped record: any Python object, pickled into one
binary column.
"""

from __future__ import annotations

import datetime as dt
import decimal
import pickle
from typing import Any, List, Optional, Sequence

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
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from kindling.common.row import Row, RowKind


class TypeMismatchError(TypeError):
    """A value that does not fit its declared type: names the field, the value and the expected type."""


class TypeInformation:
    """The type of a record or of a field."""

    def to_spark(self) -> DataType:
        raise NotImplementedError

    def record_schema(self) -> StructType:
        """The columns a top-level record of this type occupies (one ``f0`` column for a scalar)."""
        return StructType([StructField("f0", self.to_spark(), True)])

    def from_columns(self, values: Sequence[Any]) -> Any:
        """The user's value from the record's column values."""
        return self.from_field(values[0])

    def to_columns(self, value: Any, where: str = "") -> tuple:
        """The record's column values from a user's value, checked against this type."""
        return (self.to_field(value, where or "the record"),)

    def from_field(self, value: Any) -> Any:
        return value

    def to_field(self, value: Any, where: str) -> Any:
        return value

    def format(self, value: Any) -> str:
        """How PyFlink's ``print()`` shows a record of this type (Java's ``toString``)."""
        from kindling.connectors.print import format_value

        return format_value(value)

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __repr__(self) -> str:
        return type(self).__name__


def _mismatch(where: str, value: Any, expected: str) -> TypeMismatchError:
    return TypeMismatchError(f"{where}: value {value!r} of Python type {type(value).__name__} does not fit the declared type {expected}")


class BasicTypeInfo(TypeInformation):
    """STRING, INT, LONG, DOUBLE, FLOAT, BOOLEAN, BYTE, SHORT, BIG_DEC, SQL_DATE, SQL_TIMESTAMP, ..."""

    _CHECKS = {
        "STRING": (str,), "BOOLEAN": (bool,), "BYTE": (int,), "SHORT": (int,), "INT": (int,), "LONG": (int,),
        "FLOAT": (float, int), "DOUBLE": (float, int), "CHAR": (str,), "BIG_INT": (int,), "BIG_DEC": (decimal.Decimal, int, float),
        "SQL_DATE": (dt.date,), "SQL_TIME": (dt.time,), "SQL_TIMESTAMP": (dt.datetime,), "LOCAL_DATE": (dt.date,),
        "LOCAL_TIME": (dt.time,), "LOCAL_DATE_TIME": (dt.datetime,), "INSTANT": (dt.datetime,),
    }
    _RANGES = {"BYTE": 2**7, "SHORT": 2**15, "INT": 2**31, "LONG": 2**63}

    def __init__(self, name: str, spark_type: DataType) -> None:
        self.name = name
        self._spark = spark_type

    def to_spark(self) -> DataType:
        return self._spark

    def to_field(self, value: Any, where: str) -> Any:
        if value is None:
            return None
        if self.name == "INSTANT" and hasattr(value, "to_epoch_milli") and hasattr(value, "nanos"):
            # PyFlink's Instant: a UTC point in time, kept as a naive UTC datetime (microseconds)
            return dt.datetime(1970, 1, 1) + dt.timedelta(seconds=value.seconds, microseconds=value.nanos // 1000)
        allowed = self._CHECKS.get(self.name, (object,))
        if not isinstance(value, allowed) or (isinstance(value, bool) and self.name not in ("BOOLEAN",)):
            raise _mismatch(where, value, f"{self.name} ({repr(self)})")
        bound = self._RANGES.get(self.name)
        if bound is not None and not -bound <= value < bound:
            raise _mismatch(where, value, f"{self.name} (a {bound.bit_length()}-bit integer, out of range)")
        if self.name in ("FLOAT", "DOUBLE"):
            return float(value)
        return value

    def format(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        return super().format(value)

    def __repr__(self) -> str:
        return f"Types.{self.name}()"


class PickledBytesTypeInfo(TypeInformation):
    """PyFlink's untyped record: any Python object, carried pickled in one binary column."""

    def to_spark(self) -> DataType:
        return BinaryType()

    def from_field(self, value: Any) -> Any:
        return None if value is None else pickle.loads(value)

    def to_field(self, value: Any, where: str) -> Any:
        return pickle.dumps(value, protocol=5)

    def format(self, value: Any) -> str:
        return str(value)

    def __repr__(self) -> str:
        return "Types.PICKLED_BYTE_ARRAY()"


class RowTypeInfo(TypeInformation):
    """ROW / ROW_NAMED: a Row with field names; one column per field."""

    def __init__(self, field_types: Sequence[TypeInformation], field_names: Optional[Sequence[str]] = None) -> None:
        self.field_types = list(field_types)
        self.field_names = list(field_names) if field_names is not None else [f"f{i}" for i in range(len(field_types))]
        if len(self.field_names) != len(self.field_types):
            raise ValueError(f"ROW_NAMED has {len(self.field_names)} names but {len(self.field_types)} types")

    def get_field_names(self) -> List[str]:
        return list(self.field_names)

    def get_field_types(self) -> List[TypeInformation]:
        return list(self.field_types)

    def get_field_index(self, name: str) -> int:
        return self.field_names.index(name)

    def to_spark(self) -> DataType:
        return self.record_schema()

    def record_schema(self) -> StructType:
        return StructType([StructField(n, t.to_spark(), True) for n, t in zip(self.field_names, self.field_types)])

    def from_columns(self, values: Sequence[Any]) -> Any:
        row = Row(*[t.from_field(v) for t, v in zip(self.field_types, values)])
        row.set_field_names(self.field_names)
        return row

    def from_field(self, value: Any) -> Any:
        if value is None:
            return None
        items = [value[n] for n in self.field_names] if isinstance(value, dict) else list(value)
        return self.from_columns(items)

    def to_columns(self, value: Any, where: str = "") -> tuple:
        where = where or "the record"
        if isinstance(value, Row) and value._fields is not None and all(n in value._fields for n in self.field_names):
            items = [value[n] for n in self.field_names]
        elif isinstance(value, Row):  # positional (Row(1, 'a')), or named otherwise than the type: by position, as PyFlink
            items = list(value._values)
        elif isinstance(value, dict):
            items = [value.get(n) for n in self.field_names]
        elif isinstance(value, (tuple, list)):
            items = list(value)
        elif len(self.field_types) == 1:
            items = [value]
        else:
            raise _mismatch(where, value, repr(self))
        if len(items) != len(self.field_types):
            raise TypeMismatchError(f"{where}: value {value!r} has {len(items)} fields but the declared type {self!r} has "
                                    f"{len(self.field_types)}")
        return tuple(t.to_field(v, f"{where}, field '{n}'") for t, n, v in zip(self.field_types, self.field_names, items))

    def to_field(self, value: Any, where: str) -> Any:
        return None if value is None else dict(zip(self.field_names, self.to_columns(value, where)))

    def format(self, value: Any) -> str:
        """As PyFlink's ``print()`` shows a Row record: its Python fields' ``str`` joined by ``,`` (PyFlink maps a
        stream of Rows to text in Python before Java prints it: ``+I[1,hi]``, not Java's ``+I[1, hi]``)."""
        kind = value.get_row_kind().short_string() if isinstance(value, Row) else "+I"
        return kind + "[" + ",".join(str(v) for v in value) + "]"

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}: {t!r}" for n, t in zip(self.field_names, self.field_types))
        return f"Types.ROW_NAMED({fields})"


class ChangelogRowTypeInfo(RowTypeInfo):
    """A table's changelog as a DataStream (``to_changelog_stream``): a Row of the table's columns whose row kind
    (``+I``, ``-U``, ``+U``, ``-D``) travels in one more column, ``KIND_FIELD``, after them."""

    KIND_FIELD = "$row_kind"

    def record_schema(self) -> StructType:
        return StructType(super().record_schema().fields + [StructField(self.KIND_FIELD, StringType(), False)])

    def from_columns(self, values: Sequence[Any]) -> Any:
        row = super().from_columns(values[:-1])
        row.set_row_kind(RowKind.from_short_string(values[-1]))
        return row

    def to_columns(self, value: Any, where: str = "") -> tuple:
        kind = value.get_row_kind() if isinstance(value, Row) else RowKind.INSERT
        return super().to_columns(value, where) + (kind.short_string(),)

    def from_field(self, value: Any) -> Any:
        if isinstance(value, dict):  # a nested changelog row (a struct): its kind is one more field
            return self.from_columns([value[n] for n in self.field_names] + [value[self.KIND_FIELD]])
        return super().from_field(value)

    def to_field(self, value: Any, where: str) -> Any:
        if value is None:
            return None
        return dict(zip(self.field_names + [self.KIND_FIELD], self.to_columns(value, where)))

    def __repr__(self) -> str:
        return "Changelog" + super().__repr__()


class TupleTypeInfo(RowTypeInfo):
    """TUPLE: a Python tuple; one column per field (``f0``, ``f1``, ...)."""

    def from_columns(self, values: Sequence[Any]) -> Any:
        return tuple(t.from_field(v) for t, v in zip(self.field_types, values))

    def from_field(self, value: Any) -> Any:
        if value is None:
            return None
        items = [value[n] for n in self.field_names] if isinstance(value, dict) else list(value)
        return self.from_columns(items)

    def format(self, value: Any) -> str:
        from kindling.connectors.print import format_value

        return "(" + ",".join(format_value(v) for v in value) + ")"

    def __repr__(self) -> str:
        return "Types.TUPLE([" + ", ".join(repr(t) for t in self.field_types) + "])"


class RetractTypeInfo(TupleTypeInfo):
    """``to_retract_stream``'s records: ``(flag, row)``, the flag True for an added row (``+I``, ``+U``) and False for
    a retracted one (``-U``, ``-D``); the row keeps its kind. Printed as Flink's Tuple2: ``(true,+I[a, 1])``."""

    def __init__(self, row: TypeInformation) -> None:
        if isinstance(row, RowTypeInfo) and not isinstance(row, TupleTypeInfo):
            row = ChangelogRowTypeInfo(row.field_types, row.field_names)
        super().__init__([Types.BOOLEAN(), row], ["f0", "f1"])

    def format(self, value: Any) -> str:
        from kindling.connectors.print import format_row, format_value

        flag, row = value
        kind = row.get_row_kind().short_string() if isinstance(row, Row) else None
        shown = format_row(list(row), kind) if kind is not None else format_value(row)
        return f"({format_value(flag)},{shown})"

    def __repr__(self) -> str:
        return f"Types.TUPLE([Types.BOOLEAN(), {self.field_types[1]!r}])"


class ListTypeInfo(TypeInformation):
    """LIST / BASIC_ARRAY / PRIMITIVE_ARRAY / OBJECT_ARRAY: an ARRAY column."""

    def __init__(self, element: TypeInformation, name: str = "LIST") -> None:
        self.element = element
        self.name = name

    def to_spark(self) -> DataType:
        return ArrayType(self.element.to_spark(), True)

    def from_field(self, value: Any) -> Any:
        return None if value is None else [self.element.from_field(v) for v in value]

    def to_field(self, value: Any, where: str) -> Any:
        if value is None:
            return None
        if not isinstance(value, (list, tuple)):
            raise _mismatch(where, value, repr(self))
        return [self.element.to_field(v, f"{where}[{i}]") for i, v in enumerate(value)]

    def __repr__(self) -> str:
        return f"Types.{self.name}({self.element!r})"


class ByteArrayTypeInfo(ListTypeInfo):
    """PRIMITIVE_ARRAY(BYTE): Java's ``byte[]``, which PyFlink hands Python as ``bytes``; one BINARY column."""

    def __init__(self) -> None:
        super().__init__(Types.BYTE(), "PRIMITIVE_ARRAY")

    def to_spark(self) -> DataType:
        return BinaryType()

    def from_field(self, value: Any) -> Any:
        return None if value is None else bytes(value)

    def to_field(self, value: Any, where: str) -> Any:
        if value is None:
            return None
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise _mismatch(where, value, f"{self!r} (bytes)")
        return bytes(value)


class MapTypeInfo(TypeInformation):
    """MAP: a MAP column."""

    def __init__(self, key: TypeInformation, value: TypeInformation) -> None:
        self.key = key
        self.value = value

    def to_spark(self) -> DataType:
        return MapType(self.key.to_spark(), self.value.to_spark(), True)

    def from_field(self, value: Any) -> Any:
        if value is None:
            return None
        items = value.items() if isinstance(value, dict) else value
        return {self.key.from_field(k): self.value.from_field(v) for k, v in items}

    def to_field(self, value: Any, where: str) -> Any:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise _mismatch(where, value, repr(self))
        return [(self.key.to_field(k, f"{where} key"), self.value.to_field(v, f"{where}[{k!r}]")) for k, v in value.items()]

    def __repr__(self) -> str:
        return f"Types.MAP({self.key!r}, {self.value!r})"


class Types:
    """PyFlink's factory of type information."""

    @staticmethod
    def STRING() -> TypeInformation:
        return BasicTypeInfo("STRING", StringType())

    @staticmethod
    def BYTE() -> TypeInformation:
        return BasicTypeInfo("BYTE", ByteType())

    @staticmethod
    def BOOLEAN() -> TypeInformation:
        return BasicTypeInfo("BOOLEAN", BooleanType())

    @staticmethod
    def SHORT() -> TypeInformation:
        return BasicTypeInfo("SHORT", ShortType())

    @staticmethod
    def INT() -> TypeInformation:
        return BasicTypeInfo("INT", IntegerType())

    @staticmethod
    def LONG() -> TypeInformation:
        return BasicTypeInfo("LONG", LongType())

    @staticmethod
    def FLOAT() -> TypeInformation:
        return BasicTypeInfo("FLOAT", FloatType())

    @staticmethod
    def DOUBLE() -> TypeInformation:
        return BasicTypeInfo("DOUBLE", DoubleType())

    @staticmethod
    def CHAR() -> TypeInformation:
        return BasicTypeInfo("CHAR", StringType())

    @staticmethod
    def BIG_INT() -> TypeInformation:
        return BasicTypeInfo("BIG_INT", DecimalType(38, 0))

    @staticmethod
    def BIG_DEC() -> TypeInformation:
        return BasicTypeInfo("BIG_DEC", DecimalType(38, 18))

    @staticmethod
    def SQL_DATE() -> TypeInformation:
        return BasicTypeInfo("SQL_DATE", DateType())

    @staticmethod
    def SQL_TIME() -> TypeInformation:
        return BasicTypeInfo("SQL_TIME", StringType())

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:
        return BasicTypeInfo("SQL_TIMESTAMP", TimestampNTZType())

    @staticmethod
    def LOCAL_DATE() -> TypeInformation:
        return BasicTypeInfo("LOCAL_DATE", DateType())

    @staticmethod
    def LOCAL_DATE_TIME() -> TypeInformation:
        return BasicTypeInfo("LOCAL_DATE_TIME", TimestampNTZType())

    @staticmethod
    def INSTANT() -> TypeInformation:
        return BasicTypeInfo("INSTANT", TimestampType())

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:
        return PickledBytesTypeInfo()

    @staticmethod
    def ROW(field_types: Sequence[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types)

    @staticmethod
    def ROW_NAMED(field_names: Sequence[str], field_types: Sequence[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types, field_names)

    @staticmethod
    def TUPLE(field_types: Sequence[TypeInformation]) -> TupleTypeInfo:
        return TupleTypeInfo(field_types)

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation) -> TypeInformation:
        if isinstance(element_type, BasicTypeInfo) and element_type.name == "BYTE":
            return ByteArrayTypeInfo()  # byte[]: bytes in Python, as PyFlink gives it
        return ListTypeInfo(element_type, "PRIMITIVE_ARRAY")

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return ListTypeInfo(element_type, "BASIC_ARRAY")

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return ListTypeInfo(element_type, "OBJECT_ARRAY")

    @staticmethod
    def LIST(element_type: TypeInformation) -> TypeInformation:
        return ListTypeInfo(element_type, "LIST")

    @staticmethod
    def MAP(key_type_info: TypeInformation, value_type_info: TypeInformation) -> TypeInformation:
        return MapTypeInfo(key_type_info, value_type_info)


def from_spark(data_type: DataType) -> Optional[TypeInformation]:
    """The PyFlink type information of a column of Spark type ``data_type`` (a table's rows as a DataStream gives them:
    INT as ``Types.INT()``, a ROW as ``Types.ROW_NAMED``, ...), or None for a type without one here."""
    simple = {StringType: Types.STRING, BooleanType: Types.BOOLEAN, ByteType: Types.BYTE, ShortType: Types.SHORT,
              IntegerType: Types.INT, LongType: Types.LONG, FloatType: Types.FLOAT, DoubleType: Types.DOUBLE,
              DateType: Types.LOCAL_DATE, TimestampNTZType: Types.LOCAL_DATE_TIME, TimestampType: Types.INSTANT}
    for spark_type, factory in simple.items():
        if type(data_type) is spark_type:
            return factory()
    if isinstance(data_type, DecimalType):
        return Types.BIG_DEC()
    if isinstance(data_type, BinaryType):
        return Types.PRIMITIVE_ARRAY(Types.BYTE())
    if isinstance(data_type, ArrayType):
        element = from_spark(data_type.elementType)
        return None if element is None else Types.LIST(element)
    if isinstance(data_type, MapType):
        key, value = from_spark(data_type.keyType), from_spark(data_type.valueType)
        return None if key is None or value is None else Types.MAP(key, value)
    if isinstance(data_type, StructType):
        fields = [from_spark(f.dataType) for f in data_type.fields]
        return None if any(f is None for f in fields) else Types.ROW_NAMED(data_type.fieldNames(), fields)  # type: ignore[arg-type]
    return None


__all__ = [
    "BasicTypeInfo", "ByteArrayTypeInfo", "ChangelogRowTypeInfo", "RetractTypeInfo", "ListTypeInfo",
    "MapTypeInfo", "PickledBytesTypeInfo", "RowKind", "RowTypeInfo", "TupleTypeInfo", "TypeInformation",
    "TypeMismatchError", "Types", "from_spark",
]

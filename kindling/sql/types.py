"""Flink SQL data types and the Spark types kindling runs them as.

| Flink | Spark |
|---|---|
| CHAR(n), VARCHAR(n), STRING | StringType |
| BOOLEAN | BooleanType |
| TINYINT, SMALLINT, INT/INTEGER, BIGINT | ByteType, ShortType, IntegerType, LongType |
| FLOAT, DOUBLE [PRECISION] | FloatType, DoubleType |
| DECIMAL/DEC/NUMERIC(p, s) | DecimalType(p, s) (Flink's default DECIMAL is (10, 0)) |
| DATE | DateType |
| TIME(p) | StringType ``HH:mm:ss[.fff]`` (Spark streams have no TIME values) |
| TIMESTAMP(p) [WITHOUT TIME ZONE] | TimestampType (the session runs in UTC, so wall-clock values read back unchanged) |
| TIMESTAMP_LTZ(p), TIMESTAMP(p) WITH LOCAL TIME ZONE | TimestampType |
| BINARY(n), VARBINARY(n), BYTES | BinaryType |
| ARRAY<T>, T ARRAY | ArrayType |
| MAP<K, V> | MapType |
| MULTISET<T> | MapType(T, INT) |
| ROW<a T, ...>, ROW(a T, ...) | StructType |

``NOT NULL`` makes a field non-nullable. Precision of TIMESTAMP is kept as microseconds by Spark
(Flink's maximum is nanoseconds: anything finer than microseconds is truncated).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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

from kindling.options import nearest
from kindling.sql.errors import SqlError
from kindling.sql.tokens import NUMBER, QUOTED, STRING, WORD, Token, TokenCursor, significant, tokenize

_SIMPLE: dict[str, DataType] = {
    "STRING": StringType(),
    "BOOLEAN": BooleanType(),
    "BOOL": BooleanType(),
    "TINYINT": ByteType(),
    "SMALLINT": ShortType(),
    "INT": IntegerType(),
    "INTEGER": IntegerType(),
    "BIGINT": LongType(),
    "FLOAT": FloatType(),
    "REAL": FloatType(),
    "DOUBLE": DoubleType(),
    "DATE": DateType(),
    "BYTES": BinaryType(),
}
_KNOWN = sorted(set(_SIMPLE) | {
    "CHAR", "VARCHAR", "DECIMAL", "DEC", "NUMERIC", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "BINARY", "VARBINARY",
    "ARRAY", "MAP", "MULTISET", "ROW",
})


@dataclass(frozen=True)
class FlinkType:
    """A parsed Flink type: the Spark type it runs as, nullability, and its Flink spelling (for DESCRIBE)."""

    spark: DataType
    nullable: bool
    flink: str

    def field(self, name: str) -> StructField:
        return StructField(name, self.spark, self.nullable)


class _TypeParser(TokenCursor):
    def __init__(self, tokens: list[Token], line: int) -> None:
        super().__init__(significant(tokens))
        self.line = line

    def ended(self) -> SqlError:
        return SqlError("the type ends too early", line=self._line(), construct="data type", hint="e.g. DECIMAL(10, 2), ROW<a INT, b STRING>")

    def _line(self) -> int:
        token = self.peek() or (self.tokens[-1] if self.tokens else None)
        return token.line if token else self.line

    def expect_symbol(self, symbol: str) -> None:
        token = self.take()
        if not token.is_symbol(symbol):
            raise SqlError(f"expected '{symbol}' in the type but found '{token.text}'", line=token.line, construct="data type")

    def number(self) -> int:
        token = self.take()
        if token.kind != NUMBER or not token.text.isdigit():
            raise SqlError(f"expected a number in the type but found '{token.text}'", line=token.line, construct="data type")
        return int(token.text)

    def optional_args(self) -> list[int]:
        token = self.peek()
        if token is None or not token.is_symbol("("):
            return []
        self.take()
        values = [self.number()]
        while self.peek() is not None and self.peek().is_symbol(","):
            self.take()
            values.append(self.number())
        self.expect_symbol(")")
        return values

    def parse(self) -> FlinkType:
        result = self.parse_one()
        token = self.peek()
        if token is not None:
            raise SqlError(f"unexpected '{token.text}' after the type {result.flink}", line=token.line, construct="data type")
        return result

    def parse_one(self) -> FlinkType:
        token = self.take()
        if token.kind != WORD:
            raise SqlError(f"expected a type name but found '{token.text}'", line=token.line, construct="data type")
        name = token.upper
        if name in ("CHAR", "VARCHAR", "CHARACTER"):
            if name == "CHARACTER" and self.peek() is not None and self.peek().is_word("VARYING"):
                self.take()
            args = self.optional_args()
            base = FlinkType(StringType(), True,
                             f"{'CHAR' if name == 'CHAR' else 'VARCHAR'}({args[0] if args else (1 if name == 'CHAR' else 2147483647)})")
        elif name in ("DECIMAL", "DEC", "NUMERIC"):
            args = self.optional_args()
            precision = args[0] if args else 10
            scale = args[1] if len(args) > 1 else 0
            if not 1 <= precision <= 38 or not 0 <= scale <= precision:
                raise SqlError(f"DECIMAL({precision}, {scale}) is out of range: precision 1..38, scale 0..precision",
                               line=token.line, construct="data type", hint="DECIMAL(p, s) with 1 <= p <= 38")
            base = FlinkType(DecimalType(precision, scale), True, f"DECIMAL({precision}, {scale})")
        elif name == "DOUBLE":
            if self.peek() is not None and self.peek().is_word("PRECISION"):
                self.take()
            base = FlinkType(DoubleType(), True, "DOUBLE")
        elif name in ("BINARY", "VARBINARY"):
            args = self.optional_args()
            base = FlinkType(BinaryType(), True, f"{name}({args[0] if args else 1})")
        elif name == "TIME":
            args = self.optional_args()
            self._zone_suffix()
            base = FlinkType(StringType(), True, f"TIME({args[0] if args else 0})")
        elif name == "TIMESTAMP":
            args = self.optional_args()
            precision = args[0] if args else 6
            local = self._zone_suffix()
            base = FlinkType(TimestampType(), True, f"TIMESTAMP_LTZ({precision})" if local else f"TIMESTAMP({precision})")
        elif name == "TIMESTAMP_LTZ":
            args = self.optional_args()
            base = FlinkType(TimestampType(), True, f"TIMESTAMP_LTZ({args[0] if args else 6})")
        elif name == "ARRAY":
            self.expect_symbol("<")
            element = self.parse_one()
            self.expect_symbol(">")
            base = FlinkType(ArrayType(element.spark, element.nullable), True, f"ARRAY<{element.flink}>")
        elif name == "MULTISET":
            self.expect_symbol("<")
            element = self.parse_one()
            self.expect_symbol(">")
            base = FlinkType(MapType(element.spark, IntegerType(), False), True, f"MULTISET<{element.flink}>")
        elif name == "MAP":
            self.expect_symbol("<")
            key = self.parse_one()
            self.expect_symbol(",")
            value = self.parse_one()
            self.expect_symbol(">")
            base = FlinkType(MapType(key.spark, value.spark, value.nullable), True, f"MAP<{key.flink}, {value.flink}>")
        elif name == "ROW":
            base = self._row()
        elif name in _SIMPLE:
            if name in ("FLOAT",):
                self.optional_args()
            base = FlinkType(_SIMPLE[name], True, "INT" if name == "INTEGER" else name)
        else:
            hint = nearest(name, _KNOWN)
            raise SqlError(
                f"unknown data type '{token.text}'" + (f"; did you mean {hint}?" if hint else ""),
                line=token.line, construct="data type", hint=", ".join(_KNOWN),
            )
        # Postfix forms: NOT NULL / NULL, and Flink's `INT ARRAY` / `INT MULTISET`.
        while True:
            token = self.peek()
            if token is not None and token.is_word("NOT") and self.peek(1) is not None and self.peek(1).is_word("NULL"):
                self.i += 2
                base = FlinkType(base.spark, False, base.flink + " NOT NULL")
            elif token is not None and token.is_word("NULL"):
                self.i += 1
            elif token is not None and token.is_word("ARRAY"):
                self.i += 1
                base = FlinkType(ArrayType(base.spark, base.nullable), True, f"ARRAY<{base.flink}>")
            elif token is not None and token.is_word("MULTISET"):
                self.i += 1
                base = FlinkType(MapType(base.spark, IntegerType(), False), True, f"MULTISET<{base.flink}>")
            else:
                return base

    def _zone_suffix(self) -> bool:
        """Consume WITH[OUT] [LOCAL] TIME ZONE; True for WITH LOCAL TIME ZONE."""
        token = self.peek()
        if token is None or not token.is_word("WITH", "WITHOUT"):
            return False
        words = []
        while self.peek() is not None and self.peek().is_word("WITH", "WITHOUT", "LOCAL", "TIME", "ZONE"):
            words.append(self.take().upper)
        text = " ".join(words)
        if text == "WITHOUT TIME ZONE":
            return False
        if text == "WITH LOCAL TIME ZONE":
            return True
        raise SqlError(f"'{text}' is not supported", line=token.line, construct="data type",
                       hint="TIMESTAMP(p), TIMESTAMP(p) WITHOUT TIME ZONE, TIMESTAMP(p) WITH LOCAL TIME ZONE or TIMESTAMP_LTZ(p)")

    def _row(self) -> FlinkType:
        opener = self.take()
        if not opener.is_symbol("<", "("):
            raise SqlError(f"expected '<' or '(' after ROW but found '{opener.text}'", line=opener.line, construct="data type",
                           hint="ROW<a INT, b STRING> or ROW(a INT, b STRING)")
        closer = ">" if opener.text == "<" else ")"
        fields: list[StructField] = []
        flink: list[str] = []
        while True:
            token = self.peek()
            if token is not None and token.is_symbol(closer):
                self.take()
                break
            name_token = self.take()
            if name_token.kind not in (WORD, QUOTED):
                raise SqlError(f"expected a field name in ROW but found '{name_token.text}'", line=name_token.line, construct="data type")
            field_type = self.parse_one()
            if self.peek() is not None and self.peek().kind == STRING:  # field comment
                self.take()
            fields.append(StructField(name_token.identifier, field_type.spark, field_type.nullable))
            flink.append(f"`{name_token.identifier}` {field_type.flink}")
            token = self.take()
            if token.is_symbol(closer):
                break
            if not token.is_symbol(","):
                raise SqlError(f"expected ',' or '{closer}' in ROW but found '{token.text}'", line=token.line, construct="data type")
        return FlinkType(StructType(fields), True, f"ROW<{', '.join(flink)}>")


def parse_type(text_or_tokens, line: int = 1) -> FlinkType:
    """Parse a Flink type (``'DECIMAL(10, 2) NOT NULL'``, ``'ROW<a INT, b ARRAY<STRING>>'``)."""
    tokens = tokenize(text_or_tokens, line) if isinstance(text_or_tokens, str) else list(text_or_tokens)
    if not significant(tokens):
        raise SqlError("a data type is missing", line=line, construct="data type")
    return _TypeParser(tokens, line).parse()


def spark_type(text: str) -> DataType:
    """The Spark type a Flink type runs as."""
    return parse_type(text).spark


def spark_sql_type(flink: FlinkType) -> str:
    """Spark SQL spelling of a type (for CAST in rewritten queries)."""
    return flink.spark.simpleString().upper() if not isinstance(flink.spark, StructType) else flink.spark.simpleString()


def printed(flink: str) -> str:
    """A declared type as Flink prints it (DESCRIBE, TYPEOF): the unbounded VARCHAR/VARBINARY as STRING/BYTES.

    >>> printed("ARRAY<VARCHAR(2147483647)>")
    'ARRAY<STRING>'
    """
    return re.sub(r"\bVARBINARY\(2147483647\)", "BYTES", re.sub(r"\bVARCHAR\(2147483647\)", "STRING", flink))


def flink_type_name(data_type: DataType) -> str:
    """Flink's name for a Spark type (DESCRIBE of views and query results)."""
    if isinstance(data_type, StringType):
        return "STRING"
    if isinstance(data_type, BooleanType):
        return "BOOLEAN"
    if isinstance(data_type, ByteType):
        return "TINYINT"
    if isinstance(data_type, ShortType):
        return "SMALLINT"
    if isinstance(data_type, IntegerType):
        return "INT"
    if isinstance(data_type, LongType):
        return "BIGINT"
    if isinstance(data_type, FloatType):
        return "FLOAT"
    if isinstance(data_type, DoubleType):
        return "DOUBLE"
    if isinstance(data_type, DecimalType):
        return f"DECIMAL({data_type.precision}, {data_type.scale})"
    if isinstance(data_type, DateType):
        return "DATE"
    if isinstance(data_type, (TimestampType, TimestampNTZType)):
        return "TIMESTAMP(6)"
    if isinstance(data_type, BinaryType):
        return "BYTES"
    if isinstance(data_type, ArrayType):
        return f"ARRAY<{flink_type_name(data_type.elementType)}>"
    if isinstance(data_type, MapType):
        return f"MAP<{flink_type_name(data_type.keyType)}, {flink_type_name(data_type.valueType)}>"
    if isinstance(data_type, StructType):
        return "ROW<" + ", ".join(f"`{f.name}` {flink_type_name(f.dataType)}" for f in data_type.fields) + ">"
    return data_type.simpleString().upper()


__all__ = ["FlinkType", "flink_type_name", "parse_type", "printed", "spark_sql_type", "spark_type"]

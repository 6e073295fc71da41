"""PyFlink's ``DataType``: a Flink type's SQL text (``BIGINT``, ``ROW<`a` INT>``) that reprs as PyFlink's type objects do.

A :class:`DataType` is a ``str``, so it goes wherever kindling takes a type name (a ``@udf(result_type=...)``, a
schema's column, a CAST); its ``repr`` is PyFlink's (``BigIntType(true)``), and :func:`as_pyflink_converts` gives a
type as PyFlink's ``get_field_data_types()`` returns Flink's.

>>> DataType("VARCHAR(10) NOT NULL"), as_pyflink_converts("TIMESTAMP(6)")
(VarCharType(10, false), TimestampType(3, true))
"""

from __future__ import annotations

from typing import Optional


class DataType(str):
    """A Flink SQL data type (its text)."""

    def not_null(self) -> "DataType":
        return self if self.endswith(" NOT NULL") else DataType(self + " NOT NULL")

    def nullable(self) -> "DataType":
        return DataType(self.removesuffix(" NOT NULL"))

    def __repr__(self) -> str:
        """PyFlink's repr of the type (``BigIntType(true)``, ``VarCharType(10, false)``)."""
        parsed = _parse(str(self))
        return parsed.pyflink_repr() if parsed is not None else str.__repr__(str(self))


# PyFlink's class of each atomic type, and the parameters its repr shows (a string's and bytes' length)
_ATOMIC = {"NULL": "NullType",
           "BOOLEAN": "BooleanType", "TINYINT": "TinyIntType", "SMALLINT": "SmallIntType", "INT": "IntType", "BIGINT": "BigIntType",
           "FLOAT": "FloatType", "DOUBLE": "DoubleType", "DATE": "DateType", "CHAR": "CharType", "VARCHAR": "VarCharType",
           "BINARY": "BinaryType", "VARBINARY": "VarBinaryType", "DECIMAL": "DecimalType", "TIME": "TimeType",
           "TIMESTAMP": "TimestampType", "TIMESTAMP_LTZ": "LocalZonedTimestampType"}
_PARAMETERIZED = ("CHAR", "VARCHAR", "BINARY", "VARBINARY", "DECIMAL", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ")
_COLLECTIONS = {"ARRAY": "ArrayType", "MULTISET": "MultisetType", "MAP": "MapType"}
_UNBOUNDED = {"STRING": ("VARCHAR", [2147483647]), "BYTES": ("VARBINARY", [2147483647])}
_MAX_LENGTH = 2147483647


class _Parsed:
    """A type's structure: its name, parameters, element types (a ROW's with names) and nullability."""

    def __init__(self, name: str, parameters: list[int], children: list[tuple[Optional[str], "_Parsed"]], nullable: bool) -> None:
        self.name, self.parameters, self.children, self.nullable = name, parameters, children, nullable

    def pyflink_repr(self) -> str:
        flag = "true" if self.nullable else "false"
        if self.name == "ROW":
            return "RowType(%s)" % ",".join(f"RowField({n}, {t.pyflink_repr()}, ...)" for n, t in self.children)
        if self.name in ("ARRAY", "MULTISET", "MAP"):
            inner = ", ".join(t.pyflink_repr() for _, t in self.children)
            return f"{_COLLECTIONS[self.name]}({inner}, {flag})"
        return f"{_ATOMIC[self.name]}({''.join(f'{p}, ' for p in self.parameters)}{flag})"

    def text(self) -> str:
        if self.name == "ROW":
            body = "ROW<" + ", ".join(f"{_quote(n or '')} {t.text()}" for n, t in self.children) + ">"
        elif self.children:
            body = f"{self.name}<{', '.join(t.text() for _, t in self.children)}>"
        elif self.name == "VARCHAR" and self.parameters == [_MAX_LENGTH]:
            body = "STRING"
        elif self.name == "VARBINARY" and self.parameters == [_MAX_LENGTH]:
            body = "BYTES"
        else:
            body = self.name + (f"({', '.join(str(p) for p in self.parameters)})" if self.parameters else "")
        return body if self.nullable else body + " NOT NULL"

    def as_pyflink_converts(self) -> "_Parsed":
        """The type as PyFlink converts Flink's to Python's (a table's ``get_field_data_types()``): every TIMESTAMP with
        precision 3 and every TIMESTAMP_LTZ with 6, whatever their declared precision."""
        parameters = {"TIMESTAMP": [3], "TIMESTAMP_LTZ": [6]}.get(self.name, self.parameters)
        return _Parsed(self.name, parameters, [(n, t.as_pyflink_converts()) for n, t in self.children], self.nullable)


def _parse(text: str) -> Optional[_Parsed]:
    """The structure of a type's text (as DataTypes and Flink's schemas write it); None for a form not known here."""
    from kindling.sql.tokens import NUMBER, QUOTED, WORD, significant, tokenize

    tokens = significant(tokenize(text))
    at = 0

    def parse() -> Optional[_Parsed]:
        nonlocal at
        if at >= len(tokens) or tokens[at].kind != WORD:
            return None
        name = tokens[at].upper
        at += 1
        parameters: list[int] = []
        children: list[tuple[Optional[str], _Parsed]] = []
        name, parameters = _UNBOUNDED.get(name, (name, parameters))
        if at < len(tokens) and tokens[at].is_symbol("(") and name in _ATOMIC:
            at += 1
            while at < len(tokens) and tokens[at].kind == NUMBER:
                parameters.append(int(tokens[at].text))
                at += 1
                if at < len(tokens) and tokens[at].is_symbol(","):
                    at += 1
            if at >= len(tokens) or not tokens[at].is_symbol(")"):
                return None
            at += 1
        elif at < len(tokens) and tokens[at].is_symbol("<") and name in ("ARRAY", "MULTISET", "MAP", "ROW"):
            at += 1
            while True:
                field_name = None
                if name == "ROW":
                    if at >= len(tokens) or tokens[at].kind not in (WORD, QUOTED):
                        return None
                    field_name = tokens[at].identifier
                    at += 1
                child = parse()
                if child is None:
                    return None
                children.append((field_name, child))
                if at < len(tokens) and tokens[at].is_symbol(","):
                    at += 1
                    continue
                break
            if at >= len(tokens) or not tokens[at].is_symbol(">"):
                return None
            at += 1
        elif name not in _ATOMIC or (name in _PARAMETERIZED and not parameters):
            return None
        nullable = True
        if at + 1 < len(tokens) and tokens[at].is_word("NOT") and tokens[at + 1].is_word("NULL"):
            nullable = False
            at += 2
        return _Parsed(name, parameters, children, nullable)

    parsed = parse()
    return parsed if parsed is not None and at == len(tokens) else None


def as_pyflink_converts(flink_type: str) -> DataType:
    """``flink_type`` as PyFlink's ``get_field_data_types()`` returns it (see :meth:`_Parsed.as_pyflink_converts`)."""
    parsed = _parse(flink_type)
    return DataType(parsed.as_pyflink_converts().text() if parsed is not None else flink_type)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


__all__ = ["DataType", "as_pyflink_converts"]

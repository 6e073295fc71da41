"""Where a source reads a table's rowtime from, so that it can keep Flink's watermark per split.

Spark keeps one watermark per query; kindling's Kafka and Kinesis sources hold back partitions and
shards that run ahead (``kindling.connectors.kafka.alignment``), which needs the event time of a
record on the driver, before Spark has computed any column. A source can read a *stored* column
(a value field, or the Kafka timestamp), so a computed rowtime is traced back to the one stored column
it is a monotone function of:

* a physical or metadata column: itself;
* ``TO_TIMESTAMP_LTZ(n, 3)`` / ``TO_TIMESTAMP_LTZ(n, 0)`` over an integer: epoch milliseconds or seconds;
* ``TO_TIMESTAMP(s)``, ``CAST(s AS TIMESTAMP[_LTZ][(p)])`` over text, ``CAST`` of a timestamp;
* ``TO_TIMESTAMP(FROM_UNIXTIME(n))`` over integer epoch seconds;
* any of these, or a TIMESTAMP column, plus or minus ``INTERVAL 'n' unit`` terms.

The result is the column and the affine map from its value to epoch milliseconds (``value * unit_ms
+ offset_ms`` for numbers, ``millis + offset_ms`` for timestamps and text). A rowtime outside these
forms (arithmetic on the number, CASE, a UDF) is not traced: its source keeps Spark's single
watermark, which can drop a slower split's records as late where Flink would not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from pyspark.sql.types import (
    ByteType,
    DataType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

from kindling.durations import to_millis
from kindling.sql.ddl import ColumnDef
from kindling.sql.tokens import NUMBER, QUOTED, WORD, Token, matching_paren, significant, split_top_level, tokenize
from kindling.sql.translate import interval_text

_INTEGERS = (ByteType, ShortType, IntegerType, LongType)
_TEXT = (StringType, VarcharType)
_TIMESTAMPS = (TimestampType, TimestampNTZType)
# TO_TIMESTAMP_LTZ(n, precision): how many milliseconds one unit of n is.
_LTZ_UNIT_MS = {"0": 1000, "3": 1}


@dataclass(frozen=True)
class StoredRowtime:
    """The stored column a rowtime is read from, and how its values become the rowtime's epoch ms."""

    column: str
    unit_ms: int = 1
    offset_ms: int = 0

    @property
    def conversion(self) -> Optional[str]:
        """The ``kindling.table.rowtime.millis`` option value (``"<unit_ms> <offset_ms>"``); None for the identity."""
        if (self.unit_ms, self.offset_ms) == (1, 0):
            return None
        return f"{self.unit_ms} {self.offset_ms}"


def stored_rowtime(rowtime: str, columns: Sequence[ColumnDef]) -> Optional[StoredRowtime]:
    """Trace the rowtime column ``rowtime`` of a table with ``columns`` back to a stored column; None when
    its expression is not one of the module's forms."""
    column = next((c for c in columns if c.name == rowtime), None)
    if column is None:
        return None
    if column.kind in ("physical", "metadata"):
        return StoredRowtime(column.name)
    tokens = significant(tokenize(column.expression or "", column.line))
    terms = _sums(tokens)
    if terms is None:
        return None
    base, intervals = terms
    offset = 0
    for sign, interval in intervals:
        text = interval_text(interval)
        if text is None:
            return None
        try:
            offset += sign * to_millis(text)
        except ValueError:
            return None
    read = _base(base, columns)
    if read is None:
        return None
    return StoredRowtime(read.column, read.unit_ms, read.offset_ms + offset)


def _sums(tokens: list[Token]) -> Optional[tuple[list[Token], list[tuple[int, list[Token]]]]]:
    """``base [+|- term]...`` at parenthesis depth 0 -> (base, [(sign, term), ...]); None if empty."""
    parts: list[tuple[int, list[Token]]] = [(1, [])]
    depth = 0
    for token in tokens:
        if token.is_symbol("("):
            depth += 1
        elif token.is_symbol(")"):
            depth -= 1
        if depth == 0 and token.is_symbol("+", "-") and parts[-1][1]:
            parts.append((1 if token.text == "+" else -1, []))
            continue
        parts[-1][1].append(token)
    if not parts[0][1] or any(not term for _, term in parts):
        return None
    return parts[0][1], parts[1:]


def _base(tokens: list[Token], columns: Sequence[ColumnDef]) -> Optional[StoredRowtime]:
    if len(tokens) == 1:
        stored = _stored(tokens[0], columns)
        return StoredRowtime(stored.name) if stored is not None and _is(stored, _TIMESTAMPS) else None
    call = _call(tokens)
    if call is None:
        return None
    name, arguments = call
    if name == "TO_TIMESTAMP_LTZ" and len(arguments) == 2 and len(arguments[1]) == 1 and arguments[1][0].kind == NUMBER:
        unit = _LTZ_UNIT_MS.get(arguments[1][0].text)
        stored = _single(arguments[0], columns)
        if unit is not None and stored is not None and _is(stored, _INTEGERS):
            return StoredRowtime(stored.name, unit)
        return None
    if name == "TO_TIMESTAMP" and len(arguments) == 1:
        inner = _call(arguments[0])
        if inner is not None and inner[0] == "FROM_UNIXTIME" and len(inner[1]) == 1:
            stored = _single(inner[1][0], columns)
            return StoredRowtime(stored.name, 1000) if stored is not None and _is(stored, _INTEGERS) else None
        stored = _single(arguments[0], columns)
        return StoredRowtime(stored.name) if stored is not None and _is(stored, _TEXT) else None
    if name == "CAST" and len(arguments) == 1:
        words = arguments[0]
        at = next((i for i, t in enumerate(words) if t.is_word("AS")), None)
        if at is None or not any(t.is_word("TIMESTAMP", "TIMESTAMP_LTZ") for t in words[at + 1:at + 2]):
            return None
        stored = _single(words[:at], columns)
        return StoredRowtime(stored.name) if stored is not None and _is(stored, _TEXT + _TIMESTAMPS) else None
    return None


def _call(tokens: list[Token]) -> Optional[tuple[str, list[list[Token]]]]:
    """``NAME ( a, b )`` spanning all of ``tokens`` -> (NAME, [a, b])."""
    if len(tokens) < 3 or tokens[0].kind != WORD or not tokens[1].is_symbol("("):
        return None
    if matching_paren(tokens, 1) != len(tokens) - 1:
        return None
    return tokens[0].upper, split_top_level(tokens[2:-1])


def _single(tokens: list[Token], columns: Sequence[ColumnDef]) -> Optional[ColumnDef]:
    tokens = significant(tokens)
    return _stored(tokens[0], columns) if len(tokens) == 1 else None


def _stored(token: Token, columns: Sequence[ColumnDef]) -> Optional[ColumnDef]:
    """The physical or metadata column a name token refers to (names compare case-insensitively, as Flink
    resolves them in expressions with the default identifier handling of a computed column)."""
    if token.kind not in (WORD, QUOTED):
        return None
    name = token.identifier.lower()
    return next((c for c in columns if c.kind in ("physical", "metadata") and c.name.lower() == name and c.type is not None), None)


def _is(column: ColumnDef, types: tuple[type[DataType], ...]) -> bool:
    assert column.type is not None
    return isinstance(column.type.spark, types)

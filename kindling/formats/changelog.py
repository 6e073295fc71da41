"""Flink's changelog formats: ``debezium-json``, ``canal-json`` and ``maxwell-json``.

A change-data-capture tool (Debezium, Canal, Maxwell) publishes each change of a database row as a
JSON envelope. Reading, each envelope becomes Flink's changelog rows (a row kind per row, carried in
``__kindling_rowkind``), so a CDC topic is an updating table: an aggregation over it retracts, a
``print`` shows ``-U``/``+U``/``-D``. Writing, a query's changelog becomes envelopes.

Reading, per format (as Flink's deserialisation schemas read them):

* ``debezium-json``: ``{"before": ..., "after": ..., "op": ...}`` (inside ``{"schema": ..., "payload": ...}``
  when ``debezium-json.schema-include`` is true). ``c`` and ``r`` (snapshot read) are ``+I`` of
  ``after``; ``u`` is ``-U`` of ``before`` then ``+U`` of ``after``; ``d`` is ``-D`` of ``before``.
* ``canal-json``: ``{"data": [...], "old": [...], "type": ..., "database": ..., "table": ...}``. ``INSERT``
  is ``+I`` of every ``data`` row; ``UPDATE`` is, per row, ``-U`` of the row before (``data`` with the
  fields listed in ``old`` put back) then ``+U`` of ``data``; ``DELETE`` is ``-D`` of every row; ``CREATE``
  (a DDL message) is skipped. ``canal-json.database.include`` / ``canal-json.table.include`` (regular
  expressions) keep only matching messages.
* ``maxwell-json``: ``{"data": {...}, "old": {...}, "type": ..., "database": ..., "table": ...}``; ``insert``,
  ``update`` (the row before is ``data`` with ``old`` put back) and ``delete``.

Null values (Kafka tombstones, which Debezium writes after a delete) are skipped. Rows are decoded
with the ``json`` format's bulk reader, so every type reads as it does in ``json``.

Writing: Flink cannot merge an update's two halves into one message, so ``-U`` is written as a delete
and ``+U`` as an insert: debezium ``{"before": null, "after": row, "op": "c"}`` and
``{"before": row, "after": null, "op": "d"}``; canal ``{"data": [row], "type": "INSERT"|"DELETE"}``;
maxwell ``{"data": row, "type": "insert"|"delete"}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence

import pyarrow as pa
from pyspark.sql.types import StructType

CHANGELOG_FORMATS = ("debezium-json", "canal-json", "maxwell-json")


class EnvelopeError(ValueError):
    """A message that is not a valid envelope of its format."""


@dataclass(frozen=True)
class ChangelogSettings:
    """The options of a changelog format (``<format>.schema-include``, ``<format>.database.include``, ...)."""

    name: str
    schema_include: bool = False
    database_include: Optional[str] = None
    table_include: Optional[str] = None


def _loads(value: bytes) -> Any:
    import orjson

    return orjson.loads(value)


def _dumps(obj: Any) -> bytes:
    import orjson

    return orjson.dumps(obj)


def _message(value: bytes) -> str:
    text = value.decode("utf-8", "replace")
    return text if len(text) <= 200 else text[:200] + "..."


def _rows_of(value: bytes, settings: ChangelogSettings) -> Iterator[tuple[str, Any]]:
    """The (row kind, row object) pairs of one envelope, in Flink's order."""
    try:
        obj = _loads(value)
    except ValueError as exc:
        raise EnvelopeError(f"not valid JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise EnvelopeError("the message is not a JSON object")
    if settings.name == "debezium-json":
        yield from _debezium(obj, value, settings)
    elif settings.name == "canal-json":
        yield from _canal(obj, value, settings)
    else:
        yield from _maxwell(obj, value)


def _debezium(obj: dict, value: bytes, settings: ChangelogSettings) -> Iterator[tuple[str, Any]]:
    if settings.schema_include:
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            raise EnvelopeError("the message has no 'payload' object, but 'debezium-json.schema-include' is true")
        obj = payload
    elif "op" not in obj and "payload" in obj and "schema" in obj:
        raise EnvelopeError("the message holds a 'schema' and a 'payload': it was written with the schema included; "
                            "set 'debezium-json.schema-include' = 'true'")
    op = obj.get("op")
    before, after = obj.get("before"), obj.get("after")
    if op in ("c", "r"):
        yield "+I", after
    elif op == "u":
        if before is None:
            raise EnvelopeError("the 'before' field of an update message is null; for Debezium's PostgreSQL connector, "
                                "set the table's REPLICA IDENTITY to FULL")
        yield "-U", before
        yield "+U", after
    elif op == "d":
        if before is None:
            raise EnvelopeError("the 'before' field of a delete message is null; for Debezium's PostgreSQL connector, "
                                "set the table's REPLICA IDENTITY to FULL")
        yield "-D", before
    else:
        raise EnvelopeError(f"unknown \"op\" value {op!r}; the Debezium JSON message is '{_message(value)}'")


def _included(obj: dict, settings: ChangelogSettings) -> bool:
    for pattern, key in ((settings.database_include, "database"), (settings.table_include, "table")):
        if pattern is not None and not re.fullmatch(pattern, str(obj.get(key) or "")):
            return False
    return True


def _restored(row: Any, old: Any) -> Any:
    """The row before an update: the new row with the changed fields' old values put back."""
    if not isinstance(row, dict):
        raise EnvelopeError("a 'data' row is not a JSON object")
    before = dict(row)
    if isinstance(old, dict):
        before.update(old)
    return before


def _canal(obj: dict, value: bytes, settings: ChangelogSettings) -> Iterator[tuple[str, Any]]:
    if not _included(obj, settings):
        return
    kind = obj.get("type")
    data = obj.get("data")
    if kind == "CREATE" or (data is None and kind in ("INSERT", "UPDATE", "DELETE")):
        return
    if kind not in ("INSERT", "UPDATE", "DELETE"):
        raise EnvelopeError(f"unknown \"type\" value {kind!r}; the Canal JSON message is '{_message(value)}'")
    if not isinstance(data, list):
        raise EnvelopeError("the 'data' field is not a JSON array")
    if kind == "INSERT":
        for row in data:
            yield "+I", row
    elif kind == "DELETE":
        for row in data:
            yield "-D", row
    else:
        old = obj.get("old")
        if not isinstance(old, list) or len(old) != len(data):
            raise EnvelopeError("the 'old' field of an UPDATE message must be an array as long as 'data'")
        for row, previous in zip(data, old):
            yield "-U", _restored(row, previous)
            yield "+U", row


def _maxwell(obj: dict, value: bytes) -> Iterator[tuple[str, Any]]:
    kind = obj.get("type")
    data = obj.get("data")
    if kind == "insert":
        yield "+I", data
    elif kind == "update":
        yield "-U", _restored(data, obj.get("old"))
        yield "+U", data
    elif kind == "delete":
        yield "-D", data
    else:
        raise EnvelopeError(f"unknown \"type\" value {kind!r}; the Maxwell JSON message is '{_message(value)}'")


class ChangelogDecoder:
    """Envelopes -> changelog rows: the row objects are decoded in bulk by the ``json`` decoder."""

    def __init__(self, schema: StructType, settings: ChangelogSettings, rows: Any) -> None:
        self.schema = schema
        self.settings = settings
        self.rows = rows  # a ValueDecoder of the json format for the same columns

    def decode(self, values: Sequence[Optional[bytes]]) -> Any:
        from kindling.formats.decoding import Decoded

        lines: list[bytes] = []
        kinds: list[str] = []
        origin: list[int] = []
        errors: list[tuple[int, str]] = []
        nulls = 0
        for i, value in enumerate(values):
            if value is None:
                nulls += 1
                continue
            try:
                pairs = list(_rows_of(value, self.settings))
                for kind, row in pairs:
                    if not isinstance(row, dict):
                        raise EnvelopeError(f"the {kind} row is not a JSON object")
            except EnvelopeError as exc:
                errors.append((i, str(exc)))
                continue
            for kind, row in pairs:
                lines.append(_dumps(row))
                kinds.append(kind)
                origin.append(i)
        inner = self.rows.decode(lines)
        rows = range(len(lines)) if inner.kept is None else inner.kept
        errors.extend((origin[j], error) for j, error in inner.errors)
        errors.sort()
        kept = [origin[j] for j in rows]
        return Decoded(inner.arrays, kept, errors, nulls, kinds=pa.array([kinds[j] for j in rows], pa.string()))


def encode(settings: ChangelogSettings, rows: Sequence[bytes], kinds: Sequence[Optional[str]]) -> list[bytes]:
    """JSON rows (the ``json`` encoder's output) and their row kinds -> one envelope per row."""
    out = []
    for row, kind in zip(rows, kinds):
        deleting = kind in ("-U", "-D")
        if settings.name == "debezium-json":
            body = b'{"before":' + row + b',"after":null,"op":"d"}' if deleting else b'{"before":null,"after":' + row + b',"op":"c"}'
        elif settings.name == "canal-json":
            body = b'{"data":[' + row + b'],"type":"' + (b"DELETE" if deleting else b"INSERT") + b'"}'
        else:
            body = b'{"data":' + row + b',"type":"' + (b"delete" if deleting else b"insert") + b'"}'
        out.append(body)
    return out


__all__ = ["CHANGELOG_FORMATS", "ChangelogDecoder", "ChangelogSettings", "EnvelopeError", "encode"]

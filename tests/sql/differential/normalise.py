"""One normal form for values from PyFlink and from kindling, so that equal answers compare equal.

Used by the recorder (in PyFlink's own virtualenv) and by the test, so it imports neither PyFlink
nor PySpark. Each value becomes JSON: NULL, booleans, integers and strings as they are; floats
rounded to 12 significant digits (Flink and Spark differ in the last bits of e.g. STDDEV);
decimals, timestamps, dates, byte strings, arrays, maps and rows tagged with their kind so that
``3`` (INT) and ``3.0`` (DOUBLE) or ``'2024-01-01'`` and ``DATE '2024-01-01'`` stay different.
"""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Iterable, Sequence
from typing import Any


def value(v: Any) -> Any:
    """The normal form of one column value."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return ["F", format(v, ".12g")]
    if isinstance(v, decimal.Decimal):
        text = format(v, "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return ["D", "0" if text in ("-0", "") else text]
    if isinstance(v, datetime.datetime):
        return ["TS", v.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")]
    if isinstance(v, datetime.date):
        return ["DATE", v.isoformat()]
    if isinstance(v, datetime.time):
        return ["TIME", v.isoformat(timespec="microseconds")]
    if isinstance(v, (bytes, bytearray)):
        return ["BYTES", bytes(v).hex()]
    if isinstance(v, dict):
        return ["MAP", sorted(([value(k), value(x)] for k, x in v.items()), key=json.dumps)]
    if isinstance(v, (list, tuple)) and type(v).__name__ == "Row":
        return ["ROW", [value(x) for x in v]]
    if isinstance(v, (list, tuple)):
        return ["ARR", [value(x) for x in v]]
    if hasattr(v, "_values"):  # PyFlink's Row is not a tuple
        return ["ROW", [value(x) for x in v._values]]
    return ["?", repr(v)]


def rows(result: Iterable[Sequence[Any]]) -> list[list[Any]]:
    """A final result as a sorted multiset of normalised rows."""
    normalised = [[value(v) for v in row] for row in result]
    return sorted(normalised, key=lambda r: json.dumps(r, sort_keys=True))

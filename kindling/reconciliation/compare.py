"""Comparing a streaming job's committed output with a batch run of the same pipeline, as multisets.

Rows are compared as values (floating-point numbers to 12 significant digits: the two runs may add them in
another order). What one side has and the other lacks is paired by key where the result has one (the
sink's primary key, or a window aggregation's grouping columns): such a pair is a *differing* row (the
stream's value against the batch's); the rest are *missing* (the batch has them, the stream does not) or
*extra* (the stream has them: written twice, or not produced by the pipeline at all).
"""

from __future__ import annotations

import datetime as _dt
import decimal
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

Row = tuple[Any, ...]


def normalize(value: Any) -> Any:
    """A value as the comparison sees it: floats to 12 significant digits, timestamps without a zone."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, decimal.Decimal):
        return value.normalize()
    if isinstance(value, _dt.datetime) and value.tzinfo is not None:
        return value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, normalize(v)) for k, v in value.items()))
    return value


@dataclass
class Comparison:
    """The outcome of one comparison; rows are tuples in ``columns`` order."""

    columns: list[str]
    key: Optional[list[str]]
    matched: int = 0
    missing: list[Row] = field(default_factory=list)
    extra: list[Row] = field(default_factory=list)
    differing: list[tuple[Row, Row]] = field(default_factory=list)  # (stream row, batch row)

    @property
    def full_match(self) -> bool:
        return not (self.missing or self.extra or self.differing)


def compare(columns: Sequence[str], stream: Sequence[Row], batch: Sequence[Row], key: Optional[Sequence[str]] = None) -> Comparison:
    """Compare the stream's rows with the batch's as multisets; pair leftovers by ``key`` columns."""
    result = Comparison(list(columns), list(key) if key else None)
    stream_counts = Counter(tuple(normalize(v) for v in row) for row in stream)
    batch_counts = Counter(tuple(normalize(v) for v in row) for row in batch)
    result.matched = sum((stream_counts & batch_counts).values())
    extra = list((stream_counts - batch_counts).elements())
    missing = list((batch_counts - stream_counts).elements())
    if key:
        positions = [list(columns).index(k) for k in key]
        batch_by_key: dict[Row, list[Row]] = {}
        for row in missing:
            batch_by_key.setdefault(tuple(row[p] for p in positions), []).append(row)
        unpaired_extra = []
        for row in extra:
            candidates = batch_by_key.get(tuple(row[p] for p in positions))
            if candidates:
                result.differing.append((row, candidates.pop(0)))
            else:
                unpaired_extra.append(row)
        extra = unpaired_extra
        missing = [row for rows in batch_by_key.values() for row in rows]
    result.extra = sorted(extra, key=_sort_key)
    result.missing = sorted(missing, key=_sort_key)
    result.differing.sort(key=lambda pair: _sort_key(pair[1]))
    return result


def _sort_key(row: Row) -> tuple:
    return tuple((v is None, str(type(v).__name__), v if isinstance(v, (int, float, str)) else str(v)) for v in row)


def apply_changelog(rows: Sequence[tuple[str, Row]], key_positions: Sequence[int]) -> list[Row]:
    """The final rows of a changelog (row kind, row): per key the last '+I'/'+U' unless a '-D' followed it.

    Without a key (an append-only changelog), '-U'/'-D' retract one equal row."""
    if key_positions:
        final: dict[Row, Row] = {}
        for kind, row in rows:
            k = tuple(row[p] for p in key_positions)
            if kind in ("+I", "+U"):
                final[k] = row
            elif kind == "-D":
                final.pop(k, None)
        return list(final.values())
    counts: Counter = Counter()
    for kind, row in rows:
        counts[row] += 1 if kind in ("+I", "+U") else -1
    return [row for row, n in counts.items() for _ in range(max(n, 0))]

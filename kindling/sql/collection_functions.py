"""Flink's ARRAY and MAP functions Spark has no function of the same rules for, written as Spark SQL.

Each takes the translated (Spark SQL) text of its arguments and returns Spark SQL giving Flink's answer, NULL
when any argument is NULL as Flink's are.

>>> "filter(a, (__kindling_e, __kindling_i) ->" in array_slice("a", "2", None)
True
"""

from __future__ import annotations

from typing import Optional


def array_slice(array: str, start: str, end: Optional[str]) -> str:
    """``ARRAY_SLICE(array, start [, end])``: the elements from ``start`` to ``end``, both included, counted from 1
    (negative: from the end, -1 the last). A start before the first element is the first; an end of 0 is the first
    element, an end past the last the last; no elements when the start comes after the end. ``end`` defaults to the
    last element."""
    size = f"size({array})"

    def position(offset: str) -> str:
        return f"CASE WHEN ({offset}) < 0 THEN ({offset}) + {size} + 1 ELSE ({offset}) END"

    first = f"greatest(1, {position(start)})"
    if end is None:
        last = size
        nulls = f"({array}) IS NULL OR ({start}) IS NULL"
    else:
        last = f"CASE WHEN ({position(end)}) = 0 THEN 1 ELSE least({position(end)}, {size}) END"
        nulls = f"({array}) IS NULL OR ({start}) IS NULL OR ({end}) IS NULL"
    return (f"(CASE WHEN {nulls} THEN NULL ELSE "
            f"filter({array}, (__kindling_e, __kindling_i) -> __kindling_i + 1 BETWEEN {first} AND {last}) END)")


def map_union(maps: list[str]) -> str:
    """``MAP_UNION(map1, map2, ...)``: every entry of the maps, a key of several maps taking the last one's value;
    NULL when any map is NULL. Spark's ``map_concat`` fails on a repeated key (spark.sql.mapKeyDedupPolicy), so each
    map first drops the keys a later map has."""
    if len(maps) == 1:
        return maps[0]
    kept = []
    for k, one in enumerate(maps[:-1]):
        later = ", ".join(f"map_keys({m})" for m in maps[k + 1:])
        kept.append(f"map_filter({one}, (__kindling_k, __kindling_v) -> NOT array_contains(concat({later}), __kindling_k))")
    return f"map_concat({', '.join(kept + [maps[-1]])})"

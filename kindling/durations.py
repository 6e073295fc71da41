"""Flink-style durations: ``"200 ms"``, ``"15 s"``, ``"1 min"``, ``"2h"``, ``timedelta`` or milliseconds."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Union

DurationLike = Union[str, timedelta, int, float]

# Flink's TimeUtils accepts these unit labels (singular, plural and short forms).
_UNITS_MS: dict[str, float] = {}
for _labels, _ms in (
    (("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 1e-6),
    (("us", "µs", "micro", "micros", "microsecond", "microseconds"), 1e-3),
    (("ms", "milli", "millis", "millisecond", "milliseconds"), 1.0),
    (("s", "sec", "secs", "second", "seconds"), 1000.0),
    (("m", "min", "mins", "minute", "minutes"), 60_000.0),
    (("h", "hour", "hours"), 3_600_000.0),
    (("d", "day", "days"), 86_400_000.0),
):
    for _label in _labels:
        _UNITS_MS[_label] = _ms

_PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zµ]*)\s*$", re.IGNORECASE)


def parse_duration(value: DurationLike, *, name: str = "duration") -> timedelta:
    """Parse a duration; a bare number means milliseconds, as in Flink's configuration."""
    if isinstance(value, timedelta):
        if value < timedelta(0):
            raise ValueError(f"{name} must not be negative, got {value}")
        return value
    if isinstance(value, bool):
        raise ValueError(f"{name}: expected a duration like '200 ms' or '15 s', got {value!r}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"{name} must not be negative, got {value}")
        return timedelta(milliseconds=value)
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a duration like '200 ms' or '15 s', got {value!r}")
    if value.strip().startswith("-"):
        raise ValueError(f"{name} must not be negative, got {value!r}")
    match = _PATTERN.match(value)
    if not match:
        raise ValueError(
            f"{name}: cannot parse {value!r} as a duration; use a number and a unit, "
            "for example '200 ms', '15 s', '5 min', '1 h'"
        )
    number, unit = match.group(1), match.group(2).lower()
    if unit == "":
        unit = "ms"
    if unit not in _UNITS_MS:
        allowed = "ms, s, min, h, d (and their long forms)"
        raise ValueError(f"{name}: unknown time unit {match.group(2)!r} in {value!r}; allowed: {allowed}")
    return timedelta(milliseconds=float(number) * _UNITS_MS[unit])


def to_millis(value: DurationLike, *, name: str = "duration") -> int:
    """Duration in whole milliseconds."""
    return int(round(parse_duration(value, name=name) / timedelta(milliseconds=1)))


def spark_interval(value: DurationLike, *, name: str = "duration") -> str:
    """Duration as a Spark interval string (``"15000 milliseconds"``), exact to the millisecond."""
    ms = to_millis(value, name=name)
    if ms % 1000 == 0:
        return f"{ms // 1000} seconds"
    return f"{ms} milliseconds"


def format_duration(value: DurationLike) -> str:
    """Human form of a duration, the shortest exact unit: ``15 s``, ``200 ms``."""
    ms = to_millis(value)
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms and ms % size == 0:
            return f"{ms // size} {unit}"
    return f"{ms} ms"

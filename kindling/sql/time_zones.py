"""Flink's ``CONVERT_TZ(text, from_zone, to_zone)`` as Spark SQL, with the time-zone names Flink (java.util.TimeZone) knows.

Flink parses ``text`` with a lenient ``SimpleDateFormat('yyyy-MM-dd HH:mm:ss')`` in ``from_zone`` and formats the instant
the same way in ``to_zone``. Lenient parsing reads the six numbers whatever their digits (``2024-1-1 1:2:3``), skips
spaces before each, ignores what follows the seconds (``.123``), and rolls over values out of range (February 30 is
March 1); anything else is NULL. A wall time a daylight-saving change skips or repeats is read with the offset after
the change when repeated, before it when skipped. A zone name java.util.TimeZone does not know is GMT (UTC), as
``UTC+8`` or ``+08:00`` are there; ``GMT+8`` and region names are what they say.

>>> java_time_zone("GMT+8"), java_time_zone("UTC+8"), java_time_zone("Europe/Berlin"), java_time_zone("PST")
('+08:00', 'UTC', 'Europe/Berlin', 'PST')
"""

from __future__ import annotations

import re
import zoneinfo
from functools import lru_cache

from kindling.sql.bound_values import bound_once

# java.util.TimeZone's three-letter IDs besides the tz database's own (Spark reads them with ZoneId.SHORT_IDS, the same
# zones)
_OLD_IDS = frozenset(("ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST", "CTT", "EAT", "ECT", "IET", "IST",
                      "JST", "MIT", "NET", "NST", "PLT", "PNT", "PRT", "PST", "SST", "VST"))
_CUSTOM = re.compile(r"GMT([+-])(?:(\d{1,2})(?::(\d{2}))?|(\d{3,4}))")


@lru_cache(maxsize=None)
def _known_ids() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones()) | _OLD_IDS


def java_time_zone(name: str) -> str:
    """The zone ``java.util.TimeZone.getTimeZone(name)`` is, as a name Spark's functions take: a known ID as it is, a
    custom ``GMT+h[h][:mm]``/``GMT+hhmm`` as its offset, and ``UTC`` for any other (Java's fallback, GMT)."""
    custom = _CUSTOM.fullmatch(name)
    if custom:
        sign, hours, minutes, packed = custom.groups()
        if packed is not None:
            hours, minutes = packed[:-2], packed[-2:]
        h, m = int(hours), int(minutes or 0)
        return f"{sign}{h:02d}:{m:02d}" if h <= 23 and m <= 59 else "UTC"
    return name if name in _known_ids() and name not in ("Factory", "localtime") else "UTC"


_WALL_TIME = r"^[ \t]*(-?[0-9]{1,9})-[ \t]*(-?[0-9]{1,9})-[ \t]*(-?[0-9]{1,9}) [ \t]*(-?[0-9]{1,9}):[ \t]*(-?[0-9]{1,9}):[ \t]*(-?[0-9]{1,9})"


def convert_tz(text: str, from_zone: str, to_zone: str) -> str:
    """Spark SQL for ``CONVERT_TZ(text, from_zone, to_zone)``; the zones are Java's names (:func:`java_time_zone`) as
    string literals, ``text`` any Spark SQL string expression."""
    pattern = "'" + _WALL_TIME.replace("\\", "\\\\") + "'"
    given, wall = "__kindling_tz_text", "__kindling_tz_wall"  # the text and its wall time, each bound once

    def part(n: int) -> str:
        return f"CAST(regexp_extract({given}, {pattern}, {n}) AS BIGINT)"

    month_start = f"add_months(make_date({part(1)}, 1, 1), CAST({part(2)} - 1 AS INT))"
    day = f"date_add({month_start}, CAST({part(3)} - 1 AS INT))"
    read = f"CAST({day} AS TIMESTAMP_NTZ) + make_dt_interval(0, CAST({part(4)} AS INT), CAST({part(5)} AS INT), {part(6)})"
    earlier = f"convert_timezone({from_zone}, 'UTC', {wall})"
    # a repeated wall time: Spark reads it with the offset before the change, Flink after it (an instant 1 h later)
    later = f"({earlier} + INTERVAL 1 HOUR)"
    utc = f"(CASE WHEN convert_timezone('UTC', {from_zone}, {later}) = {wall} THEN {later} ELSE {earlier} END)"
    converted = bound_once(read, wall, f"date_format(convert_timezone('UTC', {to_zone}, {utc}), 'yyyy-MM-dd HH:mm:ss')")
    return bound_once(text, given, f"CASE WHEN {given} RLIKE {pattern} AND {part(1)} BETWEEN 1 AND 9999 THEN {converted} END")

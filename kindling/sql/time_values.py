"""Flink's TIME(p) values, which kindling holds as their text (``HH:mm:ss``, and for p > 0 the fraction without
trailing zeros but at least one digit: ``08:00:01.0``, ``08:00:04.91``), as Flink writes them.

>>> cast_to_time("x", 0, "CAST").startswith("element_at(transform(array(x), __kindling_time -> CASE WHEN typeof(__kindling_time)")
True
"""

from __future__ import annotations

from kindling.sql.bound_values import bound_once

_TIME_TEXT = "'^ *([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})([.]([0-9]*))? *$'"


def _with_fraction(text: str, precision: int) -> str:
    """``HH:mm:ss.fff...`` (``precision`` digits) as Flink writes it: trailing zeros dropped, one digit kept."""
    if precision == 0:
        return text
    stripped = f"regexp_replace({text}, '0+$', '')"
    return f"(CASE WHEN {stripped} LIKE '%.' THEN concat({stripped}, '0') ELSE {stripped} END)"


def cast_to_time(value: str, precision: int, word: str) -> str:
    """Spark SQL for ``CAST(value AS TIME(precision))`` (``word`` CAST or TRY_CAST) as Flink's TIME text: the time of day
    of a timestamp, or a string ``H:m:s[.f]`` read and written in full, its fraction cut to ``precision`` digits. A
    string that is no time of day is NULL for TRY_CAST and fails the job for CAST, as in Flink. The value is bound once
    (written out in every branch, a nested expression was repeated a dozen times)."""
    bound, value = value, "__kindling_time"
    timestamp = _with_fraction(f"date_format({value}, 'HH:mm:ss{'.' + 'S' * precision if precision else ''}')", precision)

    def field(n: int) -> str:
        return f"CAST(regexp_extract({value}, {_TIME_TEXT}, {n}) AS INT)"

    fraction = f"rpad(substr(regexp_extract({value}, {_TIME_TEXT}, 5), 1, {precision}), {precision}, '0')"
    written = f"concat_ws(':', lpad({field(1)}, 2, '0'), lpad({field(2)}, 2, '0'), lpad({field(3)}, 2, '0'))"
    if precision:
        written = _with_fraction(f"concat({written}, '.', {fraction})", precision)
    valid = f"{value} RLIKE {_TIME_TEXT} AND {field(1)} < 24 AND {field(2)} < 60 AND {field(3)} < 60"
    invalid = ("NULL" if word == "TRY_CAST"
               else f"raise_error(concat('CAST: the string ''', {value}, ''' is no TIME value (HH:mm:ss[.fff])'))")
    string = f"CASE WHEN {valid} THEN {written} ELSE {invalid} END"
    body = (f"CASE WHEN typeof({value}) LIKE 'timestamp%' THEN {timestamp} "
            f"WHEN typeof({value}) IN ('string', 'void') THEN {string} "
            f"ELSE raise_error(concat('{word} to TIME of a ', typeof({value}), ' is not supported')) END")
    return bound_once(bound, value, body)

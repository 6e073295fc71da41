"""Flink's TIME(p) values, which kindling holds as their text (``HH:mm:ss``, and for p > 0 the fraction without
trailing zeros but at least one digit: ``08:00:01.0``, ``08:00:04.91``), as Flink writes them.

The value is bound to a lambda variable whose name says the cast (``__kindling_time3``: CAST to TIME(3),
``__kindling_try_time0``: TRY_CAST to TIME(0)), which is how :mod:`kindling.sql.column_types` knows a column of Spark's
analyzed plan holds a TIME, and of which precision (:func:`time_type`).

>>> cast_to_time("x", 0, "CAST").startswith("element_at(transform(array(x), __kindling_time0 -> CASE WHEN typeof(__kindling_time0)")
True
>>> time_type("__kindling_try_time3", argument_not_null=True)
'TIME(3)'
"""

from __future__ import annotations

import datetime
import re
from typing import Optional, Union

from kindling.sql.bound_values import bound_once

_VARIABLE = re.compile(r"__kindling_(try_)?time(\d)")


def _with_fraction(text: str, precision: int) -> str:
    """``HH:mm:ss.fff...`` (``precision`` digits) as Flink writes it: trailing zeros dropped, one digit kept."""
    if precision == 0:
        return text
    stripped = f"regexp_replace({text}, '0+$', '')"
    return f"(CASE WHEN {stripped} LIKE '%.' THEN concat({stripped}, '0') ELSE {stripped} END)"


def cast_to_time(value: str, precision: int, word: str) -> str:
    """Spark SQL for ``CAST(value AS TIME(precision))`` (``word`` CAST or TRY_CAST) as Flink's TIME text: the time of day
    of a timestamp, or a string read as Flink reads one (:func:`_string_to_time`), its milliseconds cut to ``precision``
    digits. A string that is no time of day is NULL for TRY_CAST and fails the job for CAST, as in Flink; NULL is NULL.
    The value is bound once (written out in every branch, a nested expression was repeated a dozen times)."""
    bound, value = value, f"__kindling_{'try_' if word == 'TRY_CAST' else ''}time{precision}"
    timestamp = _with_fraction(f"date_format({value}, 'HH:mm:ss{'.' + 'S' * precision if precision else ''}')", precision)
    string = _string_to_time(value, precision)
    if word != "TRY_CAST":
        string = (f"CASE WHEN {value} IS NULL THEN NULL ELSE coalesce({string}, "
                  f"raise_error(concat('CAST: the string ''', {value}, ''' is no TIME value (HH:mm:ss[.fff])'))) END")
    body = (f"CASE WHEN typeof({value}) LIKE 'timestamp%' THEN {timestamp} "
            f"WHEN typeof({value}) IN ('string', 'void') THEN {string} "
            f"ELSE raise_error(concat('{word} to TIME of a ', typeof({value}), ' is not supported')) END")
    return bound_once(bound, value, body)


# Flink's DateTimeUtils.parseTime, as patterns: the time before the offset (H[:m[:s[.f]]], each field an unsigned int with
# blanks -- characters up to U+0020, Java's trim() -- around it, the fraction anything) and the offset after its sign (h[:m]).
_BLANK = r"[\x00-\x20]"
_CLOCK = rf"(?s)^{_BLANK}*([0-9]+){_BLANK}*(:{_BLANK}*([0-9]+){_BLANK}*(:{_BLANK}*([0-9]+){_BLANK}*([.](.*))?)?)?\z"
_TRIMMED = rf"^{_BLANK}+|{_BLANK}+\z"
_OFFSET = rf"^{_BLANK}*([0-9]+){_BLANK}*(:{_BLANK}*([0-9]+){_BLANK}*)?\z"


def _literal(pattern: str) -> str:
    return "'" + pattern.replace("\\", "\\\\") + "'"


def _string_to_time(text: str, precision: int) -> str:
    """Spark SQL for Flink's TIME(precision) text of a string (NULL where Flink reads no time), as Flink's
    ``DateTimeUtils.parseTime`` reads it: ``H[:m[:s[.f]]]`` with each field an unsigned int (blanks around it allowed,
    H < 24, m and s < 60), the fraction's first three characters its milliseconds (a character that is no digit counts
    0; a fourth of '5' or more rounds up), then an offset ``+h[:m]`` or ``-h[:m]``, added to or taken from H and m. The
    first '-' in the text (else the first '+') starts the offset; Flink finds the time's first two colons in the whole
    text, so a time with fewer than two before an offset with one is none. Each step maps a one-element array (a chain
    of lambdas, not a nest: Spark's analysis of nested lambdas grows with their depth)."""
    clock, offset = _literal(_CLOCK), _literal(_OFFSET)
    minus, plus = f"instr({text}, '-')", f"instr({text}, '+')"
    parts = (f"array(named_struct('time', CASE WHEN {minus} > 0 THEN substr({text}, 1, {minus} - 1) "
             f"WHEN {plus} > 0 THEN substr({text}, 1, {plus} - 1) ELSE {text} END, "
             f"'offset', CASE WHEN {minus} > 0 THEN substr({text}, {minus} + 1) WHEN {plus} > 0 THEN substr({text}, {plus} + 1) END, "
             f"'sign', IF({minus} > 0, -1, 1)))")

    def field(pattern: str, of: str, group: int) -> str:  # an absent field is 0, one past Integer.MAX_VALUE no int
        found = f"regexp_extract({of}, {pattern}, {group})"
        return f"IF({found} = '', 0, TRY_CAST({found} AS INT))"

    p, f = "__kindling_tp", "__kindling_tf"
    valid = (f"{p}.time RLIKE {clock} AND ({p}.offset IS NULL OR ({p}.offset RLIKE {offset} "
             f"AND (size(split({p}.time, ':')) >= 3 OR instr({p}.offset, ':') = 0)))")
    fields = (f"transform({parts}, {p} -> IF({valid}, named_struct('h', {field(clock, f'{p}.time', 1)}, "
              f"'m', {field(clock, f'{p}.time', 3)}, 's', {field(clock, f'{p}.time', 5)}, "
              f"'fraction', regexp_replace(regexp_extract({p}.time, {clock}, 7), {_literal(_TRIMMED)}, ''), "
              f"'oh', IF({p}.offset IS NULL, 0, {field(offset, f'{p}.offset', 1)}), "
              f"'om', IF({p}.offset IS NULL, 0, {field(offset, f'{p}.offset', 3)}), 'sign', {p}.sign), NULL))")

    def digit(n: int) -> str:
        character = f"substr({f}.fraction, {n}, 1)"
        return f"CASE WHEN {character} BETWEEN '0' AND '9' THEN ascii({character}) - 48 ELSE 0 END"

    fraction = f"{digit(1)} * 100 + {digit(2)} * 10 + {digit(3)} + CASE WHEN substr({f}.fraction, 4, 1) >= '5' THEN 1 ELSE 0 END"
    millis = (f"transform({fields}, {f} -> CASE WHEN {f}.h < 24 AND {f}.m < 60 AND {f}.s < 60 AND {f}.oh IS NOT NULL "
              f"AND {f}.om IS NOT NULL THEN (CAST({f}.h AS BIGINT) + {f}.sign * {f}.oh) * 3600000 "
              f"+ ({f}.m + {f}.sign * {f}.om) * 60000 + {f}.s * 1000 + {fraction} END)")
    unit = 10 ** (3 - min(precision, 3))
    # Cut to the precision (towards zero, as Java's %), then a negative time a day later (DateTimeUtils.formatTimestampMillis)
    cut = f"__kindling_tm - __kindling_tm % {unit}"
    of_day = f"transform({millis}, __kindling_tm -> IF({cut} < 0, pmod({cut}, 86400000), {cut}))"
    return f"element_at(transform({of_day}, __kindling_td -> IF(__kindling_td IS NULL, NULL, {_written('__kindling_td', precision)})), 1)"


def _written(day: str, precision: int) -> str:
    """Flink's text of a TIME(precision) of ``day`` milliseconds (``DateTimeUtils.formatTimestampMillis``): the hours'
    last two digits (a time read with an offset can pass 24 h), the fraction's digits without trailing zeros but at
    least one."""
    clock = (f"concat_ws(':', lpad(CAST(({day} DIV 3600000) % 100 AS STRING), 2, '0'), "
             f"lpad(CAST(({day} % 3600000) DIV 60000 AS STRING), 2, '0'), lpad(CAST(({day} % 60000) DIV 1000 AS STRING), 2, '0'))")
    if precision:
        clock = _with_fraction(f"concat({clock}, '.', lpad(CAST({day} % 1000 AS STRING), 3, '0'))", precision)
    return clock


def time_type(variable: str, argument_not_null: bool) -> Optional[str]:
    """The Flink type of a :func:`cast_to_time` whose lambda variable is ``variable`` (None for another variable): TIME(p),
    NOT NULL for a CAST of a value that is never NULL (a TRY_CAST may give NULL)."""
    match = _VARIABLE.fullmatch(variable)
    if match is None:
        return None
    return f"TIME({match.group(2)})" + (" NOT NULL" if argument_not_null and not match.group(1) else "")


def holds_time_cast(plan_text: str) -> bool:
    """Whether a plan's text holds a :func:`cast_to_time` (a cheap test before a walk of the plan)."""
    return _VARIABLE.search(plan_text) is not None


_TIME_OF_DAY = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:[.]([0-9]+))?")


def time_of_text(text: Optional[str]) -> Union[datetime.time, str, None]:
    """A TIME value's text (``HH:mm:ss[.fff]``) as the ``datetime.time`` PyFlink collects (a fraction's digits past the
    microsecond cut); a text that is no time of day (a MySQL TIME of -01:02:03, a time read with an offset past 24 h)
    stays text, which Python's time cannot hold.

    >>> time_of_text("08:00:04.91")
    datetime.time(8, 0, 4, 910000)
    """
    if text is None:
        return None
    match = _TIME_OF_DAY.fullmatch(text)
    if match is None:  # no time of day (a database's negative TIME, one past 24 h): its text, as before
        return text
    return datetime.time(int(match[1]), int(match[2]), int(match[3]), int(((match[4] or "") + "000000")[:6]))

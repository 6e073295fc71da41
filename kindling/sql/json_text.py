"""Flink's JSON text of a scalar value (``JSON_STRING``, ``JSON_OBJECT``'s values), written as Spark SQL.

Flink writes JSON with Jackson from its internal values, which differs from Spark's ``to_json`` for three kinds:

* FLOAT and DOUBLE: as ``new BigDecimal(Double.toString(x)).toString()`` (a FLOAT widened to DOUBLE first): ``1.0E+20``
  where Java writes ``1.0E20``, ``0.00010`` for ``1.0E-4``, ``123456789`` for ``1.23456789E8``, and a FLOAT's binary
  digits (``0.10000000149011612`` for ``0.1``). Spark's DOUBLE-to-STRING cast is Java's ``Double.toString``, and
  the decimal text is derived from it as ``BigDecimal`` derives its own;
* TIMESTAMP: ISO local date-time in quotes, seconds always, the fraction without trailing zeros
  (``"2024-01-01T08:00:04.91"``); TIMESTAMP_LTZ the same in UTC with ``Z``;
* strings, integers, booleans and DECIMALs are written alike (Spark's JSON writer; a DECIMAL as ``BigDecimal.toString``).

>>> json_text("x", "integer")
'CAST(x AS STRING)'
"""

from __future__ import annotations

from typing import Any, Optional

from kindling.sql.analysis import analysed_pending, pending_call
from kindling.sql.errors import SqlError
from kindling.sql.tokens import splice

# The kinds a value's JSON text is written for, by the Flink type names that have them.
KINDS_BY_FLINK_TYPE = {"STRING": "string", "CHAR": "string", "VARCHAR": "string", "TINYINT": "integer", "SMALLINT": "integer",
                       "INT": "integer", "INTEGER": "integer", "BIGINT": "integer", "BOOLEAN": "boolean", "FLOAT": "float",
                       "DOUBLE": "double", "DECIMAL": "decimal", "TIMESTAMP": "timestamp", "TIMESTAMP_LTZ": "timestamp_ltz"}
# And by Spark's simple type names (a Spark ``timestamp`` is either of Flink's timestamps: not known from Spark's type).
KINDS_BY_SPARK_TYPE = {"string": "string", "tinyint": "integer", "smallint": "integer", "int": "integer", "bigint": "integer",
                       "boolean": "boolean", "float": "float", "double": "double", "timestamp_ntz": "timestamp"}


def kind_of_flink_type(flink: str) -> Optional[str]:
    """The JSON kind of a declared Flink type (``VARCHAR(10)``, ``DECIMAL(6, 3) NOT NULL``); None for other types."""
    base = flink.replace(" NOT NULL", "").strip()
    if base.startswith("TIMESTAMP") and ("LOCAL TIME ZONE" in base or base.startswith("TIMESTAMP_LTZ")):
        return "timestamp_ltz"
    return KINDS_BY_FLINK_TYPE.get(base.split("(")[0].strip())


def kind_of_spark_type(spark: str) -> Optional[str]:
    """The JSON kind of a Spark type's simple string (``int``, ``decimal(6,3)``); None when Flink's is not known from it."""
    return "decimal" if spark.startswith("decimal(") else KINDS_BY_SPARK_TYPE.get(spark)


def json_text(value: str, kind: str) -> str:
    """Spark SQL giving Flink's JSON text of ``value`` (SQL text) of ``kind`` (see the KINDS maps); NULL for NULL."""
    if kind == "integer":
        return f"CAST({value} AS STRING)"
    if kind == "boolean":
        return f"(CASE WHEN ({value}) THEN 'true' WHEN NOT ({value}) THEN 'false' END)"
    if kind in ("string", "decimal"):
        return f"(CASE WHEN ({value}) IS NOT NULL THEN REGEXP_EXTRACT(to_json(named_struct('v', {value})), '^[{{]\"v\":(.*)[}}]$', 1) END)"
    if kind in ("float", "double"):
        return _big_decimal_text(f"CAST(CAST({value} AS DOUBLE) AS STRING)")
    if kind in ("timestamp", "timestamp_ltz"):
        zone = "Z" if kind == "timestamp_ltz" else ""
        fraction = f"date_format({value}, \"yyyy-MM-dd'T'HH:mm:ss.SSSSSS\")"
        return f"concat('\"', regexp_replace({fraction}, '[.]?0+$', ''), '{zone}\"')"
    raise ValueError(f"no JSON text for values of kind {kind!r}")


def _big_decimal_text(text: str) -> str:
    """``new BigDecimal(s).toString()`` of ``s``, Java's ``Double.toString`` text of a number (``d.dddE[-]n`` outside
    [1e-3, 1e7), plain inside): a positive exponent gets its sign, and an exponent of -4..-6 is written out."""
    body = f"ltrim('-', {text})"
    mantissa = f"substring_index({body}, 'E', 1)"
    exponent = f"CAST(substring_index({body}, 'E', -1) AS INT)"
    fraction = f"substring_index({mantissa}, '.', -1)"
    digits = f"concat(substring({mantissa}, 1, 1), {fraction})"
    scale = f"(length({fraction}) - {exponent})"
    scientific = (f"CASE WHEN {exponent} > 0 THEN CASE WHEN {scale} = 0 THEN {digits} "
                  f"WHEN {scale} > 0 THEN concat(substring({digits}, 1, {exponent} + 1), '.', substring({digits}, {exponent} + 2)) "
                  f"ELSE concat({mantissa}, 'E+', {exponent}) END "
                  f"WHEN {exponent} >= -6 THEN concat('0.', repeat('0', -{exponent} - 1), {digits}) ELSE {body} END")
    sign = f"CASE WHEN {text} LIKE '-%' THEN '-' ELSE '' END"
    return (f"(CASE WHEN {text} IN ('NaN', 'Infinity', '-Infinity') THEN CAST(raise_error(concat('JSON of ', {text}, "
            f"' is not a number Flink writes')) AS STRING) WHEN {text} LIKE '%E%' THEN concat({sign}, {scientific}) "
            f"ELSE {text} END)")


def json_member(key: str, value: str, kind: str, absent_on_null: bool) -> str:
    """One ``"key":value`` member of a JSON object as Spark SQL; a NULL value is ``null``, or no member (NULL) when absent."""
    null = "NULL" if absent_on_null else f"'\"{key}\":null'"
    return f"(CASE WHEN ({value}) IS NULL THEN {null} ELSE concat('\"{key}\":', {json_text(value, kind)}) END)"


# ``JSON_STRING(x)`` of an expression, as translated (Spark analyses it, so the rewrites before see a valid query) until
# :func:`with_flink_json_strings` writes it out by the type Spark's analysis gives ``x``.
_MARKER = "__kindling_json_string"
_MARKER_BASE = 618_402_557_000


def json_string_marker(argument: str) -> str:
    """The translated ``JSON_STRING(argument)``, typed and written out by :func:`with_flink_json_strings`."""
    return pending_call(_MARKER, argument)


def with_flink_json_strings(spark: Any, text: str) -> Optional[str]:
    """``text`` with each ``JSON_STRING`` of an expression written as Flink's JSON text of its type; None when there is
    none. A type whose Flink JSON kindling does not know from Spark's type is refused, naming JSON_STRING."""
    if _MARKER not in text:
        return None
    tokens, calls, _, found = analysed_pending(spark, text, _MARKER, _MARKER_BASE)
    types = {n: expression.dataType().simpleString() for n, expression in found.items()}
    replacements = []
    for n, (name, close, argument) in enumerate(calls):
        spark_type = types.get(n)
        kind = kind_of_spark_type(spark_type) if spark_type is not None else None
        if kind is None:
            shown = "TIMESTAMP or TIMESTAMP_LTZ" if spark_type == "timestamp" else (spark_type or "unknown").upper()
            raise SqlError(f"JSON_STRING of an expression of type {shown} is not supported (kindling writes Flink's JSON "
                           "of strings, numbers, booleans and DECIMALs, and of declared TIMESTAMP/TIMESTAMP_LTZ columns)",
                           line=tokens[name].line, construct="JSON_STRING",
                           hint="JSON_STRING(x) of a string, number, boolean or DECIMAL, or of a declared timestamp column")
        replacements.append((name, close + 1, json_text(argument, kind)))
    return splice(tokens, replacements)


def left_untyped(text: str) -> bool:
    """Whether a translated JSON_STRING was not written out (nested in another's argument): refused by the caller."""
    return _MARKER in text


# JSON_QUOTE: the characters Flink escapes by name (a backslash and a letter or the character itself)
_QUOTED = {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}


def json_quote(value: str) -> str:
    """``JSON_QUOTE(value)`` as Spark SQL: ``value`` in double quotes, with ``"``, ``\\``, ``/`` and the backspace,
    form feed, newline, carriage return and tab escaped by name, and each character above U+007F as ``\\u`` and its
    code point in lower-case hex (Flink writes a character beyond U+FFFF as its code point, then its low surrogate:
    ``\\u1f600\\ude00``); other control characters stay as they are, as Flink leaves them."""
    backslash = "chr(92)"
    named = " ".join(f"WHEN chr({ord(c)}) THEN concat({backslash}, chr({ord(e)}))" for c, e in _QUOTED.items())
    code = "ascii(__kindling_c)"
    hex4 = f"lower(lpad(hex({code}), 4, '0'))"
    low_surrogate = f"lower(hex(56320 + ({code} - 65536) % 1024))"
    escaped = (f"CASE WHEN {code} > 65535 THEN concat({backslash}, 'u', lower(hex({code})), {backslash}, 'u', {low_surrogate}) "
               f"WHEN {code} > 127 THEN concat({backslash}, 'u', {hex4}) ELSE __kindling_c END")
    characters = f"transform(split({value}, ''), __kindling_c -> CASE __kindling_c {named} ELSE {escaped} END)"
    return f"(CASE WHEN ({value}) IS NOT NULL THEN concat('\"', array_join({characters}, ''), '\"') END)"


# A JSON string token at the start of a text (what Jackson reads as the first value of the document)
_JSON_STRING_START = '^"([^"\\\\\\x00-\\x1f]|\\\\["\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4})*"'


def json_unquote(value: str) -> str:
    """``JSON_UNQUOTE(value)`` as Spark SQL: Flink unquotes a text that is valid JSON (its first value read, the rest
    ignored) beginning and ending with a double quote: the characters between the first and the last are unescaped.
    Anything else (an object, a number, a text with spaces around its quotes or an invalid escape) comes back as it is."""
    pattern = "'" + _JSON_STRING_START.replace("\\", "\\\\") + "'"
    inner = f"substring({value}, 2, length({value}) - 2)"
    unescaped = f"reflect('org.apache.commons.text.StringEscapeUtils', 'unescapeJson', {inner})"
    return f"(CASE WHEN ({value}) RLIKE {pattern} AND ({value}) LIKE '%\"' THEN {unescaped} ELSE {value} END)"


def json_array(elements: list[str], null_on_null: bool) -> str:
    """``JSON_ARRAY(...)`` as Spark SQL from its elements' JSON texts (NULL for a NULL value): a NULL element is left
    out (ABSENT ON NULL, Flink's default for arrays) or written ``null``."""
    if not elements:
        return "'[]'"
    texts = [f"coalesce({e}, 'null')" if null_on_null else e for e in elements]
    return f"concat('[', concat_ws(',', {', '.join(texts)}), ']')"

"""Which of Flink's built-in functions kindling lists (``TableEnvironment.list_functions``), and why not the others.

Flink's ``list_functions()`` gives the names of its core module's functions (the Table API's definitions: ``plus``,
``charLength``, ``ARRAY_APPEND``, ...) and the user-defined functions, sorted. kindling lists the same names, less
those it does not support: a name in its list can be used, in the Table API (``col('s').char_length``) or in SQL
(``ARRAY_APPEND(a, 1)``), with Flink's answer. Some listed functions refuse one form of their arguments
(:data:`PARTLY_REFUSED`); the others give Flink's answer or refuse by name in every form.

The list and the reasons are checked against PyFlink 2.3's recorded ``list_functions()`` and the Table API's
expressions as PyFlink answers them (``tests/table/test_table_environment_lists.py``, ``test_expressions.py``).

>>> "ARRAY_APPEND" in listed_functions([]), "BITMAP_BUILD" in listed_functions([])
(True, False)
>>> listed_functions(["zz"])[-3:]
['withColumns', 'withoutColumns', 'zz']
"""

from __future__ import annotations

from typing import Iterable

# PyFlink 2.3's TableEnvironment.list_functions() in a fresh environment: its core module's functions, sorted.
FLINK_FUNCTIONS: tuple[str, ...] = (
    "AGG_DECIMAL_MINUS", "AGG_DECIMAL_PLUS", "ARRAY_AGG", "ARRAY_APPEND", "ARRAY_CONCAT", "ARRAY_CONTAINS",
    "ARRAY_DISTINCT", "ARRAY_EXCEPT", "ARRAY_INTERSECT", "ARRAY_JOIN", "ARRAY_MAX", "ARRAY_MIN", "ARRAY_POSITION",
    "ARRAY_PREPEND", "ARRAY_REMOVE", "ARRAY_REVERSE", "ARRAY_SLICE", "ARRAY_SORT", "ARRAY_UNION", "ASSIGNMENT",
    "BITMAP_AND", "BITMAP_ANDNOT", "BITMAP_AND_AGG", "BITMAP_AND_CARDINALITY_AGG", "BITMAP_BUILD",
    "BITMAP_BUILD_AGG", "BITMAP_BUILD_CARDINALITY_AGG", "BITMAP_CARDINALITY", "BITMAP_FROM_BYTES", "BITMAP_OR",
    "BITMAP_OR_AGG", "BITMAP_OR_CARDINALITY_AGG", "BITMAP_TO_ARRAY", "BITMAP_TO_BYTES", "BITMAP_TO_STRING",
    "BITMAP_XOR", "BITMAP_XOR_AGG", "BITMAP_XOR_CARDINALITY_AGG", "BTRIM", "COALESCE", "CURRENT_WATERMARK",
    "DEFAULT", "ELT", "ENDSWITH", "FROM_CHANGELOG", "GREATEST", "HIVE_AGG_DECIMAL_PLUS", "IFNULL", "INET_ATON",
    "INET_NTOA", "IS_JSON", "JSON", "JSON_ARRAY", "JSON_ARRAYAGG_ABSENT_ON_NULL", "JSON_ARRAYAGG_NULL_ON_NULL",
    "JSON_EXISTS", "JSON_OBJECT", "JSON_OBJECTAGG_ABSENT_ON_NULL", "JSON_OBJECTAGG_NULL_ON_NULL", "JSON_QUERY",
    "JSON_QUOTE", "JSON_STRING", "JSON_UNQUOTE", "JSON_VALUE", "LEAST", "LIKE", "MAP_ENTRIES", "MAP_FROM_ARRAYS",
    "MAP_KEYS", "MAP_UNION", "MAP_VALUES", "ML_PREDICT", "OBJECT_OF", "OBJECT_UPDATE", "PARSE_JSON", "PERCENTILE",
    "PRINTF", "REGEXP_COUNT", "REGEXP_EXTRACT_ALL", "REGEXP_INSTR", "REGEXP_SUBSTR", "SOURCE_WATERMARK", "SPLIT",
    "STARTSWITH", "TO_CHANGELOG", "TO_TIMESTAMP_LTZ", "TRANSLATE3", "TRY_CAST", "TRY_PARSE_JSON", "TYPEOF", "UNHEX",
    "URL_DECODE", "URL_ENCODE", "abs", "acos", "and", "array", "as", "asc", "ascii", "asin", "at", "atan", "atan2",
    "avg", "between", "bin", "cardinality", "cast", "ceil", "charLength", "chr", "collect", "concat", "concat_ws",
    "convertTz", "cos", "cosh", "cot", "count", "currentDatabase", "currentDate", "currentRowTimestamp",
    "currentTime", "currentTimestamp", "dateFormat", "decode", "degrees", "desc", "distinct", "divide", "e",
    "element", "encode", "end", "equals", "exp", "extract", "first_value", "flatten", "floor", "fromBase64",
    "fromUnixtime", "get", "greaterThan", "greaterThanOrEqual", "hex", "ifThenElse", "in", "initCap", "instr",
    "isFalse", "isNotFalse", "isNotNull", "isNotTrue", "isNull", "isTrue", "lag", "last_value", "lead", "left",
    "lessThan", "lessThanOrEqual", "listAgg", "ln", "localTime", "localTimestamp", "locate", "log", "log10", "log2",
    "lower", "lowerCase", "lpad", "ltrim", "map", "max", "md5", "min", "minus", "minusPrefix", "mod", "not",
    "notBetween", "notEquals", "now", "or", "over", "overlay", "parseUrl", "pi", "plus", "position", "power",
    "proctime", "radians", "rand", "randInteger", "rangeTo", "regexp", "regexpExtract", "regexpReplace",
    "reinterpretCast", "repeat", "replace", "reverse", "right", "round", "row", "rowtime", "rpad", "rtrim", "sha1",
    "sha2", "sha224", "sha256", "sha384", "sha512", "sign", "similar", "sin", "sinh", "splitIndex", "sqrt", "start",
    "stddevPop", "stddevSamp", "strToMap", "streamRecordTimestamp", "substr", "substring", "sum", "sum0", "tan",
    "tanh", "temporalOverlaps", "times", "timestampDiff", "toBase64", "toDate", "toTimestamp", "trim", "truncate",
    "unixTimestamp", "upper", "upperCase", "uuid", "varPop", "varSamp", "withColumns", "withoutColumns"
)

_INTERNAL = "internal to Flink's planner: no SQL or Table API call names it"
_NO_BITMAP = "kindling has no BITMAP type"
_UNRESOLVED = "kindling's SQL has no such function"
# Flink's functions kindling does not list -> why (a call of one is refused by name, or fails as no function).
NOT_LISTED: dict[str, str] = {
    "AGG_DECIMAL_MINUS": _INTERNAL, "AGG_DECIMAL_PLUS": _INTERNAL, "HIVE_AGG_DECIMAL_PLUS": _INTERNAL,
    "reinterpretCast": _INTERNAL, "streamRecordTimestamp": _INTERNAL,
    "DEFAULT": "kindling's calls take no DEFAULT argument",
    "ML_PREDICT": "kindling has no models",
    "PARSE_JSON": "kindling has no VARIANT type", "TRY_PARSE_JSON": "kindling has no VARIANT type",
    "JSON": "kindling's JSON_OBJECT takes columns, not JSON(...) values",
    "OBJECT_OF": _UNRESOLVED, "OBJECT_UPDATE": _UNRESOLVED, "CURRENT_WATERMARK": _UNRESOLVED,
    "collect": _UNRESOLVED,
    "JSON_EXISTS": "refused by name: JSON_VALUE(json, '$.path') IS NOT NULL instead",
    "JSON_ARRAYAGG_ABSENT_ON_NULL": "JSON_ARRAYAGG is refused by name", "JSON_ARRAYAGG_NULL_ON_NULL": "JSON_ARRAYAGG is refused by name",
    "JSON_OBJECTAGG_ABSENT_ON_NULL": "JSON_OBJECTAGG is refused by name", "JSON_OBJECTAGG_NULL_ON_NULL": "JSON_OBJECTAGG is refused by name",
    **{name: _NO_BITMAP for name in FLINK_FUNCTIONS if name.startswith("BITMAP_")},
    "flatten": "Expression.flatten is refused: select the fields with get('name')",
    "proctime": "Expression.proctime is refused: declare a processing-time column in a Schema (PROCTIME())",
}

# Listed functions of which one form is refused by name (the others give Flink's answer) -> the refused form.
PARTLY_REFUSED: dict[str, str] = {
    "get": "by position, get(1)",
    "rand": "with a seed", "randInteger": "with a seed",
    "timestampDiff": "in months, quarters or years",
    "TO_TIMESTAMP_LTZ": "of a string",
    "JSON_STRING": "of an ARRAY, MAP or ROW",
    "JSON_OBJECT": "of an expression, or of a column of a type other than a string, number, boolean, DECIMAL or timestamp",
    "TYPEOF": "of an expression kindling does not derive the Flink type of",
    "overlay": "from a position past the end of the string",
    "toDate": "of a string that is no date: the job fails where Flink gives NULL",
}


def listed_functions(user_functions: Iterable[str]) -> list[str]:
    """Flink's built-in functions kindling supports and the user-defined functions, in one list sorted as Flink's
    ``list_functions()`` sorts it (by code point: upper case first)."""
    return sorted({*(n for n in FLINK_FUNCTIONS if n not in NOT_LISTED), *user_functions})


__all__ = ["FLINK_FUNCTIONS", "NOT_LISTED", "PARTLY_REFUSED", "listed_functions"]

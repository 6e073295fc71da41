"""The public members of PyFlink 2.3's Table API ``Expression``, by name.

PyFlink's ``Expression.__getattr__`` reads any other attribute as a field of a ROW (``col('r').x``), and kindling's
does the same; a name of this list that kindling lacks must not become a field access, so its ``__getattr__`` refuses
these names instead. Recorded from PyFlink 2.3 (``tests/table/record_api.py``; ``test_projections.py`` checks this list
against the recording).
"""

from __future__ import annotations

PYFLINK_EXPRESSION_MEMBERS: frozenset[str] = frozenset({
    "abs", "acos", "alias", "array_agg", "array_append", "array_concat", "array_contains", "array_distinct",
    "array_except", "array_intersect", "array_join", "array_max", "array_min", "array_position", "array_prepend",
    "array_remove", "array_reverse", "array_slice", "array_sort", "array_union", "as_argument", "asc", "ascii",
    "asin", "at", "atan", "avg", "between", "bin", "bitmap_and", "bitmap_and_agg", "bitmap_and_cardinality_agg",
    "bitmap_andnot", "bitmap_build", "bitmap_build_agg", "bitmap_build_cardinality_agg", "bitmap_cardinality",
    "bitmap_from_bytes", "bitmap_or", "bitmap_or_agg", "bitmap_or_cardinality_agg", "bitmap_to_array",
    "bitmap_to_bytes", "bitmap_to_string", "bitmap_xor", "bitmap_xor_agg", "bitmap_xor_cardinality_agg", "btrim",
    "cardinality", "cast", "ceil", "char_length", "chr", "collect", "concat", "cos", "cosh", "cot", "count", "day",
    "days", "decode", "degrees", "desc", "distinct", "element", "elt", "encode", "end", "ends_with", "exp",
    "extract", "first_value", "flatten", "floor", "from_base64", "get", "hex", "hour", "hours", "if_null", "in_",
    "inet_aton", "inet_ntoa", "init_cap", "instr", "is_false", "is_json", "is_not_false", "is_not_null",
    "is_not_true", "is_null", "is_true", "json_exists", "json_query", "json_quote", "json_unquote", "json_value",
    "last_value", "left", "like", "list_agg", "ln", "locate", "log", "log10", "log2", "lower_case", "lpad", "ltrim",
    "map_entries", "map_keys", "map_union", "map_values", "max", "md5", "milli", "millis", "min", "minute",
    "minutes", "month", "months", "not_between", "object_update", "over", "overlay", "parse_url", "percentile",
    "position", "printf", "proctime", "quarter", "quarters", "radians", "regexp", "regexp_count", "regexp_extract",
    "regexp_extract_all", "regexp_instr", "regexp_replace", "regexp_substr", "repeat", "replace", "reverse",
    "right", "round", "rowtime", "rpad", "rtrim", "second", "seconds", "sha1", "sha2", "sha224", "sha256", "sha384",
    "sha512", "sign", "similar", "sin", "sinh", "split", "split_index", "sqrt", "start", "starts_with",
    "stddev_pop", "stddev_samp", "str_to_map", "substr", "substring", "sum", "sum0", "tan", "tanh", "then",
    "to_base64", "to_date", "to_time", "to_timestamp", "translate", "trim", "trim_leading", "trim_trailing",
    "truncate", "try_cast", "unhex", "upper_case", "url_decode", "url_encode", "var_pop", "var_samp", "week",
    "weeks", "year", "years"
})

__all__ = ["PYFLINK_EXPRESSION_MEMBERS"]

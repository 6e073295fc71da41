"""Table API expression cases, one list for both sides: ``record_expressions.py`` evaluates them under PyFlink 2.3
(``pyflink_reference/expressions.json``) and ``test_expressions.py`` under kindling, which must give the same rows and
type, or refuse naming the function.

Each case builds its expression from an :class:`Api` (``pyflink.table`` or ``kindling.table``) over one small table
(:data:`ROWS`: NULLs, non-ASCII text, negative and zero numbers, an empty array and map; PyFlink's ``from_elements``
fails on NULL array elements, map values and row fields, so those come from ``null_of`` in the cases). A ``scalar`` case is
``select(col('id'), expression.alias('v'))``, one row per input row; an ``aggregate`` case is
``select(expression.alias('v'))``, one row; a ``table`` case builds the whole table."""

from __future__ import annotations

import datetime as dt
import importlib
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable

ROWS = [
    (1, "Hello World", -7, 1700000000, 0.5, Decimal("12.345"), dt.datetime(2024, 2, 29, 13, 45, 30, 123000),
     dt.date(2024, 2, 29), [3, 1, 4, 3], ["a", "c", "b"], {"a": 1, "b": 2}, True, '{"a": 1, "b": [1, 2]}', (1, "x")),
    (2, "Ärger straße 日本", 0, 0, -1.25, Decimal("-0.500"), dt.datetime(1999, 12, 31, 23, 59, 59, 999000),
     dt.date(1970, 1, 1), [], [], {}, False, '[1, "x", null]', (2, "w")),
    (3, None, None, None, None, None, None, None, None, None, None, None, None, None),
    (4, "  padded  ", 42, -1, 3.0, Decimal("100.000"), dt.datetime(2000, 1, 1), dt.date(2000, 1, 1), [5], ["z"],
     {"c": 7}, None, '"text"', (4, "y")),
    (5, "", 255, 86400, 1e10, Decimal("0.001"), dt.datetime(2024, 6, 15, 8, 0, 0, 500000), dt.date(2024, 6, 15),
     [2, 9, 4], ["b", "a", "b"], {"a": 10}, True, "not json", (5, "")),
]


class Api:
    """The names a case uses, from ``pyflink.table`` or ``kindling.table`` (``flavour``)."""

    def __init__(self, flavour: str) -> None:
        table = importlib.import_module(f"{flavour}.table")
        self.E = importlib.import_module(f"{flavour}.table.expressions")
        enums = importlib.import_module(f"{flavour}.table.expression" if flavour == "pyflink" else f"{flavour}.table.expressions")
        self.DataTypes = table.DataTypes
        self.EnvironmentSettings = table.EnvironmentSettings
        self.TableEnvironment = table.TableEnvironment
        self.Over = importlib.import_module(f"{flavour}.table.window").Over
        for name in ("TimeIntervalUnit", "TimePointUnit", "JsonType", "JsonExistsOnError", "JsonOnNull"):
            setattr(self, name, getattr(enums, name))
        self.col, self.lit = self.E.col, self.E.lit

    def schema(self) -> Any:
        T, f = self.DataTypes, self.DataTypes.FIELD
        return T.ROW([f("id", T.INT()), f("s", T.STRING()), f("n", T.INT()), f("big", T.BIGINT()), f("d", T.DOUBLE()),
                      f("dec", T.DECIMAL(10, 3)), f("ts", T.TIMESTAMP(3)), f("dt", T.DATE()), f("arr", T.ARRAY(T.INT())),
                      f("sa", T.ARRAY(T.STRING())), f("m", T.MAP(T.STRING(), T.INT())), f("b", T.BOOLEAN()),
                      f("j", T.STRING()), f("r", T.ROW([f("x", T.INT()), f("y", T.STRING())]))])

    def t_env(self) -> Any:
        t_env = self.TableEnvironment.create(self.EnvironmentSettings.in_batch_mode())
        t_env.get_config().set("table.local-time-zone", "UTC")
        t_env.get_config().set("parallelism.default", "1")
        return t_env

    def table(self, t_env: Any) -> Any:
        return t_env.from_elements(ROWS, self.schema())


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # scalar | aggregate | table
    build: Callable[..., Any]  # (api) -> Expression, or for a table case (api, table) -> Table


def _scalars(a: Api) -> dict[str, Callable[[], Any]]:
    col, lit, E, T = a.col, a.lit, a.E, a.DataTypes
    s, n, d, dec, ts, date, arr, sa, m, b, j = (col(c) for c in ("s", "n", "d", "dec", "ts", "dt", "arr", "sa", "m", "b", "j"))
    url = lit("http://user@flink.apache.org:8080/path/p.html?query=1&k=v#ref")
    TIU, TPU = a.TimeIntervalUnit, a.TimePointUnit
    return {
        # arithmetic
        "exp": lambda: d.exp, "log10": lambda: d.log10, "log2": lambda: d.log2, "ln": lambda: d.ln, "log": lambda: d.log(),
        "log-base": lambda: lit(8).log(2), "log-base-column": lambda: d.log(10), "cosh": lambda: d.cosh, "sinh": lambda: d.sinh,
        "sin": lambda: d.sin, "cos": lambda: d.cos, "tan": lambda: d.tan, "cot": lambda: d.cot, "asin": lambda: d.asin,
        "acos": lambda: d.acos, "atan": lambda: d.atan, "tanh": lambda: d.tanh, "degrees": lambda: d.degrees,
        "radians": lambda: d.radians, "sqrt": lambda: d.sqrt, "sign-int": lambda: n.sign, "sign-double": lambda: d.sign,
        "sign-decimal": lambda: dec.sign, "bin": lambda: n.bin, "hex-int": lambda: n.hex, "hex-string": lambda: s.hex,
        "unhex": lambda: lit("414243").unhex, "unhex-odd": lambda: lit("141").unhex, "unhex-invalid": lambda: lit("zz").unhex,
        "truncate-default": lambda: dec.truncate(), "truncate-2": lambda: dec.truncate(2), "truncate-negative": lambda: n.truncate(-1),
        "truncate-double": lambda: d.truncate(1),
        # strings
        "starts-with": lambda: s.starts_with("He"), "starts-with-empty": lambda: s.starts_with(""),
        "ends-with": lambda: s.ends_with("ld"), "substr": lambda: s.substr(2), "substr-length": lambda: s.substr(2, 3),
        "trim-leading": lambda: s.trim_leading(), "trim-leading-char": lambda: s.trim_leading("H"),
        "trim-trailing": lambda: s.trim_trailing(), "trim-trailing-char": lambda: s.trim_trailing("d"),
        "trim": lambda: s.trim(), "trim-char": lambda: s.trim("H"), "replace": lambda: s.replace("l", "L"),
        "translate": lambda: s.translate("lo", "0"), "init-cap": lambda: s.init_cap, "similar": lambda: s.similar("H%"),
        "position": lambda: lit("o").position(s), "lpad": lambda: s.lpad(13, "*-"), "lpad-short": lambda: s.lpad(2, "*"),
        "rpad": lambda: s.rpad(13, "*-"), "overlay": lambda: s.overlay("XX", 2), "overlay-length": lambda: s.overlay("XX", 2, 4),
        "regexp": lambda: s.regexp("l+"), "regexp-count": lambda: s.regexp_count("l"),
        "regexp-replace": lambda: s.regexp_replace("[aeiou]", "_"), "regexp-extract": lambda: s.regexp_extract("l+"),
        "regexp-extract-group": lambda: s.regexp_extract("(\\w+) (\\w+)", 2),
        "regexp-extract-all": lambda: s.regexp_extract_all("l+"), "regexp-extract-all-group": lambda: s.regexp_extract_all("(l)(o)", 2),
        "regexp-instr": lambda: s.regexp_instr("o"), "regexp-substr": lambda: s.regexp_substr("o."),
        "from-base64": lambda: lit("SGVsbG8=").from_base64, "to-base64": lambda: s.to_base64, "ascii": lambda: s.ascii.cast(T.BIGINT()),
        "chr": lambda: n.chr.cast(T.STRING()), "encode": lambda: s.encode("UTF-8"), "decode": lambda: s.encode("UTF-8").decode("UTF-8"),
        "left": lambda: s.left(3), "left-negative": lambda: s.left(-1), "right": lambda: s.right(3), "instr": lambda: s.instr("o"),
        "locate": lambda: s.locate("o"), "locate-from": lambda: s.locate("o", 6), "url-decode": lambda: lit("a%20b%2Bc+d").url_decode(),
        "url-decode-invalid": lambda: lit("%zz").url_decode(), "url-encode": lambda: s.url_encode(),
        "inet-aton": lambda: lit("127.0.0.1").inet_aton(), "inet-aton-short": lambda: lit("127.1").inet_aton(),
        "inet-aton-invalid": lambda: lit("256.1.1.1").inet_aton(), "inet-ntoa": lambda: lit(2130706433).inet_ntoa(),
        "inet-ntoa-column": lambda: n.inet_ntoa(), "parse-url-host": lambda: url.parse_url("HOST"),
        "parse-url-query-key": lambda: url.parse_url("QUERY", "k"), "parse-url-column": lambda: s.parse_url("HOST"),
        "printf": lambda: lit("%s=%d").printf(s, n), "ltrim": lambda: s.ltrim(), "ltrim-chars": lambda: s.ltrim(" H"),
        "rtrim": lambda: s.rtrim(), "btrim": lambda: s.btrim(), "btrim-chars": lambda: s.btrim(" d"), "repeat": lambda: s.repeat(2),
        "repeat-column": lambda: lit("ab").repeat(n), "reverse": lambda: s.reverse, "split-index": lambda: s.split_index(" ", 1),
        "str-to-map": lambda: lit("a=1,b=2").str_to_map(), "str-to-map-delimiters": lambda: lit("a:1;b:2").str_to_map(";", ":"),
        "elt": lambda: col("id").elt(s, "two", "three"), "concat-method": lambda: s.concat("!"),
        # time
        "to-date": lambda: lit("2024-03-01").to_date, "to-date-invalid": lambda: s.to_date, "to-time": lambda: lit("3:30:00").to_time,
        "to-timestamp": lambda: lit("2016-06-15 3:30:00.001").to_timestamp, "extract-year": lambda: ts.extract(TIU.YEAR),
        "extract-day-of-date": lambda: date.extract(TIU.DAY), "extract-hour": lambda: ts.extract(TIU.HOUR),
        "extract-quarter": lambda: date.extract(TIU.QUARTER), "extract-week": lambda: date.extract(TIU.WEEK),
        "plus-year": lambda: date + lit(1).year, "plus-years": lambda: date + lit(2).years, "plus-quarter": lambda: ts + lit(1).quarter,
        "plus-quarters": lambda: date + lit(2).quarters, "plus-month": lambda: date + lit(1).month, "plus-months": lambda: ts + lit(13).months,
        "minus-week": lambda: ts - lit(1).week, "plus-weeks": lambda: date + lit(2).weeks,
        "proctime": lambda: ts.proctime,
        # collections
        "get-name": lambda: col("r").get("x"), "get-index": lambda: col("r").get(1), "flatten": lambda: col("r").flatten,
        "at-array": lambda: arr.at(1), "at-array-beyond": lambda: arr.at(10), "at-map": lambda: m.at("a"), "getitem": lambda: arr[2],
        "cardinality-array": lambda: arr.cardinality, "cardinality-map": lambda: m.cardinality, "element": lambda: arr.element,
        "element-single": lambda: arr.array_slice(1, 1).element, "array-append": lambda: arr.array_append(7),
        "array-contains": lambda: arr.array_contains(3), "array-contains-null": lambda: arr.array_contains(E.null_of(T.INT())),
        "array-distinct": lambda: arr.array_distinct(), "array-position": lambda: arr.array_position(3),
        "array-prepend": lambda: arr.array_prepend(0), "array-remove": lambda: arr.array_remove(3),
        "array-reverse": lambda: arr.array_reverse(), "array-slice": lambda: arr.array_slice(2),
        "array-slice-negative": lambda: arr.array_slice(-2, -1), "array-slice-zero": lambda: arr.array_slice(0, 2),
        "array-sort": lambda: arr.array_sort(), "array-sort-true": lambda: arr.array_sort(True),
        "array-sort-false": lambda: arr.array_sort(False), "array-sort-nulls-first": lambda: arr.array_sort(False, True),
        "array-union": lambda: arr.array_union(E.array(1, 9)), "array-concat": lambda: E.array(7).array_concat(arr, E.array(8)),
        "array-max": lambda: arr.array_max(), "array-min": lambda: arr.array_min(), "array-join": lambda: sa.array_join(", "),
        "array-join-null": lambda: E.array("a", E.null_of(T.STRING()), s).array_join(", ", "NULL"),
        "array-join-skip-null": lambda: E.array("a", E.null_of(T.STRING()), s).array_join("+"),
        "array-sort-null": lambda: E.array(n, E.null_of(T.INT()), col("id")).array_sort(),
        "array-sort-null-desc": lambda: E.array(n, E.null_of(T.INT()), col("id")).array_sort(False),
        "array-sort-null-last": lambda: E.array(n, E.null_of(T.INT()), col("id")).array_sort(True, False),
        "array-position-null": lambda: E.array(n, E.null_of(T.INT())).array_position(E.null_of(T.INT())),
        "array-contains-null-element": lambda: E.array(n, E.null_of(T.INT())).array_contains(E.null_of(T.INT())),
        "array-distinct-null": lambda: E.array(n, E.null_of(T.INT()), n, E.null_of(T.INT())).array_distinct(),
        "array-max-null": lambda: E.array(n, E.null_of(T.INT()), col("id")).array_max(), "array-except": lambda: arr.array_except(E.array(3)),
        "array-intersect": lambda: arr.array_intersect(E.array(3, 5, 9)), "split": lambda: s.split(" "),
        "split-empty": lambda: s.split(""), "map-keys": lambda: m.map_keys, "map-values": lambda: m.map_values,
        "map-entries": lambda: m.map_entries, "map-union": lambda: m.map_union(E.map_("a", 99)),
        # hashes
        "md5": lambda: s.md5, "sha1": lambda: s.sha1, "sha224": lambda: s.sha224, "sha256": lambda: s.sha256,
        "sha384": lambda: s.sha384, "sha512": lambda: s.sha512, "sha2": lambda: s.sha2(256), "sha2-224": lambda: s.sha2(224),
        # predicates and JSON
        "is-not-true": lambda: b.is_not_true, "is-not-false": lambda: b.is_not_false, "is-json": lambda: j.is_json(),
        "is-json-scalar": lambda: j.is_json(a.JsonType.SCALAR), "is-json-array": lambda: j.is_json(a.JsonType.ARRAY),
        "is-json-object": lambda: j.is_json(a.JsonType.OBJECT), "json-exists": lambda: j.json_exists("$.a"),
        "json-exists-strict": lambda: j.json_exists("strict $.x", a.JsonExistsOnError.TRUE), "json-quote": lambda: s.json_quote(),
        "json-unquote": lambda: lit('"a\\tb\\u00e9"').json_unquote(), "json-unquote-column": lambda: j.json_unquote(),
        "object-update": lambda: E.object_of("com.example.User", "name", "Bob", "age", 25).object_update("name", "Alice"),
        # bitmaps
        "bitmap-build": lambda: arr.bitmap_build().bitmap_to_string(), "bitmap-cardinality": lambda: arr.bitmap_build().bitmap_cardinality(),
        "bitmap-to-array": lambda: arr.bitmap_build().bitmap_to_array(),
        "bitmap-and": lambda: arr.bitmap_build().bitmap_and(E.array(3, 9).bitmap_build()).bitmap_to_array(),
        "bitmap-or": lambda: arr.bitmap_build().bitmap_or(E.array(3, 9).bitmap_build()).bitmap_to_array(),
        "bitmap-xor": lambda: arr.bitmap_build().bitmap_xor(E.array(3, 9).bitmap_build()).bitmap_to_array(),
        "bitmap-andnot": lambda: arr.bitmap_build().bitmap_andnot(E.array(3, 9).bitmap_build()).bitmap_to_array(),
        "bitmap-bytes": lambda: arr.bitmap_build().bitmap_to_bytes().bitmap_from_bytes().bitmap_to_array(),
        # functions of pyflink.table.expressions
        "atan2": lambda: E.atan2(d, 1.0), "coalesce": lambda: E.coalesce(n, col("id")), "coalesce-literal": lambda: E.coalesce(s, "none"),
        "concat-ws": lambda: E.concat_ws("-", s, "x", n.cast(T.STRING())),
        "convert-tz": lambda: E.convert_tz(lit("1970-01-01 00:00:00"), "UTC", "America/Los_Angeles"),
        "current-database": lambda: E.current_database(), "current-time": lambda: E.current_time().is_not_null,
        "current-watermark": lambda: E.current_watermark(ts), "date-format": lambda: E.date_format(ts, "yyyy-MM-dd HH:mm"),
        "date-format-date": lambda: E.date_format(date, "dd/MM/yyyy"), "e": lambda: E.e(), "pi": lambda: E.pi(),
        "from-unixtime": lambda: E.from_unixtime(col("big")), "from-unixtime-format": lambda: E.from_unixtime(col("big"), "yyyy/MM/dd HH:mm"),
        "json-array": lambda: E.json_array(a.JsonOnNull.NULL, 1, "2", n), "json-array-absent": lambda: E.json_array(a.JsonOnNull.ABSENT, n, s),
        "json-array-default": lambda: E.json_array(), "json-object": lambda: E.json_object(a.JsonOnNull.NULL, "k", s, "n", n),
        "json-object-absent": lambda: E.json_object(a.JsonOnNull.ABSENT, "k", s), "json-object-default": lambda: E.json_object(),
        "json-nested": lambda: E.json_object(a.JsonOnNull.NULL, "raw", E.json('{"v": 42}'), "arr", E.json_array(a.JsonOnNull.NULL, n)),
        "json-string": lambda: E.json_string(s), "json-string-array": lambda: E.json_string(arr), "json-string-int": lambda: E.json_string(n),
        "local-time": lambda: E.local_time().is_not_null, "local-timestamp": lambda: E.local_timestamp().is_not_null,
        "log-function": lambda: E.log(d), "log-function-base": lambda: E.log(8, 2),
        "map-from-arrays": lambda: E.map_from_arrays(E.array("a", "b"), E.array(1, 2)), "negative": lambda: E.negative(n),
        "negative-double": lambda: E.negative(d), "null-of": lambda: E.null_of(T.INT()),
        "object-of": lambda: E.object_of("com.example.User", "name", s, "age", n), "rand-range": lambda: E.rand().between(0, 1),
        "rand-seed": lambda: E.rand(42), "rand-integer-range": lambda: E.rand_integer(10).between(0, 9),
        "rand-integer-seed": lambda: E.rand_integer(10, 42), "source-watermark": lambda: E.source_watermark(),
        "temporal-overlaps": lambda: E.temporal_overlaps(lit("2024-01-01 02:55:00").to_timestamp, lit(1).hours,
                                                         lit("2024-01-01 03:30:00").to_timestamp, lit(2).hours),
        "temporal-overlaps-dates": lambda: E.temporal_overlaps(date, lit(10).days, lit("2000-01-05").to_date, lit(1).days),
        "temporal-overlaps-columns": lambda: E.temporal_overlaps(ts, lit(2).hours, ts + lit(1).hours, lit(1).days),
        "timestamp-diff-day": lambda: E.timestamp_diff(TPU.DAY, date, lit("2024-03-01").to_date),
        "timestamp-diff-hour": lambda: E.timestamp_diff(TPU.HOUR, ts, lit("2024-03-01 00:00:00").to_timestamp),
        "timestamp-diff-month": lambda: E.timestamp_diff(TPU.MONTH, ts, lit("2024-03-01 00:00:00").to_timestamp),
        "to-date-function": lambda: E.to_date(lit("2024-03-01")), "to-date-format": lambda: E.to_date(lit("01/03/2024"), "dd/MM/yyyy"),
        "to-date-column": lambda: E.to_date(s), "to-timestamp-function": lambda: E.to_timestamp(lit("2024-03-01 10:00:00")),
        "to-timestamp-format": lambda: E.to_timestamp(lit("01/03/2024 10"), "dd/MM/yyyy HH"),
        "to-timestamp-ltz-millis": lambda: E.to_timestamp_ltz(col("big")).cast(T.TIMESTAMP(3)),
        "to-timestamp-ltz-seconds": lambda: E.to_timestamp_ltz(col("big"), 0).cast(T.TIMESTAMP(3)),
        "to-timestamp-ltz-string": lambda: E.to_timestamp_ltz(lit("2023-01-01 00:00:00")).cast(T.TIMESTAMP(3)),
        "to-timestamp-ltz-format": lambda: E.to_timestamp_ltz(lit("01/01/2023"), "MM/dd/yyyy").cast(T.TIMESTAMP(3)),
        "to-timestamp-ltz-zone": lambda: E.to_timestamp_ltz(lit("2023-01-01 00:00:00"), "yyyy-MM-dd HH:mm:ss", "Asia/Shanghai").cast(T.TIMESTAMP(3)),
        "unix-timestamp-now": lambda: E.unix_timestamp().is_not_null, "unix-timestamp": lambda: E.unix_timestamp(lit("2024-01-01 00:00:00")),
        "unix-timestamp-format": lambda: E.unix_timestamp(lit("2024/01/02"), "yyyy/MM/dd"), "uuid": lambda: E.uuid().char_length,
        "lag-without-over": lambda: E.lag(n),
    }


def _aggregates(a: Api) -> dict[str, Callable[[], Any]]:
    col, E, T = a.col, a.E, a.DataTypes
    s, n, d = col("s"), col("n"), col("d")
    key = col("id").cast(T.STRING())
    return {
        "first-value": lambda: n.first_value, "last-value": lambda: n.last_value, "list-agg": lambda: s.list_agg(),
        "list-agg-separator": lambda: s.list_agg("|"), "stddev-pop": lambda: d.stddev_pop, "stddev-samp": lambda: d.stddev_samp,
        "var-pop": lambda: n.var_pop, "var-samp": lambda: n.var_samp, "collect": lambda: n.collect, "array-agg": lambda: col("id").array_agg,
        "array-agg-nulls": lambda: n.array_agg.cardinality,
        "percentile": lambda: n.percentile(0.5), "percentile-frequency": lambda: n.percentile(0.25, col("id")),
        "json-array-agg": lambda: E.json_array_agg(a.JsonOnNull.NULL, n), "json-array-agg-absent": lambda: E.json_array_agg(a.JsonOnNull.ABSENT, n),
        "json-object-agg": lambda: E.json_object_agg(a.JsonOnNull.ABSENT, key, n),
        "bitmap-build-agg": lambda: n.bitmap_build_agg().bitmap_to_string(),
        "bitmap-build-cardinality-agg": lambda: n.bitmap_build_cardinality_agg(),
        "bitmap-or-agg": lambda: col("arr").bitmap_build().bitmap_or_agg().bitmap_to_string(),
        "bitmap-and-agg": lambda: col("arr").bitmap_build().bitmap_and_agg().bitmap_to_string(),
        "bitmap-xor-agg": lambda: col("arr").bitmap_build().bitmap_xor_agg().bitmap_to_string(),
        "bitmap-or-cardinality-agg": lambda: col("arr").bitmap_build().bitmap_or_cardinality_agg(),
        "bitmap-and-cardinality-agg": lambda: col("arr").bitmap_build().bitmap_and_cardinality_agg(),
        "bitmap-xor-cardinality-agg": lambda: col("arr").bitmap_build().bitmap_xor_cardinality_agg(),
    }


def _tables(a: Api) -> dict[str, Callable[[Any], Any]]:
    """Column ranges. (LAG/LEAD need an OVER window, which PyFlink's Table API orders by a time attribute only.)"""
    col, E = a.col, a.E
    return {
        "with-all-columns": lambda t: t.select(E.with_all_columns()).select(col("id"), col("s")),
        "with-columns-range": lambda t: t.select(E.with_columns(E.range_("s", "big"))),
        "with-columns-index": lambda t: t.select(E.with_columns(E.range_(1, 2))),
        "without-columns": lambda t: t.select(E.without_columns(E.range_("big", "r"))),
    }


def cases(a: Api) -> list[Case]:
    """Every case, in a fixed order."""
    scalar = [Case(name, "scalar", build) for name, build in _scalars(a).items()]
    aggregate = [Case(name, "aggregate", build) for name, build in _aggregates(a).items()]
    table = [Case(name, "table", build) for name, build in _tables(a).items()]
    return scalar + aggregate + table


def text(value: Any) -> str:
    """A value as deterministic text on both sides: strings quoted, maps sorted by key, NULL as NULL."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (bytes, bytearray)):
        return "x'" + bytes(value).hex() + "'"
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return "{" + ", ".join(sorted(f"{text(k)}={text(v)}" for k, v in value.items())) + "}"
    if hasattr(value, "_values"):  # a Row
        return "(" + ", ".join(text(v) for v in value._values) + ")"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(text(v) for v in value) + "]"
    return f"{type(value).__name__}:{value}"


def column_type(schema_text: str, column: str) -> str | None:
    """A column's type from a resolved schema as Flink prints it (``(\\n  `v` DOUBLE\\n)``)."""
    for line in schema_text.splitlines():
        line = line.strip().rstrip(",")
        if line.startswith(f"`{column}` "):
            return line[len(column) + 3:]
    return None


def rows_of(kind: str, rows: list[Any]) -> list[str]:
    """The result rows as text, in a fixed order: by id for scalar cases, sorted for table cases."""
    if kind == "scalar":
        return [text(r[1]) for r in sorted(rows, key=lambda r: r[0])]
    if kind == "aggregate":
        return [text(r[0]) for r in rows]
    return sorted(text(r) for r in rows)

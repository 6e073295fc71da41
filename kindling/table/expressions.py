"""PyFlink's Table API expressions (``col``, ``lit``, ``call``, ...), each one a piece of Flink SQL.

The Table API and SQL share one planner: an expression renders to the Flink SQL text it stands for
(``col('price').sum`` is ``SUM(`price`)``, ``lit(5).seconds`` is ``INTERVAL '5' SECOND``), and a
Table's operations compose queries of those texts, which the SQL session plans.

>>> str(col("price") * 2 > lit(10))
'((`price` * 2) > 10)'
>>> str(col("price").sum.alias("total"))
'SUM(`price`) AS `total`'

As in PyFlink, an attribute an expression does not have reads a field of a ROW (``col('r').x`` is
``col('r').get('x')``); so an expression's own state lives in private attributes only.
"""

from __future__ import annotations

import datetime as dt
import inspect
import re
from decimal import Decimal
from enum import Enum
from typing import Any, Optional

from kindling.table.pyflink_members import PYFLINK_EXPRESSION_MEMBERS
from kindling.table.types import DataType, _quote


class TimeIntervalUnit(Enum):
    """Units for ``floor``/``ceil`` of a time (PyFlink's ``TimeIntervalUnit``)."""

    YEAR = "YEAR"
    QUARTER = "QUARTER"
    MONTH = "MONTH"
    WEEK = "WEEK"
    DAY = "DAY"
    HOUR = "HOUR"
    MINUTE = "MINUTE"
    SECOND = "SECOND"


class TimePointUnit(Enum):
    """Units of ``timestamp_diff`` (PyFlink's ``TimePointUnit``)."""

    YEAR = "YEAR"
    MONTH = "MONTH"
    DAY = "DAY"
    HOUR = "HOUR"
    MINUTE = "MINUTE"
    SECOND = "SECOND"
    QUARTER = "QUARTER"
    WEEK = "WEEK"
    MILLISECOND = "MILLISECOND"
    MICROSECOND = "MICROSECOND"


class JsonType(Enum):
    """The kinds of JSON ``is_json`` tests for (``x IS JSON SCALAR``)."""

    VALUE = "VALUE"
    SCALAR = "SCALAR"
    ARRAY = "ARRAY"
    OBJECT = "OBJECT"


class JsonExistsOnError(Enum):
    """What ``json_exists`` gives on an error (``... TRUE ON ERROR``)."""

    TRUE = "TRUE"
    FALSE = "FALSE"
    UNKNOWN = "UNKNOWN"
    ERROR = "ERROR"


class JsonValueOnEmptyOrError(Enum):
    """``json_value``'s behaviour on an empty result or an error."""

    NULL = "NULL"
    ERROR = "ERROR"
    DEFAULT = "DEFAULT"


class JsonQueryWrapper(Enum):
    """Whether ``json_query`` wraps its result in an array."""

    WITHOUT_ARRAY = "WITHOUT ARRAY"
    CONDITIONAL_ARRAY = "WITH CONDITIONAL ARRAY"
    UNCONDITIONAL_ARRAY = "WITH UNCONDITIONAL ARRAY"


class JsonQueryOnEmptyOrError(Enum):
    """``json_query``'s behaviour on an empty result or an error."""

    NULL = "NULL"
    EMPTY_ARRAY = "EMPTY ARRAY"
    EMPTY_OBJECT = "EMPTY OBJECT"
    ERROR = "ERROR"


class JsonOnNull(Enum):
    """What ``json_object``/``json_array`` (and their aggregates) do with a NULL value (``NULL ON NULL``)."""

    NULL = "NULL"
    ABSENT = "ABSENT"


# A window property (``col('w').start``) before the group window it belongs to is known.
WINDOW_PROPERTY = "\x00{alias}:{property}\x00"


class Expression:
    """A Flink SQL expression, with the Python functions (``@udf``) it calls."""

    _is_table_expression = True  # how kindling.sql's function wrappers tell an expression argument

    def __init__(self, sql: str, functions: Optional[dict[str, Any]] = None, name: Optional[str] = None) -> None:
        self._sql = sql
        self._functions: dict[str, Any] = dict(functions or {})
        self._output_name = name  # the column it reads, when it is a bare column (``col('a')``), or its alias
        self._call_sql: str = sql  # the expression without its alias
        self._alias_names: list[str] = []
        # Unaliased in a projection, the Table API names a column's CAST '<column>-<type>' (n-STRING), a field r$x;
        # others _c<i>
        self._projection_name: Optional[str] = None
        self._field_path: Optional[str] = None  # a field access's column path, as Flink names it (r$x)

    def _derive(self, sql: str, *others: Any) -> "Expression":
        functions = dict(self._functions)
        for other in others:
            if isinstance(other, Expression):
                functions.update(other._functions)
        return Expression(sql, functions)

    def _call(self, function: str, *args: Any) -> "Expression":
        """``FUNCTION(x, args...)``: the Flink SQL call a method of ``x`` stands for."""
        return self._derive(f"{function}({', '.join([self._sql, *(_sql_of(a) for a in args)])})", *args)

    def _binary(self, operator: str, other: Any, reverse: bool = False) -> "Expression":
        right = _sql_of(other)
        text = f"({right} {operator} {self._sql})" if reverse else f"({self._sql} {operator} {right})"
        return self._derive(text, other)

    # --- operators -------------------------------------------------------------------------
    def __add__(self, other: Any) -> "Expression":
        return self._binary("+", other)

    def __radd__(self, other: Any) -> "Expression":
        return self._binary("+", other, reverse=True)

    def __sub__(self, other: Any) -> "Expression":
        return self._binary("-", other)

    def __rsub__(self, other: Any) -> "Expression":
        return self._binary("-", other, reverse=True)

    def __mul__(self, other: Any) -> "Expression":
        return self._binary("*", other)

    def __rmul__(self, other: Any) -> "Expression":
        return self._binary("*", other, reverse=True)

    def __truediv__(self, other: Any) -> "Expression":
        return self._binary("/", other)

    def __rtruediv__(self, other: Any) -> "Expression":
        return self._binary("/", other, reverse=True)

    def __mod__(self, other: Any) -> "Expression":
        return self._derive(f"MOD({self._sql}, {_sql_of(other)})", other)

    def __pow__(self, other: Any) -> "Expression":
        return self._derive(f"POWER({self._sql}, {_sql_of(other)})", other)

    def __rmod__(self, other: Any) -> "Expression":
        return self._derive(f"MOD({_sql_of(other)}, {self._sql})", other)

    def __rpow__(self, other: Any) -> "Expression":
        return self._derive(f"POWER({_sql_of(other)}, {self._sql})", other)

    def __neg__(self) -> "Expression":
        return self._derive(f"(- {self._sql})")

    def __eq__(self, other: Any) -> "Expression":  # type: ignore[override]
        return self._binary("=", other)

    def __ne__(self, other: Any) -> "Expression":  # type: ignore[override]
        return self._binary("<>", other)

    def __lt__(self, other: Any) -> "Expression":
        return self._binary("<", other)

    def __le__(self, other: Any) -> "Expression":
        return self._binary("<=", other)

    def __gt__(self, other: Any) -> "Expression":
        return self._binary(">", other)

    def __ge__(self, other: Any) -> "Expression":
        return self._binary(">=", other)

    def __and__(self, other: Any) -> "Expression":
        return self._binary("AND", other)

    def __or__(self, other: Any) -> "Expression":
        return self._binary("OR", other)

    def __rand__(self, other: Any) -> "Expression":
        return self._binary("AND", other, reverse=True)

    def __ror__(self, other: Any) -> "Expression":
        return self._binary("OR", other, reverse=True)

    def __invert__(self) -> "Expression":
        """``~x`` is ``x IS NOT TRUE`` in PyFlink (TRUE for NULL, so ``where(~x)`` keeps NULL rows); ``not_(x)`` keeps
        NULL."""
        return self._derive(f"({self._sql} IS NOT TRUE)")

    __hash__ = object.__hash__

    def __iter__(self) -> Any:
        # x[i] (__getitem__, an element of an array) would otherwise make any expression an endless iterable
        raise TypeError("a Table API expression is not iterable: pass its columns one by one")

    def __bool__(self) -> bool:
        raise TypeError("a Table API expression has no truth value: combine conditions with & | ~, not and/or/not")

    def __str__(self) -> str:
        return self._sql

    def __repr__(self) -> str:
        return f"Expression({self._sql!r})"

    def __getattr__(self, name: str) -> Any:
        """A field of this ROW: ``col('r').x`` is ``col('r').get('x')``, as in PyFlink (whose ``__getattr__`` calls
        ``get``). A private or special name is no field (copying, pickling and ``hasattr`` probe those), and a name of
        PyFlink's own Expression API that kindling lacks is refused rather than read as a field."""
        if name.startswith("_"):
            raise AttributeError(name)
        if name in PYFLINK_EXPRESSION_MEMBERS:
            raise AttributeError(f"the Table API expression method or property '{name}' is not supported by kindling; "
                                 f"call_sql('...') writes any Flink SQL expression")
        return self.get(name)

    # --- naming and types ------------------------------------------------------------------
    def alias(self, name: str, *extra_names: str) -> "Expression":
        """A name for the value; several names for the columns of a table function's rows (``join_lateral``)."""
        aliased = Expression(f"{self._sql} AS {_quote(name)}", self._functions, name)
        aliased._call_sql, aliased._alias_names = self._sql, [name, *extra_names]
        return aliased

    def cast(self, data_type: DataType | str) -> "Expression":
        cast = self._derive(f"CAST({self._sql} AS {data_type})")
        column = self._column_path()
        if column is not None:
            cast._projection_name = f"{column}-{data_type}"
        return cast

    def _column_path(self) -> Optional[str]:
        """What Flink names a column's derived fields after: a bare column's name (``r``) or a field's path (``r$x``);
        None for any other expression."""
        if self._output_name not in (None, "*") and not self._alias_names:
            return self._output_name
        return self._field_path

    def as_argument(self, name: str) -> "Expression":
        """This value as the named argument ``name`` of a function call (``name => value``): ``to_changelog``'s
        ``op`` and ``op_mapping``."""
        return self._derive(f"{name} => {self._sql}")

    def try_cast(self, data_type: DataType | str) -> "Expression":
        return self._derive(f"TRY_CAST({self._sql} AS {data_type})")

    # --- ordering (order_by) ---------------------------------------------------------------
    @property
    def asc(self) -> "Expression":
        return self._derive(f"{self._sql} ASC")

    @property
    def desc(self) -> "Expression":
        return self._derive(f"{self._sql} DESC")

    # --- aggregates (properties, as in PyFlink) --------------------------------------------
    @property
    def sum(self) -> "Expression":
        return self._derive(f"SUM({self._sql})")

    @property
    def sum0(self) -> "Expression":
        return self._derive(f"COALESCE(SUM({self._sql}), 0)")

    @property
    def count(self) -> "Expression":
        return self._derive(f"COUNT({self._sql})")

    @property
    def avg(self) -> "Expression":
        return self._derive(f"AVG({self._sql})")

    @property
    def min(self) -> "Expression":
        return self._derive(f"MIN({self._sql})")

    @property
    def max(self) -> "Expression":
        return self._derive(f"MAX({self._sql})")

    @property
    def distinct(self) -> "Expression":
        inner = self._sql
        for aggregate in ("SUM(", "COUNT(", "AVG(", "MIN(", "MAX("):
            if inner.startswith(aggregate):
                return self._derive(f"{aggregate}DISTINCT {inner[len(aggregate):]}")
        return self._derive(f"DISTINCT {inner}")

    def over(self, alias: Any) -> "Expression":
        """This aggregate over an OVER window of ``over_window`` (``col('v').sum.over(col('w'))``)."""
        return self._derive(f"{self._sql} OVER {_sql_of(alias)}")

    # --- predicates -------------------------------------------------------------------------
    @property
    def is_null(self) -> "Expression":
        return self._derive(f"({self._sql} IS NULL)")

    @property
    def is_not_null(self) -> "Expression":
        return self._derive(f"({self._sql} IS NOT NULL)")

    @property
    def is_true(self) -> "Expression":
        return self._derive(f"({self._sql} IS TRUE)")

    @property
    def is_false(self) -> "Expression":
        return self._derive(f"({self._sql} IS FALSE)")

    @property
    def is_not_true(self) -> "Expression":
        return self._derive(f"({self._sql} IS NOT TRUE)")

    @property
    def is_not_false(self) -> "Expression":
        return self._derive(f"({self._sql} IS NOT FALSE)")

    def between(self, lower: Any, upper: Any) -> "Expression":
        return self._derive(f"({self._sql} BETWEEN {_sql_of(lower)} AND {_sql_of(upper)})", lower, upper)

    def not_between(self, lower: Any, upper: Any) -> "Expression":
        return self._derive(f"({self._sql} NOT BETWEEN {_sql_of(lower)} AND {_sql_of(upper)})", lower, upper)

    def in_(self, *values: Any) -> "Expression":
        return self._derive(f"({self._sql} IN ({', '.join(_sql_of(v) for v in values)}))", *values)

    def like(self, pattern: Any) -> "Expression":
        return self._derive(f"({self._sql} LIKE {_sql_of(pattern)})", pattern)

    def if_null(self, null_replacement: Any) -> "Expression":
        return self._derive(f"IFNULL({self._sql}, {_sql_of(null_replacement)})", null_replacement)

    def then(self, if_true: Any, if_false: Any) -> "Expression":
        return self._derive(f"IF({self._sql}, {_sql_of(if_true)}, {_sql_of(if_false)})", if_true, if_false)

    # --- strings and numbers ------------------------------------------------------------------
    @property
    def upper_case(self) -> "Expression":
        return self._derive(f"UPPER({self._sql})")

    @property
    def lower_case(self) -> "Expression":
        return self._derive(f"LOWER({self._sql})")

    @property
    def char_length(self) -> "Expression":
        return self._derive(f"CHAR_LENGTH({self._sql})")

    def trim(self, character: Any = None) -> "Expression":
        """Leading and trailing spaces (or ``character``) removed: ``TRIM(BOTH c FROM x)``."""
        return self._trimmed("BOTH", character)

    def trim_leading(self, character: Any = None) -> "Expression":
        return self._trimmed("LEADING", character)

    def trim_trailing(self, character: Any = None) -> "Expression":
        return self._trimmed("TRAILING", character)

    def _trimmed(self, side: str, character: Any) -> "Expression":
        return self._derive(f"TRIM({side} {_sql_of(' ' if character is None else character)} FROM {self._sql})", character)

    @property
    def abs(self) -> "Expression":
        return self._derive(f"ABS({self._sql})")

    def substring(self, begin_index: Any, length: Any = None) -> "Expression":
        rest = f", {_sql_of(length)}" if length is not None else ""
        return self._derive(f"SUBSTRING({self._sql}, {_sql_of(begin_index)}{rest})", begin_index, length)

    def floor(self, unit: Optional[TimeIntervalUnit] = None) -> "Expression":
        """``FLOOR(x)``, or with a unit ``FLOOR(ts TO HOUR)``."""
        return self._derive(f"FLOOR({self._sql} TO {unit.value})" if unit is not None else f"FLOOR({self._sql})")

    def ceil(self, unit: Optional[TimeIntervalUnit] = None) -> "Expression":
        """``CEIL(x)``, or with a unit ``CEIL(ts TO HOUR)``."""
        return self._derive(f"CEIL({self._sql} TO {unit.value})" if unit is not None else f"CEIL({self._sql})")

    def round(self, places: Any) -> "Expression":
        return self._derive(f"ROUND({self._sql}, {_sql_of(places)})", places)

    def json_value(self, path: str, returning_type: DataType | str = "STRING", on_empty: Any = None, on_error: Any = None) -> "Expression":
        if on_empty is not None or on_error is not None:
            raise ValueError("json_value: ON EMPTY / ON ERROR behaviours are not supported by kindling (Flink's default: NULL)")
        return self._derive(f"JSON_VALUE({self._sql}, {_sql_of(path)} RETURNING {returning_type})")

    def json_query(self, path: str) -> "Expression":
        return self._derive(f"JSON_QUERY({self._sql}, {_sql_of(path)})")

    def log(self, base: Any = None) -> "Expression":
        """The natural logarithm, or with ``base`` the logarithm to that base: ``LOG(base, x)``."""
        return self._derive(f"LOG({self._sql})") if base is None else _combine(f"LOG({_sql_of(base)}, {self._sql})", base, self)

    def truncate(self, n: Any = 0) -> "Expression":
        """The number cut to ``n`` decimal places (left of the point for a negative ``n``): ``TRUNCATE(x, n)``."""
        return self._call("TRUNCATE", n)

    def position(self, haystack: Any = None) -> "Expression":
        """Where this string first occurs in ``haystack``, from 1 (0: nowhere): ``POSITION(x IN haystack)``."""
        return self._derive(f"POSITION({self._sql} IN {_sql_of(haystack)})", haystack)

    def similar(self, pattern: Any = None) -> "Expression":
        """Whether the string matches the SQL regular expression ``pattern``: ``x SIMILAR TO pattern``."""
        return self._derive(f"({self._sql} SIMILAR TO {_sql_of(pattern)})", pattern)

    def overlay(self, new_string: Any, starting: Any, length: Any = None) -> "Expression":
        """``OVERLAY(x PLACING new_string FROM starting [FOR length])``."""
        rest = f" FOR {_sql_of(length)}" if length is not None else ""
        return self._derive(f"OVERLAY({self._sql} PLACING {_sql_of(new_string)} FROM {_sql_of(starting)}{rest})", new_string, starting, length)

    def str_to_map(self, list_delimiter: Any = None, key_value_delimiter: Any = None) -> "Expression":
        """A map parsed from the text (``STR_TO_MAP``); the default delimiters ',' and '=' unless both are given."""
        if list_delimiter is None or key_value_delimiter is None:
            return self._call("STR_TO_MAP")
        return self._call("STR_TO_MAP", list_delimiter, key_value_delimiter)

    def extract(self, time_interval_unit: TimeIntervalUnit) -> "Expression":
        """A part of a time point: ``EXTRACT(unit FROM x)``."""
        return self._derive(f"EXTRACT({time_interval_unit.value} FROM {self._sql})")

    def get(self, name_or_index: Any) -> "Expression":
        """A field of a ROW by name: ``x.name`` (by position, Flink's ``get(i)``, is not supported). Unaliased in a
        projection, a column's field is named by its path, ``r$x`` (``r$s$y`` for a nested one), as Flink names it."""
        if not isinstance(name_or_index, str):
            raise ValueError(f"get({name_or_index!r}): kindling reads a ROW's field by name only (get('name'))")
        field = self._derive(f"{self._sql}.{_quote(name_or_index)}")
        column = self._column_path()
        if column is not None:
            field._field_path = field._projection_name = f"{column}${name_or_index}"
        return field

    def at(self, index: Any) -> "Expression":
        """An array's element (from 1) or a map's value: ``x[index]``."""
        return self._derive(f"{self._sql}[{_sql_of(index)}]", index)

    def __getitem__(self, index: Any) -> "Expression":
        return self.at(index)

    def is_json(self, json_type: Optional[JsonType] = None) -> "Expression":
        """Whether the string is JSON (of ``json_type``): ``x IS JSON [type]``."""
        return self._derive(f"({self._sql} IS JSON{'' if json_type is None else ' ' + json_type.value})")

    def json_exists(self, path: str, on_error: Optional[JsonExistsOnError] = None) -> "Expression":
        """Whether ``path`` finds a value in the JSON string: ``JSON_EXISTS(x, path [... ON ERROR])``."""
        clause = "" if on_error is None else f" {on_error.value} ON ERROR"
        return self._derive(f"JSON_EXISTS({self._sql}, {_sql_of(path)}{clause})")

    @property
    def flatten(self) -> "Expression":
        raise NotImplementedError("Expression.flatten (a composite value as one column per field) is not supported by "
                                  "kindling; select the fields with get('name')")

    @property
    def proctime(self) -> "Expression":
        raise NotImplementedError("Expression.proctime (a processing-time attribute) is not supported by kindling's Table "
                                  "API; declare it in a Schema: Schema.new_builder().column_by_expression('pt', 'PROCTIME()')")

    # --- time -------------------------------------------------------------------------------
    def _interval(self, unit: str, factor: int = 1) -> "Expression":
        """An interval of this many units (``lit(2).years``); ``factor`` of them make one (a quarter is 3 months)."""
        if re.fullmatch(r"-?\d+", self._sql):
            return self._derive(f"INTERVAL '{int(self._sql) * factor}' {unit}")
        return self._derive(f"({self._sql} * INTERVAL '{factor}' {unit})")

    @property
    def year(self) -> "Expression":
        return self._interval("YEAR")

    years = year

    @property
    def quarter(self) -> "Expression":
        return self._interval("MONTH", 3)

    quarters = quarter

    @property
    def month(self) -> "Expression":
        return self._interval("MONTH")

    months = month

    @property
    def week(self) -> "Expression":
        return self._interval("DAY", 7)

    weeks = week

    @property
    def milli(self) -> "Expression":
        return self._interval("MILLISECOND")

    millis = milli

    @property
    def second(self) -> "Expression":
        return self._interval("SECOND")

    seconds = second

    @property
    def minute(self) -> "Expression":
        return self._interval("MINUTE")

    minutes = minute

    @property
    def hour(self) -> "Expression":
        return self._interval("HOUR")

    hours = hour

    @property
    def day(self) -> "Expression":
        return self._interval("DAY")

    days = day

    @property
    def to_date(self) -> "Expression":
        """A 'yyyy-MM-dd' string as a DATE: ``CAST(x AS DATE)``."""
        return self._derive(f"CAST({self._sql} AS DATE)")

    @property
    def to_time(self) -> "Expression":
        """Refused: kindling holds TIME values as strings ('3:30:00'), where PyFlink gives a ``datetime.time``."""
        raise NotImplementedError("Expression.to_time is not supported by kindling: its TIME values are strings, where "
                                  "PyFlink gives datetime.time; to_timestamp or a string column instead")

    @property
    def to_timestamp(self) -> "Expression":
        """A 'yyyy-MM-dd HH:mm:ss[.SSS]' string as a TIMESTAMP: ``CAST(x AS TIMESTAMP(3))``."""
        return self._derive(f"CAST({self._sql} AS TIMESTAMP(3))")

    # --- window properties (col('w').start) ---------------------------------------------------
    @property
    def start(self) -> "Expression":
        return self._derive(WINDOW_PROPERTY.format(alias=self._output_name or self._sql, property="START"))

    @property
    def end(self) -> "Expression":
        return self._derive(WINDOW_PROPERTY.format(alias=self._output_name or self._sql, property="END"))

    @property
    def rowtime(self) -> "Expression":
        return self._derive(WINDOW_PROPERTY.format(alias=self._output_name or self._sql, property="ROWTIME"))


# Properties and methods that stand for one Flink SQL function of the expression and their arguments, as PyFlink's:
# name -> (function, parameters). A parameter 'p=' is optional: left out of the call when None (and with it any after
# it); '*p' takes any number of arguments. A property has no parameters.
_PROPERTIES = {
    "exp": "EXP", "log10": "LOG10", "log2": "LOG2", "ln": "LN", "cosh": "COSH", "sinh": "SINH", "sin": "SIN", "cos": "COS",
    "tan": "TAN", "cot": "COT", "asin": "ASIN", "acos": "ACOS", "atan": "ATAN", "tanh": "TANH", "degrees": "DEGREES",
    "radians": "RADIANS", "sqrt": "SQRT", "sign": "SIGN", "bin": "BIN", "hex": "HEX", "unhex": "UNHEX", "init_cap": "INITCAP",
    "from_base64": "FROM_BASE64", "to_base64": "TO_BASE64", "ascii": "ASCII", "chr": "CHR", "reverse": "REVERSE",
    "cardinality": "CARDINALITY", "element": "ELEMENT", "map_keys": "MAP_KEYS", "map_values": "MAP_VALUES",
    "map_entries": "MAP_ENTRIES", "md5": "MD5", "sha1": "SHA1", "sha224": "SHA224", "sha256": "SHA256", "sha384": "SHA384",
    "sha512": "SHA512", "first_value": "FIRST_VALUE", "last_value": "LAST_VALUE", "stddev_pop": "STDDEV_POP",
    "stddev_samp": "STDDEV_SAMP", "var_pop": "VAR_POP", "var_samp": "VAR_SAMP", "collect": "COLLECT", "array_agg": "ARRAY_AGG",
}
_METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    "concat": ("CONCAT", ("other",)), "percentile": ("PERCENTILE", ("percentage", "frequency=")),
    "list_agg": ("LISTAGG", ("separator=",)), "starts_with": ("STARTSWITH", ("start_expr",)),
    "ends_with": ("ENDSWITH", ("end_expr",)), "substr": ("SUBSTR", ("begin_index", "length=")),
    "replace": ("REPLACE", ("search", "replacement")), "translate": ("TRANSLATE", ("from_str", "to_str")),
    "lpad": ("LPAD", ("length", "pad")), "rpad": ("RPAD", ("length", "pad")), "regexp": ("REGEXP", ("regex",)),
    "regexp_count": ("REGEXP_COUNT", ("regex",)), "regexp_replace": ("REGEXP_REPLACE", ("regex", "replacement")),
    "regexp_extract": ("REGEXP_EXTRACT", ("regex", "extract_index=")),
    "regexp_extract_all": ("REGEXP_EXTRACT_ALL", ("regex", "extract_index=")), "regexp_instr": ("REGEXP_INSTR", ("regex",)),
    "regexp_substr": ("REGEXP_SUBSTR", ("regex",)), "decode": ("DECODE", ("charset",)), "encode": ("ENCODE", ("charset",)),
    "left": ("LEFT", ("length",)), "right": ("RIGHT", ("length",)), "instr": ("INSTR", ("s",)),
    "locate": ("LOCATE", ("s", "pos=")), "url_decode": ("URL_DECODE", ()), "url_encode": ("URL_ENCODE", ()),
    "inet_aton": ("INET_ATON", ()), "inet_ntoa": ("INET_NTOA", ()), "parse_url": ("PARSE_URL", ("part_to_extract", "key=")),
    "printf": ("PRINTF", ("*obj",)), "ltrim": ("LTRIM", ("trim_str=",)), "rtrim": ("RTRIM", ("trim_str=",)),
    "btrim": ("BTRIM", ("trim_str=",)), "repeat": ("REPEAT", ("n",)), "split_index": ("SPLIT_INDEX", ("separator", "index")),
    "elt": ("ELT", ("expr", "*exprs")), "array_append": ("ARRAY_APPEND", ("addition",)),
    "array_contains": ("ARRAY_CONTAINS", ("needle",)),
    "array_position": ("ARRAY_POSITION", ("needle",)), "array_prepend": ("ARRAY_PREPEND", ("addition",)),
    "array_remove": ("ARRAY_REMOVE", ("needle",)),
    "array_union": ("ARRAY_UNION", ("array",)),
    "array_max": ("ARRAY_MAX", ()), "array_min": ("ARRAY_MIN", ()),
    "array_except": ("ARRAY_EXCEPT", ("array",)),
    "array_intersect": ("ARRAY_INTERSECT", ("array",)), "split": ("SPLIT", ("delimiter",)),
    "sha2": ("SHA2", ("hash_length",)), "json_quote": ("JSON_QUOTE", ()),
    "json_unquote": ("JSON_UNQUOTE", ()), "object_update": ("OBJECT_UPDATE", ("*kv",)),
    "bitmap_and": ("BITMAP_AND", ("bitmap2",)), "bitmap_andnot": ("BITMAP_ANDNOT", ("bitmap2",)),
    "bitmap_or": ("BITMAP_OR", ("bitmap2",)), "bitmap_xor": ("BITMAP_XOR", ("bitmap2",)),
    **{f"bitmap_{name}": (f"BITMAP_{name.upper()}", ()) for name in (
        "and_agg", "and_cardinality_agg", "build", "build_agg", "build_cardinality_agg", "cardinality", "from_bytes",
        "or_agg", "or_cardinality_agg", "to_array", "to_bytes", "to_string", "xor_agg", "xor_cardinality_agg")},
}


def _property(function: str) -> property:
    def get(self: Expression) -> Expression:
        return self._call(function)

    return property(get, doc=f"``{function}(x)``.")


def _method(name: str, function: str, parameters: tuple[str, ...]) -> Any:
    """A method taking PyFlink's parameters that renders ``FUNCTION(x, arguments...)``."""
    kinds = inspect.Parameter
    signature = inspect.Signature([kinds("self", kinds.POSITIONAL_OR_KEYWORD)] + [
        kinds(p[1:], kinds.VAR_POSITIONAL) if p.startswith("*")
        else kinds(p.rstrip("="), kinds.POSITIONAL_OR_KEYWORD, **({"default": None} if p.endswith("=") else {}))
        for p in parameters])

    def method(self: Expression, *args: Any, **kwargs: Any) -> Expression:
        bound = signature.bind(self, *args, **kwargs)
        values: list[Any] = []
        for parameter in parameters:
            value = bound.arguments.get(parameter.strip("*="), () if parameter.startswith("*") else None)
            if parameter.endswith("=") and value is None:
                break
            values.extend(value if parameter.startswith("*") else [value])
        return self._call(function, *values)

    method.__name__ = method.__qualname__ = name
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__doc__ = f"``{function}(x{''.join(', ' + p.rstrip('=') for p in parameters)})``."
    return method


# PyFlink 2.3's own wrappers of these fail for any arguments (a Java method of another name, or Java varargs py4j does
# not pass), so a PyFlink program calling them fails; kindling fails the same way, naming the Flink SQL function to
# write with call_sql instead: name -> (function, why PyFlink fails).
PYFLINK_FAILS = {
    "array_distinct": ("ARRAY_DISTINCT", "it passes too few arguments"),
    "array_reverse": ("ARRAY_REVERSE", "it passes too few arguments"),
    "array_slice": ("ARRAY_SLICE", "it calls a Java method array_slice that does not exist"),
    "array_sort": ("ARRAY_SORT", "it calls a Java method array_sort that does not exist"),
    "array_join": ("ARRAY_JOIN", "it calls a Java method array_join that does not exist"),
    "array_concat": ("ARRAY_CONCAT", "py4j does not pass Java varargs"),
    "map_union": ("MAP_UNION", "py4j does not pass Java varargs"),
    "json_object": ("JSON_OBJECT", "py4j does not pass Java varargs"),
    "json_array": ("JSON_ARRAY", "py4j does not pass Java varargs"),
    "object_of": ("OBJECT_OF", "py4j does not pass Java varargs"),
}


def _fails_as_in_pyflink(name: str) -> Any:
    """A function failing as PyFlink's wrapper does, naming Flink SQL's function to call instead where kindling's SQL
    supports it (and saying so where it does not: the functions ``list_functions()`` leaves out)."""
    from kindling.sql.builtin_functions import NOT_LISTED

    function, why = PYFLINK_FAILS[name]
    instead = (f"nor does kindling support Flink SQL's {function}: {NOT_LISTED[function]}" if function in NOT_LISTED
               else f"call_sql('{function}(...)') writes Flink SQL's {function}")

    def fails(*args: Any, **kwargs: Any) -> Expression:
        raise NotImplementedError(f"{name} fails in PyFlink 2.3 ({why}), and so in kindling; {instead}")

    fails.__name__ = fails.__qualname__ = name
    fails.__doc__ = f"Fails, as PyFlink 2.3's does ({why}); {instead}."
    return fails


for _name, _function in _PROPERTIES.items():
    setattr(Expression, _name, _property(_function))
for _name, (_function, _parameters) in _METHODS.items():
    setattr(Expression, _name, _method(_name, _function, _parameters))
for _name in ("array_distinct", "array_reverse", "array_slice", "array_sort", "array_join", "array_concat", "map_union"):
    setattr(Expression, _name, _fails_as_in_pyflink(_name))


def _literal_sql(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float, Decimal)):
        return repr(value) if not isinstance(value, Decimal) else str(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    raise TypeError(f"lit({value!r}): a {type(value).__name__} is not a Flink SQL literal")


def _sql_of(value: Any) -> str:
    return value._sql if isinstance(value, Expression) else _literal_sql(value)


def _combine(text: str, *parts: Any) -> Expression:
    """An expression of ``text`` calling the functions its ``parts`` call."""
    functions: dict[str, Any] = {}
    for part in parts:
        if isinstance(part, Expression):
            functions.update(part._functions)
    return Expression(text, functions)


def col(name: str) -> Expression:
    """A column of the table (``col('price')``); ``col('*')`` is all of them."""
    if name == "*":
        return Expression("*", name="*")
    return Expression(_quote(name), name=name)


def lit(value: Any, data_type: Optional[DataType | str] = None) -> Expression:
    """A literal value; with ``data_type``, cast to it."""
    text = _literal_sql(value)
    if data_type is not None:
        text = f"CAST({text} AS {data_type})"
    return Expression(text)  # a bare number, so that lit(5).seconds is INTERVAL '5' SECOND


class FrameBound(Expression):
    """An OVER window's bound (``UNBOUNDED_RANGE``, ``row_interval(2)``, ``CURRENT_ROW``), written as a frame clause."""

    def __init__(self, sql: str, rows: Optional[bool]) -> None:
        super().__init__(sql)
        self.rows = rows  # ROWS or RANGE; None: the current row, of either


UNBOUNDED_ROW = FrameBound("UNBOUNDED", rows=True)
UNBOUNDED_RANGE = FrameBound("UNBOUNDED", rows=False)
CURRENT_ROW = FrameBound("CURRENT ROW", rows=None)
CURRENT_RANGE = FrameBound("CURRENT ROW", rows=None)


def row_interval(rows: int) -> FrameBound:
    """An OVER window reaching ``rows`` rows back (``.preceding(row_interval(2))``)."""
    if not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
        raise ValueError(f"row_interval takes a number of rows (0 or more), got {rows!r}")
    return FrameBound(str(rows), rows=True)


def call_sql(sql_expression: str) -> Expression:
    """Any Flink SQL expression, as written."""
    return Expression(f"({sql_expression})")


def function_name(f: Any) -> str:
    """The name a Python function object is registered under for the Table API's calls."""
    label = re.sub(r"\W", "_", str(getattr(f, "name", "f")))  # a lambda's name is '<lambda>'
    return f"__kindling_udf_{label}_{id(f):x}"


def call(f: Any, *args: Any) -> Expression:
    """A call of a function by name (a built-in or a registered function) or of a ``@udf`` function."""
    if isinstance(f, str):
        return _combine(f"{f}({', '.join(_sql_of(a) for a in args)})", *args)
    name = function_name(f)
    expression = _combine(f"{name}({', '.join(_sql_of(a) for a in args)})", *args)
    expression._functions[name] = f
    return expression


def and_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression:
    parts = [predicate0, predicate1, *predicates]
    return _combine("(" + " AND ".join(_sql_of(p) for p in parts) + ")", *parts)


def or_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression:
    parts = [predicate0, predicate1, *predicates]
    return _combine("(" + " OR ".join(_sql_of(p) for p in parts) + ")", *parts)


def not_(expression: Any) -> Expression:
    return _combine(f"(NOT {_sql_of(expression)})", expression)


def if_then_else(condition: Any, if_true: Any, if_false: Any) -> Expression:
    text = f"IF({_sql_of(condition)}, {_sql_of(if_true)}, {_sql_of(if_false)})"
    return _combine(text, condition, if_true, if_false)


def concat(first: Any, *others: Any) -> Expression:
    text = f"CONCAT({', '.join(_sql_of(v) for v in (first, *others))})"
    return _combine(text, first, *others)


def current_timestamp() -> Expression:
    return Expression("CURRENT_TIMESTAMP")


def _function(function: str, *args: Any) -> Expression:
    """``FUNCTION(args...)``: the Flink SQL call a function of this module stands for."""
    return _combine(f"{function}({', '.join(_sql_of(a) for a in args)})", *args)


def current_database() -> Expression:
    return Expression("CURRENT_DATABASE()")


def current_time() -> Expression:
    return Expression("CURRENT_TIME")


def local_time() -> Expression:
    return Expression("LOCALTIME")


def local_timestamp() -> Expression:
    return Expression("LOCALTIMESTAMP")


def current_watermark(rowtime_attribute: Any) -> Expression:
    """The current watermark of a rowtime attribute: ``CURRENT_WATERMARK(ts)``."""
    return _function("CURRENT_WATERMARK", rowtime_attribute)


def to_date(date_str: Any, format: Any = None) -> Expression:
    """A date parsed from a string (by default 'yyyy-MM-dd'): ``TO_DATE(s [, format])``."""
    return _function("TO_DATE", date_str, *([] if format is None else [format]))


def to_timestamp(timestamp_str: Any, format: Any = None) -> Expression:
    """A timestamp parsed from a string (by default 'yyyy-MM-dd HH:mm:ss'): ``TO_TIMESTAMP(s [, format])``."""
    return _function("TO_TIMESTAMP", timestamp_str, *([] if format is None else [format]))


def to_timestamp_ltz(*args: Any) -> Expression:
    """A TIMESTAMP_LTZ from epoch units (with a precision) or a string (with a format and time zone)."""
    return _function("TO_TIMESTAMP_LTZ", *args)


def temporal_overlaps(left_time_point: Any, left_temporal: Any, right_time_point: Any, right_temporal: Any) -> Expression:
    """Whether two anchored time intervals overlap: ``(l, l_temporal) OVERLAPS (r, r_temporal)``."""
    parts = (left_time_point, left_temporal, right_time_point, right_temporal)
    text = f"(({_sql_of(parts[0])}, {_sql_of(parts[1])}) OVERLAPS ({_sql_of(parts[2])}, {_sql_of(parts[3])}))"
    return _combine(text, *parts)


def date_format(timestamp: Any, format: Any) -> Expression:
    return _function("DATE_FORMAT", timestamp, format)


def timestamp_diff(time_point_unit: TimePointUnit, time_point1: Any, time_point2: Any) -> Expression:
    """The signed number of units from ``time_point1`` to ``time_point2``: ``TIMESTAMPDIFF(unit, t1, t2)``."""
    return _combine(f"TIMESTAMPDIFF({time_point_unit.value}, {_sql_of(time_point1)}, {_sql_of(time_point2)})", time_point1, time_point2)


def convert_tz(date_str: Any, tz_from: Any, tz_to: Any) -> Expression:
    return _function("CONVERT_TZ", date_str, tz_from, tz_to)


def from_unixtime(unixtime: Any, format: Any = None) -> Expression:
    return _function("FROM_UNIXTIME", unixtime, *([] if format is None else [format]))


def unix_timestamp(date_str: Any = None, format: Any = None) -> Expression:
    """Now in epoch seconds, or ``date_str`` (in ``format``) as epoch seconds: ``UNIX_TIMESTAMP([s [, format]])``."""
    if date_str is None:
        return Expression("UNIX_TIMESTAMP()")
    return _function("UNIX_TIMESTAMP", date_str, *([] if format is None else [format]))


def map_from_arrays(key: Any, value: Any) -> Expression:
    return _function("MAP_FROM_ARRAYS", key, value)


def pi() -> Expression:
    return Expression("PI()")


def e() -> Expression:
    return Expression("E()")


def rand(seed: Any = None) -> Expression:
    return _function("RAND", *([] if seed is None else [seed]))


def rand_integer(bound: Any, seed: Any = None) -> Expression:
    """A pseudorandom integer in [0, bound): ``RAND_INTEGER([seed, ] bound)``."""
    return _function("RAND_INTEGER", *([] if seed is None else [seed]), bound)


def atan2(y: Any, x: Any) -> Expression:
    return _function("ATAN2", y, x)


def negative(v: Any) -> Expression:
    return _combine(f"(- {_sql_of(v)})", v)


def concat_ws(separator: Any, first: Any, *others: Any) -> Expression:
    return _function("CONCAT_WS", separator, first, *others)


def uuid() -> Expression:
    return Expression("UUID()")


def null_of(data_type: DataType | str) -> Expression:
    """A NULL of ``data_type``: ``CAST(NULL AS type)``."""
    return Expression(f"CAST(NULL AS {data_type})")


def log(v: Any, base: Any = None) -> Expression:
    """The natural logarithm of ``v``, or with ``base`` its logarithm to that base: ``LOG(base, v)``."""
    return _function("LOG", v) if base is None else _function("LOG", base, v)


def source_watermark() -> Expression:
    return Expression("SOURCE_WATERMARK()")


def coalesce(*args: Any) -> Expression:
    return _function("COALESCE", *args)


def json(value: Any) -> Expression:
    """A pre-formatted JSON text, inserted as is into ``json_object``/``json_array``: ``JSON(value)``."""
    return _function("JSON", value)


def json_string(value: Any) -> Expression:
    return _function("JSON_STRING", value)


def json_object_agg(on_null: JsonOnNull, key_expr: Any, value_expr: Any) -> Expression:
    """The JSON object of a group's key-value pairs: ``JSON_OBJECTAGG(KEY k VALUE v {NULL|ABSENT} ON NULL)``."""
    text = f"JSON_OBJECTAGG(KEY {_sql_of(key_expr)} VALUE {_sql_of(value_expr)} {on_null.value} ON NULL)"
    return _combine(text, key_expr, value_expr)


def json_array_agg(on_null: JsonOnNull, item_expr: Any) -> Expression:
    """The JSON array of a group's values: ``JSON_ARRAYAGG(v {NULL|ABSENT} ON NULL)``."""
    return _combine(f"JSON_ARRAYAGG({_sql_of(item_expr)} {on_null.value} ON NULL)", item_expr)


def lag(expr: Any, offset: Any = 1, default: Any = None) -> Expression:
    """The value ``offset`` rows before, in an OVER window: ``LAG(expr, offset [, default])``."""
    return _function("LAG", expr, offset, *([] if default is None else [default]))


def lead(expr: Any, offset: Any = 1, default: Any = None) -> Expression:
    """The value ``offset`` rows after, in an OVER window: ``LEAD(expr, offset [, default])``."""
    return _function("LEAD", expr, offset, *([] if default is None else [default]))


json_object = _fails_as_in_pyflink("json_object")
json_array = _fails_as_in_pyflink("json_array")
object_of = _fails_as_in_pyflink("object_of")


def current_date() -> Expression:
    return Expression("CURRENT_DATE")


def row(head: Any, *tail: Any) -> Expression:
    text = f"ROW({', '.join(_sql_of(v) for v in (head, *tail))})"
    return _combine(text, head, *tail)


def array(head: Any, *tail: Any) -> Expression:
    text = f"ARRAY[{', '.join(_sql_of(v) for v in (head, *tail))}]"
    return _combine(text, head, *tail)


def map_(key: Any, value: Any, *tail: Any) -> Expression:
    """A MAP of key-value pairs: ``map_('INSERT', 'I', 'DELETE', 'D')`` is ``MAP['INSERT', 'I', 'DELETE', 'D']``."""
    if len(tail) % 2:
        raise ValueError(f"map_ takes key-value pairs: {2 + len(tail)} arguments is an odd number")
    text = f"MAP[{', '.join(_sql_of(v) for v in (key, value, *tail))}]"
    return _combine(text, key, value, *tail)


def descriptor(*column_names: str) -> Expression:
    """Column names as a DESCRIPTOR argument: ``descriptor('op_code')`` is ``DESCRIPTOR(`op_code`)``."""
    return Expression(f"DESCRIPTOR({', '.join(_quote(n) for n in column_names)})")


def _install_udf_calls() -> None:
    from kindling.sql import functions

    functions.expression_call = call


_install_udf_calls()


# PyFlink's column functions (with_columns, ...) expand against a table's columns: kindling.table.column_functions,
# imported last as it builds on Expression.
from kindling.table.column_functions import range_, with_all_columns, with_columns, without_columns  # noqa: E402,F401

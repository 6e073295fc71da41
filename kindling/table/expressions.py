"""PyFlink's Table API expressions (``col``, ``lit``, ``call``, ...), each one a piece of Flink SQL.

The Table API and SQL share one planner: an expression renders to the Flink SQL text it stands for
(``col('price').sum`` is ``SUM(`price`)``, ``lit(5).seconds`` is ``INTERVAL '5' SECOND``), and a
Table's operations compose queries of those texts, which the SQL session plans.

>>> (col("price") * 2 > lit(10)).sql
'((`price` * 2) > 10)'
>>> col("price").sum.alias("total").sql
'SUM(`price`) AS `total`'
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from enum import Enum
from typing import Any, Optional

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


# A window property (``col('w').start``) before the group window it belongs to is known.
WINDOW_PROPERTY = "\x00{alias}:{property}\x00"


class Expression:
    """A Flink SQL expression, with the Python functions (``@udf``) it calls."""

    is_table_expression = True

    def __init__(self, sql: str, functions: Optional[dict[str, Any]] = None, name: Optional[str] = None) -> None:
        self.sql = sql
        self.functions: dict[str, Any] = dict(functions or {})
        self.name = name  # the column it reads, when it is a bare column (``col('a')``), or its alias
        self.call_sql: str = sql  # the expression without its alias
        self.alias_names: list[str] = []
        # Unaliased in a projection, the Table API names a column's CAST '<column>-<type>' (n-STRING); others _c<i>
        self.projection_name: Optional[str] = None

    def _derive(self, sql: str, *others: Any) -> "Expression":
        functions = dict(self.functions)
        for other in others:
            if isinstance(other, Expression):
                functions.update(other.functions)
        return Expression(sql, functions)

    def _binary(self, operator: str, other: Any, reverse: bool = False) -> "Expression":
        right = _sql(other)
        text = f"({right} {operator} {self.sql})" if reverse else f"({self.sql} {operator} {right})"
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
        return self._derive(f"MOD({self.sql}, {_sql(other)})", other)

    def __pow__(self, other: Any) -> "Expression":
        return self._derive(f"POWER({self.sql}, {_sql(other)})", other)

    def __neg__(self) -> "Expression":
        return self._derive(f"(- {self.sql})")

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

    def __invert__(self) -> "Expression":
        return self._derive(f"(NOT {self.sql})")

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise TypeError("a Table API expression has no truth value: combine conditions with & | ~, not and/or/not")

    def __str__(self) -> str:
        return self.sql

    def __repr__(self) -> str:
        return f"Expression({self.sql!r})"

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"the Table API expression method or property '{name}' is not supported by kindling; "
                             f"call_sql('...') writes any Flink SQL expression")

    # --- naming and types ------------------------------------------------------------------
    def alias(self, name: str, *extra_names: str) -> "Expression":
        """A name for the value; several names for the columns of a table function's rows (``join_lateral``)."""
        aliased = Expression(f"{self.sql} AS {_quote(name)}", self.functions, name)
        aliased.call_sql, aliased.alias_names = self.sql, [name, *extra_names]
        return aliased

    def cast(self, data_type: DataType | str) -> "Expression":
        cast = self._derive(f"CAST({self.sql} AS {data_type})")
        if self.name is not None and self.name != "*" and not self.alias_names:
            cast.projection_name = f"{self.name}-{data_type}"
        return cast

    def as_argument(self, name: str) -> "Expression":
        """This value as the named argument ``name`` of a function call (``name => value``): ``to_changelog``'s
        ``op`` and ``op_mapping``."""
        return self._derive(f"{name} => {self.sql}")

    def try_cast(self, data_type: DataType | str) -> "Expression":
        return self._derive(f"TRY_CAST({self.sql} AS {data_type})")

    # --- ordering (order_by) ---------------------------------------------------------------
    @property
    def asc(self) -> "Expression":
        return self._derive(f"{self.sql} ASC")

    @property
    def desc(self) -> "Expression":
        return self._derive(f"{self.sql} DESC")

    # --- aggregates (properties, as in PyFlink) --------------------------------------------
    @property
    def sum(self) -> "Expression":
        return self._derive(f"SUM({self.sql})")

    @property
    def sum0(self) -> "Expression":
        return self._derive(f"COALESCE(SUM({self.sql}), 0)")

    @property
    def count(self) -> "Expression":
        return self._derive(f"COUNT({self.sql})")

    @property
    def avg(self) -> "Expression":
        return self._derive(f"AVG({self.sql})")

    @property
    def min(self) -> "Expression":
        return self._derive(f"MIN({self.sql})")

    @property
    def max(self) -> "Expression":
        return self._derive(f"MAX({self.sql})")

    @property
    def distinct(self) -> "Expression":
        inner = self.sql
        for aggregate in ("SUM(", "COUNT(", "AVG(", "MIN(", "MAX("):
            if inner.startswith(aggregate):
                return self._derive(f"{aggregate}DISTINCT {inner[len(aggregate):]}")
        return self._derive(f"DISTINCT {inner}")

    def over(self, alias: Any) -> "Expression":
        """This aggregate over an OVER window of ``over_window`` (``col('v').sum.over(col('w'))``)."""
        return self._derive(f"{self.sql} OVER {_sql(alias)}")

    # --- predicates -------------------------------------------------------------------------
    @property
    def is_null(self) -> "Expression":
        return self._derive(f"({self.sql} IS NULL)")

    @property
    def is_not_null(self) -> "Expression":
        return self._derive(f"({self.sql} IS NOT NULL)")

    @property
    def is_true(self) -> "Expression":
        return self._derive(f"({self.sql} IS TRUE)")

    @property
    def is_false(self) -> "Expression":
        return self._derive(f"({self.sql} IS FALSE)")

    def between(self, lower: Any, upper: Any) -> "Expression":
        return self._derive(f"({self.sql} BETWEEN {_sql(lower)} AND {_sql(upper)})", lower, upper)

    def not_between(self, lower: Any, upper: Any) -> "Expression":
        return self._derive(f"({self.sql} NOT BETWEEN {_sql(lower)} AND {_sql(upper)})", lower, upper)

    def in_(self, *values: Any) -> "Expression":
        return self._derive(f"({self.sql} IN ({', '.join(_sql(v) for v in values)}))", *values)

    def like(self, pattern: Any) -> "Expression":
        return self._derive(f"({self.sql} LIKE {_sql(pattern)})", pattern)

    def if_null(self, null_replacement: Any) -> "Expression":
        return self._derive(f"IFNULL({self.sql}, {_sql(null_replacement)})", null_replacement)

    def then(self, if_true: Any, if_false: Any) -> "Expression":
        return self._derive(f"IF({self.sql}, {_sql(if_true)}, {_sql(if_false)})", if_true, if_false)

    # --- strings and numbers ------------------------------------------------------------------
    @property
    def upper_case(self) -> "Expression":
        return self._derive(f"UPPER({self.sql})")

    @property
    def lower_case(self) -> "Expression":
        return self._derive(f"LOWER({self.sql})")

    @property
    def char_length(self) -> "Expression":
        return self._derive(f"CHAR_LENGTH({self.sql})")

    @property
    def trim(self) -> "Expression":
        return self._derive(f"TRIM({self.sql})")

    @property
    def abs(self) -> "Expression":
        return self._derive(f"ABS({self.sql})")

    def substring(self, begin_index: Any, length: Any = None) -> "Expression":
        rest = f", {_sql(length)}" if length is not None else ""
        return self._derive(f"SUBSTRING({self.sql}, {_sql(begin_index)}{rest})", begin_index, length)

    def floor(self, unit: Optional[TimeIntervalUnit] = None) -> "Expression":
        """``FLOOR(x)``, or with a unit ``FLOOR(ts TO HOUR)``."""
        return self._derive(f"FLOOR({self.sql} TO {unit.value})" if unit is not None else f"FLOOR({self.sql})")

    def ceil(self, unit: Optional[TimeIntervalUnit] = None) -> "Expression":
        """``CEIL(x)``, or with a unit ``CEIL(ts TO HOUR)``."""
        return self._derive(f"CEIL({self.sql} TO {unit.value})" if unit is not None else f"CEIL({self.sql})")

    def round(self, places: Any) -> "Expression":
        return self._derive(f"ROUND({self.sql}, {_sql(places)})", places)

    def json_value(self, path: str, returning_type: DataType | str = "STRING", on_empty: Any = None, on_error: Any = None) -> "Expression":
        if on_empty is not None or on_error is not None:
            raise ValueError("json_value: ON EMPTY / ON ERROR behaviours are not supported by kindling (Flink's default: NULL)")
        return self._derive(f"JSON_VALUE({self.sql}, {_sql(path)} RETURNING {returning_type})")

    def json_query(self, path: str) -> "Expression":
        return self._derive(f"JSON_QUERY({self.sql}, {_sql(path)})")

    # --- time -------------------------------------------------------------------------------
    def _interval(self, unit: str) -> "Expression":
        return self._derive(f"INTERVAL '{self.sql}' {unit}")

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

    # --- window properties (col('w').start) ---------------------------------------------------
    @property
    def start(self) -> "Expression":
        return self._derive(WINDOW_PROPERTY.format(alias=self.name or self.sql, property="START"))

    @property
    def end(self) -> "Expression":
        return self._derive(WINDOW_PROPERTY.format(alias=self.name or self.sql, property="END"))

    @property
    def rowtime(self) -> "Expression":
        return self._derive(WINDOW_PROPERTY.format(alias=self.name or self.sql, property="ROWTIME"))


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


def _sql(value: Any) -> str:
    return value.sql if isinstance(value, Expression) else _literal_sql(value)


def _combine(text: str, *parts: Any) -> Expression:
    """An expression of ``text`` calling the functions its ``parts`` call."""
    functions: dict[str, Any] = {}
    for part in parts:
        if isinstance(part, Expression):
            functions.update(part.functions)
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
        return _combine(f"{f}({', '.join(_sql(a) for a in args)})", *args)
    name = function_name(f)
    expression = _combine(f"{name}({', '.join(_sql(a) for a in args)})", *args)
    expression.functions[name] = f
    return expression


def and_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression:
    parts = [predicate0, predicate1, *predicates]
    return _combine("(" + " AND ".join(_sql(p) for p in parts) + ")", *parts)


def or_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression:
    parts = [predicate0, predicate1, *predicates]
    return _combine("(" + " OR ".join(_sql(p) for p in parts) + ")", *parts)


def not_(expression: Any) -> Expression:
    return _combine(f"(NOT {_sql(expression)})", expression)


def if_then_else(condition: Any, if_true: Any, if_false: Any) -> Expression:
    text = f"IF({_sql(condition)}, {_sql(if_true)}, {_sql(if_false)})"
    return _combine(text, condition, if_true, if_false)


def concat(first: Any, *others: Any) -> Expression:
    text = f"CONCAT({', '.join(_sql(v) for v in (first, *others))})"
    return _combine(text, first, *others)


def current_timestamp() -> Expression:
    return Expression("CURRENT_TIMESTAMP")


def current_date() -> Expression:
    return Expression("CURRENT_DATE")


def row(head: Any, *tail: Any) -> Expression:
    text = f"ROW({', '.join(_sql(v) for v in (head, *tail))})"
    return _combine(text, head, *tail)


def array(head: Any, *tail: Any) -> Expression:
    text = f"ARRAY[{', '.join(_sql(v) for v in (head, *tail))}]"
    return _combine(text, head, *tail)


def map_(key: Any, value: Any, *tail: Any) -> Expression:
    """A MAP of key-value pairs: ``map_('INSERT', 'I', 'DELETE', 'D')`` is ``MAP['INSERT', 'I', 'DELETE', 'D']``."""
    if len(tail) % 2:
        raise ValueError(f"map_ takes key-value pairs: {2 + len(tail)} arguments is an odd number")
    text = f"MAP[{', '.join(_sql(v) for v in (key, value, *tail))}]"
    return _combine(text, key, value, *tail)


def descriptor(*column_names: str) -> Expression:
    """Column names as a DESCRIPTOR argument: ``descriptor('op_code')`` is ``DESCRIPTOR(`op_code`)``."""
    return Expression(f"DESCRIPTOR({', '.join(_quote(n) for n in column_names)})")


def _install_udf_calls() -> None:
    from kindling.sql import functions

    functions.expression_call = call


_install_udf_calls()

"""PyFlink's column functions: ``with_columns``, ``without_columns``, ``range_`` and ``with_all_columns``.

A column function stands for some of the columns of the table an operation applies to, which an expression does not
know when it is built: ``tab.select(with_columns(range_(2, 4)))`` selects the second to fourth columns of ``tab``. So
a column function renders to a marker, and the Table operation (select, add_columns, group_by, where, a function's
arguments, ...) expands each marker against its input's columns, as Flink's ``ExpandColumnFunctionsRule`` does:

* ``with_columns(a, ...)`` is the columns its arguments name, in their order; ``without_columns(a, ...)`` the table's
  other columns, in the table's order;
* an argument is a column (``col('b')``; ``col('*')`` is all of them), a column's index (``3``, counted from 1), or a
  range of either (``range_(2, 4)``, ``range_('b', 'd')``: both ends included);
* a column function that is a whole field of a projection stands for its columns as fields of their own (named as
  the columns); inside a call (``concat(with_columns(range_('b', 'd')))``) for its columns as arguments.

As in Flink, a name given as a Python string is a literal, not a column (``with_columns('b')`` is refused), and a
column function standing for several columns cannot be aliased. A range or column the table does not have is an
error naming it and the table's columns.

>>> str(with_columns(range_(2, 4))).startswith(MARK)
True
>>> expand_text(str(with_columns(range_(2, 4))), ["a", "b", "c", "d", "e"])
'`b`, `c`, `d`'
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional, Union

from kindling.table.expressions import Expression, col
from kindling.table.types import _quote

MARK = "\x01"  # delimits a column function in an expression's SQL text (JSON escapes it inside)
_MARKED = re.compile(f"{MARK}([^{MARK}]*){MARK}")

Selector = list[Any]  # ["all"] | ["column", name] | ["index", i] | ["range", start, end]


class ColumnRange(Expression):
    """``range_(start, end)``: the columns from ``start`` to ``end``, both included, by index (from 1) or by name; it
    means something only as an argument of ``with_columns`` or ``without_columns``."""

    def __init__(self, start: Union[int, str], end: Union[int, str]) -> None:
        self._description = f"range_({start!r}, {end!r})"
        super().__init__(_marker("range", [], self._description))
        self._selector: Selector = ["range", start, end]


def range_(start: Union[str, int], end: Union[str, int]) -> Expression:
    """The columns from ``start`` to ``end`` (both included), by name (``range_('b', 'd')``) or by index counted from 1
    (``range_(2, 4)``), for ``with_columns``/``without_columns``."""
    if not (all(_is_index(v) for v in (start, end)) or all(isinstance(v, str) for v in (start, end))):
        raise TypeError(f"range_({start!r}, {end!r}): a range is of two column names or two column indices (from 1)")
    return ColumnRange(start, end)


def with_columns(head: Any, *tails: Any) -> Expression:
    """The columns ``head`` and ``tails`` name (columns, indices from 1, ranges), in their order."""
    return _column_function("with_columns", head, tails)


def without_columns(head: Any, *tails: Any) -> Expression:
    """All columns except those ``head`` and ``tails`` name (columns, indices from 1, ranges), in the table's order."""
    return _column_function("without_columns", head, tails)


def with_all_columns() -> Expression:
    """All columns (``col('*')``), also as the arguments of a call."""
    return Expression(_marker("with_columns", [["all"]], "with_all_columns()"))


def _column_function(name: str, head: Any, tails: tuple[Any, ...]) -> Expression:
    arguments = (head, *tails)
    description = f"{name}({', '.join(_describe(a) for a in arguments)})"
    return Expression(_marker(name, [_selector(a, description) for a in arguments], description))


def _marker(function: str, selectors: list[Selector], description: str) -> str:
    return f"{MARK}{json.dumps([function, selectors, description])}{MARK}"


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _describe(argument: Any) -> str:
    if isinstance(argument, ColumnRange):
        return argument._description
    if isinstance(argument, Expression):
        name = argument._output_name
        return f"col({name!r})" if name is not None and not argument._alias_names else str(argument)
    return repr(argument)


def _selector(argument: Any, description: str) -> Selector:
    """What one argument of a column function selects; anything but a column, an index or a range is refused, as
    Flink refuses it ("only accept column names or column indices")."""
    if isinstance(argument, ColumnRange):
        return argument._selector
    if _is_index(argument):
        return ["index", argument]
    if isinstance(argument, Expression) and not argument._alias_names:
        if argument._output_name == "*":
            return ["all"]
        if argument._output_name is not None and argument._sql == _quote(argument._output_name):
            return ["column", argument._output_name]
        if re.fullmatch(r"\d+", argument._sql):  # lit(3)
            return ["index", int(argument._sql)]
    hint = f" (a Python string is a literal, not a column: col({argument!r}))" if isinstance(argument, str) else ""
    raise ValueError(f"{description}: the arguments of with_columns/without_columns are columns (col('b'), col('*')), "
                     f"column indices from 1 and range_(...) of either, not {_describe(argument)}{hint}")


def _columns_of(function: str, selectors: list[Selector], description: str, columns: list[str]) -> list[str]:
    """The columns a column function stands for, of a table with ``columns``."""
    available = f"the table's columns are {', '.join(columns)} (indices 1 to {len(columns)})"
    if function == "range":
        raise ValueError(f"{description} selects columns only as an argument of with_columns(...) or "
                         f"without_columns(...); {available}")
    chosen: list[str] = []
    for selector in selectors:
        kind, *values = selector
        if kind == "all":
            chosen += columns
        elif kind == "column":
            if values[0] not in columns:
                raise ValueError(f"{description}: there is no column '{values[0]}'; {available}")
            chosen.append(values[0])
        elif kind == "index":
            chosen.append(columns[_position(values[0], description, columns, available)])
        else:
            start, end = (_position(v, description, columns, available) for v in values)
            if start > end:
                raise ValueError(f"{description}: the range's start {values[0]!r} comes after its end {values[1]!r}; "
                                 f"{available}")
            chosen += columns[start:end + 1]
    if function == "without_columns":
        return [c for c in columns if c not in chosen]
    return chosen


def _position(value: Union[int, str], description: str, columns: list[str], available: str) -> int:
    """The 0-based position of a column given by index (from 1) or name."""
    if isinstance(value, str):
        if value not in columns:
            raise ValueError(f"{description}: there is no column '{value}'; {available}")
        return columns.index(value)
    if not 1 <= value <= len(columns):
        raise ValueError(f"{description}: there is no column {value}; {available}")
    return value - 1


def _decode(match: re.Match[str]) -> tuple[str, list[Selector], str]:
    function, selectors, description = json.loads(match.group(1))
    return function, selectors, description


def expand_text(text: str, columns: list[str]) -> str:
    """``text`` with each column function in it replaced by its columns, quoted and separated by commas."""
    return _MARKED.sub(lambda m: ", ".join(_quote(c) for c in _columns_of(*_decode(m), columns)), text)


def has_column_functions(fields: tuple[Any, ...]) -> bool:
    """Whether any of ``fields`` (expressions, or SQL text) holds a column function."""
    return any(MARK in (f._sql if isinstance(f, Expression) else str(f)) for f in fields)


def expand_fields(fields: tuple[Any, ...], columns: Callable[[], list[str]]) -> tuple[Any, ...]:
    """``fields`` with their column functions expanded against the input's ``columns`` (asked for only when there is
    one): a field that is a column function becomes a field per column, named as the column; one inside an
    expression becomes the columns as its arguments."""
    if not has_column_functions(fields):
        return fields
    names = columns()
    expanded: list[Any] = []
    for field in fields:
        if not isinstance(field, Expression):
            expanded.append(expand_text(str(field), names) if MARK in str(field) else field)
            continue
        whole = _MARKED.fullmatch(field._call_sql)
        if whole is not None:
            expanded += _as_fields(field, *_decode(whole), names)
        elif MARK in field._sql:
            expanded.append(_with_text(field, names))
        else:
            expanded.append(field)
    return tuple(expanded)


def _as_fields(field: Expression, function: str, selectors: list[Selector], description: str,
               names: list[str]) -> list[Expression]:
    """A projection's field that is a column function, as a field per column (with its alias if it has one)."""
    chosen = _columns_of(function, selectors, description, names)
    if not field._alias_names:
        return [col(c) for c in chosen]
    if len(chosen) != 1 or len(field._alias_names) != 1:
        raise ValueError(f"{description}.alias({', '.join(map(repr, field._alias_names))}): it stands for "
                         f"{len(chosen)} columns ({', '.join(chosen)}) and only one column takes an alias (Flink's "
                         "\"Invalid AS\"); alias the columns one by one")
    return [col(chosen[0]).alias(field._alias_names[0])]


def _with_text(field: Expression, names: list[str]) -> Expression:
    """``field`` with the column functions inside it expanded, keeping its name, alias and functions."""
    expanded = Expression(expand_text(field._sql, names), field._functions, field._output_name)
    expanded._call_sql = expand_text(field._call_sql, names)
    expanded._alias_names = list(field._alias_names)
    expanded._projection_name, expanded._field_path = field._projection_name, field._field_path
    return expanded


def expand_call(call: Optional[Expression], names: Callable[[], list[str]]) -> Optional[Expression]:
    """A row-based operation's function call with its column functions expanded (``f(with_columns(col('*')))``)."""
    if call is None or MARK not in call._sql:
        return call
    return _with_text(call, names())


__all__ = ["ColumnRange", "expand_call", "expand_fields", "expand_text", "has_column_functions", "range_", "with_all_columns",
           "with_columns", "without_columns"]

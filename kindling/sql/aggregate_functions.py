"""``udaf``: Python aggregate functions for SQL and the Table API (PyFlink's ``AggregateFunction`` and pandas UDAFs).

A general aggregate function is an :class:`AggregateFunction` object. Per group, kindling's keyed aggregation
(:mod:`kindling.sql.group_aggregate`) creates an accumulator, calls ``accumulate(acc, *args)`` for each input
row (nulls included, as Flink passes them), ``retract(acc, *args)`` for a retraction of an updating input, and
``get_value(acc)`` for the group's result, as Flink's Python group aggregation does. A pandas aggregate function
(``func_type='pandas'``) takes one pandas Series per argument holding a group's (a window's) values and returns
one value; as in Flink it runs in window aggregations and in batch, not in an unbounded streaming GROUP BY.

>>> from kindling.table import DataTypes
>>> from kindling.table.udf import AggregateFunction, udaf
>>> class Total(AggregateFunction):
...     def create_accumulator(self):
...         return [0]
...     def accumulate(self, accumulator, value):
...         if value is not None:
...             accumulator[0] += value
...     def get_value(self, accumulator):
...         return accumulator[0]
>>> total = udaf(Total(), result_type=DataTypes.BIGINT(), accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))
>>> total.evaluate([(1,), (2,), (None,)], [DataTypes.BIGINT()])
3
"""

from __future__ import annotations

import functools
from typing import Any, Iterable, Optional, Sequence, Union

from pyspark.sql.types import ByteType, DataType, DoubleType, FloatType, IntegerType, LongType, ShortType, StructField, StructType

from kindling.common.row import Row
from kindling.sql.types import parse_type

FUNC_TYPES = ("general", "pandas")
PANDAS_IN_STREAMING = "Pandas UDAFs are not supported in streaming mode currently."
# The column a Table API flat_aggregate names its table aggregate call's rows (a ROW per emitted row): the one place a
# table aggregate function may be called, as Flink's SQL has no syntax for one.
FLAT_AGGREGATE_RESULT = "_kindling_flat_aggregate"


class AggregateFunction:
    """An aggregate function as a class (PyFlink's ``AggregateFunction``): many rows' values to one value.

    Implement ``create_accumulator``, ``accumulate(accumulator, *args)`` (which updates the accumulator in
    place) and ``get_value(accumulator)``; ``retract`` when the function aggregates an updating input; and
    ``get_result_type``/``get_accumulator_type`` unless ``udaf`` is given them."""

    def open(self, function_context: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def is_deterministic(self) -> bool:
        return True

    def create_accumulator(self) -> Any:
        raise NotImplementedError("AggregateFunction.create_accumulator() must be implemented")

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        raise NotImplementedError("AggregateFunction.accumulate(accumulator, *args) must be implemented")

    def retract(self, accumulator: Any, *args: Any) -> None:
        raise RuntimeError("Method retract is not implemented")

    def merge(self, accumulator: Any, accumulators: Any) -> None:
        raise RuntimeError("Method merge is not implemented")

    def get_value(self, accumulator: Any) -> Any:
        raise NotImplementedError("AggregateFunction.get_value(accumulator) must be implemented")

    def get_result_type(self) -> Any:
        raise RuntimeError("Method get_result_type is not implemented")

    def get_accumulator_type(self) -> Any:
        raise RuntimeError("Method get_accumulator_type is not implemented")


class TableAggregateFunction(AggregateFunction):
    """A table aggregate function (PyFlink's ``TableAggregateFunction``, for ``udtaf``): many rows to zero, one or
    more rows per group, which ``emit_value`` yields; ``Table.flat_aggregate`` calls it."""

    def emit_value(self, accumulator: Any) -> Iterable[Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement emit_value(accumulator)")


def _spark_type(data_type: Union[str, DataType]) -> DataType:
    return parse_type(data_type).spark if isinstance(data_type, str) else data_type


class UserDefinedAggregateFunction:
    """A Python aggregate function with its SQL result type (what ``udaf`` returns).

    Called with Table API expressions it makes an expression that calls it (``weighted_avg(col('v'), col('w'))``);
    registered with ``create_temporary_function`` (or ``create_temporary_system_function``) SQL calls it by name."""

    table_aggregate = False

    def __init__(self, func: Any, result_type: Union[str, DataType, None], accumulator_type: Any = None, func_type: str = "general",
                 name: Optional[str] = None, deterministic: Optional[bool] = None) -> None:
        if func_type not in FUNC_TYPES:
            raise ValueError(f"The func_type must be one of 'general, pandas', got {func_type}.")
        if isinstance(func, type):
            raise TypeError(f"Invalid function: not a function or callable (__call__ is not defined): {func} "
                            f"(pass an instance: udaf({func.__name__}()))")
        self.instance: Optional[AggregateFunction] = func if isinstance(func, AggregateFunction) else None
        inner = _unwrapped(func)
        if self.table_aggregate and not isinstance(inner, TableAggregateFunction):
            raise TypeError(f"udtaf takes a TableAggregateFunction instance, got {type(inner).__name__}")
        if not self.table_aggregate and isinstance(inner, TableAggregateFunction):
            raise TypeError(f"{type(inner).__name__} is a TableAggregateFunction: declare it with udtaf and call it in "
                            "Table.flat_aggregate")
        if func_type == "general" and self.instance is None:
            raise TypeError(f"a general udaf takes an AggregateFunction instance, got {type(func).__name__}; "
                            "a function over pandas Series is udaf(f, result_type=..., func_type='pandas')")
        if func_type == "pandas" and (self.instance is not None or not callable(func)):
            raise TypeError("a pandas udaf takes a function from pandas Series (one per argument) to one value")
        if result_type is None:
            if self.instance is None:
                raise ValueError("udaf needs result_type, e.g. @udaf(result_type='FLOAT', func_type='pandas')")
            result_type = self.instance.get_result_type()
        if not isinstance(result_type, (str, DataType)):
            raise TypeError(f"Invalid returnType: returnType should be DataType or str but is {result_type}")
        self.func = func
        self.func_type = func_type
        self.result_type = result_type
        self.spark_type: DataType = _spark_type(result_type)
        self.accumulator_type = accumulator_type
        self.name = name or (type(func).__name__ if self.instance is not None else getattr(func, "__name__", "udaf"))
        own = self.instance.is_deterministic() if self.instance is not None else True
        if deterministic is not None and deterministic != own:
            raise ValueError(f"Inconsistent deterministic: {deterministic} and {own}")
        self.deterministic = own if deterministic is None else deterministic
        self._opened = False
        self.alias_names: Optional[list[str]] = None
        if self.instance is None:
            functools.update_wrapper(self, func)

    def __call__(self, *args: Any) -> Any:
        from kindling.sql import functions

        if functions.expression_call is not None and any(getattr(a, "_is_table_expression", False) for a in args):
            return functions.expression_call(self, *args)  # a Table API call: weighted_avg(col('v'), col('w'))
        if self.func_type == "pandas":
            return self.func(*args)
        raise TypeError(f"aggregate function {self.name} is called in a query (SQL, or with Table API expressions such as "
                        "col('x')), not with values")

    def alias(self, *alias_names: str) -> "UserDefinedAggregateFunction":
        """Names for the columns of a ROW result (PyFlink's ``udaf(...).alias('cnt', 'sum')`` in ``aggregate``)."""
        self.alias_names = list(alias_names)
        return self

    @property
    def retracts(self) -> bool:
        """Whether the function implements ``retract`` (a pandas one retracts by dropping the row's values)."""
        if self.instance is None:
            return True
        inner = _unwrapped(self.instance)
        return type(inner).retract is not AggregateFunction.retract

    def taking_row(self, names: Sequence[str]) -> "UserDefinedAggregateFunction":
        """This function given a table's columns (``names``) as one Row per input row, or (pandas) one DataFrame of
        the group's rows: what PyFlink's ``aggregate(f)`` calls an uncalled function with."""
        fields = list(names)
        if self.instance is None:
            func = self.func

            def on_frame(*series: Any) -> Any:
                import pandas as pd

                return func(pd.DataFrame(dict(zip(fields, series))))
            taking: Any = on_frame
        else:
            taking = _RowInput(self.instance, fields)
        function = type(self)(taking, self.result_type, self.accumulator_type, self.func_type, self.name, self.deterministic)
        function.alias_names = getattr(self, "alias_names", None)
        return function

    def __getstate__(self) -> dict:
        return dict(self.__dict__, _opened=False)  # each worker opens its own copy

    # --- the accumulator protocol of kindling's aggregations ---------------------------------------------
    def create(self) -> Any:
        """A new accumulator: the function's own, or (pandas) the list of the group's argument tuples."""
        if self.instance is None:
            return []
        if not self._opened:
            from kindling.sql.functions import FunctionContext

            self.instance.open(FunctionContext(self.name))
            self._opened = True
        return self.instance.create_accumulator()

    def add(self, accumulator: Any, arguments: tuple, sign: int) -> Any:
        """Accumulate (sign 1) or retract (sign -1) one row's arguments."""
        if self.instance is None:
            if sign > 0:
                accumulator.append(arguments)
            elif arguments in accumulator:
                accumulator.remove(arguments)
            return accumulator
        if sign > 0:
            self.instance.accumulate(accumulator, *arguments)
        else:
            self.instance.retract(accumulator, *arguments)
        return accumulator

    def value(self, accumulator: Any, argument_types: Sequence[DataType]) -> Any:
        """The group's result: ``get_value``, or the pandas function over one Series per argument."""
        if self.instance is not None:
            return _as_type(_plain(self.instance.get_value(accumulator)), self.spark_type)
        import pyarrow as pa
        from pyspark.sql.types import StructField, StructType

        from kindling.arrow import arrow_schema

        schema = arrow_schema(StructType([StructField(f"a{n}", t) for n, t in enumerate(argument_types)]))
        columns = list(zip(*accumulator)) if accumulator else [()] * len(argument_types)
        return self.value_of_series([pa.array(list(values), type=schema.field(n).type).to_pandas()
                                     for n, values in enumerate(columns)])

    def value_of_series(self, series: Sequence[Any]) -> Any:
        """A pandas function's result over its arguments' pandas Series (a group's values)."""
        return _as_type(_plain(self.func(*series)), self.spark_type)

    def evaluate(self, rows: Sequence[tuple], argument_types: Sequence[DataType]) -> Any:
        """The result over ``rows`` (each a tuple of the call's arguments): one group's aggregation, in order."""
        accumulator = self.create()
        for arguments in rows:
            accumulator = self.add(accumulator, tuple(arguments), 1)
        return self.value(accumulator, argument_types)


class UserDefinedTableAggregateFunction(UserDefinedAggregateFunction):
    """A Python table aggregate function with the SQL type of the rows it emits (what ``udtaf`` returns).

    Its value for a group is the list of rows ``emit_value`` yields, each a tuple of the ROW result's fields (an
    atomic result type is one field, ``f0``): ``Table.flat_aggregate`` gives one output row per emitted row, and
    retracts the group's previous rows (``-D``) before it emits the new ones (``+I``), as Flink's table aggregation."""

    table_aggregate = True

    def __init__(self, func: Any, result_type: Union[str, DataType, None], accumulator_type: Any = None, func_type: str = "general",
                 name: Optional[str] = None, deterministic: Optional[bool] = None) -> None:
        super().__init__(func, result_type, accumulator_type, func_type, name, deterministic)
        emitted = self.spark_type
        self.atomic = not isinstance(emitted, StructType)
        self.spark_type = StructType([StructField("f0", emitted, True)]) if self.atomic else emitted

    def value(self, accumulator: Any, argument_types: Sequence[DataType]) -> Any:
        """The group's rows: what ``emit_value`` yields, each as a tuple of the row type's fields."""
        assert self.instance is not None
        inner = _unwrapped(self.instance)
        emitted = inner.emit_value(accumulator) or ()
        return [_as_type(_plain(row if not self.atomic else (row,)), self.spark_type) for row in emitted]


class _RowInput(AggregateFunction):
    """An aggregate function that takes each input row as one Row of named fields (``aggregate(f)`` uncalled)."""

    def __init__(self, inner: AggregateFunction, names: list[str]) -> None:
        self.inner, self.names = inner, names

    def _row(self, values: tuple) -> Row:
        row = Row(*values)
        row.set_field_names(self.names)
        return row

    def open(self, function_context: Any) -> None:
        self.inner.open(function_context)

    def close(self) -> None:
        self.inner.close()

    def is_deterministic(self) -> bool:
        return self.inner.is_deterministic()

    def create_accumulator(self) -> Any:
        return self.inner.create_accumulator()

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        self.inner.accumulate(accumulator, self._row(args))

    def retract(self, accumulator: Any, *args: Any) -> None:
        self.inner.retract(accumulator, self._row(args))

    def get_value(self, accumulator: Any) -> Any:
        return self.inner.get_value(accumulator)

    def emit_value(self, accumulator: Any) -> Iterable[Any]:
        return self.inner.emit_value(accumulator)  # type: ignore[attr-defined]


def _unwrapped(function: Any) -> Any:
    """The user's function object behind a row-input wrapper (``aggregate(f)`` uncalled), or ``function`` itself."""
    return function.inner if isinstance(function, _RowInput) else function


def _as_type(value: Any, data_type: DataType) -> Any:
    """A result as its declared type takes it, as PyFlink's coders do: a float for an integer type truncated toward
    zero (``27 / 6`` for a BIGINT is 4), an int for a FLOAT/DOUBLE as a float; a ROW's fields each as its type."""
    if value is None:
        return None
    if isinstance(data_type, StructType) and isinstance(value, tuple):
        return tuple(_as_type(v, f.dataType) for v, f in zip(value, data_type.fields))
    if isinstance(data_type, (ByteType, ShortType, IntegerType, LongType)) and isinstance(value, float):
        return int(value)
    if isinstance(data_type, (FloatType, DoubleType)) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _plain(value: Any) -> Any:
    """A numpy scalar (what pandas' ``mean`` gives) as the Python value Spark converts; NaN of an empty group as null;
    a PyFlink Row (a ROW result) as the tuple of its values."""
    if isinstance(value, Row):
        return tuple(_plain(v) for v in value._values)
    if isinstance(value, tuple):  # a pandas function's ROW result: (a.mean(), a.max())
        return tuple(_plain(v) for v in value)
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict)):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def udaf(f: Any = None, input_types: Any = None, result_type: Union[str, DataType, None] = None, accumulator_type: Any = None,
         deterministic: Optional[bool] = None, name: Optional[str] = None, func_type: str = "general") -> Any:
    """PyFlink's ``udaf``: ``udaf(WeightedAvg())`` or ``@udaf(result_type='FLOAT', func_type='pandas')``.

    ``input_types`` is accepted for PyFlink compatibility; Spark passes the argument values as they are.
    """
    if func_type not in FUNC_TYPES:
        raise ValueError(f"The func_type must be one of 'general, pandas', got {func_type}.")
    return _declared(UserDefinedAggregateFunction, f, result_type, accumulator_type, func_type, name, deterministic)


def udtaf(f: Any = None, input_types: Any = None, result_type: Union[str, DataType, None] = None, accumulator_type: Any = None,
          deterministic: Optional[bool] = None, name: Optional[str] = None, func_type: str = "general") -> Any:
    """PyFlink's ``udtaf``: a :class:`TableAggregateFunction` for ``Table.flat_aggregate`` (``udtaf(Top2())``).

    ``input_types`` is accepted for PyFlink compatibility. Only general (row by row) functions exist, as in PyFlink.
    """
    if func_type != "general":
        raise ValueError(f"The func_type must be 'general', got {func_type}.")
    return _declared(UserDefinedTableAggregateFunction, f, result_type, accumulator_type, func_type, name, deterministic)


def _declared(kind: type, f: Any, *arguments: Any) -> Any:
    """``kind`` of ``f`` with the declaration's ``arguments``, or (``f`` None: used as a decorator) a function making it."""
    if f is None:
        return lambda func: kind(func, *arguments)
    return kind(f, *arguments)

"""Python scalar functions for SQL: PyFlink's ``@udf(result_type=...)``, run by Spark over Arrow batches.

``func_type='general'`` (default) calls the function once per row, inside an Arrow-optimised
Spark UDF (rows travel between the JVM and Python as Arrow batches). ``func_type='pandas'``
calls it once per batch with pandas Series and expects a Series back (PyFlink's vectorised
Python UDF). Register with ``CREATE TEMPORARY FUNCTION name AS 'module.function' LANGUAGE PYTHON``
or ``env.create_temporary_function(name, function)``.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Optional, Sequence, Union

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.types import DataType, StructType

from kindling.common.row import Row
from kindling.datastream.functions import ship_by_value
from kindling.sql.types import parse_type

FUNC_TYPES = ("general", "pandas")
# Set by kindling.table.expressions: a call with Table API expressions as arguments becomes an expression.
expression_call: Optional[Callable[..., Any]] = None


class FunctionContext:
    """What a function's ``open`` receives (PyFlink's FunctionContext): its metric group and job parameters."""

    def __init__(self, name: str) -> None:
        self._name = name

    def get_metric_group(self) -> Any:
        from kindling.runtime.metrics import metric_group

        return metric_group(self._name)

    def get_job_parameter(self, key: str, default_value: Optional[str] = None) -> Optional[str]:
        return default_value


class ScalarFunction:
    """A scalar function as a class (PyFlink's ``ScalarFunction``): ``open(function_context)`` once per task before
    the first ``eval(*args)``, and ``close()``. Wrap an instance with ``udf(MyFunction(), result_type=...)``."""

    def open(self, function_context: FunctionContext) -> None:
        pass

    def eval(self, *args: Any) -> Any:
        raise NotImplementedError("ScalarFunction.eval(*args) must be implemented")

    def close(self) -> None:
        pass

    def is_deterministic(self) -> bool:
        return True


class AsyncScalarFunction(ScalarFunction):
    """A scalar function whose ``async def eval(*args)`` calls run concurrently (PyFlink's ``AsyncScalarFunction``)."""


# Flink's table.exec.async-scalar.* defaults: at most 10 calls in flight per task, each done within 3 minutes.
ASYNC_SCALAR_CAPACITY = 10
ASYNC_SCALAR_TIMEOUT_S = 180.0
_ASYNC_LOOP: Any = None


def _event_loop() -> Any:
    """This Python worker's event loop for async scalar functions (made on first use, kept for the process)."""
    import asyncio

    global _ASYNC_LOOP
    if _ASYNC_LOOP is None or _ASYNC_LOOP.is_closed():
        _ASYNC_LOOP = asyncio.new_event_loop()
    return _ASYNC_LOOP


class UserDefinedScalarFunction:
    """A Python function with its SQL result type; calling it in Python calls the function.

    The function may be a plain function, a :class:`ScalarFunction` instance (``open``/``eval``/``close``), or
    asynchronous (an ``async def`` function or an :class:`AsyncScalarFunction`): then each Arrow batch's calls
    run concurrently on the worker's event loop, at most ``ASYNC_SCALAR_CAPACITY`` at a time."""

    def __init__(self, func: Callable[..., Any], result_type: Union[str, DataType], func_type: str = "general",
                 name: Optional[str] = None, deterministic: bool = True) -> None:
        if func_type not in FUNC_TYPES:
            raise ValueError(f"udf func_type {func_type!r} is not supported; allowed: 'general' (row at a time) or 'pandas' (vectorised)")
        if result_type is None:
            raise ValueError("udf needs result_type, e.g. @udf(result_type='STRING')")
        self.instance: Optional[ScalarFunction] = func if hasattr(func, "eval") and not callable(func) else None
        if self.instance is not None:
            func = self.instance.eval
            deterministic = deterministic and self.instance.is_deterministic()
        self.func = func
        self.is_async = inspect.iscoroutinefunction(func)
        if self.is_async and func_type != "general":
            raise ValueError("an async scalar function is 'general' (its calls are gathered per batch), not 'pandas'")
        self.result_type = result_type
        self.spark_type: DataType = parse_type(result_type).spark if isinstance(result_type, str) else result_type
        self.func_type = func_type
        self.name = name or (type(self.instance).__name__ if self.instance is not None else getattr(func, "__name__", "udf"))
        self.deterministic = deterministic
        if self.instance is None:
            functools.update_wrapper(self, func)

    def __call__(self, *args: Any) -> Any:
        if expression_call is not None and any(getattr(a, "_is_table_expression", False) for a in args):
            return expression_call(self, *args)  # a Table API call: udf(col('x'))
        return self.func(*args)

    def taking_row(self, names: Sequence[str]) -> "UserDefinedScalarFunction":
        """This function called with a table's columns (``names``) as one Row, or one pandas DataFrame for a pandas
        function: what PyFlink's ``table.map(f)`` calls an uncalled function with."""
        call, fields = self._worker_function(), list(names)
        if self.func_type == "pandas":
            def on_frame(*series: Any) -> Any:
                import pandas as pd

                return call(pd.DataFrame(dict(zip(fields, series))))
            return UserDefinedScalarFunction(on_frame, self.result_type, "pandas", self.name, self.deterministic)

        def on_row(*values: Any) -> Any:
            row = Row(*values)
            row.set_field_names(fields)
            return call(row)
        return UserDefinedScalarFunction(on_row, self.result_type, "general", self.name, self.deterministic)

    def _worker_function(self) -> Callable[..., Any]:
        """The function as a worker calls it: a ScalarFunction instance opened before its first call."""
        instance, name = self.instance, self.name
        if instance is None:
            return self.func
        opened: list[bool] = []

        def ready() -> ScalarFunction:
            if not opened:
                instance.open(FunctionContext(name))
                opened.append(True)
            return instance

        if self.is_async:
            async def call_async(*args: Any) -> Any:
                return await ready().eval(*args)
            return call_async
        return lambda *args: ready().eval(*args)

    def _async_udf(self) -> Any:
        """An Arrow UDF gathering each batch's async calls on the worker's event loop."""
        import asyncio

        from pyspark.sql.functions import arrow_udf
        from pyspark.sql.types import StructField, StructType

        from kindling.arrow import arrow_schema

        function = self._worker_function()
        result_type = arrow_schema(StructType([StructField("r", self.spark_type)])).field("r").type
        name = self.name

        async def gather(rows: list) -> list:
            gate = asyncio.Semaphore(ASYNC_SCALAR_CAPACITY)

            async def one(args: tuple) -> Any:
                async with gate:
                    try:
                        return await asyncio.wait_for(function(*args), ASYNC_SCALAR_TIMEOUT_S)
                    except asyncio.TimeoutError:
                        raise TimeoutError(f"async scalar function {name} timed out after {ASYNC_SCALAR_TIMEOUT_S:.0f} s "
                                           f"on {args!r}") from None

            return await asyncio.gather(*(one(r) for r in rows))

        def calls(*arrays: pa.Array) -> pa.Array:
            rows = list(zip(*(a.to_pylist() for a in arrays))) if arrays else []
            return pa.array(_event_loop().run_until_complete(gather(rows)) if rows else [], type=result_type)

        return arrow_udf(calls, self.spark_type)

    def register(self, spark: SparkSession, name: str) -> None:
        """Make the function callable from Spark SQL under ``name``."""
        from pyspark.sql import functions as F

        ship_by_value(self.instance if self.instance is not None else self.func)
        if self.is_async:
            spark_udf = self._async_udf()
        elif self.func_type == "pandas":
            spark_udf = F.pandas_udf(self._worker_function(), self.spark_type)  # type: ignore[call-overload]
        elif isinstance(self.spark_type, StructType):  # a ROW result: a PyFlink Row (or tuple) as Spark's struct value
            function = self._worker_function()
            spark_udf = F.udf(lambda *args: _struct_value(function(*args)), self.spark_type, useArrow=True)
        else:
            spark_udf = F.udf(self._worker_function(), self.spark_type, useArrow=True)
        if not self.deterministic:
            spark_udf = spark_udf.asNondeterministic()
        spark.udf.register(name, spark_udf)


def _struct_value(value: Any) -> Any:
    """A ROW function result as Spark takes a struct: a PyFlink Row as the tuple of its values."""
    return tuple(value._values) if isinstance(value, Row) else value


def udf(f: Optional[Callable[..., Any]] = None, *, result_type: Union[str, DataType, None] = None, func_type: str = "general",
        name: Optional[str] = None, deterministic: bool = True, input_types: Any = None) -> Any:
    """PyFlink's decorator: ``@udf(result_type='STRING')`` or ``udf(fn, result_type='BIGINT', func_type='pandas')``.

    ``input_types`` is accepted for PyFlink compatibility; Spark passes the argument values as they are.
    """
    def wrap(func: Callable[..., Any]) -> UserDefinedScalarFunction:
        return UserDefinedScalarFunction(func, result_type, func_type, name, deterministic)  # type: ignore[arg-type]

    if f is not None:
        return wrap(f)
    return wrap


# The name a table function is registered under a second time, for LEFT JOIN LATERAL TABLE(...) ON TRUE: it
# yields one row of NULLs where the function yields nothing (Spark decorrelates a streaming LEFT lateral join
# into an aggregation, which a stream cannot run; an inner lateral join of this variant gives the same rows).
OUTER_PREFIX = "__kindling_outer_"


class UserDefinedTableFunction:
    """A Python generator function with the SQL types of the rows it yields (PyFlink's ``@udtf``).

    Each input row may give any number of output rows: a yielded tuple, list or Row is one row's values, any
    other value a one-column row. Output columns are named ``f0``, ``f1``, ... (rename them with
    ``LATERAL TABLE(f(x)) AS T(a, b)`` or ``.alias(...)``)."""

    def __init__(self, func: Callable[..., Any], result_types: Any, name: Optional[str] = None, deterministic: bool = True) -> None:
        if result_types is None:
            raise ValueError("udtf needs result_types, e.g. @udtf(result_types=['STRING', 'BIGINT'])")
        types = list(result_types) if isinstance(result_types, (list, tuple)) else [result_types]
        self.func = func
        self.result_types = types
        self.spark_types: list[DataType] = [parse_type(t).spark if isinstance(t, str) else t for t in types]
        self.name = name or getattr(func, "__name__", "udtf")
        self.deterministic = deterministic
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any) -> Any:
        if expression_call is not None and any(getattr(a, "_is_table_expression", False) for a in args):
            return expression_call(self, *args)  # a Table API call: join_lateral(split(col('line')))
        return self.func(*args)

    def register(self, spark: SparkSession, name: str) -> None:
        """Make the function a Spark SQL table function under ``name``, and its outer variant under OUTER_PREFIX + name."""
        from pyspark.sql.functions import udtf as spark_udtf
        from pyspark.sql.types import StructField, StructType

        ship_by_value(self.func)
        schema = StructType([StructField(f"f{i}", t) for i, t in enumerate(self.spark_types)])
        width = len(self.spark_types)
        func = self.func

        def rows(args: tuple) -> Any:
            for value in func(*args) or ():
                if isinstance(value, (tuple, list)):
                    yield tuple(value)
                elif hasattr(value, "_values") and hasattr(value, "__getitem__"):  # kindling's (PyFlink's) Row
                    yield tuple(value[i] for i in range(width))
                else:
                    yield (value,)

        def evaluate(self: Any, *args: Any) -> Any:
            yield from rows(args)

        def evaluate_outer(self: Any, *args: Any) -> Any:
            produced = False
            for row in rows(args):
                produced = True
                yield row
            if not produced:
                yield (None,) * width

        for registered, method in ((name, evaluate), (OUTER_PREFIX + name, evaluate_outer)):
            handler = type(f"{self.name}_udtf", (), {"eval": method})
            spark.udtf.register(registered, spark_udtf(handler, returnType=schema, useArrow=True))


def udtf(f: Optional[Callable[..., Any]] = None, *, result_types: Any = None, name: Optional[str] = None,
         deterministic: bool = True, input_types: Any = None, func_type: str = "general") -> Any:
    """PyFlink's decorator: ``@udtf(result_types=[DataTypes.STRING()])`` over a generator function.

    ``input_types`` is accepted for PyFlink compatibility; ``func_type`` must be 'general'.
    """
    if func_type != "general":
        raise ValueError(f"udtf func_type {func_type!r} is not supported; allowed: 'general'")

    def wrap(func: Callable[..., Any]) -> UserDefinedTableFunction:
        return UserDefinedTableFunction(func, result_types, name, deterministic)

    if f is not None:
        return wrap(f)
    return wrap

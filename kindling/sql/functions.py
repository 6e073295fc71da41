"""Python scalar functions for SQL: PyFlink's ``@udf(result_type=...)``, run by Spark over Arrow batches.

``func_type='general'`` (default) calls the function once per row, inside an Arrow-optimised
Spark UDF (rows travel between the JVM and Python as Arrow batches). ``func_type='pandas'``
calls it once per batch with pandas Series and expects a Series back (PyFlink's vectorised
Python UDF). Register with ``CREATE TEMPORARY FUNCTION name AS 'module.function' LANGUAGE PYTHON``
or ``env.create_temporary_function(name, function)``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Union

from pyspark.sql import SparkSession
from pyspark.sql.types import DataType

from kindling.datastream.functions import ship_by_value
from kindling.sql.types import parse_type

FUNC_TYPES = ("general", "pandas")
# Set by kindling.table.expressions: a call with Table API expressions as arguments becomes an expression.
expression_call: Optional[Callable[..., Any]] = None


class UserDefinedScalarFunction:
    """A Python function with its SQL result type; calling it in Python calls the function."""

    def __init__(self, func: Callable[..., Any], result_type: Union[str, DataType], func_type: str = "general",
                 name: Optional[str] = None, deterministic: bool = True) -> None:
        if func_type not in FUNC_TYPES:
            raise ValueError(f"udf func_type {func_type!r} is not supported; allowed: 'general' (row at a time) or 'pandas' (vectorised)")
        if result_type is None:
            raise ValueError("udf needs result_type, e.g. @udf(result_type='STRING')")
        self.func = func
        self.result_type = result_type
        self.spark_type: DataType = parse_type(result_type).spark if isinstance(result_type, str) else result_type
        self.func_type = func_type
        self.name = name or getattr(func, "__name__", "udf")
        self.deterministic = deterministic
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any) -> Any:
        if expression_call is not None and any(getattr(a, "is_table_expression", False) for a in args):
            return expression_call(self, *args)  # a Table API call: udf(col('x'))
        return self.func(*args)

    def register(self, spark: SparkSession, name: str) -> None:
        """Make the function callable from Spark SQL under ``name``."""
        from pyspark.sql import functions as F

        ship_by_value(self.func)
        if self.func_type == "pandas":
            spark_udf = F.pandas_udf(self.func, self.spark_type)  # type: ignore[call-overload]
        else:
            spark_udf = F.udf(self.func, self.spark_type, useArrow=True)
        if not self.deterministic:
            spark_udf = spark_udf.asNondeterministic()
        spark.udf.register(name, spark_udf)


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

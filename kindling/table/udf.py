"""``udf``, ``udtf``, ``udaf`` and ``udtaf``: Python scalar, table, aggregate and table aggregate functions for SQL and the Table API (PyFlink's
``pyflink.table.udf``).

Called with Table API expressions (``contains_flink(col('data'))``) a function makes an expression
that calls it; called with plain values it is the Python function.
"""

from kindling.sql.aggregate_functions import (
    AggregateFunction,
    TableAggregateFunction,
    UserDefinedAggregateFunction,
    UserDefinedTableAggregateFunction,
    udaf,
    udtaf,
)
from kindling.sql.functions import (
    AsyncScalarFunction,
    FunctionContext,
    ScalarFunction,
    UserDefinedScalarFunction,
    UserDefinedTableFunction,
    udf,
    udtf,
)

__all__ = ["AggregateFunction", "AsyncScalarFunction", "FunctionContext", "ScalarFunction", "TableAggregateFunction",
           "UserDefinedAggregateFunction", "UserDefinedScalarFunction", "UserDefinedTableAggregateFunction",
           "UserDefinedTableFunction", "udaf", "udf", "udtaf", "udtf"]

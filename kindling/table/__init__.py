"""PyFlink's Table API (``pyflink.table``) on kindling's SQL planner.

>>> from kindling.table import EnvironmentSettings, TableEnvironment, DataTypes
>>> from kindling.table.expressions import col
>>> t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())   # doctest: +SKIP
>>> table = t_env.from_elements([(1, "Hi"), (2, "Hello")], ["id", "data"])   # doctest: +SKIP
>>> table.select(col("id") + 1, col("data")).execute().print()   # doctest: +SKIP
"""

from kindling.sql.result import ResultKind, TableResult
from kindling.table.descriptors import FormatDescriptor, Schema, TableDescriptor
from kindling.table.expressions import Expression
from kindling.table.module import Module, ModuleEntry
from kindling.table.table import AggregatedTable, FlatAggregateTable, GroupedTable, GroupWindowedTable, OverWindowedTable, Table, WindowGroupedTable
from kindling.table.table_environment import (
    EnvironmentSettings,
    StatementSet,
    StreamTableEnvironment,
    TableConfig,
    TableEnvironment,
)
from kindling.table.types import DataType, DataTypes
from kindling.table.udf import AggregateFunction, ScalarFunction, TableAggregateFunction, udaf, udf, udtf

__all__ = [
    "AggregateFunction", "AggregatedTable", "FlatAggregateTable", "ScalarFunction", "TableAggregateFunction", "udaf",
    "DataType", "DataTypes", "EnvironmentSettings", "Expression", "FormatDescriptor", "GroupWindowedTable", "GroupedTable",
    "Module", "ModuleEntry",
    "OverWindowedTable", "ResultKind", "Schema", "StatementSet", "StreamTableEnvironment", "Table", "TableConfig", "TableDescriptor",
    "TableEnvironment",
    "TableResult", "WindowGroupedTable", "udf", "udtf",
]

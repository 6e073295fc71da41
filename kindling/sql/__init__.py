"""Flink SQL on Spark: statements, DDL, types, catalog, query translation, Python UDFs and the SQL client."""

from kindling.sql.ddl import parse_statement
from kindling.sql.errors import SqlError
from kindling.sql.functions import UserDefinedScalarFunction, UserDefinedTableFunction, udf, udtf
from kindling.sql.result import TableResult
from kindling.sql.statements import Statement, split_statements
from kindling.sql.types import parse_type

__all__ = [
    "SqlError", "Statement", "TableResult", "UserDefinedScalarFunction", "parse_statement", "parse_type",
    "split_statements", "udf", "udtf", "UserDefinedTableFunction",
]

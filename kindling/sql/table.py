"""Table: a planned SQL query (``env.sql_query``), run with ``execute()`` or written with ``execute_insert``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from kindling.connectors.base import INTERNAL_PREFIX

if TYPE_CHECKING:
    from kindling.sql.result import TableResult
    from kindling.sql.session import PlannedQuery, SqlSession


class Table:
    """Flink's Table for a query: its schema, its Spark DataFrame, and how to run it."""

    def __init__(self, session: "SqlSession", planned: "PlannedQuery", text: str) -> None:
        self._session = session
        self.planned = planned
        self._text = text

    def get_schema(self) -> StructType:
        return StructType([f for f in self.planned.df.schema.fields if not f.name.startswith(INTERNAL_PREFIX)])

    def print_schema(self) -> None:
        from kindling.sql.types import flink_type_name

        print("(\n" + ",\n".join(f"  `{f.name}` {flink_type_name(f.dataType)}" for f in self.get_schema().fields) + "\n)")

    def to_dataframe(self) -> DataFrame:
        """The streaming DataFrame (an escape hatch to Spark)."""
        return self.planned.df

    def execute(self) -> "TableResult":
        """Run the query; its rows arrive in the returned TableResult."""
        return self._session._collect(self.planned)

    def execute_insert(self, table_name: str) -> "TableResult":
        """Write the query's rows into a catalog table (a job)."""
        from kindling.sql.ddl import Insert

        return self._session._run_inserts([Insert(table_name, self._text, self._line())], self._line())

    def _line(self) -> int:
        return 1

    def __repr__(self) -> str:
        return f"Table({self.get_schema().simpleString()})"

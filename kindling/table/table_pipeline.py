"""PyFlink's ``TablePipeline``: a table's rows bound for a sink table, what ``Table.insert_into`` returns.

>>> from kindling.table import EnvironmentSettings, TableEnvironment   # doctest: +SKIP
>>> t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())   # doctest: +SKIP
>>> t_env.execute_sql("CREATE TABLE out (n BIGINT) WITH ('connector' = 'print')")   # doctest: +SKIP
>>> t_env.from_elements([(1,), (2,)], ["n"]).insert_into("out").execute().wait()   # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from kindling.table.catalog import ObjectIdentifier

if TYPE_CHECKING:
    from kindling.sql.ddl import Insert
    from kindling.sql.result import TableResult
    from kindling.table.table_environment import TableEnvironment


class TablePipeline:
    """A complete pipeline from source tables to one sink table: ``execute()`` runs it as a job of its own, a
    statement set's ``add`` runs it with others in one job."""

    def __init__(self, t_env: "TableEnvironment", insert: "Insert") -> None:
        self._t_env, self._insert = t_env, insert

    def execute(self) -> "TableResult":
        """Run the pipeline (a job; ``.wait()`` for it to end)."""
        return self._t_env._session._run_inserts([self._insert], 1)

    def explain(self, *extra_details: Any) -> str:
        """The plan of the INSERT this pipeline runs."""
        return self._t_env.execute_sql(f"EXPLAIN INSERT INTO {self._insert.table} {self._insert.query}").collect()[0][0]

    def print_explain(self, *extra_details: Any) -> None:
        print(self.explain(*extra_details))

    def get_sink_identifier(self) -> Optional[ObjectIdentifier]:
        """The sink table's full name; None for an anonymous sink (a ``TableDescriptor`` given to ``insert_into``)."""
        from kindling.table.table_environment import ANONYMOUS_PREFIX

        if self._insert.table.startswith(ANONYMOUS_PREFIX):
            return None
        return ObjectIdentifier.in_default_database(self._insert.table)


__all__ = ["TablePipeline"]

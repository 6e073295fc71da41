"""Statement results as PyFlink gives them: ``get_result_kind()``, ``get_resolved_schema()`` and ``print()`` of DDL,
SHOW, DESCRIBE and INSERT results (a statement set's too). Recorded under PyFlink 2.3 by running this file
(``pyflink_reference/results.txt``), compared with kindling's in ``test_table_schema.py``."""

from __future__ import annotations

from typing import Any


def run(t_env: Any) -> None:
    """Print every result (to ``sys.stdout``: PyFlink's ``print()`` writes there from the JVM)."""
    def say(*values: Any) -> None:
        print(*values, flush=True)

    say(t_env.execute_sql("CREATE TABLE src (k STRING NOT NULL, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '2')")
        .get_result_kind())
    t_env.execute_sql("CREATE TABLE out1 (k STRING, v INT) WITH ('connector' = 'blackhole')")
    t_env.execute_sql("CREATE TABLE out2 (k STRING) WITH ('connector' = 'blackhole')")
    shown = t_env.execute_sql("SHOW TABLES")
    say(shown.get_resolved_schema(), shown.get_result_kind())
    shown.print()
    inserted = t_env.execute_sql("INSERT INTO out1 SELECT k, v FROM src")
    inserted.print()
    say(inserted.get_resolved_schema(), inserted.get_result_kind())
    inserted.wait()
    statements = t_env.create_statement_set()
    statements.add_insert_sql("INSERT INTO out1 SELECT k, v FROM src")
    statements.add_insert_sql("INSERT INTO out2 SELECT k FROM src")
    both = statements.execute()
    both.print()
    say(both.get_resolved_schema())
    both.wait()
    described = t_env.execute_sql("DESCRIBE src")
    say(described.get_resolved_schema())
    described.print()
    t_env.execute_sql("SHOW VIEWS").print()


if __name__ == "__main__":
    try:
        from pyflink.table import EnvironmentSettings, TableEnvironment
    except ImportError:
        from kindling.table import EnvironmentSettings, TableEnvironment
    run(TableEnvironment.create(EnvironmentSettings.in_streaming_mode()))

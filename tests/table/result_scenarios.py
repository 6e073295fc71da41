"""Statement results as PyFlink gives them: ``get_result_kind()``, ``get_resolved_schema()`` and ``print()`` of DDL,
SHOW, DESCRIBE and INSERT results (a statement set's too). Recorded under PyFlink 2.3 by running this file
(``pyflink_reference/results.txt``), compared with kindling's in ``test_table_schema.py``."""

from __future__ import annotations

import datetime
from decimal import Decimal
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
    say(shown.get_table_schema())
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
    printed_values(t_env)


def printed_values(t_env: Any) -> None:
    """A query's values printed in tableau form: each type's width and text (timestamps with their precision's digits,
    FLOAT and DOUBLE as Java writes them, collections, rows and bytes)."""
    try:
        from pyflink.table import DataTypes
    except ImportError:
        from kindling.table import DataTypes
    f = DataTypes.FIELD
    schema = DataTypes.ROW([f("t6", DataTypes.TIMESTAMP(6)), f("t0", DataTypes.TIMESTAMP(0)), f("t3", DataTypes.TIMESTAMP(3)),
                            f("dc", DataTypes.DECIMAL(10, 2)), f("fl", DataTypes.FLOAT()), f("db", DataTypes.DOUBLE()),
                            f("small", DataTypes.DOUBLE()), f("arr", DataTypes.ARRAY(DataTypes.STRING())),
                            f("mp", DataTypes.MAP(DataTypes.STRING(), DataTypes.INT())),
                            f("r", DataTypes.ROW([f("x", DataTypes.INT()), f("y", DataTypes.STRING())])), f("bin", DataTypes.BYTES()),
                            f("ok", DataTypes.BOOLEAN()), f("n", DataTypes.BIGINT())])
    moment = datetime.datetime(2024, 1, 1, 10, 0, 0, 123000)  # (PyFlink passes milliseconds on)
    rows = [(moment, moment.replace(microsecond=0), moment.replace(microsecond=120000), Decimal("12.50"), 0.1, 1e20, 0.0001,
             ["a", "b"], {"k": 1}, (1, "x"), bytearray(b"\x01\x02"), True, None)]
    t_env.from_elements(rows, schema).execute().print()


if __name__ == "__main__":
    try:
        from pyflink.table import EnvironmentSettings, TableEnvironment
    except ImportError:
        from kindling.table import EnvironmentSettings, TableEnvironment
    run(TableEnvironment.create(EnvironmentSettings.in_streaming_mode()))

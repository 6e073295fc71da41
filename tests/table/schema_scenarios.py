"""Tables whose schemas are printed (``print_schema()``, ``str(get_schema())``, ``get_field_data_types()``), by PyFlink
2.3 to record the reference (``record_schemas.py``) and by kindling in ``test_table_schema.py``.

Run as ``python schema_scenarios.py stream|batch``: it imports ``pyflink`` when it is installed, else ``kindling``.
Each scenario prints ``=== <label>`` then what it printed, or ``ERROR <type> <message's first line>``.
"""

from __future__ import annotations

import contextlib
import io
import sys
from typing import Any, Callable

TABLES = {
    "src": "CREATE TABLE src (k STRING NOT NULL, v INT, name VARCHAR(10), price DECIMAL(10, 2), ts TIMESTAMP(3), "
           "total AS price * 2, pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (k) NOT ENFORCED) "
           "WITH ('connector' = 'datagen', 'number-of-rows' = '3')",
    "plain": "CREATE TABLE plain (id BIGINT, s STRING, d DATE, b BOOLEAN, ts6 TIMESTAMP(6), ltz TIMESTAMP_LTZ(3), arr ARRAY<INT>, "
             "r ROW<x INT, y STRING>) WITH ('connector' = 'datagen', 'number-of-rows' = '3')",
    "epochs": "CREATE TABLE epochs (epoch BIGINT NOT NULL, s STRING, v INT, ts AS TO_TIMESTAMP_LTZ(epoch, 3), c AS CAST(v AS BIGINT), "
              "cs AS CAST(s AS TIMESTAMP(3)), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', 'number-of-rows' = '1')",
    "seconds": "CREATE TABLE seconds (epoch BIGINT, ts AS TO_TIMESTAMP_LTZ(epoch, 0), WATERMARK FOR ts AS ts - INTERVAL '0.001' SECOND) "
               "WITH ('connector' = 'datagen', 'number-of-rows' = '1')",
    "instants": "CREATE TABLE instants (id INT, ts TIMESTAMP_LTZ(3), p AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE, "
                "PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen', 'number-of-rows' = '1')",
    "keyed": "CREATE TABLE keyed (id INT NOT NULL, name STRING NOT NULL, ts TIMESTAMP(3) NOT NULL, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, "
             "PRIMARY KEY (id, name) NOT ENFORCED) WITH ('connector' = 'datagen', 'number-of-rows' = '1')",
    "nested": "CREATE TABLE nested (id INT, m MAP<STRING, INT>, r ROW<x INT NOT NULL, `y z` STRING>, b BYTES, t TIME, dd DECIMAL, "
              "bi BINARY(3), ts TIMESTAMP) WITH ('connector' = 'datagen', 'number-of-rows' = '1')",
    "plain_src": "CREATE TABLE plain_src (k STRING NOT NULL, v INT, name VARCHAR(10), price DECIMAL(10, 2), ts TIMESTAMP(3), "
                 "pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (k) NOT ENFORCED) "
                 "WITH ('connector' = 'datagen', 'number-of-rows' = '3')",
    "described": "CREATE TABLE described (k STRING NOT NULL, v INT, name VARCHAR(10), price DECIMAL(10, 2), ms BIGINT, "
                 "ts AS TO_TIMESTAMP_LTZ(ms, 3), pt AS PROCTIME(), c AS CAST(v AS BIGINT), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, "
                 "PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'datagen', 'number-of-rows' = '3')",
    "described_view": "CREATE VIEW described_view AS SELECT k, ts, v + 1 AS v1, pt, COUNT(*) OVER (PARTITION BY k ORDER BY ts "
                      "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS n FROM described",
    "described_aggregate": "CREATE VIEW described_aggregate AS SELECT k, COUNT(*) AS c, SUM(v) AS s, MAX(ts) AS m FROM described GROUP BY k",
}


def described(t_env: Any, name: str) -> None:
    """DESCRIBE's rows."""
    for row in t_env.execute_sql(f"DESCRIBE {name}").collect():
        print(tuple(row))


def printed(table: Any) -> None:
    """What ``table.print_schema()`` prints (PyFlink's prints from the JVM, past Python's ``sys.stdout``)."""
    print(table.get_resolved_schema())


def scenarios(t_env: Any, DataTypes: Any, col: Any) -> list[tuple[str, Callable[[], Any]]]:
    """(label, what prints the schema) of every scenario."""
    q = t_env.sql_query
    out: list[tuple[str, Callable[[], Any]]] = []
    for name in [n for n in TABLES if not n.startswith("described")]:
        table = t_env.from_path(name)
        out += [(f"{name} print_schema", lambda table=table: printed(table)),
                (f"{name} str(get_schema)", lambda table=table: print(str(table.get_schema()))),
                (f"{name} field types", lambda table=table: print(table.get_schema().get_field_data_types())),
                (f"{name} str(get_resolved_schema)", lambda table=table: print(str(table.get_resolved_schema())))]
    src = t_env.from_path("plain_src")
    e = t_env.from_elements([(1, "a", 1.5), (2, None, 2.5)], ["a", "b", "c"])
    e2 = t_env.from_elements([(1, "a")], DataTypes.ROW([DataTypes.FIELD("a", DataTypes.BIGINT(False)),
                                                         DataTypes.FIELD("b", DataTypes.VARCHAR(5))]))
    out += [
        ("select columns", lambda: printed(src.select(col("k"), col("ts"), col("v").alias("w"), col("pt")))),
        ("where", lambda: printed(src.where(col("v") > 1))),
        ("where str", lambda: print(str(src.where(col("v") > 1).get_schema()))),
        ("select expression", lambda: printed(src.select((col("v") + 1).alias("v1"), col("k")))),
        ("group by", lambda: printed(src.group_by(col("k")).select(col("k"), col("v").count.alias("c"), col("ts").max.alias("m")))),
        ("group by rowtime", lambda: printed(q("SELECT ts, COUNT(*) AS c FROM plain_src GROUP BY ts"))),
        ("group by key only", lambda: printed(q("SELECT k, name FROM plain_src GROUP BY k, name"))),
        ("distinct", lambda: printed(q("SELECT DISTINCT k, ts FROM plain_src"))),
        ("tumble", lambda: printed(q("SELECT * FROM TABLE(TUMBLE(TABLE plain_src, DESCRIPTOR(ts), INTERVAL '10' SECOND))"))),
        ("tumble keys", lambda: printed(q("SELECT window_start, window_end, window_time, k FROM TABLE(TUMBLE(TABLE plain_src, DESCRIPTOR(ts), "
                                  "INTERVAL '10' SECOND)) GROUP BY window_start, window_end, window_time, k"))),
        ("tumble aggregate", lambda: printed(q("SELECT window_start, window_end, window_time, k, SUM(v) AS s FROM TABLE(TUMBLE(TABLE plain_src, "
                                       "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, window_time, k"))),
        ("tumble instants", lambda: printed(q("SELECT * FROM TABLE(TUMBLE(TABLE instants, DESCRIPTOR(ts), INTERVAL '10' SECOND))"))),
        ("hop", lambda: printed(q("SELECT window_start, window_end, window_time, k FROM TABLE(HOP(TABLE plain_src, DESCRIPTOR(ts), "
                          "INTERVAL '5' SECOND, INTERVAL '10' SECOND))"))),
        ("left join", lambda: printed(q("SELECT a.k, a.ts, b.k AS bk, b.v AS bv FROM plain_src a LEFT JOIN plain_src b ON a.k = b.k"))),
        ("left join keyed", lambda: printed(q("SELECT x.id, x.ts, y.name FROM keyed x LEFT JOIN keyed y ON x.id = y.id"))),
        ("inner join", lambda: printed(q("SELECT a.k, a.ts, b.k AS bk FROM plain_src a JOIN plain_src b ON a.k = b.k"))),
        ("interval join", lambda: printed(q("SELECT a.k, a.ts, b.ts AS bts FROM plain_src a, plain_src b WHERE a.k = b.k "
                                    "AND a.ts BETWEEN b.ts - INTERVAL '1' SECOND AND b.ts"))),
        ("union of types", lambda: printed(q("SELECT k, v FROM plain_src UNION ALL SELECT s, CAST(id AS INT) FROM plain"))),
        ("union of itself", lambda: printed(q("SELECT k, ts FROM plain_src UNION ALL SELECT k, ts FROM plain_src"))),
        ("deduplication", lambda: printed(q("SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM plain_src) "
                                    "WHERE rn = 1"))),
        ("top-n", lambda: printed(q("SELECT k, v, ts, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM plain_src) "
                            "WHERE rn <= 2"))),
        ("over", lambda: printed(q("SELECT k, ts, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s "
                           "FROM plain_src"))),
        ("elements", lambda: printed(e)),
        ("elements str", lambda: print(str(e.get_schema()))),
        ("elements types", lambda: print(e.get_schema().get_field_data_types())),
        ("elements typed", lambda: printed(e2)),
        ("elements typed types", lambda: print(e2.get_schema().get_field_data_types())),
        ("elements alias", lambda: printed(e2.alias("x", "y"))),
        ("elements add column", lambda: printed(e2.add_columns(col("a").alias("a2")))),
        ("elements drop column", lambda: printed(e2.drop_columns(col("b")))),
        ("elements group", lambda: printed(e2.group_by(col("b")).select(col("b"), col("a").sum.alias("s")))),
        ("sql projection", lambda: printed(q("SELECT k AS kk, name, price, ts, pt FROM plain_src WHERE v > 0"))),
        ("sql subquery", lambda: printed(q("SELECT kk FROM (SELECT k AS kk, v FROM plain_src) WHERE v > 1"))),
        ("sql star", lambda: printed(q("SELECT * FROM plain_src"))),
        ("describe table", lambda: described(t_env, "described")),
        ("describe view", lambda: described(t_env, "described_view")),
        ("describe aggregate view", lambda: described(t_env, "described_aggregate")),
        ("describe decimal arithmetic", lambda: described(t_env, "src")),
        ("describe keyed", lambda: described(t_env, "keyed")),
        ("describe nested", lambda: described(t_env, "nested")),
    ]
    return out


def run(mode: str) -> str:
    """Every scenario's output, in ``mode`` (``stream`` or ``batch``)."""
    try:
        from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
        from pyflink.table.expressions import col
    except ImportError:
        from kindling.table import DataTypes, EnvironmentSettings, TableEnvironment
        from kindling.table.expressions import col
    settings = EnvironmentSettings.in_streaming_mode() if mode == "stream" else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings)
    for ddl in TABLES.values():
        t_env.execute_sql(ddl)
    printed = io.StringIO()
    for label, show in scenarios(t_env, DataTypes, col):
        printed.write(f"=== {label}\n")
        with contextlib.redirect_stdout(printed):
            try:
                show()
            except Exception as exc:  # what a scenario refuses is part of its output
                print("ERROR", type(exc).__name__, (str(exc).splitlines() or [""])[0][:200])
    return printed.getvalue()


if __name__ == "__main__":
    sys.stdout.write(run(sys.argv[1] if len(sys.argv) > 1 else "stream"))

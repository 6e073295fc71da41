"""SQL lookup joins (FOR SYSTEM_TIME AS OF a processing-time attribute) against real PostgreSQL and MariaDB."""

from __future__ import annotations

import json
import os
import sys

import pytest

from kindling.sql import SqlError

sys.path.insert(0, os.path.dirname(__file__))
from jdbc_helpers import collect, execute, table_name, with_options  # noqa: E402

pytestmark = pytest.mark.integration

ORDERS = [[1, 10, 5.0], [2, 20, 7.5], [3, 10, 1.0], [4, 99, 3.0], [5, None, 2.0], [6, 30, 4.0]]


@pytest.fixture
def customers(db):
    target = table_name("customers")
    execute(db, f"CREATE TABLE {target} (id BIGINT, name VARCHAR(20), country VARCHAR(2), tier INT)",
            f"INSERT INTO {target} VALUES (10, 'ann', 'US', 1), (20, 'bob', 'DE', 2), (30, 'cid', 'US', 3), (30, 'cy', 'CA', 1)")
    return target


def _tables(env, db, customers, **options):
    env.execute_sql(f"CREATE TABLE orders (order_id INT, customer BIGINT, amount DOUBLE, proc_time AS PROCTIME()) "
                    f"WITH ('connector' = 'collection', 'data' = '{json.dumps(ORDERS)}')")
    env.execute_sql(f"CREATE TABLE customers (id BIGINT, name STRING, country STRING, tier INT) "
                    f"WITH ({with_options(db, customers, **options)})")


def _rows(env, query):
    return sorted(tuple(r) for r in collect(env, query))


def test_inner_and_left_lookup_joins_give_flinks_rows(env, db, customers):
    _tables(env, db, customers)
    inner = _rows(env, "SELECT o.order_id, c.name, c.country FROM orders AS o "
                       "JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.id")
    assert inner == [(1, "ann", "US"), (2, "bob", "DE"), (3, "ann", "US"), (6, "cid", "US"), (6, "cy", "CA")]
    left = _rows(env, "SELECT o.order_id, c.name FROM orders AS o "
                      "LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.id AND c.tier > 1")
    # the rest of the ON clause filters the dimension's rows: a LEFT join keeps the probe row with NULLs
    assert left == sorted([(1, None), (2, "bob"), (3, None), (4, None), (5, None), (6, "cid")], key=lambda r: (r[0], r[1] or ""))
    # a constant equality is a lookup key too; the WHERE clause applies after the join
    us = _rows(env, "SELECT order_id, name FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c "
                    "ON c.id = o.customer AND c.country = 'US' WHERE o.amount > 2")
    assert us == [(1, "ann"), (6, "cid")]
    # a second lookup may be keyed by the first one's columns; an aggregation over the joined rows
    chained = _rows(env, "SELECT o.order_id, d.country FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c "
                         "ON o.customer = c.id JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS d ON d.name = c.name "
                         "WHERE o.order_id < 3")
    assert chained == [(1, "US"), (2, "DE")]
    counts = _rows(env, "SELECT c.country, COUNT(*) AS n FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c "
                        "ON o.customer = c.id GROUP BY c.country")
    assert counts == [("CA", 1), ("DE", 1), ("US", 3)]


def test_select_star_gives_the_probe_columns_then_the_dimension_columns(env, db, customers):
    _tables(env, db, customers)
    result = env.execute_sql("SELECT * FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c "
                             "ON o.customer = c.id WHERE o.order_id = 2")
    rows = result.final_rows(timeout=600)
    assert [tuple(r) for r in rows][0][:3] == (2, 20, 7.5)
    assert list(rows[0].asDict())[:4] == ["order_id", "customer", "amount", "proc_time"]
    assert tuple(rows[0])[4:] == (20, "bob", "DE", 2)


def test_each_run_sees_the_dimension_as_it_is_then(env, db, customers):
    _tables(env, db, customers)
    query = ("SELECT o.order_id, c.name FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c "
             "ON o.customer = c.id WHERE o.order_id = 2")
    assert _rows(env, query) == [(2, "bob")]
    execute(db, f"UPDATE {customers} SET name = 'bert' WHERE id = 20")
    assert _rows(env, query) == [(2, "bert")]


@pytest.mark.parametrize("cache", [
    {"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "100", "lookup.partial-cache.cache-missing-key": "false"},
    {"lookup.cache": "FULL", "lookup.full-cache.periodic-reload.interval": "1 h"},
])
def test_cached_lookups_give_the_same_rows(env, db, customers, cache):
    _tables(env, db, customers, **cache)
    rows = _rows(env, "SELECT o.order_id, c.name FROM orders AS o "
                      "LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.id")
    assert rows == sorted([(1, "ann"), (2, "bob"), (3, "ann"), (4, None), (5, None), (6, "cid"), (6, "cy")],
                          key=lambda r: (r[0], r[1] or ""))


def test_the_lookup_hints_retry_looks_a_missed_key_up_again(env, postgres):
    """'retry-predicate'='lookup_miss': a key that found nothing is looked up again, max-attempts more times. Customer 99
    is visible from the third query that reaches its row on (a volatile function counts them in a sequence)."""
    base, view, counter = table_name("customers"), table_name("late"), table_name("queries")
    execute(postgres, f"CREATE TABLE {base} (id BIGINT, name VARCHAR(20), country VARCHAR(2), tier INT)",
            f"INSERT INTO {base} VALUES (10, 'ann', 'US', 1), (20, 'bob', 'DE', 2), (99, 'late', 'FR', 1)",
            f"CREATE SEQUENCE {counter}",
            f"CREATE FUNCTION {counter}_next() RETURNS BIGINT LANGUAGE sql VOLATILE AS $$ SELECT nextval('{counter}') $$",
            f"CREATE VIEW {view} AS SELECT id, name, country, tier FROM {base} WHERE id <> 99 OR {counter}_next() >= 3")
    _tables(env, postgres, view)

    def joined(max_attempts: int) -> list:
        return _rows(env, f"SELECT /*+ LOOKUP('table'='c', 'retry-predicate'='lookup_miss', 'retry-strategy'='fixed_delay', "
                          f"'fixed-delay'='100 ms', 'max-attempts'='{max_attempts}') */ o.order_id, c.name FROM orders AS o "
                          "LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.id WHERE o.order_id IN (1, 4)")

    def queries_for_99() -> int:
        connection = postgres.connect()
        try:
            cursor = connection.cursor()
            cursor.execute(f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {counter}")
            return int(cursor.fetchone()[0])
        finally:
            connection.close()

    assert joined(1) == [(1, "ann"), (4, None)]  # max-attempts 1: two lookups, both before 99 is visible
    assert queries_for_99() == 2
    execute(postgres, f"ALTER SEQUENCE {counter} RESTART")
    assert joined(3) == [(1, "ann"), (4, "late")]  # the third lookup finds it, and no fourth is made
    assert queries_for_99() == 3


def test_a_datastream_enriched_through_a_lookup_join_as_pyflink_does_it(env, db, customers):
    """The DataStream form of a lookup join, as PyFlink writes it (Flink's DataStream API has no lookup join of its
    own): the stream becomes a table with a processing-time column, the join runs in SQL, the result is a stream."""
    from kindling.common import Row, Types
    from kindling.table import Schema, StreamTableEnvironment

    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(f"CREATE TABLE customers (id BIGINT, name STRING, country STRING, tier INT) "
                      f"WITH ({with_options(db, customers)})")
    orders = env.from_collection([Row(order_id=i, customer=c) for i, c, _ in ORDERS if c is not None],
                                 type_info=Types.ROW_NAMED(["order_id", "customer"], [Types.INT(), Types.LONG()]))
    table = t_env.from_data_stream(orders, Schema.new_builder().column("order_id", "INT").column("customer", "BIGINT")
                                   .column_by_expression("proc_time", "PROCTIME()").build())
    t_env.create_temporary_view("orders_view", table)
    joined = t_env.sql_query("SELECT o.order_id, c.name FROM orders_view AS o LEFT JOIN customers "
                             "FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.id")
    with t_env.to_data_stream(joined).map(lambda r: (r[0], r[1] or "-"),
                                          output_type=Types.TUPLE([Types.INT(), Types.STRING()])).execute_and_collect() as rows:
        got = sorted(tuple(r) for r in rows)
    assert got == [(1, "ann"), (2, "bob"), (3, "ann"), (4, "-"), (6, "cid"), (6, "cy")]


def test_lookup_joins_that_flink_refuses_or_kindling_cannot_run_are_refused_by_name(env, db, customers):
    _tables(env, db, customers)
    env.execute_sql("CREATE TABLE timed (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
                    "WITH ('connector' = 'collection', 'data' = '[[10, \"2024-01-01 00:00:00\"]]')")
    cases = {
        "SELECT * FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.amount > c.tier":
            "requires an equality condition on fields of table \\[customers\\]",
        "SELECT * FROM orders AS o RIGHT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.id":
            "inner or LEFT join",
        "SELECT * FROM timed AS t JOIN customers FOR SYSTEM_TIME AS OF t.ts AS c ON t.id = c.id":
            "event-time attribute",
        "SELECT * FROM orders AS o JOIN timed FOR SYSTEM_TIME AS OF o.proc_time AS t ON o.customer = t.id":
            "connector 'collection'\\) cannot be looked up",
        "SELECT * FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.ident":
            "c.ident, which is not a column of 'customers' \\(id, name, country, tier\\)",
    }
    for query, message in cases.items():
        with pytest.raises(SqlError, match=message):
            env.execute_sql(query)
    with pytest.raises(SqlError) as error:
        env.execute_sql(f"CREATE TABLE secret (id BIGINT) WITH ({with_options(db, customers, **{'lookup.cache': 'PARTIAL'})})")
        env.execute_sql("SELECT * FROM orders AS o JOIN secret FOR SYSTEM_TIME AS OF o.proc_time AS s ON o.customer = s.id")
    assert "The cache will not have evictions" in str(error.value) and db.password not in str(error.value)


def test_a_running_job_sees_a_dimension_change_from_the_next_probe_rows_on(env, postgres, kafka, topic):
    """Flink's processing-time semantics: each probe row is joined with the row the table holds when it is processed;
    rows joined earlier keep the value they were joined with."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kafka"))
    from kafka_helpers import produce, read_back

    customers = table_name("customers")
    execute(postgres, f"CREATE TABLE {customers} (id BIGINT, name VARCHAR(20))", f"INSERT INTO {customers} VALUES (20, 'bob')")
    out = topic + "-joined"
    kafka.create_topic(out, partitions=1)
    env.execute_sql(f"CREATE TABLE orders (order_id INT, customer BIGINT, proc_time AS PROCTIME()) WITH ('connector' = 'kafka', "
                    f"'topic' = '{topic}', 'properties.bootstrap.servers' = '{kafka.bootstrap_servers}', "
                    "'scan.startup.mode' = 'earliest-offset', 'format' = 'csv')")
    env.execute_sql(f"CREATE TABLE customers (id BIGINT, name STRING) WITH ({with_options(postgres, customers)})")
    env.execute_sql(f"CREATE TABLE joined (order_id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = '{out}', "
                    f"'properties.bootstrap.servers' = '{kafka.bootstrap_servers}', 'format' = 'json')")
    job = env.execute_sql("INSERT INTO joined SELECT o.order_id, c.name FROM orders AS o "
                          "JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.id")
    try:
        produce(kafka.bootstrap_servers, topic, [(0, f"{i},20".encode()) for i in (1, 2, 3)])
        first = read_back(kafka.bootstrap_servers, out, expected=3, timeout=300)
        assert sorted(json.loads(m.value())["name"] for m in first) == ["bob"] * 3
        execute(postgres, f"UPDATE {customers} SET name = 'bert' WHERE id = 20")
        produce(kafka.bootstrap_servers, topic, [(0, f"{i},20".encode()) for i in (4, 5, 6)])
        both = read_back(kafka.bootstrap_servers, out, expected=6, timeout=300)
        joined = sorted((json.loads(m.value())["order_id"], json.loads(m.value())["name"]) for m in both)
        assert joined == [(1, "bob"), (2, "bob"), (3, "bob"), (4, "bert"), (5, "bert"), (6, "bert")]
    finally:
        job.get_job_client().cancel()
        kafka.delete_topic(out)


def _lookup_table(db, customers, **options):
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

    from kindling.connectors.lookup import LookupSpec, LookupTable

    schema = StructType([StructField("id", LongType()), StructField("name", StringType()), StructField("country", StringType()),
                         StructField("tier", IntegerType())])
    raw = {"url": db.url, "username": db.user, "password": db.password, "table-name": customers, **options}
    spec = LookupSpec("test", "jdbc", customers, raw, ("id",), ("id", "name", "country", "tier"), json.dumps(schema.jsonValue()))
    assert db.password not in repr(spec)
    return LookupTable(spec)


def test_one_query_per_batch_of_distinct_keys_and_the_partial_cache_in_front(db, customers, tmp_path, monkeypatch):
    import pyarrow as pa

    from kindling.runtime.metrics import USER_METRICS_DIR, flush_user_metrics, read_user_metrics

    monkeypatch.setenv("KINDLING_JOB_DIR", str(tmp_path))  # where a job manager's workers write their metrics

    table = _lookup_table(db, customers)
    probe = pa.array([10, 20, 10, None, 99, 30], pa.int32())  # cast to the key column's BIGINT
    rows = table.rows([probe]).to_pylist()
    assert table.source.queries == 1
    assert [[r["name"] for r in matches] for matches in rows] == [["ann"], ["bob"], ["ann"], [], [], ["cid", "cy"]]
    cached = _lookup_table(db, customers, **{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "10"})
    cached.rows([probe])
    cached.rows([pa.array([10, 99, 20], pa.int64())])
    assert cached.source.queries == 1 and cached.cache.metrics.hits == 3 and cached.cache.metrics.misses == 4
    flush_user_metrics()
    reported = read_user_metrics(tmp_path / USER_METRICS_DIR)
    assert {k.rsplit(".", 1)[-1]: v for k, v in reported.items() if k.startswith(f"LookupJoin[{customers}].cache.")} == {
        "hitCount": 3, "missCount": 4, "loadCount": 1, "numLoadFailures": 0, "numCachedRecords": 4}
    full = _lookup_table(db, customers, **{"lookup.cache": "FULL", "lookup.full-cache.periodic-reload.interval": "1 h"})
    assert [len(m) for m in full.rows([probe]).to_pylist()] == [1, 1, 1, 0, 0, 2]
    assert full.source.queries == 1 and full.cache.metrics.loads == 1  # the scan; a miss never queries
    full.cache.close()

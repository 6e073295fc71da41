"""Flink's batch execution mode for SQL: bounded tables, final results, Spark batch jobs.

The differential corpus (tests/sql/differential) compares batch answers with PyFlink's; these tests cover
what it cannot: the printed result, sinks, Kafka's bounded reads, refusals, cancel and failure.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from kindling.env import StreamEnvironment
from kindling.runtime.job import JobFailedError
from kindling.sql import SqlError, udf

pytestmark = pytest.mark.integration

# PyFlink 2.3, TableEnvironment.create(EnvironmentSettings.in_batch_mode()), parallelism 1:
#   t_env.execute_sql("SELECT k, v, d, ts, TRUE AS b FROM (VALUES ...) AS t(k, v, d, ts) ORDER BY v DESC").print()
VALUES = ("SELECT k, v, d, ts, TRUE AS b FROM (VALUES ('a', 1, 1.5, TIMESTAMP '2024-01-01 00:00:00.100'), "
          "('bb', 22, 2.0, TIMESTAMP '2024-01-01 00:00:00')) AS t(k, v, d, ts) ORDER BY v DESC")
PYFLINK_PRINT = """\
+--------------------------------+-------------+--------+-------------------------+--------+
|                              k |           v |      d |                      ts |      b |
+--------------------------------+-------------+--------+-------------------------+--------+
|                             bb |          22 |    2.0 | 2024-01-01 00:00:00.000 |   TRUE |
|                              a |           1 |    1.5 | 2024-01-01 00:00:00.100 |   TRUE |
+--------------------------------+-------------+--------+-------------------------+--------+
2 rows in set
"""
# Flink's SQL client prints a batch result with columns as wide as their content (CliTableauResultView).
CLIENT_PRINT = """\
+----+----+-----+-------------------------+------+
|  k |  v |   d |                      ts |    b |
+----+----+-----+-------------------------+------+
| bb | 22 | 2.0 | 2024-01-01 00:00:00.000 | TRUE |
|  a |  1 | 1.5 | 2024-01-01 00:00:00.100 | TRUE |
+----+----+-----+-------------------------+------+
2 rows in set
"""
ORDERS = """CREATE TABLE orders (id BIGINT, customer STRING, amount INT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '100',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100',
  'fields.customer.length' = '1', 'fields.amount.min' = '1', 'fields.amount.max' = '9')"""


@pytest.fixture
def batch_env(spark, tmp_path):
    env = StreamEnvironment({"execution.runtime-mode": "batch", "execution.checkpointing.interval": "100 ms",
                             "state.checkpoints.dir": str(tmp_path / "checkpoints")}, spark=spark)
    env.execute_sql(ORDERS)
    return env


def test_a_select_prints_flinks_batch_tableau_in_the_querys_order(batch_env):
    out = io.StringIO()
    batch_env.execute_sql(VALUES).print(out)
    assert out.getvalue() == PYFLINK_PRINT
    out = io.StringIO()
    batch_env.execute_sql(VALUES).print(out, client=True)
    assert out.getvalue() == CLIENT_PRINT
    out = io.StringIO()
    batch_env.execute_sql("SELECT id FROM orders WHERE amount > 100").print(out)
    assert out.getvalue() == "Empty set\n"


def test_an_aggregation_gives_only_final_rows_as_inserts(batch_env):
    result = batch_env.execute_sql("SELECT customer, COUNT(*) AS n, SUM(amount) AS s FROM orders GROUP BY customer")
    changes = result.collect_changelog(timeout=300)
    assert result.get_job_client().get_job_status() == "FINISHED"
    assert {kind for kind, _ in changes} == {"+I"}
    assert len({row.customer for _, row in changes}) == len(changes)  # one row per key: no intermediate results
    assert sum(row.n for _, row in changes) == 100
    ordered = batch_env.execute_sql("SELECT id, amount FROM orders ORDER BY amount DESC, id LIMIT 7").collect(timeout=300)
    everything = batch_env.execute_sql("SELECT id, amount FROM orders").collect(timeout=300)
    assert [tuple(r) for r in ordered] == sorted((tuple(r) for r in everything), key=lambda r: (-r[1], r[0]))[:7]


def test_an_unbounded_table_is_refused_with_flinks_message(batch_env):
    batch_env.execute_sql("CREATE TABLE endless (x INT) WITH ('connector' = 'datagen')")
    with pytest.raises(SqlError) as refused:
        batch_env.execute_sql("SELECT * FROM endless")
    assert "Querying an unbounded table 'endless' in batch mode is not allowed. The table source is unbounded." in str(refused.value)
    assert refused.value.construct == "batch mode"


def test_insert_writes_final_rows_and_a_second_run_writes_them_again(batch_env, tmp_path):
    out = tmp_path / "out"
    batch_env.execute_sql(f"CREATE TABLE totals (customer STRING, s INT) WITH ('connector' = 'filesystem', 'path' = '{out}', "
                          "'format' = 'json')")
    insert = "INSERT INTO totals SELECT customer, SUM(amount) FROM orders GROUP BY customer"
    for run in (1, 2):  # a batch job starts from scratch each time (Flink's batch jobs have no checkpoint to resume)
        assert batch_env.execute_sql(insert).wait(300) == "FINISHED"
        files = [f for f in sorted(out.rglob("*")) if f.is_file() and not any(p.startswith((".", "_")) for p in f.relative_to(out).parts)]
        rows = [json.loads(line) for f in files for line in f.read_text().splitlines()]
        expected = {r.customer: r.s for r in batch_env.execute_sql("SELECT customer, SUM(amount) AS s FROM orders GROUP BY customer")
                    .collect(timeout=300)}
        assert len(rows) == run * len(expected)
        assert {(r["customer"], r["s"]) for r in rows} == set(expected.items())


def test_bounded_kafka_is_read_in_one_batch(kafka, topic, batch_env):
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 5})
    for i in range(60):
        producer.produce(topic, json.dumps({"id": i, "k": f"k{i % 3}"}).encode(), partition=i % 4)
    assert producer.flush(30) == 0
    batch_env.execute_sql(f"""CREATE TABLE events (id INT, k STRING, p INT METADATA FROM 'partition' VIRTUAL) WITH (
      'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{kafka.bootstrap_servers}',
      'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json')""")
    rows = batch_env.execute_sql("SELECT p, k, COUNT(*) AS n, MIN(id) AS first_id FROM events GROUP BY p, k").collect(timeout=300)
    expected: dict[tuple[int, str], list[int]] = {}
    for i in range(60):
        expected.setdefault((i % 4, f"k{i % 3}"), []).append(i)
    assert {(r.p, r.k): (r.n, r.first_id) for r in rows} == {key: (len(ids), min(ids)) for key, ids in expected.items()}


def test_cancel_stops_a_running_batch_job(batch_env):
    batch_env.execute_sql("CREATE TABLE slow (x INT) WITH ('connector' = 'datagen', 'number-of-rows' = '2000000', "
                          "'rows-per-second' = '10')")
    result = batch_env.execute_sql("SELECT COUNT(*) FROM slow")
    client = result.get_job_client()
    assert client.get_job_status() == "RUNNING"
    started = time.monotonic()
    client.cancel()
    assert client.get_job_status() == "CANCELED"
    assert time.monotonic() - started < 60


def test_a_failing_batch_job_says_why(batch_env):
    @udf(result_type="INT")
    def boom(x):
        raise ValueError(f"no value for {x}")

    batch_env.create_temporary_function("boom", boom)
    result = batch_env.execute_sql("SELECT boom(amount) FROM orders")
    with pytest.raises(JobFailedError, match="no value for"):
        result.wait(300)
    assert result.get_job_client().get_job_status() == "FAILED"


def test_a_datastream_view_is_refused_in_batch_mode(batch_env):
    stream = batch_env.from_collection([(1,)], "x INT")
    batch_env.sql_session().create_temporary_view("numbers", stream)
    with pytest.raises(SqlError) as refused:
        batch_env.execute_sql("SELECT * FROM numbers")
    assert refused.value.construct == "batch mode"


def test_set_runtime_mode_switches_a_session_to_batch(env, tmp_path: Path):
    env.execute_sql(ORDERS)
    env.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    out = io.StringIO()
    env.execute_sql("SELECT COUNT(*) AS n FROM orders").print(out)
    assert "op" not in out.getvalue().splitlines()[1] and "100" in out.getvalue()


def test_collect_works_as_pyflinks_closeable_iterator(batch_env):
    from kindling.common import Row, RowKind

    with batch_env.execute_sql("SELECT COUNT(*) AS n FROM orders").collect() as rows:
        assert [tuple(r) for r in rows] == [(100,)]
        # a batch query's final rows, positional and inserts as PyFlink hands them out (its column also by name)
        assert repr(rows[0]) == "<Row(100)>" and rows[0] == Row(100) and rows[0].get_row_kind() == RowKind.INSERT
        assert rows[0].n == 100 and rows[0].as_dict() == {"n": 100}


def test_a_statement_set_writes_each_sink_in_one_batch_job(batch_env, tmp_path):
    for name in ("small", "large"):
        batch_env.execute_sql(f"CREATE TABLE {name} (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / name}', "
                              "'format' = 'csv')")
    result = batch_env.execute_sql("EXECUTE STATEMENT SET BEGIN INSERT INTO small SELECT id FROM orders WHERE id <= 10; "
                                   "INSERT INTO large SELECT id FROM orders WHERE id > 90; END")
    assert result.wait(300) == "FINISHED"
    written = {name: sorted(int(line) for f in (tmp_path / name).glob("part-*") for line in f.read_text().split())
               for name in ("small", "large")}
    assert written == {"small": list(range(1, 11)), "large": list(range(91, 101))}

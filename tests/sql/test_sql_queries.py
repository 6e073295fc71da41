"""SQL queries run on Spark through env.execute_sql: windows, updating aggregations, functions, views, errors."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta

import pytest

from kindling.sql import SqlError, udf

pytestmark = pytest.mark.integration

ROWS = 200  # one row a minute: ids 1..200, event time id minutes after the epoch
EPOCH = datetime(1970, 1, 1)

TABLE = f"""CREATE TABLE events (
  id BIGINT,
  name STRING,
  ts AS TO_TIMESTAMP_LTZ(id * 60000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '{ROWS}',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{ROWS}',
  'fields.name.length' = '4'
)"""


@pytest.fixture
def sql_env(env):
    env.execute_sql(TABLE)
    return env


def ids():
    return range(1, ROWS + 1)


def ts_of(i: int) -> datetime:
    return EPOCH + timedelta(minutes=i)


def test_group_window_tumble_hourly(sql_env):
    result = sql_env.execute_sql(
        "SELECT TUMBLE_START(ts, INTERVAL '1' HOUR) AS window_start, TUMBLE_END(ts, INTERVAL '1' HOUR) AS window_end,\n"
        "       COUNT(*) AS c, SUM(id) AS s\n"
        "FROM events GROUP BY TUMBLE(ts, INTERVAL '1' HOUR)"
    )
    assert result.upsert_key is None  # windows fire once: an append-only result
    expected = defaultdict(lambda: [0, 0])
    for i in ids():
        start = ts_of(i).replace(minute=0)
        expected[start][0] += 1
        expected[start][1] += i
    rows = result.final_rows(timeout=300)
    assert {r.window_start: [r.c, r.s] for r in rows} == dict(expected)
    assert all(r.window_end - r.window_start == timedelta(hours=1) for r in rows)
    assert all(kind == "+I" for kind, _ in result.collect_changelog())


def test_window_tvf_cumulate(sql_env):
    rows = sql_env.execute_sql(
        "SELECT window_start, window_end, COUNT(*) AS c FROM TABLE(\n"
        "  CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '20' MINUTES, INTERVAL '1' HOUR))\n"
        "GROUP BY window_start, window_end"
    ).final_rows(timeout=300)
    expected = Counter()
    for i in ids():
        t = ts_of(i)
        start = t.replace(minute=0)
        for k in (1, 2, 3):
            end = start + timedelta(minutes=20 * k)
            if t < end:
                expected[(start, end)] += 1
    assert {(r.window_start, r.window_end): r.c for r in rows} == dict(expected)


def test_unbounded_group_by_is_an_upsert_changelog(sql_env):
    result = sql_env.execute_sql("SELECT id % 3 AS k, COUNT(*) AS c, MAX(id) AS top FROM events GROUP BY id % 3")
    assert result.upsert_key == ["k"]
    changelog = result.collect_changelog(timeout=300)
    assert {kind for kind, _ in changelog} <= {"+I", "+U"}
    final = {r.k: (r.c, r.top) for r in result.final_rows()}
    expected = {k: (len([i for i in ids() if i % 3 == k]), max(i for i in ids() if i % 3 == k)) for k in range(3)}
    assert final == expected


def test_projection_filter_case_cast_functions_union_and_views(sql_env):
    sql_env.execute_sql(
        "CREATE VIEW small (n, label) AS SELECT id, CASE WHEN id % 2 = 0 THEN 'even' ELSE 'odd' END FROM events WHERE id <= 4"
    )
    rows = sql_env.execute_sql(
        "SELECT n, label, CAST(n AS STRING) || '-x' AS s, DATE_FORMAT(TIMESTAMPADD(HOUR, 1, TO_TIMESTAMP_LTZ(n * 60000, 3)), 'HH:mm') AS d,\n"
        "       UPPER(label) AS u, FLOOR(TO_TIMESTAMP_LTZ(n * 60000, 3) TO HOUR) AS h\n"
        "FROM small\n"
        "UNION ALL\n"
        "SELECT id, 'big', CAST(id AS VARCHAR(5)), '', 'BIG', FLOOR(ts TO HOUR) FROM events WHERE id = 199"
    ).final_rows(timeout=300)
    got = sorted((r.n, r.label, r.s, r.d, r.u, r.h) for r in rows)
    expected = [(i, "even" if i % 2 == 0 else "odd", f"{i}-x", f"01:{i:02d}", ("EVEN" if i % 2 == 0 else "ODD"), EPOCH) for i in range(1, 5)]
    expected.append((199, "big", "199", "", "BIG", EPOCH + timedelta(hours=3)))
    assert got == sorted(expected)


def test_ceil_and_floor_keep_their_arguments_type_as_in_flink(sql_env):
    """Spark's ceil/floor of a DOUBLE is a BIGINT (2, and no room for 1E20); Flink's is a DOUBLE (2.0)."""
    rows = sql_env.execute_sql(
        "SELECT id, CEIL(CAST(id AS INT)) AS ci, FLOOR(CAST(id AS DOUBLE) / 4) AS fd, CEIL(CAST(id AS FLOAT) / 4) AS cf,\n"
        "       CEILING(CAST(id AS DECIMAL(6, 2)) / 4) AS cdec, FLOOR(id * 1E20) AS big, CEIL(CAST('-Infinity' AS DOUBLE)) AS inf,\n"
        "       FLOOR(ts TO HOUR) AS h, CAST(id AS DOUBLE) / 4 AS q, id / 2 AS half\n"
        "FROM events WHERE id <= 3"
    ).final_rows(timeout=300)
    got = {r.id: r for r in rows}
    # A CAST the query wrote makes a floating division (it was taken for Spark's own cast of an integer).
    assert [(got[i].q, got[i].half) for i in (1, 2, 3)] == [(0.25, 0), (0.5, 1), (0.75, 1)]
    assert [(got[i].ci, got[i].fd, got[i].cf, int(got[i].cdec), got[i].big, got[i].inf) for i in (1, 2, 3)] == [
        (1, 0.0, 1.0, 1, 1e20, float("-inf")), (2, 0.0, 1.0, 1, 2e20, float("-inf")), (3, 0.0, 1.0, 1, 3e20, float("-inf"))]
    assert all(type(r.fd) is float and type(r.cf) is float and type(r.big) is float and type(r.ci) is int for r in rows)
    assert {got[i].h for i in (1, 2, 3)} == {EPOCH}


def test_truncate_cuts_toward_zero_and_keeps_the_type(sql_env):
    rows = sql_env.execute_sql(
        "SELECT id, TRUNCATE(CAST(id AS DOUBLE) * 1.15E0, 2) AS d, TRUNCATE(-CAST(id AS DOUBLE) / 3, 1) AS neg,\n"
        "       TRUNCATE(CAST(id AS INT) * 1234, -2) AS i, TRUNCATE(CAST(id AS DECIMAL(8, 3)) / 7, 2) AS dec, TRUNCATE(id * 1E20) AS big\n"
        "FROM events WHERE id <= 2"
    ).final_rows(timeout=300)
    got = {r.id: (r.d, r.neg, r.i, str(r.dec), r.big) for r in rows}
    assert got == {1: (1.15, -0.3, 1200, "0.14", 1e20), 2: (2.3, -0.6, 2400, "0.28", 2e20)}
    assert all(type(r.d) is float and type(r.i) is int for r in rows)


def test_python_functions_row_wise_vectorised_and_from_a_module(sql_env):
    @udf(result_type="STRING")
    def shout(value):
        return value.upper() + "!"

    sql_env.create_temporary_function("shout", shout)
    sql_env.execute_sql("CREATE TEMPORARY FUNCTION times_ten AS 'sql_test_udfs.times_ten' LANGUAGE PYTHON")
    sql_env.execute_sql("CREATE TEMPORARY FUNCTION province AS 'sql_test_udfs.province_id_to_name' LANGUAGE PYTHON")
    rows = sql_env.execute_sql(
        "SELECT id, shout(name) AS loud, name, times_ten(id) AS t, province(CAST(id % 7 AS INT)) AS p FROM events WHERE id <= 20"
    ).final_rows(timeout=300)
    from sql_test_udfs import PROVINCES

    assert sorted((r.id, r.t, r.p) for r in rows) == [(i, i * 10, PROVINCES[i % 7]) for i in range(1, 21)]
    assert all(r.loud == r.name.upper() + "!" for r in rows)
    assert "shout" in [r[0] for r in sql_env.execute_sql("SHOW FUNCTIONS").collect()]
    with pytest.raises(SqlError, match=r"must be declared with @udf\(result_type=...\)"):
        sql_env.execute_sql("CREATE TEMPORARY FUNCTION plain AS 'sql_test_udfs.undecorated' LANGUAGE PYTHON")
    with pytest.raises(SqlError, match="cannot import 'no_such_module.f'"):
        sql_env.execute_sql("CREATE TEMPORARY FUNCTION g AS 'no_such_module.f' LANGUAGE PYTHON")


def test_show_describe_explain(sql_env):
    assert [r[0] for r in sql_env.execute_sql("SHOW TABLES").collect()] == ["events"]
    described = {r.name: r for r in sql_env.execute_sql("DESCRIBE events").collect()}
    assert described["id"].type == "BIGINT"
    # PyFlink 2.3's DESCRIBE of such a table: the rowtime's type marked, its expression and watermark with names quoted
    assert described["ts"].type == "TIMESTAMP_LTZ(3) *ROWTIME*" and described["ts"].extras == "AS `TO_TIMESTAMP_LTZ`(`id` * 60000, 3)"
    assert described["ts"].null is True and described["ts"].watermark == "`ts` - INTERVAL '5' SECOND"
    plan = sql_env.execute_sql("EXPLAIN SELECT id % 2 AS k, COUNT(*) FROM events GROUP BY id % 2").collect()[0][0]
    assert "output mode: update" in plan and "Aggregate" in plan and "upsert key ['k']" in plan
    sql_env.execute_sql("CREATE TABLE out_table (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole')")
    plan = sql_env.execute_sql("EXPLAIN INSERT INTO out_table SELECT id, id FROM events").collect()[0][0]
    assert "Sink: out_table (connector 'blackhole')" in plan and "output mode: append" in plan
    # A view whose name is also one of the columns it selects (as Nexmark's `person` view selects `person.id`).
    sql_env.execute_sql("CREATE VIEW name AS SELECT name, id FROM events WHERE id > 10")
    from kindling.table import StreamTableEnvironment

    table = StreamTableEnvironment.create(sql_env).sql_query("SELECT name FROM name")
    assert table.get_schema().fieldNames() == ["name"] and table.to_dataframe().isStreaming


def test_set_and_reset(sql_env):
    sql_env.execute_sql("SET 'pipeline.name' = 'my-sql-job'")
    sql_env.execute_sql("SET 'table.dml-sync' = 'true'")
    options = dict((r.key, r.value) for r in sql_env.execute_sql("SET").collect())
    assert options["pipeline.name"] == "my-sql-job" and options["table.dml-sync"] == "true"
    sql_env.execute_sql("RESET 'pipeline.name'")
    assert "pipeline.name" not in dict((r.key, r.value) for r in sql_env.execute_sql("SET").collect())
    with pytest.raises(SqlError, match="unknown option 'table.dml-snyc'; did you mean 'table.dml-sync'"):
        sql_env.execute_sql("SET 'table.dml-snyc' = 'true'")
    with pytest.raises(SqlError, match="SET: .*checkpointing"):
        sql_env.execute_sql("SET 'execution.checkpointing.intervall' = '1 s'")


def test_errors_name_the_construct_and_line_without_spark_traces(sql_env, kafka):
    with pytest.raises(SqlError) as error:
        sql_env.execute_sql("SELECT id,\n  nope\nFROM events")
    message = str(error.value)
    assert message.startswith("SQL line 2: SELECT:") and "nope" in message
    assert "at org.apache" not in message and "\n" not in message
    with pytest.raises(SqlError, match="table or view 'evnts' does not exist; did you mean 'events'"):
        sql_env.execute_sql("SELECT * FROM evnts")
    with pytest.raises(SqlError, match=r"line 3: Top-N: .* Supported form:"):
        sql_env.execute_sql("SELECT id,\n  name,\n    ROW_NUMBER() OVER (PARTITION BY name ORDER BY id) AS rn FROM events")
    sql_env.execute_sql("CREATE TABLE two (a BIGINT, b STRING) WITH ('connector' = 'blackhole')")
    with pytest.raises(SqlError, match=r"the query produces 1 columns \(id\) but the table takes 2 \(a, b\)"):
        sql_env.execute_sql("INSERT INTO two SELECT id FROM events")
    sql_env.execute_sql(
        "CREATE TABLE plain_kafka (k BIGINT, c BIGINT) WITH ('connector' = 'kafka', 'topic' = 'x', "
        f"'properties.bootstrap.servers' = '{kafka.bootstrap_servers}', 'format' = 'json')"
    )
    with pytest.raises(SqlError, match="doesn't support consuming update changes.*upsert-kafka"):
        sql_env.execute_sql("INSERT INTO plain_kafka SELECT id % 2, COUNT(*) FROM events GROUP BY id % 2")
    with pytest.raises(SqlError, match="unknown connector 'datagne'; did you mean 'datagen'"):
        sql_env.execute_sql("CREATE TABLE bad (a INT) WITH ('connector' = 'datagne')")
    sql_env.execute_sql("CREATE TABLE bad_opts (a INT) WITH ('connector' = 'datagen', 'rows-per-sec' = '5')")
    with pytest.raises(SqlError, match="unknown datagen option 'rows-per-sec'; did you mean 'rows-per-second'"):
        sql_env.execute_sql("SELECT * FROM bad_opts")
    # a computed time field whose type the text does not tell is checked once planned (Flink's message, PyFlink 2.3)
    sql_env.execute_sql("CREATE TABLE not_a_time (n BIGINT, ts AS n + 1, WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen')")
    with pytest.raises(SqlError, match=r"line 1: Invalid data type of time field for watermark definition\. .*"
                                       r"but the time field type is BIGINT\. Supported form"):
        sql_env.execute_sql("SELECT * FROM not_a_time")
    # a CASE of columns is typed from their declared types (no planning): fields of other types are refused alike
    sql_env.execute_sql("CREATE TABLE case_time (k INT, r ROW<n BIGINT, m BIGINT>, ts AS CASE WHEN k = 0 THEN r.n ELSE r.m END, "
                        "WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen')")
    with pytest.raises(SqlError, match=r"but the time field type is BIGINT\. Supported form"):
        sql_env.execute_sql("SELECT * FROM case_time")


def test_interval_join_of_two_streams(sql_env):
    sql_env.execute_sql(
        "CREATE TABLE shipments (oid BIGINT, ts AS TO_TIMESTAMP_LTZ(oid * 60000 + 30000, 3),\n"
        "  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)\n"
        "WITH ('connector' = 'datagen', 'number-of-rows' = '100', 'fields.oid.kind' = 'sequence',\n"
        "  'fields.oid.start' = '51', 'fields.oid.end' = '150')"
    )
    result = sql_env.execute_sql(
        "SELECT e.id, s.oid, s.ts AS shipped FROM events e JOIN shipments s\n"
        "ON e.id = s.oid AND s.ts BETWEEN e.ts AND e.ts + INTERVAL '1' MINUTE"
    )
    rows = result.final_rows(timeout=300)
    assert sorted((r.id, r.oid, r.shipped) for r in rows) == [
        (i, i, ts_of(i) + timedelta(seconds=30)) for i in range(51, ROWS + 1) if i <= 150
    ]
    # An inner join emits nothing on a watermark: the job ends with its input, without Spark's batch that only evicts.
    (query,) = result.get_job_client().queries.values()
    ran = [(p["batchId"], p["numInputRows"]) for p in query.recentProgress if "addBatch" in p["durationMs"]]
    assert ran[-1][1] > 0, ran


def test_a_user_function_named_like_a_spark_builtin_is_the_one_called(env):
    @udf(result_type="STRING")
    def upper(s):
        return f"<{s}>"

    @udf(result_type="INT")
    def explode(x):
        return x * 100

    env.create_temporary_function("upper", upper)
    env.create_temporary_function("explode", explode)
    env.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    rows = env.execute_sql("SELECT upper(k) AS u, explode(v) AS e, LOWER('A') AS l FROM (VALUES ('a', 1)) AS t(k, v)").final_rows(timeout=300)
    assert [tuple(r) for r in rows] == [("<a>", 100, "a")]


def test_insert_values_and_queries_without_a_table_run_bounded_in_streaming_mode(env, tmp_path):
    """INSERT INTO t VALUES (...), as Flink's SQL client users seed a table, and SELECTs of literals run in streaming
    mode as bounded jobs (Flink runs them so); a statement set mixing one with a streaming INSERT is refused by name."""
    env.execute_sql(f"CREATE TABLE seeded (n INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'seeded'}', "
                    "'format' = 'json')")
    env.execute_sql("INSERT INTO seeded VALUES (1, 'a'), (2, 'b'), (2, 'b')").wait()
    assert sorted(tuple(r) for r in env.execute_sql("SELECT n, s FROM seeded").final_rows()) == [(1, "a"), (2, "b"), (2, "b")]
    assert [tuple(r) for r in env.execute_sql("SELECT COUNT(*) AS c, 1 + 1 AS two FROM (VALUES (1), (2)) AS t(x)").final_rows()] == [(2, 2)]
    env.execute_sql(TABLE)
    env.execute_sql(f"CREATE TABLE copied (n INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'copied'}', "
                    "'format' = 'json')")
    with pytest.raises(SqlError, match=r"reads no table \(VALUES or literals\).*statement set"):
        env.execute_sql("EXECUTE STATEMENT SET BEGIN INSERT INTO copied VALUES (7, 'x'); "
                        "INSERT INTO copied SELECT CAST(id AS INT), name FROM events; END")


def _collection(name: str, columns: str, rows: list, rows_per_batch: int = 1) -> str:
    import json

    return (f"CREATE TABLE {name} ({columns}) WITH ('connector' = 'collection', 'rows-per-batch' = '{rows_per_batch}', "
            f"'data' = '{json.dumps(rows)}')")


def _applied(changes: list) -> list[tuple]:
    """A retract changelog applied to a multiset (no row retracted before it was inserted)."""
    counts: dict[tuple, int] = {}
    for kind, row in changes:
        counts[tuple(row)] = counts.get(tuple(row), 0) + (1 if kind in ("+I", "+U") else -1)
        assert counts[tuple(row)] >= 0, changes
    return sorted((row for row, n in counts.items() for _ in range(n)), key=repr)


def test_intersect_and_except_over_streams_are_flinks_changelog(env):
    """Set operations compare distinct rows, NULL equal to NULL. An EXCEPT row is inserted while the right side has not
    produced it and deleted when it does (b: on the left a micro-batch before the right); INTERSECT rows only arrive."""
    env.execute_sql(_collection("sl", "k STRING, v BIGINT", [["b", 2], ["a", 1], [None, 3], ["a", 4], ["c", 5], ["b", 60]], 2))
    env.execute_sql(_collection("sr", "k STRING, w BIGINT", [["x", 0], ["a", 1], ["b", 2], ["b", 3], [None, 4]], 2))
    changes = env.execute_sql("SELECT k FROM sl EXCEPT SELECT k FROM sr").collect_changelog(timeout=120)
    assert [("+I", ("b",)), ("-D", ("b",))] == [(kind, tuple(row)) for kind, row in changes if tuple(row) == ("b",)], changes
    assert _applied(changes) == [("c",)]
    changes = env.execute_sql("SELECT k FROM sl INTERSECT (SELECT k FROM sr WHERE w > 0)").collect_changelog(timeout=120)
    assert {kind for kind, _ in changes} <= {"+I", "-U", "+U"}, changes
    assert _applied(changes) == [("a",), ("b",), (None,)]
    for query, construct in (("SELECT k FROM sl INTERSECT ALL SELECT k FROM sr", "INTERSECT ALL"),
                             ("SELECT k FROM sl EXCEPT SELECT k FROM sr ORDER BY k", "ORDER BY over a set operation"),
                             ("SELECT k FROM sl UNION ALL (SELECT k FROM sl EXCEPT SELECT k FROM sr)", "UNION ALL")):
        with pytest.raises(SqlError) as refused:
            env.execute_sql(query)
        assert refused.value.construct == construct


def test_outer_joins_over_streams_pad_then_retract_as_flinks_join(env):
    """A row with no match yet leaves padded with NULLs and is retracted (-D) when its key's first match arrives; a FULL
    join does so for both sides; a NULL key never matches. One row of each side per micro-batch."""
    env.execute_sql(_collection("jl", "k STRING, v BIGINT", [["a", 1], ["b", 2], [None, 3]]))
    env.execute_sql(_collection("jr", "k STRING, w BIGINT", [["b", 20], ["c", 30], ["a", 10]]))
    left = env.execute_sql("SELECT l.k, v, r.w FROM jl l LEFT JOIN jr r ON l.k = r.k").collect_changelog(timeout=120)
    assert sorted(((kind, tuple(row)) for kind, row in left), key=repr) == sorted([
        ("+I", ("a", 1, None)), ("+I", ("b", 2, 20)), ("+I", (None, 3, None)), ("-D", ("a", 1, None)), ("+I", ("a", 1, 10))], key=repr)
    assert [(kind, tuple(row)) for kind, row in left if row[0] == "a"] == [("+I", ("a", 1, None)), ("-D", ("a", 1, None)),
                                                                           ("+I", ("a", 1, 10))]
    full = env.execute_sql("SELECT l.v, r.k AS rk, r.w FROM jl l FULL JOIN jr r ON l.k = r.k").collect_changelog(timeout=120)
    assert ("-D", (None, "b", 20)) in [(kind, tuple(row)) for kind, row in full], full
    assert _applied(full) == sorted([(1, "a", 10), (2, "b", 20), (3, None, None), (None, "c", 30)], key=repr)
    # over an updating input (an unbounded GROUP BY): a count's old value retracts the row it joined (-D), then the new joins
    env.execute_sql(_collection("jc", "k STRING, v BIGINT", [["a", 1], ["a", 2], ["b", 3]]))
    env.execute_sql(_collection("jr2", "k STRING, w BIGINT", [["a", 10], ["b", 20]]))
    counted = env.execute_sql("SELECT g.k, g.n, r.w FROM (SELECT k, COUNT(*) AS n FROM jc GROUP BY k) g JOIN jr2 r ON g.k = r.k")
    changes = [(kind, tuple(row)) for kind, row in counted.collect_changelog(timeout=120)]
    assert [c for c in changes if c[1][0] == "a"] == [("+I", ("a", 1, 10)), ("-D", ("a", 1, 10)), ("+I", ("a", 2, 10))], changes
    assert _applied(changes) == [("a", 2, 10), ("b", 1, 20)]


def test_in_and_exists_subqueries_over_streams_are_flinks_semi_join(env):
    """A left row waits for its first match and is emitted once (insert-only), whichever side arrives first; a null key
    never matches; the rest of the WHERE still applies. NOT IN (an anti join) stays refused, pointing to batch mode."""
    env.execute_sql(_collection("l", "k STRING, v BIGINT", [["a", 1], ["b", 2], [None, 3], ["a", 4], ["c", 5], ["b", 60]]))
    env.execute_sql(_collection("r", "k STRING, w BIGINT", [["x", 0], ["a", 1], ["b", 2], ["b", 3], [None, 4]]))
    result = env.execute_sql("SELECT k, v FROM l WHERE v < 50 AND k IN (SELECT k FROM r WHERE w > 0)")
    changes = result.collect_changelog(timeout=120)
    assert {kind for kind, _ in changes} == {"+I"}
    assert sorted(tuple(row) for _, row in changes) == [("a", 1), ("a", 4), ("b", 2)]
    exists = env.execute_sql("SELECT l.v FROM l WHERE EXISTS (SELECT 1 FROM r AS s WHERE s.k = l.k AND s.w >= 2)")
    assert sorted(tuple(r) for r in exists.final_rows()) == [(2,), (60,)]
    with pytest.raises(SqlError, match="NOT IN and other subqueries in batch mode"):
        env.execute_sql("SELECT v FROM l WHERE k NOT IN (SELECT k FROM r)")
    # NOT EXISTS: Flink's anti join, a retract changelog: a row is inserted while its key has no match and deleted when
    # the first arrives (b: its left row comes a micro-batch before its match); a null key never matches, so its row stays.
    env.execute_sql(_collection("l2", "k STRING, v BIGINT", [["b", 2], ["a", 1], [None, 3], ["a", 4], ["c", 5], ["b", 60]], 2))
    env.execute_sql(_collection("r2", "k STRING, w BIGINT", [["x", 0], ["a", 1], ["b", 2], ["b", 3], [None, 4]], 2))
    anti = env.execute_sql("SELECT l.v * 10 AS v10, l.k FROM l2 AS l WHERE l.v < 50 AND NOT EXISTS (SELECT 1 FROM r2 AS s "
                           "WHERE s.k = l.k AND s.w >= 2)")
    changes = anti.collect_changelog(timeout=120)
    assert {kind for kind, _ in changes} == {"+I", "-D"} and ("-D", (20, "b")) in [(k, tuple(r)) for k, r in changes], changes
    final: dict[tuple, int] = {}
    for kind, row in changes:
        final[tuple(row)] = final.get(tuple(row), 0) + (1 if kind == "+I" else -1)
    assert all(count >= 0 for count in final.values()), changes
    assert sorted(row for row, count in final.items() for _ in range(count)) == [(10, "a"), (30, None), (40, "a"), (50, "c")]
    with pytest.raises(SqlError, match="NOT IN and other subqueries in batch mode"):  # under GROUP BY: not planned as an anti join
        env.execute_sql("SELECT COUNT(*) FROM l2 AS l WHERE NOT EXISTS (SELECT 1 FROM r2 AS s WHERE s.k = l.k) GROUP BY k")
    env.execute_sql("SET 'table.exec.state.ttl' = '1 h'")
    with pytest.raises(SqlError, match="IN/EXISTS over streams with 'table.exec.state.ttl' set is not supported"):
        env.execute_sql("SELECT v FROM l WHERE k IN (SELECT k FROM r)")


def test_a_table_the_translation_did_not_see_is_registered_when_spark_misses_it(env, monkeypatch):
    # As if no position read as a table's: Spark's "cannot be found" has kindling register the view (and, planning the
    # view, its table) and plan the query again
    import kindling.sql.translate as translate

    monkeypatch.setattr(translate, "_may_name_a_table", lambda tokens, i: False)
    env.execute_sql("CREATE TABLE unseen_numbers (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '4', "
                    "'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '4')")
    env.execute_sql("CREATE VIEW unseen_view AS SELECT n * 10 AS tens FROM unseen_numbers")
    rows = sorted(row[0] for row in env.execute_sql("SELECT tens FROM unseen_view").final_rows())
    assert rows == [10, 20, 30, 40]

"""Top-N, deduplication and window Top-N on streams, and Flink's AVG/SUM types: changelogs checked by hand.

The input is a collection table read one row per micro-batch, so each row is its own update,
as in Flink without mini-batches, and the expected changelogs below follow Flink's rank
operators row by row.
"""

from __future__ import annotations

import json

import pytest

from kindling.sql import SqlError

pytestmark = pytest.mark.integration

# (k, v, ms): rows in arrival order; event time ms milliseconds after the epoch.
ROWS = [("a", 10, 1000), ("a", 20, 2000), ("b", 5, 3000), ("a", 15, 4000), ("a", 5, 5000), ("a", 20, 6000)]


def _table(rows=ROWS, name: str = "r") -> str:
    return (f"CREATE TABLE {name} (k STRING, v BIGINT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts) "
            f"WITH ('connector' = 'collection', 'rows-per-batch' = '1', 'data' = '{json.dumps([list(r) for r in rows])}')")


@pytest.fixture
def rank_env(env):
    env.execute_sql(_table())
    return env


def _changes(result):
    return [(kind, tuple(row)) for kind, row in result.collect_changelog(timeout=120)]


def test_top_n_with_rank_number_is_an_upsert_changelog_by_key_and_rank(rank_env):
    result = rank_env.execute_sql(
        "SELECT k, v, ms, rn FROM (\n"
        "  SELECT k, v, ms, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM r)\n"
        "WHERE rn <= 2")
    assert result.upsert_key == ["k", "rn"]
    assert _changes(result) == [
        ("+I", ("a", 10, 1000, 1)),
        ("-U", ("a", 10, 1000, 1)), ("+U", ("a", 20, 2000, 1)), ("+I", ("a", 10, 1000, 2)),
        ("+I", ("b", 5, 3000, 1)),
        ("-U", ("a", 10, 1000, 2)), ("+U", ("a", 15, 4000, 2)),
        # (a, 5) ranks third: no change; the second 20 ties with the first and ranks after it (arrival order)
        ("-U", ("a", 15, 4000, 2)), ("+U", ("a", 20, 6000, 2)),
    ]
    assert sorted(tuple(r) for r in result.final_rows()) == [("a", 20, 2000, 1), ("a", 20, 6000, 2), ("b", 5, 3000, 1)]


def test_top_n_without_rank_number_retracts_rows_that_leave(rank_env):
    result = rank_env.execute_sql(
        "SELECT k, v FROM (SELECT *, RANK() OVER (PARTITION BY k ORDER BY v ASC) AS rk FROM r) t WHERE rk < 3")
    assert _changes(result) == [
        ("+I", ("a", 10)), ("+I", ("a", 20)), ("+I", ("b", 5)),
        ("-D", ("a", 20)), ("+I", ("a", 15)),
        ("-D", ("a", 15)), ("+I", ("a", 5)),
    ]
    assert sorted(tuple(r) for r in result.final_rows()) == [("a", 5), ("a", 10), ("b", 5)]


def test_deduplication_keeps_the_first_or_the_last_row_by_event_time(rank_env):
    first = rank_env.execute_sql(
        "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn FROM r) WHERE rn = 1")
    assert _changes(first) == [("+I", ("a", 10)), ("+I", ("b", 5))]  # append-only: each key's first row, once
    last_query = "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM r) WHERE rn <= 1"
    last = rank_env.execute_sql(last_query)
    assert last.upsert_key == ["k"]
    # the outermost Top-1 over an append-only input runs as Spark's own aggregation: an upsert per key and batch
    assert _changes(last) == [("+U", ("a", 10)), ("+U", ("a", 20)), ("+U", ("b", 5)), ("+U", ("a", 15)), ("+U", ("a", 5)),
                              ("+U", ("a", 20))]
    assert sorted(tuple(r) for r in last.final_rows()) == [("a", 20), ("b", 5)]
    # read by another query, it is the keyed operator's changelog with Flink's retractions
    rank_env.execute_sql(f"CREATE VIEW latest AS {last_query}")
    assert _changes(rank_env.execute_sql("SELECT k, v FROM latest")) == [
        ("+I", ("a", 10)), ("-U", ("a", 10)), ("+U", ("a", 20)), ("+I", ("b", 5)),
        ("-U", ("a", 20)), ("+U", ("a", 15)), ("-U", ("a", 15)), ("+U", ("a", 5)), ("-U", ("a", 5)), ("+U", ("a", 20)),
    ]


def test_window_top_n_emits_final_rows_once_per_window(env):
    rows = [("a", 1, 1000), ("b", 7, 2000), ("a", 4, 3000), ("c", 2, 4000),  # window [0 s, 5 s): a=5, b=7, c=2
            ("c", 9, 6000), ("a", 1, 7000), ("b", 3, 8000)]  # window [5 s, 10 s): c=9, b=3, a=1
    env.execute_sql(_table(rows, "w"))
    result = env.execute_sql(
        "SELECT window_start, k, total, rn FROM (\n"
        "  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn FROM (\n"
        "    SELECT window_start, window_end, k, SUM(v) AS total\n"
        "    FROM TABLE(TUMBLE(TABLE w, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, k))\n"
        "WHERE rn <= 2")
    changes = [(kind, (start.second, k, total, rn)) for kind, (start, k, total, rn) in _changes(result)]
    assert sorted(changes) == [("+I", (0, "a", 5, 2)), ("+I", (0, "b", 7, 1)), ("+I", (5, "b", 3, 2)), ("+I", (5, "c", 9, 1))]
    # Over the TVF's rows directly: rows are kept per window and ranked once the watermark passes its end.
    rows_result = env.execute_sql(
        "SELECT window_start, k, v, rn FROM (\n"
        "  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn\n"
        "  FROM TABLE(TUMBLE(TABLE w, DESCRIPTOR(ts), INTERVAL '5' SECOND)))\n"
        "WHERE rn <= 1")
    changes = [(kind, (start.second, k, v, rn)) for kind, (start, k, v, rn) in _changes(rows_result)]
    assert sorted(changes) == [("+I", (0, "b", 7, 1)), ("+I", (5, "c", 9, 1))]


def test_avg_and_sum_keep_flinks_integer_types(env):
    env.execute_sql(_table([("a", 10, 1000), ("a", 20, 2000), ("a", 1, 3000)], "g"))
    result = env.execute_sql("SELECT k, AVG(v) AS a, SUM(CAST(v AS INT)) AS s, AVG(CAST(v AS DOUBLE)) AS d FROM g GROUP BY k")
    (row,) = result.final_rows(timeout=120)
    assert (row.a, row.s) == (10, 31)  # 31 / 3 truncated: AVG(BIGINT) is a BIGINT
    assert abs(row.d - 31 / 3) < 1e-9
    from kindling.table import StreamTableEnvironment

    planned = StreamTableEnvironment.create(env).sql_query("SELECT AVG(v) AS a, SUM(CAST(v AS INT)) AS s, AVG(CAST(v AS DOUBLE)) AS d FROM g").planned
    types = {name: t for name, t in planned.df.dtypes if name in planned.columns}
    assert types == {"a": "bigint", "s": "int", "d": "double"}


def test_repeated_column_names_are_numbered_as_in_flink(env):
    env.execute_sql(_table(ROWS[:2], "x"))
    result = env.execute_sql("SELECT k, v, k, v + 1 AS v FROM x")
    assert result.columns == ["k", "v", "k0", "v0"]
    assert sorted(tuple(r) for r in result.final_rows(timeout=120)) == [("a", 10, "a", 11), ("a", 20, "a", 21)]


def test_order_by_limit_on_a_stream_is_flinks_sort_limit(rank_env):
    """ORDER BY ... LIMIT n on a stream is a Top-N over the whole input (Flink's sort-limit): rows that leave the first n
    are retracted, and a row equal to one already kept goes after it (no deduplication)."""
    result = rank_env.execute_sql("SELECT k, v FROM r ORDER BY v DESC LIMIT 2")
    assert _changes(result) == [
        ("+I", ("a", 10)), ("+I", ("a", 20)),
        ("-D", ("a", 10)), ("+I", ("a", 15)),
        ("-D", ("a", 15)), ("+I", ("a", 20)),
    ]
    assert sorted(tuple(r) for r in result.final_rows()) == [("a", 20), ("a", 20)]


def test_only_a_plain_sort_limit_is_rewritten():
    from kindling.sql.ranking import sort_limit_as_top_n

    assert sort_limit_as_top_n("SELECT k FROM r AS x WHERE v > 1 ORDER BY v LIMIT 3", 1) is not None
    for query in ("SELECT k, COUNT(*) AS c FROM r GROUP BY k ORDER BY c LIMIT 3",  # an aggregation
                  "SELECT COUNT(*) FROM r ORDER BY 1 LIMIT 3",
                  "SELECT DISTINCT k FROM r ORDER BY k LIMIT 3",
                  "SELECT r.k FROM r JOIN s ON r.k = s.k ORDER BY r.v LIMIT 3",  # a join
                  "SELECT k FROM r ORDER BY v LIMIT 3 OFFSET 1",  # OFFSET: not a rank from 1
                  "SELECT v * 2 AS w FROM r ORDER BY w LIMIT 3",  # ordered by an expression of the SELECT list
                  "SELECT k FROM r ORDER BY v",  # no LIMIT: a sort, refused by Spark
                  "SELECT k FROM r LIMIT 3"):
        assert sort_limit_as_top_n(query, 1) is None, query


def test_top_n_errors_name_the_construct_line_and_form(rank_env):
    with pytest.raises(SqlError, match=r"line 2: .*upper bound.*Supported form: SELECT \.\.\. FROM \(SELECT"):
        rank_env.execute_sql("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM r)\nWHERE rn > 3")
    with pytest.raises(SqlError, match=r"line 1: window Top-N over an updating input is not supported"):
        rank_env.execute_sql("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY c) AS rn "
                             "FROM (SELECT k AS window_start, k AS window_end, COUNT(*) AS c FROM r GROUP BY k)) WHERE rn <= 1")
    rank_env.execute_sql("CREATE TABLE out_kafka (k STRING, v BIGINT) WITH ('connector' = 'kafka', 'topic' = 't', "
                         "'properties.bootstrap.servers' = '127.0.0.1:9', 'format' = 'json')")
    with pytest.raises(SqlError, match="doesn't support consuming update changes"):
        rank_env.execute_sql("INSERT INTO out_kafka SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) "
                             "AS rn FROM r) WHERE rn <= 1")


def test_queries_over_a_top_n_view_keep_its_changelog(rank_env):
    rank_env.execute_sql("CREATE VIEW best AS SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn "
                         "FROM r) WHERE rn <= 1")
    rows = rank_env.execute_sql("SELECT * FROM best").final_rows(timeout=120)
    assert sorted(tuple(r) for r in rows) == [("a", 20, 1), ("b", 5, 1)]
    # a projection and filter apply to each change: the retracted best rows leave the result
    projected = rank_env.execute_sql("SELECT k, v * 2 AS doubled FROM best WHERE v > 5")
    assert _changes(projected) == [("+I", ("a", 20)), ("-U", ("a", 20)), ("+U", ("a", 40))]
    assert [tuple(r) for r in projected.final_rows()] == [("a", 40)]
    # a join reads the view's changelog too: a replaced best row retracts what it joined
    joined = rank_env.execute_sql("SELECT b.k, b.v AS best, r.v FROM best b JOIN r ON b.k = r.k")
    assert sorted(tuple(x) for x in joined.final_rows(timeout=120)) == [
        ("a", 20, 5), ("a", 20, 10), ("a", 20, 15), ("a", 20, 20), ("a", 20, 20), ("b", 5, 5)]


def test_top_n_over_an_updating_input_replaces_retracted_top_rows(rank_env):
    # the two keys with the largest sums; a key's sum is updated (-U old, +U new) as its rows arrive
    result = rank_env.execute_sql("SELECT k, total, rn FROM (SELECT k, total, ROW_NUMBER() OVER (ORDER BY total DESC) AS rn\n"
                                  "FROM (SELECT k, SUM(v) AS total FROM r GROUP BY k)) WHERE rn <= 1")
    # sums: a 10, a 30, b 5, a 45, a 50, a 70: a stays first, each new sum replaces the old one at rank 1
    assert result.upsert_key == ["rn"]
    assert _changes(result) == [
        ("+I", ("a", 10, 1)),
        ("-U", ("a", 10, 1)), ("+U", ("a", 30, 1)),
        ("-U", ("a", 30, 1)), ("+U", ("a", 45, 1)),
        ("-U", ("a", 45, 1)), ("+U", ("a", 50, 1)),
        ("-U", ("a", 50, 1)), ("+U", ("a", 70, 1)),
    ]
    lowest = rank_env.execute_sql("SELECT k, low FROM (SELECT k, low, ROW_NUMBER() OVER (ORDER BY low ASC) AS rn\n"
                                  "FROM (SELECT k, MIN(v) AS low FROM r GROUP BY k)) WHERE rn <= 1")
    # a's minimum falls from 10 to 5 after b's 5 arrived: b keeps the place (ties go to the earlier row)
    assert _changes(lowest) == [("+I", ("a", 10)), ("-U", ("a", 10)), ("+U", ("b", 5))]


def test_state_ttl_forgets_a_partitions_top_rows(rank_env):
    rank_env.execute_sql("SET 'table.exec.state.ttl' = '1 ms'")
    result = rank_env.execute_sql("SELECT k, v, rn FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn "
                                  "FROM r) WHERE rn <= 2")
    # each micro-batch finds the rows of the one before expired: every row is its key's first, at rank 1
    assert _changes(result) == [("+I", (k, v, 1)) for k, v, _ in ROWS]


def test_an_outermost_top_one_keeps_the_earlier_of_tied_rows(rank_env):
    result = rank_env.execute_sql("SELECT k, v, ms FROM (SELECT k, v, ms, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, ms DESC) "
                                  "AS rn FROM r) WHERE rn = 1")
    plan = rank_env.execute_sql("EXPLAIN SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn "
                                "FROM r) WHERE rn = 1").collect()[0][0]
    assert "upsert key ['k']" in plan and "max_by" in plan  # Spark's aggregation, not the keyed Python operator
    assert sorted(tuple(r) for r in result.final_rows(timeout=120)) == [("a", 20, 6000), ("b", 5, 3000)]
    tied = rank_env.execute_sql("SELECT k, v, ms FROM (SELECT k, v, ms, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn "
                                "FROM r) WHERE rn = 1")
    # (a, 20) arrives twice; the first keeps the place, as in Flink
    assert sorted(tuple(r) for r in tied.final_rows(timeout=120)) == [("a", 20, 2000), ("b", 5, 3000)]

"""Aggregations over updating inputs (the shape of Nexmark q4): changelogs checked by hand.

The input is a collection table read one row per micro-batch. Each expected changelog follows
Flink's GroupAggFunction with one result per key and micro-batch: a key's first result is +I, a
changed one -U (old) then +U (new), and a key whose rows were all retracted is -D.
"""

from __future__ import annotations

import json

import pytest

from kindling.common import Row, RowKind
from kindling.sql import SqlError

pytestmark = pytest.mark.integration

# (k, cat, v): an auction k of category cat and a bid v on it
ROWS = [("a", "x", 10), ("b", "x", 5), ("a", "x", 20), ("c", "y", 7), ("b", "x", 3), ("d", "z", 9), ("d", "z", 30)]
INNER = "SELECT k, cat, MAX(v) AS m FROM r GROUP BY k, cat"


@pytest.fixture
def agg_env(env):
    env.execute_sql(f"CREATE TABLE r (k STRING, cat STRING, v BIGINT) WITH ('connector' = 'collection', 'rows-per-batch' = '1', "
                    f"'data' = '{json.dumps([list(r) for r in ROWS])}')")
    return env


def _changes(result):
    return [(kind, tuple(row)) for kind, row in result.collect_changelog(timeout=120)]


def test_an_aggregation_over_an_unbounded_group_by_retracts_the_old_values(agg_env):
    result = agg_env.execute_sql(f"SELECT cat, SUM(m) AS s, AVG(m) AS a, MIN(m) AS low, COUNT(*) AS n\nFROM ({INNER}) Q\nGROUP BY Q.cat")
    assert result.columns == ["cat", "s", "a", "low", "n"]
    assert result.upsert_key == ["cat"]
    assert _changes(result) == [
        ("+I", ("x", 10, 10, 10, 1)),
        ("-U", ("x", 10, 10, 10, 1)), ("+U", ("x", 15, 7, 5, 2)),  # AVG over BIGINT truncates: 7.5 -> 7
        # a's maximum rises from 10 to 20: its 10 is retracted, not counted beside the 20
        ("-U", ("x", 15, 7, 5, 2)), ("+U", ("x", 25, 12, 5, 2)),
        ("+I", ("y", 7, 7, 7, 1)),
        # b's 3 leaves its maximum at 5: nothing changes
        ("+I", ("z", 9, 9, 9, 1)),
        ("-U", ("z", 9, 9, 9, 1)), ("+U", ("z", 30, 30, 30, 1)),
    ]
    assert sorted(tuple(r) for r in result.final_rows()) == [("x", 25, 12, 5, 2), ("y", 7, 7, 7, 1), ("z", 30, 30, 30, 1)]
    # PyFlink's collect(): the changes themselves, each a positional Row with its kind (recorded from PyFlink 2.3:
    # `<Row('a', 1)>` for +I and -U alike, no field names)
    with result.collect() as collected:
        assert [(str(r.get_row_kind()), tuple(r)) for r in collected] == _changes(result)
        assert repr(collected[1]) == "<Row('x', 10, 10, 10, 1)>" and collected[1].get_row_kind() == RowKind.UPDATE_BEFORE
        assert collected[0] == Row("x", 10, 10, 10, 1) and collected[1] == Row.of_kind(RowKind.UPDATE_BEFORE, "x", 10, 10, 10, 1)
        assert collected[2].cat == "x" and collected[2]["s"] == 15


def test_a_key_whose_rows_are_all_retracted_is_deleted_and_global_aggregates_follow(agg_env):
    # d's maximum rises above 15 and leaves the filter: z has no row left
    filtered = agg_env.execute_sql(f"SELECT cat, COUNT(*) AS n FROM ({INNER}) WHERE m < 15 GROUP BY cat")
    assert _changes(filtered) == [
        ("+I", ("x", 1)), ("-U", ("x", 1)), ("+U", ("x", 2)),
        ("-U", ("x", 2)), ("+U", ("x", 1)),  # a's 10 is retracted, its 20 filtered out
        ("+I", ("y", 1)),
        ("+I", ("z", 1)), ("-D", ("z", 1)),
    ]
    overall = agg_env.execute_sql(f"SELECT COUNT(*) AS keys, SUM(m) AS total, MAX(m) AS top FROM ({INNER})")
    assert overall.upsert_key is None
    assert [tuple(r) for r in overall.final_rows(timeout=120)] == [(4, 20 + 5 + 7 + 30, 30)]


def test_aggregating_a_view_of_a_top_n_retracts_rows_that_leave_it(agg_env):
    agg_env.execute_sql("CREATE VIEW best2 AS SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY v DESC) "
                        "AS rn FROM r) WHERE rn <= 2")
    result = agg_env.execute_sql("SELECT COUNT(DISTINCT k) AS auctions, MIN(v) AS low, MAX(v) AS high FROM best2 HAVING COUNT(*) > 1")
    # Top-2 per category over time: x {10}, {10,5}, {20,10}, +y {7}, x unchanged, +z {9}, z {30,9}
    assert sorted(tuple(r) for r in result.final_rows(timeout=120)) == [(3, 7, 30)]  # rows a 20, a 10, c 7, d 30, d 9
    distinct = agg_env.execute_sql(f"SELECT DISTINCT cat FROM ({INNER}) WHERE m > 8")
    assert sorted(tuple(r) for r in distinct.final_rows(timeout=120)) == [("x",), ("z",)]


def test_state_ttl_forgets_idle_keys_as_flink_does(agg_env):
    agg_env.execute_sql("SET 'table.exec.state.ttl' = '1 ms'")
    result = agg_env.execute_sql(f"SELECT cat, COUNT(*) AS n FROM ({INNER}) GROUP BY cat")
    # every micro-batch finds the state of the one before expired, in both aggregations: each row starts its
    # key afresh (+I), and the outer aggregation never sees a retraction
    assert _changes(result) == [("+I", (cat, 1)) for _, cat, _ in ROWS]
    with pytest.raises(SqlError, match="'table.exec.state.ttl' = 'soon' is not a duration"):
        agg_env.execute_sql("SET 'table.exec.state.ttl' = 'soon'")
        agg_env.execute_sql(f"SELECT cat, COUNT(*) FROM ({INNER}) GROUP BY cat")


def test_unsupported_aggregates_over_an_updating_input_are_refused_with_the_line(agg_env):
    with pytest.raises(SqlError, match=r"line 2: LISTAGG over an updating input .* not supported.*COUNT, SUM, AVG, MIN, MAX"):
        agg_env.execute_sql(f"SELECT cat,\n LISTAGG(k) FROM ({INNER}) GROUP BY cat")


def test_processing_time_windows_over_a_watermarked_table_emit_each_window_once(env):
    # 24 rows, one per micro-batch: the query runs for seconds, so 1-second processing-time windows end while it runs
    rows = [("a" if n % 3 else "b", n, 1000 * n) for n in range(24)]
    env.execute_sql(f"CREATE TABLE p (k STRING, v BIGINT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), pt AS PROCTIME(), "
                    f"WATERMARK FOR ts AS ts) WITH ('connector' = 'collection', 'rows-per-batch' = '1', "
                    f"'data' = '{json.dumps([list(r) for r in rows])}')")
    query = ("SELECT k, COUNT(*) AS n, SUM(v) AS total, window_start, window_end\n"
             "FROM TABLE(TUMBLE(TABLE p, DESCRIPTOR(pt), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end")
    assert "changelog mode: [+I]" in env.execute_sql("EXPLAIN " + query).collect()[0][0]
    result = env.execute_sql(query)
    changes = _changes(result)
    assert changes and {kind for kind, _ in changes} == {"+I"}  # one final row per window, no updates
    windows = [(k, start, end) for _, (k, _, _, start, end) in changes]
    assert len(set(windows)) == len(windows)
    for _k, start, end in windows:
        assert (end - start).total_seconds() == 1 and start.microsecond == 0
    # every row counted at most once; a window still open when the input ends does not fire (as in Flink)
    assert sum(n for _, (_, n, _, _, _) in changes) <= len(rows)
    assert all(total <= sum(v for key, v, _ in rows if key == k) for _, (k, _, total, _, _) in changes)


def test_an_unbounded_group_by_over_a_window_aggregation_totals_the_windows(env):
    # (k, ms): 2-second windows [0, 2) a=2 b=1, [2, 4) a=1, [4, 6) b=1, [6, 8) a=1
    rows = [("a", 0), ("a", 500), ("b", 1000), ("a", 2500), ("b", 4000), ("a", 6000)]
    env.execute_sql(f"CREATE TABLE w (k STRING, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts) "
                    f"WITH ('connector' = 'collection', 'rows-per-batch' = '1', 'data' = '{json.dumps([list(r) for r in rows])}')")
    result = env.execute_sql(
        "SELECT k, SUM(n) AS total, MAX(n) AS busiest, COUNT(*) AS windows FROM (\n"
        "  SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE w, DESCRIPTOR(ts), INTERVAL '2' SECOND))\n"
        "  GROUP BY k, window_start, window_end)\n"
        "GROUP BY k")
    assert result.upsert_key == ["k"]
    assert sorted(tuple(r) for r in result.final_rows(timeout=120)) == [("a", 4, 2, 3), ("b", 2, 1, 2)]


def test_rows_leaving_a_having_or_a_filter_over_a_group_by_are_retracted(agg_env):
    """Spark's update mode would drop the new value that fails the condition and keep the old row; Flink retracts it."""
    having = agg_env.execute_sql("SELECT k, COUNT(*) AS n FROM r GROUP BY k HAVING COUNT(*) < 2")
    assert _changes(having) == [
        ("+I", ("a", 1)), ("+I", ("b", 1)),
        ("-U", ("a", 1)),  # a's second bid: its +U (a, 2) fails HAVING, the -U retracts the row
        ("+I", ("c", 1)),
        ("-U", ("b", 1)),
        ("+I", ("d", 1)), ("-U", ("d", 1)),
    ]
    assert sorted(tuple(r) for r in having.final_rows()) == [("c", 1)]
    where = agg_env.execute_sql("SELECT k, n FROM (SELECT k, COUNT(*) AS n FROM r GROUP BY k) WHERE n < 2")
    assert sorted(tuple(r) for r in where.final_rows()) == [("c", 1)]


def test_a_checkpoint_of_the_per_key_sql_operators_is_refused_naming_the_operator(agg_env):
    """The retracting aggregation and the Top-N keep state by key group, as the DataStream operators do; a checkpoint
    they wrote one entry per key (kindling before the one keyed-state core) is refused before the job starts."""
    agg_env.execute_sql("CREATE TABLE totals (cat STRING, n BIGINT) WITH ('connector' = 'print')")
    old = agg_env.checkpoint_root("insert-into_totals") / "totals"
    (old / "commits").mkdir(parents=True)
    (old / "commits" / "0").write_text("v1")
    (old / "state" / "0").mkdir(parents=True)
    with pytest.raises(Exception) as refused:
        agg_env.execute_sql(f"INSERT INTO totals SELECT cat, COUNT(*) FROM ({INNER}) GROUP BY cat")
    assert "job 'insert-into_totals'" in str(refused.value) and "'GroupAggregate'" in str(refused.value)
    assert "per-key layout" in str(refused.value) and "give the job another name" in str(refused.value)

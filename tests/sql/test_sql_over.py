"""OVER aggregations on streams, worked by hand: rows out of order within the watermark, a late row, ROWS and RANGE."""

from __future__ import annotations

import json

import pytest

from kindling.sql import SqlError

pytestmark = pytest.mark.integration

# (k, v, ms) in arrival order, one row per micro-batch, watermark 2 s behind the latest time: (a, 3) comes before the
# earlier (a, 2)'s time has passed; (a, 5) arrives after a's rows up to 3 s were computed (watermark 5 s) and is dropped.
ROWS = [("a", 1, 1000), ("a", 2, 3000), ("a", 3, 2000), ("b", 10, 2000), ("a", 4, 6000), ("b", 20, 7000), ("a", 5, 500),
        ("a", 6, 8000)]


@pytest.fixture
def over_env(env):
    env.execute_sql("CREATE TABLE t (k STRING, v BIGINT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts - "
                    "INTERVAL '2' SECOND) WITH ('connector' = 'collection', 'rows-per-batch' = '1', "
                    f"'data' = '{json.dumps([list(r) for r in ROWS])}')")
    return env


def _by_key(result) -> dict[str, list[tuple]]:
    """Each key's rows in the order they were emitted (every change an insertion)."""
    rows: dict[str, list[tuple]] = {}
    for kind, row in result.collect_changelog(timeout=120):
        assert kind == "+I", (kind, row)
        rows.setdefault(row[0], []).append(tuple(row))
    return rows


def test_rows_frames_follow_event_time_and_drop_the_late_row(over_env):
    result = over_env.execute_sql("SELECT k, v, SUM(v) OVER w AS s, COUNT(*) OVER w AS n FROM t "
                                  "WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)")
    assert _by_key(result) == {"a": [("a", 1, 1, 1), ("a", 3, 4, 2), ("a", 2, 5, 2), ("a", 4, 6, 2), ("a", 6, 10, 2)],
                               "b": [("b", 10, 10, 1), ("b", 20, 30, 2)]}


def test_lag_and_first_and_last_values_take_the_rows_in_event_time_order(over_env):
    # a's rows in time order: 1 (1 s), 3 (2 s), 2 (3 s), 4 (6 s), 6 (8 s); the late 5 is dropped before LAG sees it
    lagged = over_env.execute_sql("SELECT k, v, LAG(v, 1, 0) OVER w AS before, LAG(v, 2) OVER w AS two_before FROM t "
                                  "WINDOW w AS (PARTITION BY k ORDER BY ts)")
    values = over_env.execute_sql("SELECT k, v, FIRST_VALUE(v) OVER w AS first_v, LAST_VALUE(v) OVER w AS last_v FROM t "
                                  "WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)")
    assert _by_key(lagged) == {"a": [("a", 1, 0, None), ("a", 3, 1, None), ("a", 2, 3, 1), ("a", 4, 2, 3), ("a", 6, 4, 2)],
                               "b": [("b", 10, 0, None), ("b", 20, 10, None)]}
    assert _by_key(values) == {"a": [("a", 1, 1, 1), ("a", 3, 1, 3), ("a", 2, 3, 2), ("a", 4, 2, 4), ("a", 6, 4, 6)],
                               "b": [("b", 10, 10, 10), ("b", 20, 10, 20)]}


def test_range_frames_hold_the_rows_within_the_interval(over_env):
    result = over_env.execute_sql("SELECT k, v, COUNT(*) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND "
                                  "PRECEDING AND CURRENT ROW) AS n, MAX(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN "
                                  "INTERVAL '2' SECOND PRECEDING AND CURRENT ROW) AS m FROM t WHERE v < 20")
    assert _by_key(result) == {"a": [("a", 1, 1, 1), ("a", 3, 2, 3), ("a", 2, 3, 3), ("a", 4, 1, 4), ("a", 6, 2, 6)],
                               "b": [("b", 10, 1, 10)]}


@pytest.mark.parametrize("query, construct", [
    ("SELECT LEAD(v) OVER (PARTITION BY k ORDER BY ts) FROM t", "LEAD OVER"),
    ("SELECT LAG(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t", "LAG OVER"),
    ("SELECT SUM(v) OVER (PARTITION BY k ORDER BY v) FROM t", "OVER aggregation"),
    ("SELECT SUM(v) OVER (ORDER BY ts ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t", "OVER aggregation"),
    ("SELECT SUM(v) OVER (ORDER BY ts), COUNT(*) OVER (PARTITION BY k ORDER BY ts) FROM t", "OVER aggregation"),
])
def test_over_forms_flink_rejects_on_streams_are_refused_by_name(over_env, query, construct):
    with pytest.raises(SqlError) as refused:
        over_env.execute_sql(query)
    assert refused.value.construct == construct


def test_state_ttl_is_refused_rather_than_applied_differently(over_env):
    over_env.execute_sql("SET 'table.exec.state.ttl' = '1 h'")
    with pytest.raises(SqlError, match="table.exec.state.ttl"):
        over_env.execute_sql("SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts) FROM t")
    with pytest.raises(SqlError, match="table.exec.state.ttl"):
        over_env.execute_sql("SELECT a.k, b.v FROM t a LEFT JOIN t b ON a.k = b.k")

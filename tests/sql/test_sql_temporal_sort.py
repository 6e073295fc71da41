"""ORDER BY a time attribute on a stream, worked by hand: rows released in event-time order, a late row dropped."""

from __future__ import annotations

import json

import pytest

from kindling.sql import SqlError

pytestmark = pytest.mark.integration

# (k, v, ms) in arrival order, one row per micro-batch, watermark 2 s behind the latest time; (a, 5) comes after the
# watermark passed 5 s and is late.
ROWS = [("a", 1, 1000), ("a", 2, 3000), ("a", 3, 2000), ("b", 10, 2000), ("a", 4, 6000), ("b", 20, 7000), ("a", 5, 500),
        ("a", 6, 8000)]


def test_rows_leave_in_event_time_order_then_by_the_further_keys(env):
    env.execute_sql("CREATE TABLE s (k STRING, v BIGINT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts - "
                    "INTERVAL '2' SECOND) WITH ('connector' = 'collection', 'rows-per-batch' = '1', "
                    f"'data' = '{json.dumps([list(r) for r in ROWS])}')")
    changes = env.execute_sql("SELECT k, v FROM s WHERE v > 0 ORDER BY ts, v DESC").collect_changelog(timeout=120)
    assert [(kind, tuple(row)) for kind, row in changes] == [
        ("+I", ("a", 1)), ("+I", ("b", 10)), ("+I", ("a", 3)), ("+I", ("a", 2)), ("+I", ("a", 4)), ("+I", ("b", 20)),
        ("+I", ("a", 6))]
    for query in ("SELECT k, v FROM s ORDER BY v", "SELECT k, v FROM s ORDER BY ts DESC"):
        with pytest.raises(SqlError) as refused:
            env.execute_sql(query)
        assert refused.value.construct == "ORDER BY"

"""The SESSION window TVF on a stream, worked by hand: sessions per partition key, rows out of order, a late row."""

from __future__ import annotations

import json

import pytest

from kindling.sql import SqlError

pytestmark = pytest.mark.integration

# (k, v, ms) in arrival order, one row per micro-batch, watermark 2 s behind the latest time. Gap 2 s: a's sessions are
# {1.0, 1.8, 2.5 s} (1.8 s arrives after 2.5 s), {6.0, 7.5 s} and {20 s}; b's are {1.5 s} and {9 s}; (a, 6) at 0.5 s
# arrives when the watermark is at 7 s and is dropped.
ROWS = [("a", 1, 1000), ("a", 2, 2500), ("b", 10, 1500), ("a", 3, 1800), ("a", 4, 6000), ("b", 20, 9000), ("a", 5, 7500),
        ("a", 6, 500), ("a", 7, 20000)]


def test_session_windows_per_partition_key_close_once_with_their_rows(env):
    env.execute_sql("CREATE TABLE sw (k STRING, v BIGINT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts - "
                    "INTERVAL '2' SECOND) WITH ('connector' = 'collection', 'rows-per-batch' = '1', "
                    f"'data' = '{json.dumps([list(r) for r in ROWS])}')")
    result = env.execute_sql("SELECT k, window_start, window_end, SUM(v) AS s, COUNT(*) AS n FROM TABLE(SESSION(TABLE sw PARTITION "
                             "BY k, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end")
    changes = [(kind, (k, int(start.timestamp() * 1000), int(end.timestamp() * 1000), s, n))
               for kind, (k, start, end, s, n) in result.collect_changelog(timeout=120)]
    assert sorted(changes) == [("+I", ("a", 1000, 4500, 6, 3)), ("+I", ("a", 6000, 9500, 9, 2)), ("+I", ("a", 20000, 22000, 7, 1)),
                               ("+I", ("b", 1500, 3500, 10, 1)), ("+I", ("b", 9000, 11000, 20, 1))]
    with pytest.raises(SqlError) as refused:  # sessions are per k: grouping by v as well would be another answer
        env.execute_sql("SELECT k, v, COUNT(*) FROM TABLE(SESSION(TABLE sw PARTITION BY k, DESCRIPTOR(ts), INTERVAL '2' SECOND)) "
                        "GROUP BY k, v, window_start, window_end")
    assert refused.value.construct == "window TVF SESSION"

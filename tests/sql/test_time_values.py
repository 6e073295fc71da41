"""TIME values as PyFlink 2.3 hands them out: collected as ``datetime.time``, printed and typed as Flink prints them.

kindling holds a TIME as its text (kindling/sql/time_values.py); the expected values below are PyFlink 2.3's for the
same query (batch mode), recorded by hand. The strings Flink reads as TIME are compared in the differential corpus
(tm-time-lenient-*)."""

from __future__ import annotations

import datetime
import io

import pytest

from kindling.env import StreamEnvironment
from kindling.runtime.job import JobFailedError

pytestmark = pytest.mark.integration

QUERY = ("SELECT CAST(t AS TIME) AS a, CAST(t AS TIME(3)) AS b, TRY_CAST(CONCAT(t, 'x') AS TIME) AS c, "
         "TYPEOF(CAST(t AS TIME(3))) AS d, TYPEOF(TRY_CAST(t AS TIME)) AS e FROM (VALUES ('08:00:04.91'), ('1:2:3')) AS v(t)")


@pytest.fixture
def batch_env(spark, tmp_path):
    return StreamEnvironment({"execution.runtime-mode": "batch", "state.checkpoints.dir": str(tmp_path / "checkpoints")},
                             spark=spark)


def test_time_values_collect_as_datetime_time(batch_env):
    rows = [tuple(r) for r in batch_env.execute_sql(QUERY).collect()]
    assert rows == [
        (datetime.time(8, 0, 4), datetime.time(8, 0, 4, 910000), datetime.time(8, 0, 4), "TIME(3) NOT NULL", "TIME(0)"),
        (datetime.time(1, 2, 3), datetime.time(1, 2, 3), None, "TIME(3) NOT NULL", "TIME(0)"),
    ]


def test_time_values_print_and_type_as_flink_prints_them(batch_env):
    out = io.StringIO()
    batch_env.execute_sql(QUERY).print(out)
    assert out.getvalue().splitlines() == [
        "+----------+--------------+----------+--------------------------------+--------------------------------+",
        "|        a |            b |        c |                              d |                              e |",
        "+----------+--------------+----------+--------------------------------+--------------------------------+",
        "| 08:00:04 |  08:00:04.91 | 08:00:04 |               TIME(3) NOT NULL |                        TIME(0) |",
        "| 01:02:03 |   01:02:03.0 |   <NULL> |               TIME(3) NOT NULL |                        TIME(0) |",
        "+----------+--------------+----------+--------------------------------+--------------------------------+",
        "2 rows in set",
    ]
    schema = batch_env.execute_sql("SELECT CAST(t AS TIME) AS a, CAST(t AS TIME(3)) AS b, TRY_CAST(CONCAT(t, 'x') AS TIME) AS c "
                                   "FROM (VALUES ('08:00:04.91'), ('1:2:3')) AS v(t)").get_resolved_schema()
    assert str(schema).splitlines() == ["(", "  `a` TIME(0) NOT NULL,", "  `b` TIME(3) NOT NULL,", "  `c` TIME(0)", ")"]


def test_a_string_flink_reads_as_no_time_fails_cast_and_is_null_for_try_cast(batch_env):
    rows = [tuple(r) for r in batch_env.execute_sql("SELECT TRY_CAST('8:5:' AS TIME), TRY_CAST('24:00:00' AS TIME), "
                                                    "CAST(CAST(NULL AS STRING) AS TIME)").collect()]
    assert rows == [(None, None, None)]  # NULL is NULL for CAST too
    result = batch_env.execute_sql("SELECT CAST(t AS TIME) FROM (VALUES ('08:60:00')) AS v(t)")
    with pytest.raises(JobFailedError, match="'08:60:00' is no TIME value"):
        result.wait(300)

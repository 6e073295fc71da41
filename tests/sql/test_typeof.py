"""TYPEOF of expressions: the Flink type kindling derives (kindling/sql/typeof.py); Flink's answers for the derivable
shapes are in the differential corpus (``typeof-*``)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_typeof_gives_the_derived_type_or_refuses_by_name(env):
    from kindling.sql import SqlError

    env.execute_sql("CREATE TABLE numbers (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '2', "
                    "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '2')")
    rows = env.execute_sql("SELECT id, TYPEOF(id + 1) AS a, TYPEOF(CAST(id AS DOUBLE) * 2) AS b, TYPEOF(2) AS c "
                           "FROM numbers").final_rows(timeout=300)
    assert sorted(tuple(r) for r in rows) == [(1, "INT", "DOUBLE", "INT NOT NULL"), (2, "INT", "DOUBLE", "INT NOT NULL")]
    with pytest.raises(SqlError, match="TYPEOF of this expression is not supported"):
        env.execute_sql("SELECT TYPEOF(UPPER(name)) FROM numbers")

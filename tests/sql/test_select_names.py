"""Unaliased columns are named as Flink names them: a column keeps its name, any other expression is EXPR$<position>."""

from __future__ import annotations

import pytest

from kindling.sql.select_names import flink_column_names, name_unaliased_columns

# Recorded from PyFlink 2.3 (TableEnvironment.sql_query(q).get_schema().get_field_names(), streaming and batch mode
# alike) over t(k STRING, n INT) and v AS SELECT k, COUNT(*) AS c FROM t GROUP BY k.
FLINK_NAMES = [
    ("SELECT k, COUNT(*) FROM t GROUP BY k", ["k", "EXPR$1"]),
    ("SELECT k, n + 1, UPPER(k), CAST(n AS STRING) FROM t", ["k", "EXPR$1", "EXPR$2", "EXPR$3"]),
    ("SELECT c, COUNT(*), SUM(c) FROM v GROUP BY c", ["c", "EXPR$1", "EXPR$2"]),
    ("SELECT COUNT(DISTINCT k), MAX(n) FROM t", ["EXPR$0", "EXPR$1"]),
    ("SELECT k, n * 2 FROM t WHERE n > 1", ["k", "EXPR$1"]),
    ("SELECT DISTINCT k FROM t", ["k"]),
    ("SELECT * FROM (SELECT k, n + 1 FROM t)", ["k", "EXPR$1"]),
    ("SELECT k, 1, 'x', n FROM t", ["k", "EXPR$1", "EXPR$2", "n"]),
]
# After a `*` an expression is named after its position in the expanded row; a repeated column gets a number. Recorded
# from PyFlink 2.3 over s(k, n, m), w AS SELECT k, *, n * 2 FROM s and w2 AS SELECT *, n + 1 FROM s (the same in batch).
STAR_NAMES = [
    ("SELECT *, n + 1 FROM s", ["k", "n", "m", "EXPR$3"]),
    ("SELECT k, *, n * 2 FROM s", ["k", "k0", "n", "m", "EXPR$4"]),
    ("SELECT s.*, UPPER(k) FROM s", ["k", "n", "m", "EXPR$3"]),
    ("SELECT n + 1, * FROM s", ["EXPR$0", "k", "n", "m"]),
    ("SELECT *, n + 1, m FROM s", ["k", "n", "m", "EXPR$3", "m0"]),
    ("SELECT *, n + 1, *, m * 2 FROM s", ["k", "n", "m", "EXPR$3", "k0", "n0", "m0", "EXPR$7"]),
    ("SELECT * FROM w", ["k", "k0", "n", "m", "EXPR$4"]),
    ("SELECT k0, EXPR$4 FROM w", ["k0", "EXPR$4"]),
    ("SELECT EXPR$3 + 1 FROM w2", ["EXPR$0"]),
    ("SELECT * FROM (SELECT *, n + 1 FROM s)", ["k", "n", "m", "EXPR$3"]),
]


def test_each_select_list_of_a_query_gets_flinks_aliases():
    assert name_unaliased_columns("SELECT k, n + 1, COUNT(*) AS c FROM t GROUP BY k, n") == \
        "SELECT k, n + 1 AS `EXPR$1`, COUNT(*) AS c FROM t GROUP BY k, n"
    assert name_unaliased_columns("SELECT * FROM (SELECT k, n + 1 FROM t)") == "SELECT * FROM (SELECT k, n + 1 AS `EXPR$1` FROM t)"
    # columns (qualified, nested, quoted) keep their names; values and CASE are expressions
    assert name_unaliased_columns("SELECT t.k, r.a.b, `q`, TRUE, CASE WHEN n > 1 THEN 1 ELSE 0 END FROM t") == \
        "SELECT t.k, r.a.b, `q`, TRUE AS `EXPR$3`, CASE WHEN n > 1 THEN 1 ELSE 0 END AS `EXPR$4` FROM t"
    # aliases with and without AS, each UNION ALL branch, a comment after the item
    assert name_unaliased_columns("SELECT k, n x, n AS y FROM t") == "SELECT k, n x, n AS y FROM t"
    assert name_unaliased_columns("SELECT a + 1 FROM x UNION ALL SELECT b FROM y") == "SELECT a + 1 AS `EXPR$0` FROM x UNION ALL SELECT b FROM y"
    assert name_unaliased_columns("SELECT k,\n  COUNT(*) -- c\nFROM t GROUP BY k") == "SELECT k,\n  COUNT(*) AS `EXPR$1` -- c\nFROM t GROUP BY k"
    # after a star the position is not known from the text: a placeholder, named once Spark has expanded the star
    assert name_unaliased_columns("SELECT *, n + 1 FROM t") == "SELECT *, n + 1 AS `EXPR$*1` FROM t"
    assert name_unaliased_columns("SELECT k, t.*, n, n * 2 FROM t") == "SELECT k, t.*, n, n * 2 AS `EXPR$*3` FROM t"
    assert flink_column_names(["k", "k", "n", "EXPR$*3", "__kindling_rowkind"]) == ["k", "k", "n", "EXPR$3", "__kindling_rowkind"]
    assert flink_column_names(["__kindling_late_watermark", "k", "EXPR$*1"]) == ["__kindling_late_watermark", "k", "EXPR$1"]


@pytest.mark.integration
def test_a_querys_schema_names_its_columns_as_flink_does(env):
    from kindling.table import StreamTableEnvironment

    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES ('a', 1), ('b', 2), ('a', 3)) AS x(k, n)")
    t_env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT k, COUNT(*) AS c FROM t GROUP BY k")
    assert [t_env.sql_query(q).get_schema().get_field_names() for q, _ in FLINK_NAMES] == [names for _, names in FLINK_NAMES]
    # a view's unaliased column is read by Flink's name
    t_env.execute_sql("CREATE TEMPORARY VIEW counted AS SELECT k, COUNT(*) FROM t GROUP BY k")
    assert sorted(tuple(r) for r in t_env.execute_sql("SELECT k, EXPR$1 FROM counted").final_rows(timeout=300)) == [("a", 2), ("b", 1)]
    t_env.execute_sql("CREATE TEMPORARY VIEW s AS SELECT * FROM (VALUES ('a', 1, 10), ('b', 2, 20)) AS x(k, n, m)")
    t_env.execute_sql("CREATE TEMPORARY VIEW w AS SELECT k, *, n * 2 FROM s")
    t_env.execute_sql("CREATE TEMPORARY VIEW w2 AS SELECT *, n + 1 FROM s")
    assert [t_env.sql_query(q).get_schema().get_field_names() for q, _ in STAR_NAMES] == [names for _, names in STAR_NAMES]
    assert sorted(tuple(r) for r in t_env.execute_sql("SELECT k0, EXPR$4 FROM w").final_rows(timeout=300)) == [("a", 2), ("b", 4)]

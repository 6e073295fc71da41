"""GROUPING SETS/ROLLUP/CUBE split into one GROUP BY per grouping set (kindling/sql/grouping_sets.py), without Spark."""

from __future__ import annotations

from kindling.sql.grouping_sets import find_grouping_sets

NULLS = {"a": "NA", "b": "NB", "c": "NC"}


def test_rollup_cube_and_grouping_sets_expand_to_flinks_sets_crossed_with_plain_keys():
    def sets(group_by: str) -> list[tuple[str, ...]]:
        found = find_grouping_sets(f"SELECT a, COUNT(*) AS n FROM t GROUP BY {group_by}", 1)
        assert found is not None
        return found.sets

    assert sets("ROLLUP (a, b)") == [("a", "b"), ("a",), ()]
    assert sorted(sets("CUBE (a, b)")) == [(), ("a",), ("a", "b"), ("b",)]
    assert sets("GROUPING SETS ((a, b), (), b)") == [("a", "b"), (), ("b",)]
    assert sets("c, ROLLUP (a, (b, c))") == [("c", "a", "b", "c"), ("c", "a"), ("c",)]
    assert find_grouping_sets("SELECT a FROM t GROUP BY a, b", 1) is None
    assert find_grouping_sets("SELECT a FROM t GROUP BY ROLLUP (a + 1)", 1) is None  # a key must be a column
    assert find_grouping_sets("SELECT a FROM x JOIN y ON x.k = y.k GROUP BY ROLLUP (a)", 1) is None  # one FROM item


def test_each_set_nulls_its_left_out_keys_outside_aggregates_and_numbers_grouping_bits():
    found = find_grouping_sets("SELECT t.a, b AS bee, GROUPING(a, b) AS g, MAX(b) AS m, UPPER(b) FROM t WHERE c > 1 "
                               "GROUP BY ROLLUP (a, b) HAVING COUNT(*) > 1 OR b IS NULL", 1)
    branches = found.union_text(NULLS).split(" UNION ALL ")
    assert branches[0] == ("SELECT t.a, b AS bee, CAST(0 AS BIGINT) AS g, MAX(b) AS m, UPPER(b) FROM t WHERE c > 1 "
                           "GROUP BY `a`, `b` HAVING COUNT(*) > 1 OR b IS NULL")
    assert branches[1] == ("SELECT t.a, NB AS bee, CAST(1 AS BIGINT) AS g, MAX(b) AS m, UPPER(NB) FROM t WHERE c > 1 "
                           "GROUP BY `a` HAVING COUNT(*) > 1 OR NB IS NULL")
    assert branches[2] == ("SELECT NA AS `a`, NB AS bee, CAST(3 AS BIGINT) AS g, MAX(b) AS m, UPPER(NB) FROM t WHERE c > 1 "
                           "HAVING COUNT(*) > 1 OR NB IS NULL")

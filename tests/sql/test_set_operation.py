"""The set-operation tree (precedence, parentheses, quantifiers) and its membership condition, without Spark."""

from __future__ import annotations

import pytest

from kindling.sql.errors import SqlError
from kindling.sql.group_aggregate import Projection
from kindling.sql.set_operation import MARKER, find_set_operation, find_union_all


def _condition(text: str) -> str:
    found = find_set_operation(text, 1)
    assert found is not None
    return found.aggregation_text("u", ["a"]).split(" WHERE ")[-1].split(" GROUP BY")[0].replace(f"`{MARKER}", "m").replace("` > 0", "")


def test_intersect_binds_tighter_than_union_and_except_and_parentheses_nest():
    assert _condition("SELECT a FROM x UNION SELECT a FROM y INTERSECT SELECT a FROM z") == "(m0 OR (m1 AND m2))"
    assert _condition("SELECT a FROM x EXCEPT SELECT a FROM y EXCEPT SELECT a FROM z") == "((m0 AND NOT (m1)) AND NOT (m2))"
    assert _condition("SELECT a FROM x INTERSECT (SELECT a FROM y EXCEPT SELECT a FROM z)") == "(m0 AND (m1 AND NOT (m2)))"
    # UNION ALL under a set operation is membership too; the operands keep their own parentheses and clauses
    found = find_set_operation("(SELECT a FROM x UNION ALL SELECT a FROM y) INTERSECT (SELECT a FROM z ORDER BY a LIMIT 3)", 1)
    assert found.operands == ["SELECT a FROM x", "SELECT a FROM y", "(SELECT a FROM z ORDER BY a LIMIT 3)"]


def test_queries_without_intersect_or_except_are_left_alone():
    assert find_set_operation("SELECT a FROM x UNION SELECT a FROM y", 1) is None
    assert find_set_operation("SELECT a FROM (SELECT a FROM x EXCEPT SELECT a FROM y) t", 1) is None
    assert find_set_operation("SELECT 'INTERSECT' AS a FROM x", 1) is None
    assert find_set_operation("SELECT * EXCEPT (rn) FROM (SELECT a, rn FROM x)", 1) is None  # Spark's star-except


def test_a_distinct_union_on_top_is_a_set_operation_when_asked_and_union_all_chains_are_their_operands():
    found = find_set_operation("SELECT a FROM x UNION ALL SELECT a FROM y UNION SELECT a FROM z", 1, distinct_unions=True)
    assert found is not None and found.unions_only and found.operands == ["SELECT a FROM x", "SELECT a FROM y", "SELECT a FROM z"]
    assert find_set_operation("SELECT a FROM x UNION SELECT a FROM y UNION ALL SELECT a FROM z", 1, distinct_unions=True) is None
    assert not find_set_operation("SELECT a FROM x UNION SELECT a FROM y EXCEPT SELECT a FROM z", 1).unions_only
    assert find_union_all("SELECT a FROM x UNION ALL (SELECT a FROM y) UNION ALL SELECT a * 2 FROM z", 1) == [
        "SELECT a FROM x", "SELECT a FROM y", "SELECT a * 2 FROM z"]
    assert find_union_all("SELECT a FROM x UNION SELECT a FROM y", 1) is None
    assert find_union_all("SELECT a FROM x UNION ALL SELECT a FROM y ORDER BY a", 1) is None  # sorts the whole union
    assert find_union_all("SELECT a FROM (SELECT a FROM x UNION ALL SELECT a FROM y) t", 1) is None


def test_a_projection_over_a_changelog_adds_the_row_kind_once_and_last():
    def over(select: str) -> str:
        return Projection(None, "t", 1, None, select, None).over("v").split(" FROM ")[0]

    assert over("*") == "SELECT *"
    assert over("*, a * 2 AS d") == "SELECT * EXCEPT (`__kindling_rowkind`), a * 2 AS d, `__kindling_rowkind`"
    assert over("t.*, COUNT(*) AS n") == "SELECT t.* EXCEPT (`__kindling_rowkind`), COUNT(*) AS n, `__kindling_rowkind`"


@pytest.mark.parametrize("text, construct", [
    ("SELECT a FROM x EXCEPT ALL SELECT a FROM y", "EXCEPT ALL"),
    ("SELECT a FROM x UNION ALL (SELECT a FROM y INTERSECT SELECT a FROM z)", "UNION ALL"),
    ("SELECT a FROM x INTERSECT SELECT a FROM y LIMIT 2", "LIMIT over a set operation"),
])
def test_multiset_and_sorted_forms_are_refused_by_name(text, construct):
    with pytest.raises(SqlError) as refused:
        find_set_operation(text, 1)
    assert refused.value.construct == construct

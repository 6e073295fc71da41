"""The set-operation tree (precedence, parentheses, quantifiers) and its membership condition, without Spark."""

from __future__ import annotations

import pytest

from kindling.sql.errors import SqlError
from kindling.sql.set_operation import MARKER, find_set_operation


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


@pytest.mark.parametrize("text, construct", [
    ("SELECT a FROM x EXCEPT ALL SELECT a FROM y", "EXCEPT ALL"),
    ("SELECT a FROM x UNION ALL (SELECT a FROM y INTERSECT SELECT a FROM z)", "UNION ALL"),
    ("SELECT a FROM x INTERSECT SELECT a FROM y LIMIT 2", "LIMIT over a set operation"),
])
def test_multiset_and_sorted_forms_are_refused_by_name(text, construct):
    with pytest.raises(SqlError) as refused:
        find_set_operation(text, 1)
    assert refused.value.construct == construct

"""Flink's changelog functions TO_CHANGELOG and FROM_CHANGELOG: parsing with Flink's validation messages, and
streaming runs of both (SQL and the Table API) with the changes asserted. Flink's answers over the differential tables
are in the differential corpus (``to-changelog-*``, ``from-changelog-*``)."""

from __future__ import annotations

import pytest

from kindling.sql import SqlError
from kindling.sql.changelog_functions import find_changelog_call


def test_a_call_is_parsed_with_named_or_positional_arguments():
    call = find_changelog_call("SELECT c.k FROM TO_CHANGELOG(input => TABLE `my totals`, op_mapping => MAP['INSERT, UPDATE_AFTER', "
                               "'upsert', 'DELETE', 'delete']) AS c WHERE c.op <> 'x'", 1)
    assert call is not None and (call.function, call.table, call.op) == ("TO_CHANGELOG", "`my totals`", "op")
    assert call.mapping == {"INSERT": "upsert", "UPDATE_AFTER": "upsert", "DELETE": "delete"}
    assert call.with_view("v") == "SELECT c.k FROM v AS c WHERE c.op <> 'x'"
    positional = find_changelog_call("select * from from_changelog(TABLE cdc, DESCRIPTOR(`__op`))", 1)
    assert positional is not None and (positional.function, positional.table, positional.op, positional.mapping) == (
        "FROM_CHANGELOG", "cdc", "__op", None)
    assert find_changelog_call("SELECT 'TO_CHANGELOG(x)' AS s FROM t", 1) is None
    # a MAP's later entry for a key wins, as in Flink (MAP['INSERT', 'I', 'INSERT', 'J'] writes J)
    assert find_changelog_call("SELECT * FROM TO_CHANGELOG(TABLE t, op_mapping => MAP['INSERT', 'I', 'INSERT', 'J'])",
                               1).mapping == {"INSERT": "J"}


@pytest.mark.parametrize("sql, message", [
    # Flink 2.3's own messages (PyFlink 2.3, recorded by hand)
    ("SELECT * FROM TO_CHANGELOG(input => TABLE t PARTITION BY id)", "Only tables with set semantics may be partitioned. "
     "Invalid PARTITION BY clause in the 0-th operand of table function 'TO_CHANGELOG'"),
    ("SELECT * FROM TO_CHANGELOG(input => TABLE t, op => DESCRIPTOR(a, b))",
     "The descriptor for argument 'op' must contain exactly one column name."),
    ("SELECT * FROM TO_CHANGELOG(input => TABLE t, op_mapping => MAP['INSERT', 'I', 'BOGUS', 'x'])",
     "Invalid target mapping for argument 'op_mapping'. Unknown change operation: 'BOGUS'. Valid values are: "
     "[INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE]."),
    ("SELECT * FROM TO_CHANGELOG(input => TABLE t, op_mapping => MAP['INSERT', 'I', 'UPDATE_AFTER, INSERT', 'J'])",
     "Invalid target mapping for argument 'op_mapping'. Duplicate change operation: 'INSERT'."),
    ("SELECT * FROM FROM_CHANGELOG(input => TABLE t, op => DESCRIPTOR(__op), op_mapping => MAP['c, r', 'INSERT', "
     "'u', 'UPDATE_AFTER', 'd', 'DELETE'])", "The 'op_mapping' must include UPDATE_BEFORE for retract mode. Upsert mode "
     "(without UPDATE_BEFORE) is not supported in this version."),
    ("SELECT * FROM FROM_CHANGELOG(input => TABLE t, op_mapping => MAP['INSERT', 'BOGUS', 'UPDATE_BEFORE', 'UPDATE_BEFORE'])",
     "Unknown change operation: 'BOGUS'"),
    # kindling's own, naming the argument
    ("SELECT * FROM TO_CHANGELOG(input => TABLE (SELECT * FROM t))", "the input of TO_CHANGELOG is a table or view name"),
    ("SELECT * FROM TO_CHANGELOG(input => TABLE t, mode => 'x')", "TO_CHANGELOG has no argument 'mode'"),
    ("SELECT * FROM TO_CHANGELOG(input => TABLE t, op_mapping => MAP['INSERT'])", "'op_mapping' is a MAP['key', 'value', ...]"),
    ("SELECT * FROM FROM_CHANGELOG(op => DESCRIPTOR(x))", "FROM_CHANGELOG takes an input table"),
])
def test_invalid_calls_are_refused_with_flinks_message(sql, message):
    with pytest.raises(SqlError) as refused:
        find_changelog_call(sql, 1)
    assert message in str(refused.value)


@pytest.mark.integration
def test_changelog_functions_in_sql_and_the_table_api(env):
    """A GROUP BY's changelog through TO_CHANGELOG, a change per row as Flink gives it without mini-batch (three rows of
    one key in one micro-batch: +I, -U/+U, -U/+U), read back by FROM_CHANGELOG; and the Table API's two methods."""
    from kindling.table import StreamTableEnvironment
    from kindling.table.expressions import descriptor, map_

    t_env = StreamTableEnvironment.create(env)
    env.execute_sql("CREATE TABLE sales (k STRING, v BIGINT) WITH ('connector' = 'collection', 'rows-per-batch' = '3', "
                    "'data' = '[[\"a\", 1], [\"b\", 2], [\"a\", 3], [\"a\", 5], [\"b\", -2]]')")
    env.execute_sql("CREATE TEMPORARY VIEW totals AS SELECT k, SUM(v) AS s FROM sales GROUP BY k")
    changes = env.execute_sql("SELECT * FROM TO_CHANGELOG(input => TABLE totals)")
    rows = [tuple(r) for r in changes.collect(timeout=300)]
    # each key's changes in order (keys are apart, in parallel, in Flink as here)
    assert [r for r in rows if r[1] == "a"] == [("INSERT", "a", 1), ("UPDATE_BEFORE", "a", 1), ("UPDATE_AFTER", "a", 4),
                                               ("UPDATE_BEFORE", "a", 4), ("UPDATE_AFTER", "a", 9)]
    assert [r for r in rows if r[1] == "b"] == [("INSERT", "b", 2), ("UPDATE_BEFORE", "b", 2), ("UPDATE_AFTER", "b", 0)]
    assert changes.get_resolved_schema().get_column_names() == ["op", "k", "s"]
    env.execute_sql("CREATE TEMPORARY VIEW change_rows AS SELECT * FROM TO_CHANGELOG(input => TABLE totals)")
    back = env.execute_sql("SELECT k, s FROM FROM_CHANGELOG(input => TABLE change_rows)")
    assert sorted(tuple(r) for r in back.final_rows(timeout=300)) == [("a", 9), ("b", 0)]

    totals = t_env.from_path("totals")
    coded = totals.to_changelog(descriptor("code").as_argument("op"), map_("INSERT, UPDATE_AFTER", "U").as_argument("op_mapping"))
    assert coded.get_schema().fieldNames() == ["code", "k", "s"]
    assert sorted(tuple(r) for r in coded.execute().final_rows(timeout=300)) == [("U", "a", 1), ("U", "a", 4), ("U", "a", 9),
                                                                              ("U", "b", 0), ("U", "b", 2)]
    assert sorted(tuple(r) for r in totals.to_changelog().from_changelog().execute().final_rows(timeout=300)) == [("a", 9), ("b", 0)]


@pytest.mark.integration
def test_an_unknown_op_code_fails_the_job_and_batch_mode_is_refused(env):
    from kindling.sql.errors import SqlError as Refusal

    env.execute_sql("CREATE TABLE cdc (id INT, op STRING) WITH ('connector' = 'collection', "
                    "'data' = '[[1, \"c\"], [2, \"x\"]]')")
    result = env.execute_sql("SELECT * FROM FROM_CHANGELOG(input => TABLE cdc, op_mapping => MAP['c', 'INSERT', "
                             "'ub', 'UPDATE_BEFORE'])")
    with pytest.raises(Exception, match=r"Received invalid op code 'x'. Defined op codes are: \[c, ub\]"):
        result.collect(timeout=300)
    with pytest.raises(Refusal, match="The op column 'kind' does not exist in the input schema."):
        env.execute_sql("SELECT * FROM FROM_CHANGELOG(input => TABLE cdc, op => DESCRIPTOR(kind))")
    env.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    try:
        with pytest.raises(Refusal, match="TO_CHANGELOG is supported in streaming mode only"):
            env.execute_sql("SELECT * FROM TO_CHANGELOG(input => TABLE cdc)")
    finally:
        env.execute_sql("SET 'execution.runtime-mode' = 'streaming'")

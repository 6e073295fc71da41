"""Splitting GROUP BY queries for the retracting aggregation, and its accumulators, without Spark."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pyspark.sql.types import DecimalType, DoubleType, IntegerType, LongType, StringType

from kindling.sql import SqlError
from kindling.sql.accumulators import AggregateCall, empty, finisher, result_type, update
from kindling.sql.group_aggregate import RESULT_PREFIX, find_group_aggregation, find_projection

Q4 = """SELECT Q.category, AVG(Q.final)
FROM (
    SELECT MAX(B.price) AS final, A.category
    FROM auction A, bid B
    WHERE A.id = B.auction
    GROUP BY A.id, A.category
) Q
GROUP BY Q.category"""


def test_nexmark_q4_splits_into_keys_calls_and_the_select_list_over_them():
    outer = find_group_aggregation(Q4, 1)
    assert outer.keys == ["Q.category"] and outer.key_names == ["category"]
    assert outer.calls == [AggregateCall("AVG", False, "Q.final")]
    assert outer.alias == "Q" and outer.source_query.strip().startswith("SELECT MAX(B.price)")
    assert outer.projection_text("cl") == ("SELECT Q.category AS `category`, Q.final AS `__kindling_agg_a0`, `__kindling_rowkind` "
                                           "FROM cl AS Q")
    assert outer.select == [("`category`", None), (f"`{RESULT_PREFIX}0`", None)]
    inner = find_group_aggregation(outer.source_query, 2)
    assert inner.key_names == ["id", "category"] and inner.source_query is None  # a join: planned from its FROM as written
    assert "'+I' AS `__kindling_rowkind` FROM" in inner.projection_text(None)
    assert "auction A, bid B" in inner.projection_text(None) and "WHERE A.id = B.auction" in inner.projection_text(None)
    assert outer.upsert_key(["category", "EXPR$1"]) == ["category"]


def test_having_filter_distinct_and_expression_keys_are_rewritten_over_the_results():
    agg = find_group_aggregation("SELECT UPPER(name) AS n, COUNT(*) FILTER (WHERE x > 1) AS big, SUM(DISTINCT y) + 1 AS s\n"
                                 "FROM v t GROUP BY UPPER(t.name) HAVING MIN(z) > 3", 1)
    assert [(c.function, c.distinct, c.argument) for c in agg.calls] == [
        ("COUNT", False, "CASE WHEN x > 1 THEN 1 END"), ("SUM", True, "y"), ("MIN", False, "z")]
    assert agg.select == [("`__kindling_agg_k0`", "n"), ("`__kindling_agg_r0`", "big"), ("`__kindling_agg_r1` + 1", "s")]
    assert agg.having.strip() == "`__kindling_agg_r2` > 3"
    assert agg.upsert_key(["n", "big", "s"]) == ["n"]
    distinct = find_group_aggregation("SELECT DISTINCT cat, k FROM v", 1)
    assert distinct.keys == ["cat", "k"] and distinct.calls == []


def test_only_aggregations_over_one_input_are_split():
    assert find_group_aggregation("SELECT a, b FROM t WHERE a > 1", 1) is None
    assert find_group_aggregation("SELECT a, COUNT(*) FROM t GROUP BY a ORDER BY a", 1) is None
    # event-time and processing-time windows are recognised only when asked for
    window = "SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end"
    assert find_group_aggregation(window, 1) is None
    assert find_group_aggregation(window, 1, window=True).key_names == ["k", "window_start", "window_end"]
    assert find_group_aggregation("SELECT k, COUNT(*) FROM t GROUP BY k", 1, window=True) is None
    # several groupings in one GROUP BY are Spark's aggregation (with a window) or refused over updating input
    grouping_sets = window.replace("GROUP BY k,", "GROUP BY GROUPING SETS ((k), ()),")
    assert find_group_aggregation(grouping_sets, 1, window=True) is None
    assert find_group_aggregation("SELECT a, b, SUM(c) FROM t GROUP BY ROLLUP (a, b)", 1) is None
    projection = find_projection("SELECT k, v * 2 AS d FROM best b WHERE v > 5", 1)
    assert projection.over("cl") == "SELECT k, v * 2 AS d, `__kindling_rowkind` FROM cl AS b WHERE v > 5"
    assert find_projection("SELECT a.k FROM x a JOIN y b ON a.k = b.k", 1) is None


def test_unsupported_aggregates_and_bad_calls_are_named():
    agg = find_group_aggregation("SELECT k,\n LISTAGG(v) FROM v GROUP BY k", 1)
    with pytest.raises(SqlError, match=r"line 2: LISTAGG over an updating input"):
        agg.check_supported()
    with pytest.raises(SqlError, match=r"SUM\(\*\) is not an aggregate"):
        find_group_aggregation("SELECT SUM(*) FROM v", 1)
    with pytest.raises(SqlError, match="GROUP needs BY"):
        find_group_aggregation("SELECT k, COUNT(*) FROM v GROUP k", 1)
    with pytest.raises(SqlError, match="SUM over a STRING argument is not supported"):
        result_type(AggregateCall("SUM", False, "s"), StringType())


def test_result_types_follow_flink():
    assert result_type(AggregateCall("AVG", False, "x"), LongType()) == LongType()
    assert result_type(AggregateCall("SUM", False, "x"), IntegerType()) == IntegerType()
    assert result_type(AggregateCall("AVG", False, "x"), DecimalType(10, 2)) == DecimalType(38, 6)
    assert result_type(AggregateCall("SUM", False, "x"), DecimalType(10, 2)) == DecimalType(38, 2)
    assert result_type(AggregateCall("COUNT", True, "x"), DoubleType()) == LongType()


def _run(call: AggregateCall, output, changes):
    acc = empty(call)
    for value, sign in changes:
        acc = update(call, acc, value, sign)
    finish = finisher(call, output)
    return finish(list(acc) if call.distinct and call.function != "MIN" else acc)


def test_accumulators_retract_values():
    avg = AggregateCall("AVG", False, "x")
    assert _run(avg, LongType(), [(-3, 1), (-4, 1)]) == -3  # Java's division: -7 / 2 truncates toward zero
    assert _run(avg, LongType(), [(10, 1), (4, 1), (10, -1)]) == 4
    assert _run(avg, DecimalType(38, 6), [(Decimal("1.00"), 1), (Decimal("2.00"), 1), (Decimal("2.00"), 1)]) == Decimal("1.666666")
    assert _run(avg, LongType(), [(None, 1)]) is None
    low = AggregateCall("MIN", False, "x")
    assert _run(low, LongType(), [(5, 1), (3, 1), (3, -1), (7, 1)]) == 5  # the retracted minimum gives way to the next
    assert _run(AggregateCall("MAX", False, "x"), LongType(), [(5, 1), (5, 1), (5, -1)]) == 5  # one of two equal values left
    assert _run(AggregateCall("COUNT", True, "x"), LongType(), [(1, 1), (1, 1), (2, 1), (2, -1)]) == 1
    assert _run(AggregateCall("SUM", False, "x"), LongType(), [(4, 1), (4, -1)]) is None  # no value left: NULL, as in SQL

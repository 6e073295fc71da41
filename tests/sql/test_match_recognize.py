"""MATCH_RECOGNIZE: the pattern NFA worked by hand (greedy and reluctant quantifiers, after-match strategies, matches
waiting for earlier partial matches, WITHIN), a streaming job over out-of-order and late rows, and Flink's refusals.
Flink's answers over the ticker table are compared in tests/sql/differential (mr-*, batch-mr-*)."""

from __future__ import annotations

import json
from typing import Optional

import pytest
from pyspark.sql import types as T

from kindling.sql import SqlError
from kindling.sql.match_recognize import MatcherState, compile_match, find_match_recognize, find_nested_match_recognize
from kindling.sql.row_pattern import compile_expression
from kindling.sql.tokens import significant, tokenize


def _matches(body: str, prices: list[int], measures: int = 1, times: Optional[list[int]] = None) -> list[tuple]:
    """The measures of every match of ``body`` over one partition's ``prices`` (1 s apart), then the end of input."""
    match = find_match_recognize(f"SELECT * FROM t MATCH_RECOGNIZE ({body})", 1)
    assert match is not None
    compiled = compile_match(match, ["price", "ts"]).typed([T.LongType()] * measures)
    times = times or [1000 * (n + 1) for n in range(len(prices))]
    state = MatcherState()
    rows = [(p, t, t) for p, t in zip(prices, times)]  # the columns, then the event time in ms
    out = compiled.run(state, rows)
    out.extend(compiled.output(m) for m in compiled.matcher.advance_time(state, 1 << 62))
    return out


def test_greedy_and_reluctant_quantifiers_take_the_rows_flinks_cep_takes():
    # Flink's page: (A B* C) over 10, 11, 12, 13, 14, 16; greedy B keeps every row under 15, so C is the 16 alone;
    # reluctant B lets C end the match at the first row over 12
    prices = [10, 11, 12, 13, 14, 16]
    define = "DEFINE A AS A.price > 10, B AS B.price < 15, C AS C.price > 12"
    base = "ORDER BY ts MEASURES C.price AS last_price AFTER MATCH SKIP PAST LAST ROW PATTERN ({}) " + define
    assert _matches(base.format("A B* C"), prices) == [(16,)]
    assert _matches(base.format("A B*? C"), prices) == [(13,), (16,)]
    # an optional variable is no looping state: its greediness does not keep C from taking 13
    assert _matches(base.format("A B? C"), [11, 12, 13, 14]) == [(13,)]


def test_after_match_strategies_prune_what_the_released_match_overlaps():
    # Flink's page: A+ C with SUM(A.price) < 30 over 7, 9, 10, 5, 10, 7, 14
    prices = [7, 9, 10, 5, 10, 7, 14]
    body = ("ORDER BY ts MEASURES SUM(A.price) AS s, FIRST(price) AS f AFTER MATCH {} PATTERN (A+ C) "
            "DEFINE A AS SUM(A.price) < 30")
    assert _matches(body.format("SKIP PAST LAST ROW"), prices, 2) == [(26, 7), (17, 10)]
    assert _matches(body.format("SKIP TO NEXT ROW"), prices, 2) == [(26, 7), (24, 9), (25, 10), (22, 5), (17, 10)]
    # the match of 7, 9, 10, 5 lets the next start at A's last row (10): 9's is pruned
    assert _matches(body.format("SKIP TO LAST A"), prices, 2) == [(26, 7), (25, 10), (17, 10)]
    # over 12, 17, 19 the match from 17 has A's last row first: skipping to it would find it again, for ever
    with pytest.raises(SqlError, match="Could not skip to first element of a match"):
        _matches(body.format("SKIP TO LAST A"), [12, 17, 19, 21], 2)


def test_a_match_waits_for_an_earlier_partial_match_and_within_times_it_out():
    # (A B+? C) over 1, 5, 6, 5, 9: the match from 5 (5, 6, 5) completes at the fourth row while the partial match from
    # 1 (every later row is above 1, a B) lives on; the later match waits for it, since it could still complete first
    # and prune it, and without WITHIN waits for ever (PyFlink 2.3 emits nothing either)
    body = ("ORDER BY ts MEASURES FIRST(price) AS f, C.price AS c AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+? C) {} "
            "DEFINE A AS A.price < 10, B AS B.price > A.price, C AS C.price = A.price")
    prices = [1, 5, 6, 5, 9]
    assert _matches(body.format(""), prices, 2) == []
    # with WITHIN 3 s the partial match from 1 s is dropped at 4 s, before the fourth row: the match is released
    assert _matches(body.format("WITHIN INTERVAL '3' SECOND"), prices, 2) == [(5, 5)]


def test_expressions_follow_flinks_sql_semantics():
    columns = {"price": 0, "tax": 1}

    def value(text: str, rows: dict) -> object:
        expression = compile_expression(significant(tokenize(text)), columns, {"A", "B"}, "ts")
        return expression.value(lambda v: rows.get(v, rows[None]) if v else rows[None], None)

    rows = {"A": [(7, 2), (-7, None)], "B": [], None: [(7, 2), (-7, None)]}
    assert value("A.price / 2", rows) == -3  # the last A row: integer division truncates toward zero
    assert value("FIRST(A.price) % 4", rows) == 3
    assert value("AVG(A.price * 3)", rows) == 0  # an integer AVG is truncated
    assert value("B.price > 1 OR A.price < 0", rows) is True  # NULL OR TRUE
    assert value("B.price > 1 AND A.price < 0", rows) is None
    assert value("LAST(A.tax, 1) IS NULL", rows) is False
    assert value("COUNT(A.tax)", rows) == 1
    assert value("CASE WHEN A.price BETWEEN -10 AND 0 THEN 'low' ELSE 'high' END", rows) == "low"


TICKS = [
    # symbol, price, ms: s1's 4 s row arrives after its 5 s row (within the 2 s watermark); the 2.5 s row of s1 comes
    # when the watermark is at 7 s: late, dropped (it would have been a DOWN row and changed s1's first match)
    ("s1", 10, 1000), ("s2", 5, 1000), ("s1", 8, 2000), ("s2", 3, 3000), ("s1", 9, 5000), ("s1", 6, 4000),
    ("s2", 7, 4000), ("s1", 12, 6000), ("s1", 4, 7000), ("s1", 3, 8000), ("s1", 5, 9000), ("s1", 1, 2500),
]


@pytest.mark.integration
def test_a_stream_is_matched_in_event_time_order_per_partition_and_the_result_is_append_only(env):
    env.execute_sql("CREATE TABLE ticks (symbol STRING, price INT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), "
                    "WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'collection', 'rows-per-batch' = "
                    f"'1', 'data' = '{json.dumps([list(t) for t in TICKS])}')")
    result = env.execute_sql("""
        SELECT symbol, top, bottom, recovered, steps, CAST(start_ts AS STRING) AS started FROM ticks MATCH_RECOGNIZE (
            PARTITION BY symbol ORDER BY ts
            MEASURES STRT.price AS top, LAST(DOWN.price) AS bottom, UP.price AS recovered, COUNT(DOWN.price) AS steps,
                     STRT.ts AS start_ts
            ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
            PATTERN (STRT DOWN+ UP)
            DEFINE DOWN AS DOWN.price < LAST(price, 1), UP AS UP.price > LAST(price, 1)) AS T""")
    changes = result.collect_changelog(timeout=120)
    assert {kind for kind, _ in changes} == {"+I"}
    assert sorted(tuple(row) for _, row in changes) == [
        ("s1", 10, 6, 9, 2, "1970-01-01 00:00:01.000"), ("s1", 12, 3, 5, 2, "1970-01-01 00:00:06.000"),
        ("s2", 5, 3, 7, 1, "1970-01-01 00:00:01.000")]


@pytest.mark.integration
def test_what_flink_rejects_is_refused_with_flinks_reason(env):
    env.execute_sql("CREATE TABLE ticks (symbol STRING, price INT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), "
                    "pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'collection', "
                    "'data' = '[[\"s1\", 1, 1000]]')")

    def query(body: str, source: str = "ticks") -> str:
        return f"SELECT * FROM {source} MATCH_RECOGNIZE (PARTITION BY symbol {body})"

    define = "MEASURES A.price AS p PATTERN ({}) DEFINE B AS B.price > A.price"
    refusals = {
        query("ORDER BY ts " + define.format("A B*")): "Greedy quantifiers are not allowed as the last element",
        query("ORDER BY ts MEASURES A.price AS p PATTERN (A B) DEFINE B AS B.price > PREV(B.price)"):
            "Flink does not support physical offsets within partition",
        query("ORDER BY ts MEASURES A.price AS p ALL ROWS PER MATCH PATTERN (A B) DEFINE B AS B.price > A.price"):
            "ALL ROWS PER MATCH is not supported",
        query("ORDER BY ts " + define.format("A (B | C)")): "a group of variables in PATTERN is not supported",
        query("ORDER BY ts " + define.format("A? B*?")): "a pattern that can match no row",
        query("ORDER BY pt " + define.format("A B")): "processing-time patterns are not supported",
        query("ORDER BY ts " + define.format("A B"), "(SELECT symbol, MAX(price) AS price, MAX(ts) AS ts FROM ticks GROUP BY symbol)"):
            "doesn't support consuming update and delete changes",
    }
    for sql, reason in refusals.items():
        with pytest.raises(SqlError, match=reason) as refused:
            env.execute_sql(sql)
        assert refused.value.construct.startswith("MATCH_RECOGNIZE"), sql


def test_the_clause_is_parsed_with_flinks_defaults_and_nested_queries_are_found():
    match = find_match_recognize("SELECT T.a FROM ticks MATCH_RECOGNIZE (ORDER BY ts, price DESC MEASURES A.p AS a "
                                 "PATTERN (A{2,} B{,3}? C{2}) DEFINE C AS C.p > 0) T WHERE T.a > 1", 1)
    assert match is not None
    assert (match.source, match.alias, match.order, match.then_by) == ("ticks", "T", "ts", [("price", True)])
    assert match.skip == ("NEXT_ROW", None)  # Calcite's default
    assert [(e.min, e.max, e.greedy) for e in match.pattern] == [(2, None, True), (0, 3, False), (2, 2, True)]
    assert match.outer_text("v").split() == ["SELECT", "T.a", "FROM", "v", "AS", "`T`", "WHERE", "T.a", ">", "1"]
    nested = find_nested_match_recognize("SELECT COUNT(*) FROM (SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts "
                                         "MEASURES A.p AS a PATTERN (A B) DEFINE B AS B.p > A.p)) GROUP BY a", 1)
    assert nested is not None and nested[1].startswith("SELECT * FROM t MATCH_RECOGNIZE")
    for body, reason in [("PATTERN (A{3,2} B)", "0 <= n <= m"), ("PATTERN (A B) WITHIN 5", "WITHIN INTERVAL"),
                         ("PATTERN (A B) SUBSET S = (A, B)", "SUBSET"), ("PATTERN (A A)", "appears twice"),
                         ("PATTERN (A?? B)", "optional reluctant")]:
        with pytest.raises(SqlError, match=reason):
            find_match_recognize(f"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.p AS a {body})", 1)

"""Python aggregate functions (udaf): declared as PyFlink declares them, parsed in GROUP BY and group windows, run on
the keyed aggregation with the changelog Flink emits (retractions, late rows dropped by a window), and refused with
Flink's messages where Flink refuses them. Flink's answers over the corpus tables are compared in
tests/sql/differential (udaf-*, batch-udaf-*)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import types as T

from kindling.sql import SqlError
from kindling.sql.aggregate_functions import AggregateFunction, udaf, udtaf
from kindling.sql.group_aggregate import find_group_aggregation
from kindling.sql.group_window import group_window_as_tvf

sys.path.insert(0, str(Path(__file__).resolve().parent / "differential"))
from python_functions import WeightedAvg  # noqa: E402  (the corpus's: sum(v * w) // sum(w), nulls skipped)


class Total(AggregateFunction):
    """No retract: Flink's default raises when a retraction reaches it."""

    def create_accumulator(self) -> Any:
        return [0]

    def get_value(self, accumulator: Any) -> Any:
        return accumulator[0]

    def accumulate(self, accumulator: Any, value: Any) -> None:
        accumulator[0] += value or 0

    def get_result_type(self) -> Any:
        return "BIGINT"


def _mean(v: Any) -> Any:
    return v.mean()


def test_udaf_is_declared_as_in_pyflink_and_evaluates_a_groups_rows():
    weighted = udaf(WeightedAvg())
    assert weighted.spark_type == T.LongType() and weighted.name == "WeightedAvg"  # the type from get_result_type()
    assert weighted.evaluate([(1, 2), (4, 1), (7, 3)], [T.LongType(), T.LongType()]) == 4

    class Ratio(WeightedAvg):  # PyFlink's documented WeightedAvg: true division for a BIGINT result
        def get_value(self, accumulator: Any) -> Any:
            return accumulator[0] / accumulator[1] if accumulator[1] else None

    assert udaf(Ratio()).evaluate([(1, 2), (4, 1), (7, 3)], [T.LongType(), T.LongType()]) == 4  # 27 / 6 truncated, as PyFlink
    mean = udaf(_mean, result_type="DOUBLE", func_type="pandas")
    assert mean.evaluate([(1.0,), (None,), (4.0,)], [T.DoubleType()]) == 2.5  # a pandas Series: the null is NaN, skipped
    assert mean.evaluate([], [T.DoubleType()]) is None  # the mean of no values (NaN) is null
    assert udaf(result_type="FLOAT", func_type="pandas")(_mean).func_type == "pandas"  # the decorator form

    with pytest.raises(RuntimeError, match="Method retract is not implemented"):
        Total().retract([0], 1)
    with pytest.raises(TypeError, match=r"pass an instance: udaf\(WeightedAvg\(\)\)"):
        udaf(WeightedAvg)
    with pytest.raises(ValueError, match="The func_type must be one of 'general, pandas', got vector."):
        udaf(WeightedAvg(), func_type="vector")
    with pytest.raises(ValueError, match="udaf needs result_type"):
        udaf(_mean, func_type="pandas")
    with pytest.raises(TypeError, match="a general udaf takes an AggregateFunction instance"):
        udaf(_mean, result_type="DOUBLE")
    with pytest.raises(ValueError, match="Inconsistent deterministic: False and True"):
        udaf(WeightedAvg(), deterministic=False)
    with pytest.raises(TypeError, match="udtaf takes a TableAggregateFunction instance, got WeightedAvg"):
        udtaf(WeightedAvg(), result_type="BIGINT")
    with pytest.raises(ValueError, match="The func_type must be 'general', got pandas."):
        udtaf(WeightedAvg(), func_type="pandas")


def test_calls_are_found_with_their_arguments_and_group_windows_become_window_tvfs():
    users = {"WEIGHTED_AVG": udaf(WeightedAvg()), "MEAN": udaf(_mean, result_type="DOUBLE", func_type="pandas")}
    found = find_group_aggregation("SELECT k, weighted_avg(v, w) AS wa, COUNT(*) AS n, mean(v) FROM t GROUP BY k", 1,
                                   user_aggregates=users)
    assert found is not None
    assert [(c.function, c.argument, c.width) for c in found.user_calls] == [("WEIGHTED_AVG", "NAMED_STRUCT('a0', v, 'a1', w)", 2), ("MEAN", "v", 1)]
    assert [c.function for c in found.calls] == ["WEIGHTED_AVG", "COUNT", "MEAN"]
    assert find_group_aggregation("SELECT weighted_avg(v, w) FROM t", 1) is None  # an unknown function: not an aggregation
    for call, reason in {"weighted_avg(DISTINCT v, w)": "DISTINCT in a call of the Python aggregate function",
                         "weighted_avg(v, w) FILTER (WHERE v > 1)": "FILTER on a call of the Python aggregate function",
                         "weighted_avg()": "needs an argument"}.items():
        with pytest.raises(SqlError, match=reason):
            find_group_aggregation(f"SELECT k, {call} FROM t GROUP BY k", 1, user_aggregates=users)

    legacy = ("SELECT k, TUMBLE_START(`ts`, INTERVAL '5' SECOND) AS s, TUMBLE_ROWTIME(`ts`, INTERVAL '5' SECOND) AS r, "
              "mean(v) FROM t AS x WHERE v > 0 GROUP BY k, TUMBLE(`ts`, INTERVAL '5' SECOND) HAVING mean(v) > 1 "
              "AND TUMBLE_END(`ts`, INTERVAL '5' SECOND) > TIMESTAMP '1970-01-01 00:00:00'")
    assert group_window_as_tvf(legacy, 1, users) == (
        "SELECT k, window_start AS s, window_time AS r, mean(v) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(`ts`), INTERVAL '5' SECOND)) "
        "AS x WHERE v > 0 GROUP BY k, window_start, window_end, window_time HAVING mean(v) > 1 AND window_end > TIMESTAMP '1970-01-01 00:00:00'")
    hop = ("SELECT HOP_END(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND) AS e, mean(v) FROM t "
           "GROUP BY HOP(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND)")
    assert group_window_as_tvf(hop, 1, users) == ("SELECT window_end AS e, mean(v) FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), "
                                                  "INTERVAL '1' SECOND, INTERVAL '3' SECOND)) GROUP BY window_start, window_end")
    assert group_window_as_tvf(legacy.replace("mean(v)", "MAX(v)"), 1, users) is None  # built-ins: Spark's group window
    with pytest.raises(SqlError, match="Session Group Window is currently not supported for Pandas UDAF"):
        group_window_as_tvf("SELECT mean(v) FROM t GROUP BY SESSION(ts, INTERVAL '1' SECOND)", 1, users)


def _collection(env, name: str, rows: list[list], columns: str) -> None:
    env.execute_sql(f"CREATE TABLE {name} ({columns}) WITH ('connector' = 'collection', 'rows-per-batch' = '1', "
                    f"'data' = '{json.dumps(rows)}')")


@pytest.mark.integration
def test_a_group_by_retracts_its_previous_result_as_rows_arrive(env):
    env.create_temporary_function("weighted_avg", udaf(WeightedAvg()))
    _collection(env, "weights", [["a", 1, 2], ["b", 5, 1], ["a", 4, 1], ["a", 7, 3]], "k STRING, v BIGINT, w BIGINT")
    changes = env.execute_sql("SELECT k, weighted_avg(v, w) AS wa FROM weights GROUP BY k").collect_changelog(timeout=120)
    # one row per micro-batch: each key's first result is +I, a changed one -U (old) then +U (new)
    assert [(kind, tuple(row)) for kind, row in changes] == [
        ("+I", ("a", 1)), ("+I", ("b", 5)), ("-U", ("a", 1)), ("+U", ("a", 2)), ("-U", ("a", 2)), ("+U", ("a", 4))]


@pytest.mark.integration
def test_a_window_fires_on_the_watermark_and_drops_its_late_rows(env):
    env.create_temporary_function("weighted_avg", udaf(WeightedAvg()))
    # out of order within the watermark (2 s), then a row for the window [0 s, 5 s) after the watermark passed 5 s
    rows = [["a", 1, 1000], ["a", 3, 4000], ["a", 2, 2000], ["a", 5, 7000], ["a", 100, 3000], ["a", 6, 12000]]
    _collection(env, "readings", rows, "k STRING, v BIGINT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), "
                "WATERMARK FOR ts AS ts - INTERVAL '2' SECOND")
    changes = env.execute_sql(
        "SELECT k, CAST(window_end AS STRING) AS e, weighted_avg(v, 1) AS wa, COUNT(*) AS n FROM "
        "TABLE(TUMBLE(TABLE readings, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, k"
    ).collect_changelog(timeout=120)
    assert [(kind, tuple(row)) for kind, row in changes] == [
        ("+I", ("a", "1970-01-01 00:00:05.000", 2, 3)), ("+I", ("a", "1970-01-01 00:00:10.000", 5, 1)),
        ("+I", ("a", "1970-01-01 00:00:15.000", 6, 1))]


@pytest.mark.integration
def test_what_flink_refuses_is_refused_with_flinks_message(env, tmp_path):
    env.create_temporary_function("weighted_avg", udaf(WeightedAvg()))
    env.create_temporary_function("total", udaf(Total()))
    env.create_temporary_function("mean", udaf(_mean, result_type="DOUBLE", func_type="pandas"))
    _collection(env, "t", [["a", 1, 1000]], "k STRING, v BIGINT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), "
                "WATERMARK FOR ts AS ts - INTERVAL '2' SECOND")
    refusals = {
        "SELECT k, mean(v) FROM t GROUP BY k": "Pandas UDAFs are not supported in streaming mode currently",
        "SELECT window_start, mean(v) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
        "GROUP BY window_start, window_end": "Pandas UDAFs are not supported in streaming mode currently",
        "SELECT total(n) FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k)": "Total does not implement retract",
        "SELECT k, mean(v), weighted_avg(v, 1) FROM t GROUP BY k, TUMBLE(ts, INTERVAL '5' SECOND)":
            "Pandas UDAFs and General Python UDAFs are not supported in used together currently",
        "SELECT k, mean(v), COUNT(*) FROM t GROUP BY k, TUMBLE(ts, INTERVAL '5' SECOND)":
            "Python UDAF and Java/Scala UDAF cannot be used together",
        "SELECT k, weighted_avg(v, 1) OVER (PARTITION BY k ORDER BY ts) FROM t":
            "Non-Pandas Python UDAFs are not supported in stream mode currently",
        "SELECT k, mean(v) OVER (PARTITION BY k ORDER BY ts) FROM t":
            "Python UDAF is not supported to be used in UNBOUNDED PRECEDING OVER windows",
        "SELECT k, weighted_avg(v, 1) FROM (SELECT t.k, t.v FROM t JOIN t AS u ON t.k = u.k) GROUP BY k, TUMBLE(ts, INTERVAL '5' SECOND)":
            "weighted_avg is called where kindling cannot run it",
    }
    for sql, reason in refusals.items():
        with pytest.raises(SqlError, match=reason) as refused:
            env.execute_sql(sql)
        assert "aggregate function" in refused.value.construct, sql

    from kindling.env import StreamEnvironment

    batch = StreamEnvironment({"execution.runtime-mode": "batch", "state.checkpoints.dir": str(tmp_path)}, spark=env.spark)
    batch.create_temporary_function("weighted_avg", udaf(WeightedAvg()))
    batch.execute_sql("CREATE TABLE b (k STRING, v BIGINT) WITH ('connector' = 'collection', 'data' = '[[\"a\", 1]]')")
    with pytest.raises(SqlError, match="non-Pandas UDAFs are not supported in batch mode currently"):
        batch.execute_sql("SELECT k, weighted_avg(v, 1) FROM b GROUP BY k")

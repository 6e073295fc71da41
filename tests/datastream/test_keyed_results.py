"""What a KeyedProcessFunction's process_element gives back reaches the output alike however it is given: yielded,
returned as a list, an iterator or None, or collected the Java way; and a wrong record fails naming the function."""

import sys
from pathlib import Path

import pytest
from pyspark.sql import Row
from pyspark.sql.types import LongType, StringType, StructField, StructType

from kindling import KeyedProcessFunction
from kindling.datastream.errors import UserFunctionError
from kindling.datastream.operator import ROWTIME
from kindling.datastream.process import KeyedProcessAdapter
from kindling.datastream.side_outputs import TAG_COLUMN, OutputTag

sys.path.insert(0, str(Path(__file__).parent))  # keyed_harness

OUT = StructType([StructField("k", StringType()), StructField("n", LongType())])
LATE = OutputTag("late")


class Yields(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield ctx.get_current_key(), int(value["n"])
        ctx.output(LATE, value["n"])  # a side output between two results keeps its place
        yield Row(k=ctx.get_current_key(), n=int(value["n"]) * 10)


class ReturnsList(KeyedProcessFunction):
    def process_element(self, value, ctx):
        return [(ctx.get_current_key(), int(value["n"])), Row(n=int(value["n"]) * 10, k=ctx.get_current_key())]


class ReturnsOne(KeyedProcessFunction):
    def process_element(self, value, ctx):
        return iter([(ctx.get_current_key(), int(value["n"]))]) if value["n"] != "2" else None


class Collects(KeyedProcessFunction):
    def process_element(self, value, ctx, out):
        out.collect((ctx.get_current_key(), int(value["n"])))


class TooWide(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield ctx.get_current_key(), 1, "extra"


BATCHES = [(0, [("a", 0, 5, {"n": "1"}), ("b", 0, 6, {"n": "2"}), ("a", 0, 7, {"n": "3"})])]


def _run(function):
    from keyed_harness import run

    rows = run(KeyedProcessAdapter(function), OUT, [["n"]], BATCHES, key_groups=1)
    return [(r.k, r.n, r[ROWTIME], r[TAG_COLUMN]) for r in rows]


def test_yielded_results_and_side_outputs_keep_their_order_and_the_records_event_time():
    assert _run(Yields()) == [("a", 1, 5000, None), (None, None, 5000, "late"), ("a", 10, 5000, None),
                              ("a", 3, 7000, None), (None, None, 7000, "late"), ("a", 30, 7000, None),
                              ("b", 2, 6000, None), (None, None, 6000, "late"), ("b", 20, 6000, None)]


@pytest.mark.parametrize("function, expected", [
    (ReturnsList(), [("a", 1), ("a", 10), ("a", 3), ("a", 30), ("b", 2), ("b", 20)]),
    (ReturnsOne(), [("a", 1), ("a", 3)]),
    (Collects(), [("a", 1), ("a", 3), ("b", 2)]),
])
def test_returned_and_collected_results_reach_the_output_as_yielded_ones_do(function, expected):
    assert [(k, n) for k, n, _, _ in _run(function)] == expected


def test_a_result_of_the_wrong_width_fails_naming_the_function_and_the_record():
    with pytest.raises(UserFunctionError) as failed:
        _run(TooWide())
    message = str(failed.value)
    assert message.startswith("user function TooWide in operator 't' raised ValueError: function returned 3 values")
    assert message.endswith("on record Row(n='1')")


def test_results_gathered_past_a_frames_worth_go_to_spark_with_the_key_group_that_filled_it(monkeypatch):
    from keyed_harness import run

    from kindling.datastream import operator as op

    expected = _run(Yields())
    monkeypatch.setattr(op, "_GATHERED_ROWS", 4)  # each group's results, once four or more have gathered
    handed = []
    gathered = op.KeyedRunner.gathered

    def counted(runner):
        frames = list(gathered(runner))
        handed.extend(len(f) for f in frames)
        return iter(frames)

    monkeypatch.setattr(op.KeyedRunner, "gathered", counted)
    rows = run(KeyedProcessAdapter(Yields()), OUT, [["n"]], BATCHES, key_groups=2)  # a and b in groups of their own
    assert [(r.k, r.n, r[ROWTIME], r[TAG_COLUMN]) for r in rows] == expected
    assert handed == [3]  # six results (a's two records) went with the group's own call; b's three at the end

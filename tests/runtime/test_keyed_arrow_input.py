"""The keyed operator's input as Arrow batches in its workers (kindling.runtime.keyed_arrow_input), and the packed
input it replaces where kindling does not start the workers: both hand the operator the same records."""

from __future__ import annotations

import pyarrow as pa
import pytest

from kindling.datastream.process import KeyedProcessFunction
from kindling.datastream.state import ValueStateDescriptor
from kindling.runtime import keyed_arrow_input


def _batch(slots: list, groups: list, values: list) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(slots, pa.int32()), pa.array(groups, pa.int32()), pa.array(values)],
                                      names=["slot", "g", "v"])


def test_a_grouping_keys_rows_are_cut_out_of_the_batches_in_order_across_batch_ends():
    batches = [_batch([0, 0, 0, 0], [1, 1, 2, 2], ["a", "b", "c", "d"]), _batch([0, 1, 1], [2, 2, 5], ["e", "f", "g"]),
               _batch([], [], pa.array([], pa.string())), _batch([1], [5], ["h"])]
    runs = [(key, rows.to_pydict()) for key, rows in keyed_arrow_input.key_runs(iter(batches), [0, 1], [0, 1, 2])]
    assert [key for key, _ in runs] == [(0, 1), (0, 2), (0, 2), (1, 2), (1, 5), (1, 5)]
    assert [rows["v"] for _, rows in runs] == [["a", "b"], ["c", "d"], ["e"], ["f"], ["g"], ["h"]]
    assert all(isinstance(value, int) for key, _ in runs for value in key)  # Python values, as PySpark's own keys


def test_this_pyspark_has_the_step_the_workers_replace():
    # else every keyed operator would fall back to packing its input, and this suite would not run the Arrow input
    assert keyed_arrow_input.worker_supports()


class _CountAndEcho(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def process_element(self, value, ctx):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        yield value.k, count, value.n, value.s


@pytest.mark.integration
@pytest.mark.parametrize("arrow_input", [True, False], ids=["arrow", "packed"])
def test_both_inputs_hand_the_operator_the_same_records(env, monkeypatch, arrow_input):
    from kindling.datastream import operator
    from kindling.runtime.transform_with_state import arrow_input_available

    assert arrow_input_available(env.spark)  # the test session's workers are kindling's
    if not arrow_input:
        monkeypatch.setattr(operator, "arrow_input_available", lambda session: False)
    rows = [(f"k{i % 7}", None if i % 5 == 0 else 2**62 + i, None if i % 3 == 0 else f"s{i}") for i in range(60)]
    stream = env.from_collection(rows, "k STRING, n BIGINT, s STRING", rows_per_batch=20)
    out = stream.key_by("k").process(_CountAndEcho(), "k STRING, count BIGINT, n BIGINT, s STRING").execute_and_collect()
    got = sorted(tuple(r) for r in out)
    expected = []
    for key in sorted({k for k, _, _ in rows}):
        mine = [r for r in rows if r[0] == key]
        expected += [(key, count, n, s) for count, (_, n, s) in enumerate(mine, 1)]
    assert got == sorted(expected)  # each key's records in arrival order, its count carried across micro-batches

"""Timers of the keys of one key group fire in order of time across the keys, as Flink's timer service fires them."""

import sys
from pathlib import Path

from pyspark.sql.types import LongType, StringType, StructField, StructType

from kindling import KeyedProcessFunction
from kindling.datastream.process import KeyedProcessAdapter

sys.path.insert(0, str(Path(__file__).parent))  # keyed_harness


class TimersAt(KeyedProcessFunction):
    def process_element(self, value, ctx):
        for at in value["at"].split(","):
            ctx.timer_service().register_event_time_timer(int(at))

    def on_timer(self, timestamp, ctx):
        yield ctx.get_current_key(), timestamp


def test_due_timers_of_a_key_group_fire_in_order_of_time_whichever_key_registered_first():
    from keyed_harness import run

    out = StructType([StructField("k", StringType()), StructField("t", LongType())])
    batches = [
        (0, [("x", 0, 1, {"at": "3,9"}), ("y", 0, 1, {"at": "5"}), ("z", 0, 1, {"at": "6,20"})]),
        (10, []),  # the watermark passes 3, 5, 6 and 9 with no records: Spark wakes the key group once
        (30, []),
    ]
    rows = run(KeyedProcessAdapter(TimersAt()), out, [["at"]], batches, key_groups=1)
    assert [(r.k, r.t) for r in rows] == [("x", 3), ("y", 5), ("z", 6), ("x", 9), ("z", 20)]

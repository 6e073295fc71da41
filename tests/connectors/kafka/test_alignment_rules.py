"""The admission arithmetic of watermark alignment, on partitions whose event time is a function of the offset."""

from __future__ import annotations

import uuid

from kindling.connectors.kafka.alignment import AlignmentGroup, PartitionAligner

HOUR = 3_600_000


class OffsetClock:
    """Event time of record ``o`` in partition ``p``: ``base[p] + o`` seconds (times rise with offsets)."""

    def __init__(self, base: dict) -> None:
        self.base = base

    def time_at(self, tp, offset):
        return self.base[tp] + offset * 1000

    def first_offset_after(self, tp, limit_ms, low, high):
        for offset in range(low, high):
            if self.time_at(tp, offset) > limit_ms:
                return offset
        return high

    def close(self):
        pass


A, B = ("t", 0), ("t", 1)


def aligner(base, drift_ms=5000, idle=None, group=None):
    group = group or AlignmentGroup(f"g-{uuid.uuid4().hex}", "source-1")
    return PartitionAligner(OffsetClock(base), group, drift_ms, idle, update_interval_s=0.0)


def test_the_fast_partition_waits_for_the_slow_one():
    a = aligner({A: 0, B: HOUR})
    ends = a.limit({A: 0, B: 0}, highs={A: 100, B: 100}, lows={A: 0, B: 0})
    assert ends == {A: 6, B: 0}, "A reads up to its drift (5 s after its first record); B, an hour ahead, waits"
    ends = a.limit({A: 100, B: 0}, highs={A: 100, B: 100}, lows={A: 0, B: 0}, finished=frozenset({A}))
    assert ends == {A: 100, B: 6}, "a finished partition no longer holds the group back; B advances by the drift"


def test_an_idle_partition_stops_holding_back_and_an_empty_one_never_does():
    waiting = aligner({A: 0, B: HOUR})  # no idle timeout: A, caught up at 10 s, holds B (an hour ahead) back
    assert waiting.limit({A: 10, B: 0}, highs={A: 10, B: 50}, lows={A: 0, B: 0}) == {A: 10, B: 0}
    idle = aligner({A: 0, B: HOUR}, idle=0.0)  # with a zero idle timeout A counts as idle at once
    assert idle.limit({A: 10, B: 0}, highs={A: 10, B: 50}, lows={A: 0, B: 0}) == {A: 10, B: 6}
    assert A in idle.idle
    empty = aligner({A: 0, B: HOUR})  # A never held a record
    assert empty.limit({A: 0, B: 0}, highs={A: 0, B: 50}, lows={A: 0, B: 0}) == {A: 0, B: 6}


def test_sources_of_one_group_align_with_each_other():
    name = f"g-{uuid.uuid4().hex}"
    slow = aligner({A: 0, B: 0}, group=AlignmentGroup(name, "slow"))
    fast = aligner({A: HOUR, B: HOUR}, group=AlignmentGroup(name, "fast"))
    slow.limit({A: 0, B: 0}, highs={A: 10, B: 10}, lows={A: 0, B: 0})
    assert fast.limit({A: 0, B: 0}, highs={A: 10, B: 10}, lows={A: 0, B: 0}) == {A: 0, B: 0}
    assert AlignmentGroup(name, "other").publish(None) == 0, "the group's minimum is the slow source's frontier"

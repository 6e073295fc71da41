"""The admission arithmetic of watermark alignment, on partitions whose event time is a function of the offset."""

from __future__ import annotations

import uuid

from kindling.connectors.kafka.alignment import AlignmentGroup, EventTimeProbe, PartitionAligner

HOUR = 3_600_000


class OffsetClock:
    """Event time of record ``o`` in partition ``p``: ``base[p] + o`` seconds (times rise with offsets)."""

    def __init__(self, base: dict) -> None:
        self.base = base

    def time_at(self, tp, offset):
        return self.base[tp] + offset * 1000

    def last_time(self, tp, low, high):
        return self.time_at(tp, high - 1)

    def first_offset_after(self, tp, limit_ms, low, high, near_end=False):
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


def split_watermarks(base, idle=None):
    return PartitionAligner.split_watermarks(OffsetClock(base), idle)


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


def test_without_alignment_no_partition_runs_past_the_others_last_record():
    """Flink's per-split watermark: B's high offset was read later and holds 3 s more event time than
    A's; B is cut where A ends, so Spark's single watermark cannot pass A's future records."""
    a = split_watermarks({A: 0, B: 0})
    assert a.limit({A: 0, B: 0}, highs={A: 10, B: 13}, lows={A: 0, B: 0}) == {A: 10, B: 10}
    assert a.limit({A: 10, B: 10}, highs={A: 20, B: 15}, lows={A: 0, B: 0}) == {A: 15, B: 15}, "now A runs ahead"
    assert a.frontiers == {A: 19_000, B: 14_000}


def test_without_alignment_a_whole_backlog_is_read_at_once_up_to_the_slowest_end():
    """A partition an hour behind is read to its end in one batch (no drift steps), the other waits."""
    a = split_watermarks({A: 0, B: HOUR})
    assert a.limit({A: 0, B: 0}, highs={A: 500, B: 500}, lows={A: 0, B: 0}) == {A: 500, B: 0}


def test_without_alignment_a_quiet_partition_holds_back_until_idle_and_an_empty_one_never_does():
    held = split_watermarks({A: 0, B: 0})
    assert held.limit({A: 10, B: 0}, highs={A: 10, B: 50}, lows={A: 0, B: 0}) == {A: 10, B: 10}
    idle = split_watermarks({A: 0, B: 0}, idle=0.0)
    assert idle.limit({A: 10, B: 0}, highs={A: 10, B: 50}, lows={A: 0, B: 0}) == {A: 10, B: 50}
    assert A in idle.idle
    empty = split_watermarks({A: 0, B: 0})
    assert empty.limit({A: 0, B: 0}, highs={A: 0, B: 50}, lows={A: 0, B: 0}) == {A: 0, B: 50}


def test_one_partition_is_never_probed():
    class Untouchable(OffsetClock):
        def last_time(self, tp, low, high):
            raise AssertionError("probed")

    a = PartitionAligner.split_watermarks(Untouchable({A: 0}), None)
    assert a.limit({A: 0}, highs={A: 10}, lows={A: 0}) == {A: 10}


def test_searching_back_from_the_end_finds_the_bisection_answer_in_few_probes():
    probe = EventTimeProbe(lambda: None, lambda: None, decode_time=lambda value: None)
    probed = []

    def time_at(tp, offset):
        probed.append(offset)
        return 1000 + offset * 10

    probe.time_at = time_at
    for limit in range(900, 2100, 7):
        expected = next((o for o in range(3, 100) if 1000 + o * 10 > limit), 100)
        assert probe.first_offset_after(A, limit, 3, 100) == expected
        assert probe.first_offset_after(A, limit, 3, 100, near_end=True) == expected
    probed.clear()
    assert probe.first_offset_after(A, 1000 + 97 * 10, 0, 10_000, near_end=True) == 98
    assert len(probed) <= 30, probed

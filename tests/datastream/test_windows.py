from datetime import timedelta

import pytest

from kindling.datastream.windows import (
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    merge_sessions,
)


def test_tumbling_assignment_matches_flink():
    windows = TumblingEventTimeWindows.of("15 s")
    assert windows.assign_windows(0) == [TimeWindow(0, 15000)]
    assert windows.assign_windows(14999) == [TimeWindow(0, 15000)]
    assert windows.assign_windows(15000) == [TimeWindow(15000, 30000)]
    assert windows.assign_windows(-1) == [TimeWindow(-15000, 0)]
    assert TimeWindow(0, 15000).max_timestamp() == 14999


def test_tumbling_with_offset():
    windows = TumblingEventTimeWindows.of("1 h", offset="15 min")
    assert windows.assign_windows(0) == [TimeWindow(-45 * 60000, 15 * 60000)]


def test_sliding_assignment_gives_size_over_slide_windows():
    windows = SlidingEventTimeWindows.of("10 s", "5 s")
    assert sorted(windows.assign_windows(7000)) == [TimeWindow(0, 10000), TimeWindow(5000, 15000)]
    assert len(SlidingEventTimeWindows.of("1 min", "10 s").assign_windows(123456)) == 6


def test_sessions_merge_when_gaps_are_short():
    assert EventTimeSessionWindows.with_gap("5 s").assign_windows(1000) == [TimeWindow(1000, 6000)]
    assert merge_sessions([1000, 3000, 20000, 9000], 5000) == [TimeWindow(1000, 8000), TimeWindow(9000, 14000), TimeWindow(20000, 25000)]
    assert merge_sessions([1000, 5999], 5000) == [TimeWindow(1000, 10999)]


def test_processing_time_twins_are_not_event_time():
    assert TumblingEventTimeWindows.of("1 s").is_event_time
    assert not TumblingProcessingTimeWindows.of("1 s").is_event_time
    assert isinstance(TumblingProcessingTimeWindows.of("1 s"), TumblingProcessingTimeWindows)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: TumblingEventTimeWindows.of("0 s"), "size must be positive"),
        (lambda: TumblingEventTimeWindows.of("10 s", offset="10 s"), "offset"),
        (lambda: SlidingEventTimeWindows.of("5 s", "10 s"), "slide"),
        (lambda: EventTimeSessionWindows.with_gap("-1 s"), "negative"),
    ],
)
def test_bad_windows_are_refused(build, message):
    with pytest.raises(ValueError) as err:
        build()
    assert message in str(err.value)


def test_durations_accept_timedelta():
    assert TumblingEventTimeWindows.of(timedelta(seconds=15)).size == timedelta(seconds=15)

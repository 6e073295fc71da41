from datetime import timedelta

import pytest

from kindling.durations import format_duration, parse_duration, spark_interval, to_millis


@pytest.mark.parametrize(
    "text, expected",
    [
        ("200 ms", timedelta(milliseconds=200)),
        ("15 s", timedelta(seconds=15)),
        ("15s", timedelta(seconds=15)),
        ("1 min", timedelta(minutes=1)),
        ("2 h", timedelta(hours=2)),
        ("1 d", timedelta(days=1)),
        ("3 seconds", timedelta(seconds=3)),
        ("500", timedelta(milliseconds=500)),
        ("1.5 s", timedelta(milliseconds=1500)),
    ],
)
def test_parses_flink_duration_strings(text, expected):
    assert parse_duration(text) == expected


def test_accepts_timedelta_and_milliseconds():
    assert parse_duration(timedelta(seconds=2)) == timedelta(seconds=2)
    assert parse_duration(250) == timedelta(milliseconds=250)


@pytest.mark.parametrize("bad", ["fast", "10 parsecs", "-5 s", "", "s"])
def test_rejects_bad_durations_with_the_value_in_the_message(bad):
    with pytest.raises(ValueError) as err:
        parse_duration(bad, name="execution.checkpointing.interval")
    assert "execution.checkpointing.interval" in str(err.value)


def test_conversions():
    assert to_millis("15 s") == 15000
    assert spark_interval("15 s") == "15 seconds"
    assert spark_interval("200 ms") == "200 milliseconds"
    assert format_duration("90 s") == "90 s"
    assert format_duration("120 s") == "2 min"

from kindling.playground.click_generator import ClickEvent, aligned_start, click_events
from kindling.playground.demo import WindowCheck


def test_generator_puts_1000_clicks_per_page_in_every_window():
    start = aligned_start(1_700_000_007_123)
    assert start % 15000 == 0 and start <= 1_700_000_007_123
    events = click_events(start)
    per_window: dict = {}
    for _ in range(6 * 3000):
        event = next(events)
        key = ((event.timestamp_ms - start) // 15000, event.page)
        per_window[key] = per_window.get(key, 0) + 1
    assert set(per_window.values()) == {1000}
    assert len(per_window) == 6 * 3


def test_click_event_json_uses_flink_sql_timestamps():
    assert ClickEvent(0, "/help").to_json() == b'{"timestamp": "1970-01-01 00:00:00.000", "page": "/help"}'


def test_window_check_counts_wrong_and_repeated_windows():
    check = WindowCheck(event_time=True)
    assert check.judge({"windowStart": "a", "page": "/help", "count": 1000})
    assert not check.judge({"windowStart": "b", "page": "/help", "count": 999})
    assert not check.judge({"windowStart": "a", "page": "/help", "count": 1000})
    assert check.summary() == "windows=3 correct=1 wrong=2"

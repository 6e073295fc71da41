"""Reading the click-count job's output topic and judging it against the generator's arrangement."""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import datetime, timezone

from kindling.connectors.kafka.tail import TopicTail
from kindling.playground.click_generator import EVENTS_PER_WINDOW, PAGES, WINDOW_SIZE_MS


class OutputReader:
    """Accumulates every record of the output topic (read_committed) as it arrives."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.tail = TopicTail({"bootstrap.servers": bootstrap, "isolation.level": "read_committed"}, [topic])
        self.records: list[dict] = []

    def poll(self, seconds: float = 0.5) -> None:
        for message in self.tail.poll(seconds):
            if message.error() is None:
                self.records.append(json.loads(message.value()))

    def distinct(self) -> dict:
        return {(r["windowStart"], r["page"]): r["count"] for r in self.records}

    def wait_for(self, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while len(self.distinct()) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {len(self.distinct())} of {count} windows arrived within {timeout:.0f} s")
            self.poll()

    def close(self) -> None:
        self.tail.close()


def expected_windows(start_ms: int, windows: int) -> set:
    """(windowStart as the JSON sink writes it, page) for the first ``windows`` windows of every page."""
    result = set()
    for i in range(windows):
        moment = datetime.fromtimestamp((start_ms + i * WINDOW_SIZE_MS) / 1000, tz=timezone.utc)
        result.update((moment.strftime("%Y-%m-%d %H:%M:%S"), page) for page in PAGES)
    return result


def normalise_start(text: str) -> str:
    """The sink writes Flink's SQL timestamp format; drop a zero fraction for comparison."""
    return text.split(".")[0]


def events_for(windows: int) -> int:
    """Clicks that complete ``windows`` windows per page and push the watermark (200 ms) past the last."""
    return len(PAGES) * (windows * EVENTS_PER_WINDOW + 20)


def count_summary(records: list[dict]) -> Counter:
    return Counter(int(r["count"]) for r in records)

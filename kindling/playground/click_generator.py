"""Click events for the playground, arranged as Flink's ClickEventGenerator arranges them.

Pages are visited round-robin and each page's event time advances 15 ms per click, so every
15-second tumbling window holds exactly 1000 clicks per page: a job that counts them is
correct exactly when every window it emits says 1000.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterator, Optional

PAGES = ("/help", "/index", "/shop", "/jobs", "/about", "/news")
WINDOW_SIZE_MS = 15_000
EVENTS_PER_WINDOW = 1000
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


@dataclass(frozen=True)
class ClickEvent:
    timestamp_ms: int
    page: str

    def to_json(self) -> bytes:
        moment = datetime.fromtimestamp(self.timestamp_ms / 1000, tz=timezone.utc)
        return json.dumps({"timestamp": moment.strftime(TIMESTAMP_FORMAT)[:-3], "page": self.page}).encode()


def aligned_start(now_ms: Optional[int] = None) -> int:
    """The start of the current 15-second window: the first event time the generator uses."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return now_ms - now_ms % WINDOW_SIZE_MS


def click_events(start_ms: int, pages: tuple[str, ...] = PAGES) -> Iterator[ClickEvent]:
    """The endless, deterministic click sequence starting at event time ``start_ms``."""
    step = WINDOW_SIZE_MS // EVENTS_PER_WINDOW
    next_timestamp = {page: start_ms for page in pages}
    while True:
        for page in pages:
            yield ClickEvent(next_timestamp[page], page)
            next_timestamp[page] += step


class ClickEventGenerator:
    """Writes click events to a Kafka topic at a steady rate, in a background thread."""

    def __init__(self, bootstrap_servers: str, topic: str = "input", rate: float = 1000.0, start_ms: Optional[int] = None) -> None:
        if rate <= 0:
            raise ValueError(f"rate must be positive, got {rate}")
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        self.rate = rate
        self.start_ms = aligned_start() if start_ms is None else start_ms
        self.sent = 0
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.error: Optional[BaseException] = None

    def produce(self, count: int) -> int:
        """Write ``count`` events as fast as the broker takes them (no pacing); return how many were sent."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap_servers, "linger.ms": 5, "enable.idempotence": True})
        events = click_events(self.start_ms)
        for _ in range(count):
            event = next(events)
            producer.produce(self.topic, event.to_json(), key=event.page.encode())
            producer.poll(0)
        if producer.flush(30) != 0:
            raise RuntimeError(f"could not deliver every click event to topic {self.topic!r}")
        self.sent += count
        return count

    def _run(self, limit: Optional[int]) -> None:
        from confluent_kafka import Producer

        try:
            producer = Producer({"bootstrap.servers": self.bootstrap_servers, "linger.ms": 5, "enable.idempotence": True})
            events = click_events(self.start_ms)
            began = time.monotonic()
            while not self._stop.is_set() and (limit is None or self.sent < limit):
                # Throttle like Flink's generator: event i goes out at began + i / rate.
                due = began + self.sent / self.rate
                ahead = due - time.monotonic()
                if ahead > 0:
                    self._stop.wait(ahead)
                    continue
                event = next(events)
                producer.produce(self.topic, event.to_json(), key=event.page.encode())
                self.sent += 1
                producer.poll(0)
            producer.flush(30)
        except BaseException as exc:  # surfaced to the caller through .error
            self.error = exc

    def start(self, limit: Optional[int] = None) -> "ClickEventGenerator":
        self._thread = threading.Thread(target=self._run, args=(limit,), name="click-generator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)


def main(argv: Optional[list[str]] = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Write the playground's click events to Kafka.")
    parser.add_argument("--bootstrap-servers", default="127.0.0.1:9092")
    parser.add_argument("--topic", default="input")
    parser.add_argument("--rate", type=float, default=1000.0, help="events per second (default 1000)")
    parser.add_argument("--count", type=int, default=None, help="stop after this many events")
    args = parser.parse_args(argv)
    generator = ClickEventGenerator(args.bootstrap_servers, args.topic, args.rate).start(args.count)
    try:
        while generator._thread is not None and generator._thread.is_alive():
            generator._thread.join(1.0)
    except KeyboardInterrupt:
        generator.stop()
    print(f"sent {generator.sent} click events to {args.topic}")
    return 1 if generator.error else 0

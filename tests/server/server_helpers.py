"""Running the ``kindling`` command line from the server tests."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[2]


def kindling(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the ``kindling`` command line; fail with its output when it fails."""
    result = subprocess.run([sys.executable, "-m", "kindling.cli", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert result.returncode == 0, f"kindling {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


@contextlib.contextmanager
def dashboard_page(url: str) -> Iterator[Any]:
    """A headless Chromium page (Debian's chromium, driven by Playwright) opened at ``url``."""
    from playwright.sync_api import sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=args)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(url)
            yield page
        finally:
            browser.close()


def produce_clicks(bootstrap: str, topic: str, start_ms: int, begin: int, end: int) -> None:
    """Click events number ``begin`` to ``end`` of the playground generator's sequence starting at ``start_ms``."""
    import itertools

    from confluent_kafka import Producer

    from kindling.playground.click_generator import click_events

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    for event in itertools.islice(click_events(start_ms), begin, end):
        producer.produce(topic, event.to_json(), key=event.page.encode())
        producer.poll(0)
    assert producer.flush(30) == 0, f"could not deliver click events to {topic}"

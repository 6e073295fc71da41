"""Async I/O exactly once across a driver SIGKILL: a replayed micro-batch asks the server again (at least once toward
it), and the exactly-once sink still holds every input record once, with its answer."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "connectors" / "kafka"))
from test_kafka_exactly_once import InputProducer, TopicReader  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
JOB = Path(__file__).with_name("async_enrich_job.py")


class AnswerServer(threading.Thread):
    """An asyncio HTTP/1.1 server on a free loopback port: ``GET /<n>`` answers ``n * 3`` after 5 ms; counts calls per n."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.calls: Counter = Counter()
        self.port = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        number = int(request.split(b" ", 2)[1].lstrip(b"/"))
        self.calls[number] += 1
        await asyncio.sleep(0.005)
        body = str(number * 3).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    def run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._answer, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    def start_serving(self) -> "AnswerServer":
        self.start()
        assert self._ready.wait(10)
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)


def _start(kafka, source: str, sink: str, checkpoints: Path, port: int, log: Path) -> subprocess.Popen:
    command = [sys.executable, str(JOB), kafka.bootstrap_servers, source, sink, str(checkpoints), str(port)]
    # Its own process group: SIGKILL takes the whole driver (Python, its JVM, its Python workers) down at once.
    return subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_async_io_writes_every_record_exactly_once_across_a_driver_kill(kafka, tmp_path):
    suffix = uuid.uuid4().hex[:8]
    source, sink = f"enrich-in-{suffix}", f"enrich-out-{suffix}"
    kafka.create_topic(source, partitions=4)
    kafka.create_topic(sink, partitions=1)
    server = AnswerServer().start_serving()
    producer = InputProducer(kafka.bootstrap_servers, source, 20_000, 300)
    producer.start()
    reader = TopicReader(kafka.bootstrap_servers, sink)
    log, checkpoints = tmp_path / "job.log", tmp_path / "checkpoints"
    process = _start(kafka, source, sink, checkpoints, server.port, log)

    def alive() -> None:
        assert process.poll() is None, f"the job ended (exit {process.returncode}):\n{log.read_text()[-3000:]}"

    try:
        reader.wait_for(1, timeout=300, alive=alive)  # it has committed a micro-batch: now kill it mid-stream
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        process = _start(kafka, source, sink, checkpoints, server.port, log)
        reader.wait_for(len(reader.values) + 1, timeout=300, alive=alive)  # the restarted driver commits too
        producer.stop()
        assert producer.error is None and 0 < producer.sent
        reader.wait_for(producer.sent, timeout=300, alive=alive)
        reader.poll(2.0)  # anything beyond what was sent would be a duplicate: give it a chance to show up
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        producer.stop()
        reader.close()
        server.stop()
    records = [json.loads(value) for value in reader.values]
    counts = Counter(r["id"] for r in records)
    assert not {i: c for i, c in counts.items() if c > 1} and set(counts) == set(range(producer.sent)), log.read_text()[-3000:]
    assert all(r["payload"] == str(r["id"] * 3) for r in records)
    assert set(range(producer.sent)) <= set(server.calls)  # every record was asked for, some of them twice after the kill

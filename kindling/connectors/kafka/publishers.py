"""Publishers 1..n-1 of an exactly-once Kafka sink with ``sink.parallelism`` = n: one child process each.

The driver's commit runs in one Python process; producing a micro-batch is a Python loop per record,
so parallel publishing needs processes. Each child is started once (``python -m
kindling.connectors.kafka.publishers``), keeps its transactional producer across batches, and serves
one request at a time over its pipes: ``(config, shard, messages, batch_id, publishers)`` in, ``("ok",
published)``, ``("fenced", text)`` or ``("error", text)`` out, pickled (the messages travel compressed, see
``KafkaCommitMessage``). A child exits when its parent closes the pipe or dies.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
from typing import Any, Optional, Sequence

from kindling.connectors.kafka.options import SinkConfig
from kindling.connectors.kafka.transactions import ProducerFencedError, is_fenced, publish_shard


class _Child:
    """One publisher process and its pipes."""

    def __init__(self, shard: int) -> None:
        self.shard = shard
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self.process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=env)

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, request: Any) -> None:
        pickle.dump(request, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.process.stdin.flush()

    def receive(self) -> tuple[str, Any]:
        try:
            return pickle.load(self.process.stdout)
        except EOFError:
            self.process.wait(timeout=10)
            return "error", f"the publisher process exited unexpectedly (exit code {self.process.returncode})"

    def close(self) -> None:
        try:
            self.process.stdin.close()
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()


class Pending:
    """The shares sent to children for one batch; ``wait`` collects their answers once."""

    def __init__(self, config: SinkConfig, children: Sequence[_Child]) -> None:
        self.config = config
        self.children = list(children)
        self.errors: list[str] = []
        self.fenced = True  # every error so far says that the child's producer was fenced

    def wait(self, raise_errors: bool = True) -> None:
        while self.children:
            child = self.children.pop(0)
            status, detail = child.receive()
            if status != "ok":
                self.errors.append(f"publisher {child.shard}: {detail}")
                self.fenced = self.fenced and status == "fenced"
        if raise_errors and self.errors:
            error = ProducerFencedError if self.fenced else RuntimeError
            raise error(f"kafka sink: publishing to topic {self.config.topic!r} failed: " + "; ".join(self.errors))


class PublisherPool:
    """Child publishers by shard, started on first use and restarted if one died."""

    def __init__(self) -> None:
        self._children: dict[int, _Child] = {}
        self._lock = threading.Lock()

    def submit(self, config: SinkConfig, shares: dict[int, list], batch_id: int, publishers: int) -> Pending:
        with self._lock:
            sent = []
            for shard, messages in sorted(shares.items()):
                child = self._children.get(shard)
                if child is None or not child.alive():
                    child = self._children[shard] = _Child(shard)
                child.send((config, shard, messages, batch_id, publishers))
                sent.append(child)
            return Pending(config, sent)

    def close(self) -> None:
        with self._lock:
            for child in self._children.values():
                child.close()
            self._children.clear()


_pool: Optional[PublisherPool] = None


def pool() -> PublisherPool:
    """The process's publisher pool (closed at exit)."""
    global _pool
    if _pool is None:
        _pool = PublisherPool()
        atexit.register(_pool.close)
    return _pool


def _serve() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything a library prints goes to stderr, not into the reply pipe
    requests = sys.stdin.buffer
    while True:
        try:
            config, shard, messages, batch_id, publishers = pickle.load(requests)
        except EOFError:
            return
        try:
            reply = ("ok", publish_shard(config, shard, messages, batch_id, publishers))
        except BaseException as exc:  # reported to the driver, which fails the batch (or retries it if fenced)
            reply = ("fenced" if is_fenced(exc) else "error", f"{type(exc).__name__}: {exc}")
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


if __name__ == "__main__":
    _serve()

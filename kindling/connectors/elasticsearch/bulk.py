"""The bulk processor of one sink task: Flink's ``BulkProcessor`` triggers, backoff and failure handler.

Actions (NDJSON texts from :mod:`.actions`) are buffered and sent as one ``_bulk`` request when the buffer
reaches ``sink.bulk-flush.max-actions`` actions or ``sink.bulk-flush.max-size`` bytes (checked after
adding, as Flink does), every ``sink.bulk-flush.interval`` by a background timer, and at ``close()``.
The buffer holds Arrow string arrays; a request body is their value buffers, unchanged.

Items rejected with HTTP 429 (a full queue: ``es_rejected_execution_exception``), or a whole request
answered 429, are retried after the backoff delays (``sink.bulk-flush.backoff.*``); then, and for every
other failed item (a mapping error, ...), ``failure-handler`` decides: ``fail`` raises, ``ignore`` drops
the item, ``retry-rejected`` re-adds rejected items until they succeed and fails on the rest.
A request that gets no answer (connection error, timeout) always fails the task: Spark then retries or
fails the micro-batch, which never commits, so nothing is lost.

``sink.delivery-guarantee`` (and ``sink.flush-on-checkpoint``) never change what a failed item does: in Flink
they decide only whether a checkpoint waits for pending requests. A kindling task always flushes before its
``write()`` returns (it has no life beyond its partition), so ``NONE`` behaves as ``AT_LEAST_ONCE`` here.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kindling.connectors.elasticsearch.client import status_of
from kindling.connectors.elasticsearch.options import SinkConfig

_REJECTED_TYPES = ("es_rejected_execution_exception", "rejected_execution_exception")
_RETRY_REJECTED_DELAY_S = 0.05


class BulkFailure(RuntimeError):
    """Items failed and the failure handler is 'fail' (or the server did not answer)."""


@dataclass
class BulkStats:
    requests: int = 0
    actions: int = 0
    retried: int = 0
    ignored: int = 0
    first_ignored: Optional[str] = None
    errors: list[str] = field(default_factory=list)


def _body(items: pa.Array) -> bytes:
    """The concatenated NDJSON of a string array: its value buffer between its first and last offsets."""
    if isinstance(items, pa.ChunkedArray):
        items = items.combine_chunks()
    if items.null_count:
        items = pc.drop_null(items)
    if not len(items):
        return b""
    offsets = np.frombuffer(items.buffers()[1], dtype=np.int32)
    start, end = int(offsets[items.offset]), int(offsets[items.offset + len(items)])
    return items.buffers()[2][start:end].to_pybytes()


class BulkProcessor:
    """Buffers actions and sends them in bulk requests; thread-safe against its own interval timer."""

    def __init__(self, config: SinkConfig, client: Any) -> None:
        self.config = config
        self.client = client
        self.stats = BulkStats()
        self._pending: list[pa.Array] = []
        self._count = 0
        self._bytes = 0
        self._lock = threading.RLock()
        self._error: Optional[BaseException] = None
        self._stop = threading.Event()
        self._timer: Optional[threading.Thread] = None
        if config.interval_s > 0:
            self._timer = threading.Thread(target=self._tick, name="kindling-es-bulk-interval", daemon=True)
            self._timer.start()

    # --- buffering ------------------------------------------------------------------------------
    def add(self, items: pa.Array) -> None:
        """Buffer actions, sending a bulk request whenever a size trigger fires."""
        self._raise_stored()
        max_actions, max_bytes = self.config.max_actions, self.config.max_bytes
        while len(items):
            with self._lock:
                room = len(items) if max_actions < 0 else max(1, max_actions - self._count)
                take = min(room, len(items))
                if max_bytes > 0:
                    sizes = pc.cumulative_sum(pc.binary_length(items.slice(0, take)).cast(pa.int64()))
                    reached = pc.greater_equal(sizes, max_bytes - self._bytes)
                    first = pc.index(reached, True).as_py()
                    if first >= 0:
                        take = first + 1
                part = items.slice(0, take)
                self._pending.append(part)
                self._count += take
                self._bytes += int(pc.sum(pc.binary_length(part)).as_py() or 0)
                if (max_actions > 0 and self._count >= max_actions) or (max_bytes > 0 and self._bytes >= max_bytes):
                    self._flush_locked()
            items = items.slice(take)

    def flush(self) -> None:
        """Send everything buffered now."""
        with self._lock:
            self._flush_locked()
        self._raise_stored()

    def close(self) -> None:
        """Flush what is left and stop the interval timer; raises the first failure of any flush."""
        try:
            self.flush()
        finally:
            self.stop()
        self._raise_stored()

    def stop(self) -> None:
        self._stop.set()
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.join(timeout=5)

    def _tick(self) -> None:
        while not self._stop.wait(self.config.interval_s):
            try:
                with self._lock:
                    if self._error is None and self._count:
                        self._flush_locked()
            except BaseException as exc:  # kept for the task's thread, which raises it
                self._error = self._error or exc

    def _raise_stored(self) -> None:
        if self._error is not None:
            raise self._error

    def _flush_locked(self) -> None:
        if not self._count:
            return
        items = pa.concat_arrays(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending, self._count, self._bytes = [], 0, 0
        self._send_with_retries(items)

    # --- sending --------------------------------------------------------------------------------
    def _request(self, items: pa.Array) -> list[tuple[int, dict]]:
        """Send one bulk request; the (position, item result) of every failed item."""
        body = _body(items)
        self.stats.requests += 1
        try:
            if self.config.flavor.client == "opensearch":
                response = self.client.bulk(body=body)
            else:
                response = self.client.bulk(operations=body)
        except Exception as exc:
            status = status_of(exc)
            if status == 429:  # the whole request was rejected: every item is
                return [(i, {"status": 429, "error": {"type": "es_rejected_execution_exception",
                                                      "reason": "the bulk request was rejected (HTTP 429)"}})
                        for i in range(len(items))]
            hosts = ";".join(h.url for h in self.config.hosts)
            raise BulkFailure(f"{self.config.flavor.name} sink: a bulk request of {len(items)} action(s) to {hosts} failed: "
                              f"{type(exc).__name__}: {str(exc)[:500]}") from None
        result = getattr(response, "body", response)
        if not result.get("errors"):
            return []
        failed = []
        for position, entry in enumerate(result.get("items", [])):
            outcome = next(iter(entry.values()))
            if "error" in outcome:
                failed.append((position, outcome))
        return failed

    def _send_with_retries(self, items: pa.Array) -> None:
        delays = self.config.backoff_delays()
        handler = self.config.failure_handler
        attempt = 0
        total = len(items)
        while True:
            failed = self._request(items)
            rejected = [p for p, outcome in failed if _rejected(outcome)]
            others = [(p, outcome) for p, outcome in failed if not _rejected(outcome)]
            if others:
                self._handle(others, len(items), retryable=False)
            if not rejected:
                break
            if attempt < len(delays):
                delay = delays[attempt]
                attempt += 1
            elif handler == "retry-rejected":
                delay = delays[-1] if delays else _RETRY_REJECTED_DELAY_S
            else:
                self._handle([p for p in failed if p[0] in set(rejected)], len(items), retryable=True)
                break
            self.stats.retried += len(rejected)
            time.sleep(delay)  # the configured backoff before retrying rejected items
            items = items.take(pa.array(rejected, pa.int64()))
        self.stats.actions += total

    def _handle(self, failures: list[tuple[int, dict]], sent: int, retryable: bool) -> None:
        position, outcome = failures[0]
        error = outcome.get("error") or {}
        reason = error.get("reason") if isinstance(error, dict) else str(error)
        kind = error.get("type") if isinstance(error, dict) else "error"
        where = f"index '{outcome.get('_index')}'" + (f", id '{outcome['_id']}'" if outcome.get("_id") else "")
        text = f"[{outcome.get('status')}] {kind}: {reason} ({where})"
        if self.config.failure_handler == "ignore":
            self.stats.ignored += len(failures)
            self.stats.first_ignored = self.stats.first_ignored or text
            return
        hint = (" after the backoff retries ('sink.bulk-flush.backoff.*')" if retryable else "")
        raise BulkFailure(f"{self.config.flavor.name} sink: {len(failures)} of {sent} bulk item(s) failed{hint}; first: {text}. "
                          f"Option 'failure-handler' = '{self.config.failure_handler}' fails the job; 'ignore' drops "
                          "failed items")


def _rejected(outcome: dict) -> bool:
    error = outcome.get("error")
    kind = error.get("type") if isinstance(error, dict) else ""
    return outcome.get("status") == 429 or kind in _REJECTED_TYPES

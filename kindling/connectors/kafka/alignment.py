"""Per-partition event time, watermark alignment (FLIP-182/217) and idleness for the Kafka source.

Spark's watermark is one number per query: the largest event time seen minus the out-of-orderness.
A partition that runs ahead therefore pushes the watermark past the records of a slow partition,
which Spark then drops as late, and windows of the fast partition pile up in state. Flink tracks a
watermark per split and, with alignment, pauses a split whose watermark is more than ``max-drift``
ahead of the slowest split of its group.

kindling does the same at admission, on the driver, in ``latestOffset``:

* a partition's event-time *frontier* is the event time of its next unread record (or of its last
  record when it has no unread data), read by fetching that one record. The event time is the
  column named by the table's rowtime (``kindling.table.rowtime``, decoded from the value), or the
  record's Kafka timestamp when the rowtime is the ``timestamp`` metadata column or unknown;
* the group's minimum frontier is shared with the other sources of the same
  ``scan.watermark.alignment.group`` through a small file on the driver;
* every partition is admitted only up to the same event time ``L = min + max-drift``: its first
  record later than ``L`` ends its part of the batch. All partitions are cut at the same ``L``, so
  Spark's watermark after the batch (max admitted − out-of-orderness) stays below every record
  still unread, and no partition's records become late — Flink's guarantee (the watermark is
  the minimum over splits) on Spark's global watermark, whatever the drift. The drift bounds the
  event-time span of one micro-batch and so the open windows and state; a partition that is
  far behind advances by at most ``max-drift`` of event time per micro-batch;
* ``scan.watermark.idle-timeout``: a partition without new records for that long does not hold the
  group back. A partition that never held a record holds nothing back either (Flink would wait for
  it until the idle timeout).

Without alignment options, a source with a rowtime still keeps Flink's per-split watermark (its
default, not an option in Flink): every partition is admitted only up to ``L`` = the smallest event
time of the partitions' *last available* records. The partition that defines ``L`` is read to its end;
the others stop before their first record later than ``L``, so no record still unread is older than
Spark's watermark after the batch (at most ``L`` minus the out-of-orderness, which is Flink's minimum
over splits). Without this, a partition whose high offset was fetched a moment later than another's
runs seconds of event time ahead on a live topic, and Spark drops the other's records as late. A
partition that stopped receiving records holds the others back, as in Flink, until
``scan.watermark.idle-timeout``.

Finding the offset of a time is one ``offsets_for_times`` call with Kafka timestamps, and a binary
search over single-record fetches with a value column (which assumes event time rises within a
partition, up to the out-of-orderness, as alignment itself does).
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable, Iterator, Optional

from kindling.formats import epoch_millis

log = logging.getLogger("kindling.connectors.kafka")

TopicPartitionKey = tuple[str, int]
PROBE_TIMEOUT_S = 10.0
# How many records before a partition's end are read to find its last record (past transaction markers).
TAIL_RECORDS = 16
# Another source's frontier counts for this long after it was published.
PEER_TTL_S = 60.0


class EventTimeProbe:
    """Reads the event time of single records of a partition on the driver."""

    def __init__(self, consumer_factory: Callable[[], object], metadata_consumer: Callable[[], object],
                 decode_time: Optional[Callable[[bytes], Optional[int]]], timestamp_offset_ms: int = 0) -> None:
        self._make_consumer = consumer_factory
        self._metadata_consumer = metadata_consumer
        self._decode_time = decode_time  # None: use the record's Kafka timestamp, plus timestamp_offset_ms
        self._timestamp_offset_ms = timestamp_offset_ms
        self._consumer = None
        self._cache: dict[tuple[TopicPartitionKey, int], Optional[int]] = {}
        self._last: dict[TopicPartitionKey, tuple[int, Optional[int]]] = {}

    def close(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.close()

    def _consumer_for(self, tp: TopicPartitionKey, offset: int):
        from confluent_kafka import TopicPartition

        if self._consumer is None:
            self._consumer = self._make_consumer()
        self._consumer.assign([TopicPartition(tp[0], tp[1], offset)])
        return self._consumer

    def _records(self, tp: TopicPartitionKey, offset: int, end: Optional[int] = None) -> Iterator[object]:
        """Records from ``offset`` on, until ``end``, the partition's end (transaction markers and aborted
        records are skipped by the consumer) or the probe timeout."""
        from confluent_kafka import KafkaError

        consumer = self._consumer_for(tp, offset)
        deadline = time.monotonic() + PROBE_TIMEOUT_S
        try:
            while time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is None:
                    continue
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        return
                    continue
                if end is not None and message.offset() >= end:
                    return
                yield message
                if end is not None and message.offset() >= end - 1:
                    return
        finally:
            # An assigned partition is fetched in the background until unassigned: against a broker that
            # answers empty fetches at once (the local one) that is a busy loop for as long as the query runs.
            consumer.unassign()

    def time_at(self, tp: TopicPartitionKey, offset: int) -> Optional[int]:
        """Event time (epoch ms) of the first record at or after ``offset``, or None if there is none."""
        key = (tp, offset)
        if key in self._cache:
            return self._cache[key]
        result: Optional[int] = None
        for message in self._records(tp, offset):
            result = self._time_of(message)
            break
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[key] = result
        return result

    def last_time(self, tp: TopicPartitionKey, low: int, high: int) -> Optional[int]:
        """Event time of the last record before ``high`` (None when the last records are all markers)."""
        known = self._last.get(tp)
        if known is not None and known[0] == high:
            return known[1]
        last = None
        for message in self._records(tp, max(low, high - TAIL_RECORDS), high):
            last = message
        result = self._time_of(last) if last is not None else None
        self._last[tp] = (high, result)
        return result

    def _time_of(self, message) -> Optional[int]:
        if self._decode_time is None:
            kind, millis = message.timestamp()
            return int(millis) + self._timestamp_offset_ms if kind else None
        return self._decode_time(message.value())

    def first_offset_after(self, tp: TopicPartitionKey, limit_ms: int, low: int, high: int, near_end: bool = False) -> int:
        """The first offset in ``[low, high)`` whose record is later than ``limit_ms`` (``high`` if none).
        ``near_end``: the answer is expected close to ``high``; the search gallops back from there."""
        if low >= high:
            return high
        if self._decode_time is None:
            from confluent_kafka import TopicPartition

            found = self._metadata_consumer().offsets_for_times(
                [TopicPartition(tp[0], tp[1], limit_ms - self._timestamp_offset_ms + 1)], timeout=PROBE_TIMEOUT_S)
            offset = found[0].offset
            return high if offset is None or offset < 0 else max(low, min(high, int(offset)))
        lo, hi = low, high
        if near_end:
            step = 1
            while hi - step > lo:
                stamp = self.time_at(tp, hi - step)
                if stamp is not None and stamp <= limit_ms:
                    lo = hi - step + 1
                    break
                hi -= step
                step *= 2
        while lo < hi:
            mid = (lo + hi) // 2
            stamp = self.time_at(tp, mid)
            if stamp is None or stamp > limit_ms:
                hi = mid
            else:
                lo = mid + 1
        return lo


def value_time_decoder(decoder, field_index: int, unit_ms: int = 1, offset_ms: int = 0) -> Callable[[bytes], Optional[int]]:
    """Event time (epoch ms) of a record value from one decoded column (TIMESTAMP, a number of ``unit_ms``
    or text), plus ``offset_ms`` (see ``epoch_millis``)."""

    def decode(value: bytes) -> Optional[int]:
        decoded = decoder.decode([value])
        if decoded.errors or not decoded.arrays:
            return None
        column = decoded.arrays[field_index]
        return epoch_millis(column, unit_ms, offset_ms)[0].as_py() if len(column) else None

    return decode


class AlignmentGroup:
    """The minimum frontier of every source in an alignment group, shared through a file on the driver."""

    def __init__(self, group: str, source_id: str) -> None:
        scope = os.environ.get("KINDLING_SESSION_ID", "default")
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", group)
        self.path = Path(tempfile.gettempdir()) / "kindling-alignment" / scope / f"{safe}.json"
        self.source_id = source_id

    def publish(self, frontier_ms: Optional[int]) -> Optional[int]:
        """Record this source's frontier (None: all its partitions idle); return the group's minimum."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        now = time.time()
        entries = self._read()
        if frontier_ms is None:
            entries.pop(self.source_id, None)
        else:
            entries[self.source_id] = {"frontier": frontier_ms, "updated": now}
        live = {k: v for k, v in entries.items() if now - v.get("updated", 0) <= PEER_TTL_S}
        temporary = self.path.with_suffix(f".{uuid.uuid4().hex[:8]}.tmp")
        temporary.write_text(json.dumps(live))
        os.replace(temporary, self.path)
        frontiers = [v["frontier"] for v in live.values()]
        return min(frontiers) if frontiers else None

    def _read(self) -> dict:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}


class PartitionAligner:
    """Holds back partitions that run ahead; tracks idleness and per-partition event time.

    With a ``group`` (watermark alignment), every partition is cut at the group's slowest next-unread
    event time plus ``max_drift_ms``. Without one (Flink's default per-split watermark), every partition
    is cut at the smallest event time of the partitions' last available records.
    """

    def __init__(self, probe: EventTimeProbe, group: Optional[AlignmentGroup], max_drift_ms: int,
                 idle_timeout_s: Optional[float], update_interval_s: float) -> None:
        self.probe = probe
        self.group = group
        self.max_drift_ms = max_drift_ms
        self.idle_timeout_s = idle_timeout_s
        self.update_interval_s = update_interval_s
        self._seen_high: dict[TopicPartitionKey, int] = {}
        self._last_activity: dict[TopicPartitionKey, float] = {}
        self._limit_ms: Optional[int] = None
        self._limit_at: Optional[float] = None
        self.frontiers: dict[TopicPartitionKey, Optional[int]] = {}
        self.idle: set[TopicPartitionKey] = set()

    @classmethod
    def split_watermarks(cls, probe: EventTimeProbe, idle_timeout_s: Optional[float]) -> "PartitionAligner":
        """Flink's per-split watermark, without alignment: no partition runs ahead of the others' ends."""
        return cls(probe, None, 0, idle_timeout_s, update_interval_s=0.0)

    def _observe(self, highs: dict[TopicPartitionKey, int], now: float) -> None:
        for tp, high in highs.items():
            if high > self._seen_high.get(tp, -1):
                self._seen_high[tp] = high
                self._last_activity[tp] = now

    def _frontiers(self, current: dict[TopicPartitionKey, int], highs: dict[TopicPartitionKey, int], lows: dict[TopicPartitionKey, int],
                   finished: frozenset, now: float) -> dict[TopicPartitionKey, int]:
        frontiers: dict[TopicPartitionKey, int] = {}
        self.idle = set()
        for tp, offset in current.items():
            if tp in finished:  # a bounded read that reached its end, like Flink's finished split
                continue
            high = highs.get(tp, offset)
            if high <= lows.get(tp, 0) or high == 0:
                self.idle.add(tp)  # never held a record
                continue
            if offset >= high:
                quiet = now - self._last_activity.get(tp, now)
                if self.idle_timeout_s is not None and quiet >= self.idle_timeout_s:
                    self.idle.add(tp)
                    continue
            if self.group is None:
                stamp = self.probe.last_time(tp, lows.get(tp, 0), high)
            elif offset < high:
                stamp = self.probe.time_at(tp, offset)
            else:
                stamp = self.probe.time_at(tp, offset - 1)
            if stamp is not None:
                frontiers[tp] = stamp
        self.frontiers = dict(frontiers)
        return frontiers

    def limit(self, current: dict[TopicPartitionKey, int], highs: dict[TopicPartitionKey, int],
              lows: dict[TopicPartitionKey, int], finished: frozenset = frozenset()) -> dict[TopicPartitionKey, int]:
        """The end offsets to admit: each partition up to ``highs``, cut where it would run ahead."""
        now = time.monotonic()
        self._observe(highs, now)
        ends = {tp: max(offset, highs.get(tp, offset)) for tp, offset in current.items()}
        if self.group is None and len(current) - len(finished & current.keys()) < 2:
            return ends  # one partition: nothing to run ahead of
        if self._limit_at is None or now - self._limit_at >= self.update_interval_s:
            frontiers = self._frontiers(current, highs, lows, finished, now)
            own = min(frontiers.values()) if frontiers else None
            if self.group is None:
                self._limit_ms = own
            else:
                group_min = self.group.publish(own)
                self._limit_ms = None if group_min is None else group_min + self.max_drift_ms
            self._limit_at = now
        if self._limit_ms is None:
            return ends
        limit_ms, holding = self._limit_ms, self.group is None
        cut = {}
        for tp, end in ends.items():
            last = self.frontiers.get(tp) if holding else None
            if end <= current[tp] or (last is not None and last <= limit_ms):
                cut[tp] = end  # nothing to read, or all of it at or before the limit
            else:
                cut[tp] = self.probe.first_offset_after(tp, limit_ms, current[tp], end, near_end=holding)
        return cut

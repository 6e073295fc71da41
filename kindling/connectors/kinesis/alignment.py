"""Watermark synchronisation across shards (``scan.watermark.lookahead.millis``) and idle shards.

Flink's Kinesis consumer keeps a watermark per shard; with a watermark tracker, a shard whose
watermark runs more than the lookahead ahead of the global one is held back in its emit queue.
Spark keeps one watermark per query, the largest event time seen minus the out-of-orderness, so a
shard that runs ahead would push it past the records of a slow shard, which Spark then drops as late.

kindling holds shards back at admission, on the driver, where the source already holds each shard's
fetched records: a shard's *frontier* is the event time of its next unread record, or of the last
record it gave when it has none. Every shard is admitted only up to ``L = min(frontiers) + lookahead``
(its first record later than ``L`` ends its part of the micro-batch). All shards are cut at the same
``L``, so Spark's watermark after the batch stays below every record still unread: none becomes late.
``L`` is recomputed every ``scan.watermark.sync.interval``.

Without ``scan.watermark.lookahead.millis``, a table with a rowtime still keeps Flink's per-shard
watermark (its default): ``L`` is the smallest event time of the shards' *last* fetched records (or
of the last record given, for a shard with none waiting), recomputed at every micro-batch. The shard
that defines ``L`` gives everything it holds, the others stop before their first record later than
``L``, so no shard runs past another's end and makes its records late.

A shard that gave no record for ``scan.shard.idle.interval`` ms holds nothing back (the default -1:
it holds back until it has records), nor does a closed shard or one that never held a record.

Event time is the table's rowtime column when it is a column of the record (decoded on the driver),
else the record's approximate arrival time (Flink's default timestamp for Kinesis). A KPL-aggregated
record is admitted whole, at the latest event time of its user records
(:mod:`kindling.connectors.kinesis.aggregation` says why).
"""

from __future__ import annotations

import time
from typing import Callable, Optional, Sequence

from kindling.connectors.kinesis.aggregation import deaggregate
from kindling.formats import ValueDecoder, epoch_millis

# A record as the source buffers it: (sequence number, data, approximate arrival ms).
Record = tuple[str, bytes, int]


def event_time_reader(decoder: ValueDecoder, names: Sequence[str], rowtime: Optional[str], unit_ms: int = 1,
                      offset_ms: int = 0) -> Callable[[Sequence[Record]], list[Optional[int]]]:
    """How the driver reads the event time (epoch ms) of fetched records: the rowtime value column
    (converted by ``unit_ms`` and ``offset_ms``, see ``epoch_millis``), else the approximate arrival time."""
    if rowtime is None or rowtime not in names:
        return lambda records: [r[2] + offset_ms for r in records]
    index = list(names).index(rowtime)

    def read(records: Sequence[Record]) -> list[Optional[int]]:
        if not records:
            return []
        users = deaggregate([r[1] for r in records])
        decoded = decoder.decode(users.data)
        times = epoch_millis(decoded.arrays[index], unit_ms, offset_ms).to_pylist()
        if decoded.kept is not None:  # malformed records were skipped: they hold nothing back
            kept = iter(times)
            positions = set(decoded.kept)
            times = [next(kept) if i in positions else None for i in range(len(users.data))]
        if users.origin is None:
            return times
        # An aggregated record is admitted whole: it counts at its latest user record (see aggregation).
        latest: list[Optional[int]] = [None] * len(records)
        for record, time_ms in zip(users.origin, times):
            if time_ms is not None and (latest[record] is None or time_ms > latest[record]):
                latest[record] = time_ms
        return latest

    return read


class ShardAligner:
    """Cuts each shard's admitted records at the event time the slowest active shard allows."""

    def __init__(self, lookahead_ms: Optional[int], idle_interval_ms: int, sync_interval_ms: int) -> None:
        self.lookahead_ms = lookahead_ms  # None: per-shard watermarks without synchronisation (see above)
        self.idle_interval_ms = idle_interval_ms
        self.sync_interval_ms = sync_interval_ms
        self._last_record_at: dict[str, float] = {}  # monotonic time a shard last gave records
        self._last_time: dict[str, int] = {}  # event time of the last record a shard gave
        self._limit_ms: Optional[int] = None
        self._limit_at: Optional[float] = None
        self.idle: set[str] = set()

    def fetched(self, shard: str, count: int) -> None:
        """A fetch gave ``count`` records (0: the shard had nothing new)."""
        if count or shard not in self._last_record_at:
            self._last_record_at[shard] = time.monotonic()

    def admit(self, pending: dict[str, list[Optional[int]]], ended: set[str]) -> dict[str, int]:
        """How many of each shard's unread records (their event times, in shard order) to admit now."""
        now = time.monotonic()
        interval_ms = 0 if self.lookahead_ms is None else self.sync_interval_ms
        if self._limit_at is None or (now - self._limit_at) * 1000 >= interval_ms:
            self._limit_ms = self._limit(pending, ended, now)
            self._limit_at = now
        counts = {}
        for shard, times in pending.items():
            count = len(times)
            if self._limit_ms is not None:
                count = next((i for i, t in enumerate(times) if t is not None and t > self._limit_ms), count)
            counts[shard] = count
            known = [t for t in times[:count] if t is not None]
            if known:
                self._last_time[shard] = known[-1]
        return counts

    def _limit(self, pending: dict[str, list[Optional[int]]], ended: set[str], now: float) -> Optional[int]:
        frontiers = []
        self.idle = set()
        for shard, times in pending.items():
            # With a lookahead a shard's frontier is its next record's time; without, its last one's.
            ordered = times if self.lookahead_ms is not None else reversed(times)
            known = next((t for t in ordered if t is not None), None)
            if known is not None:
                frontiers.append(known)
                continue
            quiet_ms = (now - self._last_record_at.get(shard, now)) * 1000
            if shard in ended or shard not in self._last_time or (0 <= self.idle_interval_ms <= quiet_ms):
                self.idle.add(shard)
                continue
            frontiers.append(self._last_time[shard])
        return min(frontiers) + (self.lookahead_ms or 0) if frontiers else None

"""Reading Spark's query progress the way a Flink user thinks: records in/out, watermark, end of input."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping, Optional

from kindling.connectors.base import EOS_OFFSET_KEY

# A bounded source's end-of-input marker carries this event time; see connectors/base.py.
END_OF_TIME = datetime(9999, 12, 31, tzinfo=timezone.utc)
END_OF_TIME_THRESHOLD = datetime(9999, 1, 1, tzinfo=timezone.utc)


def _offset(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def source_reached_end(source_progress: Mapping[str, Any]) -> bool:
    """Whether a source's end offset in a progress report says its input has ended."""
    offset = _offset(source_progress.get("endOffset"))
    return isinstance(offset, dict) and bool(offset.get(EOS_OFFSET_KEY))


def parse_spark_time(text: Optional[str]) -> Optional[datetime]:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def watermark_of(progress: Mapping[str, Any]) -> Optional[datetime]:
    """The watermark a batch ran with, or None when the query has no event time."""
    event_time = progress.get("eventTime") or {}
    return parse_spark_time(event_time.get("watermark"))


def bounded_input_done(progress: Optional[Mapping[str, Any]], event_time: bool = True) -> bool:
    """True when every source ended and, if the query holds event-time state, the final watermark has fired it.

    Flink ends a bounded job with a watermark of +infinity that fires every window and timer;
    kindling's sources end with a marker row at the end of time, and the batch after it runs
    with that watermark. Queries without state need no such batch. Processing-time state is
    not flushed at the end of input, as in Flink, where pending processing-time timers do not fire.
    """
    if not progress:
        return False
    sources = progress.get("sources") or []
    if not sources or not all(source_reached_end(s) for s in sources):
        return False
    if not event_time:
        return True
    watermark = watermark_of(progress)
    has_state = bool(progress.get("stateOperators"))
    if watermark is None or not has_state:
        return True
    return watermark >= END_OF_TIME_THRESHOLD


def partition_lag(progress: Mapping[str, Any]) -> dict[str, int]:
    """Consumer lag per source partition (``"<topic>/<partition>"``): the partition's latest offset when
    the batch was planned minus the batch's end offset, for sources that report latest offsets (Kafka)."""
    lag: dict[str, int] = {}
    for source in progress.get("sources") or []:
        latest, end = _offset(source.get("latestOffset")), _offset(source.get("endOffset"))
        if not isinstance(latest, dict) or not isinstance(end, dict):
            continue
        ends = end.get("partitions") or {}
        for topic, partitions in (latest.get("partitions") or {}).items():
            for partition, high in partitions.items():
                done = (ends.get(topic) or {}).get(partition)
                if done is not None:
                    lag[f"{topic}/{partition}"] = max(0, int(high) - int(done))
    return lag


@dataclass
class QueryMetrics:
    """What one progress report says, in Flink's terms."""

    batch_id: int
    records_in: int
    records_in_per_second: float
    processed_per_second: float
    batch_duration_ms: int
    watermark: Optional[datetime]
    state_rows: int
    state_bytes: int
    partition_lag: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_progress(cls, progress: Mapping[str, Any]) -> "QueryMetrics":
        durations = progress.get("durationMs") or {}
        states = progress.get("stateOperators") or []
        watermark = watermark_of(progress)
        if watermark is not None and watermark.year <= 1970:
            watermark = None
        return cls(
            batch_id=int(progress.get("batchId", -1)),
            records_in=int(progress.get("numInputRows") or 0),
            records_in_per_second=float(progress.get("inputRowsPerSecond") or 0.0),
            processed_per_second=float(progress.get("processedRowsPerSecond") or 0.0),
            batch_duration_ms=int(durations.get("triggerExecution") or 0),
            watermark=watermark,
            state_rows=sum(int(s.get("numRowsTotal") or 0) for s in states),
            state_bytes=sum(int(s.get("memoryUsedBytes") or 0) for s in states),
            partition_lag=partition_lag(progress),
        )

    def watermark_text(self) -> str:
        if self.watermark is None:
            return "-"
        if self.watermark >= END_OF_TIME_THRESHOLD:
            return "+inf (end of input)"
        return self.watermark.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

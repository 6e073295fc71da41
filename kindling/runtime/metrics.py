"""Job metrics with Flink's names, read from Spark's query progress reports.

A progress report describes one micro-batch (kindling's checkpoint): rows read and written,
how long it took, the watermark it ran with, the state it holds and how far the sources trail.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional

from kindling.runtime.progress import END_OF_TIME_THRESHOLD, parse_spark_time, partition_lag, watermark_of

# Job-level metrics, as the REST API and Prometheus name them.
JOB_METRICS = (
    "numRecordsInPerSecond",
    "numRecordsOutPerSecond",
    "numRecordsIn",
    "numRecordsOut",
    "batchDuration",
    "currentInputWatermark",
    "watermarkDelay",
    "stateRows",
    "stateBytes",
    "pendingRecords",
    "numberOfCompletedCheckpoints",
    "lastCheckpointDuration",
    "lastCheckpointSize",
    "numRestarts",
    "uptime",
)


def source_lag(progress: Mapping[str, Any]) -> Optional[float]:
    """Records the sources have not read yet (latest offset minus end offset, summed over partitions),
    when they report a latest offset (Kafka does)."""
    lag = partition_lag(progress)
    return float(sum(lag.values())) if lag else None


def batch_point(progress: Mapping[str, Any]) -> dict[str, Any]:
    """One micro-batch in Flink's terms: the point a plot or a metric is made of."""
    durations = progress.get("durationMs") or {}
    states = progress.get("stateOperators") or []
    sink = progress.get("sink") or {}
    timestamp = parse_spark_time(progress.get("timestamp"))
    watermark = watermark_of(progress)
    watermark_ms = None
    if watermark is not None and 1970 < watermark.year and watermark < END_OF_TIME_THRESHOLD:
        watermark_ms = int(watermark.timestamp() * 1000)
    out_rows = sink.get("numOutputRows")
    return {
        "batchId": int(progress.get("batchId", -1)),
        "timestamp": int(timestamp.timestamp() * 1000) if timestamp else None,
        "numRecordsIn": int(progress.get("numInputRows") or 0),
        "numRecordsOut": int(out_rows) if out_rows is not None and int(out_rows) >= 0 else None,
        # Spark has no input rate for a query's first batch (no trigger before it): use its processing rate.
        "numRecordsInPerSecond": float(progress.get("inputRowsPerSecond") or progress.get("processedRowsPerSecond") or 0.0),
        "processedPerSecond": float(progress.get("processedRowsPerSecond") or 0.0),
        "batchDuration": int(durations.get("triggerExecution") or 0),
        "checkpointDuration": int(durations.get("walCommit") or 0) + int(durations.get("commitOffsets") or 0),
        "watermark": watermark_ms,
        "stateRows": sum(int(s.get("numRowsTotal") or 0) for s in states),
        "stateBytes": sum(int(s.get("memoryUsedBytes") or 0) for s in states),
        "stateOperators": [s.get("operatorName") for s in states],
        "pendingRecords": source_lag(progress),
    }


def with_output_rates(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add records out per second: rows written by a batch over the time since the batch before."""
    previous: Optional[dict[str, Any]] = None
    for point in points:
        rate = 0.0
        if point.get("numRecordsOut") is not None:
            if previous is not None and previous.get("timestamp") and point.get("timestamp") and point["timestamp"] > previous["timestamp"]:
                rate = point["numRecordsOut"] / ((point["timestamp"] - previous["timestamp"]) / 1000)
            elif point["batchDuration"] > 0:
                rate = point["numRecordsOut"] / (point["batchDuration"] / 1000)
        point["numRecordsOutPerSecond"] = rate
        previous = point
    return points


def current_watermark(points: list[Mapping[str, Any]]) -> Optional[int]:
    """A query's watermark: that of its latest point reporting one. A query restarted from its checkpoint runs
    with the restored watermark, but Spark leaves it out of the progress of triggers that find no new data."""
    return next((p["watermark"] for p in reversed(points) if p.get("watermark") is not None), None)


def query_points(recent_progress: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The points of a query's recent progress reports, oldest first."""
    return with_output_rates([batch_point(p) for p in recent_progress])


def job_metrics(
    points_by_query: Mapping[str, list[Mapping[str, Any]]],
    checkpoints_by_query: Mapping[str, int],
    restarts: int,
    start_time_ms: Optional[int],
    now_ms: Optional[int] = None,
) -> dict[str, Optional[float]]:
    """Job-level values of ``JOB_METRICS``: rates summed over the job's queries, the slowest watermark."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    last = {uid: points[-1] for uid, points in points_by_query.items() if points}
    watermarks = [w for w in (current_watermark(points) for points in points_by_query.values()) if w is not None]
    lags = [p["pendingRecords"] for p in last.values() if p.get("pendingRecords") is not None]
    watermark = min(watermarks) if watermarks else None
    return {
        "numRecordsInPerSecond": sum(p["numRecordsInPerSecond"] for p in last.values()),
        "numRecordsOutPerSecond": sum(p.get("numRecordsOutPerSecond") or 0.0 for p in last.values()),
        "numRecordsIn": float(sum(p["numRecordsIn"] for points in points_by_query.values() for p in points)),
        "numRecordsOut": float(sum(p.get("numRecordsOut") or 0 for points in points_by_query.values() for p in points)),
        "batchDuration": float(max((p["batchDuration"] for p in last.values()), default=0)),
        "currentInputWatermark": float(watermark) if watermark is not None else None,
        "watermarkDelay": float(now_ms - watermark) if watermark is not None else None,
        "stateRows": float(sum(p["stateRows"] for p in last.values())),
        "stateBytes": float(sum(p["stateBytes"] for p in last.values())),
        "pendingRecords": float(sum(lags)) if lags else None,
        "numberOfCompletedCheckpoints": float(sum(checkpoints_by_query.values())),
        "lastCheckpointDuration": float(max((p["checkpointDuration"] for p in last.values()), default=0)),
        "lastCheckpointSize": float(sum(p["stateBytes"] for p in last.values())),
        "numRestarts": float(restarts),
        "uptime": float(now_ms - start_time_ms) if start_time_ms else None,
    }


# --- user metrics: Flink's MetricGroup for user functions ----------------------------------------
# User functions run in Spark's Python workers. Each worker process keeps its metrics in memory
# and, under the job manager, writes them to <job dir>/user-metrics/<host>-<pid>.json at most
# once a second; the driver adds them up (counters and meters summed, the newest gauge value,
# histograms merged) and publishes them with the job's other metrics.
USER_METRICS_DIR = "user-metrics"
_FLUSH_INTERVAL_S = 1.0
_RESERVOIR = 1024


class Counter:
    """Flink's Counter: a count that goes up (and down)."""

    def __init__(self, registry: "_Registry") -> None:
        self._registry, self._count = registry, 0

    def inc(self, n: int = 1) -> None:
        self._count += n
        self._registry.changed()

    def dec(self, n: int = 1) -> None:
        self.inc(-n)

    def get_count(self) -> int:
        return self._count

    def snapshot(self) -> dict[str, Any]:
        return {"type": "counter", "count": self._count}


class Meter:
    """Flink's Meter: events and their rate per second over ``time_span_in_seconds``."""

    def __init__(self, registry: "_Registry", time_span_in_seconds: int = 60) -> None:
        self._registry, self._count, self._span = registry, 0, time_span_in_seconds
        self._marks: list[tuple[float, int]] = [(time.monotonic(), 0)]

    def mark_event(self, n: int = 1) -> None:
        self._count += n
        self._registry.changed()

    def get_count(self) -> int:
        return self._count

    def get_rate(self) -> float:
        now = time.monotonic()
        self._marks = [m for m in self._marks if m[0] >= now - self._span] or [self._marks[-1]]
        self._marks.append((now, self._count))
        first_time, first_count = self._marks[0]
        return (self._count - first_count) / (now - first_time) if now > first_time else 0.0

    def snapshot(self) -> dict[str, Any]:
        return {"type": "meter", "count": self._count, "rate": self.get_rate()}


class Histogram:
    """Flink's Histogram over the last values seen (a sliding reservoir)."""

    def __init__(self, registry: "_Registry") -> None:
        self._registry, self._count, self._values = registry, 0, []  # type: ignore[var-annotated]

    def update(self, value: float) -> None:
        self._count += 1
        self._values.append(float(value))
        del self._values[:-_RESERVOIR]
        self._registry.changed()

    def get_count(self) -> int:
        return self._count

    def snapshot(self) -> dict[str, Any]:
        return {"type": "histogram", "count": self._count, "values": list(self._values)}


class MetricGroup:
    """Flink's MetricGroup: named counters, gauges, meters and histograms under a scope."""

    def __init__(self, scope: tuple[str, ...], registry: "_Registry") -> None:
        self._scope, self._registry = scope, registry

    def add_group(self, name: str, extra: Optional[str] = None) -> "MetricGroup":
        return MetricGroup(self._scope + ((name, extra) if extra is not None else (name,)), self._registry)

    def get_metric_identifier(self, name: str) -> str:
        return ".".join(self._scope + (name,))

    def counter(self, name: str) -> Counter:
        return self._registry.get(self.get_metric_identifier(name), lambda: Counter(self._registry))

    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        return self._registry.get(self.get_metric_identifier(name), lambda: Meter(self._registry, time_span_in_seconds))

    def histogram(self, name: str) -> Histogram:
        return self._registry.get(self.get_metric_identifier(name), lambda: Histogram(self._registry))

    distribution = histogram  # PyFlink's name

    def gauge(self, name: str, obj: Callable[[], float]) -> Callable[[], float]:
        self._registry.gauges[self.get_metric_identifier(name)] = obj
        self._registry.changed()
        return obj


class _Registry:
    """The user metrics of this process, written for the driver when a job manager runs the job."""

    def __init__(self) -> None:
        self.metrics: dict[str, Any] = {}
        self.gauges: dict[str, Callable[[], float]] = {}
        self._flushed = 0.0
        self._atexit = False

    def get(self, identifier: str, create: Callable[[], Any]) -> Any:
        if identifier not in self.metrics:
            self.metrics[identifier] = create()
        return self.metrics[identifier]

    def changed(self) -> None:
        if time.monotonic() - self._flushed >= _FLUSH_INTERVAL_S:
            self.flush()

    def flush(self) -> None:
        import os
        import socket

        self._flushed = time.monotonic()
        directory = os.environ.get("KINDLING_JOB_DIR")
        if not directory:
            return
        if not self._atexit:
            import atexit

            atexit.register(self.flush)
            self._atexit = True
        values = {identifier: metric.snapshot() for identifier, metric in self.metrics.items()}
        for identifier, gauge in self.gauges.items():
            try:
                values[identifier] = {"type": "gauge", "value": float(gauge()), "time": time.time()}
            except Exception:  # a failing user gauge is not reported, like Flink's reporters
                continue
        from kindling.runtime.json_files import write_json

        write_json(Path(directory) / USER_METRICS_DIR / f"{socket.gethostname()}-{os.getpid()}.json", values)


_REGISTRY = _Registry()


def metric_group(operator_name: str) -> MetricGroup:
    """The metric group of a user function in ``operator_name`` (what ``get_metric_group()`` returns)."""
    return MetricGroup((operator_name,), _REGISTRY)


def flush_user_metrics() -> None:
    """Write this process's user metrics now (workers also write at most once a second and at exit)."""
    _REGISTRY.flush()


def read_user_metrics(directory: Path) -> dict[str, float]:
    """Every worker's user metrics added up, as ``identifier -> value`` (histograms as ``identifier.p50`` ...)."""
    counts: dict[str, float] = {}
    rates: dict[str, float] = {}
    gauges: dict[str, tuple[float, float]] = {}
    histograms: dict[str, list[float]] = {}
    histogram_counts: dict[str, int] = {}
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            values = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for identifier, value in values.items():
            kind = value.get("type")
            if kind in ("counter", "meter"):
                counts[identifier] = counts.get(identifier, 0) + value["count"]
                if kind == "meter":
                    rates[identifier] = rates.get(identifier, 0.0) + value["rate"]
            elif kind == "gauge":
                if identifier not in gauges or value["time"] > gauges[identifier][0]:
                    gauges[identifier] = (value["time"], value["value"])
            elif kind == "histogram":
                histograms.setdefault(identifier, []).extend(value["values"])
                histogram_counts[identifier] = histogram_counts.get(identifier, 0) + value["count"]
    result: dict[str, float] = {}
    for identifier, count in counts.items():
        if identifier in rates:
            result[f"{identifier}.count"] = float(count)
            result[f"{identifier}.rate"] = rates[identifier]
        else:
            result[identifier] = float(count)
    for identifier, (_, value) in gauges.items():
        result[identifier] = value
    for identifier, values in histograms.items():
        ordered = sorted(values)
        result[f"{identifier}.count"] = float(histogram_counts[identifier])
        if ordered:
            result[f"{identifier}.min"] = ordered[0]
            result[f"{identifier}.max"] = ordered[-1]
            result[f"{identifier}.mean"] = sum(ordered) / len(ordered)
            for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
                result[f"{identifier}.{name}"] = ordered[min(len(ordered) - 1, int(q * len(ordered)))]
    return result

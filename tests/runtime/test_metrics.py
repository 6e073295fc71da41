"""Job metrics from Spark's progress reports, and user metrics added up across Python workers."""

from __future__ import annotations

import json
import shutil

from kindling.runtime import metrics


def _progress(batch_id: int, timestamp: str, rows: int, out: int, end: dict, latest: dict) -> dict:
    return {
        "batchId": batch_id,
        "timestamp": timestamp,
        "numInputRows": rows,
        "inputRowsPerSecond": rows / 2.0,
        "processedRowsPerSecond": rows / 0.5,
        "durationMs": {"triggerExecution": 500, "walCommit": 20, "commitOffsets": 10},
        "eventTime": {"watermark": "2026-01-01T00:00:10.000Z"},
        "stateOperators": [{"operatorName": "stateStoreSave", "numRowsTotal": 6, "memoryUsedBytes": 4096}],
        "sources": [{"endOffset": json.dumps(end), "latestOffset": json.dumps(latest)}],
        "sink": {"numOutputRows": out},
    }


def test_progress_reports_become_flink_metrics():
    first = _progress(0, "2026-01-01T00:00:20.000Z", 100, 6, {"partitions": {"t": {"0": 50, "1": 50}}}, {"partitions": {"t": {"0": 50, "1": 50}}})
    second = _progress(1, "2026-01-01T00:00:22.000Z", 300, 12, {"partitions": {"t": {"0": 200, "1": 150}}},
                       {"partitions": {"t": {"0": 260, "1": 170}}})
    first["inputRowsPerSecond"] = 0.0  # Spark reports none for a query's first batch
    points = metrics.query_points([first, second])
    assert points[0]["numRecordsInPerSecond"] == 200.0  # its processing rate instead
    assert points[1]["pendingRecords"] == 80  # 60 + 20 records the sources had not read
    assert points[1]["numRecordsOutPerSecond"] == 6.0  # 12 rows over the 2 s since the batch before
    assert points[1]["checkpointDuration"] == 30
    values = metrics.job_metrics({"q": points}, {"q": 2}, restarts=1, start_time_ms=None, now_ms=points[1]["timestamp"])
    assert values["numRecordsIn"] == 400 and values["numRecordsInPerSecond"] == 150.0
    assert values["watermarkDelay"] == 12_000 and values["stateRows"] == 6 and values["stateBytes"] == 4096
    assert values["numberOfCompletedCheckpoints"] == 2 and values["numRestarts"] == 1

    # Restarted from its checkpoint, a query with no new data reports triggers without a watermark (Spark leaves
    # it out, although the query runs with the restored one): the job keeps the watermark it had.
    idle = dict(second, batchId=2, numInputRows=0, eventTime={})
    values = metrics.job_metrics({"q": metrics.query_points([first, second, idle])}, {"q": 2}, restarts=1, start_time_ms=None)
    assert values["currentInputWatermark"] == points[1]["watermark"]


def test_user_metrics_of_several_workers_add_up(tmp_path, monkeypatch):
    monkeypatch.setenv("KINDLING_JOB_DIR", str(tmp_path))
    registry = metrics._Registry()
    group = metrics.MetricGroup(("Parse",), registry).add_group("records")
    group.counter("seen").inc(5)
    group.meter("events").mark_event(3)
    for value in (1, 2, 3, 4):
        group.histogram("size").update(value)
    group.gauge("lag", lambda: 7)
    registry.flush()
    (written,) = (tmp_path / metrics.USER_METRICS_DIR).glob("*.json")
    shutil.copy(written, written.with_name("other-worker.json"))  # a second worker with the same values

    values = metrics.read_user_metrics(tmp_path / metrics.USER_METRICS_DIR)
    assert values["Parse.records.seen"] == 10
    assert values["Parse.records.events.count"] == 6
    assert values["Parse.records.size.count"] == 8 and values["Parse.records.size.max"] == 4 and values["Parse.records.size.p50"] == 3
    assert values["Parse.records.lag"] == 7


def test_a_user_function_reaches_its_metric_group_through_the_runtime_context(tmp_path, monkeypatch):
    from kindling.datastream.context import RuntimeContext

    monkeypatch.setenv("KINDLING_JOB_DIR", str(tmp_path))
    context = RuntimeContext("Alerts", None, 0, 1)
    context.get_metric_group().counter("fired").inc(2)
    metrics.flush_user_metrics()
    values = metrics.read_user_metrics(tmp_path / metrics.USER_METRICS_DIR)
    assert values["Alerts.fired"] == 2

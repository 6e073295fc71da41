"""Savepoints in one process: stop with a savepoint, resume elsewhere, refuse state that no longer maps, dispose."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest

from kindling.env import StreamEnvironment
from kindling.playground import click_count
from kindling.playground.click_generator import ClickEventGenerator
from kindling.runtime import savepoints

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "playground"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from click_helpers import OutputReader, events_for, expected_windows, normalise_start  # noqa: E402
from server_helpers import produce_clicks  # noqa: E402

pytestmark = pytest.mark.integration

WINDOWS = 4


def _env(spark, checkpoints: Path, **extra) -> StreamEnvironment:
    return StreamEnvironment(
        {"execution.checkpointing.interval": "300 ms", "state.checkpoints.dir": str(checkpoints), **extra}, spark=spark
    )


def test_stop_with_savepoint_and_resume_elsewhere_continues_counts(spark, kafka, tmp_path):
    suffix = uuid.uuid4().hex[:8]
    source, sink = f"sp-in-{suffix}", f"sp-out-{suffix}"
    kafka.create_topic(source, partitions=4)
    kafka.create_topic(sink, partitions=1)
    generator = ClickEventGenerator(kafka.bootstrap_servers, source)
    generator.produce(events_for(2))  # two windows now, the rest after the stop
    env = _env(spark, tmp_path / "first")
    click_count.build(env, kafka.bootstrap_servers, source, sink)
    frames = {b.get_uid(): b.stream._df for b in env._sinks}
    job = env.execute_async("savepoint test")
    root = env.checkpoint_root("savepoint test")
    reader = OutputReader(kafka.bootstrap_servers, sink)
    try:
        reader.wait_for(2 * 6, timeout=180)
        location = savepoints.trigger_savepoint(job, root, {u: _sink(df) for u, df in frames.items()}, str(tmp_path / "savepoints"), stop=True)
    finally:
        if job.get_job_status() not in ("FINISHED", "CANCELED", "FAILED"):
            job.cancel()
    assert job.get_job_status() == "FINISHED"  # stop-with-savepoint ends FINISHED, as in Flink
    metadata = json.loads((Path(location) / "_metadata").read_text())
    operator = metadata["operators"]["click-event-statistics-sink"]
    assert operator["lastCommittedBatch"] >= 0 and operator["lastOffsetBatch"] - operator["lastCommittedBatch"] in (0, 1)
    assert any("Aggregate" in op for op in operator["statefulOperators"]), operator
    assert metadata["configuration"]["state.checkpoints.dir"] == str(tmp_path / "first")
    reader.poll(1.0)
    before = len(reader.records)

    produce_clicks(kafka.bootstrap_servers, source, generator.start_ms, events_for(2), events_for(WINDOWS))
    resumed = _env(spark, tmp_path / "second", **{"execution.savepoint.path": location})
    click_count.build(resumed, kafka.bootstrap_servers, source, sink)
    job = resumed.execute_async("savepoint test")
    try:
        reader.wait_for(WINDOWS * 6, timeout=180)
        reader.poll(1.0)
    finally:
        job.cancel()
        reader.close()
    windows = {(normalise_start(s), p): c for (s, p), c in reader.distinct().items()}
    assert set(windows) == expected_windows(generator.start_ms, WINDOWS)
    assert set(windows.values()) == {1000}
    # Nothing emitted twice: the stop fell between two micro-batches.
    assert len(reader.records) == WINDOWS * 6, f"{before} windows before the stop, {len(reader.records)} in all"


def _sink(df):
    from kindling.env import _sink_columns

    return _sink_columns(df)


def test_changed_pipeline_is_refused_unless_non_restored_state_is_allowed(spark, tmp_path):
    from pyspark.sql import functions as F

    env = _env(spark, tmp_path / "a")
    counted = spark.readStream.format("rate").load().groupBy("value").count()
    projected = spark.readStream.format("rate").load().select(F.col("value"))
    operators = {"counts": {"name": "Counts", **savepoints.fingerprint(counted)}}
    savepoint = savepoints.write_savepoint(tmp_path / "sp", uuid.uuid4().hex, "job", tmp_path / "none", operators, env.config)

    with pytest.raises(savepoints.SavepointError, match=r"operator\(s\) 'counts' \(its stateful operators changed"):
        savepoints.restore(str(savepoint), tmp_path / "fresh1", {"counts": savepoints.fingerprint(projected)}, False)
    with pytest.raises(savepoints.SavepointError, match=r"'counts' \(no sink with this uid.*ignore-unclaimed-state"):
        savepoints.restore(str(savepoint), tmp_path / "fresh2", {"other": savepoints.fingerprint(counted)}, False)
    assert savepoints.restore(str(savepoint), tmp_path / "fresh3", {"other": savepoints.fingerprint(counted)}, True) == []

    savepoints.dispose(savepoint)
    assert not savepoint.exists()
    with pytest.raises(savepoints.SavepointError, match="not a kindling savepoint"):
        savepoints.dispose(tmp_path)

"""Savepoints in one process: stop with a savepoint, resume elsewhere, refuse state that no longer maps, dispose."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import uuid
from pathlib import Path

import pyarrow.fs as pafs
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


def test_stop_with_savepoint_to_s3_and_resume_elsewhere_continues_counts(spark, kafka, s3, tmp_path):
    """The savepoint goes to an S3 bucket through kindling's own client while checkpoints stay local."""
    suffix = uuid.uuid4().hex[:8]
    bucket = f"savepoints-{suffix}"
    s3.create_bucket(bucket)
    source, sink = f"sp-in-{suffix}", f"sp-out-{suffix}"
    kafka.create_topic(source, partitions=4)
    kafka.create_topic(sink, partitions=1)
    generator = ClickEventGenerator(kafka.bootstrap_servers, source)
    generator.produce(events_for(2))  # two windows now, the rest after the stop
    env = _env(spark, tmp_path / "first", **s3.options())
    click_count.build(env, kafka.bootstrap_servers, source, sink)
    frames = {b.get_uid(): b.stream._df for b in env._sinks}
    job = env.execute_async("savepoint test")
    root = env.checkpoint_root("savepoint test")
    reader = OutputReader(kafka.bootstrap_servers, sink)
    try:
        reader.wait_for(2 * 6, timeout=180)
        location = savepoints.trigger_savepoint(job, root, {u: _sink(df) for u, df in frames.items()}, f"s3://{bucket}/sp/", stop=True)
    finally:
        if job.get_job_status() not in ("FINISHED", "CANCELED", "FAILED"):
            job.cancel()
    assert job.get_job_status() == "FINISHED"  # stop-with-savepoint ends FINISHED, as in Flink
    assert location.startswith(f"s3://{bucket}/sp/savepoint-"), location
    with s3.filesystem().open_input_stream(location[len("s3://"):] + "/_metadata") as stream:
        metadata = json.loads(stream.read())
    operator = metadata["operators"]["click-event-statistics-sink"]
    assert operator["lastCommittedBatch"] >= 0 and operator["lastOffsetBatch"] - operator["lastCommittedBatch"] in (0, 1)
    assert any("Aggregate" in op for op in operator["statefulOperators"]), operator
    assert metadata["configuration"]["state.checkpoints.dir"] == str(tmp_path / "first")
    assert metadata["configuration"]["s3.secret-key"] == "******"  # hidden as Flink's REST API hides it
    reader.poll(1.0)
    before = len(reader.records)

    produce_clicks(kafka.bootstrap_servers, source, generator.start_ms, events_for(2), events_for(WINDOWS))
    resumed = _env(spark, tmp_path / "second", **s3.options(), **{"execution.savepoint.path": location})
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


def test_a_keyed_operators_state_maps_whether_its_input_was_packed_or_not(tmp_path):
    """A savepoint of an earlier kindling, whose keyed operator's input was packed on the map side (its line names the
    packed column), restores onto the same operator reading its input as Arrow, and the other way round; another
    operator's state does not."""
    line = ("TransformWithStateInPySpark transformWithStateUDF(__kindling_bucket0#{}, {}), 1, [k, one, __kindling_rowtime], "
            "Append, NoTime, pandas, false, 0")
    packed = line.format(12, "__kindling_packed#13")
    arrow = line.format(40, "__kindling_k0#41, __kindling_ts#42, __kindling_v0_0#43")
    written = re.sub(r"#\d+", "", packed)  # as the earlier kindling wrote it: ids gone, every column kept
    saved = {"name": "Counts", "statefulOperators": [written], "fingerprint": hashlib.sha256(written.encode()).hexdigest()[:16]}
    planned = {"fingerprint": savepoints._digest([savepoints._normalized(arrow)])}
    assert savepoints._same_state(saved, planned)
    assert savepoints._normalized(packed) == savepoints._normalized(arrow)
    other = {"fingerprint": savepoints._digest([savepoints._normalized(arrow.replace("bucket0", "bucket1"))])}
    assert not savepoints._same_state(saved, other)


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
    assert not Path(savepoint).exists()
    with pytest.raises(savepoints.SavepointError, match="not a kindling savepoint"):
        savepoints.dispose(tmp_path)


def _checkpoint_tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_an_s3_savepoint_is_written_restored_byte_for_byte_and_disposed(s3, tmp_path):
    from kindling.config import Configuration

    bucket = f"sp-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(bucket)
    checkpoints = tmp_path / "checkpoints"
    for relative, data in {"counts/offsets/0": b"v1\n{}", "counts/commits/0": b"v1\n{}", "counts/state/0/0/1.zip": bytes(range(256)),
                           "counts/metadata": b'{"id":"x"}'}.items():
        (checkpoints / relative).parent.mkdir(parents=True, exist_ok=True)
        (checkpoints / relative).write_bytes(data)
    conf = Configuration(s3.options())
    operators = {"counts": {"name": "Counts", "fingerprint": "f", "statefulOperators": []}}
    location = savepoints.write_savepoint(f"s3a://{bucket}/savepoints", "0123456789", "job", checkpoints, operators, conf)
    assert location.startswith(f"s3://{bucket}/savepoints/savepoint-012345-")
    assert savepoints.read_metadata(location, conf)["operators"]["counts"]["lastCommittedBatch"] == 0

    assert savepoints.restore(location, tmp_path / "fresh", {"counts": {"fingerprint": "f"}}, False, conf) == ["counts"]
    assert _checkpoint_tree(tmp_path / "fresh" / "counts") == _checkpoint_tree(checkpoints / "counts")
    # A restarted job finds its restore marker and resumes from its own, newer checkpoints.
    assert savepoints.restore(location, tmp_path / "fresh", {"counts": {"fingerprint": "f"}}, False, conf) == []

    savepoints.dispose(location, conf)
    assert not s3.filesystem().get_file_info(pafs.FileSelector(location[len("s3://"):], allow_not_found=True, recursive=True))
    with pytest.raises(savepoints.SavepointError, match="not a kindling savepoint"):
        savepoints.read_metadata(location, conf)


def test_s3_savepoint_errors_name_the_option_and_never_the_secret(s3, tmp_path):
    from kindling.config import Configuration

    operators = {"counts": {"name": "Counts", "fingerprint": "f", "statefulOperators": []}}
    wrong = Configuration({**s3.options(), "s3.secret-key": "not-the-secret-key"})
    with pytest.raises(savepoints.SavepointError, match=r"'s3.access-key'/'s3.secret-key'.*refused the credentials") as caught:
        savepoints.write_savepoint("s3://anything/sp", "0123456789", "job", tmp_path, operators, wrong)
    assert "not-the-secret-key" not in str(caught.value) and "not-the-secret-key" not in repr(wrong)
    with pytest.raises(savepoints.SavepointError, match=r"'s3://no-such-bucket-here/sp'.*(not a kindling savepoint|does not exist)"):
        savepoints.read_metadata("s3://no-such-bucket-here/sp", Configuration(s3.options()))


def test_checkpoints_on_an_object_store_are_refused_naming_the_option(spark, tmp_path):
    env = _env(spark, tmp_path)
    env.config.set("state.checkpoints.dir", "s3://bucket/checkpoints")
    with pytest.raises(ValueError, match=r"'state.checkpoints.dir' = 's3://bucket/checkpoints'.*'state.savepoints.dir' = 's3://"):
        env.checkpoint_root("job")

"""A restart fires the windows its restored watermark has passed, without new input."""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kindling.config import Configuration
from kindling.runtime.job import JobClient, QueryPlan
from kindling.runtime.recovery import NO_DATA_BATCHES_CONF, owed_watermark, plan_owed_watermark_batch

CONF = '{"spark.sql.shuffle.partitions":"2"}'


def _checkpoint(root: Path, planned: int, committed: int, ran_with: int, next_watermark: int, state: bool = True) -> Path:
    """A checkpoint laid out as Spark writes it: offsets/<id>, commits/<id>, state/."""
    (root / "offsets").mkdir(parents=True)
    (root / "commits").mkdir()
    for batch in range(planned + 1):
        (root / "offsets" / str(batch)).write_text(
            f'v1\n{{"batchWatermarkMs":{ran_with if batch == planned else 0},"batchTimestampMs":5,"conf":{CONF}}}\n'
            f'{{"clicks":{{"0":{batch * 10}}}}}'
        )
    for batch in range(committed + 1):
        (root / "commits" / str(batch)).write_text(f'v1\n{{"nextBatchWatermarkMs":{next_watermark if batch == committed else 0}}}')
    if state:
        (root / "state" / "0" / "0").mkdir(parents=True)
    return root


def test_a_committed_batch_that_advanced_the_watermark_owes_a_no_data_batch(tmp_path):
    checkpoint = _checkpoint(tmp_path / "c", planned=3, committed=3, ran_with=1000, next_watermark=25000)
    assert owed_watermark(checkpoint) == (4, 25000)
    assert plan_owed_watermark_batch(str(checkpoint), now_ms=77) == 4
    lines = (checkpoint / "offsets" / "4").read_text().splitlines()
    assert lines[0] == "v1"
    assert json.loads(lines[1]) == {"batchWatermarkMs": 25000, "batchTimestampMs": 77, "conf": json.loads(CONF)}
    assert lines[2] == '{"clicks":{"0":30}}'  # the same offsets as batch 3: no new data
    assert owed_watermark(checkpoint) is None  # batch 4 is planned, not committed: Spark replays it
    assert plan_owed_watermark_batch(f"file://{checkpoint}") is None


@pytest.mark.parametrize(
    "planned, committed, ran_with, next_watermark, state",
    [
        (3, 2, 1000, 25000, True),  # batch 3 is replayed on restart; Spark plans the follow-up itself
        (3, 3, 25000, 25000, True),  # the watermark did not move: nothing to fire
        (3, 3, 1000, 25000, False),  # no state: nothing waits for the watermark
    ],
)
def test_nothing_is_owed(tmp_path, planned, committed, ran_with, next_watermark, state):
    checkpoint = _checkpoint(tmp_path / "c", planned, committed, ran_with, next_watermark, state)
    assert plan_owed_watermark_batch(str(checkpoint)) is None
    assert sorted(p.name for p in (checkpoint / "offsets").iterdir()) == [str(b) for b in range(planned + 1)]


def test_missing_or_remote_checkpoints_are_left_to_spark(tmp_path):
    assert plan_owed_watermark_batch(str(tmp_path / "never-started")) is None
    assert plan_owed_watermark_batch("s3a://bucket/checkpoints/q") is None


@pytest.mark.integration
def test_restart_after_all_input_was_consumed_fires_the_passed_windows_without_new_input(spark, tmp_path):
    """The kill lands after the batch that read the last input committed and before Spark's
    follow-up no-data batch; Flink would fire the windows the restored watermark passed."""
    source, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    source.mkdir()
    # Windows [0, 10) s and [10, 20) s are complete once an event at 25 s moves the watermark to 25 s.
    seconds = [1, 2, 3, 11, 12, 25]
    (source / "events.json").write_text(
        "\n".join(json.dumps({"ts": datetime.fromtimestamp(s, timezone.utc).isoformat(), "page": "p"}) for s in seconds)
    )
    fired: list[tuple[int, int, int]] = []
    lock = threading.Lock()

    def collect(batch, batch_id):
        rows = batch.collect()
        with lock:
            fired.extend((batch_id, int(r["window"]["start"].replace(tzinfo=timezone.utc).timestamp()), r["count"]) for r in rows)

    def start():
        from pyspark.sql import functions as F

        events = spark.readStream.schema("ts TIMESTAMP, page STRING").json(str(source)).withWatermark("ts", "0 seconds")
        counts = events.groupBy(F.window("ts", "10 seconds")).count()
        return counts.writeStream.foreachBatch(collect).option("checkpointLocation", str(checkpoint)).outputMode("append").start()

    # The first run reads every event in batch 0 and is "killed" before its follow-up batch: with
    # no-data batches off, Spark commits batch 0 (and its new watermark) and plans nothing after it.
    spark.conf.set(NO_DATA_BATCHES_CONF, "false")
    try:
        first = start()
        first.processAllAvailable()
        first.stop()
    finally:
        spark.conf.unset(NO_DATA_BATCHES_CONF)
    assert fired == []
    assert sorted(p.name for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()) == ["0"]
    assert json.loads((checkpoint / "commits" / "0").read_text().splitlines()[1])["nextBatchWatermarkMs"] == 25000

    # The restart sees no new input, ever.
    job = JobClient("restart", [QueryPlan("counts", "counts", str(checkpoint), start, bounded=False)], Configuration())
    try:
        deadline = time.monotonic() + 90
        while len(fired) < 2 and time.monotonic() < deadline:
            assert job.get_job_status() == "RUNNING", job.exceptions
            job.queries["counts"].awaitTermination(0.2)
        with lock:
            assert sorted((start_s, count) for _, start_s, count in fired) == [(0, 3), (10, 2)]
            assert {batch_id for batch_id, _, _ in fired} == {1}
    finally:
        job.cancel()

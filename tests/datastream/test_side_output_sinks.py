"""A process function's main output and side output go to two file sinks: one query, the function runs once per record."""

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from kindling import FileSink, KeyedProcessFunction, WatermarkStrategy
from kindling.datastream.side_outputs import OutputTag

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
SCHEMA = "k STRING, id BIGINT, ts TIMESTAMP, t DOUBLE"
HOT = OutputTag("hot", SCHEMA)


class SplitHot(KeyedProcessFunction):
    """Readings above 30 degrees go to the side output, the others to the main output; every call is logged."""

    def __init__(self, calls: str) -> None:
        self.calls = calls

    def process_element(self, value, ctx):
        with open(self.calls, "a") as log:
            log.write(f"{value.id}\n")
        if value.t > 30:
            ctx.output(HOT, value)
        else:
            yield value


def published(root: Path) -> list[dict]:
    """The records of a file sink's published files (readers skip names starting with '.' or '_')."""
    rows = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith((".", "_"))]
        for name in files:
            if not name.startswith((".", "_")):
                rows += [json.loads(line) for line in (Path(directory) / name).read_text().splitlines() if line]
    return rows


def test_main_and_side_output_sinks_share_one_run_of_the_operator(env, tmp_path):
    readings = [(f"s{i % 3}", i, T0 + timedelta(seconds=i), 20.0 + (i * 7) % 20) for i in range(12)]
    hot = sorted(r[1] for r in readings if r[3] > 30)
    calls = tmp_path / "calls.log"
    strategy = WatermarkStrategy.for_bounded_out_of_orderness("1 s").with_timestamp_assigner("ts")
    split = env.from_collection(readings, SCHEMA, strategy, rows_per_batch=4).key_by("k").process(SplitHot(str(calls)))
    split.sink_to(FileSink.for_row_format(str(tmp_path / "normal"), "json").build()).uid("normal")
    alerts = split.get_side_output(HOT).map(F.col("id"), F.col("t").alias("temperature"))
    alerts.sink_to(FileSink.for_row_format(str(tmp_path / "alerts"), "json").build()).uid("alerts")
    client = env.execute("side-outputs")
    assert client.get_job_status() == "FINISHED"
    assert [plan.uid for plan in client.plans] == ["normal+alerts"]  # one query for both sinks
    assert sorted(int(line) for line in calls.read_text().split()) == list(range(12))  # each record processed once
    assert sorted(r["id"] for r in published(tmp_path / "normal")) == sorted(set(range(12)) - set(hot))
    assert sorted((r["id"], r["temperature"]) for r in published(tmp_path / "alerts")) == [(i, 20.0 + (i * 7) % 20) for i in hot]

from datetime import timedelta

import pytest
from pyspark.sql import Row

from kindling.datastream.watermarks import TimestampAssigner, WatermarkStrategy


def test_bounded_out_of_orderness():
    strategy = WatermarkStrategy.for_bounded_out_of_orderness("200 ms")
    assert strategy.out_of_orderness == timedelta(milliseconds=200)
    assert strategy.has_watermarks
    # Flink: watermark = max timestamp - bound - 1
    assert strategy.current_watermark(10_000) == 9_799


def test_monotonous_and_none():
    assert WatermarkStrategy.for_monotonous_timestamps().out_of_orderness == timedelta(0)
    assert not WatermarkStrategy.no_watermarks().has_watermarks


def test_strategies_are_immutable_builders():
    base = WatermarkStrategy.for_bounded_out_of_orderness("1 s")
    with_assigner = base.with_timestamp_assigner("ts").with_idleness("30 s")
    assert base.timestamp_assigner is None and base.idleness is None
    assert with_assigner.timestamp_assigner == "ts"
    assert with_assigner.idleness == timedelta(seconds=30)


def test_python_assigners_in_flink_shapes():
    row = Row(ts=1234, page="/a")

    class Assigner(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value.ts + 1

    assert WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda r: r.ts).extract(row) == 1234
    assert WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda r, t: r.ts * 2).extract(row, 0) == 2468
    assert WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Assigner()).extract(row) == 1235


def test_alignment_parameters():
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_watermark_alignment("g", "20 s", "1 s")
    assert strategy.alignment.group == "g"
    assert strategy.alignment.max_drift == timedelta(seconds=20)


def test_bad_inputs():
    with pytest.raises(TypeError):
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(42)
    with pytest.raises(ValueError):
        WatermarkStrategy.for_bounded_out_of_orderness("soon")

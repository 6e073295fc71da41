"""The book's sensor examples (examples/sensors/) on deterministic input."""

import importlib.util
import sys
from datetime import timedelta
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sensors"


def example(name: str):
    sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"sensors_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_temperature_alert_after_one_second_of_rising_temperature(spark, tmp_path):
    from kindling import StreamEnvironment

    alert = example("temperature_alert")
    start = example("sensors").START
    at = lambda s: start + timedelta(seconds=s)  # noqa: E731
    data = [("s1", at(0), 20.0), ("s2", at(0), 30.0), ("s2", at(0.1), 25.0),   # batch 0: s2 drops at once
            ("s3", at(1), 10.0), ("s4", at(1), 0.0), ("s4", at(1.5), 0.0),      # batch 1, 2.5 s later
            ("s4", at(2), 0.0)]                                                  # batch 2: s4 never rises
    # Micro-batches start at least 2.5 s apart and a timer is one second ahead of its batch's clock, so
    # it fires in the next batch. s3's timer fires in batch 2, a batch with input: whether the batches
    # that end the input run late enough to fire it (Flink does not fire pending processing-time timers
    # at the end of input) is not what this test is about.
    env = StreamEnvironment({"execution.checkpointing.interval": "2500 ms", "state.checkpoints.dir": str(tmp_path)}, spark=spark)
    rows = alert.build(env, data, rows_per_batch=3).execute_and_collect()
    assert sorted(r.alert for r in rows) == [
        "Temperature of sensor 's1' monotonically increased for 1 second.",
        "Temperature of sensor 's3' monotonically increased for 1 second.",
    ]


def test_fire_alarm_connects_temperatures_with_broadcast_smoke_level(env):
    alarm = example("fire_alarm")
    start = example("sensors").START
    at = lambda s: start + timedelta(seconds=s)  # noqa: E731
    temperatures = [("s1", at(0.1), 120.0), ("s2", at(0.1), 90.0), ("s1", at(0.2), 95.0), ("s2", at(0.2), 130.0)]
    smoke = [("LOW", at(0)), ("HIGH", at(0.05))]
    rows = alarm.build(env, temperatures, smoke, rows_per_batch=2).execute_and_collect()
    assert sorted((r.message, r.temperature) for r in rows) == [("Risk of fire from s1", 120.0), ("Risk of fire from s2", 130.0)]


def test_late_readings_go_to_the_side_output(env):
    late = example("late_readings")
    counts, side = late.build(env, late.sample(), rows_per_batch=3)
    got = sorted((r.id, r.window_end.second, r.readings) for r in counts.execute_and_collect())
    assert got == [("sensor_1", 1, 2), ("sensor_1", 3, 2), ("sensor_1", 4, 1)]
    assert [(r.id, r.temperature) for r in side.execute_and_collect()] == [("sensor_1", 59.0)]

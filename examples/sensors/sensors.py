"""SensorReading, the running example of "Stream Processing with Apache Flink": id, timestamp, temperature.

``readings(...)`` is the book's SensorSource made deterministic: every sensor reports every
``step_ms`` milliseconds, its temperature a seeded random walk around 65 °F.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import List, Tuple

from kindling import WatermarkStrategy

READING = "id STRING, timestamp TIMESTAMP, temperature DOUBLE"
SMOKE = "level STRING, timestamp TIMESTAMP"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def readings(sensors: int = 10, per_sensor: int = 20, step_ms: int = 100, seed: int = 7) -> List[Tuple[str, datetime, float]]:
    generator = random.Random(seed)
    temperatures = [65 + generator.gauss(0, 1) * 20 for _ in range(sensors)]
    out = []
    for step in range(per_sensor):
        for sensor in range(sensors):
            temperatures[sensor] += generator.gauss(0, 0.5)
            out.append((f"sensor_{sensor + 1}", START + timedelta(milliseconds=step * step_ms), round(temperatures[sensor], 2)))
    return out


def event_time(bound: str = "5 s") -> WatermarkStrategy:
    """The book's SensorTimeAssigner: event time from the reading, out of order by at most ``bound``."""
    return WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner("timestamp")

"""Fire alarm (book ch. 5, MultiStreamTransformations): temperature readings connected with a broadcast smoke level.

Smoke-level readings are broadcast to every parallel instance; each sensor's temperature reading
raises an alert when the latest smoke level is HIGH and the temperature exceeds 100 °F.

    python examples/sensors/fire_alarm.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sensors import READING, SMOKE, START, event_time, readings  # noqa: E402

from kindling import StreamEnvironment  # noqa: E402
from kindling.datastream.broadcast import KeyedBroadcastProcessFunction  # noqa: E402
from kindling.datastream.state import MapStateDescriptor  # noqa: E402

SMOKE_LEVEL = MapStateDescriptor("smoke-level")
ALERT = "message STRING, timestamp TIMESTAMP, temperature DOUBLE"


class RaiseAlert(KeyedBroadcastProcessFunction):
    def process_element(self, reading: Any, ctx: Any) -> Iterable[tuple]:
        if ctx.get_broadcast_state(SMOKE_LEVEL).get("level") == "HIGH" and reading.temperature > 100:
            yield f"Risk of fire from {reading.id}", reading.timestamp, reading.temperature

    def process_broadcast_element(self, smoke: Any, ctx: Any) -> None:
        ctx.get_broadcast_state(SMOKE_LEVEL).put("level", smoke.level)


def build(env: StreamEnvironment, temperatures: Sequence[Any], smoke: Sequence[Any], rows_per_batch: int = 0) -> Any:
    readings_stream = env.from_collection(list(temperatures), READING, event_time(), rows_per_batch=rows_per_batch)
    smoke_stream = env.from_collection(list(smoke), SMOKE, event_time(), rows_per_batch=rows_per_batch)
    return readings_stream.key_by("id").connect(smoke_stream.broadcast(SMOKE_LEVEL)).process(RaiseAlert(), ALERT)


def main(argv: Optional[List[str]] = None) -> None:
    from datetime import timedelta

    env = StreamEnvironment({"execution.checkpointing.interval": "500 ms", "parallelism.default": 2,
                             "state.checkpoints.dir": ".kindling/checkpoints", "kindling.log.level": "ERROR"})
    hot = [(r[0], r[1], r[2] + 40) for r in readings(sensors=5, per_sensor=6)]
    smoke = [("LOW", START), ("HIGH", START + timedelta(milliseconds=250))]
    build(env, hot, smoke, rows_per_batch=10).print()
    env.execute(f"fire-alarm-{__import__('os').getpid()}")


if __name__ == "__main__":
    main()

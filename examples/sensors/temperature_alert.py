"""Temperature alert (book ch. 6, TempIncreaseAlertFunction): warn when a sensor's temperature rose for 1 s of processing time.

A KeyedProcessFunction keeps the last temperature and the pending timer per sensor: a rise
registers a processing-time timer one second ahead (unless one is pending), a drop deletes it;
when the timer fires the temperature has risen monotonically for one second.

    python examples/sensors/temperature_alert.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sensors import READING, event_time, readings  # noqa: E402

from kindling import StreamEnvironment  # noqa: E402
from kindling.datastream.process import KeyedProcessFunction  # noqa: E402
from kindling.datastream.state import ValueStateDescriptor  # noqa: E402


class TempIncreaseAlertFunction(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.last_temp = runtime_context.get_state(ValueStateDescriptor("lastTemp"))
        self.current_timer = runtime_context.get_state(ValueStateDescriptor("timer"))

    def process_element(self, reading: Any, ctx: Any) -> Iterable[str]:
        previous = self.last_temp.value() or 0.0
        self.last_temp.update(reading.temperature)
        timer = self.current_timer.value() or 0
        if reading.temperature < previous:
            ctx.timer_service().delete_processing_time_timer(timer)  # the rise ended
            self.current_timer.clear()
        elif reading.temperature > previous and timer == 0:
            at = ctx.timer_service().current_processing_time() + 1000
            ctx.timer_service().register_processing_time_timer(at)
            self.current_timer.update(at)
        return []

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[str]:
        self.current_timer.clear()
        yield f"Temperature of sensor '{ctx.get_current_key()}' monotonically increased for 1 second."


def build(env: StreamEnvironment, data: Sequence[Any], rows_per_batch: int = 0) -> Any:
    stream = env.from_collection(list(data), READING, event_time(), rows_per_batch=rows_per_batch)
    return stream.key_by("id").process(TempIncreaseAlertFunction(), "alert STRING")


def main(argv: Optional[List[str]] = None) -> None:
    # One micro-batch every 2 s: timers set one second ahead fire in the following batch.
    env = StreamEnvironment({"execution.checkpointing.interval": "2 s", "parallelism.default": 2,
                             "state.checkpoints.dir": ".kindling/checkpoints", "kindling.log.level": "ERROR"})
    build(env, readings(sensors=5, per_sensor=6), rows_per_batch=5).print()
    env.execute(f"temperature-alert-{__import__('os').getpid()}")


if __name__ == "__main__":
    main()
